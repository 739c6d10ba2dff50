/* The dfsim engine's graph from a trace: nodes, inputs, the segments of
 * self time between waits, creation and start links, the CPU time the
 * recording lost outside tasks, busy counts and job marks (the model is
 * described in sim.c). */
#include "sim_graph.h"
#include "sched_internal.h"

#include <errno.h>
#include <glib.h>
#include <stdlib.h>
#include <string.h>

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
        sn->start_in = -1;
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
            if (si->pred >= 0 && si->pred == sn->start_pred) {
                /* The row above: no completion dependency (the replay
                 * names its worker when that row starts), and no transfer
                 * to take out (its cost is the WPP factor). */
                sn->start_in = (int)k;
                si->pred = -1;
                continue;
            }
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
            if (t->events[i].created_ns <= t->events[p].ready_ns)
                g->nodes[p].rec_succ = true;
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

int sim_graph_frame_of(const SimGraph *g, int *frame_of)
{
    const int n = g->n;
    int64_t *tags = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    if (!tags)
        return -ENOMEM;
    int nt = 0;
    for (int i = 0; i < n; i++)
        if (g->nodes[i].tag >= 0)
            tags[nt++] = g->nodes[i].tag;
    qsort(tags, (size_t)nt, sizeof(int64_t), cmp_i64);
    int u = 0;
    for (int i = 0; i < nt; i++)
        if (u == 0 || tags[u - 1] != tags[i])
            tags[u++] = tags[i];
    for (int i = 0; i < n; i++) {
        const int64_t *t = g->nodes[i].tag >= 0 ? bsearch(&g->nodes[i].tag, tags, (size_t)u,
                                                          sizeof(int64_t), cmp_i64)
                                                : NULL;
        frame_of[i] = t ? (int)(t - tags) : -1;
    }
    for (bool changed = true; changed;) {
        changed = false;
        for (int i = 0; i < n; i++) {
            const int p = g->nodes[i].parent;
            if (frame_of[i] < 0 && p >= 0 && frame_of[p] >= 0) {
                frame_of[i] = frame_of[p];
                changed = true;
            }
        }
    }
    free(tags);
    return u;
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
