/* dfbench sched's output (bench_sched_out.c): the header, the table, the
 * goals, JSON and CSV. */
#ifndef DF_BENCH_SCHED_OUT_H
#define DF_BENCH_SCHED_OUT_H

#include "bench_sched_state.h"

#include <glib.h>
#include <stdbool.h>

/* Machine, mode, peers and sizes, before the run. */
void df_bench_sched_print_header(const DfBench *b);
/* The results, one row per configuration, grouped by case. */
void df_bench_sched_print_table(DfBench *b);
/* The goals evaluated on this run (GArray of DfBenchGoal). */
GArray *df_bench_sched_goals(DfBench *b);
void df_bench_sched_print_goals(GArray *goals);
/* Returns false (and says why on stderr) when the file cannot be written. */
bool df_bench_sched_write_json(DfBench *b, GArray *goals);
bool df_bench_sched_write_csv(DfBench *b);

#endif
