/* The dfsim engine.
 *
 * The trace gives each task its module, inputs (producer, bytes), group,
 * the task that created it, the groups it waited for (help-while-waiting)
 * and, for ordered job batches, the job whose start released it.  A task's
 * body becomes segments of self time separated by those waits; children
 * are submitted at the end of the segment in which they were created.
 *
 * The policies are dfsched's own (same vtable, same ready sets); only the
 * clock and the workers are simulated.  A worker runs one segment at a
 * time; a waiting body's worker helps by popping other nodes, and resumes
 * the body when its group is done and nothing nested is running — the
 * stack discipline of df_sched_wait().  Every input byte read from another
 * worker is charged ns_per_byte of the trCost level between the two.
 *
 * Ordered jobs (HEVC WPP rows, which block in libavcodec until the row
 * above is ahead) run for their recorded time less their overlap with the
 * row above (never less than their CPU time) and end no earlier than the
 * row above, holding their worker meanwhile.  Resources shared between
 * cores (caches, memory bandwidth, a VM host's SMT siblings) enter as one
 * measured factor per busy count (SimConfig.slowdown): a body recorded
 * while k workers ran is first brought back to one busy worker, then
 * slowed by the count busy when the replay starts it.  A WPP row costs
 * more CPU while the row above runs on another core (libavcodec's
 * per-CTU progress handshake, and the rows above it filters, move between
 * the cores): one measured factor (SimConfig.wpp_factor) for a row that
 * starts while the row above runs elsewhere, taken off the rows the
 * recording ran so first.  Independent jobs of one batch (H.264 slices,
 * MPEG-2 bands) likewise cost more while a sibling runs on another core
 * (the picture's shared per-macroblock tables and the decoder context move
 * between the cores): SimConfig.job_factor, for a job that starts while a
 * sibling runs elsewhere. */
#include "sim.h"
#include "internal.h"

#include <errno.h>
#include <glib.h>
#include <stdlib.h>
#include <string.h>

/* 2^50 ns (13 days) of recorded task time: times 4096 streams the
 * simulated clock still fits an int64. */
#define SIM_MAX_WORK_NS ((int64_t)1 << 50)

typedef struct SimIn {
    int pred; /* node index, -1: produced outside the graph */
    int module;
    uint64_t bytes;
    int32_t rec_worker;
} SimIn;

typedef struct SimSeg {
    int64_t ns;
    int wait; /* group index awaited after this segment; -1 for the last */
} SimSeg;

typedef struct SimNode {
    int module, index;
    int64_t tag;
    int group;
    int parent;
    int created_seg; /* parent's segment in which this node was created */
    int start_pred;
    int first_in, n_in;
    int first_seg, n_seg;
    int64_t created_ns;
    int64_t deadline;
    int64_t lost_ns;  /* recorded: ready, its worker idle, yet not started */
    int64_t cpu_ns;   /* single-segment body: recorded CPU time (0: unknown) */
    double cpu_share; /* body with waits: its own CPU time over its self time (0: unknown) */
    int rec_busy;     /* workers busy at its recorded start, itself included */
    bool rec_wpp;     /* ordered job whose row above was running on another worker
                       * when it started in the recording */
    bool job;         /* an unordered job of a batch (siblings: same group, same parent) */
    bool rec_par;     /* such a job that started while a sibling ran on another worker */
} SimNode;

struct SimGraph {
    int n;
    SimNode *nodes;
    SimIn *ins;
    SimSeg *segs;
    int n_groups;
    int *group_size;
    /* CSR lists */
    int *succ_first, *succ; /* consumer node, input slot packed */
    int *succ_slot;
    int *child_first, *child; /* children sorted by created_seg */
    int *startsucc_first, *startsucc;
    int *ext; /* external nodes by creation time */
    int n_ext;
    int window;
    int frames;
    int64_t lost_ns;     /* sum of the nodes' lost_ns */
    int64_t span_ns;     /* recording: first creation to last end */
    int64_t dispatch_ns; /* median ready-to-start gap on an idle worker */
};

/* ------------------------------------------------------------- building */

static int cmp_i64pair(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

static int *csr(int n, const int *key, int m, int **first_out)
{
    int *first = calloc((size_t)n + 1, sizeof(int));
    int *list = malloc(sizeof(int) * (size_t)(m ? m : 1));
    if (!first || !list) {
        free(first);
        free(list);
        return NULL;
    }
    for (int i = 0; i < m; i++)
        first[key[i] + 1]++;
    for (int i = 0; i < n; i++)
        first[i + 1] += first[i];
    *first_out = first;
    return list;
}

typedef struct SelfSpan {
    int64_t start, end;
    int32_t worker;
    int node; /* event index; -1 for a resumed segment (after a wait) */
} SelfSpan;

static int cmp_span(const void *a, const void *b)
{
    const SelfSpan *x = a, *y = b;
    if (x->worker != y->worker)
        return x->worker < y->worker ? -1 : 1;
    return x->start < y->start ? -1 : x->start > y->start;
}

static int cmp_i64(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return *x < *y ? -1 : *x > *y;
}

/* CPU time the recording's workers lost to work outside tasks: a node was
 * ready, the worker that ran it next had finished its previous body, yet
 * it started only later.  The decoding thread's own packet and frame
 * handling (on the same cores), the OS and other processes take that time;
 * the trace shows it only as these gaps.  Each gap, less the typical
 * dispatch (the median of all of them: the scheduler's own pop and
 * bookkeeping, which the replay charges separately), is kept on the node
 * that followed it. */
static int lost_time(const DfTrace *t, SimGraph *g, GHashTable *waits_of, DfError *err)
{
    const int n = g->n;
    size_t n_spans = 0;
    for (int i = 0; i < n; i++) {
        GPtrArray *a = g_hash_table_lookup(waits_of, &t->events[i].node_id);
        n_spans += 1 + (a ? a->len : 0);
    }
    SelfSpan *sp = malloc(sizeof(SelfSpan) * (n_spans ? n_spans : 1));
    const size_t n_nodes = n > 0 ? (size_t)n : 1;
    int64_t *gap = malloc(sizeof(int64_t) * n_nodes);
    int *gap_node = malloc(sizeof(int) * n_nodes);
    if (!sp || !gap || !gap_node) {
        free(sp);
        free(gap);
        free(gap_node);
        return df_set_error(err, -ENOMEM, "out of memory");
    }
    size_t k = 0;
    for (int i = 0; i < n; i++) {
        const DfTraceEvent *e = &t->events[i];
        GPtrArray *a = g_hash_table_lookup(waits_of, &e->node_id);
        int64_t cursor = e->start_ns;
        int first = i;
        for (guint j = 0; a && j < a->len; j++) {
            const DfTraceWait *w = g_ptr_array_index(a, j);
            sp[k++] = (SelfSpan){cursor, w->start_ns, e->worker, first};
            cursor = w->end_ns;
            first = -1;
        }
        sp[k++] = (SelfSpan){cursor, e->end_ns, e->worker, first};
    }
    qsort(sp, k, sizeof(SelfSpan), cmp_span);
    int n_gaps = 0;
    for (size_t j = 1; j < k; j++) {
        if (sp[j].worker != sp[j - 1].worker || sp[j].node < 0)
            continue;
        const DfTraceEvent *e = &t->events[sp[j].node];
        int64_t from = sp[j - 1].end > e->ready_ns ? sp[j - 1].end : e->ready_ns;
        if (sp[j].start > from) {
            gap[n_gaps] = sp[j].start - from;
            gap_node[n_gaps++] = sp[j].node;
        }
    }
    g->lost_ns = 0;
    g->dispatch_ns = 0;
    if (n_gaps > 0) {
        int64_t *sorted = malloc(sizeof(int64_t) * (size_t)n_gaps);
        if (!sorted) {
            free(sp);
            free(gap);
            free(gap_node);
            return df_set_error(err, -ENOMEM, "out of memory");
        }
        memcpy(sorted, gap, sizeof(int64_t) * (size_t)n_gaps);
        qsort(sorted, (size_t)n_gaps, sizeof(int64_t), cmp_i64);
        g->dispatch_ns = sorted[n_gaps / 2];
        free(sorted);
        for (int j = 0; j < n_gaps; j++)
            if (gap[j] > g->dispatch_ns) {
                g->nodes[gap_node[j]].lost_ns += gap[j] - g->dispatch_ns;
                g->lost_ns += gap[j] - g->dispatch_ns;
            }
    }
    free(sp);
    free(gap);
    free(gap_node);
    return 0;
}

/* A body that waited ran other nodes on its thread meanwhile (helping),
 * and its CPU time holds theirs: its own is what remains after the nodes
 * that ran inside it at the top level (they start after the previous one
 * ended; deeper ones are inside those).  Spinning in a wait stays in, so
 * the share errs high.  Returns own CPU over self wall time, at most 1. */
static double own_cpu_share(const DfTrace *t, int i, const SimSeg *segs, int n_seg)
{
    const DfTraceEvent *e = &t->events[i];
    if (e->cpu_ns <= 0)
        return 0;
    int64_t nested = 0, covered = e->start_ns, self = 0;
    for (size_t k = (size_t)i + 1; k < t->n_events && t->events[k].start_ns < e->end_ns; k++) {
        const DfTraceEvent *x = &t->events[k];
        if (x->worker != e->worker || x->end_ns > e->end_ns || x->start_ns < covered)
            continue;
        if (x->cpu_ns <= 0)
            return 0;
        nested += x->cpu_ns;
        covered = x->end_ns;
    }
    for (int k = 0; k < n_seg; k++)
        self += segs[k].ns;
    const int64_t own = e->cpu_ns - nested;
    if (self <= 0 || own <= 0)
        return 0;
    return own >= self ? 1.0 : (double)own / (double)self;
}

/* ------------------------------------------------------------ busy count */

typedef struct BusyPoint {
    int64_t t;
    int d; /* +1: a worker turns busy, -1: idle */
} BusyPoint;

static int cmp_busy(const void *a, const void *b)
{
    const BusyPoint *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->d - y->d; /* ends first: a body that ends as another starts did not overlap it */
}

static int cmp_span_start(const void *a, const void *b)
{
    const int64_t *x = a, *y = b; /* {worker, start, end} */
    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* Each node's rec_busy: how many workers ran a body (nested ones count
 * once) at its recorded start. */
static int busy_counts(const DfTrace *t, SimGraph *g)
{
    const size_t n = t->n_events;
    int64_t *sp = malloc(sizeof(int64_t) * 3 * (n ? n : 1));
    BusyPoint *pt = malloc(sizeof(BusyPoint) * 2 * (n ? n : 1));
    if (!sp || !pt) {
        free(sp);
        free(pt);
        return -ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        sp[3 * i] = t->events[i].worker;
        sp[3 * i + 1] = t->events[i].start_ns;
        sp[3 * i + 2] = t->events[i].end_ns;
    }
    qsort(sp, n, sizeof(int64_t) * 3, cmp_span_start);
    /* A worker's busy spans: the union of its bodies (nested ones inside). */
    size_t np = 0;
    for (size_t i = 0; i < n;) {
        int64_t lo = sp[3 * i + 1], hi = sp[3 * i + 2];
        size_t j = i + 1;
        for (; j < n && sp[3 * j] == sp[3 * i] && sp[3 * j + 1] <= hi; j++)
            hi = sp[3 * j + 2] > hi ? sp[3 * j + 2] : hi;
        pt[np++] = (BusyPoint){lo, +1};
        pt[np++] = (BusyPoint){hi, -1};
        i = j;
    }
    qsort(pt, np, sizeof(BusyPoint), cmp_busy);
    for (size_t k = 0, busy = 0; k < np; k++) {
        busy = (size_t)((int64_t)busy + pt[k].d);
        pt[k].d = (int)busy; /* from here on: the count after point k */
    }
    for (size_t i = 0; i < n; i++) {
        /* The last point at or before the start: its own span's start is one. */
        const int64_t at = t->events[i].start_ns;
        size_t lo = 0, hi = np;
        while (lo < hi) {
            const size_t mid = (lo + hi) / 2;
            if (pt[mid].t <= at)
                lo = mid + 1;
            else
                hi = mid;
        }
        g->nodes[i].rec_busy = lo > 0 && pt[lo - 1].d > 0 ? pt[lo - 1].d : 1;
    }
    free(sp);
    free(pt);
    return 0;
}

/* Created by a body into a group, and not ordered after a sibling. */
static bool job_candidate(const SimNode *sn)
{
    return sn->group >= 0 && sn->parent >= 0 && sn->start_pred < 0;
}

/* Unordered job batches: nodes created by one body into one group (a
 * df_jobs_run() batch), at least two, not ordered; and which of them the
 * recording started while a sibling ran on another worker. */
static int mark_jobs(const DfTrace *t, SimGraph *g)
{
    const int n = g->n, ng = g->n_groups;
    int *first = malloc(sizeof(int) * (size_t)(ng + 1)),
        *at = malloc(sizeof(int) * (size_t)(ng + 1));
    int *list = malloc(sizeof(int) * (size_t)(n ? n : 1));
    if (!first || !at || !list) {
        free(first);
        free(at);
        free(list);
        return -1;
    }
    for (int k = 0; k <= ng; k++)
        first[k] = 0;
    for (int i = 0; i < n; i++) {
        const SimNode *sn = &g->nodes[i];
        if (job_candidate(sn))
            first[sn->group + 1]++;
    }
    for (int k = 0; k < ng; k++)
        first[k + 1] += first[k];
    memcpy(at, first, sizeof(int) * (size_t)(ng + 1));
    for (int i = 0; i < n; i++) {
        const SimNode *sn = &g->nodes[i];
        if (job_candidate(sn))
            list[at[sn->group]++] = i;
    }
    for (int k = 0; k < ng; k++)
        for (int a = first[k]; a < first[k + 1]; a++) {
            const int i = list[a];
            const DfTraceEvent *e = &t->events[i];
            SimNode *sn = &g->nodes[i];
            for (int b = first[k]; b < first[k + 1]; b++) {
                const int j = list[b];
                if (j == i || g->nodes[j].parent != sn->parent)
                    continue;
                sn->job = true;
                const DfTraceEvent *o = &t->events[j];
                sn->rec_par |=
                    o->worker != e->worker && o->start_ns <= e->start_ns && e->start_ns < o->end_ns;
            }
        }
    free(first);
    free(at);
    free(list);
    return 0;
}

/* Time event i ran while event p (the row above) ran too. */
static int64_t row_overlap(const DfTrace *t, int i, int p)
{
    const DfTraceEvent *e = &t->events[i], *pe = &t->events[p];
    const int64_t from = e->start_ns > pe->start_ns ? e->start_ns : pe->start_ns;
    const int64_t to = e->end_ns < pe->end_ns ? e->end_ns : pe->end_ns;
    return to > from ? to - from : 0;
}

int sim_graph_from_trace(const DfTrace *t, const double *rec_npb, SimGraph **out, DfError *err)
{
    *out = NULL;
    SimGraph *g = calloc(1, sizeof(*g));
    if (!g)
        return df_set_error(err, -ENOMEM, "out of memory");
    const int n = (int)t->n_events;
    g->n = n;
    g->nodes = calloc((size_t)(n ? n : 1), sizeof(SimNode));
    g->ins = calloc(t->n_inputs ? t->n_inputs : 1, sizeof(SimIn));
    GHashTable *by_id = g_hash_table_new(g_int64_hash, g_int64_equal);
    GHashTable *groups = g_hash_table_new(g_int64_hash, g_int64_equal);
    GHashTable *waits_of = g_hash_table_new(g_int64_hash, g_int64_equal);
    GHashTable *tags = g_hash_table_new(g_int64_hash, g_int64_equal);
    int ret = 0;
    if (!g->nodes || !g->ins) {
        ret = df_set_error(err, -ENOMEM, "out of memory");
        goto out;
    }
    for (int i = 0; i < n; i++)
        g_hash_table_insert(by_id, (gpointer)&t->events[i].node_id, GINT_TO_POINTER(i + 1));
    /* Waits of each waiting node, in time order (t->waits is sorted). */
    for (size_t k = 0; k < t->n_waits; k++) {
        GPtrArray *a = g_hash_table_lookup(waits_of, &t->waits[k].node_id);
        if (!a) {
            a = g_ptr_array_new();
            g_hash_table_insert(waits_of, (gpointer)&t->waits[k].node_id, a);
        }
        g_ptr_array_add(a, (gpointer)&t->waits[k]);
    }
    size_t n_segs = 0;
    for (int i = 0; i < n; i++) {
        GPtrArray *a = g_hash_table_lookup(waits_of, &t->events[i].node_id);
        n_segs += 1 + (a ? a->len : 0);
    }
    g->segs = calloc(n_segs ? n_segs : 1, sizeof(SimSeg));
    if (!g->segs) {
        ret = df_set_error(err, -ENOMEM, "out of memory");
        goto out;
    }
    int seg_at = 0, in_at = 0;
    int64_t work_ns = 0;
    int64_t lo = 0, hi = 0;
    for (int i = 0; i < n; i++) {
        const DfTraceEvent *e = &t->events[i];
        SimNode *sn = &g->nodes[i];
        sn->module = e->module;
        sn->index = e->index;
        sn->tag = e->tag;
        sn->created_ns = e->created_ns;
        sn->deadline = e->deadline;
        if (e->tag >= 0 && !g_hash_table_contains(tags, &e->tag))
            g_hash_table_insert(tags, (gpointer)&e->tag, NULL);
        sn->group = -1;
        if (e->group_id) {
            gpointer v = g_hash_table_lookup(groups, &e->group_id);
            if (!v) {
                v = GINT_TO_POINTER(++g->n_groups);
                g_hash_table_insert(groups, (gpointer)&e->group_id, v);
            }
            sn->group = GPOINTER_TO_INT(v) - 1;
        }
        sn->parent =
            e->parent_id ? GPOINTER_TO_INT(g_hash_table_lookup(by_id, &e->parent_id)) - 1 : -1;
        sn->start_pred = e->start_pred_id
                             ? GPOINTER_TO_INT(g_hash_table_lookup(by_id, &e->start_pred_id)) - 1
                             : -1;
        /* Inputs, and the transfer time the recording paid for them. */
        double paid = 0;
        sn->first_in = in_at;
        for (uint32_t k = 0; k < e->n_inputs; k++) {
            const DfTraceInput *ti = &t->inputs[e->first_input + k];
            SimIn *si = &g->ins[in_at++];
            si->pred =
                ti->pred_id ? GPOINTER_TO_INT(g_hash_table_lookup(by_id, &ti->pred_id)) - 1 : -1;
            si->module = ti->module;
            si->bytes = ti->bytes;
            si->rec_worker = ti->worker;
            if (ti->worker >= 0 && ti->worker < t->n_workers && rec_npb && t->levels)
                paid += (double)ti->bytes *
                        rec_npb[t->levels[(size_t)ti->worker * (size_t)t->n_workers +
                                          (size_t)e->worker]];
        }
        sn->n_in = in_at - sn->first_in;
        /* Segments: self time between the waits. */
        GPtrArray *a = g_hash_table_lookup(waits_of, &e->node_id);
        sn->first_seg = seg_at;
        int64_t cursor = e->start_ns;
        for (guint k = 0; a && k < a->len; k++) {
            const DfTraceWait *w = g_ptr_array_index(a, k);
            gpointer v = g_hash_table_lookup(groups, &w->group_id);
            if (!v) {
                v = GINT_TO_POINTER(++g->n_groups);
                g_hash_table_insert(groups, (gpointer)&w->group_id, v);
            }
            g->segs[seg_at++] =
                (SimSeg){w->start_ns > cursor ? w->start_ns - cursor : 0, GPOINTER_TO_INT(v) - 1};
            cursor = w->end_ns;
        }
        g->segs[seg_at++] = (SimSeg){e->end_ns > cursor ? e->end_ns - cursor : 0, -1};
        sn->n_seg = seg_at - sn->first_seg;
        /* An ordered job (HEVC WPP row) blocks inside its body until the
         * row above is ahead, which the replay models itself (it cannot
         * end before that row), so its recorded wall time is too long: it
         * waited at most while it overlapped the row above.  Its work is
         * the rest, never less than its CPU time.  (CPU time stretched by
         * the recording's preemption replayed 2-worker traces worse: +33
         * and +81 % against the recorded runs, +23 and +26 % this way.) */
        sn->cpu_ns = sn->n_seg == 1 ? e->cpu_ns : 0;
        sn->cpu_share = sn->n_seg > 1 ? own_cpu_share(t, i, g->segs + sn->first_seg, sn->n_seg) : 0;
        if (sn->start_pred >= 0)
            sn->rec_wpp = t->events[sn->start_pred].worker != e->worker &&
                          row_overlap(t, i, sn->start_pred) > 0;
        if (sn->start_pred >= 0 && sn->n_seg == 1) {
            const int64_t wall = g->segs[sn->first_seg].ns;
            int64_t work = wall - row_overlap(t, i, sn->start_pred);
            if (work < e->cpu_ns)
                work = e->cpu_ns < wall ? e->cpu_ns : wall;
            g->segs[sn->first_seg].ns = work < 0 ? 0 : work;
        }
        /* The recorded transfer comes off the self time, first segment first. */
        for (int k = 0; k < sn->n_seg && paid > 0; k++) {
            SimSeg *sg = &g->segs[sn->first_seg + k];
            /* Compared as doubles: bytes * ns/byte of a hostile trace does
             * not fit an int64. */
            int64_t take = paid < (double)sg->ns ? (int64_t)paid : sg->ns;
            sg->ns -= take;
            paid -= (double)take;
        }
        /* The simulated clock adds these up, times --streams: a trace
         * whose times do not come from a clock must not overflow it. */
        for (int k = 0; k < sn->n_seg; k++) {
            work_ns += g->segs[sn->first_seg + k].ns;
            if (work_ns > SIM_MAX_WORK_NS) {
                ret = df_set_error(err, -EINVAL,
                                   "the trace's task times add up to more than %lld s "
                                   "(task %d): not a recording",
                                   (long long)(SIM_MAX_WORK_NS / 1000000000), i);
                goto out;
            }
        }
    }
    ret = lost_time(t, g, waits_of, err);
    if (ret < 0)
        goto out;
    if (busy_counts(t, g) < 0 || mark_jobs(t, g) < 0) {
        ret = df_set_error(err, -ENOMEM, "out of memory");
        goto out;
    }
    /* Which parent segment created each child. */
    for (int i = 0; i < n; i++) {
        SimNode *sn = &g->nodes[i];
        sn->created_seg = 0;
        if (sn->parent < 0)
            continue;
        const SimNode *p = &g->nodes[sn->parent];
        GPtrArray *a = g_hash_table_lookup(waits_of, &t->events[sn->parent].node_id);
        int s = 0;
        /* Created after the waits that had ended by then (a child cannot be
         * created by its parent during one of the parent's waits). */
        for (guint k = 0; a && k < a->len; k++)
            if (((const DfTraceWait *)g_ptr_array_index(a, k))->end_ns <= sn->created_ns)
                s = (int)k + 1;
        sn->created_seg = s < p->n_seg ? s : p->n_seg - 1;
    }
    g->group_size = calloc((size_t)(g->n_groups ? g->n_groups : 1), sizeof(int));
    int *keys = calloc(t->n_inputs + (size_t)n + 1, sizeof(int));
    if (!g->group_size || !keys) {
        free(keys);
        ret = df_set_error(err, -ENOMEM, "out of memory");
        goto out;
    }
    for (int i = 0; i < n; i++)
        if (g->nodes[i].group >= 0)
            g->group_size[g->nodes[i].group]++;
    /* Successor lists. */
    int m = 0;
    for (int i = 0; i < in_at; i++)
        if (g->ins[i].pred >= 0)
            keys[m++] = g->ins[i].pred;
    g->succ = csr(n, keys, m, &g->succ_first);
    g->succ_slot = malloc(sizeof(int) * (size_t)(m ? m : 1));
    int *fill = calloc((size_t)n + 1, sizeof(int));
    if (!g->succ || !g->succ_slot || !fill) {
        free(keys);
        free(fill);
        ret = df_set_error(err, -ENOMEM, "out of memory");
        goto out;
    }
    for (int i = 0; i < n; i++)
        for (int k = 0; k < g->nodes[i].n_in; k++) {
            int p = g->ins[g->nodes[i].first_in + k].pred;
            if (p < 0)
                continue;
            int at = g->succ_first[p] + fill[p]++;
            g->succ[at] = i;
            g->succ_slot[at] = k;
        }
    /* Children, by creating segment. */
    memset(fill, 0, sizeof(int) * ((size_t)n + 1));
    m = 0;
    for (int i = 0; i < n; i++)
        if (g->nodes[i].parent >= 0)
            keys[m++] = g->nodes[i].parent;
    g->child = csr(n, keys, m, &g->child_first);
    for (int i = 0; i < n && g->child; i++) {
        int p = g->nodes[i].parent;
        if (p >= 0)
            g->child[g->child_first[p] + fill[p]++] = i;
    }
    /* Start successors. */
    memset(fill, 0, sizeof(int) * ((size_t)n + 1));
    m = 0;
    for (int i = 0; i < n; i++)
        if (g->nodes[i].start_pred >= 0)
            keys[m++] = g->nodes[i].start_pred;
    g->startsucc = csr(n, keys, m, &g->startsucc_first);
    for (int i = 0; i < n && g->startsucc; i++) {
        int p = g->nodes[i].start_pred;
        if (p >= 0)
            g->startsucc[g->startsucc_first[p] + fill[p]++] = i;
    }
    free(fill);
    free(keys);
    /* External submissions: by creation time; the window is the most that
     * were in flight at once in the recording. */
    int64_t *ev = malloc(sizeof(int64_t) * 4 * (size_t)(n ? n : 1));
    g->ext = malloc(sizeof(int) * (size_t)(n ? n : 1));
    if (!ev || !g->ext || !g->child || !g->startsucc) {
        free(ev);
        ret = df_set_error(err, -ENOMEM, "out of memory");
        goto out;
    }
    int ne = 0;
    for (int i = 0; i < n; i++)
        if (g->nodes[i].parent < 0) {
            ev[2 * ne] = g->nodes[i].created_ns;
            ev[2 * ne + 1] = i;
            ne++;
        }
    qsort(ev, (size_t)ne, 2 * sizeof(int64_t), cmp_i64pair);
    for (int k = 0; k < ne; k++)
        g->ext[k] = (int)ev[2 * k + 1];
    g->n_ext = ne;
    int nm = 0;
    for (int k = 0; k < ne; k++) {
        ev[2 * nm] = t->events[g->ext[k]].created_ns;
        ev[2 * nm + 1] = +1;
        nm++;
        ev[2 * nm] = t->events[g->ext[k]].end_ns;
        ev[2 * nm + 1] = -1;
        nm++;
    }
    qsort(ev, (size_t)nm, 2 * sizeof(int64_t), cmp_i64pair);
    int cur = 0;
    for (int k = 0; k < nm; k++) {
        cur += (int)ev[2 * k + 1];
        if (cur > g->window)
            g->window = cur;
    }
    if (g->window < 1)
        g->window = 1;
    free(ev);
    g->frames = (int)g_hash_table_size(tags);
    for (int i = 0; i < n; i++) {
        if (i == 0 || t->events[i].created_ns < lo)
            lo = t->events[i].created_ns;
        if (i == 0 || t->events[i].end_ns > hi)
            hi = t->events[i].end_ns;
    }
    g->span_ns = hi > lo ? hi - lo : 0;
out:
    g_hash_table_destroy(by_id);
    g_hash_table_destroy(groups);
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, waits_of);
    while (g_hash_table_iter_next(&it, &k, &v))
        g_ptr_array_free(v, TRUE);
    g_hash_table_destroy(waits_of);
    g_hash_table_destroy(tags);
    if (ret < 0)
        sim_graph_free(g);
    else
        *out = g;
    return ret;
}

void sim_graph_free(SimGraph *g)
{
    if (!g)
        return;
    free(g->nodes);
    free(g->ins);
    free(g->segs);
    free(g->group_size);
    free(g->succ_first);
    free(g->succ);
    free(g->succ_slot);
    free(g->child_first);
    free(g->child);
    free(g->startsucc_first);
    free(g->startsucc);
    free(g->ext);
    free(g);
}

int sim_graph_frames(const SimGraph *g)
{
    return g->frames;
}

size_t sim_graph_tasks(const SimGraph *g)
{
    return (size_t)g->n;
}

int sim_graph_window(const SimGraph *g)
{
    return g->window;
}

int64_t sim_graph_lost_ns(const SimGraph *g)
{
    return g->lost_ns;
}

int64_t sim_graph_dispatch_ns(const SimGraph *g)
{
    return g->dispatch_ns;
}

int64_t sim_graph_span_ns(const SimGraph *g)
{
    return g->span_ns;
}

/* A node's own time: its segments, without the waits between them. */
static int64_t self_ns(const SimGraph *g, const SimNode *sn)
{
    int64_t self = 0;
    for (int k = 0; k < sn->n_seg; k++)
        self += g->segs[sn->first_seg + k].ns;
    return self;
}

void sim_graph_self_split(const SimGraph *g, int64_t *ordered_wpp, int64_t *ordered_alone,
                          int64_t *other)
{
    *ordered_wpp = *ordered_alone = *other = 0;
    for (int i = 0; i < g->n; i++) {
        const SimNode *sn = &g->nodes[i];
        *(sn->start_pred < 0 ? other : sn->rec_wpp ? ordered_wpp : ordered_alone) += self_ns(g, sn);
    }
}

void sim_graph_job_split(const SimGraph *g, int64_t *par, int64_t *alone, int64_t *other)
{
    *par = *alone = *other = 0;
    for (int i = 0; i < g->n; i++) {
        const SimNode *sn = &g->nodes[i];
        *(!sn->job ? other : sn->rec_par ? par : alone) += self_ns(g, sn);
    }
}

void sim_config_init(SimConfig *c)
{
    memset(c, 0, sizeof(*c));
    c->policy = "cost-local";
    c->n_workers = 1;
    c->task_overhead_ns = 300;
    c->poll_ns = 1000;
    c->spin_ns = 50000;
    c->wake_ns = 10000;
    c->complete_ns = 200;
    c->streams = 1;
    const double npb[DF_N_LEVELS] = {0, 0.005, 0.01, 0.04, 0.08, 0.15};
    memcpy(c->ns_per_byte, npb, sizeof(npb));
    c->explore_rate = 0.01;
}

/* ------------------------------------------------------------ simulation */

enum { EV_SEG_END, EV_POLL, EV_NEXT };

typedef struct Event {
    int64_t t;
    uint64_t seq;
    int type, worker;
    uint64_t epoch;
} Event;

typedef struct Frame {
    int node;
    int seg;
    double scale; /* of every segment: the WPP row factor now over the recording's */
} Frame;

enum { W_IDLE, W_RUNNING, W_PARKED };

typedef struct Worker {
    int status;
    Frame *stack;
    int depth, cap;
    uint64_t epoch; /* invalidates queued events of an earlier status */
    bool poll_queued;
    int64_t since;      /* status change, for idle time */
    int64_t spin_until; /* an idle worker spins (polls) until then, then parks */
} Worker;

typedef struct Sim {
    const SimGraph *g;
    const SimConfig *cfg;
    int nw, total;
    DfTopo topo;
    DfPolicy *pol;
    const DfPolicyOps *ops;
    DfWorkerState *state;
    DfNode **dn;
    int *pending;
    uint8_t *done;
    int *ran_on;        /* worker that started the node; -1 */
    int *blocked_on;    /* worker an ordered job blocks, its work done; -1 */
    int *group_left;    /* streams * n_groups */
    int *group_running; /* streams * n_groups: jobs of the batch running now */
    int *ext_next, *ext_inflight;
    Worker *w;
    Event *heap;
    size_t heap_n, heap_cap;
    uint64_t seq;
    int64_t now;
    int finished;
    int64_t queued;
    SimResult *res;
    int64_t idle_ns;
    int n_running; /* workers running a body */
    int wake_rr;
    uint64_t rng;
} Sim;

static int64_t sim_clock(void *ctx)
{
    return ((Sim *)ctx)->now;
}

static void heap_push(Sim *s, Event e)
{
    if (s->heap_n == s->heap_cap) {
        s->heap_cap = s->heap_cap ? s->heap_cap * 2 : 1024;
        s->heap = realloc(s->heap, sizeof(Event) * s->heap_cap);
    }
    e.seq = s->seq++;
    size_t i = s->heap_n++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (s->heap[p].t < e.t || (s->heap[p].t == e.t && s->heap[p].seq < e.seq))
            break;
        s->heap[i] = s->heap[p];
        i = p;
    }
    s->heap[i] = e;
}

static Event heap_pop(Sim *s)
{
    Event top = s->heap[0];
    Event last = s->heap[--s->heap_n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= s->heap_n)
            break;
        if (c + 1 < s->heap_n &&
            (s->heap[c + 1].t < s->heap[c].t ||
             (s->heap[c + 1].t == s->heap[c].t && s->heap[c + 1].seq < s->heap[c].seq)))
            c++;
        if (last.t < s->heap[c].t || (last.t == s->heap[c].t && last.seq < s->heap[c].seq))
            break;
        s->heap[i] = s->heap[c];
        i = c;
    }
    s->heap[i] = last;
    return top;
}

static inline const SimNode *node_of(const Sim *s, int gi)
{
    return &s->g->nodes[gi % s->g->n];
}

static void set_status(Sim *s, int w, int st)
{
    Worker *wk = &s->w[w];
    if (wk->status != W_RUNNING)
        s->idle_ns += s->now - wk->since;
    s->n_running += (st == W_RUNNING) - (wk->status == W_RUNNING);
    wk->status = st;
    wk->since = s->now;
    wk->epoch++;
    wk->poll_queued = false;
    uint8_t v = st == W_RUNNING ? DF_WS_RUNNING : st == W_PARKED ? DF_WS_PARKED : DF_WS_IDLE;
    atomic_store_explicit(&s->state[w].v, v, memory_order_relaxed);
    if (st == W_IDLE) {
        /* A spinning worker's heartbeat stays fresh until it would park. */
        wk->spin_until = s->now + s->cfg->spin_ns;
        atomic_store_explicit(&s->state[w].beat, wk->spin_until - DF_IDLE_BEAT_NS + 1,
                              memory_order_relaxed);
    }
}

static bool spinning(const Sim *s, int w)
{
    return s->w[w].status == W_IDLE && s->now < s->w[w].spin_until;
}

static void schedule_poll(Sim *s, int w, int64_t delay)
{
    Worker *wk = &s->w[w];
    if (wk->status == W_RUNNING || wk->poll_queued)
        return;
    wk->poll_queued = true;
    heap_push(s, (Event){.t = s->now + delay, .type = EV_POLL, .worker = w, .epoch = wk->epoch});
}

/* Delay before worker w notices new work: a spinning one at its next poll,
 * a parked one after a futex wake-up. */
static int64_t notice_delay(Sim *s, int w)
{
    if (!spinning(s, w))
        return s->cfg->wake_ns;
    /* Somewhere in its poll period. */
    return 1 +
           (int64_t)(df_rand_next(&s->rng) % (uint64_t)(s->cfg->poll_ns > 0 ? s->cfg->poll_ns : 1));
}

/* `running`: the worker that made it ready goes on running a body (a
 * submission from inside one, an ordered job released by its
 * predecessor's start), as df_make_ready_running() says. */
static void make_ready(Sim *s, int self, int gi, bool running)
{
    DfNode *n = s->dn[gi];
    DfPlacement p = s->ops->push(s->pol, self, n);
    s->queued++;
    /* The worker it was placed with notices (woken if parked, as
     * df_make_ready does); spinning workers notice too, as thieves. */
    int target = p.worker;
    if (target >= 0 && target != self && s->w[target].status != W_RUNNING)
        schedule_poll(s, target, notice_delay(s, target));
    int woken = 0;
    for (int k = 0; k < s->nw && woken < 2; k++) {
        int v = (s->wake_rr + k) % s->nw;
        if (v == self || v == target || s->w[v].poll_queued || !spinning(s, v))
            continue;
        schedule_poll(s, v, notice_delay(s, v));
        s->wake_rr = v + 1;
        woken++;
    }
    /* A shared set, a busy owner with a backlog, or a node left with the
     * worker that goes on running: df_make_ready wakes a parked worker as
     * well. */
    if (!woken && (target < 0 || p.backlog || (running && self >= 0 && target == self)))
        for (int k = 0; k < s->nw; k++) {
            int v = (s->wake_rr + k) % s->nw;
            if (v != self && s->w[v].status != W_RUNNING && !s->w[v].poll_queued) {
                schedule_poll(s, v, notice_delay(s, v));
                s->wake_rr = v + 1;
                break;
            }
        }
}

static void release(Sim *s, int self, int gi, bool running)
{
    if (--s->pending[gi] == 0)
        make_ready(s, self, gi, running);
}

static void submit_children(Sim *s, int self, int gi, int seg)
{
    const SimGraph *g = s->g;
    int base = gi - gi % g->n, i = gi % g->n;
    for (int k = g->child_first[i]; k < g->child_first[i + 1]; k++) {
        int c = g->child[k];
        if (g->nodes[c].created_seg == seg)
            release(s, self, base + c, true);
    }
}

static void submit_external(Sim *s, int stream)
{
    const SimGraph *g = s->g;
    int window = s->cfg->window > 0 ? s->cfg->window : g->window;
    while (s->ext_next[stream] < g->n_ext && s->ext_inflight[stream] < window) {
        int gi = stream * g->n + g->ext[s->ext_next[stream]++];
        s->ext_inflight[stream]++;
        release(s, -1, gi, false);
    }
}

static double slowdown_at(const SimConfig *c, int busy)
{
    if (busy <= 1)
        return 1.0;
    return c->slowdown[busy < c->n_slowdown ? busy : c->n_slowdown];
}

static void begin_segment(Sim *s, int w, int64_t extra)
{
    Worker *wk = &s->w[w];
    Frame *f = &wk->stack[wk->depth - 1];
    const SimNode *sn = node_of(s, f->node);
    if (wk->status != W_RUNNING)
        set_status(s, w, W_RUNNING);
    int64_t ns = s->g->segs[sn->first_seg + f->seg].ns;
    /* Off this machine, a body's work is its CPU time: its wall time also
     * holds the preemption by this machine's other load. */
    if (!s->cfg->lost_cpu && sn->cpu_ns > 0 && sn->cpu_ns < ns)
        ns = sn->cpu_ns;
    if (!s->cfg->lost_cpu && sn->cpu_share > 0)
        ns = (int64_t)((double)ns * sn->cpu_share);
    /* The machine's slowdown at the busy count now, against the one the
     * recording ran at (set for the whole segment: counts change at task
     * ends, which are many per segment only for long bodies). */
    if (s->cfg->n_slowdown > 0)
        ns = (int64_t)((double)ns * slowdown_at(s->cfg, s->n_running) /
                       slowdown_at(s->cfg, sn->rec_busy));
    if (f->scale != 1.0)
        ns = (int64_t)((double)ns * f->scale);
    heap_push(
        s, (Event){.t = s->now + extra + ns, .type = EV_SEG_END, .worker = w, .epoch = wk->epoch});
}

static void start_node(Sim *s, int w, DfNode *n)
{
    Worker *wk = &s->w[w];
    int gi = (int)n->aux[0];
    s->queued--;
    if (wk->depth == wk->cap) {
        wk->cap = wk->cap ? wk->cap * 2 : 8;
        wk->stack = realloc(wk->stack, sizeof(Frame) * (size_t)wk->cap);
    }
    /* A WPP row runs slower while the row above runs on another worker
     * (SimConfig.wpp_factor); one recorded so is first brought back. */
    const SimNode *sn = node_of(s, gi);
    double scale = 1.0;
    if (sn->start_pred >= 0 && s->cfg->wpp_factor > 1.0) {
        const int above = gi - gi % s->g->n + sn->start_pred;
        const bool now_wpp = !s->done[above] && s->ran_on[above] >= 0 && s->ran_on[above] != w;
        scale = (now_wpp ? s->cfg->wpp_factor : 1.0) / (sn->rec_wpp ? s->cfg->wpp_factor : 1.0);
    }
    /* An unordered job likewise while a sibling runs on another worker
     * (this worker runs no other: jobs do not wait). */
    if (sn->job) {
        int *running = &s->group_running[gi / s->g->n * s->g->n_groups + sn->group];
        if (s->cfg->job_factor > 1.0)
            scale *= (*running > 0 ? s->cfg->job_factor : 1.0) /
                     (sn->rec_par ? s->cfg->job_factor : 1.0);
        (*running)++;
    }
    s->ran_on[gi] = w;
    wk->stack[wk->depth++] = (Frame){gi, 0, scale};
    set_status(s, w, W_RUNNING);
    if (n->flags & DF_NF_STOLEN)
        s->res->stolen++;
    n->flags = 0;
    /* Transfer: every input byte from another worker, at its level. */
    double transfer = 0;
    for (unsigned k = 0; k < n->n_inputs; k++) {
        const DfInput *in = df_node_input_c(n, k);
        if (in->worker < 0 || in->bytes == 0)
            continue;
        int lev = s->topo.levels[(size_t)in->worker * (size_t)s->nw + (size_t)w];
        s->res->bytes_level[lev] += in->bytes;
        transfer += (double)in->bytes * s->cfg->ns_per_byte[lev];
    }
    s->res->transfer_ns += (int64_t)transfer;
    /* The recording's CPU time lost before this node (see lost_time()). */
    int64_t lost = s->cfg->lost_cpu ? sn->lost_ns : 0;
    s->res->lost_ns += lost;
    /* Ordered jobs released by this start. */
    const SimGraph *g = s->g;
    int base = gi - gi % g->n, i = gi % g->n;
    for (int k = g->startsucc_first[i]; k < g->startsucc_first[i + 1]; k++)
        release(s, w, base + g->startsucc[k], true);
    begin_segment(s, w, s->cfg->task_overhead_ns + (int64_t)transfer + lost);
}

static void dispatch(Sim *s, int w)
{
    DfNode *n = s->ops->pop(s->pol, w, NULL);
    if (n) {
        start_node(s, w, n);
        return;
    }
    Worker *wk = &s->w[w];
    if (wk->status == W_RUNNING)
        set_status(s, w, W_IDLE);
    /* While spinning, poll again if there is work somewhere (a thief's
     * grace, or work another thief got first); new work wakes it anyway. */
    if (spinning(s, w)) {
        if (s->queued > 0)
            schedule_poll(s, w, s->cfg->poll_ns);
    } else if (wk->status != W_PARKED) {
        set_status(s, w, W_PARKED);
    }
}

/* The worker's innermost body waits for its group: resume it if that group
 * is done, else help. */
static void after_nested(Sim *s, int w)
{
    Worker *wk = &s->w[w];
    if (wk->depth == 0) {
        dispatch(s, w);
        return;
    }
    Frame *f = &wk->stack[wk->depth - 1];
    const SimNode *sn = node_of(s, f->node);
    int stream = f->node / s->g->n;
    int grp = s->g->segs[sn->first_seg + f->seg].wait;
    if (s->group_left[stream * s->g->n_groups + grp] == 0) {
        f->seg++;
        begin_segment(s, w, 0);
    } else {
        dispatch(s, w);
    }
}

static void group_done(Sim *s, int stream, int grp)
{
    /* Resume bodies waiting on it whose worker is not inside a nested node. */
    for (int v = 0; v < s->nw; v++) {
        Worker *wk = &s->w[v];
        if (wk->status == W_RUNNING || wk->depth == 0)
            continue;
        Frame *f = &wk->stack[wk->depth - 1];
        const SimNode *sn = node_of(s, f->node);
        if (f->node / s->g->n == stream && s->g->segs[sn->first_seg + f->seg].wait == grp) {
            f->seg++;
            begin_segment(s, v, 0);
        }
    }
}

static void complete_node(Sim *s, int w, int gi);

/* The innermost node of worker w has run its last segment. */
static void finish_node(Sim *s, int w, int gi)
{
    Worker *wk = &s->w[w];
    wk->depth--;
    /* Between two nodes: not running, so that group_done() may resume this
     * worker's own waiting body; it pops again once it is through the
     * completion, and a spinning thief may be faster. */
    set_status(s, w, W_IDLE);
    complete_node(s, w, gi);
    if (wk->status != W_RUNNING)
        heap_push(s, (Event){.t = s->now + s->cfg->complete_ns,
                             .type = EV_NEXT,
                             .worker = w,
                             .epoch = wk->epoch});
}

static void complete_node(Sim *s, int w, int gi)
{
    const SimGraph *g = s->g;
    int stream = gi / g->n, i = gi % g->n, base = gi - i;
    const SimNode *sn = &g->nodes[i];
    s->done[gi] = 1;
    s->finished++;
    s->res->tasks++;
    if (sn->job)
        s->group_running[stream * g->n_groups + sn->group]--;
    for (int k = g->succ_first[i]; k < g->succ_first[i + 1]; k++) {
        int c = base + g->succ[k];
        df_node_input(s->dn[c], (unsigned)g->succ_slot[k])->worker = w;
        release(s, w, c, false);
    }
    if (sn->group >= 0 && --s->group_left[stream * g->n_groups + sn->group] == 0)
        group_done(s, stream, sn->group);
    if (sn->parent < 0) {
        s->ext_inflight[stream]--;
        submit_external(s, stream);
    }
    /* The ordered job below, if it ended its work already, ends now. */
    for (int k = g->startsucc_first[i]; k < g->startsucc_first[i + 1]; k++) {
        const int c = base + g->startsucc[k];
        const int bw = s->blocked_on[c];
        if (bw >= 0) {
            s->blocked_on[c] = -1;
            finish_node(s, bw, c);
        }
    }
}

static void on_seg_end(Sim *s, int w)
{
    Worker *wk = &s->w[w];
    Frame *f = &wk->stack[wk->depth - 1];
    const SimNode *sn = node_of(s, f->node);
    submit_children(s, w, f->node, f->seg);
    if (f->seg < sn->n_seg - 1) {
        int stream = f->node / s->g->n;
        int grp = s->g->segs[sn->first_seg + f->seg].wait;
        if (s->group_left[stream * s->g->n_groups + grp] == 0) {
            f->seg++;
            begin_segment(s, w, 0);
        } else {
            set_status(s, w, W_IDLE); /* helping */
            dispatch(s, w);
        }
        return;
    }
    const int gi = f->node;
    /* An ordered job (HEVC WPP row) cannot end before the row above it:
     * it blocks in libavcodec, holding its worker, until that one ends. */
    const int sp = node_of(s, gi)->start_pred;
    if (sp >= 0 && !s->done[gi - gi % s->g->n + sp]) {
        s->blocked_on[gi] = w;
        return;
    }
    finish_node(s, w, gi);
}

int sim_run(const SimGraph *g, const SimConfig *cfg, SimResult *res, DfError *err)
{
    memset(res, 0, sizeof(*res));
    const DfPolicyOps *ops = df_policy_find(cfg->policy);
    if (!ops)
        return df_set_error(err, -EINVAL, "unknown policy \"%s\"", cfg->policy);
    if (cfg->n_workers < 1 || cfg->streams < 1)
        return df_set_error(err, -EINVAL, "need at least one worker and one stream");
    Sim s = {.g = g,
             .cfg = cfg,
             .nw = cfg->n_workers,
             .ops = ops,
             .res = res,
             .rng = cfg->seed ? cfg->seed : 0x2545f4914f6cdd1dull};
    int ret = df_topo_model(&s.topo, cfg->topology, cfg->n_workers, cfg->cost_model, NULL, err);
    if (ret < 0)
        return ret;
    const int K = cfg->streams;
    s.total = g->n * K;
    size_t scratch = ops->node_scratch(s.nw);
    s.state = aligned_alloc(DF_CACHELINE, sizeof(DfWorkerState) * (size_t)s.nw);
    s.w = calloc((size_t)s.nw, sizeof(Worker));
    s.dn = calloc((size_t)(s.total ? s.total : 1), sizeof(DfNode *));
    s.pending = calloc((size_t)(s.total ? s.total : 1), sizeof(int));
    s.done = calloc((size_t)(s.total ? s.total : 1), 1);
    s.blocked_on = malloc(sizeof(int) * (size_t)(s.total ? s.total : 1));
    s.ran_on = malloc(sizeof(int) * (size_t)(s.total ? s.total : 1));
    s.group_left = calloc((size_t)K * (size_t)(g->n_groups ? g->n_groups : 1), sizeof(int));
    s.group_running = calloc((size_t)K * (size_t)(g->n_groups ? g->n_groups : 1), sizeof(int));
    s.ext_next = calloc((size_t)K, sizeof(int));
    s.ext_inflight = calloc((size_t)K, sizeof(int));
    if (!s.state || !s.w || !s.dn || !s.pending || !s.done || !s.blocked_on || !s.ran_on ||
        !s.group_left || !s.group_running || !s.ext_next || !s.ext_inflight) {
        ret = df_set_error(err, -ENOMEM, "out of memory");
        goto out;
    }
    for (int gi = 0; gi < s.total; gi++)
        s.blocked_on[gi] = s.ran_on[gi] = -1;
    for (int v = 0; v < s.nw; v++) {
        atomic_init(&s.state[v].v, DF_WS_PARKED);
        atomic_init(&s.state[v].beat, 0);
        s.w[v].status = W_PARKED;
    }
    DfPolicyEnv env = {.n_workers = s.nw,
                       .trcost = s.topo.trcost,
                       .levels = s.topo.levels,
                       .now = sim_clock,
                       .clock_ctx = &s,
                       .seed = cfg->seed,
                       .explore_rate = cfg->explore_rate,
                       .state = s.state};
    if (ops->create(&env, &s.pol) < 0) {
        ret = df_set_error(err, -ENOMEM, "cannot create policy");
        goto out;
    }
    s.pol->ops = ops;
    for (int st = 0; st < K; st++)
        for (int grp = 0; grp < g->n_groups; grp++)
            s.group_left[st * g->n_groups + grp] = g->group_size[grp];
    for (int gi = 0; gi < s.total; gi++) {
        const SimNode *sn = node_of(&s, gi);
        DfNode *n = calloc(1, sizeof(DfNode) + scratch);
        if (!n) {
            ret = df_set_error(err, -ENOMEM, "out of memory");
            goto out;
        }
        s.dn[gi] = n;
        n->module = sn->module;
        n->index = sn->index;
        n->id = (uint64_t)gi + 1;
        n->deadline = sn->deadline;
        n->worker = -1;
        n->placed = -1;
        n->aux[0] = (uintptr_t)gi;
        for (int k = 0; k < sn->n_in; k++) {
            const SimIn *si = &g->ins[sn->first_in + k];
            unsigned slot = n->n_inputs;
            if (slot >= DF_INLINE_INPUTS && (slot - DF_INLINE_INPUTS) % DF_BLOCK_INPUTS == 0) {
                DfInputBlock *b = calloc(1, sizeof(*b));
                if (!b) {
                    ret = df_set_error(err, -ENOMEM, "out of memory");
                    goto out;
                }
                DfInputBlock **pp = &n->more;
                while (*pp)
                    pp = &(*pp)->next;
                *pp = b;
            }
            n->n_inputs++;
            DfInput *in = df_node_input(n, slot);
            *in =
                (DfInput){.bytes = si->bytes,
                          .worker = -1,
                          .module = si->module,
                          .pred_id = si->pred >= 0 ? (uint64_t)(gi - gi % g->n + si->pred) + 1 : 0};
            n->in_bytes += si->bytes;
            if (si->pred >= 0)
                s.pending[gi]++;
        }
        s.pending[gi] += 1 + (sn->start_pred >= 0); /* +1: submission */
    }
    for (int st = 0; st < K; st++)
        submit_external(&s, st);
    while (s.heap_n > 0) {
        Event e = heap_pop(&s);
        s.now = e.t;
        Worker *wk = &s.w[e.worker];
        if (e.epoch != wk->epoch)
            continue;
        if (e.type == EV_SEG_END) {
            on_seg_end(&s, e.worker);
        } else if (e.type == EV_NEXT) {
            if (wk->status != W_RUNNING)
                after_nested(&s, e.worker);
        } else if (e.type == EV_POLL) {
            wk->poll_queued = false;
            /* Woken: spins again, also one whose spin ran out before it
             * could park (a thief's grace needs its second poll). */
            if (wk->status == W_PARKED || (wk->status == W_IDLE && !spinning(&s, e.worker)))
                set_status(&s, e.worker, W_IDLE);
            if (wk->status != W_RUNNING)
                dispatch(&s, e.worker);
        }
        if (s.finished == s.total)
            break;
    }
    if (s.finished != s.total) {
        ret = df_set_error(err, -EDEADLK, "replay stalled: %d of %d tasks ran (trace incomplete?)",
                           s.finished, s.total);
        goto out;
    }
    for (int v = 0; v < s.nw; v++)
        if (s.w[v].status != W_RUNNING)
            s.idle_ns += s.now - s.w[v].since;
    res->makespan_ns = s.now;
    res->frames = (uint64_t)g->frames * (uint64_t)K;
    res->fps = s.now > 0 ? (double)res->frames * 1e9 / (double)s.now : 0;
    res->idle_share = s.now > 0 ? (double)s.idle_ns / ((double)s.now * s.nw) : 0;
    uint64_t all = 0;
    for (int l = 0; l < DF_N_LEVELS; l++)
        all += res->bytes_level[l];
    (void)all;
    /* Local bytes are those read on the producer's own worker: the level
     * matrix puts them at SELF, which start_node counts in bytes_level. */
    res->local_byte_share = all ? (double)res->bytes_level[DF_LEVEL_SELF] / (double)all : 1.0;
out:
    if (s.pol)
        ops->destroy(s.pol);
    if (s.dn)
        for (int gi = 0; gi < s.total; gi++)
            if (s.dn[gi]) {
                DfInputBlock *b = s.dn[gi]->more;
                while (b) {
                    DfInputBlock *nx = b->next;
                    free(b);
                    b = nx;
                }
                free(s.dn[gi]);
            }
    for (int v = 0; s.w && v < s.nw; v++)
        free(s.w[v].stack);
    free(s.w);
    free(s.state);
    free(s.dn);
    free(s.pending);
    free(s.done);
    free(s.blocked_on);
    free(s.ran_on);
    free(s.group_left);
    free(s.group_running);
    free(s.ext_next);
    free(s.ext_inflight);
    free(s.heap);
    df_topo_fini(&s.topo);
    return ret;
}

int sim_check_topology(const SimConfig *cfg, DfError *err)
{
    DfTopo t;
    int ret = df_topo_model(&t, cfg->topology, 1, cfg->cost_model, NULL, err);
    df_topo_fini(&t);
    return ret;
}
