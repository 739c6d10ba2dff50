/* learned (the patent's last embodiment): cost-local whose sizes are learnt.
 *
 * For each consumer module c and each producer module p it reads from, the
 * execution times of c are kept in windows split by where p's bytes were:
 * on the same worker ("local") or at trCost level L.  If the work is the
 * same, the difference of the medians is the time the transfer took, so
 * size(p) is corrected in proportion to it:
 *
 *     size_eff(p) = (median_L(c) - median_local(c)) / (trCost(L) * REF_NS_PER_BYTE)
 *
 * i.e. the bytes that, moved at the reference speed, would cost that time.
 * Medians over small windows keep one preempted run from poisoning the
 * model.  Where the declared sizes are right, (difference / bytes) is the
 * measured cost per byte of level L, exposed as a measured trCost matrix.
 * A run that read all of several producers from another worker is not
 * learnt from: it cannot say which of them cost the time.
 * To keep both sides measured, a worker that has work of its own sometimes
 * takes a node from another worker's set on purpose (explore_rate).
 */
#include "policy_cost_local.h"
#include "policy_learned.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Reference transfer speed of one trCost unit (ns per byte): 0.025 ns/B is
 * 40 GB/s, so an L3 hop (weight 4) is 10 GB/s.  Only ratios between
 * producers matter for placement; this fixes the unit of learnt sizes. */
#define REF_NS_PER_BYTE 0.025
#define WINDOW          16
#define MIN_SAMPLES     3
#define SCALE_MIN       1e-6
#define SCALE_MAX       1e6
#define RECOMPUTE_EVERY 4
/* A pair still waiting for an idle worker after this many samples (no
 * worker went idle meanwhile: a saturated machine) is recomputed by the
 * task that adds the sample. */
#define RECOMPUTE_LATE 256
#define N_PAIRS        (DF_LEARN_MAX_MODULES * DF_LEARN_MAX_MODULES)

/* Workers write windows concurrently: each on lines of its own (two),
 * so that two windows written by two workers never share one. */
typedef struct Window {
    DF_ALIGNED _Atomic uint64_t count;
    _Atomic uint32_t ns[WINDOW];
    _Atomic uint64_t bytes_sum; /* declared bytes of p read by these runs */
} Window;

typedef struct Learned {
    DfCostLocal cl;
    /* win[(c * M + p) * DF_N_LEVELS + level] */
    Window *win;
    _Atomic uint64_t scale_bits[DF_LEARN_MAX_MODULES]; /* size correction of producer p (double) */
    /* What each consumer c says of producer p (pair_*[c * M + p], double
     * bits): the sums over its remote levels that recompute adds up. */
    _Atomic uint64_t *pair_eff, *pair_decl;
    _Atomic uint64_t ns_per_byte_bits[DF_N_LEVELS]; /* double bits, measured */
    uint32_t level_weight[DF_N_LEVELS];             /* trCost of a pair at each level */
    DF_ALIGNED _Atomic uint64_t samples;            /* every worker adds: its own line */
    /* Pairs (c * M + p) with samples the model has not taken in yet: set
     * by the task that adds the sample, taken by an idle worker (or a
     * reader of the model), which recomputes them.  Read-mostly lines. */
    DF_ALIGNED _Atomic uint64_t dirty[N_PAIRS / 64];
} Learned;

static Window *win_of(Learned *l, int c, int p, int level)
{
    return &l->win[((size_t)c * DF_LEARN_MAX_MODULES + (size_t)p) * DF_N_LEVELS + (size_t)level];
}

static void store_double(_Atomic uint64_t *dst, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof(bits));
    atomic_store_explicit(dst, bits, memory_order_relaxed);
}

static double load_double(_Atomic uint64_t *src)
{
    uint64_t bits = atomic_load_explicit(src, memory_order_relaxed);
    double v;
    memcpy(&v, &bits, sizeof(v));
    return v;
}

static uint64_t learned_cost(DfCostLocal *cl, const DfNode *c, int tid)
{
    Learned *l = (Learned *)cl;
    double sum = 0;
    DfPInputCursor cur = df_pnode_inputs(c);
    for (DfPInput in; df_pnode_input_next(&cur, &in);) {
        if (in.worker < 0 || in.bytes == 0)
            continue;
        double size = (double)in.bytes;
        if (in.module >= 0 && in.module < DF_LEARN_MAX_MODULES)
            size *= load_double(&l->scale_bits[in.module]);
        sum += size * df_env_trcost(&cl->base.env, in.worker, tid);
    }
    return sum < 1.8e19 ? (uint64_t)(sum + 0.5) : UINT64_MAX;
}

static double learned_scale(DfCostLocal *cl, int module)
{
    if (module < 0 || module >= DF_LEARN_MAX_MODULES)
        return 1.0;
    return load_double(&((Learned *)cl)->scale_bits[module]);
}

static int median_of(const Window *w, uint32_t *out)
{
    uint64_t cnt = atomic_load_explicit(&((Window *)w)->count, memory_order_acquire);
    int n = cnt < WINDOW ? (int)cnt : WINDOW;
    if (n < MIN_SAMPLES)
        return 0;
    uint32_t v[WINDOW];
    for (int i = 0; i < n; i++)
        v[i] = atomic_load_explicit(&((Window *)w)->ns[i], memory_order_relaxed);
    for (int i = 1; i < n; i++) {
        uint32_t x = v[i];
        int j = i - 1;
        while (j >= 0 && v[j] > x) {
            v[j + 1] = v[j];
            j--;
        }
        v[j + 1] = x;
    }
    *out = n & 1 ? v[n / 2] : (uint32_t)(((uint64_t)v[n / 2 - 1] + v[n / 2]) / 2);
    return n;
}

/* Re-derive what consumer c says of producer p from its local/remote
 * medians (at most DF_N_LEVELS medians of WINDOW samples), then size(p)
 * from the consumers' cached sums: O(M) additions, not the O(M x levels)
 * medians of every consumer on a worker's task path. */
static void recompute(Learned *l, int c, int p)
{
    double eff_sum = 0, declared_sum = 0;
    do {
        uint32_t med_local;
        Window *wl = win_of(l, c, p, DF_LEVEL_SELF);
        if (!median_of(wl, &med_local))
            break;
        for (int lev = DF_LEVEL_PU; lev < DF_N_LEVELS; lev++) {
            Window *wr = win_of(l, c, p, lev);
            uint32_t med_remote;
            int nr = median_of(wr, &med_remote);
            if (!nr)
                continue;
            uint64_t cnt = atomic_load_explicit(&wr->count, memory_order_relaxed);
            double mean_bytes =
                (double)atomic_load_explicit(&wr->bytes_sum, memory_order_relaxed) / (double)cnt;
            double dt = (double)med_remote - (double)med_local;
            const uint32_t weight = l->level_weight[lev];
            if (weight == 0 || mean_bytes <= 0)
                continue;
            double eff = dt > 0 ? dt / ((double)weight * REF_NS_PER_BYTE) : 0;
            eff_sum += eff;
            declared_sum += mean_bytes;
            if (dt > 0)
                store_double(&l->ns_per_byte_bits[lev], dt / mean_bytes);
        }
    } while (0);
    const size_t k = (size_t)c * DF_LEARN_MAX_MODULES + (size_t)p;
    store_double(&l->pair_eff[k], eff_sum);
    store_double(&l->pair_decl[k], declared_sum);
    eff_sum = declared_sum = 0;
    for (int cc = 0; cc < DF_LEARN_MAX_MODULES; cc++) {
        const size_t kk = (size_t)cc * DF_LEARN_MAX_MODULES + (size_t)p;
        eff_sum += load_double(&l->pair_eff[kk]);
        declared_sum += load_double(&l->pair_decl[kk]);
    }
    if (declared_sum <= 0)
        return;
    double scale = eff_sum / declared_sum;
    if (scale < SCALE_MIN)
        scale = SCALE_MIN;
    if (scale > SCALE_MAX)
        scale = SCALE_MAX;
    store_double(&l->scale_bits[p], scale);
}

/* Recompute every pair marked dirty.  The exchange is acquire, paired with
 * the release of the fetch_or in mark_dirty: the samples stored before a
 * mark are seen by the recompute that takes it.  Several workers may
 * recompute at once (each pair by one taker; the producers' sums are
 * re-added by whoever stores last, from values stored whole). */
static void flush_dirty(Learned *l)
{
    for (int i = 0; i < N_PAIRS / 64; i++) {
        if (!atomic_load_explicit(&l->dirty[i], memory_order_relaxed))
            continue;
        uint64_t bits = atomic_exchange_explicit(&l->dirty[i], 0, memory_order_acquire);
        for (; bits; bits &= bits - 1) {
            const int k = i * 64 + __builtin_ctzll(bits);
            recompute(l, k / DF_LEARN_MAX_MODULES, k % DF_LEARN_MAX_MODULES);
        }
    }
}

/* Pair (c, p) has new samples.  Returns true when the caller should
 * recompute it itself: it has been waiting for an idle worker for
 * RECOMPUTE_LATE samples. */
static bool mark_dirty(Learned *l, int c, int p, uint64_t idx)
{
    const int k = c * DF_LEARN_MAX_MODULES + p;
    _Atomic uint64_t *w = &l->dirty[k / 64];
    const uint64_t bit = 1ull << (k % 64);
    /* Relaxed look first: a set bit needs no RMW on the shared line (its
     * recompute then may miss this sample, and takes it the next time). */
    if (!(atomic_load_explicit(w, memory_order_relaxed) & bit)) {
        /* Release, paired with the acquire exchange in flush_dirty. */
        atomic_fetch_or_explicit(w, bit, memory_order_release);
        return false;
    }
    if (idx % RECOMPUTE_LATE != RECOMPUTE_LATE - 1)
        return false;
    /* Acquire, as flush_dirty's exchange: the caller recomputes. */
    return atomic_fetch_and_explicit(w, ~bit, memory_order_acquire) & bit;
}

/* An idle worker takes in the samples the tasks left (policy op). */
static void learned_idle(DfPolicy *pol, int self)
{
    flush_dirty((Learned *)pol);
}

static void learned_done(DfPolicy *pol, int self, const DfNode *n, int64_t exec_ns)
{
    Learned *l = (Learned *)pol;
    const int c = df_pnode_module(n);
    const unsigned n_in = df_pnode_n_inputs(n);
    if (c < 0 || c >= DF_LEARN_MAX_MODULES || exec_ns <= 0 || n_in == 0)
        return;
    uint32_t ns = exec_ns > UINT32_MAX ? UINT32_MAX : (uint32_t)exec_ns;
    /* One sample per producer module this run read from: its level is the
     * farthest of that producer's inputs (local only if all of them were). */
    int seen_p[8], seen_level[8];
    uint64_t seen_bytes[8];
    int n_seen = 0;
    DfPInputCursor cur = df_pnode_inputs(n);
    for (DfPInput in; df_pnode_input_next(&cur, &in);) {
        if (in.worker < 0 || in.bytes == 0 || in.module < 0 || in.module >= DF_LEARN_MAX_MODULES)
            continue;
        int lev = df_env_level(&pol->env, in.worker, self);
        int k = 0;
        while (k < n_seen && seen_p[k] != in.module)
            k++;
        if (k == n_seen) {
            if (n_seen == 8)
                continue;
            seen_p[k] = in.module;
            seen_level[k] = lev;
            seen_bytes[k] = 0;
            n_seen++;
        }
        if (lev > seen_level[k])
            seen_level[k] = lev;
        seen_bytes[k] += in.bytes;
    }
    /* A run that read every one of several producers from afar pays all
     * their transfers at once: charged to each producer's remote window,
     * it gives each of them the whole difference, and two producers that
     * often run on one worker (a thief took both) end up with the same
     * learnt bytes whatever their real cost.  Runs with one producer local
     * are kept: each window then compares against a run that had it. */
    bool all_remote = n_seen >= 2;
    for (int k = 0; k < n_seen && all_remote; k++)
        all_remote = seen_level[k] != DF_LEVEL_SELF;
    if (all_remote)
        return;
    for (int k = 0; k < n_seen; k++) {
        Window *w = win_of(l, c, seen_p[k], seen_level[k]);
        uint64_t idx = atomic_fetch_add_explicit(&w->count, 1, memory_order_acq_rel);
        atomic_store_explicit(&w->ns[idx % WINDOW], ns, memory_order_relaxed);
        atomic_fetch_add_explicit(&w->bytes_sum, seen_bytes[k], memory_order_relaxed);
        /* The medians and sums wait for an idle worker: the task path only
         * marks the pair (a saturated machine recomputes late, below). */
        if (idx % RECOMPUTE_EVERY == RECOMPUTE_EVERY - 1 && mark_dirty(l, c, seen_p[k], idx))
            recompute(l, c, seen_p[k]);
    }
    atomic_fetch_add_explicit(&l->samples, 1, memory_order_relaxed);
}

/* With probability explore_rate, a worker that has work of its own takes
 * the oldest node of the nearest other non-empty set instead. */
static DfNode *learned_explore(DfCostLocal *cl, int self)
{
    if (cl->rs.n < 2 || df_ready_empty(&cl->rs.sets[self]) || !df_cost_local_explore_now(cl, self))
        return NULL;
    return df_cost_local_steal(cl, self, true, NULL);
}

static size_t learned_scratch(int n_workers)
{
    return 0;
}

static int learned_create(const DfPolicyEnv *env, DfPolicy **out)
{
    /* Aligned: the struct has members on lines of their own. */
    Learned *l = aligned_alloc(DF_CACHELINE, sizeof(*l));
    if (!l)
        return -1;
    memset(l, 0, sizeof(*l));
    size_t n_win = (size_t)DF_LEARN_MAX_MODULES * DF_LEARN_MAX_MODULES * DF_N_LEVELS;
    l->win = aligned_alloc(DF_CACHELINE, n_win * sizeof(Window));
    if (l->win)
        memset(l->win, 0, n_win * sizeof(Window));
    /* Zero bits are 0.0: no pair has said anything yet. */
    const size_t n_pairs = (size_t)DF_LEARN_MAX_MODULES * DF_LEARN_MAX_MODULES;
    l->pair_eff = calloc(n_pairs, sizeof(*l->pair_eff));
    l->pair_decl = calloc(n_pairs, sizeof(*l->pair_decl));
    if (!l->win || !l->pair_eff || !l->pair_decl || df_cost_local_init(&l->cl, env) < 0) {
        free(l->win);
        free(l->pair_eff);
        free(l->pair_decl);
        free(l);
        return -1;
    }
    l->cl.cost = learned_cost;
    l->cl.scale = learned_scale;
    /* Any pair of workers at a level has that level's weight. */
    for (int lev = 0; lev < DF_N_LEVELS; lev++)
        l->level_weight[lev] = df_env_level_cost(env, (DfLevel)lev);
    l->cl.explore = learned_explore;
    for (int m = 0; m < DF_LEARN_MAX_MODULES; m++)
        store_double(&l->scale_bits[m], 1.0);
    *out = &l->cl.base;
    return 0;
}

static void learned_destroy(DfPolicy *p)
{
    Learned *l = (Learned *)p;
    df_cost_local_fini(&l->cl);
    free(l->win);
    free(l->pair_eff);
    free(l->pair_decl);
    free(l);
}

/* Defined below; the model accessor checks that a policy is this one. */
extern const DfPolicyOps df_policy_learned;

int df_policy_learned_model(DfPolicy *p, DfLearnedModel *out)
{
    if (!p || p->ops != &df_policy_learned)
        return -ENOTSUP;
    Learned *l = (Learned *)p;
    flush_dirty(l); /* what the tasks measured so far */
    memset(out, 0, sizeof(*out));
    out->n_modules = DF_LEARN_MAX_MODULES;
    for (int m = 0; m < DF_LEARN_MAX_MODULES; m++) {
        out->size_scale[m] = load_double(&l->scale_bits[m]);
        uint64_t local = 0, remote = 0;
        for (int c = 0; c < DF_LEARN_MAX_MODULES; c++)
            for (int lev = 0; lev < DF_N_LEVELS; lev++) {
                uint64_t cnt =
                    atomic_load_explicit(&win_of(l, c, m, lev)->count, memory_order_relaxed);
                if (lev == DF_LEVEL_SELF)
                    local += cnt;
                else
                    remote += cnt;
            }
        out->samples_local[m] = local;
        out->samples_remote[m] = remote;
    }
    for (int lev = 0; lev < DF_N_LEVELS; lev++)
        out->ns_per_byte[lev] = load_double(&l->ns_per_byte_bits[lev]);
    out->samples = atomic_load_explicit(&l->samples, memory_order_relaxed);
    out->ref_ns_per_byte = REF_NS_PER_BYTE;
    return 0;
}

/* The public accessor (dfsched.h): the model plus the nodes explored. */
int df_sched_learned_model(DfSched *s, DfLearnedModel *out)
{
    const int ret = df_policy_learned_model(df_sched_policy(s), out);
    if (ret < 0)
        return ret;
    out->explored = df_sched_explored(s);
    return 0;
}

const DfPolicyOps df_policy_learned = {
    .info = {"learned", "cost-local with transfer costs learned from timing"},
    .node_scratch = learned_scratch,
    .create = learned_create,
    .destroy = learned_destroy,
    .push = df_cost_local_push,
    .push_keep = df_cost_local_push_keep,
    .pop = df_cost_local_pop,
    .has_work = df_cost_local_has_work,
    .queued = df_cost_local_queued,
    .done = learned_done,
    .idle = learned_idle,
    .needs_timing = true,
    .snapshot = df_policy_learned_snapshot,
};
