/* dfbench decode: decode frame rate over worker counts, dfmedia's policies
 * next to libavcodec's own threads and GStreamer's avdec_* (and dfdec when
 * its plugin is found), with the fixed-size speed-up of Amdahl and the
 * scaled-size figure of Gustafson derived from it.
 *
 * Method.  Packets are demuxed once into memory; in-process runs (libavcodec
 * and dfmedia) time send/receive of every packet of the clip and count the
 * frames out.  GStreamer runs (avdec, dfdec) are one pipeline each,
 * filesrc ! parsebin ! DECODER ! fakesink sync=false, timed from PLAYING to
 * the last buffer reaching the sink (so they include demuxing, parsing and
 * a pipeline start of a few milliseconds, which in-process runs do not).
 * "N workers" are the first N cores (affinity.h): dfsched gets that CPU
 * list, and the calling thread is confined to the same CPUs before a peer
 * creates its threads, so libavcodec's slice/frame threads and GStreamer's
 * streaming threads inherit them.  Every configuration is sampled once per
 * repeat, round robin with the start rotated each repeat, so that noise from
 * other users of the machine falls on all alike; every sample is kept
 * (min/median/max), failed ones are reported, never dropped.
 *
 * Speed-up S(N) = T(1)/T(N) = fps(N)/fps_1, where fps_1 is single-threaded
 * libavcodec on the same clip (the serial program, the honest T(1)).
 * Amdahl: 1/S = s + (1-s)/N, s fitted by least squares over the measured N
 * (in the form 1/S - 1/N = s (1 - 1/N), one parameter, N = 1 adds nothing).
 * Karp-Flatt: e(N) = (1/S - 1/N) / (1 - 1/N) for each N > 1.  Gustafson:
 * the scaled speed-up N + (1 - N) s with the fitted s. */
#include "bench_media.h"
#include "dfbench.h"
#include "dfsched_trace.h"
#include "plot.h"
#include "report.h"

#include <errno.h>
#include <libavutil/log.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "dfbench decode"

#define DEFAULT_REPEAT 5
#define MAX_WORKERS    1024

typedef enum DfImplKind {
    DF_IMPL_LAVC = 0, /* libavcodec in process (thread_type below) */
    DF_IMPL_DFMEDIA,  /* dfmedia on a dfsched policy */
    DF_IMPL_AVDEC,    /* GStreamer avdec_* */
    DF_IMPL_DFDEC,    /* GStreamer dfdec */
} DfImplKind;

typedef struct DfDecImpl {
    char name[48]; /* "ffmpeg", "ffmpeg-slice", "dfmedia/cost-local", ... */
    DfImplKind kind;
    int lavc_type;      /* 0: one thread (the baseline), FF_THREAD_SLICE/FRAME; LAVC_STREAMS */
    const char *policy; /* dfmedia and dfdec */
    bool baseline;      /* T(1): runs at one worker only */
} DfDecImpl;

typedef struct DfDecConfig {
    int input, impl, workers;
    bool oversubscribed;
    int n;                   /* samples taken (failed ones as NAN) */
    double *fps, *p50, *p99; /* per sample */
    double *cpu;             /* per sample: CPU ms per frame, NAN where not measured */
    uint64_t frames;         /* of the last good sample */
    int failures;
    char *error;         /* the first failure */
    char threading[160]; /* dfmedia: threading in use and why */
    /* --trace-overhead (dfmedia only): the same decode with tracing on, in
     * the same repeat as the untraced sample. */
    int n_on;
    double *fps_on;
    uint64_t dropped; /* trace events lost to full buffers */
} DfDecConfig;

typedef struct DfDecOpts {
    gchar **inputs;
    char *workers, *policy, *peers, *json, *csv, *plot, *trace, *threading, *trace_workers;
    char *trace_policy;
    int repeat, poll_us, thread_count, in_flight, trace_runs;
    gboolean trace_overhead;
} DfDecOpts;

/* One --trace run: a worker count's k-th traced decode. */
typedef struct DfTraceRun {
    int workers;
    int run;    /* 0 .. --trace-runs - 1 */
    int repeat; /* the repeat it ran in (-1: not yet) */
    char *path;
    double fps;          /* the traced run's own fps; NAN: failed */
    char threading[160]; /* the traced run's threading and why */
} DfTraceRun;

typedef struct DfDecBench {
    DfDecOpts o;
    DfCpuMap map;
    DfClip *clips;
    int n_clips;
    int *workers;
    int n_workers;
    DfThreading threading;
    DfDecImpl *impls;
    int n_impls;
    GArray *configs; /* DfDecConfig */
    /* --trace: --trace-runs traced runs per count of --trace-workers,
     * spread over the repeats, each to its own file. */
    int n_traces;
    int trace_impl; /* the dfmedia implementation traced */
    DfTraceRun *traces;
    bool trace_failed;
    double load_start[3], load_end[3];
    int64_t start_ns, end_ns;
} DfDecBench;

/* -------------------------------------------------------------- options */

/* FILE, with .wN before its extension when several worker counts are
 * traced and .rK (K from 1) when each is traced several times. */
static char *trace_path(const char *file, int workers, bool several_workers, int run,
                        bool several_runs)
{
    char tag[32] = "";
    if (several_workers)
        snprintf(tag, sizeof(tag), ".w%d", workers);
    if (several_runs)
        snprintf(tag + strlen(tag), sizeof(tag) - strlen(tag), ".r%d", run + 1);
    const char *base = strrchr(file, '/');
    const char *dot = strrchr(base ? base + 1 : file, '.');
    if (!dot)
        return g_strdup_printf("%s%s", file, tag);
    return g_strdup_printf("%.*s%s%s", (int)(dot - file), file, tag, dot);
}

static int parse_trace_workers(DfDecBench *b)
{
    int *v = NULL;
    int n = 0;
    if (b->o.trace_workers) {
        n = df_cli_parse_int_list(b->o.trace_workers, 1024, &v);
        if (n < 0)
            return df_cli_usage(PROG, "bad --trace-workers \"%s\" (e.g. 1,2)", b->o.trace_workers);
        for (int i = 0; i < n; i++) {
            bool found = false;
            for (int w = 0; w < b->n_workers; w++)
                found |= b->workers[w] == v[i];
            if (!found) {
                const int bad = v[i];
                g_free(v);
                return df_cli_usage(PROG, "bad --trace-workers \"%s\": %d is not one of --workers",
                                    b->o.trace_workers, bad);
            }
        }
    } else {
        n = 1;
        v = g_new(int, 1);
        v[0] = 1;
        for (int w = 0; w < b->n_workers; w++)
            v[0] = b->workers[w] > v[0] ? b->workers[w] : v[0];
    }
    const int runs = b->o.trace_runs;
    b->n_traces = n * runs;
    b->traces = g_new0(DfTraceRun, (gsize)b->n_traces);
    for (int k = 0, i = 0; k < runs; k++)
        for (int w = 0; w < n; w++, i++) {
            b->traces[i] = (DfTraceRun){.workers = v[w],
                                        .run = k,
                                        .repeat = -1,
                                        .path = trace_path(b->o.trace, v[w], n > 1, k, runs > 1),
                                        .fps = NAN};
        }
    g_free(v);
    return DF_BENCH_OK;
}

static const char *const known_peers[] = {"ffmpeg-slice", "ffmpeg-frame", "avdec", "dfdec",
                                          "ffmpeg-streams"};
/* ffmpeg-streams: N independent single-threaded decodes of the clip at
 * once, one per core.  Their aggregate fps is what N cores carry with no
 * parallelism inside a stream, and fps(1) / (fps(N) / N) is how much
 * slower a core decodes while the others are busy too (shared caches,
 * memory bandwidth, a host's SMT siblings): dfsim's --slowdown. */
#define LAVC_STREAMS  (-1)
#define N_KNOWN_PEERS ((int)(sizeof(known_peers) / sizeof(known_peers[0])))

static void add_impl(GArray *v, const char *name, DfImplKind kind, int lavc_type,
                     const char *policy, bool baseline)
{
    DfDecImpl im = {.kind = kind, .lavc_type = lavc_type, .policy = policy, .baseline = baseline};
    snprintf(im.name, sizeof(im.name), "%s", name);
    g_array_append_val(v, im);
}

/* Policies of dfsched by name ("all", "none" or a list); NULL with a message
 * in `err` for an unknown one.  The returned names are dfsched's own. */
static GPtrArray *parse_policies(const char *spec, GError **err)
{
    const char *const *names = df_policy_names();
    GPtrArray *out = g_ptr_array_new();
    gchar **parts = g_strsplit(spec ? spec : "all", ",", -1);
    for (int i = 0; parts[i]; i++) {
        const char *want = g_strstrip(parts[i]);
        if (!*want) {
            /* "fifo,,steal" is a typo, not a request for nothing (that is none). */
            g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "bad --policy \"%s\": empty item (none selects no policy)", spec);
            g_ptr_array_free(out, TRUE);
            out = NULL;
            break;
        }
        if (strcmp(want, "none") == 0)
            continue;
        bool found = false;
        for (int p = 0; names[p]; p++)
            if (strcmp(want, "all") == 0 || strcmp(want, names[p]) == 0) {
                g_ptr_array_add(out, (gpointer)names[p]);
                found = true;
            }
        if (!found) {
            GString *list = g_string_new(NULL);
            for (int p = 0; names[p]; p++)
                g_string_append_printf(list, "%s%s", p ? ", " : "", names[p]);
            g_set_error(err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "bad --policy: unknown policy \"%s\" (one of: all, %s, none)", want,
                        list->str);
            g_string_free(list, TRUE);
            g_ptr_array_free(out, TRUE);
            out = NULL;
            break;
        }
    }
    g_strfreev(parts);
    return out;
}

static bool parse_impls(DfDecBench *b, GError **err)
{
    GArray *v = g_array_new(FALSE, TRUE, sizeof(DfDecImpl));
    bool ok = true;
    add_impl(v, "ffmpeg", DF_IMPL_LAVC, 0, NULL, true);
    GPtrArray *pol = parse_policies(b->o.policy, err);
    if (!pol) {
        ok = false;
        goto cleanup;
    }
    for (guint p = 0; p < pol->len; p++) {
        char name[48];
        snprintf(name, sizeof(name), "dfmedia/%s", (const char *)pol->pdata[p]);
        add_impl(v, name, DF_IMPL_DFMEDIA, 0, pol->pdata[p], false);
    }
    /* Default: every peer this build and machine have. */
    gchar **pe =
        g_strsplit(b->o.peers       ? b->o.peers
                   : df_gst_built() ? "ffmpeg-slice,ffmpeg-frame,ffmpeg-streams,avdec,dfdec"
                                    : "ffmpeg-slice,ffmpeg-frame,ffmpeg-streams",
                   ",", -1);
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
        int k = 0;
        while (k < N_KNOWN_PEERS && strcmp(known_peers[k], want) != 0)
            k++;
        if (k == N_KNOWN_PEERS) {
            g_set_error(
                err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "bad --peers: unknown peer \"%s\" (ffmpeg-slice, ffmpeg-frame, ffmpeg-streams, "
                "avdec, dfdec or none)",
                want);
            ok = false;
        } else if (k == 0) {
            add_impl(v, "ffmpeg-slice", DF_IMPL_LAVC, FF_THREAD_SLICE, NULL, false);
        } else if (k == 1) {
            add_impl(v, "ffmpeg-frame", DF_IMPL_LAVC, FF_THREAD_FRAME, NULL, false);
        } else if (k == 4) {
            add_impl(v, "ffmpeg-streams", DF_IMPL_LAVC, LAVC_STREAMS, NULL, false);
        } else if (!df_gst_built()) {
            g_set_error(
                err, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                "bad --peers: peer \"%s\" needs GStreamer, which was missing when meson configured "
                "dfbench",
                want);
            ok = false;
        } else if (k == 2) {
            if (df_gst_have("parsebin") && df_gst_have("fakesink"))
                add_impl(v, "avdec", DF_IMPL_AVDEC, 0, NULL, false);
            else
                fprintf(stderr,
                        "dfbench decode: warning: skipping avdec: GStreamer's parsebin or fakesink "
                        "is not installed\n");
        } else if (!df_gst_have("dfdec")) {
            /* Not an error: the element comes from another part of the
             * project and may not be built yet. */
            fprintf(stderr,
                    "dfbench decode: warning: skipping dfdec: no loadable GStreamer element "
                    "\"dfdec\" (set GST_PLUGIN_PATH to the elements/ directory of the "
                    "build dfbench belongs to)\n");
        } else {
            for (guint p = 0; p < pol->len; p++) {
                char name[48];
                snprintf(name, sizeof(name), "dfdec/%s", (const char *)pol->pdata[p]);
                add_impl(v, name, DF_IMPL_DFDEC, 0, pol->pdata[p], false);
            }
        }
    }
    g_strfreev(pe);
cleanup:
    if (pol)
        g_ptr_array_free(pol, TRUE);
    b->n_impls = (int)v->len;
    b->impls = (DfDecImpl *)g_array_free(v, FALSE);
    return ok;
}

static int parse_options(DfDecBench *b, int argc, char **argv)
{
    DfDecOpts *o = &b->o;
    o->poll_us = -2; /* not given: dfsched's default */
    GOptionEntry entries[] = {
        {"input", 'i', 0, G_OPTION_ARG_FILENAME_ARRAY, &o->inputs,
         "A clip to decode (H.264, HEVC, MPEG-2; any container libavformat reads); repeat for "
         "more",
         "FILE"},
        {"workers", 'w', 0, G_OPTION_ARG_STRING, &o->workers,
         "Worker counts, e.g. 1,2 or 1-4 (default: 1 to the number of cores); counts above the "
         "machine's PUs are marked oversubscribed",
         "LIST"},
        {"policy", 'p', 0, G_OPTION_ARG_STRING, &o->policy,
         "dfmedia's dfsched policies: all (default), none, or a list of fifo, steal, cost, "
         "cost-local, learned",
         "LIST"},
        {"peers", 0, 0, G_OPTION_ARG_STRING, &o->peers,
         "Peers: ffmpeg-slice, ffmpeg-frame (libavcodec's own threads, in process), "
         "ffmpeg-streams (N independent single-threaded decodes at once: what N cores carry "
         "without parallelism in a stream, and how much a busy core slows the others), avdec "
         "(GStreamer avdec_*), dfdec (GStreamer, when the element is found); none; default: all "
         "of them this build has. Single-threaded libavcodec (T(1)) always runs",
         "LIST"},
        {"repeat", 'r', 0, G_OPTION_ARG_INT, &o->repeat,
         "Samples per configuration (default 5), interleaved across configurations", "N"},
        {"threading", 0, 0, G_OPTION_ARG_STRING, &o->threading,
         "dfmedia threading: auto (default), slice, frame, none", "MODE"},
        {"thread-count", 0, 0, G_OPTION_ARG_INT, &o->thread_count,
         "dfmedia's libavcodec thread_count in slice mode (default 0: dfmedia's choice)", "N"},
        {"in-flight", 0, 0, G_OPTION_ARG_INT, &o->in_flight,
         "dfmedia's packets queued ahead of output (default 0: dfmedia's, 2; 1 = no overlap of "
         "frame k+1's decode with frame k's bands)",
         "N"},
        {"poll-us", 0, 0, G_OPTION_ARG_INT, &o->poll_us,
         "dfsched idle spin before parking, microseconds; -1: poll mode (default: dfsched's "
         "default, parking like the peers' threads)",
         "N"},
        {"json", 'j', 0, G_OPTION_ARG_FILENAME, &o->json, "Write the results as JSON to FILE",
         "FILE"},
        {"csv", 0, 0, G_OPTION_ARG_FILENAME, &o->csv, "Write the results as CSV to FILE", "FILE"},
        {"plot", 0, 0, G_OPTION_ARG_FILENAME, &o->plot,
         "Plot fps and speed-up against workers (.svg or .png)", "FILE"},
        {"trace-overhead", 0, 0, G_OPTION_ARG_NONE, &o->trace_overhead,
         "Decode every dfmedia configuration a second time per repeat with tracing on (a fresh "
         "scheduler whose trace buffers hold the whole clip; off and on alternate which runs "
         "first) and report the frame rate lost to tracing",
         NULL},
        {"trace", 0, 0, G_OPTION_ARG_FILENAME, &o->trace,
         "In the middle of the repeats (so in the same stretch of machine load as the samples), "
         "decode the first clip once more on the first policy with tracing on, and write the "
         "dfsched trace (Chrome/Perfetto JSON, dfsim's input) to FILE; that run is not a sample",
         "FILE"},
        {"trace-workers", 0, 0, G_OPTION_ARG_STRING, &o->trace_workers,
         "Worker counts to trace, from --workers (default: the largest); with more than one, "
         "each trace goes to FILE with .wN before its extension (trace.w1.json, ...)",
         "LIST"},
        {"trace-policy", 0, 0, G_OPTION_ARG_STRING, &o->trace_policy,
         "The dfmedia policy traced, one of --policy (default: the first)", "NAME"},
        {"trace-runs", 0, 0, G_OPTION_ARG_INT, &o->trace_runs,
         "Traced runs per traced worker count (default 1, at most --repeat), spread over the "
         "repeats as the samples are; with more than one, each goes to FILE with .rK before its "
         "extension (trace.w1.r1.json, ...), and dfsim given them all reports the median "
         "projection, as dfbench reports the median sample",
         "N"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    g_set_prgname("dfbench decode");
    GOptionContext *ctx =
        g_option_context_new("- decode fps over worker counts, policies and peers");
    g_option_context_set_summary(
        ctx,
        "Decodes each clip with single-threaded libavcodec (T(1)), dfmedia on every dfsched\n"
        "policy and worker count, libavcodec's own slice and frame threads at the same thread\n"
        "count and GStreamer's avdec_* (max-threads = workers), and reports min/median/max fps,\n"
        "dfmedia's frame latency (packet in -> frame out, p50/p99), the speed-up\n"
        "S(N) = T(1)/T(N), Amdahl's serial fraction s fitted to it, the Karp-Flatt metric\n"
        "e(N) = (1/S - 1/N)/(1 - 1/N) and Gustafson's scaled speed-up N + (1 - N) s.");
    g_option_context_set_description(
        ctx, "In-process runs decode packets held in memory, each on a decoder warmed up by the\n"
             "clip's first 24 packets (then flushed), timing one whole pass; GStreamer runs are a\n"
             "pipeline filesrc ! parsebin ! DEC ! fakesink sync=false (demux and start-up\n"
             "included).  Configurations are\n"
             "interleaved across repeats; every sample is reported.  Timings are never pass/fail.\n"
             "\n"
             "Example: dfbench decode --input clip.mkv --workers 1,2 --policy all\n"
             "         --peers ffmpeg-slice,ffmpeg-frame,avdec --repeat 5 --json out.json\n"
             "         --csv out.csv --plot out.svg");
    g_option_context_add_main_entries(ctx, entries, NULL);
    GError *err = NULL;
    int status = DF_BENCH_OK;
    if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
        status = df_cli_usage(PROG, "%s", err->message);
        goto cleanup;
    }
    if (argc > 1) {
        status = df_cli_usage(PROG, "unexpected argument \"%s\"", argv[1]);
        goto cleanup;
    }
    if (!o->inputs || !o->inputs[0]) {
        status = df_cli_usage(PROG, "no --input FILE given");
        goto cleanup;
    }
    /* Each bad value by name: a list of every rule hides which one broke. */
    const struct {
        const char *flag;
        int value, min;
        const char *zero;
    } mins[] = {
        {"--repeat", o->repeat, 0, "0: the default"},
        {"--thread-count", o->thread_count, 0, "0: dfmedia's choice"},
        {"--in-flight", o->in_flight, 0, "0: dfmedia's"},
        {"--poll-us", o->poll_us, -2, "-1: poll mode"},
        {"--trace-runs", o->trace_runs, 0, "0: the default, 1"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(mins); i++)
        if (mins[i].value < mins[i].min) {
            status = df_cli_usage(PROG, "bad %s %d (%d or more; %s)", mins[i].flag, mins[i].value,
                                  mins[i].min == -2 ? -1 : mins[i].min, mins[i].zero);
            goto cleanup;
        }
    if (!o->repeat)
        o->repeat = DEFAULT_REPEAT;
    if (o->trace_runs && !o->trace) {
        status = df_cli_usage(PROG, "--trace-runs needs --trace FILE");
        goto cleanup;
    }
    if (!o->trace_runs)
        o->trace_runs = 1;
    if (o->trace_runs > o->repeat) {
        status = df_cli_usage(PROG, "bad --trace-runs %d: at most --repeat (%d)", o->trace_runs,
                              o->repeat);
        goto cleanup;
    }
    if (o->threading && df_threading_parse(o->threading, &b->threading) < 0) {
        status =
            df_cli_usage(PROG, "bad --threading \"%s\" (auto, slice, frame, none)", o->threading);
        goto cleanup;
    }
    if (o->workers) {
        b->n_workers = df_cli_parse_int_list(o->workers, MAX_WORKERS, &b->workers);
        if (b->n_workers < 0) {
            status = df_cli_usage(PROG, "bad --workers \"%s\" (e.g. 1,2,4 or 1-4, 1 to %d)",
                                  o->workers, MAX_WORKERS);
            goto cleanup;
        }
    } else {
        b->n_workers = b->map.n_cores;
        b->workers = g_new(int, (gsize)b->n_workers);
        for (int i = 0; i < b->n_workers; i++)
            b->workers[i] = i + 1;
    }
    const DfCliOption lists[] = {{"--policy", o->policy}, {"--peers", o->peers}};
    status = df_cli_check_lists(PROG, lists, G_N_ELEMENTS(lists));
    if (status != DF_BENCH_OK)
        goto cleanup;
    if (!parse_impls(b, &err)) {
        status = df_cli_usage(PROG, "%s", err ? err->message : "nothing to run");
        goto cleanup;
    }
    bool have_dfmedia = false;
    for (int i = 0; i < b->n_impls; i++)
        have_dfmedia |= b->impls[i].kind == DF_IMPL_DFMEDIA;
    if (o->trace && !have_dfmedia) {
        /* write_trace() runs on a dfmedia policy: say so before the runs. */
        status = df_cli_usage(PROG, "--trace needs a dfmedia policy (--policy is \"%s\")",
                              o->policy ? o->policy : "");
        goto cleanup;
    }
    static const char *const plot_suffixes[] = {".svg", ".png", NULL};
    if (o->plot && !df_cli_has_suffix(o->plot, plot_suffixes)) {
        status = df_cli_usage(PROG, "bad --plot \"%s\": use a .svg or .png name", o->plot);
        goto cleanup;
    }
    /* The outputs are written after minutes of runs: refuse them now. */
    if (o->trace_workers && !o->trace) {
        status = df_cli_usage(PROG, "--trace-workers needs --trace FILE");
        goto cleanup;
    }
    if (o->trace_policy && !o->trace) {
        status = df_cli_usage(PROG, "--trace-policy needs --trace FILE");
        goto cleanup;
    }
    b->trace_impl = -1;
    for (int i = 0; i < b->n_impls && o->trace; i++)
        if (b->impls[i].kind == DF_IMPL_DFMEDIA && b->trace_impl < 0 &&
            (!o->trace_policy || strcmp(b->impls[i].policy, o->trace_policy) == 0))
            b->trace_impl = i;
    if (o->trace && b->trace_impl < 0) {
        status = df_cli_usage(PROG, "bad --trace-policy \"%s\": not one of --policy (\"%s\")",
                              o->trace_policy, o->policy ? o->policy : "all");
        goto cleanup;
    }
    if (o->trace && (status = parse_trace_workers(b)) != DF_BENCH_OK)
        goto cleanup;
    const DfCliOutput outs[] = {{"--json", o->json}, {"--csv", o->csv}, {"--plot", o->plot}};
    status = df_cli_check_outputs(PROG, outs, G_N_ELEMENTS(outs));
    if (status != DF_BENCH_OK)
        goto cleanup;
    for (int i = 0; i < b->n_traces && status == DF_BENCH_OK; i++) {
        const DfCliOutput t = {"--trace", b->traces[i].path};
        status = df_cli_check_outputs(PROG, &t, 1);
    }
    if (status != DF_BENCH_OK)
        goto cleanup;
    /* Clips last: a bad option is reported before seconds of demuxing. */
    int n_inputs = 0;
    while (o->inputs[n_inputs])
        n_inputs++;
    b->clips = g_new0(DfClip, (gsize)n_inputs);
    for (int i = 0; i < n_inputs; i++) {
        char msg[512];
        if (df_clip_load(o->inputs[i], &b->clips[i], msg, sizeof(msg)) < 0) {
            status = df_cli_fail(PROG, "%s", msg);
            goto cleanup;
        }
        b->n_clips++;
    }
cleanup:
    g_clear_error(&err);
    g_option_context_free(ctx);
    return status;
}

/* ------------------------------------------------------------------ runs */

typedef struct DfSample {
    double fps, p50, p99;
    double cpu; /* ms of CPU per frame over the timed pass */
    uint64_t frames;
    char threading[160];
    char error[256];
} DfSample;

static void sample_fail(DfSample *s, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static void sample_fail(DfSample *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->error, sizeof(s->error), fmt, ap);
    va_end(ap);
    s->fps = NAN;
}

/* `sync`: ffmpeg-streams' barrier, so that the timed passes overlap. */
static void run_lavc(const DfClip *c, int type, int threads, pthread_barrier_t *sync, DfSample *out)
{
    DfLavcRun r;
    df_clip_decode_lavc(c, type, threads, sync, &r);
    out->cpu = r.cpu_ms;
    out->frames = r.frames;
    out->fps = r.fps;
    if (r.error[0])
        sample_fail(out, "%s", r.error);
}

typedef struct DfStreamRun {
    const DfClip *clip;
    pthread_barrier_t *sync;
    DfSample out;
} DfStreamRun;

static void *stream_run(void *arg)
{
    DfStreamRun *r = arg;
    run_lavc(r->clip, 0, 1, r->sync, &r->out);
    return NULL;
}

/* ffmpeg-streams: `n` single-threaded decodes at once (threads inherit the
 * caller's CPU set of n cores); fps is their sum. */
static void run_lavc_streams(const DfClip *c, int n, DfSample *out)
{
    DfStreamRun *r = g_new0(DfStreamRun, (gsize)n);
    pthread_t *th = g_new0(pthread_t, (gsize)n);
    pthread_barrier_t sync;
    pthread_barrier_init(&sync, NULL, (unsigned)n);
    int started = 0;
    for (int i = 0; i < n; i++) {
        r[i] = (DfStreamRun){.clip = c, .sync = &sync, .out = {.fps = NAN, .cpu = NAN}};
        if (pthread_create(&th[i], NULL, stream_run, &r[i]) != 0)
            break;
        started++;
    }
    /* A thread that did not start would leave the others at the barrier. */
    for (int i = started; i < n; i++)
        pthread_barrier_wait(&sync);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&sync);
    out->fps = 0;
    out->frames = 0;
    double cpu_ms = 0;
    if (started < n)
        sample_fail(out, "pthread_create failed");
    for (int i = 0; i < started && !out->error[0]; i++) {
        if (r[i].out.error[0])
            sample_fail(out, "%s", r[i].out.error);
        out->fps += r[i].out.fps;
        out->frames += r[i].out.frames;
        cpu_ms += r[i].out.cpu * (double)r[i].out.frames;
    }
    out->cpu = out->frames ? cpu_ms / (double)out->frames : NAN;
    g_free(th);
    g_free(r);
}

static int new_sched(const DfDecBench *b, const char *policy, int workers, size_t trace_capacity,
                     DfSched **out, DfError *err)
{
    char cpus[256];
    df_cpu_map_list(&b->map, workers, cpus, sizeof(cpus));
    DfSchedConfig sc;
    df_sched_config_init(&sc);
    sc.n_workers = workers;
    sc.policy = policy;
    sc.cpuset = cpus;
    if (b->o.poll_us >= -1)
        sc.poll_us = b->o.poll_us;
    sc.trace_capacity = trace_capacity;
    return df_sched_new(&sc, out, err);
}

/* All of `n` packets of `c` into `dec` and its frames out; the count. */
static uint64_t decode_packets(DfDecoder *dec, const DfClip *c, int n, AVFrame *f)
{
    uint64_t frames = 0;
    for (int i = 0; i < n; i++) {
        while (df_decoder_send_packet(dec, c->pkts[i]) == AVERROR(EAGAIN))
            if (df_decoder_receive_frame(dec, f) == 0)
                frames++;
        while (df_decoder_try_receive_frame(dec, f) == 0)
            frames++;
    }
    df_decoder_send_packet(dec, NULL);
    while (df_decoder_receive_frame(dec, f) == 0)
        frames++;
    return frames;
}

/* One dfmedia decode of the clip on `s`: packets sent as fast as the
 * decoder takes them, frames taken as soon as they are ready; after the
 * warm-up, with the trace on when `trace_capacity` is set. */
static void run_df(const DfDecBench *b, DfSched *s, const DfClip *c, size_t trace_capacity,
                   DfSample *out)
{
    DfDecoderConfig cfg;
    df_decoder_config_init(&cfg);
    cfg.threading = b->threading;
    cfg.thread_count = b->o.thread_count;
    if (b->o.in_flight > 0)
        cfg.max_in_flight = b->o.in_flight;
    cfg.log_level = AV_LOG_ERROR;
    DfError err = {0};
    DfDecoder *dec = NULL;
    AVFrame *f = av_frame_alloc();
    if (!f) {
        sample_fail(out, "out of memory");
        goto cleanup;
    }
    if (df_decoder_new(s, c->par, c->tb, &cfg, &dec, &err) < 0) {
        sample_fail(out, "%s", err.msg);
        goto cleanup;
    }
    decode_packets(dec, c, df_clip_warmup_packets(c), f);
    df_decoder_flush(dec);
    df_decoder_reset_latency(dec);
    if (trace_capacity && df_sched_trace_start(s, trace_capacity) < 0) {
        sample_fail(out, "cannot start the trace: out of memory");
        goto cleanup;
    }
    const int64_t c0 = df_report_cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
    const int64_t t0 = df_now_ns();
    const uint64_t frames = decode_packets(dec, c, c->n_pkts, f);
    const int64_t t1 = df_now_ns();
    /* The workers' idle spin included: CPU the decode kept from others. */
    out->cpu = df_cpu_ms_per_frame(c0, df_report_cpu_ns(CLOCK_PROCESS_CPUTIME_ID), frames);
    DfDecoderStats st;
    df_decoder_stats(dec, &st);
    const char *reason = NULL;
    const char *mode = df_decoder_threading(dec, &reason);
    snprintf(out->threading, sizeof(out->threading), "%s%s%s", mode, reason ? ": " : "",
             reason ? reason : "");
    out->frames = frames;
    out->fps = frames ? (double)frames / ((double)(t1 - t0) / 1e9) : NAN;
    out->p50 = st.latency_p50_ms;
    out->p99 = st.latency_p99_ms;
    if (!frames)
        sample_fail(out, "no frames decoded");
    else if (st.decode_errors)
        sample_fail(out, "%llu decode errors", (unsigned long long)st.decode_errors);
cleanup:
    av_frame_free(&f);
    df_decoder_free(&dec);
}

static void run_gst(const DfDecBench *b, const DfClip *c, const DfDecImpl *im, int workers,
                    DfSample *out)
{
    char decoder[160];
    if (im->kind == DF_IMPL_AVDEC) {
        const char *name = df_gst_avdec_name(c->par->codec_id);
        if (!name) {
            sample_fail(out, "no avdec element for %s", avcodec_get_name(c->par->codec_id));
            return;
        }
        snprintf(decoder, sizeof(decoder), "%s max-threads=%d", name, workers);
    } else {
        /* A scheduler per pipeline, like dfmedia's runs: a process-wide
         * one would keep the first run's worker count. */
        snprintf(decoder, sizeof(decoder), "dfdec n-workers=%d policy=%s%s", workers, im->policy,
                 df_gst_has_property("dfdec", "shared-scheduler") ? " shared-scheduler=false" : "");
    }
    DfGstRun run = {.path = c->path, .decoder = decoder, .map = &b->map, .cpus = workers};
    DfGstResult res;
    if (df_gst_run(&run, 1, &res) < 0 || res.error[0]) {
        sample_fail(out, "%s", res.error[0] ? res.error : "pipeline failed");
        return;
    }
    out->frames = res.frames;
    out->fps = res.fps;
}

/* Trace events per worker to hold a whole decode of `c`: a frame makes
 * about 20 (D, slice jobs, bands, O), which may all run on one worker. */
static size_t clip_trace_capacity(const DfClip *c)
{
    return (size_t)c->n_pkts * 64 + 4096;
}

/* A dfmedia sample on a fresh scheduler, traced or not; a traced one
 * counts the events its buffers could not hold into cf->dropped. */
static void run_dfmedia(DfDecBench *b, DfDecConfig *cf, bool traced, DfSample *out)
{
    const DfClip *c = &b->clips[cf->input];
    DfSched *sched = NULL;
    DfError err = {0};
    if (new_sched(b, b->impls[cf->impl].policy, cf->workers, 0, &sched, &err) < 0) {
        sample_fail(out, "%s", err.msg);
        return;
    }
    run_df(b, sched, c, traced ? clip_trace_capacity(c) : 0, out);
    DfTrace t;
    if (traced && df_sched_trace_collect(sched, &t) == 0) {
        cf->dropped += t.dropped;
        df_trace_free(&t);
    }
    df_sched_unref(sched);
}

static void run_sample(DfDecBench *b, DfDecConfig *cf)
{
    const DfClip *c = &b->clips[cf->input];
    const DfDecImpl *im = &b->impls[cf->impl];
    DfSample s = {.fps = NAN, .p50 = NAN, .p99 = NAN, .cpu = NAN};
    DfAffinity saved;
    df_affinity_save(&saved);
    /* The caller's thread too: it runs the packet loop (and, for peers,
     * creates the threads that inherit its CPUs). */
    df_bench_confine(&b->map, cf->workers);
    switch (im->kind) {
    case DF_IMPL_LAVC:
        if (im->lavc_type == LAVC_STREAMS)
            run_lavc_streams(c, cf->workers, &s);
        else
            run_lavc(c, im->lavc_type, cf->workers, NULL, &s);
        break;
    case DF_IMPL_DFMEDIA: {
        if (!cf->fps_on) {
            run_dfmedia(b, cf, false, &s);
            break;
        }
        /* Off and on back to back, the first of the pair alternating
         * with the repeat, so that a drift of the load favours neither. */
        const bool on_first = (cf->n + cf->impl) % 2 == 1;
        DfSample on = {.fps = NAN, .p50 = NAN, .p99 = NAN, .cpu = NAN};
        run_dfmedia(b, cf, on_first, on_first ? &on : &s);
        run_dfmedia(b, cf, !on_first, on_first ? &s : &on);
        cf->fps_on[cf->n_on++] = on.error[0] ? NAN : on.fps;
        if (on.error[0] && !s.error[0])
            snprintf(s.error, sizeof(s.error), "traced: %.200s", on.error);
        break;
    }
    case DF_IMPL_AVDEC:
    case DF_IMPL_DFDEC:
        run_gst(b, c, im, cf->workers, &s);
        break;
    }
    df_affinity_restore(&saved);
    const int i = cf->n++;
    cf->fps[i] = s.fps;
    cf->p50[i] = s.p50;
    cf->p99[i] = s.p99;
    cf->cpu[i] = s.error[0] ? NAN : s.cpu;
    if (s.error[0]) {
        cf->failures++;
        if (!cf->error)
            cf->error = g_strdup(s.error);
    } else {
        cf->frames = s.frames;
    }
    if (s.threading[0])
        snprintf(cf->threading, sizeof(cf->threading), "%s", s.threading);
}

static void configs_init(DfDecBench *b)
{
    b->configs = g_array_new(FALSE, TRUE, sizeof(DfDecConfig));
    for (int in = 0; in < b->n_clips; in++)
        for (int w = 0; w < b->n_workers; w++)
            for (int i = 0; i < b->n_impls; i++) {
                /* T(1) is one configuration per clip, whatever --workers. */
                if (b->impls[i].baseline && w > 0)
                    continue;
                DfDecConfig cf = {
                    .input = in,
                    .impl = i,
                    .workers = b->impls[i].baseline ? 1 : b->workers[w],
                };
                cf.oversubscribed = df_cpu_map_oversubscribed(&b->map, cf.workers);
                cf.fps = g_new(double, (gsize)b->o.repeat);
                cf.p50 = g_new(double, (gsize)b->o.repeat);
                cf.p99 = g_new(double, (gsize)b->o.repeat);
                cf.cpu = g_new(double, (gsize)b->o.repeat);
                if (b->o.trace_overhead && b->impls[i].kind == DF_IMPL_DFMEDIA)
                    cf.fps_on = g_new(double, (gsize)b->o.repeat);
                g_array_append_val(b->configs, cf);
            }
}

static void configs_free(DfDecBench *b)
{
    if (!b->configs)
        return;
    for (guint i = 0; i < b->configs->len; i++) {
        DfDecConfig *cf = &g_array_index(b->configs, DfDecConfig, i);
        g_free(cf->fps);
        g_free(cf->p50);
        g_free(cf->cpu);
        g_free(cf->p99);
        g_free(cf->fps_on);
        g_free(cf->error);
    }
    g_array_free(b->configs, TRUE);
    b->configs = NULL;
}

/* The --trace runs: the first clip on --trace-policy (the first dfmedia
 * policy), once per traced worker count and run, with the scheduler's
 * trace on.  Not samples: the trace's cost is in them (dfsim replays what
 * the traced run did). */
static void write_trace(DfDecBench *b, int i, int repeat)
{
    const int impl = b->trace_impl;
    DfTraceRun *t = &b->traces[i];
    const int workers = t->workers;
    const char *path = t->path;
    DfSched *s = NULL;
    DfError err = {0};
    DfAffinity saved;
    df_affinity_save(&saved);
    df_bench_confine(&b->map, workers);
    DfSample smp = {.fps = NAN};
    t->repeat = repeat;
    if (new_sched(b, b->impls[impl].policy, workers, 0, &s, &err) < 0) {
        fprintf(stderr, "\ndfbench decode: error: --trace: %s\n", err.msg);
        goto out;
    }
    run_df(b, s, &b->clips[0], clip_trace_capacity(&b->clips[0]), &smp);
    if (smp.error[0]) {
        fprintf(stderr, "\ndfbench decode: error: --trace run: %s\n", smp.error);
        goto out;
    }
    if (df_sched_trace_write(s, path, &err) < 0) {
        fprintf(stderr, "\ndfbench decode: error: cannot write trace %s: %s\n", path, err.msg);
        goto out;
    }
    t->fps = smp.fps;
    snprintf(t->threading, sizeof(t->threading), "%s", smp.threading);
out:
    if (s)
        df_sched_unref(s);
    df_affinity_restore(&saved);
    b->trace_failed |= isnan(t->fps);
}

/* The traced run k of a worker count goes in repeat (2k + 1) R / 2N (one
 * run: halfway), right before that repeat's first dfmedia sample of the
 * first clip at that count: next to the samples it is compared with, in
 * the same stretch of machine load (dfsim pairs them by repeat). */
static void traces_before(DfDecBench *b, const DfDecConfig *cf, int r, DfProgress *prog)
{
    if (cf->input != 0 || b->impls[cf->impl].kind != DF_IMPL_DFMEDIA)
        return;
    for (int i = 0; i < b->n_traces; i++) {
        const int k = b->traces[i].run;
        if (b->traces[i].repeat >= 0 || b->traces[i].workers != cf->workers ||
            (2 * k + 1) * b->o.repeat / (2 * b->o.trace_runs) != r)
            continue;
        df_progress_step(prog, "traced run, %d worker%s", cf->workers, cf->workers == 1 ? "" : "s");
        write_trace(b, i, r);
    }
}

static void print_traces(const DfDecBench *b)
{
    for (int i = 0; i < b->n_traces; i++)
        if (!isnan(b->traces[i].fps))
            printf("trace of %s on %s, %d worker%s (%.1f fps traced): %s\n", b->clips[0].name,
                   b->impls[b->trace_impl].name, b->traces[i].workers,
                   b->traces[i].workers == 1 ? "" : "s", b->traces[i].fps, b->traces[i].path);
}

static void run_all(DfDecBench *b)
{
    const int n = (int)b->configs->len;
    DfProgress prog;
    df_progress_begin(&prog, n * b->o.repeat + b->n_traces);
    df_report_loadavg(b->load_start);
    b->start_ns = df_now_ns();
    for (int r = 0; r < b->o.repeat; r++) {
        for (int k = 0; k < n; k++) {
            /* Rotated each repeat so that no configuration always runs
             * first (or right after the same neighbour). */
            DfDecConfig *cf = &g_array_index(b->configs, DfDecConfig, (k + r) % n);
            df_progress_step(&prog, "repeat %d/%d: %s, %s, %d worker%s", r + 1, b->o.repeat,
                             b->clips[cf->input].name, b->impls[cf->impl].name, cf->workers,
                             cf->workers == 1 ? "" : "s");
            traces_before(b, cf, r, &prog);
            run_sample(b, cf);
        }
    }
    b->end_ns = df_now_ns();
    for (int i = 0; i < b->n_traces; i++)
        if (b->traces[i].repeat < 0) {
            fprintf(stderr, "\ndfbench decode: error: --trace: %s was not recorded\n",
                    b->traces[i].path);
            b->trace_failed = true;
        }
    df_report_loadavg(b->load_end);
    df_progress_end(&prog);
}

/* ------------------------------------------------------------- speed-up */

typedef struct DfSpeedup {
    int input, impl;
    int n; /* worker counts of this implementation */
    int workers[64];
    double s[64];  /* S(N), NAN when not measured */
    double kf[64]; /* Karp-Flatt e(N), NAN for N = 1 */
    double gustafson[64];
    double amdahl_s; /* NAN without a point N > 1 */
} DfSpeedup;

static double median_fps(const DfDecConfig *cf)
{
    return df_summarize(cf->fps, cf->n).median;
}

static const DfDecConfig *find_config(const DfDecBench *b, int input, int impl, int workers)
{
    for (guint i = 0; i < b->configs->len; i++) {
        const DfDecConfig *cf = &g_array_index(b->configs, DfDecConfig, i);
        if (cf->input == input && cf->impl == impl && cf->workers == workers)
            return cf;
    }
    return NULL;
}

static double baseline_fps(const DfDecBench *b, int input)
{
    const DfDecConfig *cf = find_config(b, input, 0, 1);
    return cf ? median_fps(cf) : NAN;
}

static DfSpeedup speedup_of(const DfDecBench *b, int input, int impl)
{
    DfSpeedup sp = {.input = input, .impl = impl, .amdahl_s = NAN};
    const double t1 = baseline_fps(b, input);
    double sxy = 0, sxx = 0;
    for (int w = 0; w < b->n_workers && sp.n < 64; w++) {
        const DfDecConfig *cf = find_config(b, input, impl, b->workers[w]);
        if (!cf)
            continue;
        const int n = cf->workers;
        const double s = median_fps(cf) / t1;
        sp.workers[sp.n] = n;
        sp.s[sp.n] = s;
        sp.kf[sp.n] = NAN;
        if (n > 1 && isfinite(s) && s > 0) {
            const double x = 1 - 1.0 / n, y = 1 / s - 1.0 / n;
            sp.kf[sp.n] = y / x;
            sxy += x * y;
            sxx += x * x;
        }
        sp.n++;
    }
    if (sxx > 0)
        sp.amdahl_s = sxy / sxx;
    for (int i = 0; i < sp.n; i++)
        sp.gustafson[i] = sp.workers[i] + (1 - sp.workers[i]) * sp.amdahl_s;
    return sp;
}

/* The series shown first in the JSON's "speedup": dfmedia/cost-local when
 * it ran, else the first parallel implementation. */
static int headline_impl(const DfDecBench *b)
{
    for (int i = 0; i < b->n_impls; i++)
        if (strcmp(b->impls[i].name, "dfmedia/cost-local") == 0)
            return i;
    return b->n_impls > 1 ? 1 : 0;
}

/* --------------------------------------------------------------- output */

static void note_of(const DfDecBench *b, const DfDecConfig *cf, char *buf, size_t len)
{
    GString *s = g_string_new(NULL);
    if (cf->oversubscribed)
        g_string_append(s, "oversubscribed");
    const DfDecConfig *base = find_config(b, cf->input, 0, 1);
    if (base && base->frames && cf->frames && cf->frames != base->frames)
        g_string_append_printf(s, "%s%llu frames (1 thread: %llu)", s->len ? "; " : "",
                               (unsigned long long)cf->frames, (unsigned long long)base->frames);
    if (cf->failures)
        g_string_append_printf(s, "%sfailed %d/%d: %s", s->len ? "; " : "", cf->failures, cf->n,
                               cf->error);
    /* Only when not slice jobs as tasks; the reason is in the JSON. */
    if (b->impls[cf->impl].kind == DF_IMPL_DFMEDIA && strncmp(cf->threading, "slice", 5) != 0 &&
        cf->threading[0])
        g_string_append_printf(s, "%sthreading %.*s", s->len ? "; " : "",
                               (int)strcspn(cf->threading, ":"), cf->threading);
    snprintf(buf, len, "%s", s->str);
    g_string_free(s, TRUE);
}

static void print_header(const DfDecBench *b)
{
    char machine[1024];
    df_report_machine_line(machine, sizeof(machine));
    printf("dfbench decode on %s\n", machine);
    for (int i = 0; i < b->n_clips; i++) {
        const DfClip *c = &b->clips[i];
        printf("clip %s: %s %dx%d, %d packets\n", c->name, avcodec_get_name(c->par->codec_id),
               c->par->width, c->par->height, c->n_pkts);
    }
    printf("%d samples per configuration, interleaved; dfsched %s; dfmedia threading %s\n",
           b->o.repeat,
           b->o.poll_us == -1  ? "poll mode"
           : b->o.poll_us >= 0 ? "parking mode (--poll-us)"
                               : "default idle policy (spin, then park)",
           df_threading_name(b->threading));
}

/* fps untraced vs traced per dfmedia configuration (--trace-overhead). */
static void print_trace_overhead(const DfDecBench *b)
{
    static const char *const headers[] = {"clip",       "workers",  "impl", "fps off", "fps on",
                                          "overhead %", "paired %", "n",    "dropped"};
    DfTable *t = df_table_new(9, headers, "lrlrrrrrr");
    for (guint k = 0; k < b->configs->len; k++) {
        const DfDecConfig *cf = &g_array_index(b->configs, DfDecConfig, k);
        if (!cf->fps_on)
            continue;
        const DfSummary off = df_summarize(cf->fps, cf->n), on = df_summarize(cf->fps_on, cf->n_on);
        char workers[16], foff[32], fon[32], pct[32], paired[32], n[32], dropped[32];
        snprintf(workers, sizeof(workers), "%d", cf->workers);
        df_fmt_num(foff, sizeof(foff), off.median, 1);
        df_fmt_num(fon, sizeof(fon), on.median, 1);
        df_fmt_num(pct, sizeof(pct), df_overhead_pct(off.median, on.median, true), 2);
        df_fmt_num(paired, sizeof(paired),
                   df_overhead_pct_paired(cf->fps, cf->n, cf->fps_on, cf->n_on, true), 2);
        snprintf(n, sizeof(n), "%d/%d", off.n, on.n);
        snprintf(dropped, sizeof(dropped), "%llu", (unsigned long long)cf->dropped);
        const char *cells[] = {b->clips[cf->input].name,
                               workers,
                               b->impls[cf->impl].name,
                               foff,
                               fon,
                               pct,
                               paired,
                               n,
                               dropped};
        df_table_row(t, cells);
    }
    printf("\ntrace overhead (same repeats, fresh schedulers, tracing off vs on):\n");
    df_table_print(t, stdout);
    printf("overhead %%: fps off / fps on - 1 (medians; the time a frame takes longer traced); "
           "paired %%: median over repeats of each back-to-back pair's; dropped: trace events "
           "lost to full buffers\n");
    df_table_free(t);
}

static void print_table(const DfDecBench *b)
{
    static const char *const headers[] = {"clip",   "workers", "impl",    "fps",      "min",
                                          "max",    "n",       "speedup", "cpu ms/f", "p50 ms",
                                          "p99 ms", "frames",  "note"};
    DfTable *t = df_table_new(13, headers, "lrlrrrrrrrrrl");
    int last_input = -1;
    for (int in = 0; in < b->n_clips; in++)
        for (int w = 0; w < b->n_workers; w++)
            for (int i = 0; i < b->n_impls; i++) {
                const DfDecConfig *cf = find_config(b, in, i, b->workers[w]);
                if (!cf || (b->impls[i].baseline && w > 0))
                    continue;
                if (last_input >= 0 && last_input != in)
                    df_table_rule(t);
                last_input = in;
                const DfSummary fps = df_summarize(cf->fps, cf->n);
                char workers[16], med[32], mn[32], mx[32], n[16], sp[32], cpu[32], p50[32], p99[32],
                    frames[32], note[512];
                snprintf(workers, sizeof(workers), "%d", cf->workers);
                df_fmt_num(med, sizeof(med), fps.median, 1);
                df_fmt_num(mn, sizeof(mn), fps.min, 1);
                df_fmt_num(mx, sizeof(mx), fps.max, 1);
                snprintf(n, sizeof(n), "%d", fps.n);
                df_fmt_num(sp, sizeof(sp), fps.median / baseline_fps(b, in), 2);
                df_fmt_num(cpu, sizeof(cpu), df_summarize(cf->cpu, cf->n).median, 2);
                df_fmt_num(p50, sizeof(p50), df_summarize(cf->p50, cf->n).median, 1);
                df_fmt_num(p99, sizeof(p99), df_summarize(cf->p99, cf->n).median, 1);
                snprintf(frames, sizeof(frames), "%llu", (unsigned long long)cf->frames);
                note_of(b, cf, note, sizeof(note));
                const char *cells[] = {b->clips[in].name,
                                       workers,
                                       b->impls[i].name,
                                       med,
                                       mn,
                                       mx,
                                       n,
                                       sp,
                                       cpu,
                                       p50,
                                       p99,
                                       frames,
                                       note};
                df_table_row(t, cells);
            }
    df_table_print(t, stdout);
    df_table_free(t);
    printf("fps: median of the samples (min, max beside it); speedup: S(N) = fps / fps of "
           "single-threaded libavcodec (ffmpeg)\ncpu ms/f: CPU time per frame of all the "
           "implementation's threads (in-process ones)\np50/p99: dfmedia's packet-in to frame-out "
           "latency (median over samples)\n");

    bool header = false;
    for (int in = 0; in < b->n_clips; in++)
        for (int i = 1; i < b->n_impls; i++) {
            const DfSpeedup sp = speedup_of(b, in, i);
            if (isnan(sp.amdahl_s))
                continue;
            if (!header) {
                printf("\nAmdahl serial fraction s (fitted), Karp-Flatt e(N), Gustafson "
                       "N + (1-N)s:\n");
                header = true;
            }
            printf("  %-28s %-22s s = %6.3f ", b->clips[in].name, b->impls[i].name, sp.amdahl_s);
            for (int k = 0; k < sp.n; k++)
                if (sp.workers[k] > 1)
                    printf(" e(%d) = %6.3f  G(%d) = %5.2f", sp.workers[k], sp.kf[k], sp.workers[k],
                           sp.gustafson[k]);
            printf("\n");
        }
}

static void json_speedup_body(JsonBuilder *jb, const DfDecBench *b, const DfSpeedup *sp)
{
    json_builder_set_member_name(jb, "input");
    json_builder_add_string_value(jb, b->clips[sp->input].name);
    json_builder_set_member_name(jb, "impl");
    json_builder_add_string_value(jb, b->impls[sp->impl].name);
    df_json_double(jb, "t1_fps", baseline_fps(b, sp->input));
    json_builder_set_member_name(jb, "workers");
    json_builder_begin_array(jb);
    for (int i = 0; i < sp->n; i++)
        json_builder_add_int_value(jb, sp->workers[i]);
    json_builder_end_array(jb);
    df_json_double_array(jb, "speedup", sp->s, sp->n);
    df_json_double(jb, "amdahl_s", sp->amdahl_s);
    df_json_double_array(jb, "karp_flatt", sp->kf, sp->n);
    df_json_double_array(jb, "gustafson", sp->gustafson, sp->n);
}

/* "trace_overhead": per dfmedia configuration, fps untraced and traced. */
static void json_trace_overhead(JsonBuilder *jb, const DfDecBench *b)
{
    json_builder_set_member_name(jb, "trace_overhead");
    json_builder_begin_array(jb);
    for (guint k = 0; k < b->configs->len; k++) {
        const DfDecConfig *cf = &g_array_index(b->configs, DfDecConfig, k);
        if (!cf->fps_on)
            continue;
        json_builder_begin_object(jb);
        json_builder_set_member_name(jb, "input");
        json_builder_add_string_value(jb, b->clips[cf->input].name);
        json_builder_set_member_name(jb, "impl");
        json_builder_add_string_value(jb, b->impls[cf->impl].name);
        json_builder_set_member_name(jb, "policy");
        json_builder_add_string_value(jb, b->impls[cf->impl].policy);
        json_builder_set_member_name(jb, "workers");
        json_builder_add_int_value(jb, cf->workers);
        df_json_overhead(jb, "fps", cf->fps, cf->n, cf->fps_on, cf->n_on, true);
        json_builder_set_member_name(jb, "dropped_events");
        json_builder_add_int_value(jb, (gint64)cf->dropped);
        json_builder_end_object(jb);
    }
    json_builder_end_array(jb);
}

static bool write_json(const DfDecBench *b)
{
    JsonBuilder *jb = json_builder_new();
    json_builder_begin_object(jb);
    json_builder_set_member_name(jb, "bench");
    json_builder_add_string_value(jb, "decode");
    df_report_machine_json(jb);

    json_builder_set_member_name(jb, "run");
    json_builder_begin_object(jb);
    json_builder_set_member_name(jb, "repeat");
    json_builder_add_int_value(jb, b->o.repeat);
    json_builder_set_member_name(jb, "poll_us");
    if (b->o.poll_us >= -1)
        json_builder_add_int_value(jb, b->o.poll_us);
    else
        json_builder_add_null_value(jb);
    json_builder_set_member_name(jb, "threading");
    json_builder_add_string_value(jb, df_threading_name(b->threading));
    json_builder_set_member_name(jb, "thread_count");
    json_builder_add_int_value(jb, b->o.thread_count);
    json_builder_set_member_name(jb, "in_flight");
    json_builder_add_int_value(jb, b->o.in_flight);
    df_json_double(jb, "duration_s", (double)(b->end_ns - b->start_ns) / 1e9);
    df_json_double(jb, "load_avg_start", b->load_start[0]);
    df_json_double(jb, "load_avg_end", b->load_end[0]);
    /* The traces and their own frame rates: dfsim's "recording". */
    json_builder_set_member_name(jb, "traces");
    json_builder_begin_array(jb);
    for (int i = 0; i < b->n_traces; i++) {
        json_builder_begin_object(jb);
        json_builder_set_member_name(jb, "workers");
        json_builder_add_int_value(jb, b->traces[i].workers);
        json_builder_set_member_name(jb, "run");
        json_builder_add_int_value(jb, b->traces[i].run + 1);
        /* The repeat it ran in (from 1; its samples are the repeat-th of
         * each configuration's fps_samples): dfsim pairs them. */
        json_builder_set_member_name(jb, "repeat");
        json_builder_add_int_value(jb, b->traces[i].repeat + 1);
        json_builder_set_member_name(jb, "impl");
        json_builder_add_string_value(jb, b->impls[b->trace_impl].name);
        /* dfsim compares a trace only with runs of the same threading. */
        json_builder_set_member_name(jb, "threading");
        json_builder_add_string_value(jb, b->traces[i].threading);
        json_builder_set_member_name(jb, "file");
        json_builder_add_string_value(jb, b->traces[i].path);
        df_json_double(jb, "fps", b->traces[i].fps);
        json_builder_end_object(jb);
    }
    json_builder_end_array(jb);
    json_builder_set_member_name(jb, "inputs");
    json_builder_begin_array(jb);
    for (int i = 0; i < b->n_clips; i++) {
        const DfClip *c = &b->clips[i];
        json_builder_begin_object(jb);
        json_builder_set_member_name(jb, "input");
        json_builder_add_string_value(jb, c->name);
        json_builder_set_member_name(jb, "path");
        json_builder_add_string_value(jb, c->path);
        json_builder_set_member_name(jb, "codec");
        json_builder_add_string_value(jb, avcodec_get_name(c->par->codec_id));
        json_builder_set_member_name(jb, "width");
        json_builder_add_int_value(jb, c->par->width);
        json_builder_set_member_name(jb, "height");
        json_builder_add_int_value(jb, c->par->height);
        json_builder_set_member_name(jb, "packets");
        json_builder_add_int_value(jb, c->n_pkts);
        json_builder_end_object(jb);
    }
    json_builder_end_array(jb);
    json_builder_end_object(jb);

    json_builder_set_member_name(jb, "results");
    json_builder_begin_array(jb);
    for (guint k = 0; k < b->configs->len; k++) {
        const DfDecConfig *cf = &g_array_index(b->configs, DfDecConfig, k);
        const DfDecImpl *im = &b->impls[cf->impl];
        const DfSummary fps = df_summarize(cf->fps, cf->n);
        json_builder_begin_object(jb);
        json_builder_set_member_name(jb, "input");
        json_builder_add_string_value(jb, b->clips[cf->input].name);
        json_builder_set_member_name(jb, "impl");
        json_builder_add_string_value(jb, im->name);
        json_builder_set_member_name(jb, "workers");
        json_builder_add_int_value(jb, cf->workers);
        json_builder_set_member_name(jb, "oversubscribed");
        json_builder_add_boolean_value(jb, cf->oversubscribed);
        json_builder_set_member_name(jb, "samples");
        json_builder_add_int_value(jb, cf->n);
        df_json_double(jb, "fps_median", fps.median);
        df_json_double(jb, "fps_min", fps.min);
        df_json_double(jb, "fps_max", fps.max);
        df_json_double_array(jb, "fps_samples", cf->fps, cf->n);
        df_json_double(jb, "speedup", fps.median / baseline_fps(b, cf->input));
        /* Measured only by dfmedia (its own counters). */
        df_json_double(jb, "latency_p50_ms", df_summarize(cf->p50, cf->n).median);
        df_json_double(jb, "latency_p99_ms", df_summarize(cf->p99, cf->n).median);
        /* In-process implementations only (GStreamer's pipelines start
         * and stop threads of their own). */
        df_json_double(jb, "cpu_ms_per_frame", df_summarize(cf->cpu, cf->n).median);
        json_builder_set_member_name(jb, "frames");
        json_builder_add_int_value(jb, (gint64)cf->frames);
        if (cf->threading[0]) {
            json_builder_set_member_name(jb, "threading");
            json_builder_add_string_value(jb, cf->threading);
        }
        json_builder_set_member_name(jb, "failures");
        json_builder_add_int_value(jb, cf->failures);
        if (cf->error) {
            json_builder_set_member_name(jb, "error");
            json_builder_add_string_value(jb, cf->error);
        }
        json_builder_end_object(jb);
    }
    json_builder_end_array(jb);
    if (b->o.trace_overhead)
        json_trace_overhead(jb, b);

    /* The headline series' members at the top level (the shape),
     * every (input, implementation) series under "series". */
    json_builder_set_member_name(jb, "speedup");
    json_builder_begin_object(jb);
    json_builder_set_member_name(jb, "baseline_impl");
    json_builder_add_string_value(jb, "ffmpeg");
    json_builder_set_member_name(jb, "definition");
    json_builder_add_string_value(
        jb, "S(N) = T(1)/T(N) with T(1) single-threaded libavcodec; amdahl_s: s fitted by least "
            "squares to 1/S = s + (1-s)/N; karp_flatt: (1/S - 1/N)/(1 - 1/N), null for N = 1; "
            "gustafson: N + (1-N) s");
    const DfSpeedup head = speedup_of(b, 0, headline_impl(b));
    json_speedup_body(jb, b, &head);
    json_builder_set_member_name(jb, "series");
    json_builder_begin_array(jb);
    for (int in = 0; in < b->n_clips; in++)
        for (int i = 1; i < b->n_impls; i++) {
            const DfSpeedup sp = speedup_of(b, in, i);
            json_builder_begin_object(jb);
            json_speedup_body(jb, b, &sp);
            json_builder_end_object(jb);
        }
    json_builder_end_array(jb);
    json_builder_end_object(jb);
    json_builder_end_object(jb);

    GError *err = NULL;
    const bool ok = df_json_write(jb, b->o.json, &err);
    if (!ok) {
        fprintf(stderr, "dfbench decode: error: cannot write %s: %s\n", b->o.json, err->message);
        g_error_free(err);
    }
    g_object_unref(jb);
    return ok;
}

static bool write_csv(const DfDecBench *b)
{
    static const char *const headers[] = {
        "input",          "impl",    "workers",  "oversubscribed", "samples",
        "fps_median",     "fps_min", "fps_max",  "speedup",        "latency_p50_ms",
        "latency_p99_ms", "frames",  "failures", "error",          "cpu_ms_per_frame"};
    enum { N_COLS = sizeof(headers) / sizeof(headers[0]) };
    DfCsv csv;
    int ret = df_csv_open(&csv, b->o.csv, N_COLS, headers);
    if (ret < 0) {
        fprintf(stderr, "dfbench decode: error: cannot write %s: %s\n", b->o.csv, g_strerror(-ret));
        return false;
    }
    for (guint k = 0; k < b->configs->len; k++) {
        const DfDecConfig *cf = &g_array_index(b->configs, DfDecConfig, k);
        const DfSummary fps = df_summarize(cf->fps, cf->n);
        const double v[7] = {fps.median,
                             fps.min,
                             fps.max,
                             fps.median / baseline_fps(b, cf->input),
                             df_summarize(cf->p50, cf->n).median,
                             df_summarize(cf->p99, cf->n).median,
                             df_summarize(cf->cpu, cf->n).median};
        char f[11][40];
        snprintf(f[0], sizeof(f[0]), "%d", cf->workers);
        snprintf(f[1], sizeof(f[1]), "%d", cf->n);
        /* Empty cells, not "nan", where nothing was measured. */
        for (int j = 0; j < 7; j++) {
            char *cell = f[j < 6 ? 2 + j : 10];
            if (isnan(v[j]))
                cell[0] = '\0';
            else
                snprintf(cell, sizeof(f[0]), "%.4f", v[j]);
        }
        snprintf(f[8], sizeof(f[8]), "%llu", (unsigned long long)cf->frames);
        snprintf(f[9], sizeof(f[9]), "%d", cf->failures);
        const char *cells[N_COLS] = {b->clips[cf->input].name,
                                     b->impls[cf->impl].name,
                                     f[0],
                                     cf->oversubscribed ? "true" : "false",
                                     f[1],
                                     f[2],
                                     f[3],
                                     f[4],
                                     f[5],
                                     f[6],
                                     f[7],
                                     f[8],
                                     f[9],
                                     cf->error,
                                     f[10]};
        df_csv_row(&csv, cells);
    }
    ret = df_csv_close(&csv);
    if (ret < 0)
        fprintf(stderr, "dfbench decode: error: cannot write %s: %s\n", b->o.csv, g_strerror(-ret));
    return ret == 0;
}

static bool write_plot(const DfDecBench *b)
{
    const int n_series = b->n_clips * b->n_impls;
    DfPlotSeries *fps = g_new0(DfPlotSeries, (gsize)n_series);
    DfPlotSeries *spd = g_new0(DfPlotSeries, (gsize)n_series);
    double *xs = g_new0(double, (gsize)n_series *(gsize)b->n_workers);
    double *ys = g_new0(double, (gsize)n_series *(gsize)b->n_workers);
    double *ss = g_new0(double, (gsize)n_series *(gsize)b->n_workers);
    gchar **labels = g_new0(gchar *, (gsize)n_series + 1);
    int nf = 0, ns = 0;
    for (int in = 0; in < b->n_clips; in++)
        for (int i = 0; i < b->n_impls; i++) {
            const int k = in * b->n_impls + i;
            double *x = xs + (size_t)k * (size_t)b->n_workers;
            double *y = ys + (size_t)k * (size_t)b->n_workers;
            double *s = ss + (size_t)k * (size_t)b->n_workers;
            int n = 0;
            for (int w = 0; w < b->n_workers; w++) {
                const DfDecConfig *cf = find_config(b, in, i, b->workers[w]);
                if (!cf)
                    continue;
                x[n] = cf->workers;
                y[n] = median_fps(cf);
                s[n] = y[n] / baseline_fps(b, in);
                n++;
            }
            labels[k] = b->n_clips > 1
                            ? g_strdup_printf("%s (%s)", b->impls[i].name, b->clips[in].name)
                            : g_strdup(b->impls[i].name);
            fps[nf++] = (DfPlotSeries){.label = labels[k], .n = n, .x = x, .y = y};
            /* The baseline too (S(1) = 1): a series keeps its colour
             * in both panels. */
            spd[ns++] = (DfPlotSeries){.label = labels[k], .n = n, .x = x, .y = s};
        }
    const DfPlotPanel panels[2] = {
        {.title = "decode rate", .y_label = "frames per second", .n_series = nf, .series = fps},
        {.title = "speed-up vs 1-thread libavcodec",
         .y_label = "S(N) = T(1) / T(N)",
         .n_series = ns,
         .series = spd,
         .ideal_line = true},
    };
    char err[256];
    const int ret = df_plot_write(b->o.plot, "workers (cores)", false, panels, 2, err, sizeof(err));
    if (ret < 0)
        fprintf(stderr, "dfbench decode: error: %s\n", err);
    g_strfreev(labels);
    g_free(fps);
    g_free(spd);
    g_free(xs);
    g_free(ys);
    g_free(ss);
    return ret == 0;
}

/* ----------------------------------------------------------------- main */

int df_bench_decode_main(int argc, char **argv)
{
    DfDecBench b = {0};
    int ret = df_cpu_map_init(&b.map);
    if (ret < 0) {
        fprintf(stderr, "dfbench decode: error: cannot read the CPU topology: %s\n",
                g_strerror(-ret));
        return DF_BENCH_FAILED;
    }
    /* libavcodec's warnings would break the progress line and the table. */
    av_log_set_level(AV_LOG_ERROR);
    int status = parse_options(&b, argc, argv);
    if (status != DF_BENCH_OK)
        goto cleanup;
    configs_init(&b);
    print_header(&b);
    fflush(stdout);
    run_all(&b);
    printf("\n");
    print_table(&b);
    if (b.o.trace_overhead)
        print_trace_overhead(&b);
    printf("\nload average %.2f at the start, %.2f at the end; %.1f s\n", b.load_start[0],
           b.load_end[0], (double)(b.end_ns - b.start_ns) / 1e9);
    if (b.o.json && !write_json(&b))
        status = DF_BENCH_FAILED;
    if (b.o.csv && !write_csv(&b))
        status = DF_BENCH_FAILED;
    if (b.o.plot && !write_plot(&b))
        status = DF_BENCH_FAILED;
    print_traces(&b);
    if (b.trace_failed)
        status = DF_BENCH_FAILED;
    for (guint i = 0; i < b.configs->len; i++)
        if (g_array_index(b.configs, DfDecConfig, i).failures)
            status = DF_BENCH_FAILED;
    if (status == DF_BENCH_FAILED)
        fprintf(stderr, "dfbench decode: error: some runs or outputs failed (see above)\n");
cleanup:
    configs_free(&b);
    for (int i = 0; i < b.n_clips; i++)
        df_clip_free(&b.clips[i]);
    g_free(b.clips);
    g_free(b.impls);
    g_free(b.workers);
    g_strfreev(b.o.inputs);
    g_free(b.o.workers);
    g_free(b.o.policy);
    g_free(b.o.peers);
    g_free(b.o.json);
    g_free(b.o.csv);
    g_free(b.o.plot);
    g_free(b.o.trace);
    g_free(b.o.trace_workers);
    g_free(b.o.trace_policy);
    for (int i = 0; i < b.n_traces; i++)
        g_free(b.traces[i].path);
    g_free(b.traces);
    g_free(b.o.threading);
    df_gst_deinit();
    df_cpu_map_fini(&b.map);
    return status;
}
