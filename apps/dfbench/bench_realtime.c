/* dfbench realtime: Gustafson's scaled size for video.  At a fixed frame
 * deadline, how many concurrent real-time streams do N workers carry?
 *
 * dfmedia: K decoders of the same clip in one process share one scheduler
 * of N workers (the first N cores).  Each stream has a thread (confined to
 * the same CPUs) that sends packet k at start + k/fps and takes frames as
 * soon as they are ready: between two packets it sleeps in
 * df_decoder_receive_frame_until() until a frame is done or the next
 * packet is due, so arrival times are exact and K threads do not poll the
 * workers' cores.  Stream j's clock starts j/K of a frame
 * period after stream 0's, as the phases of K independent sources spread;
 * with one common phase every stream's packet would arrive at the same
 * instant, and K decodes queue behind each other every period.  The i-th
 * frame out (presentation order) is due at start + (i + B)/fps, with the
 * latency budget
 *     B = reorder delay of the stream (codecpar video_delay: frames any
 *         decoder must have received before it can output frame 0)
 *       + --latency-frames (default 2: one frame period for the decode
 *         itself and one of slack for the packet queue and wake-ups).
 * A frame received after its due time is a miss, and so is a frame that
 * never comes.  The clip loops (timestamps shifted) when --duration needs
 * more frames than it has.  Before the clock starts, every stream warms up
 * its decoder, as a GStreamer pipeline prerolls: it decodes the clip's
 * first DF_CLIP_WARMUP_PACKETS packets unpaced and flushes, so that the
 * codec is open and the frame pool holds its buffers.  Without it the first frames
 * of every stream pay the pool's first-touch page faults (on these VMs
 * 8-14 us per 4 KiB page: a cold 1080p D task takes 18-33 ms against
 * 4.6 ms warm), K streams pay them at once on the same cores, and K = 2 on
 * one core missed on its first frame although it carries 60 of the 260 fps
 * that core decodes.  Warm-up frames are not counted, and the decoders'
 * latency samples start after it.  K grows 1, 2, 4, ... until a trial misses, then
 * bisects between the last good and the first bad K (a K that misses is
 * tried once more and fails only if it misses again: one stall of another
 * process on a shared machine should not decide it); the result is the
 * largest K without a miss, with its p99 latency (packet in -> frame out,
 * dfmedia's counters, worst stream) and p99 lateness (arrival - due).
 * Each decoder has a clock (unless --no-deadlines), so that dfsched sees
 * those due times as deadlines: packet k's work is due with the frame its
 * decode outputs.
 *
 * avdec (peer): K independent pipelines, filesrc ! parsebin ! avdec_*
 * (default threads) ! SINK sync=true, all threads confined to the same
 * N cores.  SINK is --sink: fakevideosink (the default when installed)
 * answers the allocation query with GstVideoMeta, as a real video sink
 * does, so a decoder may hand out its pictures with their own strides;
 * fakesink does not, and dfdec then copies every picture into a packed
 * buffer.  Either runs with qos=false max-lateness=-1 (fakesink's
 * defaults; fakevideosink's are true and 5 ms), so that the sinks differ
 * only in that query: a late frame is measured, not dropped.  The sink
 * renders each frame at its running time; the clip is played at --fps by a
 * seek with rate fps/clip rate, for --duration (the window).  The seek's
 * stop lies the clip's reorder lead past the window: a demuxer ends the
 * segment in decode order (matroskademux at the first keyframe at or past
 * the stop), and a stop at the window's end cut the open-GOP B-frames
 * decoded after an I-frame that ends the window (MPEG-2 at 30 fps for 4 s:
 * 117 of 119 frames, so that every trial missed).  A pad probe at the
 * sink's input counts the frames of the window and compares each one's
 * arrival with its running time: later than B/fps is a miss.  This
 * pacing is not identical to dfmedia's (GStreamer reads ahead and the
 * decoder may run a frame or so ahead until the sink blocks it, and
 * decodes the first frame during preroll; each trial's input_lead_* say
 * by how much), so it is, if anything, lenient to avdec;
 * it is the honest "K players in one process" figure without writing a
 * demuxer into appsrc.
 *
 * dfdec (peer): the same K pipelines with dfdec n-workers=N policy=P in
 * place of avdec_*, sharing the process's one scheduler (the element's
 * default), so that dfmedia is also measured under avdec's own rules.
 *
 * K*: what N cores could carry if every stream cost what the serial
 * program pays for it, K* = N x T(1) fps / --fps, T(1) being
 * single-threaded libavcodec on the clip (the same decode as dfbench
 * decode's "ffmpeg", on one core).  It is sampled in the same run, once
 * before the trials and once after them, so that it sees the same machine
 * load, and the mean of the two is used.  Each K is reported as a share of
 * K*; it is a reference, not a bound (a stream's I-frame bursts and the
 * latency budget may make K* unreachable, and more than K* is possible
 * only with idle-time help from other cores or a cheaper decode).
 *
 * --trace: after the search of each worker count (first policy), one more
 * dfmedia trial, not counted, with the scheduler's trace on over its paced
 * part, written for dfsched-viz and dfsim (by default at the first K that
 * missed: the schedule where it goes wrong).
 * Timings are never pass/fail. */
#include "bench_realtime.h"
#include "dfbench.h"

#include <errno.h>
#include <libavutil/log.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* -------------------------------------------------------------- options */

/* --sink, or its default, chosen at the first peer (no GStreamer without
 * one): fakevideosink, which is in gst-plugins-bad, or without it
 * fakesink. */
static const char *pipeline_sink(DfRt *rt)
{
    if (!rt->sink)
        rt->sink = df_gst_have("fakevideosink") ? "fakevideosink" : "fakesink";
    return rt->sink;
}

static int parse_options(DfRt *rt, int argc, char **argv)
{
    DfRtOpts *o = &rt->o;
    o->fps = 30;
    o->duration = 5;
    o->latency_frames = 2;
    o->max_streams = DEFAULT_MAX_STREAMS;
    o->poll_us = POLL_US_UNSET;
    o->deadlines = TRUE;
    o->overload_factor = 1.3;
    GOptionEntry entries[] = {
        {"input", 'i', 0, G_OPTION_ARG_FILENAME, &o->input, "The clip every stream decodes",
         "FILE"},
        {"fps", 0, 0, G_OPTION_ARG_DOUBLE, &o->fps, "Frame rate of each stream (default 30)",
         "FPS"},
        {"duration", 'd', 0, G_OPTION_ARG_DOUBLE, &o->duration,
         "Seconds of real time per trial (default 5); the clip loops if shorter", "S"},
        {"workers", 'w', 0, G_OPTION_ARG_STRING, &o->workers,
         "Worker counts, e.g. 1,2 (default: 1 to the number of cores)", "LIST"},
        {"policy", 'p', 0, G_OPTION_ARG_STRING, &o->policy,
         "dfsched policies: a list, all, or none (default cost-local)", "LIST"},
        {"peers", 0, 0, G_OPTION_ARG_STRING, &o->peers,
         "avdec, dfdec (K GStreamer pipelines of avdec_* or of dfdec per policy; default: both "
         "when built and found) or none",
         "LIST"},
        {"sink", 0, 0, G_OPTION_ARG_STRING, &o->sink,
         "The pipeline peers' sink: fakevideosink (accepts GstVideoMeta, like a real video sink; "
         "the default when installed) or fakesink",
         "fakevideosink|fakesink"},
        {"latency-frames", 0, 0, G_OPTION_ARG_INT, &o->latency_frames,
         "Latency budget beyond the stream's reorder delay, in frame periods (default 2)", "N"},
        {"max-streams", 0, 0, G_OPTION_ARG_INT, &o->max_streams, "Largest K tried (default 64)",
         "K"},
        {"poll-us", 0, 0, G_OPTION_ARG_INT, &o->poll_us,
         "dfsched idle spin before parking, microseconds; -1: poll mode (default: dfsched's)", "N"},
        {"threading", 0, 0, G_OPTION_ARG_STRING, &o->threading,
         "dfmedia's and dfdec's threading: auto (default), slice, frame, none", "MODE"},
        {"eager-jobs", 0, 0, G_OPTION_ARG_NONE, &o->eager_jobs,
         "In-process decoders: every slice job a scheduler node, on one worker too "
         "(DfSchedConfig.eager_jobs; default: inline there)",
         NULL},
        {"no-deadlines", 0, G_OPTION_FLAG_REVERSE, G_OPTION_ARG_NONE, &o->deadlines,
         "In-process decoders get no clock, so dfsched sees no deadline (default: each frame's "
         "due time, as the trials count it)",
         NULL},
        {"trace", 0, 0, G_OPTION_ARG_FILENAME, &o->trace,
         "After each search of the first policy, run one more trial of dfmedia with the "
         "scheduler's trace on (not counted) and write it (Chrome/Perfetto JSON, dfsched-viz and "
         "dfsim's input) to FILE, with .wN before its extension when several worker counts run",
         "FILE"},
        {"trace-streams", 0, 0, G_OPTION_ARG_INT, &o->trace_streams,
         "Streams in the traced trial (default: the first K that missed, or the largest tried)",
         "K"},
        {"overload", 0, 0, G_OPTION_ARG_NONE, &o->overload,
         "Instead of the search: per worker count, K = --overload-factor x K* dfdec pipelines "
         "(sink qos=true), once with admission=refuse (admission on) and once with "
         "admission=none (off); per stream admitted or refused, late and dropped frames",
         NULL},
        {"overload-factor", 0, 0, G_OPTION_ARG_DOUBLE, &o->overload_factor,
         "Streams requested by --overload, as a multiple of K* (default 1.3)", "F"},
        {"stagger", 0, 0, G_OPTION_ARG_DOUBLE, &o->stagger,
         "With --overload: start stream i at i x S seconds (streams joining a loaded scheduler "
         "one by one; the run lasts (K - 1) x S longer; default: all within one frame period)",
         "S"},
        {"gop-phases", 0, 0, G_OPTION_ARG_NONE, &o->gop_phases,
         "Start stream i i/K of the clip's GOP (mean key-frame interval) after the first, as "
         "independent sources whose I-frames do not coincide; the run lasts up to a GOP longer "
         "(default: every stream within one frame period, all I-frames due together: the worst "
         "case)",
         NULL},
        {"memory-every", 0, 0, G_OPTION_ARG_DOUBLE, &o->memory_every,
         "With --overload: every S seconds of each run, the process's threads, heap in use and "
         "resident memory after malloc_trim() (a long run's memory over time; default: not "
         "sampled)",
         "S"},
        {"json", 'j', 0, G_OPTION_ARG_FILENAME, &o->json, "Write the results as JSON to FILE",
         "FILE"},
        {"csv", 0, 0, G_OPTION_ARG_FILENAME, &o->csv, "Write the results as CSV to FILE", "FILE"},
        {"plot", 0, 0, G_OPTION_ARG_FILENAME, &o->plot,
         "Plot the largest K against workers (.svg or .png)", "FILE"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    const DfCliSpec spec = {
        .param = "- concurrent real-time streams per worker count",
        .summary =
            "K streams of one clip, each paced at --fps, share one dfsched scheduler of N\n"
            "workers; K grows from 3/4 of K* (galloping, then bisection) until a frame misses\n"
            "its deadline start + (i + B)/fps, B = the stream's reorder delay +\n"
            "--latency-frames.  Reports the largest K without a miss and its p99 latency\n"
            "per worker count and policy, next to K independent avdec_* and dfdec\n"
            "pipelines (into --sink, sync=true) on the same cores, and K* = workers x\n"
            "T(1) fps / --fps (T(1): single-threaded libavcodec on the clip, sampled\n"
            "before and after the trials) with each K as a share of it.",
        .description =
            "Example: dfbench realtime --input clip.mkv --fps 30 --duration 5 --workers 1,2\n"
            "         --policy cost-local --json rt.json",
        .entries = entries,
        .no_args = true,
    };
    int status = df_cli_parse_options(PROG, &spec, &argc, &argv);
    if (status != DF_BENCH_OK)
        goto cleanup;
    if (!o->input) {
        status = df_cli_usage(PROG, "no --input FILE given");
        goto cleanup;
    }
    /* Each bad value by name; the negated tests also refuse NaN. */
    if (!(o->fps >= 0.01 && o->fps <= 1000)) {
        status = df_cli_usage(PROG, "bad --fps %g (0.01 to 1000)", o->fps);
        goto cleanup;
    }
    if (!(o->duration > 0 && o->duration <= 3600)) {
        status = df_cli_usage(PROG, "bad --duration %g (seconds, more than 0, at most 3600)",
                              o->duration);
        goto cleanup;
    }
    if (o->latency_frames < 0) {
        status = df_cli_usage(PROG, "bad --latency-frames %d (0 or more)", o->latency_frames);
        goto cleanup;
    }
    if (o->max_streams < 1 || o->max_streams > 4096) {
        status = df_cli_usage(PROG, "bad --max-streams %d (1 to 4096)", o->max_streams);
        goto cleanup;
    }
    if (o->poll_us != POLL_US_UNSET && o->poll_us < -1) {
        status = df_cli_usage(PROG, "bad --poll-us %d (-1 or more; -1: poll mode)", o->poll_us);
        goto cleanup;
    }
    if (o->trace_streams < 0 || o->trace_streams > 4096) {
        status = df_cli_usage(PROG, "bad --trace-streams %d (1 to 4096; 0: the default)",
                              o->trace_streams);
        goto cleanup;
    }
    if (o->trace_streams && !o->trace) {
        status = df_cli_usage(PROG, "--trace-streams needs --trace FILE");
        goto cleanup;
    }
    if (!(o->overload_factor > 0 && o->overload_factor <= 100)) {
        status = df_cli_usage(PROG, "bad --overload-factor %g (more than 0, at most 100)",
                              o->overload_factor);
        goto cleanup;
    }
    if (!(o->memory_every >= 0 && o->memory_every <= 3600)) {
        status = df_cli_usage(PROG, "bad --memory-every %g (seconds, 0 to 3600)", o->memory_every);
        goto cleanup;
    }
    if (!(o->stagger >= 0 && o->stagger <= 60)) {
        status = df_cli_usage(PROG, "bad --stagger %g (seconds, 0 to 60)", o->stagger);
        goto cleanup;
    }
    if (o->stagger > 0 && !o->overload) {
        status = df_cli_usage(PROG, "--stagger needs --overload");
        goto cleanup;
    }
    if (o->gop_phases && o->stagger > 0) {
        status = df_cli_usage(PROG, "--gop-phases and --stagger are two ways to start streams; "
                                    "give one");
        goto cleanup;
    }
    if (o->memory_every > 0 && !o->overload) {
        status = df_cli_usage(PROG, "--memory-every needs --overload");
        goto cleanup;
    }
    if (o->sink && strcmp(o->sink, "fakevideosink") != 0 && strcmp(o->sink, "fakesink") != 0) {
        status = df_cli_usage(PROG, "bad --sink \"%s\" (fakevideosink or fakesink)", o->sink);
        goto cleanup;
    }
    if (o->threading && df_threading_parse(o->threading, &rt->threading) < 0) {
        status =
            df_cli_usage(PROG, "bad --threading \"%s\" (auto, slice, frame, none)", o->threading);
        goto cleanup;
    }
    const DfCliOption lists[] = {{"--policy", o->policy}, {"--peers", o->peers}};
    status = df_cli_check_lists(PROG, lists, G_N_ELEMENTS(lists));
    if (status != DF_BENCH_OK)
        goto cleanup;
    if (o->workers) {
        rt->n_workers = df_cli_parse_int_list(o->workers, MAX_WORKERS, &rt->workers);
        if (rt->n_workers < 0) {
            status = df_cli_usage(PROG, "bad --workers \"%s\" (e.g. 1,2 or 1-4, 1 to %d)",
                                  o->workers, MAX_WORKERS);
            goto cleanup;
        }
    } else {
        rt->n_workers = rt->map.n_cores;
        rt->workers = g_new(int, (gsize)rt->n_workers);
        for (int i = 0; i < rt->n_workers; i++)
            rt->workers[i] = i + 1;
    }
    rt->policies = g_ptr_array_new();
    const char *const *names = df_policy_names();
    gchar **pol = g_strsplit(o->policy ? o->policy : "cost-local", ",", -1);
    for (int i = 0; status == DF_BENCH_OK && pol[i]; i++) {
        const char *want = g_strstrip(pol[i]);
        if (!*want) {
            status = df_cli_usage(PROG, "bad --policy \"%s\": empty item (none selects no policy)",
                                  o->policy);
            break;
        }
        if (strcmp(want, "none") == 0)
            continue;
        bool found = false;
        for (int p = 0; names[p]; p++)
            if (strcmp(want, "all") == 0 || strcmp(want, names[p]) == 0) {
                g_ptr_array_add(rt->policies, (gpointer)names[p]);
                found = true;
            }
        if (!found) {
            GString *list = g_string_new(NULL);
            for (int p = 0; names[p]; p++)
                g_string_append_printf(list, "%s%s", p ? ", " : "", names[p]);
            status = df_cli_usage(PROG, "bad --policy: unknown policy \"%s\" (all, none or %s)",
                                  want, list->str);
            g_string_free(list, TRUE);
        }
    }
    g_strfreev(pol);
    if (status != DF_BENCH_OK)
        goto cleanup;
    /* The default sink is chosen with the first peer (pipeline_sink). */
    if (o->sink)
        rt->sink = strcmp(o->sink, "fakesink") == 0 ? "fakesink" : "fakevideosink";
    const char *dflt_peers = !df_gst_built()        ? "none"
                             : df_gst_have("dfdec") ? "avdec,dfdec"
                                                    : "avdec";
    gchar **pe = g_strsplit(o->peers ? o->peers : dflt_peers, ",", -1);
    for (int i = 0; status == DF_BENCH_OK && pe[i]; i++) {
        const char *want = g_strstrip(pe[i]);
        if (!*want) {
            status = df_cli_usage(PROG, "bad --peers \"%s\": empty item (none selects no peer)",
                                  o->peers);
            break;
        }
        if (strcmp(want, "none") == 0)
            continue;
        const bool is_dfdec = strcmp(want, "dfdec") == 0;
        if (!is_dfdec && strcmp(want, "avdec") != 0) {
            status =
                df_cli_usage(PROG, "bad --peers: unknown peer \"%s\" (avdec, dfdec or none)", want);
        } else if (is_dfdec && rt->policies->len == 0) {
            status =
                df_cli_usage(PROG, "bad --peers: dfdec runs once per --policy, and there is none");
        } else if (!df_gst_built()) {
            status = df_cli_usage(PROG,
                                  "bad --peers: peer %s needs GStreamer, which was missing "
                                  "when meson configured dfbench",
                                  want);
        } else if (!df_gst_have("parsebin") || !df_gst_have(pipeline_sink(rt))) {
            fprintf(stderr,
                    "dfbench realtime: warning: skipping %s: GStreamer's parsebin or %s is "
                    "not installed\n",
                    want, rt->sink);
        } else if (is_dfdec && !df_gst_have("dfdec")) {
            fprintf(stderr,
                    "dfbench realtime: warning: skipping dfdec: no loadable GStreamer element "
                    "\"dfdec\" (set GST_PLUGIN_PATH to the elements/ directory of the build)\n");
        } else if (is_dfdec) {
            rt->dfdec = true;
        } else {
            rt->avdec = true;
        }
    }
    g_strfreev(pe);
    if (status != DF_BENCH_OK)
        goto cleanup;
    if (o->overload && !rt->dfdec) {
        status = df_cli_usage(PROG, "--overload needs the dfdec peer (--peers dfdec, a policy, "
                                    "and the element on GST_PLUGIN_PATH)");
        goto cleanup;
    }
    if (o->overload && (o->json || o->csv || o->plot || o->trace)) {
        status = df_cli_usage(PROG, "--overload prints its table only (no --json, --csv, --plot "
                                    "or --trace)");
        goto cleanup;
    }
    if (rt->policies->len == 0 && !rt->avdec) {
        status = df_cli_usage(PROG, "nothing to run: no policy and no peer");
        goto cleanup;
    }
    if (o->trace && rt->policies->len == 0) {
        status = df_cli_usage(PROG, "--trace needs a dfmedia policy (--policy is \"%s\")",
                              o->policy ? o->policy : "");
        goto cleanup;
    }
    static const char *const plot_suffixes[] = {".svg", ".png", NULL};
    if (o->plot && !df_cli_has_suffix(o->plot, plot_suffixes)) {
        status = df_cli_usage(PROG, "bad --plot \"%s\": use a .svg or .png name", o->plot);
        goto cleanup;
    }
    /* The outputs are written after the trials: refuse them now. */
    const DfCliOutput outs[] = {
        {"--json", o->json}, {"--csv", o->csv}, {"--plot", o->plot}, {"--trace", o->trace}};
    status = df_cli_check_outputs(PROG, outs, G_N_ELEMENTS(outs));
    if (status != DF_BENCH_OK)
        goto cleanup;
    char msg[512];
    if (df_clip_load(o->input, &rt->clip, msg, sizeof(msg)) < 0) {
        status = df_cli_fail(PROG, "%s", msg);
        goto cleanup;
    }
    rt->budget_frames = rt->clip.par->video_delay + o->latency_frames;
    rt->total_frames = (int)ceil(o->duration * o->fps);
    rt->gop_frames = df_clip_gop_frames(&rt->clip);
    /* Played at --fps: a frame period of the clip lasts 1/fps. */
    const AVRational cr = rt->clip.frame_rate.num > 0 ? rt->clip.frame_rate : (AVRational){25, 1};
    rt->stream_tb = av_mul_q(rt->clip.tb, av_div_q(cr, av_d2q(o->fps, 1000000)));
    rt->first_pts_ns = INT64_MAX;
    for (int i = 0; i < rt->clip.n_pkts; i++) {
        const AVPacket *pk = rt->clip.pkts[i];
        const int64_t ts = pk->pts != AV_NOPTS_VALUE ? pk->pts : pk->dts;
        if (ts != AV_NOPTS_VALUE) {
            const int64_t ns = av_rescale_q(ts, rt->stream_tb, (AVRational){1, 1000000000});
            if (ns < rt->first_pts_ns)
                rt->first_pts_ns = ns;
        }
    }
    if (rt->first_pts_ns == INT64_MAX)
        rt->first_pts_ns = 0;
cleanup:
    return status;
}

/* ----------------------------------------------------------------- main */

/* FILE, with .wN before its extension when several worker counts run. */
static char *trace_path(const char *file, int workers, bool several)
{
    if (!several)
        return g_strdup(file);
    const char *base = strrchr(file, '/');
    const char *dot = strrchr(base ? base + 1 : file, '.');
    if (!dot)
        return g_strdup_printf("%s.w%d", file, workers);
    return g_strdup_printf("%.*s.w%d%s", (int)(dot - file), file, workers, dot);
}

static void add_result(DfRt *rt, const char *impl, const char *policy, bool gst, int workers)
{
    DfRtResult r = {.policy = policy, .gst = gst, .workers = workers};
    if (rt->o.trace && !gst && policy == rt->policies->pdata[0])
        r.trace_path = trace_path(rt->o.trace, workers, rt->n_workers > 1);
    snprintf(r.impl, sizeof(r.impl), "%s", impl);
    r.oversubscribed = df_cpu_map_oversubscribed(&rt->map, workers);
    r.trials = g_array_new(FALSE, TRUE, sizeof(DfRtTrial));
    g_array_append_val(rt->results, r);
}

int df_bench_realtime_main(int argc, char **argv)
{
    DfRt rt = {0};
    int ret = df_cpu_map_init(&rt.map);
    if (ret < 0) {
        fprintf(stderr, "dfbench realtime: error: cannot read the CPU topology: %s\n",
                g_strerror(-ret));
        return DF_BENCH_FAILED;
    }
    av_log_set_level(AV_LOG_ERROR);
    int status = parse_options(&rt, argc, argv);
    if (status != DF_BENCH_OK)
        goto cleanup;
    rt.results = g_array_new(FALSE, TRUE, sizeof(DfRtResult));
    for (guint p = 0; p < rt.policies->len; p++)
        for (int w = 0; w < rt.n_workers; w++) {
            char name[48];
            snprintf(name, sizeof(name), "dfmedia/%s", (const char *)rt.policies->pdata[p]);
            add_result(&rt, name, rt.policies->pdata[p], false, rt.workers[w]);
        }
    if (rt.avdec)
        for (int w = 0; w < rt.n_workers; w++)
            add_result(&rt, "avdec", NULL, true, rt.workers[w]);
    if (rt.dfdec)
        for (guint p = 0; p < rt.policies->len; p++)
            for (int w = 0; w < rt.n_workers; w++) {
                char name[48];
                snprintf(name, sizeof(name), "dfdec/%s", (const char *)rt.policies->pdata[p]);
                add_result(&rt, name, rt.policies->pdata[p], true, rt.workers[w]);
            }
    char machine[1024];
    df_report_machine_line(machine, sizeof(machine));
    printf("dfbench realtime on %s\n", machine);
    printf("clip %s: %s %dx%d, %d packets; %d frames per stream at %.3g fps (%.3g s); budget %d "
           "frames = %.1f ms\n",
           rt.clip.name, avcodec_get_name(rt.clip.par->codec_id), rt.clip.par->width,
           rt.clip.par->height, rt.clip.n_pkts, rt.total_frames, rt.o.fps, rt.o.duration,
           rt.budget_frames, rt.budget_frames * 1000.0 / rt.o.fps);
    if (rt.o.gop_phases)
        printf("stream i starts i/K of a GOP (%.1f frames, %.0f ms) after the first\n",
               rt.gop_frames, rt.gop_frames * 1000.0 / rt.o.fps);
    if (rt.avdec || rt.dfdec)
        printf("pipelines: filesrc ! parsebin ! DECODER ! %s sync=true qos=%s "
               "max-lateness=-1\n",
               rt.sink, rt.o.overload ? "true" : "false");
    fflush(stdout);
    /* The number of trials is not known ahead (the search stops at the
     * first miss): the bar counts log2(cap) steps per search. */
    int steps = 0;
    for (int k = 1; k <= rt.o.max_streams; k *= 2)
        steps++;
    DfProgress prog;
    if (rt.o.overload) {
        /* K* from the first sample; the second one, after, shows the load. */
        df_progress_begin(&prog, 2 * rt.n_workers + T1_SAMPLES);
        df_rt_sample_t1(&rt, &prog);
        df_rt_overload(&rt, &prog);
        df_rt_sample_t1(&rt, &prog);
        df_progress_end(&prog);
        printf("T(1) samples: %.1f fps before, %.1f fps after the trials (K* used the first)\n",
               rt.t1_samples[0], rt.t1_samples[1]);
        if (rt.overload_failed || rt.t1_error[0])
            status = DF_BENCH_FAILED;
        goto cleanup;
    }
    df_progress_begin(&prog, steps * (int)rt.results->len + T1_SAMPLES);
    df_rt_sample_t1(&rt, &prog);
    for (guint i = 0; i < rt.results->len; i++)
        df_rt_search(&rt, &g_array_index(rt.results, DfRtResult, i), &prog);
    df_rt_sample_t1(&rt, &prog);
    df_progress_end(&prog);
    printf("\n");
    df_rt_print_table(&rt);
    df_rt_print_traces(&rt);
    if (rt.o.json && !df_rt_write_json(&rt))
        status = DF_BENCH_FAILED;
    if (rt.o.csv && !df_rt_write_csv(&rt))
        status = DF_BENCH_FAILED;
    if (rt.o.plot && !df_rt_write_plot(&rt))
        status = DF_BENCH_FAILED;
    for (guint i = 0; i < rt.results->len; i++)
        if (g_array_index(rt.results, DfRtResult, i).failed)
            status = DF_BENCH_FAILED;
    if (rt.t1_error[0]) {
        fprintf(stderr, "dfbench realtime: error: T(1) sample failed: %s\n", rt.t1_error);
        status = DF_BENCH_FAILED;
    }
    if (status == DF_BENCH_FAILED)
        fprintf(stderr, "dfbench realtime: error: some trials or outputs failed (see above)\n");
cleanup:
    if (rt.results) {
        for (guint i = 0; i < rt.results->len; i++) {
            g_array_free(g_array_index(rt.results, DfRtResult, i).trials, TRUE);
            g_free(g_array_index(rt.results, DfRtResult, i).trace_path);
        }
        g_array_free(rt.results, TRUE);
    }
    if (rt.policies)
        g_ptr_array_free(rt.policies, TRUE);
    df_clip_free(&rt.clip);
    g_free(rt.workers);
    g_free(rt.o.input);
    g_free(rt.o.workers);
    g_free(rt.o.policy);
    g_free(rt.o.peers);
    g_free(rt.o.sink);
    g_free(rt.o.json);
    g_free(rt.o.csv);
    g_free(rt.o.plot);
    g_free(rt.o.trace);
    g_free(rt.o.threading);
    df_gst_deinit();
    df_cpu_map_fini(&rt.map);
    return status;
}
