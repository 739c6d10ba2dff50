/* Groups: the nodes of one frame (or one job batch), to wait for or cancel
 * together.  `pending` counts unfinished nodes plus one for the group
 * being open: a group whose nodes are created one by one and finish as
 * fast would otherwise pass through zero, and a waiter on another thread
 * would return before the last node was even created.  The open count is
 * dropped once, by df_group_seal(), the first df_sched_wait() or the
 * release of the handle.  `refs` keeps the memory while the handle or any
 * node still points at it, so that a waiter may release the group the
 * moment it sees pending reach zero. */
#include "sched_internal.h"

#include <limits.h>

DfGroup *df_group_new(DfSched *s, int64_t deadline)
{
    DfCache *c = df_cache_get(s);
    DfGroup *g = c ? df_slab_alloc(&c->groups) : NULL;
    if (!g)
        return NULL;
    atomic_init(&g->pending, 1); /* open until sealed */
    atomic_init(&g->sealed, false);
    atomic_init(&g->refs, 2); /* the handle, and the unfinished count */
    atomic_init(&g->done_seq, 0);
    atomic_init(&g->n_waiters, 0);
    atomic_init(&g->parked_worker, 0);
    atomic_init(&g->cancelled, false);
    atomic_init(&g->n_background, 0);
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

void df_group_seal(DfGroup *g)
{
    if (g && !atomic_exchange_explicit(&g->sealed, true, memory_order_relaxed))
        df_group_node_finished(g);
}

void df_group_release(DfGroup *g)
{
    if (!g)
        return;
    df_group_seal(g);
    group_unref(g);
}

/* The unfinished nodes and the open count together hold one reference,
 * dropped when pending reaches 0: one atomic per node on the group instead
 * of two.  Adding a node to a group that is already done (pending 0 -> 1)
 * takes the reference again. */
void df_group_node_added(DfGroup *g)
{
    /* Relaxed: the node is not yet visible to anyone who could finish it
     * (its submit or a later make-ready publishes it with release). */
    if (atomic_fetch_add_explicit(&g->pending, 1, memory_order_relaxed) == 0)
        atomic_fetch_add_explicit(&g->refs, 1, memory_order_relaxed);
}

void df_group_node_finished(DfGroup *g)
{
    df_group_nodes_finished(g, 1);
}

void df_group_nodes_finished(DfGroup *g, int64_t k)
{
    /* One RMW.  Release, for the waiters' acquire loads of pending in
     * df_group_done (the bodies of the k nodes, all before it in this
     * thread, are visible to whoever sees the group done); seq_cst only
     * as the store side of the handshake below. */
    if (atomic_fetch_sub_explicit(&g->pending, k, memory_order_seq_cst) != k)
        return;
    /* Phase two of the completer's side: pending = 0 must be visible
     * before n_waiters is read; pairs with the fence in park and in
     * df_group_wait_outside (after n_waiters++, before re-reading pending). */
    DF_FENCE_SEQ_CST();
    if (atomic_load_explicit(&g->n_waiters, memory_order_relaxed) > 0)
        df_wake_group_waiters(g);
    group_unref(g);
}

bool df_group_done(const DfGroup *g)
{
    return atomic_load_explicit(&((DfGroup *)g)->pending, memory_order_acquire) == 0;
}

/* Completions counted late.  A worker that finishes a node of g does not
 * decrement g->pending at once: it counts it in w->done_count and
 * decrements once for a run of nodes of g (df_worker_flush_done).  What
 * keeps a waiter from waiting longer than before: pending only ever
 * exceeds the number of unfinished nodes by the counts held back, and a
 * worker holds a count back only while it either runs another node of g
 * (so g is not done anyway) or is between two nodes: it flushes before it
 * runs a node of another group, before it goes idle, when it stops, and
 * a waiting worker compares pending with its own held count
 * (df_group_done_by).  The empty case at 1 worker: 1 RMW per node on the
 * group (the add) instead of 2; at 2 workers, no line ping-pong per
 * completion. */
void df_worker_flush_done(DfWorker *w)
{
    DfGroup *g = w->done_group;
    if (!g)
        return;
    const int64_t k = w->done_count;
    w->done_group = NULL;
    w->done_count = 0;
    df_group_nodes_finished(g, k);
}

void df_worker_node_done(DfWorker *w, DfGroup *g)
{
    if (w->done_group != g) {
        df_worker_flush_done(w);
        w->done_group = g;
    }
    w->done_count++;
}

bool df_group_done_by(const DfGroup *g, DfWorker *w)
{
    const int64_t held = w->done_group == g ? w->done_count : 0;
    /* Acquire: as in df_group_done.  Equal: every other node finished
     * and was counted, so the group is done once w counts its own. */
    if (atomic_load_explicit(&((DfGroup *)g)->pending, memory_order_acquire) != held)
        return false;
    if (held)
        df_worker_flush_done(w);
    return true;
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

void df_group_parking(DfGroup *g, int w)
{
    /* seq_cst, before the parker's fence in park.  Pairs with the fence
     * in df_group_nodes_finished, as waiting_on does: if the finisher's
     * fence comes later in the total order it sees this word, else the
     * parker's re-check sees the group done and it does not sleep. */
    int32_t seen = 0;
    if (!atomic_compare_exchange_strong_explicit(&g->parked_worker, &seen, w + 1,
                                                 memory_order_seq_cst, memory_order_seq_cst) &&
        seen != w + 1 && seen != -1)
        atomic_store_explicit(&g->parked_worker, -1, memory_order_seq_cst);
}

/* A group is nearly always awaited by one worker at most (a decode task
 * waiting for its slice jobs): wake that one without looking at the
 * others, which at many workers would cost a line per worker for every
 * finished group somebody waited on. */
void df_wake_group_waiters(DfGroup *g)
{
    DfSched *s = g->sched;
    const int32_t pw = atomic_load_explicit(&g->parked_worker, memory_order_seq_cst);
    const int from = pw > 0 ? pw - 1 : 0;
    const int to = pw > 0 ? pw : pw < 0 ? s->n_workers : 0;
    for (int i = from; i < to; i++)
        if (atomic_load_explicit(&s->workers[i].waiting_on, memory_order_seq_cst) == g)
            df_wake(s, i, false);
    atomic_fetch_add_explicit(&g->done_seq, 1, memory_order_seq_cst);
    df_futex_wake(&g->done_seq, INT_MAX);
}

/* A thread that is not a worker cannot help: it sleeps until done, or
 * until `until_ns` (INT64_MAX: no limit).  True when done. */
bool df_group_wait_outside_until(DfGroup *g, int64_t until_ns)
{
    while (!df_group_done(g)) {
        if (until_ns != INT64_MAX && df_now_ns() >= until_ns)
            return false;
        /* Phase one: announce; pairs with the load of n_waiters in
         * df_group_node_finished. */
        atomic_fetch_add_explicit(&g->n_waiters, 1, memory_order_seq_cst);
        /* Pairs with the RMW of done_seq in df_wake_group_waiters: a wake
         * after this load changes the word and the futex wait returns. */
        uint32_t seq = atomic_load_explicit(&g->done_seq, memory_order_seq_cst);
        /* Phase two: pairs with the fence in df_group_node_finished. */
        DF_FENCE_SEQ_CST();
        if (!df_group_done(g))
            df_futex_wait_until(&g->done_seq, seq, until_ns);
        atomic_fetch_sub_explicit(&g->n_waiters, 1, memory_order_seq_cst);
    }
    return true;
}
