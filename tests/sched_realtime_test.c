/* The scheduler's real-time rules, each as a scenario that broke them
 * before: deadlines order a worker's backlog, a task that waits is not
 * trapped under unrelated work, a node placed on a busy worker is taken by
 * a parked one, an inbox keeps its deadline order when a thief takes part
 * of it, and a group is not done while its nodes are still being added.
 * Time bounds are generous: each scenario's failure is a multiple of the
 * bound. */
#include "dftest.h"
#include "dfsched.h"
#include "sched_util.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MS 1000000ll

static void spin_ns(int64_t ns)
{
    const int64_t until = df_now_ns() + ns;
    while (df_now_ns() < until)
        ;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {0, (long)ms * 1000000L};
    nanosleep(&ts, NULL);
}

/* ------------------------------------------------------------- EDF */

typedef struct Stamp {
    int64_t body_ns;
    _Atomic int64_t start, end;
} Stamp;

static void stamped(DfTask *t, void *arg)
{
    Stamp *s = arg;
    atomic_store(&s->start, df_now_ns());
    spin_ns(s->body_ns);
    atomic_store(&s->end, df_now_ns());
}

typedef struct TwoStreams {
    Stamp a, b;
    DfGroup *ga, *gb;
    int64_t a_due_ns; /* A is due this long after t0, B 100 ms after */
    int64_t t0;
    bool from_outside;
} TwoStreams;

static void submit_stamped(DfSched *s, Stamp *st, DfGroup *g, int64_t deadline)
{
    DfNode *n = df_node_new(
        s, &(DfNodeDesc){.fn = stamped, .arg = st, .module = -1, .group = g, .deadline = deadline});
    df_node_submit(n);
    df_node_release(n);
}

/* Stream B's node (due in 100 ms) is made ready before stream A's (due
 * sooner), while the only worker is busy. */
static void make_two(DfSched *s, TwoStreams *ts)
{
    ts->t0 = df_now_ns();
    submit_stamped(s, &ts->b, ts->gb, ts->t0 + 100 * MS);
    submit_stamped(s, &ts->a, ts->ga, ts->t0 + ts->a_due_ns);
}

static void make_two_task(DfTask *t, void *arg)
{
    make_two(df_task_sched(t), arg);
    spin_ns(2 * MS); /* the two wait behind this task */
}

DF_TEST(SchedRealtime, EdfOrdersTwoStreamsOnOneWorker)
{
    const char *const *pol = df_policy_names();
    for (int p = 0; pol[p]; p++) {
        if (strcmp(pol[p], "fifo") == 0)
            continue; /* the baseline pool: first come, first served */
        for (int outside = 0; outside < 2; outside++) {
            DfSched *s = df_test_sched(pol[p], 1, 10);
            DF_ASSERT(s);
            TwoStreams ts = {
                .a = {.body_ns = 10 * MS}, .b = {.body_ns = 30 * MS}, .a_due_ns = 10 * MS};
            ts.ga = df_group_new(s, 0);
            ts.gb = df_group_new(s, 0);
            DfGroup *g = df_group_new(s, 0);
            if (outside) {
                /* From another thread, while a blocker holds the worker:
                 * both land in the worker's inbox. */
                DfTestGate blk = {0};
                df_test_hold_worker(s, &blk, g);
                make_two(s, &ts);
                atomic_store(&blk.open, 1);
                df_sched_wait(s, g);
            } else {
                /* From a task on the worker: both go to its own set. */
                df_spawn(s, make_two_task, &ts, g);
                df_sched_wait(s, g);
            }
            df_sched_wait(s, ts.ga);
            df_sched_wait(s, ts.gb);
            DF_EXPECT_MSG(atomic_load(&ts.a.start) < atomic_load(&ts.b.start),
                          "%s, %s: stream A (due first) started %.1f ms after stream B", pol[p],
                          outside ? "outside" : "task",
                          (double)(atomic_load(&ts.a.start) - atomic_load(&ts.b.start)) / 1e6);
            df_group_release(g);
            df_group_release(ts.ga);
            df_group_release(ts.gb);
            df_sched_unref(s);
        }
    }
}

/* Due 100 ms and 30 ms away, both beyond 16 ms, where a ready set had one
 * FIFO lane for everything until 2026-12-06: a worker's own set still
 * serves the earlier one first, however far its deadline. */
DF_TEST(SchedRealtime, EdfOrdersInsideTheFarLane)
{
    const char *const *pol = df_policy_names();
    for (int p = 0; pol[p]; p++) {
        if (strcmp(pol[p], "fifo") == 0)
            continue; /* the baseline pool: first come, first served */
        DfSched *s = df_test_sched(pol[p], 1, 10);
        DF_ASSERT(s);
        TwoStreams ts = {.a = {.body_ns = 1 * MS}, .b = {.body_ns = 1 * MS}, .a_due_ns = 30 * MS};
        ts.ga = df_group_new(s, 0);
        ts.gb = df_group_new(s, 0);
        DfGroup *g = df_group_new(s, 0);
        /* From a task on the only worker: both go to its own set, not
         * through the inbox (whose drain sorts them). */
        df_spawn(s, make_two_task, &ts, g);
        df_sched_wait(s, g);
        df_sched_wait(s, ts.ga);
        df_sched_wait(s, ts.gb);
        DF_EXPECT_MSG(atomic_load(&ts.a.start) < atomic_load(&ts.b.start),
                      "%s: A (due in 30 ms) started %.1f ms after B (due in 100 ms, made ready "
                      "first)",
                      pol[p], (double)(atomic_load(&ts.a.start) - atomic_load(&ts.b.start)) / 1e6);
        df_group_release(g);
        df_group_release(ts.ga);
        df_group_release(ts.gb);
        df_sched_unref(s);
    }
}

/* ------------------------------------------------------ waits */

typedef struct Trap {
    Stamp unrelated, jobs[2];
    _Atomic int64_t started, resumed;
    int n_jobs;
    DfGroup *other; /* the unrelated nodes' group, if any */
} Trap;

static void trap_job(DfTask *t, void *arg)
{
    stamped(t, arg);
}

/* A task due now makes an unrelated long node ready (due much later, or
 * never), then two short jobs of its own, and waits for the jobs. */
static void waiter(DfTask *t, void *arg)
{
    Trap *tr = arg;
    DfSched *s = df_task_sched(t);
    atomic_store(&tr->started, df_now_ns());
    DfNode *u = df_node_new(s, &(DfNodeDesc){.fn = stamped, .arg = &tr->unrelated, .module = -1});
    df_node_submit(u);
    df_node_release(u);
    DfGroup *g = df_group_new(s, 0);
    for (int i = 0; i < tr->n_jobs; i++) {
        DfNode *j = df_node_new(
            s, &(DfNodeDesc){.fn = trap_job, .arg = &tr->jobs[i], .module = -1, .group = g});
        df_node_submit(j);
        df_node_release(j);
    }
    df_sched_wait(s, g);
    atomic_store(&tr->resumed, df_now_ns());
    df_group_release(g);
}

/* The waiter task `fn`, due in 20 ms, run to its end from outside. */
static void run_waiter(DfSched *s, DfTaskFn fn, Trap *tr)
{
    DfGroup *outer = df_group_new(s, 0);
    DfNode *w = df_node_new(
        s,
        &(DfNodeDesc){
            .fn = fn, .arg = tr, .module = -1, .group = outer, .deadline = df_now_ns() + 20 * MS});
    df_node_submit(w);
    df_node_release(w);
    df_sched_wait(s, outer);
    df_group_release(outer);
}

DF_TEST(SchedRealtime, WaiterIsNotTrappedUnderUnrelatedWork)
{
    const char *const *pol = df_policy_names();
    for (int p = 0; pol[p]; p++)
        for (int nw = 1; nw <= 2; nw++) {
            DfSched *s = df_test_sched(pol[p], nw, 10);
            DF_ASSERT(s);
            Trap tr = {.unrelated = {.body_ns = 600 * MS},
                       .jobs = {{.body_ns = 5 * MS}, {.body_ns = 5 * MS}},
                       .n_jobs = 2};
            run_waiter(s, waiter, &tr);
            const int64_t started = atomic_load(&tr.started);
            const int64_t jobs_end = atomic_load(&tr.jobs[0].end) > atomic_load(&tr.jobs[1].end)
                                         ? atomic_load(&tr.jobs[0].end)
                                         : atomic_load(&tr.jobs[1].end);
            const double waited_ms = (double)(atomic_load(&tr.resumed) - started) / 1e6;
            /* From the waiter's start, not from its jobs' end: trapped on
             * one worker, it runs the unrelated node before its jobs and
             * resumes right after them, 600 ms late all the same.  Its own
             * work is 10 ms of jobs. */
            DF_EXPECT_MSG(waited_ms < 150,
                          "%s/%d: the waiter resumed %.1f ms after it started (its jobs were "
                          "done at %.1f ms)",
                          pol[p], nw, waited_ms, (double)(jobs_end - started) / 1e6);
            DfStats st;
            df_sched_stats(s, &st);
            DF_EXPECT_EQ_INT(st.total.wait_fallbacks, 0);
            df_stats_free(&st);
            df_sched_unref(s);
        }
}

/* The waiter's jobs queued between two unrelated nodes of its own set (no
 * deadline: one lane), which a lane's ends do not show. */
static void buried_waiter(DfTask *t, void *arg)
{
    Trap *tr = arg;
    DfSched *s = df_task_sched(t);
    atomic_store(&tr->started, df_now_ns());
    DfGroup *g = df_group_new(s, 0);
    for (int i = 0; i < 2; i++) {
        DfNode *u = df_node_new(s, &(DfNodeDesc){.fn = stamped,
                                                 .arg = i ? &tr->jobs[1] : &tr->unrelated,
                                                 .module = -1,
                                                 .group = tr->other});
        df_node_submit(u);
        df_node_release(u);
        if (i)
            break;
        DfNode *j = df_node_new(
            s, &(DfNodeDesc){.fn = trap_job, .arg = &tr->jobs[0], .module = -1, .group = g});
        df_node_submit(j);
        df_node_release(j);
    }
    df_sched_wait(s, g);
    atomic_store(&tr->resumed, df_now_ns());
    df_group_release(g);
}

DF_TEST(SchedRealtime, WaiterFindsItsJobsBehindUnrelatedWork)
{
    /* Policies whose owner takes its set oldest first (steal's owner takes
     * back the newest node it moved) or scans a shared one. */
    const char *pol[] = {"fifo", "cost", "cost-local", "learned"};
    for (size_t p = 0; p < sizeof(pol) / sizeof(pol[0]); p++) {
        DfSched *s = df_test_sched(pol[p], 1, 10);
        DF_ASSERT(s);
        /* jobs[1] is the second unrelated node here. */
        Trap tr = {.unrelated = {.body_ns = 600 * MS},
                   .jobs = {{.body_ns = 5 * MS}, {.body_ns = 1 * MS}},
                   .other = df_group_new(s, 0)};
        run_waiter(s, buried_waiter, &tr);
        const double waited_ms =
            (double)(atomic_load(&tr.resumed) - atomic_load(&tr.started)) / 1e6;
        /* Before: the only worker's fallback ran the older unrelated node
         * (600 ms) first. */
        DF_EXPECT_MSG(waited_ms < 150, "%s: the waiter resumed %.1f ms after it started", pol[p],
                      waited_ms);
        /* Both unrelated nodes still ran: moved, not lost. */
        df_sched_wait(s, tr.other);
        DF_EXPECT(atomic_load(&tr.unrelated.end) > 0);
        DF_EXPECT(atomic_load(&tr.jobs[1].end) > 0);
        DF_EXPECT_MSG(
            atomic_load(&tr.jobs[0].end) <= atomic_load(&tr.unrelated.start),
            "%s: the unrelated node ran before the waiter's job (%.1f ms before its end)", pol[p],
            (double)(atomic_load(&tr.jobs[0].end) - atomic_load(&tr.unrelated.start)) / 1e6);
        df_group_release(tr.other);
        df_sched_unref(s);
    }
}

/* A waiting owner takes its group's jobs oldest first, as a thief does:
 * newest first split a picture's slices into a thief's prefix and the
 * owner's suffix, and the costly rows piled up on one worker.  On one
 * worker (no thief) the jobs then run in index order. */
#define ORDER_JOBS 8

typedef struct Order {
    _Atomic int n;
    int ran[ORDER_JOBS];
    int index[ORDER_JOBS];
} Order;

typedef struct OrderJob {
    Order *o;
    int index;
} OrderJob;

static void order_job(DfTask *t, void *arg)
{
    const OrderJob *j = arg;
    j->o->ran[atomic_fetch_add(&j->o->n, 1)] = j->index;
}

static void order_waiter(DfTask *t, void *arg)
{
    Order *o = arg;
    DfSched *s = df_task_sched(t);
    const int64_t due = df_now_ns() + 1000 * MS;
    DfGroup *g = df_group_new(s, due);
    OrderJob jobs[ORDER_JOBS];
    for (int i = 0; i < ORDER_JOBS; i++) {
        jobs[i] = (OrderJob){o, i};
        DfNode *n = df_node_new(
            s, &(DfNodeDesc){
                   .fn = order_job, .arg = &jobs[i], .module = -1, .group = g, .deadline = due});
        df_node_submit(n);
        df_node_release(n);
    }
    df_sched_wait(s, g);
    df_group_release(g);
}

DF_TEST(SchedRealtime, WaitingOwnerRunsItsJobsOldestFirst)
{
    /* The policies whose owner serves its set oldest first (steal's owner
     * is newest first by design). */
    const char *pol[] = {"cost-local", "learned"};
    for (size_t p = 0; p < sizeof(pol) / sizeof(pol[0]); p++) {
        DfSched *s = df_test_sched(pol[p], 1, 10);
        DF_ASSERT(s);
        Order o = {0};
        DfGroup *outer = df_group_new(s, 0);
        /* Due: a waiter with a deadline filters what it helps with. */
        DfNode *w = df_node_new(s, &(DfNodeDesc){.fn = order_waiter,
                                                 .arg = &o,
                                                 .module = -1,
                                                 .group = outer,
                                                 .deadline = df_now_ns() + 2000 * MS});
        df_node_submit(w);
        df_node_release(w);
        df_sched_wait(s, outer);
        DF_ASSERT_EQ_INT(atomic_load(&o.n), ORDER_JOBS);
        char got[3 * ORDER_JOBS + 1] = "";
        bool in_order = true;
        for (int i = 0; i < ORDER_JOBS; i++) {
            snprintf(got + strlen(got), sizeof(got) - strlen(got), " %d", o.ran[i]);
            in_order = in_order && o.ran[i] == i;
        }
        DF_EXPECT_MSG(in_order, "%s: jobs ran in the order%s", pol[p], got);
        df_group_release(outer);
        df_sched_unref(s);
    }
}

/* ------------------------------------------------------ wakes */

typedef struct Busy {
    _Atomic int worker;
    _Atomic int64_t short_start;
    int64_t body_ns;
} Busy;

static void long_task(DfTask *t, void *arg)
{
    Busy *b = arg;
    atomic_store(&b->worker, df_task_worker(t));
    spin_ns(b->body_ns);
}

static void short_task(DfTask *t, void *arg)
{
    Busy *b = arg;
    atomic_store(&b->short_start, df_now_ns());
}

DF_TEST(SchedRealtime, NodeOnBusyWorkerStartsOnParkedOne)
{
    const char *const *pol = df_policy_names();
    for (int p = 0; pol[p]; p++) {
        DfSched *s = df_test_sched(pol[p], 2, 10);
        DF_ASSERT(s);
        Busy b = {.body_ns = 600 * MS};
        atomic_init(&b.worker, -1);
        DfGroup *g = df_group_new(s, 0);
        df_spawn(s, long_task, &b, g);
        while (atomic_load(&b.worker) < 0)
            ;
        sleep_ms(20); /* the other worker parks (poll 10 us) */
        /* Its input rows are on the busy worker: cost-local places it there. */
        DfNode *n =
            df_node_new(s, &(DfNodeDesc){.fn = short_task, .arg = &b, .module = -1, .group = g});
        df_node_add_input(n, atomic_load(&b.worker), 1 << 20, -1, 0);
        const int64_t t0 = df_now_ns();
        df_node_submit(n);
        df_node_release(n);
        df_sched_wait(s, g);
        const double after_ms = (double)(atomic_load(&b.short_start) - t0) / 1e6;
        /* Left to the busy worker, it starts after the 600 ms task; woken,
         * the parked one takes it at once. */
        DF_EXPECT_MSG(after_ms < 150, "%s: the node started %.1f ms after it was ready", pol[p],
                      after_ms);
        df_group_release(g);
        df_sched_unref(s);
    }
}

/* ------------------------------------------------------ inbox */

/* Nodes posted out of deadline order into a held worker's inbox, a thief
 * taking some of them (each time it takes the whole inbox and gives the
 * rest back): the owner still runs the rest earliest deadline first. */
#define INBOX_NODES  8
#define INBOX_STEALS 2

typedef struct Inbox {
    int owner;
    DfTestGate thief; /* holds the thief on its INBOX_STEALS-th node */
    _Atomic int n_owner, n_thief;
    int64_t owner_ran[INBOX_NODES], thief_ran[INBOX_NODES]; /* deadlines, in run order */
} Inbox;

typedef struct InboxNode {
    Inbox *in;
    int64_t deadline;
} InboxNode;

static void inbox_node(DfTask *t, void *arg)
{
    const InboxNode *x = arg;
    Inbox *in = x->in;
    if (df_task_worker(t) == in->owner) {
        in->owner_ran[atomic_fetch_add(&in->n_owner, 1)] = x->deadline;
        return;
    }
    const int k = atomic_fetch_add(&in->n_thief, 1);
    in->thief_ran[k] = x->deadline;
    if (k + 1 == INBOX_STEALS) {
        /* The rest stays in the owner's inbox until the owner is free. */
        atomic_store(&in->thief.started, 1);
        while (!atomic_load(&in->thief.open))
            ;
    }
}

/* Wait up to 10 s for *v to reach `want`: a scheduler that never gets
 * there fails the test instead of hanging it. */
static bool await_count(_Atomic int *v, int want)
{
    const int64_t until = df_now_ns() + 10000 * MS;
    while (atomic_load(v) < want)
        if (df_now_ns() > until)
            return false;
    return true;
}

static void deadlines_str(char *buf, size_t len, const int64_t *d, int n, int64_t base)
{
    buf[0] = 0;
    for (int i = 0; i < n; i++)
        snprintf(buf + strlen(buf), len - strlen(buf), " %lld",
                 (long long)((d[i] - base) / (10 * MS)));
}

DF_TEST(SchedRealtime, InboxKeepsDeadlineOrderUnderTheft)
{
    /* The policies that place an outside node by its inputs (steal's
     * outside nodes go round robin). */
    const char *pol[] = {"cost-local", "learned"};
    /* Posting order, as deadlines in steps of 10 ms: neither the whole
     * nor what the thief leaves is in order. */
    static const int rank[INBOX_NODES] = {5, 2, 7, 0, 3, 6, 1, 4};
    for (size_t p = 0; p < sizeof(pol) / sizeof(pol[0]); p++) {
        DfSched *s = df_test_sched(pol[p], 2, 10);
        DF_ASSERT(s);
        Inbox in = {0};
        DfGroup *g = df_group_new(s, 0);
        DfTestGate own = {0}, other = {0};
        df_test_hold_worker(s, &own, g);
        df_test_hold_worker(s, &other, g);
        in.owner = atomic_load(&own.worker);
        DF_EXPECT(atomic_load(&other.worker) != in.owner);
        /* Far ahead, however slow the run, and 10 ms apart: the ready
         * set's lanes, FIFO inside, do not sort them (today all eight
         * share one); the inbox's drain must. */
        const int64_t base = df_now_ns() + 1000 * MS;
        InboxNode args[INBOX_NODES];
        for (int i = 0; i < INBOX_NODES; i++) {
            args[i] = (InboxNode){&in, base + rank[i] * 10 * MS};
            DfNode *n = df_node_new(s, &(DfNodeDesc){.fn = inbox_node,
                                                     .arg = &args[i],
                                                     .module = -1,
                                                     .group = g,
                                                     .deadline = args[i].deadline});
            /* Its input rows are on the held worker: placed in its inbox. */
            df_node_add_input(n, in.owner, 1 << 20, -1, 0);
            df_node_submit(n);
            df_node_release(n);
        }
        atomic_store(&other.open, 1);
        const bool stole = await_count(&in.thief.started, 1);
        DF_EXPECT_MSG(stole, "%s: the thief took %d nodes in 10 s, not %d", pol[p],
                      atomic_load(&in.n_thief), INBOX_STEALS);
        atomic_store(&own.open, 1);
        const bool ran = await_count(&in.n_owner, INBOX_NODES - INBOX_STEALS);
        DF_EXPECT_MSG(ran, "%s: the owner ran %d nodes in 10 s, not %d", pol[p],
                      atomic_load(&in.n_owner), INBOX_NODES - INBOX_STEALS);
        atomic_store(&in.thief.open, 1);
        df_sched_wait(s, g);
        char got[4 * INBOX_NODES + 1];
        const int n_owner = atomic_load(&in.n_owner), n_thief = atomic_load(&in.n_thief);
        bool in_order = true;
        for (int i = 1; i < n_owner; i++)
            in_order = in_order && in.owner_ran[i - 1] < in.owner_ran[i];
        deadlines_str(got, sizeof(got), in.owner_ran, n_owner, base);
        DF_EXPECT_MSG(in_order, "%s: the owner ran deadlines%s (x 10 ms)", pol[p], got);
        /* Thieves take the most urgent node of their victim. */
        bool most_urgent = true;
        for (int i = 0; i < n_thief; i++)
            most_urgent = most_urgent && in.thief_ran[i] == base + i * 10 * MS;
        deadlines_str(got, sizeof(got), in.thief_ran, n_thief, base);
        DF_EXPECT_MSG(most_urgent, "%s: the thief ran deadlines%s (x 10 ms)", pol[p], got);
        df_group_release(g);
        df_sched_unref(s);
    }
}

/* ------------------------------------------------------ groups */

static void flag(DfTask *t, void *arg)
{
    atomic_store((_Atomic int *)arg, 1);
}

DF_TEST(SchedRealtime, GroupFilledOneByOneIsNotDoneEarly)
{
    const char *const *pol = df_policy_names();
    for (int p = 0; pol[p]; p++) {
        DfSched *s = df_test_sched(pol[p], 2, 10);
        DF_ASSERT(s);
        DfGroup *g = df_group_new(s, 0);
        _Atomic int ran[2] = {0, 0};
        DfNode *a =
            df_node_new(s, &(DfNodeDesc){.fn = flag, .arg = &ran[0], .module = -1, .group = g});
        df_node_submit(a);
        while (!atomic_load(&ran[0]) || df_node_worker(a) < 0)
            ;
        /* The first node has finished, the second is not created yet. */
        DF_EXPECT_MSG(!df_group_done(g), "%s: done with one node of two", pol[p]);
        DfNode *b =
            df_node_new(s, &(DfNodeDesc){.fn = flag, .arg = &ran[1], .module = -1, .group = g});
        df_node_submit(b);
        df_group_seal(g);
        while (!df_group_done(g))
            ;
        DF_EXPECT(atomic_load(&ran[1]));
        df_node_release(a);
        df_node_release(b);
        df_group_release(g);
        df_sched_unref(s);
    }
}
