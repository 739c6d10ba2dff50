/* The scheduler under heavier load (suite "stress"): 10^7 nodes of random
 * DAGs, several threads building graphs at once, cancellation storms,
 * random poll times and park/wake storms (10^6 parks in suite "soak"). */
#include "dftest.h"
#include "dfsched.h"
#include "sched_util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

DF_TEST(SchedStress, RandomDag10M)
{
    df_test_random_dag_all((long)(10000000 * df_test_scale()));
}

typedef struct Builder {
    DfSched *s;
    int n;
    uint64_t seed;
    int bad;
} Builder;

static void *build_thread(void *p)
{
    Builder *b = p;
    Dag d;
    run_random_dag(b->s, b->n, b->seed, &d);
    b->bad = dag_check(&d) + atomic_load(&d.order_violations);
    dag_free(&d);
    return NULL;
}

/* Four outside threads build and wait on their own graphs at the same time
 * on one scheduler, as decoders sharing a scheduler do. */
DF_TEST(SchedStress, ConcurrentBuilders)
{
    const char *const *policies = df_policy_names();
    for (int p = 0; policies[p]; p++)
        for (int nw = 1; nw <= 4; nw += 3) {
            DfSched *s = df_test_sched(policies[p], nw, 5);
            DF_ASSERT(s);
            pthread_t th[4];
            Builder b[4];
            for (int i = 0; i < 4; i++) {
                b[i] = (Builder){s, (int)(50000 * df_test_scale()), (uint64_t)(i + 1) * 77, 0};
                pthread_create(&th[i], NULL, build_thread, &b[i]);
            }
            for (int i = 0; i < 4; i++) {
                pthread_join(th[i], NULL);
                DF_EXPECT_MSG(b[i].bad == 0, "%s/%d builder %d: %d bad nodes", policies[p], nw, i,
                              b[i].bad);
            }
            df_sched_unref(s);
        }
}

typedef struct Storm {
    _Atomic long ran, skipped;
} Storm;

static void storm_body(DfTask *t, void *arg)
{
    Storm *st = arg;
    atomic_fetch_add_explicit(&st->ran, 1, memory_order_relaxed);
}

static void storm_cancel(DfTask *t, void *arg)
{
    Storm *st = arg;
    atomic_fetch_add_explicit(&st->skipped, 1, memory_order_relaxed);
}

/* Frames cancelled at random moments: every node either runs or is skipped,
 * exactly once, and waits always return. */
DF_TEST(SchedStress, CancellationStorm)
{
    const char *const *policies = df_policy_names();
    uint64_t rng = 12345;
    for (int p = 0; policies[p]; p++) {
        DfSched *s = df_test_sched(policies[p], 3, (int)(df_test_rand(&rng) % 50));
        DF_ASSERT(s);
        Storm st = {0};
        long total = 0;
        for (int f = 0; f < (int)(400 * df_test_scale()); f++) {
            DfGroup *g = df_group_new(s, df_now_ns() + 1000000);
            DfNode *prev = NULL;
            int n = 1 + (int)(df_test_rand(&rng) % 40);
            for (int i = 0; i < n; i++) {
                DfNode *x = df_node_new(s, &(DfNodeDesc){.fn = storm_body, .cancel = storm_cancel,
                                                          .arg = &st, .group = g, .index = i});
                if (prev && (df_test_rand(&rng) & 1))
                    df_node_depend(x, prev, 4096);
                df_node_submit(x);
                if (prev)
                    df_node_release(prev);
                prev = x;
                if (df_test_rand(&rng) % 64 == 0)
                    df_group_cancel(g);
            }
            total += n;
            df_node_release(prev);
            if (df_test_rand(&rng) & 1)
                df_group_cancel(g);
            df_sched_wait(s, g);
            df_group_release(g);
        }
        DF_EXPECT_EQ_INT(atomic_load(&st.ran) + atomic_load(&st.skipped), total);
        df_sched_unref(s);
    }
}

/* ----------------------------------------------------- park / wake */

typedef struct ParkStorm {
    DfSched *s;
    int rounds;
    uint64_t seed;
    _Atomic int *done;
} ParkStorm;

typedef struct Tick {
    int spin;
    _Atomic int ran;
} Tick;

/* Rounds finished by all storm threads: the watchdog's sign of life. */
static _Atomic long storm_rounds;

static void tick_body(DfTask *t, void *arg)
{
    Tick *k = arg;
    for (int i = 0; i < k->spin; i++)
        __asm__ __volatile__("" ::: "memory");
    atomic_fetch_add_explicit(&k->ran, 1, memory_order_relaxed);
}

/* A task that waits for a node of its own: nested waits park too. */
static void nested_body(DfTask *t, void *arg)
{
    Tick *k = arg;
    DfSched *s = df_task_sched(t);
    DfGroup *g = df_group_new(s, 0);
    df_spawn(s, tick_body, k, g);
    df_sched_wait(s, g);
    df_group_release(g);
}

/* Submit, wait, pause, again: every round the workers run out of work and
 * park (poll 0), and the next round must wake them.  A lost wake-up hangs a
 * round; the watchdog turns that into a failure. */
static void *park_storm_thread(void *p)
{
    ParkStorm *st = p;
    uint64_t rng = st->seed;
    for (int r = 0; r < st->rounds; r++) {
        Tick k = {.spin = (int)(df_test_rand(&rng) % 2000)};
        DfGroup *g = df_group_new(st->s, 0);
        const int n = 1 + (int)(df_test_rand(&rng) % 3);
        for (int i = 0; i < n; i++)
            df_spawn(st->s, (df_test_rand(&rng) & 3) ? tick_body : nested_body, &k, g);
        df_sched_wait(st->s, g);
        df_group_release(g);
        if (atomic_load(&k.ran) != n)
            abort();
        atomic_fetch_add_explicit(&storm_rounds, 1, memory_order_relaxed);
        /* Random gaps: some rounds find the workers spinning, some parked,
         * some halfway. */
        const int gap = (int)(df_test_rand(&rng) % 64);
        for (int i = 0; i < gap * 100; i++)
            __asm__ __volatile__("" ::: "memory");
    }
    atomic_fetch_add(st->done, 1);
    return NULL;
}

/* A round takes milliseconds even under TSan: none finishing for this long
 * is a thread asleep beside queued work. */
#define STORM_STALL_S 120

/* Aborts when no round finishes for STORM_STALL_S: by progress, not by
 * the storm's total time, which the long run (DF_PARK_STORM_PARKS) sets. */
static void *watchdog(void *p)
{
    _Atomic int *stop = p;
    long seen = atomic_load(&storm_rounds);
    int still = 0;
    while (!atomic_load(stop)) {
        struct timespec ts = {1, 0};
        nanosleep(&ts, NULL);
        const long now = atomic_load(&storm_rounds);
        still = now == seen ? still + 1 : 0;
        seen = now;
        if (still >= STORM_STALL_S && !atomic_load(stop)) {
            fprintf(stderr, "park/wake storm: no round finished in %d s (a lost wake-up)\n",
                    STORM_STALL_S);
            abort();
        }
    }
    return NULL;
}

/* The long run's limit, under its meson timeout (1800 s): a storm that
 * parks too rarely to reach its count fails with the count it reached. */
#define STORM_LIMIT_S 1500

/* One pass is every policy at 2 and 3 workers, each for `rounds` rounds
 * from two threads (about 10^5 parks, 8 s here).  DF_PARK_STORM_PARKS=n
 * (suite "soak": 10^6) repeats passes with new seeds until n parks. */
DF_TEST(SchedStress, ParkWakeStorm)
{
    const char *const *policies = df_policy_names();
    const int rounds = (int)(40000 * df_test_scale());
    const char *want_env = getenv("DF_PARK_STORM_PARKS");
    const uint64_t want = want_env ? strtoull(want_env, NULL, 10) : 0;
    _Atomic int stop = 0;
    pthread_t dog;
    DF_ASSERT(pthread_create(&dog, NULL, watchdog, &stop) == 0);
    const int64_t t0 = df_now_ns(), limit = t0 + (int64_t)STORM_LIMIT_S * 1000000000;
    uint64_t parks = 0;
    int passes = 0;
    do {
        for (int p = 0; policies[p]; p++)
            for (int nw = 2; nw <= 3; nw++) {
                DfSched *s = df_test_sched(policies[p], nw, 0);
                DF_ASSERT(s);
                _Atomic int done = 0;
                ParkStorm st[2];
                pthread_t th[2];
                for (int i = 0; i < 2; i++) {
                    const uint64_t seed =
                        0x5eed + (uint64_t)(p * 16 + nw * 2 + i) + ((uint64_t)passes << 16);
                    st[i] = (ParkStorm){s, rounds, seed, &done};
                    DF_ASSERT(pthread_create(&th[i], NULL, park_storm_thread, &st[i]) == 0);
                }
                for (int i = 0; i < 2; i++)
                    pthread_join(th[i], NULL);
                DF_EXPECT_EQ_INT(atomic_load(&done), 2);
                DfStats stats;
                df_sched_stats(s, &stats);
                parks += stats.total.parks;
                df_stats_free(&stats);
                df_sched_unref(s);
            }
        passes++;
    } while (parks < want && df_now_ns() < limit);
    atomic_store(&stop, 1);
    pthread_join(dog, NULL);
    const double secs = (double)(df_now_ns() - t0) / 1e9;
    printf("park/wake storm: %llu parks in %.1f s (%d pass%s)\n", (unsigned long long)parks, secs,
           passes, passes == 1 ? "" : "es");
    /* The storm must really park: otherwise it tested nothing. */
    DF_EXPECT_MSG(parks > (uint64_t)rounds, "only %llu parks", (unsigned long long)parks);
    if (want)
        DF_EXPECT_MSG(parks >= want, "only %llu parks of %llu in %.0f s", (unsigned long long)parks,
                      (unsigned long long)want, secs);
}
