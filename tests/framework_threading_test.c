/* `auto` threading decisions for streams the generated clips do not cover:
 * HEVC with tiles (x265 cannot make them) is built here by rewriting the
 * PPS of the WPP clip with tiles_enabled_flag = 1 and a 2x1 tile grid. */
#include "dftest.h"
#include "framework_util.h"

#include <dirent.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

typedef struct BitBuf {
    uint8_t b[512];
    int n; /* bits */
} BitBuf;

static int get_bit(const uint8_t *d, int pos)
{
    return (d[pos >> 3] >> (7 - (pos & 7))) & 1;
}

static void put_bit(BitBuf *w, int v)
{
    if (v)
        w->b[w->n >> 3] |= (uint8_t)(0x80 >> (w->n & 7));
    w->n++;
}

static int read_ue(const uint8_t *d, int *pos)
{
    int lz = 0;
    while (!get_bit(d, (*pos)++))
        lz++;
    int v = 0;
    for (int i = 0; i < lz; i++)
        v = v << 1 | get_bit(d, (*pos)++);
    return (1 << lz) - 1 + v;
}

/* RBSP of a NAL (emulation prevention removed) and back. */
static int unescape(const uint8_t *in, int len, uint8_t *out)
{
    int n = 0, zeros = 0;
    for (int i = 0; i < len; i++) {
        if (zeros >= 2 && in[i] == 3) {
            zeros = 0;
            continue;
        }
        zeros = in[i] ? 0 : zeros + 1;
        out[n++] = in[i];
    }
    return n;
}

static int escape(const uint8_t *in, int len, uint8_t *out)
{
    int n = 0, zeros = 0;
    for (int i = 0; i < len; i++) {
        if (zeros >= 2 && in[i] <= 3) {
            out[n++] = 3;
            zeros = 0;
        }
        zeros = in[i] ? 0 : zeros + 1;
        out[n++] = in[i];
    }
    return n;
}

/* Rewrite one PPS NAL: tiles_enabled_flag = 1, 2 columns x 1 row, uniform. */
static int add_tiles(const uint8_t *nal, int len, uint8_t *out)
{
    uint8_t rbsp[512];
    int n = unescape(nal, len, rbsp);
    int pos = 16; /* NAL header */
    read_ue(rbsp, &pos);
    read_ue(rbsp, &pos);
    pos += 7;
    read_ue(rbsp, &pos);
    read_ue(rbsp, &pos);
    read_ue(rbsp, &pos); /* init_qp_minus26 (se, same length) */
    pos += 2;
    int cu_qp_delta = get_bit(rbsp, pos++);
    if (cu_qp_delta)
        read_ue(rbsp, &pos);
    read_ue(rbsp, &pos);
    read_ue(rbsp, &pos);
    pos += 4;
    const int tiles_at = pos; /* tiles_enabled_flag, then entropy_coding_sync */
    int last = n * 8 - 1;
    while (!get_bit(rbsp, last))
        last--; /* rbsp_stop_one_bit */
    BitBuf w = {0};
    for (int i = 0; i < tiles_at; i++)
        put_bit(&w, get_bit(rbsp, i));
    put_bit(&w, 1);
    put_bit(&w, get_bit(rbsp, tiles_at + 1));
    const int extra[] = {0, 1, 0, 1, 1, 1}; /* ue(1) ue(0) uniform loop_filter */
    for (int i = 0; i < 6; i++)
        put_bit(&w, extra[i]);
    for (int i = tiles_at + 2; i < last; i++)
        put_bit(&w, get_bit(rbsp, i));
    put_bit(&w, 1);
    while (w.n & 7)
        put_bit(&w, 0);
    return escape(w.b, w.n / 8, out);
}

/* The same hvcC with every PPS rewritten. */
static int tiled_hvcc(const uint8_t *x, int size, uint8_t *out)
{
    memcpy(out, x, 23);
    int i = 23, o = 23;
    for (int a = 0; a < x[22]; a++) {
        const int type = x[i] & 0x3f, count = x[i + 1] << 8 | x[i + 2];
        memcpy(out + o, x + i, 3);
        i += 3;
        o += 3;
        for (int k = 0; k < count; k++) {
            int len = x[i] << 8 | x[i + 1];
            int nl = type == 34 ? add_tiles(x + i + 2, len, out + o + 2) : len;
            if (type != 34)
                memcpy(out + o + 2, x + i + 2, (size_t)len);
            out[o] = (uint8_t)(nl >> 8);
            out[o + 1] = (uint8_t)nl;
            i += 2 + len;
            o += 2 + nl;
        }
    }
    return i == size ? o : -1;
}

/* Decode the clip's first packet on `s` with `par`, and expect the plan
 * `want` with `why` in its reason.  `auto_first`: the plan is made at the
 * first picture (probed streams), not when the decoder is made. */
static void expect_plan(DfSched *s, const TClip *c, const AVCodecParameters *par, bool auto_first,
                        const char *want, const char *why)
{
    DfDecoder *dec = NULL;
    DfError err = {0};
    DF_ASSERT_MSG(df_decoder_new(s, par, c->tb, NULL, &dec, &err) == 0, "%s", err.msg);
    /* Checked before the packet is sent: a spinning worker may run the
     * first D task, which opens the codec, at once. */
    if (auto_first)
        DF_EXPECT(!strcmp(df_decoder_threading(dec, NULL), "auto"));
    DF_EXPECT_EQ_INT(df_decoder_send_packet(dec, c->pkts[0]), 0);
    AVFrame *f = av_frame_alloc();
    df_decoder_send_packet(dec, NULL);
    while (df_decoder_receive_frame(dec, f) == 0)
        ;
    av_frame_free(&f);
    const char *reason = NULL;
    const char *got = df_decoder_threading(dec, &reason);
    DF_EXPECT_MSG(!strcmp(got, want) && strstr(reason, why), "threading %s (%s), expected %s (%s)",
                  got, reason, want, why);
    df_decoder_free(&dec);
}

static void decide(DfSched *s, const TClip *c, const AVCodecParameters *par, const char *want,
                   const char *why)
{
    expect_plan(s, c, par, true, want, why);
}

DF_TEST(FrameworkThreading, HevcTilesFallBackToFrameThreads)
{
    TClip c;
    DF_ASSERT(t_clip_load("hevc_wpp8.mkv", &c) == 0);
    DF_ASSERT(c.par->extradata_size > 23 && c.par->extradata[0] == 1);
    uint8_t *x = calloc(1, (size_t)c.par->extradata_size + 64 + AV_INPUT_BUFFER_PADDING_SIZE);
    int n = tiled_hvcc(c.par->extradata, c.par->extradata_size, x);
    DF_ASSERT_MSG(n > c.par->extradata_size, "hvcC rewrite failed (%d)", n);
    AVCodecParameters *par = avcodec_parameters_alloc();
    avcodec_parameters_copy(par, c.par);
    av_free(par->extradata);
    par->extradata = x;
    par->extradata_size = n;
    for (int w = 1; w <= 2; w++) {
        /* Eager: on one worker too, jobs are nodes, so the stream decides. */
        DfSched *s = t_sched_jobs("cost-local", w, 20, true);
        DF_ASSERT(s);
        decide(s, &c, c.par, "slice", "WPP");
        decide(s, &c, par, w == 1 ? "none" : "frame", "tiles");
        df_sched_unref(s);
    }
    /* One worker running jobs inline: single-threaded, whatever the stream. */
    DfSched *s = t_sched("cost-local", 1, 20);
    DF_ASSERT(s);
    expect_plan(s, &c, c.par, false, "none", "one worker");
    expect_plan(s, &c, par, false, "none", "one worker");
    df_sched_unref(s);
    avcodec_parameters_free(&par);
    t_clip_free(&c);
}

/* More workers than the cores they run on: libavcodec frame threads
 * beyond the cores add a frame of delay each and no parallelism (dfdec
 * n-workers=64 on 2 cores held 66 frames).  Three workers on one CPU
 * decode single-threaded when frame threading is asked for. */
DF_TEST(FrameworkThreading, FrameThreadsNoMoreThanCores)
{
    cpu_set_t set;
    DF_ASSERT(sched_getaffinity(0, sizeof(set), &set) == 0);
    int cpu = 0;
    while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &set))
        cpu++;
    char list[16];
    snprintf(list, sizeof(list), "%d", cpu);
    DfSchedConfig sc;
    df_sched_config_init(&sc);
    sc.policy = "cost-local";
    sc.n_workers = 3;
    sc.cpuset = list;
    sc.poll_us = 20;
    DfSched *s = NULL;
    DfError err = {0};
    DF_ASSERT_MSG(df_sched_new(&sc, &s, &err) == 0, "%s", err.msg);
    DF_EXPECT(df_sched_capacity(s) == 1.0);
    TClip c;
    DF_ASSERT(t_clip_load("h264_single.mkv", &c) == 0);
    DfDecoderConfig cfg;
    df_decoder_config_init(&cfg);
    cfg.threading = DF_THREADING_FRAME;
    DfDecoder *dec = NULL;
    DF_ASSERT_MSG(df_decoder_new(s, c.par, c.tb, &cfg, &dec, &err) == 0, "%s", err.msg);
    DF_EXPECT_EQ_INT(df_decoder_send_packet(dec, c.pkts[0]), 0);
    df_decoder_send_packet(dec, NULL);
    AVFrame *f = av_frame_alloc();
    while (df_decoder_receive_frame(dec, f) == 0)
        ;
    av_frame_free(&f);
    const char *reason = NULL;
    const char *got = df_decoder_threading(dec, &reason);
    DF_EXPECT_MSG(!strcmp(got, "none") && strstr(reason, "one core"), "threading %s (%s)", got,
                  reason);
    df_decoder_free(&dec);
    t_clip_free(&c);
    df_sched_unref(s);
}

/* Threads of this process allowed on every CPU of `set`. */
static int threads_on(const cpu_set_t *set)
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    if (!d)
        return -1;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        cpu_set_t cs;
        if (sched_getaffinity((pid_t)atoi(e->d_name), sizeof(cs), &cs) == 0 && CPU_EQUAL(&cs, set))
            n++;
    }
    closedir(d);
    return n;
}

DF_TEST(FrameworkThreading, FrameThreadsGetEveryWorkersCpus)
{
    /* auto opens the codec on a pinned worker; libavcodec's frame threads
     * must not inherit that worker's single core. */
    if (t_under_tsan())
        DF_SKIP("no frame threads under ThreadSanitizer");
    DfSched *s = t_sched("cost-local", 2, 20);
    DF_ASSERT(s);
    cpu_set_t all;
    if (df_sched_worker_cpus(s, &all) < 0 || CPU_COUNT(&all) < 2) {
        df_sched_unref(s);
        DF_SKIP("workers are not pinned to two CPUs here");
    }
    TClip c;
    DF_ASSERT(t_clip_load("h264_single.mkv", &c) == 0);
    const int before = threads_on(&all);
    DfDecoder *dec = NULL;
    DfDecoderConfig cfg;
    df_decoder_config_init(&cfg);
    DfError err;
    DF_ASSERT(df_decoder_new(s, c.par, c.tb, &cfg, &dec, &err) == 0);
    AVFrame *f = av_frame_alloc();
    int sent = 0;
    for (int i = 0; i < c.n_pkts && sent < 6; i++, sent++)
        while (df_decoder_send_packet(dec, c.pkts[i]) == AVERROR(EAGAIN))
            df_decoder_receive_frame(dec, f);
    DF_EXPECT(!strcmp(df_decoder_threading(dec, NULL), "frame"));
    const int during = threads_on(&all);
    DF_EXPECT_MSG(during - before >= 2, "%d threads on both CPUs before, %d with frame threads",
                  before, during);
    df_decoder_free(&dec);
    av_frame_free(&f);
    t_clip_free(&c);
    df_sched_unref(s);
}

/* Threads each open decoder adds: libavcodec's slice-thread pool of
 * thread_count - 1 threads, which never runs a job (the hooks take every
 * execute call), and nothing else.  At 2 workers HEVC adds one thread;
 * H.264 opens with a slice context per slice of a picture (codec/h264.c),
 * so the 8-slice clip adds 7; MPEG-2 opens with 2 and gets its band count
 * afterwards (thread_count_after_open in codec/mpeg12.c).  In `auto` only
 * the first decoder gets slice jobs: from the second on, the 2 workers
 * have a stream each, and a stream decodes single-threaded, adding no
 * thread (threading.c). */
static void count_threads(DfSched *s, const char *clip, DfThreading threading,
                          int want_per_decoder)
{
    enum { N = 4 };
    const int sliced = threading == DF_THREADING_AUTO ? 1 : N;
    TClip c;
    DF_ASSERT(t_clip_load(clip, &c) == 0);
    DfDecoder *dec[N] = {0};
    AVFrame *f = av_frame_alloc();
    DfDecoderConfig cfg;
    df_decoder_config_init(&cfg);
    cfg.threading = threading; /* the probe counts H.264's slices */
    const int before = df_test_thread_count();
    for (int k = 0; k < N; k++) {
        DfError err;
        DF_ASSERT(df_decoder_new(s, c.par, c.tb, &cfg, &dec[k], &err) == 0);
        /* The codec opens with the first picture's decode. */
        int got = 0;
        for (int i = 0; i < c.n_pkts && !got; i++)
            while (df_decoder_send_packet(dec[k], c.pkts[i]) == AVERROR(EAGAIN))
                got |= df_decoder_receive_frame(dec[k], f) == 0;
        while (!got && df_decoder_receive_frame(dec[k], f) == AVERROR(EAGAIN))
            ;
        const char *why = NULL;
        const char *mode = df_decoder_threading(dec[k], &why);
        DF_EXPECT_MSG(k < sliced ? !strcmp(mode, "slice")
                                 : !strcmp(mode, "none") && strstr(why, "streams on 2 workers"),
                      "%s, decoder %d: %s (%s)", clip, k, mode, why);
    }
    const int during = df_test_thread_count();
    for (int k = 0; k < N; k++)
        df_decoder_free(&dec[k]);
    const int after = df_test_thread_count();
    DF_EXPECT_MSG(during - before == sliced * want_per_decoder,
                  "%s: %d threads before %d decoders, %d with them (want %d for each of %d)", clip,
                  before, N, during, want_per_decoder, sliced);
    DF_EXPECT_MSG(after == before, "%s: %d threads before, %d after freeing", clip, before, after);
    av_frame_free(&f);
    t_clip_free(&c);
}

DF_TEST(FrameworkThreading, ThreadsPerDecoder)
{
    DfSched *s = t_sched("cost-local", 2, 20);
    DF_ASSERT(s);
    const DfThreading a = DF_THREADING_AUTO;
    count_threads(s, "h264_cabac_slices8.mkv", a, 7); /* thread_count 8: its slices */
    count_threads(s, "h264_cavlc_slices4.mkv", a, 3); /* thread_count 4 */
    /* An explicit slice mode without a count probes too. */
    count_threads(s, "h264_cabac_slices8.mkv", DF_THREADING_SLICE, 7);
    count_threads(s, "hevc_wpp8.mkv", a, 1);  /* thread_count 2 */
    count_threads(s, "mpeg2_prog.mkv", a, 1); /* 6 bands, opened with 2 */
    count_threads(s, "mpeg2_int.mkv", a, 1);  /* 9 bands (36 rows) */
    df_sched_unref(s);
}

/* With a stream for every worker, `auto` decodes an HD stream
 * single-threaded, and a taller one (which may need more than a core)
 * still with slice jobs; the streams are counted when the threading is
 * decided. */
DF_TEST(FrameworkThreading, StreamsOnEveryWorkerDecodeSingleThreaded)
{
    DfSched *s = t_sched("cost-local", 2, 20);
    DF_ASSERT(s);
    TClip c;
    DF_ASSERT(t_clip_load("mpeg2_prog.mkv", &c) == 0);
    expect_plan(s, &c, c.par, false, "slice", "thread_count");
    DfDecoder *other = NULL;
    DfError err = {0};
    DF_ASSERT(df_decoder_new(s, c.par, c.tb, NULL, &other, &err) == 0);
    expect_plan(s, &c, c.par, false, "none", "2 streams on 2 workers");
    AVCodecParameters *par = avcodec_parameters_alloc();
    avcodec_parameters_copy(par, c.par);
    par->height = 1088;
    expect_plan(s, &c, par, false, "none", "2 streams on 2 workers");
    par->height = 2160;
    expect_plan(s, &c, par, false, "slice", "thread_count");
    avcodec_parameters_free(&par);
    df_decoder_free(&other);
    expect_plan(s, &c, c.par, false, "slice", "thread_count");
    t_clip_free(&c);
    df_sched_unref(s);
}

/* MPEG-2 row bands follow the picture height (about 4 macroblock rows a
 * band, at most 16), not the worker count, up to 2 per worker on bigger
 * machines and libavcodec's 32 slice contexts.  The plan is made from the
 * stream's parameters, so a 1080-line height on the 360-line clip shows
 * the 1080p choice. */
DF_TEST(FrameworkThreading, Mpeg2BandsFollowThePictureHeight)
{
    TClip c;
    DF_ASSERT(t_clip_load("mpeg2_prog.mkv", &c) == 0);
    AVCodecParameters *par = avcodec_parameters_alloc();
    avcodec_parameters_copy(par, c.par);
    static const struct {
        int height, workers;
        const char *want;
    } cases[] = {
        {0, 1, "thread_count 6"},      /* the clip's own 360 lines: 23 rows / 4 */
        {0, 2, "thread_count 6"},      /* the same graph at 2 workers */
        {1080, 1, "thread_count 16"},  /* 68 rows / 4 = 17, at most 16 */
        {1080, 2, "thread_count 16"},  /* and at 2 workers */
        {1080, 12, "thread_count 24"}, /* 2 a worker */
        {1080, 24, "thread_count 32"}, /* libavcodec's slice contexts */
        {32, 1, "thread_count 2"},     /* 2 rows */
    };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        par->height = cases[k].height ? cases[k].height : c.par->height;
        DfSched *s = t_sched_jobs("fifo", cases[k].workers, 20, true);
        DF_ASSERT(s);
        expect_plan(s, &c, par, false, "slice", cases[k].want);
        df_sched_unref(s);
    }
    avcodec_parameters_free(&par);
    t_clip_free(&c);
}

/* Decode `clip` as an element does (send; on EAGAIN take one frame) and
 * return the latency the decoder reports at the end; *held is the most
 * packets ever sent beyond the one whose frame came out, i.e. what the
 * decoder really held. */
static int budget_decode(DfSched *s, const TClip *clip, DfThreading threading, int budget,
                         TSums *out, int *held, int *peak, char *mode, size_t mode_len)
{
    DfDecoderConfig cfg;
    df_decoder_config_init(&cfg);
    cfg.threading = threading;
    cfg.max_delay_frames = budget;
    DfDecoder *dec = NULL;
    DfError err = {0};
    int ret = df_decoder_new(s, clip->par, clip->tb, &cfg, &dec, &err);
    DF_EXPECT_MSG(ret == 0, "%s: %s", clip->name, err.msg);
    if (ret < 0)
        return -1;
    AVFrame *f = av_frame_alloc();
    int sent = 0, received = 0, reported = -1;
    *held = 0;
    *peak = 0;
    /* As a live source feeds it: a packet per frame period, and after each
     * send the frames df_decoder_receive_frame_in_time() gives.  A frame
     * still inside when the next packet is sent was held a period; the
     * most held (packets sent and not yet out, beyond what the decoder
     * reports at that moment) must not exceed the latency reported. */
    for (int i = 0; i <= clip->n_pkts && ret >= 0; i++) {
        const AVPacket *pkt = i < clip->n_pkts ? clip->pkts[i] : NULL;
        while ((ret = df_decoder_send_packet(dec, pkt)) == AVERROR(EAGAIN)) {
            if ((ret = df_decoder_receive_frame(dec, f)) == 0) {
                received++;
                t_sums_add(out, f);
            } else if (ret != AVERROR(EAGAIN)) {
                break;
            }
        }
        if (ret < 0 || !pkt)
            break;
        sent++;
        while ((ret = df_decoder_receive_frame_in_time(dec, f)) == 0) {
            received++;
            t_sums_add(out, f);
        }
        if (ret == AVERROR(EAGAIN))
            ret = 0;
        const int over = sent - received - df_decoder_latency_frames(dec);
        if (over > *held)
            *held = over;
        if (sent - received > *peak)
            *peak = sent - received;
    }
    while (ret >= 0 && (ret = df_decoder_receive_frame(dec, f)) == 0)
        t_sums_add(out, f);
    DF_EXPECT_MSG(ret == AVERROR_EOF, "%s: decode loop ended with %d", clip->name, ret);
    reported = df_decoder_latency_frames(dec);
    snprintf(mode, mode_len, "%s", df_decoder_threading(dec, NULL));
    av_frame_free(&f);
    df_decoder_free(&dec);
    return reported;
}

/* max_delay_frames bounds the delay the decoder adds beyond the codec's
 * reorder delay: frame threads first, then packets in flight.  For each
 * budget the output stays exact, the latency reported is what the budget
 * allows, and the decoder holds what it reports: never more, and as much
 * at some point (a figure above what it holds would make a live pipeline
 * wait for nothing). */
DF_TEST(FrameworkThreading, DelayBudgetBoundsTheLatency)
{
    DfSched *s = t_sched("cost-local", 2, 20);
    DF_ASSERT(s);
    static const struct {
        const char *clip;
        DfThreading threading;
        int budget, extra; /* latency beyond the budget-0 figure */
        const char *mode;
    } cases[] = {
        {"h264_cabac_slices8.mkv", DF_THREADING_AUTO, 0, 0, "slice"},
        {"h264_cabac_slices8.mkv", DF_THREADING_AUTO, 1, 1, "slice"},
        {"h264_cabac_slices8.mkv", DF_THREADING_AUTO, 5, 1, "slice"}, /* 2 in flight */
        {"h264_cabac_slices8.mkv", DF_THREADING_AUTO, -1, 1, "slice"},
        {"h264_single.mkv", DF_THREADING_AUTO, 0, 0, "none"},
        {"h264_single.mkv", DF_THREADING_AUTO, 1, 1, "frame"},  /* 2 threads, 1 in flight */
        {"h264_single.mkv", DF_THREADING_AUTO, 2, 2, "frame"},  /* and 2 in flight */
        {"h264_single.mkv", DF_THREADING_FRAME, 0, 0, "none"},  /* the budget wins */
        {"h264_single.mkv", DF_THREADING_AUTO, -1, 2, "frame"}, /* 2 workers, 2 in flight */
        {"mpeg2_prog.mkv", DF_THREADING_AUTO, 0, 0, "slice"},
        {"mpeg2_prog.mkv", DF_THREADING_AUTO, 1, 1, "slice"},
        {"mpeg2_prog.mkv", DF_THREADING_AUTO, -1, 1, "slice"},
        {"hevc_wpp8.mkv", DF_THREADING_AUTO, 0, 0, "slice"},
        {"hevc_wpp8.mkv", DF_THREADING_AUTO, 1, 1, "slice"},
        {"hevc_wpp8.mkv", DF_THREADING_AUTO, -1, 1, "slice"},
        {"hevc_nowpp.mkv", DF_THREADING_AUTO, 0, 0, "none"},
        {"hevc_nowpp.mkv", DF_THREADING_AUTO, 1, 1, "frame"},
        {"hevc_nowpp.mkv", DF_THREADING_AUTO, -1, 2, "frame"},
    };
    int base = -1;
    const char *base_clip = "";
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        /* libavcodec's frame threads are not instrumented (t_df_decode). */
        if (t_under_tsan() && strcmp(cases[c].mode, "slice") != 0)
            continue;
        TClip clip;
        DF_ASSERT(t_clip_load(cases[c].clip, &clip) == 0);
        TSums ref = {0}, got = {0};
        DF_ASSERT(t_ref_decode(&clip, NULL, AV_PIX_FMT_NONE, &ref) == 0);
        int held = 0, peak = 0;
        char mode[16];
        const int lat = budget_decode(s, &clip, cases[c].threading, cases[c].budget, &got, &held,
                                      &peak, mode, sizeof(mode));
        char msg[256] = "";
        DF_EXPECT_MSG(t_sums_compare(&ref, &got, msg, sizeof(msg)) == 0, "%s budget %d: %s",
                      cases[c].clip, cases[c].budget, msg);
        DF_EXPECT_MSG(strcmp(mode, cases[c].mode) == 0, "%s budget %d: threading %s, want %s",
                      cases[c].clip, cases[c].budget, mode, cases[c].mode);
        if (strcmp(base_clip, cases[c].clip) != 0) {
            base = lat; /* each clip's first case has budget 0 */
            base_clip = cases[c].clip;
        }
        DF_EXPECT_MSG(lat == base + cases[c].extra, "%s budget %d: latency %d frames, want %d",
                      cases[c].clip, cases[c].budget, lat, base + cases[c].extra);
        DF_EXPECT_MSG(held <= 0, "%s budget %d: held %d frames beyond the %d reported",
                      cases[c].clip, cases[c].budget, held, lat);
        DF_EXPECT_MSG(peak == lat, "%s budget %d: held at most %d frames, reported %d",
                      cases[c].clip, cases[c].budget, peak, lat);
        t_sums_free(&ref);
        t_sums_free(&got);
        t_clip_free(&clip);
    }
    df_sched_unref(s);
}

/* MPEG-2 opens with thread_count 2 and gets its band count after the
 * open: libavcodec sizes its slice contexts from thread_count at the first
 * picture and again at each sequence change (here 23, 36, then 23
 * macroblock rows), so every picture still runs as 6 band jobs in one
 * execute call, bit-exact, with one idle pool thread (a context sized
 * from the open's 2 would give 2 jobs a call). */
/* Decode `c` with slice threading asked for: bit-exact against `ref`,
 * and slice threading in use.  Returns t_df_decode's result. */
static int slice_decode_exact(DfSched *s, const TClip *c, const TSums *ref, TSums *got,
                              DfDecoderStats *st)
{
    DfDecoderConfig cfg;
    df_decoder_config_init(&cfg);
    cfg.threading = DF_THREADING_SLICE;
    char thr[16] = "", msg[256] = "";
    const int ret = t_df_decode(s, c, &cfg, got, st, thr, sizeof(thr));
    if (ret == 0) {
        DF_EXPECT_MSG(t_sums_compare(ref, got, msg, sizeof(msg)) == 0, "%s", msg);
        DF_EXPECT_MSG(!strcmp(thr, "slice"), "threading %s", thr);
    }
    return ret;
}

DF_TEST(FrameworkThreading, Mpeg2BandsAfterASequenceChange)
{
    TClip c;
    DF_ASSERT(t_clip_load("mpeg2_sizes.m2v", &c) == 0);
    TSums ref = {0}, got = {0};
    DF_ASSERT(t_ref_decode(&c, NULL, AV_PIX_FMT_NONE, &ref) == 0);
    int sizes = 1;
    for (int i = 1; i < ref.n; i++)
        sizes += ref.v[i].height != ref.v[i - 1].height;
    DF_EXPECT_MSG(sizes == 3, "%d sizes in the reference", sizes);
    DfSched *s = t_sched("cost-local", 2, 20);
    DF_ASSERT(s);
    DfDecoderStats st;
    DF_ASSERT(slice_decode_exact(s, &c, &ref, &got, &st) == 0);
    /* Pictures decoded but never returned (the reference's picture held
     * back at each sequence change) run their execute calls too. */
    DF_EXPECT_MSG(st.frames_decoded == (uint64_t)ref.n && st.slice_calls >= st.frames_decoded &&
                      st.slice_jobs == 6 * st.slice_calls,
                  "%llu pictures, %llu execute calls, %llu jobs (want 6 a call)",
                  (unsigned long long)st.frames_decoded, (unsigned long long)st.slice_calls,
                  (unsigned long long)st.slice_jobs);
    df_sched_unref(s);
    t_sums_free(&got);
    t_sums_free(&ref);
    t_clip_free(&c);
}

/* Slice threading asked for on one worker: its jobs run as nodes (points
 * where another stream's frame may run), not inline, and the pictures
 * stay bit-exact. */
DF_TEST(FrameworkThreading, SliceOnOneWorkerRunsJobsAsTasks)
{
    TClip c;
    DF_ASSERT(t_clip_load("h264_cabac_slices8.mkv", &c) == 0);
    TSums ref = {0}, got = {0};
    DF_ASSERT(t_ref_decode(&c, NULL, AV_PIX_FMT_NONE, &ref) == 0);
    DfSched *s = t_sched("cost-local", 1, 20);
    DF_ASSERT(s);
    DfDecoderStats st;
    DF_ASSERT(slice_decode_exact(s, &c, &ref, &got, &st) == 0);
    DF_EXPECT_MSG(st.slice_jobs > st.frames_decoded, "%llu jobs for %llu pictures",
                  (unsigned long long)st.slice_jobs, (unsigned long long)st.frames_decoded);
    DfStats ss;
    DF_ASSERT_EQ_INT(df_sched_stats(s, &ss), 0);
    DF_EXPECT_MSG(ss.total.jobs_inline == 0, "%llu batches inline",
                  (unsigned long long)ss.total.jobs_inline);
    df_stats_free(&ss);
    df_sched_unref(s);
    t_sums_free(&got);
    t_sums_free(&ref);
    t_clip_free(&c);
}

typedef struct Joiner {
    DfSched *s;
    bool join;
    DfLoad *load; /* the second stream's account */
} Joiner;

static void join_stream(void *ctx)
{
    Joiner *j = ctx;
    if (j->join)
        j->load = df_load_new(j->s, 30);
}

/* A stream alone on 2 workers chooses slice jobs (auto); once a second
 * stream is on the scheduler it runs them in order without nodes, as auto
 * would choose now (libavcodec cannot reopen), and its pictures stay
 * bit-exact.  Alone to the end, it keeps its job nodes. */
DF_TEST(FrameworkThreading, SliceJobsRunInOrderOnceEveryWorkerHasAStream)
{
    if (t_under_tsan())
        DF_SKIP("t_df_decode asks for slice threading under ThreadSanitizer, not auto");
    TClip c;
    DF_ASSERT(t_clip_load("h264_cabac_slices8.mkv", &c) == 0);
    TSums ref = {0};
    DF_ASSERT(t_ref_decode(&c, NULL, AV_PIX_FMT_NONE, &ref) == 0);
    for (int join = 0; join <= 1; join++) {
        DfSched *s = t_sched("cost-local", 2, 20);
        DF_ASSERT(s);
        Joiner j = {.s = s, .join = join};
        TSums got = {0};
        DfDecoderStats st;
        char thr[16] = "", msg[256] = "";
        DF_ASSERT(t_df_decode_then(s, &c, NULL, &got, &st, thr, sizeof(thr), join_stream, &j) == 0);
        DF_EXPECT_MSG(t_sums_compare(&ref, &got, msg, sizeof(msg)) == 0, "%s", msg);
        DF_EXPECT_MSG(!strcmp(thr, "slice"), "threading %s", thr);
        DfStats ss;
        DF_ASSERT_EQ_INT(df_sched_stats(s, &ss), 0);
        if (join)
            /* Every batch after the first packet's (at most a frame or two
             * in flight then). */
            DF_EXPECT_MSG(ss.total.jobs_inline + 2 >= st.slice_calls && st.slice_calls > 2,
                          "joined: %llu of %llu batches in order",
                          (unsigned long long)ss.total.jobs_inline,
                          (unsigned long long)st.slice_calls);
        else
            DF_EXPECT_MSG(ss.total.jobs_inline == 0, "alone: %llu batches in order",
                          (unsigned long long)ss.total.jobs_inline);
        df_stats_free(&ss);
        df_load_free(j.load);
        df_sched_unref(s);
        t_sums_free(&got);
    }
    t_sums_free(&ref);
    t_clip_free(&c);
}
