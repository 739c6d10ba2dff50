/* Background work (scheduler/background.c): nodes due at or past
 * DF_DEADLINE_BACKGROUND run after every ordinary node, by their own
 * deadlines; a task waiting for a background group runs its nodes itself;
 * parked workers wake for background work.  The scenarios order work
 * behind a gate, so no bound here depends on the machine's speed. */
#include "dftest.h"
#include "dfsched.h"
#include "sched_util.h"

#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#define MS 1000000ll

typedef struct Order {
    _Atomic int next;
    int at[8]; /* position each node ran at */
} Order;

typedef struct Mark {
    Order *o;
    int id;
} Mark;

static void mark(DfTask *t, void *arg)
{
    (void)t;
    Mark *m = arg;
    m->o->at[m->id] = atomic_fetch_add(&m->o->next, 1);
}

DF_TEST(SchedBackground, RunsAfterOrdinaryWorkByDeadline)
{
    const char *const *pol = df_policy_names();
    for (int p = 0; pol[p]; p++) {
        DfSched *s = df_test_sched(pol[p], 1, 10);
        DF_ASSERT(s);
        DfTestGate blk = {0};
        DfGroup *g = df_group_new(s, DF_NO_DEADLINE);
        df_test_hold_worker(s, &blk, g);
        /* Made ready in this order while the only worker is held:
         * background first, so that arrival order cannot explain the
         * result.  Ordinary: due in a second (a far lane, as background
         * would be by its slack) and without a deadline. */
        const int64_t t0 = df_now_ns();
        const int64_t due[5] = {
            df_deadline_background(t0 + 30 * MS, t0),             /* 0: background, last */
            df_deadline_background(DF_NO_DEADLINE, t0 + 20 * MS), /* 1: none: at "now" */
            df_deadline_background(t0 + 10 * MS, t0),             /* 2: background, first */
            t0 + 1000 * MS,                                       /* 3: ordinary */
            DF_NO_DEADLINE,                                       /* 4: none */
        };
        Order o = {0};
        Mark m[5];
        for (int i = 0; i < 5; i++) {
            m[i] = (Mark){&o, i};
            DfNode *n = df_node_new(
                s, &(DfNodeDesc){
                       .fn = mark, .arg = &m[i], .module = -1, .group = g, .deadline = due[i]});
            DF_ASSERT(n);
            df_node_submit(n);
            df_node_release(n);
        }
        atomic_store(&blk.open, 1);
        df_sched_wait(s, g);
        char got[64];
        snprintf(got, sizeof(got), "%d %d %d %d %d", o.at[0], o.at[1], o.at[2], o.at[3], o.at[4]);
        /* Ordinary work first (by deadline), then background work by
         * its deadline. */
        DF_EXPECT_MSG(o.at[3] == 0 && o.at[4] == 1 && o.at[2] == 2 && o.at[1] == 3 && o.at[0] == 4,
                      "%s: nodes 0-4 ran at positions %s, want 4 3 2 0 1", pol[p], got);
        df_group_release(g);
        df_sched_unref(s);
    }
}

/* ------------------------------------------------------------------ */

typedef struct Hog {
    DfTestGate gate;
    _Atomic int released; /* 1: by the waiter; 2: by the timeout */
    _Atomic int jobs_done, jobs_elsewhere;
    _Atomic int waiter_worker;
} Hog;

/* Holds its worker until the background waiter is done (or 10 s). */
static void hog(DfTask *t, void *arg)
{
    (void)t;
    Hog *h = arg;
    atomic_store(&h->gate.started, 1);
    const int64_t until = df_now_ns() + 10000 * MS;
    while (!atomic_load(&h->released))
        if (df_now_ns() > until)
            atomic_store(&h->released, 2);
}

static void job(DfTask *t, void *arg)
{
    Hog *h = arg;
    if (df_task_worker(t) != atomic_load(&h->waiter_worker))
        atomic_fetch_add(&h->jobs_elsewhere, 1);
    atomic_fetch_add(&h->jobs_done, 1);
}

/* A background task that makes background nodes of its own and waits. */
static void bg_waiter(DfTask *t, void *arg)
{
    Hog *h = arg;
    DfSched *s = df_task_sched(t);
    atomic_store(&h->waiter_worker, df_task_worker(t));
    const int64_t now = df_now_ns();
    DfGroup *g = df_group_new(s, df_deadline_background(now, now));
    for (int i = 0; i < 3; i++) {
        DfNode *n = df_node_new(s, &(DfNodeDesc){.fn = job, .arg = h, .module = -1, .group = g});
        df_node_submit(n);
        df_node_release(n);
    }
    df_sched_wait(s, g);
    df_group_release(g);
    int expected = 0;
    atomic_compare_exchange_strong(&h->released, &expected, 1);
}

DF_TEST(SchedBackground, WaitingTaskRunsItsOwnBackgroundNodes)
{
    const char *const *pol = df_policy_names();
    for (int p = 0; pol[p]; p++) {
        DfSched *s = df_test_sched(pol[p], 2, 10);
        DF_ASSERT(s);
        Hog h = {0};
        atomic_store(&h.waiter_worker, -1);
        DfGroup *g = df_group_new(s, DF_NO_DEADLINE);
        df_spawn(s, hog, &h, g);
        while (!atomic_load(&h.gate.started))
            ;
        /* The other worker is the only one free: it takes the background
         * task, and the task's nodes go to the background queue, where
         * only it can run them while the hog holds the first worker. */
        const int64_t now = df_now_ns();
        DfNode *w = df_node_new(s, &(DfNodeDesc){.fn = bg_waiter,
                                                 .arg = &h,
                                                 .module = -1,
                                                 .group = g,
                                                 .deadline = df_deadline_background(now, now)});
        df_node_submit(w);
        df_node_release(w);
        df_sched_wait(s, g);
        DF_EXPECT_MSG(atomic_load(&h.released) == 1,
                      "%s: the waiter never finished its background nodes (hog timed out)", pol[p]);
        DF_EXPECT_EQ_INT(atomic_load(&h.jobs_done), 3);
        DF_EXPECT_EQ_INT(atomic_load(&h.jobs_elsewhere), 0);
        df_group_release(g);
        df_sched_unref(s);
    }
}

/* ------------------------------------------------------------------ */

static void count(DfTask *t, void *arg)
{
    (void)t;
    atomic_fetch_add((_Atomic int *)arg, 1);
}

DF_TEST(SchedBackground, ParkedWorkersWakeForBackgroundWork)
{
    /* poll 0: a worker parks as soon as it finds nothing; a lost wake
     * leaves the node queued and the timed wait fails. */
    const int rounds = (int)(2000 * df_test_scale()) + 10;
    for (int nw = 1; nw <= 2; nw++) {
        DfSched *s = df_test_sched("cost-local", nw, 0);
        DF_ASSERT(s);
        uint64_t rng = 0x5eedull + (uint64_t)nw;
        _Atomic int ran = 0;
        int lost = 0;
        for (int r = 0; r < rounds && lost == 0; r++) {
            if (df_test_rand(&rng) % 4 == 0) {
                const struct timespec ts = {0, (long)(df_test_rand(&rng) % 200000)};
                nanosleep(&ts, NULL); /* let the workers park */
            }
            const int64_t now = df_now_ns();
            DfGroup *g = df_group_new(s, df_deadline_background(now + (r % 3) * MS, now));
            DfNode *n =
                df_node_new(s, &(DfNodeDesc){.fn = count, .arg = &ran, .module = -1, .group = g});
            df_node_submit(n);
            df_node_release(n);
            if (!df_sched_wait_until(s, g, df_now_ns() + 5000 * MS))
                lost++;
            df_group_release(g);
        }
        DF_EXPECT_MSG(lost == 0, "%d workers: a background node waited 5 s with workers parked",
                      nw);
        df_sched_unref(s);
    }
}
