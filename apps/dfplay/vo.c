/* The output table: every --vo, one file each (vo_*.c). */
#include "vo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const DfVoClass *const outputs[] = {
#ifdef DF_PLAY_HAVE_SDL
    &df_vo_sdl,
#endif
    &df_vo_null,
    &df_vo_framemd5,
    &df_vo_yuv,
};

const DfVoClass *df_vo_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof(outputs) / sizeof(outputs[0]); i++)
        if (!strcmp(outputs[i]->name, name))
            return outputs[i];
    return NULL;
}

const char *df_vo_names(void)
{
    static char names[64];
    if (!names[0])
        for (size_t i = 0; i < sizeof(outputs) / sizeof(outputs[0]); i++)
            snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? "|" : "",
                     outputs[i]->name);
    return names;
}

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

int df_vo_run(DfVo *vo, int (*play)(void *arg), void *arg)
{
    return vo->cls->run ? vo->cls->run(vo, play, arg) : play(arg);
}

bool df_vo_seek(DfVo *vo, int64_t *target)
{
    return vo->cls->seek && vo->cls->seek(vo, target);
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
