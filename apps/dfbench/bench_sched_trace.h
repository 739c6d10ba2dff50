/* dfbench sched --trace-overhead (bench_sched_trace.c): what recording a
 * trace costs a task. */
#ifndef DF_BENCH_SCHED_TRACE_H
#define DF_BENCH_SCHED_TRACE_H

#include "bench_sched_state.h"

#include <json-glib/json-glib.h>
#include <stddef.h>

/* Trace events per worker that a traced instance needs to lose none. */
size_t df_bench_sched_trace_capacity(const DfBench *b);
/* Per policy, case and workers: ns per task untraced vs traced, and %. */
void df_bench_sched_print_trace_overhead(DfBench *b);
/* The "trace_overhead" member: one row per dfsched configuration. */
void df_bench_sched_trace_overhead_json(JsonBuilder *jb, DfBench *b);

#endif
