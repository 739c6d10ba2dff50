/* dfdec's codecs: GStreamer caps <-> AVCodecID, one row per codec (as
 * gst-libav's gstavcodecmap.c).  The framework knows codecs by AVCodecID
 * only (framework/codec/); the caps live here, with the element. */
#ifndef GST_DF_DEC_CODECS_H
#define GST_DF_DEC_CODECS_H

#include <gst/gst.h>
#include <gst/video/video.h>
#include <libavcodec/avcodec.h>

G_BEGIN_DECLS

/* The sink pad template's caps: every row's (transfer full). */
GstCaps *gst_df_dec_codecs_sink_caps(void);

/* The codec of negotiated caps, AV_CODEC_ID_NONE when no row takes them. */
enum AVCodecID gst_df_dec_codecs_find(const GstCaps *caps);

/* Codec parameters for the negotiated `state` of codec `id`: size, and
 * codec_data as extradata.  NULL when out of memory. */
AVCodecParameters *gst_df_dec_codecs_params(const GstVideoCodecState *state, enum AVCodecID id);

G_END_DECLS

#endif
