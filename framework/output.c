/* R(k,b): write band b of each frame into its destination — a copy into a
 * consumer-given layout, or a pixel-format conversion with libswscale — and
 * O(k): hand frames out in presentation order.
 *
 * Banded swscale is not exact for every conversion: a converter that
 * filters chroma vertically needs rows of the neighbouring band, and
 * libswscale's special unscaled converters ignore a destination slice.  So
 * each conversion is calibrated once, on a noise frame, against the same
 * conversion of the whole frame:
 *   1. dst slices: per-band contexts that see the whole source and produce
 *      rows y0..y1 (sws_receive_slice), exact when vertical filters are;
 *   2. band images: per-band contexts that treat the band as a picture of
 *      its own (row-local conversions: planar <-> semi-planar, depth);
 *   3. otherwise the whole frame in band 0.
 * Output therefore always equals single-threaded whole-frame swscale. */
#include "media_internal.h"

#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
#include <stdlib.h>
#include <string.h>

#define SWS_FLAGS (SWS_BICUBIC | SWS_ACCURATE_RND | SWS_BITEXACT)

enum { CONV_DST_SLICE, CONV_BAND_IMAGE, CONV_WHOLE };

struct DfConv {
    atomic_int refs;
    enum AVPixelFormat src_fmt, dst_fmt;
    int w, h, colorspace, range;
    int method, align, n_bands;
    struct SwsContext **ctx; /* per band (CONV_WHOLE: ctx[0] only) */
};

static const char *const method_names[] = {"dst-slice", "band-image", "whole-frame"};

static void conv_free(DfConv *c)
{
    if (!c)
        return;
    if (c->ctx)
        for (int b = 0; b < c->n_bands; b++)
            sws_freeContext(c->ctx[b]);
    free(c->ctx);
    free(c);
}

void df_conv_unref(DfConv **c)
{
    if (*c && atomic_fetch_sub_explicit(&(*c)->refs, 1, memory_order_acq_rel) == 1)
        conv_free(*c);
    *c = NULL;
}

static DfConv *conv_ref(DfConv *c)
{
    atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
    return c;
}

static void plane_offsets(const AVFrame *f, int y, uint8_t *out[4])
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(f->format);
    for (int p = 0; p < 4; p++) {
        int yy = (p == 1 || p == 2) ? y >> d->log2_chroma_h : y;
        out[p] = f->data[p] ? f->data[p] + (ptrdiff_t)f->linesize[p] * yy : NULL;
    }
}

static struct SwsContext *conv_context(const DfConv *c, int h)
{
    struct SwsContext *s =
        sws_getContext(c->w, h, c->src_fmt, c->w, h, c->dst_fmt, SWS_FLAGS, NULL, NULL, NULL);
    if (!s)
        return NULL;
    int *inv, *tab, src_range, dst_range, bri, con, sat;
    if (sws_getColorspaceDetails(s, &inv, &src_range, &tab, &dst_range, &bri, &con, &sat) >= 0) {
        const int *coef = sws_getCoefficients(c->colorspace);
        sws_setColorspaceDetails(s, coef, c->range == AVCOL_RANGE_JPEG, tab, dst_range, bri, con,
                                 sat);
    }
    return s;
}

/* Convert band [y0,y1) with method `m` using `s`. */
static int conv_band(const DfConv *c, int m, struct SwsContext *s, const AVFrame *src, AVFrame *dst,
                     int y0, int y1)
{
    if (y1 <= y0)
        return 0;
    if (m == CONV_DST_SLICE) {
        int ret = sws_frame_start(s, dst, src);
        if (ret >= 0)
            ret = sws_send_slice(s, 0, (unsigned)src->height);
        if (ret >= 0)
            ret = sws_receive_slice(s, (unsigned)y0, (unsigned)(y1 - y0));
        sws_frame_end(s);
        return ret;
    }
    uint8_t *sp[4], *dp[4];
    plane_offsets(src, y0, sp);
    plane_offsets(dst, y0, dp);
    int ret =
        sws_scale(s, (const uint8_t *const *)sp, src->linesize, 0, y1 - y0, dp, dst->linesize);
    return ret < 0 ? ret : 0;
}

static void noise_fill(AVFrame *f)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(f->format);
    uint64_t x = 0x9e3779b97f4a7c15ull;
    const bool mask16 = d->comp[0].depth > 8 && d->comp[0].depth < 16 && d->comp[0].shift == 0 &&
                        !(d->flags & AV_PIX_FMT_FLAG_BE);
    for (int p = 0; p < 4 && f->data[p]; p++) {
        int h = (p == 1 || p == 2) ? AV_CEIL_RSHIFT(f->height, d->log2_chroma_h) : f->height;
        for (int y = 0; y < h; y++) {
            uint8_t *row = f->data[p] + (ptrdiff_t)f->linesize[p] * y;
            for (int i = 0; i < f->linesize[p]; i++) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                row[i] = (uint8_t)x;
            }
            if (mask16)
                for (int i = 0; i + 1 < f->linesize[p]; i += 2)
                    row[i + 1] &= (uint8_t)((1 << (d->comp[0].depth - 8)) - 1);
        }
    }
}

static bool frames_equal(const AVFrame *a, const AVFrame *b)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(a->format);
    for (int p = 0; p < 4 && a->data[p]; p++) {
        int h = (p == 1 || p == 2) ? AV_CEIL_RSHIFT(a->height, d->log2_chroma_h) : a->height;
        int bw = av_image_get_linesize(a->format, a->width, p);
        for (int y = 0; y < h; y++)
            if (memcmp(a->data[p] + (ptrdiff_t)a->linesize[p] * y,
                       b->data[p] + (ptrdiff_t)b->linesize[p] * y, (size_t)bw))
                return false;
    }
    return true;
}

/* Try `m` on the noise frame; keep its contexts when it equals `ref`. */
static bool calibrate(DfConv *c, int m, const AVFrame *src, const AVFrame *ref, AVFrame *tmp)
{
    for (int b = 0; b < c->n_bands; b++) {
        int y0, y1;
        df_band_rows(c->h, c->n_bands, b, c->align, &y0, &y1);
        c->ctx[b] = conv_context(c, m == CONV_DST_SLICE ? c->h : (y1 > y0 ? y1 - y0 : 1));
        if (!c->ctx[b])
            goto fail;
        if (m == CONV_DST_SLICE) {
            /* Even the last slice must be aligned (libswscale 6.7). */
            const int a = (int)sws_receive_slice_alignment(c->ctx[b]);
            if (a > 0 && (y0 % a || (y1 - y0) % a))
                goto fail;
        }
        if (conv_band(c, m, c->ctx[b], src, tmp, y0, y1) < 0)
            goto fail;
    }
    if (frames_equal(ref, tmp))
        return true;
fail:
    for (int b = 0; b < c->n_bands; b++) {
        sws_freeContext(c->ctx[b]);
        c->ctx[b] = NULL;
    }
    return false;
}

static DfConv *conv_new(DfDecoder *dec, const AVFrame *f, enum AVPixelFormat dst_fmt)
{
    DfConv *c = calloc(1, sizeof(*c));
    AVFrame *src = av_frame_alloc(), *ref = av_frame_alloc(), *tmp = av_frame_alloc();
    if (!c || !src || !ref || !tmp)
        goto fail;
    atomic_init(&c->refs, 1);
    c->src_fmt = f->format;
    c->dst_fmt = dst_fmt;
    c->w = f->width;
    c->h = f->height;
    c->colorspace = f->colorspace;
    c->range = f->color_range;
    c->n_bands = dec->graph.n_bands;
    c->ctx = calloc((size_t)c->n_bands, sizeof(*c->ctx));
    if (!c->ctx)
        goto fail;
    const AVPixFmtDescriptor *sd = av_pix_fmt_desc_get(c->src_fmt),
                             *dd = av_pix_fmt_desc_get(dst_fmt);
    c->align = 16; /* dither period; also covers chroma subsampling */
    if (sd && (1 << sd->log2_chroma_h) > c->align)
        c->align = 1 << sd->log2_chroma_h;
    if (dd && (1 << dd->log2_chroma_h) > c->align)
        c->align = 1 << dd->log2_chroma_h;

    src->format = c->src_fmt;
    ref->format = tmp->format = dst_fmt;
    src->width = ref->width = tmp->width = c->w;
    src->height = ref->height = tmp->height = c->h;
    if (av_frame_get_buffer(src, 0) < 0 || av_frame_get_buffer(ref, 0) < 0 ||
        av_frame_get_buffer(tmp, 0) < 0)
        goto fail;
    noise_fill(src);
    struct SwsContext *whole = conv_context(c, c->h);
    if (!whole || sws_scale(whole, (const uint8_t *const *)src->data, src->linesize, 0, c->h,
                            ref->data, ref->linesize) < 0) {
        sws_freeContext(whole);
        goto fail;
    }
    if (c->n_bands > 1 && calibrate(c, CONV_DST_SLICE, src, ref, tmp)) {
        c->method = CONV_DST_SLICE;
        sws_freeContext(whole);
    } else if (c->n_bands > 1 && calibrate(c, CONV_BAND_IMAGE, src, ref, tmp)) {
        c->method = CONV_BAND_IMAGE;
        sws_freeContext(whole);
    } else {
        c->method = CONV_WHOLE;
        c->ctx[0] = whole;
    }
    df_log(dec, AV_LOG_VERBOSE, "conversion %s -> %s %dx%d: %s in %d bands\n",
           av_get_pix_fmt_name(c->src_fmt), av_get_pix_fmt_name(dst_fmt), c->w, c->h,
           method_names[c->method], c->method == CONV_WHOLE ? 1 : c->n_bands);
    av_frame_free(&src);
    av_frame_free(&ref);
    av_frame_free(&tmp);
    return c;
fail:
    av_frame_free(&src);
    av_frame_free(&ref);
    av_frame_free(&tmp);
    conv_free(c);
    return NULL;
}

static DfConv *conv_get(DfDecoder *dec, const AVFrame *f, enum AVPixelFormat dst_fmt)
{
    DfConv *c = dec->conv;
    if (c && c->src_fmt == f->format && c->dst_fmt == dst_fmt && c->w == f->width &&
        c->h == f->height && c->colorspace == (int)f->colorspace && c->range == (int)f->color_range)
        return conv_ref(c);
    df_conv_unref(&dec->conv);
    dec->conv = conv_new(dec, f, dst_fmt);
    return dec->conv ? conv_ref(dec->conv) : NULL;
}

void df_output_free(DfDecoder *dec)
{
    df_conv_unref(&dec->conv);
}

void df_output_prepare(DfDecoder *dec, DfMediaSlot *s)
{
    const enum AVPixelFormat want = dec->cfg.out_format;
    for (int i = 0; i < s->out.n; i++) {
        DfFrameItem *it = &s->out.v[i];
        const AVFrame *f = it->frame;
        const bool convert = want != AV_PIX_FMT_NONE && f->format != want;
        if (!convert && !dec->cfg.alloc.get_output)
            continue; /* zero copy: the output references the decoded picture */
        AVFrame *dst = av_frame_alloc();
        int ret = dst ? 0 : AVERROR(ENOMEM);
        if (dst) {
            dst->format = convert ? want : f->format;
            dst->width = f->width;
            dst->height = f->height;
            ret = dec->cfg.alloc.get_output
                      ? dec->cfg.alloc.get_output(dec->cfg.alloc.opaque, dst, f)
                      : AVERROR(ENOSYS);
            if (ret == DF_OUTPUT_IN_PLACE && !convert) {
                av_frame_free(&dst);
                continue; /* as without get_output: the output references f */
            }
            if (ret == AVERROR(ENOSYS) || ret == DF_OUTPUT_IN_PLACE)
                ret = av_frame_get_buffer(dst, 0);
        }
        if (ret >= 0 && convert) {
            it->conv = conv_get(dec, f, want);
            if (!it->conv)
                ret = AVERROR(EINVAL);
        }
        if (ret < 0) {
            char e[AV_ERROR_MAX_STRING_SIZE];
            av_strerror(ret, e, sizeof(e));
            df_slot_error(s, f->pts, ret, "output buffer for %s %dx%d: %s",
                          av_get_pix_fmt_name(dst ? dst->format : f->format), f->width, f->height,
                          e);
            av_frame_free(&dst);
            df_conv_unref(&it->conv);
            it->error = ret;
            continue;
        }
        it->dst = dst;
    }
}

static void copy_band(const AVFrame *src, AVFrame *dst, int y0, int y1)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(src->format);
    for (int p = 0; p < 4 && src->data[p] && dst->data[p]; p++) {
        const int vs = (p == 1 || p == 2) ? d->log2_chroma_h : 0;
        const int r0 = y0 >> vs, r1 = AV_CEIL_RSHIFT(y1, vs);
        const int bw = av_image_get_linesize(src->format, src->width, p);
        if (bw <= 0 || r1 <= r0)
            continue;
        av_image_copy_plane(dst->data[p] + (ptrdiff_t)dst->linesize[p] * r0, dst->linesize[p],
                            src->data[p] + (ptrdiff_t)src->linesize[p] * r0, src->linesize[p], bw,
                            r1 - r0);
    }
}

void df_output_band(DfTask *t, void *arg)
{
    DfMediaSlot *s = arg;
    DfDecoder *dec = s->dec;
    const int b = df_task_index(t), nb = dec->graph.n_bands;
    bool worked = false;
    for (int i = 0; i < s->out.n; i++) {
        DfFrameItem *it = &s->out.v[i];
        if (!it->dst || it->error)
            continue;
        const AVFrame *f = it->frame;
        int y0, y1;
        if (!it->conv) {
            const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(f->format);
            df_band_rows(f->height, nb, b, 1 << d->log2_chroma_h, &y0, &y1);
            copy_band(f, it->dst, y0, y1);
            worked = true;
            continue;
        }
        const DfConv *c = it->conv;
        if (c->method == CONV_WHOLE) {
            if (b == 0 && conv_band(c, CONV_WHOLE, c->ctx[0], f, it->dst, 0, f->height) < 0)
                it->error = AVERROR(EINVAL);
            worked |= b == 0;
            continue;
        }
        df_band_rows(f->height, nb, b, c->align, &y0, &y1);
        if (conv_band(c, c->method, c->ctx[b], f, it->dst, y0, y1) < 0)
            it->error = AVERROR(EINVAL);
        worked = true;
    }
    if (worked)
        DF_MEDIA_CTR_ADD(dec, bands, 1);
}

void df_output_band_cancel(DfTask *t, void *arg)
{
}

void df_output_order(DfTask *t, void *arg)
{
    DfMediaSlot *s = arg;
    DfDecoder *dec = s->dec;
    const int64_t now = df_now_ns();
    for (int i = 0; i < s->out.n; i++) {
        DfFrameItem *it = &s->out.v[i];
        if (it->error) {
            av_frame_free(&it->dst);
            continue;
        }
        if (it->dst) {
            av_frame_copy_props(it->dst, it->frame);
            av_frame_free(&it->frame);
            it->frame = it->dst;
            it->dst = NULL;
        }
        df_conv_unref(&it->conv);
        atomic_store_explicit(&dec->out_format, it->frame->format, memory_order_relaxed);
        atomic_store_explicit(&dec->out_width, it->frame->width, memory_order_relaxed);
        atomic_store_explicit(&dec->out_height, it->frame->height, memory_order_relaxed);
        df_latency_add(&dec->lat, (double)(now - s->t_send) / 1e6);
    }
}

void df_output_order_cancel(DfTask *t, void *arg)
{
    DfMediaSlot *s = arg;
    atomic_store_explicit(&s->dropped, true, memory_order_relaxed);
}
