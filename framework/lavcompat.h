/* FFmpeg 5.1 (Debian 12) to 7.1 (Debian 13): the AVFrame and AVCodecContext
 * fields dfmedia, dfdec and the apps read, behind version guards, so that
 * both build with -Werror and behave alike.  Private: not installed.
 * Versions from FFmpeg's doc/APIchanges. */
#ifndef DF_LAVCOMPAT_H
#define DF_LAVCOMPAT_H

#include <libavcodec/avcodec.h>
#include <libavutil/frame.h>
#include <stdbool.h>
#include <stdint.h>

/* AV_CODEC_FLAG_COPY_OPAQUE for decoders (lavc 59.63.100, FFmpeg 6.0):
 * AVPacket.opaque is copied to the frames it produces.  Before it,
 * AVCodecContext.reordered_opaque (removed in lavc 61) did the same. */
#define DF_LAVC_COPY_OPAQUE (LIBAVCODEC_VERSION_INT >= AV_VERSION_INT(59, 63, 100))
/* AV_FRAME_FLAG_INTERLACED, _TOP_FIELD_FIRST and _KEY replace interlaced_frame,
 * top_field_first and key_frame (lavu 58.7.100, FFmpeg 6.1). */
#define DF_LAVU_FRAME_FLAGS (LIBAVUTIL_VERSION_INT >= AV_VERSION_INT(58, 7, 100))
/* AVFrame.duration replaces pkt_duration (lavu 57.30.100, FFmpeg 6.0). */
#define DF_LAVU_FRAME_DURATION (LIBAVUTIL_VERSION_INT >= AV_VERSION_INT(57, 30, 100))

static inline bool df_frame_interlaced(const AVFrame *f)
{
#if DF_LAVU_FRAME_FLAGS
    return f->flags & AV_FRAME_FLAG_INTERLACED;
#else
    return f->interlaced_frame;
#endif
}

static inline bool df_frame_top_field_first(const AVFrame *f)
{
#if DF_LAVU_FRAME_FLAGS
    return f->flags & AV_FRAME_FLAG_TOP_FIELD_FIRST;
#else
    return f->top_field_first;
#endif
}

static inline bool df_frame_key(const AVFrame *f)
{
#if DF_LAVU_FRAME_FLAGS
    return f->flags & AV_FRAME_FLAG_KEY;
#else
    return f->key_frame;
#endif
}

/* The frame's duration in pkt_timebase units (0 if unknown). */
static inline int64_t df_frame_duration(const AVFrame *f)
{
#if DF_LAVU_FRAME_DURATION
    return f->duration;
#else
    return f->pkt_duration;
#endif
}

static inline void df_frame_set_duration(AVFrame *f, int64_t d)
{
#if DF_LAVU_FRAME_DURATION
    f->duration = d;
#else
    f->pkt_duration = d;
#endif
}

#endif
