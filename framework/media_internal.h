/* dfmedia internals shared by the framework's files.  Not installed.
 *
 * Ownership and threads (why no lock is needed on the frame path):
 *  - The caller thread owns the decoder's slot queue: send_packet appends,
 *    receive_frame/flush/drop_late take from the front.  It reads a slot's
 *    results only after the slot's group is done (acquire on the group).
 *  - D(k) tasks form a chain, so the codec context, the picture table and
 *    `cur_slot` are touched by one task at a time.  F(k) tasks form another
 *    chain owning the filter graph.  The producer of the R bands (F(k), or
 *    D(k) without filter) owns the output conversion state.
 *  - R(k,b) of one band form a chain too (R(k-1,b) -> R(k,b)), so band b's
 *    swscale context is used by one task at a time.
 *  - Counters are relaxed atomics; the latency ring has a mutex (once per
 *    frame, never held while waiting). */
#ifndef DFMEDIA_MEDIA_INTERNAL_H
#define DFMEDIA_MEDIA_INTERNAL_H

#include "codec/codec.h"
#include "dfmedia.h"
#include "lavcompat.h"

#include <libavfilter/avfilter.h>
#include <pthread.h>
#include <stdatomic.h>

#define DF_ROWMAP_MAX   256 /* jobs remembered per picture */
#define DF_PIC_RECORDS  48  /* pictures remembered (DPB + reorder + frame threads) */
#define DF_MAX_BANDS    64
#define DF_ERROR_RING   64
#define DF_SLOT_ERRORS  4
#define DF_LATENCY_RING 1024
#define DF_REORDER_MAX  32 /* presentation times awaiting output (reorder delay + 1) */

/* Module rows of the control description (indices into the compiled table
 * are resolved at compile time because F is absent without a filter). */
enum { DF_MOD_D, DF_MOD_F, DF_MOD_R, DF_MOD_O, DF_N_MODS };

/* Which worker wrote which rows of a picture: job i of n covers rows
 * h*i/n .. h*(i+1)/n (slices of x264, MPEG-2 row bands, WPP CTU rows).
 * The node ids name the producers in the inputs of the bands that read
 * the rows, so that a trace (and dfsim replaying it) can tie each input to
 * the task that wrote it, not only to its worker. */
typedef struct DfRowMap {
    int n;             /* jobs recorded; 0 = unknown */
    int whole;         /* n == 0 or rewritten: worker that wrote everything, or -1 */
    uint64_t whole_id; /* n == 0 or rewritten: node that wrote everything, or 0 */
    bool rewritten;    /* after the jobs, `whole` rewrote every row (H.264's deblocking
                        * across slice edges, which libavcodec runs in D): the rows are
                        * there, whoever decoded them */
    int16_t worker[DF_ROWMAP_MAX];
    uint64_t node[DF_ROWMAP_MAX]; /* job i's node id, 0 if unknown */
} DfRowMap;

/* ----------------------------------------------------------------- pool */

typedef struct DfPool DfPool;

int df_pool_new(DfSched *sched, int max_free_per_worker, DfPool **out);
/* Drop the decoder's reference; buffers still out keep the pool alive. */
void df_pool_unref(DfPool *pool);
/* AVCodecContext.get_buffer2 (opaque = DfDecoder). */
int df_pool_get_buffer2(AVCodecContext *avctx, AVFrame *frame, int flags);
/* Buffers allocated / reused / currently out. */
void df_pool_counts(const DfPool *pool, uint64_t *allocs, uint64_t *reuses, int64_t *out,
                    int64_t *idle);

/* ---------------------------------------------------------------- hooks */

/* Remembered per picture buffer: the row map of the jobs that decoded it. */
typedef struct DfPicRecord {
    const uint8_t *key; /* frame->data[0] */
    uint64_t seq;       /* DfPicTable.allocated when it started */
    int h;              /* luma rows */
    uint64_t row_bytes; /* bytes per luma row, all planes */
    DfRowMap map;
    /* MPEG-1/2: libavcodec's frame of the picture, read only while that
     * picture is decoded (its pict_type is set before the slice jobs), and
     * the type kept from then on (AV_PICTURE_TYPE_NONE: not known yet). */
    const AVFrame *frame;
    int pict_type;
} DfPicRecord;

typedef struct DfPicTable {
    DfPicRecord rec[DF_PIC_RECORDS];
    int next;             /* round-robin replacement */
    int cur;              /* record of the picture being decoded, or -1 */
    int prev[2];          /* records of the two pictures decoded before it, or -1 */
    uint64_t prev_seq[2]; /* their seq (a record reused since is another picture) */
    int anchor[3];        /* MPEG-1/2: the last I/P pictures, newest first, or -1 */
    uint64_t anchor_seq[3];
    uint64_t allocated; /* pictures allocated (D chain) */
} DfPicTable;

/* Install the execute/execute2 overrides (after avcodec_open2). */
void df_hooks_install(DfDecoder *dec);
/* A new picture buffer was allocated on the D chain: start its record. */
void df_hooks_new_picture(DfDecoder *dec, const AVFrame *frame);
/* Copy a row map (only its n recorded jobs). */
void df_row_map_copy(DfRowMap *dst, const DfRowMap *src);
/* Row map of an output picture (n = 0 when unknown). */
void df_hooks_lookup(DfDecoder *dec, const AVFrame *frame, DfRowMap *out);

/* ------------------------------------------------------------ threading */

typedef struct DfThreadPlan {
    DfThreading mode; /* SLICE, FRAME or NONE */
    int thread_count;
    int thread_type;
    char reason[192];
} DfThreadPlan;

/* The scheduler as the decoder saw it when its threading was decided. */
typedef struct DfPlanEnv {
    int n_workers;
    int n_cores;     /* the PUs the workers run on (fewer when oversubscribed) */
    bool split_jobs; /* df_sched_splits_jobs(): slice jobs can run in parallel */
    int n_streams;   /* decoders on the scheduler, this one included */
} DfPlanEnv;

/* With n_streams on n_workers, a stream of this height gains nothing from
 * parallel slice jobs: every worker has a stream to decode (auto's rule;
 * hooks.c applies it again to a stream that chose jobs when it had
 * workers to spare). */
bool df_threading_serial_suits(int n_streams, int n_workers, int height);
/* Decide how libavcodec is run. */
void df_threading_plan(const DfDecoderConfig *cfg, const AVCodecParameters *par,
                       const AVCodec *codec, const DfCodecOps *ops, const DfProbe *probe,
                       const DfPlanEnv *env, DfThreadPlan *plan);

/* --------------------------------------------------------------- filter */

typedef struct DfFilter DfFilter;

/* Build and validate a filter graph for input of the given properties. */
int df_filter_new(DfDecoder *dec, const char *desc, int width, int height, int format,
                  AVRational sar, AVRational tb, int n_jobs, DfFilter **out, DfError *err);
void df_filter_free(DfFilter **f);
/* Push `in` (reference taken over; NULL = end of stream) with its row map
 * and collect every frame the graph outputs; runs on F(k).  Each output
 * gets the row map of the filter jobs that produced it. */
typedef int (*DfFilterSink)(void *opaque, AVFrame *frame, const DfRowMap *map);
int df_filter_push(DfFilter *f, AVFrame *in, const DfRowMap *map, DfFilterSink sink, void *opaque);
/* Rebuild the graph (flush / seek): drops buffered frames and EOF state. */
int df_filter_reset(DfFilter *f);
/* The graph's output frame rate, {0, 1} when it has none. */
AVRational df_filter_frame_rate(const DfFilter *f);

/* --------------------------------------------------------------- slots */

/* A frame on its way through F/R/O. */
typedef struct DfFrameItem {
    AVFrame *frame;      /* decoded (or filtered) picture */
    AVFrame *dst;        /* reconstruction target, or NULL (zero copy) */
    struct DfConv *conv; /* conversion state (ref), or NULL for copy */
    DfRowMap map;
    int error; /* item could not be prepared: not output */
} DfFrameItem;

typedef struct DfFrameList {
    DfFrameItem *v;
    int n, cap;
} DfFrameList;

typedef struct DfMediaSlot {
    struct DfMediaSlot *next;
    DfDecoder *dec;
    uint64_t seq;
    AVPacket *pkt;              /* NULL: drain */
    int64_t pkt_pts_ns;         /* stream time of the packet, or INT64_MIN */
    _Atomic int64_t out_pts_ns; /* stream time of its first output, INT64_MIN until known */
    int64_t deadline;           /* CLOCK_MONOTONIC ns or DF_NO_DEADLINE */
    int64_t t_send;
    DfGroup *group;
    DfInstance *inst;
    bool skip_nonref;    /* QoS: decode with non-reference pictures skipped */
    atomic_bool discard; /* flush: D must not decode */
    atomic_bool dropped; /* QoS: output cancelled */
    DfFrameList decoded; /* D -> F */
    DfFrameList out;     /* F (or D) -> R -> O */
    int taken;           /* frames handed to the caller */
    int eof;             /* the drain reached the codec's end */
    int n_errors;
    DfDecodeError errors[DF_SLOT_ERRORS];
    int lost_errors;
} DfMediaSlot;

/* slot.c: frame lists and per-slot errors (what D, F and R produce), and
 * the queue of slots (the caller thread's). */
int df_frame_list_add(DfFrameList *l, AVFrame *frame, const DfRowMap *map);
void df_frame_list_clear(DfFrameList *l);
void df_slot_error(DfMediaSlot *s, int64_t pts, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Queue a slot for `pkt` (NULL: the drain) with its graph instance. */
int df_slot_enqueue(DfDecoder *dec, const AVPacket *pkt);
/* Next frame of the oldest slots into `frame`; waits for a slot's group
 * when `wait`, else AVERROR(EAGAIN). */
/* The next frame out; waits for the oldest packet while more than `keep`
 * packets are in flight (0: until none is, INT_MAX: never). */
int df_slot_take(DfDecoder *dec, AVFrame *frame, int keep, int64_t until_ns);
/* Free the oldest slots that are done and hold no frame to take. */
void df_slot_reclaim(DfDecoder *dec);
/* Cancel every queued slot, wait for its tasks and free it. */
void df_slot_cancel_all(DfDecoder *dec);

/* media_load.c: the load class of a stream (df_load_set_class): streams
 * alike cost alike per frame. */
uint64_t df_load_class_of(const AVCodecParameters *par, DfThreading threading);

/* ---------------------------------------------------------------- graph */

typedef struct DfGraph {
    DfGraphInfo *info;
    int idx[DF_N_MODS]; /* table index of each module, -1 absent */
    int n_bands;        /* width of R */
    int mod_s, mod_fb;  /* module ids of slice jobs and filter band jobs */
    int mod_d;          /* module id of D (writes the rows of a rewritten map) */
} DfGraph;

int df_graph_setup(DfDecoder *dec, DfGraph *g, DfError *err);
void df_graph_teardown(DfGraph *g);
/* Instantiate the table for slot `s` after `prev` (may be NULL). */
int df_graph_new_instance(DfDecoder *dec, DfMediaSlot *s, DfInstance *prev);
/* Rows [y0, y1) of band b of n over height h, aligned to `align`. */
void df_band_rows(int h, int n, int b, int align, int *y0, int *y1);
/* Bytes of frame rows per luma row (all planes). */
uint64_t df_row_bytes(const AVFrame *f);
/* Add to `node` inputs for rows [y0,y1) of a picture written per `map`
 * (h rows, `row_bytes` per row): one input per job whose node id is known
 * (naming it as the producer), the others summed into one per worker.
 * `acc` is n_workers counters owned by the calling chain. */
void df_graph_add_row_inputs(DfDecoder *dec, uint64_t *acc, DfNode *node, const DfRowMap *map,
                             int h, int y0, int y1, uint64_t row_bytes, int module);
/* Submit the R nodes of a slot after adding their inputs (producer task). */
void df_graph_submit_bands(DfDecoder *dec, DfMediaSlot *s, bool prepared);

/* Task bodies of D (decode_task.c) and F (filter.c). */
void df_decode_task(DfTask *t, void *arg);
void df_decode_task_cancel(DfTask *t, void *arg);
void df_filter_task(DfTask *t, void *arg);
void df_filter_task_cancel(DfTask *t, void *arg);

/* --------------------------------------------------------------- output */

typedef struct DfConv DfConv;
void df_conv_unref(DfConv **c);
/* Producer side: give every item of s->out its destination (get_output,
 * conversion); called before the R bands are submitted. */
void df_output_prepare(DfDecoder *dec, DfMediaSlot *s);
void df_output_band(DfTask *t, void *arg); /* R body */
void df_output_band_cancel(DfTask *t, void *arg);
void df_output_order(DfTask *t, void *arg); /* O body */
void df_output_order_cancel(DfTask *t, void *arg);
/* Free the conversion cache of the decoder. */
void df_output_free(DfDecoder *dec);

/* ---------------------------------------------------------------- stats */

typedef struct DfMediaCounters {
    _Atomic uint64_t packets, frames_out, frames_dropped, frames_skipped, decode_errors;
    _Atomic uint64_t decode_calls;
    _Atomic uint64_t frames_decoded, frames_with_jobs;
    _Atomic uint64_t slice_calls, slice_jobs, filter_calls, filter_jobs, bands;
    _Atomic uint64_t jobs_per_worker[64];
    _Atomic uint64_t filter_jobs_per_worker[64];
} DfMediaCounters;

typedef struct DfLatency {
    pthread_mutex_t lock;
    double ms[DF_LATENCY_RING];
    int n, next;
    double max_ms;
} DfLatency;

void df_latency_init(DfLatency *l);
void df_latency_fini(DfLatency *l);
void df_latency_add(DfLatency *l, double ms);
void df_latency_reset(DfLatency *l);
void df_latency_get(DfLatency *l, double *p50, double *p99, double *max);

/* -------------------------------------------------------------- decoder */

struct DfDecoder {
    DfSched *sched;
    int n_workers;
    DfPlanEnv plan_env; /* fixed when the threading is decided (decoder.c) */
    DfDecoderConfig cfg;
    char *filter_desc;
    AVCodecParameters *par;
    AVRational tb;
    AVRational out_rate; /* df_decoder_frame_rate(), fixed at creation */
    const AVCodec *codec;
    const DfCodecOps *codec_ops; /* what the framework knows of the codec */
    AVCodecContext *avctx;       /* NULL until the threading plan is known */
    DfThreadPlan plan;           /* written by whoever opens the codec, before `opened` */
    atomic_bool opened;          /* avctx open and plan final (release/acquire) */
    bool decided;                /* caller thread: the stream was probed, slots flow */
    DfProbe probe;
    AVPacket **probe_pkts; /* held while `auto` probes the stream */
    int n_probe, cap_probe;

    DfGraph graph;
    DfLoad *load; /* the stream's account on the scheduler */
    /* Background rank while on probation (df_decoder_set_probation); 0:
     * not.  Relaxed: read at each enqueue, set by the caller's thread. */
    atomic_uint probation_rank;
    bool fps_from_codec; /* D chain: the load's rate was taken from the bitstream */
    bool skip_nonref;    /* caller thread: QoS for the packets sent next */
    DfFilter *filter;
    DfPool *pool;
    DfPicTable pics; /* D chain */
    /* D chain: pts of the first key packet decoded since open or flush
     * (or of the first packet that gave a picture, before any key packet),
     * until the next key packet (AV_NOPTS_VALUE before and after).  A
     * picture decoded in between but shown before it is an open GOP's
     * leading picture, whose reference lies before the entry point. */
    int64_t entry_pts;
    bool entered; /* D chain: that key packet, or a picture, came (false again at a flush) */
    DfMediaSlot *cur_slot;  /* D chain: slot whose D is running */
    struct DfConv *conv;    /* producer chain: current conversion */
    uint64_t *worker_bytes; /* producer chain scratch, n_workers */
    uint64_t *ref_bytes;    /* D chain scratch (slice jobs' inputs), n_workers */
    bool need_bands;        /* R does work: copy or conversion */

    /* caller thread */
    /* Presentation times (stream ns) of packets sent whose frame has not
     * been counted out yet: deadlines follow output order (enqueue). */
    int64_t reorder_pts[DF_REORDER_MAX];
    int n_reorder;
    DfMediaSlot *head, *tail;
    int n_slots;
    uint64_t seq;
    DfInstance *last_inst; /* prev for the next instance; owned here */
    bool draining, eof;
    DfDecodeError errors[DF_ERROR_RING];
    int err_head, err_n;

    atomic_int out_format, out_width, out_height;
    atomic_int has_b_frames;
    DfMediaCounters ctr;
    DfLatency lat;
};

/* decode_task.c: open the codec with the threading plan (on the caller at
 * creation, or in the first D task), or once without threads to check
 * the parameters. */
int df_open_codec(DfDecoder *dec, DfError *err);
int df_check_codec(DfDecoder *dec, DfError *err);

/* log.c */
void df_log(const DfDecoder *dec, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int df_err(DfError *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Stream time of `ts` (in dec->tb) in ns, INT64_MIN for AV_NOPTS_VALUE
 * (slot.c). */
int64_t df_ts_to_ns(const DfDecoder *dec, int64_t ts);

#define DF_MEDIA_CTR_ADD(dec, field, v)                                                            \
    atomic_fetch_add_explicit(&(dec)->ctr.field, (uint64_t)(v), memory_order_relaxed)

#endif
