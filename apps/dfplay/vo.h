/* Video outputs of dfplay, chosen with --vo like dav1d's muxers: one file
 * per output, each a DfVoClass in vo.c's table.  The headless ones (null,
 * framemd5, yuv) take frames on the player's thread; a display (sdl,
 * vo_sdl.c) also owns the thread the player starts on (run) and asks for
 * seeks (seek). */
#ifndef DFPLAY_VO_H
#define DFPLAY_VO_H

#include <libavformat/avformat.h>
#include <stdbool.h>

struct Player;

typedef struct DfVoParams {
    const AVStream *stream;    /* the decoded stream */
    AVRational frame_rate;     /* guessed like ffmpeg (av_guess_frame_rate) */
    AVRational out_frame_rate; /* the pictures' after --filter, or {0, 1} if unknown */
    int64_t start_time;        /* input start + --start (AV_TIME_BASE), or AV_NOPTS_VALUE */
    bool ts_unreliable;        /* the input format has no timestamps (AVFMT_NOTIMESTAMPS) */
    const char *output;        /* -o, or NULL */
    struct Player *player;     /* for a display's overlay, test hooks and summary */
} DfVoParams;

typedef struct DfVo DfVo;

typedef struct DfVoClass {
    const char *name;
    const char *help;
    bool timed;        /* paced to the presentation clock (a display) */
    bool takes_output; /* writes the file -o names */
    bool needs_output; /* requires -o */
    bool summary;      /* prints its own summary line instead of the player's */
    bool yuv420p;      /* takes YUV420P only: the decoder converts other formats */
    size_t priv_size;
    int (*open)(DfVo *vo, const DfVoParams *p);
    /* 0, 1 to stop playing (a window closed) or a negative error. */
    int (*frame)(DfVo *vo, const AVFrame *f);
    int (*close)(DfVo *vo); /* flush; an error if the output could not be written */
    /* Optional: run play(arg) (the player) and return its result.  A
     * display runs it on a thread of its own and keeps this one for its
     * window; it paces the frames itself. */
    int (*run)(DfVo *vo, int (*play)(void *arg), void *arg);
    /* Optional: true and the target (stream time base) when the viewer
     * asked for a seek since the last call; called from the player. */
    bool (*seek)(DfVo *vo, int64_t *target);
} DfVoClass;

struct DfVo {
    const DfVoClass *cls;
    void *priv;
    char err[256]; /* one line when a call fails */
};

/* Output class by name, or NULL. */
const DfVoClass *df_vo_find(const char *name);
/* The names in the table, "sdl|null|framemd5|yuv" (sdl when built with
 * SDL2). */
const char *df_vo_names(void);

int df_vo_open(DfVo *vo, const DfVoClass *cls, const DfVoParams *p);
int df_vo_frame(DfVo *vo, const AVFrame *f);
/* play(arg) through the output's run, or directly. */
int df_vo_run(DfVo *vo, int (*play)(void *arg), void *arg);
bool df_vo_seek(DfVo *vo, int64_t *target);
int df_vo_close(DfVo *vo);

extern const DfVoClass df_vo_null, df_vo_framemd5, df_vo_yuv;
#ifdef DF_PLAY_HAVE_SDL
extern const DfVoClass df_vo_sdl;
#endif

#endif
