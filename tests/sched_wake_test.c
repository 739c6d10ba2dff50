/* Regression test for the wake-up of a parked worker when a running task
 * makes a node ready in its own worker's set and goes on running (an HEVC
 * WPP row unholds the next row, then decodes its own row for a long time):
 * the node must not wait for that task to end. */
#include "dftest.h"
#include "dfsched.h"

#include <stdatomic.h>
#include <time.h>

typedef struct Pair {
    DfNode *next;
    atomic_int next_ran;
    atomic_int overlapped;
} Pair;

static void next_body(DfTask *t, void *arg)
{
    Pair *p = arg;
    atomic_store(&p->next_ran, 1);
}

static void long_body(DfTask *t, void *arg)
{
    Pair *p = arg;
    df_node_unhold(p->next);
    const int64_t until = df_now_ns() + 2000000000; /* 2 s */
    while (df_now_ns() < until)
        if (atomic_load(&p->next_ran)) {
            atomic_store(&p->overlapped, 1);
            return;
        }
}

DF_TEST(SchedWake, NodeMadeReadyByRunningTaskIsStolen)
{
    const char *const *pol = df_policy_names();
    for (int i = 0; pol[i]; i++) {
        DfSchedConfig cfg;
        df_sched_config_init(&cfg);
        cfg.policy = pol[i];
        cfg.n_workers = 2;
        cfg.poll_us = 5;
        DfSched *s = NULL;
        DfError err;
        DF_ASSERT(df_sched_new(&cfg, &s, &err) == 0);
        for (int round = 0; round < 3; round++) {
            Pair p = {0};
            DfGroup *g = df_group_new(s, 0);
            DfNodeDesc nd = {.fn = next_body, .arg = &p, .module = -1, .group = g};
            p.next = df_node_new(s, &nd);
            df_node_hold(p.next);
            df_node_submit(p.next);
            /* Let both workers park before the long task starts. */
            struct timespec ts = {0, 20 * 1000 * 1000};
            nanosleep(&ts, NULL);
            DfNodeDesc ld = {.fn = long_body, .arg = &p, .module = -1, .group = g};
            DfNode *l = df_node_new(s, &ld);
            df_node_submit(l);
            df_sched_wait(s, g);
            DF_EXPECT_MSG(atomic_load(&p.overlapped),
                          "%s, round %d: the unheld node waited "
                          "for the running task to end",
                          pol[i], round);
            df_node_release(l);
            df_node_release(p.next);
            df_group_release(g);
        }
        df_sched_unref(s);
    }
}
