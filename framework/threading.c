/* How libavcodec runs: slice jobs as tasks, its own frame threads, or one
 * thread.  `auto` looks at the stream before the codec is opened, because
 * libavcodec 5.1 cannot combine slice and frame threading and cannot switch
 * once opened:
 *  - H.264 gives parallel jobs only with several slices per picture (a slice
 *    with first_mb_in_slice > 0 in the first picture);
 *  - HEVC only with WPP (entropy_coding_sync_enabled_flag) and without tiles
 *    (with tiles libavcodec 5.1 sets threads_number = 1);
 *  - MPEG-1/2 always (row bands);
 * anything else falls back to frame threading, which is opaque to the
 * scheduler and adds frame_threads - 1 frames of delay. */
#include "media_internal.h"

#include <string.h>

static const char *const names[] = {"auto", "slice", "frame", "none"};

const char *df_threading_name(DfThreading t)
{
    return t >= DF_THREADING_AUTO && t <= DF_THREADING_NONE ? names[t] : "?";
}

int df_threading_parse(const char *name, DfThreading *out)
{
    for (int i = 0; i <= DF_THREADING_NONE; i++)
        if (name && strcmp(name, names[i]) == 0) {
            *out = (DfThreading)i;
            return 0;
        }
    return AVERROR(EINVAL);
}

/* ------------------------------------------------------ RBSP bit reader */

typedef struct Bits {
    uint8_t buf[96]; /* enough for a slice header start or a PPS prefix */
    int n, pos;
} Bits;

/* Copy the start of a NAL payload, dropping emulation prevention bytes. */
static void bits_init(Bits *b, const uint8_t *p, int len)
{
    int zeros = 0;
    b->n = b->pos = 0;
    for (int i = 0; i < len && b->n < (int)sizeof(b->buf); i++) {
        if (zeros >= 2 && p[i] == 3) {
            zeros = 0;
            continue;
        }
        zeros = p[i] == 0 ? zeros + 1 : 0;
        b->buf[b->n++] = p[i];
    }
}

static int bit(Bits *b)
{
    if (b->pos >= b->n * 8)
        return -1;
    int v = (b->buf[b->pos >> 3] >> (7 - (b->pos & 7))) & 1;
    b->pos++;
    return v;
}

static int bits(Bits *b, int n, unsigned *v)
{
    *v = 0;
    for (int i = 0; i < n; i++) {
        int x = bit(b);
        if (x < 0)
            return -1;
        *v = *v << 1 | (unsigned)x;
    }
    return 0;
}

static int ue(Bits *b, unsigned *v)
{
    int lz = 0;
    for (;;) {
        int x = bit(b);
        if (x < 0 || lz > 31)
            return -1;
        if (x)
            break;
        lz++;
    }
    unsigned rest;
    if (bits(b, lz, &rest) < 0)
        return -1;
    *v = (1u << lz) - 1 + rest;
    return 0;
}

static int se(Bits *b)
{
    unsigned v;
    return ue(b, &v);
}

/* ----------------------------------------------------------- NAL walks */

typedef void (*NalFn)(DfProbe *p, enum AVCodecID id, const uint8_t *nal, int len);

static void walk_annexb(DfProbe *p, enum AVCodecID id, const uint8_t *d, int size, NalFn fn)
{
    int i = 0, start = -1;
    while (i + 3 <= size) {
        if (d[i] == 0 && d[i + 1] == 0 && d[i + 2] == 1) {
            if (start >= 0) {
                int end = i;
                while (end > start && d[end - 1] == 0)
                    end--;
                fn(p, id, d + start, end - start);
            }
            i += 3;
            start = i;
        } else {
            i++;
        }
    }
    if (start >= 0 && start < size)
        fn(p, id, d + start, size - start);
}

static void walk_lengths(DfProbe *p, enum AVCodecID id, const uint8_t *d, int size, int nls,
                         NalFn fn)
{
    int i = 0;
    while (i + nls <= size) {
        uint32_t len = 0;
        for (int k = 0; k < nls; k++)
            len = len << 8 | d[i + k];
        i += nls;
        if (len > (uint32_t)(size - i))
            break;
        fn(p, id, d + i, (int)len);
        i += (int)len;
    }
}

static void h264_nal(DfProbe *p, enum AVCodecID id, const uint8_t *nal, int len)
{
    if (len < 2)
        return;
    int type = nal[0] & 0x1f;
    if (type < 1 || type > 5)
        return;
    Bits b;
    bits_init(&b, nal + 1, len - 1);
    unsigned first_mb;
    if (ue(&b, &first_mb) < 0)
        return;
    p->vcl_seen = 1;
    if (first_mb > 0)
        p->multi_slice = 1;
}

static void hevc_pps(DfProbe *p, const uint8_t *nal, int len)
{
    Bits b;
    unsigned v;
    bits_init(&b, nal + 2, len - 2);
    /* H.265 7.3.2.3.1 up to entropy_coding_sync_enabled_flag. */
    if (ue(&b, &v) < 0 || ue(&b, &v) < 0)
        return;
    if (bits(&b, 1 + 1 + 3 + 1 + 1, &v) < 0)
        return;
    if (ue(&b, &v) < 0 || ue(&b, &v) < 0 || se(&b) < 0)
        return;
    unsigned cu_qp_delta;
    if (bits(&b, 2, &v) < 0 || bits(&b, 1, &cu_qp_delta) < 0)
        return;
    if (cu_qp_delta && ue(&b, &v) < 0)
        return;
    if (se(&b) < 0 || se(&b) < 0)
        return;
    unsigned tiles, wpp;
    if (bits(&b, 4, &v) < 0 || bits(&b, 1, &tiles) < 0 || bits(&b, 1, &wpp) < 0)
        return;
    p->pps_seen = 1;
    p->tiles |= (int)tiles;
    p->wpp |= (int)wpp;
}

static void hevc_nal(DfProbe *p, enum AVCodecID id, const uint8_t *nal, int len)
{
    if (len < 3)
        return;
    int type = (nal[0] >> 1) & 0x3f;
    if (type == 34)
        hevc_pps(p, nal, len);
    else if (type <= 21)
        p->vcl_seen = 1;
}

static NalFn nal_fn(enum AVCodecID id)
{
    return id == AV_CODEC_ID_H264 ? h264_nal : id == AV_CODEC_ID_HEVC ? hevc_nal : NULL;
}

/* hvcC: 22 bytes of header, then arrays of NAL units with 16-bit lengths. */
static void walk_hvcc(DfProbe *p, const uint8_t *d, int size)
{
    if (size < 23)
        return;
    p->nal_length_size = (d[21] & 3) + 1;
    int n_arrays = d[22], i = 23;
    for (int a = 0; a < n_arrays && i + 3 <= size; a++) {
        int n = d[i + 1] << 8 | d[i + 2];
        i += 3;
        for (int k = 0; k < n && i + 2 <= size; k++) {
            int len = d[i] << 8 | d[i + 1];
            i += 2;
            if (len > size - i)
                return;
            hevc_nal(p, AV_CODEC_ID_HEVC, d + i, len);
            i += len;
        }
    }
}

static int probe_done(const DfProbe *p, enum AVCodecID id)
{
    if (id == AV_CODEC_ID_H264)
        return p->vcl_seen;
    if (id == AV_CODEC_ID_HEVC)
        return p->pps_seen && p->vcl_seen;
    return 1;
}

int df_threading_probe_init(DfProbe *p, const AVCodecParameters *par)
{
    memset(p, 0, sizeof(*p));
    const uint8_t *x = par->extradata;
    int n = par->extradata_size;
    if (par->codec_id == AV_CODEC_ID_H264 && x && n >= 7 && x[0] == 1) {
        p->nal_length_size = (x[4] & 3) + 1; /* avcC: slices are only in packets */
    } else if (par->codec_id == AV_CODEC_ID_HEVC && x && n >= 23 && x[0] == 1) {
        walk_hvcc(p, x, n);
    } else if (x && n > 0 && nal_fn(par->codec_id)) {
        walk_annexb(p, par->codec_id, x, n, nal_fn(par->codec_id));
    }
    return probe_done(p, par->codec_id);
}

int df_threading_probe_packet(DfProbe *p, const AVCodecParameters *par, const AVPacket *pkt)
{
    NalFn fn = nal_fn(par->codec_id);
    p->packets++;
    if (fn && pkt && pkt->size > 0) {
        if (p->nal_length_size)
            walk_lengths(p, par->codec_id, pkt->data, pkt->size, p->nal_length_size, fn);
        else
            walk_annexb(p, par->codec_id, pkt->data, pkt->size, fn);
    }
    return probe_done(p, par->codec_id);
}

/* ------------------------------------------------------------- planning */

static void plan_frame(DfThreadPlan *pl, const DfDecoderConfig *cfg, const AVCodec *codec,
                       int n_workers, const char *why)
{
    int n = cfg->frame_threads > 0 ? cfg->frame_threads : n_workers;
    if (!(codec->capabilities & AV_CODEC_CAP_FRAME_THREADS) || n <= 1) {
        pl->mode = DF_THREADING_NONE;
        pl->thread_count = 1;
        pl->thread_type = 0;
        snprintf(pl->reason, sizeof(pl->reason), "%s; %s", why,
                 n > 1               ? "no frame threading in this codec: single-threaded decode"
                 : cfg->frame_threads ? "one frame thread (frame_threads, latency budget): "
                                        "single-threaded decode"
                                      : "one worker: single-threaded decode");
        return;
    }
    pl->mode = DF_THREADING_FRAME;
    pl->thread_count = n;
    pl->thread_type = FF_THREAD_FRAME;
    snprintf(pl->reason, sizeof(pl->reason),
             "%s; libavcodec frame threading with %d threads (%d frame%s more delay)", why, n,
             n - 1, n == 2 ? "" : "s");
}

/* thread_count costs threads: libavcodec opens a slice-thread pool of
 * thread_count - 1 threads per decoder, which never runs a job (the hooks
 * take every execute call).  So it is the smallest count whose execute
 * calls still give every worker a job:
 *
 * H.264 queues a picture's slices into thread_count slice contexts and
 * calls execute each time they are full, so thread_count = workers: calls
 * as wide as the workers can run at once (an 8-slice picture on 2 workers:
 * 4 calls of 2 jobs).  One call per picture (thread_count >= slices, 16 as
 * before) added 15 idle threads per stream; at 2 workers the 1080p 8-slice
 * decode was no slower with 2 (dfbench decode, loaded machine: 104 against
 * 93 fps, medians of 5).  A WPP row started beyond the workers' count just
 * blocks in pthread_cond_wait, so HEVC has the same rule.
 *
 * MPEG-2 is the exception: thread_count is its band count, one call per
 * picture, and the bands are the load balance.  They are cut by picture
 * height, ~4 macroblock rows each, at most 16, and at least 2 per worker
 * on bigger machines: libavcodec cuts the rows evenly, not the work, and
 * in a real picture one band can cost three times another, so 2 bands per
 * worker (as before) left one worker with the expensive band and
 * cost-local settled into whichever split the first picture happened to
 * get (1000 to 1470 fps at 2 workers from run to run).  Cut by height,
 * the graph is also the same at 1 and 2 workers, so a 1-worker trace
 * projects the 2-worker run.  libavcodec's mpegvideo
 * keeps at most MAX_THREADS (32) slice contexts and one per macroblock
 * row, and warns when asked for more. */
#define MPEG_MAX_SLICE_CONTEXTS 32
static int auto_thread_count(enum AVCodecID id, int n_workers, int height)
{
    if (id == AV_CODEC_ID_HEVC)
        return n_workers > 2 ? n_workers : 2;
    if (id == AV_CODEC_ID_MPEG1VIDEO || id == AV_CODEC_ID_MPEG2VIDEO) {
        const int mb_rows = height > 0 ? (height + 15) / 16 : 0;
        int n = (mb_rows + 3) / 4;
        if (n > 16)
            n = 16;
        if (n < 2 * n_workers)
            n = 2 * n_workers;
        if (n > MPEG_MAX_SLICE_CONTEXTS)
            n = MPEG_MAX_SLICE_CONTEXTS;
        if (mb_rows > 0 && n > mb_rows)
            n = mb_rows;
        return n > 2 ? n : 2;
    }
    /* H.264, and the slices of any other codec */
    return n_workers < 2 ? 2 : n_workers > 16 ? 16 : n_workers;
}

static void plan_slice(DfThreadPlan *pl, const DfDecoderConfig *cfg, const AVCodecParameters *par,
                       int n_workers, const char *why)
{
    pl->mode = DF_THREADING_SLICE;
    pl->thread_count = cfg->thread_count > 1
                           ? cfg->thread_count
                           : auto_thread_count(par->codec_id, n_workers, par->height);
    pl->thread_type = FF_THREAD_SLICE;
    snprintf(pl->reason, sizeof(pl->reason), "%s; slice jobs run as tasks (thread_count %d)", why,
             pl->thread_count);
}

void df_threading_plan(const DfDecoderConfig *cfg, const AVCodecParameters *par,
                       const AVCodec *codec, const DfProbe *probe, int n_workers, DfThreadPlan *pl)
{
    memset(pl, 0, sizeof(*pl));
    const bool slices = codec->capabilities & AV_CODEC_CAP_SLICE_THREADS;
    switch (cfg->threading) {
    case DF_THREADING_NONE:
        pl->mode = DF_THREADING_NONE;
        pl->thread_count = 1;
        snprintf(pl->reason, sizeof(pl->reason), "requested: single-threaded decode");
        return;
    case DF_THREADING_FRAME:
        plan_frame(pl, cfg, codec, n_workers, "requested");
        return;
    case DF_THREADING_SLICE:
        if (!slices) {
            pl->mode = DF_THREADING_NONE;
            pl->thread_count = 1;
            snprintf(pl->reason, sizeof(pl->reason),
                     "slice threading requested but %s has none: single-threaded decode",
                     codec->name);
            return;
        }
        plan_slice(pl, cfg, par, n_workers, "requested");
        return;
    case DF_THREADING_AUTO:
    default:
        break;
    }
    char why[128];
    switch (par->codec_id) {
    case AV_CODEC_ID_H264:
        if (probe->multi_slice) {
            plan_slice(pl, cfg, par, n_workers, "H.264 with several slices per picture");
            return;
        }
        snprintf(why, sizeof(why), "%s",
                 probe->vcl_seen ? "single-slice H.264 gives no slice jobs"
                                 : "H.264 slice count unknown");
        plan_frame(pl, cfg, codec, n_workers, why);
        return;
    case AV_CODEC_ID_HEVC:
        if (probe->wpp && !probe->tiles) {
            plan_slice(pl, cfg, par, n_workers, "HEVC with WPP (one job per CTU row)");
            return;
        }
        snprintf(why, sizeof(why), "%s",
                 probe->tiles      ? "HEVC with tiles gives no parallel jobs in libavcodec 5.1"
                 : probe->pps_seen ? "HEVC without WPP gives no parallel jobs"
                                   : "HEVC PPS not seen");
        plan_frame(pl, cfg, codec, n_workers, why);
        return;
    case AV_CODEC_ID_MPEG1VIDEO:
    case AV_CODEC_ID_MPEG2VIDEO:
        plan_slice(pl, cfg, par, n_workers, "MPEG-1/2 row bands");
        return;
    default:
        if (codec->capabilities & AV_CODEC_CAP_FRAME_THREADS) {
            snprintf(why, sizeof(why), "%s: slice structure not inspected", codec->name);
            plan_frame(pl, cfg, codec, n_workers, why);
        } else if (slices) {
            plan_slice(pl, cfg, par, n_workers, codec->name);
        } else {
            pl->mode = DF_THREADING_NONE;
            pl->thread_count = 1;
            snprintf(pl->reason, sizeof(pl->reason), "%s has no threading", codec->name);
        }
        return;
    }
}
