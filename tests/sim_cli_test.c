/* dfsim end to end on a trace recorded by the real scheduler: it runs, and
 * writes valid JSON, CSV and a plot.  Never a timing test. */
#include "bench_util.h"
#include "trace_util.h"
#include "dfsched_trace.h"
#include "dftest.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

DF_TEST(SimCli, RunsAndWritesJsonCsvPlot)
{
    const char *dfsim = getenv("DFSIM");
    if (!dfsim)
        DF_SKIP("DFSIM not set (run through meson test)");
    char dir[] = "/tmp/dfsim-test-XXXXXX";
    DF_ASSERT(mkdtemp(dir));
    char trace[256], json[256], csv[256], svg[256];
    snprintf(trace, sizeof(trace), "%s/t.json", dir);
    snprintf(json, sizeof(json), "%s/out.json", dir);
    snprintf(csv, sizeof(csv), "%s/out.csv", dir);
    snprintf(svg, sizeof(svg), "%s/out.svg", dir);
    DF_ASSERT_EQ_INT(df_test_record_trace(trace), 0);
    const char *argv[] = {
        dfsim,      "--trace", trace,          "--topology", "package:2 l3:2 core:4 pu:2",
        "--policy", "all",     "--workers",    "1,2,16",     "--streams",
        "1,3",      "--json",  json,           "--csv",      csv,
        "--plot",   svg,       "--wpp-factor", "1.5",        NULL};
    DfRun r = df_test_run(argv, NULL);
    DF_ASSERT(r.spawned);
    DF_EXPECT_MSG(r.status == 0, "dfsim exited %d: %s", r.status, r.err);
    DF_EXPECT(strstr(r.out, "cost-local") != NULL);
    df_run_clear(&r);

    JsonParser *p = json_parser_new();
    DF_ASSERT(json_parser_load_from_file(p, json, NULL));
    JsonObject *root = json_node_get_object(json_parser_get_root(p));
    DF_EXPECT(strcmp(json_object_get_string_member(root, "bench"), "sim") == 0);
    DF_EXPECT_EQ_INT(json_object_get_int_member(root, "frames"), DF_TEST_TRACE_FRAMES);
    /* The recorded run's own fps; lost CPU is not charged on a synthetic
     * topology (it is this machine's load). */
    JsonObject *rec = json_object_get_object_member(root, "recording");
    DF_ASSERT(rec);
    DF_EXPECT_EQ_INT(json_object_get_int_member(rec, "workers"), DF_TEST_TRACE_WORKERS);
    DF_EXPECT(json_object_get_double_member(rec, "fps") > 0);
    JsonObject *model = json_object_get_object_member(root, "model");
    DF_EXPECT(!json_object_get_boolean_member(model, "lost_cpu"));
    DF_EXPECT(json_object_get_double_member(model, "lost_ms_per_frame") >= 0);
    /* Given, it is used on a synthetic topology too. */
    DF_EXPECT(fabs(json_object_get_double_member(model, "wpp_factor") - 1.5) < 1e-9);
    /* Not given: no job factor off this machine (null). */
    DF_EXPECT(json_object_has_member(model, "job_factor") &&
              json_object_get_null_member(model, "job_factor"));
    /* The default idle model is the scheduler's: summaries and bounded
     * victims. */
    DF_EXPECT(strcmp(json_object_get_string_member(model, "idle_model"), "summary") == 0);
    JsonArray *res = json_object_get_array_member(root, "results");
    DF_EXPECT_EQ_INT(json_array_get_length(res), 5 * 3 * 2);
    for (guint i = 0; i < json_array_get_length(res); i++) {
        JsonObject *o = json_array_get_object_element(res, i);
        DF_EXPECT(json_object_get_double_member(o, "fps") > 0);
        DF_EXPECT(strncmp(json_object_get_string_member(o, "impl"), "dfsim/", 6) == 0);
        JsonObject *bl = json_object_get_object_member(o, "bytes_level");
        DF_EXPECT(json_object_has_member(bl, "machine"));
        /* Every idle round reads a summary word per level around the
         * worker (1 to 6) and probes up to 4 victims of 4 lines each. */
        const gint64 w = json_object_get_int_member(o, "workers");
        const double victims = w - 1 < 4 ? (double)(w - 1) : 4;
        const double words = json_object_get_double_member(o, "poll_lines_per_poll") - 4 * victims;
        if (json_object_get_int_member(o, "polls") > 0)
            DF_EXPECT_MSG(words >= 1 && words <= 6, "%lld workers: %g lines per poll", (long long)w,
                          json_object_get_double_member(o, "poll_lines_per_poll"));
    }
    g_object_unref(p);

    gchar *text = NULL;
    DF_ASSERT(g_file_get_contents(csv, &text, NULL, NULL));
    int lines = 0;
    for (char *c = text; *c; c++)
        lines += *c == '\n';
    DF_EXPECT_EQ_INT(lines, 1 + DF_TEST_TRACE_FRAMES);
    g_free(text);
    DF_ASSERT(g_file_get_contents(svg, &text, NULL, NULL));
    DF_EXPECT(strstr(text, "<svg") != NULL);
    g_free(text);

    /* Validation against a dfbench-like JSON with matching entries. */
    char meas[256];
    snprintf(meas, sizeof(meas), "%s/meas.json", dir);
    FILE *f = fopen(meas, "w");
    DF_ASSERT(f);
    /* ffmpeg-streams: 100 fps alone, 160 for two at once: each core 1.25x
     * slower while both are busy. */
    fprintf(f, "{\"bench\":\"decode\",\"results\":[{\"input\":\"clip\",\"impl\":\"dfmedia/fifo\","
               "\"workers\":1,\"fps_median\":1.0},"
               "{\"input\":\"clip\",\"impl\":\"ffmpeg-streams\",\"workers\":1,\"fps_median\":100},"
               "{\"input\":\"clip\",\"impl\":\"ffmpeg-streams\",\"workers\":2,\"fps_median\":160},"
               "{\"input\":\"clip\",\"impl\":\"ffmpeg-slice\",\"workers\":1,"
               "\"cpu_ms_per_frame\":4.0},"
               "{\"input\":\"clip\",\"impl\":\"ffmpeg-slice\",\"workers\":2,"
               "\"cpu_ms_per_frame\":6.0}"
               "]}");
    fclose(f);
    const char *argv2[] = {dfsim, "--trace",    trace, "--policy", "fifo", "--workers",
                           "1",   "--validate", meas,  "--json",   json,   NULL};
    r = df_test_run(argv2, NULL);
    /* 1 fps is far from the projection: a result that did not check out
     * (exit 1, as a failed run; 2 is a bad command line), and the JSON says
     * why. */
    DF_EXPECT_EQ_INT(r.status, 1);
    df_run_clear(&r);
    p = json_parser_new();
    DF_ASSERT(json_parser_load_from_file(p, json, NULL));
    root = json_node_get_object(json_parser_get_root(p));
    /* On this machine (no --topology) the lost CPU is charged. */
    DF_EXPECT(
        json_object_get_boolean_member(json_object_get_object_member(root, "model"), "lost_cpu"));
    /* The slowdown the measurement's ffmpeg-streams peer shows. */
    JsonArray *sd =
        json_object_get_array_member(json_object_get_object_member(root, "model"), "slowdown");
    DF_ASSERT(sd);
    DF_EXPECT_EQ_INT((int)json_array_get_length(sd), 1);
    DF_EXPECT(fabs(json_array_get_double_element(sd, 0) - 1.25) < 1e-3);
    /* ffmpeg-slice's CPU grows, but the trace has no WPP rows to slow. */
    DF_EXPECT(
        json_object_get_null_member(json_object_get_object_member(root, "model"), "wpp_factor"));
    JsonObject *v = json_object_get_object_member(root, "validation");
    DF_EXPECT(!json_object_get_boolean_member(v, "all_within_10pct"));
    DF_EXPECT_EQ_INT(json_object_get_int_member(v, "checked"), 1);
    g_object_unref(p);

    gchar *cmd = g_strdup_printf("rm -rf %s", dir);
    DF_EXPECT(system(cmd) == 0);
    g_free(cmd);
}

/* Every bad value: exit 2, one line naming the flag and the value and a
 * hint to --help; an input that is missing or not a trace, or an output that
 * cannot be written: exit 1, before any replay (nothing on stdout). */
/* --fps paces the streams: the model names the pace and budget, and each
 * result counts late frames and the frames' p99 latency (null unpaced). */
DF_TEST(SimCli, PacedRunReportsLateFramesAndLatency)
{
    const char *dfsim = getenv("DFSIM");
    if (!dfsim)
        DF_SKIP("DFSIM not set (run through meson test)");
    char dir[] = "/tmp/dfsim-paced-XXXXXX";
    DF_ASSERT(mkdtemp(dir));
    gchar *trace = g_strdup_printf("%s/t.json", dir), *json = g_strdup_printf("%s/o.json", dir);
    DF_ASSERT_EQ_INT(df_test_record_trace(trace), 0);
    const char *argv[] = {dfsim, "--trace",   trace, "--topology", "core:4 pu:1", "--workers",
                          "1,4", "--streams", "2",   "--fps",      "30",          "--budget-frames",
                          "3",   "--json",    json,  NULL};
    DfRun r = df_test_run(argv, NULL);
    DF_ASSERT(r.spawned);
    DF_EXPECT_MSG(r.status == 0, "dfsim exited %d: %s", r.status, r.err);
    DF_EXPECT(strstr(r.out, "p99 ms") != NULL);
    df_run_clear(&r);
    JsonParser *p = json_parser_new();
    DF_ASSERT(json_parser_load_from_file(p, json, NULL));
    JsonObject *root = json_node_get_object(json_parser_get_root(p));
    JsonObject *model = json_object_get_object_member(root, "model");
    DF_EXPECT(json_object_get_double_member(model, "paced_fps") == 30);
    DF_EXPECT_EQ_INT(json_object_get_int_member(model, "budget_frames"), 3);
    DF_EXPECT_EQ_INT(json_object_get_int_member(model, "phase_frames"), 1);
    JsonArray *res = json_object_get_array_member(root, "results");
    DF_EXPECT_EQ_INT(json_array_get_length(res), 2 * 2);
    for (guint i = 0; i < json_array_get_length(res); i++) {
        JsonObject *o = json_array_get_object_element(res, i);
        DF_EXPECT(json_object_has_member(o, "frames_late"));
        DF_EXPECT(json_object_get_double_member(o, "latency_p99_ms") > 0);
        DF_EXPECT(json_object_get_double_member(o, "latency_max_ms") >=
                  json_object_get_double_member(o, "latency_p99_ms"));
    }
    g_object_unref(p);
    remove(trace);
    remove(json);
    remove(dir);
    g_free(trace);
    g_free(json);
}

DF_TEST(SimCli, BadInputsFailClearly)
{
    const char *dfsim = getenv("DFSIM");
    if (!dfsim)
        DF_SKIP("DFSIM not set (run through meson test)");
    char dir[] = "/tmp/dfsim-bad-XXXXXX";
    DF_ASSERT(mkdtemp(dir));
    gchar *trace = g_strdup_printf("%s/t.json", dir), *empty = g_strdup_printf("%s/e.json", dir);
    gchar *bytes = g_strdup_printf("%s/b.json", dir), *trunc = g_strdup_printf("%s/tr.json", dir);
    gchar *shape = g_strdup_printf("%s/s.json", dir), *meas = g_strdup_printf("%s/m.json", dir);
    gchar *meas2 = g_strdup_printf("%s/m2.json", dir);
    DF_ASSERT_EQ_INT(df_test_record_trace(trace), 0);
    DF_ASSERT_EQ_INT(df_test_write_broken_traces(trace, empty, bytes, trunc, shape), 0);
    /* Measured figures of the wrong types: once a crash (strcmp of NULL). */
    DF_ASSERT(g_file_set_contents(meas, "{\"results\": [5, {\"impl\": 5, \"workers\": \"1\"}]}", -1,
                                  NULL));
    DF_ASSERT(g_file_set_contents(meas2, "[1, 2]", -1, NULL));
    /* Times no clock gives: once signed overflows in the simulated clock. */
    gchar *huge = g_strdup_printf("%s/h.json", dir), *long_ = g_strdup_printf("%s/l.json", dir);
#define TASK(node, start, end)                                                                     \
    "{\"ph\": \"X\", \"tid\": 0, \"args\": {\"node\": " #node ", \"start_ns\": " #start            \
    ", \"end_ns\": " #end "}}"
#define META "\"otherData\": {\"dfsched\": {\"n_workers\": 1}}"
    DF_ASSERT(g_file_set_contents(
        huge, "{\"traceEvents\": [" TASK(1, 0, 4611686018427387904) "], " META "}", -1, NULL));
    /* A trace with workers but no task (nothing ran while it recorded). */
    gchar *idle = g_strdup_printf("%s/i.json", dir);
    DF_ASSERT(g_file_set_contents(idle, "{\"traceEvents\": [], " META "}", -1, NULL));
    DF_ASSERT(g_file_set_contents(long_,
                                  "{\"traceEvents\": [" TASK(1, 0, 1152921504606846976) ", " TASK(
                                      2, 0, 1152921504606846976) "], " META "}",
                                  -1, NULL));
#undef TASK
#undef META
    const struct {
        const char *argv[8];
        int status;
        const char *says;
    } bad[] = {
        {{NULL}, 2, "--trace FILE is required"},
        {{"--trace", trace, "extra"}, 2, "unexpected argument \"extra\""},
        {{"--trace"}, 2, "--trace"},
        {{"--trace", trace, "--nosuchflag"}, 2, "nosuchflag"},
        {{"--trace", trace, "--workers", "0"}, 2, "bad --workers \"0\""},
        {{"--trace", trace, "--workers", "4x"}, 2, "bad --workers \"4x\""},
        {{"--trace", trace, "--workers", "-1"}, 2, "bad --workers \"-1\""},
        {{"--trace", trace, "--workers", "1,,2"}, 2, "bad --workers \"1,,2\""},
        {{"--trace", trace, "--workers", ""}, 2, "bad --workers \"\""},
        {{"--trace", trace, "--workers", "99999999999999999999"}, 2, "bad --workers"},
        {{"--trace", trace, "--workers", "5000"}, 2, "bad --workers \"5000\""},
        {{"--trace", trace, "--streams", "0"}, 2, "bad --streams \"0\""},
        {{"--trace", trace, "--policy", "lifo"}, 2, "unknown policy \"lifo\""},
        {{"--trace", trace, "--policy", ""}, 2, "bad --policy \"\""},
        {{"--trace", trace, "--policy", "fifo,,steal"}, 2, "bad --policy \"fifo,,steal\""},
        {{"--trace", trace, "--topology", "bogus:3"}, 2, "bad --topology"},
        {{"--trace", trace, "--task-overhead-ns", "-5"}, 2, "bad --task-overhead-ns -5"},
        {{"--trace", trace, "--task-overhead-ns", "4x"}, 2, "--task-overhead-ns"},
        {{"--trace", trace, "--poll-ns", "0"}, 2, "bad --poll-ns 0"},
        /* -1 was the internal "not given": a user's -1 is an error too. */
        {{"--trace", trace, "--poll-ns", "-1"}, 2, "bad --poll-ns -1"},
        {{"--trace", trace, "--task-overhead-ns", "-1"}, 2, "bad --task-overhead-ns -1"},
        {{"--trace", trace, "--poll-ns", "2147483647"}, 2, "bad --poll-ns 2147483647"},
        {{"--trace", trace, "--task-overhead-ns", "2147483647"}, 2, "bad --task-overhead-ns"},
        {{"--trace", trace, "--window", "-1"}, 2, "bad --window -1"},
        {{"--trace", trace, "--explore", "nan"}, 2, "bad --explore nan"},
        {{"--trace", trace, "--explore", "2"}, 2, "bad --explore 2"},
        {{"--trace", trace, "--fps", "nan"}, 2, "bad --fps nan"},
        {{"--trace", trace, "--fps", "-30"}, 2, "bad --fps -30"},
        {{"--trace", trace, "--fps", "1e-12"}, 2, "bad --fps 1e-12"}, /* the period overflowed */
        {{"--trace", trace, "--budget-frames", "0"}, 2, "bad --budget-frames 0"},
        {{"--trace", trace, "--phase-frames", "0"}, 2, "bad --phase-frames 0"},
        {{"--trace", trace, "--lost-cpu", "maybe"}, 2, "bad --lost-cpu \"maybe\""},
        {{"--trace", trace, "--slowdown", "1:1.2"}, 2, "bad --slowdown \"1:1.2\""},
        {{"--trace", trace, "--slowdown", "2:nan"}, 2, "bad --slowdown \"2:nan\""},
        {{"--trace", trace, "--slowdown", "2:1.2,2:1.3"}, 2, "bad --slowdown \"2:1.2,2:1.3\""},
        {{"--trace", trace, "--slowdown", "2:1.2x"}, 2, "bad --slowdown \"2:1.2x\""},
        {{"--trace", trace, "--wpp-factor", "0.5"}, 2, "bad --wpp-factor \"0.5\""},
        {{"--trace", trace, "--wpp-factor", "nan"}, 2, "bad --wpp-factor \"nan\""},
        {{"--trace", trace, "--wpp-factor", "1.5x"}, 2, "bad --wpp-factor \"1.5x\""},
        {{"--trace", trace, "--job-factor", "0.5"}, 2, "bad --job-factor \"0.5\""},
        {{"--trace", trace, "--job-factor", "inf"}, 2, "bad --job-factor \"inf\""},
        {{"--trace", trace, "--ns-per-byte", "l3"}, 2, "bad --ns-per-byte entry \"l3\""},
        {{"--trace", trace, "--ns-per-byte", "l3=inf"}, 2, "bad --ns-per-byte entry \"l3=inf\""},
        {{"--trace", trace, "--ns-per-byte", ""}, 2, "bad --ns-per-byte \"\""},
        {{"--trace", trace, "--ns-per-byte", "machine=1e300"}, 2, "entry \"machine=1e300\""},
        {{"--trace", trace, "--idle-model", "poll"}, 2, "bad --idle-model \"poll\""},
        {{"--trace", trace, "--line-ns", "l3=-1"}, 2, "bad --line-ns entry \"l3=-1\""},
        {{"--trace", trace, "--line-ns", ""}, 2, "bad --line-ns \"\""},
        {{"--trace", trace, "--plot", "p.pdf"}, 2, "bad --plot \"p.pdf\""},
        {{"--trace", trace, "--json", ""}, 2, "bad --json \"\""},
        {{"--trace", "/nonexistent/t.json"}, 1, "/nonexistent/t.json"},
        {{"--trace", empty}, 1, "not a dfsched trace"},
        {{"--trace", bytes}, 1, "cannot read trace"},
        {{"--trace", trunc}, 1, "cannot read trace"},
        {{"--trace", shape}, 1, "not a dfsched trace"},
        {{"--trace", dir}, 1, "cannot read trace"},
        {{"--trace", huge}, 1, "a time beyond"},
        {{"--trace", long_}, 1, "task times add up"},
        {{"--trace", idle}, 1, "the trace holds no task"}, /* printed "nan fps" */
        {{"--trace", trace, "--json", "/nonexistent/dir/o.json"},
         1,
         "--json: cannot write /nonexistent/dir/o.json"},
        {{"--trace", trace, "--csv", "/proc/x/y"}, 1, "--csv: cannot write /proc/x/y"},
        {{"--trace", trace, "--plot", "/proc/x/y.svg"}, 1, "--plot: cannot write /proc/x/y.svg"},
        {{"--trace", trace, "--json", dir}, 1, "Is a directory"},
        {{"--trace", trace, "--validate", "/nonexistent/m.json"}, 1, "--validate: cannot read"},
        {{"--trace", trace, "--validate", bytes}, 1, "--validate: cannot read"},
        {{"--trace", trace, "--validate", empty}, 1, "no \"results\" array"},
        {{"--trace", trace, "--validate", meas2}, 1, "no \"results\" array"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        const char *argv[10] = {dfsim};
        for (int k = 0; bad[i].argv[k]; k++)
            argv[k + 1] = bad[i].argv[k];
        DfRun r = df_test_run(argv, NULL);
        DF_EXPECT_MSG(r.spawned && r.status == bad[i].status, "case %zu (%s %s): exit %d", i,
                      bad[i].argv[0] ? bad[i].argv[0] : "", bad[i].argv[1] ? bad[i].argv[1] : "",
                      r.status);
        DF_EXPECT_MSG(r.err && strstr(r.err, "dfsim: error: ") && strstr(r.err, bad[i].says),
                      "case %zu: stderr lacks \"%s\": %s", i, bad[i].says, r.err ? r.err : "");
        DF_EXPECT_MSG(bad[i].status != 2 || (r.err && strstr(r.err, "--help")),
                      "case %zu: no hint to --help: %s", i, r.err ? r.err : "");
        DF_EXPECT_MSG(r.err && !strstr(r.err, "CRITICAL"), "case %zu: %s", i, r.err ? r.err : "");
        DF_EXPECT_MSG(r.out && !*r.out, "case %zu replayed: %s", i, r.out ? r.out : "");
        df_run_clear(&r);
    }
    /* Wrong types in the measured figures: no match, no crash. */
    const char *argv[] = {dfsim,       "--trace", trace,        "--policy", "fifo",
                          "--workers", "1",       "--validate", meas,       NULL};
    DfRun r = df_test_run(argv, NULL);
    DF_EXPECT_MSG(r.status == 0 && r.err && strstr(r.err, "no matching"), "exit %d: %s", r.status,
                  r.err ? r.err : "");
    df_run_clear(&r);
    gchar *cmd = g_strdup_printf("rm -rf %s", dir);
    DF_EXPECT(system(cmd) == 0);
    g_free(cmd);
    g_free(trace);
    g_free(empty);
    g_free(bytes);
    g_free(trunc);
    g_free(shape);
    g_free(meas);
    g_free(meas2);
    g_free(huge);
    g_free(long_);
    g_free(idle);
}

static double median3(double a, double b, double c)
{
    return a > b ? (b > c ? b : (a > c ? c : a)) : (a > c ? a : (b > c ? c : b));
}

/* Several traces of one configuration (dfbench decode --trace-runs): each
 * replayed, the median reported, each run kept; traces of another
 * configuration refused; a measurement of another libavcodec threading
 * mode than the trace's is shown but not held against the projection. */
DF_TEST(SimCli, SeveralTracesGiveTheMedian)
{
    const char *dfsim = getenv("DFSIM");
    if (!dfsim)
        DF_SKIP("DFSIM not set (run through meson test)");
    char dir[] = "/tmp/dfsim-runs-XXXXXX";
    DF_ASSERT(mkdtemp(dir));
    gchar *a = g_strdup_printf("%s/a.json", dir), *b = g_strdup_printf("%s/b.json", dir),
          *json = g_strdup_printf("%s/o.json", dir), *other = g_strdup_printf("%s/x.json", dir),
          *meas = g_strdup_printf("%s/m.json", dir);
    DF_ASSERT_EQ_INT(df_test_record_trace(a), 0);
    DF_ASSERT_EQ_INT(df_test_record_trace(b), 0);
    /* b first: the median is a's replay, the first (or a mean) is not. */
    const char *argv[] = {dfsim,     "--trace", b,          "--trace",    a,
                          "--trace", a,         "--policy", "fifo,steal", "--workers",
                          "1,2",     "--json",  json,       NULL};
    DfRun r = df_test_run(argv, NULL);
    DF_ASSERT_MSG(r.spawned && r.status == 0, "dfsim exited %d: %s", r.status, r.err);
    DF_EXPECT_MSG(strstr(r.out, "3 traces") && strstr(r.out, "recorded run 3"), "%s", r.out);
    df_run_clear(&r);
    JsonParser *p = json_parser_new();
    DF_ASSERT(json_parser_load_from_file(p, json, NULL));
    JsonObject *root = json_node_get_object(json_parser_get_root(p));
    DF_EXPECT_EQ_INT((int)json_array_get_length(json_object_get_array_member(root, "traces")), 3);
    JsonObject *rec = json_object_get_object_member(root, "recording");
    JsonArray *runs = json_object_get_array_member(rec, "runs");
    DF_ASSERT(runs && json_array_get_length(runs) == 3);
    const double r0 = json_object_get_double_member(json_array_get_object_element(runs, 0), "fps"),
                 r1 = json_object_get_double_member(json_array_get_object_element(runs, 1), "fps");
    DF_EXPECT(fabs(json_object_get_double_member(rec, "fps") - median3(r0, r1, r1)) < 1e-6);
    JsonArray *res = json_object_get_array_member(root, "results");
    DF_EXPECT_EQ_INT((int)json_array_get_length(res), 4);
    for (guint i = 0; i < json_array_get_length(res); i++) {
        JsonObject *o = json_array_get_object_element(res, i);
        JsonArray *fr = json_object_get_array_member(o, "fps_runs");
        DF_ASSERT(fr && json_array_get_length(fr) == 3);
        const double f0 = json_array_get_double_element(fr, 0),
                     f1 = json_array_get_double_element(fr, 1),
                     f2 = json_array_get_double_element(fr, 2);
        /* The replay is deterministic: the same trace, the same result. */
        DF_EXPECT_MSG(f1 == f2, "one trace replayed twice: %g and %g", f1, f2);
        DF_EXPECT_MSG(fabs(json_object_get_double_member(o, "fps") - median3(f0, f1, f2)) < 1e-6,
                      "fps %g is not the median of %g %g %g",
                      json_object_get_double_member(o, "fps"), f0, f1, f2);
    }
    g_object_unref(p);

    /* Another configuration: one worker, no frames. */
    DF_ASSERT(g_file_set_contents(other,
                                  "{\"traceEvents\": [{\"ph\": \"X\", \"tid\": 0, \"args\": "
                                  "{\"node\": 1, \"start_ns\": 0, \"end_ns\": 1000}}], "
                                  "\"otherData\": {\"dfsched\": {\"n_workers\": 1}}}",
                                  -1, NULL));
    const char *argv2[] = {dfsim, "--trace", a, "--trace", other, NULL};
    r = df_test_run(argv2, NULL);
    DF_EXPECT_MSG(r.status == 1 && r.err && strstr(r.err, "not a run of the same clip"),
                  "exit %d: %s", r.status, r.err ? r.err : "");
    DF_EXPECT(r.out && !*r.out);
    df_run_clear(&r);
    const char *argv3[] = {dfsim, "--trace", a, "--trace", "", NULL};
    r = df_test_run(argv3, NULL);
    DF_EXPECT_MSG(r.status == 2 && r.err && strstr(r.err, "bad --trace \"\""), "exit %d: %s",
                  r.status, r.err ? r.err : "");
    df_run_clear(&r);

    /* The traces ran without threads (dfbench's run.traces says so, by file
     * name); the 1-worker measurement too, the 2-worker one on frame
     * threads.  Far off at 1 worker: that fails; at 2 workers: shown, not
     * compared. */
    for (int same = 0; same <= 1; same++) {
        gchar *m = g_strdup_printf(
            "{\"bench\":\"decode\",\"run\":{\"traces\":[{\"workers\":%d,\"run\":1,"
            "\"file\":\"elsewhere/a.json\",\"threading\":\"none: single-slice\"}]},"
            "\"results\":[{\"input\":\"c\",\"impl\":\"dfmedia/fifo\",\"workers\":1,"
            "\"fps_median\":%s,\"threading\":\"none: single-slice\"},"
            "{\"input\":\"c\",\"impl\":\"dfmedia/fifo\",\"workers\":2,\"fps_median\":1.0,"
            "\"threading\":\"frame: single-slice\"}]}",
            DF_TEST_TRACE_WORKERS, same ? "1.0" : "1e9");
        DF_ASSERT(g_file_set_contents(meas, m, -1, NULL));
        g_free(m);
        const char *argv4[] = {dfsim, "--trace",    a,    "--policy", "fifo", "--workers",
                               "1,2", "--validate", meas, "--json",   json,   NULL};
        r = df_test_run(argv4, NULL);
        DF_EXPECT_MSG(r.status == 1, "exit %d: %s", r.status, r.err ? r.err : "");
        DF_EXPECT_MSG(strstr(r.out, "not comparable (threading frame there, none in the trace)"),
                      "%s", r.out);
        df_run_clear(&r);
        p = json_parser_new();
        DF_ASSERT(json_parser_load_from_file(p, json, NULL));
        JsonObject *v = json_object_get_object_member(json_node_get_object(json_parser_get_root(p)),
                                                      "validation");
        DF_EXPECT_EQ_INT((int)json_object_get_int_member(v, "checked"), 1);
        DF_EXPECT_EQ_INT((int)json_object_get_int_member(v, "not_comparable"), 1);
        DF_EXPECT(strcmp(json_object_get_string_member(v, "trace_threading"), "none") == 0);
        JsonArray *e = json_object_get_array_member(v, "entries");
        DF_ASSERT(json_array_get_length(e) == 2);
        DF_EXPECT(
            json_object_get_boolean_member(json_array_get_object_element(e, 0), "comparable"));
        DF_EXPECT(
            !json_object_get_boolean_member(json_array_get_object_element(e, 1), "comparable"));
        g_object_unref(p);
    }

    /* Paired: each trace's projection against the sample of the repeat it
     * ran in (run.traces says which).  The samples are 5 % and 1 % below
     * the two projections, the medians far off: held against the pairs. */
    const char *argv5[] = {dfsim,  "--trace",   a,   "--trace", b,    "--policy",
                           "fifo", "--workers", "1", "--json",  json, NULL};
    r = df_test_run(argv5, NULL);
    DF_ASSERT_MSG(r.status == 0, "exit %d: %s", r.status, r.err ? r.err : "");
    df_run_clear(&r);
    p = json_parser_new();
    DF_ASSERT(json_parser_load_from_file(p, json, NULL));
    JsonArray *fr = json_object_get_array_member(
        json_array_get_object_element(
            json_object_get_array_member(json_node_get_object(json_parser_get_root(p)), "results"),
            0),
        "fps_runs");
    const double pa = json_array_get_double_element(fr, 0),
                 pb = json_array_get_double_element(fr, 1);
    g_object_unref(p);
    for (int listed = 0; listed <= 1; listed++) {
        gchar *m = g_strdup_printf(
            "{\"bench\":\"decode\",\"run\":{\"traces\":[{\"workers\":%d,\"run\":1,\"repeat\":2,"
            "\"file\":\"x/a.json\",\"threading\":\"slice\"}%s]},"
            "\"results\":[{\"input\":\"c\",\"impl\":\"dfmedia/fifo\",\"workers\":1,"
            "\"fps_median\":%.6f,\"fps_samples\":[%.6f,%.6f],\"threading\":\"slice\"}]}",
            DF_TEST_TRACE_WORKERS,
            listed ? ",{\"workers\":1,\"run\":2,\"repeat\":1,\"file\":\"b.json\","
                     "\"threading\":\"slice\"}"
                   : "",
            (pa + pb) / 4, pb / 1.01, pa / 1.05);
        DF_ASSERT(g_file_set_contents(meas, m, -1, NULL));
        g_free(m);
        const char *argv6[] = {dfsim,      "--trace", a,           "--trace", b,
                               "--policy", "fifo",    "--workers", "1",       "--validate",
                               meas,       "--json",  json,        NULL};
        r = df_test_run(argv6, NULL);
        /* Unlisted, b's repeat is unknown: no pairs, the medians fail. */
        DF_EXPECT_MSG(r.status == (listed ? 0 : 1), "listed %d: exit %d: %s", listed, r.status,
                      r.out ? r.out : "");
        df_run_clear(&r);
        p = json_parser_new();
        DF_ASSERT(json_parser_load_from_file(p, json, NULL));
        JsonObject *v = json_object_get_object_member(json_node_get_object(json_parser_get_root(p)),
                                                      "validation");
        DF_EXPECT(
            strcmp(json_object_get_string_member(v, "basis"), listed ? "paired" : "medians") == 0);
        JsonObject *e0 =
            json_array_get_object_element(json_object_get_array_member(v, "entries"), 0);
        if (listed)
            DF_EXPECT_MSG(fabs(json_object_get_double_member(e0, "error_paired") - 0.03) < 1e-3,
                          "paired error %g, expected the median of 5 %% and 1 %%",
                          json_object_get_double_member(e0, "error_paired"));
        else
            DF_EXPECT(json_object_get_null_member(e0, "error_paired"));
        DF_EXPECT(json_object_get_double_member(e0, "error") > 0.5);
        g_object_unref(p);
    }

    gchar *cmd = g_strdup_printf("rm -rf %s", dir);
    DF_EXPECT(system(cmd) == 0);
    g_free(cmd);
    g_free(a);
    g_free(b);
    g_free(json);
    g_free(other);
    g_free(meas);
}

/* The busy-core slowdown from ffmpeg-streams: per repeat (1.25 and 1.0
 * here: the median of the medians would be 1.071), and never below 1 (two
 * streams faster each than one is the machine's drift, not a speed-up). */
DF_TEST(SimCli, SlowdownIsPairedAndNeverBelowOne)
{
    const char *dfsim = getenv("DFSIM");
    if (!dfsim)
        DF_SKIP("DFSIM not set (run through meson test)");
    char dir[] = "/tmp/dfsim-slow-XXXXXX";
    DF_ASSERT(mkdtemp(dir));
    gchar *a = g_strdup_printf("%s/a.json", dir), *json = g_strdup_printf("%s/o.json", dir),
          *meas = g_strdup_printf("%s/m.json", dir);
    DF_ASSERT_EQ_INT(df_test_record_trace(a), 0);
    static const struct {
        const char *one, *two;
        double want;
    } cases[] = {
        {"\"fps_median\":150,\"fps_samples\":[100,200]",
         "\"fps_median\":280,\"fps_samples\":[160,400]", 1.125},
        {"\"fps_median\":100", "\"fps_median\":220", 1.0},
    };
    for (size_t k = 0; k < G_N_ELEMENTS(cases); k++) {
        gchar *m =
            g_strdup_printf("{\"bench\":\"decode\",\"results\":["
                            "{\"input\":\"c\",\"impl\":\"ffmpeg-streams\",\"workers\":1,%s},"
                            "{\"input\":\"c\",\"impl\":\"ffmpeg-streams\",\"workers\":2,%s}]}",
                            cases[k].one, cases[k].two);
        DF_ASSERT(g_file_set_contents(meas, m, -1, NULL));
        g_free(m);
        const char *argv[] = {dfsim, "--trace",    a,    "--policy", "fifo", "--workers",
                              "1",   "--validate", meas, "--json",   json,   NULL};
        DfRun r = df_test_run(argv, NULL);
        DF_EXPECT_MSG(r.status == 0, "exit %d: %s", r.status, r.err ? r.err : "");
        df_run_clear(&r);
        JsonParser *p = json_parser_new();
        DF_ASSERT(json_parser_load_from_file(p, json, NULL));
        JsonArray *sd = json_object_get_array_member(
            json_object_get_object_member(json_node_get_object(json_parser_get_root(p)), "model"),
            "slowdown");
        DF_ASSERT(sd && json_array_get_length(sd) == 1);
        DF_EXPECT_MSG(fabs(json_array_get_double_element(sd, 0) - cases[k].want) < 1e-3,
                      "case %zu: slowdown %g, expected %g", k, json_array_get_double_element(sd, 0),
                      cases[k].want);
        g_object_unref(p);
    }
    gchar *cmd = g_strdup_printf("rm -rf %s", dir);
    DF_EXPECT(system(cmd) == 0);
    g_free(cmd);
    g_free(a);
    g_free(json);
    g_free(meas);
}
