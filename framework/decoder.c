/* The decoder: libavcodec's send/receive API on top of per-packet graphs.
 *
 * send_packet only enqueues: it instantiates the module table for the
 * packet (a "slot") and returns; D(k) calls into libavcodec on a worker.
 * So the caller — later GStreamer's streaming thread, holding its stream
 * lock — never runs libavcodec and never waits while sending.  The slots
 * are the output queue too: O(k) runs in order, and receive_frame takes
 * frames from the oldest slot once its group is done, waiting (or, on a
 * worker, helping) until then. */
#include "media_internal.h"

#include <libavutil/pixdesc.h>
#include <pthread.h>
#include <libswscale/swscale.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PROBE_PACKETS 16

void df_decoder_config_init(DfDecoderConfig *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->threading = DF_THREADING_AUTO;
    cfg->out_format = AV_PIX_FMT_NONE;
    cfg->max_in_flight = 2;
    cfg->max_delay_frames = -1;
    cfg->log_level = AV_LOG_WARNING;
}

void df_log(const DfDecoder *dec, int level, const char *fmt, ...)
{
    if (dec && level > dec->cfg.log_level)
        return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    av_log(NULL, level, "dfmedia: %s", buf);
}

int df_err(DfError *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return code;
}

int64_t df_ts_to_ns(const DfDecoder *dec, int64_t ts)
{
    if (ts == AV_NOPTS_VALUE)
        return INT64_MIN;
    return av_rescale_q(ts, dec->tb, (AVRational){1, 1000000000});
}

/* ------------------------------------------------------------ slot data */

int df_frame_list_add(DfFrameList *l, AVFrame *frame, const DfRowMap *map)
{
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 2;
        DfFrameItem *v = realloc(l->v, sizeof(*v) * (size_t)cap);
        if (!v)
            return AVERROR(ENOMEM);
        l->v = v;
        l->cap = cap;
    }
    DfFrameItem *it = &l->v[l->n++];
    memset(it, 0, offsetof(DfFrameItem, map));
    it->frame = frame;
    df_row_map_copy(&it->map, map);
    it->error = 0;
    return 0;
}

void df_frame_list_clear(DfFrameList *l)
{
    for (int i = 0; i < l->n; i++) {
        av_frame_free(&l->v[i].frame);
        av_frame_free(&l->v[i].dst);
        df_conv_unref(&l->v[i].conv);
    }
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

void df_slot_error(DfSlot *s, int64_t pts, int code, const char *fmt, ...)
{
    DF_MEDIA_CTR_ADD(s->dec, decode_errors, 1);
    if (s->n_errors == DF_SLOT_ERRORS) {
        s->lost_errors++;
        return;
    }
    DfDecodeError *e = &s->errors[s->n_errors++];
    e->pts = pts;
    e->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
    va_end(ap);
}

/* --------------------------------------------------------------- D(k) */

static int open_codec(DfDecoder *dec, DfError *err);

static void decode(DfDecoder *dec, DfSlot *s, bool skip_nonref)
{
    DfFrameList *dst = dec->filter ? &s->decoded : &s->out;
    char e[AV_ERROR_MAX_STRING_SIZE];
    if (!dec->avctx) {
        /* `auto` probed the stream in send_packet; opening is libavcodec
         * work, so it happens here, on the D chain, not on the caller. */
        DfError err = {0};
        if (open_codec(dec, &err) < 0) {
            df_slot_error(s, s->pkt ? s->pkt->pts : AV_NOPTS_VALUE, err.code, "%s", err.msg);
            return;
        }
    }
    AVCodecContext *avctx = dec->avctx;

    dec->cur_slot = s;
    DF_MEDIA_CTR_ADD(dec, decode_calls, 1);
    if (skip_nonref)
        avctx->skip_frame = AVDISCARD_NONREF;
#if !DF_LAVC_COPY_OPAQUE
    /* Older libavcodec: it hands reordered_opaque back on the picture, and
     * receive below moves it to frame->opaque (the public contract). */
    avctx->reordered_opaque = s->pkt ? (int64_t)(intptr_t)s->pkt->opaque : 0;
#endif
    const uint64_t pictures = dec->pics.allocated;
    int ret = avcodec_send_packet(avctx, s->pkt);
    const int sent = ret;
    if (ret < 0 && ret != AVERROR_EOF) {
        av_strerror(ret, e, sizeof(e));
        const int64_t pts = s->pkt ? s->pkt->pts : AV_NOPTS_VALUE;
        if (pts != AV_NOPTS_VALUE)
            df_slot_error(s, pts, ret, "packet pts %" PRId64 ": %s", pts, e);
        else
            df_slot_error(s, pts, ret, "packet %" PRIu64 ": %s", s->seq, e);
    }
    for (;;) {
        AVFrame *f = av_frame_alloc();
        if (!f) {
            df_slot_error(s, AV_NOPTS_VALUE, AVERROR(ENOMEM), "out of memory");
            break;
        }
        ret = avcodec_receive_frame(avctx, f);
        if (ret < 0) {
            av_frame_free(&f);
            if (ret == AVERROR_EOF)
                s->eof = 1;
            else if (ret != AVERROR(EAGAIN)) {
                av_strerror(ret, e, sizeof(e));
                df_slot_error(s, AV_NOPTS_VALUE, ret, "decode: %s", e);
            }
            break;
        }
        DF_MEDIA_CTR_ADD(dec, frames_decoded, 1);
#if !DF_LAVC_COPY_OPAQUE
        f->opaque = (void *)(intptr_t)f->reordered_opaque;
#endif
        if (f->decode_error_flags || (f->flags & AV_FRAME_FLAG_CORRUPT))
            df_slot_error(s, f->pts, AVERROR_INVALIDDATA,
                          "frame pts %" PRId64 ": corrupt (decode_error_flags 0x%x)", f->pts,
                          f->decode_error_flags);
        DfRowMap map;
        df_hooks_lookup(dec, f, &map);
        if (map.n >= 2)
            DF_MEDIA_CTR_ADD(dec, frames_with_jobs, 1);
        int64_t pts_ns = df_ts_to_ns(
            dec, f->best_effort_timestamp != AV_NOPTS_VALUE ? f->best_effort_timestamp : f->pts);
        int64_t unknown = INT64_MIN;
        atomic_compare_exchange_strong(&s->out_pts_ns, &unknown, pts_ns);
        if (df_frame_list_add(dst, f, &map) < 0) {
            av_frame_free(&f);
            df_slot_error(s, AV_NOPTS_VALUE, AVERROR(ENOMEM), "out of memory");
        }
    }
    /* libavcodec's MPEG-1/2 decoder drops a picture whose headers are
     * broken without a word; every packet from a parser holds a picture,
     * so a packet that allocated none lost one. */
    if (sent >= 0 && s->pkt && s->pkt->size > 0 && !skip_nonref &&
        dec->plan.mode != DF_THREADING_FRAME && pictures == dec->pics.allocated &&
        (dec->par->codec_id == AV_CODEC_ID_MPEG2VIDEO ||
         dec->par->codec_id == AV_CODEC_ID_MPEG1VIDEO))
        df_slot_error(s, s->pkt->pts, AVERROR_INVALIDDATA,
                      "packet pts %" PRId64 ": no picture decoded (corrupt or truncated)",
                      s->pkt->pts);
    if (skip_nonref)
        avctx->skip_frame = AVDISCARD_DEFAULT;
    if (!s->pkt)
        s->eof = 1; /* the drain ended, normally or with an error */
    atomic_store_explicit(&dec->has_b_frames, avctx->has_b_frames, memory_order_relaxed);
    dec->cur_slot = NULL;
}

void df_decode_task(DfTask *t, void *arg)
{
    DfSlot *s = arg;
    DfDecoder *dec = s->dec;
    decode(dec, s, false);
    if (!dec->filter) {
        df_output_prepare(dec, s);
        df_graph_submit_bands(dec, s, true);
    }
}

/* Cancelled before it started: by a flush (drop the packet), or by QoS —
 * then the packet must still be decoded, or every later picture that
 * references it would break; only non-reference pictures are skipped. */
void df_decode_task_cancel(DfTask *t, void *arg)
{
    DfSlot *s = arg;
    DfDecoder *dec = s->dec;
    if (!atomic_load_explicit(&s->discard, memory_order_acquire))
        decode(dec, s, true);
    if (!dec->filter)
        df_graph_submit_bands(dec, s, false);
}

/* ---------------------------------------------------------- codec open */

/* Fit frame threads and packets in flight into cfg.max_delay_frames, once
 * the plan's mode is known.  Runs on the caller's thread before the codec
 * is opened (directly, or by the first D task, which the enqueue that
 * follows orders after this), and send_packet reads max_in_flight on that
 * same thread. */
static void fit_delay_budget(DfDecoder *dec)
{
    DfDecoderConfig *cfg = &dec->cfg;
    const int budget = cfg->max_delay_frames;
    if (budget < 0)
        return;
    DfThreadPlan pl;
    df_threading_plan(cfg, dec->par, dec->codec, &dec->probe, dec->n_workers, &pl);
    int frame_delay = 0;
    if (pl.mode == DF_THREADING_FRAME && pl.thread_count - 1 > budget) {
        /* 1 frame thread: plan_frame() falls back to a single thread. */
        cfg->frame_threads = budget + 1;
        frame_delay = budget;
    } else if (pl.mode == DF_THREADING_FRAME) {
        frame_delay = pl.thread_count - 1;
    }
    if (cfg->max_in_flight - 1 > budget - frame_delay)
        cfg->max_in_flight = budget - frame_delay + 1;
}

static int open_codec(DfDecoder *dec, DfError *err)
{
    char e[AV_ERROR_MAX_STRING_SIZE];
    df_threading_plan(&dec->cfg, dec->par, dec->codec, &dec->probe, dec->n_workers, &dec->plan);
    AVCodecContext *avctx = avcodec_alloc_context3(dec->codec);
    if (!avctx)
        return df_err(err, AVERROR(ENOMEM), "out of memory");
    int ret = avcodec_parameters_to_context(avctx, dec->par);
    if (ret < 0)
        goto fail;
    avctx->pkt_timebase = dec->tb;
    avctx->opaque = dec;
    avctx->get_buffer2 = df_pool_get_buffer2;
    avctx->thread_count = dec->plan.thread_count;
#if DF_LAVC_COPY_OPAQUE
    avctx->flags |= AV_CODEC_FLAG_COPY_OPAQUE; /* pkt->opaque to frame->opaque */
#endif
    avctx->thread_type = dec->plan.thread_type;
#if FF_API_THREAD_SAFE_CALLBACKS
    /* Our pools are thread-safe (and get_picture must be): without this,
     * libavcodec 59 makes each frame thread wait for the sending thread to
     * allocate its pictures. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    avctx->thread_safe_callbacks = 1;
#pragma GCC diagnostic pop
#endif
    /* Frame threads are created here and inherit this thread's affinity:
     * on a pinned worker (auto threading opens the codec in D(k)) they
     * would all share its one core.  Let them have every worker's CPUs. */
    cpu_set_t old, wide;
    const bool widen = dec->plan.mode == DF_THREADING_FRAME &&
                       df_sched_current_worker(dec->sched) >= 0 &&
                       df_sched_worker_cpus(dec->sched, &wide) == 0 &&
                       pthread_getaffinity_np(pthread_self(), sizeof(old), &old) == 0 &&
                       pthread_setaffinity_np(pthread_self(), sizeof(wide), &wide) == 0;
    ret = avcodec_open2(avctx, dec->codec, NULL);
    if (widen)
        pthread_setaffinity_np(pthread_self(), sizeof(old), &old);
    if (ret < 0)
        goto fail;
    dec->avctx = avctx;
    size_t len = strlen(dec->plan.reason);
    if (dec->plan.mode == DF_THREADING_SLICE) {
        if (avctx->active_thread_type & FF_THREAD_SLICE) {
            df_hooks_install(dec);
        } else {
            dec->plan.mode = DF_THREADING_NONE;
            snprintf(dec->plan.reason + len, sizeof(dec->plan.reason) - len,
                     "; libavcodec did not enable slice threading: single-threaded decode");
        }
    } else if (dec->plan.mode == DF_THREADING_FRAME &&
               !(avctx->active_thread_type & FF_THREAD_FRAME)) {
        dec->plan.mode = DF_THREADING_NONE;
        snprintf(dec->plan.reason + len, sizeof(dec->plan.reason) - len,
                 "; libavcodec did not enable frame threading: single-threaded decode");
    }
    dec->pics.cur = -1;
    atomic_store_explicit(&dec->opened, true, memory_order_release);
    df_log(dec, AV_LOG_VERBOSE, "%s: threading %s: %s\n", dec->codec->name,
           df_threading_name(dec->plan.mode), dec->plan.reason);
    return 0;
fail:
    avcodec_free_context(&avctx);
    av_strerror(ret, e, sizeof(e));
    return df_err(err, ret, "cannot open %s decoder: %s", dec->codec->name, e);
}

/* Open the codec once without threads, so that bad parameters fail at
 * creation even when `auto` defers the real open to the first picture. */
static int check_codec(DfDecoder *dec, DfError *err)
{
    char e[AV_ERROR_MAX_STRING_SIZE];
    AVCodecContext *avctx = avcodec_alloc_context3(dec->codec);
    if (!avctx)
        return df_err(err, AVERROR(ENOMEM), "out of memory");
    int ret = avcodec_parameters_to_context(avctx, dec->par);
    if (ret >= 0) {
        avctx->thread_count = 1;
        ret = avcodec_open2(avctx, dec->codec, NULL);
    }
    avcodec_free_context(&avctx);
    if (ret < 0) {
        av_strerror(ret, e, sizeof(e));
        return df_err(err, ret, "cannot open %s decoder: %s", dec->codec->name, e);
    }
    return 0;
}

/* ------------------------------------------------------------ creation */

static int auto_bands(const DfDecoder *dec)
{
    const int rows = dec->par->height > 0 ? dec->par->height : 1080;
    int n;
    if (dec->cfg.band_rows > 0)
        n = (rows + dec->cfg.band_rows - 1) / dec->cfg.band_rows;
    else
        n = 2 * dec->n_workers;
    if (n > rows / 16)
        n = rows / 16;
    if (n > DF_MAX_BANDS)
        n = DF_MAX_BANDS;
    return n < 1 ? 1 : n;
}

int df_decoder_new(DfSched *sched, const AVCodecParameters *par, AVRational time_base,
                   const DfDecoderConfig *cfg, DfDecoder **out, DfError *err)
{
    if (!out)
        return df_err(err, AVERROR(EINVAL), "no output pointer");
    *out = NULL;
    if (!sched || !par)
        return df_err(err, AVERROR(EINVAL), "no scheduler or codec parameters");
    if (par->codec_type != AVMEDIA_TYPE_VIDEO) {
        const char *type = av_get_media_type_string(par->codec_type);
        return df_err(err, AVERROR(EINVAL), "not a video stream (%s)", type ? type : "unknown");
    }
    const AVCodec *codec = avcodec_find_decoder(par->codec_id);
    if (!codec)
        return df_err(err, AVERROR_DECODER_NOT_FOUND, "no decoder for codec %s",
                      avcodec_get_name(par->codec_id));
    DfDecoderConfig defaults;
    if (!cfg) {
        df_decoder_config_init(&defaults);
        cfg = &defaults;
    }
    if (cfg->threading < DF_THREADING_AUTO || cfg->threading > DF_THREADING_NONE)
        return df_err(err, AVERROR(EINVAL), "invalid threading mode %d", (int)cfg->threading);
    if (cfg->out_format != AV_PIX_FMT_NONE && !sws_isSupportedOutput(cfg->out_format)) {
        const char *name = av_get_pix_fmt_name(cfg->out_format);
        return df_err(err, AVERROR(EINVAL), "unsupported output format %s", name ? name : "?");
    }
    if (cfg->max_in_flight < 0 || cfg->thread_count < 0 || cfg->frame_threads < 0 ||
        cfg->band_rows < 0 || cfg->max_delay_frames < -1)
        return df_err(err, AVERROR(EINVAL), "negative count in decoder configuration");

    DfDecoder *dec = calloc(1, sizeof(*dec));
    if (!dec)
        return df_err(err, AVERROR(ENOMEM), "out of memory");
    int ret = AVERROR(ENOMEM);
    dec->sched = df_sched_ref(sched);
    dec->n_workers = df_sched_n_workers(sched);
    dec->cfg = *cfg;
    if (dec->cfg.max_in_flight == 0)
        dec->cfg.max_in_flight = 2;
    /* Until the mode is known (fit_delay_budget), the bound holds for the
     * packets in flight alone, so that the first latency reported is not
     * more than the caller accepts. */
    if (dec->cfg.max_delay_frames >= 0 && dec->cfg.max_in_flight > dec->cfg.max_delay_frames + 1)
        dec->cfg.max_in_flight = dec->cfg.max_delay_frames + 1;
    dec->cfg.filter = NULL;
    dec->codec = codec;
    dec->tb = time_base.num > 0 && time_base.den > 0 ? time_base : AV_TIME_BASE_Q;
    atomic_init(&dec->opened, false);
    atomic_init(&dec->out_format, -1);
    atomic_init(&dec->out_width, -1);
    atomic_init(&dec->out_height, -1);
    df_latency_init(&dec->lat);
    dec->pics.cur = -1;
    if (cfg->filter && *cfg->filter && !(dec->filter_desc = strdup(cfg->filter)))
        goto nomem;
    if (!(dec->par = avcodec_parameters_alloc()) || avcodec_parameters_copy(dec->par, par) < 0)
        goto nomem;
    if (!(dec->worker_bytes = calloc((size_t)dec->n_workers, sizeof(uint64_t))) ||
        !(dec->ref_bytes = calloc((size_t)dec->n_workers, sizeof(uint64_t))))
        goto nomem;
    if ((ret = df_pool_new(sched, 6, &dec->pool)) < 0)
        goto nomem;
    dec->need_bands = dec->cfg.alloc.get_output || dec->cfg.out_format != AV_PIX_FMT_NONE;
    dec->graph.n_bands = dec->need_bands ? auto_bands(dec) : 1;
    if ((ret = df_graph_setup(dec, &dec->graph, err)) < 0)
        goto fail;
    if (dec->filter_desc) {
        const bool known = par->width > 0 && par->height > 0 && par->format >= 0;
        /* Filter jobs cut the frame like the R bands. */
        int jobs = dec->cfg.band_rows > 0 ? auto_bands(dec)
                                          : (2 * dec->n_workers < 2 ? 2 : 2 * dec->n_workers);
        ret = df_filter_new(dec, dec->filter_desc, known ? par->width : 64,
                            known ? par->height : 64, known ? par->format : AV_PIX_FMT_YUV420P,
                            par->sample_aspect_ratio, dec->tb, jobs, &dec->filter, err);
        if (ret < 0)
            goto fail;
    }
    if (dec->cfg.threading == DF_THREADING_AUTO && !df_threading_probe_init(&dec->probe, par)) {
        ret = check_codec(dec, err);
    } else {
        dec->decided = true;
        fit_delay_budget(dec);
        ret = open_codec(dec, err);
    }
    if (ret < 0)
        goto fail;
    *out = dec;
    return 0;
nomem:
    df_err(err, AVERROR(ENOMEM), "out of memory");
fail:
    df_decoder_free(&dec);
    return ret;
}

/* ------------------------------------------------------------ slots */

static void slot_free(DfDecoder *dec, DfSlot *s)
{
    df_group_release(s->group);
    if (s->inst == dec->last_inst)
        s->inst = NULL; /* kept as the next instance's predecessor */
    df_instance_release(s->inst);
    av_packet_free(&s->pkt);
    df_frame_list_clear(&s->decoded);
    df_frame_list_clear(&s->out);
    free(s);
}

/* The presentation time of the frame that the decode of a packet of
 * presentation time `pts` (INT64_MIN: none; or the drain) makes the codec
 * output.  A decoder with a reorder delay of d frames outputs nothing for
 * the first d packets, then at each packet the earliest frame it holds:
 * with pyramid B-frames (decode order I0 P4 B2 B1 B3 P8 ...) packet k
 * yields frame k - d, while its own picture is due up to d + 1 frames
 * later.  So a slot's deadline is that of its output, and a slot with no
 * output yet gets the earliest frame pending, which waits for it (its D
 * is on the chain to it); deadlines never decrease in decode order.  The
 * delay is the larger of the container's and the codec's (it may grow
 * while decoding): an under-estimate only makes deadlines earlier. */
static int64_t output_pts(DfDecoder *dec, int64_t pts)
{
    if (pts != INT64_MIN) {
        if (dec->n_reorder == DF_REORDER_MAX)
            dec->n_reorder--; /* beyond any codec's delay (16): the newest goes */
        dec->reorder_pts[dec->n_reorder++] = pts;
    }
    if (dec->n_reorder == 0)
        return INT64_MIN;
    int first = 0;
    for (int i = 1; i < dec->n_reorder; i++)
        if (dec->reorder_pts[i] < dec->reorder_pts[first])
            first = i;
    const int64_t out = dec->reorder_pts[first];
    int delay = dec->par->video_delay;
    const int codec = atomic_load_explicit(&dec->has_b_frames, memory_order_relaxed);
    if (codec > delay)
        delay = codec;
    if (pts == INT64_MIN || dec->n_reorder > delay) {
        /* That frame is counted out (the drain outputs every one). */
        dec->reorder_pts[first] = dec->reorder_pts[--dec->n_reorder];
    }
    return out;
}

static int enqueue(DfDecoder *dec, const AVPacket *pkt)
{
    DfSlot *s = calloc(1, sizeof(*s));
    if (!s)
        return AVERROR(ENOMEM);
    s->dec = dec;
    s->seq = dec->seq++;
    atomic_init(&s->out_pts_ns, INT64_MIN);
    atomic_init(&s->discard, false);
    atomic_init(&s->dropped, false);
    s->pkt_pts_ns = INT64_MIN;
    s->deadline = DF_NO_DEADLINE;
    if (pkt) {
        s->pkt = av_packet_clone(pkt);
        if (!s->pkt) {
            free(s);
            return AVERROR(ENOMEM);
        }
        s->pkt_pts_ns = df_ts_to_ns(dec, pkt->pts != AV_NOPTS_VALUE ? pkt->pts : pkt->dts);
    }
    s->t_send = df_now_ns();
    if (dec->cfg.clock_ns) {
        const int64_t due = output_pts(dec, s->pkt_pts_ns);
        if (due != INT64_MIN) {
            /* INT64_MIN: the caller's clock does not run now (no deadline). */
            int64_t now = dec->cfg.clock_ns(dec->cfg.clock_opaque);
            if (now != INT64_MIN)
                s->deadline = s->t_send + (due + dec->cfg.deadline_offset_ns - now);
        }
    }
    s->group = df_group_new(dec->sched, s->deadline);
    if (!s->group) {
        av_packet_free(&s->pkt);
        free(s);
        return AVERROR(ENOMEM);
    }
    df_group_set_tag(s->group, (int64_t)s->seq);
    int ret = df_graph_new_instance(dec, s, dec->last_inst);
    if (ret < 0) {
        df_group_release(s->group);
        av_packet_free(&s->pkt);
        free(s);
        return ret;
    }
    /* Every node from outside the frame's own tasks is in: from now on the
     * group is done when they are (df_group_done() polls it). */
    df_group_seal(s->group);
    /* The previous instance is no longer needed as a predecessor; it stays
     * alive with its slot if that is still queued. */
    DfInstance *old = dec->last_inst;
    bool old_queued = false;
    for (DfSlot *q = dec->head; q; q = q->next)
        if (q->inst == old)
            old_queued = true;
    if (old && !old_queued)
        df_instance_release(old);
    dec->last_inst = s->inst;
    if (dec->tail)
        dec->tail->next = s;
    else
        dec->head = s;
    dec->tail = s;
    dec->n_slots++;
    return 0;
}

static void pop_head(DfDecoder *dec)
{
    DfSlot *s = dec->head;
    dec->head = s->next;
    if (!dec->head)
        dec->tail = NULL;
    dec->n_slots--;
    slot_free(dec, s);
}

static void move_errors(DfDecoder *dec, DfSlot *s)
{
    for (int i = 0; i < s->n_errors; i++) {
        if (dec->err_n == DF_ERROR_RING) {
            /* The oldest goes; every error is still in decode_errors. */
            dec->err_head = (dec->err_head + 1) % DF_ERROR_RING;
            dec->err_n--;
        }
        dec->errors[(dec->err_head + dec->err_n) % DF_ERROR_RING] = s->errors[i];
        dec->err_n++;
    }
    s->n_errors = s->lost_errors = 0;
}

static int take(DfDecoder *dec, AVFrame *frame, bool wait)
{
    av_frame_unref(frame);
    for (;;) {
        DfSlot *s = dec->head;
        if (!s)
            return dec->eof ? AVERROR_EOF : AVERROR(EAGAIN);
        if (!df_group_done(s->group)) {
            if (!wait)
                return AVERROR(EAGAIN);
            df_sched_wait(dec->sched, s->group);
            continue;
        }
        move_errors(dec, s);
        const bool dropped = atomic_load_explicit(&s->dropped, memory_order_relaxed);
        while (s->taken < s->out.n) {
            DfFrameItem *it = &s->out.v[s->taken++];
            if (!it->frame || it->error)
                continue;
            if (dropped) {
                DF_MEDIA_CTR_ADD(dec, frames_dropped, 1);
                continue;
            }
            av_frame_move_ref(frame, it->frame);
            av_frame_free(&it->frame);
            DF_MEDIA_CTR_ADD(dec, frames_out, 1);
            return 0;
        }
        if (s->eof)
            dec->eof = true;
        pop_head(dec);
    }
}

/* --------------------------------------------------------------- API */

/* The stream's structure is known: the held packets go into slots; the
 * first D task opens the codec with the plan. */
static int decide(DfDecoder *dec, bool drain)
{
    int ret = 0;
    dec->decided = true;
    fit_delay_budget(dec);
    for (int i = 0; i < dec->n_probe; i++) {
        if (ret >= 0)
            ret = enqueue(dec, dec->probe_pkts[i]);
        av_packet_free(&dec->probe_pkts[i]);
    }
    dec->n_probe = 0;
    if (ret >= 0 && drain) {
        ret = enqueue(dec, NULL);
        if (ret >= 0)
            dec->draining = true;
    }
    return ret;
}

int df_decoder_send_packet(DfDecoder *dec, const AVPacket *pkt)
{
    if (!dec)
        return AVERROR(EINVAL);
    if (dec->draining)
        return AVERROR_EOF;
    const bool drain = !pkt || (!pkt->data && pkt->size == 0);
    /* Slots whose work is done and that hold no frame free their place. */
    while (dec->head && df_group_done(dec->head->group)) {
        DfSlot *s = dec->head;
        bool frames = false;
        if (!atomic_load_explicit(&s->dropped, memory_order_relaxed))
            for (int i = s->taken; i < s->out.n; i++)
                frames |= s->out.v[i].frame && !s->out.v[i].error;
        if (frames || s->eof)
            break;
        move_errors(dec, s);
        pop_head(dec);
    }
    if (!drain && dec->n_slots >= dec->cfg.max_in_flight)
        return AVERROR(EAGAIN);
    if (!drain)
        DF_MEDIA_CTR_ADD(dec, packets, 1);
    if (!dec->decided) {
        if (!drain) {
            if (dec->n_probe == dec->cap_probe) {
                int cap = dec->cap_probe ? dec->cap_probe * 2 : 4;
                AVPacket **v = realloc(dec->probe_pkts, sizeof(*v) * (size_t)cap);
                if (!v)
                    return AVERROR(ENOMEM);
                dec->probe_pkts = v;
                dec->cap_probe = cap;
            }
            if (!(dec->probe_pkts[dec->n_probe] = av_packet_clone(pkt)))
                return AVERROR(ENOMEM);
            dec->n_probe++;
            if (!df_threading_probe_packet(&dec->probe, dec->par, pkt) &&
                dec->n_probe < MAX_PROBE_PACKETS)
                return 0;
        }
        return decide(dec, drain);
    }
    int ret = enqueue(dec, drain ? NULL : pkt);
    if (ret >= 0 && drain)
        dec->draining = true;
    return ret;
}

int df_decoder_receive_frame(DfDecoder *dec, AVFrame *frame)
{
    if (!dec || !frame)
        return AVERROR(EINVAL);
    return take(dec, frame, true);
}

int df_decoder_try_receive_frame(DfDecoder *dec, AVFrame *frame)
{
    if (!dec || !frame)
        return AVERROR(EINVAL);
    return take(dec, frame, false);
}

static void cancel_all(DfDecoder *dec)
{
    for (DfSlot *s = dec->head; s; s = s->next) {
        atomic_store_explicit(&s->discard, true, memory_order_release);
        df_group_cancel(s->group);
    }
    for (DfSlot *s = dec->head; s; s = s->next)
        df_sched_wait(dec->sched, s->group);
    while (dec->head)
        pop_head(dec);
    for (int i = 0; i < dec->n_probe; i++)
        av_packet_free(&dec->probe_pkts[i]);
    dec->n_probe = 0;
}

void df_decoder_flush(DfDecoder *dec)
{
    if (!dec)
        return;
    cancel_all(dec);
    /* Every task of this decoder has finished: the codec is ours. */
    if (dec->avctx)
        avcodec_flush_buffers(dec->avctx);
    memset(&dec->pics, 0, sizeof(dec->pics));
    dec->pics.cur = -1;
    dec->n_reorder = 0;
    if (dec->filter)
        df_filter_reset(dec->filter);
    dec->draining = dec->eof = false;
}

void df_decoder_free(DfDecoder **pdec)
{
    DfDecoder *dec = pdec ? *pdec : NULL;
    if (!dec)
        return;
    cancel_all(dec);
    df_instance_release(dec->last_inst);
    dec->last_inst = NULL;
    free(dec->probe_pkts);
    avcodec_free_context(&dec->avctx);
    df_filter_free(&dec->filter);
    df_output_free(dec);
    df_graph_teardown(&dec->graph);
    df_pool_unref(dec->pool);
    avcodec_parameters_free(&dec->par);
    free(dec->worker_bytes);
    free(dec->ref_bytes);
    free(dec->filter_desc);
    df_latency_fini(&dec->lat);
    df_sched_unref(dec->sched);
    free(dec);
    *pdec = NULL;
}

const char *df_decoder_threading(const DfDecoder *dec, const char **reason)
{
    if (!atomic_load_explicit(&((DfDecoder *)dec)->opened, memory_order_acquire)) {
        if (reason)
            *reason = "auto: deciding at the first picture";
        return "auto";
    }
    if (reason)
        *reason = dec->plan.reason;
    return df_threading_name(dec->plan.mode);
}

int df_decoder_output_format(const DfDecoder *dec, int *width, int *height)
{
    DfDecoder *d = (DfDecoder *)dec;
    int f = atomic_load_explicit(&d->out_format, memory_order_relaxed);
    if (width)
        *width = atomic_load_explicit(&d->out_width, memory_order_relaxed);
    if (height)
        *height = atomic_load_explicit(&d->out_height, memory_order_relaxed);
    return f;
}

int df_decoder_latency_frames(const DfDecoder *dec)
{
    DfDecoder *d = (DfDecoder *)dec;
    int n = atomic_load_explicit(&d->has_b_frames, memory_order_relaxed);
    n += dec->cfg.max_in_flight - 1;
    if (atomic_load_explicit(&d->opened, memory_order_acquire) &&
        dec->plan.mode == DF_THREADING_FRAME)
        n += dec->plan.thread_count - 1;
    return n;
}

int df_decoder_drop_late(DfDecoder *dec, int64_t ns)
{
    if (!dec)
        return AVERROR(EINVAL);
    int n = 0;
    for (DfSlot *s = dec->head; s; s = s->next) {
        if (atomic_load_explicit(&s->dropped, memory_order_relaxed))
            continue;
        int64_t pts = atomic_load_explicit(&s->out_pts_ns, memory_order_relaxed);
        if (pts == INT64_MIN)
            pts = s->pkt_pts_ns;
        if (pts == INT64_MIN || pts + dec->cfg.deadline_offset_ns >= ns)
            continue;
        atomic_store_explicit(&s->dropped, true, memory_order_relaxed);
        df_group_cancel(s->group);
        n++;
    }
    return n;
}

int df_decoder_next_error(DfDecoder *dec, DfDecodeError *out)
{
    if (!dec || !out)
        return AVERROR(EINVAL);
    if (dec->err_n == 0)
        return AVERROR(EAGAIN);
    *out = dec->errors[dec->err_head];
    dec->err_head = (dec->err_head + 1) % DF_ERROR_RING;
    dec->err_n--;
    return 0;
}
