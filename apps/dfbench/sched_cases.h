/* dfbench sched: the cases every implementation runs (sched_cases.c runs
 * them on dfsched; the peers, bench_peers.h, on their runtimes).  Shared
 * with C++. */
#ifndef DF_BENCH_SCHED_CASES_H
#define DF_BENCH_SCHED_CASES_H

#include "dfsched.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum DfBenchCase {
    DF_CASE_EMPTY = 0, /* a root task spawns M empty tasks and waits */
    DF_CASE_FANOUT,    /* 1 -> k -> 1 diamonds, one after the other */
    DF_CASE_CHAIN,     /* M nodes, each depending on the previous one */
    DF_CASE_FRAMES,    /* producer bands -> consumer bands with halo, frames in flight */
    DF_CASE_METG,      /* smallest task body at which the workers keep 50 % efficiency */
    DF_N_CASES
} DfBenchCase;

/* Frame geometry of the frames case: a band is what one producer writes. */
#define DF_FRAME_BAND_BYTES (256u * 1024u)
/* Consumers also read the first 1/16 of the next band, like a filter's
 * halo rows; its bytes count as an input from that band's producer. */
#define DF_FRAME_HALO_BYTES (DF_FRAME_BAND_BYTES / 16u)
#define DF_FRAME_BANDS 8
#define DF_FRAME_IN_FLIGHT 4

typedef struct DfCaseParams {
    uint64_t tasks; /* empty, chain: tasks per run; fanout: nodes per run (rounded) */
    int width;      /* fanout: k */
    uint64_t batch; /* empty: tasks per spawn-and-wait round; 0 = all at once */
    int frames;     /* frames: frames per run */
    int warmups;    /* untimed runs before the timed one, in the same runtime instance */
    int64_t metg_work_ns; /* metg: body work per grain tried (all tasks together) */
} DfCaseParams;

/* metg (Task Bench's METG(50 %)): independent tasks whose body spins for a
 * grain of g ns, spawned by one task that then waits, as in empty;
 * efficiency = tasks x g / (workers x wall).  g starts at DF_METG_MIN_NS
 * and doubles until the efficiency reaches DF_METG_EFFICIENCY (METG is
 * that g, so within a factor 2 above the true crossing) or passes
 * DF_METG_MAX_NS (METG not reached: NAN).  On a loaded machine the wall
 * time counts other processes' time too; the CPU-time variant (body work
 * / CPU time of the process, spinning included) does not. */
#define DF_METG_MIN_NS 64
#define DF_METG_MAX_NS 1048576
#define DF_METG_EFFICIENCY 0.5

/* One timed run.  `local_share` is NAN where nothing was measured. */
typedef struct DfCaseResult {
    uint64_t tasks;       /* tasks (graph nodes) in the run */
    int64_t elapsed_ns;
    double ns_per_task;
    double cpu_ns_per_task; /* process CPU time per task: what other users of a
                             * shared machine cannot inflate (spinning counts) */
    double local_share;   /* share of predecessor bytes consumed on their producer's worker */
    double stolen_share;  /* share of tasks taken from another worker's set (NAN: unknown) */
    double frames_per_s;  /* frames case only, else NAN */
    double gb_per_s;      /* frames case: bytes written + read per second, else NAN */
    double metg_ns;       /* metg case: METG in ns, NAN when not reached (or other cases) */
    double metg_efficiency; /* metg case: the efficiency at that grain */
    double metg_cpu_ns;   /* metg case: the same with the process's CPU time for
                           * workers x wall (what other users of a loaded machine
                           * cannot inflate); NAN when not reached */
    int metg_steps;       /* metg case: grains tried */
    uint64_t errors;      /* results that did not check out (ordering or data) */
} DfCaseResult;

/* Case names ("empty", "fanout", "chain", "frames"). */
const char *df_case_name(DfBenchCase c);
/* The case of that name, or -1. */
int df_case_find(const char *name);

/* CPU time of the whole process (all threads), in ns. */
int64_t df_bench_cpu_ns(void);

/* Reset `r` to "nothing measured". */
void df_case_result_init(DfCaseResult *r);

/* The body of a metg task: spin for `ns` (on the monotonic clock). */
void df_bench_spin_ns(int64_t ns);

/* Runs `tasks` spinning tasks of `grain_ns` each on a runtime and returns
 * the wall time in ns, or a negative errno. */
typedef int64_t (*DfMetgStepFn)(void *ctx, int64_t grain_ns, uint64_t tasks);

/* The metg search with `step` on `workers` workers (p->warmups untimed
 * steps at the smallest grain first); fills out's metg fields, tasks and
 * elapsed_ns (all steps), ns_per_task (wall per task at the last grain
 * tried).  0 or a negative errno. */
int df_bench_metg_search(const DfCaseParams *p, int workers, DfMetgStepFn step, void *ctx,
                         DfCaseResult *out);

/* Tasks (root tasks included) of a whole metg search at most, warm-ups
 * included. */
uint64_t df_bench_metg_max_tasks(const DfCaseParams *p, int workers);

/* Run one case on dfsched (p->warmups untimed runs, then the timed one):
 * the body runs in a root task on a worker.  Returns 0 or a negative errno
 * (out of memory). */
int df_bench_dfsched_run(DfSched *s, DfBenchCase c, const DfCaseParams *p, DfCaseResult *out);

/* A peer runtime running a case on `n` threads, thread i pinned to
 * cpus[i] (p->warmups untimed runs first, with the same threads).  Returns 0, -ENOTSUP for a case the peer does not implement,
 * or another negative errno. */
typedef int (*DfPeerRunFn)(DfBenchCase c, const DfCaseParams *p, const int *cpus, int n,
                           DfCaseResult *out);

#ifdef __cplusplus
}
#endif
#endif
