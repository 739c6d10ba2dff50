/* dfbench sched's output: the terminal table, the goals of issues 3 and 20 as
 * measured by this run, JSON and CSV. */
#include "bench_sched_out.h"
#include "bench_sched_trace.h"
#include "report.h"
#include "sched_cases.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* --------------------------------------------------------------- output */

typedef struct DfBenchRow {
    DfSummary ns, cpu, share, stolen, fps, gbps, metg, metg_eff, metg_cpu;
} DfBenchRow;

static DfBenchRow summarize(const DfBenchConfig *cf)
{
    return (DfBenchRow){
        .ns = df_summarize(cf->ns, cf->n),
        .cpu = df_summarize(cf->cpu, cf->n),
        .share = df_summarize(cf->share, cf->n),
        .stolen = df_summarize(cf->stolen, cf->n),
        .fps = df_summarize(cf->fps, cf->n),
        .gbps = df_summarize(cf->gbps, cf->n),
        .metg = df_summarize(cf->metg, cf->n),
        .metg_eff = df_summarize(cf->metg_eff, cf->n),
        .metg_cpu = df_summarize(cf->metg_cpu, cf->n),
    };
}

static void note_of(const DfBenchConfig *cf, char *buf, size_t len)
{
    GString *s = g_string_new(NULL);
    if (cf->oversubscribed)
        g_string_append(s, "oversubscribed");
    if (cf->errors)
        g_string_append_printf(s, "%s%llu ERRORS", s->len ? "; " : "",
                               (unsigned long long)cf->errors);
    if (cf->failures)
        g_string_append_printf(s, "%sfailed %d/%d: %s", s->len ? "; " : "", cf->failures, cf->n,
                               cf->error);
    snprintf(buf, len, "%s", s->str);
    g_string_free(s, TRUE);
}

void df_bench_sched_print_header(const DfBench *b)
{
    char machine[1024];
    df_report_machine_line(machine, sizeof(machine));
    printf("dfbench sched on %s\n", machine);
    if (b->o.poll_us < 0)
        printf("dfsched: poll mode (--poll-us -1): idle workers spin with pause and never park\n");
    else
        printf("dfsched: parking mode: idle workers spin %d us, then park on a futex\n",
               b->o.poll_us);
    for (int i = 0; i < b->n_impls; i++)
        if (b->impls[i].peer) {
            char d[256];
            b->impls[i].peer->describe(d, sizeof(d));
            printf("peer %s: %s\n", b->impls[i].name, d);
        }
    printf("sizes: empty/chain %llu tasks, fanout k=%d (%llu nodes), frames %d x %d bands of "
           "%u KiB (+%u KiB halo), %d in flight",
           (unsigned long long)b->params.tasks, b->params.width,
           (unsigned long long)(b->params.tasks / (uint64_t)(b->params.width + 2) *
                                (uint64_t)(b->params.width + 2)),
           b->params.frames, DF_FRAME_BANDS, DF_FRAME_BAND_BYTES / 1024, DF_FRAME_HALO_BYTES / 1024,
           DF_FRAME_IN_FLIGHT);
    if (b->params.batch)
        printf("; empty spawns in rounds of %llu", (unsigned long long)b->params.batch);
    printf("\n%d samples per configuration, interleaved; each a fresh runtime with 1 warm-up + "
           "1 timed run\n",
           b->o.repeat);
}

void df_bench_sched_print_table(DfBench *b)
{
    static const char *const headers[] = {"case",     "workers", "impl",    "ns/task", "min",
                                          "max",      "cpu ns",  "n",       "local",   "stolen",
                                          "frames/s", "GB/s",    "METG ns", "cpu",     "note"};
    DfTable *t = df_table_new(15, headers, "lrlrrrrrrrrrrrl");
    for (int k = 0; k < b->n_cases; k++) {
        if (k)
            df_table_rule(t);
        for (int w = 0; w < b->n_workers; w++)
            for (int i = 0; i < b->n_impls; i++) {
                DfBenchConfig *cf = df_bench_config_at(b, i, b->cases[k], w);
                if (!cf->impl)
                    continue;
                DfBenchRow r = summarize(cf);
                char workers[16], med[32], mn[32], mx[32], cpu[32], n[16], share[16], stolen[16],
                    fps[32], gbps[32], metg[32], metg_cpu[32], note[256];
                snprintf(workers, sizeof(workers), "%d", cf->workers);
                df_fmt_num(med, sizeof(med), r.ns.median, 1);
                df_fmt_num(mn, sizeof(mn), r.ns.min, 1);
                df_fmt_num(mx, sizeof(mx), r.ns.max, 1);
                df_fmt_num(cpu, sizeof(cpu), r.cpu.median, 1);
                snprintf(n, sizeof(n), "%d", r.ns.n);
                df_fmt_num(share, sizeof(share), r.share.median, 3);
                df_fmt_num(stolen, sizeof(stolen), r.stolen.median, 3);
                df_fmt_num(fps, sizeof(fps), r.fps.median, 0);
                df_fmt_num(gbps, sizeof(gbps), r.gbps.median, 2);
                df_fmt_num(metg, sizeof(metg), r.metg.median, 0);
                df_fmt_num(metg_cpu, sizeof(metg_cpu), r.metg_cpu.median, 0);
                if (cf->c == DF_CASE_METG && isnan(r.metg.median))
                    snprintf(metg, sizeof(metg), "> %d", DF_METG_MAX_NS);
                if (cf->c == DF_CASE_METG && isnan(r.metg_cpu.median))
                    snprintf(metg_cpu, sizeof(metg_cpu), "> %d", DF_METG_MAX_NS);
                note_of(cf, note, sizeof(note));
                const char *cells[] = {df_case_name(cf->c),
                                       workers,
                                       cf->impl->name,
                                       med,
                                       mn,
                                       mx,
                                       cpu,
                                       n,
                                       share,
                                       stolen,
                                       fps,
                                       gbps,
                                       metg,
                                       metg_cpu,
                                       note};
                df_table_row(t, cells);
            }
    }
    df_table_print(t, stdout);
    df_table_free(t);
    printf("ns/task: wall time, median of the samples (min, max beside it); cpu ns: process CPU "
           "time per task (all threads, spinning included; not inflated by other users of the "
           "machine)\nlocal: local_byte_share; stolen: share of tasks run from another worker's "
           "set (dfsched)\nMETG ns: metg case, median of the samples: smallest body (64 ns "
           "doubling) at which the workers keep 50 %% efficiency; its ns/task is the wall per task "
           "at that body; cpu: the same with the process's CPU time for workers x wall (not "
           "inflated by other users of the machine)\n");
}

/* ---------------------------------------------------------------- goals */

typedef struct DfBenchGoal {
    const char *goal;
    int workers;
    bool oversubscribed;
    const char *impl;
    double value;
    const char *ref_impl;
    double reference;
    bool met;
} DfBenchGoal;

static const DfBenchConfig *find_config(DfBench *b, const char *impl, DfBenchCase c, int wi)
{
    for (int i = 0; i < b->n_impls; i++)
        if (strcmp(b->impls[i].name, impl) == 0) {
            const DfBenchConfig *cf = df_bench_config_at(b, i, c, wi);
            return cf->impl ? cf : NULL;
        }
    return NULL;
}

static double median_of(const double *v, int n)
{
    return df_summarize(v, n).median;
}

/* cost-local's ns per task in case c no slower than the faster of
 * `peers` (NULL-terminated) that this run has, when it has any. */
static void peer_goal(GArray *goals, DfBench *b, DfBenchCase c, int w, const char *label,
                      const char *const *peers)
{
    const DfBenchConfig *cl = find_config(b, "dfsched/cost-local", c, w);
    const DfBenchConfig *best = NULL;
    double ref = NAN;
    for (; *peers; peers++) {
        const DfBenchConfig *pc = find_config(b, *peers, c, w);
        const double v = pc ? median_of(pc->ns, pc->n) : NAN;
        if (pc && !isnan(v) && (!best || v < ref)) {
            best = pc;
            ref = v;
        }
    }
    if (!cl || !best)
        return;
    const double v = median_of(cl->ns, cl->n);
    DfBenchGoal g = {label, cl->workers, cl->oversubscribed, cl->impl->name, v, best->impl->name,
                     ref,   v <= ref};
    g_array_append_val(goals, g);
}

/* The issues' goals, evaluated on this run: reported, never enforced
 * (issue 3: the first targets; issue 20: per-task cost against the
 * better peer, and locality). */
GArray *df_bench_sched_goals(DfBench *b)
{
    GArray *goals = g_array_new(FALSE, TRUE, sizeof(DfBenchGoal));
    for (int w = 0; w < b->n_workers; w++) {
        static const char *const tbb[] = {"tbb", NULL}, *const both[] = {"tbb", "openmp", NULL};
        peer_goal(goals, b, DF_CASE_EMPTY, w, "empty no slower than oneTBB", tbb);
        peer_goal(goals, b, DF_CASE_FANOUT, w, "fanout no slower than the best peer", both);
        peer_goal(goals, b, DF_CASE_CHAIN, w, "chain no slower than the best peer", both);
        const DfBenchConfig *cl = find_config(b, "dfsched/cost-local", DF_CASE_EMPTY, w);
        const DfBenchConfig *omp = find_config(b, "openmp", DF_CASE_EMPTY, w);
        if (cl) {
            double v = median_of(cl->ns, cl->n);
            DfBenchGoal g = {"empty <= 50 ns/task",
                             cl->workers,
                             cl->oversubscribed,
                             cl->impl->name,
                             v,
                             NULL,
                             50.0,
                             v <= 50.0};
            g_array_append_val(goals, g);
        }
        if (cl && omp) {
            double v = median_of(cl->ns, cl->n), ref = median_of(omp->ns, omp->n);
            DfBenchGoal g = {"empty no slower than OpenMP tasks",
                             cl->workers,
                             cl->oversubscribed,
                             cl->impl->name,
                             v,
                             "openmp",
                             ref,
                             v <= ref};
            g_array_append_val(goals, g);
        }
        const DfBenchConfig *fcl = find_config(b, "dfsched/cost-local", DF_CASE_FRAMES, w);
        const DfBenchConfig *fst = find_config(b, "dfsched/steal", DF_CASE_FRAMES, w);
        if (fcl) {
            double v = median_of(fcl->share, fcl->n);
            DfBenchGoal g = {"frames local_byte_share >= 0.92",
                             fcl->workers,
                             fcl->oversubscribed,
                             fcl->impl->name,
                             v,
                             NULL,
                             0.92,
                             v >= 0.92};
            g_array_append_val(goals, g);
        }
        if (fst) {
            /* steal is the locality-blind baseline: about 1/N is expected. */
            double v = median_of(fst->share, fst->n);
            DfBenchGoal g = {"frames local_byte_share ~1/N (steal)",
                             fst->workers,
                             fst->oversubscribed,
                             fst->impl->name,
                             v,
                             NULL,
                             1.0 / fst->workers,
                             fabs(v - 1.0 / fst->workers) <= 0.15};
            g_array_append_val(goals, g);
        }
    }
    return goals;
}

void df_bench_sched_print_goals(GArray *goals)
{
    if (goals->len == 0)
        return;
    printf("\nGoals of issues 3 and 20 on this run (reported, not tested):\n");
    for (guint i = 0; i < goals->len; i++) {
        const DfBenchGoal *g = &g_array_index(goals, DfBenchGoal, i);
        const bool share = strstr(g->goal, "share") != NULL;
        char v[32], ref[64], workers[40];
        df_fmt_num(v, sizeof(v), g->value, share ? 3 : 1);
        if (!share)
            g_strlcat(v, " ns", sizeof(v));
        if (g->ref_impl)
            snprintf(ref, sizeof(ref), "vs %s %.1f ns", g->ref_impl, g->reference);
        else if (strstr(g->goal, "1/N"))
            snprintf(ref, sizeof(ref), "(1/N = %.3f)", g->reference);
        else
            ref[0] = '\0';
        snprintf(workers, sizeof(workers), "%d worker%s%s", g->workers, g->workers == 1 ? "" : "s",
                 g->oversubscribed ? " (oversub.)" : "");
        const char *verdict = strstr(g->goal, "1/N") ? ""
                              : isnan(g->value)      ? "n/a"
                              : g->met               ? "met"
                                                     : "MISSED";
        printf("  %-36s %-22s %-20s %10s %-22s %s\n", g->goal, workers, g->impl, v, ref, verdict);
    }
}

/* ----------------------------------------------------------------- JSON */

static void json_summary(JsonBuilder *jb, const char *name, const DfSummary *s, bool range)
{
    df_json_double(jb, name, s->median);
    if (range) {
        char key[64];
        snprintf(key, sizeof(key), "%s_min", name);
        df_json_double(jb, key, s->min);
        snprintf(key, sizeof(key), "%s_max", name);
        df_json_double(jb, key, s->max);
    }
}

static void json_result(JsonBuilder *jb, const DfBenchConfig *cf)
{
    DfBenchRow r = summarize(cf);
    const bool frames = cf->c == DF_CASE_FRAMES;
    json_builder_begin_object(jb);
    json_builder_set_member_name(jb, "impl");
    json_builder_add_string_value(jb, cf->impl->name);
    json_builder_set_member_name(jb, "case");
    json_builder_add_string_value(jb, df_case_name(cf->c));
    json_builder_set_member_name(jb, "workers");
    json_builder_add_int_value(jb, cf->workers);
    json_builder_set_member_name(jb, "oversubscribed");
    json_builder_add_boolean_value(jb, cf->oversubscribed);
    json_builder_set_member_name(jb, "tasks");
    json_builder_add_int_value(jb, (gint64)cf->tasks);
    json_builder_set_member_name(jb, "samples");
    json_builder_add_int_value(jb, cf->n);
    json_summary(jb, "ns_per_task", &r.ns, true);
    json_summary(jb, "cpu_ns_per_task", &r.cpu, true);
    df_json_double_array(jb, "ns_per_task_samples", cf->ns, cf->n);
    /* Measured only where the scheduler saw input bytes. */
    json_summary(jb, "local_byte_share", &r.share, cf->impl->policy != NULL);
    df_json_double(jb, "stolen_share", r.stolen.median);
    if (frames) {
        json_summary(jb, "frames_per_s", &r.fps, true);
        json_summary(jb, "gb_per_s", &r.gbps, true);
    }
    if (cf->c == DF_CASE_METG) {
        /* null where no grain up to max_grain_ns reached the efficiency */
        json_summary(jb, "metg_ns", &r.metg, true);
        df_json_double_array(jb, "metg_ns_samples", cf->metg, cf->n);
        df_json_double(jb, "metg_efficiency", r.metg_eff.median);
        json_summary(jb, "metg_cpu_ns", &r.metg_cpu, true);
        df_json_double(jb, "metg_target_efficiency", DF_METG_EFFICIENCY);
        json_builder_set_member_name(jb, "metg_min_grain_ns");
        json_builder_add_int_value(jb, DF_METG_MIN_NS);
        json_builder_set_member_name(jb, "metg_max_grain_ns");
        json_builder_add_int_value(jb, DF_METG_MAX_NS);
    }
    json_builder_set_member_name(jb, "errors");
    json_builder_add_int_value(jb, (gint64)cf->errors);
    json_builder_set_member_name(jb, "failures");
    json_builder_add_int_value(jb, cf->failures);
    if (cf->error) {
        json_builder_set_member_name(jb, "error");
        json_builder_add_string_value(jb, cf->error);
    }
    json_builder_end_object(jb);
}

bool df_bench_sched_write_json(DfBench *b, GArray *goals)
{
    JsonBuilder *jb = json_builder_new();
    json_builder_begin_object(jb);
    json_builder_set_member_name(jb, "bench");
    json_builder_add_string_value(jb, "sched");
    df_report_machine_json(jb);

    json_builder_set_member_name(jb, "run");
    json_builder_begin_object(jb);
    json_builder_set_member_name(jb, "poll_us");
    json_builder_add_int_value(jb, b->o.poll_us);
    json_builder_set_member_name(jb, "mode");
    json_builder_add_string_value(jb, b->o.poll_us < 0 ? "poll" : "park");
    json_builder_set_member_name(jb, "repeat");
    json_builder_add_int_value(jb, b->o.repeat);
    json_builder_set_member_name(jb, "tasks");
    json_builder_add_int_value(jb, (gint64)b->params.tasks);
    json_builder_set_member_name(jb, "width");
    json_builder_add_int_value(jb, b->params.width);
    json_builder_set_member_name(jb, "batch");
    json_builder_add_int_value(jb, (gint64)b->params.batch);
    json_builder_set_member_name(jb, "frames");
    json_builder_add_int_value(jb, b->params.frames);
    json_builder_set_member_name(jb, "frame_bands");
    json_builder_add_int_value(jb, DF_FRAME_BANDS);
    json_builder_set_member_name(jb, "band_bytes");
    json_builder_add_int_value(jb, DF_FRAME_BAND_BYTES);
    json_builder_set_member_name(jb, "halo_bytes");
    json_builder_add_int_value(jb, DF_FRAME_HALO_BYTES);
    json_builder_set_member_name(jb, "frames_in_flight");
    json_builder_add_int_value(jb, DF_FRAME_IN_FLIGHT);
    json_builder_set_member_name(jb, "metg_work_ns");
    json_builder_add_int_value(jb, b->params.metg_work_ns);
    json_builder_set_member_name(jb, "quick");
    json_builder_add_boolean_value(jb, b->o.quick);
    df_json_double(jb, "duration_s", (double)(b->end_ns - b->start_ns) / 1e9);
    json_builder_set_member_name(jb, "load_avg_start");
    json_builder_begin_array(jb);
    for (int i = 0; i < 3; i++)
        json_builder_add_double_value(jb, isnan(b->load_start[i]) ? -1 : b->load_start[i]);
    json_builder_end_array(jb);
    json_builder_set_member_name(jb, "load_avg_end");
    json_builder_begin_array(jb);
    for (int i = 0; i < 3; i++)
        json_builder_add_double_value(jb, isnan(b->load_end[i]) ? -1 : b->load_end[i]);
    json_builder_end_array(jb);
    for (int i = 0; i < b->n_impls; i++)
        if (b->impls[i].peer) {
            char d[256], key[64];
            b->impls[i].peer->describe(d, sizeof(d));
            snprintf(key, sizeof(key), "peer_%s", b->impls[i].name);
            json_builder_set_member_name(jb, key);
            json_builder_add_string_value(jb, d);
        }
    json_builder_end_object(jb);

    json_builder_set_member_name(jb, "results");
    json_builder_begin_array(jb);
    for (int k = 0; k < b->n_cases; k++)
        for (int w = 0; w < b->n_workers; w++)
            for (int i = 0; i < b->n_impls; i++) {
                const DfBenchConfig *cf = df_bench_config_at(b, i, b->cases[k], w);
                if (cf->impl)
                    json_result(jb, cf);
            }
    json_builder_end_array(jb);

    if (b->o.trace_overhead)
        df_bench_sched_trace_overhead_json(jb, b);

    json_builder_set_member_name(jb, "goals");
    json_builder_begin_array(jb);
    for (guint i = 0; i < goals->len; i++) {
        const DfBenchGoal *g = &g_array_index(goals, DfBenchGoal, i);
        json_builder_begin_object(jb);
        json_builder_set_member_name(jb, "goal");
        json_builder_add_string_value(jb, g->goal);
        json_builder_set_member_name(jb, "impl");
        json_builder_add_string_value(jb, g->impl);
        json_builder_set_member_name(jb, "workers");
        json_builder_add_int_value(jb, g->workers);
        df_json_double(jb, "value", g->value);
        if (g->ref_impl) {
            json_builder_set_member_name(jb, "reference_impl");
            json_builder_add_string_value(jb, g->ref_impl);
        }
        df_json_double(jb, "reference", g->reference);
        json_builder_set_member_name(jb, "met");
        json_builder_add_boolean_value(jb, g->met);
        json_builder_end_object(jb);
    }
    json_builder_end_array(jb);
    json_builder_end_object(jb);

    GError *err = NULL;
    bool ok = df_json_write(jb, b->o.json, &err);
    if (!ok) {
        fprintf(stderr, "dfbench sched: error: cannot write %s: %s\n", b->o.json, err->message);
        g_error_free(err);
    }
    g_object_unref(jb);
    return ok;
}

bool df_bench_sched_write_csv(DfBench *b)
{
    static const char *const headers[] = {"impl",
                                          "case",
                                          "workers",
                                          "oversubscribed",
                                          "tasks",
                                          "samples",
                                          "ns_per_task",
                                          "ns_per_task_min",
                                          "ns_per_task_max",
                                          "cpu_ns_per_task",
                                          "local_byte_share",
                                          "stolen_share",
                                          "frames_per_s",
                                          "gb_per_s",
                                          "metg_ns",
                                          "errors",
                                          "failures",
                                          "error"};
    enum { N_COLS = sizeof(headers) / sizeof(headers[0]) };
    DfCsv csv;
    int ret = df_csv_open(&csv, b->o.csv, N_COLS, headers);
    if (ret < 0) {
        fprintf(stderr, "dfbench sched: error: cannot write %s: %s\n", b->o.csv, g_strerror(-ret));
        return false;
    }
    for (int k = 0; k < b->n_cases; k++)
        for (int w = 0; w < b->n_workers; w++)
            for (int i = 0; i < b->n_impls; i++) {
                const DfBenchConfig *cf = df_bench_config_at(b, i, b->cases[k], w);
                if (!cf->impl)
                    continue;
                DfBenchRow r = summarize(cf);
                char f[14][40];
                snprintf(f[0], sizeof(f[0]), "%d", cf->workers);
                snprintf(f[1], sizeof(f[1]), "%llu", (unsigned long long)cf->tasks);
                snprintf(f[2], sizeof(f[2]), "%d", cf->n);
                snprintf(f[3], sizeof(f[3]), "%.3f", r.ns.median);
                snprintf(f[4], sizeof(f[4]), "%.3f", r.ns.min);
                snprintf(f[5], sizeof(f[5]), "%.3f", r.ns.max);
                /* Empty cells, not "nan", where nothing was measured. */
                const double opt[6] = {r.cpu.median, r.share.median, r.stolen.median,
                                       r.fps.median, r.gbps.median,  r.metg.median};
                for (int j = 0; j < 6; j++)
                    if (isnan(opt[j]))
                        f[6 + j][0] = '\0';
                    else
                        snprintf(f[6 + j], sizeof(f[6 + j]), "%.4f", opt[j]);
                snprintf(f[12], sizeof(f[12]), "%llu", (unsigned long long)cf->errors);
                snprintf(f[13], sizeof(f[13]), "%d", cf->failures);
                const char *cells[N_COLS] = {cf->impl->name, df_case_name(cf->c),
                                             f[0],           cf->oversubscribed ? "true" : "false",
                                             f[1],           f[2],
                                             f[3],           f[4],
                                             f[5],           f[6],
                                             f[7],           f[8],
                                             f[9],           f[10],
                                             f[11],          f[12],
                                             f[13],          cf->error};
                df_csv_row(&csv, cells);
            }
    ret = df_csv_close(&csv);
    if (ret < 0)
        fprintf(stderr, "dfbench sched: error: error writing %s: %s\n", b->o.csv, g_strerror(-ret));
    return ret == 0;
}
