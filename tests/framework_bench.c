/* Throwaway decode benchmark (the real one is dfbench, a later issue):
 * packets held in memory, modes interleaved round by round so that a noisy
 * machine hurts all of them alike, median fps per mode.
 *
 *   framework_bench CLIP [ROUNDS] [WORKERS]
 *
 * Modes: libavcodec with 1 thread, its own slice threads and frame threads
 * (thread_count = WORKERS), and dfmedia on WORKERS workers (slice jobs as
 * tasks, batch 16) with 1 and 2 packets in flight, per policy. */
#include "dftest.h"
#include "framework_util.h"

#include <libavutil/time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The shim's registry is not used here; the util functions report failures
 * through it, so give them something to call. */
void df_test_register(const char *suite, const char *name, DfTestFn fn, const char *file, int line)
{
}

void df_test_fail(const char *file, int line, bool fatal, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s:%d: ", file, line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

const char *df_test_media_dir(void)
{
    const char *s = getenv("DF_TEST_MEDIA");
    return s && *s ? s : ".";
}

typedef struct Mode {
    char name[64];
    int lavc_type; /* -1: dfmedia */
    int threads;
    const char *policy;
    int in_flight;
    DfSched *sched;
    double fps[64];
    int frames;
} Mode;

static double run_lavc(const TClip *c, Mode *m)
{
    const AVCodec *codec = avcodec_find_decoder(c->par->codec_id);
    AVCodecContext *ctx = avcodec_alloc_context3(codec);
    avcodec_parameters_to_context(ctx, c->par);
    ctx->thread_count = m->threads;
    ctx->thread_type = m->lavc_type;
    if (avcodec_open2(ctx, codec, NULL) < 0)
        return 0;
    AVFrame *f = av_frame_alloc();
    int frames = 0;
    int64_t t0 = av_gettime_relative();
    for (int i = 0; i <= c->n_pkts; i++) {
        avcodec_send_packet(ctx, i < c->n_pkts ? c->pkts[i] : NULL);
        while (avcodec_receive_frame(ctx, f) == 0)
            frames++;
    }
    int64_t t1 = av_gettime_relative();
    m->frames = frames;
    av_frame_free(&f);
    avcodec_free_context(&ctx);
    return frames / ((double)(t1 - t0) / 1e6);
}

static double run_df(const TClip *c, Mode *m)
{
    /* A scheduler per run: idle workers of the other modes would compete
     * for the cores (all of them, in poll mode). */
    DfSchedConfig sc;
    df_sched_config_init(&sc);
    sc.n_workers = m->threads;
    sc.policy = m->policy;
    if (getenv("BENCH_POLL_US"))
        sc.poll_us = atoi(getenv("BENCH_POLL_US"));
    DfError err;
    if (df_sched_new(&sc, &m->sched, &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 0;
    }
    double fps = 0;
    DfDecoderConfig cfg;
    df_decoder_config_init(&cfg);
    cfg.max_in_flight = m->in_flight;
    if (getenv("BENCH_TC"))
        cfg.thread_count = atoi(getenv("BENCH_TC"));
    DfDecoder *dec = NULL;
    if (df_decoder_new(m->sched, c->par, c->tb, &cfg, &dec, &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        goto done;
    }
    AVFrame *f = av_frame_alloc();
    int frames = 0, ret;
    int64_t t0 = av_gettime_relative();
    for (int i = 0; i < c->n_pkts; i++) {
        while ((ret = df_decoder_send_packet(dec, c->pkts[i])) == AVERROR(EAGAIN))
            if (df_decoder_receive_frame(dec, f) == 0)
                frames++;
        while (df_decoder_try_receive_frame(dec, f) == 0)
            frames++;
    }
    df_decoder_send_packet(dec, NULL);
    while (df_decoder_receive_frame(dec, f) == 0)
        frames++;
    int64_t t1 = av_gettime_relative();
    m->frames = frames;
    av_frame_free(&f);
    df_decoder_free(&dec);
    fps = frames / ((double)(t1 - t0) / 1e6);
done:
    df_sched_unref(m->sched);
    m->sched = NULL;
    return fps;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: framework_bench CLIP [ROUNDS] [WORKERS]\n");
        return 2;
    }
    const int rounds = argc > 2 ? atoi(argv[2]) : 7;
    const int workers = argc > 3 ? atoi(argv[3]) : 2;
    TClip clip;
    if (t_clip_load(argv[1], &clip) < 0) {
        fprintf(stderr, "cannot load %s\n", argv[1]);
        return 1;
    }
    Mode modes[16];
    memset(modes, 0, sizeof(modes));
    int n = 0;
    modes[n++] = (Mode){.name = "ffmpeg 1 thread", .lavc_type = 0, .threads = 1};
    snprintf(modes[n].name, sizeof(modes[n].name), "ffmpeg slice threads x%d", workers);
    modes[n].lavc_type = FF_THREAD_SLICE;
    modes[n++].threads = workers;
    snprintf(modes[n].name, sizeof(modes[n].name), "ffmpeg frame threads x%d", workers);
    modes[n].lavc_type = FF_THREAD_FRAME;
    modes[n++].threads = workers;
    const char *policies[] = {"cost-local", "steal", "fifo"};
    for (int p = 0; p < 3; p++)
        for (int inf = 1; inf <= 2; inf++) {
            Mode *m = &modes[n++];
            memset(m, 0, sizeof(*m));
            snprintf(m->name, sizeof(m->name), "dfmedia %s x%d, %d in flight", policies[p], workers,
                     inf);
            m->lavc_type = -1;
            m->policy = policies[p];
            m->in_flight = inf;
            m->threads = workers;
        }
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < n; i++)
            modes[i].fps[r] =
                modes[i].lavc_type < 0 ? run_df(&clip, &modes[i]) : run_lavc(&clip, &modes[i]);
    printf("%s (%d packets), %d rounds, median fps [min..max]\n", argv[1], clip.n_pkts, rounds);
    for (int i = 0; i < n; i++)
        qsort(modes[i].fps, (size_t)rounds, sizeof(double), cmp);
    const double slice_med = modes[1].fps[rounds / 2];
    for (int i = 0; i < n; i++) {
        double med = modes[i].fps[rounds / 2];
        printf("  %-38s %7.1f  [%6.1f .. %6.1f]  %.2fx slice  (%d frames)\n", modes[i].name, med,
               modes[i].fps[0], modes[i].fps[rounds - 1], slice_med > 0 ? med / slice_med : 0,
               modes[i].frames);
    }
    t_clip_free(&clip);
    return 0;
}
