/* Everything a placement policy may use (docs/scheduler.md, "The policy
 * seam"): the ops table it fills, a read-only view of a node with the few
 * words a policy may write, and the scheduler services it calls (ready sets
 * and their has-work summary, trCost and levels, the workers' idle state, a
 * generator).  A policy is one file that includes this header (and libc)
 * and defines its ops, plus one entry in the registry (policy.c).
 *
 * The core's header, sched_internal.h, includes this one, never the
 * reverse: a policy does not see workers, groups, the scheduler or the
 * node's other fields.  C cannot hide the layouts the inline accessors
 * below read (sched_node.h, sched_ready.h, sched_topo.h) without a call per
 * access on the per-node path, so tests/check_policy_seam.sh holds the
 * policy files to this header: no sched_internal.h, no node field named. */
#ifndef DF_SCHED_POLICY_H
#define DF_SCHED_POLICY_H

#include "dfsched.h"
#include "sched_base.h"
#include "sched_node.h"
#include "sched_ready.h"
#include "sched_topo.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* ------------------------------------------------------ the ops table */

typedef struct DfPolicy DfPolicy;

/* What a worker is doing, as thieves see it. */
enum {
    DF_WS_IDLE = 0, /* spinning: will take its own work within a microsecond */
    DF_WS_RUNNING,  /* inside a task body */
    DF_WS_PARKED,   /* asleep on its futex */
    DF_WS_WAITING,  /* inside a task's wait, with nothing that wait may run */
};

typedef struct DfWorkerState {
    _Atomic uint8_t v;
    _Atomic int64_t beat;     /* last poll of the idle loop (env clock) */
    _Atomic uint64_t running; /* id of the releaser (DF_NF_RELEASER) running now, 0: none */
    char pad[DF_CACHELINE - 24];
} DfWorkerState;

/* A spinning worker that has not polled for this long is probably not on a
 * CPU (preempted, or more workers than cores): its nodes may be stolen. */
#define DF_IDLE_BEAT_NS 20000

/* What a policy sees of the machine; the same for threads (dfsched) and for
 * the simulator (dfsim), which is why policies take no thread handles. */
typedef struct DfPolicyEnv {
    int n_workers;
    const struct DfTopo *topo; /* levels and trCost between workers */
    int64_t (*now)(void *clock_ctx);
    void *clock_ctx;
    uint64_t seed;
    double explore_rate;
    bool lifo;            /* owner takes newest first (steal policy) */
    DfWorkerState *state; /* n entries, or NULL (every worker counts as busy) */
    /* Optional: nodes went back into worker w's inbox while w may be
     * parked (a thief or a waiting owner returned what it would not run);
     * make sure somebody comes for them. */
    void (*requeued)(void *wake_ctx, int w);
    void *wake_ctx;
} DfPolicyEnv;

/* True when worker w is spinning idle and polling, so that a node in its
 * set needs no thief.  `now` is env->now() (0: read it here). */
static inline bool df_env_worker_idle(const DfPolicyEnv *env, int w, int64_t *now)
{
    if (!env->state || atomic_load_explicit(&env->state[w].v, memory_order_relaxed) != DF_WS_IDLE)
        return false;
    if (!*now)
        *now = env->now(env->clock_ctx);
    return *now - atomic_load_explicit(&env->state[w].beat, memory_order_relaxed) < DF_IDLE_BEAT_NS;
}

/* The node worker w runs now if its start released an ordered job (its id;
 * 0: none, or not known).  Relaxed: a hint, a stale value misjudges one
 * steal. */
static inline uint64_t df_env_worker_running(const DfPolicyEnv *env, int w)
{
    return env->state ? atomic_load_explicit(&env->state[w].running, memory_order_relaxed) : 0;
}

/* Where a pushed node went, so that the caller can wake the right worker. */
typedef struct DfPlacement {
    int worker;   /* ready set of this worker, or -1 for a shared set */
    bool backlog; /* the worker already had queued work */
    bool fenced;  /* the push ended with DF_FENCE_SEQ_CST (ready-set summary) */
    bool kept;    /* push_keep: not queued, the caller runs it next */
} DfPlacement;

/* What the core counts that a policy's trace snapshot may report. */
typedef struct DfPolicySnapshotCtx {
    uint64_t tasks_explored; /* nodes run that a pop flagged DF_NF_EXPLORED */
} DfPolicySnapshotCtx;

typedef struct DfPolicyOps {
    DfPolicyInfo info;
    /* Bytes of per-node scratch (DfNode.cost_cache) the policy needs. */
    size_t (*node_scratch)(int n_workers);
    int (*create)(const DfPolicyEnv *env, DfPolicy **out);
    void (*destroy)(DfPolicy *p);
    /* Node became ready; `self` is the worker that made it so (-1 outside). */
    DfPlacement (*push)(DfPolicy *p, int self, DfNode *n);
    /* Optional: as push, from worker `self` (>= 0) that can run n next:
     * when the policy places n on self and nothing queued there is due
     * before it, n is not queued (.kept): the caller runs it at once
     * (continuation, no push/pop round trip, no summary mark). */
    DfPlacement (*push_keep)(DfPolicy *p, int self, DfNode *n);
    /* Next node for worker `self` (own set first, then others), or NULL.
     * Sets DF_NF_STOLEN / DF_NF_EXPLORED on the node.  `f` (may be NULL)
     * limits the choice to the nodes a waiting task may run. */
    DfNode *(*pop)(DfPolicy *p, int self, const DfWaitFilter *f);
    /* Cheap check that worker `self` could find work now: O(1) cache
     * lines whatever the number of workers.  Adds the shared lines it read
     * to *lines (may be NULL). */
    bool (*has_work)(DfPolicy *p, int self, unsigned *lines);
    /* Nodes wait in worker w's own set (the shared set for shared-set
     * policies). */
    bool (*queued)(DfPolicy *p, int w);
    /* Optional: node finished on `self` after `exec_ns` (a sample of nodes). */
    void (*done)(DfPolicy *p, int self, const DfNode *n, int64_t exec_ns);
    /* Optional: worker `self` has nothing to run (outside any wait), before
     * it spins: bookkeeping that need not delay a task. */
    void (*idle)(DfPolicy *p, int self);
    /* Optional: the policy wants exec times of a sample of nodes. */
    bool needs_timing;
    /* Optional: record the policy's own data in a trace being collected,
     * after its events, through t->policy (df_trace_policy_add_value,
     * df_trace_policy_add_table) and the inputs' policy_bytes (setting
     * t->policy->weighs_inputs).  0 or -ENOMEM.  Without it, the trace
     * names the policy only and inputs keep policy_bytes = bytes. */
    int (*snapshot)(DfPolicy *p, const DfPolicySnapshotCtx *ctx, DfTrace *t);
} DfPolicyOps;

/* Common header of every policy instance. */
struct DfPolicy {
    const DfPolicyOps *ops;
    DfPolicyEnv env;
};

/* The registry (policy.c): the ops of the policy called `name`, or NULL. */
const DfPolicyOps *df_policy_find(const char *name);

/* ---------------------------------------------------- the node's view */

/* What a policy reads of a node.  The core fills these before push and
 * does not change them while the node is in the policy's hands. */

/* Module id of the node's task (df_sched_module; -1: none). */
static inline int32_t df_pnode_module(const DfNode *n)
{
    return n->module;
}

/* Absolute deadline (DF_NO_DEADLINE: none). */
static inline int64_t df_pnode_deadline(const DfNode *n)
{
    return n->deadline;
}

/* DF_NF_* flags. */
static inline unsigned df_pnode_flags(const DfNode *n)
{
    return n->flags;
}

/* The node has successors (edges to nodes made before it was placed).
 * Relaxed: a hint; an edge added after this read does not move it. */
static inline bool df_pnode_has_succ(const DfNode *n)
{
    const DfEdge *e = atomic_load_explicit(&((DfNode *)n)->succ, memory_order_relaxed);
    return e && e != DF_EDGES_CLOSED;
}

/* Sum of the node's input bytes (0: it reads nothing that has a place). */
static inline uint64_t df_pnode_bytes(const DfNode *n)
{
    return (n->flags & DF_NF_SHORT) ? 0 : n->in_bytes;
}

static inline unsigned df_pnode_n_inputs(const DfNode *n)
{
    return n->n_inputs;
}

/* One input as a policy sees it: the bytes the node reads from a producer,
 * the worker that ran the producer (-1: not run by a worker, or outside
 * the scheduler) and the producer's module. */
typedef struct DfPInput {
    uint64_t bytes;
    int32_t worker;
    int32_t module;
} DfPInput;

/* Input i < df_pnode_n_inputs(n).  The first DF_INLINE_INPUTS are read in
 * place; the rest walk the node's input blocks (node.c). */
static inline DfPInput df_pnode_input(const DfNode *n, unsigned i)
{
    const DfInput *in = DF_LIKELY(i < DF_INLINE_INPUTS) ? &n->in[i] : df_node_input_c(n, i);
    return (DfPInput){.bytes = in->bytes, .worker = in->worker, .module = in->module};
}

/* The inputs of a node in order, O(1) each (df_pnode_input walks the
 * blocks from the start for every i):
 *     DfPInputCursor cur = df_pnode_inputs(n);
 *     for (DfPInput in; df_pnode_input_next(&cur, &in);) ... */
typedef struct DfPInputCursor {
    const DfInput *cur, *end;
    const DfInputBlock *next;
    unsigned left; /* inputs after `end` */
} DfPInputCursor;

static inline DfPInputCursor df_pnode_inputs(const DfNode *n)
{
    const unsigned k = n->n_inputs < DF_INLINE_INPUTS ? n->n_inputs : DF_INLINE_INPUTS;
    return (DfPInputCursor){
        .cur = n->in,
        .end = n->in + k,
        .next = n->n_inputs > DF_INLINE_INPUTS ? n->more : NULL, /* a short node has none */
        .left = n->n_inputs - k};
}

/* The next input itself (NULL after the last), for the scheduler's own
 * walks (the trace records the producer's id too). */
static inline const DfInput *df_pnode_input_next_raw(DfPInputCursor *c)
{
    if (c->cur == c->end) {
        if (!c->left)
            return NULL;
        const unsigned k = c->left < DF_BLOCK_INPUTS ? c->left : DF_BLOCK_INPUTS;
        c->cur = c->next->in;
        c->end = c->cur + k;
        c->next = c->next->next;
        c->left -= k;
    }
    return c->cur++;
}

static inline bool df_pnode_input_next(DfPInputCursor *c, DfPInput *out)
{
    const DfInput *in = df_pnode_input_next_raw(c);
    if (!in)
        return false;
    *out = (DfPInput){.bytes = in->bytes, .worker = in->worker, .module = in->module};
    return true;
}

/* A waiting task's filter (NULL: no wait) lets it run node n. */
static inline bool df_pnode_accepts(const DfWaitFilter *f, const DfNode *n)
{
    return df_wait_accepts(f, n->group, n->deadline);
}

/* What a policy may write of a node. */

/* Tell the core how the node was taken: DF_NF_STOLEN (from another
 * worker's set), DF_NF_EXPLORED (against the policy's own choice, on
 * purpose); the core counts them.  Other bits are the core's. */
static inline void df_pnode_mark(DfNode *n, unsigned flags)
{
    n->flags |= (uint8_t)(flags & (DF_NF_STOLEN | DF_NF_EXPLORED));
}

/* Record the worker whose ready set received the node (-1: a shared set). */
static inline void df_pnode_set_placed(DfNode *n, int w)
{
    n->placed = w;
}

/* The policy's scratch words on the node: node_scratch(n_workers) bytes,
 * the policy's own from push until its pop returns the node (cost keeps a
 * Cost(tid, c) cache per worker there).  Uninitialised at push. */
static inline uint64_t *df_pnode_scratch(DfNode *n)
{
    return n->cost_cache;
}

/* A shared set's list, in push order (fifo, cost).  It threads the node's
 * ready-set link, which the core lends to whichever set holds the node (a
 * node is in one set at a time), so a policy keeps a list of nodes without
 * naming their fields.  The caller serialises access. */
typedef struct DfNodeList {
    DfNode *head, *tail;
} DfNodeList;

static inline DfNode *df_nlist_first(const DfNodeList *l)
{
    return l->head;
}

static inline DfNode *df_nlist_next(const DfNode *n)
{
    return n->next;
}

static inline void df_nlist_append(DfNodeList *l, DfNode *n)
{
    n->next = NULL;
    n->prev = l->tail;
    if (l->tail)
        l->tail->next = n;
    else
        l->head = n;
    l->tail = n;
}

static inline void df_nlist_remove(DfNodeList *l, DfNode *n)
{
    if (n->prev)
        n->prev->next = n->next;
    else
        l->head = n->next;
    if (n->next)
        n->next->prev = n->prev;
    else
        l->tail = n->prev;
}

/* ------------------------------------------------------------ services */

/* The machine (env->topo, topo.c): the level shared by workers a and b,
 * trCost(a, b) (moving a byte from a's worker to b's), the weight of a
 * level, and the other worker of least trCost from w. */
static inline DfLevel df_env_level(const DfPolicyEnv *env, int a, int b)
{
    return df_topo_level(env->topo, a, b);
}

static inline uint32_t df_env_trcost(const DfPolicyEnv *env, int a, int b)
{
    return df_topo_trcost(env->topo, a, b);
}

static inline uint32_t df_env_level_cost(const DfPolicyEnv *env, DfLevel level)
{
    return env->topo->level_cost[level];
}

static inline int df_env_nearest(const DfPolicyEnv *env, int w)
{
    return env->topo->nearest[w];
}

/* The i-th worker in scatter order (DfTopo.scatter: consecutive ones as
 * far apart as the topology allows), and w's place in it. */
static inline int df_env_scatter(const DfPolicyEnv *env, int i)
{
    return env->topo && env->topo->scatter ? env->topo->scatter[i] : i;
}

static inline int df_env_scatter_pos(const DfPolicyEnv *env, int w)
{
    return env->topo && env->topo->scatter_pos ? env->topo->scatter_pos[w] : w;
}

/* Formula (1): Cost(tid, c) over the node's inputs (cost.c). */
uint64_t df_cost(const DfPolicyEnv *env, const DfNode *c, int tid);

/* Ready sets and the has-work summary (sched_ready.h): df_ready_* to push
 * into a worker's set (df_ready_push, own; df_ready_post, anyone's inbox),
 * to pop, steal and probe; DfReadySets for one set per worker with its
 * summary, whose tree (words, leaf_of, bit_of) a thief walks to find the
 * nearest flagged workers, which is why its layout is part of this view.
 * DfSpin for a shared set's lock; df_rand_next (sched_base.h) for a
 * thief's choices. */

/* A policy's accessor in the API (df_sched_learned_model) reaches its
 * instance through the scheduler. */
DfPolicy *df_sched_policy(DfSched *s);
/* Nodes run so far that a policy flagged DF_NF_EXPLORED, all workers. */
uint64_t df_sched_explored(const DfSched *s);

#endif /* DF_SCHED_POLICY_H */
