/* dfbench realtime: Gustafson's scaled size for video.  At a fixed frame
 * deadline, how many concurrent real-time streams do N workers carry?
 *
 * dfmedia: K decoders of the same clip in one process share one scheduler
 * of N workers (the first N cores).  Each stream has a thread (confined to
 * the same CPUs) that sends packet k at start + k/fps and takes frames as
 * soon as they are ready (polling every millisecond at most, so arrival
 * times are exact to about 1 ms).  Stream j's clock starts j/K of a frame
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
 * seek with rate fps/clip rate, for --duration.  A pad probe at the sink's
 * input compares each frame's arrival with its running time: later than
 * B/fps is a miss.  This pacing is not identical to dfmedia's (GStreamer
 * reads ahead and the decoder may run a frame or so ahead until the sink
 * blocks it, and decodes the first frame during preroll; each trial's
 * input_lead_* say by how much), so it is, if anything, lenient to avdec;
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
#include <time.h>

#define PROG "dfbench realtime"

#define MAX_WORKERS         1024
#define DEFAULT_MAX_STREAMS 64
#define POLL_NS             1000000 /* longest sleep between frame polls */
#define T1_SAMPLES          2       /* T(1): one before the trials, one after */

typedef struct DfRtOpts {
    char *input, *workers, *policy, *peers, *sink, *json, *csv, *plot, *trace;
    double fps, duration;
    int latency_frames, max_streams, poll_us, trace_streams;
    gboolean deadlines; /* FALSE: --no-deadlines */
} DfRtOpts;

/* One trial: K streams on one configuration. */
typedef struct DfRtTrial {
    int streams;
    uint64_t frames, expected, misses;
    double latency_p99_ms; /* worst stream (dfmedia); NAN for avdec */
    double late_p99_ms;    /* p99 of arrival - due over all frames */
    /* Pipelines: how long before its running time a packet reached the
     * decoder (median of the least-ahead pipeline, and least of all);
     * NAN for dfmedia, whose packets arrive at their time. */
    double lead_p50_ms, lead_min_ms;
    /* dfmedia: the scheduler's counters over the paced part (dfsched
     * stats, all workers); has_sched false for pipelines. */
    bool has_sched;
    uint64_t tasks, stolen, parks, wakeups, max_wait_depth;
    double idle_ms;
    char error[256];
} DfRtTrial;

typedef struct DfRtResult {
    char impl[48];
    const char *policy; /* NULL: avdec */
    bool gst;           /* K GStreamer pipelines (avdec, dfdec) */
    int workers;
    bool oversubscribed;
    int max_streams; /* largest K without a miss (0: not even one) */
    bool capped;     /* --max-streams reached without a miss */
    DfRtTrial best;  /* the trial at max_streams */
    GArray *trials;  /* DfRtTrial, in the order run */
    bool failed;
    /* --trace: one more trial, traced, after the search (not counted). */
    char *trace_path; /* NULL: not traced */
    DfRtTrial traced;
    bool trace_written;
} DfRtResult;

typedef struct DfRt {
    DfRtOpts o;
    DfCpuMap map;
    DfClip clip;
    int *workers;
    int n_workers;
    GPtrArray *policies;
    bool avdec, dfdec;
    const char *sink; /* the pipelines' sink element (avdec, dfdec) */
    /* Stream time of the in-process decoders: the clip's time base scaled
     * to --fps (1 ns of it is 1 ns of real time), and the first frame's
     * presentation time in it. */
    AVRational stream_tb;
    int64_t first_pts_ns;
    int budget_frames;
    int total_frames; /* frames each stream decodes */
    GArray *results;  /* DfRtResult */
    /* T(1): single-threaded libavcodec fps of the clip, per sample (NAN:
     * failed), and their mean over the good ones (NAN: none). */
    double t1_samples[T1_SAMPLES];
    int n_t1;
    double t1_fps;
    char t1_error[256]; /* the first failed sample's reason */
} DfRt;

/* ---------------------------------------------------------------- stream */

typedef struct DfRtStream {
    const DfRt *rt;
    DfDecoder *dec;
    const DfCpuMap *map;
    int cpus;
    pthread_barrier_t *warm, *go; /* warm-ups done; start_ns set */
    int64_t start_ns;             /* written before `go`, read after it */
    uint64_t frames, misses;
    GArray *late_ms; /* double */
    char error[256];
} DfRtStream;

/* The decoder's clock: the stream time due now, so that a frame of
 * presentation time p is due at start + (p - first) + the budget, as
 * take_frame() counts (deadline_offset_ns is the budget).  Before `go`
 * (the warm-up) start_ns is 0, and every warm-up frame is long overdue. */
static int64_t stream_clock(void *opaque)
{
    const DfRtStream *st = opaque;
    return df_now_ns() - st->start_ns + st->rt->first_pts_ns;
}

static void sleep_until(int64_t t_ns)
{
    const int64_t now = df_now_ns();
    if (t_ns <= now)
        return;
    const int64_t d = t_ns - now;
    struct timespec ts = {.tv_sec = d / 1000000000, .tv_nsec = d % 1000000000};
    nanosleep(&ts, NULL);
}

static void take_frame(DfRtStream *st, int64_t now)
{
    const double fps = st->rt->o.fps;
    const int64_t due =
        st->start_ns +
        (int64_t)((double)(st->frames + (uint64_t)st->rt->budget_frames) * 1e9 / fps);
    const double late = (double)(now - due) / 1e6;
    g_array_append_val(st->late_ms, late);
    if (now > due)
        st->misses++;
    st->frames++;
}

/* The clip's first packets, unpaced, then drained and flushed: the codec
 * open and the pool warm, as after a GStreamer preroll. */
static int warm_up(DfRtStream *st, AVFrame *f)
{
    const DfClip *c = &st->rt->clip;
    const int n = df_clip_warmup_packets(c);
    int ret = 0;
    for (int k = 0; k < n;) {
        ret = df_decoder_send_packet(st->dec, c->pkts[k]);
        if (ret == 0) {
            k++;
            continue;
        }
        /* Full: take the oldest frame (EAGAIN: the slots held none). */
        if (ret != AVERROR(EAGAIN))
            goto done;
        ret = df_decoder_receive_frame(st->dec, f);
        if (ret < 0 && ret != AVERROR(EAGAIN))
            goto done;
    }
    if ((ret = df_decoder_send_packet(st->dec, NULL)) < 0)
        goto done;
    while ((ret = df_decoder_receive_frame(st->dec, f)) == 0)
        ;
    ret = ret == AVERROR_EOF ? 0 : ret;
done:
    av_frame_unref(f);
    df_decoder_flush(st->dec);
    df_decoder_reset_latency(st->dec);
    if (ret < 0) {
        char e[AV_ERROR_MAX_STRING_SIZE];
        av_strerror(ret, e, sizeof(e));
        snprintf(st->error, sizeof(st->error), "warm-up failed: %s", e);
    }
    return ret;
}

static void *stream_main(void *arg)
{
    DfRtStream *st = arg;
    const DfClip *c = &st->rt->clip;
    const int total = st->rt->total_frames;
    const double fps = st->rt->o.fps;
    df_bench_confine(st->map, st->cpus);
    AVFrame *f = av_frame_alloc();
    AVPacket *pkt = av_packet_alloc();
    const bool ok = f && pkt && warm_up(st, f) == 0;
    if (!f || !pkt)
        snprintf(st->error, sizeof(st->error), "out of memory");
    /* Every thread passes both barriers, failed or not. */
    pthread_barrier_wait(st->warm);
    pthread_barrier_wait(st->go);
    if (!ok)
        goto cleanup;
    /* One pass of the clip in stream time base, for looping. */
    const AVRational rate = c->frame_rate.num > 0 ? c->frame_rate : (AVRational){25, 1};
    const int64_t span = av_rescale_q(c->n_pkts, av_inv_q(rate), c->tb);
    int k = 0;
    bool draining = false;
    for (;;) {
        const int64_t now = df_now_ns();
        const int64_t send_at = st->start_ns + (int64_t)((double)k * 1e9 / fps);
        if (k < total && now >= send_at) {
            av_packet_unref(pkt);
            if (av_packet_ref(pkt, c->pkts[k % c->n_pkts]) < 0) {
                snprintf(st->error, sizeof(st->error), "out of memory");
                goto cleanup;
            }
            const int64_t shift = (int64_t)(k / c->n_pkts) * span;
            if (pkt->pts != AV_NOPTS_VALUE)
                pkt->pts += shift;
            if (pkt->dts != AV_NOPTS_VALUE)
                pkt->dts += shift;
            const int ret = df_decoder_send_packet(st->dec, pkt);
            if (ret == 0) {
                k++;
            } else if (ret == AVERROR(EAGAIN)) {
                /* The decoder is full: wait for its oldest frame (the
                 * packet goes late, and its frame will show it). */
                if (df_decoder_receive_frame(st->dec, f) == 0)
                    take_frame(st, df_now_ns());
                continue;
            } else {
                snprintf(st->error, sizeof(st->error), "send_packet failed (%d)", ret);
                goto cleanup;
            }
        }
        if (k == total && !draining) {
            df_decoder_send_packet(st->dec, NULL);
            draining = true;
        }
        int ret;
        while ((ret = df_decoder_try_receive_frame(st->dec, f)) == 0)
            take_frame(st, df_now_ns());
        if (draining) {
            while ((ret = df_decoder_receive_frame(st->dec, f)) == 0)
                take_frame(st, df_now_ns());
            break;
        }
        const int64_t next = st->start_ns + (int64_t)((double)k * 1e9 / fps);
        const int64_t t = df_now_ns();
        sleep_until(next < t + POLL_NS ? next : t + POLL_NS);
    }
cleanup:
    av_packet_free(&pkt);
    av_frame_free(&f);
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double p99_of(GArray *v)
{
    if (v->len == 0)
        return NAN;
    qsort(v->data, v->len, sizeof(double), cmp_double);
    return g_array_index(v, double, (guint)((v->len - 1) * 99 / 100));
}

/* Trace events per worker to hold a whole trial of `k` streams: a frame
 * makes about a dozen (D, slice jobs, bands, O), which may all run on one
 * worker. */
static size_t trial_trace_capacity(const DfRt *rt, int k)
{
    return (size_t)k * (size_t)rt->total_frames * 32 + 4096;
}

/* `trace`: write the scheduler's trace of the paced part (not the
 * warm-ups) to that file. */
static void trial_dfmedia(const DfRt *rt, const char *policy, int workers, int k, const char *trace,
                          DfRtTrial *tr)
{
    memset(tr, 0, sizeof(*tr));
    tr->streams = k;
    tr->latency_p99_ms = tr->late_p99_ms = tr->lead_p50_ms = tr->lead_min_ms = NAN;
    char cpus[256];
    df_cpu_map_list(&rt->map, workers, cpus, sizeof(cpus));
    DfSchedConfig sc;
    df_sched_config_init(&sc);
    sc.n_workers = workers;
    sc.policy = policy;
    sc.cpuset = cpus;
    if (rt->o.poll_us >= -1)
        sc.poll_us = rt->o.poll_us;
    DfSched *s = NULL;
    DfError err = {0};
    DfRtStream *st = g_new0(DfRtStream, (gsize)k);
    pthread_t *th = g_new0(pthread_t, (gsize)k);
    pthread_barrier_t warm, go;
    bool barriers = false;
    int started = 0;
    if (df_sched_new(&sc, &s, &err) < 0) {
        snprintf(tr->error, sizeof(tr->error), "%s", err.msg);
        goto cleanup;
    }
    DfDecoderConfig cfg;
    df_decoder_config_init(&cfg);
    cfg.log_level = AV_LOG_ERROR;
    if (rt->o.deadlines)
        cfg.deadline_offset_ns = (int64_t)((double)rt->budget_frames * 1e9 / rt->o.fps);
    for (int i = 0; i < k; i++) {
        st[i].rt = rt;
        st[i].map = &rt->map;
        st[i].cpus = workers;
        st[i].late_ms = g_array_new(FALSE, FALSE, sizeof(double));
        if (rt->o.deadlines) {
            cfg.clock_ns = stream_clock;
            cfg.clock_opaque = &st[i];
        }
        if (df_decoder_new(s, rt->clip.par, rt->stream_tb, &cfg, &st[i].dec, &err) < 0) {
            snprintf(tr->error, sizeof(tr->error), "%s", err.msg);
            goto cleanup;
        }
    }
    /* K stream threads and this one; a thread that fails to start is
     * replaced at the barriers by this thread (so they still open). */
    pthread_barrier_init(&warm, NULL, (unsigned)k + 1);
    pthread_barrier_init(&go, NULL, (unsigned)k + 1);
    barriers = true;
    for (int i = 0; i < k; i++) {
        st[i].warm = &warm;
        st[i].go = &go;
        if (pthread_create(&th[i], NULL, stream_main, &st[i]) != 0) {
            snprintf(tr->error, sizeof(tr->error), "pthread_create failed");
            break;
        }
        started++;
    }
    for (int i = started; i < k; i++)
        pthread_barrier_wait(&warm);
    pthread_barrier_wait(&warm);
    df_sched_stats_reset(s);
    if (trace && df_sched_trace_start(s, trial_trace_capacity(rt, k)) < 0)
        snprintf(tr->error, sizeof(tr->error), "cannot start the trace: out of memory");
    /* Every decoder is warm: a common start a little ahead, so that every
     * thread is out of the barrier. */
    const int64_t start = df_now_ns() + 20000000;
    for (int i = 0; i < k; i++)
        st[i].start_ns = start + (int64_t)((double)i * 1e9 / (rt->o.fps * k));
    for (int i = started; i < k; i++)
        pthread_barrier_wait(&go);
    pthread_barrier_wait(&go);
cleanup:
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    DfStats ss;
    if (s && started == k && df_sched_stats(s, &ss) == 0) {
        tr->has_sched = true;
        tr->tasks = ss.total.tasks_run;
        tr->stolen = ss.total.tasks_stolen;
        tr->parks = ss.total.parks;
        tr->wakeups = ss.total.wakeups_sent;
        tr->idle_ms = (double)ss.total.idle_ns / 1e6;
        for (int w = 0; w < ss.n_workers; w++)
            if (ss.workers[w].max_wait_depth > tr->max_wait_depth)
                tr->max_wait_depth = ss.workers[w].max_wait_depth;
        df_stats_free(&ss);
    }
    if (trace && s && !tr->error[0] && df_sched_trace_write(s, trace, &err) < 0)
        snprintf(tr->error, sizeof(tr->error), "cannot write the trace: %.200s", err.msg);
    if (barriers) {
        pthread_barrier_destroy(&warm);
        pthread_barrier_destroy(&go);
    }
    GArray *late = g_array_new(FALSE, FALSE, sizeof(double));
    for (int i = 0; i < k; i++) {
        if (st[i].error[0] && !tr->error[0])
            snprintf(tr->error, sizeof(tr->error), "%s", st[i].error);
        tr->frames += st[i].frames;
        tr->misses += st[i].misses;
        if (st[i].late_ms)
            g_array_append_vals(late, st[i].late_ms->data, st[i].late_ms->len);
        if (st[i].dec) {
            DfDecoderStats ds;
            df_decoder_stats(st[i].dec, &ds);
            if (isnan(tr->latency_p99_ms) || ds.latency_p99_ms > tr->latency_p99_ms)
                tr->latency_p99_ms = ds.latency_p99_ms;
            df_decoder_free(&st[i].dec);
        }
        if (st[i].late_ms)
            g_array_free(st[i].late_ms, TRUE);
    }
    tr->expected = (uint64_t)k * (uint64_t)rt->total_frames;
    /* A frame that never came missed its deadline too. */
    if (tr->frames < tr->expected)
        tr->misses += tr->expected - tr->frames;
    tr->late_p99_ms = p99_of(late);
    g_array_free(late, TRUE);
    g_free(th);
    g_free(st);
    if (s)
        df_sched_unref(s);
}

/* K pipelines of avdec_* (policy NULL) or of dfdec with that policy. */
static void trial_gst(const DfRt *rt, const char *policy, int workers, int k, DfRtTrial *tr)
{
    memset(tr, 0, sizeof(*tr));
    tr->streams = k;
    tr->latency_p99_ms = tr->late_p99_ms = tr->lead_p50_ms = tr->lead_min_ms = NAN;
    char dfdec[128];
    snprintf(dfdec, sizeof(dfdec), "dfdec n-workers=%d policy=%s", workers, policy ? policy : "");
    const char *name = policy ? dfdec : df_gst_avdec_name(rt->clip.par->codec_id);
    if (!name) {
        snprintf(tr->error, sizeof(tr->error), "no avdec element for %s",
                 avcodec_get_name(rt->clip.par->codec_id));
        return;
    }
    const AVRational cr = rt->clip.frame_rate.num > 0 ? rt->clip.frame_rate : (AVRational){25, 1};
    char sink[128];
    snprintf(sink, sizeof(sink), "%s qos=false max-lateness=-1", rt->sink);
    DfGstRun *runs = g_new0(DfGstRun, (gsize)k);
    DfGstResult *res = g_new0(DfGstResult, (gsize)k);
    for (int i = 0; i < k; i++)
        runs[i] = (DfGstRun){
            .path = rt->clip.path,
            .decoder = name, /* avdec: default threads, as a player would have */
            .sink = sink,
            .map = &rt->map,
            .cpus = workers,
            .sync = true,
            .rate = rt->o.fps / av_q2d(cr),
            .duration_s = rt->o.duration,
            .budget_ns = (int64_t)((double)rt->budget_frames * 1e9 / rt->o.fps),
        };
    DfAffinity saved;
    df_affinity_save(&saved);
    df_bench_confine(&rt->map, workers);
    df_gst_run(runs, k, res);
    df_affinity_restore(&saved);
    for (int i = 0; i < k; i++) {
        if (res[i].error[0] && !tr->error[0])
            snprintf(tr->error, sizeof(tr->error), "%s", res[i].error);
        tr->frames += res[i].frames;
        tr->misses += res[i].late;
        if (isnan(tr->late_p99_ms) || res[i].late_p99_ms > tr->late_p99_ms)
            tr->late_p99_ms = res[i].late_p99_ms; /* worst pipeline's p99 */
        if (isnan(tr->lead_p50_ms) || res[i].lead_p50_ms < tr->lead_p50_ms)
            tr->lead_p50_ms = res[i].lead_p50_ms;
        if (isnan(tr->lead_min_ms) || res[i].lead_min_ms < tr->lead_min_ms)
            tr->lead_min_ms = res[i].lead_min_ms;
    }
    /* What the pipeline delivers for --duration (the clip may be shorter). */
    const double clip_s = rt->clip.n_pkts / av_q2d(cr) / runs[0].rate;
    const double secs = rt->o.duration < clip_s ? rt->o.duration : clip_s;
    /* Less the prerolled first frame, which reaches the sink before the
     * clock runs and is not counted. */
    const double per_stream = floor(secs * rt->o.fps + 0.5) - 1;
    tr->expected = (uint64_t)k * (uint64_t)(per_stream > 0 ? per_stream : 0);
    /* The seek's stop may round a frame either way: only a clear shortfall
     * (more than one frame per stream) counts as frames that never came. */
    if (tr->frames + (uint64_t)k < tr->expected)
        tr->misses += tr->expected - tr->frames;
    g_free(runs);
    g_free(res);
}

/* ------------------------------------------------------------------ T(1) */

/* One T(1) sample: the whole clip through single-threaded libavcodec on
 * the first core, as dfbench decode's "ffmpeg" runs. */
static void sample_t1(DfRt *rt, DfProgress *prog)
{
    df_progress_step(prog, "T(1): single-threaded libavcodec");
    DfAffinity saved;
    df_affinity_save(&saved);
    df_bench_confine(&rt->map, 1);
    DfLavcRun r;
    df_clip_decode_lavc(&rt->clip, 0, 1, NULL, &r);
    df_affinity_restore(&saved);
    rt->t1_samples[rt->n_t1++] = r.error[0] ? NAN : r.fps;
    if (r.error[0] && !rt->t1_error[0])
        snprintf(rt->t1_error, sizeof(rt->t1_error), "%s", r.error);
    double sum = 0;
    int n = 0;
    for (int i = 0; i < rt->n_t1; i++)
        if (!isnan(rt->t1_samples[i])) {
            sum += rt->t1_samples[i];
            n++;
        }
    rt->t1_fps = n ? sum / n : NAN;
}

/* K* = workers x T(1) fps / stream fps: the streams N cores carry at the
 * serial program's cost per frame (NAN when T(1) failed). */
static double k_star(const DfRt *rt, int workers)
{
    return workers * rt->t1_fps / rt->o.fps;
}

/* --------------------------------------------------------------- search */

static bool trial_ok(const DfRtTrial *t)
{
    return !t->error[0] && t->misses == 0;
}

/* On a shared machine one stall of another process can make a single
 * trial miss; a K counts as failed only when a second trial of it misses
 * too.  Both trials are kept and reported. */
static bool trial_ok_confirmed(DfRt *rt, DfRtResult *r, int k, DfProgress *prog, DfRtTrial *t);

static void run_trial(DfRt *rt, DfRtResult *r, int k, DfProgress *prog, DfRtTrial *out)
{
    df_progress_step(prog, "%s, %d worker%s: %d stream%s", r->impl, r->workers,
                     r->workers == 1 ? "" : "s", k, k == 1 ? "" : "s");
    if (r->gst)
        trial_gst(rt, r->policy, r->workers, k, out);
    else
        trial_dfmedia(rt, r->policy, r->workers, k, NULL, out);
    g_array_append_val(r->trials, *out);
    if (out->error[0])
        r->failed = true;
}

static bool trial_ok_confirmed(DfRt *rt, DfRtResult *r, int k, DfProgress *prog, DfRtTrial *t)
{
    run_trial(rt, r, k, prog, t);
    if (trial_ok(t) || t->error[0])
        return trial_ok(t);
    run_trial(rt, r, k, prog, t);
    return trial_ok(t);
}

/* Doubling, then bisection between the last good and the first bad K. */
static void search(DfRt *rt, DfRtResult *r, DfProgress *prog)
{
    DfRtTrial t;
    int good = 0, bad = -1;
    for (int k = 1;;) {
        if (!trial_ok_confirmed(rt, r, k, prog, &t)) {
            bad = k;
            break;
        }
        good = k;
        r->best = t;
        if (k >= rt->o.max_streams)
            break;
        k = k * 2 > rt->o.max_streams ? rt->o.max_streams : k * 2;
    }
    if (bad < 0) {
        r->capped = good == rt->o.max_streams;
    } else {
        while (bad - good > 1) {
            const int mid = good + (bad - good) / 2;
            if (trial_ok_confirmed(rt, r, mid, prog, &t)) {
                good = mid;
                r->best = t;
            } else {
                bad = mid;
            }
        }
    }
    r->max_streams = good;
    if (good == 0)
        r->best = g_array_index(r->trials, DfRtTrial, 0); /* K = 1, with its misses */
    if (!r->trace_path)
        return;
    /* --trace-streams, or the first K that missed (the largest tried when
     * none did): the schedule where it goes wrong. */
    int k = rt->o.trace_streams;
    if (k <= 0)
        k = bad > 0 ? bad : good;
    df_progress_step(prog, "%s, %d worker%s: %d stream%s, traced", r->impl, r->workers,
                     r->workers == 1 ? "" : "s", k, k == 1 ? "" : "s");
    trial_dfmedia(rt, r->policy, r->workers, k, r->trace_path, &r->traced);
    r->trace_written = !r->traced.error[0];
    if (!r->trace_written)
        r->failed = true;
}

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
    o->poll_us = -2;
    o->deadlines = TRUE;
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
        {"json", 'j', 0, G_OPTION_ARG_FILENAME, &o->json, "Write the results as JSON to FILE",
         "FILE"},
        {"csv", 0, 0, G_OPTION_ARG_FILENAME, &o->csv, "Write the results as CSV to FILE", "FILE"},
        {"plot", 0, 0, G_OPTION_ARG_FILENAME, &o->plot,
         "Plot the largest K against workers (.svg or .png)", "FILE"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    g_set_prgname("dfbench realtime");
    GOptionContext *ctx = g_option_context_new("- concurrent real-time streams per worker count");
    g_option_context_set_summary(
        ctx, "K streams of one clip, each paced at --fps, share one dfsched scheduler of N\n"
             "workers; K grows (doubling, then bisection) until a frame misses its deadline\n"
             "start + (i + B)/fps, B = the stream's reorder delay + --latency-frames.  Reports\n"
             "the largest K without a miss and its p99 latency per worker count and policy,\n"
             "next to K independent avdec_* and dfdec pipelines (into --sink, sync=true) on\n"
             "the same cores, and K* = workers x T(1) fps / --fps (T(1): single-threaded\n"
             "libavcodec on the clip, sampled before and after the trials) with each K as a\n"
             "share of it.");
    g_option_context_set_description(
        ctx, "Example: dfbench realtime --input clip.mkv --fps 30 --duration 5 --workers 1,2\n"
             "         --policy cost-local --json rt.json");
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
    if (!o->input) {
        status = df_cli_usage(PROG, "no --input FILE given");
        goto cleanup;
    }
    /* Each bad value by name; the negated tests also refuse NaN. */
    if (!(o->fps > 0 && o->fps <= 1000)) {
        status = df_cli_usage(PROG, "bad --fps %g (more than 0, at most 1000)", o->fps);
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
    if (o->poll_us < -2) {
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
    if (o->sink && strcmp(o->sink, "fakevideosink") != 0 && strcmp(o->sink, "fakesink") != 0) {
        status = df_cli_usage(PROG, "bad --sink \"%s\" (fakevideosink or fakesink)", o->sink);
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
    g_clear_error(&err);
    g_option_context_free(ctx);
    return status;
}

/* --------------------------------------------------------------- output */

static void print_table(const DfRt *rt)
{
    static const char *const headers[] = {"workers",     "impl",     "max K",  "K*",
                                          "K/K*",        "Mpixel/s", "frames", "p99 lat ms",
                                          "p99 late ms", "trials",   "note"};
    DfTable *t = df_table_new(11, headers, "rlrrrrrrrll");
    const double px = (double)rt->clip.par->width * rt->clip.par->height * rt->o.fps / 1e6;
    for (guint i = 0; i < rt->results->len; i++) {
        const DfRtResult *r = &g_array_index(rt->results, DfRtResult, i);
        char w[16], k[32], ks[32], share[32], mp[32], fr[32], lat[32], late[32], note[320];
        GString *trials = g_string_new(NULL);
        for (guint j = 0; j < r->trials->len; j++) {
            const DfRtTrial *tr = &g_array_index(r->trials, DfRtTrial, j);
            g_string_append_printf(trials, "%s%d:%s", j ? " " : "", tr->streams,
                                   tr->error[0] ? "err"
                                   : tr->misses ? "miss"
                                                : "ok");
        }
        snprintf(w, sizeof(w), "%d", r->workers);
        snprintf(k, sizeof(k), "%d%s", r->max_streams, r->capped ? "+" : "");
        const double kst = k_star(rt, r->workers);
        df_fmt_num(ks, sizeof(ks), kst, 1);
        if (isnan(kst) || kst <= 0)
            snprintf(share, sizeof(share), "-");
        else
            snprintf(share, sizeof(share), "%.0f%%", 100.0 * r->max_streams / kst);
        df_fmt_num(mp, sizeof(mp), r->max_streams * px, 1);
        snprintf(fr, sizeof(fr), "%llu/%llu", (unsigned long long)r->best.frames,
                 (unsigned long long)r->best.expected);
        df_fmt_num(lat, sizeof(lat), r->best.latency_p99_ms, 1);
        df_fmt_num(late, sizeof(late), r->best.late_p99_ms, 1);
        note[0] = '\0';
        if (r->oversubscribed)
            snprintf(note, sizeof(note), "oversubscribed");
        for (guint j = 0; j < r->trials->len; j++) {
            const DfRtTrial *tr = &g_array_index(r->trials, DfRtTrial, j);
            if (tr->error[0]) {
                const size_t len = strlen(note);
                snprintf(note + len, sizeof(note) - len, "%sK=%d: %s", len ? "; " : "", tr->streams,
                         tr->error);
                break;
            }
        }
        const char *cells[] = {w, r->impl, k, ks, share, mp, fr, lat, late, trials->str, note};
        df_table_row(t, cells);
        g_string_free(trials, TRUE);
    }
    df_table_print(t, stdout);
    df_table_free(t);
    char t1[64];
    df_fmt_num(t1, sizeof(t1), rt->t1_fps, 1);
    printf("max K: most concurrent streams with no frame later than start + (i + %d)/%.3g s "
           "(B = reorder delay %d + %d frames); '+': --max-streams reached\n"
           "K*: workers x T(1) / %.3g, T(1) = %s fps, single-threaded libavcodec on one core "
           "(mean of %d samples, before and after the trials); K/K*: max K as a share of it\n"
           "Mpixel/s: K x width x height x fps carried in real time (Gustafson's scaled size)\n"
           "p99 lat: dfmedia's packet-in to frame-out latency (worst stream) at max K; p99 late: "
           "arrival - due over all frames (negative: early)\n",
           rt->budget_frames, rt->o.fps, rt->clip.par->video_delay, rt->o.latency_frames, rt->o.fps,
           t1, rt->n_t1);
}

static void print_traces(const DfRt *rt)
{
    for (guint i = 0; i < rt->results->len; i++) {
        const DfRtResult *r = &g_array_index(rt->results, DfRtResult, i);
        if (!r->trace_path)
            continue;
        if (r->trace_written)
            printf("trace of %s, %d worker%s, %d stream%s (%llu of %llu frames late, not a "
                   "trial): %s\n",
                   r->impl, r->workers, r->workers == 1 ? "" : "s", r->traced.streams,
                   r->traced.streams == 1 ? "" : "s", (unsigned long long)r->traced.misses,
                   (unsigned long long)r->traced.expected, r->trace_path);
        else
            fprintf(stderr, "dfbench realtime: error: traced trial of %s, %d worker%s: %s\n",
                    r->impl, r->workers, r->workers == 1 ? "" : "s", r->traced.error);
    }
}

static void json_trial(JsonBuilder *jb, const DfRtTrial *t)
{
    json_builder_begin_object(jb);
    json_builder_set_member_name(jb, "streams");
    json_builder_add_int_value(jb, t->streams);
    json_builder_set_member_name(jb, "frames");
    json_builder_add_int_value(jb, (gint64)t->frames);
    json_builder_set_member_name(jb, "expected_frames");
    json_builder_add_int_value(jb, (gint64)t->expected);
    json_builder_set_member_name(jb, "misses");
    json_builder_add_int_value(jb, (gint64)t->misses);
    df_json_double(jb, "latency_p99_ms", t->latency_p99_ms);
    df_json_double(jb, "late_p99_ms", t->late_p99_ms);
    if (!isnan(t->lead_p50_ms)) {
        /* Pipelines read ahead: how early packets reached the decoder. */
        df_json_double(jb, "input_lead_p50_ms", t->lead_p50_ms);
        df_json_double(jb, "input_lead_min_ms", t->lead_min_ms);
    }
    if (t->has_sched) {
        /* dfsched's counters over the paced part, all workers. */
        json_builder_set_member_name(jb, "sched");
        json_builder_begin_object(jb);
        const struct {
            const char *name;
            uint64_t v;
        } c[] = {{"tasks", t->tasks},
                 {"stolen", t->stolen},
                 {"parks", t->parks},
                 {"wakeups", t->wakeups},
                 {"max_wait_depth", t->max_wait_depth}};
        for (size_t i = 0; i < G_N_ELEMENTS(c); i++) {
            json_builder_set_member_name(jb, c[i].name);
            json_builder_add_int_value(jb, (gint64)c[i].v);
        }
        df_json_double(jb, "idle_ms", t->idle_ms);
        json_builder_end_object(jb);
    }
    if (t->error[0]) {
        json_builder_set_member_name(jb, "error");
        json_builder_add_string_value(jb, t->error);
    }
    json_builder_end_object(jb);
}

static bool write_json(const DfRt *rt)
{
    JsonBuilder *jb = json_builder_new();
    json_builder_begin_object(jb);
    json_builder_set_member_name(jb, "bench");
    json_builder_add_string_value(jb, "realtime");
    df_report_machine_json(jb);
    json_builder_set_member_name(jb, "run");
    json_builder_begin_object(jb);
    json_builder_set_member_name(jb, "input");
    json_builder_add_string_value(jb, rt->clip.name);
    json_builder_set_member_name(jb, "codec");
    json_builder_add_string_value(jb, avcodec_get_name(rt->clip.par->codec_id));
    json_builder_set_member_name(jb, "width");
    json_builder_add_int_value(jb, rt->clip.par->width);
    json_builder_set_member_name(jb, "height");
    json_builder_add_int_value(jb, rt->clip.par->height);
    df_json_double(jb, "fps", rt->o.fps);
    df_json_double(jb, "duration_s", rt->o.duration);
    json_builder_set_member_name(jb, "frames_per_stream");
    json_builder_add_int_value(jb, rt->total_frames);
    json_builder_set_member_name(jb, "reorder_delay_frames");
    json_builder_add_int_value(jb, rt->clip.par->video_delay);
    json_builder_set_member_name(jb, "budget_frames");
    json_builder_add_int_value(jb, rt->budget_frames);
    df_json_double(jb, "budget_ms", rt->budget_frames * 1000.0 / rt->o.fps);
    json_builder_set_member_name(jb, "warmup_packets");
    json_builder_add_int_value(jb, df_clip_warmup_packets(&rt->clip));
    json_builder_set_member_name(jb, "max_streams_tried");
    json_builder_add_int_value(jb, rt->o.max_streams);
    json_builder_set_member_name(jb, "deadlines");
    json_builder_add_boolean_value(jb, rt->o.deadlines);
    /* The pipelines' sink (null: no pipeline ran). */
    json_builder_set_member_name(jb, "sink");
    if (rt->avdec || rt->dfdec)
        json_builder_add_string_value(jb, rt->sink);
    else
        json_builder_add_null_value(jb);
    /* T(1) of the clip, sampled in this run: K* = workers x t1_fps / fps. */
    df_json_double(jb, "t1_fps", rt->t1_fps);
    df_json_double_array(jb, "t1_fps_samples", rt->t1_samples, rt->n_t1);
    if (rt->t1_error[0]) {
        json_builder_set_member_name(jb, "t1_error");
        json_builder_add_string_value(jb, rt->t1_error);
    }
    json_builder_end_object(jb);
    json_builder_set_member_name(jb, "results");
    json_builder_begin_array(jb);
    const double px = (double)rt->clip.par->width * rt->clip.par->height * rt->o.fps;
    for (guint i = 0; i < rt->results->len; i++) {
        const DfRtResult *r = &g_array_index(rt->results, DfRtResult, i);
        json_builder_begin_object(jb);
        json_builder_set_member_name(jb, "impl");
        json_builder_add_string_value(jb, r->impl);
        json_builder_set_member_name(jb, "workers");
        json_builder_add_int_value(jb, r->workers);
        json_builder_set_member_name(jb, "oversubscribed");
        json_builder_add_boolean_value(jb, r->oversubscribed);
        json_builder_set_member_name(jb, "max_streams");
        json_builder_add_int_value(jb, r->max_streams);
        json_builder_set_member_name(jb, "capped");
        json_builder_add_boolean_value(jb, r->capped);
        df_json_double(jb, "pixels_per_s", r->max_streams * px);
        const double kst = k_star(rt, r->workers);
        df_json_double(jb, "k_star", kst);
        df_json_double(jb, "k_share", kst > 0 ? r->max_streams / kst : NAN);
        df_json_double(jb, "latency_p99_ms", r->best.latency_p99_ms);
        df_json_double(jb, "late_p99_ms", r->best.late_p99_ms);
        json_builder_set_member_name(jb, "trials");
        json_builder_begin_array(jb);
        for (guint j = 0; j < r->trials->len; j++)
            json_trial(jb, &g_array_index(r->trials, DfRtTrial, j));
        json_builder_end_array(jb);
        if (r->trace_path) {
            json_builder_set_member_name(jb, "traced_trial");
            json_trial(jb, &r->traced);
            json_builder_set_member_name(jb, "trace");
            if (r->trace_written)
                json_builder_add_string_value(jb, r->trace_path);
            else
                json_builder_add_null_value(jb);
        }
        json_builder_end_object(jb);
    }
    json_builder_end_array(jb);
    json_builder_end_object(jb);
    GError *err = NULL;
    const bool ok = df_json_write(jb, rt->o.json, &err);
    if (!ok) {
        fprintf(stderr, "dfbench realtime: error: cannot write %s: %s\n", rt->o.json, err->message);
        g_error_free(err);
    }
    g_object_unref(jb);
    return ok;
}

static bool write_csv(const DfRt *rt)
{
    static const char *const headers[] = {
        "impl",         "workers", "oversubscribed", "max_streams", "capped",
        "pixels_per_s", "k_star",  "latency_p99_ms", "late_p99_ms", "trials"};
    enum { N_COLS = sizeof(headers) / sizeof(headers[0]) };
    DfCsv csv;
    int ret = df_csv_open(&csv, rt->o.csv, N_COLS, headers);
    if (ret < 0) {
        fprintf(stderr, "dfbench realtime: error: cannot write %s: %s\n", rt->o.csv,
                g_strerror(-ret));
        return false;
    }
    const double px = (double)rt->clip.par->width * rt->clip.par->height * rt->o.fps;
    for (guint i = 0; i < rt->results->len; i++) {
        const DfRtResult *r = &g_array_index(rt->results, DfRtResult, i);
        char w[16], k[16], p[40], ks[40], lat[40], late[40], n[16];
        snprintf(w, sizeof(w), "%d", r->workers);
        snprintf(k, sizeof(k), "%d", r->max_streams);
        snprintf(p, sizeof(p), "%.0f", r->max_streams * px);
        const double kst = k_star(rt, r->workers);
        if (isnan(kst))
            ks[0] = '\0';
        else
            snprintf(ks, sizeof(ks), "%.3f", kst);
        if (isnan(r->best.latency_p99_ms))
            lat[0] = '\0';
        else
            snprintf(lat, sizeof(lat), "%.3f", r->best.latency_p99_ms);
        if (isnan(r->best.late_p99_ms))
            late[0] = '\0';
        else
            snprintf(late, sizeof(late), "%.3f", r->best.late_p99_ms);
        snprintf(n, sizeof(n), "%u", r->trials->len);
        const char *cells[N_COLS] = {r->impl,
                                     w,
                                     r->oversubscribed ? "true" : "false",
                                     k,
                                     r->capped ? "true" : "false",
                                     p,
                                     ks,
                                     lat,
                                     late,
                                     n};
        df_csv_row(&csv, cells);
    }
    ret = df_csv_close(&csv);
    if (ret < 0)
        fprintf(stderr, "dfbench realtime: error: cannot write %s: %s\n", rt->o.csv,
                g_strerror(-ret));
    return ret == 0;
}

static bool write_plot(const DfRt *rt)
{
    const guint n = rt->results->len;
    DfPlotSeries *series = g_new0(DfPlotSeries, n);
    double *x = g_new0(double, n), *y = g_new0(double, n);
    int ns = 0;
    guint used = 0;
    /* Results are grouped by implementation, worker counts in order. */
    for (guint i = 0; i < n;) {
        const DfRtResult *r = &g_array_index(rt->results, DfRtResult, i);
        DfPlotSeries *s = &series[ns++];
        s->label = r->impl;
        s->x = x + used;
        s->y = y + used;
        while (i < n && strcmp(g_array_index(rt->results, DfRtResult, i).impl, r->impl) == 0) {
            const DfRtResult *q = &g_array_index(rt->results, DfRtResult, i);
            x[used] = q->workers;
            y[used] = q->max_streams;
            used++;
            s->n++;
            i++;
        }
    }
    const DfPlotPanel panel = {.title = "real-time streams carried",
                               .y_label = "largest K without a missed deadline",
                               .n_series = ns,
                               .series = series};
    char err[256];
    const int ret =
        df_plot_write(rt->o.plot, "workers (cores)", false, &panel, 1, err, sizeof(err));
    if (ret < 0)
        fprintf(stderr, "dfbench realtime: error: %s\n", err);
    g_free(series);
    g_free(x);
    g_free(y);
    return ret == 0;
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
    if (rt.avdec || rt.dfdec)
        printf("pipelines: filesrc ! parsebin ! DECODER ! %s sync=true qos=false "
               "max-lateness=-1\n",
               rt.sink);
    fflush(stdout);
    /* The number of trials is not known ahead (the search stops at the
     * first miss): the bar counts doubling steps up to the cap. */
    int steps = 0;
    for (int k = 1; k <= rt.o.max_streams; k *= 2)
        steps++;
    DfProgress prog;
    df_progress_begin(&prog, steps * (int)rt.results->len + T1_SAMPLES);
    sample_t1(&rt, &prog);
    for (guint i = 0; i < rt.results->len; i++)
        search(&rt, &g_array_index(rt.results, DfRtResult, i), &prog);
    sample_t1(&rt, &prog);
    df_progress_end(&prog);
    printf("\n");
    print_table(&rt);
    print_traces(&rt);
    if (rt.o.json && !write_json(&rt))
        status = DF_BENCH_FAILED;
    if (rt.o.csv && !write_csv(&rt))
        status = DF_BENCH_FAILED;
    if (rt.o.plot && !write_plot(&rt))
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
    df_gst_deinit();
    df_cpu_map_fini(&rt.map);
    return status;
}
