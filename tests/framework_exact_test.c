/* Bit-exactness: every generated clip, every policy, 1-4 workers, against
 * single-threaded libavcodec, frame by frame (md5 of the visible planes,
 * pts, format, size); plus the explicit threading modes. */
#include "dftest.h"
#include "framework_util.h"

#include <string.h>

static const char *expected_threading(const char *clip)
{
    if (strstr(clip, "single") || strstr(clip, "nowpp"))
        return "frame";
    return "slice";
}

static void check_clip(DfSched *s, const TClip *clip, const TSums *ref, const DfDecoderConfig *cfg,
                       const char *what)
{
    TSums got = {0};
    DfDecoderStats st;
    char thr[16] = "";
    char msg[256];
    if (t_df_decode(s, clip, cfg, &got, &st, thr, sizeof(thr)) == 0) {
        DF_EXPECT_MSG(t_sums_compare(ref, &got, msg, sizeof(msg)) == 0,
                      "%s, %s, %s, %d workers: %s", clip->name, what, df_sched_policy_name(s),
                      df_sched_n_workers(s), msg);
        DF_EXPECT_EQ_INT(st.frames_out, ref->n);
        if ((!cfg || cfg->threading == DF_THREADING_AUTO) && !t_under_tsan()) {
            /* One worker runs jobs inline: single-threaded decode. */
            const char *want =
                df_sched_n_workers(s) == 1 ? "none" : expected_threading(clip->name);
            DF_EXPECT_MSG(strcmp(thr, want) == 0, "%s: threading %s, expected %s", clip->name, thr,
                          want);
        }
    }
    t_sums_free(&got);
}

DF_TEST(FrameworkExact, EveryClipPolicyWorkers)
{
    int n = 0;
    while (t_clips[n])
        n++;
    TClip clips[32];
    TSums refs[32];
    memset(refs, 0, sizeof(refs));
    for (int i = 0; i < n; i++) {
        DF_ASSERT_MSG(t_clip_load(t_clips[i], &clips[i]) == 0, "cannot load %s from %s", t_clips[i],
                      df_test_media_dir());
        DF_ASSERT(t_ref_decode(&clips[i], NULL, AV_PIX_FMT_NONE, &refs[i]) == 0);
        DF_ASSERT_MSG(refs[i].n >= 10, "%s: only %d reference frames", t_clips[i], refs[i].n);
    }
    for (const char *const *p = df_policy_names(); *p; p++)
        for (int w = 1; w <= 4; w++) {
            DfSched *s = t_sched(*p, w, w == 3 ? -1 : 20);
            DF_ASSERT(s);
            for (int i = 0; i < n; i++)
                check_clip(s, &clips[i], &refs[i], NULL, "auto");
            df_sched_unref(s);
        }
    for (int i = 0; i < n; i++) {
        t_sums_free(&refs[i]);
        t_clip_free(&clips[i]);
    }
}

/* Explicit modes on every clip: slice (serial for clips without jobs),
 * frame and none; and a small slice batch (several execute calls per
 * picture for the 8-slice clip). */
DF_TEST(FrameworkExact, ExplicitModes)
{
    DfSched *s = t_sched("cost-local", 2, 20);
    DF_ASSERT(s);
    for (int i = 0; t_clips[i]; i++) {
        TClip clip;
        TSums ref = {0};
        DF_ASSERT(t_clip_load(t_clips[i], &clip) == 0);
        DF_ASSERT(t_ref_decode(&clip, NULL, AV_PIX_FMT_NONE, &ref) == 0);
        DfDecoderConfig cfg;
        df_decoder_config_init(&cfg);
        const DfThreading modes[] = {DF_THREADING_SLICE, DF_THREADING_FRAME, DF_THREADING_NONE};
        for (int m = 0; m < 3; m++) {
            cfg.threading = modes[m];
            check_clip(s, &clip, &ref, &cfg, df_threading_name(modes[m]));
        }
        cfg.threading = DF_THREADING_SLICE;
        cfg.thread_count = 3;
        cfg.max_in_flight = 4;
        check_clip(s, &clip, &ref, &cfg, "slice batch 3, 4 in flight");
        t_sums_free(&ref);
        t_clip_free(&clip);
    }
    df_sched_unref(s);
}

/* The crop window the stream signals, exactly: a left offset of 26 luma
 * samples is not what libavcodec keeps without AV_CODEC_FLAG_UNALIGNED
 * (the clips would test nothing if it were), and dfmedia gives the window
 * on every threading mode, also with a conversion in the output bands. */
DF_TEST(FrameworkExact, CropWindow)
{
    static const struct {
        const char *clip;
        int width, height;
        bool aligned_differs;
    } cases[] = {
        {"h264_crop.mkv", 326, 192, true},
        {"hevc_crop.mkv", 324, 196, true},
        {"mpeg2_odd.mkv", 718, 398, false},
    };
    DfSched *s = t_sched("cost-local", 2, 20);
    DF_ASSERT(s);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        TClip clip;
        TSums ref = {0}, aligned = {0};
        DF_ASSERT_MSG(t_clip_load(cases[i].clip, &clip) == 0, "cannot load %s", cases[i].clip);
        DF_ASSERT(t_ref_decode(&clip, NULL, AV_PIX_FMT_NONE, &ref) == 0 && ref.n >= 10);
        for (int k = 0; k < ref.n; k++)
            DF_EXPECT_MSG(ref.v[k].width == cases[i].width && ref.v[k].height == cases[i].height,
                          "%s: reference frame %d is %dx%d", cases[i].clip, k, ref.v[k].width,
                          ref.v[k].height);
        /* libavcodec's default: the left crop rounded down to alignment. */
        DF_ASSERT(t_lavc_decode_aligned(&clip, &aligned) == 0 && aligned.n == ref.n);
        DF_EXPECT_MSG((aligned.v[0].width != cases[i].width) == cases[i].aligned_differs,
                      "%s: %d wide without AV_CODEC_FLAG_UNALIGNED", cases[i].clip,
                      aligned.v[0].width);
        DfDecoderConfig cfg;
        df_decoder_config_init(&cfg);
        const DfThreading modes[] = {DF_THREADING_AUTO, DF_THREADING_SLICE, DF_THREADING_FRAME,
                                     DF_THREADING_NONE};
        for (int m = 0; m < 4; m++) {
            cfg.threading = modes[m];
            check_clip(s, &clip, &ref, &cfg, df_threading_name(modes[m]));
        }
        TSums nv12 = {0};
        DF_ASSERT(t_ref_decode(&clip, NULL, AV_PIX_FMT_NV12, &nv12) == 0);
        cfg.threading = DF_THREADING_AUTO;
        cfg.out_format = AV_PIX_FMT_NV12;
        check_clip(s, &clip, &nv12, &cfg, "to NV12 in the bands");
        t_sums_free(&nv12);
        t_sums_free(&aligned);
        t_sums_free(&ref);
        t_clip_free(&clip);
    }
    df_sched_unref(s);
}
