/* Measured load per stream (scheduler/load.c): a node counts its self
 * time for its account, a body that helps while waiting does not count the
 * nodes it ran, slice jobs count for the stream that runs the batch, and
 * the per-frame average and the scheduler's sum follow from the counts.
 * No bound here depends on the machine's speed or load: a lower bound is
 * a spin the body itself timed on the same clock, an upper bound the wall
 * time around everything, which self times partition on one worker. */
#include "dftest.h"
#include "dfsched.h"
#include "sched_util.h"

#include <stdatomic.h>

#define MS 1000000ll

static void spin_ns(int64_t ns)
{
    const int64_t until = df_now_ns() + ns;
    while (df_now_ns() < until)
        ;
}

static void spin_body(DfTask *t, void *arg)
{
    (void)t;
    spin_ns(*(const int64_t *)arg);
}

/* Run one node of `desc` from outside and wait for it. */
static void run_one(DfSched *s, DfNodeDesc d)
{
    DfGroup *g = df_group_new(s, DF_NO_DEADLINE);
    d.group = g;
    d.module = -1;
    DfNode *n = df_node_new(s, &d);
    DF_ASSERT(n != NULL);
    df_node_submit(n);
    df_node_release(n);
    df_sched_wait(s, g);
    df_group_release(g);
}

DF_TEST(SchedLoad, SpinCountsItsTime)
{
    DfSched *s = df_test_sched(NULL, 1, 50);
    DF_ASSERT(s != NULL);
    DfLoad *a = df_load_new(s, 30.0);
    DfLoad *idle = df_load_new(s, 30.0);
    DF_ASSERT(a && idle);
    int64_t spin = 20 * MS;
    const int64_t t0 = df_now_ns();
    run_one(s, (DfNodeDesc){.fn = spin_body, .arg = &spin, .load = a});
    const int64_t wall = df_now_ns() - t0;
    const uint64_t ns = df_load_total_ns(a);
    DF_EXPECT_MSG(ns >= (uint64_t)spin, "counted %llu ns for a %lld ns spin",
                  (unsigned long long)ns, (long long)spin);
    DF_EXPECT_MSG(ns <= (uint64_t)wall, "counted %llu ns in %lld ns", (unsigned long long)ns,
                  (long long)wall);
    /* A node without an account counts for none. */
    run_one(s, (DfNodeDesc){.fn = spin_body, .arg = &spin});
    DF_EXPECT(df_load_total_ns(a) == ns);
    DF_EXPECT(df_load_total_ns(idle) == 0);
    df_load_free(a);
    df_load_free(idle);
    df_sched_unref(s);
}

/* ------------------------------------------------------------- nesting */

typedef struct Nest {
    DfLoad *inner_load; /* NULL: the inner node has no account */
    int64_t outer_spin, inner_spin;
} Nest;

/* Spins, waits for a node of another account (which this worker runs
 * while it waits: it is the only one), spins again. */
static void nest_outer(DfTask *t, void *arg)
{
    Nest *n = arg;
    DfSched *s = df_task_sched(t);
    spin_ns(n->outer_spin);
    DfGroup *g = df_group_new(s, DF_NO_DEADLINE);
    DfNode *in = df_node_new(s, &(DfNodeDesc){.fn = spin_body,
                                              .arg = &n->inner_spin,
                                              .module = -1,
                                              .group = g,
                                              .load = n->inner_load});
    df_node_submit(in);
    df_node_release(in);
    df_sched_wait(s, g);
    df_group_release(g);
    spin_ns(n->outer_spin);
}

DF_TEST(SchedLoad, NestedWaitNotCountedTwice)
{
    DfSched *s = df_test_sched(NULL, 1, 50);
    DF_ASSERT(s != NULL);
    DfLoad *a = df_load_new(s, 30.0);
    DfLoad *b = df_load_new(s, 30.0);
    DF_ASSERT(a && b);
    Nest n = {.inner_load = b, .outer_spin = 5 * MS, .inner_spin = 30 * MS};
    const int64_t t0 = df_now_ns();
    run_one(s, (DfNodeDesc){.fn = nest_outer, .arg = &n, .load = a});
    const int64_t wall = df_now_ns() - t0;
    const uint64_t na = df_load_total_ns(a), nb = df_load_total_ns(b);
    DF_EXPECT_MSG(nb >= (uint64_t)n.inner_spin, "inner counted %llu ns", (unsigned long long)nb);
    DF_EXPECT_MSG(na >= (uint64_t)(2 * n.outer_spin), "outer counted %llu ns",
                  (unsigned long long)na);
    /* Counted twice, the outer would hold the inner's 30 ms as well. */
    DF_EXPECT_MSG(na + nb <= (uint64_t)wall, "outer %llu + inner %llu ns > wall %lld ns",
                  (unsigned long long)na, (unsigned long long)nb, (long long)wall);
    df_load_free(a);
    df_load_free(b);
    df_sched_unref(s);
}

/* A nested node without an account is not the outer body's time either. */
DF_TEST(SchedLoad, NestedUnaccountedNotCounted)
{
    DfSched *s = df_test_sched(NULL, 1, 50);
    DF_ASSERT(s != NULL);
    DfLoad *a = df_load_new(s, 30.0);
    DF_ASSERT(a != NULL);
    Nest n = {.inner_load = NULL, .outer_spin = 2 * MS, .inner_spin = 40 * MS};
    const int64_t t0 = df_now_ns();
    run_one(s, (DfNodeDesc){.fn = nest_outer, .arg = &n, .load = a});
    const int64_t wall = df_now_ns() - t0;
    const uint64_t na = df_load_total_ns(a);
    /* The inner node inherits the outer's account (created in its body). */
    DF_EXPECT_MSG(na >= (uint64_t)(n.inner_spin + 2 * n.outer_spin), "counted %llu ns",
                  (unsigned long long)na);
    DF_EXPECT(na <= (uint64_t)wall);
    df_load_free(a);
    df_sched_unref(s);
}

/* ------------------------------------------------------------------ jobs */

typedef struct JobRun {
    int64_t job_spin;
    int n_jobs;
} JobRun;

static void job_fn(void *ctx, int jobnr, int threadnr)
{
    (void)jobnr;
    (void)threadnr;
    spin_ns(((const JobRun *)ctx)->job_spin);
}

static void jobs_body(DfTask *t, void *arg)
{
    JobRun *r = arg;
    DfJobs jobs = {.n_jobs = r->n_jobs, .fn = job_fn, .ctx = r, .module = -1};
    df_jobs_run(df_task_sched(t), &jobs);
}

static void jobs_inherit(int n_workers)
{
    DfSched *s = df_test_sched(NULL, n_workers, 50);
    DF_ASSERT(s != NULL);
    DfLoad *a = df_load_new(s, 30.0);
    DF_ASSERT(a != NULL);
    JobRun r = {.job_spin = 5 * MS, .n_jobs = 6};
    const int64_t t0 = df_now_ns();
    run_one(s, (DfNodeDesc){.fn = jobs_body, .arg = &r, .load = a});
    const int64_t wall = df_now_ns() - t0;
    const uint64_t na = df_load_total_ns(a);
    /* Every job's spin counts, on whichever worker it ran. */
    DF_EXPECT_MSG(na >= (uint64_t)(r.n_jobs * r.job_spin), "%d workers: counted %llu ns", n_workers,
                  (unsigned long long)na);
    DF_EXPECT(na <= (uint64_t)(wall * n_workers));
    df_load_free(a);
    df_sched_unref(s);
}

DF_TEST(SchedLoad, JobsInheritTheAccount1)
{
    jobs_inherit(1);
}

DF_TEST(SchedLoad, JobsInheritTheAccount2)
{
    jobs_inherit(2);
}

/* ------------------------------------------------------- frames and sum */

DF_TEST(SchedLoad, PerFrameAndSchedulerSum)
{
    DfSched *s = df_test_sched(NULL, 2, 50);
    DF_ASSERT(s != NULL);
    DfSchedLoad sl;
    df_sched_load(s, &sl);
    DF_EXPECT(sl.capacity == 2.0);
    DF_EXPECT(sl.n_admitted == 0 && sl.n_pending == 0);

    DF_EXPECT_EQ_INT(df_sched_n_streams(s), 0);
    DfLoad *a = df_load_new(s, 50.0);
    DfLoad *b = df_load_new(s, 0.0);
    DF_ASSERT(a && b);
    DF_EXPECT_EQ_INT(df_sched_n_streams(s), 2);
    DF_EXPECT(df_load_ns_per_frame(a) == 0.0 && df_load_cores(a) == 0.0);
    int64_t spin = 2 * MS;
    for (int f = 0; f < 20; f++) {
        run_one(s, (DfNodeDesc){.fn = spin_body, .arg = &spin, .load = a});
        df_load_frame_done(a);
        run_one(s, (DfNodeDesc){.fn = spin_body, .arg = &spin, .load = b});
        df_load_frame_done(b);
    }
    DF_EXPECT(df_load_frames(a) == 20);
    const double npf = df_load_ns_per_frame(a);
    DF_EXPECT_MSG(npf >= (double)spin, "%.0f ns per frame", npf);
    /* The window's mean: at most the whole total over the window. */
    DF_EXPECT(npf * 16 <= (double)df_load_total_ns(a));
    const double ca = df_load_cores(a);
    DF_EXPECT_MSG(ca > 0.99 * npf * 50.0 / 1e9 && ca < 1.01 * npf * 50.0 / 1e9,
                  "%.4f cores for %.0f ns per frame at 50 fps", ca, npf);
    /* Unknown rate: the share of wall time the frames took (<= 1 here:
     * one node at a time). */
    const double cb = df_load_cores(b);
    DF_EXPECT_MSG(cb > 0.0 && cb <= 1.0, "%.4f cores", cb);

    df_load_set_admitted(a, true);
    df_sched_load(s, &sl);
    DF_EXPECT(sl.n_admitted == 1 && sl.n_pending == 1);
    DF_EXPECT(sl.admitted == df_load_cores(a));
    DF_EXPECT(sl.pending == df_load_cores(b));
    df_load_free(b);
    df_sched_load(s, &sl);
    DF_EXPECT(sl.n_pending == 0);
    DF_EXPECT_EQ_INT(df_sched_n_streams(s), 1);

    /* Another scheduler's accounts are not this one's. */
    DfSched *s2 = df_test_sched(NULL, 1, 50);
    DF_ASSERT(s2 != NULL);
    df_sched_load(s2, &sl);
    DF_EXPECT(sl.n_admitted == 0 && sl.capacity == 1.0);
    DF_EXPECT_EQ_INT(df_sched_n_streams(s2), 0);
    df_sched_unref(s2);
    df_load_free(a);
    df_sched_unref(s);
}

/* Time a stream takes outside the workers (its application thread, on
 * the same cores) joins its worker time: per frame, in the average and in
 * cores, exactly what was added on top of the nodes' own time. */
DF_TEST(SchedLoad, TimeOutsideTheWorkersCounts)
{
    DfSched *s = df_test_sched(NULL, 1, 50);
    DF_ASSERT(s != NULL);
    DfLoad *a = df_load_new(s, 25.0);
    DF_ASSERT(a);
    for (int f = 0; f < 20; f++) {
        df_load_add_ns(a, 3 * MS);
        df_load_frame_done(a);
    }
    DF_EXPECT_MSG(df_load_ns_per_frame(a) == 3.0 * MS, "%.0f ns per frame",
                  df_load_ns_per_frame(a));
    DF_EXPECT_MSG(df_load_cores(a) > 0.0749 && df_load_cores(a) < 0.0751, "%.4f cores",
                  df_load_cores(a));
    /* With a node's time: the sum. */
    int64_t spin = 1 * MS;
    const uint64_t before = df_load_total_ns(a);
    run_one(s, (DfNodeDesc){.fn = spin_body, .arg = &spin, .load = a});
    df_load_add_ns(a, 3 * MS);
    DF_EXPECT(df_load_total_ns(a) >= before + (uint64_t)(4 * MS));
    df_load_add_ns(NULL, 1); /* no account: nothing */
    df_load_free(a);
    df_sched_unref(s);
}

static void frames(DfLoad *l, int n, int64_t ns)
{
    for (int f = 0; f < n; f++) {
        df_load_add_ns(l, (uint64_t)ns);
        df_load_frame_done(l);
    }
}

/* A stream is judged by the streams of its class on its scheduler that
 * were measured over a whole window (16 frames), itself excepted: not by
 * streams with fewer frames, of another class or on another scheduler. */
DF_TEST(SchedLoad, ClassEstimateFromStreamsMeasuredWhole)
{
    DfSched *s = df_test_sched(NULL, 1, 50), *s2 = df_test_sched(NULL, 1, 50);
    DF_ASSERT(s != NULL && s2 != NULL);
    DfLoad *a = df_load_new(s, 25.0), *b = df_load_new(s, 25.0), *c = df_load_new(s, 25.0),
           *d = df_load_new(s, 25.0), *e = df_load_new(s2, 25.0);
    DF_ASSERT(a && b && c && d && e);
    df_load_set_class(a, 1);
    df_load_set_class(b, 1);
    df_load_set_class(c, 1);
    df_load_set_class(d, 2);
    df_load_set_class(e, 1);
    frames(a, 20, 3 * MS); /* a whole window */
    frames(b, 15, 1 * MS); /* one frame short */
    frames(d, 20, 9 * MS); /* another class */
    frames(e, 20, 7 * MS); /* another scheduler */

    int n = -1;
    double v = df_load_class_ns_per_frame(c, &n);
    DF_EXPECT_MSG(v == 3.0 * MS && n == 1, "c: %.0f ns per frame over %d streams", v, n);
    /* a has no other measured stream of its class (b is short). */
    v = df_load_class_ns_per_frame(a, &n);
    DF_EXPECT_MSG(v == 0.0 && n == 0, "a: %.0f ns per frame over %d streams", v, n);
    /* b's 16th frame makes it count: the mean of a and b. */
    frames(b, 1, 1 * MS);
    v = df_load_class_ns_per_frame(c, &n);
    DF_EXPECT_MSG(v == 2.0 * MS && n == 2, "c: %.0f ns per frame over %d streams", v, n);
    DF_EXPECT(df_load_class_ns_per_frame(a, NULL) == 1.0 * MS);
    /* No class: no estimate. */
    df_load_set_class(c, 0);
    v = df_load_class_ns_per_frame(c, &n);
    DF_EXPECT_MSG(v == 0.0 && n == 0, "classless c: %.0f ns per frame over %d streams", v, n);
    df_load_free(e);
    df_load_free(d);
    df_load_free(c);
    df_load_free(b);
    df_load_free(a);
    df_sched_unref(s2);
    df_sched_unref(s);
}

DF_TEST(SchedLoad, ProbationRanksFollowArrival)
{
    DfSched *s = df_test_sched("cost-local", 1, 10);
    DF_ASSERT(s);
    DfSched *other = df_test_sched("cost-local", 1, 10);
    DF_ASSERT(other);
    DfLoad *l[5];
    for (int i = 0; i < 5; i++)
        l[i] = df_load_new(s, 25.0);
    DfLoad *elsewhere = df_load_new(other, 25.0);
    /* Alone: nobody to run behind, ordinary work. */
    DF_EXPECT_EQ_INT((int)df_load_set_probation(l[0], true), 0);
    /* Then in arrival order; another scheduler's streams do not count. */
    DF_EXPECT_EQ_INT((int)df_load_set_probation(l[1], true), 1);
    DF_EXPECT_EQ_INT((int)df_load_set_probation(l[2], true), 2);
    DF_EXPECT_EQ_INT((int)df_load_set_probation(elsewhere, true), 0);
    /* Admitted and off probation: rank 0. */
    df_load_set_admitted(l[0], true);
    DF_EXPECT_EQ_INT((int)df_load_set_probation(l[0], false), 0);
    DF_EXPECT_EQ_INT((int)df_load_set_probation(l[1], false), 0);
    /* A newcomer goes behind every stream still on probation (l[2]). */
    DF_EXPECT_EQ_INT((int)df_load_set_probation(l[3], true), 3);
    df_load_free(l[2]);
    df_load_free(l[3]);
    /* Nobody on probation, but an admitted stream to protect. */
    DF_EXPECT_EQ_INT((int)df_load_set_probation(l[4], true), 1);
    df_load_free(l[0]);
    df_load_free(l[1]);
    df_load_free(l[4]);
    df_load_free(elsewhere);
    df_sched_unref(other);
    df_sched_unref(s);
}
