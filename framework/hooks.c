/* AVCodecContext.execute / execute2 overrides: every slice job libavcodec
 * hands out becomes a node S(k,i) on the scheduler (DESIGN §5).
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
 * bands that later read those rows can be placed where they are cached. */
#include "internal.h"

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

static void record(DfDecoder *dec, const int *workers, const uint64_t *ids, int count)
{
    const int nw = dec->n_workers;
    for (int i = 0; i < count; i++)
        if (workers[i] >= 0 && workers[i] < 64 && workers[i] < nw)
            DF_CTR_ADD(dec, jobs_per_worker[workers[i]], 1);
    DF_CTR_ADD(dec, slice_calls, 1);
    DF_CTR_ADD(dec, slice_jobs, count);
    DfPicTable *t = &dec->pics;
    if (t->cur < 0)
        return;
    DfRowMap *m = &t->rec[t->cur].map;
    for (int i = 0; i < count && m->n < DF_ROWMAP_MAX; i++) {
        m->node[m->n] = ids ? ids[i] : 0;
        m->worker[m->n++] = (int16_t)workers[i];
    }
}

static int run_batch(DfDecoder *dec, ExecCall *call, int count, bool wpp)
{
    int stack_workers[STACK_WORKERS];
    int *workers = count <= STACK_WORKERS ? stack_workers : malloc(sizeof(int) * (size_t)count);
    /* Job node ids name the producers of the rows in the bands' inputs;
     * only as many as the row map keeps (DF_ROWMAP_MAX >= STACK_WORKERS). */
    uint64_t stack_ids[STACK_WORKERS];
    const DfSlot *slot = dec->cur_slot;
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
    t->rec[slot].key = frame->data[0];
    t->rec[slot].map.n = 0;
    t->rec[slot].map.whole = df_sched_current_worker(dec->sched);
    t->rec[slot].map.whole_id = df_sched_current_node_id(dec->sched);
    t->cur = slot;
    t->allocated++;
}

void df_hooks_lookup(DfDecoder *dec, const AVFrame *frame, DfRowMap *out)
{
    const DfPicTable *t = &dec->pics;
    out->n = 0;
    out->whole = -1;
    out->whole_id = 0;
    if (dec->plan.mode == DF_THREADING_FRAME)
        return;
    for (int i = 0; i < DF_PIC_RECORDS; i++)
        if (t->rec[i].key && t->rec[i].key == frame->data[0]) {
            const DfRowMap *m = &t->rec[i].map;
            out->n = m->n;
            out->whole = m->whole;
            out->whole_id = m->whole_id;
            memcpy(out->worker, m->worker, sizeof(m->worker[0]) * (size_t)m->n);
            memcpy(out->node, m->node, sizeof(m->node[0]) * (size_t)m->n);
            return;
        }
}
