/* What the framework knows about a codec, one file per codec (h264.c,
 * hevc.c, mpeg12.c), looked up by AVCodecID in codec.c.  Generic code
 * (threading.c, hooks.c, decode_task.c) asks the ops and never names a
 * codec; a codec without an entry is run by the generic rules (every op
 * absent).  Adding a codec: one file filling a DfCodecOps and one line in
 * codec.c's table.  GStreamer caps are not here: the element maps caps to
 * an AVCodecID in its own table (elements/dfdec_codecs.c). */
#ifndef DFMEDIA_CODEC_H
#define DFMEDIA_CODEC_H

#include <libavcodec/avcodec.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What `auto` threading learnt of the stream so far (extradata, packets). */
typedef struct DfProbe {
    int nal_length_size; /* 0: Annex-B */
    int vcl_seen;
    int multi_slice; /* H.264: a slice with first_mb_in_slice > 0 */
    int slices;      /* H.264: slices seen by the probe (those of its first picture) */
    int pps_seen;    /* HEVC */
    int wpp, tiles;
    int packets;
} DfProbe;

/* Which pictures a slice job reads its reference rows from (hooks.c). */
typedef enum DfRefRule {
    DF_REFS_LAST_TWO = 0, /* the two pictures decoded last, half from each */
    DF_REFS_ANCHORS,      /* by picture type: P the last I/P, B the last two, I none */
} DfRefRule;

typedef struct DfCodecOps {
    const char *name;
    const enum AVCodecID *ids; /* ended by AV_CODEC_ID_NONE */

    /* Probe for `auto` threading.  probe_extradata reads the codec's
     * extradata; probe_nal gets each NAL unit of a packet (Annex B or
     * length-prefixed, per p->nal_length_size); probe_done says whether the
     * plan can be made.  Without probe_done no packet is needed. */
    void (*probe_extradata)(DfProbe *p, const uint8_t *data, int size);
    void (*probe_nal)(DfProbe *p, const uint8_t *nal, int len);
    bool (*probe_done)(const DfProbe *p);

    /* `auto` threading: true for slice jobs, false for frame threads, with
     * the reason in `why`.  NULL: the generic rule (frame threads when the
     * codec has them, else slices, else none). */
    bool (*auto_slices)(const DfProbe *p, char *why, size_t why_size);

    /* libavcodec thread_count in slice mode when the configuration leaves
     * it to us.  NULL: the generic rule (threading.c). */
    int (*thread_count)(const DfProbe *p, int n_workers, int height);

    /* The codec reads thread_count only after avcodec_open2 (when it sizes
     * its slice contexts), while libavcodec sizes its idle slice-thread pool
     * from it inside avcodec_open2: open with 2, then set the plan's count
     * (decode_task.c), for one idle pool thread instead of count - 1. */
    bool thread_count_after_open;
    /* Reference rows of slice jobs (hooks.c). */
    DfRefRule refs;
    /* Whether libavcodec rewrites every row of the picture in D after the
     * slice jobs (H.264's deblocking), given the opened context.  NULL: no. */
    bool (*deblocks_in_d)(const AVCodecContext *avctx);

    /* Every packet holds one picture, so a packet that allocated none lost
     * it (a decode error the codec does not report). */
    bool packet_is_picture;
} DfCodecOps;

/* The ops of `id`; a codec without an entry gets ops with every rule
 * generic (never NULL). */
const DfCodecOps *df_codec_find(enum AVCodecID id);

/* Start probing (reads extradata): 1 when the plan is already known, 0
 * when packets are needed. */
int df_codec_probe_init(const DfCodecOps *ops, DfProbe *p, const AVCodecParameters *par);
/* Feed a packet; 1 once the stream's structure is known. */
int df_codec_probe_packet(const DfCodecOps *ops, DfProbe *p, const AVPacket *pkt);

/* The codec files' entries. */
extern const DfCodecOps df_codec_h264;
extern const DfCodecOps df_codec_hevc;
extern const DfCodecOps df_codec_mpeg12;

#endif
