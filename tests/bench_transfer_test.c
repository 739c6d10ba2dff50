/* dfbench transfer end to end: it measures one pair of workers per level
 * this machine has and writes JSON of the documented shape, with the
 * --ns-per-byte argument for dfsim.  The figures themselves are never
 * checked: they are timings on a shared machine. */
#include "bench_util.h"
#include "dftest.h"

#include <json-glib/json-glib.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

DF_TEST(BenchTransfer, RunsAndWritesJson)
{
    const char *dfbench = df_test_dfbench();
    if (!dfbench)
        DF_SKIP("DFBENCH is not set: run through meson test");
    char dir[] = "/tmp/dfbench-xfer-XXXXXX";
    DF_ASSERT(mkdtemp(dir));
    gchar *json = g_strdup_printf("%s/x.json", dir);
    const char *argv[] = {dfbench, "transfer", "--size", "64", "--repeat",
                          "3",     "--json",   json,     NULL};
    DfRun run = df_test_run(argv, NULL);
    DF_ASSERT_MSG(run.spawned && run.status == 0, "exit %d: %s", run.status,
                  run.err ? run.err : "");
    JsonParser *p = json_parser_new();
    DF_ASSERT(json_parser_load_from_file(p, json, NULL));
    JsonObject *root = json_node_get_object(json_parser_get_root(p));
    DF_EXPECT(
        g_strcmp0(json_object_get_string_member_with_default(root, "bench", ""), "transfer") == 0);
    DF_EXPECT(json_object_has_member(root, "machine"));
    /* 64 KiB of 1920-byte rows. */
    DF_EXPECT_EQ_INT(json_object_get_int_member(root, "band_bytes"), 64 * 1024 / 1920 * 1920);
    JsonArray *levels = json_object_get_array_member(root, "levels");
    DF_ASSERT(levels);
    const long pus = sysconf(_SC_NPROCESSORS_ONLN);
    /* One pair per level; a machine of more than one PU has at least one. */
    DF_EXPECT(pus < 2 || json_array_get_length(levels) >= 1);
    const char *arg = json_object_get_string_member_with_default(root, "ns_per_byte_arg", "?");
    for (guint i = 0; i < json_array_get_length(levels); i++) {
        JsonObject *l = json_array_get_object_element(levels, i);
        const char *name = json_object_get_string_member_with_default(l, "level", "");
        DF_EXPECT_MSG(strcmp(name, "self") != 0 && *name, "level \"%s\"", name);
        JsonArray *w = json_object_get_array_member(l, "workers");
        DF_EXPECT(w && json_array_get_length(w) == 2 && json_array_get_int_element(w, 0) == 0 &&
                  json_array_get_int_element(w, 1) > 0);
        DF_EXPECT(json_object_get_double_member(l, "remote_us") > 0 &&
                  json_object_get_double_member(l, "local_us") > 0);
        DF_EXPECT(json_object_has_member(l, "ns_per_byte"));
        gchar *want = g_strdup_printf("%s=", name);
        DF_EXPECT_MSG(strstr(arg, want), "\"%s\" lacks %s", arg, want);
        g_free(want);
        DF_EXPECT(run.out && strstr(run.out, name));
    }
    DF_EXPECT(json_array_get_length(levels) == 0 ||
              (run.out && strstr(run.out, "dfsim --ns-per-byte ")));
    g_object_unref(p);
    df_run_clear(&run);
    unlink(json);
    DF_EXPECT(rmdir(dir) == 0);
    g_free(json);
}

DF_TEST(BenchTransfer, BadOptionsAreUsageErrors)
{
    const char *dfbench = df_test_dfbench();
    if (!dfbench)
        DF_SKIP("DFBENCH is not set: run through meson test");
    const struct {
        const char *argv[3];
        int status;
        const char *says;
    } bad[] = {
        {{"--size", "8"}, 2, "bad --size 8"},
        {{"--size", "4x"}, 2, "--size"},
        {{"--repeat", "2"}, 2, "bad --repeat 2"},
        {{"--json", ""}, 2, "bad --json \"\""},
        {{"--json", "/nonexistent/dir/x.json"}, 1, "cannot write /nonexistent/dir/x.json"},
        {{"extra"}, 2, "unexpected argument \"extra\""},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        const char *argv[6] = {dfbench, "transfer"};
        for (int k = 0; k < 2 && bad[i].argv[k]; k++)
            argv[k + 2] = bad[i].argv[k];
        DfRun run = df_test_run(argv, NULL);
        DF_EXPECT_MSG(run.spawned && run.status == bad[i].status, "case %zu: exit %d", i,
                      run.status);
        DF_EXPECT_MSG(run.err && strstr(run.err, "dfbench transfer: error: ") &&
                          strstr(run.err, bad[i].says),
                      "case %zu: stderr lacks \"%s\": %s", i, bad[i].says, run.err ? run.err : "");
        /* Refused before measuring: no table. */
        DF_EXPECT_MSG(run.out && !strstr(run.out, "remote us"), "case %zu ran", i);
        df_run_clear(&run);
    }
}
