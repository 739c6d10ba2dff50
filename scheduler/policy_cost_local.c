/* cost-local (patent figs. 13-14): a node that becomes ready is registered
 * in the Ready set of the worker of least Cost(tid, c); only the workers
 * that produced its inputs (and the current one) need evaluating.  A worker
 * takes from its own set first, else steals: from a few workers that the
 * has-work summary flags in its nearest domain with any, and one of the
 * next domain out, the most urgent node among them (fig. 14's least
 * trCost(m, tid) first, with bounded work per poll whatever N). */
#include "policy_cost_local.h"

#include <stdlib.h>
#include <string.h>

static uint64_t formula1(DfCostLocal *cl, const DfNode *n, int tid)
{
    return df_cost(&cl->base.env, n, tid);
}

int df_cost_local_init(DfCostLocal *cl, const DfPolicyEnv *env)
{
    int n = env->n_workers;
    cl->base.env = *env;
    cl->cost = formula1;
    cl->thief = aligned_alloc(DF_CACHELINE, sizeof(DfThief) * (size_t)n);
    if (!cl->thief || df_ready_sets_init(&cl->rs, env->topo, n) < 0) {
        free(cl->thief);
        cl->thief = NULL;
        return -1;
    }
    /* A worker's round robin starts after itself in scatter order. */
    for (int i = 0; i < n; i++)
        cl->thief[i] = (DfThief){.rng = (env->seed ? env->seed : 0x243f6a8885a308d3ull) ^
                                        (0x9e3779b97f4a7c15ull * (uint64_t)(i + 1)),
                                 .victim = -1,
                                 .rr = (uint32_t)df_env_scatter_pos(env, i) + 1};
    return 0;
}

void df_cost_local_fini(DfCostLocal *cl)
{
    df_ready_sets_fini(&cl->rs);
    free(cl->thief);
    cl->thief = NULL;
}

/* Input bytes of one producer worker (scaled: learned's sizes). */
#define PLACE_BUCKETS 16
typedef struct Bucket {
    int worker;
    uint64_t bytes;
    double scaled;
} Bucket;

/* A hash table of keys (workers, domain keys) to small indices. */
typedef struct WideSlot {
    uint64_t key;
    int32_t idx; /* -1: empty */
} WideSlot;

static WideSlot *wide_find(WideSlot *t, int n_slots, uint64_t key)
{
    const uint64_t h = key * 0x9e3779b97f4a7c15ull;
    for (uint32_t i = (uint32_t)(h >> 56) & (uint32_t)(n_slots - 1);;
         i = (i + 1) & (uint32_t)(n_slots - 1))
        if (t[i].idx < 0 || t[i].key == key)
            return &t[i];
}

static void wide_clear(WideSlot *t, int n_slots)
{
    for (int i = 0; i < n_slots; i++)
        t[i].idx = -1;
}

/* The producers' workers of n's inputs in order of first appearance, with
 * their bytes, at most `cap` of them (-1 past that: then Cost is summed
 * some other way).  Found by a linear search, or through `slot` (a table
 * of `n_slots` > 2 x cap) when there is one. */
static int bucket_inputs(DfCostLocal *cl, const DfNode *n, Bucket *b, int cap, WideSlot *slot,
                         int n_slots)
{
    int nb = 0;
    if (slot)
        wide_clear(slot, n_slots);
    DfPInputCursor cur = df_pnode_inputs(n);
    for (DfPInput in; df_pnode_input_next(&cur, &in);) {
        if (in.worker < 0)
            continue;
        int k = 0;
        WideSlot *sl = NULL;
        if (slot) {
            sl = wide_find(slot, n_slots, (uint64_t)in.worker);
            k = sl->idx < 0 ? nb : sl->idx;
        } else {
            while (k < nb && b[k].worker != in.worker)
                k++;
        }
        if (k == nb) {
            if (nb == cap)
                return -1;
            if (sl)
                *sl = (WideSlot){(uint64_t)in.worker, nb};
            b[nb++] = (Bucket){.worker = in.worker};
        }
        if (in.bytes == 0)
            continue;
        b[k].bytes += in.bytes;
        if (cl->scale)
            b[k].scaled += (double)in.bytes * cl->scale(cl, in.module);
    }
    return nb;
}

/* Cost(tid, n) from the buckets: formula (1), or learned's with its sizes
 * (the same rounding as its cost function). */
static uint64_t place_cost(DfCostLocal *cl, const DfNode *n, const Bucket *b, int nb, int tid)
{
    if (nb < 0)
        return cl->cost(cl, n, tid);
    const DfPolicyEnv *env = &cl->base.env;
    if (!cl->scale) {
        uint64_t sum = 0;
        for (int i = 0; i < nb; i++)
            sum += b[i].bytes * df_env_trcost(env, b[i].worker, tid);
        return sum;
    }
    double sum = 0;
    for (int i = 0; i < nb; i++)
        sum += b[i].scaled * df_env_trcost(env, b[i].worker, tid);
    return sum < 1.8e19 ? (uint64_t)(sum + 0.5) : UINT64_MAX;
}

/* Past PLACE_BUCKETS producer workers, up to PLACE_WIDE: Cost(tid) from
 * the bytes in each of tid's domains, one sum per domain and level, not
 * from every producer: O(k + P x levels) for k inputs from P workers,
 * where the sums per producer cost O(P^2) and a walk of the inputs per
 * candidate O(k P).  trCost depends only on the lowest level whose domain
 * two workers share, and domains nest (sharing a core means sharing its
 * L3), so the bytes at exactly level L from tid are those of tid's level-L
 * domain less those of its level-(L-1) one.  A level tid has no cache at
 * is skipped; domains that do not nest fall back to the inputs. */
#define PLACE_WIDE 128
#define WIDE_SLOTS 256 /* > 2 x PLACE_WIDE keys: short probes, always an empty slot */

typedef struct Wide {
    Bucket b[PLACE_WIDE];
    WideSlot slot[WIDE_SLOTS];
    int64_t dom_bytes[PLACE_WIDE];
    double dom_scaled[PLACE_WIDE];
    int cand[PLACE_WIDE + 1];
    int64_t prev_bytes[PLACE_WIDE + 1], cost_bytes[PLACE_WIDE + 1];
    double prev_scaled[PLACE_WIDE + 1], cost_scaled[PLACE_WIDE + 1];
} Wide;

/* place()'s choice for a node of more than PLACE_BUCKETS producer
 * workers: the same candidates in the same order, each one's Cost from
 * the domain sums.  False when there are more than PLACE_WIDE.  Not
 * inlined: its 14 KiB of scratch stays off place()'s frame. */
__attribute__((noinline)) static bool place_wide(DfCostLocal *cl, const DfNode *n, int self,
                                                 int *best_out, uint64_t *best_cost_out)
{
    Wide wide; /* every field written before it is read */
    Wide *x = &wide;
    const int nb = bucket_inputs(cl, n, x->b, PLACE_WIDE, x->slot, WIDE_SLOTS);
    if (nb < 0)
        return false;
    const DfTopo *t = cl->base.env.topo;
    const uint32_t *lc = t->level_cost;
    int nc = 0;
    int64_t total = 0;
    double total_scaled = 0;
    for (int j = 0; j < nb; j++) {
        total += (int64_t)x->b[j].bytes;
        total_scaled += x->b[j].scaled;
    }
    if (self >= 0)
        x->cand[nc++] = self;
    for (int j = 0; j < nb; j++)
        if (x->b[j].worker != self)
            x->cand[nc++] = x->b[j].worker;
    /* Level SELF: the candidate's own bytes. */
    for (int c = 0; c < nc; c++) {
        const WideSlot *sl = wide_find(x->slot, WIDE_SLOTS, (uint64_t)x->cand[c]);
        x->prev_bytes[c] = sl->idx < 0 ? 0 : (int64_t)x->b[sl->idx].bytes;
        x->prev_scaled[c] = sl->idx < 0 ? 0 : x->b[sl->idx].scaled;
        x->cost_bytes[c] = (int64_t)lc[DF_LEVEL_SELF] * x->prev_bytes[c];
        x->cost_scaled[c] = (double)lc[DF_LEVEL_SELF] * x->prev_scaled[c];
    }
    /* Levels PU..NUMA: the bytes of the candidate's domain there. */
    for (int l = 0; l < DF_TOPO_KEYS; l++) {
        wide_clear(x->slot, WIDE_SLOTS);
        int nd = 0;
        for (int j = 0; j < nb; j++) {
            const uint64_t key = t->keys[(size_t)x->b[j].worker * DF_TOPO_KEYS + (size_t)l];
            WideSlot *sl = wide_find(x->slot, WIDE_SLOTS, key);
            if (sl->idx < 0) {
                *sl = (WideSlot){key, nd};
                x->dom_bytes[nd] = 0;
                x->dom_scaled[nd++] = 0;
            }
            x->dom_bytes[sl->idx] += (int64_t)x->b[j].bytes;
            x->dom_scaled[sl->idx] += x->b[j].scaled;
        }
        const uint32_t w = lc[DF_LEVEL_PU + l];
        for (int c = 0; c < nc; c++) {
            const uint64_t key = t->keys[(size_t)x->cand[c] * DF_TOPO_KEYS + (size_t)l];
            /* No such cache above it (topo.c: a key of its own): nobody
             * shares the level with it, its domain is the one below. */
            if (key >> 63 && l != DF_LEVEL_NUMA - DF_LEVEL_PU)
                continue;
            const WideSlot *sl = wide_find(x->slot, WIDE_SLOTS, key);
            const int64_t s = sl->idx < 0 ? 0 : x->dom_bytes[sl->idx];
            const double ss = sl->idx < 0 ? 0 : x->dom_scaled[sl->idx];
            if (s < x->prev_bytes[c])
                return false; /* domains that do not nest: sum per input */
            x->cost_bytes[c] += (int64_t)w * (s - x->prev_bytes[c]);
            x->cost_scaled[c] += (double)w * (ss - x->prev_scaled[c]);
            x->prev_bytes[c] = s;
            x->prev_scaled[c] = ss;
        }
    }
    /* The rest are farther than NUMA. */
    int best = -1;
    uint64_t best_cost = UINT64_MAX;
    for (int c = 0; c < nc; c++) {
        uint64_t cost;
        if (cl->scale) {
            const double sum = x->cost_scaled[c] +
                               (double)lc[DF_LEVEL_MACHINE] * (total_scaled - x->prev_scaled[c]);
            cost = sum < 1.8e19 ? (uint64_t)(sum + 0.5) : UINT64_MAX;
        } else {
            cost = (uint64_t)(x->cost_bytes[c] +
                              (int64_t)lc[DF_LEVEL_MACHINE] * (total - x->prev_bytes[c]));
        }
        if (c == 0 && self >= 0) {
            best = self;
            best_cost = df_pnode_bytes(n) ? cost : 0;
        } else if (cost < best_cost) {
            best = x->cand[c];
            best_cost = cost;
        }
        if (best_cost == 0)
            break;
    }
    *best_out = best;
    *best_cost_out = best_cost;
    return true;
}

/* The producers' worker of least Cost(tid, n), `self` first (-1 from
 * outside with no producer), and that cost. */
static int cheapest(DfCostLocal *cl, int self, const DfNode *n, uint64_t *cost)
{
    int best = -1;
    uint64_t best_cost = UINT64_MAX;
    /* The inputs' bytes per producer worker, summed once: Cost(tid) is
     * then a sum over the producers, not over the inputs (O(k + P^2) for
     * k inputs from P workers, P usually 1 to 3; before, O(k^2) plus an
     * O(i) walk of the input blocks per input). */
    Bucket b[PLACE_BUCKETS];
    const int nb = bucket_inputs(cl, n, b, PLACE_BUCKETS, NULL, 0);
    const bool wide = nb < 0 && place_wide(cl, n, self, &best, &best_cost);
    if (!wide && self >= 0) {
        best = self;
        best_cost = df_pnode_bytes(n) ? place_cost(cl, n, b, nb, self) : 0;
    }
    /* Only the producers' workers can beat the current one (fig. 13, S22),
     * tried in the order of their first input, as one by one before. */
    if (wide) {
        /* chosen from the domain sums */
    } else if (nb >= 0) {
        for (int i = 0; i < nb && best_cost > 0; i++) {
            const int w = b[i].worker;
            if (w == best)
                continue;
            const uint64_t c = place_cost(cl, n, b, nb, w);
            if (c < best_cost) {
                best_cost = c;
                best = w;
            }
        }
    } else {
        DfPInputCursor cur = df_pnode_inputs(n);
        for (DfPInput in; best_cost > 0 && df_pnode_input_next(&cur, &in);) {
            const int w = in.worker;
            if (w < 0 || w == best)
                continue;
            const uint64_t c = cl->cost(cl, n, w);
            if (c < best_cost) {
                best_cost = c;
                best = w;
            }
        }
    }
    *cost = best_cost;
    return best;
}

/* Where n's producers ran, as far as placement cares. */
typedef enum { PRODUCERS_NONE, PRODUCERS_HERE, PRODUCERS_ELSEWHERE } Producers;

static Producers producers_of(const DfNode *n, int self)
{
    Producers p = PRODUCERS_NONE;
    DfPInputCursor cur = df_pnode_inputs(n);
    for (DfPInput in; df_pnode_input_next(&cur, &in);) {
        if (in.worker < 0)
            continue;
        if (in.worker != self)
            return PRODUCERS_ELSEWHERE;
        p = PRODUCERS_HERE;
    }
    return p;
}

/* The worker n goes to: the producers' cheapest, else round robin. */
static int choose(DfCostLocal *cl, int self, DfNode *n)
{
    /* Produced here only (a chain, a fan-in of this worker's nodes, no
     * producer): only the producers' workers could beat this one, and they
     * are this one, so nothing to sum (163 of a fan-out node's 1325
     * instructions at two workers).  The cost is then 0 or not looked at:
     * `spread` below reads it only for a node without bytes. */
    const Producers from = self >= 0 ? producers_of(n, self) : PRODUCERS_ELSEWHERE;
    uint64_t best_cost = 0;
    int best = from != PRODUCERS_ELSEWHERE ? self : cheapest(cl, self, n, &best_cost);
    /* A node without a producer (a source: no input, or inputs from
     * outside the workers) has no home: keep it when the own set is
     * empty, else spread it round robin, so that the producers of a graph
     * start out on all workers and their consumers, placed by cost, need
     * no thief.  A node whose producers' edges carry no bytes has one: the
     * worker placing it, where a producer ran (a decoder's chain of decode
     * tasks, whose context is warm there).  Spreading those too sent each
     * frame of a stream to the next worker, and at saturation left
     * workers without their streams' next work while others queued it:
     * thieves then split WPP wavefronts (dfsim, 4K HEVC WPP, 64 workers x
     * 64 streams: 55 % of rows apart from the row above, 1759 fps; kept
     * with their producer: none, 2196).  A source without consumers
     * starts no subgraph to spread: a task spawned on a worker (df_spawn:
     * no handle, so no edge) or a job of a batch its creator waits for
     * (an MPEG-2 slice, whose rows the frame's output bands read later).
     * It stays on its creator's worker and idle workers steal it, nearest
     * first, as fork-join schedulers do.  Posting half of a burst of
     * spawns to other workers' inboxes cost a contended CAS each, their
     * draining and a remote free (dfbench sched empty at 2 workers:
     * 280-340 ns per task against 170-220 with thieves sharing the burst;
     * oneTBB 230-270); a decode task's slices, sent round robin in scatter
     * order, went to other NUMA nodes first, and its output bands read
     * their rows from across the machine (dfsim, 1080p MPEG-2, 1024
     * workers x 16 streams: 0.96 x steal's frame rate, kept 1.10 x). */
    const bool spread =
        !(df_pnode_flags(n) & DF_NF_SPAWNED) && from == PRODUCERS_NONE && df_pnode_has_succ(n);
    if (best < 0 || (spread && best_cost == 0 && df_pnode_bytes(n) == 0 && self >= 0 &&
                     cl->rs.n > 1 && !df_ready_empty_own(&cl->rs.sets[self]))) {
        /* A worker's counter is its own (no RMW, no shared line); outside
         * threads share one.  Relaxed: a counter, nothing is published. */
        const uint32_t k = self >= 0 ? cl->thief[self].rr++
                                     : atomic_fetch_add_explicit(&cl->rr, 1, memory_order_relaxed);
        /* In scatter order: consecutive sources go to other NUMA nodes,
         * L3s, cores before SMT siblings, so that each domain starts with
         * its share of the graphs (streams) and its thieves find work at
         * home.  In index order the first streams all landed in the first
         * cores, and the rest of the machine took them over by stealing
         * from far (dfsim, 4K HEVC WPP, 1024 workers x 256 streams: every
         * stream's decode task on the first 32 of 128 cores; its rows
         * then spread unevenly, the streams ended 320-591 ms). */
        best = df_env_scatter(&cl->base.env, (int)(k % (uint32_t)cl->rs.n));
    }
    /* Exploration (learned): now and then register the node with the
     * nearest other worker, so that the other side of the choice keeps
     * being measured.  Decided once per node, not per poll of a thief.
     * Only a node that reads bytes: what is measured is what they cost
     * away from where they were made.  A decode task (zero-byte edge from
     * the one before) took its stream's chain along, so that at
     * saturation one worker went idle and its neighbour carried two
     * streams (dfsim, 1080p H.264 8 slices, 256 workers x 256 streams:
     * 41240 fps against cost-local's 45513; 45183 without). */
    if (self >= 0 && cl->rs.n > 1 && df_pnode_bytes(n) > 0 && df_cost_local_explore_now(cl, self)) {
        best = df_env_nearest(&cl->base.env, best);
        df_pnode_mark(n, DF_NF_EXPLORED);
    }
    return best;
}

static DfPlacement place(DfPolicy *p, int self, DfNode *n, bool may_keep)
{
    DfCostLocal *cl = (DfCostLocal *)p;
    /* One worker: one place, whatever the inputs cost (bucketing them
     * took a sixth of a fan-out node's time there). */
    const int best = cl->rs.n > 1 ? choose(cl, self, n) : 0;
    DfReady *r = &cl->rs.sets[best];
    df_pnode_set_placed(n, best);
    /* Continuation: the same place, without the push, the pop and the
     * summary mark, when that passes nothing more urgent in the own set.
     * The node is then in no set: no other worker can be its consumer,
     * so no fence is owed to a thief or a parking worker. */
    if (may_keep && best == self && df_ready_none_before(r, df_pnode_deadline(n)))
        return (DfPlacement){.worker = best, .kept = true};
    bool backlog = best == self ? !df_ready_empty_own(r) : !df_ready_empty(r);
    if (best == self)
        df_ready_push(r, n);
    else
        df_ready_post(r, n);
    if (best == self && r->solo) {
        /* The only worker's own set: nobody to see the bit but itself. */
        df_ready_sets_mark_alone(&cl->rs, best);
        return (DfPlacement){.worker = best, .backlog = backlog};
    }
    df_ready_sets_mark(&cl->rs, best);
    return (DfPlacement){.worker = best, .backlog = backlog, .fenced = true};
}

DfPlacement df_cost_local_push(DfPolicy *p, int self, DfNode *n)
{
    return place(p, self, n, false);
}

DfPlacement df_cost_local_push_keep(DfPolicy *p, int self, DfNode *n)
{
    return place(p, self, n, self >= 0);
}

bool df_cost_local_explore_now(DfCostLocal *cl, int self)
{
    const double rate = cl->base.env.explore_rate;
    if (rate <= 0)
        return false;
    uint64_t r = df_rand_next(&cl->thief[self].rng);
    return (double)(r >> 11) * (1.0 / 9007199254740992.0) < rate;
}

/* Nodes went back into v's inbox (a filter refused them): its bit, and
 * somebody to come for them. */
static void given_back(DfCostLocal *cl, int v)
{
    df_ready_sets_mark(&cl->rs, v);
    if (cl->base.env.requeued)
        cl->base.env.requeued(cl->base.env.wake_ctx, v);
}

/* v's set was seen empty: clear its bit (a wake check if nodes came). */
static void seen_empty(DfCostLocal *cl, int v)
{
    if (df_ready_sets_unmark(&cl->rs, v) && cl->base.env.requeued)
        cl->base.env.requeued(cl->base.env.wake_ctx, v);
}

static DfNode *steal_from(DfCostLocal *cl, int v, bool explore, const DfWaitFilter *f)
{
    bool returned;
    DfNode *n = df_ready_steal(&cl->rs.sets[v], f, &returned);
    if (returned)
        given_back(cl, v);
    else if (df_ready_empty(&cl->rs.sets[v]))
        seen_empty(cl, v); /* took the last one: thieves need not look */
    if (n)
        df_pnode_mark(n, DF_NF_STOLEN | (explore ? DF_NF_EXPLORED : 0));
    return n;
}

/* Victim a is nearer to `self` than b: less trCost, then fewer steps
 * from self + 1 on (equally near neighbours spread the load). */
static bool nearer(const DfPolicyEnv *env, int self, int a, int b)
{
    const uint32_t ca = df_env_trcost(env, a, self), cb = df_env_trcost(env, b, self);
    if (ca != cb)
        return ca < cb;
    const int n = env->n_workers;
    return (a - self + n) % n < (b - self + n) % n;
}

/* Candidates per steal: the sticky victim, STEAL_NEAR random flagged
 * workers of the nearest domain with any, STEAL_FAR of the next one out
 * (an urgent node farther away gets its chance).  Bounded whatever N. */
#define STEAL_NEAR 2
#define STEAL_FAR  1
#define STEAL_MAX  (1 + STEAL_NEAR + STEAL_FAR)
/* Nodes a victim's owner may take between a thief's two looks with the
 * thief still stealing a spawned task: about a poll's worth
 * (32 pauses, 1-2 us) of tasks of a few hundred ns. */
#define STEAL_SLOW 4

/* Victim r of the thief's last poll may be stolen from now (the grace
 * rule in df_cost_local_steal). */
static bool in_grace_no_more(const DfThief *th, const DfReady *r)
{
    const uint64_t moved = df_ready_taken_since(r, th->head);
    return moved == 0 || (moved <= STEAL_SLOW && (df_ready_head_tags(r, NULL) & DF_HEAD_MOVABLE));
}

static int add_candidate(int *cand, int nc, int v, int self)
{
    if (v < 0 || v == self)
        return nc;
    for (int k = 0; k < nc; k++)
        if (cand[k] == v)
            return nc;
    cand[nc] = v;
    return nc + 1;
}

/* Up to STEAL_MAX workers whose bits are set, nearest domains first. */
static int candidates(DfCostLocal *cl, int self, int *cand, unsigned *lines)
{
    DfThief *th = &cl->thief[self];
    DfSummary *sum = &cl->rs.work;
    int nc = 0;
    if (th->victim >= 0 && df_summary_test(sum, th->victim))
        nc = add_candidate(cand, nc, th->victim, self);
    (*lines)++;
    bool restored = false;
    int wi = sum->leaf_of[self], found = 0;
    uint64_t skip = 1ull << sum->bit_of[self];
    bool below_zero = false;
    while (wi >= 0 && found < 2) {
        const uint64_t word = df_summary_word(sum, wi), bits = word & ~skip;
        (*lines)++;
        /* The word we came from was zero but this one still flags it: a
         * stale bit (summary.c) that no descent of ours would meet. */
        if (below_zero && (word & skip) && df_summary_clear_stale(sum, wi, __builtin_ctzll(skip)))
            restored = true;
        below_zero = word == 0;
        if (bits) {
            /* Distinct branches of this word, at random: thieves of one
             * domain spread over its victims. */
            uint64_t left = bits;
            const int want = found == 0 ? STEAL_NEAR : STEAL_FAR;
            for (int k = 0; k < want && left; k++) {
                const int b = df_summary_random_bit(left, &th->rng);
                left &= ~(1ull << b);
                nc = add_candidate(cand, nc,
                                   df_summary_pick(sum, wi, 1ull << b, &th->rng, lines, &restored),
                                   self);
            }
            found++;
        }
        skip = 1ull << sum->words[wi].parent_bit;
        wi = sum->words[wi].parent;
    }
    /* A stale bit cleared on the way had to be restored: a worker may
     * have parked on its absence. */
    if (restored && cl->base.env.requeued)
        cl->base.env.requeued(cl->base.env.wake_ctx, self);
    return nc;
}

DfNode *df_cost_local_steal(DfCostLocal *cl, int self, bool explore, const DfWaitFilter *f)
{
    if (cl->rs.n < 2)
        return NULL;
    DfThief *th = &cl->thief[self];
    int cand[STEAL_MAX];
    unsigned lines = 0;
    const int nc = candidates(cl, self, cand, &lines);
    /* Of the candidates, the one whose most urgent node is due first (the
     * nearest on ties: nodes without deadlines above all).  Victims
     * spinning idle are skipped unless exploring: an idle owner takes its
     * node itself in a moment, where its input rows are. */
    int64_t now = 0, best_dl = 0;
    int best = -1, armed = -1, eligible[STEAL_MAX], ne = 0;
    bool best_behind = false, armed_behind = false;
    for (int k = 0; k < nc; k++) {
        const int v = cand[k];
        DfReady *r = &cl->rs.sets[v];
        lines += DF_READY_PROBE_LINES;
        if (df_ready_empty(r)) {
            seen_empty(cl, v);
            continue;
        }
        if (!explore && df_env_worker_idle(&cl->base.env, v, &now))
            continue;
        eligible[ne++] = v;
        const int64_t dl = df_ready_urgency(r);
        /* A WPP row whose owner runs the row above it (its releaser):
         * taken now it runs beside that row and pays for it (libavcodec's
         * per-CTU handshake, the rows above moving between the cores),
         * where its owner would run it next.  Taken only when no
         * candidate as urgent offers anything else: then it is
         * parallelism nobody else has (a lone stream's wavefront), not a
         * split of one its owner is carrying.  Without this, at
         * saturation pairs of workers took turns stealing each other's
         * next row (dfsim, 4K HEVC WPP, 64 workers x 256 streams: 47 % of
         * rows started beside the row above, all of them stolen; steal's
         * random victims: 4 %). */
        uint64_t after;
        df_ready_head_tags(r, &after);
        const bool behind = after && after == df_env_worker_running(&cl->base.env, v);
        if (best < 0 || dl < best_dl ||
            (dl == best_dl &&
             (behind != best_behind ? !behind : nearer(&cl->base.env, self, v, best)))) {
            best = v;
            best_dl = dl;
            best_behind = behind;
        }
        if (v == th->victim && in_grace_no_more(th, r)) {
            armed = v;
            armed_behind = behind;
        }
    }
    DF_THIEF_LINES_ADD(th, lines);
    if (best < 0)
        return NULL;
    if (!explore) {
        /* A busy owner may be just finishing the producer and about to pop
         * it, and a waiting one takes what its wait accepts in a moment:
         * steal only from the victim of the last poll whose head has not
         * moved since (what a waiter refuses stays there), or has moved by
         * at most STEAL_SLOW nodes when the node at the head is a spawned
         * task (no input, no consumer: no locality to lose; a waiting
         * owner takes its burst of spawns one at a time).  An owner that
         * takes nodes faster than that runs tasks too short to be worth a
         * steal.  The thief remembers one victim and its head mark (O(1) per
         * worker); a victim whose grace has passed goes before a more
         * urgent one still in its grace, so that a thief between two
         * victims cannot re-arm forever. */
        if (best != armed) { /* armed: the last victim, out of its grace */
            if (armed < 0 || (armed_behind && !best_behind)) {
                th->victim = best;
                th->head = df_ready_head_mark(&cl->rs.sets[best]);
                return NULL;
            }
            best = armed;
        }
    }
    th->victim = best; /* sticky: looked at first next time */
    DfNode *n = steal_from(cl, best, explore, f);
    /* Lost the race for it (or the filter refused it): any other eligible
     * candidate, grace or not. */
    for (int k = 0; k < ne && !n; k++)
        if (eligible[k] != best)
            n = steal_from(cl, eligible[k], explore, f);
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
    if (returned)
        given_back(cl, self);
    DfNode *n = df_ready_pop(own, false, f);
    if (n)
        return n;
    if (df_ready_empty_own(own))
        seen_empty(cl, self); /* thieves need not look here */
    return df_cost_local_steal(cl, self, false, f);
}

bool df_cost_local_has_work(DfPolicy *p, int self, unsigned *lines)
{
    return df_ready_sets_any(&((DfCostLocal *)p)->rs, lines);
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
    /* Aligned: rr has a line of its own. */
    DfCostLocal *cl = aligned_alloc(DF_CACHELINE, sizeof(*cl));
    if (!cl)
        return -1;
    memset(cl, 0, sizeof(*cl));
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
    .push_keep = df_cost_local_push_keep,
    .pop = df_cost_local_pop,
    .has_work = df_cost_local_has_work,
    .queued = df_cost_local_queued,
};
