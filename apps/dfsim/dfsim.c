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
#include "dfsim.h"

#include "cli.h"

#include <errno.h>
#include <glib.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* "l3=0.04,numa=0.1": per-level overrides of --ns-per-byte or --line-ns. */
static int parse_npb(const char *flag, const char *s, double *npb, double max, GError **err)
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
        if (lev < 0 || !kv[1] || !end || *end || !isfinite(v) || v < 0 || v > max) {
            g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "bad %s entry \"%s\" (LEVEL=NS, NS 0 to %g, LEVEL one of "
                        "self, pu, l2, l3, numa, machine)",
                        flag, parts[i], max);
            ret = -1;
        } else {
            npb[lev] = v;
        }
        g_strfreev(kv);
    }
    g_strfreev(parts);
    return ret;
}

int df_sim_parse_options(DfSim *d, int argc, char **argv)
{
    Opts *o = &d->o;
    SimConfig *base = &d->base;
    int *workers = d->workers, *streams = d->streams;
    GOptionEntry entries[] = {
        {"trace", 't', 0, G_OPTION_ARG_FILENAME_ARRAY, &o->traces,
         "Trace to replay (required); repeat for several runs of one clip and worker count "
         "(dfbench decode --trace-runs): each is replayed and the median reported",
         "FILE"},
        {"topology", 0, 0, G_OPTION_ARG_STRING, &o->topology,
         "hwloc synthetic topology (default: this machine)", "STR"},
        {"policy", 'p', 0, G_OPTION_ARG_STRING, &o->policies,
         "Policies, comma-separated, or all (default cost-local,steal)", "LIST"},
        {"workers", 'w', 0, G_OPTION_ARG_STRING, &o->workers, "Worker counts (default 1,2)",
         "LIST"},
        {"streams", 's', 0, G_OPTION_ARG_STRING, &o->streams,
         "Copies of the graph decoded at once (default 1)", "LIST"},
        {"json", 0, 0, G_OPTION_ARG_FILENAME, &o->json, "Write results as JSON", "FILE"},
        {"csv", 0, 0, G_OPTION_ARG_FILENAME, &o->csv, "Write results as CSV", "FILE"},
        {"plot", 0, 0, G_OPTION_ARG_FILENAME, &o->plot, "Plot fps and speed-up (.svg/.png)",
         "FILE"},
        {"ns-per-byte", 0, 0, G_OPTION_ARG_STRING, &o->ns_per_byte,
         "Transfer cost per level, e.g. l3=0.04,numa=0.08 (defaults below)", "LIST"},
        {"task-overhead-ns", 0, 0, G_OPTION_ARG_INT, &o->task_overhead_ns,
         "Dispatch cost per task (default 300)", "NS"},
        {"poll-ns", 0, 0, G_OPTION_ARG_INT, &o->poll_ns,
         "Pause between an idle worker's poll rounds (default 1000)", "NS"},
        {"idle-model", 0, 0, G_OPTION_ARG_STRING, &o->idle_model,
         "What a poll round reads: summary (dfsched's: a has-work word per domain level, "
         "4 victims of 4 lines; default), scan (every other worker's ready set, 2 lines each: "
         "dfsched before 2026-12-05) or none",
         "MODEL"},
        {"line-ns", 0, 0, G_OPTION_ARG_STRING, &o->line_ns,
         "Cost of a cache line from another worker per level, e.g. l3=40,numa=100 "
         "(defaults below)",
         "LIST"},
        {"window", 0, 0, G_OPTION_ARG_INT, &o->window,
         "Outside submissions in flight per stream (default: as recorded)", "N"},
        {"fps", 0, 0, G_OPTION_ARG_DOUBLE, &o->fps,
         "Pace the streams: frame k of stream s arrives at (k + s/streams)/F s, its outside "
         "submissions wait for it, and its nodes are due --budget-frames periods after it; "
         "reports late frames and p99 latency (default 0: unpaced)",
         "F"},
        {"budget-frames", 0, 0, G_OPTION_ARG_INT, &o->budget_frames,
         "With --fps: frame periods from a frame's arrival to its deadline (default 2)", "N"},
        {"phase-frames", 0, 0, G_OPTION_ARG_INT, &o->phase_frames,
         "With --fps: spread the streams' starts over N frame periods (default 1: every "
         "stream's k-th frame within one period, the worst case; a GOP: independent sources)",
         "N"},
        {"slowdown", 0, 0, G_OPTION_ARG_STRING, &o->slowdown,
         "How much slower a body runs while N workers are busy, e.g. 2:1.25 (N from 2 to 64; "
         "none: off; default: with --validate on this machine, measured by its ffmpeg-streams "
         "peer, else off)",
         "LIST"},
        {"wpp-factor", 0, 0, G_OPTION_ARG_STRING, &o->wpp_factor,
         "How much longer a WPP row runs while the row above runs on another worker, e.g. "
         "1.5 (1 to 10; none: off; default: with --validate on this machine, measured by its "
         "ffmpeg-slice peer's CPU per frame, else off)",
         "F"},
        {"job-factor", 0, 0, G_OPTION_ARG_STRING, &o->job_factor,
         "How much longer an independent slice job or band runs while another job of its "
         "picture runs on another worker, e.g. 1.2 (1 to 10; none: off; default: with "
         "--validate on this machine, measured by its ffmpeg-slice peer's CPU per frame, else "
         "off)",
         "F"},
        {"lost-cpu", 0, 0, G_OPTION_ARG_STRING, &o->lost_cpu,
         "Charge the CPU time the recording lost outside tasks (auto: when replaying on "
         "this machine, i.e. without --topology)",
         "auto|on|off"},
        {"explore", 0, 0, G_OPTION_ARG_DOUBLE, &o->explore,
         "Exploration rate of the learned policy (default 0.01)", "RATE"},
        {"validate", 0, 0, G_OPTION_ARG_FILENAME, &o->validate,
         "dfbench decode JSON measured on this machine: compare 1 and 2 workers", "FILE"},
        {"validate-input", 0, 0, G_OPTION_ARG_STRING, &o->validate_input,
         "Only results whose input contains this", "NAME"},
        {"validate-impl", 0, 0, G_OPTION_ARG_STRING, &o->validate_impl,
         "Implementation prefix in that JSON (default dfmedia/)", "PREFIX"},
        {NULL},
    };
    const DfCliSpec spec = {
        .param = "- replay a dfsched trace on a synthetic topology",
        .description =
            "Transfer cost defaults (ns per byte): self 0, pu 0.005, l2 0.01, l3 0.04, numa 0.08,\n"
            "machine 0.15.  The recorded durations lose the transfer cost the recording paid at\n"
            "the same rates, so that only the replay's placement is charged.\n"
            "Lost CPU: the trace shows the time its cores spent outside tasks (the decoding\n"
            "thread's packet and frame handling, the OS, other processes) as gaps in which a\n"
            "ready node waited for an idle worker; beyond the median gap (the dispatch, charged\n"
            "as --task-overhead-ns) that time is charged again before the same node.\n"
            "Idle polls: a round costs --poll-ns plus the lines it reads at --line-ns (defaults:\n"
            "self 0, pu 2, l2 5, l3 40, numa 100, machine 150); a spinning worker notices new "
            "work\n"
            "within one round, and a steal starts after the round that found it.\n",
        .entries = entries,
        .no_args = true,
    };
    GError *gerr = NULL;
    int rc = 1;
    JsonParser *vparser = NULL;
    JsonArray *vresults = NULL;
    gchar **pols = NULL;
    DfError err = {0};
    if (df_cli_parse_options(PROG, &spec, &argc, &argv) != DF_CLI_OK) {
        rc = DF_CLI_USAGE;
        goto out;
    }
    if (!o->traces || !o->traces[0]) {
        rc = df_cli_usage(PROG, "--trace FILE is required");
        goto out;
    }
    for (int i = 0; o->traces[i]; i++)
        if (!*o->traces[i]) {
            rc = df_cli_usage(PROG, "bad --trace \"\": an empty file name");
            goto out;
        }
    int n_workers = parse_list("--workers", o->workers ? o->workers : "1,2", MAX_WORKERS, workers);
    if (n_workers < 0) {
        rc = DF_CLI_USAGE;
        goto out;
    }
    d->n_workers = n_workers;
    int n_streams = parse_list("--streams", o->streams ? o->streams : "1", MAX_WORKERS, streams);
    if (n_streams < 0) {
        rc = DF_CLI_USAGE;
        goto out;
    }
    d->n_streams = n_streams;
    sim_config_init(base);
    if (o->ns_per_byte && !*o->ns_per_byte) {
        rc = df_cli_usage(PROG, "bad --ns-per-byte \"\": an empty list");
        goto out;
    }
    if (o->ns_per_byte &&
        parse_npb("--ns-per-byte", o->ns_per_byte, base->ns_per_byte, MAX_NS_PER_BYTE, &gerr) < 0) {
        rc = df_cli_usage(PROG, "%s", gerr->message);
        goto out;
    }
    if (o->line_ns && !*o->line_ns) {
        rc = df_cli_usage(PROG, "bad --line-ns \"\": an empty list");
        goto out;
    }
    /* 10 us a line: beyond any machine; 4096 workers' scan stays in range. */
    if (o->line_ns && parse_npb("--line-ns", o->line_ns, base->line_ns, 10000, &gerr) < 0) {
        rc = df_cli_usage(PROG, "%s", gerr->message);
        goto out;
    }
    if (o->idle_model) {
        int m = -1;
        for (int k = 0; sim_idle_model_name(k); k++)
            if (strcmp(o->idle_model, sim_idle_model_name(k)) == 0)
                m = k;
        if (m < 0) {
            rc = df_cli_usage(PROG, "bad --idle-model \"%s\" (scan, summary or none)",
                              o->idle_model);
            goto out;
        }
        base->idle_model = (SimIdleModel)m;
    }
    /* -1 is "not given" for both; any other value below the minimum is a
     * mistake, not a request for the default. */
    /* At most 1 ms: per task and per poll, larger values overflow the
     * simulated clock (int64 ns) long before they mean anything. */
    if (o->task_overhead_ns != INT_MIN &&
        (o->task_overhead_ns < 0 || o->task_overhead_ns > 1000000)) {
        rc = df_cli_usage(PROG, "bad --task-overhead-ns %d (0 to 1000000)", o->task_overhead_ns);
        goto out;
    }
    if (o->poll_ns != INT_MIN && (o->poll_ns < 1 || o->poll_ns > 1000000)) {
        rc = df_cli_usage(PROG, "bad --poll-ns %d (1 to 1000000)", o->poll_ns);
        goto out;
    }
    if (o->window < 0) {
        rc = df_cli_usage(PROG, "bad --window %d (0 or more; 0: as recorded)", o->window);
        goto out;
    }
    /* Negated: NaN fails every comparison. */
    if (!(o->explore >= 0 && o->explore <= 0.5)) {
        rc = df_cli_usage(PROG, "bad --explore %g (0 to 0.5)", o->explore);
        goto out;
    }
    /* Negated: NaN fails. */
    if (!(o->fps == 0 || (o->fps >= 0.01 && o->fps <= 1000))) {
        rc = df_cli_usage(PROG, "bad --fps %g (0.01 to 1000; 0: unpaced)", o->fps);
        goto out;
    }
    if (o->budget_frames < 1 || o->budget_frames > 1000) {
        rc = df_cli_usage(PROG, "bad --budget-frames %d (1 to 1000)", o->budget_frames);
        goto out;
    }
    if (o->phase_frames < 1 || o->phase_frames > 100000) {
        rc = df_cli_usage(PROG, "bad --phase-frames %d (1 to 100000)", o->phase_frames);
        goto out;
    }
    base->fps = o->fps;
    base->budget_frames = o->budget_frames;
    base->phase_frames = o->phase_frames;
    if (o->task_overhead_ns >= 0)
        base->task_overhead_ns = o->task_overhead_ns;
    if (o->poll_ns > 0)
        base->poll_ns = o->poll_ns;
    base->window = o->window;
    if (o->slowdown && strcmp(o->slowdown, "none") != 0 &&
        !df_sim_parse_slowdown(o->slowdown, base)) {
        rc = df_cli_usage(PROG, "bad --slowdown \"%s\" (e.g. 2:1.25; N 2 to 64, factor 0.5 to 10)",
                          o->slowdown);
        goto out;
    }
    const struct {
        const char *flag, *value;
        double *out;
    } factors[] = {{"--wpp-factor", o->wpp_factor, &base->wpp_factor},
                   {"--job-factor", o->job_factor, &base->job_factor}};
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
    base->explore_rate = o->explore;
    base->topology = o->topology && *o->topology ? o->topology : NULL;
    if (base->topology && sim_check_topology(base, &err) < 0) {
        rc = df_cli_usage(PROG, "bad --topology: %s", err.msg);
        goto out;
    }
    if (!o->lost_cpu || strcmp(o->lost_cpu, "auto") == 0) {
        base->lost_cpu = base->topology == NULL;
    } else if (strcmp(o->lost_cpu, "on") == 0 || strcmp(o->lost_cpu, "off") == 0) {
        base->lost_cpu = strcmp(o->lost_cpu, "on") == 0;
    } else {
        rc = df_cli_usage(PROG, "bad --lost-cpu \"%s\" (auto, on or off)", o->lost_cpu);
        goto out;
    }

    if (o->policies && !*g_strstrip(o->policies)) {
        rc = df_cli_usage(PROG, "bad --policy \"\": an empty list");
        goto out;
    }
    pols = g_strsplit(o->policies ? o->policies : "cost-local,steal", ",", -1);
    if (pols[0] && strcmp(g_strstrip(pols[0]), "all") == 0 && !pols[1]) {
        g_strfreev(pols);
        pols = g_strdupv((gchar **)df_policy_names());
    }
    for (int i = 0; pols[i]; i++) {
        bool known = false;
        const char *want = g_strstrip(pols[i]);
        if (!*want) {
            rc = df_cli_usage(PROG, "bad --policy \"%s\": empty item", o->policies);
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
    if (o->plot && !df_cli_has_suffix(o->plot, plot_suffixes)) {
        rc = df_cli_usage(PROG, "bad --plot \"%s\": use a .svg or .png name", o->plot);
        goto out;
    }
    /* The outputs before the replays, which may run for minutes. */
    const DfCliOutput outs[] = {{"--json", o->json}, {"--csv", o->csv}, {"--plot", o->plot}};
    rc = df_cli_check_outputs(PROG, outs, G_N_ELEMENTS(outs));
    if (rc != DF_CLI_OK)
        goto out;
    /* The measured figures too: a bad file fails before the replays. */
    if (o->validate) {
        vparser = json_parser_new();
        if (!json_parser_load_from_file(vparser, o->validate, &gerr)) {
            rc = df_cli_fail(PROG, "--validate: cannot read %s: %s", o->validate, gerr->message);
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
                             o->validate);
            goto out;
        }
        if (!o->slowdown && !base->topology)
            df_sim_slowdown_from(vresults, o->validate_input, base);
    }
    rc = DF_CLI_OK;
out:
    d->pols = pols;
    d->vparser = vparser;
    d->vresults = vresults;
    if (gerr)
        g_error_free(gerr);
    return rc;
}

int main(int argc, char **argv)
{
    /* INT_MIN: not given (the trace's or the model's value). */
    DfSim d = {.o = {.task_overhead_ns = INT_MIN,
                     .poll_ns = INT_MIN,
                     .explore = 0.01,
                     .budget_frames = 2,
                     .phase_frames = 1}};
    int rc = df_sim_parse_options(&d, argc, argv);
    if (rc != DF_CLI_OK)
        goto out;
    rc = DF_CLI_FAILED;
    if (df_sim_load(&d) < 0 || df_sim_replay(&d) < 0)
        goto out;
    df_sim_print(&d);
    df_sim_recorded(&d);
    df_sim_print_recorded(&d);
    d.all_ok = true;
    if (d.o.validate)
        df_sim_validate(&d);
    if (!df_sim_write_json(&d) || !df_sim_write_csv(&d) || !df_sim_write_plot(&d))
        goto out;
    /* A projection outside 10 % is a result that did not check out (1),
     * not a bad command line (2). */
    rc = d.o.validate && !d.all_ok ? DF_CLI_FAILED : DF_CLI_OK;
out:
    df_sim_free(&d);
    return rc;
}
