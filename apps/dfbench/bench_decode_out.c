/* dfbench decode's output: the speed-up figures (Amdahl, Karp-Flatt,
 * Gustafson), the header and the table, JSON, CSV and the plot. */
#include "bench_decode.h"
#include "dfbench.h"
#include "plot.h"
#include "report.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- speed-up */

typedef struct DfSpeedup {
    int input, impl;
    int n; /* worker counts of this implementation */
    int workers[64];
    double s[64];  /* S(N), NAN when not measured */
    double kf[64]; /* Karp-Flatt e(N), NAN for N = 1 */
    double gustafson[64];
    double amdahl_s; /* NAN without a point N > 1 */
} DfSpeedup;

static double median_fps(const DfDecConfig *cf)
{
    return df_summarize(cf->fps, cf->n).median;
}

static const DfDecConfig *find_config(const DfDecBench *b, int input, int impl, int workers)
{
    for (guint i = 0; i < b->configs->len; i++) {
        const DfDecConfig *cf = &g_array_index(b->configs, DfDecConfig, i);
        if (cf->input == input && cf->impl == impl && cf->workers == workers)
            return cf;
    }
    return NULL;
}

static double baseline_fps(const DfDecBench *b, int input)
{
    const DfDecConfig *cf = find_config(b, input, 0, 1);
    return cf ? median_fps(cf) : NAN;
}

static DfSpeedup speedup_of(const DfDecBench *b, int input, int impl)
{
    DfSpeedup sp = {.input = input, .impl = impl, .amdahl_s = NAN};
    const double t1 = baseline_fps(b, input);
    double sxy = 0, sxx = 0;
    for (int w = 0; w < b->n_workers && sp.n < 64; w++) {
        const DfDecConfig *cf = find_config(b, input, impl, b->workers[w]);
        if (!cf)
            continue;
        const int n = cf->workers;
        const double s = median_fps(cf) / t1;
        sp.workers[sp.n] = n;
        sp.s[sp.n] = s;
        sp.kf[sp.n] = NAN;
        if (n > 1 && isfinite(s) && s > 0) {
            const double x = 1 - 1.0 / n, y = 1 / s - 1.0 / n;
            sp.kf[sp.n] = y / x;
            sxy += x * y;
            sxx += x * x;
        }
        sp.n++;
    }
    if (sxx > 0)
        sp.amdahl_s = sxy / sxx;
    for (int i = 0; i < sp.n; i++)
        sp.gustafson[i] = sp.workers[i] + (1 - sp.workers[i]) * sp.amdahl_s;
    return sp;
}

/* The series shown first in the JSON's "speedup": dfmedia/cost-local when
 * it ran, else the first parallel implementation. */
static int headline_impl(const DfDecBench *b)
{
    for (int i = 0; i < b->n_impls; i++)
        if (strcmp(b->impls[i].name, "dfmedia/cost-local") == 0)
            return i;
    return b->n_impls > 1 ? 1 : 0;
}

/* --------------------------------------------------------------- output */

static void note_of(const DfDecBench *b, const DfDecConfig *cf, char *buf, size_t len)
{
    GString *s = g_string_new(NULL);
    if (cf->oversubscribed)
        g_string_append(s, "oversubscribed");
    const DfDecConfig *base = find_config(b, cf->input, 0, 1);
    if (base && base->frames && cf->frames && cf->frames != base->frames)
        g_string_append_printf(s, "%s%llu frames (1 thread: %llu)", s->len ? "; " : "",
                               (unsigned long long)cf->frames, (unsigned long long)base->frames);
    if (cf->failures)
        g_string_append_printf(s, "%sfailed %d/%d: %s", s->len ? "; " : "", cf->failures, cf->n,
                               cf->error);
    /* Only when not slice jobs as tasks; the reason is in the JSON. */
    if (b->impls[cf->impl].kind == DF_IMPL_DFMEDIA && strncmp(cf->threading, "slice", 5) != 0 &&
        cf->threading[0])
        g_string_append_printf(s, "%sthreading %.*s", s->len ? "; " : "",
                               (int)strcspn(cf->threading, ":"), cf->threading);
    snprintf(buf, len, "%s", s->str);
    g_string_free(s, TRUE);
}

void df_dec_print_header(const DfDecBench *b)
{
    char machine[1024];
    df_report_machine_line(machine, sizeof(machine));
    printf("dfbench decode on %s\n", machine);
    for (int i = 0; i < b->n_clips; i++) {
        const DfClip *c = &b->clips[i];
        printf("clip %s: %s %dx%d, %d packets\n", c->name, avcodec_get_name(c->par->codec_id),
               c->par->width, c->par->height, c->n_pkts);
    }
    printf("%d samples per configuration, interleaved; dfsched %s; dfmedia threading %s\n",
           b->o.repeat,
           b->o.poll_us == -1  ? "poll mode"
           : b->o.poll_us >= 0 ? "parking mode (--poll-us)"
                               : "default idle policy (spin, then park)",
           df_threading_name(b->threading));
    if (b->sink)
        printf("pipelines: filesrc ! parsebin ! DECODER ! %s sync=false qos=false\n", b->sink);
}

/* fps untraced vs traced per dfmedia configuration (--trace-overhead). */
void df_dec_print_trace_overhead(const DfDecBench *b)
{
    static const char *const headers[] = {"clip",       "workers",  "impl", "fps off", "fps on",
                                          "overhead %", "paired %", "n",    "dropped"};
    DfTable *t = df_table_new(9, headers, "lrlrrrrrr");
    for (guint k = 0; k < b->configs->len; k++) {
        const DfDecConfig *cf = &g_array_index(b->configs, DfDecConfig, k);
        if (!cf->fps_on)
            continue;
        const DfSummary off = df_summarize(cf->fps, cf->n), on = df_summarize(cf->fps_on, cf->n_on);
        char workers[16], foff[32], fon[32], pct[32], paired[32], n[32], dropped[32];
        snprintf(workers, sizeof(workers), "%d", cf->workers);
        df_fmt_num(foff, sizeof(foff), off.median, 1);
        df_fmt_num(fon, sizeof(fon), on.median, 1);
        df_fmt_num(pct, sizeof(pct), df_overhead_pct(off.median, on.median, true), 2);
        df_fmt_num(paired, sizeof(paired),
                   df_overhead_pct_paired(cf->fps, cf->n, cf->fps_on, cf->n_on, true), 2);
        snprintf(n, sizeof(n), "%d/%d", off.n, on.n);
        snprintf(dropped, sizeof(dropped), "%llu", (unsigned long long)cf->dropped);
        const char *cells[] = {b->clips[cf->input].name,
                               workers,
                               b->impls[cf->impl].name,
                               foff,
                               fon,
                               pct,
                               paired,
                               n,
                               dropped};
        df_table_row(t, cells);
    }
    printf("\ntrace overhead (same repeats, fresh schedulers, tracing off vs on):\n");
    df_table_print(t, stdout);
    printf("overhead %%: fps off / fps on - 1 (medians; the time a frame takes longer traced); "
           "paired %%: median over repeats of each back-to-back pair's; dropped: trace events "
           "lost to full buffers\n");
    df_table_free(t);
}

void df_dec_print_table(const DfDecBench *b)
{
    static const char *const headers[] = {"clip",     "workers", "impl",    "fps",    "min",
                                          "max",      "n",       "speedup", "steady", "1st ms",
                                          "cpu ms/f", "p50 ms",  "p99 ms",  "frames", "note"};
    DfTable *t = df_table_new(15, headers, "lrlrrrrrrrrrrrl");
    int last_input = -1;
    for (int in = 0; in < b->n_clips; in++)
        for (int w = 0; w < b->n_workers; w++)
            for (int i = 0; i < b->n_impls; i++) {
                const DfDecConfig *cf = find_config(b, in, i, b->workers[w]);
                if (!cf || (b->impls[i].baseline && w > 0))
                    continue;
                if (last_input >= 0 && last_input != in)
                    df_table_rule(t);
                last_input = in;
                const DfSummary fps = df_summarize(cf->fps, cf->n);
                char workers[16], med[32], mn[32], mx[32], n[16], sp[32], steady[32], first[32],
                    cpu[32], p50[32], p99[32], frames[32], note[512];
                snprintf(workers, sizeof(workers), "%d", cf->workers);
                df_fmt_num(med, sizeof(med), fps.median, 1);
                df_fmt_num(mn, sizeof(mn), fps.min, 1);
                df_fmt_num(mx, sizeof(mx), fps.max, 1);
                snprintf(n, sizeof(n), "%d", fps.n);
                df_fmt_num(sp, sizeof(sp), fps.median / baseline_fps(b, in), 2);
                df_fmt_num(steady, sizeof(steady), df_summarize(cf->steady, cf->n).median, 1);
                df_fmt_num(first, sizeof(first), df_summarize(cf->first_ms, cf->n).median, 1);
                df_fmt_num(cpu, sizeof(cpu), df_summarize(cf->cpu, cf->n).median, 2);
                df_fmt_num(p50, sizeof(p50), df_summarize(cf->p50, cf->n).median, 1);
                df_fmt_num(p99, sizeof(p99), df_summarize(cf->p99, cf->n).median, 1);
                snprintf(frames, sizeof(frames), "%llu", (unsigned long long)cf->frames);
                note_of(b, cf, note, sizeof(note));
                const char *cells[] = {b->clips[in].name,
                                       workers,
                                       b->impls[i].name,
                                       med,
                                       mn,
                                       mx,
                                       n,
                                       sp,
                                       steady,
                                       first,
                                       cpu,
                                       p50,
                                       p99,
                                       frames,
                                       note};
                df_table_row(t, cells);
            }
    df_table_print(t, stdout);
    df_table_free(t);
    printf("fps: median of the samples (min, max beside it); speedup: S(N) = fps / fps of "
           "single-threaded libavcodec (ffmpeg)\nsteady: fps from the first frame out to the "
           "last; 1st ms: from the timed pass's start to its first frame (a pipeline: from "
           "PLAYING, with its start-up; in-process decoders are opened and warmed before)\n"
           "cpu ms/f: CPU time per frame of all the "
           "implementation's threads (in-process ones)\np50/p99: dfmedia's packet-in to frame-out "
           "latency (median over samples)\n");

    bool header = false;
    for (int in = 0; in < b->n_clips; in++)
        for (int i = 1; i < b->n_impls; i++) {
            const DfSpeedup sp = speedup_of(b, in, i);
            if (isnan(sp.amdahl_s))
                continue;
            if (!header) {
                printf("\nAmdahl serial fraction s (fitted), Karp-Flatt e(N), Gustafson "
                       "N + (1-N)s:\n");
                header = true;
            }
            printf("  %-28s %-22s s = %6.3f ", b->clips[in].name, b->impls[i].name, sp.amdahl_s);
            for (int k = 0; k < sp.n; k++)
                if (sp.workers[k] > 1)
                    printf(" e(%d) = %6.3f  G(%d) = %5.2f", sp.workers[k], sp.kf[k], sp.workers[k],
                           sp.gustafson[k]);
            printf("\n");
        }
}

static void json_speedup_body(JsonBuilder *jb, const DfDecBench *b, const DfSpeedup *sp)
{
    json_builder_set_member_name(jb, "input");
    json_builder_add_string_value(jb, b->clips[sp->input].name);
    json_builder_set_member_name(jb, "impl");
    json_builder_add_string_value(jb, b->impls[sp->impl].name);
    df_json_double(jb, "t1_fps", baseline_fps(b, sp->input));
    json_builder_set_member_name(jb, "workers");
    json_builder_begin_array(jb);
    for (int i = 0; i < sp->n; i++)
        json_builder_add_int_value(jb, sp->workers[i]);
    json_builder_end_array(jb);
    df_json_double_array(jb, "speedup", sp->s, sp->n);
    df_json_double(jb, "amdahl_s", sp->amdahl_s);
    df_json_double_array(jb, "karp_flatt", sp->kf, sp->n);
    df_json_double_array(jb, "gustafson", sp->gustafson, sp->n);
}

/* "trace_overhead": per dfmedia configuration, fps untraced and traced. */
static void json_trace_overhead(JsonBuilder *jb, const DfDecBench *b)
{
    json_builder_set_member_name(jb, "trace_overhead");
    json_builder_begin_array(jb);
    for (guint k = 0; k < b->configs->len; k++) {
        const DfDecConfig *cf = &g_array_index(b->configs, DfDecConfig, k);
        if (!cf->fps_on)
            continue;
        json_builder_begin_object(jb);
        json_builder_set_member_name(jb, "input");
        json_builder_add_string_value(jb, b->clips[cf->input].name);
        json_builder_set_member_name(jb, "impl");
        json_builder_add_string_value(jb, b->impls[cf->impl].name);
        json_builder_set_member_name(jb, "policy");
        json_builder_add_string_value(jb, b->impls[cf->impl].policy);
        json_builder_set_member_name(jb, "workers");
        json_builder_add_int_value(jb, cf->workers);
        df_json_overhead(jb, "fps", cf->fps, cf->n, cf->fps_on, cf->n_on, true);
        json_builder_set_member_name(jb, "dropped_events");
        json_builder_add_int_value(jb, (gint64)cf->dropped);
        json_builder_end_object(jb);
    }
    json_builder_end_array(jb);
}

bool df_dec_write_json(const DfDecBench *b)
{
    JsonBuilder *jb = json_builder_new();
    json_builder_begin_object(jb);
    json_builder_set_member_name(jb, "bench");
    json_builder_add_string_value(jb, "decode");
    df_report_machine_json(jb);

    json_builder_set_member_name(jb, "run");
    json_builder_begin_object(jb);
    json_builder_set_member_name(jb, "repeat");
    json_builder_add_int_value(jb, b->o.repeat);
    json_builder_set_member_name(jb, "poll_us");
    if (b->o.poll_us >= -1)
        json_builder_add_int_value(jb, b->o.poll_us);
    else
        json_builder_add_null_value(jb);
    json_builder_set_member_name(jb, "threading");
    json_builder_add_string_value(jb, df_threading_name(b->threading));
    json_builder_set_member_name(jb, "sink"); /* the pipelines'; null: none ran */
    if (b->sink)
        json_builder_add_string_value(jb, b->sink);
    else
        json_builder_add_null_value(jb);
    json_builder_set_member_name(jb, "thread_count");
    json_builder_add_int_value(jb, b->o.thread_count);
    json_builder_set_member_name(jb, "in_flight");
    json_builder_add_int_value(jb, b->o.in_flight);
    df_json_double(jb, "duration_s", (double)(b->end_ns - b->start_ns) / 1e9);
    df_json_double(jb, "load_avg_start", b->load_start[0]);
    df_json_double(jb, "load_avg_end", b->load_end[0]);
    /* The traces and their own frame rates: dfsim's "recording". */
    json_builder_set_member_name(jb, "traces");
    json_builder_begin_array(jb);
    for (int i = 0; i < b->n_traces; i++) {
        json_builder_begin_object(jb);
        json_builder_set_member_name(jb, "workers");
        json_builder_add_int_value(jb, b->traces[i].workers);
        json_builder_set_member_name(jb, "run");
        json_builder_add_int_value(jb, b->traces[i].run + 1);
        /* The repeat it ran in (from 1; its samples are the repeat-th of
         * each configuration's fps_samples): dfsim pairs them. */
        json_builder_set_member_name(jb, "repeat");
        json_builder_add_int_value(jb, b->traces[i].repeat + 1);
        json_builder_set_member_name(jb, "impl");
        json_builder_add_string_value(jb, b->impls[b->trace_impl].name);
        /* dfsim compares a trace only with runs of the same threading. */
        json_builder_set_member_name(jb, "threading");
        json_builder_add_string_value(jb, b->traces[i].threading);
        json_builder_set_member_name(jb, "file");
        json_builder_add_string_value(jb, b->traces[i].path);
        df_json_double(jb, "fps", b->traces[i].fps);
        json_builder_end_object(jb);
    }
    json_builder_end_array(jb);
    json_builder_set_member_name(jb, "inputs");
    json_builder_begin_array(jb);
    for (int i = 0; i < b->n_clips; i++) {
        const DfClip *c = &b->clips[i];
        json_builder_begin_object(jb);
        json_builder_set_member_name(jb, "input");
        json_builder_add_string_value(jb, c->name);
        json_builder_set_member_name(jb, "path");
        json_builder_add_string_value(jb, c->path);
        json_builder_set_member_name(jb, "codec");
        json_builder_add_string_value(jb, avcodec_get_name(c->par->codec_id));
        json_builder_set_member_name(jb, "width");
        json_builder_add_int_value(jb, c->par->width);
        json_builder_set_member_name(jb, "height");
        json_builder_add_int_value(jb, c->par->height);
        json_builder_set_member_name(jb, "packets");
        json_builder_add_int_value(jb, c->n_pkts);
        json_builder_end_object(jb);
    }
    json_builder_end_array(jb);
    json_builder_end_object(jb);

    json_builder_set_member_name(jb, "results");
    json_builder_begin_array(jb);
    for (guint k = 0; k < b->configs->len; k++) {
        const DfDecConfig *cf = &g_array_index(b->configs, DfDecConfig, k);
        const DfDecImpl *im = &b->impls[cf->impl];
        const DfSummary fps = df_summarize(cf->fps, cf->n);
        json_builder_begin_object(jb);
        json_builder_set_member_name(jb, "input");
        json_builder_add_string_value(jb, b->clips[cf->input].name);
        json_builder_set_member_name(jb, "impl");
        json_builder_add_string_value(jb, im->name);
        json_builder_set_member_name(jb, "workers");
        json_builder_add_int_value(jb, cf->workers);
        json_builder_set_member_name(jb, "oversubscribed");
        json_builder_add_boolean_value(jb, cf->oversubscribed);
        json_builder_set_member_name(jb, "samples");
        json_builder_add_int_value(jb, cf->n);
        df_json_double(jb, "fps_median", fps.median);
        df_json_double(jb, "fps_min", fps.min);
        df_json_double(jb, "fps_max", fps.max);
        df_json_double_array(jb, "fps_samples", cf->fps, cf->n);
        df_json_double(jb, "speedup", fps.median / baseline_fps(b, cf->input));
        df_json_double(jb, "fps_steady_median", df_summarize(cf->steady, cf->n).median);
        df_json_double_array(jb, "fps_steady_samples", cf->steady, cf->n);
        df_json_double(jb, "first_frame_ms_median", df_summarize(cf->first_ms, cf->n).median);
        /* Measured only by dfmedia (its own counters). */
        df_json_double(jb, "latency_p50_ms", df_summarize(cf->p50, cf->n).median);
        df_json_double(jb, "latency_p99_ms", df_summarize(cf->p99, cf->n).median);
        /* In-process implementations only (GStreamer's pipelines start
         * and stop threads of their own). */
        df_json_double(jb, "cpu_ms_per_frame", df_summarize(cf->cpu, cf->n).median);
        json_builder_set_member_name(jb, "frames");
        json_builder_add_int_value(jb, (gint64)cf->frames);
        if (cf->threading[0]) {
            json_builder_set_member_name(jb, "threading");
            json_builder_add_string_value(jb, cf->threading);
        }
        json_builder_set_member_name(jb, "failures");
        json_builder_add_int_value(jb, cf->failures);
        if (cf->error) {
            json_builder_set_member_name(jb, "error");
            json_builder_add_string_value(jb, cf->error);
        }
        json_builder_end_object(jb);
    }
    json_builder_end_array(jb);
    if (b->o.trace_overhead)
        json_trace_overhead(jb, b);

    /* The headline series' members at the top level (the shape),
     * every (input, implementation) series under "series". */
    json_builder_set_member_name(jb, "speedup");
    json_builder_begin_object(jb);
    json_builder_set_member_name(jb, "baseline_impl");
    json_builder_add_string_value(jb, "ffmpeg");
    json_builder_set_member_name(jb, "definition");
    json_builder_add_string_value(
        jb, "S(N) = T(1)/T(N) with T(1) single-threaded libavcodec; amdahl_s: s fitted by least "
            "squares to 1/S = s + (1-s)/N; karp_flatt: (1/S - 1/N)/(1 - 1/N), null for N = 1; "
            "gustafson: N + (1-N) s");
    const DfSpeedup head = speedup_of(b, 0, headline_impl(b));
    json_speedup_body(jb, b, &head);
    json_builder_set_member_name(jb, "series");
    json_builder_begin_array(jb);
    for (int in = 0; in < b->n_clips; in++)
        for (int i = 1; i < b->n_impls; i++) {
            const DfSpeedup sp = speedup_of(b, in, i);
            json_builder_begin_object(jb);
            json_speedup_body(jb, b, &sp);
            json_builder_end_object(jb);
        }
    json_builder_end_array(jb);
    json_builder_end_object(jb);
    json_builder_end_object(jb);

    GError *err = NULL;
    const bool ok = df_json_write(jb, b->o.json, &err);
    if (!ok) {
        fprintf(stderr, "dfbench decode: error: cannot write %s: %s\n", b->o.json, err->message);
        g_error_free(err);
    }
    g_object_unref(jb);
    return ok;
}

bool df_dec_write_csv(const DfDecBench *b)
{
    static const char *const headers[] = {"input",
                                          "impl",
                                          "workers",
                                          "oversubscribed",
                                          "samples",
                                          "fps_median",
                                          "fps_min",
                                          "fps_max",
                                          "speedup",
                                          "latency_p50_ms",
                                          "latency_p99_ms",
                                          "frames",
                                          "failures",
                                          "error",
                                          "cpu_ms_per_frame",
                                          "fps_steady_median",
                                          "first_frame_ms_median"};
    enum { N_COLS = sizeof(headers) / sizeof(headers[0]) };
    DfCsv csv;
    int ret = df_csv_open(&csv, b->o.csv, N_COLS, headers);
    if (ret < 0) {
        fprintf(stderr, "dfbench decode: error: cannot write %s: %s\n", b->o.csv, g_strerror(-ret));
        return false;
    }
    for (guint k = 0; k < b->configs->len; k++) {
        const DfDecConfig *cf = &g_array_index(b->configs, DfDecConfig, k);
        const DfSummary fps = df_summarize(cf->fps, cf->n);
        const double v[9] = {fps.median,
                             fps.min,
                             fps.max,
                             fps.median / baseline_fps(b, cf->input),
                             df_summarize(cf->p50, cf->n).median,
                             df_summarize(cf->p99, cf->n).median,
                             df_summarize(cf->cpu, cf->n).median,
                             df_summarize(cf->steady, cf->n).median,
                             df_summarize(cf->first_ms, cf->n).median};
        char f[13][40];
        snprintf(f[0], sizeof(f[0]), "%d", cf->workers);
        snprintf(f[1], sizeof(f[1]), "%d", cf->n);
        /* Empty cells, not "nan", where nothing was measured. */
        for (int j = 0; j < 9; j++) {
            char *cell = f[j < 6 ? 2 + j : 4 + j];
            if (isnan(v[j]))
                cell[0] = '\0';
            else
                snprintf(cell, sizeof(f[0]), "%.4f", v[j]);
        }
        snprintf(f[8], sizeof(f[8]), "%llu", (unsigned long long)cf->frames);
        snprintf(f[9], sizeof(f[9]), "%d", cf->failures);
        const char *cells[N_COLS] = {b->clips[cf->input].name,
                                     b->impls[cf->impl].name,
                                     f[0],
                                     cf->oversubscribed ? "true" : "false",
                                     f[1],
                                     f[2],
                                     f[3],
                                     f[4],
                                     f[5],
                                     f[6],
                                     f[7],
                                     f[8],
                                     f[9],
                                     cf->error,
                                     f[10],
                                     f[11],
                                     f[12]};
        df_csv_row(&csv, cells);
    }
    ret = df_csv_close(&csv);
    if (ret < 0)
        fprintf(stderr, "dfbench decode: error: cannot write %s: %s\n", b->o.csv, g_strerror(-ret));
    return ret == 0;
}

bool df_dec_write_plot(const DfDecBench *b)
{
    const int n_series = b->n_clips * b->n_impls;
    DfPlotSeries *fps = g_new0(DfPlotSeries, (gsize)n_series);
    DfPlotSeries *spd = g_new0(DfPlotSeries, (gsize)n_series);
    double *xs = g_new0(double, (gsize)n_series *(gsize)b->n_workers);
    double *ys = g_new0(double, (gsize)n_series *(gsize)b->n_workers);
    double *ss = g_new0(double, (gsize)n_series *(gsize)b->n_workers);
    gchar **labels = g_new0(gchar *, (gsize)n_series + 1);
    int nf = 0, ns = 0;
    for (int in = 0; in < b->n_clips; in++)
        for (int i = 0; i < b->n_impls; i++) {
            const int k = in * b->n_impls + i;
            double *x = xs + (size_t)k * (size_t)b->n_workers;
            double *y = ys + (size_t)k * (size_t)b->n_workers;
            double *s = ss + (size_t)k * (size_t)b->n_workers;
            int n = 0;
            for (int w = 0; w < b->n_workers; w++) {
                const DfDecConfig *cf = find_config(b, in, i, b->workers[w]);
                if (!cf)
                    continue;
                x[n] = cf->workers;
                y[n] = median_fps(cf);
                s[n] = y[n] / baseline_fps(b, in);
                n++;
            }
            labels[k] = b->n_clips > 1
                            ? g_strdup_printf("%s (%s)", b->impls[i].name, b->clips[in].name)
                            : g_strdup(b->impls[i].name);
            fps[nf++] = (DfPlotSeries){.label = labels[k], .n = n, .x = x, .y = y};
            /* The baseline too (S(1) = 1): a series keeps its colour
             * in both panels. */
            spd[ns++] = (DfPlotSeries){.label = labels[k], .n = n, .x = x, .y = s};
        }
    const DfPlotPanel panels[2] = {
        {.title = "decode rate", .y_label = "frames per second", .n_series = nf, .series = fps},
        {.title = "speed-up vs 1-thread libavcodec",
         .y_label = "S(N) = T(1) / T(N)",
         .n_series = ns,
         .series = spd,
         .ideal_line = true},
    };
    char err[256];
    const int ret = df_plot_write(b->o.plot, "workers (cores)", false, panels, 2, err, sizeof(err));
    if (ret < 0)
        fprintf(stderr, "dfbench decode: error: %s\n", err);
    g_strfreev(labels);
    g_free(fps);
    g_free(spd);
    g_free(xs);
    g_free(ys);
    g_free(ss);
    return ret == 0;
}
