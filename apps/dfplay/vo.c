/* The output registry. */
#include "vo.h"

#include <stdlib.h>
#include <string.h>

static const DfVoClass *const outputs[] = {&df_vo_sdl, &df_vo_null, &df_vo_framemd5, &df_vo_yuv};

const DfVoClass *df_vo_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof(outputs) / sizeof(outputs[0]); i++)
        if (!strcmp(outputs[i]->name, name))
            return outputs[i];
    return NULL;
}

const char *df_vo_names(void)
{
    return "sdl|null|framemd5|yuv";
}

/* The SDL window is not a DfVo: it runs the player (play_sdl.c).  Its
 * class only names it for --vo. */
const DfVoClass df_vo_sdl = {
    .name = "sdl", .help = "an SDL2 window paced to the stream clock", .timed = true};

int df_vo_open(DfVo *vo, const DfVoClass *cls, const DfVoParams *p)
{
    memset(vo, 0, sizeof(*vo));
    vo->cls = cls;
    if (cls->priv_size && !(vo->priv = calloc(1, cls->priv_size)))
        return AVERROR(ENOMEM);
    int ret = cls->open ? cls->open(vo, p) : 0;
    if (ret < 0) {
        free(vo->priv);
        vo->priv = NULL;
        vo->cls = NULL;
    }
    return ret;
}

int df_vo_frame(DfVo *vo, const AVFrame *f)
{
    return vo->cls->frame ? vo->cls->frame(vo, f) : 0;
}

int df_vo_close(DfVo *vo)
{
    if (!vo->cls)
        return 0;
    int ret = vo->cls->close ? vo->cls->close(vo) : 0;
    free(vo->priv);
    vo->priv = NULL;
    vo->cls = NULL;
    return ret;
}
