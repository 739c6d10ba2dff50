/* What dfbench decode and dfbench realtime share: clips held in memory,
 * the calling thread confined to "N cores", option parsing, and the
 * GStreamer pipelines (avdec_*, dfdec) when the build has GStreamer. */
#ifndef DF_BENCH_MEDIA_H
#define DF_BENCH_MEDIA_H

#include "affinity.h"
#include "dfmedia.h"

#include <glib.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* A clip's video packets, demuxed once so that demuxing is not timed. */
typedef struct DfClip {
    char *path;
    char *name; /* basename, for tables */
    AVCodecParameters *par;
    AVRational tb;
    AVRational frame_rate; /* the stream's (0/1 when unknown) */
    AVPacket **pkts;
    int n_pkts;
} DfClip;

/* Load every packet of the best video stream of `path`.  Returns 0 or a
 * negative AVERROR with a message in `err`. */
int df_clip_load(const char *path, DfClip *clip, char *err, size_t err_len);
void df_clip_free(DfClip *clip);

/* Packets decoded before a timed pass, then drained and flushed: the
 * codec's buffer pools and the picture pool hold their memory.  A cold
 * decoder's first pictures pay first-touch page faults (8-14 us per 4 KiB
 * page on these VMs, 3000-3600 per MPEG-2 run); how many depended on what
 * the previous sample left in the heap, so a 240-frame run's fps varied by
 * 10-20 % with its neighbour.  Every in-process implementation warms up
 * alike (about a second of video: every reference and reorder buffer). */
#define DF_CLIP_WARMUP_PACKETS 24

/* DF_CLIP_WARMUP_PACKETS, or fewer when the clip is shorter. */
int df_clip_warmup_packets(const DfClip *c);

/* Packets per key frame (the mean GOP; the whole clip without any). */
double df_clip_gop_frames(const DfClip *c);

/* Frames of `c` shown before `end_ns` of the clip's stream time (its PTS,
 * as a GStreamer demuxer stamps its buffers); a packet without a PTS at
 * its index over the frame rate. */
int df_clip_frames_before(const DfClip *c, int64_t end_ns);

/* How far (ns of stream time) a packet's PTS may run ahead of a packet
 * decoded after it: the largest over the clip, or 16 frame periods (the
 * deepest reorder H.264 and HEVC allow) when a packet has no PTS.  A
 * demuxer that ends a segment at the first keyframe at or past its stop
 * needs a stop that far past the last frame wanted: an open GOP's I-frame
 * is decoded before the B-frames shown just before it. */
int64_t df_clip_reorder_lead_ns(const DfClip *c);

/* CPU ms per frame between two CPU clock readings; NAN when unknown. */
double df_cpu_ms_per_frame(int64_t c0, int64_t c1, uint64_t frames);

/* A timed pass's start-up and its rate once frames flow, beside the whole
 * pass's rate: a pipeline's pass includes its start (states, typefinding,
 * preroll, pools), while an in-process decoder is opened and warmed
 * before it.  ms from the pass's start to its first frame (NAN: none);
 * frames after the first over the time from the first to the last (NAN:
 * fewer than two). */
double df_first_frame_ms(int64_t t0_ns, int64_t first_ns, uint64_t frames);
double df_steady_fps(int64_t first_ns, int64_t last_ns, uint64_t frames);

/* When the frames of a pass came out: df_frame_out() per frame. */
typedef struct DfFrameTimes {
    uint64_t frames;
    int64_t first_ns, last_ns;
} DfFrameTimes;

void df_frame_out(DfFrameTimes *t);

/* One in-process libavcodec decode of a whole clip. */
typedef struct DfLavcRun {
    double fps;        /* frames / wall time of the timed pass; NAN when it failed */
    double first_ms;   /* df_first_frame_ms() of the timed pass */
    double steady_fps; /* df_steady_fps() of the timed pass */
    double cpu_ms;     /* CPU time per frame over the timed pass; NAN when unknown */
    uint64_t frames;   /* frames out of the timed pass */
    char error[256];   /* non-empty when it failed */
} DfLavcRun;

/* Decode every packet of `c` with libavcodec on the calling thread, after
 * a warm-up of df_clip_warmup_packets(c) packets: `type` 0 is the serial
 * program, single-threaded libavcodec (T(1)); FF_THREAD_SLICE or
 * FF_THREAD_FRAME use `threads` of libavcodec's own.  With `sync`, every
 * caller passes that barrier after its warm-up (even on failure), so that
 * several timed passes overlap, and CPU time is the calling thread's; else
 * it is the process's. */
void df_clip_decode_lavc(const DfClip *c, int type, int threads, pthread_barrier_t *sync,
                         DfLavcRun *out);

/* Confine the calling thread to the CPUs of `n` workers (the first n cores,
 * all PUs when n exceeds them), so that threads it creates from now on —
 * libavcodec's, GStreamer's — inherit "N cores".  Returns 0 or -errno. */
int df_bench_confine(const DfCpuMap *map, int n);

/* ------------------------------------------------------------ GStreamer */

/* True when dfbench was built with GStreamer. */
bool df_gst_built(void);

/* Initialise GStreamer once (no-op without it).  False when it cannot. */
bool df_gst_init(void);

/* Release GStreamer at exit (when it was initialised), so that leak
 * checkers see only what dfbench itself left behind. */
void df_gst_deinit(void);

/* True when the element factory exists (GST_PLUGIN_PATH is honoured). */
bool df_gst_have(const char *factory);

/* True when elements of `factory` have a property `prop` (a property of an
 * element still being written may come later). */
bool df_gst_has_property(const char *factory, const char *prop);

/* The avdec_* element for a codec, or NULL. */
const char *df_gst_avdec_name(enum AVCodecID id);

/* One GStreamer decode of `path` through
 *   filesrc ! parsebin ! DECODER ! SINK
 * `decoder` and `sink` are gst-launch fragments ("avdec_h264
 * max-threads=2", "fakevideosink qos=false"); sink NULL: fakesink.
 * sync = false: as fast as possible (decode).  sync = true: rendered in
 * real time at `rate` x the clip's own speed, for `duration_s` seconds of
 * running time (0: to the end), counting frames that reach the sink later
 * than `budget_ns` after their running time (realtime).  With a duration,
 * only the frames of that window (PTS before df_gst_window_ns()) are
 * counted, and the seek's stop lies `reorder_lead_ns` past the window, so
 * that the demuxer does not end the segment before the window's last
 * frames in decode order (df_clip_reorder_lead_ns()). */
typedef struct DfGstRun {
    const char *path;
    const char *decoder;
    const char *sink;    /* NULL: fakesink */
    const DfCpuMap *map; /* streaming threads confined to `cpus` workers' CPUs */
    int cpus;
    bool sync;
    double rate;
    double duration_s;
    int64_t budget_ns;
    int64_t reorder_lead_ns;
    int64_t start_offset_ns; /* goes PLAYING this long after the first run (runs in order) */
    /* sync: frames the window holds (0: unknown).  The per-frame samples
     * are reserved for them up front, so that the harness's own arrays do
     * not read as the decoders' memory growing over a long run. */
    int window_frames;
} DfGstRun;

/* The end of a run's window in the clip's stream time: `duration_s` of
 * running time at `rate` (ns; -1: no window, duration_s <= 0). */
int64_t df_gst_window_ns(double duration_s, double rate);

typedef struct DfGstResult {
    uint64_t frames;
    uint64_t late;      /* sync: frames past their due time + budget */
    double fps;         /* frames / wall time from PLAYING to the last frame */
    double first_ms;    /* df_first_frame_ms() from PLAYING */
    double steady_fps;  /* df_steady_fps() */
    double late_p99_ms; /* sync: p99 of arrival - (running time + budget); < 0: early */
    /* sync: when the first and the last late frame reached the sink, s of
     * the pipeline's running time (NAN: none late): a start-up transient
     * from late frames all along. */
    double late_first_s, late_last_s;
    /* sync: how long before its running time (by DTS) a packet reached the
     * decoder, median and least: the pipeline reads ahead of a live source
     * by that much (NAN: unknown). */
    double lead_p50_ms, lead_min_ms;
    /* The decoder's QoS messages: frames it dropped (GstVideoDecoder posts
     * one per frame dropped). */
    uint64_t dropped;
    /* The decoder refused the stream (a resource-busy error: dfdec's
     * admission=refuse); not an error of the run.  `warned`: it posted a
     * resource-busy warning (admission=warn). */
    bool refused, warned;
    char error[256]; /* non-empty when the run failed */
} DfGstResult;

/* What the process holds (bench_proc.c): threads (-1: unknown), resident
 * memory and heap in use (MiB; NAN: unknown). */
typedef struct DfProcSample {
    int threads;
    double rss_mib, heap_mib;
} DfProcSample;

/* Growth from `before` to `mid` over k streams (NAN: unknown). */
typedef struct DfPerStream {
    double threads, rss_mib, heap_mib;
} DfPerStream;

void df_proc_sample(DfProcSample *out);
/* The same after malloc_trim(): the baseline before a trial. */
void df_proc_sample_trimmed(DfProcSample *out);
void df_proc_per_stream(const DfProcSample *before, const DfProcSample *mid, int k,
                        DfPerStream *out);

/* A thread that takes df_proc_sample_trimmed() every `every_s` seconds
 * until stopped: memory over a long run (--overload's soak).  The trim
 * returns what the allocator holds free, so that a flat trimmed RSS means
 * nothing grows, not that the arenas happen to be big enough. */
typedef struct DfProcPoint {
    double t_s; /* since df_proc_sampler_start() */
    DfProcSample p;
} DfProcPoint;
typedef struct DfProcSampler DfProcSampler;
DfProcSampler *df_proc_sampler_start(double every_s);
/* Joins the thread; returns its samples (DfProcPoint), the caller's to free. */
GArray *df_proc_sampler_stop(DfProcSampler *s);

/* Several pipelines at once (realtime: K independent avdec pipelines in
 * one process); res[i] per pipeline.  Returns 0 when all ran.  `mid`
 * (may be NULL): the process sampled half way through the runs' window
 * (sync runs). */
int df_gst_run(const DfGstRun *runs, int n, DfGstResult *res, DfProcSample *mid);

#endif
