/* Measured load per stream (load.c): the account and the per-worker
 * accounting that df_run_node does around a body.  Not a public API. */
#ifndef DF_LOAD_INTERNAL_H
#define DF_LOAD_INTERNAL_H

#include "sched_internal.h"

/* Frames in the moving average of a stream's CPU per frame. */
#define DF_LOAD_WINDOW 16

struct DfLoad {
    /* Self time of the stream's nodes (ns): one relaxed add per node by the
     * worker that ran it.  Readers want an estimate; a reader that needs a
     * frame's nodes in it (df_load_frame_done after the frame's group is
     * done) gets them through the group: the add is sequenced before
     * df_node_complete, whose release on the group's count pairs with the
     * acquire in df_group_done(). */
    DF_ALIGNED _Atomic uint64_t ns;
    DfSched *sched;
    /* Under `lock` (frame_done, queries, admission): */
    pthread_mutex_t lock;
    double fps;      /* frames per second the stream must keep; <= 0: unknown */
    bool admitted;   /* counted in the scheduler's admitted load */
    uint64_t cls;    /* df_load_set_class(); 0: none */
    uint64_t frames; /* frames completed */
    /* Account total and time at the last DF_LOAD_WINDOW + 1 completions
     * (ring, index frames % size); slot of frame 0 is the registration. */
    uint64_t ring_ns[DF_LOAD_WINDOW + 1];
    int64_t ring_t[DF_LOAD_WINDOW + 1];
    /* Registry of accounts, and the probation (load.c's registry lock). */
    DfLoad *prev, *next;
    bool on_probation;  /* an admission measures the stream */
    unsigned probation; /* its background rank then; 0: none */
};

/* What df_run_node keeps between the start and the end of a body. */
typedef struct DfLoadRun {
    int64_t t0;      /* 0: not timed */
    int64_t nested0; /* w->load_nested_ns at the start */
} DfLoadRun;

/* Before a body: time it when it has an account, or when an accounted
 * body encloses it on this worker (a waiting body helps): the enclosing
 * one must subtract it.  Only the vDSO clock, no system call. */
static inline void df_load_run_begin(DfWorker *w, const DfNode *n, DfLoadRun *r)
{
    if (DF_LIKELY(!n->load && !w->load_open)) {
        r->t0 = 0;
        return;
    }
    w->load_open++;
    r->nested0 = w->load_nested_ns;
    r->t0 = df_now_ns();
}

/* After a body: its self time (wall time minus the nodes it ran while
 * waiting) goes to its account; its whole time counts as nested for the
 * body that encloses it, if any. */
static inline void df_load_run_end(DfWorker *w, const DfNode *n, const DfLoadRun *r)
{
    if (DF_LIKELY(!r->t0))
        return;
    int64_t elapsed = df_now_ns() - r->t0;
    if (elapsed < 0)
        elapsed = 0;
    int64_t self = elapsed - (w->load_nested_ns - r->nested0);
    if (n->load && self > 0)
        atomic_fetch_add_explicit(&n->load->ns, (uint64_t)self, memory_order_relaxed);
    w->load_nested_ns = r->nested0 + elapsed;
    w->load_open--;
}

#endif
