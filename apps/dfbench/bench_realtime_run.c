/* dfbench realtime's trials: K streams decoded at once, each paced to the
 * clip's frame rate (one thread each), on dfmedia or GStreamer, T(1), and
 * the search for the most streams that stay real time.  The method is in
 * bench_realtime.c. */
#include "bench_realtime.h"
#include "dfsched_trace.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------- stream */

typedef struct DfRtStream {
    const DfRt *rt;
    DfDecoder *dec;
    const DfCpuMap *map;
    int cpus;
    pthread_barrier_t *warm, *go; /* warm-ups done; start_ns set */
    int64_t start_ns;             /* written before `go`, read after it */
    uint64_t frames, misses;
    int64_t first_miss_ns, last_miss_ns; /* since start_ns, of this stream's late frames */
    GArray *late_ms;                     /* double */
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
    if (now > due) {
        if (!st->misses)
            st->first_miss_ns = now - st->start_ns;
        st->last_miss_ns = now - st->start_ns;
        st->misses++;
    }
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
        if (draining) {
            while (df_decoder_receive_frame(st->dec, f) == 0)
                take_frame(st, df_now_ns());
            break;
        }
        /* Frames as they are done until the next packet is due, asleep on
         * the decoder meanwhile (an application's thread would not poll:
         * K threads waking every millisecond take the workers' cores). */
        const int64_t next = st->start_ns + (int64_t)((double)k * 1e9 / fps);
        while (df_decoder_receive_frame_until(st->dec, f, next) == 0)
            take_frame(st, df_now_ns());
        /* EAGAIN: the packet is due, or nothing was in flight. */
        sleep_until(next);
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
    tr->first_miss_ms = tr->last_miss_ms = NAN;
    tr->per_stream = (DfPerStream){NAN, NAN, NAN};
    char cpus[256];
    df_cpu_map_list(&rt->map, workers, cpus, sizeof(cpus));
    DfSchedConfig sc;
    df_sched_config_init(&sc);
    sc.n_workers = workers;
    sc.policy = policy;
    sc.cpuset = cpus;
    sc.eager_jobs = rt->o.eager_jobs;
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
    /* The scheduler is there for every stream: the streams' own share is
     * what grows from here. */
    DfProcSample before, mid;
    df_proc_sample_trimmed(&before);
    DfDecoderConfig cfg;
    df_decoder_config_init(&cfg);
    cfg.log_level = AV_LOG_ERROR;
    cfg.threading = rt->threading;
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
        st[i].start_ns = start + df_rt_start_offset_ns(rt, i, k);
    for (int i = started; i < k; i++)
        pthread_barrier_wait(&go);
    pthread_barrier_wait(&go);
    g_usleep((gulong)(rt->o.duration * 0.5e6));
    df_proc_sample(&mid);
    df_proc_per_stream(&before, &mid, k, &tr->per_stream);
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
        tr->jobs_inline = ss.total.jobs_inline;
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
        if (st[i].misses) {
            const double first = (double)st[i].first_miss_ns / 1e6;
            const double last = (double)st[i].last_miss_ns / 1e6;
            if (isnan(tr->first_miss_ms) || first < tr->first_miss_ms)
                tr->first_miss_ms = first;
            if (isnan(tr->last_miss_ms) || last > tr->last_miss_ms)
                tr->last_miss_ms = last;
        }
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

int64_t df_rt_start_offset_ns(const DfRt *rt, int i, int k)
{
    /* --stagger (overload): one by one, each into the load of those
     * before.  --gop-phases: spread over one GOP, as independent sources
     * are.  Else over one frame period: started at once, all K streams
     * would have every frame due at the same instants; started within a
     * period, their I-frames still come together. */
    const double period = rt->o.gop_phases ? rt->gop_frames / rt->o.fps : 1.0 / rt->o.fps;
    const double s = rt->o.stagger > 0 ? (double)i * rt->o.stagger : (double)i * period / k;
    return (int64_t)(s * 1e9);
}

/* The pipelines play the clip at --fps: the seek's rate. */
static double pipeline_rate(const DfRt *rt)
{
    const AVRational cr = rt->clip.frame_rate.num > 0 ? rt->clip.frame_rate : (AVRational){25, 1};
    return rt->o.fps / av_q2d(cr);
}

/* K pipelines filesrc ! parsebin ! DECODER ! SINK sync=true, played at
 * --fps for --duration on the first `workers` cores; res has k entries. */
void df_rt_run_pipelines(const DfRt *rt, int workers, const char *decoder, const char *sink, int k,
                         DfGstResult *res, DfProcSample *mid)
{
    const int64_t lead = df_clip_reorder_lead_ns(&rt->clip);
    DfGstRun *runs = g_new0(DfGstRun, (gsize)k);
    for (int i = 0; i < k; i++)
        runs[i] = (DfGstRun){
            .path = rt->clip.path,
            .decoder = decoder,
            .sink = sink,
            .map = &rt->map,
            .cpus = workers,
            .sync = true,
            .rate = pipeline_rate(rt),
            .duration_s = rt->o.duration,
            .budget_ns = (int64_t)((double)rt->budget_frames * 1e9 / rt->o.fps),
            .reorder_lead_ns = lead,
            .window_frames = (int)(rt->o.duration * rt->o.fps),
            .start_offset_ns = df_rt_start_offset_ns(rt, i, k),
        };
    DfAffinity saved;
    df_affinity_save(&saved);
    df_bench_confine(&rt->map, workers);
    df_gst_run(runs, k, res, mid);
    df_affinity_restore(&saved);
    g_free(runs);
}

/* K pipelines of avdec_* (policy NULL) or of dfdec with that policy. */
static void trial_gst(const DfRt *rt, const char *policy, int workers, int k, DfRtTrial *tr)
{
    memset(tr, 0, sizeof(*tr));
    tr->streams = k;
    tr->latency_p99_ms = tr->late_p99_ms = tr->lead_p50_ms = tr->lead_min_ms = NAN;
    tr->first_miss_ms = tr->last_miss_ms = NAN;
    tr->per_stream = (DfPerStream){NAN, NAN, NAN};
    char dfdec[160];
    snprintf(dfdec, sizeof(dfdec), "dfdec n-workers=%d policy=%s threading=%s", workers,
             policy ? policy : "", df_threading_name(rt->threading));
    const char *name = policy ? dfdec : df_gst_avdec_name(rt->clip.par->codec_id);
    if (!name) {
        snprintf(tr->error, sizeof(tr->error), "no avdec element for %s",
                 avcodec_get_name(rt->clip.par->codec_id));
        return;
    }
    char sink[128];
    snprintf(sink, sizeof(sink), "%s qos=false max-lateness=-1", rt->sink);
    DfGstResult *res = g_new0(DfGstResult, (gsize)k);
    /* avdec: default threads, as a player would have. */
    DfProcSample before, mid;
    df_proc_sample_trimmed(&before);
    df_rt_run_pipelines(rt, workers, name, sink, k, res, &mid);
    df_proc_per_stream(&before, &mid, k, &tr->per_stream);
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
    /* The frames of the window (--duration played at --fps; the clip may
     * be shorter), as df_gst_run() counts them, less the prerolled first
     * frame, which reaches the sink before the clock runs and is not
     * counted. */
    const int64_t window = df_gst_window_ns(rt->o.duration, pipeline_rate(rt));
    const int per_stream = df_clip_frames_before(&rt->clip, window) - 1;
    tr->expected = (uint64_t)k * (uint64_t)(per_stream > 0 ? per_stream : 0);
    /* A parser may stamp an elementary stream's frames a little otherwise
     * than libavformat: only a clear shortfall (more than one frame per
     * stream) counts as frames that never came. */
    if (tr->frames + (uint64_t)k < tr->expected)
        tr->misses += tr->expected - tr->frames;
    g_free(res);
}

/* ------------------------------------------------------------------ T(1) */

/* One T(1) sample: the whole clip through single-threaded libavcodec on
 * the first core, as dfbench decode's "ffmpeg" runs. */
void df_rt_sample_t1(DfRt *rt, DfProgress *prog)
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
double df_rt_k_star(const DfRt *rt, int workers)
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

/* A K that misses is tried once more (a miss may be a one-off), unless it
 * is more than K*: more streams than the cores can decode at all cannot
 * keep up, and a second look at them only lengthened the search. */
static bool trial_ok_confirmed(DfRt *rt, DfRtResult *r, int k, DfProgress *prog, DfRtTrial *t)
{
    run_trial(rt, r, k, prog, t);
    if (trial_ok(t) || t->error[0])
        return trial_ok(t);
    const double k_star = df_rt_k_star(rt, r->workers);
    if (k_star > 0 && k > k_star)
        return false;
    run_trial(rt, r, k, prog, t);
    return trial_ok(t);
}

/* The search starts at 3/4 of K* (1 when T(1) failed): on the H.264 and
 * HEVC clips every implementation measured carried about that much or more
 * (avdec 0.69-0.83, dfmedia and dfdec 0.80-0.98), and starting there
 * instead of at half saves the steps below it; where less is carried
 * (1080p MPEG-2: 0.44-0.58) the first trial misses and the bisection
 * below it takes about as many steps as the galloping would have.  From a
 * good K the step doubles (K+1, K+2, K+4, ...); from a bad one, or after
 * the first bad step, bisection between the last good and the first bad
 * K. */
static int search_start(const DfRt *rt, const DfRtResult *r)
{
    const double from = df_rt_k_star(rt, r->workers) * 3 / 4;
    if (!(from >= 1))
        return 1;
    return from > rt->o.max_streams ? rt->o.max_streams : (int)from;
}

void df_rt_search(DfRt *rt, DfRtResult *r, DfProgress *prog)
{
    DfRtTrial t;
    int good = 0, bad = -1;
    const double k_star = df_rt_k_star(rt, r->workers);
    const int over_k_star = k_star > 0 ? (int)floor(k_star) + 1 : INT_MAX;
    for (int k = search_start(rt, r), step = 1;;) {
        if (!trial_ok_confirmed(rt, r, k, prog, &t)) {
            bad = k;
            break;
        }
        good = k;
        r->best = t;
        if (k >= rt->o.max_streams)
            break;
        int next = k + step;
        /* A step past K* first tries the smallest K over it: more is not
         * likely to keep up, and that one tells. */
        if (k < over_k_star && next > over_k_star)
            next = over_k_star;
        k = next > rt->o.max_streams ? rt->o.max_streams : next;
        step *= 2;
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
    if (good == 0) /* K = 1 (the bisection tried it last), with its misses */
        r->best = g_array_index(r->trials, DfRtTrial, r->trials->len - 1);
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
