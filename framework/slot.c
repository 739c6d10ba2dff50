/* The slot queue: one slot per packet sent, in decode order, each with
 * its instance of the per-frame graph and the frames it produces.  The
 * caller thread owns the queue (media_internal.h); the tasks fill a slot's
 * frame lists and errors, read by the caller once the slot's group is done.
 * O(k) runs in order, so frames are taken from the oldest slot. */
#include "media_internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

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

void df_slot_error(DfMediaSlot *s, int64_t pts, int code, const char *fmt, ...)
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

/* ------------------------------------------------------------ queue */

static void slot_free(DfDecoder *dec, DfMediaSlot *s)
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

/* How much later a stream on probation is due than the one before it.
 * Under overload the later streams fall behind first, by a step each,
 * and admission refuses them as they do (dfdec); at a common start under
 * capacity the ranks still interleave, so the last stream's first
 * frames do not wait behind the others' read-ahead.  Ranks in strict
 * order (steps longer than any read-ahead) carried one stream fewer
 * than no probation in `dfbench realtime`'s search at 2 workers (12
 * against 13, 1080p30 H.264); 40 ms (a frame at 25 fps) carried 13-14
 * with no admitted stream late at 1.3 K* (2026-12-06). */
#define PROBATION_STEP_NS  40000000LL
#define PROBATION_RANK_MAX 100000

int df_slot_enqueue(DfDecoder *dec, const AVPacket *pkt)
{
    DfMediaSlot *s = calloc(1, sizeof(*s));
    if (!s)
        return AVERROR(ENOMEM);
    s->dec = dec;
    s->seq = dec->seq++;
    atomic_init(&s->out_pts_ns, INT64_MIN);
    atomic_init(&s->discard, false);
    atomic_init(&s->dropped, false);
    s->pkt_pts_ns = INT64_MIN;
    s->deadline = DF_NO_DEADLINE;
    s->skip_nonref = dec->skip_nonref && pkt;
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
    /* On probation the frame is background work: it runs on capacity
     * nothing else wants, due a step later per stream on probation before
     * it (df_decoder_set_probation). */
    const unsigned rank = atomic_load_explicit(&dec->probation_rank, memory_order_relaxed);
    if (rank) {
        const int64_t due = s->deadline != DF_NO_DEADLINE ? s->deadline : s->t_send;
        const int64_t r = rank < PROBATION_RANK_MAX ? (int64_t)rank : PROBATION_RANK_MAX;
        s->deadline = df_deadline_background(due + r * PROBATION_STEP_NS, s->t_send);
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
    for (DfMediaSlot *q = dec->head; q; q = q->next)
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
    DfMediaSlot *s = dec->head;
    dec->head = s->next;
    if (!dec->head)
        dec->tail = NULL;
    dec->n_slots--;
    /* Its tasks are done (the group, acquire): the packet's work is in
     * the account; a flushed packet did none. */
    if (s->pkt && !atomic_load_explicit(&s->discard, memory_order_relaxed))
        df_load_frame_done(dec->load);
    slot_free(dec, s);
}

static void move_errors(DfDecoder *dec, DfMediaSlot *s)
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

int df_slot_take(DfDecoder *dec, AVFrame *frame, int keep, int64_t until_ns)
{
    av_frame_unref(frame);
    for (;;) {
        DfMediaSlot *s = dec->head;
        if (!s)
            return dec->eof ? AVERROR_EOF : AVERROR(EAGAIN);
        if (!df_group_done(s->group)) {
            if (dec->n_slots <= keep)
                return AVERROR(EAGAIN);
            if (!df_sched_wait_until(dec->sched, s->group, until_ns))
                return AVERROR(EAGAIN);
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

void df_slot_reclaim(DfDecoder *dec)
{
    while (dec->head && df_group_done(dec->head->group)) {
        DfMediaSlot *s = dec->head;
        bool frames = false;
        if (!atomic_load_explicit(&s->dropped, memory_order_relaxed))
            for (int i = s->taken; i < s->out.n; i++)
                frames |= s->out.v[i].frame && !s->out.v[i].error;
        if (frames || s->eof)
            break;
        move_errors(dec, s);
        pop_head(dec);
    }
}

void df_slot_cancel_all(DfDecoder *dec)
{
    for (DfMediaSlot *s = dec->head; s; s = s->next) {
        atomic_store_explicit(&s->discard, true, memory_order_release);
        df_group_cancel(s->group);
    }
    for (DfMediaSlot *s = dec->head; s; s = s->next)
        df_sched_wait(dec->sched, s->group);
    while (dec->head)
        pop_head(dec);
}
