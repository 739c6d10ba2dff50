#include "framework_util.h"
#include "dftest.h"

#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#include <libavutil/imgutils.h>
#include <libavutil/md5.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
#include <stdlib.h>
#include <string.h>

const char *const t_clips[] = {
    "h264_cabac_slices8.mkv",
    "h264_cavlc_slices4.mkv",
    "h264_mbaff.mkv",
    "h264_422.mkv",
    "h264_odd.mkv",
    "h264_single.mkv",
    "hevc_wpp8.mkv",
    "hevc_wpp10.mkv",
    "hevc_wpp_slices.mkv",
    "hevc_nowpp.mkv",
    "mpeg2_prog.mkv",
    "mpeg2_int.mkv",
    "h264_cabac_slices8.h264",
    "mpeg2_prog.m2v",
    "h264_crop.mkv",
    "hevc_crop.mkv",
    "mpeg2_odd.mkv",
    "mpeg2_sizes.m2v",
    NULL,
};

DfSched *t_sched(const char *policy, int n, int poll_us)
{
    return t_sched_jobs(policy, n, poll_us, false);
}

DfSched *t_sched_jobs(const char *policy, int n, int poll_us, bool eager_jobs)
{
    DfSchedConfig cfg;
    df_sched_config_init(&cfg);
    cfg.eager_jobs = eager_jobs;
    cfg.policy = policy;
    cfg.n_workers = n;
    cfg.poll_us = poll_us;
    DfSched *s = NULL;
    DfError err = {0};
    if (df_sched_new(&cfg, &s, &err) < 0) {
        df_test_fail(__FILE__, __LINE__, true, "df_sched_new(%s, %d): %s", policy, n, err.msg);
        return NULL;
    }
    return s;
}

int t_clip_load(const char *name, TClip *clip)
{
    char path[1024];
    memset(clip, 0, sizeof(*clip));
    snprintf(clip->name, sizeof(clip->name), "%s", name);
    snprintf(path, sizeof(path), "%s/%s", df_test_media_dir(), name);
    AVFormatContext *fmt = NULL;
    int ret = avformat_open_input(&fmt, path, NULL, NULL);
    if (ret < 0)
        return ret;
    if ((ret = avformat_find_stream_info(fmt, NULL)) < 0)
        goto done;
    ret = av_find_best_stream(fmt, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
    if (ret < 0)
        goto done;
    const int idx = ret;
    clip->par = avcodec_parameters_alloc();
    avcodec_parameters_copy(clip->par, fmt->streams[idx]->codecpar);
    clip->tb = fmt->streams[idx]->time_base;
    AVPacket *pkt = av_packet_alloc();
    while (av_read_frame(fmt, pkt) >= 0) {
        if (pkt->stream_index == idx) {
            clip->pkts = realloc(clip->pkts, sizeof(AVPacket *) * (size_t)(clip->n_pkts + 1));
            clip->pkts[clip->n_pkts++] = av_packet_clone(pkt);
        }
        av_packet_unref(pkt);
    }
    av_packet_free(&pkt);
    ret = 0;
done:
    avformat_close_input(&fmt);
    return ret;
}

void t_clip_free(TClip *clip)
{
    for (int i = 0; i < clip->n_pkts; i++)
        av_packet_free(&clip->pkts[i]);
    free(clip->pkts);
    avcodec_parameters_free(&clip->par);
    memset(clip, 0, sizeof(*clip));
}

void t_frame_md5(const AVFrame *f, uint8_t md5[16])
{
    struct AVMD5 *m = av_md5_alloc();
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(f->format);
    av_md5_init(m);
    for (int p = 0; p < 4 && f->data[p]; p++) {
        int h = (p == 1 || p == 2) ? AV_CEIL_RSHIFT(f->height, d->log2_chroma_h) : f->height;
        int bw = av_image_get_linesize(f->format, f->width, p);
        for (int y = 0; y < h; y++)
            av_md5_update(m, f->data[p] + (ptrdiff_t)f->linesize[p] * y, (size_t)bw);
    }
    av_md5_final(m, md5);
    av_free(m);
}

static TSum *sums_next(TSums *s)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 32;
        s->v = realloc(s->v, sizeof(TSum) * (size_t)s->cap);
    }
    return &s->v[s->n++];
}

void t_sums_push(TSums *s, const TSum *x)
{
    *sums_next(s) = *x;
}

int t_sums_add(TSums *s, const AVFrame *f)
{
    TSum *x = sums_next(s);
    x->pts = f->pts;
    x->format = f->format;
    x->width = f->width;
    x->height = f->height;
    x->error_flags = f->decode_error_flags;
    t_frame_md5(f, x->md5);
    return 0;
}

void t_sums_free(TSums *s)
{
    free(s->v);
    memset(s, 0, sizeof(*s));
}

int t_sums_compare(const TSums *a, const TSums *b, char *msg, size_t len)
{
    int n = a->n < b->n ? a->n : b->n;
    for (int i = 0; i < n; i++) {
        const TSum *x = &a->v[i], *y = &b->v[i];
        if (x->pts != y->pts || x->format != y->format || x->width != y->width ||
            x->height != y->height || memcmp(x->md5, y->md5, 16)) {
            snprintf(msg, len,
                     "frame %d differs (pts %lld vs %lld, %dx%d fmt %d vs %dx%d fmt %d%s)", i,
                     (long long)x->pts, (long long)y->pts, x->width, x->height, x->format, y->width,
                     y->height, y->format, memcmp(x->md5, y->md5, 16) ? ", md5" : "");
            return 1;
        }
    }
    if (a->n != b->n) {
        snprintf(msg, len, "%d frames, expected %d", b->n, a->n);
        return 1;
    }
    return 0;
}

/* ------------------------------------------------------- the reference */

typedef struct RefFilter {
    AVFilterGraph *g;
    AVFilterContext *src, *sink;
    int w, h, fmt;
    AVRational tb; /* the stream's: dfmedia's pictures carry their PTS in it */
    /* As fftools: pictures timed by their best-effort timestamp, the end
     * of the stream (for EOF) one frame interval after the last. */
    int64_t prev_pts, end_pts;
} RefFilter;

/* A filter's picture with its PTS in the stream's time base (yadif halves
 * the time base, framesync's filters use microseconds). */
static void ref_stream_pts(const RefFilter *r, AVFrame *f)
{
    if (f->pts != AV_NOPTS_VALUE)
        f->pts = av_rescale_q(f->pts, av_buffersink_get_time_base(r->sink), r->tb);
}

static int ref_filter_init(RefFilter *r, const char *desc, const AVFrame *f, AVRational tb)
{
    char args[256];
    r->g = avfilter_graph_alloc();
    r->g->nb_threads = 1;
    snprintf(args, sizeof(args), "video_size=%dx%d:pix_fmt=%d:time_base=%d/%d:pixel_aspect=%d/%d",
             f->width, f->height, f->format, tb.num, tb.den, f->sample_aspect_ratio.num,
             f->sample_aspect_ratio.den > 0 ? f->sample_aspect_ratio.den : 1);
    int ret = avfilter_graph_create_filter(&r->src, avfilter_get_by_name("buffer"), "in", args,
                                           NULL, r->g);
    if (ret >= 0)
        ret = avfilter_graph_create_filter(&r->sink, avfilter_get_by_name("buffersink"), "out",
                                           NULL, NULL, r->g);
    AVFilterInOut *o = avfilter_inout_alloc(), *i = avfilter_inout_alloc();
    o->name = av_strdup("in");
    o->filter_ctx = r->src;
    i->name = av_strdup("out");
    i->filter_ctx = r->sink;
    if (ret >= 0)
        ret = avfilter_graph_parse_ptr(r->g, desc, &i, &o, NULL);
    if (ret >= 0)
        ret = avfilter_graph_config(r->g, NULL);
    avfilter_inout_free(&i);
    avfilter_inout_free(&o);
    return ret;
}

typedef struct RefOut {
    enum AVPixelFormat out_format;
    TSums *sums;
} RefOut;

static void ref_emit(RefOut *o, AVFrame *f)
{
    if (o->out_format == AV_PIX_FMT_NONE || f->format == o->out_format) {
        t_sums_add(o->sums, f);
        return;
    }
    AVFrame *d = av_frame_alloc();
    d->format = o->out_format;
    d->width = f->width;
    d->height = f->height;
    av_frame_get_buffer(d, 0);
    struct SwsContext *s =
        sws_getContext(f->width, f->height, f->format, f->width, f->height, o->out_format,
                       SWS_BICUBIC | SWS_ACCURATE_RND | SWS_BITEXACT, NULL, NULL, NULL);
    int *inv, *tab, sr, dr, b, c, sat;
    sws_getColorspaceDetails(s, &inv, &sr, &tab, &dr, &b, &c, &sat);
    sws_setColorspaceDetails(s, sws_getCoefficients(f->colorspace),
                             f->color_range == AVCOL_RANGE_JPEG, tab, dr, b, c, sat);
    sws_scale(s, (const uint8_t *const *)f->data, f->linesize, 0, f->height, d->data, d->linesize);
    sws_freeContext(s);
    d->pts = f->pts;
    t_sums_add(o->sums, d);
    av_frame_free(&d);
}

static void ref_drain(RefFilter *r, RefOut *o)
{
    AVFrame *f = av_frame_alloc();
    const int ret = r->end_pts != AV_NOPTS_VALUE
                        ? av_buffersrc_close(r->src, r->end_pts, AV_BUFFERSRC_FLAG_PUSH)
                        : av_buffersrc_add_frame_flags(r->src, NULL, 0);
    if (ret < 0)
        df_test_fail(__FILE__, __LINE__, false, "reference filter rejected EOF");
    while (av_buffersink_get_frame(r->sink, f) >= 0) {
        ref_stream_pts(r, f);
        ref_emit(o, f);
        av_frame_unref(f);
    }
    av_frame_free(&f);
    avfilter_graph_free(&r->g);
}

static void ref_frame(RefFilter *r, const char *desc, AVFrame *f, AVRational tb, RefOut *o)
{
    if (!desc) {
        ref_emit(o, f);
        return;
    }
    /* Like dfmedia: a new geometry drains the graph and builds a new one
     * (libavfilter's filters do not all follow a size change). */
    if (r->g && (f->width != r->w || f->height != r->h || f->format != r->fmt))
        ref_drain(r, o);
    if (!r->g) {
        if (ref_filter_init(r, desc, f, tb) < 0)
            return;
        r->w = f->width;
        r->h = f->height;
        r->fmt = f->format;
        r->tb = tb;
        r->prev_pts = r->end_pts = AV_NOPTS_VALUE;
    }
    if (f->best_effort_timestamp != AV_NOPTS_VALUE)
        f->pts = f->best_effort_timestamp;
    if (f->pts == AV_NOPTS_VALUE)
        f->pts = r->end_pts;
    if (f->pts != AV_NOPTS_VALUE) {
        const int64_t gap =
            r->prev_pts != AV_NOPTS_VALUE && f->pts > r->prev_pts ? f->pts - r->prev_pts : 1;
        if (r->end_pts == AV_NOPTS_VALUE || f->pts + gap > r->end_pts)
            r->end_pts = f->pts + gap;
        r->prev_pts = f->pts;
    }
    AVFrame *out = av_frame_alloc();
    if (av_buffersrc_add_frame_flags(r->src, f,
                                     AV_BUFFERSRC_FLAG_KEEP_REF | AV_BUFFERSRC_FLAG_PUSH) < 0)
        df_test_fail(__FILE__, __LINE__, false, "reference filter rejected a frame");
    while (av_buffersink_get_frame(r->sink, out) >= 0) {
        ref_stream_pts(r, out);
        ref_emit(o, out);
        av_frame_unref(out);
    }
    av_frame_free(&out);
}

int t_ref_decode(const TClip *clip, const char *filter, enum AVPixelFormat out_format, TSums *out)
{
    const AVCodec *codec = avcodec_find_decoder(clip->par->codec_id);
    AVCodecContext *c = avcodec_alloc_context3(codec);
    avcodec_parameters_to_context(c, clip->par);
    c->pkt_timebase = clip->tb;
    c->thread_count = 1;
    c->flags |= AV_CODEC_FLAG_UNALIGNED; /* the exact crop window */
    int ret = avcodec_open2(c, codec, NULL);
    if (ret < 0) {
        avcodec_free_context(&c);
        return ret;
    }
    RefFilter r = {0};
    RefOut o = {out_format, out};
    AVFrame *f = av_frame_alloc();
    for (int i = 0; i <= clip->n_pkts; i++) {
        avcodec_send_packet(c, i < clip->n_pkts ? clip->pkts[i] : NULL);
        while (avcodec_receive_frame(c, f) >= 0) {
            ref_frame(&r, filter, f, clip->tb, &o);
            av_frame_unref(f);
        }
    }
    if (filter && r.g)
        ref_drain(&r, &o);
    av_frame_free(&f);
    avcodec_free_context(&c);
    return 0;
}

static int lavc_decode(const TClip *clip, int thread_type, int thread_count, int flags,
                       TSums *out)
{
    const AVCodec *codec = avcodec_find_decoder(clip->par->codec_id);
    AVCodecContext *c = avcodec_alloc_context3(codec);
    avcodec_parameters_to_context(c, clip->par);
    c->pkt_timebase = clip->tb;
    c->thread_count = thread_count;
    c->flags |= flags;
    c->thread_type = thread_type;
    int ret = avcodec_open2(c, codec, NULL);
    if (ret < 0) {
        avcodec_free_context(&c);
        return ret;
    }
    AVFrame *f = av_frame_alloc();
    for (int i = 0; i <= clip->n_pkts; i++) {
        avcodec_send_packet(c, i < clip->n_pkts ? clip->pkts[i] : NULL);
        while (avcodec_receive_frame(c, f) >= 0) {
            t_sums_add(out, f);
            av_frame_unref(f);
        }
    }
    av_frame_free(&f);
    avcodec_free_context(&c);
    return 0;
}

int t_lavc_decode(const TClip *clip, int thread_type, int thread_count, TSums *out)
{
    return lavc_decode(clip, thread_type, thread_count, AV_CODEC_FLAG_UNALIGNED, out);
}

int t_lavc_decode_aligned(const TClip *clip, TSums *out)
{
    return lavc_decode(clip, FF_THREAD_SLICE | FF_THREAD_FRAME, 1, 0, out);
}

/* ------------------------------------------------------- through dfmedia */

int t_df_decode(DfSched *s, const TClip *clip, const DfDecoderConfig *cfg, TSums *out,
                DfDecoderStats *stats, char *threading, size_t threading_len)
{
    return t_df_decode_then(s, clip, cfg, out, stats, threading, threading_len, NULL, NULL);
}

int t_df_decode_then(DfSched *s, const TClip *clip, const DfDecoderConfig *cfg_in, TSums *out,
                     DfDecoderStats *stats, char *threading, size_t threading_len,
                     void (*after)(void *ctx), void *ctx)
{
    DfDecoderConfig cfg_tsan;
    const DfDecoderConfig *cfg = cfg_in;
    if (t_under_tsan() && (!cfg || cfg->threading != DF_THREADING_NONE)) {
        /* libavcodec's frame threads are uninstrumented and synchronise with
         * atomics ThreadSanitizer cannot see: their reports would be noise.
         * In slice mode every libavcodec call runs inside our tasks. */
        if (cfg)
            cfg_tsan = *cfg;
        else
            df_decoder_config_init(&cfg_tsan);
        cfg_tsan.threading = DF_THREADING_SLICE;
        cfg = &cfg_tsan;
    }
    DfDecoder *dec = NULL;
    DfError err = {0};
    int ret = df_decoder_new(s, clip->par, clip->tb, cfg, &dec, &err);
    if (ret < 0) {
        df_test_fail(__FILE__, __LINE__, false, "%s: df_decoder_new: %s", clip->name, err.msg);
        return ret;
    }
    AVFrame *f = av_frame_alloc();
    for (int i = 0; i < clip->n_pkts; i++) {
        while ((ret = df_decoder_send_packet(dec, clip->pkts[i])) == AVERROR(EAGAIN)) {
            ret = df_decoder_receive_frame(dec, f);
            if (ret == 0)
                t_sums_add(out, f);
            else if (ret != AVERROR(EAGAIN))
                goto fail;
        }
        if (ret < 0)
            goto fail;
        if (i == 0 && after)
            after(ctx);
        while (df_decoder_try_receive_frame(dec, f) == 0)
            t_sums_add(out, f);
    }
    ret = df_decoder_send_packet(dec, NULL);
    if (ret < 0)
        goto fail;
    while ((ret = df_decoder_receive_frame(dec, f)) == 0)
        t_sums_add(out, f);
    if (ret != AVERROR_EOF)
        goto fail;
    ret = 0;
    if (stats)
        df_decoder_stats(dec, stats);
    if (threading)
        snprintf(threading, threading_len, "%s", df_decoder_threading(dec, NULL));
fail:
    if (ret < 0) {
        char e[AV_ERROR_MAX_STRING_SIZE];
        av_strerror(ret, e, sizeof(e));
        df_test_fail(__FILE__, __LINE__, false, "%s: decode loop: %s", clip->name, e);
    }
    av_frame_free(&f);
    df_decoder_free(&dec);
    return ret;
}
