/* The trace the app tests read; see trace_util.h. */
#include "trace_util.h"

#include "dfsched_trace.h"

#include <glib.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* D(k): a job batch with a wait, then bands reading from it, in `arg`,
 * the group of every frame's bands (untagged: a band's frame is its
 * creator's). */
static void decode(DfTask *t, void *arg)
{
    DfSched *s = df_task_sched(t);
    DfJobs jobs = {.n_jobs = 4, .fn = job, .module = df_sched_module_id(s, "S")};
    df_jobs_run(s, &jobs);
    for (int b = 0; b < 4; b++) {
        DfNode *r = df_node_new(
            s, &(DfNodeDesc){
                   .fn = nop, .module = df_sched_module_id(s, "R"), .index = b, .group = arg});
        df_node_add_input(r, df_task_worker(t), 100000, df_sched_module_id(s, "S"), 0);
        df_node_submit(r);
        df_node_release(r);
    }
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
    DfGroup *bands = df_group_new(s, 0);
    for (int f = 0; f < DF_TEST_TRACE_FRAMES; f++) {
        DfGroup *g = df_group_new(s, 0);
        df_group_set_tag(g, f);
        DfNode *d =
            df_node_new(s, &(DfNodeDesc){.fn = decode, .arg = bands, .module = md, .group = g});
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
    /* Nobody else waits for the bands: a worker that was preempted after
     * taking one (tests run side by side on 2 cores) would leave it out
     * of the trace, and its frame one task short. */
    df_sched_wait(s, bands);
    df_group_release(bands);
    int ret = df_sched_trace_write(s, path, NULL);
    df_sched_unref(s);
    return ret;
}

/* ------------------------------------------------ a mis-declared edge */

typedef struct MisFrame {
    _Atomic int w_p2;
} MisFrame;

static void p1_body(DfTask *t, void *arg)
{
}

static void p2_body(DfTask *t, void *arg)
{
    atomic_store(&((MisFrame *)arg)->w_p2, df_task_worker(t));
}

/* The simulated transfer: C spins 300 us unless it runs on P2's worker. */
static void c_body(DfTask *t, void *arg)
{
    if (df_task_worker(t) == atomic_load(&((MisFrame *)arg)->w_p2))
        return;
    const int64_t until = df_now_ns() + 300000;
    while (df_now_ns() < until)
        ;
}

/* Warm-up is over once the model has medians of C's time with P2's bytes
 * local and remote (3 runs each) and has derived a size for P2 from them
 * (its correction moved off 1, either way), or after
 * DF_TEST_LEARNED_MAX_WARMUP_S.  Which runs are timed, and the placements
 * that give P2-remote runs, depend on timing: on a loaded machine a thief
 * runs P1 and P2 on one worker in most frames, and a P2-remote run needs
 * them apart (a run that read both remotely is not learnt from).  Seen on
 * 2 busy vCPUs: up to 17000 frames (under 1 s) before the third. */
/* What the policy's data says of module `name` (the "sizes" table of the
 * learned policy's snapshot), read as any program reads it: through a
 * collected trace, empty while not recording. */
typedef struct SizeRow {
    double scale, samples_local, samples_remote;
} SizeRow;

static bool size_row(DfSched *s, const char *name, SizeRow *out)
{
    DfTrace t;
    if (df_sched_trace_collect(s, &t) < 0)
        return false;
    const DfTraceTable *tab = df_trace_policy_table(&t, "sizes");
    const ptrdiff_t r = df_trace_table_row(tab, name);
    if (r >= 0)
        *out = (SizeRow){
            .scale = df_trace_table_cell(tab, (size_t)r, df_trace_table_col(tab, "scale")),
            .samples_local =
                df_trace_table_cell(tab, (size_t)r, df_trace_table_col(tab, "samples_local")),
            .samples_remote =
                df_trace_table_cell(tab, (size_t)r, df_trace_table_col(tab, "samples_remote")),
        };
    df_trace_free(&t);
    return r >= 0;
}

static bool learnt_enough(DfSched *s, int frames, int64_t deadline)
{
    SizeRow m;
    if (df_now_ns() >= deadline)
        return true;
    if (frames < DF_TEST_LEARNED_WARMUP || !size_row(s, "P2", &m))
        return false;
    return m.samples_local >= 3 && m.samples_remote >= 3 && m.scale != 1.0;
}

int df_test_record_learned_trace(const char *path, DfTrace *out)
{
    DfSchedConfig cfg;
    df_sched_config_init(&cfg);
    cfg.policy = "learned";
    cfg.n_workers = 2;
    cfg.poll_us = 2000; /* spin through the gaps between frames: nobody parks */
    cfg.explore_rate = 0.05;
    DfSched *s;
    int ret = df_sched_new(&cfg, &s, NULL);
    if (ret < 0)
        return ret;
    const int m_p1 = df_sched_module_id(s, "P1"), m_p2 = df_sched_module_id(s, "P2"),
              m_c = df_sched_module_id(s, "C");
    int traced = -1; /* frames traced so far; -1 while warming up */
    int warmup = 0;
    const int64_t deadline = df_now_ns() + DF_TEST_LEARNED_MAX_WARMUP_S * INT64_C(1000000000);
    for (int k = 0; traced < DF_TEST_LEARNED_FRAMES && ret == 0; k++) {
        if (traced < 0 && learnt_enough(s, k, deadline)) {
            ret = df_sched_trace_start(s, 8 * DF_TEST_LEARNED_FRAMES);
            traced = 0;
            warmup = k;
        }
        DfGroup *g = df_group_new(s, 0);
        df_group_set_tag(g, traced >= 0 ? traced++ : -1);
        MisFrame fr;
        atomic_init(&fr.w_p2, -1);
        DfNode *p1 = df_node_new(s, &(DfNodeDesc){.fn = p1_body,
                                                  .module = m_p1,
                                                  .group = g,
                                                  .out_size = DF_TEST_LEARNED_DECLARED_P1});
        DfNode *p2 = df_node_new(s, &(DfNodeDesc){.fn = p2_body,
                                                  .arg = &fr,
                                                  .module = m_p2,
                                                  .group = g,
                                                  .out_size = DF_TEST_LEARNED_DECLARED_P2});
        DfNode *c =
            df_node_new(s, &(DfNodeDesc){.fn = c_body, .arg = &fr, .module = m_c, .group = g});
        df_node_depend(c, p1, DF_TEST_LEARNED_DECLARED_P1);
        df_node_depend(c, p2, DF_TEST_LEARNED_DECLARED_P2);
        df_node_submit(c);
        /* Earlier data held by workers 0 and 1 put P1 and P2 on different
         * workers; small, so that the picture's widest edge is C's input. */
        df_node_add_input(p1, 0, 4096, -1, 0);
        df_node_add_input(p2, 1, 4096, -1, 0);
        df_node_submit(p1);
        df_node_submit(p2);
        df_sched_wait(s, g);
        df_node_release(p1);
        df_node_release(p2);
        df_node_release(c);
        df_group_release(g);
    }
    SizeRow l1 = {0}, l2 = {0};
    if (getenv("DF_TEST_VERBOSE") && size_row(s, "P1", &l1) && size_row(s, "P2", &l2))
        printf("learned trace: %d warm-up frames; P1 scale %g, samples %.0f/%.0f; "
               "P2 scale %g, samples %.0f/%.0f (local/remote)\n",
               warmup, l1.scale, l1.samples_local, l1.samples_remote, l2.scale, l2.samples_local,
               l2.samples_remote);
    DfTrace t;
    const bool have = ret == 0 && (ret = df_sched_trace_collect(s, &t)) == 0;
    if (have && path)
        ret = df_trace_write_json(&t, path, NULL);
    if (have && out && ret == 0)
        *out = t;
    else if (have)
        df_trace_free(&t);
    df_sched_unref(s);
    return ret;
}

int df_test_write_broken_traces(const char *good, const char *empty, const char *bytes,
                                const char *trunc, const char *shape)
{
    char raw[2048];
    for (size_t i = 0; i < sizeof(raw); i++)
        raw[i] = (char)(i * 2654435761u >> 11);
    gchar *text = NULL;
    gsize len = 0;
    const bool ok = g_file_set_contents(empty, "", 0, NULL) &&
                    g_file_set_contents(bytes, raw, sizeof(raw), NULL) &&
                    g_file_get_contents(good, &text, &len, NULL) &&
                    g_file_set_contents(trunc, text, (gssize)(len / 2), NULL) &&
                    g_file_set_contents(shape, "{\"traceEvents\": 5, \"otherData\": []}", -1, NULL);
    g_free(text);
    return ok ? 0 : -1;
}
