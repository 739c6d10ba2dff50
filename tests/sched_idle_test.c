/* Idle, steal and park at many workers: what a poll costs must not grow
 * with the number of workers (counted, not timed), and no work is lost to
 * the has-work summary that makes it so. */
#include "dftest.h"
#include "policy_cost_local.h"
#include "sched_internal.h"
#include "sched_util.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BIG_TOPO "package:4 l3:2 core:16 pu:8" /* 1024 PUs */

/* A policy's ops, through the registry as the scheduler finds them. */
static const DfPolicyOps *ops_of(const char *name)
{
    const DfPolicyOps *ops = df_policy_find(name);
    if (!ops)
        abort();
    return ops;
}

/* A detached node without inputs (white box: no scheduler needed). */
static DfNode *bare_node(int64_t deadline)
{
    DfNode *n = calloc(1, sizeof(DfNode));
    n->deadline = deadline;
    n->placed = -1;
    return n;
}

typedef struct Policy {
    DfTopo topo;
    DfPolicy *p;
    const DfPolicyOps *ops;
} Policy;

static void policy_open(Policy *x, const DfPolicyOps *ops, int n_workers)
{
    /* Setup failures abort the process: these helpers return values. */
    if (df_topo_model(&x->topo, BIG_TOPO, n_workers, DF_COST_HIER, NULL, NULL) < 0)
        abort();
    DfPolicyEnv env = {.n_workers = n_workers, .topo = &x->topo, .seed = 7};
    x->ops = ops;
    if (ops->create(&env, &x->p) < 0)
        abort();
    x->p->ops = ops;
}

static void policy_close(Policy *x)
{
    x->ops->destroy(x->p);
    df_topo_fini(&x->topo);
}

/* Lines per steal of cost-local's worker 0, with `n_nodes` nodes spread
 * over the other workers; every node is found (none lost), and each within
 * a bounded number of polls. */
static double steal_lines(int n_workers, int n_nodes, int *max_polls)
{
    Policy x;
    policy_open(&x, ops_of("cost-local"), n_workers);
    DfNode **nodes = calloc((size_t)n_nodes, sizeof(*nodes));
    uint64_t rng = 12345;
    for (int i = 0; i < n_nodes; i++) {
        nodes[i] = bare_node(DF_NO_DEADLINE);
        const int owner = 1 + (int)(df_rand_next(&rng) % (uint64_t)(n_workers - 1));
        x.ops->push(x.p, owner, nodes[i]);
    }
    DfCostLocal *cl = (DfCostLocal *)x.p;
    int got = 0, polls = 0, since = 0;
    *max_polls = 0;
    while (got < n_nodes && polls < 100 * n_nodes) {
        DfNode *n = x.ops->pop(x.p, 0, NULL);
        polls++;
        since++;
        if (n) {
            /* Pushed from worker 1.. (a node without inputs may go round
             * robin, to 0 too): anything not placed on 0 was stolen. */
            DF_EXPECT(n->placed == 0 || (n->flags & DF_NF_STOLEN));
            got++;
            if (since > *max_polls)
                *max_polls = since;
            since = 0;
        }
    }
    DF_EXPECT_EQ_INT(got, n_nodes);
    DF_EXPECT(x.ops->pop(x.p, 0, NULL) == NULL);
    DF_EXPECT(!x.ops->has_work(x.p, 0, NULL));
    const double per_poll =
        (double)atomic_load_explicit(&cl->thief[0].lines, memory_order_relaxed) / polls;
    for (int i = 0; i < n_nodes; i++)
        free(nodes[i]);
    free(nodes);
    policy_close(&x);
    return per_poll;
}

/* A steal reads the same bounded number of lines at 16 and 1024 workers,
 * and finds work placed on any worker (two polls: the grace). */
DF_TEST(SchedIdle, StealIsBoundedAndFindsWorkAnywhere)
{
    /* Sticky victim (1 word) + up to 3 levels + one word per level of
     * each of 3 descents, + 3 victim sets. */
    const double bound = 1 + 3 + 3 * 3 + 3 * DF_READY_PROBE_LINES;
    int polls16, polls1024;
    const double l16 = steal_lines(16, 200, &polls16);
    const double l1024 = steal_lines(1024, 200, &polls1024);
    printf("steal: %.2f lines per poll at 16 workers, %.2f at 1024 (bound %.0f); "
           "at most %d and %d polls per node\n",
           l16, l1024, bound, polls16, polls1024);
    DF_EXPECT(l16 <= bound);
    DF_EXPECT(l1024 <= bound);
    DF_EXPECT(polls16 <= 2);
    DF_EXPECT(polls1024 <= 2);
}

/* The locality-blind policy finds every node too (random walks down the
 * summary), and its summary says "nothing" once they are all taken. */
DF_TEST(SchedIdle, StealPolicyFindsEveryNode)
{
    Policy x;
    policy_open(&x, ops_of("steal"), 1024);
    enum { N = 300 };
    DfNode *nodes[N];
    uint64_t rng = 99;
    for (int i = 0; i < N; i++) {
        nodes[i] = bare_node(DF_NO_DEADLINE);
        x.ops->push(x.p, 1 + (int)(df_rand_next(&rng) % 1023), nodes[i]);
    }
    DF_EXPECT(x.ops->has_work(x.p, 0, NULL));
    int got = 0, polls = 0;
    while (got < N && polls < 50 * N) {
        got += x.ops->pop(x.p, 5, NULL) != NULL;
        polls++;
    }
    DF_EXPECT_EQ_INT(got, N);
    DF_EXPECT(!x.ops->has_work(x.p, 5, NULL));
    for (int i = 0; i < N; i++)
        free(nodes[i]);
    policy_close(&x);
}

/* Among the candidates it looks at, a thief takes the most urgent node:
 * two victims in its own L3, the later one pushed with the earlier
 * deadline. */
DF_TEST(SchedIdle, StealPrefersTheMostUrgentCandidate)
{
    Policy x;
    policy_open(&x, ops_of("cost-local"), 16);
    DfNode *late = bare_node(2000000000000), *soon = bare_node(1000000000000);
    x.ops->push(x.p, 1, late);
    x.ops->push(x.p, 2, soon);
    /* One L3 of 16 workers: both are candidates on every poll. */
    DfNode *first = NULL;
    for (int k = 0; k < 8 && !first; k++)
        first = x.ops->pop(x.p, 0, NULL);
    DF_EXPECT(first == soon);
    free(late);
    free(soon);
    policy_close(&x);
}

/* Worker 0 steals from worker 1 while worker 1 takes two of its own nodes
 * between the thief's two looks (`spawned`: tasks of df_spawn, else graph
 * nodes that read 1000 bytes worker 1 produced).  Whether the thief got a
 * node (flagged stolen) on its second look, and on a third. */
static void steal_while_owner_takes(bool spawned, bool *second, bool *third)
{
    Policy x;
    policy_open(&x, ops_of("cost-local"), 2);
    DfNode *nodes[8];
    for (int i = 0; i < 8; i++) {
        nodes[i] = bare_node(DF_NO_DEADLINE);
        if (spawned) {
            nodes[i]->flags = DF_NF_SPAWNED;
        } else {
            nodes[i]->n_inputs = 1;
            nodes[i]->in[0] = (DfInput){.bytes = 1000, .worker = 1};
            nodes[i]->in_bytes = 1000;
        }
        x.ops->push(x.p, 1, nodes[i]);
        DF_EXPECT_EQ_INT(nodes[i]->placed, 1);
    }
    DF_EXPECT(x.ops->pop(x.p, 0, NULL) == NULL); /* the first look arms */
    DF_EXPECT(x.ops->pop(x.p, 1, NULL) == nodes[0]);
    DF_EXPECT(x.ops->pop(x.p, 1, NULL) == nodes[1]);
    const DfNode *n = x.ops->pop(x.p, 0, NULL);
    *second = n && (n->flags & DF_NF_STOLEN);
    n = n ? NULL : x.ops->pop(x.p, 0, NULL);
    *third = n && (n->flags & DF_NF_STOLEN);
    for (int i = 0; i < 8; i++)
        free(nodes[i]);
    policy_close(&x);
}

/* A waiting owner takes its burst of spawned tasks one at a time: an idle
 * worker shares them even while the owner's head moves (a few nodes per
 * look), since a spawned task has no locality to lose.  A graph node
 * placed by its input bytes is stolen only from a head that stood still
 * between two looks: the owner is about to take it where its data is. */
DF_TEST(SchedIdle, ThievesShareABurstOfSpawnedTasks)
{
    bool second, third;
    steal_while_owner_takes(true, &second, &third);
    DF_EXPECT_MSG(second, "a spawned task was not stolen while its owner took two");
    steal_while_owner_takes(false, &second, &third);
    DF_EXPECT_MSG(!second, "a graph node was stolen from a moving head");
    DF_EXPECT_MSG(third, "a graph node under a still head was not stolen");
}

static int64_t sum_parks(DfSched *s, DfStats *st)
{
    df_sched_stats(s, st);
    const int64_t parks = (int64_t)st->total.parks;
    return parks;
}

static void noop(DfTask *t, void *arg)
{
    atomic_fetch_add((_Atomic int *)arg, 1);
}

/* Idle workers of a scheduler on the synthetic 1024-PU machine: per idle
 * poll each reads a bounded number of shared lines, the same bound at 16
 * and at 1024 workers; all of them park with every set empty, and work
 * submitted afterwards still runs (a parked worker is woken). */
static double idle_lines(int n_workers, const char *policy)
{
    DfSchedConfig cfg;
    df_sched_config_init(&cfg);
    cfg.n_workers = n_workers;
    cfg.topology = BIG_TOPO;
    cfg.policy = policy;
    cfg.pin = false;
    cfg.stack_size = 256 << 10;
    DfSched *s;
    DfError err;
    const int ret = df_sched_new(&cfg, &s, &err);
    DF_EXPECT_MSG(ret == 0, "%s", err.msg);
    if (ret < 0)
        return 1e9;
    DfStats st;
    const int64_t t_end = df_now_ns() + 60000000000ll;
    /* Every worker parks once: nothing is queued anywhere. */
    while (sum_parks(s, &st) < n_workers && df_now_ns() < t_end) {
        df_stats_free(&st);
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    DF_EXPECT_MSG(st.total.parks >= (uint64_t)n_workers, "%llu of %d workers parked",
                  (unsigned long long)st.total.parks, n_workers);
    const double per_round =
        st.total.idle_rounds ? (double)st.total.idle_lines / (double)st.total.idle_rounds : 0;
    DF_EXPECT(st.total.idle_rounds > 0);
    df_stats_free(&st);
    /* Work from outside: a parked worker is woken and runs it. */
    _Atomic int ran = 0;
    DfGroup *g = df_group_new(s, DF_NO_DEADLINE);
    for (int i = 0; i < 64; i++)
        df_spawn(s, noop, (void *)&ran, g);
    df_sched_wait(s, g);
    df_group_release(g);
    DF_EXPECT_EQ_INT(atomic_load(&ran), 64);
    df_sched_unref(s);
    return per_round;
}

DF_TEST(SchedIdle, IdlePollReadsBoundedLinesAtAnyWorkerCount)
{
    const double bound = 2; /* the has-work summary's root, whatever N */
    const char *const policies[] = {"cost-local", "steal"};
    for (int k = 0; k < 2; k++) {
        const double at16 = idle_lines(16, policies[k]);
        const double at1024 = idle_lines(1024, policies[k]);
        printf("%s: %.2f shared lines per idle poll at 16 workers, %.2f at 1024 (bound %.0f)\n",
               policies[k], at16, at1024, bound);
        DF_EXPECT(at16 <= bound);
        DF_EXPECT(at1024 <= bound);
    }
}

/* A bit left set over an empty word (a setter that lost the race with a
 * clearer, summary.c) keeps has_work true only until the next steal walks
 * past it, wherever it is: in another domain, or above the thief's own
 * leaf, which no descent of the thief's would meet. */
DF_TEST(SchedIdle, StaleSummaryBitsAreCleared)
{
    Policy x;
    policy_open(&x, ops_of("cost-local"), 1024);
    DfCostLocal *cl = (DfCostLocal *)x.p;
    DfSummary *sum = &cl->rs.work;
    DF_ASSERT(sum->depth >= 2);
    const int victims[] = {700, 0};
    for (int k = 0; k < 2; k++) {
        /* Worker v's leaf flagged in its parent, with the leaf empty. */
        const int leaf = sum->leaf_of[victims[k]];
        const int parent = sum->words[leaf].parent;
        df_summary_set(sum, victims[k]);
        atomic_store(&sum->words[leaf].bits, 0);
        DF_EXPECT(df_summary_word(sum, parent) != 0);
        DF_EXPECT(x.ops->has_work(x.p, 0, NULL));
        DF_EXPECT(x.ops->pop(x.p, 0, NULL) == NULL);
        DF_EXPECT(x.ops->pop(x.p, 0, NULL) == NULL);
        DF_EXPECT_MSG(!x.ops->has_work(x.p, 0, NULL), "stale bit above worker %d", victims[k]);
    }
    policy_close(&x);
}

/* The word every producer reads after a push to decide on a wake-up is
 * the parked summary's root (worker.c).  Workers park and wake all the
 * time; the root must change only when a top-level domain gets its first
 * parked worker or loses its last, so that at 1024 workers the line stays
 * shared instead of moving with every park (a global parked count would
 * change on each).  Random parks and wakes on the 1024-PU machine, half
 * of the workers parked on average; the root is non-zero exactly while
 * someone is parked. */
DF_TEST(SchedIdle, ParkHandshakeWordChangesOnlyPerDomain)
{
    const int n = 1024;
    DfTopo topo;
    DF_ASSERT(df_topo_model(&topo, BIG_TOPO, n, DF_COST_HIER, NULL, NULL) == 0);
    DfSummary ps;
    DF_ASSERT(df_summary_init(&ps, &topo, n) == 0);
    DF_ASSERT(ps.depth >= 2);
    bool *parked = calloc((size_t)n, sizeof(bool));
    DF_ASSERT(parked);
    uint64_t rng = 99, root = 0;
    int n_parked = 0;
    long changes = 0, ops = 0, bad = 0;
    for (int round = 0; round < 200000; round++) {
        const int w = (int)(df_rand_next(&rng) % (uint64_t)n);
        if (parked[w]) { /* woken: as clear_parked does */
            const uint64_t bit = 1ull << ps.bit_of[w];
            if (df_summary_clear_bit(&ps, w) == bit)
                df_summary_clear_up(&ps, w);
            n_parked--;
        } else {
            df_summary_set_path(&ps, w);
            n_parked++;
        }
        parked[w] = !parked[w];
        ops++;
        const uint64_t now = df_summary_word(&ps, ps.root);
        changes += now != root;
        bad += (now != 0) != (n_parked > 0);
        root = now;
    }
    printf("%ld parks and wakes at %d workers: the root changed %ld times\n", ops, n, changes);
    DF_EXPECT_EQ_INT(bad, 0);
    DF_EXPECT_MSG(changes * 1000 < ops, "root changed %ld times in %ld parks and wakes", changes,
                  ops);
    /* Everyone leaves: the root goes to zero, as a producer must see. */
    for (int w = 0; w < n; w++)
        if (parked[w]) {
            const uint64_t bit = 1ull << ps.bit_of[w];
            if (df_summary_clear_bit(&ps, w) == bit)
                df_summary_clear_up(&ps, w);
        }
    DF_EXPECT(df_summary_word(&ps, ps.root) == 0);
    free(parked);
    df_summary_fini(&ps);
    df_topo_fini(&topo);
}

/* Two workers of one leaf word park at once.  The first made the leaf
 * non-zero and is still on its way up (here: it stopped after its leaf
 * RMW); the second must not stop at the non-zero leaf, or the root that
 * producers read shows nobody parked while it sleeps (and the first may
 * return at once, its group done, without waking it). */
DF_TEST(SchedIdle, ParkerShowsInTheRootWhileAnotherIsOnItsWay)
{
    const int n = 1024;
    DfTopo topo;
    DF_ASSERT(df_topo_model(&topo, BIG_TOPO, n, DF_COST_HIER, NULL, NULL) == 0);
    DfSummary ps;
    DF_ASSERT(df_summary_init(&ps, &topo, n) == 0);
    DF_ASSERT(ps.depth >= 2);
    const int first = 5, second = 6;
    DF_ASSERT(ps.leaf_of[first] == ps.leaf_of[second]);
    atomic_fetch_or(&ps.words[ps.leaf_of[first]].bits, 1ull << ps.bit_of[first]);
    DF_EXPECT(df_summary_word(&ps, ps.root) == 0);
    df_summary_set_path(&ps, second);
    DF_EXPECT_MSG(df_summary_word(&ps, ps.root) != 0, "worker %d parked, but the root shows nobody",
                  second);
    df_summary_fini(&ps);
    df_topo_fini(&topo);
}

typedef struct Waiter {
    DfGroup *awaited;
    _Atomic int started, returned;
} Waiter;

static void wait_body(DfTask *t, void *arg)
{
    Waiter *wt = arg;
    /* Both bodies running at once, so on two workers (a wait could
     * otherwise run the other body nested, on the same worker). */
    atomic_fetch_add(&wt->started, 1);
    const int64_t t_end = df_now_ns() + 60000000000ll;
    while (atomic_load(&wt->started) < 2 && df_now_ns() < t_end)
        ;
    df_sched_wait(df_task_sched(t), wt->awaited);
    atomic_fetch_add(&wt->returned, 1);
}

/* Two tasks on two workers wait inside their bodies for one group whose
 * only node is held: both workers park on it.  Its finisher wakes parked
 * waiters by the worker the group recorded, or, with several, by looking
 * at every worker; both must come back once the node may run. */
DF_TEST(SchedIdle, SeveralWorkersParkedOnOneGroupAllWake)
{
    const char *const *pol = df_policy_names();
    for (int p = 0; pol[p]; p++) {
        DfSchedConfig cfg;
        df_sched_config_init(&cfg);
        cfg.policy = pol[p];
        cfg.n_workers = 2;
        cfg.poll_us = 10;
        cfg.pin = false;
        DfSched *s;
        DfError err;
        DF_ASSERT_MSG(df_sched_new(&cfg, &s, &err) == 0, "%s", err.msg);
        DfGroup *g = df_group_new(s, 0);
        _Atomic int ran = 0;
        DfNode *held = df_node_new(s, &(DfNodeDesc){.fn = noop, .arg = (void *)&ran, .group = g});
        df_node_hold(held);
        df_node_submit(held);
        Waiter wt = {.awaited = g};
        DfGroup *outer = df_group_new(s, 0);
        for (int i = 0; i < 2; i++)
            df_spawn(s, wait_body, &wt, outer);
        /* Both workers parked waiting on g (the watchdog: 60 s). */
        const int64_t t_end = df_now_ns() + 60000000000ll;
        bool both = false;
        while (!both && df_now_ns() < t_end) {
            both = true;
            for (int i = 0; i < 2; i++)
                both &= atomic_load(&s->workers[i].waiting_on) == g &&
                        atomic_load(&s->state[i].v) == DF_WS_PARKED;
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
        }
        DF_EXPECT_MSG(both, "%s: the two waiters never both parked on the group", pol[p]);
        DF_EXPECT_EQ_INT(atomic_load(&g->parked_worker), -1);
        df_node_unhold(held);
        DF_EXPECT_MSG(df_sched_wait_until(s, outer, df_now_ns() + 60000000000ll),
                      "%s: a waiter parked on the group was not woken", pol[p]);
        DF_EXPECT_EQ_INT(atomic_load(&wt.returned), 2);
        DF_EXPECT_EQ_INT(atomic_load(&ran), 1);
        df_node_release(held);
        df_group_release(outer);
        df_group_release(g);
        df_sched_unref(s);
    }
}

typedef struct Published {
    DfSched *s;
    int n_jobs;
    _Atomic int wrong, seen;
} Published;

/* Job j of an ordered batch: while it runs, its worker shows it to thieves
 * (it released job j + 1 at its start), the last job not (it released
 * nothing). */
static void published_job(void *ctx, int jobnr, int threadnr)
{
    Published *p = ctx;
    const int w = df_sched_current_worker(p->s);
    if (w < 0)
        return;
    const uint64_t want = jobnr < p->n_jobs - 1 ? df_sched_current_node_id(p->s) : 0;
    atomic_fetch_add(&p->seen, 1);
    if (atomic_load(&p->s->state[w].running) != want)
        atomic_fetch_add(&p->wrong, 1);
}

static void run_published(DfTask *t, void *arg)
{
    Published *p = arg;
    DfJobs jobs = {
        .n_jobs = p->n_jobs, .fn = published_job, .ctx = p, .ordered_start = true, .module = -1};
    df_jobs_run(df_task_sched(t), &jobs);
}

/* What a thief compares a WPP row's start_pred_id with
 * (df_env_worker_running): the releaser each worker runs, nothing once it
 * is done. */
DF_TEST(SchedIdle, WorkersPublishTheRowTheyRun)
{
    DfSched *s = df_test_sched("cost-local", 2, 10);
    DF_ASSERT(s);
    Published p = {.s = s, .n_jobs = 40};
    df_test_run_task(s, run_published, &p);
    DF_EXPECT_EQ_INT(atomic_load(&p.seen), 40);
    DF_EXPECT_EQ_INT(atomic_load(&p.wrong), 0);
    for (int i = 0; i < 2; i++)
        DF_EXPECT_EQ_INT(atomic_load(&s->state[i].running), 0);
    df_sched_unref(s);
}
