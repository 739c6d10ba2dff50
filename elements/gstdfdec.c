/**
 * SECTION:element-dfdec
 * @title: dfdec
 *
 * Decodes H.264, HEVC and MPEG-1/2 video with libavcodec, its pictures
 * bit-exact with single-threaded libavcodec.  The decode work (libavcodec's
 * slice jobs and WPP rows, the optional libavfilter graph of #GstDfDec:filter
 * and the bands that copy pictures into downstream's buffers) runs as
 * dataflow tasks on the pinned workers of a dfsched scheduler, one worker
 * per core, shared by every dfdec of the process unless
 * #GstDfDec:shared-scheduler is false.  #GstDfDec:policy chooses where a
 * task runs.
 *
 * dfdec has rank secondary: decodebin, uridecodebin and playbin use it when
 * no primary decoder (such as gst-libav's avdec_h264) handles the stream.
 * To make it the default decoder, raise its rank above primary with
 * `GST_PLUGIN_FEATURE_RANK=dfdec:257` (that variable takes a number or
 * NONE, MARGINAL, SECONDARY, PRIMARY, MAX; not "primary+1").
 *
 * When downstream accepts #GstVideoMeta, libavcodec decodes straight into
 * downstream's buffers; otherwise each picture is copied once, in bands on
 * the workers.  The output is exactly the crop window the stream signals
 * (caps are its size): with direct rendering it is given by
 * #GstVideoCropMeta when downstream accepts that too, else by the
 * #GstVideoMeta plane offsets; the copies copy the window.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 filesrc location=clip.mkv ! parsebin ! dfdec ! videoconvert ! autovideosink
 * ]|
 * Decodes a file and shows it.
 * |[
 * gst-launch-1.0 filesrc location=clip.mkv ! parsebin ! dfdec n-workers=4 ! fakevideosink
 * ]|
 * Decodes as fast as possible on four workers without copying the pictures
 * (fakevideosink accepts #GstVideoMeta; fakesink does not).
 * |[
 * GST_PLUGIN_FEATURE_RANK=dfdec:257 gst-play-1.0 clip.mkv
 * ]|
 * Plays a file with dfdec chosen by playbin.
 */
/* dfdec: GstVideoDecoder over dfmedia.
 *
 * The streaming thread sends packets and receives frames; the decode work
 * itself (libavcodec's slice jobs, filter and reconstruction bands) runs as
 * tasks on dfsched's pinned workers, shared by every dfdec of the process
 * unless shared-scheduler=false.
 *
 * Locking: the stream lock is released around every call that may wait on
 * the scheduler (send_packet, receive_frame, flush, drain), as gst-libav
 * does around avcodec_send_packet: workers may call back into us
 * (get_picture) and must never need that lock.  Direct rendering takes only
 * dr_lock, a leaf lock.
 *
 * Frame bookkeeping: each packet carries its GstVideoCodecFrame's
 * system_frame_number + 1 as opaque; dfmedia hands it back on the picture
 * (frame->opaque), in presentation order.  Input frames that
 * never produce a picture (skipped, cancelled by QoS, lost in corrupt data)
 * are released once a later-presented picture has been output.
 *
 * Deadlines: the decoder's clock (gst_df_dec_clock_ns) tells the framework
 * which stream position the sink renders now, so that every frame's tasks
 * carry the CLOCK_MONOTONIC time at which the sink needs the frame, and
 * the scheduler runs them earliest-deadline-first (docs/dfdec.md). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstdfdec.h"
#include "dfdec_codecs.h"
#include "dfdec_pool.h"

#include "dfsched_trace.h"
#include "lavcompat.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>
#include <stdatomic.h>

#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>
#include <math.h>
#include <string.h>
#include <time.h>

GST_DEBUG_CATEGORY_STATIC(gst_df_dec_debug);
#define GST_CAT_DEFAULT gst_df_dec_debug

/* The policy enum is dfsched's registry: value = registry index (stable,
 * new policies are appended), nick = name, description = blurb. */
typedef int GstDfDecPolicy;

static const GEnumValue threading_values[] = {
    {DF_THREADING_AUTO, "Slice jobs as tasks when the stream has them, else frame threads", "auto"},
    {DF_THREADING_SLICE, "Slice jobs as tasks", "slice"},
    {DF_THREADING_FRAME, "libavcodec frame threading", "frame"},
    {DF_THREADING_NONE, "Single-threaded decode (bands still run as tasks)", "none"},
    {0, NULL, NULL},
};

GType gst_df_dec_policy_get_type(void)
{
    static GType type = 0;
    if (g_once_init_enter(&type)) {
        /* Registered once and kept for the life of the process, as
         * g_enum_register_static requires. */
        const int n = df_policy_count();
        GEnumValue *values = g_new0(GEnumValue, (gsize)n + 1);
        for (int i = 0; i < n; i++) {
            const DfPolicyInfo *info = df_policy_info(i);
            values[i] = (GEnumValue){i, info->blurb, info->name};
        }
        g_once_init_leave(&type, g_enum_register_static("GstDfDecPolicy", values));
    }
    return type;
}

static const GEnumValue admission_values[] = {
    {GST_DF_DEC_ADMISSION_NONE, "Admit every stream, measure nothing against the capacity", "none"},
    {GST_DF_DEC_ADMISSION_WARN,
     "Post a warning when the streams' measured load exceeds max-load of the scheduler, and "
     "decode",
     "warn"},
    {GST_DF_DEC_ADMISSION_REFUSE,
     "Refuse such a stream: an element error (resource busy) and a flow error", "refuse"},
    {0, NULL, NULL},
};

GType gst_df_dec_admission_get_type(void)
{
    static GType type = 0;
    if (g_once_init_enter(&type))
        g_once_init_leave(&type, g_enum_register_static("GstDfDecAdmission", admission_values));
    return type;
}

GType gst_df_dec_threading_get_type(void)
{
    static GType type = 0;
    if (g_once_init_enter(&type))
        g_once_init_leave(&type, g_enum_register_static("GstDfDecThreading", threading_values));
    return type;
}

#define DEFAULT_N_WORKERS        0
#define DEFAULT_POLICY           df_policy_index(DF_POLICY_DEFAULT)
#define DEFAULT_THREADING        DF_THREADING_AUTO
#define DEFAULT_POLL_US          50
#define DEFAULT_SHARED_SCHEDULER TRUE
#define DEFAULT_MAX_FRAME_DELAY  -1
#define MAX_FRAME_DELAY          16
#define DEFAULT_ADMISSION        GST_DF_DEC_ADMISSION_WARN
#define DEFAULT_MAX_LOAD         0.9
#define DEFAULT_ADMISSION_FRAMES 0
#define ADMISSION_MIN_FRAMES     32 /* automatic window: 1 s of frames, at least this */
#define MAX_WORKERS              1024
#define STALE_FRAMES             32 /* decode-order distance after which a frame without output is let go */
#define WARN_FIRST               10 /* decode errors posted as warnings before rate limiting */
#define WARN_EVERY               100

enum {
    PROP_0,
    PROP_N_WORKERS,
    PROP_POLICY,
    PROP_THREADING,
    PROP_POLL_US,
    PROP_FILTER,
    PROP_TRACE_FILE,
    PROP_SHARED_SCHEDULER,
    PROP_MAX_FRAME_DELAY,
    PROP_ADMISSION,
    PROP_MAX_LOAD,
    PROP_ADMISSION_FRAMES,
    PROP_STATS,
};

struct _GstDfDec {
    GstVideoDecoder parent;

    /* Properties (object lock; read once per stream in open_decoder). */
    gint n_workers;
    GstDfDecPolicy policy;
    DfThreading threading;
    gint poll_us;
    gchar *filter;
    gchar *trace_file;
    gboolean shared_scheduler;
    gint max_frame_delay;
    GstDfDecAdmission admission;
    gdouble max_load;
    guint admission_frames;

    /* Streaming state (stream lock). */
    gboolean upstream_live; /* upstream answered the latency query as live (set_format) */
    GstVideoCodecState *input_state;
    GstVideoCodecState *output_state;
    DfSched *sched;
    DfDecoder *dec;
    AVPacket *pkt;
    AVFrame *frame;
    enum AVCodecID codec_id;
    gboolean drained;       /* the decoder was drained and needs a flush before more data */
    gboolean delay_bounded; /* max-frame-delay (given, or 0 for live) bounds the latency */
    gboolean qos_cut;       /* frames were cancelled by QoS since the last output */
    gboolean qos_to_key;    /* QoS gave the stream up: frames skip until a sync point */
    gboolean qos_restart;   /* decoding from that sync point, no picture out yet */
    /* Every input frame so far had a DTS equal to its PTS: no sign that the
     * PTS are in presentation order (a remux without composition offsets
     * stamps B-frame streams in decode order).  Per stream (set_format). */
    gboolean pts_is_dts;
    guint64 packets; /* stats: packets sent to the decoder (stream lock) */
    /* The streaming thread's CPU time at the last frame (charge_thread). */
    pthread_t charge_thread;
    guint64 charge_cpu_ns;
    gboolean charge_valid;
    guint64 qos_skipped;  /* stats: frames QoS dropped without decoding them */
    gboolean admitted;    /* the stream passed admission: never refused later (until stop) */
    gboolean refused;     /* admission refused the stream: every frame fails (until stop) */
    gboolean fell_behind; /* a frame was late while on probation (until stop) */
    int out_format, out_width, out_height, out_interlaced;
    AVRational out_sar;
    gint64 latency_frames;
    GstClockTime latency_ns; /* what latency_frames was reported as */
    guint latency_polls;     /* outputs while the rate is unknown */
    /* The input segment as of the last handle_frame, for the decoder's
     * clock: it runs inside send_packet, on the streaming thread, with the
     * stream lock released (a flush-stop may reset input_segment then). */
    GstSegment clock_segment;
    /* The pipeline latency of the last LATENCY event (ns): the sink renders
     * a buffer that long after its running time.  Written on the thread
     * that sends the event, read by the clock. */
    _Atomic gint64 pipeline_latency;
    /* QoS, under the object lock (the thread that sends QoS events and
     * the streaming thread; the check and the stores are one step, or a
     * new segment's reset could fall between them).  A QoS event is about
     * a buffer dfdec pushed: before one of the current segment was
     * pushed, or about a running time later than any pushed (QoS of the
     * previous item of a gapless playlist, whose running time went on
     * downstream), it says nothing of this stream.  qos_earliest: running
     * time before which output is late, from the last QoS event of this
     * segment without GstVideoDecoder's clamp (-1: none); qos_valid: one
     * came, so GstVideoDecoder's earliest time is this segment's;
     * qos_pushed: buffers pushed since the segment; out_running_time: the
     * latest one's (-1: none had a timestamp). */
    gint64 qos_earliest;
    gboolean qos_valid;
    guint64 qos_pushed;
    gint64 out_running_time;

    /* Direct rendering (dr_lock, a leaf lock taken on worker threads; a
     * pthread mutex, not a GMutex, so that ThreadSanitizer sees it: GLib's
     * futex-based GMutex is invisible to an uninstrumented libglib). */
    pthread_mutex_t dr_lock;
    gboolean dr_allowed; /* downstream takes GstVideoMeta, no filter */
    gboolean dr_crop;    /* downstream also takes GstVideoCropMeta */
    GstBufferPool *dr_pool;
    /* dr_pool's caps, to map its buffers without parsing them */
    GstVideoInfo dr_info;
    gint dr_pool_touched;               /* dr_pool's pictures faulted in (dr_pool_touch); atomic */
    int dr_format, dr_width, dr_height; /* what dr_pool was made for */
    int dr_display_width, dr_display_height; /* negotiated output size */
    GstVideoFormat dr_gst_format;
    GHashTable *dr_live;     /* DrBuffer pointers alive (pictures and outputs we made) */
    GstBufferPool *out_pool; /* the negotiated pool, for R bands on the workers */
    GstVideoInfo out_info;
    guint64 dr_frames, band_frames, copied_frames;
    guint64 errors; /* decode errors of this stream */
};

G_DEFINE_TYPE(GstDfDec, gst_df_dec, GST_TYPE_VIDEO_DECODER);
/* Rank: SECONDARY, as GStreamer ranks a working alternative to a primary
 * decoder (gst-libav's DV decoder, libde265dec beside avdec_h265): dfdec
 * is bit-exact with libavcodec, but avdec_* (PRIMARY) is the established
 * decoder of these codecs, and dfdec pins a worker to every core of the
 * process, which an application that merely plays a file did not ask
 * for.  decodebin and playbin pick it when no primary decoder is there;
 * GST_PLUGIN_FEATURE_RANK=dfdec:257 (PRIMARY + 1) makes it the default
 * (docs/dfdec.md). */
GST_ELEMENT_REGISTER_DEFINE(dfdec, "dfdec", GST_RANK_SECONDARY, GST_TYPE_DF_DEC);

/* The sink template is built from the codec table (dfdec_codecs.c). */
#define SRC_FORMATS                                                                                \
    "{ I420, Y42B, Y444, Y41B, I420_10LE, I422_10LE, Y444_10LE, I420_12LE, I422_12LE, "            \
    "Y444_12LE, NV12, GRAY8, GBR, GBR_10LE, GBR_12LE }"

static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE(
    "src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS(GST_VIDEO_CAPS_MAKE(SRC_FORMATS)));

static const struct {
    enum AVPixelFormat av;
    GstVideoFormat gst;
} pix_formats[] = {
    {AV_PIX_FMT_YUV420P, GST_VIDEO_FORMAT_I420},
    {AV_PIX_FMT_YUVJ420P, GST_VIDEO_FORMAT_I420},
    {AV_PIX_FMT_YUV422P, GST_VIDEO_FORMAT_Y42B},
    {AV_PIX_FMT_YUVJ422P, GST_VIDEO_FORMAT_Y42B},
    {AV_PIX_FMT_YUV444P, GST_VIDEO_FORMAT_Y444},
    {AV_PIX_FMT_YUVJ444P, GST_VIDEO_FORMAT_Y444},
    {AV_PIX_FMT_YUV411P, GST_VIDEO_FORMAT_Y41B},
    {AV_PIX_FMT_YUV420P10LE, GST_VIDEO_FORMAT_I420_10LE},
    {AV_PIX_FMT_YUV422P10LE, GST_VIDEO_FORMAT_I422_10LE},
    {AV_PIX_FMT_YUV444P10LE, GST_VIDEO_FORMAT_Y444_10LE},
    {AV_PIX_FMT_YUV420P12LE, GST_VIDEO_FORMAT_I420_12LE},
    {AV_PIX_FMT_YUV422P12LE, GST_VIDEO_FORMAT_I422_12LE},
    {AV_PIX_FMT_YUV444P12LE, GST_VIDEO_FORMAT_Y444_12LE},
    {AV_PIX_FMT_NV12, GST_VIDEO_FORMAT_NV12},
    {AV_PIX_FMT_GRAY8, GST_VIDEO_FORMAT_GRAY8},
    {AV_PIX_FMT_GBRP, GST_VIDEO_FORMAT_GBR},
    {AV_PIX_FMT_GBRP10LE, GST_VIDEO_FORMAT_GBR_10LE},
    {AV_PIX_FMT_GBRP12LE, GST_VIDEO_FORMAT_GBR_12LE},
};

static GstVideoFormat gst_df_dec_video_format(int av)
{
    for (size_t i = 0; i < G_N_ELEMENTS(pix_formats); i++)
        if (pix_formats[i].av == av)
            return pix_formats[i].gst;
    return GST_VIDEO_FORMAT_UNKNOWN;
}

/* ---- libavcodec's log -------------------------------------------------- */

static void gst_df_dec_log(void *ptr, int level, const char *fmt, va_list vl)
{
    GstDebugLevel gst_level;
    if (level <= AV_LOG_ERROR)
        gst_level = GST_LEVEL_ERROR;
    else if (level <= AV_LOG_WARNING)
        gst_level = GST_LEVEL_WARNING;
    else if (level <= AV_LOG_INFO)
        gst_level = GST_LEVEL_INFO;
    else if (level <= AV_LOG_VERBOSE)
        gst_level = GST_LEVEL_DEBUG;
    else
        gst_level = GST_LEVEL_LOG;
    if (gst_level > gst_debug_category_get_threshold(gst_df_dec_debug))
        return;
    char line[1024];
    int print_prefix = 1;
    av_log_format_line2(ptr, level, fmt, vl, line, sizeof(line), &print_prefix);
    size_t n = strlen(line);
    while (n > 0 && line[n - 1] == '\n')
        line[--n] = '\0';
    gst_debug_log(gst_df_dec_debug, gst_level, "libav", "", 0, NULL, "%s", line);
}

void gst_df_dec_install_log(void)
{
    /* The category must exist before libavcodec logs anything. */
    if (!gst_df_dec_debug)
        GST_DEBUG_CATEGORY_INIT(gst_df_dec_debug, "dfdec", 0, "dfmedia video decoder");
    av_log_set_callback(gst_df_dec_log);
}

/* ---- direct rendering -------------------------------------------------- */

typedef struct DrBuffer {
    GstDfDec *self; /* only while libavcodec holds the picture */
    GstBuffer *buffer;
    GstVideoFrame vframe;
    gboolean output; /* from downstream's pool, for the R bands (else a DR picture) */
    /* libavcodec's AVBuffer, plus one per view of the picture sent
     * downstream (dr_output_view); the last one returns `buffer`. */
    atomic_int holds;
} DrBuffer;

static DrBuffer *dr_buffer_new(GstDfDec *self, gboolean output)
{
    DrBuffer *b = g_new0(DrBuffer, 1);
    b->self = self;
    b->output = output;
    atomic_init(&b->holds, 1);
    return b;
}

static void dr_buffer_release(DrBuffer *b)
{
    /* acq_rel, partnered with the same RMW of the other holders: the last
     * one unmaps and recycles the picture after every other holder's
     * reads of it (libavcodec's references, downstream's maps). */
    if (atomic_fetch_sub_explicit(&b->holds, 1, memory_order_acq_rel) != 1)
        return;
    gst_video_frame_unmap(&b->vframe);
    gst_buffer_unref(b->buffer);
    g_free(b);
}

/* libavcodec is done with the picture: the element is alive here, unlike
 * at the end of a view that downstream held. */
static void dr_buffer_free(void *opaque, uint8_t *data)
{
    DrBuffer *b = opaque;
    pthread_mutex_lock(&b->self->dr_lock);
    g_hash_table_remove(b->self->dr_live, b);
    pthread_mutex_unlock(&b->self->dr_lock);
    dr_buffer_release(b);
}

static void dr_view_released(gpointer data)
{
    dr_buffer_release(data);
}

/* A directly rendered picture as a buffer of its own for downstream: a
 * read-only view of the pool buffer's memory, with its metas.  Handing out
 * the pool buffer itself while libavcodec still holds it as a reference
 * would make GstVideoDecoder's finish_frame copy it whole (the buffer is
 * shared, and our write map keeps its memory from being shared): a 3 MB
 * copy into fresh memory for every reference picture of a 1080p stream.
 * The view keeps the picture out of the pool until downstream drops it.
 * NULL when the buffer is not one memory. */
static GstBuffer *dr_output_view(DrBuffer *dr)
{
    const GstVideoMeta *m = gst_buffer_get_video_meta(dr->buffer);
    if (!m || gst_buffer_n_memory(dr->buffer) != 1 || !dr->vframe.map[0].data)
        return NULL;
    const gsize size = gst_buffer_get_size(dr->buffer);
    GstBuffer *out = gst_buffer_new();
    /* Relaxed: the caller's AVFrame holds the picture, so the count is not
     * reaching 0 meanwhile; the release RMWs order the rest. */
    atomic_fetch_add_explicit(&dr->holds, 1, memory_order_relaxed);
    gst_buffer_append_memory(out, gst_memory_new_wrapped(GST_MEMORY_FLAG_READONLY,
                                                         dr->vframe.map[0].data, size, 0, size, dr,
                                                         dr_view_released));
    /* GstVideoMeta is tagged as describing the memory, so copying metas
     * without the memory leaves it out: it is added here, the rest (a
     * crop meta) copied. */
    GstVideoMeta *vm =
        gst_buffer_add_video_meta_full(out, m->flags, m->format, m->width, m->height, m->n_planes,
                                       (gsize *)m->offset, (gint *)m->stride);
    if (!vm) {
        gst_buffer_unref(out);
        return NULL;
    }
    gst_video_meta_set_alignment(vm, m->alignment);
    gst_buffer_copy_into(out, dr->buffer, GST_BUFFER_COPY_META, 0, -1);
    return out;
}

/* A pool whose buffers libavcodec can decode into: the negotiated size and
 * format padded to `layout`, strides aligned, GstVideoMeta so that
 * downstream reads the padded layout.  Called with dr_lock held. */
static GstBufferPool *dr_pool_new(GstDfDec *self, const DfPictureLayout *layout)
{
    GstVideoInfo info;
    if (!gst_video_info_set_format(&info, self->dr_gst_format, self->dr_display_width,
                                   self->dr_display_height))
        return NULL;
    GstVideoAlignment align;
    gst_video_alignment_reset(&align);
    align.padding_right = layout->width - self->dr_display_width;
    /* Two more rows than libavcodec's padded height cover its SIMD reads past
     * the last plane (16 + align - 1 bytes). */
    align.padding_bottom = layout->height - self->dr_display_height + 2;
    /* No stride alignment of GStreamer's own: the strides must come out
     * equal to layout->linesize (already aligned), because libavcodec's
     * MPEG-2 and H.264 decoders refuse pictures whose strides differ from
     * the stream's first ones, and the framework's pools use exactly those. */
    if (!gst_video_info_align(&info, &align))
        return NULL;
    for (guint i = 0; i < GST_VIDEO_INFO_N_PLANES(&info); i++) {
        if (GST_VIDEO_INFO_PLANE_STRIDE(&info, i) != layout->linesize[i]) {
            GST_DEBUG_OBJECT(self, "plane %u stride %d, libavcodec needs %d: no direct rendering",
                             i, GST_VIDEO_INFO_PLANE_STRIDE(&info, i), layout->linesize[i]);
            return NULL;
        }
    }

    GstBufferPool *pool = gst_df_dec_pool_new();
    GstStructure *config = gst_buffer_pool_get_config(pool);
    GstCaps *caps = gst_video_info_to_caps(&info);
    gst_buffer_pool_config_set_params(config, caps, info.size, 0, 0);
    const gboolean parsed = gst_video_info_from_caps(&self->dr_info, caps);
    gst_caps_unref(caps);
    if (!parsed) {
        gst_structure_free(config);
        gst_object_unref(pool);
        return NULL;
    }
    GstAllocationParams params;
    gst_allocation_params_init(&params);
    params.align = layout->align - 1;
    gst_buffer_pool_config_set_allocator(config, NULL, &params);
    gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
    gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_ALIGNMENT);
    gst_buffer_pool_config_set_video_alignment(config, &align);
    if (!gst_buffer_pool_set_config(pool, config) || !gst_buffer_pool_set_active(pool, TRUE)) {
        GST_WARNING_OBJECT(self, "cannot configure a direct-rendering pool");
        gst_object_unref(pool);
        return NULL;
    }
    return pool;
}

/* The pool's GstVideoMeta as allocated: a directly rendered picture's crop
 * window changes it on the way out (dr_output_crop), and the pool keeps
 * it, so each acquire puts it back before the picture is mapped. */
typedef struct DrMetaOrig {
    guint width, height;
    gsize offset[GST_VIDEO_MAX_PLANES];
} DrMetaOrig;

static GQuark dr_meta_quark; /* set in class_init */

static void dr_meta_restore(GstBuffer *buf)
{
    const GQuark quark = dr_meta_quark;
    GstVideoMeta *m = gst_buffer_get_video_meta(buf);
    if (!m)
        return;
    DrMetaOrig *o = gst_mini_object_get_qdata(GST_MINI_OBJECT(buf), quark);
    if (!o) {
        o = g_new0(DrMetaOrig, 1);
        o->width = m->width;
        o->height = m->height;
        memcpy(o->offset, m->offset, sizeof(o->offset));
        gst_mini_object_set_qdata(GST_MINI_OBJECT(buf), quark, o, g_free);
        return;
    }
    m->width = o->width;
    m->height = o->height;
    memcpy(m->offset, o->offset, sizeof(m->offset));
}

/* A buffer goes back to its pool through atomics inside libgstreamer,
 * which ThreadSanitizer does not see: the next user of the memory (a band
 * copy on a worker, say) looked like a race with the last one (the
 * streaming thread's copy of an earlier frame).  Under TSan the push
 * releases the memory and every acquisition from a pool acquires it,
 * which is the order the pool guarantees. */
#ifdef __SANITIZE_THREAD__
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
static void pool_memory_acquired(GstBuffer *b)
{
    __tsan_acquire(gst_buffer_peek_memory(b, 0));
}
static void pool_memory_pushed(GstBuffer *b)
{
    __tsan_release(gst_buffer_peek_memory(b, 0));
}
#else
static void pool_memory_acquired(GstBuffer *b)
{
    (void)b;
}
static void pool_memory_pushed(GstBuffer *b)
{
    (void)b;
}
#endif

/* dfmedia's get_picture hook: runs on a worker (or a libavcodec frame
 * thread).  Falls back to dfmedia's pools (ENOSYS) whenever the picture
 * could not go downstream as it is. */
static int gst_df_dec_get_picture(void *opaque, AVFrame *frame, const DfPictureLayout *layout,
                                  int flags)
{
    GstDfDec *self = opaque;
    DrBuffer *b = NULL;
    pthread_mutex_lock(&self->dr_lock);
    if (!self->dr_allowed || frame->format != self->dr_format ||
        frame->width < self->dr_display_width || frame->height < self->dr_display_height)
        goto fallback;
    if (!self->dr_pool || self->dr_width != layout->width || self->dr_height != layout->height) {
        if (self->dr_pool) {
            gst_buffer_pool_set_active(self->dr_pool, FALSE);
            gst_object_unref(self->dr_pool);
        }
        self->dr_pool = dr_pool_new(self, layout);
        g_atomic_int_set(&self->dr_pool_touched, FALSE);
        self->dr_width = layout->width;
        self->dr_height = layout->height;
        if (!self->dr_pool) {
            self->dr_allowed = FALSE;
            goto fallback;
        }
    }
    GstBufferPool *pool = gst_object_ref(self->dr_pool);
    /* Every picture's: a copy, not the pool's config parsed again. */
    const GstVideoInfo info = self->dr_info;
    pthread_mutex_unlock(&self->dr_lock);

    b = dr_buffer_new(self, FALSE);
    if (gst_buffer_pool_acquire_buffer(pool, &b->buffer, NULL) != GST_FLOW_OK) {
        gst_object_unref(pool);
        g_free(b);
        return AVERROR(ENOSYS);
    }
    gst_object_unref(pool);
    pool_memory_acquired(b->buffer);
    dr_meta_restore(b->buffer);
    /* READWRITE, not WRITE: downstream maps READ while libavcodec still
     * holds the picture as a reference (GstMemory lock rules).  NO_REF:
     * b->buffer's one reference is b's, so that it is writable for
     * dr_output_crop until it goes out. */
    if (!gst_video_frame_map(&b->vframe, &info, b->buffer,
                             GST_MAP_READWRITE | GST_VIDEO_FRAME_MAP_FLAG_NO_REF)) {
        gst_buffer_unref(b->buffer);
        g_free(b);
        return AVERROR(ENOSYS);
    }
    int n_planes = GST_VIDEO_FRAME_N_PLANES(&b->vframe);
    for (int i = 0; i < n_planes; i++) {
        int stride = GST_VIDEO_FRAME_PLANE_STRIDE(&b->vframe, i);
        uintptr_t p = (uintptr_t)GST_VIDEO_FRAME_PLANE_DATA(&b->vframe, i);
        if (stride != layout->linesize[i] || p % layout->align) {
            GST_DEBUG_OBJECT(self, "pool plane %d stride %d does not fit, copying", i, stride);
            dr_buffer_free(b, NULL);
            return AVERROR(ENOSYS);
        }
    }
    memset(frame->data, 0, sizeof(frame->data));
    memset(frame->linesize, 0, sizeof(frame->linesize));
    for (int i = 0; i < n_planes; i++) {
        frame->data[i] = GST_VIDEO_FRAME_PLANE_DATA(&b->vframe, i);
        frame->linesize[i] = GST_VIDEO_FRAME_PLANE_STRIDE(&b->vframe, i);
    }
    frame->extended_data = frame->data;
    frame->buf[0] =
        av_buffer_create(frame->data[0], gst_buffer_get_size(b->buffer), dr_buffer_free, b, 0);
    if (!frame->buf[0]) {
        dr_buffer_free(b, NULL);
        return AVERROR(ENOMEM);
    }
    pthread_mutex_lock(&self->dr_lock);
    g_hash_table_add(self->dr_live, b);
    pthread_mutex_unlock(&self->dr_lock);
    return 0;

fallback:
    pthread_mutex_unlock(&self->dr_lock);
    return AVERROR(ENOSYS);
}

/* The DrBuffer behind a frame's buffer if we made it (the framework's own
 * pools carry other opaques). */
static DrBuffer *dr_buffer_of(GstDfDec *self, const AVFrame *f)
{
    if (!f->buf[0] || f->buf[1])
        return NULL;
    DrBuffer *b = av_buffer_get_opaque(f->buf[0]);
    pthread_mutex_lock(&self->dr_lock);
    gboolean ours = g_hash_table_contains(self->dr_live, b);
    pthread_mutex_unlock(&self->dr_lock);
    return ours ? b : NULL;
}

/* dfmedia's get_output hook, on the worker that produced the picture:
 * the reconstruction bands copy it into a buffer of downstream's pool, in
 * parallel, instead of one copy on the streaming thread.  A directly
 * rendered picture goes out as it is. */
static int gst_df_dec_get_output(void *opaque, AVFrame *dst, const AVFrame *src)
{
    GstDfDec *self = opaque;
    if (dr_buffer_of(self, src))
        return DF_OUTPUT_IN_PLACE;
    pthread_mutex_lock(&self->dr_lock);
    GstBufferPool *pool = self->out_pool ? gst_object_ref(self->out_pool) : NULL;
    GstVideoInfo info = self->out_info;
    pthread_mutex_unlock(&self->dr_lock);
    /* Not negotiated yet (first picture) or another size: the streaming
     * thread copies it after negotiation. */
    if (!pool || gst_df_dec_video_format(dst->format) != GST_VIDEO_INFO_FORMAT(&info) ||
        dst->width != GST_VIDEO_INFO_WIDTH(&info) || dst->height != GST_VIDEO_INFO_HEIGHT(&info)) {
        if (pool)
            gst_object_unref(pool);
        return DF_OUTPUT_IN_PLACE;
    }
    DrBuffer *b = dr_buffer_new(self, TRUE);
    /* Never wait on a worker for downstream to return buffers: it may be
     * waiting for this very frame. */
    GstBufferPoolAcquireParams params = {.flags = GST_BUFFER_POOL_ACQUIRE_FLAG_DONTWAIT};
    GstFlowReturn flow = gst_buffer_pool_acquire_buffer(pool, &b->buffer, &params);
    gst_object_unref(pool);
    if (flow != GST_FLOW_OK) {
        g_free(b);
        return DF_OUTPUT_IN_PLACE;
    }
    pool_memory_acquired(b->buffer);
    if (!gst_video_frame_map(&b->vframe, &info, b->buffer, GST_MAP_READWRITE)) {
        gst_buffer_unref(b->buffer);
        g_free(b);
        return DF_OUTPUT_IN_PLACE;
    }
    for (guint i = 0; i < GST_VIDEO_FRAME_N_PLANES(&b->vframe); i++) {
        dst->data[i] = GST_VIDEO_FRAME_PLANE_DATA(&b->vframe, i);
        dst->linesize[i] = GST_VIDEO_FRAME_PLANE_STRIDE(&b->vframe, i);
    }
    dst->extended_data = dst->data;
    dst->buf[0] =
        av_buffer_create(dst->data[0], gst_buffer_get_size(b->buffer), dr_buffer_free, b, 0);
    if (!dst->buf[0]) {
        dr_buffer_free(b, NULL);
        return AVERROR(ENOMEM);
    }
    pthread_mutex_lock(&self->dr_lock);
    g_hash_table_add(self->dr_live, b);
    pthread_mutex_unlock(&self->dr_lock);
    return 0;
}

static void gst_df_dec_dr_reset(GstDfDec *self, gboolean allowed, gboolean crop)
{
    pthread_mutex_lock(&self->dr_lock);
    self->dr_crop = allowed && crop;
    if (self->dr_pool) {
        gst_buffer_pool_set_active(self->dr_pool, FALSE);
        gst_object_unref(self->dr_pool);
        self->dr_pool = NULL;
    }
    self->dr_allowed = allowed;
    if (!allowed && self->out_pool) {
        gst_object_unref(self->out_pool);
        self->out_pool = NULL;
    }
    pthread_mutex_unlock(&self->dr_lock);
}

/* ---- decoder lifecycle ------------------------------------------------- */

/* `locked`: the caller holds the stream lock (released while the
 * decoder's tasks finish). */
static void gst_df_dec_close_decoder(GstDfDec *self, gboolean locked)
{
    if (self->dec) {
        DfDecoderStats st;
        df_decoder_stats(self->dec, &st);
        GST_INFO_OBJECT(self,
                        "%" G_GUINT64_FORMAT " packets, %" G_GUINT64_FORMAT
                        " frames out, %" G_GUINT64_FORMAT " dropped, %" G_GUINT64_FORMAT
                        " decode errors, %" G_GUINT64_FORMAT " slice jobs as tasks, threading %s",
                        st.packets, st.frames_out, st.frames_dropped, st.decode_errors,
                        st.slice_jobs, df_decoder_threading(self->dec, NULL));
        if (locked)
            GST_VIDEO_DECODER_STREAM_UNLOCK(self);
        df_decoder_free(&self->dec);
        if (locked)
            GST_VIDEO_DECODER_STREAM_LOCK(self);
    }
    self->drained = FALSE;
    self->out_format = -1;
    /* The next decoder's pictures go to dfmedia's pools until its first
     * output has negotiated: a larger picture would pass get_picture's
     * size check against the old display size and go out with its meta. */
    pthread_mutex_lock(&self->dr_lock);
    self->dr_format = AV_PIX_FMT_NONE;
    pthread_mutex_unlock(&self->dr_lock);
}

static gboolean gst_df_dec_ensure_sched(GstDfDec *self)
{
    if (self->sched)
        return TRUE;
    DfSchedConfig cfg;
    df_sched_config_init(&cfg);
    GST_OBJECT_LOCK(self);
    cfg.n_workers = self->n_workers;
    cfg.policy = df_policy_info(self->policy)->name;
    cfg.poll_us = self->poll_us;
    gboolean shared = self->shared_scheduler && !self->trace_file;
    if (self->trace_file)
        cfg.trace_capacity = DF_TRACE_DEFAULT_CAPACITY;
    GST_OBJECT_UNLOCK(self);
    DfError err = {0};
    int ret = shared ? df_sched_get_shared(&cfg, &self->sched, &err)
                     : df_sched_new(&cfg, &self->sched, &err);
    if (ret < 0) {
        GST_ELEMENT_ERROR(self, RESOURCE, FAILED, ("Cannot start the dfsched scheduler"),
                          ("%s", err.msg));
        return FALSE;
    }
    char desc[256];
    df_sched_describe(self->sched, desc, sizeof(desc));
    GST_INFO_OBJECT(self, "%s scheduler: %s", shared ? "shared" : "own", desc);
    if (shared && (strcmp(df_sched_policy_name(self->sched), cfg.policy) != 0 ||
                   (cfg.n_workers > 0 && df_sched_n_workers(self->sched) != cfg.n_workers)))
        GST_WARNING_OBJECT(self,
                           "the shared scheduler already runs %d workers with policy %s; "
                           "set shared-scheduler=false for a scheduler of your own",
                           df_sched_n_workers(self->sched), df_sched_policy_name(self->sched));
    return TRUE;
}

/* The decoder's clock (DfDecoderConfig.clock_ns): the stream position the
 * sink renders now, in PTS nanoseconds.  A buffer of running time rt is
 * rendered at clock time base_time + rt + latency, so the position due now
 * is that of running time (now - base_time) minus the pipeline latency;
 * the framework maps each frame's PTS onto CLOCK_MONOTONIC by it.
 * INT64_MIN (no deadlines) while the clock does not run for us: no clock,
 * not PLAYING, not a TIME segment, or a rate other than 1.0 (where PTS
 * and running time differ in pace or direction).  Called on the streaming
 * thread in send_packet: the object lock only, for the clock and
 * base_time, which change at state changes. */
static int64_t gst_df_dec_clock_ns(void *opaque)
{
    GstDfDec *self = opaque;
    const GstSegment *seg = &self->clock_segment;
    if (seg->format != GST_FORMAT_TIME || seg->rate != 1.0)
        return INT64_MIN;
    GST_OBJECT_LOCK(self);
    GstClock *clock = GST_ELEMENT_CLOCK(self);
    if (clock && GST_STATE(self) == GST_STATE_PLAYING)
        gst_object_ref(clock);
    else
        clock = NULL;
    GstClockTime base_time = GST_ELEMENT_CAST(self)->base_time;
    GST_OBJECT_UNLOCK(self);
    if (!clock)
        return INT64_MIN;
    GstClockTime now = gst_clock_get_time(clock);
    gst_object_unref(clock);
    if (!GST_CLOCK_TIME_IS_VALID(now) || !GST_CLOCK_TIME_IS_VALID(base_time) || now < base_time)
        return INT64_MIN;
    guint64 pos = 0;
    int sign =
        gst_segment_position_from_running_time_full(seg, GST_FORMAT_TIME, now - base_time, &pos);
    if (sign == 0 || pos > (guint64)G_MAXINT64)
        return INT64_MIN;
    const gint64 latency = atomic_load_explicit(&self->pipeline_latency, memory_order_relaxed);
    return (sign > 0 ? (gint64)pos : -(gint64)pos) - latency;
}

/* The streaming thread's CPU time since the previous frame (demuxing and
 * parsing upstream, this element's own work, the push downstream) runs on
 * the cores the workers use: it goes into the stream's load, or admission
 * would count only the workers' part and admit more streams than the
 * cores carry (dfbench realtime --overload on 1080p25 H.264, 2 workers:
 * 20 admitted where K* was 17).  One clock read per frame; a new thread
 * (after a flush) starts a new baseline.  Stream lock held. */
static void gst_df_dec_charge_thread(GstDfDec *self)
{
    struct timespec ts;
    if (!self->dec || clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return;
    const guint64 now = (guint64)ts.tv_sec * GST_SECOND + (guint64)ts.tv_nsec;
    const pthread_t me = pthread_self();
    if (self->charge_valid && pthread_equal(me, self->charge_thread) && now > self->charge_cpu_ns)
        df_decoder_add_load_ns(self->dec, now - self->charge_cpu_ns);
    self->charge_thread = me;
    self->charge_cpu_ns = now;
    self->charge_valid = TRUE;
}

static gboolean gst_df_dec_open_decoder(GstDfDec *self)
{
    GstVideoCodecState *state = self->input_state;
    if (!gst_df_dec_ensure_sched(self))
        return FALSE;

    AVCodecParameters *par = gst_df_dec_codecs_params(state, self->codec_id);
    if (!par)
        return FALSE;

    DfDecoderConfig cfg;
    df_decoder_config_init(&cfg);
    GST_OBJECT_LOCK(self);
    cfg.threading = self->threading;
    const gint max_frame_delay = self->max_frame_delay;
    gchar *filter = g_strdup(self->filter);
    GST_OBJECT_UNLOCK(self);
    /* Automatic: a live pipeline waits for no frame the decoder could
     * give at once (as avdec's live rule and dav1ddec's max-frame-delay);
     * elsewhere what is fastest.  An explicit threading=frame is not
     * undone by the automatic choice. */
    if (max_frame_delay >= 0)
        cfg.max_delay_frames = max_frame_delay;
    else if (self->upstream_live && cfg.threading != DF_THREADING_FRAME)
        cfg.max_delay_frames = 0;
    self->delay_bounded = cfg.max_delay_frames >= 0;
    cfg.filter = filter;
    cfg.filter_keeps_rate = TRUE; /* one picture per GstVideoCodecFrame */
    cfg.log_level = AV_LOG_WARNING;
    cfg.alloc.opaque = self;
    /* With a filter the output frames are the filter's, not the decoder's. */
    if (!filter)
        cfg.alloc.get_picture = gst_df_dec_get_picture;
    cfg.alloc.get_output = gst_df_dec_get_output;
    /* The latency is in the clock rather than in deadline_offset_ns: it may
     * change while the stream plays, and df_decoder_drop_late() (QoS)
     * compares PTS with running times that do not include it. */
    cfg.clock_ns = gst_df_dec_clock_ns;
    cfg.clock_opaque = self;
    /* The rate the stream plays at, for its measured load (admission). */
    if (GST_VIDEO_INFO_FPS_N(&state->info) > 0 && GST_VIDEO_INFO_FPS_D(&state->info) > 0)
        cfg.frame_rate =
            (AVRational){GST_VIDEO_INFO_FPS_N(&state->info), GST_VIDEO_INFO_FPS_D(&state->info)};

    DfError err = {0};
    /* avcodec_open2() may start frame threads: not under the stream lock
     * (called from set_format, which holds it). */
    DfDecoder *dec = NULL;
    GST_VIDEO_DECODER_STREAM_UNLOCK(self);
    int ret = df_decoder_new(self->sched, par, (AVRational){1, GST_SECOND}, &cfg, &dec, &err);
    GST_VIDEO_DECODER_STREAM_LOCK(self);
    self->dec = dec;
    self->charge_valid = FALSE; /* a new account */
    avcodec_parameters_free(&par);
    g_free(filter);
    if (ret < 0) {
        GST_ELEMENT_ERROR(self, LIBRARY, INIT, ("Cannot open the decoder"), ("%s", err.msg));
        return FALSE;
    }
    self->drained = FALSE;
    self->out_format = -1;
    /* A new decoder of an admitted stream (caps change) stays admitted.
     * Until admission has decided, the stream is on probation: its frames
     * run on the capacity the others leave (docs/dfdec.md, "Admission"). */
    GST_OBJECT_LOCK(self);
    const gboolean measured = self->admission != GST_DF_DEC_ADMISSION_NONE;
    GST_OBJECT_UNLOCK(self);
    if (self->admitted)
        df_decoder_set_admitted(self->dec, TRUE);
    else if (measured)
        df_decoder_set_probation(self->dec, TRUE);
    return TRUE;
}

/* ---- output ------------------------------------------------------------ */

static gboolean gst_df_dec_negotiate_frame(GstDfDec *self, const AVFrame *f)
{
    GstVideoDecoder *vdec = GST_VIDEO_DECODER(self);
    GstVideoFormat fmt = gst_df_dec_video_format(f->format);
    if (fmt == GST_VIDEO_FORMAT_UNKNOWN) {
        const char *name = av_get_pix_fmt_name(f->format);
        GST_ELEMENT_ERROR(self, STREAM, FORMAT, ("Unsupported pixel format"),
                          ("dfdec cannot output %s", name ? name : "?"));
        return FALSE;
    }
    if (self->output_state && f->format == self->out_format && f->width == self->out_width &&
        f->height == self->out_height && df_frame_interlaced(f) == self->out_interlaced &&
        av_cmp_q(f->sample_aspect_ratio, self->out_sar) == 0)
        return TRUE;

    GstVideoCodecState *st =
        gst_video_decoder_set_output_state(vdec, fmt, f->width, f->height, self->input_state);
    GstVideoInfo *info = &st->info;
    GstStructure *in = gst_caps_get_structure(self->input_state->caps, 0);
    if (!gst_structure_has_field(in, "pixel-aspect-ratio") && f->sample_aspect_ratio.num > 0) {
        GST_VIDEO_INFO_PAR_N(info) = f->sample_aspect_ratio.num;
        GST_VIDEO_INFO_PAR_D(info) = f->sample_aspect_ratio.den;
    }
    if (df_frame_interlaced(f))
        GST_VIDEO_INFO_INTERLACE_MODE(info) = GST_VIDEO_INTERLACE_MODE_MIXED;
    {
        /* What upstream's caps say, and what they leave unknown from the
         * bitstream (h264parse leaves the range of an RGB stream unknown). */
        const gboolean given = gst_structure_has_field(in, "colorimetry");
        GstVideoColorimetry *c = &GST_VIDEO_INFO_COLORIMETRY(info);
        if (!given || c->range == GST_VIDEO_COLOR_RANGE_UNKNOWN) {
            if (f->color_range == AVCOL_RANGE_JPEG || f->format == AV_PIX_FMT_YUVJ420P ||
                f->format == AV_PIX_FMT_YUVJ422P || f->format == AV_PIX_FMT_YUVJ444P)
                c->range = GST_VIDEO_COLOR_RANGE_0_255;
            else if (f->color_range == AVCOL_RANGE_MPEG)
                c->range = GST_VIDEO_COLOR_RANGE_16_235;
        }
        if ((!given || c->matrix == GST_VIDEO_COLOR_MATRIX_UNKNOWN) &&
            f->colorspace != AVCOL_SPC_UNSPECIFIED && !GST_VIDEO_INFO_IS_RGB(info))
            c->matrix = gst_video_color_matrix_from_iso(f->colorspace);
        if ((!given || c->transfer == GST_VIDEO_TRANSFER_UNKNOWN) &&
            f->color_trc != AVCOL_TRC_UNSPECIFIED)
            c->transfer = gst_video_transfer_function_from_iso(f->color_trc);
        if ((!given || c->primaries == GST_VIDEO_COLOR_PRIMARIES_UNKNOWN) &&
            f->color_primaries != AVCOL_PRI_UNSPECIFIED)
            c->primaries = gst_video_color_primaries_from_iso(f->color_primaries);
    }
    if (!gst_structure_has_field(in, "chroma-site")) {
        if (f->chroma_location == AVCHROMA_LOC_LEFT)
            GST_VIDEO_INFO_CHROMA_SITE(info) = GST_VIDEO_CHROMA_SITE_MPEG2;
        else if (f->chroma_location == AVCHROMA_LOC_CENTER)
            GST_VIDEO_INFO_CHROMA_SITE(info) = GST_VIDEO_CHROMA_SITE_JPEG;
        else if (f->chroma_location == AVCHROMA_LOC_TOPLEFT)
            GST_VIDEO_INFO_CHROMA_SITE(info) = GST_VIDEO_CHROMA_SITE_DV;
    }
    if (self->output_state)
        gst_video_codec_state_unref(self->output_state);
    self->output_state = st;
    self->out_format = f->format;
    self->out_width = f->width;
    self->out_height = f->height;
    self->out_interlaced = df_frame_interlaced(f);
    self->out_sar = f->sample_aspect_ratio;

    /* No direct rendering until negotiation is over: decide_allocation
     * drops the pool of the old size, and a worker's picture in between
     * would come from it, with the old size's meta (1080 lines under
     * caps of 1088, when the coded size is the same). */
    pthread_mutex_lock(&self->dr_lock);
    self->dr_format = AV_PIX_FMT_NONE;
    self->dr_gst_format = fmt;
    self->dr_display_width = f->width;
    self->dr_display_height = f->height;
    pthread_mutex_unlock(&self->dr_lock);
    /* Calls decide_allocation, which decides whether DR is allowed. */
    if (!gst_video_decoder_negotiate(vdec)) {
        GST_WARNING_OBJECT(self, "negotiation failed");
        self->out_format = -1;
        return FALSE;
    }
    GstBufferPool *pool = gst_video_decoder_get_buffer_pool(vdec);
    pthread_mutex_lock(&self->dr_lock);
    self->dr_format = f->format;
    if (self->out_pool)
        gst_object_unref(self->out_pool);
    self->out_pool = pool;
    self->out_info = self->output_state->info;
    pthread_mutex_unlock(&self->dr_lock);
    return TRUE;
}

/* The latency query's answer: the decoder's real depth in frames, at the
 * caps' frame rate, else at the rate dfmedia knows (the bitstream's once
 * decoded, as avdec takes the codec's), else 0. */
static void gst_df_dec_update_latency(GstDfDec *self)
{
    const int n = df_decoder_latency_frames(self->dec);
    if (n < 0)
        return;
    /* Once a latency is known for n frames it stays: without a caps frame
     * rate the rate comes from df_decoder_load(), which takes the load
     * registry's lock and walks every stream, too dear for every output
     * frame; while it gives no rate either, it is asked every 32nd. */
    if (n == self->latency_frames &&
        (n == 0 || self->latency_ns > 0 || (++self->latency_polls & 31) != 0))
        return;
    const GstVideoInfo *info = &self->input_state->info;
    GstClockTime lat = 0;
    if (GST_VIDEO_INFO_FPS_N(info) > 0) {
        lat = gst_util_uint64_scale_ceil(n, GST_SECOND * GST_VIDEO_INFO_FPS_D(info),
                                         GST_VIDEO_INFO_FPS_N(info));
    } else {
        DfDecoderLoad ld;
        df_decoder_load(self->dec, &ld);
        if (ld.fps > 0)
            lat = (GstClockTime)ceil(n * (double)GST_SECOND / ld.fps);
    }
    if (n == self->latency_frames && lat == self->latency_ns)
        return;
    self->latency_frames = n;
    self->latency_ns = lat;
    GST_DEBUG_OBJECT(self, "latency %d frames = %" GST_TIME_FORMAT, n, GST_TIME_ARGS(lat));
    gst_video_decoder_set_latency(GST_VIDEO_DECODER(self), lat, lat);
}

/* Let go of an input frame that produced no picture: dropped (a QoS
 * message) when QoS cancelled its output or it was sent while late (user
 * data) and so may have been skipped, else released. */
static void gst_df_dec_let_go(GstDfDec *self, GstVideoCodecFrame *f)
{
    GstVideoDecoder *vdec = GST_VIDEO_DECODER(self);
    GST_LOG_OBJECT(self, "frame %u had no picture", f->system_frame_number);
    if (self->qos_cut || gst_video_codec_frame_get_user_data(f))
        gst_video_decoder_drop_frame(vdec, gst_video_codec_frame_ref(f));
    else
        gst_video_decoder_release_frame(vdec, gst_video_codec_frame_ref(f));
}

/* The drain reached the end: every input frame still pending produced no
 * picture. */
static void gst_df_dec_release_rest(GstDfDec *self)
{
    GList *frames = gst_video_decoder_get_frames(GST_VIDEO_DECODER(self));
    for (GList *l = frames; l; l = l->next)
        gst_df_dec_let_go(self, l->data);
    g_list_free_full(frames, (GDestroyNotify)gst_video_codec_frame_unref);
    self->qos_cut = FALSE;
}

/* Let go of input frames presented before `out` that produced no picture.
 * Presented before: an earlier PTS, when the PTS are in presentation
 * order.  PTS equal to DTS on every frame may be in decode order instead
 * (a remux of a B-frame stream without composition offsets: the
 * P-picture decoded before two B-pictures has the smaller PTS, and was
 * let go when the first B-picture came out).  Such a stream's frames are
 * let go by decode order: at once when the codec does not reorder, else
 * STALE_FRAMES later (a hierarchical GOP holds a reference picture for
 * as many frames as the GOP has B-pictures, more than its reorder delay). */
static void gst_df_dec_release_stale(GstDfDec *self, const GstVideoCodecFrame *out)
{
    GstVideoDecoder *vdec = GST_VIDEO_DECODER(self);
    GList *frames = gst_video_decoder_get_frames(vdec);
    const guint32 depth =
        self->pts_is_dts && df_decoder_reorder_delay(self->dec) == 0 ? 0 : STALE_FRAMES;
    for (GList *l = frames; l; l = l->next) {
        GstVideoCodecFrame *f = l->data;
        if (f == out || f->system_frame_number > out->system_frame_number)
            continue;
        gboolean earlier = !self->pts_is_dts && GST_CLOCK_TIME_IS_VALID(f->pts) &&
                           GST_CLOCK_TIME_IS_VALID(out->pts) && f->pts < out->pts;
        const guint32 dist = out->system_frame_number - f->system_frame_number;
        if (earlier || dist > depth || dist > STALE_FRAMES)
            gst_df_dec_let_go(self, f);
    }
    g_list_free_full(frames, (GDestroyNotify)gst_video_codec_frame_unref);
    self->qos_cut = FALSE;
}

static GstFlowReturn gst_df_dec_copy_out(GstDfDec *self, const AVFrame *f,
                                         GstVideoCodecFrame *frame)
{
    GstVideoDecoder *vdec = GST_VIDEO_DECODER(self);
    GstFlowReturn flow = gst_video_decoder_allocate_output_frame(vdec, frame);
    if (flow != GST_FLOW_OK)
        return flow;
    pool_memory_acquired(frame->output_buffer);
    GstVideoFrame vf;
    if (!gst_video_frame_map(&vf, &self->output_state->info, frame->output_buffer, GST_MAP_WRITE)) {
        GST_ELEMENT_ERROR(self, RESOURCE, WRITE, ("Cannot map an output buffer"), (NULL));
        return GST_FLOW_ERROR;
    }
    int linesize[4];
    av_image_fill_linesizes(linesize, f->format, f->width);
    const AVPixFmtDescriptor *desc = av_pix_fmt_desc_get(f->format);
    for (guint i = 0; i < GST_VIDEO_FRAME_N_PLANES(&vf); i++) {
        int h = f->height;
        if (i == 1 || i == 2)
            h = AV_CEIL_RSHIFT(f->height, desc->log2_chroma_h);
        av_image_copy_plane(GST_VIDEO_FRAME_PLANE_DATA(&vf, i),
                            GST_VIDEO_FRAME_PLANE_STRIDE(&vf, i), f->data[i], f->linesize[i],
                            linesize[i], h);
    }
    gst_video_frame_unmap(&vf);
    self->copied_frames++;
    return GST_FLOW_OK;
}

/* A directly rendered picture's crop window, which libavcodec points the
 * data at (AV_CODEC_FLAG_UNALIGNED), at no cost: a GstVideoCropMeta over
 * the picture from its top-left corner when downstream takes one (the
 * GStreamer convention: caps are the window's size), else GstVideoMeta
 * plane offsets at the window.  FALSE when neither can be done (the
 * buffer is shared): the caller copies the window. */
static gboolean dr_output_crop(GstDfDec *self, DrBuffer *dr, const AVFrame *f)
{
    gsize off[GST_VIDEO_MAX_PLANES] = {0};
    gboolean any = FALSE;
    const guint n = GST_VIDEO_FRAME_N_PLANES(&dr->vframe);
    for (guint i = 0; i < n; i++) {
        const uint8_t *base = GST_VIDEO_FRAME_PLANE_DATA(&dr->vframe, i);
        if (!f->data[i] || f->data[i] < base)
            return FALSE;
        off[i] = (gsize)(f->data[i] - base);
        any |= off[i] != 0;
    }
    if (!any)
        return TRUE;
    GstVideoMeta *m = gst_buffer_get_video_meta(dr->buffer);
    if (!m || !gst_buffer_is_writable(dr->buffer))
        return FALSE;
    pthread_mutex_lock(&self->dr_lock);
    const gboolean crop = self->dr_crop;
    pthread_mutex_unlock(&self->dr_lock);
    if (crop) {
        const gint stride = GST_VIDEO_FRAME_PLANE_STRIDE(&dr->vframe, 0);
        const gint pstride = GST_VIDEO_FORMAT_INFO_PSTRIDE(dr->vframe.info.finfo, 0);
        GstVideoCropMeta *c = gst_buffer_add_video_crop_meta(dr->buffer);
        if (!c)
            return FALSE;
        c->x = (guint)((off[0] % (gsize)stride) / (gsize)pstride);
        c->y = (guint)(off[0] / (gsize)stride);
        c->width = (guint)f->width;
        c->height = (guint)f->height;
        m->width = c->x + c->width;
        m->height = c->y + c->height;
    } else {
        for (guint i = 0; i < n; i++)
            m->offset[i] += off[i];
    }
    return TRUE;
}

/* Fault in `size` bytes at `p` for writing: one madvise for the whole
 * pages (MADV_POPULATE_WRITE, Linux 5.14) instead of a fault per page,
 * 6 ms against 10 ms for 7 1080p pictures on the 2-core VM; a write to
 * each page where the kernel lacks it. */
static void fault_in(guint8 *p, gsize size)
{
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    const uintptr_t first = ((uintptr_t)p + page - 1) & ~(page - 1);
    const uintptr_t end = ((uintptr_t)p + size) & ~(page - 1);
#ifdef MADV_POPULATE_WRITE
    if (end > first && madvise((void *)first, end - first, MADV_POPULATE_WRITE) == 0) {
        /* The partial pages at both ends. */
        memset(p, 0, first - (uintptr_t)p);
        memset((void *)end, 0, (uintptr_t)p + size - end);
        return;
    }
#endif
    memset(p, 0, size);
}

/* Once per direct-rendering pool, after its first picture went out, on
 * the streaming thread: fault in the pictures the stream will cycle
 * through (the frames in flight, references and the ones downstream
 * holds), with fault_in().  Left to libavcodec, each new picture's
 * first touch would fault page by page inside a D task on a worker, in
 * the first second of playback, every stream at once: on the 2-core VM of
 * the benchmarks that made 12 MPEG-2 1080p pipelines late where 21-26
 * kept up with the pool touched beforehand (2026-12-05).  In a non-live
 * pipeline this runs during preroll; in a live one it delays the first
 * picture instead. */
static void dr_pool_touch(GstDfDec *self)
{
    /* The frames in flight, a few references, and downstream's
     * last-sample and next buffer; less the pictures out now, which are
     * written already. */
    enum { MAX_TOUCH = 24 };
    /* Without the lock on every picture: a pool made meanwhile clears the
     * flag under the lock, and the next picture sees it. */
    if (g_atomic_int_get(&self->dr_pool_touched))
        return;
    const int want = df_decoder_latency_frames(self->dec) + 6;
    pthread_mutex_lock(&self->dr_lock);
    GstBufferPool *pool =
        self->dr_pool && !self->dr_pool_touched ? gst_object_ref(self->dr_pool) : NULL;
    g_atomic_int_set(&self->dr_pool_touched, TRUE);
    int live = 0;
    if (pool) {
        GHashTableIter it;
        gpointer key;
        g_hash_table_iter_init(&it, self->dr_live);
        while (g_hash_table_iter_next(&it, &key, NULL))
            live += !((const DrBuffer *)key)->output;
    }
    const int n = CLAMP(want - live, 0, MAX_TOUCH);
    pthread_mutex_unlock(&self->dr_lock);
    if (!pool)
        return;
    GstBuffer *bufs[MAX_TOUCH];
    int got = 0;
    GstBufferPoolAcquireParams params = {.flags = GST_BUFFER_POOL_ACQUIRE_FLAG_DONTWAIT};
    while (got < n && gst_buffer_pool_acquire_buffer(pool, &bufs[got], &params) == GST_FLOW_OK) {
        GstMapInfo mi;
        if (gst_buffer_map(bufs[got], &mi, GST_MAP_WRITE)) {
            fault_in(mi.data, mi.size);
            gst_buffer_unmap(bufs[got], &mi);
        }
        got++;
    }
    for (int i = 0; i < got; i++)
        gst_buffer_unref(bufs[i]);
    gst_object_unref(pool);
    GST_DEBUG_OBJECT(self, "faulted in %d direct-rendering pictures", got);
}

/* Push one decoded picture downstream (stream lock held). */
static GstFlowReturn gst_df_dec_output(GstDfDec *self, AVFrame *f)
{
    GstVideoDecoder *vdec = GST_VIDEO_DECODER(self);
    guint32 num = (guint32)((intptr_t)f->opaque - 1);
    GstVideoCodecFrame *frame = f->opaque ? gst_video_decoder_get_frame(vdec, num) : NULL;
    if (!frame) {
        GST_DEBUG_OBJECT(self, "picture for frame %u which is gone (flushed)", num);
        av_frame_unref(f);
        return GST_FLOW_OK;
    }
    gst_df_dec_release_stale(self, frame);
    if (!gst_df_dec_negotiate_frame(self, f)) {
        gst_video_decoder_drop_frame(vdec, frame);
        av_frame_unref(f);
        return GST_PAD_IS_FLUSHING(GST_VIDEO_DECODER_SRC_PAD(self)) ? GST_FLOW_FLUSHING
                                                                    : GST_FLOW_NOT_NEGOTIATED;
    }
    gst_df_dec_update_latency(self);

    GstFlowReturn flow = GST_FLOW_OK;
    DrBuffer *dr = dr_buffer_of(self, f);
    if (dr && !dr->output && !dr_output_crop(self, dr, f))
        dr = NULL;
    if (dr) {
        frame->output_buffer = dr->output ? NULL : dr_output_view(dr);
        if (!frame->output_buffer)
            frame->output_buffer = gst_buffer_ref(dr->buffer);
        if (dr->output)
            self->band_frames++;
        else
            self->dr_frames++;
    } else {
        flow = gst_df_dec_copy_out(self, f, frame);
        if (flow != GST_FLOW_OK) {
            gst_video_decoder_drop_frame(vdec, frame);
            av_frame_unref(f);
            return flow;
        }
    }
    if (df_frame_interlaced(f)) {
        GST_BUFFER_FLAG_SET(frame->output_buffer, GST_VIDEO_BUFFER_FLAG_INTERLACED);
        if (df_frame_top_field_first(f))
            GST_BUFFER_FLAG_SET(frame->output_buffer, GST_VIDEO_BUFFER_FLAG_TFF);
    }
    if (f->decode_error_flags)
        GST_BUFFER_FLAG_SET(frame->output_buffer, GST_BUFFER_FLAG_CORRUPTED);
    self->qos_restart = FALSE;
    /* Before the push: in preroll, finish_frame waits in the sink until
     * PLAYING. */
    if (dr && !dr->output)
        dr_pool_touch(self);
    av_frame_unref(f);
    pool_memory_pushed(frame->output_buffer);
    /* Before the push: a sink that syncs sends its QoS from inside it.
     * A parsed raw stream may carry DTS only. */
    const GstClockTime t = GST_CLOCK_TIME_IS_VALID(frame->pts) ? frame->pts : frame->dts;
    const GstClockTime rt =
        GST_CLOCK_TIME_IS_VALID(t)
            ? gst_segment_to_running_time(&vdec->input_segment, GST_FORMAT_TIME, t)
            : GST_CLOCK_TIME_NONE;
    GST_OBJECT_LOCK(self);
    self->qos_pushed++;
    if (GST_CLOCK_TIME_IS_VALID(rt) && (gint64)rt > self->out_running_time)
        self->out_running_time = (gint64)rt;
    GST_OBJECT_UNLOCK(self);
    return gst_video_decoder_finish_frame(vdec, frame);
}

/* Post the decoder's queued errors as warnings (GST_VIDEO_DECODER_ERROR
 * counts them against max-errors, as gst-libav does). */
static GstFlowReturn gst_df_dec_post_errors(GstDfDec *self)
{
    GstFlowReturn flow = GST_FLOW_OK;
    DfDecodeError e;
    while (df_decoder_next_error(self->dec, &e) == 0) {
        GST_VIDEO_DECODER_ERROR(self, 1, STREAM, DECODE, ("Corrupt data in the stream"),
                                ("%s", e.msg), flow);
        if (flow != GST_FLOW_OK)
            break;
        /* GstVideoDecoder only logs errors below max-errors (-1 by default:
         * never an error); applications also get a warning on the bus, the
         * first ones and then one per WARN_EVERY so that a damaged stream
         * does not flood it. */
        self->errors++;
        if (self->errors <= WARN_FIRST || self->errors % WARN_EVERY == 0)
            GST_ELEMENT_WARNING(
                self, STREAM, DECODE, ("Corrupt data in the stream"),
                ("%s (%" G_GUINT64_FORMAT " decode errors so far)", e.msg, self->errors));
    }
    return flow;
}

/* How long gst_df_dec_receive() waits for frames in flight. */
typedef enum {
    GST_DF_DEC_RECEIVE_ALL,     /* until every packet sent is decoded */
    GST_DF_DEC_RECEIVE_IN_TIME, /* while more are in flight than the latency reported
                                 * (max_in_flight - 1: a slot is free after it) */
    GST_DF_DEC_RECEIVE_READY,   /* no waiting */
} GstDfDecReceive;

/* Receive and push frames.  Stream lock held; released while waiting. */
static GstFlowReturn gst_df_dec_receive(GstDfDec *self, GstDfDecReceive until, gboolean *eof)
{
    GstFlowReturn flow = GST_FLOW_OK;
    for (;;) {
        int ret;
        if (until == GST_DF_DEC_RECEIVE_READY) {
            ret = df_decoder_try_receive_frame(self->dec, self->frame);
        } else {
            GST_VIDEO_DECODER_STREAM_UNLOCK(self);
            ret = until == GST_DF_DEC_RECEIVE_ALL
                      ? df_decoder_receive_frame(self->dec, self->frame)
                      : df_decoder_receive_frame_in_time(self->dec, self->frame);
            GST_VIDEO_DECODER_STREAM_LOCK(self);
        }
        GstFlowReturn eflow = gst_df_dec_post_errors(self);
        if (ret == AVERROR(EAGAIN))
            return eflow;
        if (ret == AVERROR_EOF) {
            if (eof)
                *eof = TRUE;
            return eflow;
        }
        if (ret < 0) {
            char msg[AV_ERROR_MAX_STRING_SIZE];
            av_strerror(ret, msg, sizeof(msg));
            GST_ELEMENT_ERROR(self, STREAM, DECODE, ("Decoding failed"), ("%s", msg));
            return GST_FLOW_ERROR;
        }
        flow = gst_df_dec_output(self, self->frame);
        if (flow != GST_FLOW_OK)
            return flow;
        if (eflow != GST_FLOW_OK)
            return eflow;
    }
}

/* Decode everything queued (EOS, drain, caps change); the decoder is then
 * reset so that more data may follow. */
static GstFlowReturn gst_df_dec_drain_all(GstDfDec *self)
{
    if (!self->dec)
        return GST_FLOW_OK;
    GST_VIDEO_DECODER_STREAM_UNLOCK(self);
    int ret = df_decoder_send_packet(self->dec, NULL);
    GST_VIDEO_DECODER_STREAM_LOCK(self);
    GstFlowReturn flow = GST_FLOW_OK;
    if (ret >= 0 || ret == AVERROR_EOF) {
        gboolean eof = FALSE;
        while (!eof && flow == GST_FLOW_OK)
            flow = gst_df_dec_receive(self, GST_DF_DEC_RECEIVE_ALL, &eof);
        if (eof)
            gst_df_dec_release_rest(self);
    }
    GST_VIDEO_DECODER_STREAM_UNLOCK(self);
    df_decoder_flush(self->dec);
    GST_VIDEO_DECODER_STREAM_LOCK(self);
    return flow;
}

/* A new segment or stream (a flush, the next item of a playlist): the QoS
 * so far was about other buffers. */
static void gst_df_dec_qos_forget(GstDfDec *self)
{
    GST_OBJECT_LOCK(self);
    self->qos_earliest = -1;
    self->qos_valid = FALSE;
    self->qos_pushed = 0;
    self->out_running_time = -1;
    GST_OBJECT_UNLOCK(self);
}

/* ---- GstVideoDecoder vmethods ------------------------------------------ */

static gboolean gst_df_dec_start(GstVideoDecoder *vdec)
{
    GstDfDec *self = GST_DF_DEC(vdec);
    GST_OBJECT_LOCK(self);
    gchar *filter = g_strdup(self->filter);
    GST_OBJECT_UNLOCK(self);
    if (filter) {
        DfError err = {0};
        int ret = df_filter_check(filter, &err);
        g_free(filter);
        if (ret < 0) {
            GST_ELEMENT_ERROR(self, LIBRARY, SETTINGS, ("Invalid filter"), ("%s", err.msg));
            return FALSE;
        }
    }
    GST_OBJECT_LOCK(self);
    gchar *trace = g_strdup(self->trace_file);
    GST_OBJECT_UNLOCK(self);
    if (trace) {
        /* A path that cannot be written fails now, not after the stream. */
        DfError err = {0};
        int ret = df_trace_check_path(trace, &err);
        g_free(trace);
        if (ret < 0) {
            GST_ELEMENT_ERROR(self, RESOURCE, OPEN_WRITE, ("Cannot write the trace file"),
                              ("%s", err.msg));
            return FALSE;
        }
    }
    self->latency_frames = -1;
    gst_segment_init(&self->clock_segment, GST_FORMAT_UNDEFINED);
    atomic_store_explicit(&self->pipeline_latency, 0, memory_order_relaxed);
    gst_df_dec_qos_forget(self);
    self->dr_frames = self->band_frames = self->copied_frames = 0;
    self->packets = self->qos_skipped = 0;
    self->errors = 0;
    self->admitted = self->refused = self->fell_behind = FALSE;
    self->pkt = av_packet_alloc();
    self->frame = av_frame_alloc();
    if (!self->pkt || !self->frame) {
        av_packet_free(&self->pkt);
        av_frame_free(&self->frame);
        return FALSE;
    }
    /* Like gst-libav: frames carry PTS; no need for upstream's DTS. */
    gst_video_decoder_set_needs_format(vdec, TRUE);
    return TRUE;
}

static gboolean gst_df_dec_stop(GstVideoDecoder *vdec)
{
    GstDfDec *self = GST_DF_DEC(vdec);
    GST_DEBUG_OBJECT(self,
                     "%" G_GUINT64_FORMAT " frames rendered directly, %" G_GUINT64_FORMAT
                     " copied by bands into downstream's buffers, %" G_GUINT64_FORMAT
                     " copied on the streaming thread",
                     self->dr_frames, self->band_frames, self->copied_frames);
    /* Called without the stream lock (GstVideoDecoder 1.22). */
    gst_df_dec_close_decoder(self, FALSE);
    self->qos_cut = self->qos_to_key = self->qos_restart = FALSE;
    self->charge_valid = FALSE;
    gst_df_dec_dr_reset(self, FALSE, FALSE);
    if (self->sched) {
        GST_OBJECT_LOCK(self);
        gchar *trace = g_strdup(self->trace_file);
        GST_OBJECT_UNLOCK(self);
        DfError err = {0};
        if (trace && df_sched_trace_write(self->sched, trace, &err) < 0)
            GST_ELEMENT_WARNING(self, RESOURCE, WRITE, ("Cannot write the trace"), ("%s", err.msg));
        g_free(trace);
        df_sched_unref(self->sched);
        self->sched = NULL;
    }
    av_packet_free(&self->pkt);
    av_frame_free(&self->frame);
    g_clear_pointer(&self->input_state, gst_video_codec_state_unref);
    g_clear_pointer(&self->output_state, gst_video_codec_state_unref);
    return TRUE;
}

static gboolean gst_df_dec_set_format(GstVideoDecoder *vdec, GstVideoCodecState *state)
{
    GstDfDec *self = GST_DF_DEC(vdec);
    const enum AVCodecID id = gst_df_dec_codecs_find(state->caps);
    if (id == AV_CODEC_ID_NONE)
        return FALSE;
    if (self->input_state && self->dec && gst_caps_is_equal(self->input_state->caps, state->caps))
        return TRUE;
    GST_DEBUG_OBJECT(self, "new caps %" GST_PTR_FORMAT, state->caps);

    /* Frames of the old stream go out before the decoder is replaced. */
    if (self->dec) {
        gst_df_dec_drain_all(self);
        gst_df_dec_close_decoder(self, TRUE);
    }
    g_clear_pointer(&self->input_state, gst_video_codec_state_unref);
    self->input_state = gst_video_codec_state_ref(state);
    self->codec_id = id;
    GstQuery *q = gst_query_new_latency();
    self->upstream_live = FALSE;
    if (gst_pad_peer_query(GST_VIDEO_DECODER_SINK_PAD(self), q))
        gst_query_parse_latency(q, &self->upstream_live, NULL, NULL);
    gst_query_unref(q);
    self->latency_frames = -1;
    self->pts_is_dts = TRUE;
    if (!gst_df_dec_open_decoder(self))
        return FALSE;
    gst_df_dec_update_latency(self);
    return TRUE;
}

/* The stream passed admission (or there is none): counted in the admitted
 * load, off probation. */
static void gst_df_dec_set_admitted(GstDfDec *self)
{
    self->admitted = TRUE;
    df_decoder_set_admitted(self->dec, TRUE);
    df_decoder_set_probation(self->dec, FALSE);
}

/* Admission (docs/dfdec.md, "Admission"): once the stream's own work has
 * been measured over its window, the measured load of the admitted
 * streams plus this one is compared with max-load of the scheduler's
 * capacity.  Before that, from its first packet, a stream like streams
 * already measured on the scheduler (same codec, size, format, threading)
 * that would not fit by their load is decided at once: it never takes the
 * cores from the admitted streams during a window of its own.  Decided
 * once per stream (until stop): an admitted stream is never refused
 * later.  Stream lock held. */
static GstFlowReturn gst_df_dec_admit(GstDfDec *self)
{
    GST_OBJECT_LOCK(self);
    const GstDfDecAdmission mode = self->admission;
    const gdouble max_load = self->max_load;
    const guint window = self->admission_frames;
    GST_OBJECT_UNLOCK(self);
    if (mode == GST_DF_DEC_ADMISSION_NONE) {
        gst_df_dec_set_admitted(self);
        return GST_FLOW_OK;
    }
    DfDecoderLoad ld;
    df_decoder_load(self->dec, &ld);
    guint64 need = window;
    if (!need) {
        /* About one second of frames, and enough that the first frames
         * (codec open, first pictures) have left the 16-frame average. */
        need = ld.fps > 0 ? (guint64)(ld.fps + 0.5) : 0;
        if (need < ADMISSION_MIN_FRAMES)
            need = ADMISSION_MIN_FRAMES;
    }
    const double limit = max_load * ld.sched.capacity;
    double own = ld.cores;
    const char *basis = "measured";
    if (ld.frames < need && !self->fell_behind) {
        if (!(ld.class_cores > 0 && ld.sched.admitted + ld.class_cores > limit))
            return GST_FLOW_OK;
        own = ld.class_cores;
        basis = "as the streams like it";
    }
    const double total = ld.sched.admitted + own;
    /* On probation the stream runs on what the admitted streams leave: if
     * that did not keep it on time, the cores do not carry it, whatever
     * its measure says (it may be too short yet). */
    const gboolean fits = total <= limit && !self->fell_behind;
    char detail[512];
    g_snprintf(detail, sizeof(detail),
               "this stream %.3f cores (%s; its own %.2f ms of worker time per frame at %.3g fps, "
               "over %" G_GUINT64_FORMAT
               " frames), %d admitted streams %.3f cores, capacity %.0f workers x max-load %.2f "
               "= %.2f cores%s",
               own, basis, ld.ns_per_frame / 1e6, ld.fps, ld.frames, ld.sched.n_admitted,
               ld.sched.admitted, ld.sched.capacity, max_load, limit,
               self->fell_behind ? "; it fell behind on the capacity the admitted streams leave"
                                 : "");
    if (fits) {
        GST_INFO_OBJECT(self, "admitted: %s", detail);
        gst_df_dec_set_admitted(self);
        return GST_FLOW_OK;
    }
    /* The reason, as the warning and the error say it. */
    const gboolean over = total > limit;
    char cores[128];
    g_snprintf(cores, sizeof(cores), "%.2f cores, the scheduler carries %.2f", total, limit);
    const char *behind = "the stream fell behind on the capacity the admitted streams leave";
    if (mode == GST_DF_DEC_ADMISSION_WARN) {
        GST_ELEMENT_WARNING(self, RESOURCE, BUSY,
                            ("Overload: %s%s; frames may be late",
                             over ? "the decoding streams need " : behind, over ? cores : ""),
                            ("%s; admission=refuse refuses such a stream", detail));
        gst_df_dec_set_admitted(self);
        return GST_FLOW_OK;
    }
    GST_ELEMENT_ERROR(
        self, RESOURCE, BUSY,
        ("Stream refused: %s%s", over ? "decoding it would need " : behind, over ? cores : ""),
        ("%s; admission=refuse", detail));
    self->refused = TRUE;
    /* Its work stops now: the admitted streams get the workers back. */
    gst_df_dec_close_decoder(self, TRUE);
    return GST_FLOW_ERROR;
}

/* A second: under that a stream that skips non-reference pictures often
 * catches up, and giving up a group of pictures (up to a few seconds of
 * frames) costs more than it saves (dfbench realtime --overload, 0.8 K*). */
#define QOS_GIVE_UP_NS ((GstClockTimeDiff)GST_SECOND)

/* QoS when skipping non-reference pictures is not enough: a stream whose
 * frames arrive later than a second (or twice its latency plus a frame,
 * if more) cannot catch up
 * by shedding output, since its reference pictures still decode.  It gives
 * up the rest of its group of pictures: the work in flight is cancelled
 * (df_decoder_flush, as on a seek), every pending frame and every frame up
 * to the next sync point is dropped undecoded (a QoS message each), and
 * decoding restarts cleanly there; the cores go to the streams that keep
 * up.  Until a picture of the restart is out the stream is not given up
 * again, so that a stream that stays late still shows its sync points.
 * True when `frame` was dropped (stream lock held). */
static gboolean gst_df_dec_qos_skip(GstDfDec *self, GstVideoCodecFrame *frame,
                                    GstClockTimeDiff late)
{
    GstVideoDecoder *vdec = GST_VIDEO_DECODER(self);
    const gboolean sync = GST_VIDEO_CODEC_FRAME_IS_SYNC_POINT(frame);
    if (self->qos_to_key) {
        if (!sync) {
            self->qos_skipped++;
            gst_video_decoder_drop_frame(vdec, frame);
            return TRUE;
        }
        GST_DEBUG_OBJECT(self, "QoS: decoding again from frame %u", frame->system_frame_number);
        self->qos_to_key = FALSE;
        self->qos_restart = TRUE;
        return FALSE;
    }
    const GstClockTime d = GST_CLOCK_TIME_IS_VALID(frame->duration) && frame->duration > 0
                               ? frame->duration
                               : 40 * GST_MSECOND;
    const gint64 held = self->latency_frames > 0 ? self->latency_frames : 0;
    const GstClockTimeDiff give_up = MAX((GstClockTimeDiff)(2 * (held + 1) * d), QOS_GIVE_UP_NS);
    if (sync || self->qos_restart || !self->admitted || late == G_MAXINT64 || late >= -give_up)
        return FALSE;
    GST_DEBUG_OBJECT(self, "QoS: %" GST_STIME_FORMAT " late, skipping to the next sync point",
                     GST_STIME_ARGS(-late));
    GST_VIDEO_DECODER_STREAM_UNLOCK(self);
    df_decoder_flush(self->dec);
    GST_VIDEO_DECODER_STREAM_LOCK(self);
    /* Every pending frame, this one too, goes as a QoS drop. */
    self->qos_cut = TRUE;
    gst_df_dec_release_rest(self);
    gst_video_codec_frame_unref(frame);
    self->qos_to_key = TRUE;
    self->qos_skipped++;
    return TRUE;
}

/* Whether the stream's own pictures take longer than it says it holds
 * them: packet in to picture ready (median so far) past the frames of
 * latency reported plus one.  A frame late on arrival is the cores'
 * doing only then; otherwise upstream made it late (a jitter buffer
 * waiting out lost packets, a slow network), and admission must not
 * take that for the capacity falling short. */
static gboolean gst_df_dec_held_too_long(GstDfDec *self, const GstVideoCodecFrame *frame)
{
    DfDecoderStats ds;
    df_decoder_stats(self->dec, &ds);
    const GstClockTime d = GST_CLOCK_TIME_IS_VALID(frame->duration) && frame->duration > 0
                               ? frame->duration
                               : 40 * GST_MSECOND;
    const gint64 held = self->latency_frames > 0 ? self->latency_frames : 0;
    return ds.latency_p50_ms * (double)GST_MSECOND > (double)((held + 1) * (gint64)d);
}

/* How much time `frame` has to be decoded before it is late (negative:
 * late already; G_MAXINT64: no QoS yet).  GstVideoDecoder's figure, or
 * the uncapped one of the last QoS event when that is later: from 1.26 on
 * the base class never projects more than a second (+ a frame) of
 * lateness, so a stream seconds behind would never reach the give-up
 * threshold of gst_df_dec_qos_skip. */
static GstClockTimeDiff gst_df_dec_late(GstDfDec *self, const GstVideoCodecFrame *frame)
{
    GST_OBJECT_LOCK(self);
    const gboolean valid = self->qos_valid;
    const gint64 earliest = self->qos_earliest;
    GST_OBJECT_UNLOCK(self);
    if (!valid)
        return G_MAXINT64;
    GstClockTimeDiff late =
        gst_video_decoder_get_max_decode_time(GST_VIDEO_DECODER(self), (GstVideoCodecFrame *)frame);
    if (earliest >= 0 && GST_CLOCK_TIME_IS_VALID(frame->deadline)) {
        const GstClockTimeDiff own = GST_CLOCK_DIFF((GstClockTime)earliest, frame->deadline);
        late = MIN(late, own);
    }
    return late;
}

static GstFlowReturn gst_df_dec_handle_frame(GstVideoDecoder *vdec, GstVideoCodecFrame *frame)
{
    GstDfDec *self = GST_DF_DEC(vdec);
    GstFlowReturn flow = GST_FLOW_OK;
    if (self->refused) {
        gst_video_decoder_drop_frame(vdec, frame);
        return GST_FLOW_ERROR;
    }
    if (!self->dec) {
        gst_video_decoder_drop_frame(vdec, frame);
        return GST_FLOW_NOT_NEGOTIATED;
    }
    if (self->drained) {
        GST_VIDEO_DECODER_STREAM_UNLOCK(self);
        df_decoder_flush(self->dec);
        GST_VIDEO_DECODER_STREAM_LOCK(self);
        self->drained = FALSE;
    }
    if (self->pts_is_dts && (!GST_CLOCK_TIME_IS_VALID(frame->pts) || frame->dts != frame->pts))
        self->pts_is_dts = FALSE;
    gst_df_dec_charge_thread(self);
    const GstClockTimeDiff late = gst_df_dec_late(self, frame);
    if (late < 0 && !self->admitted && gst_df_dec_held_too_long(self, frame))
        self->fell_behind = TRUE; /* admission decides at this frame */
    if (gst_df_dec_qos_skip(self, frame, late))
        return GST_FLOW_OK;

    GstMapInfo map;
    if (!gst_buffer_map(frame->input_buffer, &map, GST_MAP_READ)) {
        GST_ELEMENT_ERROR(self, STREAM, DECODE, ("Cannot map the input buffer"), (NULL));
        gst_video_decoder_drop_frame(vdec, frame);
        return GST_FLOW_ERROR;
    }
    /* libavcodec needs AV_INPUT_BUFFER_PADDING_SIZE zeroed bytes after the
     * data, which a GstBuffer does not promise: one copy of the compressed
     * bytes (small beside a picture). */
    int ret = av_new_packet(self->pkt, (int)map.size);
    if (ret < 0) {
        gst_buffer_unmap(frame->input_buffer, &map);
        gst_video_decoder_drop_frame(vdec, frame);
        return GST_FLOW_ERROR;
    }
    memcpy(self->pkt->data, map.data, map.size);
    gst_buffer_unmap(frame->input_buffer, &map);
    self->pkt->pts = GST_CLOCK_TIME_IS_VALID(frame->pts) ? (int64_t)frame->pts : AV_NOPTS_VALUE;
    self->pkt->dts = GST_CLOCK_TIME_IS_VALID(frame->dts) ? (int64_t)frame->dts : AV_NOPTS_VALUE;
    self->pkt->duration = GST_CLOCK_TIME_IS_VALID(frame->duration) ? (int64_t)frame->duration : 0;
    if (GST_VIDEO_CODEC_FRAME_IS_SYNC_POINT(frame))
        self->pkt->flags |= AV_PKT_FLAG_KEY;
    self->pkt->opaque = (void *)(intptr_t)(frame->system_frame_number + 1);
    /* QoS, as avdec: while late, packets decode without their
     * non-reference pictures; such a frame is reported dropped
     * (release_stale) when it yields no picture. */
    /* Not while admission measures the stream (nor the cancelling below,
     * whose decode skips non-reference pictures too): frames shed that way
     * cost less, and a stream measured while late (every stream, when too
     * many start together) came out cheaper than it is, so admission let
     * in more streams than the cores carry. */
    const gboolean skip = late < 0 && self->admitted;
    df_decoder_set_skip_nonref(self->dec, skip);
    if (skip)
        gst_video_codec_frame_set_user_data(frame, GINT_TO_POINTER(1), NULL);
    self->clock_segment = vdec->input_segment;
    GstClockTime pts = frame->pts;
    gst_video_codec_frame_unref(frame);

    self->packets++;
    for (;;) {
        GST_VIDEO_DECODER_STREAM_UNLOCK(self);
        ret = df_decoder_send_packet(self->dec, self->pkt);
        GST_VIDEO_DECODER_STREAM_LOCK(self);
        if (ret != AVERROR(EAGAIN))
            break;
        /* Full: wait until a slot is free, not until every packet in
         * flight is out.  Draining them all left the workers nothing to
         * decode from the end of the last one until this thread had woken
         * and sent the next packets (40-190 us, every other frame at two
         * in flight: HEVC 1080p, 2 workers). */
        flow = gst_df_dec_receive(self, GST_DF_DEC_RECEIVE_IN_TIME, NULL);
        if (flow != GST_FLOW_OK)
            goto done;
    }
    if (ret < 0) {
        char msg[AV_ERROR_MAX_STRING_SIZE];
        av_strerror(ret, msg, sizeof(msg));
        GST_ELEMENT_ERROR(self, STREAM, DECODE, ("Decoding failed"), ("%s", msg));
        flow = GST_FLOW_ERROR;
        goto done;
    }
    /* QoS: a frame already past its deadline means every queued frame up to
     * that stream time is late too; cancel their output before their bands
     * run (their D tasks still decode, the codec state must advance). */
    if (late < 0 && self->admitted && GST_CLOCK_TIME_IS_VALID(pts)) {
        int n = df_decoder_drop_late(self->dec, (int64_t)pts - late);
        if (n > 0) {
            GST_DEBUG_OBJECT(self, "QoS: %" GST_STIME_FORMAT " late, cancelled %d frames",
                             GST_STIME_ARGS(-late), n);
            self->qos_cut = TRUE;
        }
    }
    /* Push what is ready.  Under a latency budget (live pipelines) also
     * wait for what would otherwise be held longer than the latency
     * reported: the next packet may be a frame period away, and only the
     * streaming thread pushes.  Without one, waiting here would only put a
     * futex sleep and wake on every frame's path: the next packet comes
     * as soon as upstream has parsed it, and nobody reads the latency. */
    flow = gst_df_dec_receive(
        self, self->delay_bounded ? GST_DF_DEC_RECEIVE_IN_TIME : GST_DF_DEC_RECEIVE_READY, NULL);
    if (flow == GST_FLOW_OK && !self->admitted)
        flow = gst_df_dec_admit(self);
done:
    av_packet_unref(self->pkt);
    return flow;
}

static GstFlowReturn gst_df_dec_finish(GstVideoDecoder *vdec)
{
    GstDfDec *self = GST_DF_DEC(vdec);
    GST_DEBUG_OBJECT(self, "draining at EOS");
    return gst_df_dec_drain_all(self);
}

static GstFlowReturn gst_df_dec_drain(GstVideoDecoder *vdec)
{
    return gst_df_dec_finish(vdec);
}

static gboolean gst_df_dec_flush(GstVideoDecoder *vdec)
{
    GstDfDec *self = GST_DF_DEC(vdec);
    GST_DEBUG_OBJECT(self, "flush");
    if (self->dec) {
        GST_VIDEO_DECODER_STREAM_UNLOCK(self);
        df_decoder_flush(self->dec);
        GST_VIDEO_DECODER_STREAM_LOCK(self);
    }
    self->drained = FALSE;
    self->qos_cut = FALSE;
    self->qos_to_key = self->qos_restart = FALSE;
    self->charge_valid = FALSE;
    gst_df_dec_qos_forget(self);
    return TRUE;
}

static gboolean gst_df_dec_sink_event(GstVideoDecoder *vdec, GstEvent *event)
{
    if (GST_EVENT_TYPE(event) == GST_EVENT_SEGMENT ||
        GST_EVENT_TYPE(event) == GST_EVENT_STREAM_START)
        gst_df_dec_qos_forget(GST_DF_DEC(vdec));
    return GST_VIDEO_DECODER_CLASS(gst_df_dec_parent_class)->sink_event(vdec, event);
}

/* How far past the latest pushed buffer's running time a QoS event may
 * be and still be about it (rounding, a sink's jitter). */
#define QOS_SLACK_NS ((gint64)GST_SECOND / 2)

/* The pipeline latency comes upstream from the sinks in a LATENCY event
 * (GstBaseSink forwards it when it syncs on a live pipeline's latency). */
static gboolean gst_df_dec_src_event(GstVideoDecoder *vdec, GstEvent *event)
{
    GstDfDec *self = GST_DF_DEC(vdec);
    if (GST_EVENT_TYPE(event) == GST_EVENT_LATENCY) {
        GstClockTime latency = 0;
        gst_event_parse_latency(event, &latency);
        if (!GST_CLOCK_TIME_IS_VALID(latency) || latency > (GstClockTime)G_MAXINT64 / 2)
            latency = 0;
        GST_DEBUG_OBJECT(self, "pipeline latency %" GST_TIME_FORMAT, GST_TIME_ARGS(latency));
        atomic_store_explicit(&self->pipeline_latency, (gint64)latency, memory_order_relaxed);
    } else if (GST_EVENT_TYPE(event) == GST_EVENT_QOS) {
        GstClockTimeDiff diff = 0;
        GstClockTime ts = GST_CLOCK_TIME_NONE;
        gst_event_parse_qos(event, NULL, NULL, &diff, &ts);
        /* GstVideoDecoder 1.22's projection, 2 x the lateness ahead;
         * 1.26 caps it at a second, which hides how far behind a
         * stream is from the give-up rule (gst_df_dec_late). */
        const gint64 earliest = !GST_CLOCK_TIME_IS_VALID(ts) ? -1
                                : diff > 0                   ? (gint64)ts + 2 * diff
                                : (gint64)ts + diff >= 0     ? (gint64)ts + diff
                                                             : 0;
        GST_OBJECT_LOCK(self);
        const gboolean stale =
            self->qos_pushed == 0 || (GST_CLOCK_TIME_IS_VALID(ts) && self->out_running_time >= 0 &&
                                      (gint64)ts > self->out_running_time + QOS_SLACK_NS);
        if (!stale) {
            self->qos_valid = TRUE;
            self->qos_earliest = earliest;
        }
        GST_OBJECT_UNLOCK(self);
        if (stale) {
            /* Not about this segment's buffers: upstream may still use
             * it, GstVideoDecoder's earliest time must not. */
            GST_DEBUG_OBJECT(self,
                             "QoS at %" GST_TIME_FORMAT " is not about a buffer pushed "
                             "in this segment: ignored",
                             GST_TIME_ARGS(ts));
            return gst_pad_push_event(GST_VIDEO_DECODER_SINK_PAD(vdec), event);
        }
    }
    return GST_VIDEO_DECODER_CLASS(gst_df_dec_parent_class)->src_event(vdec, event);
}

/* Fewer buffers than this in downstream's pool and it may hold them all
 * while the decoder needs one more (gst-libav's REQUIRED_POOL_MAX_BUFFERS). */
#define MIN_POOL_MAX 32

/* A downstream pool that cannot grow (a sink's fixed set, v4l2sink's) is
 * replaced by a video pool without a limit, as avdec does: pictures copied
 * out (no GstVideoMeta, a filter, a band copy) would wait for a buffer
 * downstream keeps, and the stream stalls. */
static void gst_df_dec_use_pool_that_grows(GstDfDec *self, GstQuery *query)
{
    GstBufferPool *pool = NULL;
    guint size = 0, min = 0, max = 0;
    if (gst_query_get_n_allocation_pools(query) == 0)
        return;
    gst_query_parse_nth_allocation_pool(query, 0, &pool, &size, &min, &max);
    if (!pool || max == 0 || max >= MIN_POOL_MAX) {
        g_clear_object(&pool);
        return;
    }
    GST_DEBUG_OBJECT(self, "downstream's pool holds at most %u buffers: using one that grows", max);
    GstStructure *old = gst_buffer_pool_get_config(pool);
    GstCaps *caps = NULL;
    GstAllocator *allocator = NULL;
    GstAllocationParams params;
    gst_buffer_pool_config_get_params(old, &caps, NULL, NULL, NULL);
    gst_buffer_pool_config_get_allocator(old, &allocator, &params);
    GstBufferPool *grows = gst_video_buffer_pool_new();
    GstStructure *config = gst_buffer_pool_get_config(grows);
    gst_buffer_pool_config_set_params(config, caps, size, min, 0);
    /* Not downstream's allocator: it may be what sets the limit (avdec
     * drops it too). */
    gst_buffer_pool_config_set_allocator(config, NULL, &params);
    if (gst_buffer_pool_config_has_option(old, GST_BUFFER_POOL_OPTION_VIDEO_META))
        gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
    gst_structure_free(old);
    if (gst_buffer_pool_set_config(grows, config))
        gst_query_set_nth_allocation_pool(query, 0, grows, size, min, 0);
    else
        GST_WARNING_OBJECT(self, "a pool that grows refused the configuration: keeping "
                                 "downstream's");
    gst_object_unref(grows);
    gst_object_unref(pool);
}

static gboolean gst_df_dec_decide_allocation(GstVideoDecoder *vdec, GstQuery *query)
{
    GstDfDec *self = GST_DF_DEC(vdec);
    if (!GST_VIDEO_DECODER_CLASS(gst_df_dec_parent_class)->decide_allocation(vdec, query))
        return FALSE;
    gst_df_dec_use_pool_that_grows(self, query);
    gboolean meta = gst_query_find_allocation_meta(query, GST_VIDEO_META_API_TYPE, NULL);
    gboolean crop = gst_query_find_allocation_meta(query, GST_VIDEO_CROP_META_API_TYPE, NULL);
    GST_OBJECT_LOCK(self);
    gboolean filter = self->filter != NULL;
    GST_OBJECT_UNLOCK(self);
    /* Pictures decoded into a padded pool are only readable downstream
     * through GstVideoMeta; otherwise they are copied into its buffers. */
    GST_DEBUG_OBJECT(self, "direct rendering %s%s", meta && !filter ? "on" : "off (copy)",
                     meta && !filter && crop ? ", crop meta" : "");
    gst_df_dec_dr_reset(self, meta && !filter, crop);
    return TRUE;
}

/* ---- GObject ----------------------------------------------------------- */

static void gst_df_dec_set_property(GObject *object, guint prop_id, const GValue *value,
                                    GParamSpec *pspec)
{
    GstDfDec *self = GST_DF_DEC(object);
    GstState state;
    GST_OBJECT_LOCK(self);
    state = GST_STATE(self);
    /* Scheduler and decoder settings take effect at the next stream; the
     * filter is checked when going to PAUSED. */
    if (state > GST_STATE_READY && prop_id != PROP_TRACE_FILE)
        GST_WARNING_OBJECT(self, "property %s takes effect at the next stream", pspec->name);
    switch (prop_id) {
    case PROP_N_WORKERS:
        self->n_workers = g_value_get_int(value);
        break;
    case PROP_POLICY:
        self->policy = g_value_get_enum(value);
        break;
    case PROP_THREADING:
        self->threading = g_value_get_enum(value);
        break;
    case PROP_POLL_US:
        self->poll_us = g_value_get_int(value);
        break;
    case PROP_FILTER:
        g_free(self->filter);
        self->filter = g_value_dup_string(value);
        if (self->filter && !*self->filter)
            g_clear_pointer(&self->filter, g_free);
        break;
    case PROP_TRACE_FILE:
        g_free(self->trace_file);
        self->trace_file = g_value_dup_string(value);
        if (self->trace_file && !*self->trace_file)
            g_clear_pointer(&self->trace_file, g_free);
        break;
    case PROP_SHARED_SCHEDULER:
        self->shared_scheduler = g_value_get_boolean(value);
        break;
    case PROP_MAX_FRAME_DELAY:
        self->max_frame_delay = g_value_get_int(value);
        break;
    case PROP_ADMISSION:
        self->admission = g_value_get_enum(value);
        break;
    case PROP_MAX_LOAD:
        self->max_load = g_value_get_double(value);
        break;
    case PROP_ADMISSION_FRAMES:
        self->admission_frames = g_value_get_uint(value);
        break;
    default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
        break;
    }
    GST_OBJECT_UNLOCK(self);
}

static void gst_df_dec_get_property(GObject *object, guint prop_id, GValue *value,
                                    GParamSpec *pspec)
{
    GstDfDec *self = GST_DF_DEC(object);
    GST_OBJECT_LOCK(self);
    switch (prop_id) {
    case PROP_N_WORKERS:
        g_value_set_int(value, self->n_workers);
        break;
    case PROP_POLICY:
        g_value_set_enum(value, self->policy);
        break;
    case PROP_THREADING:
        g_value_set_enum(value, self->threading);
        break;
    case PROP_POLL_US:
        g_value_set_int(value, self->poll_us);
        break;
    case PROP_FILTER:
        g_value_set_string(value, self->filter);
        break;
    case PROP_TRACE_FILE:
        g_value_set_string(value, self->trace_file);
        break;
    case PROP_SHARED_SCHEDULER:
        g_value_set_boolean(value, self->shared_scheduler);
        break;
    case PROP_MAX_FRAME_DELAY:
        g_value_set_int(value, self->max_frame_delay);
        break;
    case PROP_ADMISSION:
        g_value_set_enum(value, self->admission);
        break;
    case PROP_MAX_LOAD:
        g_value_set_double(value, self->max_load);
        break;
    case PROP_ADMISSION_FRAMES:
        g_value_set_uint(value, self->admission_frames);
        break;
    case PROP_STATS: {
        /* Not under the object lock: the streaming thread takes that one
         * while it holds the stream lock. */
        GST_OBJECT_UNLOCK(self);
        GST_VIDEO_DECODER_STREAM_LOCK(self);
        DfDecoderStats ds = {0};
        if (self->dec)
            df_decoder_stats(self->dec, &ds);
        GstStructure *st = gst_structure_new(
            "application/x-dfdec-stats", "packets", G_TYPE_UINT64, self->packets, "qos-skipped",
            G_TYPE_UINT64, self->qos_skipped, "pictures-skipped", G_TYPE_UINT64,
            (guint64)ds.frames_skipped, "frames-direct", G_TYPE_UINT64, self->dr_frames,
            "frames-banded", G_TYPE_UINT64, self->band_frames, "frames-copied", G_TYPE_UINT64,
            self->copied_frames, NULL);
        GST_VIDEO_DECODER_STREAM_UNLOCK(self);
        GST_OBJECT_LOCK(self);
        g_value_take_boxed(value, st);
        break;
    }
    default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
        break;
    }
    GST_OBJECT_UNLOCK(self);
}

static void gst_df_dec_finalize(GObject *object)
{
    GstDfDec *self = GST_DF_DEC(object);
    g_free(self->filter);
    g_free(self->trace_file);
    g_hash_table_destroy(self->dr_live);
    pthread_mutex_destroy(&self->dr_lock);
    G_OBJECT_CLASS(gst_df_dec_parent_class)->finalize(object);
}

static void gst_df_dec_class_init(GstDfDecClass *klass)
{
    GObjectClass *gobject_class = G_OBJECT_CLASS(klass);
    GstElementClass *element_class = GST_ELEMENT_CLASS(klass);
    GstVideoDecoderClass *vdec_class = GST_VIDEO_DECODER_CLASS(klass);

    gst_df_dec_install_log();
    dr_meta_quark = g_quark_from_static_string("GstDfDecMetaOrig");
    gobject_class->set_property = gst_df_dec_set_property;
    gobject_class->get_property = gst_df_dec_get_property;
    gobject_class->finalize = gst_df_dec_finalize;

    const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS;
    /* Settings that take effect at the next stream (set_property warns
     * when they change later): gst-inspect-1.0 says "changeable only in
     * NULL or READY state", as GStreamer's elements mark theirs. */
    const GParamFlags rw_ready = rw | GST_PARAM_MUTABLE_READY;
    g_object_class_install_property(
        gobject_class, PROP_N_WORKERS,
        g_param_spec_int("n-workers", "Workers",
                         "Scheduler worker threads, one pinned per core (0 = every core of the "
                         "process's CPU set)",
                         0, MAX_WORKERS, DEFAULT_N_WORKERS, rw_ready));
    g_object_class_install_property(
        gobject_class, PROP_POLICY,
        g_param_spec_enum("policy", "Policy", "Placement policy of the dfsched scheduler",
                          GST_TYPE_DF_DEC_POLICY, DEFAULT_POLICY, rw_ready));
    g_object_class_install_property(
        gobject_class, PROP_THREADING,
        g_param_spec_enum("threading", "Threading",
                          "How libavcodec's parallelism is used: slice jobs as scheduler tasks, "
                          "or libavcodec's frame threads",
                          GST_TYPE_DF_DEC_THREADING, DEFAULT_THREADING, rw_ready));
    g_object_class_install_property(
        gobject_class, PROP_POLL_US,
        g_param_spec_int("poll-us", "Poll time",
                         "Microseconds an idle worker spins before it parks (-1 = poll mode, "
                         "never park)",
                         -1, 10000000, DEFAULT_POLL_US, rw_ready));
    g_object_class_install_property(
        gobject_class, PROP_FILTER,
        g_param_spec_string("filter", "Filter",
                            "libavfilter graph run on the decoded pictures as band tasks "
                            "(e.g. \"yadif\"); checked when going to PAUSED",
                            NULL, rw_ready));
    g_object_class_install_property(
        gobject_class, PROP_TRACE_FILE,
        g_param_spec_string("trace-file", "Trace file",
                            "Write the scheduler's task trace (Chrome/Perfetto JSON) to this "
                            "file when the element stops; implies a scheduler of its own",
                            NULL, rw));
    g_object_class_install_property(
        gobject_class, PROP_SHARED_SCHEDULER,
        g_param_spec_boolean("shared-scheduler", "Shared scheduler",
                             "Share one scheduler (one worker per core) with every dfdec of the "
                             "process; its settings are those of the first one",
                             DEFAULT_SHARED_SCHEDULER, rw_ready));
    g_object_class_install_property(
        gobject_class, PROP_MAX_FRAME_DELAY,
        g_param_spec_int("max-frame-delay", "Max frame delay",
                         "Frames of latency dfdec may add beyond the stream's reorder delay, "
                         "for frame threads and frames in flight (-1 = automatic: 0 in live "
                         "pipelines, else as fast as possible)",
                         -1, MAX_FRAME_DELAY, DEFAULT_MAX_FRAME_DELAY, rw_ready));
    g_object_class_install_property(
        gobject_class, PROP_ADMISSION,
        g_param_spec_enum("admission", "Admission",
                          "What to do when, after the stream's first frames, the measured load "
                          "of the admitted streams plus this one exceeds max-load of the "
                          "scheduler's capacity",
                          GST_TYPE_DF_DEC_ADMISSION, DEFAULT_ADMISSION, rw_ready));
    g_object_class_install_property(
        gobject_class, PROP_MAX_LOAD,
        g_param_spec_double("max-load", "Max load",
                            "Share of the scheduler's capacity (its workers) that the streams "
                            "admitted on it may use together, as measured (0.9: 10 % headroom)",
                            0.0, 16.0, DEFAULT_MAX_LOAD, rw_ready));
    g_object_class_install_property(
        gobject_class, PROP_ADMISSION_FRAMES,
        g_param_spec_uint(
            "admission-frames", "Admission frames",
            "Frames measured before admission decides (0 = about one second of frames, at "
            "least 32); a stream like streams already measured on the scheduler that would "
            "not fit by their load is decided at once",
            0, 100000, DEFAULT_ADMISSION_FRAMES, rw_ready));
    g_object_class_install_property(
        gobject_class, PROP_STATS,
        g_param_spec_boxed("stats", "Statistics",
                           "Since the element started: packets sent to the decoder, frames QoS "
                           "dropped without decoding them (qos-skipped), non-reference pictures "
                           "QoS skipped in the packets decoded (pictures-skipped, since the "
                           "decoder opened), and pictures rendered directly, copied by bands or "
                           "copied on the streaming thread",
                           GST_TYPE_STRUCTURE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

    GstCaps *sink_caps = gst_df_dec_codecs_sink_caps();
    gst_element_class_add_pad_template(
        element_class, gst_pad_template_new("sink", GST_PAD_SINK, GST_PAD_ALWAYS, sink_caps));
    gst_caps_unref(sink_caps);
    gst_element_class_add_static_pad_template(element_class, &src_template);
    gst_element_class_set_static_metadata(
        element_class, "dfmedia video decoder", "Codec/Decoder/Video",
        "Decodes H.264, HEVC and MPEG-1/2 video with libavcodec, its slice jobs, filter and "
        "reconstruction bands run as dataflow tasks on pinned workers",
        "dfmedia developers");

    vdec_class->start = GST_DEBUG_FUNCPTR(gst_df_dec_start);
    vdec_class->stop = GST_DEBUG_FUNCPTR(gst_df_dec_stop);
    vdec_class->set_format = GST_DEBUG_FUNCPTR(gst_df_dec_set_format);
    vdec_class->handle_frame = GST_DEBUG_FUNCPTR(gst_df_dec_handle_frame);
    vdec_class->finish = GST_DEBUG_FUNCPTR(gst_df_dec_finish);
    vdec_class->drain = GST_DEBUG_FUNCPTR(gst_df_dec_drain);
    vdec_class->flush = GST_DEBUG_FUNCPTR(gst_df_dec_flush);
    vdec_class->decide_allocation = GST_DEBUG_FUNCPTR(gst_df_dec_decide_allocation);
    vdec_class->src_event = GST_DEBUG_FUNCPTR(gst_df_dec_src_event);
    vdec_class->sink_event = GST_DEBUG_FUNCPTR(gst_df_dec_sink_event);

    gst_type_mark_as_plugin_api(GST_TYPE_DF_DEC_POLICY, 0);
    gst_type_mark_as_plugin_api(GST_TYPE_DF_DEC_THREADING, 0);
    gst_type_mark_as_plugin_api(GST_TYPE_DF_DEC_ADMISSION, 0);
}

static void gst_df_dec_init(GstDfDec *self)
{
    self->n_workers = DEFAULT_N_WORKERS;
    self->policy = DEFAULT_POLICY;
    self->threading = DEFAULT_THREADING;
    self->poll_us = DEFAULT_POLL_US;
    self->shared_scheduler = DEFAULT_SHARED_SCHEDULER;
    self->max_frame_delay = DEFAULT_MAX_FRAME_DELAY;
    self->admission = DEFAULT_ADMISSION;
    self->max_load = DEFAULT_MAX_LOAD;
    self->admission_frames = DEFAULT_ADMISSION_FRAMES;
    self->out_format = -1;
    self->latency_frames = -1;
    /* No direct rendering before a first output has negotiated: a GAP
     * event before any picture negotiates default caps and an allocation
     * that allows it, and 0 is AV_PIX_FMT_YUV420P. */
    self->dr_format = AV_PIX_FMT_NONE;
    gst_segment_init(&self->clock_segment, GST_FORMAT_UNDEFINED);
    atomic_init(&self->pipeline_latency, 0);
    self->qos_earliest = self->out_running_time = -1;
    pthread_mutex_init(&self->dr_lock, NULL);
    self->dr_live = g_hash_table_new(NULL, NULL);
    gst_video_decoder_set_packetized(GST_VIDEO_DECODER(self), TRUE);
    gst_video_decoder_set_use_default_pad_acceptcaps(GST_VIDEO_DECODER_CAST(self), TRUE);
    GST_PAD_SET_ACCEPT_TEMPLATE(GST_VIDEO_DECODER_SINK_PAD(self));
}
