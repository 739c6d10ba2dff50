/* MPEG-1 and MPEG-2 video (docs/codecs.md, "MPEG-1/2"). */
#include "codec.h"

#include <stdio.h>

/* Always parallel: libavcodec cuts every picture into row bands. */
static bool mpeg12_auto_slices(const DfProbe *p, char *why, size_t size)
{
    snprintf(why, size, "MPEG-1/2 row bands");
    return true;
}

/* MPEG-2 is the exception to the thread_count rule (threading.c):
 * thread_count is its band count, one call per picture, and the bands are
 * the load balance.  They are cut by picture height, ~4 macroblock rows
 * each, at most 16, and at least 2 per worker on bigger machines:
 * libavcodec cuts the rows evenly, not the work, and in a real picture one
 * band can cost three times another, so 2 bands per worker (as before)
 * left one worker with the expensive band and cost-local settled into
 * whichever split the first picture happened to get (1000 to 1470 fps at
 * 2 workers from run to run).  Cut by height, the graph is also the same
 * at 1 and 2 workers, so a 1-worker trace projects the 2-worker run.
 * libavcodec's mpegvideo keeps at most MAX_THREADS (32) slice contexts and
 * one per macroblock row, and warns when asked for more. */
#define MPEG_MAX_SLICE_CONTEXTS 32
static int mpeg12_thread_count(const DfProbe *p, int n_workers, int height)
{
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

static const enum AVCodecID ids[] = {AV_CODEC_ID_MPEG1VIDEO, AV_CODEC_ID_MPEG2VIDEO,
                                     AV_CODEC_ID_NONE};

/* refs: the picture type says which pictures a picture reads (hooks.c).
 * packet_is_picture: libavcodec's MPEG-1/2 decoder drops a picture whose
 * headers are broken without a word; every packet from a parser holds a
 * picture, so a packet that allocated none lost one. */
const DfCodecOps df_codec_mpeg12 = {
    .name = "MPEG-1/2",
    .ids = ids,
    .auto_slices = mpeg12_auto_slices,
    .thread_count = mpeg12_thread_count,
    /* mpegvideo reads thread_count only when it sizes its slice contexts,
     * in ff_mpv_common_init (ff_mpv_init_context_frame in later FFmpeg),
     * which mpeg_decode_postinit calls at the first picture and again at
     * every sequence change; mpeg_decode_init does not (FFmpeg 5.1 to
     * 7.x).  Afterwards it uses slice_context_count and only asserts
     * thread_count > 1 before its execute calls.  H.264 cannot do this: it
     * sizes its slice contexts in its init, inside avcodec_open2. */
    .thread_count_after_open = true,
    .refs = DF_REFS_ANCHORS,
    .packet_is_picture = true,
};
