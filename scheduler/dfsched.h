/* dfsched — a user-space dataflow scheduler (patent JP4621786B2).
 *
 * A program is a set of serial basic modules plus a parallel execution
 * control description (a module table).  The table is compiled once into
 * graph-generation information and instantiated per input (per frame) into
 * nodes of a dataflow task graph; tasks may add nodes at run time.  Pinned
 * workers take ready nodes and run them; the placement policy uses the
 * patent's formula (1):
 *
 *     Cost(tid, c) = sum over n in Pred(c) of size(n) * trCost(n->tid, tid)
 *
 * Threading rules: every function may be called from any thread unless noted.
 * A node's dependencies and inputs may only be added before it is submitted,
 * by one thread at a time: the creator, or a task the creator handed the
 * node to (with a happens-before edge, e.g. through a dependency), which
 * then submits it.
 */
#ifndef DFSCHED_H
#define DFSCHED_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Marks the public API.  The library is built with -fvisibility=hidden: a
 * shared object that links it can export these functions and none of the
 * internals, which programs linking it statically still reach (dfsim and
 * the white-box tests use sched_internal.h). */
#ifndef DF_SCHED_API
#define DF_SCHED_API __attribute__((visibility("default")))
#endif

typedef struct DfSched DfSched;
typedef struct DfNode DfNode;
typedef struct DfGroup DfGroup;
typedef struct DfTask DfTask;
typedef struct DfGraphInfo DfGraphInfo;
typedef struct DfInstance DfInstance;
typedef struct DfLoad DfLoad;

/* A basic module's body.  `task` is the running context; `arg` the user data. */
typedef void (*DfTaskFn)(DfTask *task, void *arg);

/* Error details filled by functions that take a DfError pointer (may be NULL). */
typedef struct DfError {
    int code;      /* negative errno value */
    char msg[256]; /* one human-readable line */
} DfError;

/* No deadline: such nodes sort after every node that has one. */
#define DF_NO_DEADLINE INT64_MAX

/* Background work: a node due at or past DF_DEADLINE_BACKGROUND is not
 * placed on a worker.  It waits in the scheduler's background queue,
 * earliest deadline first, and runs only on a worker that has nothing
 * else to run (its own set empty, nothing to steal), or on one waiting for
 * its group; it never delays a node with an ordinary deadline (or none).
 * docs/scheduler.md, "Background work". */
#define DF_DEADLINE_BACKGROUND (INT64_C(1) << 61)

/* The background deadline of work due at `deadline` (CLOCK_MONOTONIC ns;
 * DF_NO_DEADLINE: none, taken as `now`): background work runs by these,
 * earliest first, as ordinary work by its deadlines. */
static inline int64_t df_deadline_background(int64_t deadline, int64_t now)
{
    if (deadline == DF_NO_DEADLINE || deadline < 0 || deadline >= DF_DEADLINE_BACKGROUND)
        deadline = now;
    return DF_DEADLINE_BACKGROUND + deadline;
}

/* ---------------------------------------------------------------- topology */

/* Distance classes between two workers, from the smallest level they share. */
typedef enum DfLevel {
    DF_LEVEL_SELF = 0, /* the same worker: trCost 0 */
    DF_LEVEL_PU,       /* same core: SMT siblings, or two workers on one PU */
    DF_LEVEL_L2,       /* share an L2 (or L1) cache */
    DF_LEVEL_L3,       /* share an L3 cache */
    DF_LEVEL_NUMA,     /* same NUMA node / package, no shared cache */
    DF_LEVEL_MACHINE,  /* different NUMA nodes or packages */
    DF_N_LEVELS
} DfLevel;

/* Name of a level ("self", "pu", "l2", "l3", "numa", "machine"). */
DF_SCHED_API const char *df_level_name(DfLevel level);

/* How trCost is derived from the levels. */
typedef enum DfCostModel {
    DF_COST_HIER = 0, /* per-level weights (default 0,1,2,4,8,16) */
    DF_COST_FLAT,     /* the patent's 0/1 cost */
} DfCostModel;

/* --------------------------------------------------------------- policies */

/* Placement policies come from one registry (scheduler/policy.c), which
 * the dfdec element's enum, dfbench, dfsim and the docs read.  Indices are
 * stable: a new policy is appended. */
typedef struct DfPolicyInfo {
    const char *name;  /* for DfSchedConfig.policy */
    const char *blurb; /* one line for help texts and property docs */
} DfPolicyInfo;

/* The policy of DfSchedConfig.policy NULL or "". */
#define DF_POLICY_DEFAULT "cost-local"

/* Number of policies. */
DF_SCHED_API int df_policy_count(void);

/* Policy `i` (0 <= i < df_policy_count()), or NULL. */
DF_SCHED_API const DfPolicyInfo *df_policy_info(int i);

/* Index of the policy named `name`, or -1. */
DF_SCHED_API int df_policy_index(const char *name);

/* Names of all policies in registry order, NULL-terminated. */
DF_SCHED_API const char *const *df_policy_names(void);

/* ------------------------------------------------------------- scheduler */

/* Trace events per worker that dfplay --trace and dfdec's trace-file keep
 * (about 13 MB per worker, held from the start; a 1080p frame is 10-30
 * tasks): minutes of HD video on 2 workers; later events are counted as
 * dropped in the trace. */
#define DF_TRACE_DEFAULT_CAPACITY ((size_t)1 << 16)

typedef struct DfSchedConfig {
    int n_workers;                    /* 0: one per core of the process's CPU set */
    const char *policy;               /* a df_policy_info() name; NULL: DF_POLICY_DEFAULT */
    const char *topology;             /* NULL: the real machine (hwloc); else an hwloc
                                       * synthetic string, e.g. "package:2 l3:2 core:4 pu:2" */
    const char *cpuset;               /* NULL: the process's CPU set; else a list "0-3,6" */
    int poll_us;                      /* idle spin before parking; -1: poll mode, never park */
    bool pin;                         /* pin workers to cores (default true) */
    DfCostModel cost_model;           /* default DF_COST_HIER */
    uint32_t level_cost[DF_N_LEVELS]; /* weights per level when non-zero (SELF ignored) */
    size_t trace_capacity;            /* trace events kept per worker; 0: tracing off */
    size_t stack_size;                /* worker stack bytes; 0: 8 MiB */
    uint64_t seed;                    /* for random victims and exploration; 0: fixed default */
    double explore_rate; /* exploring policies: share of dispatches stolen on purpose */
    bool eager_jobs;     /* df_jobs_run always makes nodes (a trace then has every job);
                          * default false: inline on one worker (df_jobs_run) */
} DfSchedConfig;

/* Fill `cfg` with the defaults documented above. */
DF_SCHED_API void df_sched_config_init(DfSchedConfig *cfg);

/* Create a scheduler and start its workers.  Returns 0 or a negative errno. */
DF_SCHED_API int df_sched_new(const DfSchedConfig *cfg, DfSched **out, DfError *err);

/* Take another reference on a scheduler (shared by several decoders). */
DF_SCHED_API DfSched *df_sched_ref(DfSched *sched);

/* Drop a reference; the last one stops and joins the workers.  Every group
 * must be finished before that. */
DF_SCHED_API void df_sched_unref(DfSched *sched);

/* The process-wide shared scheduler, created with `cfg` (or defaults) on first
 * use; later callers get the same one with a new reference. */
DF_SCHED_API int df_sched_get_shared(const DfSchedConfig *cfg, DfSched **out, DfError *err);

/* The CPUs the workers are pinned to (their union), for threads created on
 * a worker that should run beside them rather than on that worker's core
 * (libavcodec's frame threads).  0, or -ENOENT when workers are not pinned.
 * A cpu_set_t holds CPUs below CPU_SETSIZE (1024) only: this one leaves out
 * any above; on larger machines use the sized form. */
DF_SCHED_API int df_sched_worker_cpus(const DfSched *sched, cpu_set_t *out);

/* The same for any number of CPUs: one past the highest CPU a worker is
 * pinned to (-ENOENT when not pinned), to size a set with CPU_ALLOC; then
 * the union into that set of `setsize` bytes (CPU_ALLOC_SIZE), -ERANGE
 * when a CPU does not fit. */
DF_SCHED_API int df_sched_worker_cpus_end(const DfSched *sched);
DF_SCHED_API int df_sched_worker_cpus_s(const DfSched *sched, size_t setsize, cpu_set_t *out);

/* Number of workers. */
DF_SCHED_API int df_sched_n_workers(const DfSched *sched);

/* True when df_jobs_run() spreads a batch's jobs over the workers (two or
 * more workers, or DfSchedConfig.eager_jobs); false when every batch runs
 * inline, in order, on the worker that calls it. */
DF_SCHED_API bool df_sched_splits_jobs(const DfSched *sched);

/* Name of the policy in use. */
DF_SCHED_API const char *df_sched_policy_name(const DfSched *sched);

/* Index of the calling thread's worker in `sched`, or -1 if it is not one. */
DF_SCHED_API int df_sched_current_worker(const DfSched *sched);

/* Id of the node whose body the calling worker runs (the innermost one when
 * a waiting body helps), or 0 outside a body or off the workers.  Lets code
 * called from a body (e.g. libavcodec's get_buffer2 inside a decode task)
 * name the producer of the data it writes in df_node_add_input(). */
DF_SCHED_API uint64_t df_sched_current_node_id(const DfSched *sched);

/* trCost from worker `producer` to worker `consumer` (workers in range). */
DF_SCHED_API uint32_t df_sched_trcost(const DfSched *sched, int producer, int consumer);

/* The level of the topology the two workers share (DF_LEVEL_SELF: same). */
DF_SCHED_API DfLevel df_sched_level(const DfSched *sched, int producer, int consumer);

/* True when more workers than cores were requested. */
DF_SCHED_API bool df_sched_oversubscribed(const DfSched *sched);

/* Fill `buf` with a one-line description of workers, cores and topology. */
DF_SCHED_API void df_sched_describe(const DfSched *sched, char *buf, size_t len);

/* Register (or look up) a module name for statistics and learning.
 * Returns its id (>= 0).  Ids are shared by all users of the scheduler. */
DF_SCHED_API int df_sched_module_id(DfSched *sched, const char *name);

/* Name of a module id, or "?" when unknown. */
DF_SCHED_API const char *df_sched_module_name(const DfSched *sched, int module);

/* ----------------------------------------------------------------- groups */

/* A group collects nodes (e.g. all tasks of one frame) so that they can be
 * awaited or cancelled together.  `deadline` (ns, CLOCK_MONOTONIC, or
 * DF_NO_DEADLINE) is inherited by nodes created in the group. */
DF_SCHED_API DfGroup *df_group_new(DfSched *sched, int64_t deadline);

/* No more nodes will be added to the group from outside its own nodes: it
 * can be done once they have finished.  Until then (or until the first
 * df_sched_wait() or df_group_release(), which seal it too) the group is
 * never done, so that nodes added one by one cannot make it look done
 * between two of them.  Idempotent. */
DF_SCHED_API void df_group_seal(DfGroup *group);

/* Seal the group and drop the creator's reference.  Allowed at any time;
 * memory is kept until the last node of the group has finished. */
DF_SCHED_API void df_group_release(DfGroup *group);

/* Seal the group and wait until every node of it has finished (or been
 * skipped).  From inside a task, the calling worker meanwhile runs nodes of
 * this group and nodes due before the waiting task's own deadline, nothing
 * else (it would resume only when they return); from another thread it
 * blocks. */
DF_SCHED_API void df_sched_wait(DfSched *sched, DfGroup *group);

/* As df_sched_wait(), but a thread that is not a worker gives up at
 * `until_ns` (CLOCK_MONOTONIC, df_now_ns(); INT64_MAX: never): true when the
 * group is done, false at the time limit.  It sleeps on a futex meanwhile,
 * so a paced thread that must also act at a given time (send its next
 * packet) needs no polling.  On a worker it helps until the group is done,
 * as df_sched_wait(), and returns true. */
DF_SCHED_API bool df_sched_wait_until(DfSched *sched, DfGroup *group, int64_t until_ns);

/* True once the group is sealed and every node of it has finished. */
DF_SCHED_API bool df_group_done(const DfGroup *group);

/* Cancel: nodes of the group that have not started are skipped (their
 * cancel function runs instead of their body). */
DF_SCHED_API void df_group_cancel(DfGroup *group);

/* True after df_group_cancel(). */
DF_SCHED_API bool df_group_cancelled(const DfGroup *group);

/* The group's deadline. */
DF_SCHED_API int64_t df_group_deadline(const DfGroup *group);

/* ------------------------------------------------------------------ nodes */

typedef struct DfNodeDesc {
    DfTaskFn fn;       /* body */
    void *arg;         /* passed to fn and cancel */
    DfTaskFn cancel;   /* runs instead of fn when the group was cancelled; may be NULL */
    int module;        /* id from df_sched_module_id(), or -1 */
    int index;         /* index of the node within its module instance (e.g. band) */
    DfGroup *group;    /* may be NULL */
    int64_t deadline;  /* 0: inherit from group (or none) */
    uint64_t out_size; /* bytes this node produces (size(n)) */
    DfLoad *load;      /* stream account its run time counts for; NULL: that of the
                        * node whose body creates it (none outside a body) */
} DfNodeDesc;

/* Create a node.  It runs once submitted and all its dependencies finished.
 * The caller owns one reference (release with df_node_release()). */
DF_SCHED_API DfNode *df_node_new(DfSched *sched, const DfNodeDesc *desc);

/* `succ` reads `bytes` produced by `pred`: it runs after `pred` has finished
 * and its cost counts those bytes on pred's worker.  `pred` may have finished
 * already.  Only before df_node_submit(succ).  Returns 0, or -ENOMEM (then
 * the caller should df_node_discard(succ)). */
DF_SCHED_API int df_node_depend(DfNode *succ, DfNode *pred, uint64_t bytes);

/* `node` reads `bytes` produced earlier by a finished task (no edge): counts
 * in the cost function as data held by `worker`.  `pred_id`/`module` identify
 * the producer for traces (0/-1 if unknown).  Returns 0 or a negative errno. */
DF_SCHED_API int df_node_add_input(DfNode *node, int worker, uint64_t bytes, int module,
                                   uint64_t pred_id);

/* Make the node eligible to run. */
DF_SCHED_API void df_node_submit(DfNode *node);

/* Submit a node so that it is skipped like a cancelled one: its cancel
 * function runs instead of its body and successors see the cancellation.
 * For nodes that could not be set up completely. */
DF_SCHED_API void df_node_discard(DfNode *node);

/* Drop a reference to a node. */
DF_SCHED_API void df_node_release(DfNode *node);

/* Take one more hold on a not-yet-ready node: it will not run before a
 * matching df_node_unhold().  Only before df_node_submit(). */
DF_SCHED_API void df_node_hold(DfNode *node);

/* Release a hold taken with df_node_hold(); may be called from any thread. */
DF_SCHED_API void df_node_unhold(DfNode *node);

/* Unique id of a node (monotonic per scheduler). */
DF_SCHED_API uint64_t df_node_id(const DfNode *node);

/* Worker that ran the node, or -1 if it has not finished. */
DF_SCHED_API int df_node_worker(const DfNode *node);

/* True when the node was skipped because its group was cancelled. */
DF_SCHED_API bool df_node_skipped(const DfNode *node);

/* Create, submit and release a node in one call. */
DF_SCHED_API void df_spawn(DfSched *sched, DfTaskFn fn, void *arg, DfGroup *group);

/* ------------------------------------------------------ running task info */

/* The scheduler running the task. */
DF_SCHED_API DfSched *df_task_sched(const DfTask *task);

/* The worker running the task. */
DF_SCHED_API int df_task_worker(const DfTask *task);

/* The node being run (valid during the call). */
DF_SCHED_API DfNode *df_task_node(const DfTask *task);

/* The node's module instance index (DfNodeDesc.index). */
DF_SCHED_API int df_task_index(const DfTask *task);

/* True if any predecessor of the running node was skipped by cancellation. */
DF_SCHED_API bool df_task_pred_cancelled(const DfTask *task);

/* True when the running node was taken from another worker's ready set. */
DF_SCHED_API bool df_task_stolen(const DfTask *task);

/* ------------------------------------------------ control description */

/* How a predecessor module's nodes connect to this module's nodes. */
typedef enum DfLinkKind {
    DF_LINK_ALL = 0,    /* every node of the predecessor -> every node here */
    DF_LINK_SAME_INDEX, /* node i -> node i (widths must match) */
} DfLinkKind;

typedef struct DfLink {
    int module; /* predecessor module id (index in the table) */
    DfLinkKind kind;
    bool prev_instance; /* predecessor in the previous instance (e.g. D(k-1) -> D(k)) */
} DfLink;

/* One row of the parallel execution control description. */
typedef struct DfModuleDesc {
    const char *name; /* registered with df_sched_module_id() */
    DfTaskFn fn;
    DfTaskFn cancel; /* may be NULL */
    const DfLink *preds;
    int n_preds;
    int out_type;      /* output buffer type (user-defined tag) */
    uint64_t out_size; /* bytes each node of the module produces */
    int width;         /* nodes per instance (default 1; may be overridden) */
} DfModuleDesc;

/* Compile a module table (id = row index) into graph-generation information.
 * Rejects unknown ids, cycles within an instance and mismatched widths. */
DF_SCHED_API int df_graph_compile(DfSched *sched, const DfModuleDesc *mods, int n_mods,
                                  DfGraphInfo **out, DfError *err);

/* Free compiled graph information (after its instances are released). */
DF_SCHED_API void df_graph_free(DfGraphInfo *info);

/* Per-instance parameters. */
typedef struct DfInstanceParams {
    void *arg;                /* passed to every node body */
    DfGroup *group;           /* group of all nodes (may be NULL) */
    int64_t deadline;         /* 0: group's */
    const int *widths;        /* per module width override (0 = table's), or NULL */
    const uint64_t *out_size; /* per module out_size override (0 = table's), or NULL */
    DfInstance *prev;         /* previous instance for prev_instance links, or NULL */
    DfLoad *load;             /* account of every node (DfNodeDesc.load), or NULL */
} DfInstanceParams;

/* Instantiate the graph for one input.  Nodes are created and linked but not
 * submitted, so tasks and callers can add dependencies first.  NULL when out
 * of memory; then no body or cancel function is ever called with params->arg. */
DF_SCHED_API DfInstance *df_graph_instantiate(const DfGraphInfo *info,
                                              const DfInstanceParams *params);

/* Node `index` of `module` in an instance (borrowed reference). */
DF_SCHED_API DfNode *df_instance_node(const DfInstance *inst, int module, int index);

/* Width of `module` in this instance. */
DF_SCHED_API int df_instance_width(const DfInstance *inst, int module);

/* Submit every node of the instance. */
DF_SCHED_API void df_instance_submit(DfInstance *inst);

/* Release the instance and its node references. */
DF_SCHED_API void df_instance_release(DfInstance *inst);

/* ------------------------------------------------------ ordered job batches */

/* A batch of jobs as libavcodec's execute/execute2 hooks hand them out. */
typedef struct DfJobs {
    int n_jobs;
    void (*fn)(void *ctx, int jobnr, int threadnr);
    void *ctx;
    int n_slots;        /* threadnr = jobnr % n_slots and job j starts only after
                         * job j - n_slots finished; 0: unlimited, threadnr = 0 */
    bool ordered_start; /* job j becomes ready only once job j-1 started (WPP) */
    /* With ordered_start: bytes job j reads of what job j-1 writes while
     * both run (a WPP row reads the row above).  Declared as job j's
     * first input, without a producer (it is no completion dependency),
     * its worker the one that started job j-1, so that placement weighs
     * it against the other inputs.  0: none. */
    uint64_t start_bytes;
    int module;         /* module id of the job nodes */
    int64_t deadline;   /* 0: none */
    uint64_t out_size;  /* bytes each job produces */
    int *workers;       /* optional out: worker that ran each job (n_jobs entries) */
    uint64_t *node_ids; /* optional out: node id of each job */
    /* Optional: declares job `jobnr`'s inputs on its node (df_node_add_input)
     * before it is submitted, so that placement and traces see what the job
     * reads.  Not called for a batch of one job, which runs inline. */
    void (*add_inputs)(void *in_ctx, DfNode *node, int jobnr);
    void *in_ctx;
    /* Nodes even on a scheduler of one worker: each job is then a point
     * where a more urgent node (another stream's frame) may run before the
     * rest of the batch, at the cost of a node per job. */
    bool as_tasks;
    /* In index order on the calling worker, without nodes, whatever the
     * scheduler: the caller knows that parallel jobs gain nothing now (its
     * streams already keep every worker busy).  Before as_tasks. */
    bool serial;
} DfJobs;

/* Run a batch and return when every job has finished.  From a worker, the
 * caller helps; from another thread it blocks.  Re-entrant.  Returns 0.
 * On a scheduler of one worker, or with jobs->serial, the jobs run inline in
 * index order, without nodes (unless, on one worker, DfSchedConfig.eager_jobs
 * or jobs->as_tasks and not serial); workers[] then
 * names the caller and node_ids[] are 0, as for a batch of one job. */
DF_SCHED_API int df_jobs_run(DfSched *sched, const DfJobs *jobs);

/* ----------------------------------------------------- load per stream */

/* A stream's measured load (load.c, docs/scheduler.md "Load and
 * admission"): the worker time its nodes take, counted per frame and
 * turned into cores at the stream's frame rate.  A node counts for the
 * account of its DfNodeDesc.load, or, without one, for that of the node
 * whose body created it (so slice jobs of df_jobs_run count for the
 * stream of the decode task that runs the batch).  The time counted is
 * the body's self time on the worker's monotonic clock: wall time of the
 * body minus the nodes it ran while waiting in df_sched_wait(), which
 * count for their own accounts.  Waiting without work to help with
 * counts for the waiter (the worker is held).  Nodes without an account
 * anywhere on the worker's stack are not timed. */

/* Register an account on `sched` (taking a reference on it) for a stream
 * of `fps` frames per second (<= 0: unknown, then the rate at which frames
 * complete is used).  NULL when out of memory. */
DF_SCHED_API DfLoad *df_load_new(DfSched *sched, double fps);

/* Unregister and free an account (NULL: nothing).  Only once no node that
 * carries it can run any more. */
DF_SCHED_API void df_load_free(DfLoad *load);

/* Change the stream's frame rate (<= 0: unknown). */
DF_SCHED_API void df_load_set_fps(DfLoad *load, double fps);

/* The stream's frame rate as set (<= 0: unknown). */
DF_SCHED_API double df_load_fps(DfLoad *load);

/* Time the stream took outside the workers (ns) on the cores they share:
 * the application's thread that demuxes, parses and feeds it.  Counted
 * with its nodes' worker time, into the frame that completes next. */
DF_SCHED_API void df_load_add_ns(DfLoad *load, uint64_t ns);

/* A frame of the stream has completed (output or dropped): the time
 * counted since the previous one joins the moving average. */
DF_SCHED_API void df_load_frame_done(DfLoad *load);

/* Frames completed so far. */
DF_SCHED_API uint64_t df_load_frames(DfLoad *load);

/* Worker time counted so far, ns. */
DF_SCHED_API uint64_t df_load_total_ns(const DfLoad *load);

/* Mean worker time per frame over the last frames (up to 16), ns; 0
 * before the first frame completed. */
DF_SCHED_API double df_load_ns_per_frame(DfLoad *load);
/* Stream accounts on `sched` now (df_load_new minus df_load_free); relaxed,
 * without the registry's lock: for a decision made often. */
DF_SCHED_API int df_sched_n_streams(const DfSched *sched);

/* Cores the stream uses: ns per frame x frame rate / 1e9 (the measured
 * completion rate when the rate is unknown). */
DF_SCHED_API double df_load_cores(DfLoad *load);

/* Mark the stream admitted (counted in DfSchedLoad.admitted) or not. */
DF_SCHED_API void df_load_set_admitted(DfLoad *load, bool admitted);

/* Put the stream on probation (an admission measures it) or take it off.
 * Returns its rank: one past the highest rank of the streams on probation
 * on its scheduler (the order they came), or 0 when off, or when no other
 * stream of the scheduler is admitted or on probation. */
DF_SCHED_API unsigned df_load_set_probation(DfLoad *load, bool on);

/* Cores the scheduler can give: its workers (the PUs when there are more
 * workers than PUs). */
DF_SCHED_API double df_sched_capacity(const DfSched *sched);

/* The scheduler's load, summed over its accounts. */
typedef struct DfSchedLoad {
    double capacity; /* df_sched_capacity() */
    double admitted; /* cores of the admitted streams */
    double pending;  /* cores of the others that completed a frame */
    int n_admitted;
    int n_pending; /* accounts not admitted (with or without a frame) */
} DfSchedLoad;

/* Snapshot of the load of every account of `sched`. */
DF_SCHED_API void df_sched_load(DfSched *sched, DfSchedLoad *out);

/* Streams alike (same codec, picture size, format) cost alike per frame:
 * an account's class (any non-zero key; 0: none) lets a new stream be
 * judged by the streams of its class already measured. */
DF_SCHED_API void df_load_set_class(DfLoad *load, uint64_t cls);

/* Mean worker time per frame (ns) of the other streams of the class of
 * `load` on its scheduler that were measured over a whole window (16
 * frames); 0 when there is none.  *n (NULL: not wanted): their number. */
DF_SCHED_API double df_load_class_ns_per_frame(DfLoad *load, int *n);

/* ------------------------------------------------------------- statistics */

typedef struct DfWorkerStats {
    uint64_t tasks_run;      /* bodies run (and cancelled nodes skipped) */
    uint64_t tasks_stolen;   /* taken from another worker's ready set */
    uint64_t tasks_explored; /* stolen on purpose (an exploring policy) */
    uint64_t tasks_skipped;  /* cancelled */
    uint64_t idle_ns;        /* time with nothing to run */
    uint64_t busy_ns;        /* time inside timed task bodies (tracing, or a policy's sample) */
    uint64_t parks;          /* futex sleeps */
    uint64_t wakeups_sent;   /* futex wakes issued by this worker */
    uint64_t bytes_local;    /* input bytes produced by this same worker */
    uint64_t bytes_level[DF_N_LEVELS]; /* input bytes by trCost level (SELF = local) */
    uint64_t slab_chunks;              /* slab chunks allocated (cold path) */
    uint64_t max_wait_depth;           /* deepest nesting of df_sched_wait() */
    uint64_t wait_fallbacks;           /* nodes a wait ran although its filter refused them */
    uint64_t jobs_inline;              /* df_jobs_run batches run inline (one worker) */
    uint64_t idle_rounds;              /* polls for work while idle (spinning) */
    uint64_t idle_lines;               /* shared cache lines those polls read */
} DfWorkerStats;

typedef struct DfStats {
    int n_workers;
    DfWorkerStats total;
    DfWorkerStats *workers;    /* n_workers entries, owned by the caller of df_stats_free */
    uint64_t external_submits; /* nodes made ready by non-worker threads */
} DfStats;

/* Snapshot the counters (approximate while running).  Free with df_stats_free(). */
DF_SCHED_API int df_sched_stats(DfSched *sched, DfStats *out);

/* Free a snapshot's arrays. */
DF_SCHED_API void df_stats_free(DfStats *stats);

/* Zero every counter. */
DF_SCHED_API void df_sched_stats_reset(DfSched *sched);

/* Share of input bytes consumed on the worker that produced them (0..1; 1 when none). */
DF_SCHED_API double df_stats_local_share(const DfStats *stats);

/* ------------------------------------------------------------------ trace */

/* Flags of a trace event. */
enum {
    DF_TRACE_STOLEN = 1 << 0,   /* taken from another worker's ready set */
    DF_TRACE_EXPLORED = 1 << 1, /* stolen on purpose (an exploring policy) */
    DF_TRACE_SKIPPED = 1 << 2,  /* group cancelled: body not run */
    DF_TRACE_INLINE = 1 << 3,   /* run inline by the submitting thread */
};

/* One input of a traced node: bytes it read from a producer. */
typedef struct DfTraceInput {
    uint64_t pred_id;      /* producer node id (0 unknown) */
    int32_t worker;        /* producer's worker (-1 outside the scheduler); for an
                            * input of no bytes from a stolen producer, the
                            * worker it had been placed on */
    int32_t module;        /* producer's module (-1 unknown) */
    uint64_t bytes;        /* as declared (df_node_depend, df_node_add_input) */
    uint64_t policy_bytes; /* as the policy weighed them when the trace was collected
                            * (DfTracePolicy.weighs_inputs), else = bytes (0 in
                            * hand-made traces: read as bytes) */
} DfTraceInput;

/* One executed (or skipped) node. */
typedef struct DfTraceEvent {
    uint64_t node_id;
    int32_t module;
    int32_t index;
    int64_t tag; /* group's tag (e.g. frame number), -1 none */
    int32_t worker;
    uint32_t flags;
    int64_t start_ns;
    int64_t end_ns;
    int64_t deadline;     /* DF_NO_DEADLINE when none */
    uint32_t first_input; /* index into DfTrace.inputs */
    uint32_t n_inputs;
    int64_t created_ns;     /* node created */
    int64_t ready_ns;       /* all inputs done (became ready) */
    uint64_t parent_id;     /* node that created it from inside its body (0: none) */
    uint64_t start_pred_id; /* ordered job batches: became ready when this node started */
    uint64_t group_id;      /* the node's group (0: none) */
    int64_t cpu_ns;         /* the thread's CPU time over the body, nested nodes
                             * included (0: unknown); less than end - start when
                             * the body blocked (HEVC WPP rows) or was preempted */
} DfTraceEvent;

/* A task body waiting for a group (df_sched_wait), helping meanwhile. */
typedef struct DfTraceWait {
    uint64_t node_id;  /* the waiting node */
    uint64_t group_id; /* the awaited group */
    int32_t worker;
    int64_t start_ns;
    int64_t end_ns;
} DfTraceWait;

/* A policy's own data in a trace, filled by the policy when the trace is
 * collected: named numbers and tables of numbers whose meaning the policy
 * documents.  The core, the JSON files and the readers carry them without
 * knowing any policy. */
typedef struct DfTraceValue {
    char *key;
    double value;
} DfTraceValue;

typedef struct DfTraceTable {
    char *name;  /* e.g. "sizes" */
    char *label; /* what the row labels are (e.g. "producer") */
    int n_cols;
    char **cols; /* column names; a name ending in "bytes" holds a size */
    size_t n_rows;
    char **row_labels; /* n_rows labels (a module name, a level name, ...) */
    double *cells;     /* n_rows * n_cols, row-major */
} DfTraceTable;

typedef struct DfTracePolicy {
    char *name;         /* the policy's registry name */
    bool weighs_inputs; /* the inputs' policy_bytes are the policy's own weights */
    DfTraceValue *values;
    int n_values;
    DfTraceTable **tables;
    int n_tables;
} DfTracePolicy;

typedef struct DfTrace {
    DfTraceEvent *events; /* sorted by start time */
    size_t n_events;
    DfTraceInput *inputs;
    size_t n_inputs;
    DfTraceWait *waits; /* sorted by start time */
    size_t n_waits;
    uint64_t dropped; /* events lost because a worker's buffer was full */
    int n_workers;
    char **module_names; /* module id -> name, n_modules entries */
    int n_modules;
    uint32_t *trcost;      /* copy of the trCost matrix */
    uint8_t *levels;       /* copy of the level matrix */
    DfTracePolicy *policy; /* the placing policy and its data (NULL: unknown) */
} DfTrace;

/* Start recording up to `capacity` events per worker (replaces older ones).
 * The buffers (about 200 bytes per event and worker) are allocated and
 * touched here, so that recording takes no page fault: the memory is held
 * from the start, so size `capacity` to what is to be recorded. */
DF_SCHED_API int df_sched_trace_start(DfSched *sched, size_t capacity);

/* Stop recording (events are kept). */
DF_SCHED_API void df_sched_trace_stop(DfSched *sched);

/* True while recording. */
DF_SCHED_API bool df_sched_tracing(const DfSched *sched);

/* Copy the recorded events into `out` (merged, sorted).  Free with df_trace_free(). */
DF_SCHED_API int df_sched_trace_collect(DfSched *sched, DfTrace *out);

/* Free a collected trace. */
DF_SCHED_API void df_trace_free(DfTrace *trace);

/* An input's bytes as the policy weighed them (its policy_bytes, or bytes
 * when the policy kept the declared sizes). */
DF_SCHED_API uint64_t df_trace_input_policy_bytes(const DfTraceInput *in);

/* Building a trace's policy data (a policy's snapshot op, trace readers).
 * Each returns 0 or -ENOMEM; names are copied. */
DF_SCHED_API int df_trace_set_policy(DfTrace *trace, const char *name);
DF_SCHED_API int df_trace_policy_add_value(DfTracePolicy *p, const char *key, double value);
/* A new empty table with `n_cols` columns; NULL when out of memory. */
DF_SCHED_API DfTraceTable *df_trace_policy_add_table(DfTracePolicy *p, const char *name,
                                                     const char *label, int n_cols,
                                                     const char *const *cols);
/* Append a row of n_cols cells. */
DF_SCHED_API int df_trace_table_add_row(DfTraceTable *tab, const char *label, const double *cells);

/* Reading it: NULL / -1 / false when absent. */
DF_SCHED_API const DfTraceTable *df_trace_policy_table(const DfTrace *trace, const char *name);
DF_SCHED_API bool df_trace_policy_value(const DfTrace *trace, const char *key, double *out);
DF_SCHED_API int df_trace_table_col(const DfTraceTable *tab, const char *col);
DF_SCHED_API ptrdiff_t df_trace_table_row(const DfTraceTable *tab, const char *label);
DF_SCHED_API double df_trace_table_cell(const DfTraceTable *tab, size_t row, int col);

/* Give a group a tag shown in traces (e.g. frame number). */
DF_SCHED_API void df_group_set_tag(DfGroup *group, int64_t tag);

/* The group's tag (-1 by default). */
DF_SCHED_API int64_t df_group_tag(const DfGroup *group);

/* ------------------------------------------------------------------ time */

/* Monotonic nanoseconds (CLOCK_MONOTONIC base, no system call). */
DF_SCHED_API int64_t df_now_ns(void);

#ifdef __cplusplus
}
#endif
#endif /* DFSCHED_H */
