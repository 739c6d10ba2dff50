/* R bands: copies into a consumer-given layout and pixel-format conversions
 * are exact (equal to whole-frame swscale), whatever the banding. */
#include "dftest.h"
#include "framework_util.h"

#include <libavutil/imgutils.h>
#include <stdatomic.h>
#include <string.h>

typedef struct Consumer {
    DfSched *sched;
    atomic_int calls, off_worker;
} Consumer;

/* An unusual layout: strides padded by 96 bytes plus 16 per plane, planes
 * in separate buffers, like a downstream pool that is not libavcodec's. */
static int odd_layout(void *opaque, AVFrame *dst, const AVFrame *src)
{
    Consumer *c = opaque;
    atomic_fetch_add(&c->calls, 1);
    if (df_sched_current_worker(c->sched) < 0)
        atomic_fetch_add(&c->off_worker, 1);
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(dst->format);
    for (int p = 0; p < 4; p++) {
        int bw = av_image_get_linesize(dst->format, dst->width, p);
        if (bw <= 0)
            break;
        int h = (p == 1 || p == 2) ? AV_CEIL_RSHIFT(dst->height, d->log2_chroma_h) : dst->height;
        dst->linesize[p] = bw + 96 + 16 * p;
        dst->buf[p] = av_buffer_allocz((size_t)dst->linesize[p] * (size_t)h + 64);
        if (!dst->buf[p])
            return AVERROR(ENOMEM);
        dst->data[p] = dst->buf[p]->data + 32;
    }
    dst->extended_data = dst->data;
    return 0;
}

static void run(DfSched *s, const char *clip_name, const char *filter, enum AVPixelFormat fmt,
                bool layout, int band_rows)
{
    TClip clip;
    TSums ref = {0}, got = {0};
    DF_ASSERT(t_clip_load(clip_name, &clip) == 0);
    DF_ASSERT(t_ref_decode(&clip, filter, fmt, &ref) == 0);
    Consumer c = {.sched = s};
    atomic_init(&c.calls, 0);
    atomic_init(&c.off_worker, 0);
    DfDecoderConfig cfg;
    df_decoder_config_init(&cfg);
    cfg.filter = filter;
    cfg.out_format = fmt;
    cfg.band_rows = band_rows;
    if (layout) {
        cfg.alloc.get_output = odd_layout;
        cfg.alloc.opaque = &c;
    }
    DfDecoderStats st;
    char msg[256];
    const char *fname = fmt == AV_PIX_FMT_NONE ? "native" : av_get_pix_fmt_name(fmt);
    if (t_df_decode(s, &clip, &cfg, &got, &st, NULL, 0) == 0) {
        DF_EXPECT_MSG(t_sums_compare(&ref, &got, msg, sizeof(msg)) == 0,
                      "%s -> %s%s, band_rows %d, %s x%d: %s", clip_name, fname,
                      layout ? " (consumer layout)" : "", band_rows, df_sched_policy_name(s),
                      df_sched_n_workers(s), msg);
        /* R did work unless the output simply references the picture. */
        const bool work = layout || (fmt != AV_PIX_FMT_NONE && fmt != clip.par->format);
        DF_EXPECT_MSG(work ? st.bands >= (uint64_t)ref.n / 2 : st.bands == 0,
                      "%s -> %s: %llu bands for %d frames", clip_name, fname,
                      (unsigned long long)st.bands, ref.n);
        if (layout) {
            DF_EXPECT_EQ_INT(atomic_load(&c.calls), ref.n);
            DF_EXPECT_EQ_INT(atomic_load(&c.off_worker), 0);
        }
    }
    t_sums_free(&ref);
    t_sums_free(&got);
    t_clip_free(&clip);
}

DF_TEST(FrameworkOutput, CopyIntoConsumerLayout)
{
    const char *const *pol = df_policy_names();
    for (int p = 0; pol[p]; p++) {
        DfSched *s = t_sched(pol[p], 1 + p % 4, 20);
        DF_ASSERT(s);
        run(s, "h264_cabac_slices8.mkv", NULL, AV_PIX_FMT_NONE, true, 0);
        run(s, "h264_odd.mkv", NULL, AV_PIX_FMT_NONE, true, 40);
        run(s, "hevc_wpp10.mkv", NULL, AV_PIX_FMT_NONE, true, 0);
        run(s, "h264_422.mkv", NULL, AV_PIX_FMT_NONE, true, 16);
        run(s, "mpeg2_int.mkv", "unsharp", AV_PIX_FMT_NONE, true, 0);
        df_sched_unref(s);
    }
}

DF_TEST(FrameworkOutput, ConversionsEqualWholeFrameSwscale)
{
    const enum AVPixelFormat fmts[] = {AV_PIX_FMT_NV12, AV_PIX_FMT_RGB24,   AV_PIX_FMT_YUYV422,
                                       AV_PIX_FMT_BGRA, AV_PIX_FMT_YUV444P, AV_PIX_FMT_YUV420P};
    for (int w = 1; w <= 4; w += 3) {
        DfSched *s = t_sched(w == 1 ? "steal" : "cost-local", w, 20);
        DF_ASSERT(s);
        for (size_t f = 0; f < sizeof(fmts) / sizeof(fmts[0]); f++) {
            run(s, "h264_odd.mkv", NULL, fmts[f], false, 0);
            run(s, "hevc_wpp10.mkv", NULL, fmts[f], f % 2 == 0, 48);
            run(s, "h264_422.mkv", NULL, fmts[f], false, 0);
        }
        run(s, "mpeg2_prog.mkv", "unsharp", AV_PIX_FMT_NV12, true, 0);
        run(s, "h264_sizes.h264", NULL, AV_PIX_FMT_RGB24, true, 0); /* new conversion per size */
        df_sched_unref(s);
    }
}
