/* Recording of executed nodes (the patent's visualisation starts here).
 * Each worker appends to its own buffer; the count is published with a
 * release store after the event is complete, so a collector that loads it
 * with acquire reads only whole events, even while workers keep running.
 * Buffers replaced by a new start are kept until the scheduler goes. */
#include "sched_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

typedef struct Retired {
    struct Retired *next;
    DfTraceBuf *buf;
} Retired;

static void buf_free(DfTraceBuf *b)
{
    if (!b)
        return;
    free(b->events);
    free(b->inputs);
    free(b->waits);
    free(b);
}

/* Under trace_lock. */
static void retire(DfSched *s, DfTraceBuf *b)
{
    if (!b)
        return;
    Retired *r = malloc(sizeof(*r));
    if (!r)
        return; /* leak rather than free a buffer a worker may still write */
    r->buf = b;
    r->next = s->trace_retired;
    s->trace_retired = r;
}

/* Page faults are what tracing costs most when left to the workers: one
 * per 4 KiB, every ~20 events, each a kernel entry and a page to zero
 * (measured 8-14 us a page on this project's VMs, whose host also faults).
 * So the arrays are touched here, whole; large ones ask for transparent
 * huge pages, which makes that one fault per 2 MiB.  The price is memory
 * held from the start, ~200 bytes per event and worker: callers size the
 * capacity to what they mean to record. */
#define DF_TRACE_HUGE ((size_t)2 << 20)

static void *trace_array(size_t n, size_t size)
{
    if (n > SIZE_MAX / size)
        return NULL;
    size_t bytes = n * size;
    void *p;
    if (bytes >= DF_TRACE_HUGE) {
        bytes = (bytes + DF_TRACE_HUGE - 1) & ~(DF_TRACE_HUGE - 1);
        p = aligned_alloc(DF_TRACE_HUGE, bytes);
        if (p)
            (void)madvise(p, bytes, MADV_HUGEPAGE); /* advice: EINVAL without THP is fine */
    } else {
        p = malloc(bytes);
    }
    /* A byte a page, not memset(0): the compiler may fold malloc + memset
     * into calloc, which leaves fresh pages unmapped. */
    volatile unsigned char *c = p;
    for (size_t i = 0; c && i < bytes; i += 4096)
        c[i] = 0;
    return p;
}

int df_sched_trace_start(DfSched *s, size_t capacity)
{
    if (capacity == 0)
        return -EINVAL;
    pthread_mutex_lock(&s->trace_lock);
    int ret = 0;
    for (int i = 0; i < s->n_workers; i++) {
        DfTraceBuf *b = calloc(1, sizeof(*b));
        if (b) {
            b->cap_events = capacity;
            b->cap_inputs = capacity * 2;
            b->cap_waits = capacity / 4 + 16;
            b->events = trace_array(b->cap_events, sizeof(DfTraceEvent));
            b->inputs = trace_array(b->cap_inputs, sizeof(DfTraceInput));
            b->waits = trace_array(b->cap_waits, sizeof(DfTraceWait));
        }
        if (!b || !b->events || !b->inputs || !b->waits) {
            buf_free(b);
            ret = -ENOMEM;
            break;
        }
        retire(s, atomic_exchange_explicit(&s->workers[i].trace, b, memory_order_acq_rel));
    }
    if (ret == 0) {
        atomic_store_explicit(&s->tracing, true, memory_order_release);
    }
    pthread_mutex_unlock(&s->trace_lock);
    return ret;
}

void df_sched_trace_stop(DfSched *s)
{
    atomic_store_explicit(&s->tracing, false, memory_order_release);
}

bool df_sched_tracing(const DfSched *s)
{
    return atomic_load_explicit(&((DfSched *)s)->tracing, memory_order_acquire);
}

void df_trace_record(DfWorker *w, const DfNode *n, int64_t start, int64_t end, int64_t cpu_ns)
{
    DfTraceBuf *b = atomic_load_explicit(&w->trace, memory_order_acquire);
    if (!b)
        return;
    size_t i = atomic_load_explicit(&b->n_events, memory_order_relaxed);
    if (i >= b->cap_events || b->n_inputs + n->n_inputs > b->cap_inputs) {
        atomic_store_explicit(&b->dropped,
                              atomic_load_explicit(&b->dropped, memory_order_relaxed) + 1,
                              memory_order_relaxed);
        return;
    }
    DfTraceEvent *e = &b->events[i];
    e->node_id = n->id;
    e->module = n->module;
    e->index = n->index;
    e->tag = n->group ? n->group->tag : -1;
    e->worker = w->index;
    e->flags = ((n->flags & DF_NF_STOLEN) ? DF_TRACE_STOLEN : 0) |
               ((n->flags & DF_NF_EXPLORED) ? DF_TRACE_EXPLORED : 0) |
               ((n->flags & DF_NF_SKIPPED) ? DF_TRACE_SKIPPED : 0);
    e->start_ns = start;
    e->end_ns = end;
    e->deadline = n->deadline;
    /* A short node was spawned before tracing began: it has no record of
     * its creation, so it shows as created and ready when it started. */
    const bool tail = !(n->flags & DF_NF_SHORT);
    e->created_ns = tail ? n->created_ns : start;
    e->ready_ns = tail ? n->ready_ns : start;
    e->parent_id = tail ? n->parent_id : 0;
    e->start_pred_id = tail ? n->start_pred_id : 0;
    e->group_id = n->group ? n->group->id : 0;
    e->cpu_ns = cpu_ns;
    e->first_input = (uint32_t)b->n_inputs;
    e->n_inputs = n->n_inputs;
    DfPInputCursor cur = df_pnode_inputs(n);
    for (const DfInput *in; (in = df_pnode_input_next_raw(&cur));)
        b->inputs[b->n_inputs++] =
            (DfTraceInput){in->pred_id, in->worker, in->module, in->bytes, in->bytes};
    atomic_store_explicit(&b->n_events, i + 1, memory_order_release);
}

void df_trace_record_wait(DfWorker *w, const DfGroup *g, int64_t start, int64_t end)
{
    DfTraceBuf *b = atomic_load_explicit(&w->trace, memory_order_acquire);
    if (!b || !w->current)
        return;
    size_t i = atomic_load_explicit(&b->n_waits, memory_order_relaxed);
    if (i >= b->cap_waits) {
        atomic_store_explicit(&b->dropped,
                              atomic_load_explicit(&b->dropped, memory_order_relaxed) + 1,
                              memory_order_relaxed);
        return;
    }
    b->waits[i] = (DfTraceWait){w->current->id, g->id, w->index, start, end};
    atomic_store_explicit(&b->n_waits, i + 1, memory_order_release);
}

static int cmp_wait(const void *a, const void *b)
{
    const DfTraceWait *x = a, *y = b;
    return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

static int cmp_start(const void *a, const void *b)
{
    const DfTraceEvent *x = a, *y = b;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    return x->worker - y->worker;
}

int df_sched_trace_collect(DfSched *s, DfTrace *out)
{
    memset(out, 0, sizeof(*out));
    pthread_mutex_lock(&s->trace_lock);
    size_t ne = 0, ni = 0, nwait = 0;
    size_t *counts = calloc((size_t)s->n_workers, sizeof(size_t));
    if (!counts) {
        pthread_mutex_unlock(&s->trace_lock);
        return -ENOMEM;
    }
    for (int i = 0; i < s->n_workers; i++) {
        DfTraceBuf *b = atomic_load_explicit(&s->workers[i].trace, memory_order_acquire);
        if (!b)
            continue;
        counts[i] = atomic_load_explicit(&b->n_events, memory_order_acquire);
        ne += counts[i];
        nwait += atomic_load_explicit(&b->n_waits, memory_order_acquire);
        for (size_t k = 0; k < counts[i]; k++)
            ni += b->events[k].n_inputs;
    }
    out->events = malloc(sizeof(DfTraceEvent) * (ne ? ne : 1));
    out->inputs = malloc(sizeof(DfTraceInput) * (ni ? ni : 1));
    out->waits = malloc(sizeof(DfTraceWait) * (nwait ? nwait : 1));
    out->n_workers = s->n_workers;
    size_t nn = (size_t)s->n_workers * (size_t)s->n_workers;
    out->trcost = malloc(nn * sizeof(uint32_t));
    out->levels = malloc(nn);
    if (!out->events || !out->inputs || !out->waits || !out->trcost || !out->levels) {
        free(counts);
        pthread_mutex_unlock(&s->trace_lock);
        df_trace_free(out);
        return -ENOMEM;
    }
    /* The trace keeps whole matrices (its file format); the scheduler
     * itself has only the topology's keys. */
    for (int a = 0; a < s->n_workers; a++)
        for (int b = 0; b < s->n_workers; b++) {
            const size_t i = (size_t)a * (size_t)s->n_workers + (size_t)b;
            out->levels[i] = (uint8_t)df_topo_level(&s->topo, a, b);
            out->trcost[i] = s->topo.level_cost[out->levels[i]];
        }
    for (int i = 0; i < s->n_workers; i++) {
        DfTraceBuf *b = atomic_load_explicit(&s->workers[i].trace, memory_order_acquire);
        if (!b)
            continue;
        out->dropped += atomic_load_explicit(&b->dropped, memory_order_relaxed);
        for (size_t k = 0; k < counts[i]; k++) {
            DfTraceEvent e = b->events[k];
            memcpy(out->inputs + out->n_inputs, b->inputs + e.first_input,
                   sizeof(DfTraceInput) * e.n_inputs);
            e.first_input = (uint32_t)out->n_inputs;
            out->n_inputs += e.n_inputs;
            out->events[out->n_events++] = e;
        }
        size_t nw = atomic_load_explicit(&b->n_waits, memory_order_acquire);
        for (size_t k = 0; k < nw && out->n_waits < nwait; k++)
            out->waits[out->n_waits++] = b->waits[k];
    }
    free(counts);
    pthread_mutex_unlock(&s->trace_lock);
    qsort(out->events, out->n_events, sizeof(DfTraceEvent), cmp_start);
    qsort(out->waits, out->n_waits, sizeof(DfTraceWait), cmp_wait);

    pthread_mutex_lock(&s->module_lock);
    out->n_modules = s->n_modules;
    out->module_names = calloc((size_t)(s->n_modules ? s->n_modules : 1), sizeof(char *));
    for (int m = 0; m < s->n_modules && out->module_names; m++)
        out->module_names[m] = strdup(s->module_names[m]);
    pthread_mutex_unlock(&s->module_lock);
    /* After the events: the policy's own data (what placed them), as of
     * now. */
    const DfPolicySnapshotCtx ctx = {.tasks_explored = df_sched_explored(s)};
    if (df_trace_set_policy(out, s->pops->info.name) < 0 ||
        (s->pops->snapshot && s->pops->snapshot(s->policy, &ctx, out) < 0)) {
        df_trace_free(out);
        return -ENOMEM;
    }
    return 0;
}

void df_trace_free(DfTrace *t)
{
    free(t->events);
    free(t->inputs);
    free(t->waits);
    free(t->trcost);
    free(t->levels);
    if (t->module_names)
        for (int m = 0; m < t->n_modules; m++)
            free(t->module_names[m]);
    free(t->module_names);
    df_trace_policy_free(t->policy);
    memset(t, 0, sizeof(*t));
}

void df_trace_fini(DfSched *s)
{
    if (s->workers)
        for (int i = 0; i < s->n_workers; i++)
            buf_free(atomic_exchange(&s->workers[i].trace, NULL));
    /* The workers are joined: nobody can be writing a retired buffer. */
    Retired *r = s->trace_retired;
    s->trace_retired = NULL;
    while (r) {
        Retired *next = r->next;
        buf_free(r->buf);
        free(r);
        r = next;
    }
}
