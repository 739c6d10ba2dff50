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
    if (atomic_fetch_add_explicit(&g->pending, 1, memory_order_relaxed) == 0)
        atomic_fetch_add_explicit(&g->refs, 1, memory_order_relaxed);
}

void df_group_node_finished(DfGroup *g)
{
    /* Release for the waiters' acquire loads of pending (the group's
     * results are visible to whoever sees it done). */
    if (atomic_fetch_sub_explicit(&g->pending, 1, memory_order_seq_cst) != 1)
        return;
    /* Phase two of the completer's side: pending = 0 must be visible
     * before n_waiters is read; pairs with the fence in park and in
     * wait_outside (after n_waiters++, before re-reading pending). */
    DF_FENCE_SEQ_CST();
    if (atomic_load_explicit(&g->n_waiters, memory_order_relaxed) > 0)
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
        /* Phase one: announce; pairs with the load of n_waiters in
         * df_group_node_finished. */
        atomic_fetch_add_explicit(&g->n_waiters, 1, memory_order_seq_cst);
        /* Pairs with the RMW of done_seq in df_wake_group_waiters: a wake
         * after this load changes the word and the futex wait returns. */
        uint32_t seq = atomic_load_explicit(&g->done_seq, memory_order_seq_cst);
        /* Phase two: pairs with the fence in df_group_node_finished. */
        DF_FENCE_SEQ_CST();
        if (!df_group_done(g))
            df_futex_wait(&g->done_seq, seq);
        atomic_fetch_sub_explicit(&g->n_waiters, 1, memory_order_seq_cst);
    }
}

/* A waiter whose filter refuses the nodes of its own set relies on other
 * workers to take them (its group's nodes may be queued behind them).
 * With one worker, or when every other worker is inside a wait of its own
 * for this long, nobody will: it runs the most urgent of them itself. */
#define WAIT_PATIENCE_NS 200000

static bool others_waiting(const DfSched *s, int self)
{
    for (int i = 0; i < s->n_workers; i++)
        if (i != self &&
            atomic_load_explicit(&s->state[i].v, memory_order_relaxed) != DF_WS_WAITING)
            return false;
    return true;
}

/* Past this much of its stack (or nesting) a worker's waits run only their
 * own group's nodes, save the fallback above: nesting then follows the
 * program's own, not the backlog's. */
#define WAIT_STACK_SHARE 0.5
#define WAIT_MAX_DEPTH   256

static bool stack_low(const DfWorker *w)
{
    const uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    return w->wait_depth >= WAIT_MAX_DEPTH ||
           (w->stack_base > here &&
            (double)(w->stack_base - here) > WAIT_STACK_SHARE * (double)w->stack_size);
}

void df_sched_wait(DfSched *s, DfGroup *g)
{
    if (!g)
        return;
    /* Whoever waits has created every node it will add from outside. */
    df_group_seal(g);
    DfWorker *w = df_current_worker(s);
    if (!w) {
        wait_outside(g);
        return;
    }
    /* Help while waiting, but only with the nodes of the group, and nodes
     * due before the waiting task itself: anything else could hold the
     * waiter long after its group is done (oneTBB's isolation, with EDF's
     * exception). */
    const bool traced = atomic_load_explicit(&s->tracing, memory_order_relaxed) && w->current;
    const int64_t t0 = traced ? df_now_ns() : 0;
    DfNode *waiter = w->current;
    w->wait_depth++;
    if (w->wait_depth > atomic_load_explicit(&w->ctr.max_wait_depth, memory_order_relaxed))
        atomic_store_explicit(&w->ctr.max_wait_depth, w->wait_depth, memory_order_relaxed);
    const bool low = stack_low(w);
    const DfWaitFilter filter = {
        .group = g,
        .deadline = low      ? INT64_MIN
                    : waiter ? waiter->deadline
                             : DF_NO_DEADLINE,
    };
    /* A waiting task without a deadline accepts anything: nothing it runs
     * can make a task late that nobody expects at any time, and helping
     * keeps the worker busy and the data where it is (throughput work). */
    const bool timed = waiter && waiter->deadline != DF_NO_DEADLINE;
    const DfWaitFilter *f = timed || low ? &filter : NULL;
    int64_t fruitless_since = 0;
    while (!df_group_done(g)) {
        DfNode *n = s->pops->pop(s->policy, w->index, f);
        if (!n && f && s->pops->queued(s->policy, w->index)) {
            const int64_t now = df_now_ns();
            if (!fruitless_since || !others_waiting(s, w->index))
                fruitless_since = now;
            if (s->n_workers == 1 || now - fruitless_since >= WAIT_PATIENCE_NS) {
                n = s->pops->pop(s->policy, w->index, NULL);
                if (n)
                    DF_WCTR_ADD(w, wait_fallbacks, 1);
            }
        }
        if (n) {
            fruitless_since = 0;
            df_worker_set_state(w, DF_WS_RUNNING);
            df_run_node(w, n);
        } else {
            df_worker_idle(w, g, f != NULL);
        }
    }
    df_worker_set_state(w, DF_WS_RUNNING); /* back in the waiting body */
    w->wait_depth--;
    w->current = waiter;
    if (traced)
        df_trace_record_wait(w, g, t0, df_now_ns());
}
