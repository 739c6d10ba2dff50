/* dfsched internals shared by the scheduler's files, dfsim and the
 * white-box tests (named apart from framework/'s internal header).  Not a
 * public API.  Policies see only policy.h, which this header includes. */
#ifndef DF_SCHED_INTERNAL_H
#define DF_SCHED_INTERNAL_H

#include "dfsched.h"

#include <pthread.h>
#include <stdatomic.h>

#include "policy.h"

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
int df_set_error(DfError *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ------------------------------------------------------------------ slabs */

typedef struct DfCache DfCache;

/* Fixed-size object slab owned by one thread.  Frees from other threads go
 * to a lock-free remote list that only the owner drains (no ABA). */
typedef struct DfSlab {
    void *local;            /* owner-only free list */
    _Atomic(void *) remote; /* frees from other threads */
    void *chunks;           /* chunk list, freed with the cache */
    size_t slot_size;       /* header + object */
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
    int worker; /* -1 for outside threads */
    DfSlab nodes;
    DfSlab tasks; /* short nodes (df_spawn, untraced): DF_NODE_SHORT_SIZE */
    DfSlab edges;
    DfSlab blocks;
    DfSlab groups;
    _Atomic uint64_t chunk_count; /* slab chunks allocated, all slabs */
    uint64_t next_id, id_end;     /* node ids handed out by this cache */
    DfCache *next_all;            /* sched->caches list (under sched->cache_lock) */
    DfCache *next_free;           /* orphaned outside-thread caches */
};

/* The calling thread's cache for `sched` (creating it on first use). */
DfCache *df_cache_get(DfSched *sched);
void df_cache_fini(DfCache *cache);
/* Worker `worker`'s cache, made when the scheduler starts. */
DfCache *df_cache_new_for_worker(DfSched *s, int worker);
/* pthread key destructor: an exiting outside thread's cache is orphaned. */
void df_cache_thread_exit(void *p);

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
/* The next input slot, counted in n_inputs and its `bytes` in in_bytes,
 * for the caller to fill: df_node_input_append without the copy. */
DfInput *df_node_input_slot(DfNode *n, DfInputBlock *block, uint64_t bytes);
/* Hand every input block of `n` to `free_block`. */
void df_node_free_input_blocks(DfNode *n, void (*free_block)(void *block, const void *ctx),
                               const void *ctx);

/* ----------------------------------------------------------------- groups */

struct DfGroup {
    _Atomic int64_t pending; /* nodes not finished, +1 until sealed */
    _Atomic bool sealed;
    _Atomic int32_t refs;      /* handle + nodes */
    _Atomic uint32_t done_seq; /* futex word for outside waiters */
    _Atomic int32_t n_waiters;
    /* The first worker that parked waiting on it: index + 1; 0 none yet;
     * -1 several (then the group's finisher looks at every worker). */
    _Atomic int32_t parked_worker;
    _Atomic bool cancelled;
    /* Its nodes in the background queue (background.c), changed under the
     * queue's lock: a worker waiting for the group reads it, not the
     * queue, to know whether to stay up for one. */
    _Atomic int32_t n_background;
    int64_t deadline;
    int64_t tag;
    uint64_t id;
    DfSched *sched;
};

void df_group_node_added(DfGroup *g);
void df_group_node_finished(DfGroup *g);
void df_group_nodes_finished(DfGroup *g, int64_t k);

/* Free a trace's policy section (trace_policy.c). */
void df_trace_policy_free(DfTracePolicy *p);

/* The running task's context. */
struct DfTask {
    DfSched *sched;
    DfNode *node;
    int worker;
};

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
    _Atomic uint64_t wait_fallbacks;          /* waits that ran a node their filter refused */
    _Atomic uint64_t jobs_inline;             /* batches df_jobs_run ran without nodes */
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
    _Atomic uint32_t park_word;    /* futex */
    _Atomic(DfGroup *) waiting_on; /* group awaited while parked */
    uint32_t wait_depth;
    uint64_t rng;
    DfCounters ctr; /* written by the owner only */
    _Atomic(DfTraceBuf *) trace;
    uint64_t runs_seq;    /* nodes run (owner only): detects nesting */
    uint8_t state;        /* last value stored in sched->state[index] */
    uintptr_t stack_base; /* highest address of the worker's stack */
    size_t stack_size;
    DfNode *current;        /* node whose body runs now (innermost) */
    int64_t load_nested_ns; /* load.c: time of timed bodies run (owner only) */
    uint32_t load_open;     /* load.c: timed bodies on the stack (owner only) */
    DfGroup *done_group;    /* finished nodes of it not yet counted (group.c) */
    int64_t done_count;
} DfWorker;

#define DF_MAX_MODULES 256

/* Background work (background.c): nodes due at or past
 * DF_DEADLINE_BACKGROUND, earliest first, for workers with nothing else. */
typedef struct DfBackground {
    /* Nodes queued: the one word an idle worker reads for them. */
    DF_ALIGNED _Atomic int64_t n;
    pthread_mutex_t lock;
    DfNode **heap; /* under lock: min-heap by (deadline, id) */
    int64_t len, cap;
} DfBackground;

struct DfSched {
    _Atomic int refs;
    DfSchedConfig cfg;
    char policy_name[32];
    DfTopo topo;
    int n_workers;
    /* Stream accounts (load.c), counted under the registry's lock and read
     * without it at every slice batch (df_sched_n_streams): read-mostly,
     * beside n_workers.  Relaxed: a count, nothing is published through
     * it. */
    _Atomic int n_streams;
    DfWorker *workers;
    DfWorkerState *state; /* per worker, read by thieves */
    DfPolicy *policy;
    const DfPolicyOps *pops;
    size_t node_size;
    bool policy_timing; /* the policy learns from a sample of exec times */
    _Atomic bool tracing;
    _Atomic bool stop;
    _Atomic int started;
    /* Bit per parked worker, to wake the nearest; its root is the park
     * handshake's word (worker.c). */
    DfSummary parked;
    DfBackground background;
    DF_ALIGNED _Atomic uint64_t next_node_id;
    _Atomic uint64_t next_group_id;
    /* Written on every submit from outside: its own line. */
    DF_ALIGNED _Atomic uint64_t external_submits;
    DF_ALIGNED pthread_mutex_t cache_lock;
    pthread_key_t cache_key;
    DfCache *caches;  /* all caches */
    DfCache *orphans; /* caches of exited outside threads */
    pthread_mutex_t module_lock;
    int n_modules;
    char *module_names[DF_MAX_MODULES];
    pthread_mutex_t trace_lock;
    void *trace_retired; /* replaced trace buffers (under trace_lock) */
};

/* a before b in the order ready nodes are taken in: earliest deadline
 * first, creation order on ties (a total order). */
static inline bool df_node_urgent_before(const DfNode *a, const DfNode *b)
{
    return a->deadline < b->deadline || (a->deadline == b->deadline && a->id < b->id);
}

/* a before b as the node a finishing worker keeps (continuation) among
 * the successors it released: the most urgent, and among equally urgent
 * ones a node of the finished node's `module` (>= 0) first -- the next
 * link of the chain the worker was on, a decoder's next decode task after
 * its decode task, whose codec context and reference rows are here.  In
 * creation order the frame's output band (older) was kept and the next
 * decode task queued behind it, where a thief took it after one poll and
 * ran it away from its slice jobs' rows, which stay placed here (dfsim,
 * 1080p H.264 8 slices, 256 workers x 16 streams: a third of the decode
 * tasks stolen, a frame 4 % longer, 0.93 x steal's frame rate). */
static inline bool df_node_kept_before(const DfNode *a, const DfNode *b, int32_t module)
{
    if (a->deadline != b->deadline)
        return a->deadline < b->deadline;
    const bool as = module >= 0 && a->module == module, bs = module >= 0 && b->module == module;
    return as != bs ? as : a->id < b->id;
}

/* The worker a finished node's successor reads its input of `bytes` from:
 * the one that ran it (`ran_on`), except that a stolen node's input of no
 * bytes -- the next link of a chain, a decoder's next decode task, whose
 * placement follows the worker it names -- names the worker the node was
 * placed on.  A thief that helps a stream once then does not take the
 * stream along: its next decode task goes back.  When it did, streams
 * drifted between workers a steal at a time, and at saturation some
 * carried 10 streams and others 21 (dfsim, 1080p MPEG-2 one task a frame,
 * 8 workers x 120 aligned paced streams, frame 240), overloading the
 * latter when every stream reached its I-frames. */
static inline int32_t df_node_input_worker(const DfNode *n, uint64_t bytes, int32_t ran_on)
{
    return bytes == 0 && (n->flags & DF_NF_STOLEN) && n->placed >= 0 ? n->placed : ran_on;
}

/* A waiter whose filter refuses the nodes of its own set relies on other
 * workers to take them (its group's nodes may be queued behind them).
 * With one worker, or when every other worker is inside a wait of its own
 * for this long, nobody will: it runs the most urgent of them itself
 * (df_sched_wait; dfsim replays the same rule). */
#define DF_WAIT_PATIENCE_NS 200000

/* The fallback first looks for the group's nodes behind the refused ones:
 * it moves each refused node it would run to the back of the set (made
 * ready again: still queued, still visible to thieves) until a node of
 * the group comes up, the refused ones come round again, or this many
 * moved.  Only then does it run one.  Without that, a waiter whose jobs
 * sit between two unrelated nodes (a lane is taken at its ends) ran the
 * older one first, and was trapped under it; a LIFO owner (steal) takes
 * back what it moved, and runs it as before. */
#define DF_WAIT_ROTATE_MAX 4096

/* Every worker but `self` is inside a wait with nothing that wait may run
 * (DF_WS_WAITING).  Relaxed: a hint that a later round re-reads. */
static inline bool df_others_waiting(const DfWorkerState *state, int n_workers, int self)
{
    for (int i = 0; i < n_workers; i++)
        if (i != self && atomic_load_explicit(&state[i].v, memory_order_relaxed) != DF_WS_WAITING)
            return false;
    return true;
}

/* A node that goes to the background queue when it is ready. */
static inline bool df_node_background(const DfNode *n)
{
    return n->deadline >= DF_DEADLINE_BACKGROUND && n->deadline != DF_NO_DEADLINE;
}

int df_background_init(DfBackground *b);
void df_background_fini(DfBackground *b);
/* Queue a background node; false (no memory): queue it as any other. */
bool df_background_push(DfSched *s, DfNode *n);
/* The most urgent background node `f` accepts (NULL: any), or NULL (none,
 * or the queue is busy: look again). */
DfNode *df_background_take(DfSched *s, const DfWaitFilter *f);
/* Background work a worker idle in a wait for `g` (NULL: not waiting)
 * should stay awake for: any (g NULL), or g's own nodes. */
bool df_background_may_run(DfSched *s, const DfGroup *g);

/* Successors a worker runs in a row by continuation at most (df_run_node,
 * and dfsim's model of it); then the next one is queued, so that older
 * nodes of the own set due as soon (no deadline among them, say) get their
 * turn. */
#define DF_CONTINUE_MAX 64

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

/* A node worker `self` took but will not run now (a wait's fallback looking
 * behind it): made ready again, wherever the policy places it. */
void df_node_requeue(DfSched *s, DfWorker *self, DfNode *n);

/* The wake-up half of df_make_ready, for a node the policy placed at `p`
 * already (push_keep that did not keep it). */
void df_make_ready_placed(DfSched *s, DfWorker *self, DfPlacement p);

/* Run a node on worker `w` (body, accounting, completion), then the
 * successors it keeps running (continuation, a bounded loop).  `waited`:
 * the group a wait runs n for (NULL: the worker loop); a wait continues
 * only with nodes of that group. */
void df_run_node(DfWorker *w, DfNode *n, const DfGroup *waited);

/* Release successors and the group after a node ran.  With `keep`, the
 * most urgent successor that the policy places on w (and is of group
 * `waited` when that is not NULL) is not queued but returned, to run
 * next; else NULL. */
DfNode *df_node_complete(DfWorker *w, DfNode *n, bool keep, const DfGroup *waited);

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

/* Completions counted late (group.c): w finished a node of g; count what
 * w holds back; g is done as far as w can tell (flushing if so). */
void df_worker_node_done(DfWorker *w, DfGroup *g);
void df_worker_flush_done(DfWorker *w);
bool df_group_done_by(const DfGroup *g, DfWorker *w);

/* Wake workers parked while waiting on `g`, and outside waiters. */
void df_wake_group_waiters(DfGroup *g);
/* Worker w is about to park waiting on g (before it counts in n_waiters). */
void df_group_parking(DfGroup *g, int w);
/* A thread that is not a worker waits for `g` to be done: it sleeps. */
bool df_group_wait_outside_until(DfGroup *g, int64_t until_ns);

/* CPU time of the calling thread (a system call, unlike df_now_ns()); 0
 * if unavailable.  Only when tracing. */
int64_t df_thread_cpu_ns(void);
/* Record a finished node in the worker's trace buffer. */
void df_trace_record(DfWorker *w, const DfNode *n, int64_t start, int64_t end, int64_t cpu_ns);
/* Record that the node running on w waited for g from start to end. */
void df_trace_record_wait(DfWorker *w, const DfGroup *g, int64_t start, int64_t end);
/* Free the trace buffers (workers joined). */
void df_trace_fini(DfSched *s);

/* Futex wrappers.  The wait returns once *addr != expected, on a wake-up,
 * spuriously, or at until_ns (CLOCK_MONOTONIC; INT64_MAX: no limit). */
void df_futex_wait_until(_Atomic uint32_t *addr, uint32_t expected, int64_t until_ns);
static inline void df_futex_wait(_Atomic uint32_t *addr, uint32_t expected)
{
    df_futex_wait_until(addr, expected, INT64_MAX);
}
void df_futex_wake(_Atomic uint32_t *addr, int n);

#endif /* DF_SCHED_INTERNAL_H */
