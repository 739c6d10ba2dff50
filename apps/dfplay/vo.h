/* Video outputs of dfplay, chosen with --vo like dav1d's muxers.  A display
 * output (SDL, a later issue) is one more DfVoClass with `timed` set. */
#ifndef DFPLAY_VO_H
#define DFPLAY_VO_H

#include <libavformat/avformat.h>
#include <stdbool.h>

typedef struct DfVoParams {
    const AVStream *stream; /* the decoded stream */
    AVRational frame_rate;  /* guessed like ffmpeg (av_guess_frame_rate) */
    int64_t start_time;     /* input start (AV_TIME_BASE), or AV_NOPTS_VALUE */
    bool ts_unreliable;     /* the input format has no timestamps (AVFMT_NOTIMESTAMPS) */
    const char *output;     /* -o, or NULL */
} DfVoParams;

typedef struct DfVo DfVo;

typedef struct DfVoClass {
    const char *name;
    const char *help;
    bool timed;        /* paced to the presentation clock (a display) */
    bool needs_output; /* requires -o */
    size_t priv_size;
    int (*open)(DfVo *vo, const DfVoParams *p);
    int (*frame)(DfVo *vo, const AVFrame *f);
    int (*close)(DfVo *vo); /* flush; an error if the output could not be written */
} DfVoClass;

struct DfVo {
    const DfVoClass *cls;
    void *priv;
    char err[256]; /* one line when a call fails */
};

/* Output class by name, or NULL. */
const DfVoClass *df_vo_find(const char *name);
/* "sdl|null|framemd5|yuv". */
const char *df_vo_names(void);

int df_vo_open(DfVo *vo, const DfVoClass *cls, const DfVoParams *p);
int df_vo_frame(DfVo *vo, const AVFrame *f);
int df_vo_close(DfVo *vo);

extern const DfVoClass df_vo_sdl, df_vo_null, df_vo_framemd5, df_vo_yuv;

#endif
