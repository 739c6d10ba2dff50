/* Helpers shared by the framework tests: clips held in memory, per-frame
 * md5 of the visible planes, the single-threaded libavcodec (+ libavfilter)
 * reference, and a pipelined dfmedia decode loop. */
#ifndef FRAMEWORK_UTIL_H
#define FRAMEWORK_UTIL_H

#include "dfmedia.h"

#include <libavformat/avformat.h>

typedef struct TClip {
    char name[64];
    AVCodecParameters *par;
    AVRational tb;
    AVPacket **pkts;
    int n_pkts;
} TClip;

typedef struct TSum {
    int64_t pts;
    int format, width, height;
    int error_flags;
    uint8_t md5[16];
} TSum;

typedef struct TSums {
    TSum *v;
    int n, cap;
} TSums;

/* The test clips (tests/media/gen.sh names), NULL-terminated. */
extern const char *const t_clips[];

/* Load every video packet of `name` from the media directory. */
int t_clip_load(const char *name, TClip *clip);
void t_clip_free(TClip *clip);

void t_frame_md5(const AVFrame *f, uint8_t md5[16]);
int t_sums_add(TSums *s, const AVFrame *f);
void t_sums_push(TSums *s, const TSum *x);
void t_sums_free(TSums *s);
/* 0 when equal; otherwise fills `msg` with the first difference. */
int t_sums_compare(const TSums *ref, const TSums *got, char *msg, size_t len);

/* Plain libavcodec with thread_count = 1 and AV_CODEC_FLAG_UNALIGNED (the
 * exact crop window, as `ffmpeg -flags unaligned -threads 1`), then `filter` (or NULL) with
 * libavfilter single-threaded, then conversion to `out_format` (or NONE)
 * with one whole-frame swscale call. */
int t_ref_decode(const TClip *clip, const char *filter, enum AVPixelFormat out_format, TSums *out);
/* Plain libavcodec, one thread, without AV_CODEC_FLAG_UNALIGNED: a left
 * crop rounded down to keep the data pointers aligned. */
int t_lavc_decode_aligned(const TClip *clip, TSums *out);
/* Plain libavcodec with its own threads (FF_THREAD_SLICE or FF_THREAD_FRAME). */
int t_lavc_decode(const TClip *clip, int thread_type, int thread_count, TSums *out);

/* Decode the clip through dfmedia (keeping max_in_flight packets queued).
 * `cfg` may be NULL. */
int t_df_decode(DfSched *s, const TClip *clip, const DfDecoderConfig *cfg, TSums *out,
                DfDecoderStats *stats, char *threading, size_t threading_len);
/* The same, calling `after(ctx)` once the first packet is in (the decoder's
 * threading is decided then). */
int t_df_decode_then(DfSched *s, const TClip *clip, const DfDecoderConfig *cfg, TSums *out,
                     DfDecoderStats *stats, char *threading, size_t threading_len,
                     void (*after)(void *ctx), void *ctx);

/* t_under_tsan(): t_df_decode() then never uses frame threading. */
#include "tsan_supp.h"

/* A scheduler or NULL (failure reported to the test). */
DfSched *t_sched(const char *policy, int n_workers, int poll_us);
/* The same with DfSchedConfig.eager_jobs: every slice job a node, as the
 * tests of the job nodes themselves (and traces for dfsim) need. */
DfSched *t_sched_jobs(const char *policy, int n_workers, int poll_us, bool eager_jobs);

#endif
