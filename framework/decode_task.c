/* D(k): the decode call into libavcodec, on a worker, as a chain
 * D(k-1) -> D(k) (media_internal.h); and opening the codec, which `auto`
 * threading does in the first D task once the stream was probed. */
#include "media_internal.h"

#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

/* Whether `pkt` may give no picture on purpose because the stream was
 * joined (the start or a seek) where its references are missing: a packet
 * before the first key packet (a demuxer that resumes mid-GOP, a live
 * stream tuned into), or an open GOP's leading picture after the entry
 * key packet, whose reference lies before it (MPEG-2: "Skipping B slice
 * due to open GOP"), as every decoder joining such a stream must skip.
 * Only until the entry: a picture lost after it, even one shown before it
 * (timestamps that restart without a flush), is reported.  Keeps the
 * entry state (D chain); `pictured`: the packet gave a picture, so the
 * stream is entered even without key flags (intra refresh). */
static bool joining_picture(DfDecoder *dec, const AVPacket *pkt, bool pictured)
{
    if (pkt->flags & AV_PKT_FLAG_KEY) {
        dec->entry_pts = dec->entered ? AV_NOPTS_VALUE : pkt->pts;
        dec->entered = true;
        return false;
    }
    if (!dec->entered) {
        /* A picture without a key flag (intra refresh) is the entry. */
        dec->entered = pictured;
        if (pictured)
            dec->entry_pts = pkt->pts;
        return true;
    }
    return pkt->pts != AV_NOPTS_VALUE && dec->entry_pts != AV_NOPTS_VALUE &&
           pkt->pts < dec->entry_pts;
}

static void decode(DfDecoder *dec, DfMediaSlot *s, bool skip_nonref)
{
    DfFrameList *dst = dec->filter ? &s->decoded : &s->out;
    char e[AV_ERROR_MAX_STRING_SIZE];
    if (!dec->avctx) {
        /* `auto` probed the stream in send_packet; opening is libavcodec
         * work, so it happens here, on the D chain, not on the caller. */
        DfError err = {0};
        if (df_open_codec(dec, &err) < 0) {
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
    /* A codec whose packets each hold a picture (DfCodecOps) lost one when
     * a packet allocated none: libavcodec may drop it without a word. */
    const bool joining = s->pkt && joining_picture(dec, s->pkt, pictures != dec->pics.allocated);
    if (sent >= 0 && s->pkt && s->pkt->size > 0 && !skip_nonref && !joining &&
        dec->plan.mode != DF_THREADING_FRAME && pictures == dec->pics.allocated &&
        dec->codec_ops->packet_is_picture)
        df_slot_error(s, s->pkt->pts, AVERROR_INVALIDDATA,
                      "packet pts %" PRId64 ": no picture decoded (corrupt or truncated)",
                      s->pkt->pts);
    /* Skipped: the packet allocated no picture (each packet of a sent
     * stream is an access unit; frame threads allocate elsewhere). */
    if (skip_nonref && s->pkt && s->pkt->size > 0 && pictures == dec->pics.allocated &&
        dec->plan.mode != DF_THREADING_FRAME)
        DF_MEDIA_CTR_ADD(dec, frames_skipped, 1);
    if (skip_nonref)
        avctx->skip_frame = AVDISCARD_DEFAULT;
    /* The load's rate, from the bitstream when the caller gave none. */
    if (!dec->fps_from_codec && !(dec->cfg.frame_rate.num > 0 && dec->cfg.frame_rate.den > 0) &&
        avctx->framerate.num > 0 && avctx->framerate.den > 0) {
        df_load_set_fps(dec->load, av_q2d(avctx->framerate));
        dec->fps_from_codec = true;
    }
    if (!s->pkt)
        s->eof = 1; /* the drain ended, normally or with an error */
    atomic_store_explicit(&dec->has_b_frames, avctx->has_b_frames, memory_order_relaxed);
    dec->cur_slot = NULL;
}

void df_decode_task(DfTask *t, void *arg)
{
    DfMediaSlot *s = arg;
    DfDecoder *dec = s->dec;
    decode(dec, s, s->skip_nonref);
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
    DfMediaSlot *s = arg;
    DfDecoder *dec = s->dec;
    if (!atomic_load_explicit(&s->discard, memory_order_acquire))
        decode(dec, s, true);
    if (!dec->filter)
        df_graph_submit_bands(dec, s, false);
}

/* ---------------------------------------------------------- codec open */

/* Give the calling thread every worker's CPUs (sets of any size: CPU_ALLOC,
 * no 1024-CPU limit).  Returns its previous affinity to restore (CPU_FREE
 * it), or NULL when it was left as it was. */
static cpu_set_t *widen_to_workers(DfSched *s, size_t *old_size)
{
    const long conf = sysconf(_SC_NPROCESSORS_CONF);
    int n = df_sched_worker_cpus_end(s);
    if (n <= 0)
        return NULL;
    n = conf > n ? (int)conf : n;
    const size_t size = CPU_ALLOC_SIZE(n);
    cpu_set_t *old = CPU_ALLOC(n), *wide = CPU_ALLOC(n);
    const bool ok = old && wide && pthread_getaffinity_np(pthread_self(), size, old) == 0 &&
                    df_sched_worker_cpus_s(s, size, wide) == 0 &&
                    pthread_setaffinity_np(pthread_self(), size, wide) == 0;
    if (wide)
        CPU_FREE(wide);
    if (!ok) {
        if (old)
            CPU_FREE(old);
        return NULL;
    }
    *old_size = size;
    return old;
}

int df_open_codec(DfDecoder *dec, DfError *err)
{
    char e[AV_ERROR_MAX_STRING_SIZE];
    df_threading_plan(&dec->cfg, dec->par, dec->codec, dec->codec_ops, &dec->probe, &dec->plan_env,
                      &dec->plan);
    AVCodecContext *avctx = avcodec_alloc_context3(dec->codec);
    if (!avctx)
        return df_err(err, AVERROR(ENOMEM), "out of memory");
    int ret = avcodec_parameters_to_context(avctx, dec->par);
    if (ret < 0)
        goto fail;
    avctx->pkt_timebase = dec->tb;
    avctx->opaque = dec;
    avctx->get_buffer2 = df_pool_get_buffer2;
    /* Slice mode sets the plan's thread_count after the open when the codec
     * reads it only then (codec.h, thread_count_after_open): libavcodec
     * sizes its idle slice-thread pool from the count given here. */
    const bool count_after_open = dec->plan.mode == DF_THREADING_SLICE &&
                                  dec->codec_ops->thread_count_after_open &&
                                  dec->plan.thread_count > 2;
    avctx->thread_count = count_after_open ? 2 : dec->plan.thread_count;
    /* The exact crop window the stream signals (H.264 frame_cropping, HEVC
     * conformance_window): without this flag libavcodec rounds a left crop
     * down to keep the data pointers aligned (a 300-wide window of a
     * 326-wide picture comes out 326 wide).  Nothing downstream needs the
     * alignment: band copies and swscale take any pointer. */
    avctx->flags |= AV_CODEC_FLAG_UNALIGNED;
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
    size_t old_size = 0;
    cpu_set_t *old =
        dec->plan.mode == DF_THREADING_FRAME && df_sched_current_worker(dec->sched) >= 0
            ? widen_to_workers(dec->sched, &old_size)
            : NULL;
    ret = avcodec_open2(avctx, dec->codec, NULL);
    if (old) {
        pthread_setaffinity_np(pthread_self(), old_size, old);
        CPU_FREE(old);
    }
    if (ret < 0)
        goto fail;
    dec->avctx = avctx;
    size_t len = strlen(dec->plan.reason);
    if (dec->plan.mode == DF_THREADING_SLICE) {
        if (avctx->active_thread_type & FF_THREAD_SLICE) {
            avctx->thread_count = dec->plan.thread_count;
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
int df_check_codec(DfDecoder *dec, DfError *err)
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
