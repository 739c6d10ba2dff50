/* dfsched-viz end to end on a trace recorded by the real scheduler: the
 * outputs' structure (DOT that dot accepts, one node per task, an image of
 * the documented size, one CSV row per worker, every module in the table)
 * and clear failures on bad input.  Never how the pictures look. */
#include "bench_util.h"
#include "dfsched_trace.h"
#include "dftest.h"
#include "trace_util.h"

#include <cairo.h>
#include <glib.h>
#include <stdlib.h>
#include <string.h>

/* The heat map's documented size (apps/dfsched-viz/viz.h). */
#define MATRIX_W 800
#define MATRIX_H 640

typedef struct Ctx {
    const char *viz;
    char dir[64];
    char trace[128];
} Ctx;

static bool setup(Ctx *c)
{
    c->viz = getenv("DFSCHED_VIZ");
    if (!c->viz)
        return false;
    snprintf(c->dir, sizeof(c->dir), "/tmp/dfviz-test-XXXXXX");
    if (!mkdtemp(c->dir))
        return false;
    snprintf(c->trace, sizeof(c->trace), "%s/t.json", c->dir);
    return df_test_record_trace(c->trace) == 0;
}

static void teardown(const Ctx *c)
{
    gchar *cmd = g_strdup_printf("rm -rf '%s'", c->dir);
    DF_EXPECT(system(cmd) == 0);
    g_free(cmd);
}

static gchar *path_in(const Ctx *c, const char *name)
{
    return g_strdup_printf("%s/%s", c->dir, name);
}

static int count_lines(const char *text)
{
    int n = 0;
    for (const char *p = text; *p; p++)
        n += *p == '\n';
    return n;
}

/* Task node statements: lines "    t<digits> [" (graph.c names tasks t<id>;
 * sources s<k> and legend entries are not tasks). */
static int count_task_nodes(const char *dot)
{
    int n = 0;
    gchar **lines = g_strsplit(dot, "\n", -1);
    for (int i = 0; lines[i]; i++) {
        const char *p = lines[i];
        while (*p == ' ')
            p++;
        if (*p != 't' || !g_ascii_isdigit(p[1]))
            continue;
        p++;
        while (g_ascii_isdigit(*p))
            p++;
        n += strncmp(p, " [", 2) == 0;
    }
    g_strfreev(lines);
    return n;
}

/* `dot -Tsvg` accepts the file (true when Graphviz is missing: skipped). */
static bool dot_accepts(const char *dot_path, const char *svg_path, char **why)
{
    gchar *dot = g_find_program_in_path("dot");
    if (!dot)
        return true;
    const char *argv[] = {dot, "-Tsvg", dot_path, "-o", svg_path, NULL};
    DfRun r = df_test_run(argv, NULL);
    bool ok = r.spawned && r.status == 0;
    *why = g_strdup(r.err ? r.err : "");
    df_run_clear(&r);
    g_free(dot);
    return ok;
}

DF_TEST(VizCli, GraphIsValidDotWithOneNodePerTask)
{
    Ctx c;
    if (!getenv("DFSCHED_VIZ"))
        DF_SKIP("DFSCHED_VIZ not set (run through meson test)");
    DF_ASSERT(setup(&c));
    gchar *dotf = path_in(&c, "g.dot"), *svgf = path_in(&c, "check.svg");

    /* Default: the first 2 frames. */
    const char *argv[] = {c.viz, "graph", c.trace, "-o", dotf, NULL};
    DfRun r = df_test_run(argv, NULL);
    DF_ASSERT(r.spawned);
    DF_EXPECT_MSG(r.status == 0, "graph exited %d: %s", r.status, r.err);
    df_run_clear(&r);
    gchar *text = NULL;
    DF_ASSERT(g_file_get_contents(dotf, &text, NULL, NULL));
    DF_EXPECT(g_str_has_prefix(text, "// dfsched-viz") && strstr(text, "digraph"));
    DF_EXPECT_EQ_INT(count_task_nodes(text), 2 * DF_TEST_TRACE_TASKS_PER_FRAME);
    DF_EXPECT(strstr(text, "penwidth=") && strstr(text, "->"));
    DF_EXPECT(strstr(text, "legend_w0") && strstr(text, "legend_w1"));
    DF_EXPECT(strstr(text, "cluster_f0") && strstr(text, "cluster_f1") &&
              !strstr(text, "cluster_f2"));
    g_free(text);
    char *why = NULL;
    DF_EXPECT_MSG(dot_accepts(dotf, svgf, &why), "dot rejects %s: %s", dotf, why);
    g_free(why);

    /* A range of 3 frames, and -o FILE.svg: FILE.dot next to it, plus the
     * SVG when Graphviz is installed. */
    gchar *svg_out = path_in(&c, "r.svg"), *dot_out = path_in(&c, "r.dot");
    const char *argv2[] = {c.viz, "graph", c.trace, "--frames", "3-5", "-o", svg_out, NULL};
    r = df_test_run(argv2, NULL);
    DF_EXPECT_MSG(r.status == 0, "graph --frames exited %d: %s", r.status, r.err);
    df_run_clear(&r);
    DF_ASSERT(g_file_get_contents(dot_out, &text, NULL, NULL));
    DF_EXPECT_EQ_INT(count_task_nodes(text), 3 * DF_TEST_TRACE_TASKS_PER_FRAME);
    g_free(text);
    gchar *dot = g_find_program_in_path("dot");
    if (dot) {
        DF_ASSERT(g_file_get_contents(svg_out, &text, NULL, NULL));
        DF_EXPECT(strstr(text, "<svg") != NULL);
        g_free(text);
    }
    g_free(dot);

    /* Frames the trace does not have. */
    const char *argv3[] = {c.viz, "graph", c.trace, "--frames", "500-600", "-o", dotf, NULL};
    r = df_test_run(argv3, NULL);
    DF_EXPECT(r.status != 0 && strstr(r.err, "no tasks in frames 500-600"));
    df_run_clear(&r);
    const char *argv4[] = {c.viz, "graph", c.trace, "--frames", "5-3", "-o", dotf, NULL};
    r = df_test_run(argv4, NULL);
    DF_EXPECT(r.status != 0 && strstr(r.err, "--frames"));
    df_run_clear(&r);

    g_free(svg_out);
    g_free(dot_out);
    g_free(dotf);
    g_free(svgf);
    teardown(&c);
}

DF_TEST(VizCli, MatrixImageSizeAndCsvRows)
{
    Ctx c;
    if (!getenv("DFSCHED_VIZ"))
        DF_SKIP("DFSCHED_VIZ not set (run through meson test)");
    DF_ASSERT(setup(&c));
    gchar *png = path_in(&c, "m.png"), *svg = path_in(&c, "m.svg"), *csv = path_in(&c, "m.csv");

    const char *argv[] = {c.viz, "matrix", c.trace, "-o", png, NULL};
    DfRun r = df_test_run(argv, NULL);
    DF_ASSERT(r.spawned);
    DF_EXPECT_MSG(r.status == 0, "matrix exited %d: %s", r.status, r.err);
    DF_EXPECT(strstr(r.out, "local share") != NULL);
    df_run_clear(&r);
    cairo_surface_t *img = cairo_image_surface_create_from_png(png);
    DF_EXPECT(cairo_surface_status(img) == CAIRO_STATUS_SUCCESS);
    DF_EXPECT_EQ_INT(cairo_image_surface_get_width(img), MATRIX_W);
    DF_EXPECT_EQ_INT(cairo_image_surface_get_height(img), MATRIX_H);
    cairo_surface_destroy(img);

    const char *argv2[] = {c.viz, "matrix", c.trace, "-o", svg, NULL};
    r = df_test_run(argv2, NULL);
    DF_EXPECT_MSG(r.status == 0, "matrix .svg exited %d: %s", r.status, r.err);
    df_run_clear(&r);
    gchar *text = NULL;
    DF_ASSERT(g_file_get_contents(svg, &text, NULL, NULL));
    DF_EXPECT(strstr(text, "<svg") && strstr(text, "width=\"800"));
    g_free(text);

    const char *argv3[] = {c.viz, "matrix", c.trace, "-o", csv, NULL};
    r = df_test_run(argv3, NULL);
    DF_EXPECT_MSG(r.status == 0, "matrix .csv exited %d: %s", r.status, r.err);
    df_run_clear(&r);
    DF_ASSERT(g_file_get_contents(csv, &text, NULL, NULL));
    DF_EXPECT_EQ_INT(count_lines(text), DF_TEST_TRACE_WORKERS + 1);
    DF_EXPECT(g_str_has_prefix(text, "producer,bytes_to_w0,bytes_to_w1,"));
    /* Every row: producer, N byte counts, N costs. */
    gchar **lines = g_strsplit(text, "\n", -1);
    uint64_t sum = 0;
    for (int i = 0; lines[i] && *lines[i]; i++) {
        gchar **f = g_strsplit(lines[i], ",", -1);
        DF_EXPECT_EQ_INT(g_strv_length(f), 1 + 2 * DF_TEST_TRACE_WORKERS);
        for (int j = 1; i > 0 && f[j] && j <= DF_TEST_TRACE_WORKERS; j++)
            sum += g_ascii_strtoull(f[j], NULL, 10);
        g_strfreev(f);
    }
    g_strfreev(lines);
    g_free(text);
    /* The matrix holds every input byte the trace records on a worker (the
     * last bands may finish after the trace was written: count, not
     * assume 4 x 100000 a frame). */
    DfTrace t;
    DF_ASSERT(df_trace_read_json(c.trace, &t, NULL) == 0);
    uint64_t want = 0;
    for (size_t i = 0; i < t.n_inputs; i++)
        if (t.inputs[i].worker >= 0 && t.inputs[i].worker < t.n_workers)
            want += t.inputs[i].bytes;
    df_trace_free(&t);
    DF_EXPECT(want > 0);
    DF_EXPECT_EQ_INT(sum, want);

    /* Not an image or CSV name; an output that cannot be written. */
    const char *argv4[] = {c.viz, "matrix", c.trace, "-o", "m.txt", NULL};
    r = df_test_run(argv4, NULL);
    DF_EXPECT(r.status != 0 && strstr(r.err, ".png, .svg or .csv"));
    df_run_clear(&r);
    const char *argv5[] = {c.viz, "matrix", c.trace, "-o", "/nonexistent/dir/m.png", NULL};
    r = df_test_run(argv5, NULL);
    DF_EXPECT(r.status != 0 && strstr(r.err, "cannot write /nonexistent/dir/m.png"));
    df_run_clear(&r);

    g_free(png);
    g_free(svg);
    g_free(csv);
    teardown(&c);
}

DF_TEST(VizCli, ModulesTableListsEveryModule)
{
    Ctx c;
    if (!getenv("DFSCHED_VIZ"))
        DF_SKIP("DFSCHED_VIZ not set (run through meson test)");
    DF_ASSERT(setup(&c));
    DfTrace t;
    DF_ASSERT(df_trace_read_json(c.trace, &t, NULL) == 0);
    DF_ASSERT(t.n_modules >= 3);
    gchar *csv = path_in(&c, "mod.csv");
    const char *argv[] = {c.viz, "modules", c.trace, "--csv", csv, NULL};
    DfRun r = df_test_run(argv, NULL);
    DF_ASSERT(r.spawned);
    DF_EXPECT_MSG(r.status == 0, "modules exited %d: %s", r.status, r.err);
    /* One table row per module: a line starting with its name. */
    gchar **lines = g_strsplit(r.out, "\n", -1);
    for (int m = 0; m < t.n_modules; m++) {
        bool found = false;
        for (int i = 0; lines[i] && !found; i++) {
            const size_t k = strlen(t.module_names[m]);
            found = strncmp(lines[i], t.module_names[m], k) == 0 && lines[i][k] == ' ';
        }
        DF_EXPECT_MSG(found, "module %s missing from:\n%s", t.module_names[m], r.out);
    }
    g_strfreev(lines);
    df_run_clear(&r);
    gchar *text = NULL;
    DF_ASSERT(g_file_get_contents(csv, &text, NULL, NULL));
    DF_EXPECT_EQ_INT(count_lines(text), 1 + t.n_modules);
    DF_EXPECT(g_str_has_prefix(text, "module,tasks,"));
    g_free(text);
    g_free(csv);
    df_trace_free(&t);
    teardown(&c);
}

/* Module of each task node in the DOT ("    t<id> [label=\"<module>[..."),
 * as node id -> module name. */
static GHashTable *task_modules(const char *dot)
{
    GHashTable *h = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    gchar **lines = g_strsplit(dot, "\n", -1);
    for (int i = 0; lines[i]; i++) {
        const char *p = lines[i];
        while (*p == ' ')
            p++;
        const char *lab = strstr(p, " [label=\"");
        if (*p != 't' || !g_ascii_isdigit(p[1]) || !lab)
            continue;
        const char *m = lab + 9, *br = strchr(m, '[');
        if (br)
            g_hash_table_insert(h, g_strndup(p, (gsize)(lab - p)), g_strndup(m, (gsize)(br - m)));
    }
    g_strfreev(lines);
    return h;
}

/* Under the learned policy, the edge declared 1 KiB that really costs
 * 300 us (P2 -> C) is the widest of the graph and labelled with its learned
 * size; by declared sizes it would be far narrower than P1 -> C (64 KiB). */
/* The size an edge label gives ("learned 1.46 MiB\\n(declared ...)", or
 * "64.0 KiB" when learned = declared, or "" for nothing), in bytes. */
static double label_bytes(const char *line)
{
    const char *l = strstr(line, "label=\"");
    if (!l)
        return 0;
    l += 7;
    if (g_str_has_prefix(l, "learned "))
        l += 8;
    double v;
    char unit[8];
    if (sscanf(l, "%lf %7[A-Za-z]", &v, unit) != 2)
        return 0;
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    for (int u = 0; u < 5; u++, v *= 1024)
        if (strcmp(unit, units[u]) == 0)
            return v;
    return 0;
}

DF_TEST(VizCli, GraphEdgeWidthsUseLearnedSizes)
{
    Ctx c;
    if (!getenv("DFSCHED_VIZ"))
        DF_SKIP("DFSCHED_VIZ not set (run through meson test)");
    c.viz = getenv("DFSCHED_VIZ");
    snprintf(c.dir, sizeof(c.dir), "/tmp/dfviz-test-XXXXXX");
    DF_ASSERT(mkdtemp(c.dir));
    snprintf(c.trace, sizeof(c.trace), "%s/learned.json", c.dir);
    DF_ASSERT_EQ_INT(df_test_record_learned_trace(c.trace, NULL), 0);
    gchar *dotf = path_in(&c, "l.dot");
    const char *argv[] = {c.viz, "graph", c.trace, "-o", dotf, NULL};
    DfRun r = df_test_run(argv, NULL);
    DF_ASSERT(r.spawned);
    DF_EXPECT_MSG(r.status == 0, "graph exited %d: %s", r.status, r.err);
    df_run_clear(&r);
    gchar *text = NULL;
    DF_ASSERT(g_file_get_contents(dotf, &text, NULL, NULL));
    GHashTable *mods = task_modules(text);
    /* Data edges: "    a -> b [penwidth=W, label=\"...\"];".  Widths must
     * follow the learned sizes of the labels: P2 -> C (1 KiB declared,
     * learned far larger) wider than every edge of a smaller learned size.
     * How large P1's correction came out is the policy's business (the
     * learned tests), not the drawing's. */
    double p2c_min = 1e9, p2c_bytes = 1e300, other_max = 0;
    int n_p2c = 0, n_other = 0;
    bool p2c_label = true;
    GArray *others = g_array_new(FALSE, FALSE, sizeof(double) * 2); /* {bytes, width} */
    gchar **lines = g_strsplit(text, "\n", -1);
    for (int i = 0; lines[i]; i++) {
        char src[48], dst[48];
        double pw;
        if (sscanf(lines[i], " %47s -> %47s [penwidth=%lf,", src, dst, &pw) != 3)
            continue;
        const double bytes = label_bytes(lines[i]);
        const char *ms = g_hash_table_lookup(mods, src), *md = g_hash_table_lookup(mods, dst);
        if (ms && md && strcmp(ms, "P2") == 0 && strcmp(md, "C") == 0) {
            n_p2c++;
            p2c_min = pw < p2c_min ? pw : p2c_min;
            p2c_bytes = bytes < p2c_bytes ? bytes : p2c_bytes;
            p2c_label &= strstr(lines[i], "learned ") && strstr(lines[i], "(declared 1.00 KiB)");
        } else {
            n_other++;
            const double bw[2] = {bytes, pw};
            g_array_append_vals(others, bw, 1);
        }
    }
    g_strfreev(lines);
    for (guint i = 0; i < others->len; i++) {
        const double *bw = &g_array_index(others, double, 2 * i);
        if (bw[0] < p2c_bytes && bw[1] > other_max)
            other_max = bw[1];
    }
    g_array_free(others, TRUE);
    DF_EXPECT_MSG(n_p2c == 2 && n_other > 0, "%d P2 -> C edges, %d others in:\n%s", n_p2c, n_other,
                  text);
    DF_EXPECT_MSG(p2c_bytes >= 100 * 1024.0, "P2 -> C learned only %.0f bytes", p2c_bytes);
    DF_EXPECT_MSG(p2c_min > other_max,
                  "P2 -> C penwidth %.2f, widest edge of a smaller learned size %.2f", p2c_min,
                  other_max);
    DF_EXPECT_MSG(p2c_label, "P2 -> C edges are not labelled with learned and declared sizes");
    gchar *svgf = path_in(&c, "l.svg");
    char *why = NULL;
    DF_EXPECT_MSG(dot_accepts(dotf, svgf, &why), "dot rejects %s: %s", dotf, why);
    g_free(why);
    g_free(svgf);

    /* modules prints the policy's tables as "<policy> <table>": the
     * learned policy's "sizes", with P2's row and its declared size. */
    const char *argv2[] = {c.viz, "modules", c.trace, NULL};
    r = df_test_run(argv2, NULL);
    DF_EXPECT_MSG(r.status == 0, "modules exited %d: %s", r.status, r.err);
    const char *tab = r.out ? strstr(r.out, "learned sizes") : NULL;
    DF_EXPECT_MSG(tab && strstr(tab, "\nP2 ") && strstr(tab, "1.00 KiB"),
                  "no learned table in:\n%s", r.out);
    df_run_clear(&r);
    g_hash_table_destroy(mods);
    g_free(text);
    g_free(dotf);
    teardown(&c);
}

DF_TEST(VizCli, BadInputsFailClearly)
{
    const char *viz = getenv("DFSCHED_VIZ");
    if (!viz)
        DF_SKIP("DFSCHED_VIZ not set (run through meson test)");
    Ctx c;
    DF_ASSERT(setup(&c));
    const char *dir = c.dir, *good = c.trace;
    gchar *junk = path_in(&c, "junk.json"), *other = path_in(&c, "o.json");
    gchar *empty = path_in(&c, "empty.json"), *bytes = path_in(&c, "bytes.json");
    gchar *trunc = path_in(&c, "trunc.json"), *shape = path_in(&c, "shape.json");
    gchar *shape2 = path_in(&c, "shape2.json"), *dot = path_in(&c, "g.dot");
    DF_ASSERT(g_file_set_contents(junk, "not json {", -1, NULL));
    DF_ASSERT(g_file_set_contents(other, "{\"traceEvents\": []}", -1, NULL));
    /* shape: valid JSON, members of other types than a trace's. */
    DF_ASSERT_EQ_INT(df_test_write_broken_traces(good, empty, bytes, trunc, shape), 0);
    DF_ASSERT(g_file_set_contents(
        shape2,
        "{\"traceEvents\": [1, \"x\", null, {\"ph\": 5}, {\"ph\": \"X\", \"args\": 5},"
        " {\"ph\": \"X\", \"tid\": 0, \"args\": {\"module\": 7, \"deadline_slack_us\": \"x\","
        " \"inputs\": [1, {\"module\": []}]}}],"
        " \"otherData\": {\"dfsched\": {\"n_workers\": 2, \"modules\": [5, null],"
        " \"trcost\": 7, \"levels\": [[1, \"x\"], 5]}}}",
        -1, NULL));
    struct {
        const char *argv[8];
        int status;
        const char *msg; /* expected in stderr */
    } cases[] = {
        {{viz, "modules", "/nonexistent/t.json", NULL}, 1, "/nonexistent/t.json"},
        {{viz, "modules", junk, NULL}, 1, "cannot read trace"},
        {{viz, "modules", empty, NULL}, 1, "not a dfsched trace"},
        {{viz, "modules", bytes, NULL}, 1, "cannot read trace"},
        {{viz, "modules", trunc, NULL}, 1, "cannot read trace"},
        {{viz, "modules", shape, NULL}, 1, "not a dfsched trace"},
        {{viz, "modules", dir, NULL}, 1, "cannot read trace"},
        {{viz, "matrix", other, "-o", "x.csv", NULL}, 1, "not a dfsched trace"},
        {{viz, "plot", junk, NULL}, 2, "unknown command \"plot\""},
        {{viz, "graph", junk, NULL}, 2, "-o FILE is required"},
        {{viz, "graph", good, "-o", "", NULL}, 2, "bad -o \"\""},
        {{viz, "graph", good, "-o", dot, "--frames", "99999999999999999999", NULL},
         2,
         "bad --frames \"99999999999999999999\""},
        {{viz, "graph", good, "-o", dot, "--frames", "4x", NULL}, 2, "bad --frames \"4x\""},
        {{viz, "graph", good, "-o", dot, "--frames", "-1", NULL}, 2, "bad --frames \"-1\""},
        {{viz, "graph", good, "-o", dot, "--frames", "", NULL}, 2, "bad --frames \"\""},
        {{viz, "graph", good, "-o", "/proc/x/y.dot", NULL}, 1, "cannot write /proc/x/y.dot"},
        {{viz, "graph", good, "-o", dir, NULL}, 1, "Is a directory"},
        {{viz, "graph", good, "-o", dot, "--svg", "/nonexistent/g.svg", NULL},
         1,
         "--svg: cannot write /nonexistent/g.svg"},
        {{viz, "matrix", good, "-o", "m.txt", NULL}, 2, ".png, .svg or .csv"},
        {{viz, "modules", good, "--csv", "/proc/x/y", NULL}, 1, "--csv: cannot write /proc/x/y"},
        {{viz, "modules", NULL}, 2, "TRACE is missing"},
        {{viz, "modules", good, "extra", NULL}, 2, "unexpected argument \"extra\""},
        {{viz, "modules", "--bogus", junk, NULL}, 2, "bogus"},
        {{viz, NULL}, 2, "Usage"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        DfRun r = df_test_run(cases[i].argv, NULL);
        DF_EXPECT(r.spawned);
        DF_EXPECT_MSG(r.status == cases[i].status && r.err && strstr(r.err, cases[i].msg),
                      "case %zu: status %d (expected %d), stderr: %s", i, r.status, cases[i].status,
                      r.err ? r.err : "");
        DF_EXPECT_MSG(r.err && !strstr(r.err, "CRITICAL") && !strstr(r.err, "Sanitizer"),
                      "case %zu: stderr: %s", i, r.err ? r.err : "");
        df_run_clear(&r);
    }
    /* The wrong types inside a trace are skipped: the rest reads. */
    const char *ok_argv[] = {viz, "modules", shape2, NULL};
    DfRun r = df_test_run(ok_argv, NULL);
    DF_EXPECT_MSG(r.status == 0 && r.err && !strstr(r.err, "CRITICAL"), "shape2: %d %s", r.status,
                  r.err ? r.err : "");
    df_run_clear(&r);
    const char *help[] = {viz, "--help", NULL};
    r = df_test_run(help, NULL);
    DF_EXPECT(r.status == 0 && strstr(r.out, "graph") && strstr(r.out, "matrix") &&
              strstr(r.out, "modules"));
    df_run_clear(&r);
    const char *help2[] = {viz, "graph", "--help", NULL};
    r = df_test_run(help2, NULL);
    DF_EXPECT(r.status == 0 && strstr(r.out, "--frames"));
    df_run_clear(&r);
    g_free(junk);
    g_free(other);
    g_free(empty);
    g_free(bytes);
    g_free(trunc);
    g_free(shape);
    g_free(shape2);
    g_free(dot);
    teardown(&c);
}
