/* The dfsched side of dfbench sched: the four cases as dataflow graphs.
 *
 * Every case runs inside a root task on a worker, as a decoder's work does:
 * what the root spawns lands in that worker's own ready set, and its waits
 * run other ready tasks.  Bodies do the least work that still lets the
 * result be checked (a wrong order or a lost task shows up as an error),
 * and every edge carries the bytes the consumer really reads, so the cost
 * function sees the true data flow. */
#include "sched_cases.h"
#include "report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Keep per-node results a cache line apart: the benchmark measures the
 * scheduler, not false sharing between its bodies. */
#define SLOT_STRIDE (64 / sizeof(uint64_t))

static const char *const case_names[DF_N_CASES] = {"empty", "fanout", "chain", "frames",
                                                    "metg"};

const char *df_case_name(DfBenchCase c)
{
    return (unsigned)c < DF_N_CASES ? case_names[c] : "?";
}

int df_case_find(const char *name)
{
    for (int c = 0; c < DF_N_CASES; c++)
        if (strcmp(case_names[c], name) == 0)
            return c;
    return -1;
}

int64_t df_bench_cpu_ns(void)
{
    /* A system call, twice per timed run and outside its loop. */
    const int64_t ns = df_report_cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
    return ns < 0 ? 0 : ns;
}

void df_case_result_init(DfCaseResult *r)
{
    memset(r, 0, sizeof(*r));
    r->ns_per_task = r->cpu_ns_per_task = r->local_share = r->stolen_share = NAN;
    r->frames_per_s = r->gb_per_s = NAN;
    r->metg_ns = r->metg_efficiency = r->metg_cpu_ns = NAN;
}

/* ----------------------------------------------------------------- metg */

void df_bench_spin_ns(int64_t ns)
{
    const int64_t end = df_now_ns() + ns;
    while (df_now_ns() < end)
        ;
}

/* Tasks per grain: the work budget, at least a few per worker (so that
 * every worker has some), at most --tasks (the smallest grains). */
static uint64_t metg_tasks(const DfCaseParams *p, int workers, int64_t grain)
{
    const int64_t budget = p->metg_work_ns > 0 ? p->metg_work_ns : 10000000;
    uint64_t n = (uint64_t)(budget / grain);
    const uint64_t floor = 8 * (uint64_t)workers;
    if (n > p->tasks)
        n = p->tasks;
    return n < floor ? floor : n;
}

uint64_t df_bench_metg_max_tasks(const DfCaseParams *p, int workers)
{
    uint64_t n = (uint64_t)p->warmups * (metg_tasks(p, workers, DF_METG_MIN_NS) + 2);
    for (int64_t g = DF_METG_MIN_NS; g <= DF_METG_MAX_NS; g *= 2)
        n += metg_tasks(p, workers, g) + 2;
    return n;
}

int df_bench_metg_search(const DfCaseParams *p, int workers, DfMetgStepFn step, void *ctx,
                         DfCaseResult *out)
{
    for (int w = 0; w < p->warmups; w++) {
        const int64_t r = step(ctx, DF_METG_MIN_NS, metg_tasks(p, workers, DF_METG_MIN_NS));
        if (r < 0)
            return (int)r;
    }
    uint64_t total = 0;
    int64_t wall_total = 0;
    const int64_t c0 = df_bench_cpu_ns();
    for (int64_t g = DF_METG_MIN_NS; g <= DF_METG_MAX_NS; g *= 2) {
        const uint64_t n = metg_tasks(p, workers, g);
        const int64_t cpu0 = df_bench_cpu_ns();
        const int64_t wall = step(ctx, g, n);
        const int64_t cpu = df_bench_cpu_ns() - cpu0;
        if (wall < 0)
            return (int)wall;
        if (isnan(out->metg_cpu_ns) && cpu > 0 &&
            (double)n * (double)g / (double)cpu >= DF_METG_EFFICIENCY)
            out->metg_cpu_ns = (double)g;
        total += n;
        wall_total += wall;
        out->metg_steps++;
        out->ns_per_task = wall > 0 ? (double)wall / (double)n : NAN;
        const double eff = wall > 0 ? (double)n * (double)g / ((double)workers * (double)wall) : 0;
        if (eff >= DF_METG_EFFICIENCY) {
            out->metg_ns = (double)g;
            out->metg_efficiency = eff;
            break;
        }
    }
    out->tasks = total;
    out->elapsed_ns = wall_total;
    out->cpu_ns_per_task = total ? (double)(df_bench_cpu_ns() - c0) / (double)total : NAN;
    return 0;
}

/* dfsched's step: a root task spawns the tasks into a group and waits
 * (helping), timed inside the root like the peers' spawning task. */
typedef struct MetgRoot {
    int64_t grain;
    uint64_t tasks;
    int64_t wall;
    int ret;
} MetgRoot;

static void metg_body(DfTask *t, void *arg)
{
    (void)t;
    df_bench_spin_ns(*(const int64_t *)arg);
}

static void metg_root(DfTask *t, void *arg)
{
    MetgRoot *m = arg;
    DfSched *s = df_task_sched(t);
    DfGroup *g = df_group_new(s, 0);
    if (!g) {
        m->ret = -ENOMEM;
        return;
    }
    const int64_t t0 = df_now_ns();
    for (uint64_t i = 0; i < m->tasks; i++)
        df_spawn(s, metg_body, &m->grain, g);
    df_sched_wait(s, g);
    m->wall = df_now_ns() - t0;
    df_group_release(g);
}

static int64_t dfsched_metg_step(void *ctx, int64_t grain, uint64_t tasks)
{
    DfSched *s = ctx;
    MetgRoot m = {.grain = grain, .tasks = tasks};
    DfGroup *g = df_group_new(s, 0);
    if (!g)
        return -ENOMEM;
    df_spawn(s, metg_root, &m, g);
    df_sched_wait(s, g);
    df_group_release(g);
    return m.ret < 0 ? m.ret : m.wall;
}

typedef struct Root {
    DfBenchCase c;
    const DfCaseParams *p;
    int64_t t0, t1;   /* wall clock of the timed region */
    int64_t c0, c1;   /* process CPU time of the same */
    uint64_t tasks;
    uint64_t errors;
    int ret;
    /* Per-case state prepared outside the timed region. */
    uint64_t *slots;
    uint8_t *frame_buf[DF_FRAME_IN_FLIGHT];
} Root;

static void clock_start(Root *r)
{
    r->t0 = df_now_ns();
    r->c0 = df_bench_cpu_ns();
}

static void clock_stop(Root *r)
{
    r->c1 = df_bench_cpu_ns();
    r->t1 = df_now_ns();
}

/* ---------------------------------------------------------------- empty */

static void empty_fn(DfTask *t, void *arg)
{
    (void)t;
    (void)arg;
}

static void run_empty(DfTask *t, Root *r)
{
    DfSched *s = df_task_sched(t);
    const uint64_t m = r->p->tasks;
    const uint64_t batch = r->p->batch ? r->p->batch : m;
    clock_start(r);
    for (uint64_t done = 0; done < m;) {
        uint64_t n = m - done < batch ? m - done : batch;
        DfGroup *g = df_group_new(s, 0);
        if (!g) {
            r->ret = -ENOMEM;
            return;
        }
        for (uint64_t i = 0; i < n; i++)
            df_spawn(s, empty_fn, NULL, g);
        df_sched_wait(s, g);
        df_group_release(g);
        done += n;
    }
    clock_stop(r);
    r->tasks = m;
}

/* --------------------------------------------------------------- fanout */

typedef struct FanArg {
    Root *r;
    int j; /* -1 source, 0..k-1 middle, k sink */
    uint64_t round;
} FanArg;

static void fan_src(DfTask *t, void *arg)
{
    FanArg *a = arg;
    a->r->slots[0] = a->round;
}

static void fan_mid(DfTask *t, void *arg)
{
    FanArg *a = arg;
    uint64_t *s = a->r->slots;
    s[(size_t)(a->j + 1) * SLOT_STRIDE] = s[0] + (uint64_t)a->j;
}

static void fan_sink(DfTask *t, void *arg)
{
    FanArg *a = arg;
    const uint64_t *s = a->r->slots;
    const uint64_t k = (uint64_t)a->j;
    uint64_t sum = 0;
    for (uint64_t j = 0; j < k; j++)
        sum += s[(j + 1) * SLOT_STRIDE];
    if (sum != k * a->round + k * (k - 1) / 2)
        a->r->errors++;
}

static void run_fanout(DfTask *t, Root *r)
{
    DfSched *s = df_task_sched(t);
    const int k = r->p->width;
    const uint64_t rounds = r->p->tasks / (uint64_t)(k + 2) ? r->p->tasks / (uint64_t)(k + 2) : 1;
    const int mod_src = df_sched_module_id(s, "fan-source");
    const int mod_mid = df_sched_module_id(s, "fan-middle");
    const int mod_sink = df_sched_module_id(s, "fan-sink");
    FanArg *args = calloc((size_t)k + 2, sizeof(*args));
    if (!args) {
        r->ret = -ENOMEM;
        return;
    }
    clock_start(r);
    for (uint64_t round = 0; round < rounds; round++) {
        DfGroup *g = df_group_new(s, 0);
        if (!g) {
            r->ret = -ENOMEM;
            goto out;
        }
        /* j - 1: the source is -1 and the sink's k is its fan-in. */
        for (int j = 0; j < k + 2; j++)
            args[j] = (FanArg){r, j - 1, round};
        DfNodeDesc d = {.fn = fan_src, .arg = &args[0], .module = mod_src, .group = g,
                        .out_size = sizeof(uint64_t)};
        DfNode *src = df_node_new(s, &d);
        d = (DfNodeDesc){.fn = fan_sink, .arg = &args[k + 1], .module = mod_sink, .group = g,
                         .out_size = sizeof(uint64_t)};
        DfNode *sink = df_node_new(s, &d);
        bool ok = src && sink;
        for (int j = 0; ok && j < k; j++) {
            d = (DfNodeDesc){.fn = fan_mid, .arg = &args[j + 1], .module = mod_mid, .index = j,
                             .group = g, .out_size = sizeof(uint64_t)};
            DfNode *mid = df_node_new(s, &d);
            if (!mid) {
                ok = false;
                break;
            }
            ok = df_node_depend(mid, src, sizeof(uint64_t)) == 0 &&
                 df_node_depend(sink, mid, sizeof(uint64_t)) == 0;
            if (ok)
                df_node_submit(mid);
            else
                df_node_discard(mid);
            df_node_release(mid);
        }
        /* The source goes last, so that the middle nodes are released by
         * its completion: the fan-out path is what this case measures. */
        if (sink) {
            ok ? df_node_submit(sink) : df_node_discard(sink);
            df_node_release(sink);
        }
        if (src) {
            ok ? df_node_submit(src) : df_node_discard(src);
            df_node_release(src);
        }
        df_sched_wait(s, g);
        df_group_release(g);
        if (!ok) {
            r->ret = -ENOMEM;
            goto out;
        }
    }
    clock_stop(r);
    r->tasks = rounds * (uint64_t)(k + 2);
out:
    free(args);
}

/* ---------------------------------------------------------------- chain */

static void chain_fn(DfTask *t, void *arg)
{
    uint64_t *p = arg;
    p[0] = p[-1] + 1;
}

static void run_chain(DfTask *t, Root *r)
{
    DfSched *s = df_task_sched(t);
    const uint64_t m = r->p->tasks;
    const int mod = df_sched_module_id(s, "chain");
    DfGroup *g = df_group_new(s, 0);
    if (!g) {
        r->ret = -ENOMEM;
        return;
    }
    clock_start(r);
    DfNode *prev = NULL;
    for (uint64_t i = 0; i < m; i++) {
        DfNodeDesc d = {.fn = chain_fn, .arg = &r->slots[i + 1], .module = mod, .group = g,
                        .out_size = sizeof(uint64_t)};
        DfNode *n = df_node_new(s, &d);
        if (!n) {
            r->ret = -ENOMEM;
            break;
        }
        if (prev && df_node_depend(n, prev, sizeof(uint64_t)) < 0) {
            r->ret = -ENOMEM;
            df_node_discard(n);
            df_node_release(n);
            break;
        }
        df_node_submit(n);
        if (prev)
            df_node_release(prev);
        prev = n;
    }
    if (prev)
        df_node_release(prev);
    df_sched_wait(s, g);
    clock_stop(r);
    df_group_release(g);
    r->tasks = m;
}

/* --------------------------------------------------------------- frames */

typedef struct BandArg {
    Root *r;
    int slot, band;
    uint64_t value; /* what the producer writes: unique per frame and band */
    uint64_t sum;   /* what the consumer read */
} BandArg;

static uint64_t *band_words(Root *r, int slot, int band)
{
    return (uint64_t *)(r->frame_buf[slot] + (size_t)band * DF_FRAME_BAND_BYTES);
}

static void produce_fn(DfTask *t, void *arg)
{
    BandArg *a = arg;
    uint64_t *w = band_words(a->r, a->slot, a->band);
    const uint64_t v = a->value;
    for (size_t i = 0; i < DF_FRAME_BAND_BYTES / sizeof(uint64_t); i++)
        w[i] = v;
}

static void consume_fn(DfTask *t, void *arg)
{
    BandArg *a = arg;
    const uint64_t *w = band_words(a->r, a->slot, a->band);
    uint64_t sum = 0;
    for (size_t i = 0; i < DF_FRAME_BAND_BYTES / sizeof(uint64_t); i++)
        sum += w[i];
    if (a->band + 1 < DF_FRAME_BANDS) {
        const uint64_t *h = band_words(a->r, a->slot, a->band + 1);
        for (size_t i = 0; i < DF_FRAME_HALO_BYTES / sizeof(uint64_t); i++)
            sum += h[i];
    }
    a->sum = sum;
}

typedef struct FrameSlot {
    DfGroup *group;
    BandArg prod[DF_FRAME_BANDS];
    BandArg cons[DF_FRAME_BANDS];
} FrameSlot;

static uint64_t check_frame(const FrameSlot *fs)
{
    uint64_t bad = 0;
    for (int b = 0; b < DF_FRAME_BANDS; b++) {
        uint64_t want = fs->prod[b].value * (DF_FRAME_BAND_BYTES / sizeof(uint64_t));
        if (b + 1 < DF_FRAME_BANDS)
            want += fs->prod[b + 1].value * (DF_FRAME_HALO_BYTES / sizeof(uint64_t));
        bad += fs->cons[b].sum != want;
    }
    return bad;
}

static void finish_slot(DfSched *s, Root *r, FrameSlot *fs)
{
    if (!fs->group)
        return;
    df_sched_wait(s, fs->group);
    df_group_release(fs->group);
    fs->group = NULL;
    r->errors += check_frame(fs);
}

/* One frame: B producers write their band; consumer b reads band b and
 * the halo of band b+1. */
static int issue_frame(DfSched *s, Root *r, FrameSlot *fs, int slot, int frame, int mod_p, int mod_c)
{
    DfNode *prod[DF_FRAME_BANDS] = {0}, *cons[DF_FRAME_BANDS] = {0};
    int ret = 0;
    fs->group = df_group_new(s, 0);
    if (!fs->group)
        return -ENOMEM;
    df_group_set_tag(fs->group, frame);
    for (int b = 0; b < DF_FRAME_BANDS; b++) {
        fs->prod[b] = (BandArg){r, slot, b, (uint64_t)frame * 64 + (uint64_t)b + 1, 0};
        fs->cons[b] = (BandArg){r, slot, b, 0, 0};
        DfNodeDesc d = {.fn = produce_fn, .arg = &fs->prod[b], .module = mod_p, .index = b,
                        .group = fs->group, .out_size = DF_FRAME_BAND_BYTES};
        prod[b] = df_node_new(s, &d);
        d = (DfNodeDesc){.fn = consume_fn, .arg = &fs->cons[b], .module = mod_c, .index = b,
                         .group = fs->group, .out_size = sizeof(uint64_t)};
        cons[b] = df_node_new(s, &d);
        if (!prod[b] || !cons[b])
            ret = -ENOMEM;
    }
    for (int b = 0; b < DF_FRAME_BANDS && ret == 0; b++) {
        if (df_node_depend(cons[b], prod[b], DF_FRAME_BAND_BYTES) < 0)
            ret = -ENOMEM;
        else if (b + 1 < DF_FRAME_BANDS &&
                 df_node_depend(cons[b], prod[b + 1], DF_FRAME_HALO_BYTES) < 0)
            ret = -ENOMEM;
    }
    /* Consumers first: they wait on their producers, which then release
     * them through completion as a decoder's bands are. */
    for (int b = 0; b < DF_FRAME_BANDS; b++)
        if (cons[b]) {
            ret == 0 ? df_node_submit(cons[b]) : df_node_discard(cons[b]);
            df_node_release(cons[b]);
        }
    for (int b = 0; b < DF_FRAME_BANDS; b++)
        if (prod[b]) {
            ret == 0 ? df_node_submit(prod[b]) : df_node_discard(prod[b]);
            df_node_release(prod[b]);
        }
    return ret;
}

static void run_frames(DfTask *t, Root *r)
{
    DfSched *s = df_task_sched(t);
    const int mod_p = df_sched_module_id(s, "band-producer");
    const int mod_c = df_sched_module_id(s, "band-consumer");
    FrameSlot *slots = calloc(DF_FRAME_IN_FLIGHT, sizeof(*slots));
    if (!slots) {
        r->ret = -ENOMEM;
        return;
    }
    clock_start(r);
    for (int f = 0; f < r->p->frames; f++) {
        int slot = f % DF_FRAME_IN_FLIGHT;
        /* A buffer is rewritten only after its previous frame was read. */
        finish_slot(s, r, &slots[slot]);
        int ret = issue_frame(s, r, &slots[slot], slot, f, mod_p, mod_c);
        if (ret < 0) {
            r->ret = ret;
            break;
        }
    }
    for (int k = 0; k < DF_FRAME_IN_FLIGHT; k++)
        finish_slot(s, r, &slots[(r->p->frames + k) % DF_FRAME_IN_FLIGHT]);
    clock_stop(r);
    r->tasks = (uint64_t)r->p->frames * 2 * DF_FRAME_BANDS;
    free(slots);
}

/* ----------------------------------------------------------------- root */

static void root_fn(DfTask *t, void *arg)
{
    Root *r = arg;
    switch (r->c) {
    case DF_CASE_EMPTY:
        run_empty(t, r);
        break;
    case DF_CASE_FANOUT:
        run_fanout(t, r);
        break;
    case DF_CASE_CHAIN:
        run_chain(t, r);
        break;
    case DF_CASE_FRAMES:
        run_frames(t, r);
        break;
    default:
        r->ret = -EINVAL;
    }
}

static uint64_t check_chain(const Root *r)
{
    uint64_t bad = 0;
    for (uint64_t i = 0; i <= r->p->tasks; i++)
        bad += r->slots[i] != i;
    return bad;
}

static int prepare(Root *r)
{
    switch (r->c) {
    case DF_CASE_FANOUT:
        r->slots = calloc((size_t)(r->p->width + 1) * SLOT_STRIDE, sizeof(uint64_t));
        return r->slots ? 0 : -ENOMEM;
    case DF_CASE_CHAIN:
        r->slots = calloc((size_t)r->p->tasks + 1, sizeof(uint64_t));
        return r->slots ? 0 : -ENOMEM;
    case DF_CASE_FRAMES:
        for (int i = 0; i < DF_FRAME_IN_FLIGHT; i++) {
            r->frame_buf[i] = aligned_alloc(64, (size_t)DF_FRAME_BANDS * DF_FRAME_BAND_BYTES);
            if (!r->frame_buf[i])
                return -ENOMEM;
            /* Fault the pages in here, not inside the timed region. */
            memset(r->frame_buf[i], 0, (size_t)DF_FRAME_BANDS * DF_FRAME_BAND_BYTES);
        }
        return 0;
    default:
        return 0;
    }
}

static void release(Root *r)
{
    free(r->slots);
    r->slots = NULL;
    for (int i = 0; i < DF_FRAME_IN_FLIGHT; i++) {
        free(r->frame_buf[i]);
        r->frame_buf[i] = NULL;
    }
}

/* One run from the calling (outside) thread: spawn the root and block. */
static int run_once(DfSched *s, Root *r)
{
    DfGroup *g = df_group_new(s, 0);
    if (!g)
        return -ENOMEM;
    r->ret = 0;
    r->errors = 0;
    r->tasks = 0;
    if (r->c == DF_CASE_CHAIN) /* so that a node that did not run shows */
        memset(r->slots, 0, sizeof(uint64_t) * ((size_t)r->p->tasks + 1));
    df_spawn(s, root_fn, r, g);
    df_sched_wait(s, g);
    df_group_release(g);
    if (r->ret == 0 && r->c == DF_CASE_CHAIN)
        r->errors += check_chain(r);
    return r->ret;
}

int df_bench_dfsched_run(DfSched *s, DfBenchCase c, const DfCaseParams *p, DfCaseResult *out)
{
    df_case_result_init(out);
    if (c == DF_CASE_METG)
        return df_bench_metg_search(p, df_sched_n_workers(s), dfsched_metg_step, s, out);
    Root r = {.c = c, .p = p};
    DfStats st = {0};
    int ret = prepare(&r);
    for (int i = 0; ret == 0 && i < p->warmups; i++)
        ret = run_once(s, &r);
    if (ret < 0)
        goto out;
    df_sched_stats_reset(s);
    ret = run_once(s, &r);
    if (ret < 0)
        goto out;
    ret = df_sched_stats(s, &st);
    if (ret < 0)
        goto out;
    out->tasks = r.tasks;
    out->elapsed_ns = r.t1 - r.t0;
    out->ns_per_task = r.tasks ? (double)out->elapsed_ns / (double)r.tasks : NAN;
    out->cpu_ns_per_task = r.tasks ? (double)(r.c1 - r.c0) / (double)r.tasks : NAN;
    out->errors = r.errors;
    /* Every node ran exactly once, plus the root. */
    if (st.total.tasks_run != r.tasks + 1)
        out->errors++;
    uint64_t in_bytes = 0;
    for (int l = 0; l < DF_N_LEVELS; l++)
        in_bytes += st.total.bytes_level[l];
    out->local_share = in_bytes ? df_stats_local_share(&st) : NAN;
    out->stolen_share = st.total.tasks_run ? (double)st.total.tasks_stolen / (double)st.total.tasks_run
                                           : NAN;
    if (c == DF_CASE_FRAMES && out->elapsed_ns > 0) {
        double secs = (double)out->elapsed_ns / 1e9;
        double written = (double)p->frames * DF_FRAME_BANDS * DF_FRAME_BAND_BYTES;
        double read = (double)p->frames *
                      (DF_FRAME_BANDS * (double)DF_FRAME_BAND_BYTES +
                       (DF_FRAME_BANDS - 1) * (double)DF_FRAME_HALO_BYTES);
        out->frames_per_s = p->frames / secs;
        out->gb_per_s = (written + read) / secs / 1e9;
    }
    df_stats_free(&st);
out:
    release(&r);
    return ret;
}
