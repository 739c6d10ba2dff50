/* dfbench realtime's state, shared by its command line and main
 * (bench_realtime.c), its trials and search (bench_realtime_run.c) and its
 * output (bench_realtime_out.c).  Not used by other subcommands. */
#ifndef DF_BENCH_REALTIME_H
#define DF_BENCH_REALTIME_H

#include "bench_media.h"
#include "report.h"

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#define PROG "dfbench realtime"

#define MAX_WORKERS         1024
#define DEFAULT_MAX_STREAMS 64
#define T1_SAMPLES          2 /* T(1): one before the trials, one after */

typedef struct DfRtOpts {
    char *input, *workers, *policy, *peers, *sink, *json, *csv, *plot, *trace, *threading;
    double fps, duration;
    int latency_frames, max_streams, poll_us, trace_streams;
    gboolean deadlines;  /* FALSE: --no-deadlines */
    gboolean eager_jobs; /* --eager-jobs */
    gboolean overload;   /* --overload: dfdec past capacity, admission on and off */
    double overload_factor;
    /* --memory-every: --overload samples memory this often (s; 0: not) */
    double memory_every;
    /* --stagger: --overload starts stream i at i x this (s; 0: all in one
     * frame period) */
    double stagger;
    /* --gop-phases: stream i starts i/K of a GOP after the first */
    gboolean gop_phases;
} DfRtOpts;

/* One trial: K streams on one configuration. */
typedef struct DfRtTrial {
    int streams;
    uint64_t frames, expected, misses;
    double latency_p99_ms; /* worst stream (dfmedia); NAN for avdec */
    double late_p99_ms;    /* p99 of arrival - due over all frames */
    /* dfmedia: when the first and the last late frame arrived, ms after
     * the clock started (NAN: none late), to tell a start-up transient
     * from a steady shortfall. */
    double first_miss_ms, last_miss_ms;
    /* Pipelines: how long before its running time a packet reached the
     * decoder (median of the least-ahead pipeline, and least of all);
     * NAN for dfmedia, whose packets arrive at their time. */
    double lead_p50_ms, lead_min_ms;
    /* dfmedia: the scheduler's counters over the paced part (dfsched
     * stats, all workers); has_sched false for pipelines. */
    bool has_sched;
    uint64_t tasks, stolen, parks, wakeups, max_wait_depth, jobs_inline;
    double idle_ms;
    /* Threads and memory the trial added per stream, half way through
     * (for dfmedia: beyond its scheduler; dfdec's shared scheduler is
     * part of the pipelines' growth). */
    DfPerStream per_stream;
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
    DfThreading threading; /* --threading: dfmedia's and dfdec's */
    int total_frames;      /* frames each stream decodes */
    double gop_frames;     /* the clip's mean key-frame interval, in frames */
    GArray *results;       /* DfRtResult */
    /* T(1): single-threaded libavcodec fps of the clip, per sample (NAN:
     * failed), and their mean over the good ones (NAN: none). */
    double t1_samples[T1_SAMPLES];
    int n_t1;
    double t1_fps;
    char t1_error[256];   /* the first failed sample's reason */
    bool overload_failed; /* --overload: a pipeline failed (not refused) */
} DfRt;

/* The trials (bench_realtime_run.c). */
/* One T(1) sample: the whole clip through single-threaded libavcodec on
 * the first core. */
void df_rt_sample_t1(DfRt *rt, DfProgress *prog);
/* The most streams r's configuration keeps real time: doubling, then
 * bisection. */
void df_rt_search(DfRt *rt, DfRtResult *r, DfProgress *prog);
/* K* = workers x T(1) fps / stream fps (NAN when T(1) failed). */
double df_rt_k_star(const DfRt *rt, int workers);

/* --overload (bench_realtime_overload.c): K = factor x K* dfdec
 * pipelines per worker count, admission=refuse then none; prints a table
 * per worker count. */
void df_rt_overload(DfRt *rt, DfProgress *prog);
/* When stream i of k starts, after the first (bench_realtime_run.c). */
int64_t df_rt_start_offset_ns(const DfRt *rt, int i, int k);
/* K pipelines of DECODER into SINK, paced at --fps (bench_realtime_run.c). */
void df_rt_run_pipelines(const DfRt *rt, int workers, const char *decoder, const char *sink, int k,
                         DfGstResult *res, DfProcSample *mid);

/* The output (bench_realtime_out.c).  The writers return false with the
 * error said. */
void df_rt_print_table(const DfRt *rt);
void df_rt_print_traces(const DfRt *rt);
bool df_rt_write_json(const DfRt *rt);
bool df_rt_write_csv(const DfRt *rt);
bool df_rt_write_plot(const DfRt *rt);

#endif
