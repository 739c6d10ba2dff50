/* Groups: the nodes of one frame (or one job batch), to wait for or cancel
 * together.  `pending` counts unfinished nodes; `refs` keeps the memory
 * while the handle or any node still points at it, so that a waiter may
 * release the group the moment it sees pending reach zero. */
#include "internal.h"

#include <limits.h>

DfGroup *df_group_new(DfSched *s, int64_t deadline)
{
    DfCache *c = df_cache_get(s);
    DfGroup *g = c ? df_slab_alloc(&c->groups) : NULL;
    if (!g)
        return NULL;
    atomic_init(&g->pending, 0);
    atomic_init(&g->refs, 1);
    atomic_init(&g->done_seq, 0);
    atomic_init(&g->n_waiters, 0);
    atomic_init(&g->cancelled, false);
    g->deadline = deadline ? deadline : DF_NO_DEADLINE;
    g->tag = -1;
    g->id = atomic_fetch_add_explicit(&s->next_group_id, 1, memory_order_relaxed);
    g->sched = s;
    return g;
}

static void group_unref(DfGroup *g)
{
    if (atomic_fetch_sub_explicit(&g->refs, 1, memory_order_acq_rel) == 1)
        df_slab_free(g, df_cache_get(g->sched));
}

void df_group_release(DfGroup *g)
{
    if (g)
        group_unref(g);
}

/* The unfinished nodes together hold one reference, taken when pending
 * goes 0 -> 1 and dropped when it goes back to 0: one atomic per node on
 * the group instead of two. */
void df_group_node_added(DfGroup *g)
{
    if (atomic_fetch_add_explicit(&g->pending, 1, memory_order_relaxed) == 0)
        atomic_fetch_add_explicit(&g->refs, 1, memory_order_relaxed);
}

void df_group_node_finished(DfGroup *g)
{
    if (atomic_fetch_sub_explicit(&g->pending, 1, memory_order_seq_cst) != 1)
        return;
    if (atomic_load_explicit(&g->n_waiters, memory_order_seq_cst) > 0)
        df_wake_group_waiters(g);
    group_unref(g);
}

bool df_group_done(const DfGroup *g)
{
    return atomic_load_explicit(&((DfGroup *)g)->pending, memory_order_acquire) == 0;
}

void df_group_cancel(DfGroup *g)
{
    atomic_store_explicit(&g->cancelled, true, memory_order_relaxed);
}

bool df_group_cancelled(const DfGroup *g)
{
    return atomic_load_explicit(&((DfGroup *)g)->cancelled, memory_order_relaxed);
}

int64_t df_group_deadline(const DfGroup *g)
{
    return g->deadline;
}

void df_group_set_tag(DfGroup *g, int64_t tag)
{
    g->tag = tag;
}

int64_t df_group_tag(const DfGroup *g)
{
    return g->tag;
}

void df_wake_group_waiters(DfGroup *g)
{
    DfSched *s = g->sched;
    for (int i = 0; i < s->n_workers; i++)
        if (atomic_load_explicit(&s->workers[i].waiting_on, memory_order_seq_cst) == g)
            df_wake(s, i, false);
    atomic_fetch_add_explicit(&g->done_seq, 1, memory_order_seq_cst);
    df_futex_wake(&g->done_seq, INT_MAX);
}

/* A thread that is not a worker cannot help: it sleeps until done. */
static void wait_outside(DfGroup *g)
{
    while (!df_group_done(g)) {
        atomic_fetch_add_explicit(&g->n_waiters, 1, memory_order_seq_cst);
        uint32_t seq = atomic_load_explicit(&g->done_seq, memory_order_seq_cst);
        if (!df_group_done(g))
            df_futex_wait(&g->done_seq, seq);
        atomic_fetch_sub_explicit(&g->n_waiters, 1, memory_order_seq_cst);
    }
}

void df_worker_idle(DfWorker *w, DfGroup *g);

void df_sched_wait(DfSched *s, DfGroup *g)
{
    if (!g)
        return;
    DfWorker *w = df_current_worker(s);
    if (!w) {
        wait_outside(g);
        return;
    }
    /* Help while waiting: run whatever is ready until the group is done. */
    const bool traced = atomic_load_explicit(&s->tracing, memory_order_relaxed) && w->current;
    const int64_t t0 = traced ? df_now_ns() : 0;
    DfNode *waiter = w->current;
    w->wait_depth++;
    if (w->wait_depth > atomic_load_explicit(&w->ctr.max_wait_depth, memory_order_relaxed))
        atomic_store_explicit(&w->ctr.max_wait_depth, w->wait_depth, memory_order_relaxed);
    while (!df_group_done(g)) {
        DfNode *n = s->pops->pop(s->policy, w->index);
        if (n) {
            df_worker_set_state(w, DF_WS_RUNNING);
            df_run_node(w, n);
        } else {
            df_worker_idle(w, g);
        }
    }
    df_worker_set_state(w, DF_WS_RUNNING); /* back in the waiting body */
    w->wait_depth--;
    w->current = waiter;
    if (traced)
        df_trace_record_wait(w, g, t0, df_now_ns());
}
