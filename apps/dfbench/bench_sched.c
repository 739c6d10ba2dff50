/* dfbench sched: what a task costs on dfsched, per policy and worker count,
 * next to OpenMP tasks and oneTBB in the same process, and how much of a
 * frame-like graph's data each policy keeps on the core that produced it.
 *
 * Method: every configuration (implementation x case x workers) is
 * sampled once per repeat, round robin, with the order rotated each
 * repeat, so that noise from other users of the machine falls on all of
 * them alike.  A sample is a fresh runtime instance (a new scheduler, a
 * new parallel region or arena) running one untimed warm-up and then the
 * timed run.  Every sample is kept and reported (min/median/max); a failed
 * or unchecked one is reported as such, never dropped. */
#include "bench_peers.h"
#include "bench_sched_out.h"
#include "bench_sched_state.h"
#include "bench_sched_trace.h"
#include "dfbench.h"
#include "report.h"
#include "sched_cases.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_TASKS  100000
#define QUICK_TASKS    20000
#define DEFAULT_FRAMES 200
#define QUICK_FRAMES   40
#define DEFAULT_REPEAT 5
#define DEFAULT_WIDTH  16
#define MAX_WIDTH      65534 /* UINT16_MAX - 1 inputs on the fan-out's sink */
/* metg: body work per grain tried (all its tasks together). */
#define DEFAULT_METG_WORK_NS 10000000
#define QUICK_METG_WORK_NS   1000000
#define MAX_WORKERS    4096
#define PROG           "dfbench sched"

/* ------------------------------------------------------------------ peers */

static const DfBenchPeer peers[] = {
#ifdef DF_BENCH_HAVE_OPENMP
    {"omp", "openmp", "openmp", df_peer_omp_run, df_peer_omp_describe},
#endif
#ifdef DF_BENCH_HAVE_TBB
    {"tbb", "onetbb", "tbb", df_peer_tbb_run, df_peer_tbb_describe},
#endif
};
#define N_PEERS ((int)(sizeof(peers) / sizeof(peers[0])))

/* -------------------------------------------------------------- options */

static int find_name(const char *const *names, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], s) == 0)
            return i;
    return -1;
}

static bool parse_cases(DfBench *b, GError **err)
{
    unsigned mask = 0;
    if (!b->o.cases || strcmp(b->o.cases, "all") == 0) {
        mask = DF_BENCH_ALL_CASES;
    } else {
        gchar **parts = g_strsplit(b->o.cases, ",", -1);
        for (int i = 0; parts[i]; i++) {
            int c = df_case_find(g_strstrip(parts[i]));
            if (c < 0) {
                g_set_error(
                    err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "bad --case: unknown case \"%s\" (one of: empty, fanout, chain, frames, metg)",
                    parts[i]);
                g_strfreev(parts);
                return false;
            }
            mask |= 1u << c;
        }
        g_strfreev(parts);
    }
    b->n_cases = 0;
    for (int c = 0; c < DF_N_CASES; c++)
        if (mask & (1u << c))
            b->cases[b->n_cases++] = (DfBenchCase)c;
    return b->n_cases > 0;
}

static const DfBenchPeer *find_peer(const char *name)
{
    for (int i = 0; i < N_PEERS; i++)
        if (strcmp(peers[i].option, name) == 0 || strcmp(peers[i].alias, name) == 0)
            return &peers[i];
    return NULL;
}

static bool parse_impls(DfBench *b, GError **err)
{
    GArray *v = g_array_new(FALSE, TRUE, sizeof(DfBenchImpl));
    const char *const *names = df_policy_names();
    int n_pol = 0;
    while (names[n_pol])
        n_pol++;
    gchar **pol = g_strsplit(b->o.policy ? b->o.policy : "all", ",", -1);
    bool ok = true;
    for (int i = 0; ok && pol[i]; i++) {
        const char *want = g_strstrip(pol[i]);
        if (!*want) {
            /* "" or "fifo,,steal": a typo, not a request for nothing (that is none). */
            g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "bad --policy \"%s\": empty item (none selects no policy)", b->o.policy);
            ok = false;
            break;
        }
        if (strcmp(want, "none") == 0)
            continue;
        for (int p = 0; p < n_pol; p++) {
            if (strcmp(want, "all") != 0 && strcmp(want, names[p]) != 0)
                continue;
            DfBenchImpl im = {.policy = names[p], .cases = DF_BENCH_ALL_CASES};
            snprintf(im.name, sizeof(im.name), "dfsched/%s", names[p]);
            g_array_append_val(v, im);
        }
        if (strcmp(want, "all") != 0 && find_name(names, n_pol, want) < 0) {
            GString *list = g_string_new(NULL);
            for (int p = 0; p < n_pol; p++)
                g_string_append_printf(list, "%s%s", p ? ", " : "", names[p]);
            g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "bad --policy: unknown policy \"%s\" (one of: all, %s, none)", want,
                        list->str);
            g_string_free(list, TRUE);
            ok = false;
        }
    }
    g_strfreev(pol);
    /* Default: every peer this build has. */
    GString *all_peers = g_string_new(NULL);
    for (int i = 0; i < N_PEERS; i++)
        g_string_append_printf(all_peers, "%s%s", i ? "," : "", peers[i].option);
    gchar **pe = g_strsplit(b->o.peers ? b->o.peers : all_peers->str, ",", -1);
    g_string_free(all_peers, TRUE);
    for (int i = 0; ok && pe[i]; i++) {
        const char *want = g_strstrip(pe[i]);
        if (!*want) {
            g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "bad --peers \"%s\": empty item (none selects no peer)", b->o.peers);
            ok = false;
            break;
        }
        if (strcmp(want, "none") == 0)
            continue;
        const DfBenchPeer *peer = find_peer(want);
        if (!peer) {
            bool known = strcmp(want, "omp") == 0 || strcmp(want, "openmp") == 0 ||
                         strcmp(want, "tbb") == 0 || strcmp(want, "onetbb") == 0;
            g_set_error(
                err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                known
                    ? "bad --peers: peer \"%s\" was not built (its library was missing when meson "
                      "configured dfbench)"
                    : "bad --peers: unknown peer \"%s\" (omp, tbb or none)",
                want);
            ok = false;
            break;
        }
        DfBenchImpl im = {.peer = peer, .cases = DF_BENCH_PEER_CASES};
        snprintf(im.name, sizeof(im.name), "%s", peer->impl);
        g_array_append_val(v, im);
    }
    g_strfreev(pe);
    if (ok && v->len == 0) {
        g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "nothing to run: no policy and no peer selected");
        ok = false;
    }
    b->n_impls = (int)v->len;
    b->impls = (DfBenchImpl *)g_array_free(v, FALSE);
    return ok;
}

static int parse_options(DfBench *b, int argc, char **argv)
{
    DfBenchOpts *o = &b->o;
    o->poll_us = -1;
    /* The policies as dfsched's registry has them. */
    g_autofree char *policy_names = g_strjoinv(", ", (char **)df_policy_names());
    g_autofree char *policy_help =
        g_strdup_printf("dfsched policies: all (default), none, or a list of %s", policy_names);
    GOptionEntry entries[] = {
        {"workers", 'w', 0, G_OPTION_ARG_STRING, &o->workers,
         "Worker counts, e.g. 1,2,4 or 1-4 (default: 1 to the number of cores). Counts above "
         "the machine's PUs run oversubscribed and are marked so",
         "LIST"},
        {"policy", 'p', 0, G_OPTION_ARG_STRING, &o->policy, policy_help, "LIST"},
        {"case", 'c', 0, G_OPTION_ARG_STRING, &o->cases,
         "Cases: empty, fanout, chain, frames, metg (default: all)", "LIST"},
        {"peers", 0, 0, G_OPTION_ARG_STRING, &o->peers,
         "Peers in the same run: omp (libgomp tasks), tbb (oneTBB); default: both (those this "
         "build has); none to skip. Peers run empty, fanout, chain and metg",
         "LIST"},
        {"tasks", 'n', 0, G_OPTION_ARG_INT64, &o->tasks,
         "Tasks per timed run of empty and chain, graph nodes per run of fanout (default 100000, "
         "--quick 20000)",
         "N"},
        {"frames", 0, 0, G_OPTION_ARG_INT, &o->frames,
         "Frames per timed run of the frames case (default 200, --quick 40)", "N"},
        {"width", 'k', 0, G_OPTION_ARG_INT, &o->width,
         "Fan-out k of the fanout case's 1->k->1 diamonds (default 16)", "K"},
        {"batch", 0, 0, G_OPTION_ARG_INT64, &o->batch,
         "empty: spawn and wait in rounds of N tasks (default 0: all tasks in one group)", "N"},
        {"repeat", 'r', 0, G_OPTION_ARG_INT, &o->repeat,
         "Samples per configuration (default 5), interleaved across configurations", "N"},
        {"poll-us", 0, 0, G_OPTION_ARG_INT, &o->poll_us,
         "dfsched idle spin in microseconds before a worker parks on a futex; -1 (default): "
         "poll mode, workers never park",
         "N"},
        {"json", 'j', 0, G_OPTION_ARG_FILENAME, &o->json, "Write the results as JSON to FILE",
         "FILE"},
        {"csv", 0, 0, G_OPTION_ARG_FILENAME, &o->csv, "Write the results as CSV to FILE", "FILE"},
        {"quick", 'q', 0, G_OPTION_ARG_NONE, &o->quick,
         "Small sizes for a demo run of a few seconds", NULL},
        {"trace-overhead", 0, 0, G_OPTION_ARG_NONE, &o->trace_overhead,
         "Sample every dfsched configuration a second time per repeat with tracing on (a fresh "
         "instance, its trace buffers large enough to drop nothing; off and on alternate which "
         "runs first) and report what tracing adds per task",
         NULL},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    const DfCliSpec spec = {
        .param = "- dfsched overhead and locality vs OpenMP and oneTBB",
        .summary =
            "Measures the cost of a task on dfsched for every policy and worker count, next to\n"
            "OpenMP tasks (libgomp) and oneTBB in the same process, and how much of a frame-like\n"
            "graph's data each policy consumes on the core that produced it.\n"
            "\n"
            "Cases:\n"
            "  empty   a root task spawns N empty tasks into a group on its own worker's queue\n"
            "          and waits (helping); ns per task = spawn + run\n"
            "  fanout  1 -> k -> 1 diamonds one after another; ns per graph node (peers: "
            "fork-join,\n"
            "          k tasks and a wait, source and sink in the spawning task)\n"
            "  chain   N nodes, each depending on the previous one (OpenMP: depend(inout);\n"
            "          oneTBB: a flow graph of continue_nodes); graph construction is timed\n"
            "  frames  per frame, 8 producers each write a 256 KiB band, 8 consumers read band b\n"
            "          and a 16 KiB halo of band b+1; 4 frames in flight.  Reports "
            "local_byte_share\n"
            "          (share of predecessor bytes consumed on the worker that produced them),\n"
            "          frames/s and GB/s (bytes written + read); dfsched only\n"
            "  metg    METG(50 %): the smallest task body (a spin of g ns; g = 64 ns doubling to\n"
            "          1 ms) at which the workers keep 50 % efficiency, efficiency = tasks x g /\n"
            "          (workers x wall); tasks spawned by one task that waits, as in empty",
        .description =
            "\"N workers\" means the first N cores of the process's CPU set (one PU per core):\n"
            "dfsched gets that CPU list, OpenMP threads and oneTBB arena threads pin themselves "
            "to\n"
            "the same CPUs.  Each sample is a fresh runtime instance running one warm-up and one\n"
            "timed run; configurations are interleaved across repeats.  Timings are never "
            "pass/fail.\n"
            "\n"
            "Example: dfbench sched --workers 1,2,4 --repeat 7 --json sched.json",
        .entries = entries,
        .no_args = true,
    };
    GError *err = NULL;
    int status = df_cli_parse_options(PROG, &spec, &argc, &argv);
    if (status != DF_BENCH_OK)
        goto out;
    /* Each bad value by name: a list of every rule hides which one broke. */
    const struct {
        const char *flag;
        long long value, min;
    } mins[] = {
        {"--tasks", o->tasks, 0}, {"--batch", o->batch, 0},   {"--frames", o->frames, 0},
        {"--width", o->width, 0}, {"--repeat", o->repeat, 0}, {"--poll-us", o->poll_us, -1},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(mins); i++)
        if (mins[i].value < mins[i].min) {
            status = df_cli_usage(PROG, "bad %s %lld (%lld or more%s)", mins[i].flag, mins[i].value,
                                  mins[i].min,
                                  mins[i].min == 0 ? "; 0: the default" : "; -1: poll mode");
            goto out;
        }
    /* The fan-in of the sink is a node's inputs, at most UINT16_MAX - 1
     * (df_node_depend's -E2BIG); a wider fan-out ran for seconds and
     * gigabytes before failing. */
    if (o->width > MAX_WIDTH) {
        status = df_cli_usage(PROG, "bad --width %d (at most %d)", o->width, MAX_WIDTH);
        goto out;
    }
    if (!o->tasks)
        o->tasks = o->quick ? QUICK_TASKS : DEFAULT_TASKS;
    if (!o->frames)
        o->frames = o->quick ? QUICK_FRAMES : DEFAULT_FRAMES;
    if (!o->width)
        o->width = DEFAULT_WIDTH;
    if (!o->repeat)
        o->repeat = DEFAULT_REPEAT;
    if (o->workers) {
        b->n_workers = df_cli_parse_int_list(o->workers, MAX_WORKERS, &b->workers);
        if (b->n_workers < 0) {
            status = df_cli_usage(PROG, "bad --workers \"%s\" (e.g. 1,2,4 or 1-4, 1 to %d)",
                                  o->workers, MAX_WORKERS);
            goto out;
        }
    } else {
        b->n_workers = b->map.n_cores;
        b->workers = g_new(int, (gsize)b->n_workers);
        for (int i = 0; i < b->n_workers; i++)
            b->workers[i] = i + 1;
    }
    const struct {
        const char *flag;
        char *value;
    } lists[] = {{"--policy", o->policy}, {"--case", o->cases}, {"--peers", o->peers}};
    for (size_t i = 0; i < G_N_ELEMENTS(lists); i++)
        if (lists[i].value && !*g_strstrip(lists[i].value)) {
            status = df_cli_usage(PROG, "bad %s \"\": an empty list", lists[i].flag);
            goto out;
        }
    if (!parse_cases(b, &err) || !parse_impls(b, &err)) {
        status = df_cli_usage(PROG, "%s", err ? err->message : "nothing to run");
        goto out;
    }
    /* The outputs are written after minutes of runs: refuse them now. */
    const DfCliOutput outs[] = {{"--json", o->json}, {"--csv", o->csv}};
    status = df_cli_check_outputs(PROG, outs, G_N_ELEMENTS(outs));
    if (status != DF_BENCH_OK)
        goto out;
    b->params = (DfCaseParams){
        .tasks = (uint64_t)o->tasks,
        .width = o->width,
        .batch = (uint64_t)o->batch,
        .frames = o->frames,
        .warmups = 1,
        .metg_work_ns = o->quick ? QUICK_METG_WORK_NS : DEFAULT_METG_WORK_NS,
    };
out:
    g_clear_error(&err);
    return status;
}

/* ------------------------------------------------------------------ run */

static void configs_init(DfBench *b)
{
    size_t n = (size_t)b->n_impls * DF_N_CASES * (size_t)b->n_workers;
    b->configs = g_new0(DfBenchConfig, n);
    for (int i = 0; i < b->n_impls; i++)
        for (int k = 0; k < b->n_cases; k++) {
            DfBenchCase c = b->cases[k];
            if (!(b->impls[i].cases & (1u << c)))
                continue;
            for (int w = 0; w < b->n_workers; w++) {
                DfBenchConfig *cf = df_bench_config_at(b, i, c, w);
                cf->impl = &b->impls[i];
                cf->c = c;
                cf->workers = b->workers[w];
                cf->oversubscribed = df_cpu_map_oversubscribed(&b->map, b->workers[w]);
                cf->ns = g_new(double, (gsize)b->o.repeat);
                cf->cpu = g_new(double, (gsize)b->o.repeat);
                cf->share = g_new(double, (gsize)b->o.repeat);
                cf->stolen = g_new(double, (gsize)b->o.repeat);
                cf->fps = g_new(double, (gsize)b->o.repeat);
                cf->gbps = g_new(double, (gsize)b->o.repeat);
                cf->metg = g_new(double, (gsize)b->o.repeat);
                cf->metg_eff = g_new(double, (gsize)b->o.repeat);
                cf->metg_cpu = g_new(double, (gsize)b->o.repeat);
                if (b->o.trace_overhead && b->impls[i].policy) {
                    cf->ns_on = g_new(double, (gsize)b->o.repeat);
                    cf->fps_on = g_new(double, (gsize)b->o.repeat);
                }
            }
        }
}

static void configs_free(DfBench *b)
{
    if (!b->configs)
        return;
    size_t n = (size_t)b->n_impls * DF_N_CASES * (size_t)b->n_workers;
    for (size_t i = 0; i < n; i++) {
        DfBenchConfig *cf = &b->configs[i];
        g_free(cf->ns);
        g_free(cf->cpu);
        g_free(cf->share);
        g_free(cf->stolen);
        g_free(cf->fps);
        g_free(cf->gbps);
        g_free(cf->metg);
        g_free(cf->metg_eff);
        g_free(cf->metg_cpu);
        g_free(cf->ns_on);
        g_free(cf->fps_on);
        g_free(cf->error);
    }
    g_free(b->configs);
    b->configs = NULL;
}

static void record(DfBenchConfig *cf, const DfCaseResult *r, int ret, const char *why)
{
    int i = cf->n++;
    if (ret < 0) {
        cf->ns[i] = cf->cpu[i] = cf->share[i] = cf->stolen[i] = cf->fps[i] = cf->gbps[i] = NAN;
        cf->metg[i] = cf->metg_eff[i] = cf->metg_cpu[i] = NAN;
        cf->failures++;
        if (!cf->error)
            cf->error = g_strdup(why ? why : g_strerror(-ret));
        return;
    }
    cf->ns[i] = r->ns_per_task;
    cf->cpu[i] = r->cpu_ns_per_task;
    cf->share[i] = r->local_share;
    cf->stolen[i] = r->stolen_share;
    cf->fps[i] = r->frames_per_s;
    cf->gbps[i] = r->gb_per_s;
    cf->metg[i] = r->metg_ns;
    cf->metg_eff[i] = r->metg_efficiency;
    cf->metg_cpu[i] = r->metg_cpu_ns;
    cf->tasks = r->tasks;
    cf->errors += r->errors;
}

/* A traced sample: only its time and frame rate are compared (the rest is
 * the untraced sample's business); a failure counts like any other. */
static void record_traced(DfBenchConfig *cf, const DfCaseResult *r, int ret, const char *why)
{
    const int i = cf->n_on++;
    cf->ns_on[i] = ret < 0 ? NAN : r->ns_per_task;
    cf->fps_on[i] = ret < 0 ? NAN : r->frames_per_s;
    if (ret < 0) {
        cf->failures++;
        if (!cf->error)
            cf->error = g_strdup(why ? why : g_strerror(-ret));
    } else {
        cf->errors += r->errors;
    }
}

/* Events lost to full trace buffers in `s` (collected after the timed
 * runs, so not timed itself); 0 when it cannot tell. */
static uint64_t trace_dropped(DfSched *s)
{
    DfTrace t;
    if (df_sched_trace_collect(s, &t) < 0)
        return 0;
    const uint64_t dropped = t.dropped;
    df_trace_free(&t);
    return dropped;
}

/* One runtime instance of `impl` with `workers` threads: every case once,
 * with tracing on when `traced` (--trace-overhead). */
static void run_instance(DfBench *b, int impl, int wi, int repeat, bool traced, DfProgress *prog)
{
    const DfBenchImpl *im = &b->impls[impl];
    const int n = b->workers[wi];
    DfSched *s = NULL;
    DfError derr = {0};
    int sched_ret = 0;
    if (im->policy) {
        char cpus[256];
        df_cpu_map_list(&b->map, n, cpus, sizeof(cpus));
        DfSchedConfig cfg;
        df_sched_config_init(&cfg);
        cfg.policy = im->policy;
        cfg.n_workers = n;
        cfg.cpuset = cpus;
        cfg.poll_us = b->o.poll_us;
        if (traced)
            cfg.trace_capacity = df_bench_sched_trace_capacity(b);
        sched_ret = df_sched_new(&cfg, &s, &derr);
    }
    int *cpus = g_new(int, (gsize)n);
    df_cpu_map_cpus(&b->map, n, cpus);
    for (int k = 0; k < b->n_cases; k++) {
        DfBenchConfig *cf = df_bench_config_at(b, impl, b->cases[k], wi);
        if (!cf->impl)
            continue;
        df_progress_step(prog, "repeat %d/%d: %s %s, %d worker%s%s", repeat + 1, b->o.repeat,
                         im->name, df_case_name(cf->c), n, n == 1 ? "" : "s",
                         traced ? ", traced" : "");
        DfCaseResult res;
        df_case_result_init(&res);
        int ret;
        if (im->policy)
            ret = sched_ret < 0 ? sched_ret : df_bench_dfsched_run(s, cf->c, &b->params, &res);
        else
            ret = im->peer->run(cf->c, &b->params, cpus, n, &res);
        if (traced)
            record_traced(cf, &res, ret, sched_ret < 0 ? derr.msg : NULL);
        else
            record(cf, &res, ret, sched_ret < 0 ? derr.msg : NULL);
    }
    g_free(cpus);
    if (s && traced) {
        /* The instance's count, charged to each of its cases. */
        const uint64_t dropped = trace_dropped(s);
        for (int k = 0; k < b->n_cases; k++) {
            DfBenchConfig *cf = df_bench_config_at(b, impl, b->cases[k], wi);
            if (cf->impl)
                cf->dropped += dropped;
        }
    }
    if (s)
        df_sched_unref(s);
}

static void run_all(DfBench *b)
{
    int n_instances = b->n_impls * b->n_workers;
    int steps = 0;
    for (int i = 0; i < n_instances; i++)
        for (int k = 0; k < b->n_cases; k++)
            steps +=
                (df_bench_config_at(b, i % b->n_impls, b->cases[k], i / b->n_impls)->impl ? 1 : 0) *
                (b->o.trace_overhead && b->impls[i % b->n_impls].policy ? 2 : 1);
    DfProgress prog;
    df_progress_begin(&prog, steps * b->o.repeat);
    df_report_loadavg(b->load_start);
    b->start_ns = df_now_ns();
    for (int r = 0; r < b->o.repeat; r++)
        for (int k = 0; k < n_instances; k++) {
            /* Successive instances alternate implementations; the start
             * moves on each repeat so that none always runs first. */
            int g = (k + r) % n_instances;
            const int impl = g % b->n_impls, wi = g / b->n_impls;
            if (!b->o.trace_overhead || !b->impls[impl].policy) {
                run_instance(b, impl, wi, r, false, &prog);
                continue;
            }
            /* Off and on back to back, the first of the pair alternating,
             * so that a drift of the machine's load favours neither. */
            const bool on_first = (r + k) % 2 == 1;
            run_instance(b, impl, wi, r, on_first, &prog);
            run_instance(b, impl, wi, r, !on_first, &prog);
        }
    b->end_ns = df_now_ns();
    df_report_loadavg(b->load_end);
    df_progress_end(&prog);
}

/* ----------------------------------------------------------------- main */

int df_bench_sched_main(int argc, char **argv)
{
    DfBench b = {0};
    int status = DF_BENCH_OK;
    GArray *goals = NULL;
    int ret = df_cpu_map_init(&b.map);
    if (ret < 0) {
        fprintf(stderr, "dfbench sched: error: cannot read the CPU topology: %s\n",
                g_strerror(-ret));
        return DF_BENCH_FAILED;
    }
    status = parse_options(&b, argc, argv);
    if (status != DF_BENCH_OK)
        goto out;
    configs_init(&b);
    df_bench_sched_print_header(&b);
    fflush(stdout);
    run_all(&b);
    printf("\n");
    df_bench_sched_print_table(&b);
    if (b.o.trace_overhead)
        df_bench_sched_print_trace_overhead(&b);
    goals = df_bench_sched_goals(&b);
    df_bench_sched_print_goals(goals);
    printf("\nload average %.2f at the start, %.2f at the end; %.1f s\n", b.load_start[0],
           b.load_end[0], (double)(b.end_ns - b.start_ns) / 1e9);
    if (b.o.json && !df_bench_sched_write_json(&b, goals))
        status = DF_BENCH_FAILED;
    if (b.o.csv && !df_bench_sched_write_csv(&b))
        status = DF_BENCH_FAILED;
    size_t n = (size_t)b.n_impls * DF_N_CASES * (size_t)b.n_workers;
    for (size_t i = 0; i < n; i++)
        if (b.configs[i].impl && (b.configs[i].errors || b.configs[i].failures))
            status = DF_BENCH_FAILED;
    if (status == DF_BENCH_FAILED)
        fprintf(stderr,
                "dfbench sched: error: some runs failed or gave wrong results (see the table)\n");
out:
    if (goals)
        g_array_free(goals, TRUE);
    configs_free(&b);
    g_free(b.impls);
    g_free(b.workers);
    g_free(b.o.workers);
    g_free(b.o.policy);
    g_free(b.o.cases);
    g_free(b.o.peers);
    g_free(b.o.json);
    g_free(b.o.csv);
    df_cpu_map_fini(&b.map);
    return status;
}
