/* dfbench decode: decode frame rate over worker counts, dfmedia's policies
 * next to libavcodec's own threads and GStreamer's avdec_* (and dfdec when
 * its plugin is found), with the fixed-size speed-up of Amdahl and the
 * scaled-size figure of Gustafson derived from it.
 *
 * Method.  Packets are demuxed once into memory; in-process runs (libavcodec
 * and dfmedia) time send/receive of every packet of the clip and count the
 * frames out.  GStreamer runs (avdec, dfdec) are one pipeline each,
 * filesrc ! parsebin ! DECODER ! SINK sync=false qos=false, timed from PLAYING to
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
#include "bench_decode.h"
#include "dfbench.h"
#include "report.h"

#include <errno.h>
#include <libavutil/log.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_REPEAT 5
#define MAX_WORKERS    1024

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
#define N_KNOWN_PEERS ((int)(sizeof(known_peers) / sizeof(known_peers[0])))

static void add_impl(GArray *v, const char *name, DfImplKind kind, int lavc_type,
                     const char *policy, bool baseline)
{
    DfDecImpl im = {.kind = kind, .lavc_type = lavc_type, .policy = policy, .baseline = baseline};
    snprintf(im.name, sizeof(im.name), "%s", name);
    g_array_append_val(v, im);
}

/* --sink, or its default: fakevideosink (gst-plugins-bad), which takes
 * GstVideoMeta as a real video sink does, else fakesink, where dfdec
 * copies every picture (docs/dfdec.md). */
static const char *pipeline_sink(DfDecBench *b)
{
    if (!b->sink)
        b->sink = b->o.sink                      ? b->o.sink
                  : df_gst_have("fakevideosink") ? "fakevideosink"
                                                 : "fakesink";
    return b->sink;
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
            if (df_gst_have("parsebin") && df_gst_have(pipeline_sink(b)))
                add_impl(v, "avdec", DF_IMPL_AVDEC, 0, NULL, false);
            else
                fprintf(stderr,
                        "dfbench decode: warning: skipping avdec: GStreamer's parsebin or %s "
                        "is not installed\n",
                        pipeline_sink(b));
        } else if (!df_gst_have("dfdec")) {
            /* Not an error: the element comes from another part of the
             * project and may not be built yet. */
            fprintf(stderr,
                    "dfbench decode: warning: skipping dfdec: no loadable GStreamer element "
                    "\"dfdec\" (set GST_PLUGIN_PATH to the elements/ directory of the "
                    "build dfbench belongs to)\n");
        } else if (!df_gst_have(pipeline_sink(b))) {
            fprintf(stderr, "dfbench decode: warning: skipping dfdec: %s is not installed\n",
                    b->sink);
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

/* The numbers, --threading and --workers. */
static int parse_values(DfDecBench *b)
{
    DfDecOpts *o = &b->o;
    /* Each bad value by name: a list of every rule hides which one broke. */
    const struct {
        const char *flag;
        int value, min;
        const char *zero;
    } mins[] = {
        {"--repeat", o->repeat, 0, "0: the default"},
        {"--thread-count", o->thread_count, 0, "0: dfmedia's choice"},
        {"--in-flight", o->in_flight, 0, "0: dfmedia's"},
        {"--poll-us", o->poll_us == POLL_US_UNSET ? -1 : o->poll_us, -1, "-1: poll mode"},
        {"--trace-runs", o->trace_runs, 0, "0: the default, 1"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(mins); i++)
        if (mins[i].value < mins[i].min)
            return df_cli_usage(PROG, "bad %s %d (%d or more; %s)", mins[i].flag, mins[i].value,
                                mins[i].min, mins[i].zero);
    if (!o->repeat)
        o->repeat = DEFAULT_REPEAT;
    if (o->trace_runs && !o->trace) {
        return df_cli_usage(PROG, "--trace-runs needs --trace FILE");
    }
    if (!o->trace_runs)
        o->trace_runs = 1;
    if (o->trace_runs > o->repeat) {
        return df_cli_usage(PROG, "bad --trace-runs %d: at most --repeat (%d)", o->trace_runs,
                            o->repeat);
    }
    if (o->threading && df_threading_parse(o->threading, &b->threading) < 0) {
        return df_cli_usage(PROG, "bad --threading \"%s\" (auto, slice, frame, none)",
                            o->threading);
    }
    if (o->workers) {
        b->n_workers = df_cli_parse_int_list(o->workers, MAX_WORKERS, &b->workers);
        if (b->n_workers < 0) {
            return df_cli_usage(PROG, "bad --workers \"%s\" (e.g. 1,2,4 or 1-4, 1 to %d)",
                                o->workers, MAX_WORKERS);
        }
    } else {
        b->n_workers = b->map.n_cores;
        b->workers = g_new(int, (gsize)b->n_workers);
        for (int i = 0; i < b->n_workers; i++)
            b->workers[i] = i + 1;
    }
    return DF_BENCH_OK;
}

/* What runs: --policy and --peers, and what --trace and --plot need of
 * them. */
static int parse_selection(DfDecBench *b)
{
    DfDecOpts *o = &b->o;
    int status = DF_BENCH_OK;
    GError *err = NULL;
    if (o->sink && strcmp(o->sink, "fakevideosink") != 0 && strcmp(o->sink, "fakesink") != 0)
        return df_cli_usage(PROG, "bad --sink \"%s\" (fakevideosink or fakesink)", o->sink);
    const DfCliOption lists[] = {{"--policy", o->policy}, {"--peers", o->peers}};
    status = df_cli_check_lists(PROG, lists, G_N_ELEMENTS(lists));
    if (status != DF_BENCH_OK)
        return status;
    if (!parse_impls(b, &err)) {
        status = df_cli_usage(PROG, "%s", err ? err->message : "nothing to run");
        g_clear_error(&err);
        return status;
    }
    bool have_dfmedia = false;
    for (int i = 0; i < b->n_impls; i++)
        have_dfmedia |= b->impls[i].kind == DF_IMPL_DFMEDIA;
    if (o->trace && !have_dfmedia) {
        /* write_trace() runs on a dfmedia policy: say so before the runs. */
        return df_cli_usage(PROG, "--trace needs a dfmedia policy (--policy is \"%s\")",
                            o->policy ? o->policy : "");
    }
    static const char *const plot_suffixes[] = {".svg", ".png", NULL};
    if (o->plot && !df_cli_has_suffix(o->plot, plot_suffixes)) {
        return df_cli_usage(PROG, "bad --plot \"%s\": use a .svg or .png name", o->plot);
    }
    return status;
}

/* --trace-*, and every output path: they are written after minutes of
 * runs. */
static int parse_trace_options(DfDecBench *b)
{
    DfDecOpts *o = &b->o;
    int status = DF_BENCH_OK;
    if (o->trace_workers && !o->trace) {
        return df_cli_usage(PROG, "--trace-workers needs --trace FILE");
    }
    if (o->trace_policy && !o->trace) {
        return df_cli_usage(PROG, "--trace-policy needs --trace FILE");
    }
    b->trace_impl = -1;
    for (int i = 0; i < b->n_impls && o->trace; i++)
        if (b->impls[i].kind == DF_IMPL_DFMEDIA && b->trace_impl < 0 &&
            (!o->trace_policy || strcmp(b->impls[i].policy, o->trace_policy) == 0))
            b->trace_impl = i;
    if (o->trace && b->trace_impl < 0) {
        return df_cli_usage(PROG, "bad --trace-policy \"%s\": not one of --policy (\"%s\")",
                            o->trace_policy, o->policy ? o->policy : "all");
    }
    if (o->trace && (status = parse_trace_workers(b)) != DF_BENCH_OK)
        return status;
    const DfCliOutput outs[] = {{"--json", o->json}, {"--csv", o->csv}, {"--plot", o->plot}};
    status = df_cli_check_outputs(PROG, outs, G_N_ELEMENTS(outs));
    if (status != DF_BENCH_OK)
        return status;
    for (int i = 0; i < b->n_traces && status == DF_BENCH_OK; i++) {
        const DfCliOutput t = {"--trace", b->traces[i].path};
        status = df_cli_check_outputs(PROG, &t, 1);
    }
    return status;
}

/* --input into memory. */
static int load_clips(DfDecBench *b)
{
    const DfDecOpts *o = &b->o;
    int n_inputs = 0;
    while (o->inputs[n_inputs])
        n_inputs++;
    b->clips = g_new0(DfClip, (gsize)n_inputs);
    for (int i = 0; i < n_inputs; i++) {
        char msg[512];
        if (df_clip_load(o->inputs[i], &b->clips[i], msg, sizeof(msg)) < 0)
            return df_cli_fail(PROG, "%s", msg);
        b->n_clips++;
    }
    return DF_BENCH_OK;
}

static int parse_options(DfDecBench *b, int argc, char **argv)
{
    DfDecOpts *o = &b->o;
    o->poll_us = POLL_US_UNSET;
    /* The policies as dfsched's registry has them. */
    g_autofree char *policy_names = g_strjoinv(", ", (char **)df_policy_names());
    g_autofree char *policy_help = g_strdup_printf(
        "dfmedia's dfsched policies: all (default), none, or a list of %s", policy_names);
    GOptionEntry entries[] = {
        {"input", 'i', 0, G_OPTION_ARG_FILENAME_ARRAY, &o->inputs,
         "A clip to decode (H.264, HEVC, MPEG-2; any container libavformat reads); repeat for "
         "more",
         "FILE"},
        {"workers", 'w', 0, G_OPTION_ARG_STRING, &o->workers,
         "Worker counts, e.g. 1,2 or 1-4 (default: 1 to the number of cores); counts above the "
         "machine's PUs are marked oversubscribed",
         "LIST"},
        {"policy", 'p', 0, G_OPTION_ARG_STRING, &o->policy, policy_help, "LIST"},
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
        {"sink", 0, 0, G_OPTION_ARG_STRING, &o->sink,
         "The avdec and dfdec pipelines' sink: fakevideosink (accepts GstVideoMeta, like a real "
         "video sink; the default when installed) or fakesink (dfdec then copies every picture)",
         "fakevideosink|fakesink"},
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
    const DfCliSpec spec = {
        .param = "- decode fps over worker counts, policies and peers",
        .summary =
            "Decodes each clip with single-threaded libavcodec (T(1)), dfmedia on every dfsched\n"
            "policy and worker count, libavcodec's own slice and frame threads at the same thread\n"
            "count and GStreamer's avdec_* (max-threads = workers), and reports min/median/max\n"
            "fps, dfmedia's frame latency (packet in -> frame out, p50/p99), the speed-up\n"
            "S(N) = T(1)/T(N), Amdahl's serial fraction s fitted to it, the Karp-Flatt metric\n"
            "e(N) = (1/S - 1/N)/(1 - 1/N) and Gustafson's scaled speed-up N + (1 - N) s.",
        .description =
            "In-process runs decode packets held in memory, each on a decoder warmed up by the\n"
            "clip's first 24 packets (then flushed), timing one whole pass; GStreamer runs are a\n"
            "pipeline filesrc ! parsebin ! DEC ! SINK sync=false qos=false, SINK = --sink (demux and\n"
            "start-up included).  Configurations are interleaved across repeats; every sample\n"
            "is reported.  Timings are never pass/fail.\n"
            "\n"
            "Example: dfbench decode --input clip.mkv --workers 1,2 --policy all\n"
            "         --peers ffmpeg-slice,ffmpeg-frame,avdec --repeat 5 --json out.json\n"
            "         --csv out.csv --plot out.svg",
        .entries = entries,
        .no_args = true,
    };
    int status = df_cli_parse_options(PROG, &spec, &argc, &argv);
    if (status != DF_BENCH_OK)
        goto cleanup;
    if (!o->inputs || !o->inputs[0]) {
        status = df_cli_usage(PROG, "no --input FILE given");
        goto cleanup;
    }
    if ((status = parse_values(b)) != DF_BENCH_OK)
        goto cleanup;
    if ((status = parse_selection(b)) != DF_BENCH_OK)
        goto cleanup;
    if ((status = parse_trace_options(b)) != DF_BENCH_OK)
        goto cleanup;
    /* Clips last: a bad option is reported before seconds of demuxing. */
    status = load_clips(b);
cleanup:
    return status;
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
    df_dec_configs_init(&b);
    df_dec_print_header(&b);
    fflush(stdout);
    df_dec_run_all(&b);
    printf("\n");
    df_dec_print_table(&b);
    if (b.o.trace_overhead)
        df_dec_print_trace_overhead(&b);
    printf("\nload average %.2f at the start, %.2f at the end; %.1f s\n", b.load_start[0],
           b.load_end[0], (double)(b.end_ns - b.start_ns) / 1e9);
    if (b.o.json && !df_dec_write_json(&b))
        status = DF_BENCH_FAILED;
    if (b.o.csv && !df_dec_write_csv(&b))
        status = DF_BENCH_FAILED;
    if (b.o.plot && !df_dec_write_plot(&b))
        status = DF_BENCH_FAILED;
    df_dec_print_traces(&b);
    if (b.trace_failed)
        status = DF_BENCH_FAILED;
    for (guint i = 0; i < b.configs->len; i++)
        if (g_array_index(b.configs, DfDecConfig, i).failures)
            status = DF_BENCH_FAILED;
    if (status == DF_BENCH_FAILED)
        fprintf(stderr, "dfbench decode: error: some runs or outputs failed (see above)\n");
cleanup:
    df_dec_configs_free(&b);
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
    g_free(b.o.sink);
    for (int i = 0; i < b.n_traces; i++)
        g_free(b.traces[i].path);
    g_free(b.traces);
    g_free(b.o.threading);
    df_gst_deinit();
    df_cpu_map_fini(&b.map);
    return status;
}
