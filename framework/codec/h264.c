/* H.264 (docs/codecs.md, "H.264"). */
#include "nal.h"

#include <stdio.h>

static void h264_nal(DfProbe *p, const uint8_t *nal, int len)
{
    if (len < 2)
        return;
    int type = nal[0] & 0x1f;
    if (type < 1 || type > 5)
        return;
    DfBits b;
    df_bits_init(&b, nal + 1, len - 1);
    unsigned first_mb;
    if (df_bits_ue(&b, &first_mb) < 0)
        return;
    p->vcl_seen = 1;
    p->slices++;
    if (first_mb > 0)
        p->multi_slice = 1;
}

static void h264_extradata(DfProbe *p, const uint8_t *x, int n)
{
    if (x && n >= 7 && x[0] == 1)
        p->nal_length_size = (x[4] & 3) + 1; /* avcC: slices are only in packets */
    else if (x && n > 0)
        df_nal_walk_annexb(p, x, n, h264_nal);
}

static bool h264_done(const DfProbe *p)
{
    return p->vcl_seen;
}

/* Parallel jobs only with several slices per picture. */
static bool h264_auto_slices(const DfProbe *p, char *why, size_t size)
{
    if (p->multi_slice) {
        snprintf(why, size, "H.264 with several slices per picture");
        return true;
    }
    snprintf(why, size, "%s",
             p->vcl_seen ? "single-slice H.264 gives no slice jobs" : "H.264 slice count unknown");
    return false;
}

/* libavcodec's H.264 decoder with more than one slice context postpones
 * the deblocking of the whole picture until the slice jobs have ended and
 * then runs it in the calling thread, D (h264_slice.c, postpone_filter),
 * whenever the stream filters across slice edges
 * (disable_deblocking_filter_idc 0, which x264 writes).  The few streams
 * that do not (idc 1 or 2) are taken as if they did: libavcodec does not
 * say, and the cost of the mistake is a placement, never a result. */
static bool h264_deblocks_in_d(const AVCodecContext *c)
{
    return c->skip_loop_filter < AVDISCARD_ALL && !(c->flags2 & AV_CODEC_FLAG2_FAST);
}

/* H.264 queues a picture's slices into thread_count slice contexts and
 * calls execute each time they are full, and between two calls D runs the
 * postponed deblocking alone.  So thread_count = the slices of a picture
 * (at least the workers, at most 16): one call per picture.  With
 * thread_count = workers an 8-slice 1080p picture on 2 workers ran as 4
 * calls of 2 jobs at 0.90-0.94x single-threaded libavcodec; with 8, one
 * call of 8 ran at 1.25-1.64x, with less CPU per frame (dfbench decode
 * --thread-count, quiet machine, 2026-12-05).  The price: libavcodec's
 * idle slice pool, thread_count - 1 threads per stream. */
static int h264_thread_count(const DfProbe *p, int n_workers, int height)
{
    int n = p && p->slices > n_workers ? p->slices : n_workers;
    return n < 2 ? 2 : n > 16 ? 16 : n;
}

static const enum AVCodecID ids[] = {AV_CODEC_ID_H264, AV_CODEC_ID_NONE};

const DfCodecOps df_codec_h264 = {
    .name = "H.264",
    .ids = ids,
    .probe_extradata = h264_extradata,
    .probe_nal = h264_nal,
    .probe_done = h264_done,
    .auto_slices = h264_auto_slices,
    .thread_count = h264_thread_count,
    .refs = DF_REFS_LAST_TWO,
    .deblocks_in_d = h264_deblocks_in_d,
};
