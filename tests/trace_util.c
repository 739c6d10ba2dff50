/* The trace the app tests read; see trace_util.h. */
#include "trace_util.h"

#include "dfsched_trace.h"

static void job(void *ctx, int jobnr, int threadnr)
{
    volatile unsigned x = 0;
    for (int i = 0; i < 20000; i++)
        x += (unsigned)i;
}

typedef struct FrameArg {
    int bands;
} FrameArg;

static void nop(DfTask *t, void *arg)
{
}

/* D(k): a job batch with a wait, then bands reading from it. */
static void decode(DfTask *t, void *arg)
{
    DfSched *s = df_task_sched(t);
    DfJobs jobs = {.n_jobs = 4, .fn = job, .module = df_sched_module_id(s, "S")};
    df_jobs_run(s, &jobs);
    DfGroup *g = df_group_new(s, 0);
    for (int b = 0; b < 4; b++) {
        DfNode *r = df_node_new(
            s,
            &(DfNodeDesc){.fn = nop, .module = df_sched_module_id(s, "R"), .index = b, .group = g});
        df_node_add_input(r, df_task_worker(t), 100000, df_sched_module_id(s, "S"), 0);
        df_node_submit(r);
        df_node_release(r);
    }
    df_group_release(g);
}

int df_test_record_trace(const char *path)
{
    DfSchedConfig cfg;
    df_sched_config_init(&cfg);
    cfg.n_workers = DF_TEST_TRACE_WORKERS;
    cfg.trace_capacity = 8192;
    DfSched *s;
    if (df_sched_new(&cfg, &s, NULL) < 0)
        return -1;
    int md = df_sched_module_id(s, "D");
    DfNode *prev = NULL;
    DfGroup *all = df_group_new(s, 0);
    for (int f = 0; f < DF_TEST_TRACE_FRAMES; f++) {
        DfGroup *g = df_group_new(s, 0);
        df_group_set_tag(g, f);
        DfNode *d = df_node_new(s, &(DfNodeDesc){.fn = decode, .module = md, .group = g});
        if (prev) {
            df_node_depend(d, prev, 0);
            df_node_release(prev);
        }
        df_node_submit(d);
        prev = d;
        df_sched_wait(s, g);
        df_group_release(g);
    }
    df_node_release(prev);
    df_group_release(all);
    int ret = df_sched_trace_write(s, path, NULL);
    df_sched_unref(s);
    return ret;
}
