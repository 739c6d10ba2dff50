#include "element_util.h"

#include "dftest.h"

#include <libavutil/pixdesc.h>
#include <stdlib.h>
#include <string.h>

#ifdef __SANITIZE_ADDRESS__
/* Full stacks for allocations: GLib keeps a block from a library
 * constructor once GStreamer is loaded; tests/lsan.supp names its caller
 * (_dl_init), which the fast unwinder cannot see through libglib. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "fast_unwind_on_malloc=0";
}
#endif

bool e_init(void)
{
    static int state; /* 0 not yet, 1 ok, -1 failed */
    if (state)
        return state > 0;
    gst_init(NULL, NULL);
    const char *path = getenv("DF_GST_PLUGIN");
    GError *err = NULL;
    GstPlugin *p = path ? gst_plugin_load_file(path, &err) : NULL;
    if (!p) {
        fprintf(stderr, "cannot load the dfdec plugin %s: %s\n",
                path ? path : "(DF_GST_PLUGIN unset)", err ? err->message : "");
        g_clear_error(&err);
        state = -1;
        return false;
    }
    gst_object_unref(p);
    state = 1;
    return true;
}

GstCaps *e_clip_caps(const TClip *clip)
{
    const AVCodecParameters *par = clip->par;
    GstCaps *caps = NULL;
    bool config = par->extradata_size > 0 && par->extradata[0] == 1;
    switch (par->codec_id) {
    case AV_CODEC_ID_H264:
        caps = gst_caps_new_simple("video/x-h264", "stream-format", G_TYPE_STRING,
                                   config ? "avc" : "byte-stream", "alignment", G_TYPE_STRING, "au",
                                   NULL);
        break;
    case AV_CODEC_ID_HEVC:
        caps = gst_caps_new_simple("video/x-h265", "stream-format", G_TYPE_STRING,
                                   config ? "hvc1" : "byte-stream", "alignment", G_TYPE_STRING,
                                   "au", NULL);
        break;
    case AV_CODEC_ID_MPEG1VIDEO:
    case AV_CODEC_ID_MPEG2VIDEO:
        config = par->extradata_size > 0;
        caps = gst_caps_new_simple("video/mpeg", "mpegversion", G_TYPE_INT,
                                   par->codec_id == AV_CODEC_ID_MPEG1VIDEO ? 1 : 2, "systemstream",
                                   G_TYPE_BOOLEAN, FALSE, NULL);
        break;
    default:
        return NULL;
    }
    if (par->width > 0)
        gst_caps_set_simple(caps, "width", G_TYPE_INT, par->width, "height", G_TYPE_INT,
                            par->height, NULL);
    /* gen.sh clips are 25 fps (lavfi testsrc2's default). */
    gst_caps_set_simple(caps, "framerate", GST_TYPE_FRACTION, 25, 1, NULL);
    if (config) {
        GstBuffer *cd = gst_buffer_new_memdup(par->extradata, (gsize)par->extradata_size);
        gst_caps_set_simple(caps, "codec_data", GST_TYPE_BUFFER, cd, NULL);
        gst_buffer_unref(cd);
    }
    return caps;
}

static GstClockTime to_ns(const TClip *clip, int64_t ts)
{
    if (ts == AV_NOPTS_VALUE)
        return GST_CLOCK_TIME_NONE;
    return (GstClockTime)av_rescale_q(ts, clip->tb, (AVRational){1, GST_SECOND});
}

GstBuffer *e_clip_buffer(const TClip *clip, int i)
{
    const AVPacket *pkt = clip->pkts[i];
    GstBuffer *b = gst_buffer_new_memdup(pkt->data, (gsize)pkt->size);
    GST_BUFFER_PTS(b) = to_ns(clip, pkt->pts);
    GST_BUFFER_DTS(b) = to_ns(clip, pkt->dts);
    if (pkt->duration > 0)
        GST_BUFFER_DURATION(b) = to_ns(clip, pkt->duration);
    if (!(pkt->flags & AV_PKT_FLAG_KEY))
        GST_BUFFER_FLAG_SET(b, GST_BUFFER_FLAG_DELTA_UNIT);
    return b;
}

int e_ref(const TClip *clip, TSums *out)
{
    int ret = t_ref_decode(clip, NULL, AV_PIX_FMT_NONE, out);
    for (int i = 0; i < out->n; i++)
        out->v[i].pts = out->v[i].pts == AV_NOPTS_VALUE ? -1 : (int64_t)to_ns(clip, out->v[i].pts);
    return ret;
}

static enum AVPixelFormat av_format_of(GstVideoFormat f)
{
    switch (f) {
    case GST_VIDEO_FORMAT_I420:
        return AV_PIX_FMT_YUV420P;
    case GST_VIDEO_FORMAT_Y42B:
        return AV_PIX_FMT_YUV422P;
    case GST_VIDEO_FORMAT_Y444:
        return AV_PIX_FMT_YUV444P;
    case GST_VIDEO_FORMAT_I420_10LE:
        return AV_PIX_FMT_YUV420P10LE;
    case GST_VIDEO_FORMAT_I422_10LE:
        return AV_PIX_FMT_YUV422P10LE;
    case GST_VIDEO_FORMAT_Y444_10LE:
        return AV_PIX_FMT_YUV444P10LE;
    case GST_VIDEO_FORMAT_NV12:
        return AV_PIX_FMT_NV12;
    case GST_VIDEO_FORMAT_GRAY8:
        return AV_PIX_FMT_GRAY8;
    default:
        return AV_PIX_FMT_NONE;
    }
}

int e_crop_buffers;

int e_buffer_sum(GstBuffer *buf, GstCaps *caps, TSum *out)
{
    GstVideoInfo info;
    GstVideoFrame vf;
    if (!caps || !gst_video_info_from_caps(&info, caps))
        return -1;
    if (!gst_video_frame_map(&vf, &info, buf, GST_MAP_READ))
        return -1;
    AVFrame f;
    memset(&f, 0, sizeof(f));
    f.format = av_format_of(GST_VIDEO_INFO_FORMAT(&info));
    f.width = GST_VIDEO_INFO_WIDTH(&info);
    f.height = GST_VIDEO_INFO_HEIGHT(&info);
    /* What a sink that takes GstVideoCropMeta shows: the window, whose
     * size the caps must give. */
    const GstVideoCropMeta *crop = gst_buffer_get_video_crop_meta(buf);
    guint cx = 0, cy = 0;
    if (crop) {
        if ((int)crop->width != f.width || (int)crop->height != f.height) {
            gst_video_frame_unmap(&vf);
            return -1;
        }
        cx = crop->x;
        cy = crop->y;
        e_crop_buffers++;
    }
    const GstVideoFormatInfo *fi = info.finfo;
    for (guint i = 0; i < GST_VIDEO_FRAME_N_PLANES(&vf); i++) {
        const guint comp = i; /* the formats of av_format_of: planar, NV12's UV first */
        const gint x = GST_VIDEO_FORMAT_INFO_SCALE_WIDTH(fi, comp, cx);
        const gint y = GST_VIDEO_FORMAT_INFO_SCALE_HEIGHT(fi, comp, cy);
        f.linesize[i] = GST_VIDEO_FRAME_PLANE_STRIDE(&vf, i);
        f.data[i] = (uint8_t *)GST_VIDEO_FRAME_PLANE_DATA(&vf, i) + (gsize)y * f.linesize[i] +
                    (gsize)x * GST_VIDEO_FORMAT_INFO_PSTRIDE(fi, comp);
    }
    memset(out, 0, sizeof(*out));
    out->format = f.format;
    out->width = f.width;
    out->height = f.height;
    out->pts = GST_BUFFER_PTS_IS_VALID(buf) ? (int64_t)GST_BUFFER_PTS(buf) : -1;
    if (f.format != AV_PIX_FMT_NONE)
        t_frame_md5(&f, out->md5);
    gst_video_frame_unmap(&vf);
    return f.format == AV_PIX_FMT_NONE ? -1 : 0;
}

void e_pull_all(GstHarness *h, TSums *out, int *bad_ts)
{
    GstBuffer *b;
    while ((b = gst_harness_try_pull(h))) {
        GstCaps *caps = gst_pad_get_current_caps(h->sinkpad);
        TSum s;
        if (e_buffer_sum(b, caps, &s) == 0)
            t_sums_push(out, &s);
        else
            DF_EXPECT_MSG(false, "cannot read an output buffer (caps %s)",
                          caps ? gst_caps_to_string(caps) : "none");
        if (bad_ts && (!GST_BUFFER_PTS_IS_VALID(b) || !GST_BUFFER_DURATION_IS_VALID(b)))
            (*bad_ts)++;
        if (caps)
            gst_caps_unref(caps);
        gst_buffer_unref(b);
    }
}

GstHarness *e_harness(const TClip *clip, const char *const *props)
{
    GstHarness *h = gst_harness_new("dfdec");
    if (!h)
        return NULL;
    /* Under ThreadSanitizer, no libavcodec frame threads: they synchronise
     * inside uninstrumented libavcodec, which TSan reports as races (the
     * framework's tests do the same, see t_under_tsan()). */
    if (t_under_tsan())
        gst_util_set_object_arg(G_OBJECT(h->element), "threading", "slice");
    for (int i = 0; props && props[i]; i += 2) {
        if (t_under_tsan() && strcmp(props[i], "threading") == 0 &&
            strcmp(props[i + 1], "frame") == 0)
            continue;
        gst_util_set_object_arg(G_OBJECT(h->element), props[i], props[i + 1]);
    }
    GstCaps *caps = e_clip_caps(clip);
    gst_harness_set_src_caps(h, caps);
    return h;
}

GstFlowReturn e_push_range(GstHarness *h, const TClip *clip, int from, int to, TSums *out,
                           int *bad_ts)
{
    for (int i = from; i < to; i++) {
        GstFlowReturn flow = gst_harness_push(h, e_clip_buffer(clip, i));
        e_pull_all(h, out, bad_ts);
        if (flow != GST_FLOW_OK)
            return flow;
    }
    return GST_FLOW_OK;
}

int e_compare_md5(const TSums *ref, const TSums *got, char *msg, size_t len)
{
    TSums a = {0}, b = {0};
    for (int i = 0; i < ref->n; i++) {
        TSum x = ref->v[i];
        x.pts = 0;
        t_sums_push(&a, &x);
    }
    for (int i = 0; i < got->n; i++) {
        TSum x = got->v[i];
        x.pts = 0;
        t_sums_push(&b, &x);
    }
    int r = t_sums_compare(&a, &b, msg, len);
    t_sums_free(&a);
    t_sums_free(&b);
    return r;
}

int e_count_inexact_by_pts(const TSums *ref, const TSums *got)
{
    int j = 0, bad = 0;
    for (int i = 0; i < got->n; i++) {
        while (j < ref->n && ref->v[j].pts != got->v[i].pts)
            j++;
        if (j == ref->n || memcmp(ref->v[j].md5, got->v[i].md5, 16))
            bad++;
    }
    return bad;
}
