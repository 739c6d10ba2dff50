/* The scheduler at run time: graphs, every policy, 1-8 workers (more than
 * this machine's cores is fine), waits, cancellation, deadlines, jobs. */
#include "dftest.h"
#include "dfsched.h"
#include "sched_util.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* 10^6 nodes over every policy and 1..8 workers. */
DF_TEST(SchedDag, RandomDagEveryPolicy)
{
    df_test_random_dag_all((long)(1000000 * df_test_scale()));
}

/* ----------------------------------------- graphs built inside tasks */

typedef struct Fan {
    _Atomic int leaves;
    _Atomic int max_depth_seen;
    int fanout, depth;
} Fan;

typedef struct FanArg {
    Fan *f;
    int depth;
} FanArg;

static void fan_body(DfTask *t, void *arg);

static void fan_body(DfTask *t, void *arg)
{
    FanArg *a = arg;
    if (a->depth == a->f->depth) {
        atomic_fetch_add(&a->f->leaves, 1);
        return;
    }
    DfSched *s = df_task_sched(t);
    DfGroup *g = df_group_new(s, 0);
    FanArg kids[8];
    for (int i = 0; i < a->f->fanout; i++) {
        kids[i] = (FanArg){a->f, a->depth + 1};
        df_spawn(s, fan_body, &kids[i], g);
    }
    /* Every level waits: with few workers all of them end up inside waits,
     * and must still finish by running the awaited nodes themselves. */
    df_sched_wait(s, g);
    df_group_release(g);
}

DF_TEST(SchedWait, NestedWaitsNeverDeadlock)
{
    const char *const *policies = df_policy_names();
    for (int p = 0; policies[p]; p++)
        for (int w = 1; w <= 4; w++) {
            DfSched *s = df_test_sched(policies[p], w, w == 2 ? -1 : 10);
            DF_ASSERT(s);
            Fan f = {.fanout = 4, .depth = 5};
            atomic_init(&f.leaves, 0);
            FanArg root = {&f, 0};
            df_test_run_task(s, fan_body, &root);
            DF_EXPECT_MSG(atomic_load(&f.leaves) == 1024, "%s/%d: %d leaves", policies[p], w,
                          atomic_load(&f.leaves));
            DfStats st;
            df_sched_stats(s, &st);
            DF_EXPECT(st.total.max_wait_depth >= 1);
            df_stats_free(&st);
            df_sched_unref(s);
        }
}

/* ------------------------------------------------------- cancellation */

typedef struct Cancel {
    _Atomic int ran, cancelled, saw_pred_cancelled;
    _Atomic int gate, started;
} Cancel;

static void blocker(DfTask *t, void *arg)
{
    Cancel *c = arg;
    atomic_store(&c->started, 1);
    while (!atomic_load(&c->gate))
        ;
}

static void cbody(DfTask *t, void *arg)
{
    Cancel *c = arg;
    atomic_fetch_add(&c->ran, 1);
}

static void ccancel(DfTask *t, void *arg)
{
    Cancel *c = arg;
    atomic_fetch_add(&c->cancelled, 1);
}

static void after(DfTask *t, void *arg)
{
    Cancel *c = arg;
    if (df_task_pred_cancelled(t))
        atomic_fetch_add(&c->saw_pred_cancelled, 1);
}

DF_TEST(SchedCancel, SkipsNotStartedNodes)
{
    const char *const *policies = df_policy_names();
    for (int p = 0; policies[p]; p++) {
        DfSched *s = df_test_sched(policies[p], 2, 10);
        DF_ASSERT(s);
        Cancel c = {0};
        DfGroup *gate_group = df_group_new(s, 0);
        DfGroup *frame = df_group_new(s, 0);
        DfGroup *next = df_group_new(s, 0);
        /* The frame's nodes wait behind a blocker, so none starts before the
         * cancel. */
        DfNode *b = df_node_new(s, &(DfNodeDesc){.fn = blocker, .arg = &c, .group = gate_group});
        DfNode *nodes[10];
        for (int i = 0; i < 10; i++) {
            nodes[i] = df_node_new(s, &(DfNodeDesc){.fn = cbody, .cancel = ccancel, .arg = &c,
                                                     .group = frame});
            df_node_depend(nodes[i], b, 100);
        }
        DfNode *o = df_node_new(s, &(DfNodeDesc){.fn = after, .arg = &c, .group = next});
        df_node_depend(o, nodes[9], 0);
        df_node_submit(b);
        for (int i = 0; i < 10; i++)
            df_node_submit(nodes[i]);
        df_node_submit(o);
        df_group_cancel(frame);
        DF_EXPECT(df_group_cancelled(frame));
        atomic_store(&c.gate, 1);
        df_sched_wait(s, frame);
        df_sched_wait(s, next);
        df_sched_wait(s, gate_group);
        DF_EXPECT_EQ_INT(atomic_load(&c.ran), 0);
        DF_EXPECT_EQ_INT(atomic_load(&c.cancelled), 10);
        DF_EXPECT_EQ_INT(atomic_load(&c.saw_pred_cancelled), 1);
        DF_EXPECT(df_node_skipped(nodes[3]));
        DF_EXPECT(!df_node_skipped(o));
        df_node_release(b);
        df_node_release(o);
        for (int i = 0; i < 10; i++)
            df_node_release(nodes[i]);
        df_group_release(gate_group);
        df_group_release(frame);
        df_group_release(next);
        DfStats st;
        df_sched_stats(s, &st);
        DF_EXPECT_EQ_INT(st.total.tasks_skipped, 10);
        df_stats_free(&st);
        df_sched_unref(s);
    }
}

/* ---------------------------------------------------------- deadlines */

typedef struct Order {
    _Atomic int pos;
    int64_t seen[16];
} Order;

typedef struct DlArg {
    Order *o;
    int64_t deadline;
} DlArg;

static void record(DfTask *t, void *arg)
{
    DlArg *a = arg;
    int i = atomic_fetch_add(&a->o->pos, 1);
    a->o->seen[i] = a->deadline;
}

static void nop(DfTask *t, void *arg)
{
}

/* Nodes made ready together run earliest deadline first, on every policy. */
DF_TEST(SchedDeadline, EarliestDeadlineFirst)
{
    const int64_t dl[8] = {800, 300, 500, 100, 700, 200, 600, 400};
    const char *const *policies = df_policy_names();
    for (int p = 0; policies[p]; p++) {
        DfSched *s = df_test_sched(policies[p], 1, 10);
        DF_ASSERT(s);
        Order o = {0};
        DlArg args[8];
        DfGroup *g = df_group_new(s, 0);
        DfNode *root = df_node_new(s, &(DfNodeDesc){.fn = nop, .group = g});
        DfNode *kids[8];
        for (int i = 0; i < 8; i++) {
            args[i] = (DlArg){&o, dl[i]};
            kids[i] = df_node_new(s, &(DfNodeDesc){.fn = record, .arg = &args[i], .group = g,
                                                    .deadline = dl[i]});
            df_node_depend(kids[i], root, 10);
            df_node_submit(kids[i]);
        }
        df_node_submit(root);
        df_sched_wait(s, g);
        for (int i = 1; i < 8; i++)
            DF_EXPECT_MSG(o.seen[i - 1] < o.seen[i], "%s: deadline %lld ran before %lld",
                          policies[p], (long long)o.seen[i - 1], (long long)o.seen[i]);
        df_node_release(root);
        for (int i = 0; i < 8; i++)
            df_node_release(kids[i]);
        df_group_release(g);
        df_sched_unref(s);
    }
}

/* The shared Ready set of `cost` orders everything queued by deadline. */
DF_TEST(SchedDeadline, CostPolicyOrdersBacklog)
{
    DfSched *s = df_test_sched("cost", 1, 10);
    DF_ASSERT(s);
    Cancel gate = {0};
    Order o = {0};
    DlArg args[8];
    const int64_t dl[8] = {800, 300, 500, 100, 700, 200, 600, 400};
    DfGroup *g = df_group_new(s, 0);
    df_spawn(s, blocker, &gate, g); /* occupies the only worker */
    while (!atomic_load(&gate.started))
        ;
    for (int i = 0; i < 8; i++) {
        args[i] = (DlArg){&o, dl[i]};
        DfNode *n = df_node_new(s, &(DfNodeDesc){.fn = record, .arg = &args[i], .group = g,
                                                  .deadline = dl[i]});
        df_node_submit(n);
        df_node_release(n);
    }
    atomic_store(&gate.gate, 1);
    df_sched_wait(s, g);
    for (int i = 1; i < 8; i++)
        DF_EXPECT(o.seen[i - 1] < o.seen[i]);
    df_group_release(g);
    df_sched_unref(s);
}

/* ----------------------------------------------------- continuation */

typedef struct Chain {
    _Atomic int done, out_of_order;
} Chain;

typedef struct Link {
    Chain *c;
    int i;
} Link;

static void link_body(DfTask *t, void *arg)
{
    (void)t;
    Link *l = arg;
    if (atomic_load(&l->c->done) != l->i)
        atomic_fetch_add(&l->c->out_of_order, 1);
    atomic_fetch_add(&l->c->done, 1);
}

static void side_body(DfTask *t, void *arg)
{
    (void)t;
    (void)arg;
}

enum { CHAIN_LEN = 300 }; /* longer than a run of continuations (64) */

/* A chain with a side branch at every link (so that a kept node has a
 * sibling to make ready), waited for by `s`'s caller. */
static void run_chain(DfSched *s, Chain *c, Link *links)
{
    DfGroup *g = df_group_new(s, 0);
    DfNode *prev = NULL;
    for (int i = 0; i < CHAIN_LEN; i++) {
        links[i] = (Link){c, i};
        DfNode *n = df_node_new(
            s, &(DfNodeDesc){
                   .fn = link_body, .arg = &links[i], .group = g, .module = -1, .out_size = 4096});
        if (prev) {
            DF_EXPECT_EQ_INT(df_node_depend(n, prev, 4096), 0);
            DfNode *side = df_node_new(s, &(DfNodeDesc){.fn = side_body, .module = -1, .group = g});
            DF_EXPECT_EQ_INT(df_node_depend(side, prev, 64), 0);
            df_node_submit(side);
            df_node_release(side);
            df_node_release(prev);
        }
        df_node_submit(n);
        prev = n;
    }
    df_node_release(prev);
    df_sched_wait(s, g);
    df_group_release(g);
}

typedef struct ChainTask {
    Chain c;
    Link links[CHAIN_LEN];
} ChainTask;

static void chain_in_task(DfTask *t, void *arg)
{
    ChainTask *ct = arg;
    run_chain(df_task_sched(t), &ct->c, ct->links);
}

/* Continuation keeps a chain in order past a run of 64, waited for from
 * outside and from inside a task (where only the waited group continues),
 * with parking and with polling workers. */
DF_TEST(SchedContinuation, ChainsRunInOrder)
{
    const char *policies[] = {"cost-local", "learned"};
    for (int pi = 0; pi < 2; pi++) {
        for (int nw = 1; nw <= 2; nw++) {
            for (int poll = 0; poll < 2; poll++) {
                DfSched *s = df_test_sched(policies[pi], nw, poll ? -1 : 10);
                DF_ASSERT(s);
                static ChainTask outer, inner;
                memset(&outer, 0, sizeof(outer));
                memset(&inner, 0, sizeof(inner));
                run_chain(s, &outer.c, outer.links);
                df_test_run_task(s, chain_in_task, &inner);
                DF_EXPECT_EQ_INT(atomic_load(&outer.c.done), CHAIN_LEN);
                DF_EXPECT_EQ_INT(atomic_load(&inner.c.done), CHAIN_LEN);
                DF_EXPECT_EQ_INT(atomic_load(&outer.c.out_of_order), 0);
                DF_EXPECT_EQ_INT(atomic_load(&inner.c.out_of_order), 0);
                df_sched_unref(s);
            }
        }
    }
}

typedef struct RunOrder {
    _Atomic int next;
    int side, link; /* when each ran: 1, 2 */
} RunOrder;

static void order_side(DfTask *t, void *arg)
{
    (void)t;
    RunOrder *o = arg;
    o->side = atomic_fetch_add(&o->next, 1) + 1;
}

static void order_link(DfTask *t, void *arg)
{
    (void)t;
    RunOrder *o = arg;
    o->link = atomic_fetch_add(&o->next, 1) + 1;
}

/* A finishing worker keeps the next link of the chain it was on (a node
 * of the finished node's module) over an older, equally urgent side
 * node; a more urgent side node still goes first.  One worker: the kept
 * node runs first, the queued one after it. */
DF_TEST(SchedContinuation, KeepsTheChainItWasOn)
{
    const char *policies[] = {"cost-local", "learned"};
    for (int pi = 0; pi < 2; pi++) {
        for (int urgent_side = 0; urgent_side < 2; urgent_side++) {
            DfSched *s = df_test_sched(policies[pi], 1, -1);
            DF_ASSERT(s);
            const int chain = df_sched_module_id(s, "link"), other = df_sched_module_id(s, "side");
            RunOrder o = {0}, before = {0};
            DfGroup *g = df_group_new(s, 0);
            DF_ASSERT(g);
            const int64_t dl = df_now_ns() + 1000000000ll;
            DfNode *a = df_node_new(
                s, &(DfNodeDesc){.fn = order_link, .arg = &before, .module = chain, .group = g});
            DfNode *side = df_node_new(s, &(DfNodeDesc){.fn = order_side,
                                                        .arg = &o,
                                                        .module = other,
                                                        .group = g,
                                                        .deadline = urgent_side ? dl : 0});
            DfNode *b = df_node_new(s, &(DfNodeDesc){.fn = order_link,
                                                     .arg = &o,
                                                     .module = chain,
                                                     .group = g,
                                                     .deadline = urgent_side ? dl + 1 : 0});
            DF_ASSERT(a && side && b);
            DF_EXPECT_EQ_INT(df_node_depend(side, a, 64), 0);
            DF_EXPECT_EQ_INT(df_node_depend(b, a, 0), 0);
            df_node_submit(side);
            df_node_submit(b);
            df_node_submit(a);
            df_node_release(a);
            df_node_release(side);
            df_node_release(b);
            df_sched_wait(s, g);
            df_group_release(g);
            DF_EXPECT_MSG(urgent_side ? o.side == 1 && o.link == 2 : o.link == 1 && o.side == 2,
                          "%s, %s side node: the link ran %d-th, the side node %d-th", policies[pi],
                          urgent_side ? "more urgent" : "equally urgent", o.link, o.side);
            df_sched_unref(s);
        }
    }
}

/* ------------------------------------------------------------- jobs */

typedef struct Wpp {
    int n_jobs, n_slots, steps;
    _Atomic int progress[64];
    _Atomic int slot_busy[64];
    _Atomic int bad_threadnr, slot_overlap, timeouts;
} Wpp;

/* Like an HEVC WPP row: step k of row j needs row j-1 two steps ahead (or
 * done).  It busy-waits — no help — the way libavcodec blocks in
 * pthread_cond_wait, so a row may only run once its predecessor runs. */
static void wpp_job(void *ctx, int jobnr, int threadnr)
{
    Wpp *w = ctx;
    if (w->n_slots > 0 && threadnr != jobnr % w->n_slots)
        atomic_fetch_add(&w->bad_threadnr, 1);
    if (w->n_slots > 0 && atomic_exchange(&w->slot_busy[threadnr], 1))
        atomic_fetch_add(&w->slot_overlap, 1);
    const int64_t give_up = df_now_ns() + 20 * 1000000000ll;
    for (int k = 0; k < w->steps; k++) {
        if (jobnr > 0)
            while (atomic_load(&w->progress[jobnr - 1]) < (k + 2 < w->steps ? k + 2 : w->steps))
                if (df_now_ns() > give_up) {
                    /* A row that waits on a row that never runs: the hang
                     * that out-of-order dispatch causes.  Report, not hang. */
                    atomic_fetch_add(&w->timeouts, 1);
                    atomic_store(&w->progress[jobnr - 1], w->steps);
                }
        atomic_store(&w->progress[jobnr], k + 1);
    }
    if (w->n_slots > 0)
        atomic_store(&w->slot_busy[threadnr], 0);
}

typedef struct JobsFromTask {
    Wpp *w;
    int ret;
} JobsFromTask;

static void run_wpp_task(DfTask *t, void *arg)
{
    JobsFromTask *j = arg;
    DfJobs jobs = {.n_jobs = j->w->n_jobs, .fn = wpp_job, .ctx = j->w, .n_slots = j->w->n_slots,
                   .ordered_start = true, .module = -1};
    j->ret = df_jobs_run(df_task_sched(t), &jobs);
}

DF_TEST(SchedJobs, WppLikeRowsCompleteOnAnyWorkerCount)
{
    const char *const *policies = df_policy_names();
    for (int p = 0; policies[p]; p++)
        for (int nw = 1; nw <= 4; nw++)
            for (int from_task = 0; from_task < 2; from_task++) {
                DfSched *s = df_test_sched(policies[p], nw, 10);
                DF_ASSERT(s);
                Wpp w = {.n_jobs = 17, .n_slots = 3, .steps = 30};
                if (from_task) {
                    JobsFromTask j = {&w, -1};
                    df_test_run_task(s, run_wpp_task, &j);
                    DF_EXPECT_EQ_INT(j.ret, 0);
                } else {
                    DfJobs jobs = {.n_jobs = w.n_jobs, .fn = wpp_job, .ctx = &w,
                                   .n_slots = w.n_slots, .ordered_start = true, .module = -1};
                    DF_EXPECT_EQ_INT(df_jobs_run(s, &jobs), 0);
                }
                for (int j = 0; j < w.n_jobs; j++)
                    DF_EXPECT_EQ_INT(atomic_load(&w.progress[j]), w.steps);
                DF_EXPECT_EQ_INT(atomic_load(&w.bad_threadnr), 0);
                DF_EXPECT_EQ_INT(atomic_load(&w.slot_overlap), 0);
                DF_EXPECT_EQ_INT(atomic_load(&w.timeouts), 0);
                df_sched_unref(s);
            }
}

static void count_job(void *ctx, int jobnr, int threadnr)
{
    _Atomic int *hits = ctx;
    atomic_fetch_add(&hits[jobnr], 1);
}

DF_TEST(SchedJobs, IndependentJobsAndWorkersRecorded)
{
    DfSched *s = df_test_sched("cost-local", 2, 10);
    DF_ASSERT(s);
    _Atomic int hits[40] = {0};
    int workers[40];
    uint64_t ids[40];
    DfJobs jobs = {.n_jobs = 40, .fn = count_job, .ctx = hits, .workers = workers,
                   .node_ids = ids, .module = df_sched_module_id(s, "S")};
    DF_EXPECT_EQ_INT(df_jobs_run(s, &jobs), 0);
    for (int j = 0; j < 40; j++) {
        DF_EXPECT_EQ_INT(atomic_load(&hits[j]), 1);
        DF_EXPECT(workers[j] >= 0 && workers[j] < 2);
        DF_EXPECT(ids[j] > 0);
    }
    /* Zero jobs is a valid call (MPEG-2 makes it). */
    jobs.n_jobs = 0;
    DF_EXPECT_EQ_INT(df_jobs_run(s, &jobs), 0);
    df_sched_unref(s);
}

/* On one worker a batch runs inline, without nodes (jobs.c); not with
 * eager_jobs, nor for a batch that asks for tasks, nor on two workers,
 * even with other nodes queued. */
typedef struct Inline {
    _Atomic int hits[8];
    int workers[8];
    uint64_t ids[8];
    DfGroup *g;
    bool as_tasks;
} Inline;

static void nop_body(DfTask *t, void *arg)
{
    (void)t;
    (void)arg;
}

static void inline_body(DfTask *t, void *arg)
{
    Inline *l = arg;
    DfSched *s = df_task_sched(t);
    /* Made ready now, it waits in the set of the only worker, this one. */
    df_spawn(s, nop_body, NULL, l->g);
    DfJobs jobs = {.n_jobs = 8,
                   .fn = count_job,
                   .ctx = l->hits,
                   .workers = l->workers,
                   .node_ids = l->ids,
                   .as_tasks = l->as_tasks};
    df_jobs_run(s, &jobs);
}

static void inline_case(int workers, bool eager, bool as_tasks, bool want_inline)
{
    DfSchedConfig cfg;
    df_sched_config_init(&cfg);
    cfg.policy = "cost-local";
    cfg.n_workers = workers;
    cfg.poll_us = 10;
    cfg.eager_jobs = eager;
    DfSched *s = NULL;
    DfError err = {0};
    DF_ASSERT_EQ_INT(df_sched_new(&cfg, &s, &err), 0);
    Inline l = {.as_tasks = as_tasks};
    l.g = df_group_new(s, 0);
    df_spawn(s, inline_body, &l, l.g);
    df_sched_wait(s, l.g);
    for (int j = 0; j < 8; j++) {
        DF_EXPECT_EQ_INT(atomic_load(&l.hits[j]), 1);
        DF_EXPECT(l.workers[j] >= 0 && l.workers[j] < workers);
        DF_EXPECT_MSG(want_inline ? l.ids[j] == 0 : l.ids[j] > 0,
                      "%d workers, eager %d, as_tasks %d: job %d node id %llu", workers, eager,
                      as_tasks, j, (unsigned long long)l.ids[j]);
    }
    DfStats st;
    DF_ASSERT_EQ_INT(df_sched_stats(s, &st), 0);
    DF_EXPECT_EQ_INT(st.total.jobs_inline, want_inline ? 1 : 0);
    df_stats_free(&st);
    df_group_release(l.g);
    df_sched_unref(s);
}

DF_TEST(SchedJobs, OneWorkerRunsBatchesInline)
{
    inline_case(1, false, false, true);
    inline_case(1, true, false, false); /* eager_jobs */
    inline_case(1, false, true, false); /* the batch asks for tasks */
    inline_case(2, false, false, false);
}

typedef struct JobInputs {
    _Atomic int calls[16];
    int mod;
} JobInputs;

static void add_job_input(void *in_ctx, DfNode *node, int jobnr)
{
    JobInputs *ji = in_ctx;
    atomic_fetch_add(&ji->calls[jobnr], 1);
    /* Job j reads 1000 (j + 1) bytes that worker j % 2 wrote. */
    df_node_add_input(node, jobnr % 2, 1000u * (unsigned)(jobnr + 1), ji->mod, 0);
}

/* Run `jobs` with tracing on and collect the trace into `tr`; false when
 * there is no trace. */
static bool traced_batch(DfSched *s, const DfJobs *jobs, DfTrace *tr)
{
    if (df_sched_trace_start(s, 1024) != 0)
        return false;
    DF_EXPECT_EQ_INT(df_jobs_run(s, jobs), 0);
    df_sched_trace_stop(s);
    return df_sched_trace_collect(s, tr) == 0;
}

/* The trace's events of module `mod`, by job index (below n): how many
 * there were in all. */
static int job_events(const DfTrace *tr, int mod, const DfTraceEvent **by_index, int n)
{
    int seen = 0;
    for (size_t e = 0; e < tr->n_events; e++) {
        const DfTraceEvent *ev = &tr->events[e];
        if (ev->module != mod)
            continue;
        seen++;
        if (ev->index >= 0 && ev->index < n)
            by_index[ev->index] = ev;
    }
    return seen;
}

/* DfJobs.start_bytes: job j of an ordered batch (WPP rows) has the row
 * above as its first input, its worker the one that ran job j-1 (known
 * when j-1 started), its producer id j-1's; job 0 has none. */
DF_TEST(SchedJobs, OrderedJobsReadTheRowAbove)
{
    DfSched *s = df_test_sched("cost-local", 2, 10);
    DF_ASSERT(s);
    const int mod_s = df_sched_module_id(s, "S");
    _Atomic int hits[16] = {0};
    int workers[12];
    uint64_t ids[12];
    const DfJobs jobs = {.n_jobs = 12,
                         .fn = count_job,
                         .ctx = hits,
                         .module = mod_s,
                         .ordered_start = true,
                         .start_bytes = 4096,
                         .workers = workers,
                         .node_ids = ids};
    DfTrace tr;
    DF_ASSERT(traced_batch(s, &jobs, &tr));
    const DfTraceEvent *ev[12] = {0};
    DF_EXPECT_EQ_INT(job_events(&tr, mod_s, ev, 12), 12);
    for (int j = 0; j < 12; j++) {
        if (!ev[j])
            continue;
        DF_EXPECT_EQ_INT(ev[j]->n_inputs, j > 0 ? 1 : 0);
        if (j == 0 || ev[j]->n_inputs != 1)
            continue;
        const DfTraceInput *in = &tr.inputs[ev[j]->first_input];
        DF_EXPECT_EQ_INT(in->worker, workers[j - 1]);
        DF_EXPECT_EQ_INT(in->pred_id, ids[j - 1]);
        DF_EXPECT_EQ_INT(in->bytes, 4096);
        DF_EXPECT_EQ_INT(in->module, mod_s);
    }
    for (int j = 0; j < 12; j++)
        DF_EXPECT_EQ_INT(atomic_load(&hits[j]), 1);
    df_trace_free(&tr);
    df_sched_unref(s);
}

/* DfJobs.add_inputs: called once per job node before it runs, and the
 * inputs it declares are the node's (the trace shows them per job); a
 * batch of one runs inline with no node and no call. */
DF_TEST(SchedJobs, AddInputsDeclaredPerJob)
{
    DfSched *s = df_test_sched("cost-local", 2, 10);
    DF_ASSERT(s);
    const int mod_s = df_sched_module_id(s, "S");
    _Atomic int hits[16] = {0};
    JobInputs ji = {.mod = df_sched_module_id(s, "D")};
    DfJobs jobs = {.n_jobs = 12, .fn = count_job, .ctx = hits, .module = mod_s,
                   .add_inputs = add_job_input, .in_ctx = &ji};
    DfTrace tr;
    DF_ASSERT(traced_batch(s, &jobs, &tr));
    const DfTraceEvent *ev[12] = {0};
    DF_EXPECT_EQ_INT(job_events(&tr, mod_s, ev, 12), 12);
    for (int j = 0; j < 12; j++) {
        if (!ev[j])
            continue;
        DF_EXPECT_EQ_INT(ev[j]->n_inputs, 1);
        if (ev[j]->n_inputs != 1)
            continue;
        const DfTraceInput *in = &tr.inputs[ev[j]->first_input];
        DF_EXPECT_EQ_INT(in->worker, j % 2);
        DF_EXPECT_EQ_INT(in->bytes, 1000 * (j + 1));
        DF_EXPECT_EQ_INT(in->module, ji.mod);
    }
    for (int j = 0; j < 12; j++) {
        DF_EXPECT_EQ_INT(atomic_load(&ji.calls[j]), 1);
        DF_EXPECT_EQ_INT(atomic_load(&hits[j]), 1);
    }
    df_trace_free(&tr);
    jobs.n_jobs = 1;
    DF_EXPECT_EQ_INT(df_jobs_run(s, &jobs), 0);
    DF_EXPECT_EQ_INT(atomic_load(&ji.calls[0]), 1);
    DF_EXPECT_EQ_INT(atomic_load(&hits[0]), 2);
    df_sched_unref(s);
}

/* ------------------------------------------------------- edges, holds */

static void note_worker(DfTask *t, void *arg)
{
    *(int *)arg = df_task_worker(t);
}

DF_TEST(SchedNode, DependOnFinishedNodeRecordsItsWorker)
{
    DfSched *s = df_test_sched("cost-local", 2, 10);
    DF_ASSERT(s);
    int wa = -1, wb = -1;
    DfGroup *g = df_group_new(s, 0);
    DfNode *a = df_node_new(s, &(DfNodeDesc){.fn = note_worker, .arg = &wa, .group = g,
                                              .out_size = 4096});
    df_node_submit(a);
    df_sched_wait(s, g);
    DF_EXPECT_EQ_INT(df_node_worker(a), wa);
    /* a has finished: b's dependency holds at once, and b's input records
     * a's worker, so cost-local places b there. */
    DfNode *b = df_node_new(s, &(DfNodeDesc){.fn = note_worker, .arg = &wb, .group = g});
    df_node_depend(b, a, 4096);
    df_node_submit(b);
    df_sched_wait(s, g);
    DF_EXPECT(wb >= 0);
    df_node_release(a);
    df_node_release(b);
    df_group_release(g);
    df_sched_unref(s);
}

/* A scheduler of two workers with one node, held, submitted in its group:
 * the node notes its worker in `worker` once it runs. */
typedef struct Held {
    DfSched *s;
    DfGroup *g;
    DfNode *node;
    int worker;
} Held;

static bool held_open(Held *h, const char *policy)
{
    *h = (Held){.worker = -1};
    h->s = df_test_sched(policy, 2, 10);
    if (!h->s)
        return false;
    h->g = df_group_new(h->s, 0);
    h->node = df_node_new(h->s, &(DfNodeDesc){.fn = note_worker, .arg = &h->worker, .group = h->g});
    df_node_hold(h->node);
    df_node_submit(h->node);
    return true;
}

static void held_close(Held *h)
{
    df_node_release(h->node);
    df_group_release(h->g);
    df_sched_unref(h->s);
}

DF_TEST(SchedNode, HoldFromAnotherThread)
{
    Held h;
    DF_ASSERT(held_open(&h, "steal"));
    DF_EXPECT(!df_group_done(h.g));
    df_node_unhold(h.node);
    df_sched_wait(h.s, h.g);
    DF_EXPECT(h.worker >= 0);
    held_close(&h);
}

/* A thread outside the scheduler waits for a group with a time limit: a
 * held node cannot finish, so the wait gives up, and not before the limit;
 * once the node may run, the wait returns done. */
DF_TEST(SchedWait, WaitUntilGivesUpAtTheLimit)
{
    Held h;
    DF_ASSERT(held_open(&h, "cost-local"));
    const int64_t until = df_now_ns() + 3000000;
    DF_EXPECT(!df_sched_wait_until(h.s, h.g, until));
    DF_EXPECT(df_now_ns() >= until);
    DF_EXPECT(!df_sched_wait_until(h.s, h.g, 0)); /* a limit in the past: no wait */
    DF_EXPECT(h.worker < 0);
    df_node_unhold(h.node);
    DF_EXPECT(df_sched_wait_until(h.s, h.g, df_now_ns() + 60 * (int64_t)1000000000));
    DF_EXPECT(h.worker >= 0);
    DF_EXPECT(df_sched_wait_until(h.s, h.g, 0)); /* done: true whatever the limit */
    held_close(&h);
}

DF_TEST(SchedNode, DiscardRunsCancelNotBody)
{
    DfSched *s = df_test_sched("fifo", 1, 10);
    DF_ASSERT(s);
    Cancel c = {0};
    DfGroup *g = df_group_new(s, 0);
    DfNode *a = df_node_new(s, &(DfNodeDesc){.fn = cbody, .cancel = ccancel, .arg = &c, .group = g});
    DfNode *b = df_node_new(s, &(DfNodeDesc){.fn = after, .arg = &c, .group = g});
    df_node_depend(b, a, 0);
    df_node_submit(b);
    df_node_discard(a);
    df_sched_wait(s, g);
    DF_EXPECT_EQ_INT(atomic_load(&c.ran), 0);
    DF_EXPECT_EQ_INT(atomic_load(&c.cancelled), 1);
    DF_EXPECT_EQ_INT(atomic_load(&c.saw_pred_cancelled), 1);
    df_node_release(a);
    df_node_release(b);
    df_group_release(g);
    df_sched_unref(s);
}

/* ---------------------------------------------------------- creation */

DF_TEST(SchedConfig, BadValuesAreClearErrors)
{
    DfSchedConfig cfg;
    DfSched *s = NULL;
    DfError err = {0};
    df_sched_config_init(&cfg);
    cfg.policy = "round-robin";
    DF_EXPECT(df_sched_new(&cfg, &s, &err) < 0);
    DF_EXPECT(strstr(err.msg, "unknown policy") && strstr(err.msg, "cost-local"));
    df_sched_config_init(&cfg);
    cfg.cpuset = "x-y";
    DF_EXPECT(df_sched_new(&cfg, &s, &err) < 0);
    DF_EXPECT(strstr(err.msg, "CPU set") != NULL);
    df_sched_config_init(&cfg);
    cfg.topology = "bogus:3";
    DF_EXPECT(df_sched_new(&cfg, &s, &err) < 0);
    DF_EXPECT(strstr(err.msg, "topology") != NULL);
    df_sched_config_init(&cfg);
    cfg.poll_us = -5;
    DF_EXPECT(df_sched_new(&cfg, &s, &err) < 0);
    DF_EXPECT(s == NULL);
}

/* One registry lists the policies: names, blurbs and indices agree in
 * every view of it, and indices never move (dfdec's enum values are them). */
DF_TEST(SchedConfig, PolicyRegistry)
{
    const int n = df_policy_count();
    const char *const *names = df_policy_names();
    static const char *const first[] = {"fifo", "steal", "cost", "cost-local", "learned"};
    DF_ASSERT(n >= (int)(sizeof(first) / sizeof(first[0])));
    for (size_t i = 0; i < sizeof(first) / sizeof(first[0]); i++)
        DF_EXPECT_MSG(strcmp(df_policy_info((int)i)->name, first[i]) == 0,
                      "policy %zu is %s, was %s", i, df_policy_info((int)i)->name, first[i]);
    for (int i = 0; i < n; i++) {
        const DfPolicyInfo *info = df_policy_info(i);
        DF_ASSERT(info && info->name && info->blurb);
        DF_EXPECT(*info->name && *info->blurb && !strchr(info->blurb, '\n'));
        DF_EXPECT(names[i] && strcmp(names[i], info->name) == 0);
        DF_EXPECT_EQ_INT(df_policy_index(info->name), i); /* also: no name twice */
    }
    DF_EXPECT(names[n] == NULL);
    DF_EXPECT(df_policy_info(n) == NULL && df_policy_info(-1) == NULL);
    DF_EXPECT_EQ_INT(df_policy_index("nope"), -1);
    DF_EXPECT_EQ_INT(df_policy_index(NULL), -1);
    DF_EXPECT(df_policy_index(DF_POLICY_DEFAULT) >= 0);
}

DF_TEST(SchedConfig, DefaultsAndSharedScheduler)
{
    DfSched *a = NULL, *b = NULL;
    DF_ASSERT_EQ_INT(df_sched_get_shared(NULL, &a, NULL), 0);
    DF_ASSERT_EQ_INT(df_sched_get_shared(NULL, &b, NULL), 0);
    DF_EXPECT(a == b);
    DF_EXPECT(df_sched_n_workers(a) >= 1);
    DF_EXPECT(strcmp(df_sched_policy_name(a), "cost-local") == 0);
    char desc[256];
    df_sched_describe(a, desc, sizeof(desc));
    DF_EXPECT(strstr(desc, "workers") != NULL);
    df_sched_unref(a);
    df_sched_unref(b);
    /* After the last reference a new one is created. */
    DF_ASSERT_EQ_INT(df_sched_get_shared(NULL, &a, NULL), 0);
    df_sched_unref(a);
}

DF_TEST(SchedConfig, SyntheticTopologyOnRealWorkers)
{
    DfSchedConfig cfg;
    df_sched_config_init(&cfg);
    cfg.n_workers = 8;
    cfg.topology = "package:2 core:2 pu:2";
    DfSched *s;
    DfError err;
    DF_ASSERT_MSG(df_sched_new(&cfg, &s, &err) == 0, "%s", err.msg);
    DF_EXPECT_EQ_INT(df_sched_level(s, 0, 1), DF_LEVEL_PU);
    DF_EXPECT_EQ_INT(df_sched_level(s, 0, 2), DF_LEVEL_NUMA);
    DF_EXPECT_EQ_INT(df_sched_level(s, 0, 4), DF_LEVEL_MACHINE);
    DF_EXPECT_EQ_INT(df_sched_trcost(s, 4, 0), 16);
    Dag d;
    run_random_dag(s, 20000, 7, &d);
    DF_EXPECT_EQ_INT(dag_check(&d), 0);
    dag_free(&d);
    df_sched_unref(s);
}

/* --------------------------------------------------- module table */

typedef struct Pipe {
    _Atomic int d_done[64], r_done[64][4], o_done[64];
    _Atomic int violations;
} Pipe;

typedef struct PipeInst {
    Pipe *p;
    int k;
} PipeInst;

static void mod_d(DfTask *t, void *arg)
{
    PipeInst *pi = arg;
    if (pi->k > 0 && !atomic_load(&pi->p->d_done[pi->k - 1]))
        atomic_fetch_add(&pi->p->violations, 1);
    atomic_store(&pi->p->d_done[pi->k], 1);
}

static void mod_r(DfTask *t, void *arg)
{
    PipeInst *pi = arg;
    if (!atomic_load(&pi->p->d_done[pi->k]))
        atomic_fetch_add(&pi->p->violations, 1);
    atomic_store(&pi->p->r_done[pi->k][df_task_index(t)], 1);
}

static void mod_o(DfTask *t, void *arg)
{
    PipeInst *pi = arg;
    for (int b = 0; b < 4; b++)
        if (!atomic_load(&pi->p->r_done[pi->k][b]))
            atomic_fetch_add(&pi->p->violations, 1);
    if (pi->k > 0 && !atomic_load(&pi->p->o_done[pi->k - 1]))
        atomic_fetch_add(&pi->p->violations, 1);
    atomic_store(&pi->p->o_done[pi->k], 1);
}

DF_TEST(SchedGraph, ModuleTableInstantiatedPerFrame)
{
    enum { D, R, O };
    const DfLink d_preds[] = {{D, DF_LINK_ALL, true}};
    const DfLink r_preds[] = {{D, DF_LINK_ALL, false}};
    const DfLink o_preds[] = {{R, DF_LINK_ALL, false}, {O, DF_LINK_ALL, true}};
    const DfModuleDesc mods[] = {
        [D] = {"D", mod_d, NULL, d_preds, 1, 0, 1 << 20, 1},
        [R] = {"R", mod_r, NULL, r_preds, 1, 1, 1 << 18, 4},
        [O] = {"O", mod_o, NULL, o_preds, 2, 2, 0, 1},
    };
    const char *const *policies = df_policy_names();
    for (int p = 0; policies[p]; p++) {
        DfSched *s = df_test_sched(policies[p], 3, 10);
        DF_ASSERT(s);
        DfGraphInfo *info;
        DfError err;
        DF_ASSERT_MSG(df_graph_compile(s, mods, 3, &info, &err) == 0, "%s", err.msg);
        Pipe pipe = {0};
        PipeInst pis[64];
        DfInstance *prev = NULL;
        DfGroup *g = df_group_new(s, 0);
        for (int k = 0; k < 64; k++) {
            pis[k] = (PipeInst){&pipe, k};
            DfInstanceParams ip = {.arg = &pis[k], .group = g, .prev = prev};
            DfInstance *inst = df_graph_instantiate(info, &ip);
            DF_ASSERT(inst);
            DF_EXPECT_EQ_INT(df_instance_width(inst, R), 4);
            df_instance_submit(inst);
            if (prev)
                df_instance_release(prev);
            prev = inst;
        }
        df_sched_wait(s, g);
        df_instance_release(prev);
        df_group_release(g);
        for (int k = 0; k < 64; k++)
            DF_EXPECT(atomic_load(&pipe.o_done[k]));
        DF_EXPECT_EQ_INT(atomic_load(&pipe.violations), 0);
        DF_EXPECT(strcmp(df_sched_module_name(s, df_sched_module_id(s, "R")), "R") == 0);
        df_graph_free(info);
        df_sched_unref(s);
    }
}

DF_TEST(SchedGraph, CompileRejectsBadTables)
{
    DfSched *s = df_test_sched("fifo", 1, 10);
    DF_ASSERT(s);
    DfGraphInfo *info;
    DfError err;
    const DfLink ab[] = {{1, DF_LINK_ALL, false}}, ba[] = {{0, DF_LINK_ALL, false}};
    const DfModuleDesc cyc[] = {{"A", nop, NULL, ab, 1, 0, 0, 1}, {"B", nop, NULL, ba, 1, 0, 0, 1}};
    DF_EXPECT(df_graph_compile(s, cyc, 2, &info, &err) < 0);
    DF_EXPECT(strstr(err.msg, "cycle") != NULL);
    const DfLink bad[] = {{7, DF_LINK_ALL, false}};
    const DfModuleDesc unk[] = {{"A", nop, NULL, bad, 1, 0, 0, 1}};
    DF_EXPECT(df_graph_compile(s, unk, 1, &info, &err) < 0);
    DF_EXPECT(strstr(err.msg, "unknown module") != NULL);
    const DfLink same[] = {{0, DF_LINK_SAME_INDEX, false}};
    const DfModuleDesc wid[] = {{"A", nop, NULL, NULL, 0, 0, 0, 2}, {"B", nop, NULL, same, 1, 0, 0, 3}};
    DF_EXPECT(df_graph_compile(s, wid, 2, &info, &err) < 0);
    DF_EXPECT(strstr(err.msg, "width") != NULL);
    /* A prev-instance self link is not a cycle. */
    const DfLink self_prev[] = {{0, DF_LINK_ALL, true}};
    const DfModuleDesc chain[] = {{"D", nop, NULL, self_prev, 1, 0, 0, 1}};
    DF_EXPECT(df_graph_compile(s, chain, 1, &info, &err) == 0);
    df_graph_free(info);
    df_sched_unref(s);
}

/* ------------------------------------------------------ trace, stats */

DF_TEST(SchedTrace, RecordsEveryTaskWithInputs)
{
    DfSchedConfig cfg;
    df_sched_config_init(&cfg);
    cfg.n_workers = 2;
    cfg.trace_capacity = 10000;
    DfSched *s;
    DF_ASSERT_EQ_INT(df_sched_new(&cfg, &s, NULL), 0);
    int mod = df_sched_module_id(s, "band");
    DfGroup *g = df_group_new(s, 0);
    df_group_set_tag(g, 42);
    DfNode *prod = df_node_new(s, &(DfNodeDesc){.fn = nop, .module = mod, .group = g,
                                                 .out_size = 1000});
    DfNode *cons[5];
    for (int i = 0; i < 5; i++) {
        cons[i] = df_node_new(s, &(DfNodeDesc){.fn = nop, .module = mod, .index = i, .group = g});
        df_node_depend(cons[i], prod, 1000);
        df_node_submit(cons[i]);
    }
    df_node_submit(prod);
    df_sched_wait(s, g);
    DfTrace tr;
    DF_ASSERT_EQ_INT(df_sched_trace_collect(s, &tr), 0);
    DF_EXPECT_EQ_INT(tr.n_events, 6);
    DF_EXPECT_EQ_INT(tr.n_inputs, 5);
    DF_EXPECT_EQ_INT(tr.n_workers, 2);
    for (size_t i = 0; i < tr.n_events; i++) {
        DF_EXPECT_EQ_INT(tr.events[i].tag, 42);
        DF_EXPECT(tr.events[i].end_ns >= tr.events[i].start_ns);
        DF_EXPECT(strcmp(tr.module_names[tr.events[i].module], "band") == 0);
    }
    for (size_t i = 0; i < tr.n_inputs; i++) {
        DF_EXPECT(tr.inputs[i].pred_id == df_node_id(prod));
        DF_EXPECT_EQ_INT(tr.inputs[i].worker, df_node_worker(prod));
        DF_EXPECT_EQ_INT(tr.inputs[i].bytes, 1000);
    }
    /* Events are sorted by start time; the producer comes first. */
    DF_EXPECT(tr.events[0].node_id == df_node_id(prod));
    df_trace_free(&tr);
    df_sched_trace_stop(s);
    DF_EXPECT(!df_sched_tracing(s));
    df_node_release(prod);
    for (int i = 0; i < 5; i++)
        df_node_release(cons[i]);
    df_group_release(g);
    df_sched_unref(s);
}

/* A root task spawns tasks; some before the trace starts (short nodes,
 * without the tail that holds the creation record), some after. */
#define SPAWN_HALF 50

typedef struct SpawnTrace {
    uint64_t root_id;
    uint64_t ids[2 * SPAWN_HALF];
    int started;
} SpawnTrace;

static void record_id(DfTask *t, void *arg)
{
    *(uint64_t *)arg = df_node_id(df_task_node(t));
}

static void spawn_across_trace_start(DfTask *t, void *arg)
{
    SpawnTrace *st = arg;
    DfSched *s = df_task_sched(t);
    st->root_id = df_node_id(df_task_node(t));
    DfGroup *g = df_group_new(s, 0);
    for (int i = 0; i < SPAWN_HALF; i++)
        df_spawn(s, record_id, &st->ids[i], g);
    st->started = df_sched_trace_start(s, 1000);
    for (int i = SPAWN_HALF; i < 2 * SPAWN_HALF; i++)
        df_spawn(s, record_id, &st->ids[i], g);
    df_sched_wait(s, g);
    df_group_release(g);
}

/* Tasks spawned before tracing began are recorded when they run, as
 * created and ready at their start (they carry no creation record); those
 * spawned after carry it, with their parent. */
DF_TEST(SchedTrace, TasksSpawnedBeforeTheTraceStartedAreRecorded)
{
    DfSched *s = df_test_sched("cost-local", 1, 50);
    DF_ASSERT(s);
    SpawnTrace st = {0};
    df_test_run_task(s, spawn_across_trace_start, &st);
    DF_ASSERT_EQ_INT(st.started, 0);
    DfTrace tr;
    DF_ASSERT_EQ_INT(df_sched_trace_collect(s, &tr), 0);
    int seen[2] = {0, 0};
    for (size_t e = 0; e < tr.n_events; e++) {
        const DfTraceEvent *ev = &tr.events[e];
        for (int i = 0; i < 2 * SPAWN_HALF; i++) {
            if (ev->node_id != st.ids[i])
                continue;
            if (i < SPAWN_HALF) {
                seen[0]++;
                DF_EXPECT_MSG(ev->created_ns == ev->start_ns && ev->ready_ns == ev->start_ns &&
                                  ev->parent_id == 0,
                              "task %d spawned untraced: created %lld ready %lld start %lld "
                              "parent %llu",
                              i, (long long)ev->created_ns, (long long)ev->ready_ns,
                              (long long)ev->start_ns, (unsigned long long)ev->parent_id);
            } else {
                seen[1]++;
                DF_EXPECT_MSG(ev->created_ns <= ev->ready_ns && ev->ready_ns <= ev->start_ns &&
                                  ev->parent_id == st.root_id,
                              "task %d spawned traced: created %lld ready %lld start %lld "
                              "parent %llu (root %llu)",
                              i, (long long)ev->created_ns, (long long)ev->ready_ns,
                              (long long)ev->start_ns, (unsigned long long)ev->parent_id,
                              (unsigned long long)st.root_id);
            }
        }
    }
    DF_EXPECT_EQ_INT(seen[0], SPAWN_HALF);
    DF_EXPECT_EQ_INT(seen[1], SPAWN_HALF);
    df_trace_free(&tr);
    df_sched_unref(s);
}

/* ------------------------------------------------------------ placement */

#define SPAWN_MANY 400

typedef struct SpawnRun {
    int worker;
    bool stolen;
} SpawnRun;

typedef struct SpawnRoot {
    int worker;
    SpawnRun runs[SPAWN_MANY];
} SpawnRoot;

static void note_run(DfTask *t, void *arg)
{
    SpawnRun *r = arg;
    r->worker = df_task_worker(t);
    r->stolen = df_task_stolen(t);
}

static void spawn_many(DfTask *t, void *arg)
{
    SpawnRoot *sr = arg;
    DfSched *s = df_task_sched(t);
    sr->worker = df_task_worker(t);
    DfGroup *g = df_group_new(s, 0);
    for (int i = 0; i < SPAWN_MANY; i++)
        df_spawn(s, note_run, &sr->runs[i], g);
    df_sched_wait(s, g);
    df_group_release(g);
}

/* cost-local: a task spawned on a worker has no consumer to place, so it
 * is queued where it was spawned, and runs elsewhere only when an idle
 * worker steals it (spreading a burst of spawns over the other workers'
 * inboxes cost more than the tasks themselves). */
DF_TEST(SchedPlace, SpawnedTasksStayWithTheirSpawner)
{
    DfSched *s = df_test_sched("cost-local", 2, 50);
    DF_ASSERT(s);
    SpawnRoot *sr = calloc(1, sizeof(*sr));
    DF_ASSERT(sr);
    for (int round = 0; round < 5; round++) {
        df_test_run_task(s, spawn_many, sr);
        int away = 0, posted = 0;
        for (int i = 0; i < SPAWN_MANY; i++)
            if (sr->runs[i].worker != sr->worker) {
                away++;
                posted += !sr->runs[i].stolen;
            }
        DF_EXPECT_MSG(posted == 0,
                      "round %d: %d of %d tasks ran on the other worker, %d of them not stolen",
                      round, away, SPAWN_MANY, posted);
    }
    free(sr);
    df_sched_unref(s);
}

DF_TEST(SchedStats, BytesByLevelAndNoSlabGrowthInSteadyState)
{
    DfSched *s = df_test_sched("cost-local", 2, -1);
    DF_ASSERT(s);
    Dag d;
    run_random_dag(s, 20000, 3, &d);
    dag_free(&d);
    DfStats a;
    df_sched_stats(s, &a);
    uint64_t all = 0;
    for (int l = 0; l < DF_N_LEVELS; l++)
        all += a.total.bytes_level[l];
    DF_EXPECT(all > 0);
    DF_EXPECT_EQ_INT(a.total.bytes_local, a.total.bytes_level[DF_LEVEL_SELF]);
    double share = df_stats_local_share(&a);
    DF_EXPECT(share >= 0 && share <= 1);
    df_stats_free(&a);
    df_sched_unref(s);

    /* Memory is bounded by what is in flight, not by what ran: 100 rounds of
     * 1000 nodes (at most 1000 nodes, 6000 edges, 1000 input blocks alive)
     * fit in the chunks such a round needs, however many rounds run. */
    s = df_test_sched("cost-local", 2, 10);
    DF_ASSERT(s);
    for (int r = 0; r < 100; r++) {
        run_random_dag(s, 1000, (uint64_t)r + 1, &d);
        dag_free(&d);
    }
    df_sched_stats(s, &a);
    const uint64_t bound = (1000 / 256 + 1) + (6000 / 512 + 1) + (1000 / 128 + 1) + 1 + 4;
    DF_EXPECT_MSG(a.total.slab_chunks <= bound, "%llu slab chunks for 1000 nodes in flight",
                  (unsigned long long)a.total.slab_chunks);
    df_stats_free(&a);
    df_sched_stats_reset(s);
    df_sched_stats(s, &a);
    DF_EXPECT_EQ_INT(a.total.tasks_run, 0);
    df_stats_free(&a);
    df_sched_unref(s);
}
