/* dfdec's codec table (dfdec_codecs.h).  Adding a codec to dfdec: its file
 * in framework/codec/ and a row here.  A codec whose caps carry more than
 * codec_data (e.g. a field libavcodec needs as a parameter) would get a
 * caps -> parameters function in its row, as gst-libav's
 * gst_ffmpeg_caps_with_codecid() does per codec. */
#include "dfdec_codecs.h"

#include <string.h>

typedef struct DfDecCodec {
    enum AVCodecID id;
    GstStaticCaps caps; /* what dfdec accepts of it: parsed, one picture per buffer */
} DfDecCodec;

static DfDecCodec codecs[] = {
    {AV_CODEC_ID_H264,
     GST_STATIC_CAPS("video/x-h264, stream-format = (string) { byte-stream, avc, avc3 }, "
                     "alignment = (string) au")},
    {AV_CODEC_ID_HEVC,
     GST_STATIC_CAPS("video/x-h265, stream-format = (string) { byte-stream, hvc1, hev1 }, "
                     "alignment = (string) au")},
    {AV_CODEC_ID_MPEG1VIDEO,
     GST_STATIC_CAPS("video/mpeg, mpegversion = (int) 1, systemstream = (boolean) false")},
    {AV_CODEC_ID_MPEG2VIDEO,
     GST_STATIC_CAPS("video/mpeg, mpegversion = (int) 2, systemstream = (boolean) false")},
};

GstCaps *gst_df_dec_codecs_sink_caps(void)
{
    GstCaps *all = gst_caps_new_empty();
    for (size_t i = 0; i < G_N_ELEMENTS(codecs); i++)
        gst_caps_append(all, gst_static_caps_get(&codecs[i].caps));
    return all;
}

enum AVCodecID gst_df_dec_codecs_find(const GstCaps *caps)
{
    for (size_t i = 0; i < G_N_ELEMENTS(codecs); i++) {
        GstCaps *row = gst_static_caps_get(&codecs[i].caps);
        const gboolean match = gst_caps_can_intersect(caps, row);
        gst_caps_unref(row);
        if (match)
            return codecs[i].id;
    }
    return AV_CODEC_ID_NONE;
}

AVCodecParameters *gst_df_dec_codecs_params(const GstVideoCodecState *state, enum AVCodecID id)
{
    AVCodecParameters *par = avcodec_parameters_alloc();
    if (!par)
        return NULL;
    par->codec_type = AVMEDIA_TYPE_VIDEO;
    par->codec_id = id;
    par->width = GST_VIDEO_INFO_WIDTH(&state->info);
    par->height = GST_VIDEO_INFO_HEIGHT(&state->info);
    if (state->codec_data) {
        GstMapInfo map;
        if (gst_buffer_map(state->codec_data, &map, GST_MAP_READ)) {
            par->extradata = av_mallocz(map.size + AV_INPUT_BUFFER_PADDING_SIZE);
            if (par->extradata) {
                memcpy(par->extradata, map.data, map.size);
                par->extradata_size = (int)map.size;
            }
            gst_buffer_unmap(state->codec_data, &map);
        }
    }
    return par;
}
