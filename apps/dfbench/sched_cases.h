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
} DfCaseParams;

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
