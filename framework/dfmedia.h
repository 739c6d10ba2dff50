/* dfmedia — libavcodec decode as per-frame dataflow graphs on dfsched.
 *
 * Per frame k the graph is (docs/design.md, "The per-frame graph"):
 *   D(k)    the decode call into libavcodec (serial chain D(k-1) -> D(k));
 *           inside it the codec's slice jobs become nodes S(k,i)
 *   F(k,b)  filter bands (libavfilter slice jobs), when a filter is set
 *   R(k,b)  reconstruction bands: copy / convert band b into the output
 *   O(k)    ordered output in presentation order; deadline = its PTS
 * Edge sizes are the bytes of frame-buffer rows passed between nodes, so the
 * cost-local policy keeps a band on the worker that decoded its rows.
 *
 * Semantics follow libavcodec's send/receive API.  A decoder is used from one
 * thread at a time (like an AVCodecContext); many decoders may share one
 * scheduler.  No function here holds a lock while it waits on the scheduler.
 */
#ifndef DFMEDIA_H
#define DFMEDIA_H

#include "dfsched.h"

#include <libavcodec/avcodec.h>
#include <libavutil/frame.h>
#include <libavutil/pixfmt.h>

#ifdef __cplusplus
extern "C" {
#endif

/* libdfmedia is built with -fvisibility=hidden: what is declared here is
 * the library's whole interface, internals stay inside it (a plugin that
 * links the static library exports none of them). */
#if defined(__GNUC__) || defined(__clang__)
#define DF_MEDIA_API __attribute__((visibility("default")))
#else
#define DF_MEDIA_API
#endif

typedef struct DfDecoder DfDecoder;

/* How libavcodec's own parallelism is used. */
typedef enum DfThreading {
    DF_THREADING_AUTO = 0, /* slice jobs as tasks when the stream has them, else frame threads;
                            * single-threaded on a scheduler that runs jobs inline
                            * (df_sched_splits_jobs() false: one worker) */
    DF_THREADING_SLICE,    /* slice jobs as tasks (streams without slices decode serially) */
    DF_THREADING_FRAME,    /* libavcodec frame threading (its own threads; N-1 frames delay) */
    DF_THREADING_NONE,     /* single-threaded decode; F/R/O still run as tasks */
} DfThreading;

/* "auto", "slice", "frame", "none". */
DF_MEDIA_API const char *df_threading_name(DfThreading t);

/* Parse a threading name; returns 0 or AVERROR(EINVAL). */
DF_MEDIA_API int df_threading_parse(const char *name, DfThreading *out);

/* What a directly rendered picture needs: at least `linesize` bytes per row
 * (each a multiple of `align`), `height` rows per plane (scaled for chroma),
 * plane pointers aligned to `align`, and 16 + align - 1 readable bytes
 * after the last plane (SIMD over-reads). */
typedef struct DfPictureLayout {
    int width, height; /* padded dimensions (avcodec_align_dimensions2, widened) */
    int linesize[4];   /* minimum linesize per plane */
    int align;         /* stride and pointer alignment in bytes */
} DfPictureLayout;

/* get_output(): no bands, the output frame is the source picture. */
#define DF_OUTPUT_IN_PLACE 1

/* Consumer hooks for where pictures go (all optional). */
typedef struct DfFrameAllocator {
    /* Direct rendering: allocate a decoder picture (like get_buffer2; the
     * frame has format/width/height set; `layout` says how large and
     * aligned its planes must be).  Fill buf[0], data and linesize, or
     * return AVERROR(ENOSYS) to use the framework's pools.  Called on the
     * worker running D(k), or on libavcodec's own threads in frame
     * threading: must be thread-safe and must not wait for the caller
     * thread.  Only for codecs with direct rendering (DR1). */
    int (*get_picture)(void *opaque, AVFrame *frame, const DfPictureLayout *layout, int flags);
    /* Destination of the reconstruction bands: fill dst->buf (required:
     * swscale references it), data and linesize for dst->format/width/height
     * (the output format) — the bands then copy or convert `src` into it in
     * parallel; AVERROR(ENOSYS) lets the framework allocate; and when no
     * conversion is needed, DF_OUTPUT_IN_PLACE makes the output frame
     * reference `src` itself (e.g. it was rendered directly).  When NULL
     * (and no conversion is needed), output frames reference the decoded
     * picture (zero copy).  Called on the worker running the bands'
     * producer (F(k), or D(k)). */
    int (*get_output)(void *opaque, AVFrame *dst, const AVFrame *src);
    void *opaque;
} DfFrameAllocator;

typedef struct DfDecoderConfig {
    DfThreading threading; /* default AUTO */
    /* libavcodec thread_count in slice mode: H.264 slices per execute call,
     * MPEG-2 row bands per picture, HEVC WPP rows in progress at once.
     * 0 (default): 16; one band per ~4 macroblock rows (at most 16), or
     * 2 per worker on bigger machines (at most 32, libavcodec's limit);
     * and max(2, workers) respectively — WPP rows beyond the workers only
     * block inside libavcodec. */
    int thread_count;
    int frame_threads;             /* threads for the frame-threading fallback (0 = workers) */
    const char *filter;            /* libavfilter graph description, or NULL */
    enum AVPixelFormat out_format; /* AV_PIX_FMT_NONE: the decoder's (or filter's) format */
    int band_rows;                 /* rows per R band and filter job (0: 2 bands per worker) */
    int max_in_flight;             /* packets queued ahead of output (default 2; 1 = no overlap
                                    * of frame k+1's decode with frame k's bands) */
    /* Frames of output delay the caller accepts beyond the codec's reorder
     * delay: a bound on (max_in_flight - 1) + (frame threads - 1), applied
     * once the threading mode is known.  Frame threads come first (they are
     * the only parallelism of such a stream), then packets in flight; 0
     * gives one packet in flight and no frame threads.  -1 (default): no
     * bound, the two settings above as given. */
    int max_delay_frames;
    DfFrameAllocator alloc;
    /* Clock for deadlines: returns "now" as stream time in nanoseconds (the
     * time at which a frame of that PTS is due, e.g. GStreamer running time);
     * a frame's deadline is PTS + deadline_offset_ns on that clock, mapped to
     * the scheduler's monotonic clock when the packet is sent.  A packet's
     * work is due with the frame its decode outputs (presentation order,
     * after the reorder delay), not with its own picture.  NULL: none.
     * INT64_MIN: no time now (e.g. the clock is not running): the packet
     * gets no deadline. */
    int64_t (*clock_ns)(void *opaque);
    void *clock_opaque;
    int64_t deadline_offset_ns; /* added to PTS-derived deadlines */
    int log_level;              /* av_log level for messages (default AV_LOG_WARNING) */
    /* Frames per second the stream is played at, as the caller knows it
     * (container, caps), for its measured load (df_decoder_load), the
     * filter graph's input rate and df_decoder_frame_rate().  0/0
     * (default): the rate the bitstream signals once decoded; when neither
     * is known, the rate at which frames complete. */
    AVRational frame_rate;
    /* Refuse a filter that changes the frame rate (yadif=1, fps): for a
     * caller that maps each picture to one packet by its opaque. */
    bool filter_keeps_rate;
} DfDecoderConfig;

/* Check a libavfilter description (syntax, filter names, options, labels;
 * nothing that depends on the picture's size, which the decoder checks
 * when it opens); 0 or an AVERROR with a message in `err`.  For refusing
 * a bad filter before any stream arrives. */
DF_MEDIA_API int df_filter_check(const char *desc, DfError *err);

/* Fill `cfg` with the defaults above. */
DF_MEDIA_API void df_decoder_config_init(DfDecoderConfig *cfg);

/* Create a decoder for `par` on `sched` (taking a reference on it); packet
 * timestamps are in `time_base`.  Bad codec parameters, an invalid filter
 * description or an unsupported format fail here with a message in `err`.
 * In `auto` threading the codec is opened for real at the first picture,
 * once the stream's slice structure is known (on one worker at once:
 * single-threaded). */
DF_MEDIA_API int df_decoder_new(DfSched *sched, const AVCodecParameters *par, AVRational time_base,
                                const DfDecoderConfig *cfg, DfDecoder **out, DfError *err);

/* Free a decoder (drops pending work) and set *dec to NULL. */
DF_MEDIA_API void df_decoder_free(DfDecoder **dec);

/* Queue a packet (NULL or an empty packet starts draining).  Returns 0,
 * AVERROR(EAGAIN) when output must be received first, AVERROR_EOF after
 * draining started, or another error for a bad call.  Corrupt data is not an
 * error here: it is reported per frame. */
DF_MEDIA_API int df_decoder_send_packet(DfDecoder *dec, const AVPacket *pkt);

/* Take the next frame in presentation order into `frame` (unref'd first).
 * Waits while decode work that may yield a frame is in flight.  Returns 0,
 * AVERROR(EAGAIN) when more input is needed, AVERROR_EOF when drained.
 * Frames carry libavcodec's pts, pkt_dts, duration (pkt_duration before
 * FFmpeg 6.0), best_effort_timestamp and decode_error_flags; frame->opaque
 * is the opaque of the AVPacket that sent the picture, with every FFmpeg.
 * With a filter, pts is the graph's (its input timed by best-effort
 * timestamps, as fftools does), best_effort_timestamp equals it and the
 * duration is in the stream's time base. */
DF_MEDIA_API int df_decoder_receive_frame(DfDecoder *dec, AVFrame *frame);

/* Like df_decoder_receive_frame() but never waits: AVERROR(EAGAIN) when the
 * oldest frame in flight is not ready yet. */
DF_MEDIA_API int df_decoder_try_receive_frame(DfDecoder *dec, AVFrame *frame);

/* Between the two: waits only while more packets are in flight than
 * df_decoder_latency_frames() counts (max_in_flight - 1), then
 * AVERROR(EAGAIN).  A caller that takes frames with it after every
 * send_packet holds none longer than that latency, even when its next
 * packet comes a frame period later (a live source): with a budget of 0
 * frames, each packet's frame comes out before the call returns. */
DF_MEDIA_API int df_decoder_receive_frame_in_time(DfDecoder *dec, AVFrame *frame);

/* Like df_decoder_receive_frame() but waits at most until `until_ns`
 * (CLOCK_MONOTONIC, df_now_ns()), then AVERROR(EAGAIN).  For a paced
 * caller that must send its next packet at a given time: it sleeps until
 * the oldest frame is done or that time comes, whichever is first, instead
 * of polling. */
DF_MEDIA_API int df_decoder_receive_frame_until(DfDecoder *dec, AVFrame *frame, int64_t until_ns);

/* Drop every queued packet and pending frame, reset the codec and rebuild
 * the filter graph (seek).  Waits for the decoder's running tasks. */
DF_MEDIA_API void df_decoder_flush(DfDecoder *dec);

/* The threading actually in use ("slice", "frame" or "none"; "auto" until
 * the first picture) and why, e.g. why `auto` fell back to frame threads. */
DF_MEDIA_API const char *df_decoder_threading(const DfDecoder *dec, const char **reason);

/* Output format, width and height once known (after the first frame), or -1. */
DF_MEDIA_API int df_decoder_output_format(const DfDecoder *dec, int *width, int *height);

/* The pictures' frame rate: the config's frame_rate, or what the filter
 * makes of it (yadif=mode=1 and fps=50 on a 25 fps stream: 50/1); {0, 1}
 * when the config gives none. */
DF_MEDIA_API AVRational df_decoder_frame_rate(const DfDecoder *dec);

/* Frames of delay between a packet and its picture: the codec's reorder
 * delay + (max_in_flight - 1) + (frame threads - 1 in frame threading). */
DF_MEDIA_API int df_decoder_latency_frames(const DfDecoder *dec);

/* The codec's reorder delay alone (libavcodec's has_b_frames): 0 when
 * pictures come out in decode order. */
DF_MEDIA_API int df_decoder_reorder_delay(const DfDecoder *dec);

/* Cancel the pending output of frames whose deadline is before `ns`
 * (QoS): their F/R/O nodes are skipped; receive_frame never returns them.
 * `ns` is on the caller's clock (config clock_ns), compared with PTS +
 * deadline_offset_ns.  A D(k) not yet started still decodes (the codec's
 * state must advance) but skips non-reference pictures.  Returns how many
 * queued packets had their output cancelled. */
DF_MEDIA_API int df_decoder_drop_late(DfDecoder *dec, int64_t ns);

/* QoS for packets to come: while set, packets sent are decoded with
 * non-reference pictures skipped (libavcodec's AVDISCARD_NONREF, as avdec
 * does when late), so that a late stream sheds decode work, not only its
 * output.  Reference pictures still decode: every picture returned is
 * bit-exact.  Skipped pictures are never returned (frames_skipped). */
DF_MEDIA_API void df_decoder_set_skip_nonref(DfDecoder *dec, bool skip);

/* The stream's measured load on its scheduler (docs/design.md, "Load and
 * admission"): the worker time of its tasks (decode, slice jobs, filter,
 * bands, output) per frame, as cores at its frame rate, and the
 * scheduler-wide sums. */
typedef struct DfDecoderLoad {
    double cores;        /* estimated cores this stream uses */
    double ns_per_frame; /* worker time per frame (mean over the last 16) */
    double fps;          /* rate used (<= 0: unknown, completion rate used) */
    uint64_t frames;     /* frames measured */
    DfSchedLoad sched;   /* every stream of the scheduler */
    /* Cores this stream would use at its rate by the streams of its class
     * (same codec, profile, picture size and format, threading) measured
     * over a whole window on the scheduler; 0: none measured yet. */
    double class_cores;
} DfDecoderLoad;

/* Snapshot of the stream's and the scheduler's load (any thread). */
DF_MEDIA_API void df_decoder_load(DfDecoder *dec, DfDecoderLoad *out);

/* The caller's own thread spent `ns` of CPU time on the stream (demuxing,
 * parsing, feeding it, copying pictures) on the cores the scheduler's
 * workers use: counted in the stream's load with its tasks' time, so that
 * admission sees what the stream really costs. */
DF_MEDIA_API void df_decoder_add_load_ns(DfDecoder *dec, uint64_t ns);

/* Count the stream in the scheduler's admitted load (DfSchedLoad.admitted)
 * or not (pending): for an admission decision made by the caller. */
DF_MEDIA_API void df_decoder_set_admitted(DfDecoder *dec, bool admitted);

/* Put the stream on probation while an admission measures it, or take it
 * off (admitted).  On probation its frames are background work
 * (DF_DEADLINE_BACKGROUND): they run only on capacity that no other
 * stream's frames want, due 40 ms later per stream on probation before
 * it (so under overload the later ones fall behind first).  So the
 * stream is measured on what the others leave, and never makes an
 * admitted stream late.  Applies to packets sent from then on. */
DF_MEDIA_API void df_decoder_set_probation(DfDecoder *dec, bool on);

/* One decode error: a packet libavcodec rejected or a frame it flagged. */
typedef struct DfDecodeError {
    int64_t pts; /* pts of the packet or frame (AV_NOPTS_VALUE if none) */
    int code;    /* AVERROR code, or AVERROR_INVALIDDATA for flagged frames */
    char msg[160];
} DfDecodeError;

/* Take the oldest decode error not yet taken (errors are queued in decode
 * order as their frames are received; at most 64 are kept).  Returns 0, or
 * AVERROR(EAGAIN) when there is none. */
DF_MEDIA_API int df_decoder_next_error(DfDecoder *dec, DfDecodeError *out);

typedef struct DfDecoderStats {
    uint64_t packets;                    /* packets sent */
    uint64_t frames_out;                 /* frames returned */
    uint64_t frames_dropped;             /* cancelled by drop_late */
    uint64_t frames_skipped;             /* non-reference pictures not decoded (QoS) */
    uint64_t decode_errors;              /* corrupt packets/frames (libavcodec's, lost pictures) */
    uint64_t decode_calls;               /* D tasks run */
    uint64_t frames_decoded;             /* pictures libavcodec returned */
    uint64_t frames_with_jobs;           /* of those, pictures decoded by two or more S jobs */
    uint64_t slice_calls;                /* execute/execute2 calls captured */
    uint64_t slice_jobs;                 /* jobs of those calls, run as S nodes */
    uint64_t filter_calls;               /* libavfilter execute calls captured */
    uint64_t filter_jobs;                /* libavfilter jobs run as F nodes */
    uint64_t bands;                      /* R nodes that wrote a band (copy or conversion) */
    uint64_t jobs_per_worker[64];        /* S jobs by worker (first 64 workers) */
    uint64_t filter_jobs_per_worker[64]; /* F band jobs by worker */
    uint64_t pool_allocs;                /* picture buffers allocated by the framework's pools */
    uint64_t pool_reuses;                /* picture buffers taken from a pool's free list */
    int64_t pool_outstanding;            /* picture buffers currently referenced */
    int64_t pool_idle;                   /* picture buffers kept free for reuse */
    double latency_p50_ms;               /* packet in -> frame ready */
    double latency_p99_ms;
    double latency_max_ms;
} DfDecoderStats;

/* Snapshot of the decoder's counters (any thread may call it). */
DF_MEDIA_API void df_decoder_stats(const DfDecoder *dec, DfDecoderStats *out);

/* Forget the latency samples so far (p50/p99/max start again), e.g. after
 * a warm-up whose cold first frames would otherwise dominate the p99. */
DF_MEDIA_API void df_decoder_reset_latency(DfDecoder *dec);

#ifdef __cplusplus
}
#endif
#endif /* DFMEDIA_H */
