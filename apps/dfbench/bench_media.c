/* Clips in memory, CPU confinement and GStreamer pipelines for dfbench
 * decode and dfbench realtime. */
#include "bench_media.h"
#include "report.h"

#include <errno.h>
#include <libavformat/avformat.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef DF_BENCH_HAVE_GST
#include <gst/gst.h>
#endif

/* ----------------------------------------------------------------- clips */

int df_clip_load(const char *path, DfClip *clip, char *err, size_t err_len)
{
    char e[AV_ERROR_MAX_STRING_SIZE];
    memset(clip, 0, sizeof(*clip));
    AVFormatContext *fmt = NULL;
    AVPacket *pkt = NULL;
    int ret = avformat_open_input(&fmt, path, NULL, NULL);
    if (ret < 0) {
        av_strerror(ret, e, sizeof(e));
        snprintf(err, err_len, "cannot open %s: %s", path, e);
        return ret;
    }
    if ((ret = avformat_find_stream_info(fmt, NULL)) < 0) {
        av_strerror(ret, e, sizeof(e));
        snprintf(err, err_len, "%s: cannot read stream info: %s", path, e);
        goto cleanup;
    }
    ret = av_find_best_stream(fmt, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
    if (ret < 0) {
        snprintf(err, err_len, "%s: no video stream", path);
        goto cleanup;
    }
    const int idx = ret;
    const AVStream *st = fmt->streams[idx];
    clip->par = avcodec_parameters_alloc();
    pkt = av_packet_alloc();
    if (!clip->par || !pkt || avcodec_parameters_copy(clip->par, st->codecpar) < 0) {
        ret = AVERROR(ENOMEM);
        snprintf(err, err_len, "out of memory");
        goto cleanup;
    }
    clip->tb = st->time_base;
    clip->frame_rate = st->avg_frame_rate.num > 0 ? st->avg_frame_rate : st->r_frame_rate;
    GPtrArray *v = g_ptr_array_new();
    while ((ret = av_read_frame(fmt, pkt)) >= 0) {
        if (pkt->stream_index == idx) {
            AVPacket *c = av_packet_clone(pkt);
            if (c)
                g_ptr_array_add(v, c);
        }
        av_packet_unref(pkt);
    }
    clip->n_pkts = (int)v->len;
    clip->pkts = (AVPacket **)g_ptr_array_free(v, FALSE);
    if (clip->n_pkts == 0) {
        ret = AVERROR_INVALIDDATA;
        snprintf(err, err_len, "%s: no video packets", path);
        goto cleanup;
    }
    if (!avcodec_find_decoder(clip->par->codec_id)) {
        ret = AVERROR_DECODER_NOT_FOUND;
        snprintf(err, err_len, "%s: libavcodec has no decoder for %s", path,
                 avcodec_get_name(clip->par->codec_id));
        goto cleanup;
    }
    clip->path = g_strdup(path);
    clip->name = g_path_get_basename(path);
    ret = 0;
cleanup:
    av_packet_free(&pkt);
    avformat_close_input(&fmt);
    if (ret < 0)
        df_clip_free(clip);
    return ret;
}

void df_clip_free(DfClip *clip)
{
    for (int i = 0; i < clip->n_pkts; i++)
        av_packet_free(&clip->pkts[i]);
    g_free(clip->pkts);
    avcodec_parameters_free(&clip->par);
    g_free(clip->path);
    g_free(clip->name);
    memset(clip, 0, sizeof(*clip));
}

int df_clip_warmup_packets(const DfClip *c)
{
    return c->n_pkts < DF_CLIP_WARMUP_PACKETS ? c->n_pkts : DF_CLIP_WARMUP_PACKETS;
}

double df_clip_gop_frames(const DfClip *c)
{
    int keys = 0;
    for (int i = 0; i < c->n_pkts; i++)
        keys += (c->pkts[i]->flags & AV_PKT_FLAG_KEY) != 0;
    /* A clip played in a loop: its key frames per pass. */
    return keys > 0 ? (double)c->n_pkts / keys : (double)c->n_pkts;
}

/* Packet i's PTS in ns, or its index over the frame rate without one. */
static int64_t packet_pts_ns(const DfClip *c, int i, bool *known)
{
    const AVRational ns = {1, 1000000000};
    const int64_t pts = c->pkts[i]->pts;
    *known = pts != AV_NOPTS_VALUE;
    if (*known)
        return av_rescale_q(pts, c->tb, ns);
    const AVRational rate = c->frame_rate.num > 0 ? c->frame_rate : (AVRational){25, 1};
    return av_rescale_q(i, av_inv_q(rate), ns);
}

int df_clip_frames_before(const DfClip *c, int64_t end_ns)
{
    int n = 0;
    bool known;
    for (int i = 0; i < c->n_pkts; i++)
        n += packet_pts_ns(c, i, &known) < end_ns;
    return n;
}

int64_t df_clip_reorder_lead_ns(const DfClip *c)
{
    int64_t lead = 0, latest = INT64_MIN;
    for (int i = 0; i < c->n_pkts; i++) {
        bool known;
        const int64_t pts = packet_pts_ns(c, i, &known);
        if (!known) {
            const AVRational rate = c->frame_rate.num > 0 ? c->frame_rate : (AVRational){25, 1};
            return av_rescale_q(16, av_inv_q(rate), (AVRational){1, 1000000000});
        }
        if (latest != INT64_MIN && latest - pts > lead)
            lead = latest - pts;
        if (pts > latest)
            latest = pts;
    }
    return lead;
}

double df_cpu_ms_per_frame(int64_t c0, int64_t c1, uint64_t frames)
{
    return c0 >= 0 && c1 >= c0 && frames ? (double)(c1 - c0) / 1e6 / (double)frames : NAN;
}

double df_first_frame_ms(int64_t t0_ns, int64_t first_ns, uint64_t frames)
{
    return frames && first_ns >= t0_ns ? (double)(first_ns - t0_ns) / 1e6 : NAN;
}

double df_steady_fps(int64_t first_ns, int64_t last_ns, uint64_t frames)
{
    return frames >= 2 && last_ns > first_ns
               ? (double)(frames - 1) / ((double)(last_ns - first_ns) / 1e9)
               : NAN;
}

void df_frame_out(DfFrameTimes *t)
{
    t->last_ns = df_now_ns();
    if (!t->frames++)
        t->first_ns = t->last_ns;
}

static void lavc_fail(DfLavcRun *out, const char *what, int ret)
{
    char e[AV_ERROR_MAX_STRING_SIZE] = "";
    if (ret < 0)
        av_strerror(ret, e, sizeof(e));
    snprintf(out->error, sizeof(out->error), "%s%s%s", what, ret < 0 ? ": " : "", e);
    out->fps = out->first_ms = out->steady_fps = NAN;
}

void df_clip_decode_lavc(const DfClip *c, int type, int threads, pthread_barrier_t *sync,
                         DfLavcRun *out)
{
    memset(out, 0, sizeof(*out));
    out->fps = out->first_ms = out->steady_fps = out->cpu_ms = NAN;
    bool synced = false;
    const AVCodec *codec = avcodec_find_decoder(c->par->codec_id);
    AVCodecContext *ctx = avcodec_alloc_context3(codec);
    AVFrame *f = av_frame_alloc();
    if (!ctx || !f) {
        lavc_fail(out, "out of memory", 0);
        goto cleanup;
    }
    int ret = avcodec_parameters_to_context(ctx, c->par);
    ctx->thread_count = type ? threads : 1;
    ctx->thread_type = type;
    if (ret >= 0)
        ret = avcodec_open2(ctx, codec, NULL);
    if (ret < 0) {
        lavc_fail(out, "avcodec_open2", ret);
        goto cleanup;
    }
    const int warm = df_clip_warmup_packets(c);
    for (int i = 0; i <= warm; i++) {
        avcodec_send_packet(ctx, i < warm ? c->pkts[i] : NULL);
        while (avcodec_receive_frame(ctx, f) == 0)
            ;
    }
    avcodec_flush_buffers(ctx);
    if (sync)
        pthread_barrier_wait(sync);
    synced = true;
    uint64_t frames = 0;
    /* ffmpeg-streams' decodes share the process: each counts its own
     * thread; slice and frame threads are the process's (every thread of
     * the implementation's own pool). */
    const clockid_t clock = sync ? CLOCK_THREAD_CPUTIME_ID : CLOCK_PROCESS_CPUTIME_ID;
    const int64_t c0 = df_report_cpu_ns(clock);
    const int64_t t0 = df_now_ns();
    DfFrameTimes ft = {0};
    for (int i = 0; i <= c->n_pkts; i++) {
        avcodec_send_packet(ctx, i < c->n_pkts ? c->pkts[i] : NULL);
        while (avcodec_receive_frame(ctx, f) == 0)
            df_frame_out(&ft);
    }
    frames = ft.frames;
    const int64_t t1 = df_now_ns();
    out->cpu_ms = df_cpu_ms_per_frame(c0, df_report_cpu_ns(clock), frames);
    out->frames = frames;
    out->fps = frames ? (double)frames / ((double)(t1 - t0) / 1e9) : NAN;
    out->first_ms = df_first_frame_ms(t0, ft.first_ns, frames);
    out->steady_fps = df_steady_fps(ft.first_ns, ft.last_ns, frames);
    if (!frames)
        lavc_fail(out, "no frames decoded", 0);
cleanup:
    if (sync && !synced)
        pthread_barrier_wait(sync); /* failed before it: the others still pass */
    av_frame_free(&f);
    avcodec_free_context(&ctx);
}

/* --------------------------------------------------------------- options */

/* ------------------------------------------------------------------ CPUs */

static void cpu_set_of(const DfCpuMap *map, int n, cpu_set_t *set)
{
    CPU_ZERO(set);
    for (int i = 0; i < n; i++) {
        const int cpu = df_cpu_map_cpu(map, i, n);
        if (cpu >= 0 && cpu < CPU_SETSIZE)
            CPU_SET(cpu, set);
    }
}

int df_bench_confine(const DfCpuMap *map, int n)
{
    cpu_set_t set;
    cpu_set_of(map, n, &set);
    return -pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* ------------------------------------------------------------- GStreamer */

int64_t df_gst_window_ns(double duration_s, double rate)
{
    return duration_s > 0 ? (int64_t)(duration_s * rate * 1e9) : -1;
}

const char *df_gst_avdec_name(enum AVCodecID id)
{
    switch (id) {
    case AV_CODEC_ID_H264:
        return "avdec_h264";
    case AV_CODEC_ID_HEVC:
        return "avdec_h265";
    case AV_CODEC_ID_MPEG2VIDEO:
        return "avdec_mpeg2video";
    default:
        return NULL;
    }
}

#ifndef DF_BENCH_HAVE_GST

bool df_gst_built(void)
{
    return false;
}

bool df_gst_init(void)
{
    return false;
}

void df_gst_deinit(void)
{
}

bool df_gst_have(const char *factory)
{
    return false;
}

bool df_gst_has_property(const char *factory, const char *prop)
{
    return false;
}

int df_gst_run(const DfGstRun *runs, int n, DfGstResult *res, DfProcSample *mid)
{
    if (mid)
        df_proc_sample(mid);
    for (int i = 0; i < n; i++) {
        memset(&res[i], 0, sizeof(res[i]));
        snprintf(res[i].error, sizeof(res[i].error), "dfbench was built without GStreamer");
    }
    return -ENOTSUP;
}

#else

bool df_gst_built(void)
{
    return true;
}

static int gst_state; /* 0 not tried, 1 fine, -1 failed or deinitialised */

bool df_gst_init(void)
{
    int *const state = &gst_state;
    if (*state == 0) {
        GError *err = NULL;
        *state = gst_init_check(NULL, NULL, &err) ? 1 : -1;
        if (err) {
            fprintf(stderr, "dfbench: GStreamer: %s\n", err->message);
            g_error_free(err);
        }
    }
    return *state > 0;
}

void df_gst_deinit(void)
{
    if (gst_state > 0)
        gst_deinit();
    gst_state = -1;
}

bool df_gst_have(const char *factory)
{
    if (!df_gst_init())
        return false;
    /* Made, not just found: the registry may list a plugin that no longer
     * loads (e.g. a dfdec built against another libdfmedia than the one
     * this process has loaded). */
    GstElement *e = gst_element_factory_make(factory, NULL);
    if (!e)
        return false;
    gst_object_unref(e);
    return true;
}

bool df_gst_has_property(const char *factory, const char *prop)
{
    if (!df_gst_init())
        return false;
    GstElement *e = gst_element_factory_make(factory, NULL);
    if (!e)
        return false;
    const bool has = g_object_class_find_property(G_OBJECT_GET_CLASS(e), prop) != NULL;
    gst_object_unref(e);
    return has;
}

typedef struct GstCtx {
    const DfGstRun *run;
    DfGstResult *res;
    GstElement *pipe, *sink, *dec;
    /* From the bus's sync handler (streaming threads): */
    _Atomic uint64_t qos_drops;
    _Atomic bool busy_error, busy_warning;
    cpu_set_t cpus;
    GstClockTime window_end; /* sync: frames from this PTS on are not counted */
    GThread *confined;       /* the streaming thread already confined */
    int64_t t0_ns;
    DfFrameTimes out; /* frames at the sink; out.frames is res->frames' count */
    GArray *lateness; /* double ms, sync only */
    GArray *lead;     /* double ms, sync only: decoder input ahead of its running time */
} GstCtx;

/* How far ahead of the clock a buffer of running time `rt_of(ts)` is at
 * `pad` (sync only; false when unknown). */
static bool ahead_of_clock(GstCtx *c, GstPad *pad, GstClockTime ts, double *ahead_ms)
{
    bool ok = false;
    GstEvent *ev = gst_pad_get_sticky_event(pad, GST_EVENT_SEGMENT, 0);
    GstClock *clock = gst_element_get_clock(c->sink);
    if (ev && clock) {
        const GstSegment *seg;
        gst_event_parse_segment(ev, &seg);
        const guint64 rt = gst_segment_to_running_time(seg, GST_FORMAT_TIME, ts);
        const GstClockTime now = gst_clock_get_time(clock);
        const GstClockTime base = gst_element_get_base_time(c->sink);
        if (rt != GST_CLOCK_TIME_NONE && now >= base) {
            *ahead_ms = ((double)rt - (double)(now - base)) / 1e6;
            ok = true;
        }
    }
    if (clock)
        gst_object_unref(clock);
    if (ev)
        gst_event_unref(ev);
    return ok;
}

/* The decoder's input: runs on the streaming thread that will open the
 * codec (caps come before buffers), so libavcodec's threads inherit.  In
 * real time, it also records how long before its running time (by DTS:
 * decode order) each packet reaches the decoder. */
static GstPadProbeReturn confine_probe(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
    GstCtx *c = data;
    GThread *self = g_thread_self();
    if (c->confined != self) {
        pthread_setaffinity_np(pthread_self(), sizeof(c->cpus), &c->cpus);
        c->confined = self;
    }
    if (!c->run->sync || !(info->type & GST_PAD_PROBE_TYPE_BUFFER))
        return GST_PAD_PROBE_OK;
    GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER(info);
    const GstClockTime ts =
        GST_BUFFER_DTS_IS_VALID(buf) ? GST_BUFFER_DTS(buf) : GST_BUFFER_PTS(buf);
    double ms;
    if (GST_CLOCK_TIME_IS_VALID(ts) && ahead_of_clock(c, pad, ts, &ms))
        g_array_append_val(c->lead, ms);
    return GST_PAD_PROBE_OK;
}

/* At the sink's input, before it waits for the clock: "received". */
static GstPadProbeReturn count_probe(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
    GstCtx *c = data;
    GstBuffer *buf = GST_PAD_PROBE_INFO_BUFFER(info);
    /* Past the window: decoded only because the segment's stop lies past
     * it (DfGstRun.reorder_lead_ns). */
    if (GST_CLOCK_TIME_IS_VALID(c->window_end) && GST_BUFFER_PTS_IS_VALID(buf) &&
        GST_BUFFER_PTS(buf) >= c->window_end)
        return GST_PAD_PROBE_OK;
    df_frame_out(&c->out);
    c->res->frames = c->out.frames;
    if (!c->run->sync || !GST_BUFFER_PTS_IS_VALID(buf))
        return GST_PAD_PROBE_OK;
    GstEvent *ev = gst_pad_get_sticky_event(pad, GST_EVENT_SEGMENT, 0);
    GstClock *clock = gst_element_get_clock(c->sink);
    if (ev && clock) {
        const GstSegment *seg;
        gst_event_parse_segment(ev, &seg);
        const guint64 rt = gst_segment_to_running_time(seg, GST_FORMAT_TIME, GST_BUFFER_PTS(buf));
        const GstClockTime now = gst_clock_get_time(clock);
        const GstClockTime base = gst_element_get_base_time(c->sink);
        if (rt != GST_CLOCK_TIME_NONE && now >= base) {
            /* Against the due time, running time + budget, as dfmedia's
             * streams are measured. */
            const double late_ns = (double)(now - base) - (double)rt - (double)c->run->budget_ns;
            const double ms = late_ns / 1e6;
            g_array_append_val(c->lateness, ms);
            if (late_ns > 0) {
                c->res->late++;
                const double at_s = (double)(now - base) / 1e9;
                if (isnan(c->res->late_first_s))
                    c->res->late_first_s = at_s;
                c->res->late_last_s = at_s;
            }
        }
    }
    if (clock)
        gst_object_unref(clock);
    if (ev)
        gst_event_unref(ev);
    return GST_PAD_PROBE_OK;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Every message, on the thread that posts it: the decoder's QoS drops
 * and a resource-busy error or warning (dfdec's admission), which
 * gst_bus_timed_pop_filtered() would discard or take for a failure. */
static GstBusSyncReply bus_sync(GstBus *bus, GstMessage *m, gpointer data)
{
    (void)bus;
    GstCtx *c = data;
    const GstMessageType t = GST_MESSAGE_TYPE(m);
    if (t == GST_MESSAGE_QOS) {
        if (GST_MESSAGE_SRC(m) == GST_OBJECT(c->dec))
            atomic_fetch_add_explicit(&c->qos_drops, 1, memory_order_relaxed);
        /* Counted: queued, one per frame dropped, they would pile up on
         * the bus of every pipeline but the one waited on (10 minutes of
         * 16 streams at 0.8 K*: +2.3 MiB of heap a minute).  A handler
         * that drops a message owns it (GstBusSyncHandler): each held a
         * reference to the decoder, so dropped unfreed they kept every
         * dfdec alive after its pipeline and read as the element's heap
         * growing (~0.6 KiB per frame dropped). */
        gst_message_unref(m);
        return GST_BUS_DROP;
    } else if (t == GST_MESSAGE_ERROR || t == GST_MESSAGE_WARNING) {
        GError *e = NULL;
        if (t == GST_MESSAGE_ERROR)
            gst_message_parse_error(m, &e, NULL);
        else
            gst_message_parse_warning(m, &e, NULL);
        if (e && g_error_matches(e, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_BUSY))
            atomic_store_explicit(t == GST_MESSAGE_ERROR ? &c->busy_error : &c->busy_warning, true,
                                  memory_order_relaxed);
        g_clear_error(&e);
    }
    return GST_BUS_PASS;
}

static bool gst_ctx_build(GstCtx *c)
{
    const DfGstRun *r = c->run;
    /* Unsynchronised, a sink still sends QoS events against the clock
     * (basesink computes lateness whether or not it waits), and a decoder
     * that honours them skips frames: avdec_mpeg2video put out 161 of
     * 240 frames at 2 threads, its fps then counting less work.  As fast
     * as it goes there is no deadline to be late for: no QoS. */
    gchar *desc = g_strdup_printf("filesrc name=src ! parsebin ! %s name=dec ! %s name=sink "
                                  "sync=%s%s",
                                  r->decoder, r->sink ? r->sink : "fakesink",
                                  r->sync ? "true" : "false", r->sync ? "" : " qos=false");
    GError *err = NULL;
    c->pipe = gst_parse_launch(desc, &err);
    g_free(desc);
    if (!c->pipe || err) {
        snprintf(c->res->error, sizeof(c->res->error), "gst_parse_launch: %s",
                 err ? err->message : "failed");
        g_clear_error(&err);
        return false;
    }
    GstElement *src = gst_bin_get_by_name(GST_BIN(c->pipe), "src");
    GstElement *dec = gst_bin_get_by_name(GST_BIN(c->pipe), "dec");
    c->sink = gst_bin_get_by_name(GST_BIN(c->pipe), "sink");
    c->dec = gst_object_ref(dec);
    GstBus *bus = gst_element_get_bus(c->pipe);
    gst_bus_set_sync_handler(bus, bus_sync, c, NULL);
    gst_object_unref(bus);
    g_object_set(src, "location", r->path, NULL);
    GstPad *dsink = gst_element_get_static_pad(dec, "sink");
    gst_pad_add_probe(dsink, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM | GST_PAD_PROBE_TYPE_BUFFER,
                      confine_probe, c, NULL);
    gst_object_unref(dsink);
    GstPad *ssink = gst_element_get_static_pad(c->sink, "sink");
    gst_pad_add_probe(ssink, GST_PAD_PROBE_TYPE_BUFFER, count_probe, c, NULL);
    gst_object_unref(ssink);
    gst_object_unref(src);
    gst_object_unref(dec);
    return true;
}

/* Wait for the pipeline's first message of `types`; false on error/timeout. */
static bool gst_ctx_wait(GstCtx *c, GstMessageType types, GstClockTime timeout)
{
    GstBus *bus = gst_element_get_bus(c->pipe);
    GstMessage *m =
        gst_bus_timed_pop_filtered(bus, timeout, (GstMessageType)(types | GST_MESSAGE_ERROR));
    gst_object_unref(bus);
    bool ok = m && GST_MESSAGE_TYPE(m) != GST_MESSAGE_ERROR;
    if (!m) {
        snprintf(c->res->error, sizeof(c->res->error), "timed out");
    } else if (!ok) {
        GError *e = NULL;
        gst_message_parse_error(m, &e, NULL);
        snprintf(c->res->error, sizeof(c->res->error), "%s", e ? e->message : "error");
        g_clear_error(&e);
    }
    if (m)
        gst_message_unref(m);
    return ok;
}

int df_gst_run(const DfGstRun *runs, int n, DfGstResult *res, DfProcSample *mid)
{
    int ret = 0;
    GstCtx *ctx = g_new0(GstCtx, (gsize)n);
    for (int i = 0; i < n; i++) {
        memset(&res[i], 0, sizeof(res[i]));
        res[i].fps = res[i].first_ms = res[i].steady_fps = res[i].late_p99_ms = res[i].lead_p50_ms =
            res[i].lead_min_ms = res[i].late_first_s = res[i].late_last_s = NAN;
    }
    if (!df_gst_init()) {
        for (int i = 0; i < n; i++)
            snprintf(res[i].error, sizeof(res[i].error), "GStreamer failed to initialise");
        ret = -EIO;
        goto cleanup;
    }
    for (int i = 0; i < n; i++) {
        ctx[i].run = &runs[i];
        ctx[i].res = &res[i];
        const int64_t window = df_gst_window_ns(runs[i].duration_s, runs[i].rate);
        ctx[i].window_end =
            runs[i].sync && window >= 0 ? (GstClockTime)window : GST_CLOCK_TIME_NONE;
        const guint room = runs[i].sync && runs[i].window_frames > 0
                               ? (guint)runs[i].window_frames + 64 /* reorder, a margin */
                               : 0;
        ctx[i].lateness = g_array_sized_new(FALSE, FALSE, sizeof(double), room);
        ctx[i].lead = g_array_sized_new(FALSE, FALSE, sizeof(double), room);
        cpu_set_of(runs[i].map, runs[i].cpus, &ctx[i].cpus);
        if (!gst_ctx_build(&ctx[i]))
            ret = -EINVAL;
    }
    if (ret < 0)
        goto cleanup;
    const bool sync = runs[0].sync;
    if (sync) {
        /* Preroll, then play from the start at `rate` for `duration_s`
         * of running time (the window; the segment's stop is stream time).
         * A demuxer ends the segment in decode order (matroskademux at
         * the first keyframe at or past its stop): a stop at the window's
         * end would cut the B-frames of an open GOP decoded after that
         * keyframe but shown before it (MPEG-2 with open GOPs: 2 frames of
         * the window whenever it ends on an I-frame).  The stop lies the
         * clip's reorder lead past the window; the frames after the window
         * are not counted. */
        for (int i = 0; i < n; i++)
            gst_element_set_state(ctx[i].pipe, GST_STATE_PAUSED);
        for (int i = 0; i < n; i++) {
            if (!gst_ctx_wait(&ctx[i], GST_MESSAGE_ASYNC_DONE, 60 * GST_SECOND)) {
                ret = -EIO;
                continue;
            }
            const DfGstRun *r = &runs[i];
            const gint64 window = df_gst_window_ns(r->duration_s, r->rate);
            const gint64 stop = window >= 0 ? window + r->reorder_lead_ns : -1;
            if (!gst_element_seek(ctx[i].pipe, r->rate, GST_FORMAT_TIME,
                                  (GstSeekFlags)(GST_SEEK_FLAG_FLUSH | GST_SEEK_FLAG_ACCURATE),
                                  GST_SEEK_TYPE_SET, 0,
                                  stop < 0 ? GST_SEEK_TYPE_NONE : GST_SEEK_TYPE_SET, stop)) {
                snprintf(res[i].error, sizeof(res[i].error), "seek to rate %.3f failed", r->rate);
                ret = -EIO;
                continue;
            }
            gst_ctx_wait(&ctx[i], GST_MESSAGE_ASYNC_DONE, 60 * GST_SECOND);
            /* The prerolled frames were counted before the clock ran. */
            res[i].frames = 0;
            ctx[i].out = (DfFrameTimes){0};
            res[i].late = 0;
            g_array_set_size(ctx[i].lateness, 0);
            g_array_set_size(ctx[i].lead, 0);
        }
        if (ret < 0)
            goto cleanup;
    }
    const int64_t t0 = df_now_ns();
    for (int i = 0; i < n; i++) {
        const int64_t wait = t0 + runs[i].start_offset_ns - df_now_ns();
        if (wait > 0)
            g_usleep((gulong)(wait / 1000));
        ctx[i].t0_ns = df_now_ns();
        gst_element_set_state(ctx[i].pipe, GST_STATE_PLAYING);
    }
    if (mid) {
        if (sync && runs[0].duration_s > 0)
            g_usleep((gulong)(runs[0].duration_s * 0.5e6));
        df_proc_sample(mid);
    }
    for (int i = 0; i < n; i++) {
        /* Ten minutes past the window: a paced run lasts its window. */
        const double window_s = sync && runs[i].duration_s > 0 ? runs[i].duration_s : 0;
        const bool eos =
            gst_ctx_wait(&ctx[i], GST_MESSAGE_EOS, (GstClockTime)((600 + window_s) * GST_SECOND));
        res[i].dropped = atomic_load_explicit(&ctx[i].qos_drops, memory_order_relaxed);
        res[i].warned = atomic_load_explicit(&ctx[i].busy_warning, memory_order_relaxed);
        res[i].refused = atomic_load_explicit(&ctx[i].busy_error, memory_order_relaxed);
        if (!eos && res[i].refused) {
            res[i].error[0] = '\0'; /* refused by admission: a result */
            continue;
        }
        if (!eos) {
            ret = -EIO;
            continue;
        }
        const DfFrameTimes *o = &ctx[i].out;
        if (res[i].frames > 0 && o->last_ns > ctx[i].t0_ns)
            res[i].fps = (double)res[i].frames / ((double)(o->last_ns - ctx[i].t0_ns) / 1e9);
        res[i].first_ms = df_first_frame_ms(ctx[i].t0_ns, o->first_ns, res[i].frames);
        res[i].steady_fps = df_steady_fps(o->first_ns, o->last_ns, res[i].frames);
        GArray *l = ctx[i].lateness;
        if (l->len > 0) {
            qsort(l->data, l->len, sizeof(double), cmp_double);
            res[i].late_p99_ms = g_array_index(l, double, (guint)((l->len - 1) * 99 / 100));
        }
        GArray *a = ctx[i].lead;
        if (a->len > 0) {
            qsort(a->data, a->len, sizeof(double), cmp_double);
            res[i].lead_p50_ms = g_array_index(a, double, (guint)((a->len - 1) / 2));
            res[i].lead_min_ms = g_array_index(a, double, 0);
        }
    }
cleanup:
    for (int i = 0; i < n; i++) {
        if (ctx[i].pipe) {
            gst_element_set_state(ctx[i].pipe, GST_STATE_NULL);
            GstBus *bus = gst_element_get_bus(ctx[i].pipe);
            gst_bus_set_sync_handler(bus, NULL, NULL, NULL);
            gst_object_unref(bus);
            gst_object_unref(ctx[i].pipe);
        }
        if (ctx[i].dec)
            gst_object_unref(ctx[i].dec);
        if (ctx[i].sink)
            gst_object_unref(ctx[i].sink);
        if (ctx[i].lateness)
            g_array_free(ctx[i].lateness, TRUE);
        if (ctx[i].lead)
            g_array_free(ctx[i].lead, TRUE);
    }
    g_free(ctx);
    /* The default task pool keeps its idle streaming threads for the next
     * pipelines: let them go, so that each run starts from the same
     * process (and the next one's threads per stream are its own). */
    gst_task_cleanup_all();
    /* GLib keeps the freed pool's threads as its own unused ones (GLib
     * 2.84 kept 4 of 4 pipelines' here) and they exit when told, not at
     * once: wait until the count settles.  A thread that was still
     * finishing its task when told becomes unused afterwards and stays
     * (GLib 2.74 kept one after every run, and this loop waited its whole
     * second each time): tell again until none is left. */
    DfProcSample a, b;
    g_thread_pool_stop_unused_threads();
    df_proc_sample(&a);
    for (int i = 0; i < 100; i++, a = b) {
        g_usleep(10000);
        const guint unused = g_thread_pool_get_num_unused_threads();
        df_proc_sample(&b);
        if (b.threads == a.threads && unused == 0)
            break;
        if (unused > 0)
            g_thread_pool_stop_unused_threads();
    }
    return ret;
}

#endif
