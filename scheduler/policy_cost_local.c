/* cost-local (patent figs. 13-14): a node that becomes ready is registered
 * in the Ready set of the worker of least Cost(tid, c); only the workers
 * that produced its inputs (and the current one) need evaluating.  A worker
 * takes from its own set first, else steals from the worker m of least
 * trCost(m, tid), then the next nearest, and so on. */
#include "sched_internal.h"

#include <stdlib.h>
#include <string.h>

#define RNG_STRIDE (DF_CACHELINE / sizeof(uint64_t))

static uint64_t formula1(DfCostLocal *cl, const DfNode *n, int tid)
{
    return df_cost(&cl->base.env, n, tid);
}

int df_cost_local_init(DfCostLocal *cl, const DfPolicyEnv *env)
{
    int n = env->n_workers;
    cl->base.env = *env;
    cl->cost = formula1;
    cl->rng = aligned_alloc(DF_CACHELINE, DF_CACHELINE * (size_t)n);
    cl->seen = calloc((size_t)n * (size_t)n, sizeof(uint64_t));
    if (!cl->rng || !cl->seen || df_ready_sets_init(&cl->rs, n) < 0) {
        free(cl->rng);
        free(cl->seen);
        return -1;
    }
    for (int i = 0; i < n; i++)
        cl->rng[i * RNG_STRIDE] = (env->seed ? env->seed : 0x243f6a8885a308d3ull) ^
                                  (0x9e3779b97f4a7c15ull * (uint64_t)(i + 1));
    return 0;
}

void df_cost_local_fini(DfCostLocal *cl)
{
    df_ready_sets_fini(&cl->rs);
    free(cl->rng);
    free(cl->seen);
    cl->rng = NULL;
    cl->seen = NULL;
}

DfPlacement df_cost_local_push(DfPolicy *p, int self, DfNode *n)
{
    DfCostLocal *cl = (DfCostLocal *)p;
    int best = -1;
    uint64_t best_cost = UINT64_MAX;
    if (self >= 0) {
        best = self;
        best_cost = n->in_bytes ? cl->cost(cl, n, self) : 0;
    }
    /* Only the producers' workers can beat the current one (fig. 13, S22). */
    for (unsigned i = 0; i < n->n_inputs && best_cost > 0; i++) {
        int w = df_node_input_c(n, i)->worker;
        if (w < 0 || w == best)
            continue;
        uint64_t c = cl->cost(cl, n, w);
        if (c < best_cost) {
            best_cost = c;
            best = w;
        }
    }
    /* A node whose inputs cost nothing anywhere (none, or no bytes) has no
     * home: keep it when the own set is empty, else spread it round robin,
     * so that the producers of a graph start out on all workers and their
     * consumers, placed by cost, need no thief. */
    if (best < 0 || (best_cost == 0 && n->in_bytes == 0 && self >= 0 && cl->rs.n > 1 &&
                     !df_ready_empty(&cl->rs.sets[self])))
        best =
            (int)(atomic_fetch_add_explicit(&cl->rr, 1, memory_order_relaxed) % (uint32_t)cl->rs.n);
    /* Exploration (learned): now and then register the node with the
     * nearest other worker, so that the other side of the choice keeps
     * being measured.  Decided once per node, not per poll of a thief. */
    if (self >= 0 && cl->rs.n > 1 && df_cost_local_explore_now(cl, self)) {
        best = cl->base.env.topo->nearest[best];
        n->flags |= DF_NF_EXPLORED;
    }
    DfReady *r = &cl->rs.sets[best];
    bool backlog = !df_ready_empty(r);
    n->placed = best;
    if (best == self)
        df_ready_push(r, n);
    else
        df_ready_post(r, n);
    return (DfPlacement){.worker = best, .backlog = backlog};
}

bool df_cost_local_explore_now(DfCostLocal *cl, int self)
{
    const double rate = cl->base.env.explore_rate;
    if (rate <= 0)
        return false;
    uint64_t r = df_rand_next(&cl->rng[(size_t)self * RNG_STRIDE]);
    return (double)(r >> 11) * (1.0 / 9007199254740992.0) < rate;
}

/* May `self` steal from v now?  (Victims spinning idle are skipped, and a
 * busy one only gives up a node seen at its head on two polls in a row.) */
static bool may_steal(DfCostLocal *cl, int self, int v, bool explore, int64_t *now)
{
    DfReady *r = &cl->rs.sets[v];
    if (df_ready_empty(r))
        return false;
    if (explore)
        return true;
    /* An idle owner takes its node itself in a moment, where its input
     * rows are; a thief would only move them. */
    if (df_env_worker_idle(&cl->base.env, v, now))
        return false;
    /* A busy owner may be just finishing the producer and about to pop it,
     * and a waiting one takes what its wait accepts in a moment: steal only
     * a node seen at the head on two polls in a row (what a waiter refuses
     * stays there).  The grace is one poll, so it scales with the machine. */
    const int nw = cl->rs.n;
    uint64_t key = df_ready_head_key(r), *seen = &cl->seen[(size_t)self * (size_t)nw + (size_t)v];
    if (*seen != key) {
        *seen = key;
        return false;
    }
    return true;
}

static DfNode *steal_from(DfCostLocal *cl, int v, bool explore, const DfWaitFilter *f)
{
    bool returned;
    DfNode *n = df_ready_steal(&cl->rs.sets[v], f, &returned);
    if (returned && cl->base.env.requeued)
        cl->base.env.requeued(cl->base.env.wake_ctx, v);
    if (n)
        n->flags |= DF_NF_STOLEN | (explore ? DF_NF_EXPLORED : 0);
    return n;
}

/* Victim a is nearer to `self` than b: less trCost, then fewer steps
 * from self + 1 on (equally near neighbours spread the load). */
static bool nearer(const DfTopo *t, int self, int a, int b)
{
    const uint32_t ca = df_topo_trcost(t, a, self), cb = df_topo_trcost(t, b, self);
    if (ca != cb)
        return ca < cb;
    const int n = t->n_workers;
    return (a - self + n) % n < (b - self + n) % n;
}

DfNode *df_cost_local_steal(DfCostLocal *cl, int self, bool explore, const DfWaitFilter *f)
{
    const int nw = cl->rs.n;
    const DfTopo *topo = cl->base.env.topo;
    int64_t now = 0;
    /* First the victim whose most urgent node is due first (the nearest on
     * ties: nodes without deadlines above all); failing that, the nearest
     * that has a node this thief may take. */
    int victim = -1, eligible = 0;
    int64_t victim_dl = 0;
    for (int v = 0; v < nw; v++) {
        if (v == self || !may_steal(cl, self, v, explore, &now))
            continue;
        eligible++;
        const int64_t dl = df_ready_urgency(&cl->rs.sets[v]);
        if (victim < 0 || dl < victim_dl || (dl == victim_dl && nearer(topo, self, v, victim))) {
            victim = v;
            victim_dl = dl;
        }
    }
    if (victim < 0)
        return NULL;
    DfNode *n = steal_from(cl, victim, explore, f);
    if (n || eligible == 1)
        return n;
    for (int v = 0; v < nw && !n; v++)
        if (v != self && v != victim && !df_ready_empty(&cl->rs.sets[v]))
            n = steal_from(cl, v, explore, f);
    return n;
}

DfNode *df_cost_local_pop(DfPolicy *p, int self, const DfWaitFilter *f)
{
    DfCostLocal *cl = (DfCostLocal *)p;
    if (cl->explore && !f) {
        DfNode *x = cl->explore(cl, self);
        if (x)
            return x;
    }
    DfReady *own = &cl->rs.sets[self];
    bool returned = false;
    df_ready_drain_inbox(own, f, &returned);
    if (returned && cl->base.env.requeued)
        cl->base.env.requeued(cl->base.env.wake_ctx, self);
    DfNode *n = df_ready_pop(own, false, f);
    if (n)
        return n;
    return df_cost_local_steal(cl, self, false, f);
}

bool df_cost_local_has_work(DfPolicy *p, int self)
{
    return df_ready_sets_any(&((DfCostLocal *)p)->rs);
}

bool df_cost_local_queued(DfPolicy *p, int w)
{
    return !df_ready_empty(&((DfCostLocal *)p)->rs.sets[w]);
}

static size_t cl_scratch(int n_workers)
{
    return 0;
}

static int cl_create(const DfPolicyEnv *env, DfPolicy **out)
{
    DfCostLocal *cl = calloc(1, sizeof(*cl));
    if (!cl)
        return -1;
    if (df_cost_local_init(cl, env) < 0) {
        free(cl);
        return -1;
    }
    cl->base.env.explore_rate = 0; /* the patent's rule as it is: no exploration */
    *out = &cl->base;
    return 0;
}

static void cl_destroy(DfPolicy *p)
{
    df_cost_local_fini((DfCostLocal *)p);
    free(p);
}

const DfPolicyOps df_policy_cost_local = {
    .info = {"cost-local", "Patent rule with local ready sets and stealing"},
    .node_scratch = cl_scratch,
    .create = cl_create,
    .destroy = cl_destroy,
    .push = df_cost_local_push,
    .pop = df_cost_local_pop,
    .has_work = df_cost_local_has_work,
    .queued = df_cost_local_queued,
};
