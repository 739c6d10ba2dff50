/* Allocation failure, like dav1d's _mem fuzzer: this binary replaces
 * malloc and friends (glibc lets an executable interpose them) with
 * versions that fail the n-th allocation once armed, for every allocation
 * of the process — ours, libavcodec's, libavutil's.  For n across a whole
 * decode, the scheduler and the framework must return errors cleanly:
 * no crash, no hang (watchdog), and a clean decode afterwards.
 *
 * libavcodec 5.1 itself is not that robust everywhere: HEVC WPP slice
 * threading crashes and frame threading aborts on some failed allocations
 * (reproduced with FFmpeg's own threads and nothing of ours), so those two
 * run without libavcodec threads here.
 *
 * Not under ASan/TSan: their runtimes own malloc. */
#include "dftest.h"
#include "framework_util.h"
#include "fuzz_core.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HOOKED 0
#else
#define HOOKED 1
#endif

static _Atomic long fail_at = -1;
static _Atomic long n_allocs;
static _Atomic long n_failed;

__attribute__((unused)) static bool should_fail(void)
{
    long at = atomic_load_explicit(&fail_at, memory_order_relaxed);
    long c = atomic_fetch_add_explicit(&n_allocs, 1, memory_order_relaxed);
    if (at >= 0 && c == at) {
        atomic_fetch_add_explicit(&n_failed, 1, memory_order_relaxed);
        return true;
    }
    return false;
}

#if HOOKED
void *__libc_malloc(size_t);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);
void *__libc_memalign(size_t, size_t);

void *malloc(size_t n)
{
    if (should_fail()) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_malloc(n);
}

void *calloc(size_t a, size_t b)
{
    if (should_fail()) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_calloc(a, b);
}

void *realloc(void *p, size_t n)
{
    if (n && should_fail()) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_realloc(p, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
    if (should_fail())
        return ENOMEM;
    void *p = __libc_memalign(align, n);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

void *aligned_alloc(size_t align, size_t n)
{
    if (should_fail()) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_memalign(align, n);
}

void *memalign(size_t align, size_t n)
{
    if (should_fail()) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_memalign(align, n);
}
#endif

static void arm(long at)
{
    atomic_store(&n_allocs, 0);
    atomic_store(&fail_at, at);
}

static void disarm(void)
{
    atomic_store(&fail_at, -1);
}

/* -------------------------------------------------------- watchdog */

static _Atomic int64_t deadline_ns;
static char what[160];
static _Atomic bool wd_stop;

static void *watchdog(void *arg)
{
    while (!atomic_load(&wd_stop)) {
        usleep(100000);
        int64_t d = atomic_load(&deadline_ns);
        if (d && df_now_ns() > d) {
            fprintf(stderr, "alloc-fail: HANG: %s\n", what);
            abort();
        }
    }
    return NULL;
}

/* Allocations `fn` makes with nothing failing. */
static long count_allocs(void (*fn)(void *), void *arg)
{
    arm(-1);
    fn(arg);
    return atomic_load(&n_allocs);
}

/* Run fn with the n-th allocation failing for n in a sample of [0, total):
 * every n below `dense`, then `sparse` points spread over the rest. */
static long sweep(const char *name, void (*fn)(void *), void *arg, long total, long dense,
                  long sparse)
{
    long runs = 0;
    for (long k = 0;; k++) {
        long n = k < dense ? k : dense + (k - dense) * (total - dense) / (sparse > 0 ? sparse : 1);
        if (n >= total || (k >= dense && k - dense >= sparse))
            break;
        snprintf(what, sizeof(what), "%s with allocation %ld of %ld failing", name, n, total);
        atomic_store(&deadline_ns, df_now_ns() + 60 * 1000000000ll);
        arm(n);
        fn(arg);
        disarm();
        atomic_store(&deadline_ns, 0);
        runs++;
    }
    return runs;
}

/* ---------------------------------------------------------- scheduler */

static void sched_create(void *arg)
{
    DfSchedConfig cfg;
    df_sched_config_init(&cfg);
    cfg.n_workers = 2;
    cfg.policy = arg;
    DfSched *s = NULL;
    DfError err;
    if (df_sched_new(&cfg, &s, &err) == 0) {
        /* Some nodes too: slabs grow here. */
        DfGroup *g = df_group_new(s, 0);
        if (g) {
            for (int i = 0; i < 300; i++) {
                DfNode *n = df_node_new(s, &(DfNodeDesc){.fn = NULL, .group = g});
                if (!n)
                    break;
                df_node_discard(n);
                df_node_release(n);
            }
            df_sched_wait(s, g);
            df_group_release(g);
        }
        df_sched_unref(s);
    }
}

DF_TEST(AllocFail, SchedulerCreationAndNodes)
{
    if (!HOOKED)
        DF_SKIP("the sanitizer runtime owns malloc");
    pthread_t wd;
    atomic_store(&wd_stop, false);
    pthread_create(&wd, NULL, watchdog, NULL);
    /* The first scheduler loads the machine's topology for the process
     * (hwloc asserts on allocation failure while it registers its
     * components — outside our code); failures start after that. */
    sched_create((void *)"fifo");
    long runs = 0;
    for (const char *const *p = df_policy_names(); *p; p++) {
        long total = count_allocs(sched_create, (void *)*p);
        DF_EXPECT(total > 10);
        runs += sweep(*p, sched_create, (void *)*p, total, total, 0);
    }
    atomic_store(&wd_stop, true);
    pthread_join(wd, NULL);
    printf("alloc-fail: scheduler: %ld runs, %ld allocations failed, 0 crashes, 0 hangs\n", runs,
           atomic_load(&n_failed));
}

/* ------------------------------------------------------------- decode */

typedef struct Dec {
    TClip clip;
    DfSched *sched;
    const char *policy;
    DfThreading threading;
    int frames_last;
} Dec;

static void decode(void *arg)
{
    Dec *d = arg;
    DfFuzzResult r;
    df_fuzz_decode_packets(d->sched, d->clip.par, d->clip.tb, d->threading, d->clip.pkts,
                           d->clip.n_pkts, &r, NULL);
    d->frames_last = r.frames;
}

static void decode_fresh(void *arg)
{
    Dec *d = arg;
    DfSchedConfig cfg;
    df_sched_config_init(&cfg);
    cfg.n_workers = 2;
    cfg.policy = d->policy;
    long at = atomic_load(&fail_at);
    disarm();
    DfSched *s = NULL;
    if (df_sched_new(&cfg, &s, NULL) < 0)
        return;
    /* Re-arm relative to the decode: the scheduler's slabs are still
     * empty, so node, edge and group chunks are allocated in the run. */
    arm(at);
    DfFuzzResult r;
    df_fuzz_decode_packets(s, d->clip.par, d->clip.tb, d->threading, d->clip.pkts, d->clip.n_pkts,
                           &r, NULL);
    d->frames_last = r.frames;
    disarm();
    df_sched_unref(s);
}

static void clean_frames(Dec *d, int *frames)
{
    disarm();
    decode(d);
    *frames = d->frames_last;
}

DF_TEST(AllocFail, DecodeEveryClipKind)
{
    if (!HOOKED)
        DF_SKIP("the sanitizer runtime owns malloc");
    const struct {
        const char *clip, *policy;
        DfThreading th;
    } cases[] = {
        {"h264_cabac_slices8.mkv", "cost-local", DF_THREADING_SLICE},
        /* Not slice threading: libavcodec 5.1's HEVC WPP crashes when one of
         * its own allocations fails (FFmpeg's own slice threads do too,
         * with nothing of ours involved); single-threaded HEVC survives. */
        {"hevc_wpp8.mkv", "learned", DF_THREADING_NONE},
        {"mpeg2_prog.mkv", "steal", DF_THREADING_SLICE},
        /* Not frame threading: libavcodec 5.1's frame threads abort() when
         * some of their allocations fail (plain FFmpeg too). */
        {"h264_single.mkv", "fifo", DF_THREADING_NONE},
        {"h264_cavlc_slices4.mkv", "cost", DF_THREADING_AUTO},
    };
    /* Damage makes libavcodec talk a lot; the counts below say it all. */
    av_log_set_level(AV_LOG_FATAL);
    pthread_t wd;
    atomic_store(&wd_stop, false);
    pthread_create(&wd, NULL, watchdog, NULL);
    long runs = 0;
    atomic_store(&n_failed, 0);
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        Dec d = {.policy = cases[c].policy, .threading = cases[c].th};
        DF_ASSERT_MSG(t_clip_load(cases[c].clip, &d.clip) == 0, "cannot load %s", cases[c].clip);
        d.sched = t_sched(cases[c].policy, 2, 20);
        DF_ASSERT(d.sched);
        int want;
        clean_frames(&d, &want);
        long total = count_allocs(decode, &d);
        DF_EXPECT(total > 100);
        /* Every early allocation (open, first frame), then 150 spread. */
        runs += sweep(cases[c].clip, decode, &d, total, 120, 150);
        runs += sweep(cases[c].clip, decode_fresh, &d, total, 0, 40);
        /* And afterwards everything works again. */
        int again;
        clean_frames(&d, &again);
        DF_EXPECT_MSG(again == want, "%s: %d frames after the failures, %d before", cases[c].clip,
                      again, want);
        df_sched_unref(d.sched);
        t_clip_free(&d.clip);
    }
    atomic_store(&wd_stop, true);
    pthread_join(wd, NULL);
    printf("alloc-fail: decode: %ld runs, %ld allocations failed, 0 crashes, 0 hangs\n", runs,
           atomic_load(&n_failed));
}
