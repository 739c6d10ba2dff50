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
#include "affinity.h"
#include "bench_sched.h"
#include "dfbench.h"
#include "report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_TASKS 100000
#define QUICK_TASKS 20000
#define DEFAULT_FRAMES 200
#define QUICK_FRAMES 40
#define DEFAULT_REPEAT 5
#define DEFAULT_WIDTH 16
#define MAX_WORKERS 4096

static const char *const case_names[DF_N_CASES] = {"empty", "fanout", "chain", "frames"};

const char *df_case_name(DfBenchCase c)
{
    return (unsigned)c < DF_N_CASES ? case_names[c] : "?";
}

void df_case_result_init(DfCaseResult *r)
{
    memset(r, 0, sizeof(*r));
    r->ns_per_task = r->local_share = r->stolen_share = NAN;
    r->frames_per_s = r->gb_per_s = NAN;
}

/* ------------------------------------------------------- implementations */

typedef struct Peer {
    const char *option; /* name in --peers */
    const char *alias;
    const char *impl;   /* name in the results */
    DfPeerRunFn run;
    void (*describe)(char *buf, size_t len);
} Peer;

static const Peer peers[] = {
#ifdef DF_BENCH_HAVE_OPENMP
    {"omp", "openmp", "openmp", df_peer_omp_run, df_peer_omp_describe},
#endif
#ifdef DF_BENCH_HAVE_TBB
    {"tbb", "onetbb", "tbb", df_peer_tbb_run, df_peer_tbb_describe},
#endif
};
#define N_PEERS ((int)(sizeof(peers) / sizeof(peers[0])))

#define PEER_CASES ((1u << DF_CASE_EMPTY) | (1u << DF_CASE_FANOUT) | (1u << DF_CASE_CHAIN))
#define ALL_CASES ((1u << DF_N_CASES) - 1)

typedef struct Impl {
    char name[48];      /* "dfsched/cost-local", "openmp", "tbb" */
    const char *policy; /* dfsched policy, NULL for a peer */
    const Peer *peer;
    unsigned cases;     /* bit per case it implements */
} Impl;

/* -------------------------------------------------------------- results */

typedef struct Config {
    const Impl *impl;   /* NULL: the implementation has no such case */
    DfBenchCase c;
    int workers;
    bool oversubscribed;
    int n;              /* samples taken (failed ones included, as NAN) */
    double *ns, *share, *stolen, *fps, *gbps;
    uint64_t tasks;
    uint64_t errors;    /* results that did not check out */
    int failures;       /* samples that could not run */
    char *error;        /* the first failure's message */
} Config;

typedef struct Opts {
    char *workers, *policy, *cases, *peers, *json, *csv;
    gint64 tasks, batch;
    int frames, width, repeat, poll_us;
    gboolean quick;
} Opts;

typedef struct Bench {
    Opts o;
    DfCpuMap map;
    int *workers;
    int n_workers;
    DfBenchCase cases[DF_N_CASES];
    int n_cases;
    Impl *impls;
    int n_impls;
    Config *configs; /* [impl][case][workers] */
    DfCaseParams params;
    double load_start[3], load_end[3];
    int64_t start_ns, end_ns;
} Bench;

static Config *config_at(Bench *b, int impl, DfBenchCase c, int wi)
{
    return &b->configs[((size_t)impl * DF_N_CASES + (size_t)c) * (size_t)b->n_workers + (size_t)wi];
}

/* -------------------------------------------------------------- options */

static bool parse_int(const char *s, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min || v > max)
        return false;
    *out = v;
    return true;
}

/* "1,2,4" or "1-4" or a mix.  Returns the count or -1. */
static int parse_workers(const char *spec, int **out)
{
    gchar **parts = g_strsplit(spec, ",", -1);
    GArray *v = g_array_new(FALSE, FALSE, sizeof(int));
    int ret = -1;
    for (int i = 0; parts[i]; i++) {
        gchar *item = g_strstrip(parts[i]);
        char *dash = strchr(item, '-');
        long lo, hi;
        if (dash) {
            *dash = '\0';
            if (!parse_int(item, 1, MAX_WORKERS, &lo) || !parse_int(dash + 1, lo, MAX_WORKERS, &hi))
                goto out;
        } else if (parse_int(item, 1, MAX_WORKERS, &lo)) {
            hi = lo;
        } else {
            goto out;
        }
        for (long w = lo; w <= hi; w++) {
            int x = (int)w;
            bool dup = false;
            for (guint k = 0; k < v->len; k++)
                dup |= g_array_index(v, int, k) == x;
            if (!dup)
                g_array_append_val(v, x);
        }
    }
    if (v->len == 0)
        goto out;
    ret = (int)v->len;
    *out = g_memdup2(v->data, sizeof(int) * v->len);
out:
    g_array_free(v, TRUE);
    g_strfreev(parts);
    return ret;
}

static int find_name(const char *const *names, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], s) == 0)
            return i;
    return -1;
}

static bool parse_cases(Bench *b, GError **err)
{
    unsigned mask = 0;
    if (!b->o.cases || strcmp(b->o.cases, "all") == 0) {
        mask = ALL_CASES;
    } else {
        gchar **parts = g_strsplit(b->o.cases, ",", -1);
        for (int i = 0; parts[i]; i++) {
            int c = find_name(case_names, DF_N_CASES, g_strstrip(parts[i]));
            if (c < 0) {
                g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                            "unknown case \"%s\" (one of: empty, fanout, chain, frames)", parts[i]);
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

static const Peer *find_peer(const char *name)
{
    for (int i = 0; i < N_PEERS; i++)
        if (strcmp(peers[i].option, name) == 0 || strcmp(peers[i].alias, name) == 0)
            return &peers[i];
    return NULL;
}

static bool parse_impls(Bench *b, GError **err)
{
    GArray *v = g_array_new(FALSE, TRUE, sizeof(Impl));
    const char *const *names = df_policy_names();
    int n_pol = 0;
    while (names[n_pol])
        n_pol++;
    gchar **pol = g_strsplit(b->o.policy ? b->o.policy : "all", ",", -1);
    bool ok = true;
    for (int i = 0; ok && pol[i]; i++) {
        const char *want = g_strstrip(pol[i]);
        if (!*want || strcmp(want, "none") == 0)
            continue;
        for (int p = 0; p < n_pol; p++) {
            if (strcmp(want, "all") != 0 && strcmp(want, names[p]) != 0)
                continue;
            Impl im = {.policy = names[p], .cases = ALL_CASES};
            snprintf(im.name, sizeof(im.name), "dfsched/%s", names[p]);
            g_array_append_val(v, im);
        }
        if (strcmp(want, "all") != 0 && find_name(names, n_pol, want) < 0) {
            GString *list = g_string_new(NULL);
            for (int p = 0; p < n_pol; p++)
                g_string_append_printf(list, "%s%s", p ? ", " : "", names[p]);
            g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "unknown policy \"%s\" (one of: all, %s, none)", want, list->str);
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
        if (!*want || strcmp(want, "none") == 0)
            continue;
        const Peer *peer = find_peer(want);
        if (!peer) {
            bool known = strcmp(want, "omp") == 0 || strcmp(want, "openmp") == 0 ||
                         strcmp(want, "tbb") == 0 || strcmp(want, "onetbb") == 0;
            g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        known ? "peer \"%s\" was not built (its library was missing when meson "
                                "configured dfbench)"
                              : "unknown peer \"%s\" (omp, tbb or none)",
                        want);
            ok = false;
            break;
        }
        Impl im = {.peer = peer, .cases = PEER_CASES};
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
    b->impls = (Impl *)g_array_free(v, FALSE);
    return ok;
}

static int parse_options(Bench *b, int argc, char **argv)
{
    Opts *o = &b->o;
    o->poll_us = -1;
    GOptionEntry entries[] = {
        {"workers", 'w', 0, G_OPTION_ARG_STRING, &o->workers,
         "Worker counts, e.g. 1,2,4 or 1-4 (default: 1 to the number of cores). Counts above "
         "the machine's PUs run oversubscribed and are marked so",
         "LIST"},
        {"policy", 'p', 0, G_OPTION_ARG_STRING, &o->policy,
         "dfsched policies: all (default), none, or a list of fifo, steal, cost, cost-local",
         "LIST"},
        {"case", 'c', 0, G_OPTION_ARG_STRING, &o->cases,
         "Cases: empty, fanout, chain, frames (default: all)", "LIST"},
        {"peers", 0, 0, G_OPTION_ARG_STRING, &o->peers,
         "Peers in the same run: omp (libgomp tasks), tbb (oneTBB); default: both (those this "
         "build has); none to skip. Peers run empty, fanout and chain",
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
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    g_set_prgname("dfbench sched");
    GOptionContext *ctx = g_option_context_new("- dfsched overhead and locality vs OpenMP and oneTBB");
    g_option_context_set_summary(
        ctx,
        "Measures the cost of a task on dfsched for every policy and worker count, next to\n"
        "OpenMP tasks (libgomp) and oneTBB in the same process, and how much of a frame-like\n"
        "graph's data each policy consumes on the core that produced it.\n"
        "\n"
        "Cases:\n"
        "  empty   a root task spawns N empty tasks into a group on its own worker's queue\n"
        "          and waits (helping); ns per task = spawn + run\n"
        "  fanout  1 -> k -> 1 diamonds one after another; ns per graph node (peers: fork-join,\n"
        "          k tasks and a wait, source and sink in the spawning task)\n"
        "  chain   N nodes, each depending on the previous one (OpenMP: depend(inout);\n"
        "          oneTBB: a flow graph of continue_nodes); graph construction is timed\n"
        "  frames  per frame, 8 producers each write a 256 KiB band, 8 consumers read band b\n"
        "          and a 16 KiB halo of band b+1; 4 frames in flight.  Reports local_byte_share\n"
        "          (share of predecessor bytes consumed on the worker that produced them),\n"
        "          frames/s and GB/s (bytes written + read); dfsched only");
    g_option_context_set_description(
        ctx,
        "\"N workers\" means the first N cores of the process's CPU set (one PU per core):\n"
        "dfsched gets that CPU list, OpenMP threads and oneTBB arena threads pin themselves to\n"
        "the same CPUs.  Each sample is a fresh runtime instance running one warm-up and one\n"
        "timed run; configurations are interleaved across repeats.  Timings are never pass/fail.\n"
        "\n"
        "Example: dfbench sched --workers 1,2,4 --repeat 7 --json sched.json");
    g_option_context_add_main_entries(ctx, entries, NULL);
    GError *err = NULL;
    int status = DF_BENCH_OK;
    if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
        fprintf(stderr, "dfbench sched: %s\n", err->message);
        status = DF_BENCH_USAGE;
        goto out;
    }
    if (argc > 1) {
        fprintf(stderr, "dfbench sched: unexpected argument \"%s\" (see --help)\n", argv[1]);
        status = DF_BENCH_USAGE;
        goto out;
    }
    if (o->tasks < 0 || o->batch < 0 || o->frames < 0 || o->width < 0 || o->repeat < 0 ||
        o->poll_us < -1) {
        fprintf(stderr, "dfbench sched: negative sizes make no sense (--poll-us takes -1 or more)\n");
        status = DF_BENCH_USAGE;
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
        b->n_workers = parse_workers(o->workers, &b->workers);
        if (b->n_workers < 0) {
            fprintf(stderr, "dfbench sched: bad --workers \"%s\" (e.g. 1,2,4 or 1-4, at most %d)\n",
                    o->workers, MAX_WORKERS);
            status = DF_BENCH_USAGE;
            goto out;
        }
    } else {
        b->n_workers = b->map.n_cores;
        b->workers = g_new(int, (gsize)b->n_workers);
        for (int i = 0; i < b->n_workers; i++)
            b->workers[i] = i + 1;
    }
    if (!parse_cases(b, &err) || !parse_impls(b, &err)) {
        fprintf(stderr, "dfbench sched: %s\n", err ? err->message : "nothing to run");
        status = DF_BENCH_USAGE;
        goto out;
    }
    b->params = (DfCaseParams){
        .tasks = (uint64_t)o->tasks,
        .width = o->width,
        .batch = (uint64_t)o->batch,
        .frames = o->frames,
        .warmups = 1,
    };
out:
    g_clear_error(&err);
    g_option_context_free(ctx);
    return status;
}

/* ------------------------------------------------------------------ run */

static void configs_init(Bench *b)
{
    size_t n = (size_t)b->n_impls * DF_N_CASES * (size_t)b->n_workers;
    b->configs = g_new0(Config, n);
    for (int i = 0; i < b->n_impls; i++)
        for (int k = 0; k < b->n_cases; k++) {
            DfBenchCase c = b->cases[k];
            if (!(b->impls[i].cases & (1u << c)))
                continue;
            for (int w = 0; w < b->n_workers; w++) {
                Config *cf = config_at(b, i, c, w);
                cf->impl = &b->impls[i];
                cf->c = c;
                cf->workers = b->workers[w];
                cf->oversubscribed = df_cpu_map_oversubscribed(&b->map, b->workers[w]);
                cf->ns = g_new(double, (gsize)b->o.repeat);
                cf->share = g_new(double, (gsize)b->o.repeat);
                cf->stolen = g_new(double, (gsize)b->o.repeat);
                cf->fps = g_new(double, (gsize)b->o.repeat);
                cf->gbps = g_new(double, (gsize)b->o.repeat);
            }
        }
}

static void configs_free(Bench *b)
{
    if (!b->configs)
        return;
    size_t n = (size_t)b->n_impls * DF_N_CASES * (size_t)b->n_workers;
    for (size_t i = 0; i < n; i++) {
        Config *cf = &b->configs[i];
        g_free(cf->ns);
        g_free(cf->share);
        g_free(cf->stolen);
        g_free(cf->fps);
        g_free(cf->gbps);
        g_free(cf->error);
    }
    g_free(b->configs);
    b->configs = NULL;
}

static void record(Config *cf, const DfCaseResult *r, int ret, const char *why)
{
    int i = cf->n++;
    if (ret < 0) {
        cf->ns[i] = cf->share[i] = cf->stolen[i] = cf->fps[i] = cf->gbps[i] = NAN;
        cf->failures++;
        if (!cf->error)
            cf->error = g_strdup(why ? why : g_strerror(-ret));
        return;
    }
    cf->ns[i] = r->ns_per_task;
    cf->share[i] = r->local_share;
    cf->stolen[i] = r->stolen_share;
    cf->fps[i] = r->frames_per_s;
    cf->gbps[i] = r->gb_per_s;
    cf->tasks = r->tasks;
    cf->errors += r->errors;
}

/* One runtime instance of `impl` with `workers` threads: every case once. */
static void run_instance(Bench *b, int impl, int wi, int repeat, DfProgress *prog)
{
    const Impl *im = &b->impls[impl];
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
        sched_ret = df_sched_new(&cfg, &s, &derr);
    }
    int *cpus = g_new(int, (gsize)n);
    df_cpu_map_cpus(&b->map, n, cpus);
    for (int k = 0; k < b->n_cases; k++) {
        Config *cf = config_at(b, impl, b->cases[k], wi);
        if (!cf->impl)
            continue;
        df_progress_step(prog, "repeat %d/%d: %s %s, %d worker%s", repeat + 1, b->o.repeat,
                         im->name, df_case_name(cf->c), n, n == 1 ? "" : "s");
        DfCaseResult res;
        df_case_result_init(&res);
        int ret;
        if (im->policy)
            ret = sched_ret < 0 ? sched_ret : df_bench_dfsched_run(s, cf->c, &b->params, &res);
        else
            ret = im->peer->run(cf->c, &b->params, cpus, n, &res);
        record(cf, &res, ret, sched_ret < 0 ? derr.msg : NULL);
    }
    g_free(cpus);
    if (s)
        df_sched_unref(s);
}

static void run_all(Bench *b)
{
    int n_instances = b->n_impls * b->n_workers;
    int steps = 0;
    for (int i = 0; i < n_instances; i++)
        for (int k = 0; k < b->n_cases; k++)
            steps += config_at(b, i % b->n_impls, b->cases[k], i / b->n_impls)->impl != NULL;
    DfProgress prog;
    df_progress_begin(&prog, steps * b->o.repeat);
    df_report_loadavg(b->load_start);
    b->start_ns = df_now_ns();
    for (int r = 0; r < b->o.repeat; r++)
        for (int k = 0; k < n_instances; k++) {
            /* Successive instances alternate implementations; the start
             * moves on each repeat so that none always runs first. */
            int g = (k + r) % n_instances;
            run_instance(b, g % b->n_impls, g / b->n_impls, r, &prog);
        }
    b->end_ns = df_now_ns();
    df_report_loadavg(b->load_end);
    df_progress_end(&prog);
}

/* --------------------------------------------------------------- output */

typedef struct Row {
    DfSummary ns, share, stolen, fps, gbps;
} Row;

static Row summarize(const Config *cf)
{
    return (Row){
        .ns = df_summarize(cf->ns, cf->n),
        .share = df_summarize(cf->share, cf->n),
        .stolen = df_summarize(cf->stolen, cf->n),
        .fps = df_summarize(cf->fps, cf->n),
        .gbps = df_summarize(cf->gbps, cf->n),
    };
}

static void note_of(const Config *cf, char *buf, size_t len)
{
    GString *s = g_string_new(NULL);
    if (cf->oversubscribed)
        g_string_append(s, "oversubscribed");
    if (cf->errors)
        g_string_append_printf(s, "%s%llu ERRORS", s->len ? "; " : "",
                               (unsigned long long)cf->errors);
    if (cf->failures)
        g_string_append_printf(s, "%sfailed %d/%d: %s", s->len ? "; " : "", cf->failures, cf->n,
                               cf->error);
    snprintf(buf, len, "%s", s->str);
    g_string_free(s, TRUE);
}

static void print_header(const Bench *b)
{
    char machine[1024];
    df_report_machine_line(machine, sizeof(machine));
    printf("dfbench sched on %s\n", machine);
    if (b->o.poll_us < 0)
        printf("dfsched: poll mode (--poll-us -1): idle workers spin with pause and never park\n");
    else
        printf("dfsched: parking mode: idle workers spin %d us, then park on a futex\n",
               b->o.poll_us);
    for (int i = 0; i < b->n_impls; i++)
        if (b->impls[i].peer) {
            char d[256];
            b->impls[i].peer->describe(d, sizeof(d));
            printf("peer %s: %s\n", b->impls[i].name, d);
        }
    printf("sizes: empty/chain %llu tasks, fanout k=%d (%llu nodes), frames %d x %d bands of "
           "%u KiB (+%u KiB halo), %d in flight",
           (unsigned long long)b->params.tasks, b->params.width,
           (unsigned long long)(b->params.tasks / (uint64_t)(b->params.width + 2) *
                                (uint64_t)(b->params.width + 2)),
           b->params.frames, DF_FRAME_BANDS, DF_FRAME_BAND_BYTES / 1024, DF_FRAME_HALO_BYTES / 1024,
           DF_FRAME_IN_FLIGHT);
    if (b->params.batch)
        printf("; empty spawns in rounds of %llu", (unsigned long long)b->params.batch);
    printf("\n%d samples per configuration, interleaved; each a fresh runtime with 1 warm-up + "
           "1 timed run\n",
           b->o.repeat);
}

static void print_table(Bench *b)
{
    static const char *const headers[] = {"case",   "workers", "impl", "ns/task", "min",
                                          "max",    "n",       "local", "stolen", "frames/s",
                                          "GB/s",   "note"};
    DfTable *t = df_table_new(12, headers, "lrlrrrrrrrrl");
    for (int k = 0; k < b->n_cases; k++) {
        if (k)
            df_table_rule(t);
        for (int w = 0; w < b->n_workers; w++)
            for (int i = 0; i < b->n_impls; i++) {
                Config *cf = config_at(b, i, b->cases[k], w);
                if (!cf->impl)
                    continue;
                Row r = summarize(cf);
                char workers[16], med[32], mn[32], mx[32], n[16], share[16], stolen[16], fps[32],
                    gbps[32], note[256];
                snprintf(workers, sizeof(workers), "%d", cf->workers);
                df_fmt_num(med, sizeof(med), r.ns.median, 1);
                df_fmt_num(mn, sizeof(mn), r.ns.min, 1);
                df_fmt_num(mx, sizeof(mx), r.ns.max, 1);
                snprintf(n, sizeof(n), "%d", r.ns.n);
                df_fmt_num(share, sizeof(share), r.share.median, 3);
                df_fmt_num(stolen, sizeof(stolen), r.stolen.median, 3);
                df_fmt_num(fps, sizeof(fps), r.fps.median, 0);
                df_fmt_num(gbps, sizeof(gbps), r.gbps.median, 2);
                note_of(cf, note, sizeof(note));
                const char *cells[] = {df_case_name(cf->c), workers, cf->impl->name, med, mn, mx,
                                       n, share, stolen, fps, gbps, note};
                df_table_row(t, cells);
            }
    }
    df_table_print(t, stdout);
    df_table_free(t);
    printf("ns/task: median of the samples (min, max beside it); local: local_byte_share; "
           "stolen: share of tasks run from another worker's set (dfsched)\n");
}

/* ---------------------------------------------------------------- goals */

typedef struct Goal {
    const char *goal;
    int workers;
    bool oversubscribed;
    const char *impl;
    double value;
    const char *ref_impl;
    double reference;
    bool met;
} Goal;

static const Config *find_config(Bench *b, const char *impl, DfBenchCase c, int wi)
{
    for (int i = 0; i < b->n_impls; i++)
        if (strcmp(b->impls[i].name, impl) == 0) {
            const Config *cf = config_at(b, i, c, wi);
            return cf->impl ? cf : NULL;
        }
    return NULL;
}

static double median_of(const double *v, int n)
{
    return df_summarize(v, n).median;
}

/* The goals, evaluated on this run: reported, never enforced. */
static GArray *evaluate_goals(Bench *b)
{
    GArray *goals = g_array_new(FALSE, TRUE, sizeof(Goal));
    for (int w = 0; w < b->n_workers; w++) {
        const Config *cl = find_config(b, "dfsched/cost-local", DF_CASE_EMPTY, w);
        const Config *omp = find_config(b, "openmp", DF_CASE_EMPTY, w);
        if (cl) {
            double v = median_of(cl->ns, cl->n);
            Goal g = {"empty <= 50 ns/task", cl->workers, cl->oversubscribed, cl->impl->name, v,
                      NULL, 50.0, v <= 50.0};
            g_array_append_val(goals, g);
        }
        if (cl && omp) {
            double v = median_of(cl->ns, cl->n), ref = median_of(omp->ns, omp->n);
            Goal g = {"empty no slower than OpenMP tasks", cl->workers, cl->oversubscribed,
                      cl->impl->name, v, "openmp", ref, v <= ref};
            g_array_append_val(goals, g);
        }
        const Config *fcl = find_config(b, "dfsched/cost-local", DF_CASE_FRAMES, w);
        const Config *fst = find_config(b, "dfsched/steal", DF_CASE_FRAMES, w);
        if (fcl) {
            double v = median_of(fcl->share, fcl->n);
            Goal g = {"frames local_byte_share >= 0.9", fcl->workers, fcl->oversubscribed,
                      fcl->impl->name, v, NULL, 0.9, v >= 0.9};
            g_array_append_val(goals, g);
        }
        if (fst) {
            /* steal is the locality-blind baseline: about 1/N is expected. */
            double v = median_of(fst->share, fst->n);
            Goal g = {"frames local_byte_share ~1/N (steal)", fst->workers,
                      fst->oversubscribed, fst->impl->name, v, NULL, 1.0 / fst->workers,
                      fabs(v - 1.0 / fst->workers) <= 0.15};
            g_array_append_val(goals, g);
        }
    }
    return goals;
}

static void print_goals(GArray *goals)
{
    if (goals->len == 0)
        return;
    printf("\nGoals of issue 3 on this run (reported, not tested):\n");
    for (guint i = 0; i < goals->len; i++) {
        const Goal *g = &g_array_index(goals, Goal, i);
        const bool share = strstr(g->goal, "share") != NULL;
        char v[32], ref[64], workers[40];
        df_fmt_num(v, sizeof(v), g->value, share ? 3 : 1);
        if (!share)
            g_strlcat(v, " ns", sizeof(v));
        if (g->ref_impl)
            snprintf(ref, sizeof(ref), "vs %s %.1f ns", g->ref_impl, g->reference);
        else if (strstr(g->goal, "1/N"))
            snprintf(ref, sizeof(ref), "(1/N = %.3f)", g->reference);
        else
            ref[0] = '\0';
        snprintf(workers, sizeof(workers), "%d worker%s%s", g->workers, g->workers == 1 ? "" : "s",
                 g->oversubscribed ? " (oversub.)" : "");
        const char *verdict = strstr(g->goal, "1/N") ? "" : isnan(g->value) ? "n/a"
                                                     : g->met                ? "met"
                                                                             : "MISSED";
        printf("  %-36s %-22s %-20s %10s %-22s %s\n", g->goal, workers, g->impl, v, ref, verdict);
    }
}

/* ----------------------------------------------------------------- JSON */

static void json_summary(JsonBuilder *jb, const char *name, const DfSummary *s, bool range)
{
    df_json_double(jb, name, s->median);
    if (range) {
        char key[64];
        snprintf(key, sizeof(key), "%s_min", name);
        df_json_double(jb, key, s->min);
        snprintf(key, sizeof(key), "%s_max", name);
        df_json_double(jb, key, s->max);
    }
}

static void json_samples(JsonBuilder *jb, const char *name, const double *v, int n)
{
    json_builder_set_member_name(jb, name);
    json_builder_begin_array(jb);
    for (int i = 0; i < n; i++)
        if (isnan(v[i]))
            json_builder_add_null_value(jb);
        else
            json_builder_add_double_value(jb, v[i]);
    json_builder_end_array(jb);
}

static void json_result(JsonBuilder *jb, const Config *cf)
{
    Row r = summarize(cf);
    const bool frames = cf->c == DF_CASE_FRAMES;
    json_builder_begin_object(jb);
    json_builder_set_member_name(jb, "impl");
    json_builder_add_string_value(jb, cf->impl->name);
    json_builder_set_member_name(jb, "case");
    json_builder_add_string_value(jb, df_case_name(cf->c));
    json_builder_set_member_name(jb, "workers");
    json_builder_add_int_value(jb, cf->workers);
    json_builder_set_member_name(jb, "oversubscribed");
    json_builder_add_boolean_value(jb, cf->oversubscribed);
    json_builder_set_member_name(jb, "tasks");
    json_builder_add_int_value(jb, (gint64)cf->tasks);
    json_builder_set_member_name(jb, "samples");
    json_builder_add_int_value(jb, cf->n);
    json_summary(jb, "ns_per_task", &r.ns, true);
    json_samples(jb, "ns_per_task_samples", cf->ns, cf->n);
    /* Measured only where the scheduler saw input bytes. */
    json_summary(jb, "local_byte_share", &r.share, cf->impl->policy != NULL);
    df_json_double(jb, "stolen_share", r.stolen.median);
    if (frames) {
        json_summary(jb, "frames_per_s", &r.fps, true);
        json_summary(jb, "gb_per_s", &r.gbps, true);
    }
    json_builder_set_member_name(jb, "errors");
    json_builder_add_int_value(jb, (gint64)cf->errors);
    json_builder_set_member_name(jb, "failures");
    json_builder_add_int_value(jb, cf->failures);
    if (cf->error) {
        json_builder_set_member_name(jb, "error");
        json_builder_add_string_value(jb, cf->error);
    }
    json_builder_end_object(jb);
}

static bool write_json(Bench *b, GArray *goals)
{
    JsonBuilder *jb = json_builder_new();
    json_builder_begin_object(jb);
    json_builder_set_member_name(jb, "bench");
    json_builder_add_string_value(jb, "sched");
    df_report_machine_json(jb);

    json_builder_set_member_name(jb, "run");
    json_builder_begin_object(jb);
    json_builder_set_member_name(jb, "poll_us");
    json_builder_add_int_value(jb, b->o.poll_us);
    json_builder_set_member_name(jb, "mode");
    json_builder_add_string_value(jb, b->o.poll_us < 0 ? "poll" : "park");
    json_builder_set_member_name(jb, "repeat");
    json_builder_add_int_value(jb, b->o.repeat);
    json_builder_set_member_name(jb, "tasks");
    json_builder_add_int_value(jb, (gint64)b->params.tasks);
    json_builder_set_member_name(jb, "width");
    json_builder_add_int_value(jb, b->params.width);
    json_builder_set_member_name(jb, "batch");
    json_builder_add_int_value(jb, (gint64)b->params.batch);
    json_builder_set_member_name(jb, "frames");
    json_builder_add_int_value(jb, b->params.frames);
    json_builder_set_member_name(jb, "frame_bands");
    json_builder_add_int_value(jb, DF_FRAME_BANDS);
    json_builder_set_member_name(jb, "band_bytes");
    json_builder_add_int_value(jb, DF_FRAME_BAND_BYTES);
    json_builder_set_member_name(jb, "halo_bytes");
    json_builder_add_int_value(jb, DF_FRAME_HALO_BYTES);
    json_builder_set_member_name(jb, "frames_in_flight");
    json_builder_add_int_value(jb, DF_FRAME_IN_FLIGHT);
    json_builder_set_member_name(jb, "quick");
    json_builder_add_boolean_value(jb, b->o.quick);
    df_json_double(jb, "duration_s", (double)(b->end_ns - b->start_ns) / 1e9);
    json_builder_set_member_name(jb, "load_avg_start");
    json_builder_begin_array(jb);
    for (int i = 0; i < 3; i++)
        json_builder_add_double_value(jb, isnan(b->load_start[i]) ? -1 : b->load_start[i]);
    json_builder_end_array(jb);
    json_builder_set_member_name(jb, "load_avg_end");
    json_builder_begin_array(jb);
    for (int i = 0; i < 3; i++)
        json_builder_add_double_value(jb, isnan(b->load_end[i]) ? -1 : b->load_end[i]);
    json_builder_end_array(jb);
    for (int i = 0; i < b->n_impls; i++)
        if (b->impls[i].peer) {
            char d[256], key[64];
            b->impls[i].peer->describe(d, sizeof(d));
            snprintf(key, sizeof(key), "peer_%s", b->impls[i].name);
            json_builder_set_member_name(jb, key);
            json_builder_add_string_value(jb, d);
        }
    json_builder_end_object(jb);

    json_builder_set_member_name(jb, "results");
    json_builder_begin_array(jb);
    for (int k = 0; k < b->n_cases; k++)
        for (int w = 0; w < b->n_workers; w++)
            for (int i = 0; i < b->n_impls; i++) {
                const Config *cf = config_at(b, i, b->cases[k], w);
                if (cf->impl)
                    json_result(jb, cf);
            }
    json_builder_end_array(jb);

    json_builder_set_member_name(jb, "goals");
    json_builder_begin_array(jb);
    for (guint i = 0; i < goals->len; i++) {
        const Goal *g = &g_array_index(goals, Goal, i);
        json_builder_begin_object(jb);
        json_builder_set_member_name(jb, "goal");
        json_builder_add_string_value(jb, g->goal);
        json_builder_set_member_name(jb, "impl");
        json_builder_add_string_value(jb, g->impl);
        json_builder_set_member_name(jb, "workers");
        json_builder_add_int_value(jb, g->workers);
        df_json_double(jb, "value", g->value);
        if (g->ref_impl) {
            json_builder_set_member_name(jb, "reference_impl");
            json_builder_add_string_value(jb, g->ref_impl);
        }
        df_json_double(jb, "reference", g->reference);
        json_builder_set_member_name(jb, "met");
        json_builder_add_boolean_value(jb, g->met);
        json_builder_end_object(jb);
    }
    json_builder_end_array(jb);
    json_builder_end_object(jb);

    GError *err = NULL;
    bool ok = df_json_write(jb, b->o.json, &err);
    if (!ok) {
        fprintf(stderr, "dfbench sched: cannot write %s: %s\n", b->o.json, err->message);
        g_error_free(err);
    }
    g_object_unref(jb);
    return ok;
}

static bool write_csv(Bench *b)
{
    static const char *const headers[] = {
        "impl",         "case",             "workers",          "oversubscribed", "tasks",
        "samples",      "ns_per_task",      "ns_per_task_min",  "ns_per_task_max",
        "local_byte_share", "stolen_share", "frames_per_s",     "gb_per_s",       "errors",
        "failures",     "error"};
    enum { N_COLS = sizeof(headers) / sizeof(headers[0]) };
    DfCsv csv;
    int ret = df_csv_open(&csv, b->o.csv, N_COLS, headers);
    if (ret < 0) {
        fprintf(stderr, "dfbench sched: cannot write %s: %s\n", b->o.csv, g_strerror(-ret));
        return false;
    }
    for (int k = 0; k < b->n_cases; k++)
        for (int w = 0; w < b->n_workers; w++)
            for (int i = 0; i < b->n_impls; i++) {
                const Config *cf = config_at(b, i, b->cases[k], w);
                if (!cf->impl)
                    continue;
                Row r = summarize(cf);
                char f[12][40];
                snprintf(f[0], sizeof(f[0]), "%d", cf->workers);
                snprintf(f[1], sizeof(f[1]), "%llu", (unsigned long long)cf->tasks);
                snprintf(f[2], sizeof(f[2]), "%d", cf->n);
                snprintf(f[3], sizeof(f[3]), "%.3f", r.ns.median);
                snprintf(f[4], sizeof(f[4]), "%.3f", r.ns.min);
                snprintf(f[5], sizeof(f[5]), "%.3f", r.ns.max);
                /* Empty cells, not "nan", where nothing was measured. */
                const double opt[4] = {r.share.median, r.stolen.median, r.fps.median, r.gbps.median};
                for (int j = 0; j < 4; j++)
                    if (isnan(opt[j]))
                        f[6 + j][0] = '\0';
                    else
                        snprintf(f[6 + j], sizeof(f[6 + j]), "%.4f", opt[j]);
                snprintf(f[10], sizeof(f[10]), "%llu", (unsigned long long)cf->errors);
                snprintf(f[11], sizeof(f[11]), "%d", cf->failures);
                const char *cells[N_COLS] = {cf->impl->name, df_case_name(cf->c), f[0],
                                             cf->oversubscribed ? "true" : "false", f[1], f[2],
                                             f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10],
                                             f[11], cf->error};
                df_csv_row(&csv, cells);
            }
    ret = df_csv_close(&csv);
    if (ret < 0)
        fprintf(stderr, "dfbench sched: error writing %s: %s\n", b->o.csv, g_strerror(-ret));
    return ret == 0;
}

/* ----------------------------------------------------------------- main */

int df_bench_sched_main(int argc, char **argv)
{
    Bench b = {0};
    int status = DF_BENCH_OK;
    GArray *goals = NULL;
    int ret = df_cpu_map_init(&b.map);
    if (ret < 0) {
        fprintf(stderr, "dfbench sched: cannot read the CPU topology: %s\n", g_strerror(-ret));
        return DF_BENCH_FAILED;
    }
    status = parse_options(&b, argc, argv);
    if (status != DF_BENCH_OK)
        goto out;
    configs_init(&b);
    print_header(&b);
    fflush(stdout);
    run_all(&b);
    printf("\n");
    print_table(&b);
    goals = evaluate_goals(&b);
    print_goals(goals);
    printf("\nload average %.2f at the start, %.2f at the end; %.1f s\n", b.load_start[0],
           b.load_end[0], (double)(b.end_ns - b.start_ns) / 1e9);
    if (b.o.json && !write_json(&b, goals))
        status = DF_BENCH_FAILED;
    if (b.o.csv && !write_csv(&b))
        status = DF_BENCH_FAILED;
    size_t n = (size_t)b.n_impls * DF_N_CASES * (size_t)b.n_workers;
    for (size_t i = 0; i < n; i++)
        if (b.configs[i].impl && (b.configs[i].errors || b.configs[i].failures))
            status = DF_BENCH_FAILED;
    if (status == DF_BENCH_FAILED)
        fprintf(stderr, "dfbench sched: some runs failed or gave wrong results (see the table)\n");
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
