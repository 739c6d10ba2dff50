/* The decoder: libavcodec's send/receive API on top of per-packet graphs.
 *
 * send_packet only enqueues: it instantiates the module table for the
 * packet (a "slot") and returns; D(k) calls into libavcodec on a worker.
 * So the caller — later GStreamer's streaming thread, holding its stream
 * lock — never runs libavcodec and never waits while sending.  The slots
 * are the output queue too: O(k) runs in order, and receive_frame takes
 * frames from the oldest slot once its group is done, waiting (or, on a
 * worker, helping) until then.  Here: configuration, creation, the probe
 * that `auto` threading holds packets for, and the API; the queue is
 * slot.c, the decode task decode_task.c, messages log.c. */
#include "media_internal.h"

#include <limits.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
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

/* ------------------------------------------------------------ creation */

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
    df_threading_plan(cfg, dec->par, dec->codec, dec->codec_ops, &dec->probe, &dec->plan_env, &pl);
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

/* The threading is decided now: the streams the scheduler carries are
 * counted once, so that the budget's plan and the codec's open agree. */
static void decided(DfDecoder *dec)
{
    DfSchedLoad ld;
    df_sched_load(dec->sched, &ld);
    dec->plan_env.n_streams = ld.n_admitted + ld.n_pending;
    dec->decided = true;
    fit_delay_budget(dec);
}

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
    dec->plan_env.n_workers = dec->n_workers;
    dec->plan_env.n_cores = (int)df_sched_capacity(sched);
    dec->plan_env.split_jobs = df_sched_splits_jobs(sched);
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
    dec->codec_ops = df_codec_find(par->codec_id);
    dec->tb = time_base.num > 0 && time_base.den > 0 ? time_base : AV_TIME_BASE_Q;
    atomic_init(&dec->opened, false);
    atomic_init(&dec->out_format, -1);
    atomic_init(&dec->out_width, -1);
    atomic_init(&dec->out_height, -1);
    df_latency_init(&dec->lat);
    dec->pics.cur = -1;
    dec->entry_pts = AV_NOPTS_VALUE;
    const bool rate = cfg->frame_rate.num > 0 && cfg->frame_rate.den > 0;
    atomic_init(&dec->probation_rank, 0);
    if (!(dec->load = df_load_new(sched, rate ? av_q2d(cfg->frame_rate) : 0.0)))
        goto nomem;
    df_load_set_class(dec->load, df_load_class_of(par, cfg->threading));
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
        /* The stream's size when the caller knows it (a crop must fit),
         * its format when known; the graph is built again at the first
         * picture's. */
        const bool known = par->width > 0 && par->height > 0;
        /* Filter jobs cut the frame like the R bands. */
        int jobs = dec->cfg.band_rows > 0 ? auto_bands(dec)
                                          : (2 * dec->n_workers < 2 ? 2 : 2 * dec->n_workers);
        ret =
            df_filter_new(dec, dec->filter_desc, known ? par->width : 64, known ? par->height : 64,
                          par->format >= 0 ? par->format : AV_PIX_FMT_YUV420P,
                          par->sample_aspect_ratio, dec->tb, jobs, &dec->filter, err);
        if (ret < 0)
            goto fail;
    }
    /* Fixed here: a rebuild for a new picture size keeps the graph and
     * the input rate. */
    dec->out_rate = !rate         ? (AVRational){0, 1}
                    : dec->filter ? df_filter_frame_rate(dec->filter)
                                  : cfg->frame_rate;
    /* An explicit slice mode probes too when it leaves the count to us: the
     * codec's thread_count may depend on the stream (H.264's slices). */
    const bool probe = (dec->cfg.threading == DF_THREADING_AUTO && dec->plan_env.split_jobs) ||
                       (dec->cfg.threading == DF_THREADING_SLICE && dec->cfg.thread_count <= 1 &&
                        dec->codec_ops->thread_count);
    if (probe && !df_codec_probe_init(dec->codec_ops, &dec->probe, par)) {
        ret = df_check_codec(dec, err);
    } else {
        decided(dec);
        ret = df_open_codec(dec, err);
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

/* --------------------------------------------------------------- API */

/* The stream's structure is known: the held packets go into slots; the
 * first D task opens the codec with the plan. */
static int decide(DfDecoder *dec, bool drain)
{
    int ret = 0;
    decided(dec);
    for (int i = 0; i < dec->n_probe; i++) {
        if (ret >= 0)
            ret = df_slot_enqueue(dec, dec->probe_pkts[i]);
        av_packet_free(&dec->probe_pkts[i]);
    }
    dec->n_probe = 0;
    if (ret >= 0 && drain) {
        ret = df_slot_enqueue(dec, NULL);
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
    df_slot_reclaim(dec);
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
            if (!df_codec_probe_packet(dec->codec_ops, &dec->probe, pkt) &&
                dec->n_probe < MAX_PROBE_PACKETS)
                return 0;
        }
        return decide(dec, drain);
    }
    int ret = df_slot_enqueue(dec, drain ? NULL : pkt);
    if (ret >= 0 && drain)
        dec->draining = true;
    return ret;
}

int df_decoder_receive_frame(DfDecoder *dec, AVFrame *frame)
{
    if (!dec || !frame)
        return AVERROR(EINVAL);
    return df_slot_take(dec, frame, 0, INT64_MAX);
}

int df_decoder_try_receive_frame(DfDecoder *dec, AVFrame *frame)
{
    if (!dec || !frame)
        return AVERROR(EINVAL);
    return df_slot_take(dec, frame, INT_MAX, INT64_MAX);
}

int df_decoder_receive_frame_in_time(DfDecoder *dec, AVFrame *frame)
{
    if (!dec || !frame)
        return AVERROR(EINVAL);
    /* max_in_flight - 1 packets are what df_decoder_latency_frames() counts
     * beyond the codec's own delay. */
    return df_slot_take(dec, frame, dec->cfg.max_in_flight - 1, INT64_MAX);
}

int df_decoder_receive_frame_until(DfDecoder *dec, AVFrame *frame, int64_t until_ns)
{
    if (!dec || !frame)
        return AVERROR(EINVAL);
    return df_slot_take(dec, frame, 0, until_ns);
}

static void cancel_all(DfDecoder *dec)
{
    df_slot_cancel_all(dec);
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
    dec->entry_pts = AV_NOPTS_VALUE;
    dec->entered = false;
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
    /* After cancel_all: no node that carries the account runs any more. */
    df_load_free(dec->load);
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

AVRational df_decoder_frame_rate(const DfDecoder *dec)
{
    return dec->out_rate;
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

int df_decoder_reorder_delay(const DfDecoder *dec)
{
    return atomic_load_explicit(&((DfDecoder *)dec)->has_b_frames, memory_order_relaxed);
}

int df_decoder_drop_late(DfDecoder *dec, int64_t ns)
{
    if (!dec)
        return AVERROR(EINVAL);
    int n = 0;
    for (DfMediaSlot *s = dec->head; s; s = s->next) {
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

void df_decoder_set_skip_nonref(DfDecoder *dec, bool skip)
{
    if (dec)
        dec->skip_nonref = skip;
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
