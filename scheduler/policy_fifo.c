/* fifo: one shared queue, first come first served — the baseline thread
 * pool.  A spinlock guards it: that is what a baseline pool does, and it
 * is the contention the other policies are measured against. */
#include "policy.h"

#include <stdlib.h>

typedef struct Fifo {
    DfPolicy base;
    DF_ALIGNED DfSpin lock;
    DfNodeList list;
    _Atomic int64_t count;
} Fifo;

static size_t fifo_scratch(int n_workers)
{
    return 0;
}

static int fifo_create(const DfPolicyEnv *env, DfPolicy **out)
{
    Fifo *f = aligned_alloc(DF_CACHELINE,
                            (sizeof(Fifo) + DF_CACHELINE - 1) & ~(size_t)(DF_CACHELINE - 1));
    if (!f)
        return -1;
    *f = (Fifo){.base = {.env = *env}};
    *out = &f->base;
    return 0;
}

static void fifo_destroy(DfPolicy *p)
{
    free(p);
}

static DfPlacement fifo_push(DfPolicy *p, int self, DfNode *n)
{
    Fifo *f = (Fifo *)p;
    df_pnode_set_placed(n, -1);
    df_spin_lock(&f->lock);
    df_nlist_append(&f->list, n);
    int64_t before = atomic_fetch_add_explicit(&f->count, 1, memory_order_relaxed);
    df_spin_unlock(&f->lock);
    return (DfPlacement){.worker = -1, .backlog = before > 0};
}

static DfNode *fifo_pop(DfPolicy *p, int self, const DfWaitFilter *wf)
{
    Fifo *f = (Fifo *)p;
    if (atomic_load_explicit(&f->count, memory_order_relaxed) == 0)
        return NULL;
    df_spin_lock(&f->lock);
    /* A waiting task skips what it may not run (a scan under the lock: a
     * baseline pool's cost, paid only inside waits). */
    DfNode *n = df_nlist_first(&f->list);
    while (n && !df_pnode_accepts(wf, n))
        n = df_nlist_next(n);
    if (n) {
        df_nlist_remove(&f->list, n);
        atomic_fetch_sub_explicit(&f->count, 1, memory_order_relaxed);
    }
    df_spin_unlock(&f->lock);
    return n;
}

static bool fifo_has_work(DfPolicy *p, int self, unsigned *lines)
{
    if (lines)
        (*lines)++;
    return atomic_load_explicit(&((Fifo *)p)->count, memory_order_relaxed) > 0;
}

static bool fifo_queued(DfPolicy *p, int w)
{
    return atomic_load_explicit(&((Fifo *)p)->count, memory_order_relaxed) > 0;
}

const DfPolicyOps df_policy_fifo = {
    .info = {"fifo", "One shared FIFO (baseline)"},
    .node_scratch = fifo_scratch,
    .create = fifo_create,
    .destroy = fifo_destroy,
    .push = fifo_push,
    .pop = fifo_pop,
    .has_work = fifo_has_work,
    .queued = fifo_queued,
};
