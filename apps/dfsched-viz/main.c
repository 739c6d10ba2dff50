/* dfsched-viz: look at a dfsched trace.
 *
 *   dfsched-viz graph TRACE -o g.dot [--frames A-B] [--svg g.svg]
 *   dfsched-viz matrix TRACE -o m.png|m.svg|m.csv
 *   dfsched-viz modules TRACE [--csv FILE]
 *
 * TRACE is the Chrome/Perfetto JSON of dfplay/dfbench --trace or dfdec
 * trace-file.  Exit status: 0 done, 1 the work failed (unreadable trace,
 * unwritable output), 2 bad command line. */
#include "dfsched_trace.h"
#include "viz.h"

#include "cli.h"

#include <errno.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_USAGE DF_CLI_USAGE

static const char usage[] =
    "Usage: dfsched-viz COMMAND TRACE [OPTION...]\n"
    "\n"
    "Pictures and tables of a dfsched trace (dfplay/dfbench --trace, dfdec trace-file).\n"
    "\n"
    "Commands:\n"
    "  graph TRACE -o g.dot [--frames A-B] [--svg g.svg]\n"
    "      the task graph of frames A-B (default: the first 2) as Graphviz DOT; -o g.svg or\n"
    "      --svg also runs `dot -Tsvg` when Graphviz is installed\n"
    "  matrix TRACE -o m.png|m.svg|m.csv\n"
    "      bytes produced on worker i and read on worker j, with the measured cost per byte,\n"
    "      as a heat map or CSV\n"
    "  modules TRACE [--csv FILE]\n"
    "      per-module task times with local vs. stolen/remote inputs\n"
    "\n"
    "`dfsched-viz COMMAND --help` lists a command's options.\n";

typedef struct Opts {
    char *output, *frames, *svg, *csv;
} Opts;

/* "A-B" or "A" (frame numbers, A <= B). */
static bool parse_frames(const char *s, int64_t *a, int64_t *b)
{
    char *end;
    /* errno: 99999999999999999999 saturates instead of failing. */
    errno = 0;
    long long x = strtoll(s, &end, 10), y = x;
    if (errno || end == s || x < 0)
        return false;
    if (*end == '-') {
        const char *s2 = end + 1;
        y = strtoll(s2, &end, 10);
        if (errno || end == s2)
            return false;
    }
    if (*end || y < x)
        return false;
    *a = x;
    *b = y;
    return true;
}

static bool ends_with(const char *s, const char *suffix)
{
    const size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int run_graph(const DfTrace *t, const Opts *o, DfError *err)
{
    DfVizGraphOpts g = {.first_frame = -1, .last_frame = -1};
    if (o->frames && !parse_frames(o->frames, &g.first_frame, &g.last_frame))
        return df_cli_usage("dfsched-viz graph", "bad --frames \"%s\" (A-B or A, frame numbers)",
                            o->frames);
    /* -o g.svg: the DOT goes next to it as g.dot. */
    gchar *dot_path = NULL;
    if (ends_with(o->output, ".svg"))
        dot_path = g_strdup_printf("%.*s.dot", (int)(strlen(o->output) - 4), o->output);
    else
        dot_path = g_strdup(o->output);
    g.dot_path = dot_path;
    g.svg_path = o->svg ? o->svg : ends_with(o->output, ".svg") ? o->output : NULL;
    /* The SVG path is checked only when dot can write it: without Graphviz
     * graph.c warns and leaves no empty file behind. */
    gchar *dot = g.svg_path ? g_find_program_in_path("dot") : NULL;
    int rc = 0;
    if (df_viz_check_output(g.dot_path, err) < 0 ||
        (dot && df_viz_check_output(g.svg_path, err) < 0) || df_viz_graph(t, &g, stdout, err) < 0)
        rc = 1;
    g_free(dot);
    g_free(dot_path);
    return rc;
}

static int run_matrix(const DfTrace *t, const Opts *o, DfError *err)
{
    if (df_viz_check_output(o->output, err) < 0)
        return 1;
    DfVizMatrix m;
    if (df_viz_matrix_compute(t, &m, err) < 0)
        return 1;
    int rc = 0;
    if (df_viz_matrix_write(&m, o->output, err) < 0) {
        rc = 1;
    } else {
        df_viz_matrix_print(&m, stdout);
        printf("dfsched-viz: wrote %s\n", o->output);
    }
    df_viz_matrix_free(&m);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage, stderr);
        return df_cli_usage("dfsched-viz", "no command given");
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        fputs(usage, stdout);
        return 0;
    }
    const bool is_graph = strcmp(cmd, "graph") == 0, is_matrix = strcmp(cmd, "matrix") == 0,
               is_modules = strcmp(cmd, "modules") == 0;
    if (!is_graph && !is_matrix && !is_modules) {
        return df_cli_usage("dfsched-viz", "unknown command \"%s\" (graph, matrix or modules)",
                            cmd);
    }
    Opts o = {0};
    GOptionEntry graph_entries[] = {
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &o.output,
         "DOT file to write (required; FILE.svg writes FILE.dot and the SVG)", "FILE"},
        {"frames", 'f', 0, G_OPTION_ARG_STRING, &o.frames,
         "Frames to draw, inclusive (default: the first 2)", "A-B"},
        {"svg", 0, 0, G_OPTION_ARG_FILENAME, &o.svg,
         "Also render the DOT to this SVG with `dot -Tsvg` (when Graphviz is installed)", "FILE"},
        {NULL},
    };
    GOptionEntry matrix_entries[] = {
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &o.output,
         "Heat map (.png, .svg) or table (.csv) to write (required)", "FILE"},
        {NULL},
    };
    GOptionEntry modules_entries[] = {
        {"csv", 0, 0, G_OPTION_ARG_FILENAME, &o.csv, "Also write the table as CSV", "FILE"},
        {NULL},
    };
    gchar *param = g_strdup_printf("%s TRACE", cmd);
    DfCliSpec spec = {
        .param = param,
        .entries = is_graph    ? graph_entries
                   : is_matrix ? matrix_entries
                               : modules_entries,
    };
    if (is_graph)
        spec.summary =
            "The task graph of some frames as Graphviz DOT: one node per task, coloured by "
            "worker;\nedges producer -> consumer, width 0.5 + 5.5 log(1+bytes)/log(1+max) "
            "pt.";
    else if (is_matrix)
        spec.summary =
            "Bytes produced on worker i and read on worker j, and the measured cost per "
            "remote byte\n(median duration of a module's runs with remote inputs minus "
            "that with local ones,\ndivided by the remote bytes; n/a where too few runs).  "
            "The heat map is 800 x 640.";
    else
        spec.summary =
            "Per module: tasks, total and median time, time of runs with local inputs vs. "
            "stolen\nor remote ones, share stolen.";

    int rc = EXIT_USAGE;
    DfTrace trace = {0};
    bool have_trace = false;
    DfError err = {0};
    /* GOption sees "COMMAND ARGS...", the command in the program name's place. */
    int sub_argc = argc - 1;
    char **sub_argv = argv + 1;
    gchar *prog = g_strdup_printf("dfsched-viz %s", cmd);
    if (df_cli_parse_options(prog, &spec, &sub_argc, &sub_argv) != DF_CLI_OK)
        goto cleanup;
    if (sub_argc != 2) {
        if (sub_argc < 2)
            df_cli_usage(prog, "TRACE is missing");
        else
            df_cli_usage(prog, "unexpected argument \"%s\" (only one TRACE)", sub_argv[2]);
        goto cleanup;
    }
    if ((is_graph || is_matrix) && !o.output) {
        df_cli_usage(prog, "-o FILE is required");
        goto cleanup;
    }
    static const char *const matrix_suffixes[] = {".png", ".svg", ".csv", NULL};
    if (is_matrix && !df_cli_has_suffix(o.output, matrix_suffixes)) {
        df_cli_usage(prog, "bad -o \"%s\": the output must end in .png, .svg or .csv", o.output);
        goto cleanup;
    }
    if (o.output && !*o.output) {
        df_cli_usage(prog, "bad -o \"\": an empty file name");
        goto cleanup;
    }
    rc = 1;
    /* Outputs before the trace, which may take seconds to read; graph -o
     * g.svg writes g.dot next to it. */
    gchar *dot_out = o.output && is_graph && ends_with(o.output, ".svg")
                         ? g_strdup_printf("%.*s.dot", (int)(strlen(o.output) - 4), o.output)
                         : NULL;
    const struct {
        const char *flag, *path;
    } outs[] = {{"-o", dot_out ? dot_out : o.output}, {"--svg", o.svg}, {"--csv", o.csv}};
    bool outs_ok = true;
    for (size_t i = 0; outs_ok && i < G_N_ELEMENTS(outs); i++) {
        char msg[512];
        if (outs[i].path && !df_cli_check_output(outs[i].path, msg, sizeof(msg))) {
            df_cli_fail(prog, "%s: %s", outs[i].flag, msg);
            outs_ok = false;
        }
    }
    g_free(dot_out);
    if (!outs_ok)
        goto cleanup;
    if (df_trace_read_json(sub_argv[1], &trace, &err) < 0) {
        df_cli_fail(prog, "%s", err.msg);
        goto cleanup;
    }
    have_trace = true;
    if (trace.n_events == 0)
        fprintf(stderr, "%s: warning: %s holds no task\n", prog, sub_argv[1]);
    if (is_graph)
        rc = run_graph(&trace, &o, &err);
    else if (is_matrix)
        rc = run_matrix(&trace, &o, &err);
    else
        rc = df_viz_modules(&trace, stdout, o.csv, &err) < 0 ? 1 : 0;
    if (rc == 1)
        df_cli_fail(prog, "%s", err.msg);
cleanup:
    g_free(prog);
    if (have_trace)
        df_trace_free(&trace);
    g_free(param);
    g_free(o.output);
    g_free(o.frames);
    g_free(o.svg);
    g_free(o.csv);
    return rc;
}
