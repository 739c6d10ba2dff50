/* dfsim end to end on a trace recorded by the real scheduler: it runs, and
 * writes valid JSON, CSV and a plot.  Never a timing test. */
#include "bench_util.h"
#include "trace_util.h"
#include "dfsched_trace.h"
#include "dftest.h"

#include <json-glib/json-glib.h>
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
        dfsim,      "--trace", trace,       "--topology", "package:2 l3:2 core:4 pu:2",
        "--policy", "all",     "--workers", "1,2,16",     "--streams",
        "1,3",      "--json",  json,        "--csv",      csv,
        "--plot",   svg,       NULL};
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
    JsonArray *res = json_object_get_array_member(root, "results");
    DF_EXPECT_EQ_INT(json_array_get_length(res), 5 * 3 * 2);
    for (guint i = 0; i < json_array_get_length(res); i++) {
        JsonObject *o = json_array_get_object_element(res, i);
        DF_EXPECT(json_object_get_double_member(o, "fps") > 0);
        DF_EXPECT(strncmp(json_object_get_string_member(o, "impl"), "dfsim/", 6) == 0);
        JsonObject *bl = json_object_get_object_member(o, "bytes_level");
        DF_EXPECT(json_object_has_member(bl, "machine"));
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
    fprintf(f, "{\"bench\":\"decode\",\"results\":[{\"input\":\"clip\",\"impl\":\"dfmedia/fifo\","
               "\"workers\":1,\"fps_median\":1.0}]}");
    fclose(f);
    const char *argv2[] = {dfsim, "--trace",    trace, "--policy", "fifo", "--workers",
                           "1",   "--validate", meas,  "--json",   json,   NULL};
    r = df_test_run(argv2, NULL);
    /* 1 fps is far from the projection: exit 2, and the JSON says why. */
    DF_EXPECT_EQ_INT(r.status, 2);
    df_run_clear(&r);
    p = json_parser_new();
    DF_ASSERT(json_parser_load_from_file(p, json, NULL));
    root = json_node_get_object(json_parser_get_root(p));
    /* On this machine (no --topology) the lost CPU is charged. */
    DF_EXPECT(json_object_get_boolean_member(json_object_get_object_member(root, "model"),
                                             "lost_cpu"));
    JsonObject *v = json_object_get_object_member(root, "validation");
    DF_EXPECT(!json_object_get_boolean_member(v, "all_within_10pct"));
    DF_EXPECT_EQ_INT(json_object_get_int_member(v, "checked"), 1);
    g_object_unref(p);

    /* Bad input: one clear line, non-zero exit. */
    const char *argv3[] = {dfsim, "--trace", "/nonexistent/t.json", NULL};
    r = df_test_run(argv3, NULL);
    DF_EXPECT(r.status != 0 && strstr(r.err, "/nonexistent/t.json"));
    df_run_clear(&r);
    const char *argv4[] = {dfsim, "--trace", trace, "--workers", "0", NULL};
    r = df_test_run(argv4, NULL);
    DF_EXPECT(r.status != 0 && strstr(r.err, "worker"));
    df_run_clear(&r);
    const char *argv5[] = {dfsim, "--trace", trace, "--policy", "lifo", NULL};
    r = df_test_run(argv5, NULL);
    DF_EXPECT(r.status != 0 && strstr(r.err, "lifo"));
    df_run_clear(&r);
    const char *argv6[] = {dfsim, "--trace", trace, "--lost-cpu", "maybe", NULL};
    r = df_test_run(argv6, NULL);
    DF_EXPECT(r.status != 0 && strstr(r.err, "lost-cpu"));
    df_run_clear(&r);

    gchar *cmd = g_strdup_printf("rm -rf %s", dir);
    DF_EXPECT(system(cmd) == 0);
    g_free(cmd);
}
