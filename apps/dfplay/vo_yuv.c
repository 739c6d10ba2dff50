/* --vo yuv: the visible planes of every frame, packed, in the decoder's
 * native format (like ffmpeg -f rawvideo). */
#include "vo.h"

#include <errno.h>
#include <libavutil/imgutils.h>
#include <stdio.h>
#include <string.h>

typedef struct Yuv {
    FILE *f;
    bool close_f;
    uint8_t *buf;
    int size;
} Yuv;

static int yuv_open(DfVo *vo, const DfVoParams *p)
{
    Yuv *y = vo->priv;
    if (!strcmp(p->output, "-")) {
        y->f = stdout;
        return 0;
    }
    y->f = fopen(p->output, "wb");
    if (!y->f) {
        snprintf(vo->err, sizeof(vo->err), "cannot write %s: %s", p->output, strerror(errno));
        return AVERROR(errno);
    }
    y->close_f = true;
    return 0;
}

static int yuv_frame(DfVo *vo, const AVFrame *f)
{
    Yuv *y = vo->priv;
    int size = av_image_get_buffer_size(f->format, f->width, f->height, 1);
    if (size < 0)
        return size;
    if (size > y->size) {
        av_free(y->buf);
        y->size = 0;
        if (!(y->buf = av_malloc((size_t)size)))
            return AVERROR(ENOMEM);
        y->size = size;
    }
    av_image_copy_to_buffer(y->buf, size, (const uint8_t *const *)f->data, f->linesize, f->format,
                            f->width, f->height, 1);
    if (fwrite(y->buf, 1, (size_t)size, y->f) != (size_t)size) {
        snprintf(vo->err, sizeof(vo->err), "write error: %s", strerror(errno));
        return AVERROR(EIO);
    }
    return 0;
}

static int yuv_close(DfVo *vo)
{
    Yuv *y = vo->priv;
    int ret = 0;
    av_freep(&y->buf);
    if (y->f && fflush(y->f) != 0) {
        snprintf(vo->err, sizeof(vo->err), "write error: %s", strerror(errno));
        ret = AVERROR(EIO);
    }
    if (y->close_f && fclose(y->f) != 0 && ret == 0) {
        snprintf(vo->err, sizeof(vo->err), "write error: %s", strerror(errno));
        ret = AVERROR(EIO);
    }
    return ret;
}

const DfVoClass df_vo_yuv = {
    .name = "yuv",
    .help = "raw planes in the native pixel format to -o FILE (- for stdout)",
    .takes_output = true,
    .needs_output = true,
    .priv_size = sizeof(Yuv),
    .open = yuv_open,
    .frame = yuv_frame,
    .close = yuv_close,
};
