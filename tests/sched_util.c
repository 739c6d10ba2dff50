#include "sched_util.h"
#include "dftest.h"

#include <stdio.h>
#include <stdlib.h>

DfSched *df_test_sched(const char *policy, int n, int poll_us)
{
    DfSchedConfig cfg;
    df_sched_config_init(&cfg);
    cfg.policy = policy;
    cfg.n_workers = n;
    cfg.poll_us = poll_us;
    DfSched *s = NULL;
    DfError err = {0};
    if (df_sched_new(&cfg, &s, &err) < 0) {
        df_test_fail(__FILE__, __LINE__, true, "df_sched_new(%s, %d): %s", policy, n, err.msg);
        return NULL;
    }
    return s;
}

static void gated(DfTask *t, void *arg)
{
    DfTestGate *g = arg;
    atomic_store(&g->worker, df_task_worker(t));
    atomic_store(&g->started, 1);
    while (!atomic_load(&g->open))
        ;
}

void df_test_hold_worker(DfSched *s, DfTestGate *gate, DfGroup *g)
{
    df_spawn(s, gated, gate, g);
    while (!atomic_load(&gate->started))
        ;
}

void df_test_run_task(DfSched *s, DfTaskFn fn, void *arg)
{
    DfGroup *g = df_group_new(s, 0);
    df_spawn(s, fn, arg, g);
    df_sched_wait(s, g);
    df_group_release(g);
}

uint64_t df_test_rand(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    return x;
}

/* ------------------------------------------------------------ random DAG */


typedef struct DagNodeArg {
    Dag *dag;
    int i;
} DagNodeArg;

static void dag_body(DfTask *t, void *arg)
{
    DagNodeArg *a = arg;
    Dag *d = a->dag;
    for (int k = 0; k < DAG_MAX_PREDS; k++) {
        int p = d->preds[a->i * DAG_MAX_PREDS + k];
        if (p >= 0 && !atomic_load_explicit(&d->done[p], memory_order_acquire))
            atomic_fetch_add(&d->order_violations, 1);
    }
    atomic_fetch_add_explicit(&d->runs[a->i], 1, memory_order_relaxed);
    atomic_store_explicit(&d->done[a->i], 1, memory_order_release);
}

/* Build and run a random DAG of n nodes from the calling thread while the
 * workers already run its beginning (edges race with completions). */
void run_random_dag(DfSched *s, int n, uint64_t seed, Dag *d)
{
    d->n = n;
    d->preds = malloc(sizeof(int) * (size_t)n * DAG_MAX_PREDS);
    d->runs = calloc((size_t)n, sizeof(*d->runs));
    d->done = calloc((size_t)n, sizeof(*d->done));
    atomic_init(&d->order_violations, 0);
    DagNodeArg *args = malloc(sizeof(*args) * (size_t)n);
    DfNode *window[DAG_WINDOW] = {0};
    uint64_t rng = seed | 1;
    DfGroup *g = df_group_new(s, 0);
    for (int i = 0; i < n; i++) {
        args[i] = (DagNodeArg){d, i};
        DfNodeDesc desc = {.fn = dag_body, .arg = &args[i], .module = -1, .group = g,
                           .out_size = 64 + rng % 4096};
        DfNode *node = df_node_new(s, &desc);
        int np = i == 0 ? 0 : (int)(df_test_rand(&rng) % (DAG_MAX_PREDS + 1));
        for (int k = 0; k < DAG_MAX_PREDS; k++) {
            int p = -1;
            if (k < np) {
                int back = 1 + (int)(df_test_rand(&rng) % (i < DAG_WINDOW ? (uint64_t)i : DAG_WINDOW));
                p = i - back;
                for (int j = 0; j < k; j++)
                    if (d->preds[i * DAG_MAX_PREDS + j] == p)
                        p = -1; /* no duplicate edge */
            }
            d->preds[i * DAG_MAX_PREDS + k] = p;
            if (p >= 0)
                df_node_depend(node, window[p % DAG_WINDOW], 1 + df_test_rand(&rng) % 65536);
        }
        df_node_submit(node);
        if (window[i % DAG_WINDOW])
            df_node_release(window[i % DAG_WINDOW]);
        window[i % DAG_WINDOW] = node;
    }
    df_sched_wait(s, g);
    df_group_release(g);
    for (int k = 0; k < DAG_WINDOW; k++)
        if (window[k])
            df_node_release(window[k]);
    free(args);
}

void dag_free(Dag *d)
{
    free(d->preds);
    free(d->runs);
    free((void *)d->done);
}

int dag_check(Dag *d)
{
    int bad = 0;
    for (int i = 0; i < d->n; i++)
        if (atomic_load(&d->runs[i]) != 1)
            bad++;
    return bad;
}


void df_test_random_dag_all(long total_nodes)
{
    const char *const *policies = df_policy_names();
    int n_pol = 0;
    while (policies[n_pol])
        n_pol++;
    const int max_workers = 8;
    int per = (int)(total_nodes / (n_pol * max_workers));
    for (int p = 0; p < n_pol; p++)
        for (int w = 1; w <= max_workers; w++) {
            DfSched *s = df_test_sched(policies[p], w, w % 3 == 0 ? -1 : 20);
            if (!s)
                return;
            Dag d;
            int64_t t0 = df_now_ns();
            run_random_dag(s, per, 0x5eed + (uint64_t)(p * 16 + w), &d);
            if (getenv("DF_TEST_VERBOSE"))
                printf("%-10s %d workers: %.0f ns/node\n", policies[p], w,
                       (double)(df_now_ns() - t0) / per);
            DfStats st;
            df_sched_stats(s, &st);
            DF_EXPECT_MSG(dag_check(&d) == 0, "%s, %d workers: nodes not run exactly once",
                          policies[p], w);
            DF_EXPECT_MSG(atomic_load(&d.order_violations) == 0,
                          "%s, %d workers: %d nodes ran before a predecessor", policies[p], w,
                          atomic_load(&d.order_violations));
            DF_EXPECT_MSG(st.total.tasks_run == (uint64_t)per, "%s, %d workers: %llu tasks run",
                          policies[p], w, (unsigned long long)st.total.tasks_run);
            df_stats_free(&st);
            dag_free(&d);
            df_sched_unref(s);
        }
}

