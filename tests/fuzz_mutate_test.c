/* The mutation runner: generated clips damaged in every way a network or a
 * disk damages them — bit flips, byte runs, truncation at every packet
 * boundary, dropped, duplicated and reordered packets — decoded through
 * dfmedia with every policy and 1-3 workers.  Expected: no crash, no hang
 * (a watchdog aborts a case that takes too long), and from the second
 * keyframe after the damage the output equals the clean decode again.
 *
 * The default suite runs DF_FUZZ_CASES (default 1500) cases; the "fuzz"
 * suite runs 10^5. */
#include "dftest.h"
#include "framework_util.h"
#include "fuzz_core.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const clips[] = {"h264_cabac_slices8.mkv", "h264_cavlc_slices4.mkv",
                                    "h264_mbaff.mkv",         "h264_single.mkv",
                                    "hevc_wpp8.mkv",          "hevc_wpp_slices.mkv",
                                    "mpeg2_prog.mkv",         "mpeg2_int.mkv"};
#define N_CLIPS ((int)(sizeof(clips) / sizeof(clips[0])))

enum Mut { M_TRUNCATE, M_BITFLIP, M_BYTERUN, M_DROP, M_DUP, M_SWAP, M_COUNT };
static const char *const mut_names[M_COUNT] = {"truncate", "bit-flip", "byte-run",
                                               "drop",     "duplicate", "reorder"};

static uint64_t rnd(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* ----------------------------------------------------------- watchdog */

static _Atomic int64_t deadline_ns;
static char case_desc[256];
static _Atomic bool watchdog_stop;

static void *watchdog(void *arg)
{
    while (!atomic_load(&watchdog_stop)) {
        usleep(100000);
        int64_t d = atomic_load(&deadline_ns);
        if (d && df_now_ns() > d) {
            fprintf(stderr, "fuzz: HANG in case %s\n", case_desc);
            abort();
        }
    }
    return NULL;
}

/* ------------------------------------------------------------ cases */

typedef struct Clip {
    TClip c;
    DfFuzzFrames clean;
    int *keys; /* packet indices of keyframes */
    int n_keys;
} Clip;

static int64_t key_pts_after(const Clip *cl, int after, int nth)
{
    for (int k = 0; k < cl->n_keys; k++)
        if (cl->keys[k] > after && --nth == 0)
            return cl->c.pkts[cl->keys[k]]->pts;
    return AV_NOPTS_VALUE;
}

static const DfFuzzFrame *find(const DfFuzzFrames *f, int64_t pts)
{
    for (int i = 0; i < f->n; i++)
        if (f->v[i].pts == pts)
            return &f->v[i];
    return NULL;
}

typedef struct Totals {
    long cases, frames, errors, resumed_checks, mismatches, per_mut[M_COUNT];
} Totals;

/* Build the damaged packet list for a case: returns its length and the
 * first packet index from which damage can propagate (-1: none). */
static int mutate(const Clip *cl, enum Mut m, uint64_t *seed, AVPacket **out, int *damaged_at)
{
    const int n = cl->c.n_pkts;
    AVPacket *const *in = cl->c.pkts;
    int k = 0, i = (int)(rnd(seed) % (uint64_t)n);
    *damaged_at = i;
    switch (m) {
    case M_TRUNCATE: /* the stream ends after packet i */
        for (int j = 0; j <= i; j++)
            out[k++] = av_packet_clone(in[j]);
        *damaged_at = -1;
        break;
    case M_BITFLIP:
    case M_BYTERUN:
        for (int j = 0; j < n; j++) {
            AVPacket *p = av_packet_clone(in[j]);
            if (j == i && p && av_packet_make_writable(p) == 0 && p->size > 0) {
                if (m == M_BITFLIP) {
                    int flips = 1 + (int)(rnd(seed) % 8);
                    for (int f = 0; f < flips; f++) {
                        uint64_t bit = rnd(seed) % ((uint64_t)p->size * 8);
                        p->data[bit / 8] ^= (uint8_t)(1u << (bit % 8));
                    }
                } else {
                    int len = 4 + (int)(rnd(seed) % 61), at = (int)(rnd(seed) % (uint64_t)p->size);
                    uint8_t v = (uint8_t)rnd(seed);
                    for (int b = at; b < at + len && b < p->size; b++)
                        p->data[b] = v;
                }
            }
            out[k++] = p;
        }
        break;
    case M_DROP:
        for (int j = 0; j < n; j++)
            if (j != i)
                out[k++] = av_packet_clone(in[j]);
        break;
    case M_DUP:
        for (int j = 0; j < n; j++) {
            out[k++] = av_packet_clone(in[j]);
            if (j == i)
                out[k++] = av_packet_clone(in[j]);
        }
        *damaged_at = i + 1;
        break;
    case M_SWAP:
        for (int j = 0; j < n; j++)
            out[k++] = av_packet_clone(in[j == i && i + 1 < n ? i + 1 : j == i + 1 ? i : j]);
        *damaged_at = i + 1;
        break;
    default:
        break;
    }
    return k;
}

static void run_cases(long n_cases, uint64_t seed0)
{
    /* Damage makes libavcodec talk a lot; the counts below say it all. */
    av_log_set_level(AV_LOG_FATAL);
    Clip cl[N_CLIPS];
    memset(cl, 0, sizeof(cl));
    DfSched *scheds[5][3] = {{0}};
    const char *const *pol = df_policy_names();
    int n_pol = 0;
    while (pol[n_pol] && n_pol < 5)
        n_pol++;
    for (int p = 0; p < n_pol; p++)
        for (int w = 0; w < 3; w++) {
            /* Kept for the whole run: they must park when idle (no poll mode),
             * or the idle ones would spin against the one decoding. */
            scheds[p][w] = t_sched(pol[p], w + 1, 20);
            DF_ASSERT(scheds[p][w]);
        }
    for (int c = 0; c < N_CLIPS; c++) {
        DF_ASSERT_MSG(t_clip_load(clips[c], &cl[c].c) == 0, "cannot load %s", clips[c]);
        DfFuzzResult r;
        df_fuzz_decode_packets(scheds[0][0], cl[c].c.par, cl[c].c.tb, DF_THREADING_NONE,
                               cl[c].c.pkts, cl[c].c.n_pkts, &r, &cl[c].clean);
        DF_ASSERT_MSG(r.frames > 0 && r.errors == 0, "%s: clean decode gave %d frames, %d errors",
                      clips[c], r.frames, r.errors);
        cl[c].keys = calloc((size_t)cl[c].c.n_pkts, sizeof(int));
        for (int i = 0; i < cl[c].c.n_pkts; i++)
            if (cl[c].c.pkts[i]->flags & AV_PKT_FLAG_KEY)
                cl[c].keys[cl[c].n_keys++] = i;
    }
    pthread_t wd;
    atomic_store(&watchdog_stop, false);
    pthread_create(&wd, NULL, watchdog, NULL);
    Totals t = {0};
    uint64_t seed = seed0;
    AVPacket **pk = malloc(sizeof(AVPacket *) * 4096);
    for (long ci = 0; ci < n_cases; ci++) {
        const int c = (int)(ci % N_CLIPS);
        const enum Mut m = (enum Mut)((ci / N_CLIPS) % M_COUNT);
        const int p = (int)((ci / (N_CLIPS * M_COUNT)) % (uint64_t)n_pol), w = (int)(rnd(&seed) % 3);
        /* Under TSan, slice jobs only: libavcodec's frame threads are not
         * instrumented, so their synchronisation is invisible (see
         * t_df_decode). */
        const DfThreading th = t_under_tsan()         ? DF_THREADING_SLICE
                               : rnd(&seed) % 8 == 0 ? DF_THREADING_FRAME
                                                     : DF_THREADING_AUTO;
        uint64_t case_seed = seed0 * 1000003u + (uint64_t)ci;
        int damaged_at;
        int n = mutate(&cl[c], m, &case_seed, pk, &damaged_at);
        snprintf(case_desc, sizeof(case_desc), "#%ld %s %s at packet %d, %s, %d workers, %s", ci,
                 clips[c], mut_names[m], damaged_at, pol[p], w + 1, df_threading_name(th));
        atomic_store(&deadline_ns, df_now_ns() + 30 * 1000000000ll);
        DfFuzzResult r;
        DfFuzzFrames got = {0};
        df_fuzz_decode_packets(scheds[p][w], cl[c].c.par, cl[c].c.tb, th, pk, n, &r, &got);
        atomic_store(&deadline_ns, 0);
        for (int i = 0; i < n; i++)
            av_packet_free(&pk[i]);
        t.cases++;
        t.per_mut[m]++;
        t.frames += r.frames;
        t.errors += r.errors + r.send_failures;
        /* Resumes at the next keyframe: everything from the second keyframe
         * after the damage equals the clean decode (the first one may still
         * differ: libavcodec conceals across it under slice threading). */
        int64_t from = damaged_at >= 0 ? key_pts_after(&cl[c], damaged_at, 2) : AV_NOPTS_VALUE;
        if (m == M_TRUNCATE) {
            /* A clean cut: whatever comes out is right. */
            for (int i = 0; i < got.n; i++) {
                const DfFuzzFrame *ref = find(&cl[c].clean, got.v[i].pts);
                t.resumed_checks++;
                if (!ref || memcmp(ref->md5, got.v[i].md5, 16)) {
                    t.mismatches++;
                    df_test_fail(__FILE__, __LINE__, false, "%s: frame pts %lld differs", case_desc,
                                 (long long)got.v[i].pts);
                    break;
                }
            }
        } else if (from != AV_NOPTS_VALUE) {
            for (int i = 0; i < cl[c].clean.n; i++) {
                if (cl[c].clean.v[i].pts < from)
                    continue;
                const DfFuzzFrame *x = find(&got, cl[c].clean.v[i].pts);
                t.resumed_checks++;
                if (!x || memcmp(x->md5, cl[c].clean.v[i].md5, 16)) {
                    t.mismatches++;
                    df_test_fail(__FILE__, __LINE__, false,
                                 "%s: frame pts %lld after the keyframe %s", case_desc,
                                 (long long)cl[c].clean.v[i].pts, x ? "differs" : "is missing");
                    break;
                }
            }
        }
        df_fuzz_frames_free(&got);
    }
    atomic_store(&watchdog_stop, true);
    pthread_join(wd, NULL);
    free(pk);
    printf("fuzz: %ld cases (", t.cases);
    for (int m = 0; m < M_COUNT; m++)
        printf("%s%s %ld", m ? ", " : "", mut_names[m], t.per_mut[m]);
    printf("), %ld frames, %ld errors reported, %ld frames checked after resync, "
           "%ld mismatches, 0 crashes, 0 hangs\n",
           t.frames, t.errors, t.resumed_checks, t.mismatches);
    for (int c = 0; c < N_CLIPS; c++) {
        t_clip_free(&cl[c].c);
        df_fuzz_frames_free(&cl[c].clean);
        free(cl[c].keys);
    }
    for (int p = 0; p < n_pol; p++)
        for (int w = 0; w < 3; w++)
            df_sched_unref(scheds[p][w]);
}

DF_TEST(Fuzz, MutatedClips)
{
    const char *env = getenv("DF_FUZZ_CASES");
    long n = env ? atol(env) : 1500;
    run_cases(n > 0 ? n : 1500, 0x5eed);
}
