/* A decoder's measured load and the QoS that sheds a late stream's decode
 * work: packets sent while df_decoder_set_skip_nonref() is on skip their
 * non-reference pictures, every picture that comes out is bit-exact, and
 * the stream's account counts its frames' work. */
#include "dftest.h"
#include "framework_util.h"

#include <string.h>

/* Decode `c`, skipping non-reference pictures of packets [from, to). */
static void decode_skipping(DfSched *s, const TClip *c, int from, int to, TSums *got,
                            DfDecoderStats *st)
{
    DfDecoderConfig cfg;
    df_decoder_config_init(&cfg);
    cfg.threading = DF_THREADING_SLICE;
    DfDecoder *dec = NULL;
    DfError err = {0};
    DF_ASSERT_MSG(df_decoder_new(s, c->par, c->tb, &cfg, &dec, &err) == 0, "%s", err.msg);
    AVFrame *f = av_frame_alloc();
    int ret;
    for (int i = 0; i < c->n_pkts; i++) {
        df_decoder_set_skip_nonref(dec, i >= from && i < to);
        while ((ret = df_decoder_send_packet(dec, c->pkts[i])) == AVERROR(EAGAIN)) {
            ret = df_decoder_receive_frame(dec, f);
            if (ret == 0)
                t_sums_add(got, f);
            DF_ASSERT(ret == 0 || ret == AVERROR(EAGAIN));
        }
        DF_ASSERT_EQ_INT(ret, 0);
        while (df_decoder_try_receive_frame(dec, f) == 0)
            t_sums_add(got, f);
    }
    DF_ASSERT_EQ_INT(df_decoder_send_packet(dec, NULL), 0);
    while ((ret = df_decoder_receive_frame(dec, f)) == 0)
        t_sums_add(got, f);
    DF_EXPECT_EQ_INT(ret, AVERROR_EOF);
    df_decoder_stats(dec, st);
    av_frame_free(&f);
    df_decoder_free(&dec);
}

static void skip_nonref_exact(const char *clip)
{
    DfSched *s = t_sched("cost-local", 2, 20);
    DF_ASSERT(s);
    TClip c;
    TSums ref = {0}, got = {0};
    DF_ASSERT(t_clip_load(clip, &c) == 0);
    DF_ASSERT(t_ref_decode(&c, NULL, AV_PIX_FMT_NONE, &ref) == 0);
    DfDecoderStats st;
    decode_skipping(s, &c, 2, c.n_pkts - 2, &got, &st);
    /* Something was shed, and every picture is either out or skipped. */
    DF_EXPECT_MSG(st.frames_skipped > 0, "%s: no picture skipped", clip);
    DF_EXPECT_MSG(got.n < ref.n, "%s: %d of %d frames out", clip, got.n, ref.n);
    DF_EXPECT_EQ_INT(st.frames_out + st.frames_skipped, ref.n);
    DF_EXPECT_EQ_INT(st.decode_errors, 0);
    /* Every frame out is the reference's frame of that pts, in order. */
    int j = 0;
    for (int i = 0; i < got.n; i++) {
        while (j < ref.n && ref.v[j].pts != got.v[i].pts)
            j++;
        DF_EXPECT_MSG(j < ref.n && !memcmp(ref.v[j].md5, got.v[i].md5, 16),
                      "%s: frame pts %lld differs or out of order", clip, (long long)got.v[i].pts);
    }
    /* Before and after the late stretch, nothing is missing. */
    DF_EXPECT(got.n > 0 && got.v[0].pts == ref.v[0].pts);
    DF_EXPECT(got.n > 0 && got.v[got.n - 1].pts == ref.v[ref.n - 1].pts);
    t_sums_free(&got);
    t_sums_free(&ref);
    t_clip_free(&c);
    df_sched_unref(s);
}

DF_TEST(FrameworkLoad, SkipNonrefKeepsOutputExactH264)
{
    skip_nonref_exact("h264_cabac_slices8.mkv");
}

DF_TEST(FrameworkLoad, SkipNonrefKeepsOutputExactMpeg2)
{
    skip_nonref_exact("mpeg2_prog.mkv");
}

/* Send every packet of `c` and the flush, taking a frame into `f` whenever
 * the decoder is full, then take the rest up to EOF; the frames are not
 * looked at.  0, or the first send or receive that failed. */
static int decode_to_eof(DfDecoder *dec, const TClip *c, AVFrame *f)
{
    int ret;
    for (int i = 0; i < c->n_pkts; i++) {
        while ((ret = df_decoder_send_packet(dec, c->pkts[i])) == AVERROR(EAGAIN))
            if ((ret = df_decoder_receive_frame(dec, f)) != 0 && ret != AVERROR(EAGAIN))
                return ret;
        if (ret != 0)
            return ret;
    }
    if ((ret = df_decoder_send_packet(dec, NULL)) != 0)
        return ret;
    while (df_decoder_receive_frame(dec, f) == 0)
        ;
    return 0;
}

/* The account counts every packet's work as a frame, at the caller's rate. */
DF_TEST(FrameworkLoad, DecoderLoadIsMeasured)
{
    DfSched *s = t_sched("cost-local", 2, 20);
    DF_ASSERT(s);
    TClip c;
    DF_ASSERT(t_clip_load("h264_cabac_slices8.mkv", &c) == 0);
    DfDecoderConfig cfg;
    df_decoder_config_init(&cfg);
    cfg.threading = DF_THREADING_SLICE;
    cfg.frame_rate = (AVRational){24, 1};
    DfDecoder *dec = NULL;
    DfError err = {0};
    DF_ASSERT_MSG(df_decoder_new(s, c.par, c.tb, &cfg, &dec, &err) == 0, "%s", err.msg);
    DfDecoderLoad ld;
    df_decoder_load(dec, &ld);
    DF_EXPECT(ld.frames == 0 && ld.cores == 0.0);
    DF_EXPECT(ld.sched.capacity == 2.0 && ld.sched.n_pending >= 1);
    AVFrame *f = av_frame_alloc();
    DF_ASSERT_EQ_INT(decode_to_eof(dec, &c, f), 0);
    df_decoder_load(dec, &ld);
    DF_EXPECT_EQ_INT(ld.frames, c.n_pkts);
    DF_EXPECT(ld.fps == 24.0);
    DF_EXPECT_MSG(ld.ns_per_frame > 0.0, "%.0f ns per frame", ld.ns_per_frame);
    const double want = ld.ns_per_frame * 24.0 / 1e9;
    DF_EXPECT_MSG(ld.cores > 0.99 * want && ld.cores < 1.01 * want, "%.4f cores, %.4f expected",
                  ld.cores, want);
    DF_EXPECT(ld.sched.pending >= ld.cores);
    const int admitted = ld.sched.n_admitted;
    df_decoder_set_admitted(dec, true);
    df_decoder_load(dec, &ld);
    DF_EXPECT_EQ_INT(ld.sched.n_admitted, admitted + 1);
    DF_EXPECT(ld.sched.admitted >= ld.cores);
    av_frame_free(&f);
    df_decoder_free(&dec);
    t_clip_free(&c);
    df_sched_unref(s);
}

/* Without a rate from the caller, the bitstream's (the clip signals 25). */
DF_TEST(FrameworkLoad, RateFromTheBitstream)
{
    DfSched *s = t_sched("cost-local", 1, 20);
    DF_ASSERT(s);
    TClip c;
    DF_ASSERT(t_clip_load("h264_cabac_slices8.mkv", &c) == 0);
    DfDecoder *dec = NULL;
    DfError err = {0};
    DF_ASSERT_MSG(df_decoder_new(s, c.par, c.tb, NULL, &dec, &err) == 0, "%s", err.msg);
    AVFrame *f = av_frame_alloc();
    DF_ASSERT_EQ_INT(decode_to_eof(dec, &c, f), 0);
    DfDecoderLoad ld;
    df_decoder_load(dec, &ld);
    DF_EXPECT_MSG(ld.fps > 0.0, "no rate from the bitstream (%.3f)", ld.fps);
    av_frame_free(&f);
    df_decoder_free(&dec);
    t_clip_free(&c);
    df_sched_unref(s);
}
