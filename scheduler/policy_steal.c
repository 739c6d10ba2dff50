/* steal: per-worker deques with random work stealing, locality-blind — the
 * Cilk/TBB/Taskflow baseline.  The owner runs its newest node first (work
 * first), thieves take the oldest from a random victim. */
#include "policy.h"

#include <stdlib.h>

typedef struct Thief {
    DF_ALIGNED uint64_t rng;
    int32_t victim; /* last victim that gave a node (sticky), -1 */
} Thief;

typedef struct Steal {
    DfPolicy base;
    DfReadySets rs;
    Thief *thief;
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
    s->thief = aligned_alloc(DF_CACHELINE, sizeof(Thief) * (size_t)env->n_workers);
    if (!s->thief || df_ready_sets_init(&s->rs, env->topo, env->n_workers) < 0) {
        free(s->thief);
        free(s);
        return -1;
    }
    for (int i = 0; i < env->n_workers; i++)
        s->thief[i] = (Thief){.rng = (env->seed ? env->seed : 0x9e3779b97f4a7c15ull) +
                                     0x1234567ull * (uint64_t)(i + 1),
                              .victim = -1};
    *out = &s->base;
    return 0;
}

static void steal_destroy(DfPolicy *p)
{
    Steal *s = (Steal *)p;
    df_ready_sets_fini(&s->rs);
    free(s->thief);
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
    df_pnode_set_placed(n, target);
    if (target == self)
        df_ready_push(r, n);
    else
        df_ready_post(r, n);
    df_ready_sets_mark(&s->rs, target);
    return (DfPlacement){.worker = target, .backlog = backlog, .fenced = true};
}

/* Nodes went back into v's inbox, or v's set was seen empty: the
 * summary (ready.c) and, when needed, a wake check. */
static void given_back(Steal *s, int v)
{
    df_ready_sets_mark(&s->rs, v);
    if (s->base.env.requeued)
        s->base.env.requeued(s->base.env.wake_ctx, v);
}

static void seen_empty(Steal *s, int v)
{
    if (df_ready_sets_unmark(&s->rs, v) && s->base.env.requeued)
        s->base.env.requeued(s->base.env.wake_ctx, v);
}

/* Victims tried per steal: the last one that gave a node, then random
 * workers the has-work summary flags, each found by a random walk down
 * from the root (locality-blind).  Bounded whatever N; a steal that finds
 * nothing leaves the worker idle, whose next poll comes back if the
 * summary still says there is work. */
#define STEAL_ATTEMPTS 4

static DfNode *steal_pop(DfPolicy *p, int self, const DfWaitFilter *f)
{
    Steal *s = (Steal *)p;
    DfReady *own = &s->rs.sets[self];
    bool returned = false;
    df_ready_drain_inbox(own, f, &returned);
    if (returned)
        given_back(s, self);
    DfNode *n = df_ready_pop(own, true, f);
    if (n)
        return n;
    if (df_ready_empty(own))
        seen_empty(s, self);
    if (s->rs.n == 1)
        return NULL;
    Thief *th = &s->thief[self];
    DfSummary *sum = &s->rs.work;
    bool restored = false;
    for (int k = 0; k < STEAL_ATTEMPTS && !n; k++) {
        int v = k == 0 ? th->victim : -1;
        if (v < 0 || v == self)
            v = df_summary_pick(sum, sum->root, df_summary_word(sum, sum->root), &th->rng, NULL,
                                &restored);
        if (v < 0)
            break;
        if (v == self)
            continue;
        n = df_ready_steal(&s->rs.sets[v], f, &returned);
        if (returned)
            given_back(s, v);
        else if (df_ready_empty(&s->rs.sets[v]))
            seen_empty(s, v);
        th->victim = n ? v : -1;
    }
    if (restored && s->base.env.requeued)
        s->base.env.requeued(s->base.env.wake_ctx, self);
    if (n)
        df_pnode_mark(n, DF_NF_STOLEN);
    return n;
}

static bool steal_has_work(DfPolicy *p, int self, unsigned *lines)
{
    return df_ready_sets_any(&((Steal *)p)->rs, lines);
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
