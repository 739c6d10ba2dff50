/* Exactness under stress: every policy, 1-8 workers (oversubscribed past
 * this machine's cores), random idle spin times including poll mode and
 * zero, several decoders at once on one scheduler: outputs stay bit-exact
 * against single-threaded libavcodec. */
#include "dftest.h"
#include "framework_util.h"

#include <pthread.h>
#include <string.h>

static const char *const clips[] = {"h264_cabac_slices8.mkv", "hevc_wpp8.mkv", "mpeg2_prog.mkv",
                                    "h264_cavlc_slices4.mkv"};
#define N ((int)(sizeof(clips) / sizeof(clips[0])))

typedef struct Job {
    DfSched *s;
    const TClip *clip;
    const TSums *ref;
    int bad;
    char msg[256];
} Job;

static void *decode_thread(void *p)
{
    Job *j = p;
    TSums got = {0};
    DfDecoderConfig cfg;
    df_decoder_config_init(&cfg);
    cfg.threading = DF_THREADING_SLICE;
    if (t_df_decode(j->s, j->clip, &cfg, &got, NULL, NULL, 0) < 0 ||
        t_sums_compare(j->ref, &got, j->msg, sizeof(j->msg)) != 0)
        j->bad = 1;
    t_sums_free(&got);
    return NULL;
}

DF_TEST(FrameworkStress, ExactEveryPolicyOneToEightWorkersRandomSpin)
{
    TClip c[N];
    TSums ref[N];
    memset(ref, 0, sizeof(ref));
    for (int i = 0; i < N; i++) {
        DF_ASSERT_MSG(t_clip_load(clips[i], &c[i]) == 0, "cannot load %s", clips[i]);
        DF_ASSERT(t_ref_decode(&c[i], NULL, AV_PIX_FMT_NONE, &ref[i]) == 0);
    }
    static const int spins[] = {-1, 0, 1, 5, 50, 500};
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    int decodes = 0;
    for (const char *const *p = df_policy_names(); *p; p++)
        for (int w = 1; w <= 8; w++) {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            int poll = spins[rng % 6];
            /* Poll mode with more workers than cores only wastes the cores
             * the decoding workers need; keep it to the real core count. */
            if (poll < 0 && w > 2)
                poll = 0;
            DfSched *s = t_sched(*p, w, poll);
            DF_ASSERT(s);
            /* All clips at once: decoders sharing the scheduler. */
            Job jobs[N];
            pthread_t th[N];
            for (int i = 0; i < N; i++) {
                jobs[i] = (Job){.s = s, .clip = &c[i], .ref = &ref[i]};
                pthread_create(&th[i], NULL, decode_thread, &jobs[i]);
            }
            for (int i = 0; i < N; i++) {
                pthread_join(th[i], NULL);
                DF_EXPECT_MSG(!jobs[i].bad, "%s, %d workers, poll %d us, %s: %s", *p, w, poll,
                              clips[i], jobs[i].msg);
                decodes++;
            }
            df_sched_unref(s);
        }
    printf("stress: %d concurrent decodes bit-exact\n", decodes);
    for (int i = 0; i < N; i++) {
        t_clip_free(&c[i]);
        t_sums_free(&ref[i]);
    }
}
