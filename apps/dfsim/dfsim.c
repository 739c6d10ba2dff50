/* dfsim: project a recorded dfmedia run onto other machines.
 *
 *   dfsim --trace FILE --topology "package:4 l3:2 core:16 pu:8" \
 *         --policy cost-local,steal --workers 1,2,64,1024 --json OUT
 *
 * Replays the task graph of a trace (dfplay/dfbench --trace, dfdec
 * trace-file) on a synthetic hwloc topology with dfsched's own policy code,
 * charging every byte read across workers by its trCost level.  With
 * --validate it compares its projection for this machine with measured
 * dfbench decode figures.  Given several traces of one clip and worker
 * count (dfbench decode --trace-runs), it replays each and reports the
 * median, as dfbench reports the median of its samples. */
#include "plot.h"
#include "report.h"
#include "cli.h"
#include "dfsched_trace.h"
#include "sim.h"

#include <errno.h>
#include <glib.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Opts {
    char **traces;
    char *topology, *policies, *workers, *streams, *json, *csv, *plot;
    char *ns_per_byte, *validate, *validate_input, *validate_impl, *lost_cpu, *slowdown;
    char *wpp_factor, *job_factor;
    int task_overhead_ns, poll_ns, window;
    double explore;
} Opts;

#define PROG        "dfsim"
#define MAX_WORKERS 4096
#define MAX_VALUES  64
/* 1 us a byte is already absurd; far larger costs overflow the simulated
 * clock (int64 ns) when converted. */
#define MAX_NS_PER_BYTE 1000.0

/* A --workers or --streams list ("1,2,16" or "1-4") into out[MAX_VALUES]. */
static int parse_list(const char *flag, const char *spec, int max, int *out)
{
    int *v = NULL;
    const int n = df_cli_parse_int_list(spec, max, &v);
    if (n < 0) {
        df_cli_usage(PROG, "bad %s \"%s\" (e.g. 1,2,16 or 1-4, 1 to %d)", flag, spec, max);
        return -1;
    }
    if (n > MAX_VALUES) {
        df_cli_usage(PROG, "bad %s \"%s\": at most %d values", flag, spec, MAX_VALUES);
        g_free(v);
        return -1;
    }
    memcpy(out, v, sizeof(int) * (size_t)n);
    g_free(v);
    return n;
}

/* "l3=0.04,numa=0.1": per-level ns/byte overrides. */
static int parse_npb(const char *s, double *npb, GError **err)
{
    gchar **parts = g_strsplit(s, ",", -1);
    int ret = 0;
    for (int i = 0; parts[i] && !ret; i++) {
        gchar **kv = g_strsplit(parts[i], "=", 2);
        int lev = -1;
        for (int l = 0; kv[0] && l < DF_N_LEVELS; l++)
            if (strcmp(kv[0], df_level_name((DfLevel)l)) == 0)
                lev = l;
        char *end = NULL;
        double v = kv[0] && kv[1] && *kv[1] ? strtod(kv[1], &end) : -1;
        /* isfinite: strtod takes "inf", "nan" and 1e999. */
        if (lev < 0 || !kv[1] || !end || *end || !isfinite(v) || v < 0 || v > MAX_NS_PER_BYTE) {
            g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "bad --ns-per-byte entry \"%s\" (LEVEL=NS, NS 0 to 1000, LEVEL one of "
                        "self, pu, l2, l3, numa, machine)",
                        parts[i]);
            ret = -1;
        } else {
            npb[lev] = v;
        }
        g_strfreev(kv);
    }
    g_strfreev(parts);
    return ret;
}

typedef struct Row {
    char policy[32];
    int workers, streams;
    SimResult r;     /* the median over the traces, field by field */
    double *fps_run; /* per trace */
    double speedup;
} Row;

/* One recorded run to replay. */
typedef struct SimInput {
    const char *path;
    DfTrace trace;
    SimGraph *graph;
    double wpp_factor;           /* this graph's (its rows' share of the work differs) */
    double job_factor;           /* likewise for unordered jobs */
    double wpp_ratio;            /* the measured CPU ratio they came from; NAN: given or none */
    double lost_ns, dispatch_ns; /* the graph's (sim_graph_lost_ns(), _dispatch_ns()) */
    char threading[16];          /* the recording's libavcodec threading, "" when unknown */
    int repeat;                  /* the dfbench repeat it ran in, from 1; 0: unknown */
} SimInput;

static double median_of(const double *v, int n)
{
    return df_summarize(v, n).median;
}

/* The median over the inputs of the double at `offset` in each. */
static double inputs_median(const SimInput *in, int n, size_t offset)
{
    double *v = g_new(double, (gsize)n);
    for (int i = 0; i < n; i++)
        memcpy(&v[i], (const char *)&in[i] + offset, sizeof(double));
    const double m = median_of(v, n);
    g_free(v);
    return m;
}

/* The per-trace results of one configuration, field by field. */
static SimResult median_result(const SimResult *runs, int n)
{
    SimResult m = runs[0];
    double *v = g_new(double, (gsize)n);
#define MEDIAN_FIELD(f, type)                                                                      \
    do {                                                                                           \
        for (int i = 0; i < n; i++)                                                                \
            v[i] = (double)runs[i].f;                                                              \
        m.f = (type)median_of(v, n);                                                               \
    } while (0)
    MEDIAN_FIELD(makespan_ns, int64_t);
    MEDIAN_FIELD(frames, uint64_t);
    MEDIAN_FIELD(fps, double);
    MEDIAN_FIELD(idle_share, double);
    MEDIAN_FIELD(tasks, uint64_t);
    MEDIAN_FIELD(stolen, uint64_t);
    MEDIAN_FIELD(local_byte_share, double);
    MEDIAN_FIELD(transfer_ns, int64_t);
    MEDIAN_FIELD(lost_ns, int64_t);
    for (int l = 0; l < DF_N_LEVELS; l++)
        MEDIAN_FIELD(bytes_level[l], uint64_t);
#undef MEDIAN_FIELD
    g_free(v);
    return m;
}

/* The member `field` of dfbench decode's result for impl/workers (NULL
 * if absent). */
static JsonNode *measured_node(JsonArray *results, const char *impl, int workers, const char *input,
                               const char *field)
{
    for (guint i = 0; i < json_array_get_length(results); i++) {
        /* The file is user input: a member of another type is no match
         * (json-glib's getters would warn and hand strcmp() a NULL). */
        JsonNode *on = json_array_get_element(results, i);
        JsonObject *o = JSON_NODE_HOLDS_OBJECT(on) ? json_node_get_object(on) : NULL;
        JsonNode *in = o ? json_object_get_member(o, "impl") : NULL;
        JsonNode *wn = o ? json_object_get_member(o, "workers") : NULL;
        JsonNode *pn = o ? json_object_get_member(o, "input") : NULL;
        JsonNode *fn = o ? json_object_get_member(o, field) : NULL;
        const char *name = in && JSON_NODE_HOLDS_VALUE(in) ? json_node_get_string(in) : NULL;
        const char *inp = pn && JSON_NODE_HOLDS_VALUE(pn) ? json_node_get_string(pn) : NULL;
        if (!name || !wn || !JSON_NODE_HOLDS_VALUE(wn) || strcmp(name, impl) != 0 ||
            json_node_get_int(wn) != workers)
            continue;
        if (input && inp && !strstr(inp, input))
            continue;
        return fn;
    }
    return NULL;
}

/* A number of dfbench decode's result for impl/workers (NAN if absent). */
static double measured(JsonArray *results, const char *impl, int workers, const char *input,
                       const char *field)
{
    JsonNode *fn = measured_node(results, impl, workers, input, field);
    return fn && JSON_NODE_HOLDS_VALUE(fn) && json_node_get_value_type(fn) != G_TYPE_STRING
               ? json_node_get_double(fn)
               : NAN;
}

/* The threading mode in dfbench decode's "threading" text ("slice",
 * "frame", "none": the word before the reason); "" for no text. */
static void threading_mode(JsonNode *fn, char *out, size_t len)
{
    const char *t = fn && JSON_NODE_HOLDS_VALUE(fn) && json_node_get_value_type(fn) == G_TYPE_STRING
                        ? json_node_get_string(fn)
                        : "";
    snprintf(out, len, "%.*s", (int)strcspn(t, ":"), t);
}

/* The samples of dfbench decode's result for impl/workers (NULL if none). */
static JsonArray *measured_samples(JsonArray *results, const char *impl, int workers,
                                   const char *input)
{
    JsonNode *fn = measured_node(results, impl, workers, input, "fps_samples");
    return fn && JSON_NODE_HOLDS_ARRAY(fn) ? json_node_get_array(fn) : NULL;
}

/* The i-th (from 0) of those samples, NAN when absent. */
static double sample_at(JsonArray *samples, int i)
{
    JsonNode *v = samples && i >= 0 && (guint)i < json_array_get_length(samples)
                      ? json_array_get_element(samples, (guint)i)
                      : NULL;
    return v && JSON_NODE_HOLDS_VALUE(v) && json_node_get_value_type(v) != G_TYPE_STRING
               ? json_node_get_double(v)
               : NAN;
}

/* The threading of a trace's own run and the repeat it ran in (from 1;
 * 0 when not said), from dfbench decode's run.traces entry for the same
 * file name ("" and 0 when the trace is not listed). */
static void trace_threading(JsonObject *vroot, const char *path, char *out, size_t len, int *repeat)
{
    out[0] = '\0';
    *repeat = 0;
    JsonNode *rn = json_object_get_member(vroot, "run");
    JsonObject *run = rn && JSON_NODE_HOLDS_OBJECT(rn) ? json_node_get_object(rn) : NULL;
    JsonNode *tn = run ? json_object_get_member(run, "traces") : NULL;
    JsonArray *traces = tn && JSON_NODE_HOLDS_ARRAY(tn) ? json_node_get_array(tn) : NULL;
    gchar *want = g_path_get_basename(path);
    for (guint i = 0; traces && i < json_array_get_length(traces); i++) {
        JsonNode *en = json_array_get_element(traces, i);
        JsonObject *e = JSON_NODE_HOLDS_OBJECT(en) ? json_node_get_object(en) : NULL;
        JsonNode *fn = e ? json_object_get_member(e, "file") : NULL;
        JsonNode *thn = e ? json_object_get_member(e, "threading") : NULL;
        if (!fn || !thn || json_node_get_value_type(fn) != G_TYPE_STRING ||
            json_node_get_value_type(thn) != G_TYPE_STRING)
            continue;
        gchar *name = g_path_get_basename(json_node_get_string(fn));
        const bool same = strcmp(name, want) == 0;
        g_free(name);
        if (same) {
            threading_mode(thn, out, len);
            JsonNode *rn2 = json_object_get_member(e, "repeat");
            if (rn2 && JSON_NODE_HOLDS_VALUE(rn2) && json_node_get_value_type(rn2) == G_TYPE_INT64)
                *repeat = (int)json_node_get_int(rn2);
            break;
        }
    }
    g_free(want);
}

static double measured_fps(JsonArray *results, const char *impl, int workers, const char *input)
{
    return measured(results, impl, workers, input, "fps_median");
}

/* The WPP row factor dfbench decode measured: its ffmpeg-slice peer runs
 * the same rows on libavcodec's own threads, each row's above on the other
 * thread at 2 workers, alone at 1.  Its CPU per frame grows by
 * r = 1 - rho + rho * f where rho is the rows' share of the work, here the
 * ordered jobs' share of the graph's self time (rows recorded next to a
 * remote row above counted at 1/f, so a fixed point), after the slowdown
 * every body has with 2 busy.  The job factor likewise, from the
 * unordered jobs (slices, bands: each next to a sibling on the other
 * thread at 2 workers).  NAN when not measured or no such jobs. */
static double factor_from(JsonArray *results, const char *input, const SimConfig *c, int64_t rw,
                          int64_t ra, int64_t other, double *ratio)
{
    const double one = measured(results, "ffmpeg-slice", 1, input, "cpu_ms_per_frame");
    const double two = measured(results, "ffmpeg-slice", 2, input, "cpu_ms_per_frame");
    *ratio = two / one;
    if (rw + ra == 0 || !(one > 0) || !(two > 0))
        return NAN;
    const double r = two / one / (c->n_slowdown >= 2 ? c->slowdown[2] : 1.0);
    if (r <= 1)
        return 1.0;
    double f = r;
    for (int it = 0; it < 50; it++) {
        const double rows = (double)ra + (double)rw / f;
        f = 1 + (r - 1) * (rows + (double)other) / rows;
        if (f > 10)
            return 10;
    }
    return f;
}

/* --slowdown "N:F,...": F for N busy workers, linear between the points
 * given (1 busy: 1), the last beyond.  false on a bad list. */
static bool parse_slowdown(const char *spec, SimConfig *c)
{
    double f[SIM_MAX_SLOWDOWN + 1] = {0};
    f[1] = 1;
    int max = 1;
    gchar **parts = g_strsplit(spec, ",", -1);
    bool ok = parts[0] != NULL;
    for (int i = 0; ok && parts[i]; i++) {
        char *end = NULL;
        errno = 0;
        const long n = strtol(parts[i], &end, 10);
        ok = errno == 0 && end != parts[i] && *end == ':' && n >= 2 && n <= SIM_MAX_SLOWDOWN &&
             f[n] == 0;
        if (!ok)
            break;
        const char *fs = end + 1;
        const double v = g_ascii_strtod(fs, &end);
        /* Negated: NaN fails. */
        ok = end != fs && *end == '\0' && v >= 0.5 && v <= 10;
        f[n] = v;
        max = (int)n > max ? (int)n : max;
    }
    g_strfreev(parts);
    if (!ok)
        return false;
    for (int k = 2, lo = 1; k <= max; k++) {
        if (f[k] > 0) {
            lo = k;
            continue;
        }
        int hi = k + 1;
        while (f[hi] == 0)
            hi++;
        f[k] = f[lo] + (f[hi] - f[lo]) * (k - lo) / (hi - lo);
    }
    memcpy(c->slowdown, f, sizeof(f));
    c->n_slowdown = max;
    return true;
}

/* The slowdown dfbench decode measured: its ffmpeg-streams peer decodes N
 * independent single-threaded streams at once, so fps(1) / (fps(N) / N)
 * is how much slower each core decoded with N busy.  Taken per repeat
 * (both samples in the same stretch of this machine's drifting speed),
 * the median over repeats; with no samples, from the medians.  Never
 * below 1: more busy cores cannot make a body faster, and a figure below
 * 1 (seen here: 0.87) is the drift between the two samples. */
static double streams_slowdown(JsonArray *results, const char *input, int n)
{
    JsonArray *a = measured_samples(results, "ffmpeg-streams", 1, input);
    JsonArray *b = measured_samples(results, "ffmpeg-streams", n, input);
    double f = NAN;
    const guint len = a && b ? MIN(json_array_get_length(a), json_array_get_length(b)) : 0;
    if (len > 0) {
        double *r = g_new(double, len);
        for (guint i = 0; i < len; i++) {
            const double one = sample_at(a, (int)i), many = sample_at(b, (int)i);
            r[i] = one > 0 && many > 0 ? one / (many / n) : NAN;
        }
        f = median_of(r, (int)len);
        g_free(r);
    }
    if (isnan(f)) {
        const double one = measured_fps(results, "ffmpeg-streams", 1, input);
        const double many = measured_fps(results, "ffmpeg-streams", n, input);
        f = one > 0 && many > 0 ? one / (many / n) : NAN;
    }
    return isnan(f) ? NAN : f < 1 ? 1 : f > 10 ? 10 : f;
}

static void slowdown_from(JsonArray *results, const char *input, SimConfig *c)
{
    double f[SIM_MAX_SLOWDOWN + 1] = {0};
    int max = 0;
    for (int n = 2; n <= SIM_MAX_SLOWDOWN; n++) {
        const double fn = streams_slowdown(results, input, n);
        if (!isnan(fn)) {
            f[n] = fn;
            max = n;
        }
    }
    if (!max)
        return;
    GString *spec = g_string_new(NULL);
    for (int n = 2; n <= max; n++)
        if (f[n] > 0)
            g_string_append_printf(spec, "%s%d:%.4f", spec->len ? "," : "", n, f[n]);
    parse_slowdown(spec->str, c);
    g_string_free(spec, TRUE);
}

int main(int argc, char **argv)
{
    Opts o = {.task_overhead_ns = -1, .poll_ns = -1, .explore = 0.01};
    GOptionEntry entries[] = {
        {"trace", 't', 0, G_OPTION_ARG_FILENAME_ARRAY, &o.traces,
         "Trace to replay (required); repeat for several runs of one clip and worker count "
         "(dfbench decode --trace-runs): each is replayed and the median reported",
         "FILE"},
        {"topology", 0, 0, G_OPTION_ARG_STRING, &o.topology,
         "hwloc synthetic topology (default: this machine)", "STR"},
        {"policy", 'p', 0, G_OPTION_ARG_STRING, &o.policies,
         "Policies, comma-separated, or all (default cost-local,steal)", "LIST"},
        {"workers", 'w', 0, G_OPTION_ARG_STRING, &o.workers, "Worker counts (default 1,2)", "LIST"},
        {"streams", 's', 0, G_OPTION_ARG_STRING, &o.streams,
         "Copies of the graph decoded at once (default 1)", "LIST"},
        {"json", 0, 0, G_OPTION_ARG_FILENAME, &o.json, "Write results as JSON", "FILE"},
        {"csv", 0, 0, G_OPTION_ARG_FILENAME, &o.csv, "Write results as CSV", "FILE"},
        {"plot", 0, 0, G_OPTION_ARG_FILENAME, &o.plot, "Plot fps and speed-up (.svg/.png)", "FILE"},
        {"ns-per-byte", 0, 0, G_OPTION_ARG_STRING, &o.ns_per_byte,
         "Transfer cost per level, e.g. l3=0.04,numa=0.08 (defaults below)", "LIST"},
        {"task-overhead-ns", 0, 0, G_OPTION_ARG_INT, &o.task_overhead_ns,
         "Dispatch cost per task (default 300)", "NS"},
        {"poll-ns", 0, 0, G_OPTION_ARG_INT, &o.poll_ns, "Idle poll period (default 1000)", "NS"},
        {"window", 0, 0, G_OPTION_ARG_INT, &o.window,
         "Outside submissions in flight per stream (default: as recorded)", "N"},
        {"slowdown", 0, 0, G_OPTION_ARG_STRING, &o.slowdown,
         "How much slower a body runs while N workers are busy, e.g. 2:1.25 (N from 2 to 64; "
         "none: off; default: with --validate on this machine, measured by its ffmpeg-streams "
         "peer, else off)",
         "LIST"},
        {"wpp-factor", 0, 0, G_OPTION_ARG_STRING, &o.wpp_factor,
         "How much longer a WPP row runs while the row above runs on another worker, e.g. "
         "1.5 (1 to 10; none: off; default: with --validate on this machine, measured by its "
         "ffmpeg-slice peer's CPU per frame, else off)",
         "F"},
        {"job-factor", 0, 0, G_OPTION_ARG_STRING, &o.job_factor,
         "How much longer an independent slice job or band runs while another job of its "
         "picture runs on another worker, e.g. 1.2 (1 to 10; none: off; default: with "
         "--validate on this machine, measured by its ffmpeg-slice peer's CPU per frame, else "
         "off)",
         "F"},
        {"lost-cpu", 0, 0, G_OPTION_ARG_STRING, &o.lost_cpu,
         "Charge the CPU time the recording lost outside tasks (auto: when replaying on "
         "this machine, i.e. without --topology)",
         "auto|on|off"},
        {"explore", 0, 0, G_OPTION_ARG_DOUBLE, &o.explore,
         "Exploration rate of the learned policy (default 0.01)", "RATE"},
        {"validate", 0, 0, G_OPTION_ARG_FILENAME, &o.validate,
         "dfbench decode JSON measured on this machine: compare 1 and 2 workers", "FILE"},
        {"validate-input", 0, 0, G_OPTION_ARG_STRING, &o.validate_input,
         "Only results whose input contains this", "NAME"},
        {"validate-impl", 0, 0, G_OPTION_ARG_STRING, &o.validate_impl,
         "Implementation prefix in that JSON (default dfmedia/)", "PREFIX"},
        {NULL},
    };
    GOptionContext *ctx = g_option_context_new("- replay a dfsched trace on a synthetic topology");
    g_option_context_add_main_entries(ctx, entries, NULL);
    g_option_context_set_description(
        ctx,
        "Transfer cost defaults (ns per byte): self 0, pu 0.005, l2 0.01, l3 0.04, numa 0.08,\n"
        "machine 0.15.  The recorded durations lose the transfer cost the recording paid at\n"
        "the same rates, so that only the replay's placement is charged.\n"
        "Lost CPU: the trace shows the time its cores spent outside tasks (the decoding\n"
        "thread's packet and frame handling, the OS, other processes) as gaps in which a\n"
        "ready node waited for an idle worker; beyond the median gap (the dispatch, charged\n"
        "as --task-overhead-ns) that time is charged again before the same node.\n");
    GError *gerr = NULL;
    int rc = 1;
    Row *rows = NULL;
    int n_rows = 0;
    SimInput *in = NULL;
    int n_in = 0;
    double *rec_fps_run = NULL;
    JsonParser *vparser = NULL;
    JsonArray *vresults = NULL;
    gchar **pols = NULL;
    DfError err = {0};
    if (!g_option_context_parse(ctx, &argc, &argv, &gerr)) {
        rc = df_cli_usage(PROG, "%s", gerr->message);
        goto out;
    }
    if (argc > 1) {
        rc = df_cli_usage(PROG, "unexpected argument \"%s\"", argv[1]);
        goto out;
    }
    if (!o.traces || !o.traces[0]) {
        rc = df_cli_usage(PROG, "--trace FILE is required");
        goto out;
    }
    for (int i = 0; o.traces[i]; i++)
        if (!*o.traces[i]) {
            rc = df_cli_usage(PROG, "bad --trace \"\": an empty file name");
            goto out;
        }
    int workers[MAX_VALUES], streams[MAX_VALUES];
    int n_workers = parse_list("--workers", o.workers ? o.workers : "1,2", MAX_WORKERS, workers);
    if (n_workers < 0) {
        rc = DF_CLI_USAGE;
        goto out;
    }
    int n_streams = parse_list("--streams", o.streams ? o.streams : "1", MAX_WORKERS, streams);
    if (n_streams < 0) {
        rc = DF_CLI_USAGE;
        goto out;
    }
    SimConfig base;
    sim_config_init(&base);
    if (o.ns_per_byte && !*o.ns_per_byte) {
        rc = df_cli_usage(PROG, "bad --ns-per-byte \"\": an empty list");
        goto out;
    }
    if (o.ns_per_byte && parse_npb(o.ns_per_byte, base.ns_per_byte, &gerr) < 0) {
        rc = df_cli_usage(PROG, "%s", gerr->message);
        goto out;
    }
    /* -1 is "not given" for both; any other value below the minimum is a
     * mistake, not a request for the default. */
    /* At most 1 ms: per task and per poll, larger values overflow the
     * simulated clock (int64 ns) long before they mean anything. */
    if (o.task_overhead_ns < -1 || o.task_overhead_ns > 1000000) {
        rc = df_cli_usage(PROG, "bad --task-overhead-ns %d (0 to 1000000)", o.task_overhead_ns);
        goto out;
    }
    if (o.poll_ns == 0 || o.poll_ns < -1 || o.poll_ns > 1000000) {
        rc = df_cli_usage(PROG, "bad --poll-ns %d (1 to 1000000)", o.poll_ns);
        goto out;
    }
    if (o.window < 0) {
        rc = df_cli_usage(PROG, "bad --window %d (0 or more; 0: as recorded)", o.window);
        goto out;
    }
    /* Negated: NaN fails every comparison. */
    if (!(o.explore >= 0 && o.explore <= 0.5)) {
        rc = df_cli_usage(PROG, "bad --explore %g (0 to 0.5)", o.explore);
        goto out;
    }
    if (o.task_overhead_ns >= 0)
        base.task_overhead_ns = o.task_overhead_ns;
    if (o.poll_ns > 0)
        base.poll_ns = o.poll_ns;
    base.window = o.window;
    if (o.slowdown && strcmp(o.slowdown, "none") != 0 && !parse_slowdown(o.slowdown, &base)) {
        rc = df_cli_usage(PROG, "bad --slowdown \"%s\" (e.g. 2:1.25; N 2 to 64, factor 0.5 to 10)",
                          o.slowdown);
        goto out;
    }
    const struct {
        const char *flag, *value;
        double *out;
    } factors[] = {{"--wpp-factor", o.wpp_factor, &base.wpp_factor},
                   {"--job-factor", o.job_factor, &base.job_factor}};
    for (size_t k = 0; k < G_N_ELEMENTS(factors); k++) {
        if (!factors[k].value || strcmp(factors[k].value, "none") == 0)
            continue;
        char *end = NULL;
        *factors[k].out = g_ascii_strtod(factors[k].value, &end);
        /* Negated: NaN fails. */
        if (end == factors[k].value || *end || !(*factors[k].out >= 1 && *factors[k].out <= 10)) {
            rc = df_cli_usage(PROG, "bad %s \"%s\" (1 to 10, or none)", factors[k].flag,
                              factors[k].value);
            goto out;
        }
    }
    base.explore_rate = o.explore;
    base.topology = o.topology && *o.topology ? o.topology : NULL;
    if (base.topology && sim_check_topology(&base, &err) < 0) {
        rc = df_cli_usage(PROG, "bad --topology: %s", err.msg);
        goto out;
    }
    if (!o.lost_cpu || strcmp(o.lost_cpu, "auto") == 0) {
        base.lost_cpu = base.topology == NULL;
    } else if (strcmp(o.lost_cpu, "on") == 0 || strcmp(o.lost_cpu, "off") == 0) {
        base.lost_cpu = strcmp(o.lost_cpu, "on") == 0;
    } else {
        rc = df_cli_usage(PROG, "bad --lost-cpu \"%s\" (auto, on or off)", o.lost_cpu);
        goto out;
    }

    if (o.policies && !*g_strstrip(o.policies)) {
        rc = df_cli_usage(PROG, "bad --policy \"\": an empty list");
        goto out;
    }
    pols = g_strsplit(o.policies ? o.policies : "cost-local,steal", ",", -1);
    if (pols[0] && strcmp(g_strstrip(pols[0]), "all") == 0 && !pols[1]) {
        g_strfreev(pols);
        pols = g_strdupv((gchar **)df_policy_names());
    }
    for (int i = 0; pols[i]; i++) {
        bool known = false;
        const char *want = g_strstrip(pols[i]);
        if (!*want) {
            rc = df_cli_usage(PROG, "bad --policy \"%s\": empty item", o.policies);
            goto out;
        }
        for (const char *const *n = df_policy_names(); *n; n++)
            known |= strcmp(*n, want) == 0;
        if (!known) {
            GString *list = g_string_new(NULL);
            for (const char *const *n = df_policy_names(); *n; n++)
                g_string_append_printf(list, "%s%s", list->len ? ", " : "", *n);
            rc = df_cli_usage(PROG, "bad --policy: unknown policy \"%s\" (all or %s)", want,
                              list->str);
            g_string_free(list, TRUE);
            goto out;
        }
    }
    static const char *const plot_suffixes[] = {".svg", ".png", NULL};
    if (o.plot && !df_cli_has_suffix(o.plot, plot_suffixes)) {
        rc = df_cli_usage(PROG, "bad --plot \"%s\": use a .svg or .png name", o.plot);
        goto out;
    }
    /* The outputs before the replays, which may run for minutes. */
    const DfCliOutput outs[] = {{"--json", o.json}, {"--csv", o.csv}, {"--plot", o.plot}};
    rc = df_cli_check_outputs(PROG, outs, G_N_ELEMENTS(outs));
    if (rc != DF_CLI_OK)
        goto out;
    /* The measured figures too: a bad file fails before the replays. */
    if (o.validate) {
        vparser = json_parser_new();
        if (!json_parser_load_from_file(vparser, o.validate, &gerr)) {
            rc = df_cli_fail(PROG, "--validate: cannot read %s: %s", o.validate, gerr->message);
            goto out;
        }
        JsonNode *vroot = json_parser_get_root(vparser);
        JsonObject *vr =
            vroot && JSON_NODE_HOLDS_OBJECT(vroot) ? json_node_get_object(vroot) : NULL;
        JsonNode *vn = vr ? json_object_get_member(vr, "results") : NULL;
        vresults = vn && JSON_NODE_HOLDS_ARRAY(vn) ? json_node_get_array(vn) : NULL;
        if (!vresults) {
            rc = df_cli_fail(PROG,
                             "--validate: %s has no \"results\" array (not dfbench decode "
                             "JSON)",
                             o.validate);
            goto out;
        }
        if (!o.slowdown && !base.topology)
            slowdown_from(vresults, o.validate_input, &base);
    }
    rc = DF_CLI_FAILED;

    n_in = (int)g_strv_length(o.traces);
    in = g_new0(SimInput, (gsize)n_in);
    for (int i = 0; i < n_in; i++) {
        SimInput *x = &in[i];
        x->path = o.traces[i];
        x->wpp_factor = base.wpp_factor;
        x->job_factor = base.job_factor;
        x->wpp_ratio = NAN;
        if (df_trace_read_json(x->path, &x->trace, &err) < 0) {
            df_cli_fail(PROG, "%s", err.msg);
            goto out;
        }
        if (sim_graph_from_trace(&x->trace, base.ns_per_byte, &x->graph, &err) < 0) {
            df_cli_fail(PROG, "%s", err.msg);
            goto out;
        }
        x->lost_ns = (double)sim_graph_lost_ns(x->graph);
        x->dispatch_ns = (double)sim_graph_dispatch_ns(x->graph);
        /* Medians over runs of one configuration only: other clips or
         * worker counts are other measurements. */
        if (i > 0 && (x->trace.n_workers != in[0].trace.n_workers ||
                      sim_graph_frames(x->graph) != sim_graph_frames(in[0].graph))) {
            df_cli_fail(PROG,
                        "%s (%d workers, %d frames) is not a run of the same clip and worker "
                        "count as %s (%d workers, %d frames): give the traces of one "
                        "configuration",
                        x->path, x->trace.n_workers, sim_graph_frames(x->graph), in[0].path,
                        in[0].trace.n_workers, sim_graph_frames(in[0].graph));
            goto out;
        }
        if (vresults) {
            JsonObject *vr = json_node_get_object(json_parser_get_root(vparser));
            trace_threading(vr, x->path, x->threading, sizeof(x->threading), &x->repeat);
            /* A clip has WPP rows or independent jobs (or neither); both
             * factors come from the same measurement. */
            int64_t rw, ra, ro, jw, ja, jo;
            sim_graph_self_split(x->graph, &rw, &ra, &ro);
            sim_graph_job_split(x->graph, &jw, &ja, &jo);
            const struct {
                int64_t par, alone, other;
                const char *given;
                double *out;
            } kinds[] = {{rw, ra, ro, o.wpp_factor, &x->wpp_factor},
                         {jw, ja, jo, o.job_factor, &x->job_factor}};
            for (size_t k = 0; k < G_N_ELEMENTS(kinds) && !base.topology; k++) {
                if (kinds[k].given || kinds[k].par + kinds[k].alone == 0)
                    continue;
                const double f = factor_from(vresults, o.validate_input, &base, kinds[k].par,
                                             kinds[k].alone, kinds[k].other, &x->wpp_ratio);
                if (!isnan(f))
                    *kinds[k].out = f;
            }
        }
    }
    const SimGraph *graph = in[0].graph;
    if (sim_graph_frames(graph) == 0)
        fprintf(stderr, "dfsim: warning: the trace has no frame tags; fps counts 1 frame\n");

    int n_pol = (int)g_strv_length(pols);
    rows = calloc((size_t)(n_pol * n_workers * n_streams), sizeof(Row));
    SimResult *runs = g_new(SimResult, (gsize)n_in);
    DfProgress prog;
    df_progress_begin(&prog, n_pol * n_workers * n_streams * n_in);
    for (int p = 0; p < n_pol; p++)
        for (int si = 0; si < n_streams; si++) {
            double fps1 = NAN;
            for (int wi = 0; wi < n_workers; wi++) {
                Row *r = &rows[n_rows];
                snprintf(r->policy, sizeof(r->policy), "%s", pols[p]);
                r->workers = workers[wi];
                r->streams = streams[si];
                r->fps_run = g_new(double, (gsize)n_in);
                for (int i = 0; i < n_in; i++) {
                    df_progress_step(&prog, "%s, %d workers, %d streams%s", pols[p], workers[wi],
                                     streams[si], n_in > 1 ? ", next trace" : "");
                    SimConfig c = base;
                    c.policy = pols[p];
                    c.n_workers = workers[wi];
                    c.streams = streams[si];
                    c.wpp_factor = in[i].wpp_factor;
                    c.job_factor = in[i].job_factor;
                    if (sim_run(in[i].graph, &c, &runs[i], &err) < 0) {
                        df_progress_end(&prog);
                        df_cli_fail(PROG, "%s, %d workers: %s: %s", pols[p], workers[wi],
                                    in[i].path, err.msg);
                        g_free(runs);
                        n_rows++; /* freed with the others */
                        goto out;
                    }
                    r->fps_run[i] = runs[i].fps;
                }
                r->r = median_result(runs, n_in);
                if (workers[wi] == 1)
                    fps1 = r->r.fps;
                r->speedup = isnan(fps1) ? NAN : r->r.fps / fps1;
                n_rows++;
            }
        }
    g_free(runs);
    df_progress_end(&prog);

    /* Model figures that differ from trace to trace: their medians. */
    const double lost_ns = inputs_median(in, n_in, offsetof(SimInput, lost_ns));
    const double dispatch_ns = inputs_median(in, n_in, offsetof(SimInput, dispatch_ns));
    const double wpp_factor = inputs_median(in, n_in, offsetof(SimInput, wpp_factor));
    const double job_factor = inputs_median(in, n_in, offsetof(SimInput, job_factor));
    const double wpp_ratio = inputs_median(in, n_in, offsetof(SimInput, wpp_ratio));

    const int frames = sim_graph_frames(graph) > 0 ? sim_graph_frames(graph) : 1;
    if (n_in == 1)
        printf("dfsim: %s, %zu tasks, %d frames, window %d, topology %s\n", in[0].path,
               sim_graph_tasks(graph), sim_graph_frames(graph), sim_graph_window(graph),
               base.topology ? base.topology : "this machine");
    else
        printf("dfsim: %d traces (%s, ...), median of their replays; %zu tasks, %d frames, "
               "window %d, topology %s\n",
               n_in, in[0].path, sim_graph_tasks(graph), sim_graph_frames(graph),
               sim_graph_window(graph), base.topology ? base.topology : "this machine");
    printf("lost CPU in the recording: %.3f ms per frame (%s), dispatch %lld ns%s\n",
           lost_ns / 1e6 / frames, base.lost_cpu ? "charged" : "not charged",
           (long long)dispatch_ns, n_in > 1 ? " (medians)" : "");
    if (base.n_slowdown) {
        printf("slowdown of a body with N workers busy (%s):",
               o.slowdown ? "--slowdown" : "ffmpeg-streams in --validate");
        for (int k = 2; k <= base.n_slowdown; k++)
            printf(" %d: %.3f", k, base.slowdown[k]);
        printf("\n");
    }
    if (job_factor > 1) {
        printf("job factor (a slice job or band while another of its picture runs on another "
               "worker): %.3f",
               job_factor);
        if (o.job_factor)
            printf(" (--job-factor)\n");
        else
            printf(" (ffmpeg-slice in --validate: CPU per frame x%.3f at 2 workers)\n", wpp_ratio);
    }
    if (wpp_factor > 1) {
        printf("WPP row factor (a row whose row above runs on another worker): %.3f", wpp_factor);
        if (o.wpp_factor)
            printf(" (--wpp-factor)\n");
        else
            printf(" (ffmpeg-slice in --validate: CPU per frame x%.3f at 2 workers)\n", wpp_ratio);
    }
    const char *hdr[] = {"policy",   "workers", "streams", "fps",         "fps/stream",
                         "speed-up", "idle %",  "local %", "cross-L3+ MB"};
    DfTable *tab = df_table_new(9, hdr, "lrrrrrrrr");
    for (int i = 0; i < n_rows; i++) {
        const Row *r = &rows[i];
        char c[9][32];
        snprintf(c[0], 32, "%s", r->policy);
        snprintf(c[1], 32, "%d", r->workers);
        snprintf(c[2], 32, "%d", r->streams);
        df_fmt_num(c[3], 32, r->r.fps, 1);
        df_fmt_num(c[4], 32, r->r.fps / r->streams, 1);
        df_fmt_num(c[5], 32, r->speedup, 2);
        df_fmt_num(c[6], 32, 100 * r->r.idle_share, 1);
        df_fmt_num(c[7], 32, 100 * r->r.local_byte_share, 1);
        uint64_t far = r->r.bytes_level[DF_LEVEL_L3] + r->r.bytes_level[DF_LEVEL_NUMA] +
                       r->r.bytes_level[DF_LEVEL_MACHINE];
        df_fmt_num(c[8], 32, (double)far / 1e6, 1);
        const char *cells[9];
        for (int k = 0; k < 9; k++)
            cells[k] = c[k];
        df_table_row(tab, cells);
    }
    df_table_print(tab, stdout);
    df_table_free(tab);

    /* The recorded run itself: the replay of the trace on its own worker
     * count (first policy, this machine) against the trace's wall time.
     * Free of run-to-run noise, unlike the comparison with dfbench. */
    const int rec_workers = in[0].trace.n_workers;
    rec_fps_run = g_new(double, (gsize)n_in);
    for (int i = 0; i < n_in; i++) {
        const int64_t span = sim_graph_span_ns(in[i].graph);
        rec_fps_run[i] =
            span > 0 ? (double)sim_graph_frames(in[i].graph) * 1e9 / (double)span : NAN;
    }
    const double rec_fps = median_of(rec_fps_run, n_in);
    const Row *rec_row = NULL;
    for (int i = 0; i < n_rows && !base.topology; i++)
        if (rows[i].workers == rec_workers && rows[i].streams == 1 &&
            strcmp(rows[i].policy, pols[0]) == 0)
            rec_row = &rows[i];
    if (rec_row) {
        printf("\n");
        for (int i = 0; i < n_in && n_in > 1; i++)
            printf("recorded run %d (%s): %.1f fps; replayed %.1f fps, error %+.1f %%\n", i + 1,
                   in[i].path, rec_fps_run[i], rec_row->fps_run[i],
                   100 * (rec_row->fps_run[i] - rec_fps_run[i]) / rec_fps_run[i]);
        printf("recorded run%s: %d workers, %.1f fps%s; replayed (%s) %.1f fps, error %+.1f %%\n",
               n_in > 1 ? "s" : "", rec_workers, rec_fps, n_in > 1 ? " (median)" : "",
               rec_row->policy, rec_row->r.fps, 100 * (rec_row->r.fps - rec_fps) / rec_fps);
    }

    /* Validation against measured figures of this machine. */
    JsonBuilder *vb = NULL;
    bool all_ok = true;
    if (o.validate) {
        JsonArray *results = vresults;
        vb = json_builder_new();
        json_builder_begin_object(vb);
        json_builder_set_member_name(vb, "source");
        json_builder_add_string_value(vb, o.validate);
        json_builder_set_member_name(vb, "entries");
        json_builder_begin_array(vb);
        int checked = 0, not_comparable = 0, n_paired = 0;
        printf("\nvalidation against %s%s:\n", o.validate,
               in[0].threading[0] ? ""
                                  : " (the trace is not in its run.traces: threading unknown)");
        for (int i = 0; i < n_rows; i++) {
            const Row *r = &rows[i];
            if (r->streams != 1 || r->workers > 2)
                continue;
            char impl[64];
            snprintf(impl, sizeof(impl), "%s%s", o.validate_impl ? o.validate_impl : "dfmedia/",
                     r->policy);
            double m = measured_fps(results, impl, r->workers, o.validate_input);
            if (isnan(m))
                continue;
            double e = (r->r.fps - m) / m;
            /* Paired: each trace's projection against the sample of the
             * repeat it ran in, the median over them.  This machine's speed
             * drifts (by 25 % from one minute to the next, seen here), and
             * both sides of a pair see the same stretch of it. */
            JsonArray *samples = measured_samples(results, impl, r->workers, o.validate_input);
            double *pe = g_new(double, (gsize)n_in);
            bool paired = true;
            for (int k = 0; k < n_in && paired; k++) {
                const double sm = sample_at(samples, in[k].repeat - 1);
                paired = in[k].repeat > 0 && sm > 0;
                pe[k] = paired ? (r->fps_run[k] - sm) / sm : NAN;
            }
            const double ep = paired ? median_of(pe, n_in) : NAN;
            g_free(pe);
            bool ok = fabs(paired ? ep : e) <= 0.10;
            /* A trace holds the tasks of its own threading mode only:
             * libavcodec's frame threads run inside D, outside the trace,
             * and a run without threads has no jobs to spread. */
            char mode[16];
            threading_mode(measured_node(results, impl, r->workers, o.validate_input, "threading"),
                           mode, sizeof(mode));
            const bool comparable =
                !in[0].threading[0] || !mode[0] || strcmp(in[0].threading, mode) == 0;
            if (comparable) {
                all_ok &= ok;
                checked++;
                n_paired += paired;
            } else {
                not_comparable++;
            }
            printf("  %-24s %d workers: measured %.1f fps, projected %.1f fps, error %+.1f %%",
                   impl, r->workers, m, r->r.fps, 100 * e);
            if (paired)
                printf(", paired %+.1f %%", 100 * ep);
            printf(" %s", !comparable ? "not comparable" : ok ? "ok" : "OUTSIDE 10 %");
            if (!comparable)
                printf(" (threading %s there, %s in the trace)", mode, in[0].threading);
            printf("\n");
            json_builder_begin_object(vb);
            json_builder_set_member_name(vb, "impl");
            json_builder_add_string_value(vb, impl);
            json_builder_set_member_name(vb, "workers");
            json_builder_add_int_value(vb, r->workers);
            df_json_double(vb, "measured_fps", m);
            df_json_double(vb, "projected_fps", r->r.fps);
            df_json_double(vb, "error", e);
            /* null: the traces do not say which repeat they ran in. */
            df_json_double(vb, "error_paired", ep);
            json_builder_set_member_name(vb, "within_10pct");
            json_builder_add_boolean_value(vb, ok);
            json_builder_set_member_name(vb, "threading");
            json_builder_add_string_value(vb, mode);
            json_builder_set_member_name(vb, "comparable");
            json_builder_add_boolean_value(vb, comparable);
            json_builder_end_object(vb);
        }
        json_builder_end_array(vb);
        json_builder_set_member_name(vb, "all_within_10pct");
        json_builder_add_boolean_value(vb, checked > 0 && all_ok);
        json_builder_set_member_name(vb, "checked");
        json_builder_add_int_value(vb, checked);
        json_builder_set_member_name(vb, "not_comparable");
        json_builder_add_int_value(vb, not_comparable);
        /* What the 10 % bound was held against. */
        json_builder_set_member_name(vb, "basis");
        json_builder_add_string_value(vb, n_paired == checked ? "paired"
                                          : n_paired == 0     ? "medians"
                                                              : "mixed");
        json_builder_set_member_name(vb, "trace_threading");
        json_builder_add_string_value(vb, in[0].threading);
        json_builder_end_object(vb);
        if (checked)
            printf("  within 10 %% means: %s\n",
                   n_paired == checked
                       ? "the median of the paired errors (each trace against the sample of "
                         "its repeat)"
                       : "the median projection against the median sample");
        if (not_comparable)
            printf("  %d not comparable: the trace ran libavcodec's %s threading; a trace "
                   "projects only its own mode (frame threads run inside D, outside it)\n",
                   not_comparable, in[0].threading);
        if (!checked)
            fprintf(stderr, "dfsim: warning: no matching 1- or 2-worker results in %s\n",
                    o.validate);
    }

    if (o.json) {
        JsonBuilder *b = json_builder_new();
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "bench");
        json_builder_add_string_value(b, "sim");
        json_builder_set_member_name(b, "trace");
        json_builder_add_string_value(b, in[0].path);
        json_builder_set_member_name(b, "traces");
        json_builder_begin_array(b);
        for (int i = 0; i < n_in; i++)
            json_builder_add_string_value(b, in[i].path);
        json_builder_end_array(b);
        json_builder_set_member_name(b, "topology");
        json_builder_add_string_value(b, base.topology ? base.topology : "this machine");
        json_builder_set_member_name(b, "tasks");
        json_builder_add_int_value(b, (gint64)sim_graph_tasks(graph));
        json_builder_set_member_name(b, "frames");
        json_builder_add_int_value(b, sim_graph_frames(graph));
        json_builder_set_member_name(b, "window");
        json_builder_add_int_value(b, o.window ? o.window : sim_graph_window(graph));
        json_builder_set_member_name(b, "recording");
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "workers");
        json_builder_add_int_value(b, rec_workers);
        df_json_double(b, "fps", rec_fps);
        if (rec_row) {
            json_builder_set_member_name(b, "policy");
            json_builder_add_string_value(b, rec_row->policy);
            df_json_double(b, "projected_fps", rec_row->r.fps);
            df_json_double(b, "error", (rec_row->r.fps - rec_fps) / rec_fps);
        }
        /* Each trace's own run and replay; the figures above are medians. */
        json_builder_set_member_name(b, "runs");
        json_builder_begin_array(b);
        for (int i = 0; i < n_in; i++) {
            json_builder_begin_object(b);
            json_builder_set_member_name(b, "trace");
            json_builder_add_string_value(b, in[i].path);
            df_json_double(b, "fps", rec_fps_run[i]);
            if (rec_row)
                df_json_double(b, "projected_fps", rec_row->fps_run[i]);
            json_builder_set_member_name(b, "threading");
            json_builder_add_string_value(b, in[i].threading);
            json_builder_end_object(b);
        }
        json_builder_end_array(b);
        json_builder_end_object(b);
        json_builder_set_member_name(b, "model");
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "ns_per_byte");
        json_builder_begin_object(b);
        for (int l = 0; l < DF_N_LEVELS; l++)
            df_json_double(b, df_level_name((DfLevel)l), base.ns_per_byte[l]);
        json_builder_end_object(b);
        json_builder_set_member_name(b, "task_overhead_ns");
        json_builder_add_int_value(b, base.task_overhead_ns);
        json_builder_set_member_name(b, "poll_ns");
        json_builder_add_int_value(b, base.poll_ns);
        json_builder_set_member_name(b, "lost_cpu");
        json_builder_add_boolean_value(b, base.lost_cpu);
        df_json_double(b, "lost_ms_per_frame", lost_ns / 1e6 / frames);
        json_builder_set_member_name(b, "recorded_dispatch_ns");
        json_builder_add_int_value(b, (gint64)dispatch_ns);
        /* Factor per busy count, from 2 (empty: not modelled). */
        json_builder_set_member_name(b, "slowdown");
        json_builder_begin_array(b);
        for (int k = 2; k <= base.n_slowdown; k++)
            json_builder_add_double_value(b, base.slowdown[k]);
        json_builder_end_array(b);
        /* null: not modelled. */
        df_json_double(b, "wpp_factor", wpp_factor > 1 ? wpp_factor : NAN);
        df_json_double(b, "job_factor", job_factor > 1 ? job_factor : NAN);
        json_builder_end_object(b);
        json_builder_set_member_name(b, "results");
        json_builder_begin_array(b);
        for (int i = 0; i < n_rows; i++) {
            const Row *r = &rows[i];
            char impl[64];
            snprintf(impl, sizeof(impl), "dfsim/%s", r->policy);
            json_builder_begin_object(b);
            json_builder_set_member_name(b, "impl");
            json_builder_add_string_value(b, impl);
            json_builder_set_member_name(b, "policy");
            json_builder_add_string_value(b, r->policy);
            json_builder_set_member_name(b, "workers");
            json_builder_add_int_value(b, r->workers);
            json_builder_set_member_name(b, "streams");
            json_builder_add_int_value(b, r->streams);
            df_json_double(b, "fps", r->r.fps);
            df_json_double(b, "fps_per_stream", r->r.fps / r->streams);
            /* The replay of each trace, of which fps is the median. */
            json_builder_set_member_name(b, "fps_runs");
            json_builder_begin_array(b);
            for (int k = 0; k < n_in; k++)
                json_builder_add_double_value(b, r->fps_run[k]);
            json_builder_end_array(b);
            df_json_double(b, "speedup", r->speedup);
            df_json_double(b, "idle_share", r->r.idle_share);
            df_json_double(b, "local_byte_share", r->r.local_byte_share);
            df_json_double(b, "makespan_ms", (double)r->r.makespan_ns / 1e6);
            df_json_double(b, "transfer_ms", (double)r->r.transfer_ns / 1e6);
            df_json_double(b, "lost_ms", (double)r->r.lost_ns / 1e6);
            json_builder_set_member_name(b, "tasks_stolen");
            json_builder_add_int_value(b, (gint64)r->r.stolen);
            json_builder_set_member_name(b, "bytes_level");
            json_builder_begin_object(b);
            for (int l = 0; l < DF_N_LEVELS; l++) {
                json_builder_set_member_name(b, df_level_name((DfLevel)l));
                json_builder_add_int_value(b, (gint64)r->r.bytes_level[l]);
            }
            json_builder_end_object(b);
            json_builder_end_object(b);
        }
        json_builder_end_array(b);
        if (vb) {
            json_builder_set_member_name(b, "validation");
            JsonNode *vn = json_builder_get_root(vb);
            json_builder_add_value(b, vn);
        }
        json_builder_end_object(b);
        gboolean ok = df_json_write(b, o.json, &gerr);
        g_object_unref(b);
        if (!ok) {
            df_cli_fail(PROG, "--json: %s", gerr->message);
            goto out;
        }
    }
    if (vb)
        g_object_unref(vb);

    if (o.csv) {
        const char *ch[] = {"impl",           "workers",      "streams",    "fps",
                            "fps_per_stream", "speedup",      "idle_share", "local_byte_share",
                            "bytes_self",     "bytes_pu",     "bytes_l2",   "bytes_l3",
                            "bytes_numa",     "bytes_machine"};
        DfCsv csvf;
        if (df_csv_open(&csvf, o.csv, 14, ch) < 0) {
            df_cli_fail(PROG, "--csv: cannot write %s: %s", o.csv, strerror(errno));
            goto out;
        }
        for (int i = 0; i < n_rows; i++) {
            const Row *r = &rows[i];
            char c[14][40];
            snprintf(c[0], 40, "dfsim/%s", r->policy);
            snprintf(c[1], 40, "%d", r->workers);
            snprintf(c[2], 40, "%d", r->streams);
            snprintf(c[3], 40, "%.3f", r->r.fps);
            snprintf(c[4], 40, "%.3f", r->r.fps / r->streams);
            snprintf(c[5], 40, "%.4f", r->speedup);
            snprintf(c[6], 40, "%.4f", r->r.idle_share);
            snprintf(c[7], 40, "%.4f", r->r.local_byte_share);
            for (int l = 0; l < DF_N_LEVELS; l++)
                snprintf(c[8 + l], 40, "%llu", (unsigned long long)r->r.bytes_level[l]);
            const char *cells[14];
            for (int k = 0; k < 14; k++)
                cells[k] = c[k];
            df_csv_row(&csvf, cells);
        }
        if (df_csv_close(&csvf) < 0) {
            df_cli_fail(PROG, "--csv: cannot write %s", o.csv);
            goto out;
        }
    }

    if (o.plot) {
        int n_series = n_pol * n_streams;
        DfPlotSeries *fps_s = calloc((size_t)n_series, sizeof(DfPlotSeries));
        DfPlotSeries *sp_s = calloc((size_t)n_series, sizeof(DfPlotSeries));
        double *xs = calloc((size_t)n_rows, sizeof(double)),
               *yf = calloc((size_t)n_rows, sizeof(double)),
               *ys = calloc((size_t)n_rows, sizeof(double));
        char(*labels)[64] = calloc((size_t)n_series, 64);
        for (int i = 0; i < n_rows; i++) {
            xs[i] = rows[i].workers;
            yf[i] = rows[i].r.fps;
            ys[i] = rows[i].speedup;
        }
        for (int k = 0; k < n_series; k++) {
            const Row *r0 = &rows[k * n_workers];
            if (n_streams > 1)
                snprintf(labels[k], 64, "%s, %d streams", r0->policy, r0->streams);
            else
                snprintf(labels[k], 64, "%s", r0->policy);
            fps_s[k] = (DfPlotSeries){labels[k], n_workers, xs + k * n_workers, yf + k * n_workers};
            sp_s[k] = (DfPlotSeries){labels[k], n_workers, xs + k * n_workers, ys + k * n_workers};
        }
        DfPlotPanel panels[2] = {
            {"projected frame rate", "frames per second", n_series, fps_s, false},
            {"speed-up over 1 worker", "speed-up", n_series, sp_s, true},
        };
        char perr[256];
        int pr = df_plot_write(o.plot, "workers", true, panels, 2, perr, sizeof(perr));
        free(fps_s);
        free(sp_s);
        free(xs);
        free(yf);
        free(ys);
        free(labels);
        if (pr < 0) {
            df_cli_fail(PROG, "--plot: %s", perr);
            goto out;
        }
    }
    /* A projection outside 10 % is a result that did not check out (1),
     * not a bad command line (2). */
    rc = o.validate && !all_ok ? DF_CLI_FAILED : DF_CLI_OK;
out:
    g_strfreev(pols);
    if (vparser)
        g_object_unref(vparser);
    if (gerr)
        g_error_free(gerr);
    for (int i = 0; i < n_in; i++) {
        sim_graph_free(in[i].graph);
        df_trace_free(&in[i].trace);
    }
    g_free(in);
    g_free(rec_fps_run);
    for (int i = 0; i < n_rows; i++)
        g_free(rows[i].fps_run);
    free(rows);
    g_option_context_free(ctx);
    g_strfreev(o.traces);
    g_free(o.topology);
    g_free(o.policies);
    g_free(o.workers);
    g_free(o.streams);
    g_free(o.json);
    g_free(o.csv);
    g_free(o.plot);
    g_free(o.ns_per_byte);
    g_free(o.validate);
    g_free(o.validate_input);
    g_free(o.validate_impl);
    g_free(o.lost_cpu);
    g_free(o.slowdown);
    g_free(o.wpp_factor);
    g_free(o.job_factor);
    return rc;
}
