/* dfbench decode's runs: one sample of a configuration (libavcodec, its
 * streams, dfmedia or a GStreamer pipeline), the round robin over the
 * repeats and the traced runs between them.  The method is in
 * bench_decode.c. */
#include "bench_decode.h"
#include "dfbench.h"
#include "dfsched_trace.h"
#include "report.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ runs */

typedef struct DfSample {
    double fps, p50, p99;
    double first_ms, steady_fps; /* df_first_frame_ms(), df_steady_fps() */
    double cpu;                  /* ms of CPU per frame over the timed pass */
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
    s->fps = s->first_ms = s->steady_fps = NAN;
}

/* `sync`: ffmpeg-streams' barrier, so that the timed passes overlap. */
static void run_lavc(const DfClip *c, int type, int threads, pthread_barrier_t *sync, DfSample *out)
{
    DfLavcRun r;
    df_clip_decode_lavc(c, type, threads, sync, &r);
    out->cpu = r.cpu_ms;
    out->frames = r.frames;
    out->fps = r.fps;
    out->first_ms = r.first_ms;
    out->steady_fps = r.steady_fps;
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
    out->fps = out->steady_fps = out->first_ms = 0;
    out->frames = 0;
    double cpu_ms = 0;
    if (started < n)
        sample_fail(out, "pthread_create failed");
    for (int i = 0; i < started && !out->error[0]; i++) {
        if (r[i].out.error[0])
            sample_fail(out, "%s", r[i].out.error);
        out->fps += r[i].out.fps;
        out->steady_fps += r[i].out.steady_fps;
        /* The streams' frames flow once the last one's do. */
        out->first_ms = fmax(out->first_ms, r[i].out.first_ms);
        out->frames += r[i].out.frames;
        cpu_ms += r[i].out.cpu * (double)r[i].out.frames;
    }
    out->cpu = out->frames ? cpu_ms / (double)out->frames : NAN;
    g_free(th);
    g_free(r);
}

/* `eager`: for a --trace run, dfsim's input (run_df starts the trace
 * after the warm-up); not for --trace-overhead's, which must run as the
 * samples do. */
static int new_sched(const DfDecBench *b, const char *policy, int workers, bool eager,
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
    /* A traced run is dfsim's input: every job a node, on one worker too
     * (there the stream then keeps its slice plan, codecs.md). */
    sc.eager_jobs = eager;
    return df_sched_new(&sc, out, err);
}

/* All of `n` packets of `c` into `dec` and its frames out. */
static void decode_packets(DfDecoder *dec, const DfClip *c, int n, AVFrame *f, DfFrameTimes *t)
{
    for (int i = 0; i < n; i++) {
        while (df_decoder_send_packet(dec, c->pkts[i]) == AVERROR(EAGAIN))
            if (df_decoder_receive_frame(dec, f) == 0)
                df_frame_out(t);
        while (df_decoder_try_receive_frame(dec, f) == 0)
            df_frame_out(t);
    }
    df_decoder_send_packet(dec, NULL);
    while (df_decoder_receive_frame(dec, f) == 0)
        df_frame_out(t);
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
    DfFrameTimes warm = {0}, pass = {0};
    decode_packets(dec, c, df_clip_warmup_packets(c), f, &warm);
    df_decoder_flush(dec);
    df_decoder_reset_latency(dec);
    if (trace_capacity && df_sched_trace_start(s, trace_capacity) < 0) {
        sample_fail(out, "cannot start the trace: out of memory");
        goto cleanup;
    }
    const int64_t c0 = df_report_cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
    const int64_t t0 = df_now_ns();
    decode_packets(dec, c, c->n_pkts, f, &pass);
    const int64_t t1 = df_now_ns();
    const uint64_t frames = pass.frames;
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
    out->first_ms = df_first_frame_ms(t0, pass.first_ns, frames);
    out->steady_fps = df_steady_fps(pass.first_ns, pass.last_ns, frames);
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
    DfGstRun run = {
        .path = c->path, .decoder = decoder, .sink = b->sink, .map = &b->map, .cpus = workers};
    DfGstResult res;
    if (df_gst_run(&run, 1, &res, NULL) < 0 || res.error[0]) {
        sample_fail(out, "%s", res.error[0] ? res.error : "pipeline failed");
        return;
    }
    out->frames = res.frames;
    out->fps = res.fps;
    out->first_ms = res.first_ms;
    out->steady_fps = res.steady_fps;
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
    if (new_sched(b, b->impls[cf->impl].policy, cf->workers, false, &sched, &err) < 0) {
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
    DfSample s = {
        .fps = NAN, .p50 = NAN, .p99 = NAN, .cpu = NAN, .first_ms = NAN, .steady_fps = NAN};
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
    cf->first_ms[i] = s.error[0] ? NAN : s.first_ms;
    cf->steady[i] = s.error[0] ? NAN : s.steady_fps;
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

void df_dec_configs_init(DfDecBench *b)
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
                cf.steady = g_new(double, (gsize)b->o.repeat);
                cf.first_ms = g_new(double, (gsize)b->o.repeat);
                cf.p50 = g_new(double, (gsize)b->o.repeat);
                cf.p99 = g_new(double, (gsize)b->o.repeat);
                cf.cpu = g_new(double, (gsize)b->o.repeat);
                if (b->o.trace_overhead && b->impls[i].kind == DF_IMPL_DFMEDIA)
                    cf.fps_on = g_new(double, (gsize)b->o.repeat);
                g_array_append_val(b->configs, cf);
            }
}

void df_dec_configs_free(DfDecBench *b)
{
    if (!b->configs)
        return;
    for (guint i = 0; i < b->configs->len; i++) {
        DfDecConfig *cf = &g_array_index(b->configs, DfDecConfig, i);
        g_free(cf->fps);
        g_free(cf->steady);
        g_free(cf->first_ms);
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
    if (new_sched(b, b->impls[impl].policy, workers, true, &s, &err) < 0) {
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

void df_dec_print_traces(const DfDecBench *b)
{
    for (int i = 0; i < b->n_traces; i++)
        if (!isnan(b->traces[i].fps))
            printf("trace of %s on %s, %d worker%s (%.1f fps traced): %s\n", b->clips[0].name,
                   b->impls[b->trace_impl].name, b->traces[i].workers,
                   b->traces[i].workers == 1 ? "" : "s", b->traces[i].fps, b->traces[i].path);
}

void df_dec_run_all(DfDecBench *b)
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
