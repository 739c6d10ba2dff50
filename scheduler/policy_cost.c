/* cost (patent fig. 12): one shared Ready set; a free worker tid takes the
 * node c of least Cost(tid, c), ties by earliest deadline, then oldest.
 * Cost(tid, c) is cached per node in an array with one entry per worker, as
 * the patent suggests.  The set is scanned from its oldest node over a
 * bounded window so that a large backlog does not make selection quadratic;
 * the exclusive section is the selection itself, as in the patent. */
#include "policy.h"

#include <stdlib.h>

#define SCAN_WINDOW       64
#define CACHE_MAX_WORKERS 64
#define NOT_COMPUTED      UINT64_MAX

typedef struct CostP {
    DfPolicy base;
    bool cache;
    DF_ALIGNED DfSpin lock;
    DfNodeList list;
    _Atomic int64_t count;
} CostP;

static size_t cost_scratch(int n_workers)
{
    return n_workers <= CACHE_MAX_WORKERS ? sizeof(uint64_t) * (size_t)n_workers : 0;
}

static int cost_create(const DfPolicyEnv *env, DfPolicy **out)
{
    CostP *c = aligned_alloc(DF_CACHELINE,
                             (sizeof(CostP) + DF_CACHELINE - 1) & ~(size_t)(DF_CACHELINE - 1));
    if (!c)
        return -1;
    *c = (CostP){.base = {.env = *env}, .cache = env->n_workers <= CACHE_MAX_WORKERS};
    *out = &c->base;
    return 0;
}

static void cost_destroy(DfPolicy *p)
{
    free(p);
}

static DfPlacement cost_push(DfPolicy *p, int self, DfNode *n)
{
    CostP *c = (CostP *)p;
    if (c->cache) {
        uint64_t *cache = df_pnode_scratch(n);
        for (int i = 0; i < p->env.n_workers; i++)
            cache[i] = NOT_COMPUTED;
    }
    df_pnode_set_placed(n, -1);
    df_spin_lock(&c->lock);
    df_nlist_append(&c->list, n);
    int64_t before = atomic_fetch_add_explicit(&c->count, 1, memory_order_relaxed);
    df_spin_unlock(&c->lock);
    return (DfPlacement){.worker = -1, .backlog = before > 0};
}

static uint64_t cached_cost(CostP *c, DfNode *n, int tid)
{
    if (!c->cache)
        return df_cost(&c->base.env, n, tid);
    uint64_t *cache = df_pnode_scratch(n);
    if (cache[tid] == NOT_COMPUTED)
        cache[tid] = df_cost(&c->base.env, n, tid);
    return cache[tid];
}

static DfNode *cost_pop(DfPolicy *p, int self, const DfWaitFilter *f)
{
    CostP *c = (CostP *)p;
    if (atomic_load_explicit(&c->count, memory_order_relaxed) == 0)
        return NULL;
    df_spin_lock(&c->lock);
    DfNode *best = NULL;
    uint64_t best_cost = UINT64_MAX;
    int k = 0;
    for (DfNode *n = df_nlist_first(&c->list); n && (k < SCAN_WINDOW || (f && !best));
         n = df_nlist_next(n), k++) {
        if (!df_pnode_accepts(f, n))
            continue;
        uint64_t cost = cached_cost(c, n, self);
        if (!best || cost < best_cost ||
            (cost == best_cost && df_pnode_deadline(n) < df_pnode_deadline(best))) {
            best = n;
            best_cost = cost;
        }
    }
    if (best) {
        df_nlist_remove(&c->list, best);
        atomic_fetch_sub_explicit(&c->count, 1, memory_order_relaxed);
    }
    df_spin_unlock(&c->lock);
    return best;
}

static bool cost_has_work(DfPolicy *p, int self, unsigned *lines)
{
    if (lines)
        (*lines)++;
    return atomic_load_explicit(&((CostP *)p)->count, memory_order_relaxed) > 0;
}

static bool cost_queued(DfPolicy *p, int w)
{
    return atomic_load_explicit(&((CostP *)p)->count, memory_order_relaxed) > 0;
}

const DfPolicyOps df_policy_cost = {
    .info = {"cost", "Patent rule: run where the input bytes are cheapest"},
    .node_scratch = cost_scratch,
    .create = cost_create,
    .destroy = cost_destroy,
    .push = cost_push,
    .pop = cost_pop,
    .has_work = cost_has_work,
    .queued = cost_queued,
};
