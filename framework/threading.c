/* How libavcodec runs: slice jobs as tasks, its own frame threads, or one
 * thread.  `auto` looks at the stream before the codec is opened, because
 * libavcodec 5.1 cannot combine slice and frame threading and cannot switch
 * once opened.  Whether a stream has parallel jobs is the codec's to say
 * (its DfCodecOps in framework/codec/: probe and auto_slices); a codec
 * without that rule falls back to frame threading, which is opaque to the
 * scheduler and adds frame_threads - 1 frames of delay. */
#include "media_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const names[] = {"auto", "slice", "frame", "none"};

const char *df_threading_name(DfThreading t)
{
    return t >= DF_THREADING_AUTO && t <= DF_THREADING_NONE ? names[t] : "?";
}

int df_threading_parse(const char *name, DfThreading *out)
{
    for (int i = 0; i <= DF_THREADING_NONE; i++)
        if (name && strcmp(name, names[i]) == 0) {
            *out = (DfThreading)i;
            return 0;
        }
    return AVERROR(EINVAL);
}

/* ------------------------------------------------------------- planning */

/* Streams up to HD decode single-threaded once there are as many as
 * workers; a taller picture may need more than a core. */
#define SERIAL_MAX_HEIGHT 1088

bool df_threading_serial_suits(int n_streams, int n_workers, int height)
{
    return n_workers > 1 && n_streams >= n_workers && height > 0 && height <= SERIAL_MAX_HEIGHT;
}

/* Single-threaded decode, and why. */
__attribute__((format(printf, 2, 3))) static void plan_none(DfThreadPlan *pl, const char *fmt, ...)
{
    pl->mode = DF_THREADING_NONE;
    pl->thread_count = 1;
    pl->thread_type = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pl->reason, sizeof(pl->reason), fmt, ap);
    va_end(ap);
}

/* Frame threads: frame_threads, else one per worker up to the cores they
 * run on: each thread beyond the cores adds a frame of delay and no
 * parallelism (n-workers=64 on 2 cores held 66 frames). */
static void plan_frame(DfThreadPlan *pl, const DfDecoderConfig *cfg, const AVCodec *codec,
                       const DfPlanEnv *env, const char *why)
{
    const int cores =
        env->n_cores > 0 && env->n_cores < env->n_workers ? env->n_cores : env->n_workers;
    int n = cfg->frame_threads > 0 ? cfg->frame_threads : cores;
    if (!(codec->capabilities & AV_CODEC_CAP_FRAME_THREADS) || n <= 1) {
        plan_none(pl, "%s; %s", why,
                  n > 1                ? "no frame threading in this codec: single-threaded decode"
                  : cfg->frame_threads ? "one frame thread (frame_threads, latency budget): "
                                         "single-threaded decode"
                  : cores < env->n_workers ? "workers on one core: single-threaded decode"
                                           : "one worker: single-threaded decode");
        return;
    }
    pl->mode = DF_THREADING_FRAME;
    pl->thread_count = n;
    pl->thread_type = FF_THREAD_FRAME;
    snprintf(pl->reason, sizeof(pl->reason),
             "%s; libavcodec frame threading with %d threads (%d frame%s more delay)", why, n,
             n - 1, n == 2 ? "" : "s");
}

/* thread_count costs threads: libavcodec opens a slice-thread pool of
 * thread_count - 1 threads per decoder, which never runs a job (the hooks
 * take every execute call).  So it is the smallest count whose execute
 * calls still give every worker a job (a codec whose ops say
 * thread_count_after_open opens with 2 whatever its count, decode_task.c):
 *
 * A WPP row started beyond the workers' count just blocks in
 * pthread_cond_wait, so the generic rule is thread_count = workers (at
 * most 16).  A codec's thread_count op overrides it: H.264 takes the
 * slices of a picture, one execute call per picture (codec/h264.c), MPEG-2
 * its bands (codec/mpeg12.c), HEVC every worker without the cap
 * (codec/hevc.c). */
static int auto_thread_count(const DfCodecOps *ops, const DfProbe *probe, int n_workers, int height)
{
    if (ops->thread_count)
        return ops->thread_count(probe, n_workers, height);
    return n_workers < 2 ? 2 : n_workers > 16 ? 16 : n_workers;
}

static void plan_slice(DfThreadPlan *pl, const DfDecoderConfig *cfg, const AVCodecParameters *par,
                       const DfCodecOps *ops, const DfProbe *probe, int n_workers, const char *why)
{
    pl->mode = DF_THREADING_SLICE;
    pl->thread_count = cfg->thread_count > 1
                           ? cfg->thread_count
                           : auto_thread_count(ops, probe, n_workers, par->height);
    pl->thread_type = FF_THREAD_SLICE;
    snprintf(pl->reason, sizeof(pl->reason), "%s; slice jobs run as tasks (thread_count %d)", why,
             pl->thread_count);
}

void df_threading_plan(const DfDecoderConfig *cfg, const AVCodecParameters *par,
                       const AVCodec *codec, const DfCodecOps *ops, const DfProbe *probe,
                       const DfPlanEnv *env, DfThreadPlan *pl)
{
    const int n_workers = env->n_workers;
    memset(pl, 0, sizeof(*pl));
    const bool slices = codec->capabilities & AV_CODEC_CAP_SLICE_THREADS;
    switch (cfg->threading) {
    case DF_THREADING_NONE:
        plan_none(pl, "requested: single-threaded decode");
        return;
    case DF_THREADING_FRAME:
        plan_frame(pl, cfg, codec, env, "requested");
        return;
    case DF_THREADING_SLICE:
        if (!slices) {
            plan_none(pl, "slice threading requested but %s has none: single-threaded decode",
                      codec->name);
            return;
        }
        plan_slice(pl, cfg, par, ops, probe, n_workers, "requested");
        return;
    case DF_THREADING_AUTO:
    default:
        break;
    }
    char why[128];
    if (!env->split_jobs) {
        /* Jobs that run in order on one worker parallelise nothing, and
         * libavcodec's slice contexts cost CPU of their own: H.264
         * postpones deblocking to a second pass over the picture (4.23 ms
         * a frame against single-threaded 3.81 ms, 1080p 8-slice). */
        plan_none(pl, "one worker: single-threaded decode");
        return;
    }
    if (df_threading_serial_suits(env->n_streams, n_workers, par->height)) {
        /* Every worker has a stream to decode: streams in parallel need no
         * slice jobs, whose waits and slice contexts only cost.  At 14
         * paced 1080p H.264 streams on 2 workers a decode task's waits
         * for its jobs held 22-31 % of the workers idle, and every frame
         * was late; one single-threaded decode per stream carried 15 with
         * the workers 83 % busy (docs/codecs.md). */
        plan_none(pl, "%d streams on %d workers: one single-threaded decode per stream",
                  env->n_streams, n_workers);
        return;
    }
    if (ops->auto_slices) {
        if (ops->auto_slices(probe, why, sizeof(why)))
            plan_slice(pl, cfg, par, ops, probe, n_workers, why);
        else
            plan_frame(pl, cfg, codec, env, why);
        return;
    }
    if (codec->capabilities & AV_CODEC_CAP_FRAME_THREADS) {
        snprintf(why, sizeof(why), "%s: slice structure not inspected", codec->name);
        plan_frame(pl, cfg, codec, env, why);
    } else if (slices) {
        plan_slice(pl, cfg, par, ops, probe, n_workers, codec->name);
    } else {
        plan_none(pl, "%s has no threading", codec->name);
    }
}
