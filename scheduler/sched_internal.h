/* dfsched internals shared by the scheduler's files, the policies and dfsim
 * (named apart from framework/'s internal header).  Not a public API. */
#ifndef DF_SCHED_INTERNAL_H
#define DF_SCHED_INTERNAL_H

#include "dfsched.h"

#include <pthread.h>
#include <stdatomic.h>

#define DF_CACHELINE 64
#define DF_ALIGNED __attribute__((aligned(DF_CACHELINE)))
#define DF_LIKELY(x) __builtin_expect(!!(x), 1)
#define DF_UNLIKELY(x) __builtin_expect(!!(x), 0)

#if defined(__x86_64__) || defined(__i386__)
#define df_cpu_relax() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define df_cpu_relax() __asm__ __volatile__("yield" ::: "memory")
#else
#define df_cpu_relax() ((void)0)
#endif

/* ThreadSanitizer builds (GCC defines __SANITIZE_THREAD__, clang has the
 * feature test). */
#if defined(__SANITIZE_THREAD__)
#define DF_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define DF_TSAN 1
#endif
#endif

/* A seq_cst fence, where the C11 argument needs one (store-load ordering:
 * the Chase-Lev pop/steal race, make_ready against park).  ThreadSanitizer
 * does not model standalone fences (GCC 14 rejects them under
 * -fsanitize=thread, -Werror=tsan), so TSan builds use what it does model:
 * a seq_cst read-modify-write of one dedicated atomic.  All such RMWs are
 * totally ordered and each synchronizes with the next, which gives at least
 * the fence's guarantees (at run time the same full barrier on x86); TSan
 * then sees a happens-before edge between any two fence sites, which a real
 * fence does not give, so a race that only such an edge orders stays
 * unreported there.  See the scheduler docs: what TSan checks and what rests
 * on the C11 argument. */
#ifdef DF_TSAN
extern _Atomic unsigned df_tsan_fence_word;
#define DF_FENCE_SEQ_CST()                                                                         \
    ((void)atomic_fetch_add_explicit(&df_tsan_fence_word, 1, memory_order_seq_cst))
#else
#define DF_FENCE_SEQ_CST() atomic_thread_fence(memory_order_seq_cst)
#endif

/* Fill a DfError (if non-NULL) and return `code`. */
int df_set_error(DfError *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ------------------------------------------------------------------ slabs */

typedef struct DfCache DfCache;

/* Fixed-size object slab owned by one thread.  Frees from other threads go
 * to a lock-free remote list that only the owner drains (no ABA). */
typedef struct DfSlab {
    void *local;               /* owner-only free list */
    _Atomic(void *) remote;    /* frees from other threads */
    void *chunks;              /* chunk list, freed with the cache */
    size_t slot_size;          /* header + object */
    size_t per_chunk;
    uint64_t n_chunks;
    DfCache *home;
} DfSlab;

void df_slab_init(DfSlab *slab, DfCache *home, size_t obj_size, size_t per_chunk);
void df_slab_fini(DfSlab *slab);
/* Allocate from the calling thread's slab (must be its owner).  NULL on OOM. */
void *df_slab_alloc(DfSlab *slab);
/* Free an object to the slab it came from; `self` is the caller's cache. */
void df_slab_free(void *obj, const DfCache *self);

/* Per-thread allocation cache: one per worker, one per outside thread. */
struct DfCache {
    DfSched *sched;
    int worker;           /* -1 for outside threads */
    DfSlab nodes;
    DfSlab edges;
    DfSlab blocks;
    DfSlab groups;
    _Atomic uint64_t chunk_count; /* slab chunks allocated, all slabs */
    uint64_t next_id, id_end;     /* node ids handed out by this cache */
    DfCache *next_all;    /* sched->caches list (under sched->cache_lock) */
    DfCache *next_free;   /* orphaned outside-thread caches */
};

/* The calling thread's cache for `sched` (creating it on first use). */
DfCache *df_cache_get(DfSched *sched);
void df_cache_fini(DfCache *cache);
/* Worker `worker`'s cache, made when the scheduler starts. */
DfCache *df_cache_new_for_worker(DfSched *s, int worker);
/* pthread key destructor: an exiting outside thread's cache is orphaned. */
void df_cache_thread_exit(void *p);

/* ------------------------------------------------------------------ nodes */

#define DF_INLINE_INPUTS 4
#define DF_BLOCK_INPUTS 4

typedef struct DfInput {
    uint64_t bytes;
    uint64_t pred_id;
    int32_t worker; /* producer's worker, -1 until it finished / outside */
    int32_t module;
} DfInput;

typedef struct DfInputBlock {
    struct DfInputBlock *next;
    DfInput in[DF_BLOCK_INPUTS];
} DfInputBlock;

typedef struct DfEdge {
    struct DfEdge *next;
    DfNode *succ;
    uint32_t slot;
} DfEdge;

/* Sentinel for a finished node's successor list. */
#define DF_EDGES_CLOSED ((DfEdge *)(uintptr_t)1)

enum {
    DF_NF_SKIPPED = 1 << 0,
    DF_NF_STOLEN = 1 << 1,
    DF_NF_EXPLORED = 1 << 2,
    DF_NF_SUBMITTED = 1 << 3,
    DF_NF_DISCARD = 1 << 4,
    DF_NF_SPAWNED = 1 << 5,    /* df_spawn: no handle, so no edge can be added */
};

struct DfNode {
    _Atomic int32_t pending;   /* unmet dependencies + holds (+1 until submit) */
    _Atomic uint32_t refs;
    _Atomic(DfEdge *) succ;    /* successors, or DF_EDGES_CLOSED */
    _Atomic uint8_t pred_cancelled;
    uint8_t flags;
    uint16_t n_inputs;
    int32_t module;
    int32_t index;
    int32_t worker;            /* who ran it; published by the succ exchange */
    int32_t placed;            /* worker whose ready set received it (-1 shared) */
    DfTaskFn fn;
    DfTaskFn cancel;
    void *arg;
    DfGroup *group;
    DfSched *sched;
    int64_t deadline;
    uint64_t id;
    uint64_t out_size;
    uint64_t in_bytes;         /* sum of input bytes */
    uintptr_t aux[2];          /* for internal users (jobs) */
    DfNode *next;              /* ready-set links */
    DfNode *prev;
    int64_t ready_ns;          /* when it became ready (tracing) */
    int64_t created_ns;        /* when it was created (tracing) */
    uint64_t parent_id;        /* node running on the creating worker, 0 if none */
    uint64_t start_pred_id;    /* ordered jobs: released by the start of this node */
    DfLoad *load;              /* stream account (load.c), or NULL */
    DfInputBlock *more;
    DfInput in[DF_INLINE_INPUTS];
    uint64_t cost_cache[];     /* policy scratch (cost policy: one per worker) */
};

/* Input slot `i` of a node. */
DfInput *df_node_input(DfNode *node, unsigned i);
const DfInput *df_node_input_c(const DfNode *node, unsigned i);

/* Node storage, the scheduler's and dfsim's (which allocates its own
 * nodes, zeroed, of sizeof(DfNode) + the policy's scratch): fill the
 * fields of a fresh node from `d`, with no other effect (no group count,
 * no scheduler: n->sched is NULL). */
void df_node_init(DfNode *n, const DfNodeDesc *d, int64_t deadline, uint64_t id, int refs,
                  int pending);
/* The next input slot lies in a new block: df_node_input_append needs one. */
bool df_node_input_block_needed(const DfNode *n);
/* Append input `val` (counting its bytes in in_bytes); `block` is the
 * caller's new block when df_node_input_block_needed(n), else NULL.
 * Returns the slot. */
DfInput *df_node_input_append(DfNode *n, DfInputBlock *block, const DfInput *val);
/* Hand every input block of `n` to `free_block`. */
void df_node_free_input_blocks(DfNode *n, void (*free_block)(void *block, const void *ctx),
                               const void *ctx);

/* ----------------------------------------------------------------- groups */

struct DfGroup {
    _Atomic int64_t pending;   /* nodes not finished, +1 until sealed */
    _Atomic bool sealed;
    _Atomic int32_t refs;      /* handle + nodes */
    _Atomic uint32_t done_seq; /* futex word for outside waiters */
    _Atomic int32_t n_waiters;
    _Atomic bool cancelled;
    int64_t deadline;
    int64_t tag;
    uint64_t id;
    DfSched *sched;
};

void df_group_node_added(DfGroup *g);
void df_group_node_finished(DfGroup *g);

/* ---------------------------------------------------------------- policy */

typedef struct DfPolicy DfPolicy;
typedef struct DfWaitFilter DfWaitFilter;

/* What a worker is doing, as thieves see it. */
enum {
    DF_WS_IDLE = 0, /* spinning: will take its own work within a microsecond */
    DF_WS_RUNNING,  /* inside a task body */
    DF_WS_PARKED,   /* asleep on its futex */
    DF_WS_WAITING,  /* inside a task's wait, with nothing that wait may run */
};

typedef struct DfWorkerState {
    _Atomic uint8_t v;
    _Atomic int64_t beat; /* last poll of the idle loop (env clock) */
    char pad[DF_CACHELINE - 16];
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
    bool lifo;                /* owner takes newest first (steal policy) */
    DfWorkerState *state;     /* n entries, or NULL (every worker counts as busy) */
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

/* Where a pushed node went, so that the caller can wake the right worker. */
typedef struct DfPlacement {
    int worker;      /* ready set of this worker, or -1 for a shared set */
    bool backlog;    /* the worker already had queued work */
    bool fenced;     /* the push ended with DF_FENCE_SEQ_CST (ready-set summary) */
} DfPlacement;

/* A policy: one file that defines its ops, plus one entry in the registry
 * (policy.c). */
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

const DfPolicyOps *df_policy_find(const char *name);

/* Free a trace's policy section (trace_policy.c). */
void df_trace_policy_free(DfTracePolicy *p);

#define DF_LEARN_MAX_MODULES 32

/* What the learned policy has measured (module ids < DF_LEARN_MAX_MODULES).
 * Not in dfsched.h: a program sees it through the trace's policy data. */
typedef struct DfLearnedModel {
    int n_modules;
    double size_scale[DF_LEARN_MAX_MODULES];       /* size(n) correction of each producer module */
    uint64_t samples_local[DF_LEARN_MAX_MODULES];  /* consumer runs with its bytes local */
    uint64_t samples_remote[DF_LEARN_MAX_MODULES]; /* ... with its bytes on another worker */
    double ns_per_byte[DF_N_LEVELS];               /* measured transfer cost per level (0: none) */
    double ref_ns_per_byte;                        /* speed of one trCost unit in the model */
    uint64_t samples;                              /* timed runs learnt from */
    uint64_t explored;                             /* nodes stolen on purpose */
} DfLearnedModel;

/* Snapshot of the learned model; -ENOTSUP unless the policy is "learned"
 * (exported for the tests). */
DF_SCHED_API int df_sched_learned_model(DfSched *sched, DfLearnedModel *out);

/* The learned policy's model (explored left 0); -ENOTSUP for other
 * policies. */
int df_policy_learned_model(DfPolicy *p, DfLearnedModel *out);
/* learned's snapshot op (policy_learned_trace.c). */
int df_policy_learned_snapshot(DfPolicy *p, const DfPolicySnapshotCtx *ctx, DfTrace *t);

extern const DfPolicyOps df_policy_fifo;
extern const DfPolicyOps df_policy_steal;
extern const DfPolicyOps df_policy_cost;
extern const DfPolicyOps df_policy_cost_local;
extern const DfPolicyOps df_policy_learned;

/* Formula (1): Cost(tid, c) over the node's inputs. */
uint64_t df_cost(const DfPolicyEnv *env, const DfNode *c, int tid);


/* ------------------------------------------------------------ summaries */

/* A bit per worker, summarised by topology domain (summary.c): leaf words
 * of at most 64 workers of one L3 / NUMA / package domain, and words of a
 * bit per child word above them, up to one root.  A reader learns "anyone,
 * and where, nearest first" from O(depth) cache lines, not O(N). */
typedef struct DfSumWord {
    DF_ALIGNED _Atomic uint64_t bits;
    int32_t parent;     /* word index, -1 at the root */
    int32_t first;      /* first child in DfSummary.kids */
    int32_t rep;        /* first worker below */
    uint8_t parent_bit; /* this word's bit in the parent */
    uint8_t n_kids;
    bool leaf;          /* kids are workers (else words) */
} DfSumWord;

typedef struct DfSummary {
    int n_words, n_kids;
    int root;
    int depth;          /* words from a leaf to the root */
    DfSumWord *words;
    int32_t *kids;
    int32_t *leaf_of;   /* per worker: its leaf word */
    uint8_t *bit_of;    /* per worker: its bit there */
} DfSummary;

/* Domains from `topo` (NULL: index order only).  0 or -1 (memory). */
int df_summary_init(DfSummary *s, const struct DfTopo *topo, int n_workers);
void df_summary_fini(DfSummary *s);
/* Set w's bit (and its ancestors' as words go non-zero); true if it was
 * clear.  seq_cst RMWs. */
bool df_summary_set(DfSummary *s, int w);
/* Clear w's bit at the leaf; returns the leaf word before. */
uint64_t df_summary_clear_bit(DfSummary *s, int w);
/* w's leaf word went to zero: clear its bit above.  True when a bit had to
 * be restored because a setter raced: the caller does a wake check. */
bool df_summary_clear_up(DfSummary *s, int w);
/* Bit b of word wi is set but its child word is zero: clear it (true:
 * restored, as above). */
bool df_summary_clear_stale(DfSummary *s, int wi, int b);
/* A worker whose bit is set below word `wi`, `bits` being the bits of wi
 * to choose from (random with rng, else the lowest), or -1.  Clears stale
 * ancestor bits on the way (*restored as above); counts words read. */
int df_summary_pick(DfSummary *s, int wi, uint64_t bits, uint64_t *rng, unsigned *lines,
                    bool *restored);
/* One of the set bits of `bits` (non-zero): at random with rng, else the
 * lowest. */
int df_summary_random_bit(uint64_t bits, uint64_t *rng);
/* Any bit set (the root, seq_cst). */
bool df_summary_any(DfSummary *s, unsigned *lines);

static inline uint64_t df_summary_word(const DfSummary *s, int wi)
{
    return atomic_load_explicit(&((DfSummary *)s)->words[wi].bits, memory_order_seq_cst);
}

static inline bool df_summary_test(const DfSummary *s, int w)
{
    return df_summary_word(s, s->leaf_of[w]) & (1ull << s->bit_of[w]);
}

/* --------------------------------------------------------- ready sets */

/* A worker's Ready set serves the earliest deadline first.  It is
 * DF_LANES Chase-Lev deques ("lanes") that only the owner pushes to (no
 * lock; anyone takes from the old end with one CAS; the owner may also take
 * from the new end), plus an inbox that any thread pushes to (lock-free
 * stack) for nodes registered by other threads (patent fig. 13).
 *
 * A node goes to the lane of its slack when it is pushed (deadline - now:
 * under DF_LANE0_NS, under DF_LANE1_NS, later, none); whoever takes from
 * the set takes the head of the lane whose head has the earliest deadline.
 * So the order is EDF between lanes and FIFO inside one, and a node can be
 * passed only by one pushed later into the same lane with an earlier
 * deadline: by less than the lane's width (4 ms in lane 0, 16 ms in lane
 * 1).  Nodes without a deadline come after every node that has one. */
#define DF_LANES 4
#define DF_LANE_NONE (DF_LANES - 1)
#define DF_LANE0_NS 4000000
#define DF_LANE1_NS 16000000

typedef struct DfSlot {
    _Atomic(DfNode *) node;
    _Atomic int64_t deadline;  /* the node's, readable while a thief takes it */
    _Atomic(const DfGroup *) group;
} DfSlot;

typedef struct DfDequeBuf {
    int64_t mask;
    struct DfDequeBuf *prev;  /* retired buffers, freed with the deque */
    DfSlot slots[];
} DfDequeBuf;

typedef struct DfLane {
    DF_ALIGNED _Atomic int64_t top;
    DF_ALIGNED _Atomic int64_t bottom;
    _Atomic(DfDequeBuf *) buf;
} DfLane;

typedef struct DfReady {
    DfLane lane[DF_LANES];
    DF_ALIGNED _Atomic(DfNode *) inbox;
    /* Owner only: lanes that may hold nodes (a thief may have emptied one). */
    DF_ALIGNED uint32_t live;
} DfReady;

/* What a task that waits inside its body may run meanwhile: nodes of the
 * group it waits for and nodes due before its own deadline.  Anything else
 * could keep it from resuming long after its group is done. */
struct DfWaitFilter {
    const DfGroup *group;
    int64_t deadline;
};

static inline bool df_wait_accepts(const DfWaitFilter *f, const DfGroup *g, int64_t deadline)
{
    return !f || g == f->group || deadline < f->deadline;
}

int df_ready_init(DfReady *r, int64_t capacity);
void df_ready_fini(DfReady *r);
/* Owner only: into the lane of the node's deadline. */
void df_ready_push(DfReady *r, DfNode *n);
/* Owner only: the most urgent node (newest first inside a lane when
 * `lifo`).  With a filter, only a node it accepts, looked for at both ends
 * of each lane: a waiting task's own jobs are the newest. */
DfNode *df_ready_pop(DfReady *r, bool lifo, const DfWaitFilter *f);
/* Anyone (thieves): the most urgent node at the old end of a lane that the
 * filter accepts (NULL: any). */
DfNode *df_ready_take(DfReady *r, const DfWaitFilter *f);
/* Anyone: push into the inbox. */
void df_ready_post(DfReady *r, DfNode *n);
/* Owner: move the inbox into the lanes, most urgent first (order by
 * deadline, then id, whatever order thieves left the inbox in).  With a
 * filter, only the nodes it accepts; the rest go back.  Returns the number
 * of nodes moved; *returned is set when nodes went back to the inbox. */
int df_ready_drain_inbox(DfReady *r, const DfWaitFilter *f, bool *returned);
/* Anyone but the owner: take the most urgent inbox node the filter
 * accepts, put the rest back.  *returned as above. */
DfNode *df_ready_steal_inbox(DfReady *r, const DfWaitFilter *f, bool *returned);
/* Earliest deadline at the old end of a lane (DF_NO_DEADLINE: none or
 * empty); for thieves choosing a victim. */
int64_t df_ready_urgency(const DfReady *r);
/* Identity of the set's oldest nodes now (changes when one is taken). */
uint64_t df_ready_head_key(const DfReady *r);
/* Cache lines of another worker's set that df_ready_empty reads (the
 * lanes' top and bottom, the inbox): a thief's probe, for counting. */
#define DF_READY_PROBE_LINES (2 * DF_LANES + 1)
/* Approximate number of nodes queued (lanes + non-empty inbox as 1). */
int64_t df_ready_size(const DfReady *r);
bool df_ready_empty(const DfReady *r);

/* One Ready set per worker, as the stealing policies keep them, with a
 * summary of the sets that may hold nodes (ready.c: the protocol). */
typedef struct DfReadySets {
    int n;
    DfReady *sets;   /* n entries, cache-line aligned */
    DfSummary work;  /* bit per worker whose set may be non-empty */
} DfReadySets;
int df_ready_sets_init(DfReadySets *rs, const struct DfTopo *topo, int n);
void df_ready_sets_fini(DfReadySets *rs);
/* True if any set may hold a node: one summary word, whatever n (a stale
 * bit answers true until a thief clears it).  Adds the words read to
 * *lines (may be NULL). */
bool df_ready_sets_any(DfReadySets *rs, unsigned *lines);
/* Nodes went into w's set (push, post, or given back): publish w's bit.
 * Begins with a seq_cst fence, after which the caller needs none to read
 * n_parked with a seq_cst load. */
void df_ready_sets_mark(DfReadySets *rs, int w);
/* w's set was seen empty: clear w's bit.  True when nodes arrived
 * meanwhile, or an ancestor bit had to be restored: the caller then does a
 * wake check (DfPolicyEnv.requeued). */
bool df_ready_sets_unmark(DfReadySets *rs, int w);
/* Take the most urgent node of another worker's set that the filter
 * accepts (lanes, then inbox).  *returned as for df_ready_steal_inbox. */
DfNode *df_ready_steal(DfReady *victim, const DfWaitFilter *f, bool *returned);

/* The running task's context. */
struct DfTask {
    DfSched *sched;
    DfNode *node;
    int worker;
};

/* A spinlock for the shared sets of the baseline policies. */
typedef struct DfSpin {
    _Atomic int locked;
} DfSpin;
void df_spin_lock(DfSpin *l);
void df_spin_unlock(DfSpin *l);

/* A cost-local worker's own state as a thief (one cache line). */
typedef struct DfThief {
    DF_ALIGNED uint64_t rng;
    uint64_t key;           /* head key of `victim` when it was last chosen */
    int32_t victim;         /* last victim chosen (sticky), -1 */
    _Atomic uint64_t lines; /* debug: summary words and sets read by steals */
} DfThief;

#define DF_THIEF_LINES_ADD(th, v)                                                                  \
    atomic_store_explicit(&(th)->lines,                                                            \
                          atomic_load_explicit(&(th)->lines, memory_order_relaxed) + (v),          \
                          memory_order_relaxed)

/* cost-local's state, shared with learned (which extends it). */
typedef struct DfCostLocal DfCostLocal;
struct DfCostLocal {
    DfPolicy base;
    DfReadySets rs;
    DfThief *thief;             /* per worker */
    DF_ALIGNED _Atomic uint32_t rr;
    /* Cost(tid, c) used for placement (formula (1) or a learned variant). */
    uint64_t (*cost)(DfCostLocal *cl, const DfNode *n, int tid);
    /* Learned: take from another worker on purpose now (may be NULL). */
    DfNode *(*explore)(DfCostLocal *cl, int self);
};
int df_cost_local_init(DfCostLocal *cl, const DfPolicyEnv *env);
void df_cost_local_fini(DfCostLocal *cl);
DfPlacement df_cost_local_push(DfPolicy *p, int self, DfNode *n);
DfNode *df_cost_local_pop(DfPolicy *p, int self, const DfWaitFilter *f);
bool df_cost_local_has_work(DfPolicy *p, int self, unsigned *lines);
bool df_cost_local_queued(DfPolicy *p, int w);
/* Steal the oldest node from the nearest non-empty victim of `self`.
 * Victims spinning idle are skipped (they run their own nodes, which stay
 * local) unless `explore` is set. */
DfNode *df_cost_local_steal(DfCostLocal *cl, int self, bool explore, const DfWaitFilter *f);
/* One draw of the exploration coin for worker `self`. */
bool df_cost_local_explore_now(DfCostLocal *cl, int self);

/* A tiny xorshift generator. */
static inline uint64_t df_rand_next(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    return x;
}

/* ------------------------------------------------------------ topology */

/* Levels PU..NUMA have a domain key per worker: two workers share level
 * l's domain when their keys at l are equal. */
#define DF_TOPO_KEYS (DF_LEVEL_NUMA - DF_LEVEL_PU + 1)

typedef struct DfTopo {
    int n_workers;
    int n_cores;           /* cores of the CPU set on the real machine */
    int n_pus;
    bool oversubscribed;
    bool synthetic;
    void *real;            /* hwloc_topology_t */
    const void **pin_sets; /* hwloc_const_bitmap_t per worker, NULL when not pinning */
    void **pin_owned;      /* the pin sets allocated here (NULL: the topology's) */
    cpu_set_t **pin_cpus;  /* the same as CPU_ALLOC sets (pinning allocates nothing) */
    size_t *pin_bytes;     /* their CPU_ALLOC_SIZE */
    int *model_pu;         /* per worker: PU logical index in the model topology */
    uint64_t *keys;        /* n x DF_TOPO_KEYS: domain of each worker per level */
    int *nearest;          /* per worker: the other worker of least trCost */
    uint32_t level_cost[DF_N_LEVELS];
    char desc[256];
} DfTopo;

int df_topo_init(DfTopo *t, const DfSchedConfig *cfg, DfError *err);
void df_topo_fini(DfTopo *t);
/* Pin the calling thread as worker `w` (no-op when not pinning). */
void df_topo_pin(const DfTopo *t, int w);
/* Union of the workers' pin sets; -ENOENT when not pinning. */
int df_topo_cpus(const DfTopo *t, cpu_set_t *out);
/* Compute the levels and trCost of `n_workers` workers on a topology
 * string (NULL: real machine) without creating a scheduler (dfsim, tests). */
int df_topo_model(DfTopo *t, const char *topology, int n_workers, DfCostModel model,
                  const uint32_t *level_cost, DfError *err);

/* Level between workers a and b: the lowest level whose domain they share
 * (N x levels keys instead of an N x N table; symmetric). */
static inline DfLevel df_topo_level(const DfTopo *t, int a, int b)
{
    if (a == b)
        return DF_LEVEL_SELF;
    const uint64_t *ka = t->keys + (size_t)a * DF_TOPO_KEYS;
    const uint64_t *kb = t->keys + (size_t)b * DF_TOPO_KEYS;
    for (int l = 0; l < DF_TOPO_KEYS; l++)
        if (ka[l] == kb[l])
            return (DfLevel)(DF_LEVEL_PU + l);
    return DF_LEVEL_MACHINE;
}

/* trCost(a, b): moving a byte from producer a's worker to consumer b's. */
static inline uint32_t df_topo_trcost(const DfTopo *t, int a, int b)
{
    return t->level_cost[df_topo_level(t, a, b)];
}

/* ----------------------------------------------------------------- trace */

typedef struct DfTraceBuf {
    DfTraceEvent *events;
    DfTraceInput *inputs;
    DfTraceWait *waits;
    size_t cap_events;
    size_t cap_inputs;
    size_t cap_waits;
    _Atomic size_t n_events;
    _Atomic size_t n_waits;
    size_t n_inputs;
    _Atomic uint64_t dropped;
} DfTraceBuf;

/* ---------------------------------------------------------------- worker */

/* A worker's counters: written only by the worker, read by anyone.  Relaxed
 * atomics compile to plain moves (no lock prefix) yet make the concurrent
 * reads of df_sched_stats() well defined. */
typedef struct DfCounters {
    _Atomic uint64_t tasks_run, tasks_stolen, tasks_explored, tasks_skipped;
    _Atomic uint64_t idle_ns, busy_ns, parks, wakeups_sent;
    _Atomic uint64_t bytes_local, bytes_level[DF_N_LEVELS];
    _Atomic uint64_t max_wait_depth;
    _Atomic uint64_t wait_fallbacks; /* waits that ran a node their filter refused */
    _Atomic uint64_t idle_rounds, idle_lines; /* polls while idle, shared lines they read */
} DfCounters;

#define DF_WCTR_ADD(w, field, v)                                                                   \
    atomic_store_explicit(&(w)->ctr.field,                                                         \
                          atomic_load_explicit(&(w)->ctr.field, memory_order_relaxed) + (v),       \
                          memory_order_relaxed)

typedef struct DfWorker {
    DF_ALIGNED DfSched *sched;
    int index;
    pthread_t thread;
    DfCache *cache;
    _Atomic uint32_t park_word;     /* futex */
    _Atomic(DfGroup *) waiting_on;  /* group awaited while parked */
    uint32_t wait_depth;
    uint64_t rng;
    DfCounters ctr;                 /* written by the owner only */
    _Atomic(DfTraceBuf *) trace;
    uint64_t runs_seq;              /* nodes run (owner only): detects nesting */
    uint8_t state;                  /* last value stored in sched->state[index] */
    uintptr_t stack_base;           /* highest address of the worker's stack */
    size_t stack_size;
    DfNode *current;                /* node whose body runs now (innermost) */
    int64_t load_nested_ns;         /* load.c: time of timed bodies run (owner only) */
    uint32_t load_open;             /* load.c: timed bodies on the stack (owner only) */
} DfWorker;

#define DF_MAX_MODULES 256

struct DfSched {
    _Atomic int refs;
    DfSchedConfig cfg;
    char policy_name[32];
    DfTopo topo;
    int n_workers;
    DfWorker *workers;
    DfWorkerState *state;     /* per worker, read by thieves */
    DfPolicy *policy;
    const DfPolicyOps *pops;
    size_t node_size;
    bool policy_timing;       /* the policy learns from a sample of exec times */
    _Atomic bool tracing;
    _Atomic bool stop;
    _Atomic int started;
    DF_ALIGNED _Atomic int n_parked; /* the park handshake's word */
    DfSummary parked;         /* bit per parked worker, to wake the nearest */
    DF_ALIGNED _Atomic uint64_t next_node_id;
    _Atomic uint64_t next_group_id;
    _Atomic uint64_t external_submits;
    pthread_mutex_t cache_lock;
    pthread_key_t cache_key;
    DfCache *caches;          /* all caches */
    DfCache *orphans;         /* caches of exited outside threads */
    pthread_mutex_t module_lock;
    int n_modules;
    char *module_names[DF_MAX_MODULES];
    pthread_mutex_t trace_lock;
    void *trace_retired;      /* replaced trace buffers (under trace_lock) */
};

/* Nodes run so far that a policy flagged DF_NF_EXPLORED, all workers. */
uint64_t df_sched_explored(const DfSched *s);

/* Worker structure of the calling thread for `sched`, or NULL. */
DfWorker *df_current_worker(const DfSched *sched);

/* A node became ready: hand it to the policy and wake a worker if needed.
 * `self` is the calling worker or NULL. */
void df_make_ready(DfSched *s, DfWorker *self, DfNode *n);

/* Publish what worker w is doing (only stores when it changes). */
static inline void df_worker_set_state(DfWorker *w, uint8_t v)
{
    if (w->state != v) {
        w->state = v;
        atomic_store_explicit(&w->sched->state[w->index].v, v, memory_order_relaxed);
    }
}

/* The same from inside a running task (submit, unhold, spawn): that task
 * goes on running, so a node placed in its worker's own ready set would
 * wait for it to end; a parked thief is woken as if the set had a backlog
 * (an HEVC WPP row unholds the next row, then decodes for a long time). */
void df_make_ready_running(DfSched *s, DfWorker *self, DfNode *n);

/* Run a node on worker `w` (body, accounting, completion). */
void df_run_node(DfWorker *w, DfNode *n);

/* Release successors and the group after a node ran. */
void df_node_complete(DfWorker *w, DfNode *n);

/* Node memory. */
void df_node_unref(DfNode *n, const DfCache *self);

/* Wake parked workers: the preferred one if parked, else (if `any`) another. */
void df_wake(DfSched *s, int preferred, bool any);
/* The same, choosing the other worker nearest to `near` (-1: any). */
void df_wake_near(DfSched *s, int preferred, bool any, int near);
/* Nothing to run: spin, then park (see worker.c). */
void df_worker_idle(DfWorker *w, DfGroup *g, bool nested);
/* A worker thread's body: pop and run nodes until the scheduler stops. */
void *df_worker_main(void *arg);
/* Stop every worker and join it. */
void df_workers_stop(DfSched *s);
/* DfPolicyEnv.requeued for the threaded scheduler (ctx is the DfSched). */
void df_sched_requeued(void *ctx, int w);
/* Nodes wait in worker w's own set. */
bool df_ready_own_empty(DfSched *s, int w);

/* Wake workers parked while waiting on `g`, and outside waiters. */
void df_wake_group_waiters(DfGroup *g);
/* A thread that is not a worker waits for `g` to be done: it sleeps. */
void df_group_wait_outside(DfGroup *g);

/* CPU time of the calling thread (a system call, unlike df_now_ns()); 0
 * if unavailable.  Only when tracing. */
int64_t df_thread_cpu_ns(void);
/* Record a finished node in the worker's trace buffer. */
void df_trace_record(DfWorker *w, const DfNode *n, int64_t start, int64_t end, int64_t cpu_ns);
/* Record that the node running on w waited for g from start to end. */
void df_trace_record_wait(DfWorker *w, const DfGroup *g, int64_t start, int64_t end);
/* Free the trace buffers (workers joined). */
void df_trace_fini(DfSched *s);

/* Futex wrappers. */
void df_futex_wait(_Atomic uint32_t *addr, uint32_t expected);
void df_futex_wake(_Atomic uint32_t *addr, int n);

#endif /* DF_SCHED_INTERNAL_H */
