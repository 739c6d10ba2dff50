/* AVCodecContext.execute / execute2 overrides: every slice job libavcodec
 * hands out becomes a node S(k,i) on the scheduler (docs/design.md, "What
 * libavcodec allows"; per codec, docs/codecs.md).
 *
 * The hooks are called synchronously from the D(k) task inside
 * avcodec_send_packet; libavcodec reads ret[] and frees `arg` as soon as
 * they return, so they wait (helping) for the whole batch.  All per-call
 * state is on the stack: several decoders may share the scheduler and a
 * helping worker may enter another decoder's hook from inside this one.
 *
 *  - execute (H.264 slices, MPEG-2 row bands): independent jobs; libavcodec
 *    passes no threadnr, so no slots.
 *  - execute2 (HEVC WPP): row j blocks inside libavcodec until row j-1 is
 *    two CTUs ahead, so jobs start in increasing order (each once its
 *    predecessor started), threadnr = jobnr % thread_count picks the
 *    per-thread context, and job j waits for job j - thread_count to end.
 *
 * The worker of each job is remembered per picture buffer, so that the
 * bands that later read those rows can be placed where they are cached.
 * The jobs themselves read the reference pictures: job j declares the
 * co-located rows of the pictures decoded before it as its inputs, so that
 * cost-local runs it where the same band was decoded last and traces (and
 * dfsim) see the bytes that cross workers. */
#include "media_internal.h"

#include <stdlib.h>
#include <string.h>

#define STACK_WORKERS 256

typedef struct ExecCall {
    AVCodecContext *avctx;
    int (*func)(AVCodecContext *c2, void *arg2);
    int (*func2)(AVCodecContext *c2, void *arg2, int jobnr, int threadnr);
    char *arg;
    int *ret;
    int size;
} ExecCall;

static void run_job(void *ctx, int jobnr, int threadnr)
{
    ExecCall *e = ctx;
    int r = e->func(e->avctx, e->arg + (size_t)jobnr * (size_t)e->size);
    if (e->ret)
        e->ret[jobnr] = r;
}

static void run_job2(void *ctx, int jobnr, int threadnr)
{
    ExecCall *e = ctx;
    int r = e->func2(e->avctx, e->arg, jobnr, threadnr);
    if (e->ret)
        e->ret[jobnr] = r;
}

/* Whether libavcodec rewrites every row in D after the jobs (the codec's
 * deblocks_in_d op: H.264's postponed deblocking). */
static bool deblocks_in_d(const DfDecoder *dec)
{
    return dec->codec_ops->deblocks_in_d && dec->codec_ops->deblocks_in_d(dec->avctx);
}

static void record(DfDecoder *dec, const int *workers, const uint64_t *ids, int count)
{
    const int nw = dec->n_workers;
    for (int i = 0; i < count; i++)
        if (workers[i] >= 0 && workers[i] < 64 && workers[i] < nw)
            DF_MEDIA_CTR_ADD(dec, jobs_per_worker[workers[i]], 1);
    DF_MEDIA_CTR_ADD(dec, slice_calls, 1);
    DF_MEDIA_CTR_ADD(dec, slice_jobs, count);
    DfPicTable *t = &dec->pics;
    if (t->cur < 0)
        return;
    DfRowMap *m = &t->rec[t->cur].map;
    for (int i = 0; i < count && m->n < DF_ROWMAP_MAX; i++) {
        m->node[m->n] = ids ? ids[i] : 0;
        m->worker[m->n++] = (int16_t)workers[i];
    }
    if (deblocks_in_d(dec)) {
        m->rewritten = true;
        m->whole = df_sched_current_worker(dec->sched);
        m->whole_id = df_sched_current_node_id(dec->sched);
    }
}

/* Motion compensation reads about one picture of co-located rows (more
 * at B pictures, less in intra blocks).  libavcodec does not say which
 * pictures are its references, so the rows come from the two pictures
 * decoded last, half from each: in an I/P/B stream those hold the same
 * bands on the same workers once placement has settled.  MPEG-1/2 says,
 * through the picture type: a P picture reads the last I or P picture, a
 * B picture the last two, half from each, an I picture none (with B
 * pictures, the two pictures decoded last are mostly not its references:
 * in I P B B P, B2 reads I and P, not B1, and P reads P, not B1 and B2). */
typedef struct RefInputs {
    DfDecoder *dec;
    const DfPicRecord *ref[2];
    int n_ref;
    int base;  /* jobs of the current picture in earlier batches */
    int total; /* base + this batch's jobs */
} RefInputs;

static void add_ref_inputs(void *ctx, DfNode *node, int jobnr)
{
    const RefInputs *r = ctx;
    const int g = r->base + jobnr;
    for (int k = 0; k < r->n_ref; k++) {
        const DfPicRecord *p = r->ref[k];
        /* The references were cut into as many jobs as this picture (the
         * same slices, CTU rows or bands), so job g reads band g; one
         * written whole is cut as this picture is. */
        const int n = p->map.n > 0 ? p->map.n : r->total;
        if (g >= n)
            continue;
        const int y0 = (int)((int64_t)p->h * g / n), y1 = (int)((int64_t)p->h * (g + 1) / n);
        df_graph_add_row_inputs(r->dec, r->dec->ref_bytes, node, &p->map, p->h, y0, y1,
                                p->row_bytes / (uint64_t)r->n_ref, r->dec->graph.mod_s);
    }
}

/* The codec's picture types name its references (DF_REFS_ANCHORS). */
static bool by_picture_type(const DfDecoder *dec)
{
    return dec->codec_ops->refs == DF_REFS_ANCHORS;
}

/* Whether record i still holds picture `seq` (not reused since) and is
 * another picture than the one being decoded. */
static bool live_ref(const DfPicTable *t, int i, uint64_t seq)
{
    return seq != 0 && i >= 0 && i != t->cur && t->rec[i].seq == seq && t->rec[i].h > 0;
}

/* DF_REFS_ANCHORS (MPEG-1/2): the references of the picture being
 * decoded, from the I/P pictures before it; it becomes one itself when it
 * is an I or P picture (a second field finds its own frame among them and
 * skips it). */
static void find_anchors(DfPicTable *t, RefInputs *r)
{
    DfPicRecord *cur = &t->rec[t->cur];
    const bool first = cur->pict_type == AV_PICTURE_TYPE_NONE;
    if (first)
        cur->pict_type = cur->frame ? cur->frame->pict_type : AV_PICTURE_TYPE_NONE;
    const int want = cur->pict_type == AV_PICTURE_TYPE_P   ? 1
                     : cur->pict_type == AV_PICTURE_TYPE_B ? 2
                                                           : 0;
    for (int k = 0; k < 3 && r->n_ref < want; k++) {
        if (live_ref(t, t->anchor[k], t->anchor_seq[k]))
            r->ref[r->n_ref++] = &t->rec[t->anchor[k]];
    }
    if (first && (cur->pict_type == AV_PICTURE_TYPE_I || cur->pict_type == AV_PICTURE_TYPE_P)) {
        for (int k = 2; k > 0; k--) {
            t->anchor[k] = t->anchor[k - 1];
            t->anchor_seq[k] = t->anchor_seq[k - 1];
        }
        t->anchor[0] = t->cur;
        t->anchor_seq[0] = cur->seq;
    }
}

static void find_refs(DfDecoder *dec, int count, RefInputs *r)
{
    DfPicTable *t = &dec->pics;
    r->dec = dec;
    r->n_ref = 0;
    r->base = t->cur >= 0 ? t->rec[t->cur].map.n : 0;
    r->total = r->base + count;
    if (t->cur >= 0 && by_picture_type(dec)) {
        find_anchors(t, r);
        return;
    }
    for (int k = 0; k < 2; k++) {
        if (live_ref(t, t->prev[k], t->prev_seq[k]))
            r->ref[r->n_ref++] = &t->rec[t->prev[k]];
    }
}

/* Bytes of the tallest of `count` bands of the picture being decoded:
 * no less than a job's reference rows (add_ref_inputs cuts them so), so
 * that the row above is not outweighed by a row's rounding. */
static uint64_t band_bytes(const DfDecoder *dec, int count)
{
    const DfPicTable *t = &dec->pics;
    if (t->cur < 0 || count <= 0)
        return 0;
    const DfPicRecord *p = &t->rec[t->cur];
    return p->row_bytes * (((uint64_t)p->h + (uint64_t)count - 1) / (uint64_t)count);
}

static int run_batch(DfDecoder *dec, ExecCall *call, int count, bool wpp)
{
    int stack_workers[STACK_WORKERS];
    int *workers = count <= STACK_WORKERS ? stack_workers : malloc(sizeof(int) * (size_t)count);
    /* Job node ids name the producers of the rows in the bands' inputs;
     * only as many as the row map keeps (DF_ROWMAP_MAX >= STACK_WORKERS). */
    uint64_t stack_ids[STACK_WORKERS];
    const DfMediaSlot *slot = dec->cur_slot;
    RefInputs refs;
    find_refs(dec, count, &refs);
    DfJobs jobs = {
        .n_jobs = count,
        .fn = wpp ? run_job2 : run_job,
        .ctx = call,
        .n_slots = wpp ? call->avctx->thread_count : 0,
        .ordered_start = wpp,
        .module = dec->graph.mod_s,
        .deadline = slot && slot->deadline != DF_NO_DEADLINE ? slot->deadline : 0,
        .out_size = 0,
        .workers = workers,
        .node_ids = count <= STACK_WORKERS ? stack_ids : NULL,
        .add_inputs = refs.n_ref ? add_ref_inputs : NULL,
        .in_ctx = &refs,
        /* On one worker only a request gives slice threading (auto
         * decodes single-threaded there): its jobs are then the points
         * where other streams' frames may run. */
        .as_tasks = dec->plan.mode == DF_THREADING_SLICE,
        /* A stream that chose slice jobs (auto) while it had workers to
         * spare runs them in order once the scheduler carries a stream for
         * every worker, as auto would choose now: libavcodec cannot
         * reopen, but its jobs need not wait on other workers.  Their
         * waits held workers idle beside other streams' frames (dfsim,
         * paced 1080p MPEG-2 at 8 workers: 0.49 K* with slice jobs, 0.83
         * with one task a frame). */
        .serial = dec->cfg.threading == DF_THREADING_AUTO &&
                  df_threading_serial_suits(df_sched_n_streams(dec->sched), dec->n_workers,
                                            dec->par->height),
        /* A WPP row reads the row above while that one runs (intra
         * prediction, the filters' edges, the entropy contexts after its
         * second CTU), and runs longer when that is on another core
         * (dfsim's --wpp-factor): declared as the tallest band's bytes,
         * it weighs at least as much as the references. */
        .start_bytes = wpp ? band_bytes(dec, count) : 0,
    };
    if (workers) {
        for (int i = 0; i < count; i++)
            workers[i] = -1;
    }
    df_jobs_run(dec->sched, &jobs);
    if (workers) {
        record(dec, workers, jobs.node_ids, count);
        if (workers != stack_workers)
            free(workers);
    }
    return 0;
}

static int hook_execute(AVCodecContext *c, int (*func)(AVCodecContext *c2, void *arg2), void *arg,
                        int *ret, int count, int size)
{
    if (count <= 0)
        return 0; /* MPEG-2 makes such calls */
    ExecCall call = {.avctx = c, .func = func, .arg = arg, .ret = ret, .size = size};
    return run_batch(c->opaque, &call, count, false);
}

static int hook_execute2(AVCodecContext *c,
                         int (*func)(AVCodecContext *c2, void *arg2, int jobnr, int threadnr),
                         void *arg, int *ret, int count)
{
    if (count <= 0)
        return 0;
    ExecCall call = {.avctx = c, .func2 = func, .arg = arg, .ret = ret};
    return run_batch(c->opaque, &call, count, true);
}

void df_hooks_install(DfDecoder *dec)
{
    /* Must follow avcodec_open2(): ff_slice_thread_init() installs
     * libavcodec's own functions there during open. */
    dec->avctx->execute = hook_execute;
    dec->avctx->execute2 = hook_execute2;
    dec->pics.cur = -1;
    for (int k = 0; k < 3; k++)
        dec->pics.anchor[k] = -1;
}

void df_hooks_new_picture(DfDecoder *dec, const AVFrame *frame)
{
    DfPicTable *t = &dec->pics;
    int slot = -1;
    /* A buffer handed out again means the picture that used it is gone. */
    for (int i = 0; i < DF_PIC_RECORDS; i++)
        if (t->rec[i].key == frame->data[0]) {
            slot = i;
            break;
        }
    if (slot < 0) {
        slot = t->next;
        t->next = (t->next + 1) % DF_PIC_RECORDS;
    }
    /* The picture before this one becomes a reference candidate. */
    if (t->cur >= 0 && t->cur != slot) {
        t->prev[1] = t->prev[0];
        t->prev_seq[1] = t->prev_seq[0];
        t->prev[0] = t->cur;
        t->prev_seq[0] = t->rec[t->cur].seq;
    }
    t->rec[slot].key = frame->data[0];
    t->rec[slot].seq = ++t->allocated;
    t->rec[slot].h = frame->height;
    t->rec[slot].row_bytes = df_row_bytes(frame);
    t->rec[slot].map.n = 0;
    t->rec[slot].map.rewritten = false;
    t->rec[slot].map.whole = df_sched_current_worker(dec->sched);
    t->rec[slot].map.whole_id = df_sched_current_node_id(dec->sched);
    t->rec[slot].frame = by_picture_type(dec) ? frame : NULL;
    t->rec[slot].pict_type = AV_PICTURE_TYPE_NONE;
    t->cur = slot;
}

void df_row_map_copy(DfRowMap *dst, const DfRowMap *src)
{
    dst->n = src->n;
    dst->whole = src->whole;
    dst->whole_id = src->whole_id;
    dst->rewritten = src->rewritten;
    memcpy(dst->worker, src->worker, sizeof(src->worker[0]) * (size_t)src->n);
    memcpy(dst->node, src->node, sizeof(src->node[0]) * (size_t)src->n);
}

void df_hooks_lookup(DfDecoder *dec, const AVFrame *frame, DfRowMap *out)
{
    const DfPicTable *t = &dec->pics;
    out->n = 0;
    out->whole = -1;
    out->whole_id = 0;
    out->rewritten = false;
    if (dec->plan.mode == DF_THREADING_FRAME)
        return;
    for (int i = 0; i < DF_PIC_RECORDS; i++)
        if (t->rec[i].key && t->rec[i].key == frame->data[0]) {
            df_row_map_copy(out, &t->rec[i].map);
            return;
        }
}
