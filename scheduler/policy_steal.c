/* steal: per-worker deques with random work stealing, locality-blind — the
 * Cilk/TBB/Taskflow baseline.  The owner runs its newest node first (work
 * first), thieves take the oldest from a random victim. */
#include "sched_internal.h"

#include <stdlib.h>

typedef struct Rng {
    DF_ALIGNED uint64_t state;
} Rng;

typedef struct Steal {
    DfPolicy base;
    DfReadySets rs;
    Rng *rng;
    DF_ALIGNED _Atomic uint32_t rr;
} Steal;

static size_t steal_scratch(int n_workers)
{
    return 0;
}

static int steal_create(const DfPolicyEnv *env, DfPolicy **out)
{
    Steal *s = calloc(1, sizeof(*s));
    if (!s)
        return -1;
    s->base.env = *env;
    s->base.env.lifo = true; /* work first, like Cilk */
    s->rng = aligned_alloc(DF_CACHELINE, sizeof(Rng) * (size_t)env->n_workers);
    if (!s->rng || df_ready_sets_init(&s->rs, env->n_workers) < 0) {
        free(s->rng);
        free(s);
        return -1;
    }
    for (int i = 0; i < env->n_workers; i++)
        s->rng[i].state =
            (env->seed ? env->seed : 0x9e3779b97f4a7c15ull) + 0x1234567ull * (uint64_t)(i + 1);
    *out = &s->base;
    return 0;
}

static void steal_destroy(DfPolicy *p)
{
    Steal *s = (Steal *)p;
    df_ready_sets_fini(&s->rs);
    free(s->rng);
    free(s);
}

static DfPlacement steal_push(DfPolicy *p, int self, DfNode *n)
{
    Steal *s = (Steal *)p;
    int target =
        self >= 0
            ? self
            : (int)(atomic_fetch_add_explicit(&s->rr, 1, memory_order_relaxed) % (uint32_t)s->rs.n);
    DfReady *r = &s->rs.sets[target];
    bool backlog = !df_ready_empty(r);
    n->placed = target;
    if (target == self)
        df_ready_push(r, n);
    else
        df_ready_post(r, n);
    return (DfPlacement){.worker = target, .backlog = backlog};
}

static DfNode *steal_pop(DfPolicy *p, int self, const DfWaitFilter *f)
{
    Steal *s = (Steal *)p;
    DfReady *own = &s->rs.sets[self];
    bool returned = false;
    df_ready_drain_inbox(own, f, &returned);
    if (returned && s->base.env.requeued)
        s->base.env.requeued(s->base.env.wake_ctx, self);
    DfNode *n = df_ready_pop(own, true, f);
    if (n)
        return n;
    int nw = s->rs.n;
    if (nw == 1)
        return NULL;
    int start = (int)(df_rand_next(&s->rng[self].state) % (uint64_t)nw);
    for (int k = 0; k < nw; k++) {
        int v = (start + k) % nw;
        if (v == self)
            continue;
        n = df_ready_steal(&s->rs.sets[v], f, &returned);
        if (returned && s->base.env.requeued)
            s->base.env.requeued(s->base.env.wake_ctx, v);
        if (n) {
            n->flags |= DF_NF_STOLEN;
            return n;
        }
    }
    return NULL;
}

static bool steal_has_work(DfPolicy *p, int self)
{
    return df_ready_sets_any(&((Steal *)p)->rs);
}

static bool steal_queued(DfPolicy *p, int w)
{
    return !df_ready_empty(&((Steal *)p)->rs.sets[w]);
}

const DfPolicyOps df_policy_steal = {
    .info = {"steal", "Work stealing, locality-blind"},
    .node_scratch = steal_scratch,
    .create = steal_create,
    .destroy = steal_destroy,
    .push = steal_push,
    .pop = steal_pop,
    .has_work = steal_has_work,
    .queued = steal_queued,
};
