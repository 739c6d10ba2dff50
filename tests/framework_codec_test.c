/* The codec table of framework/codec/ (white box): every codec found by
 * each of its ids and by no other entry, generic ops for the rest, and
 * the probe and thread rules reached through the ops. */
#include "dftest.h"

#include "codec/codec.h"

#include <string.h>

static const DfCodecOps *const all[] = {&df_codec_h264, &df_codec_hevc, &df_codec_mpeg12};

DF_TEST(FrameworkCodec, TableFindsEachId)
{
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        DF_ASSERT(all[i]->name && all[i]->ids);
        int n = 0;
        for (const enum AVCodecID *id = all[i]->ids; *id != AV_CODEC_ID_NONE; id++, n++)
            DF_EXPECT_MSG(df_codec_find(*id) == all[i], "%s: %s found elsewhere", all[i]->name,
                          avcodec_get_name(*id));
        DF_EXPECT_MSG(n > 0, "%s has no codec id", all[i]->name);
    }
    DF_EXPECT(df_codec_find(AV_CODEC_ID_MPEG1VIDEO) == df_codec_find(AV_CODEC_ID_MPEG2VIDEO));
}

DF_TEST(FrameworkCodec, UnknownCodecIsGeneric)
{
    const DfCodecOps *g = df_codec_find(AV_CODEC_ID_VP9);
    DF_ASSERT(g);
    DF_EXPECT(g->name == NULL);
    DF_EXPECT(!g->probe_extradata && !g->probe_nal && !g->probe_done && !g->auto_slices);
    DF_EXPECT(!g->thread_count && !g->deblocks_in_d);
    DF_EXPECT(g->refs == DF_REFS_LAST_TWO && !g->packet_is_picture);
    DfProbe p;
    AVCodecParameters *par = avcodec_parameters_alloc();
    DF_ASSERT(par);
    par->codec_id = AV_CODEC_ID_VP9;
    DF_EXPECT_EQ_INT(df_codec_probe_init(g, &p, par), 1); /* nothing to wait for */
    avcodec_parameters_free(&par);
}

/* Two Annex B IDR slices: first_mb_in_slice ue(0) = 1b, ue(5) = 00110b. */
static const uint8_t two_slices[] = {0, 0, 1, 0x65, 0x80, 0, 0, 1, 0x65, 0x30};
static const uint8_t one_slice[] = {0, 0, 1, 0x65, 0x80};

static int h264_probe(const uint8_t *data, int size, DfProbe *p)
{
    const DfCodecOps *ops = df_codec_find(AV_CODEC_ID_H264);
    AVCodecParameters *par = avcodec_parameters_alloc();
    AVPacket *pkt = av_packet_alloc();
    int done = -1;
    if (!par || !pkt || av_new_packet(pkt, size) < 0)
        goto out;
    memcpy(pkt->data, data, (size_t)size);
    par->codec_id = AV_CODEC_ID_H264;
    if (df_codec_probe_init(ops, p, par) != 0) /* no extradata: packets needed */
        goto out;
    done = df_codec_probe_packet(ops, p, pkt);
out:
    av_packet_free(&pkt);
    avcodec_parameters_free(&par);
    return done;
}

DF_TEST(FrameworkCodec, H264ProbeCountsSlices)
{
    const DfCodecOps *ops = df_codec_find(AV_CODEC_ID_H264);
    char why[128];
    DfProbe p;
    DF_ASSERT_EQ_INT(h264_probe(two_slices, sizeof(two_slices), &p), 1);
    DF_EXPECT_EQ_INT(p.multi_slice, 1);
    DF_EXPECT(ops->auto_slices(&p, why, sizeof(why)));
    DF_ASSERT_EQ_INT(h264_probe(one_slice, sizeof(one_slice), &p), 1);
    DF_EXPECT_EQ_INT(p.multi_slice, 0);
    DF_EXPECT(!ops->auto_slices(&p, why, sizeof(why)));
    DF_EXPECT_MSG(strstr(why, "single-slice") != NULL, "reason: %s", why);
}

DF_TEST(FrameworkCodec, Mpeg12BandsFollowHeight)
{
    const DfCodecOps *ops = df_codec_find(AV_CODEC_ID_MPEG2VIDEO);
    DF_ASSERT(ops->thread_count);
    DF_EXPECT_EQ_INT(ops->thread_count(NULL, 2, 368), 6);    /* 23 macroblock rows / 4 */
    DF_EXPECT_EQ_INT(ops->thread_count(NULL, 2, 1080), 16);  /* at most 16 ... */
    DF_EXPECT_EQ_INT(ops->thread_count(NULL, 16, 1080), 32); /* ... but 2 per worker, at most 32 */
    DF_EXPECT_EQ_INT(ops->thread_count(NULL, 16, 64), 4);    /* one per macroblock row */
    DF_EXPECT(ops->packet_is_picture && ops->refs == DF_REFS_ANCHORS);
}
