/* dfbench sched's own state, shared by its driver (bench_sched.c), its
 * output (bench_sched_out.c) and its trace overhead (bench_sched_trace.c).
 * Not used by other subcommands. */
#ifndef DF_BENCH_SCHED_STATE_H
#define DF_BENCH_SCHED_STATE_H

#include "affinity.h"
#include "sched_cases.h"

#include <glib.h>

/* ------------------------------------------------------- implementations */

typedef struct DfBenchPeer {
    const char *option; /* name in --peers */
    const char *alias;
    const char *impl;   /* name in the results */
    DfPeerRunFn run;
    void (*describe)(char *buf, size_t len);
} DfBenchPeer;

#define DF_BENCH_PEER_CASES                                                                        \
    ((1u << DF_CASE_EMPTY) | (1u << DF_CASE_FANOUT) | (1u << DF_CASE_CHAIN) | (1u << DF_CASE_METG))
#define DF_BENCH_ALL_CASES ((1u << DF_N_CASES) - 1)

typedef struct DfBenchImpl {
    char name[48];      /* "dfsched/cost-local", "openmp", "tbb" */
    const char *policy; /* dfsched policy, NULL for a peer */
    const DfBenchPeer *peer;
    unsigned cases;     /* bit per case it implements */
} DfBenchImpl;

/* -------------------------------------------------------------- results */

typedef struct DfBenchConfig {
    const DfBenchImpl *impl;   /* NULL: the implementation has no such case */
    DfBenchCase c;
    int workers;
    bool oversubscribed;
    int n;              /* samples taken (failed ones included, as NAN) */
    double *ns, *cpu, *share, *stolen, *fps, *gbps; /* per sample */
    double *metg, *metg_eff, *metg_cpu; /* per sample, metg case (NAN: not reached) */
    uint64_t tasks;
    uint64_t errors;    /* results that did not check out */
    int failures;       /* samples that could not run */
    char *error;        /* the first failure's message */
    /* --trace-overhead (dfsched only): the same samples with tracing on,
     * taken in the same repeat as the untraced ones. */
    int n_on;
    double *ns_on, *fps_on;
    uint64_t dropped; /* trace events lost in its instances (full buffers) */
} DfBenchConfig;

typedef struct DfBenchOpts {
    char *workers, *policy, *cases, *peers, *json, *csv;
    gint64 tasks, batch;
    int frames, width, repeat, poll_us;
    gboolean quick, trace_overhead;
} DfBenchOpts;

typedef struct DfBench {
    DfBenchOpts o;
    DfCpuMap map;
    int *workers;
    int n_workers;
    DfBenchCase cases[DF_N_CASES];
    int n_cases;
    DfBenchImpl *impls;
    int n_impls;
    DfBenchConfig *configs; /* [impl][case][workers] */
    DfCaseParams params;
    double load_start[3], load_end[3];
    int64_t start_ns, end_ns;
} DfBench;

static inline DfBenchConfig *df_bench_config_at(DfBench *b, int impl, DfBenchCase c, int wi)
{
    return &b->configs[((size_t)impl * DF_N_CASES + (size_t)c) * (size_t)b->n_workers + (size_t)wi];
}

#endif
