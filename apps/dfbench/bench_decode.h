/* dfbench decode's state, shared by its command line and main
 * (bench_decode.c), its runs (bench_decode_run.c) and its output
 * (bench_decode_out.c).  Not used by other subcommands. */
#ifndef DF_BENCH_DECODE_H
#define DF_BENCH_DECODE_H

#include "bench_media.h"

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#define PROG "dfbench decode"

/* DfDecImpl.lavc_type of ffmpeg-streams: N single-threaded decodes at once. */
#define LAVC_STREAMS (-1)

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
    double *steady;          /* per sample: df_steady_fps() */
    double *first_ms;        /* per sample: df_first_frame_ms() */
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
    char *trace_policy, *sink;
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
    const char *sink; /* the pipelines': fakevideosink or fakesink; NULL: no pipeline */
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

/* The runs (bench_decode_run.c). */
void df_dec_configs_init(DfDecBench *b);
void df_dec_configs_free(DfDecBench *b);
/* Every configuration, --repeat times, round robin; the traces between. */
void df_dec_run_all(DfDecBench *b);
/* Where the traces went (or why not). */
void df_dec_print_traces(const DfDecBench *b);

/* The output (bench_decode_out.c).  The writers return false with the
 * error said. */
void df_dec_print_header(const DfDecBench *b);
void df_dec_print_table(const DfDecBench *b);
void df_dec_print_trace_overhead(const DfDecBench *b);
bool df_dec_write_json(const DfDecBench *b);
bool df_dec_write_csv(const DfDecBench *b);
bool df_dec_write_plot(const DfDecBench *b);

#endif
