/* dfbench sched end to end: the program runs every requested configuration
 * and writes JSON of the documented shape.  Timings are never checked. */
#include "bench_util.h"
#include "dfsched.h"
#include "dftest.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const cases[] = {"empty", "fanout", "chain", "frames", "metg"};
/* The cases the peers run too. */
static const char *const peer_cases[] = {"empty", "fanout", "chain", "metg"};

/* The peers meson found (DFBENCH_PEERS, e.g. "omp,tbb" or "none"). */
static const char *built_peers(void)
{
    const char *p = getenv("DFBENCH_PEERS");
    return p && *p ? p : "none";
}

static bool has_number(JsonObject *o, const char *name)
{
    JsonNode *n = json_object_get_member(o, name);
    return n && JSON_NODE_HOLDS_VALUE(n) &&
           (json_node_get_value_type(n) == G_TYPE_DOUBLE ||
            json_node_get_value_type(n) == G_TYPE_INT64);
}

static bool is_null_or_absent(JsonObject *o, const char *name)
{
    JsonNode *n = json_object_get_member(o, name);
    return !n || JSON_NODE_HOLDS_NULL(n);
}

/* A sample's METG is a grain the search tried: 64 ns times a power of
 * two, up to the maximum (null: no grain reached the efficiency); the
 * median of the samples lies between the extremes. */
static void check_grain(JsonObject *r, const char *name, const char *key)
{
    JsonNode *n = json_object_get_member(r, name);
    DF_ASSERT_MSG(n, "%s: %s missing", key, name);
    const double lo = (double)json_object_get_int_member(r, "metg_min_grain_ns");
    const double hi = (double)json_object_get_int_member(r, "metg_max_grain_ns");
    DF_EXPECT_MSG(lo == 64 && hi >= lo, "%s: grains %g..%g", key, lo, hi);
    if (!JSON_NODE_HOLDS_NULL(n)) {
        DF_ASSERT_MSG(has_number(r, name), "%s: %s is neither a number nor null", key, name);
        const double g = json_object_get_double_member(r, name);
        DF_EXPECT_MSG(g >= lo && g <= hi, "%s: %s %g outside the search", key, name, g);
    }
    if (strcmp(name, "metg_ns") != 0)
        return;
    JsonArray *samples = json_object_get_array_member(r, "metg_ns_samples");
    DF_ASSERT_MSG(samples, "%s: metg_ns_samples missing", key);
    for (guint i = 0; i < json_array_get_length(samples); i++) {
        JsonNode *e = json_array_get_element(samples, i);
        if (JSON_NODE_HOLDS_NULL(e))
            continue;
        const double g = json_node_get_double(e);
        bool on_grid = false;
        for (double x = lo; x <= hi; x *= 2)
            on_grid |= x == g;
        DF_EXPECT_MSG(on_grid, "%s: sample %g is not a grain of the search", key, g);
    }
}

static void check_metg(JsonObject *r, const char *key)
{
    DF_EXPECT_MSG(has_number(r, "metg_target_efficiency") &&
                      json_object_get_double_member(r, "metg_target_efficiency") == 0.5,
                  "%s: metg_target_efficiency", key);
    check_grain(r, "metg_ns", key);
    check_grain(r, "metg_cpu_ns", key);
    JsonArray *samples = json_object_get_array_member(r, "metg_ns_samples");
    DF_EXPECT_MSG(samples && json_array_get_length(samples) ==
                                 (guint)json_object_get_int_member(r, "samples"),
                  "%s: metg_ns_samples", key);
    /* Where METG was reached, the efficiency at it is at least the target. */
    if (has_number(r, "metg_ns"))
        DF_EXPECT_MSG(has_number(r, "metg_efficiency") &&
                          json_object_get_double_member(r, "metg_efficiency") >= 0.5,
                      "%s: metg_efficiency below the target at METG", key);
}

/* Checks one entry of "results"; adds "impl|case|workers" to `seen`. */
static void check_result(JsonObject *r, GHashTable *seen, int repeat)
{
    const char *impl = json_object_get_string_member_with_default(r, "impl", NULL);
    const char *cs = json_object_get_string_member_with_default(r, "case", NULL);
    DF_ASSERT_MSG(impl && cs, "a result without impl or case");
    DF_ASSERT(json_object_has_member(r, "workers"));
    int workers = (int)json_object_get_int_member(r, "workers");
    char *key = g_strdup_printf("%s|%s|%d", impl, cs, workers);
    DF_EXPECT_MSG(!g_hash_table_contains(seen, key), "%s reported twice", key);
    g_hash_table_add(seen, key);

    JsonNode *ov = json_object_get_member(r, "oversubscribed");
    DF_EXPECT_MSG(ov && json_node_get_value_type(ov) == G_TYPE_BOOLEAN, "%s: oversubscribed", key);
    DF_ASSERT_MSG(has_number(r, "ns_per_task") && has_number(r, "ns_per_task_min") &&
                      has_number(r, "ns_per_task_max"),
                  "%s: ns_per_task, _min, _max must be numbers", key);
    double med = json_object_get_double_member(r, "ns_per_task");
    double mn = json_object_get_double_member(r, "ns_per_task_min");
    double mx = json_object_get_double_member(r, "ns_per_task_max");
    DF_EXPECT_MSG(mn > 0 && mn <= med && med <= mx, "%s: min %g, median %g, max %g", key, mn, med,
                  mx);
    DF_EXPECT_MSG(has_number(r, "cpu_ns_per_task") &&
                      json_object_get_double_member(r, "cpu_ns_per_task") >= 0,
                  "%s: cpu_ns_per_task", key);
    DF_EXPECT_MSG(json_object_get_int_member(r, "samples") == repeat, "%s: %lld samples", key,
                  (long long)json_object_get_int_member(r, "samples"));
    JsonArray *samples = json_object_get_array_member(r, "ns_per_task_samples");
    DF_EXPECT_MSG(samples && (int)json_array_get_length(samples) == repeat, "%s: samples array",
                  key);
    DF_EXPECT_MSG(json_object_get_int_member(r, "tasks") > 0, "%s: tasks", key);
    DF_EXPECT_MSG(json_object_get_int_member(r, "errors") == 0, "%s: results did not check out",
                  key);
    DF_EXPECT_MSG(json_object_get_int_member(r, "failures") == 0, "%s: failed: %s", key,
                  json_object_get_string_member_with_default(r, "error", "?"));

    const bool dfsched = g_str_has_prefix(impl, "dfsched/");
    /* empty and metg tasks read nothing */
    const bool has_bytes = strcmp(cs, "empty") != 0 && strcmp(cs, "metg") != 0;
    if (dfsched && has_bytes) {
        DF_EXPECT_MSG(has_number(r, "local_byte_share"), "%s: local_byte_share missing", key);
        double share = json_object_get_double_member(r, "local_byte_share");
        DF_EXPECT_MSG(share >= 0 && share <= 1, "%s: local_byte_share %g", key, share);
        if (workers == 1)
            DF_EXPECT_MSG(share == 1.0, "%s: one worker consumes everything locally, got %g", key,
                          share);
    } else {
        DF_EXPECT_MSG(is_null_or_absent(r, "local_byte_share"),
                      "%s: local_byte_share where nothing is measured", key);
    }
    if (strcmp(cs, "metg") == 0)
        check_metg(r, key);
    if (strcmp(cs, "frames") == 0) {
        DF_EXPECT_MSG(has_number(r, "frames_per_s") &&
                          json_object_get_double_member(r, "frames_per_s") > 0,
                      "%s: frames_per_s", key);
        DF_EXPECT_MSG(has_number(r, "gb_per_s") && json_object_get_double_member(r, "gb_per_s") > 0,
                      "%s: gb_per_s", key);
    }
}

DF_TEST(BenchSched, QuickRunWritesTheDocumentedJson)
{
    const char *dfbench = df_test_dfbench();
    if (!dfbench)
        DF_SKIP("DFBENCH is not set: run through meson test");
    gchar *json_path = NULL;
    GError *gerr = NULL;
    int fd = g_file_open_tmp("dfbench-sched-XXXXXX.json", &json_path, &gerr);
    DF_ASSERT_MSG(fd >= 0, "temporary file: %s", gerr ? gerr->message : "?");
    close(fd);
    const char *peers = built_peers();
    const char *argv[] = {dfbench, "sched",    "--quick", "--tasks",   "3000", "--frames",
                          "8",     "--repeat", "2",       "--workers", "1,2",  "--peers",
                          peers,   "--json",   json_path, NULL};
    DfRun run = df_test_run(argv, NULL);
    JsonParser *parser = json_parser_new();
    GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    DF_ASSERT_MSG(run.spawned && run.status == 0, "dfbench exited with %d:\n%s\n%s", run.status,
                  run.out ? run.out : "", run.err ? run.err : "");
    DF_EXPECT_MSG(strstr(run.out, "poll mode"), "the table should say the scheduler polls");
    DF_ASSERT_MSG(json_parser_load_from_file(parser, json_path, &gerr), "bad JSON: %s",
                  gerr->message);
    JsonNode *root = json_parser_get_root(parser);
    DF_ASSERT(root && JSON_NODE_HOLDS_OBJECT(root));
    JsonObject *top = json_node_get_object(root);
    DF_EXPECT(g_strcmp0(json_object_get_string_member_with_default(top, "bench", ""), "sched") ==
              0);

    JsonObject *machine = json_object_get_object_member(top, "machine");
    DF_ASSERT_MSG(machine, "no machine description");
    DF_EXPECT(json_object_get_int_member(machine, "cores") > 0);
    DF_EXPECT(json_object_get_int_member(machine, "pus") > 0);
    DF_EXPECT(json_object_has_member(machine, "topology"));
    DF_EXPECT(json_object_has_member(machine, "cpu_model"));
    JsonObject *runobj = json_object_get_object_member(top, "run");
    DF_ASSERT_MSG(runobj, "no run description");
    DF_EXPECT(g_strcmp0(json_object_get_string_member_with_default(runobj, "mode", ""), "poll") ==
              0);
    DF_EXPECT(json_object_get_int_member(runobj, "poll_us") == -1);

    JsonArray *results = json_object_get_array_member(top, "results");
    DF_ASSERT_MSG(results && json_array_get_length(results) > 0, "no results");
    for (guint i = 0; i < json_array_get_length(results); i++) {
        JsonNode *n = json_array_get_element(results, i);
        DF_ASSERT(JSON_NODE_HOLDS_OBJECT(n));
        check_result(json_node_get_object(n), seen, 2);
    }
    /* Every requested configuration is there, none dropped. */
    for (int w = 1; w <= 2; w++) {
        /* dfbench runs every policy of dfsched's registry by default. */
        for (const char *const *p = df_policy_names(); *p; p++)
            for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
                char *key = g_strdup_printf("dfsched/%s|%s|%d", *p, cases[c], w);
                DF_EXPECT_MSG(g_hash_table_contains(seen, key), "%s missing", key);
                g_free(key);
            }
        const char *peer_impl[] = {strstr(peers, "omp") ? "openmp" : NULL,
                                   strstr(peers, "tbb") ? "tbb" : NULL};
        for (size_t p = 0; p < G_N_ELEMENTS(peer_impl); p++)
            for (size_t c = 0; peer_impl[p] && c < G_N_ELEMENTS(peer_cases); c++) {
                char *key = g_strdup_printf("%s|%s|%d", peer_impl[p], peer_cases[c], w);
                DF_EXPECT_MSG(g_hash_table_contains(seen, key), "%s missing", key);
                g_free(key);
            }
    }
    JsonArray *goals = json_object_get_array_member(top, "goals");
    DF_EXPECT_MSG(goals && json_array_get_length(goals) > 0, "no goals evaluated");
    g_hash_table_destroy(seen);
    g_object_unref(parser);
    df_run_clear(&run);
    unlink(json_path);
    g_free(json_path);
}

/* Every bad value: exit 2 and one line naming the flag and the value, an
 * unwritable output: exit 1 before any run (a run would take seconds). */
/* Every subcommand's usage line names it as its errors do ("dfbench
 * live", not "live"). */
DF_TEST(BenchSched, HelpNamesTheSubcommand)
{
    const char *dfbench = df_test_dfbench();
    if (!dfbench)
        DF_SKIP("DFBENCH is not set: run through meson test");
    static const char *const subs[] = {"sched", "transfer", "decode", "realtime", "live"};
    for (size_t i = 0; i < G_N_ELEMENTS(subs); i++) {
        const char *argv[] = {dfbench, subs[i], "--help", NULL};
        DfRun r = df_test_run(argv, NULL);
        if (r.spawned && r.status == 2 && r.err && strstr(r.err, "unknown subcommand")) {
            df_run_clear(&r); /* built without media */
            continue;
        }
        gchar *want = g_strdup_printf("  dfbench %s [OPTION", subs[i]);
        DF_EXPECT_MSG(r.spawned && r.status == 0 && r.out && strstr(r.out, want),
                      "%s --help: status %d, \"%.80s\"", subs[i], r.status, r.out ? r.out : "");
        g_free(want);
        df_run_clear(&r);
    }
}

DF_TEST(BenchSched, BadOptionsAreUsageErrors)
{
    const char *dfbench = df_test_dfbench();
    if (!dfbench)
        DF_SKIP("DFBENCH is not set: run through meson test");
    char dir[] = "/tmp/dfbench-sched-bad-XXXXXX";
    DF_ASSERT(mkdtemp(dir));
    const struct {
        const char *argv[4];
        int status;
        const char *says;
    } bad[] = {
        {{"--policy", "nope"}, 2, "unknown policy \"nope\""},
        {{"--policy", ""}, 2, "bad --policy \"\""},
        {{"--policy", "fifo,,steal"}, 2, "bad --policy \"fifo,,steal\""},
        {{"--case", "nope"}, 2, "unknown case \"nope\""},
        {{"--case", ""}, 2, "bad --case \"\""},
        {{"--workers", "0"}, 2, "bad --workers \"0\""},
        {{"--workers", "4x"}, 2, "bad --workers \"4x\""},
        {{"--workers", "1,,2"}, 2, "bad --workers \"1,,2\""},
        {{"--workers", "99999999999999999999"}, 2, "bad --workers \"99999999999999999999\""},
        {{"--workers", "4-2"}, 2, "bad --workers \"4-2\""},
        {{"--peers", "nope"}, 2, "unknown peer \"nope\""},
        {{"--peers", "none,,none"}, 2, "bad --peers"},
        {{"--poll-us", "-2"}, 2, "bad --poll-us -2"},
        {{"--tasks", "-1"}, 2, "bad --tasks -1"},
        {{"--tasks", "99999999999999999999"}, 2, "--tasks"},
        {{"--repeat", "4x"}, 2, "--repeat"},
        {{"--frames", "-5"}, 2, "bad --frames -5"},
        {{"--width", "-1"}, 2, "bad --width -1"},
        {{"--width", "100000000"}, 2, "bad --width 100000000"}, /* ran out of memory */
        {{"--json"}, 2, "--json"},
        {{"--nosuchflag"}, 2, "nosuchflag"},
        {{"extra"}, 2, "unexpected argument \"extra\""},
        {{"--json", "/nonexistent/dir/s.json"}, 1, "--json: cannot write /nonexistent/dir/s.json"},
        {{"--json", "/proc/x/y"}, 1, "cannot write /proc/x/y"},
        {{"--csv", dir}, 1, "Is a directory"},
        {{"--csv", ""}, 2, "bad --csv \"\""},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        const char *argv[8] = {dfbench, "sched"};
        for (int k = 0; k < 4 && bad[i].argv[k]; k++)
            argv[k + 2] = bad[i].argv[k];
        DfRun run = df_test_run(argv, NULL);
        DF_EXPECT_MSG(run.spawned && run.status == bad[i].status, "case %zu (%s %s): exit %d", i,
                      bad[i].argv[0], bad[i].argv[1] ? bad[i].argv[1] : "", run.status);
        DF_EXPECT_MSG(run.err && strstr(run.err, "dfbench sched: error: ") &&
                          strstr(run.err, bad[i].says),
                      "case %zu: stderr lacks \"%s\": %s", i, bad[i].says, run.err ? run.err : "");
        DF_EXPECT_MSG(bad[i].status != 2 || (run.err && strstr(run.err, "--help")),
                      "case %zu: no hint to --help: %s", i, run.err ? run.err : "");
        /* Refused before the runs: no table on stdout. */
        DF_EXPECT_MSG(run.out && !strstr(run.out, "load average"), "case %zu ran: %s", i,
                      run.out ? run.out : "");
        df_run_clear(&run);
    }
    DF_EXPECT(rmdir(dir) == 0);
    const char *help[] = {dfbench, "sched", "--help", NULL};
    DfRun run = df_test_run(help, NULL);
    DF_EXPECT_EQ_INT(run.status, 0);
    static const char *const options[] = {"--workers", "--policy", "--case",  "--peers",  "--tasks",
                                          "--repeat",  "--json",   "--quick", "--poll-us"};
    for (size_t i = 0; run.out && i < G_N_ELEMENTS(options); i++)
        DF_EXPECT_MSG(strstr(run.out, options[i]), "--help does not mention %s", options[i]);
    df_run_clear(&run);
}

/* The metg case alone, quickly: a METG (or null) per runtime, in the table
 * and the JSON, from a geometric search. */
DF_TEST(BenchSched, MetgReportsEveryRuntime)
{
    const char *dfbench = df_test_dfbench();
    if (!dfbench)
        DF_SKIP("DFBENCH is not set: run through meson test");
    gchar *json_path = NULL;
    int fd = g_file_open_tmp("dfbench-metg-XXXXXX.json", &json_path, NULL);
    DF_ASSERT(fd >= 0);
    close(fd);
    const char *peers = built_peers();
    const char *argv[] = {dfbench,   "sched", "--case",  "metg",   "--policy",  "cost-local",
                          "--peers", peers,   "--quick", "--tasks", "2000",     "--repeat",
                          "1",       "--workers", "2",   "--json", json_path,   NULL};
    DfRun run = df_test_run(argv, NULL);
    JsonParser *parser = json_parser_new();
    GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    DF_ASSERT_MSG(run.spawned && run.status == 0, "dfbench exited with %d:\n%s\n%s", run.status,
                  run.out ? run.out : "", run.err ? run.err : "");
    DF_EXPECT_MSG(strstr(run.out, "METG ns"), "the table has no METG column");
    DF_ASSERT(json_parser_load_from_file(parser, json_path, NULL));
    JsonObject *top = json_node_get_object(json_parser_get_root(parser));
    JsonObject *ro = json_object_get_object_member(top, "run");
    DF_EXPECT(ro && json_object_get_int_member(ro, "metg_work_ns") > 0);
    JsonArray *results = json_object_get_array_member(top, "results");
    DF_ASSERT(results);
    for (guint i = 0; i < json_array_get_length(results); i++)
        check_result(json_array_get_object_element(results, i), seen, 1);
    const char *impls[] = {"dfsched/cost-local", strstr(peers, "omp") ? "openmp" : NULL,
                           strstr(peers, "tbb") ? "tbb" : NULL};
    for (size_t i = 0; i < G_N_ELEMENTS(impls); i++) {
        if (!impls[i])
            continue;
        char *key = g_strdup_printf("%s|metg|2", impls[i]);
        DF_EXPECT_MSG(g_hash_table_contains(seen, key), "%s missing", key);
        g_free(key);
    }
    DF_EXPECT_EQ_INT(json_array_get_length(results), 1 + (strstr(peers, "omp") != NULL) +
                                                         (strstr(peers, "tbb") != NULL));
    g_hash_table_destroy(seen);
    g_object_unref(parser);
    df_run_clear(&run);
    unlink(json_path);
    g_free(json_path);
}

/* Parking mode runs too, and says so in its JSON. */
DF_TEST(BenchSched, ParkingModeRuns)
{
    const char *dfbench = df_test_dfbench();
    if (!dfbench)
        DF_SKIP("DFBENCH is not set: run through meson test");
    gchar *json_path = NULL;
    int fd = g_file_open_tmp("dfbench-park-XXXXXX.json", &json_path, NULL);
    DF_ASSERT(fd >= 0);
    close(fd);
    const char *argv[] = {dfbench,      "sched",   "--case",   "empty,chain", "--policy",
                          "cost-local", "--peers", "none",     "--poll-us",   "20",
                          "--tasks",    "2000",    "--repeat", "1",           "--workers",
                          "2",          "--json",  json_path,  NULL};
    DfRun run = df_test_run(argv, NULL);
    DF_EXPECT_MSG(run.status == 0, "exit %d: %s", run.status, run.err ? run.err : "");
    JsonParser *parser = json_parser_new();
    if (json_parser_load_from_file(parser, json_path, NULL)) {
        JsonObject *top = json_node_get_object(json_parser_get_root(parser));
        JsonObject *ro = json_object_get_object_member(top, "run");
        DF_EXPECT(ro && g_strcmp0(json_object_get_string_member_with_default(ro, "mode", ""),
                                  "park") == 0);
        DF_EXPECT(ro && json_object_get_int_member(ro, "poll_us") == 20);
    } else {
        DF_EXPECT_MSG(false, "no JSON written");
    }
    g_object_unref(parser);
    df_run_clear(&run);
    unlink(json_path);
    g_free(json_path);
}

/* An array member of `n` numbers, none null. */
static bool has_numbers(JsonObject *o, const char *name, guint n)
{
    JsonNode *a = json_object_get_member(o, name);
    if (!a || !JSON_NODE_HOLDS_ARRAY(a) || json_array_get_length(json_node_get_array(a)) != n)
        return false;
    for (guint i = 0; i < n; i++)
        if (JSON_NODE_HOLDS_NULL(json_array_get_element(json_node_get_array(a), i)))
            return false;
    return true;
}

/* --trace-overhead: every policy x case x workers has an untraced and a
 * traced figure from the same repeats, and an overhead computed from them.
 * The structure only: what tracing costs is measured, never asserted. */
DF_TEST(BenchSched, TraceOverheadPairsEveryPolicy)
{
    const char *dfbench = df_test_dfbench();
    if (!dfbench)
        DF_SKIP("DFBENCH is not set: run through meson test");
    gchar *json_path = NULL;
    int fd = g_file_open_tmp("dfbench-trace-XXXXXX.json", &json_path, NULL);
    DF_ASSERT(fd >= 0);
    close(fd);
    const char *argv[] = {
        dfbench,    "sched",   "--quick",   "--tasks", "2000",    "--frames", "8",
        "--repeat", "2",       "--workers", "1,2",     "--peers", "none",     "--trace-overhead",
        "--json",   json_path, NULL};
    DfRun run = df_test_run(argv, NULL);
    DF_ASSERT_MSG(run.spawned && run.status == 0, "dfbench exited with %d:\n%s\n%s", run.status,
                  run.out ? run.out : "", run.err ? run.err : "");
    DF_EXPECT_MSG(strstr(run.out, "trace overhead"), "no trace overhead table:\n%s", run.out);
    JsonParser *parser = json_parser_new();
    DF_ASSERT(json_parser_load_from_file(parser, json_path, NULL));
    JsonObject *top = json_node_get_object(json_parser_get_root(parser));
    JsonArray *rows = json_object_get_array_member(top, "trace_overhead");
    DF_ASSERT_MSG(rows, "no trace_overhead member");
    GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (guint i = 0; i < json_array_get_length(rows); i++) {
        JsonObject *r = json_array_get_object_element(rows, i);
        const char *pol = json_object_get_string_member_with_default(r, "policy", "?");
        const char *cs = json_object_get_string_member_with_default(r, "case", "?");
        char *key =
            g_strdup_printf("%s|%s|%lld", pol, cs,
                            (long long)json_object_get_int_member_with_default(r, "workers", 0));
        DF_EXPECT_MSG(!g_hash_table_contains(seen, key), "%s twice", key);
        DF_EXPECT_MSG(has_number(r, "ns_per_task_off") && has_number(r, "ns_per_task_on"),
                      "%s: no traced and untraced ns_per_task", key);
        DF_EXPECT_MSG(has_numbers(r, "ns_per_task_off_samples", 2) &&
                          has_numbers(r, "ns_per_task_on_samples", 2),
                      "%s: 2 samples each way expected", key);
        DF_EXPECT_MSG(has_number(r, "overhead_pct") && has_number(r, "overhead_pct_paired") &&
                          has_number(r, "added_ns_per_task"),
                      "%s: no overhead", key);
        if (strcmp(cs, "frames") == 0)
            DF_EXPECT_MSG(has_number(r, "fps_off") && has_number(r, "fps_on"), "%s: fps", key);
        DF_EXPECT_MSG(json_object_get_int_member_with_default(r, "dropped_events", -1) == 0,
                      "%s: trace events dropped (buffers too small for the run)", key);
        g_hash_table_add(seen, key);
    }
    for (int w = 1; w <= 2; w++)
        for (const char *const *p = df_policy_names(); *p; p++)
            for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
                char *key = g_strdup_printf("%s|%s|%d", *p, cases[c], w);
                DF_EXPECT_MSG(g_hash_table_contains(seen, key), "%s missing", key);
                g_free(key);
            }
    g_hash_table_destroy(seen);
    g_object_unref(parser);
    df_run_clear(&run);
    unlink(json_path);
    g_free(json_path);
}
