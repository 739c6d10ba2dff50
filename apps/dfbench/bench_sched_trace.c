/* dfbench sched --trace-overhead: what recording a trace costs a task.
 *
 * Every dfsched configuration is sampled twice per repeat, in two fresh
 * instances, tracing off and tracing on (bench_sched.c alternates which
 * runs first), so that both see the same machine.  The overhead is
 * measured, never assumed: ns per task traced minus untraced, and the
 * ratio of the medians as a percentage.  The trace buffers are sized to
 * hold every event of the instance: a full buffer drops events, which
 * costs less than recording them, and would make tracing look cheaper;
 * dropped events are reported beside the figures. */
#include "bench_sched_trace.h"
#include "report.h"
#include "sched_cases.h"

#include <math.h>
#include <stdio.h>

size_t df_bench_sched_trace_capacity(const DfBench *b)
{
    const DfCaseParams *p = &b->params;
    size_t per_run = 0;
    /* Nodes of one run of each case (root tasks and rounding included),
     * all of which may run on one worker. */
    for (int k = 0; k < b->n_cases; k++)
        switch (b->cases[k]) {
        case DF_CASE_EMPTY:
        case DF_CASE_CHAIN:
            per_run += (size_t)p->tasks + 64;
            break;
        case DF_CASE_FANOUT:
            per_run += (size_t)p->tasks + (size_t)p->width + 64;
            break;
        case DF_CASE_FRAMES:
            per_run += (size_t)p->frames * (2 * DF_FRAME_BANDS + 4) + 64;
            break;
        case DF_CASE_METG: {
            int max_workers = 1;
            for (int w = 0; w < b->n_workers; w++)
                max_workers = b->workers[w] > max_workers ? b->workers[w] : max_workers;
            /* Its warm-ups are steps of the search: counted in it. */
            per_run += (size_t)df_bench_metg_max_tasks(p, max_workers) / (size_t)(p->warmups + 1) + 64;
            break;
        }
        default:
            break;
        }
    return per_run * (size_t)(p->warmups + 1) + 1024;
}

typedef struct Pair {
    DfSummary off, on;
} Pair;

void df_bench_sched_print_trace_overhead(DfBench *b)
{
    static const char *const headers[] = {"case",       "workers",  "impl",       "ns/task off",
                                          "ns/task on", "+ns/task", "overhead %", "paired %",
                                          "n",          "dropped"};
    DfTable *t = df_table_new(10, headers, "lrlrrrrrrr");
    for (int k = 0; k < b->n_cases; k++) {
        if (k)
            df_table_rule(t);
        for (int w = 0; w < b->n_workers; w++)
            for (int i = 0; i < b->n_impls; i++) {
                const DfBenchConfig *cf = df_bench_config_at(b, i, b->cases[k], w);
                if (!cf->impl || !cf->impl->policy || !cf->ns_on)
                    continue;
                const Pair p = {df_summarize(cf->ns, cf->n), df_summarize(cf->ns_on, cf->n_on)};
                char workers[16], off[32], on[32], add[32], pct[32], paired[32], n[32], dropped[32];
                snprintf(workers, sizeof(workers), "%d", cf->workers);
                df_fmt_num(off, sizeof(off), p.off.median, 1);
                df_fmt_num(on, sizeof(on), p.on.median, 1);
                df_fmt_num(add, sizeof(add), p.on.median - p.off.median, 1);
                df_fmt_num(pct, sizeof(pct), df_overhead_pct(p.off.median, p.on.median, false), 1);
                df_fmt_num(paired, sizeof(paired),
                           df_overhead_pct_paired(cf->ns, cf->n, cf->ns_on, cf->n_on, false), 1);
                snprintf(n, sizeof(n), "%d/%d", p.off.n, p.on.n);
                snprintf(dropped, sizeof(dropped), "%llu", (unsigned long long)cf->dropped);
                const char *cells[] = {df_case_name(cf->c),
                                       workers,
                                       cf->impl->name,
                                       off,
                                       on,
                                       add,
                                       pct,
                                       paired,
                                       n,
                                       dropped};
                df_table_row(t, cells);
            }
    }
    printf("\ntrace overhead (same repeats, fresh instances, tracing off vs on):\n");
    df_table_print(t, stdout);
    printf("+ns/task and overhead %%: medians traced vs untraced; paired %%: median over repeats "
           "of each back-to-back pair's overhead; n: samples off/on; dropped: trace events lost "
           "to full buffers (0: every task was recorded)\n");
    df_table_free(t);
}

void df_bench_sched_trace_overhead_json(JsonBuilder *jb, DfBench *b)
{
    json_builder_set_member_name(jb, "trace_overhead");
    json_builder_begin_array(jb);
    for (int k = 0; k < b->n_cases; k++)
        for (int w = 0; w < b->n_workers; w++)
            for (int i = 0; i < b->n_impls; i++) {
                const DfBenchConfig *cf = df_bench_config_at(b, i, b->cases[k], w);
                if (!cf->impl || !cf->impl->policy || !cf->ns_on)
                    continue;
                json_builder_begin_object(jb);
                json_builder_set_member_name(jb, "impl");
                json_builder_add_string_value(jb, cf->impl->name);
                json_builder_set_member_name(jb, "policy");
                json_builder_add_string_value(jb, cf->impl->policy);
                json_builder_set_member_name(jb, "case");
                json_builder_add_string_value(jb, df_case_name(cf->c));
                json_builder_set_member_name(jb, "workers");
                json_builder_add_int_value(jb, cf->workers);
                df_json_overhead(jb, "ns_per_task", cf->ns, cf->n, cf->ns_on, cf->n_on, false);
                const double off = df_summarize(cf->ns, cf->n).median,
                             on = df_summarize(cf->ns_on, cf->n_on).median;
                df_json_double(jb, "added_ns_per_task", on - off);
                if (cf->c == DF_CASE_FRAMES) {
                    df_json_double(jb, "fps_off", df_summarize(cf->fps, cf->n).median);
                    df_json_double(jb, "fps_on", df_summarize(cf->fps_on, cf->n_on).median);
                }
                json_builder_set_member_name(jb, "dropped_events");
                json_builder_add_int_value(jb, (gint64)cf->dropped);
                json_builder_end_object(jb);
            }
    json_builder_end_array(jb);
}
