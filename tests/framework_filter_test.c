/* Filter chains run as F(k) with their slice jobs as F band nodes: output
 * equals the same chain run single-threaded by libavfilter; invalid
 * descriptions fail at creation. */
#include "dftest.h"
#include "framework_util.h"

#include <string.h>

typedef struct FilterCase {
    const char *clip;
    const char *filter;
    bool sliced; /* the chain has slice-threaded filters */
} FilterCase;

static const FilterCase cases[] = {
    {"h264_cabac_slices8.mkv", "unsharp=5:5:1.5", true},
    {"h264_odd.mkv", "gblur=sigma=2", true},
    {"hevc_wpp8.mkv", "colorspace=all=bt709:iall=bt601-6-625", true},
    {"h264_mbaff.mkv", "yadif", true},
    {"mpeg2_int.mkv", "yadif=mode=1", true},
    {"hevc_wpp10.mkv", "unsharp,gblur=sigma=1", true},
    {"mpeg2_prog.mkv", "scale=320:180", false},
    {"h264_422.mkv", "scale=320:180,unsharp", true},
    {"h264_single.mkv", "hflip", true},
    {"h264_cavlc_slices4.mkv", "format=gray", false},
    {"h264_sizes.h264", "unsharp", true}, /* the graph is rebuilt at each new size */
    {"mpeg2_prog.m2v", "fps=25", false},  /* pictures without a PTS; the last one's end */
};

static void run_case(DfSched *s, const FilterCase *fc)
{
    TClip clip;
    TSums ref = {0}, got = {0};
    DF_ASSERT(t_clip_load(fc->clip, &clip) == 0);
    DF_ASSERT(t_ref_decode(&clip, fc->filter, AV_PIX_FMT_NONE, &ref) == 0);
    DF_ASSERT_MSG(ref.n >= 10, "%s | %s: %d reference frames", fc->clip, fc->filter, ref.n);
    DfDecoderConfig cfg;
    df_decoder_config_init(&cfg);
    cfg.filter = fc->filter;
    DfDecoderStats st;
    char msg[256];
    if (t_df_decode(s, &clip, &cfg, &got, &st, NULL, 0) == 0) {
        DF_EXPECT_MSG(t_sums_compare(&ref, &got, msg, sizeof(msg)) == 0, "%s | %s, %s x%d: %s",
                      fc->clip, fc->filter, df_sched_policy_name(s), df_sched_n_workers(s), msg);
        if (fc->sliced) {
            DF_EXPECT_MSG(st.filter_jobs >= (uint64_t)ref.n * 2,
                          "%s | %s: only %llu filter jobs for %d frames", fc->clip, fc->filter,
                          (unsigned long long)st.filter_jobs, ref.n);
            uint64_t sum = 0;
            for (int w = 0; w < 64; w++)
                sum += st.filter_jobs_per_worker[w];
            DF_EXPECT_EQ_INT(sum, st.filter_jobs);
        } else {
            DF_EXPECT_EQ_INT(st.filter_jobs, 0);
        }
    }
    t_sums_free(&ref);
    t_sums_free(&got);
    t_clip_free(&clip);
}

DF_TEST(FrameworkFilter, ChainsEqualSingleThreaded)
{
    const char *const *pol = df_policy_names();
    for (int w = 1; w <= 4; w++) {
        /* Every policy over the worker counts, without running the whole
         * cross product: the filter path does not depend on the codec. */
        for (int p = 0; pol[p]; p++) {
            if ((p + w) % 2)
                continue;
            DfSched *s = t_sched(pol[p], w, 20);
            DF_ASSERT(s);
            for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                run_case(s, &cases[i]);
            df_sched_unref(s);
        }
    }
}

DF_TEST(FrameworkFilter, InvalidDescriptionFailsAtCreation)
{
    DfSched *s = t_sched("cost-local", 2, 20);
    DF_ASSERT(s);
    TClip clip;
    DF_ASSERT(t_clip_load("h264_cabac_slices8.mkv", &clip) == 0);
    const char *bad[] = {"nosuchfilter", "unsharp=lx=99", "scale=w=foo", "split[a][b]",
                         "[in]hflip[x]"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        DfDecoderConfig cfg;
        df_decoder_config_init(&cfg);
        cfg.filter = bad[i];
        DfDecoder *dec = NULL;
        DfError err = {0};
        int ret = df_decoder_new(s, clip.par, clip.tb, &cfg, &dec, &err);
        DF_EXPECT_MSG(ret < 0 && !dec, "\"%s\" accepted", bad[i]);
        DF_EXPECT_MSG(strstr(err.msg, "filter") != NULL, "\"%s\": message \"%s\"", bad[i], err.msg);
        df_decoder_free(&dec);
    }
    t_clip_free(&clip);
    df_sched_unref(s);
}
