/* The workers' loop: take a node from the policy and run it (df_run_node),
 * else spin with a pause instruction, then park on a futex (poll mode never
 * parks); the hand-off of ready nodes to the policy with the wake-up of a
 * parked worker; and a task's wait, which helps meanwhile (df_sched_wait).
 *
 * Parking is a Dekker (store-buffering) handshake in two phases, as in
 * Taskflow's notifier: a worker announces itself (its bit in the parked
 * summary and every ancestor's up to the root), fences, re-checks for
 * work (the has-work summary's root: one cache line, ready.c) and only
 * then sleeps; a producer publishes the node, fences, sets its set's
 * summary bit if clear (seq_cst RMWs), then reads the parked summary's
 * root (seq_cst).  That root is the handshake's word.  Where the summary
 * has several words (more than one L3 domain, or more than 64 workers) it
 * changes only when a top-level domain gets its first parked worker or
 * loses its last, not on every park, so the line every producer reads
 * stays shared; below that the root is the one leaf, written on every
 * park as a count would be.  The two seq_cst fences (DF_FENCE_SEQ_CST)
 * are what C11 needs to exclude the outcome where each side misses the
 * other's store; seq_cst RMWs alone do not order the relaxed loads after
 * them on AArch64 or POWER.  The futex word closes the last gap: the worker
 * reads it before announcing and sleeps only if it is unchanged, and every
 * waker bumps it before the futex wake.  In poll mode nobody parks and
 * producers skip the check: no system call anywhere on the path of a task. */
#include "load_internal.h"
#include "sched_internal.h"

#include <sched.h>
#include <stdint.h>

/* initial-exec: a plain %fs-relative load instead of a __tls_get_addr call
 * per access (libdfsched ends up in the dfdec plugin, a shared object that
 * GStreamer dlopens; 8 bytes fit glibc's static TLS surplus). */
static _Thread_local DfWorker *tls_worker __attribute__((tls_model("initial-exec")));

DfWorker *df_current_worker(const DfSched *s)
{
    DfWorker *w = tls_worker;
    return (w && w->sched == s) ? w : NULL;
}

int df_sched_current_worker(const DfSched *s)
{
    DfWorker *w = df_current_worker(s);
    return w ? w->index : -1;
}

uint64_t df_sched_current_node_id(const DfSched *s)
{
    DfWorker *w = df_current_worker(s);
    return w && w->current ? w->current->id : 0;
}

/* ------------------------------------------------------------ parking */

/* Anyone parked: the handshake's load (see the top).  Pairs with the
 * parker's fence after its summary bits are set. */
static bool anyone_parked(DfSched *s)
{
    return df_summary_any(&s->parked, NULL);
}

static void wake_check(DfSched *s, int near);

static bool clear_parked(DfSched *s, int i)
{
    const uint64_t bit = 1ull << s->parked.bit_of[i];
    /* The RMW decides which of several wakers owns the wake-up of i. */
    const uint64_t old = df_summary_clear_bit(&s->parked, i);
    if (!(old & bit))
        return false;
    /* A bit above the leaf that had to be restored (summary.c) was
     * missing for a moment: a producer may have read the root as zero
     * then and woken nobody. */
    if (old == bit && df_summary_clear_up(&s->parked, i))
        wake_check(s, i);
    return true;
}

static void wake_worker(DfSched *s, int i)
{
    DfWorker *target = &s->workers[i];
    /* Pairs with the worker's load of park_word before it announced
     * itself: a worker that has not slept yet finds the word changed and
     * the futex wait returns at once. */
    atomic_fetch_add_explicit(&target->park_word, 1, memory_order_seq_cst);
    df_futex_wake(&target->park_word, 1);
    DfWorker *self = df_current_worker(s);
    if (self)
        DF_WCTR_ADD(self, wakeups_sent, 1);
}

/* Of the bits of word wi, the child whose first worker is nearest to
 * `near` (lowest bit on ties); at a leaf, the nearest worker itself. */
static int nearest_bit(const DfSched *s, int wi, uint64_t bits, int near)
{
    const DfSumWord *w = &s->parked.words[wi];
    int best = -1;
    uint32_t best_cost = UINT32_MAX;
    for (; bits; bits &= bits - 1) {
        const int b = __builtin_ctzll(bits);
        const int32_t kid = s->parked.kids[w->first + b];
        const int rep = w->leaf ? kid : s->parked.words[kid].rep;
        const uint32_t c = near < 0 ? 0 : df_topo_trcost(&s->topo, near, rep);
        if (c < best_cost) {
            best = b;
            best_cost = c;
        }
    }
    return best;
}

/* The parked worker nearest to `near` (least trCost from it), or -1: the
 * parked summary's words from near's leaf up to the first with a parked
 * worker, then down its nearest branch.  At most 64 bits per word and one
 * word per level.  A stale bit (a word that went to zero) is cleared on
 * the way; one that had to be restored means a parker raced the clear
 * (*restored: the caller does a wake check), and the branch is tried
 * again. */
static int nearest_parked(DfSched *s, int near, bool *restored)
{
    DfSummary *ps = &s->parked;
    int wi = near >= 0 ? ps->leaf_of[near] : ps->root;
    uint64_t skip = 0;
    while (wi >= 0) {
        uint64_t bits = df_summary_word(ps, wi) & ~skip;
        int at = wi;
        while (bits) {
            const int b = nearest_bit(s, at, bits, near);
            const int32_t kid = ps->kids[ps->words[at].first + b];
            if (ps->words[at].leaf)
                return kid;
            const uint64_t below = df_summary_word(ps, kid);
            if (!below) {
                if (df_summary_clear_stale(ps, at, b))
                    *restored = true;
                else
                    bits &= ~(1ull << b);
                continue;
            }
            at = kid;
            bits = below;
        }
        skip = 1ull << ps->words[wi].parent_bit;
        wi = ps->words[wi].parent;
    }
    return -1;
}

void df_wake(DfSched *s, int preferred, bool any)
{
    df_wake_near(s, preferred, any, preferred);
}

void df_wake_near(DfSched *s, int preferred, bool any, int near)
{
    if (preferred >= 0 && clear_parked(s, preferred)) {
        wake_worker(s, preferred);
        return;
    }
    if (!any)
        return;
    /* Someone else, nearest to `near` first; a worker another waker took
     * meanwhile is passed over. */
    bool restored = false;
    for (int tries = 0; tries < s->n_workers; tries++) {
        const int i = nearest_parked(s, near, &restored);
        if (i < 0)
            break;
        if (clear_parked(s, i)) {
            wake_worker(s, i);
            break;
        }
    }
    if (restored)
        wake_check(s, near);
}

/* A bit of the parked summary had to be restored above a leaf (a clearer
 * raced a parker, summary.c): if it was the root's, the root missed a
 * parked worker for a moment, and a producer that read it then skipped
 * its wake.  Pairs with that producer's fence after its push: the
 * restoring RMW (seq_cst) comes after the producer's load of the root in
 * the total order, so after this fence the push is seen, and a parked
 * worker is woken for it.  A restore below the root hid nobody from
 * producers; the check is then merely spare.  Rare: it needs a parker and
 * a clearer in one word at once. */
static void wake_check(DfSched *s, int near)
{
    DF_FENCE_SEQ_CST();
    if (s->pops->has_work(s->policy, near, NULL))
        df_wake_near(s, -1, true, near);
}

static bool should_stop_parking(DfSched *s, DfWorker *w, DfGroup *g, unsigned *lines)
{
    return atomic_load_explicit(&s->stop, memory_order_relaxed) || (g && df_group_done(g)) ||
           s->pops->has_work(s->policy, w->index, lines) || df_background_may_run(s, g);
}

static void park(DfSched *s, DfWorker *w, DfGroup *g)
{
    const int i = w->index;
    /* Read before announcing; pairs with the RMW in wake_worker. */
    uint32_t seq = atomic_load_explicit(&w->park_word, memory_order_seq_cst);
    if (g) {
        atomic_store_explicit(&w->waiting_on, g, memory_order_seq_cst);
        df_group_parking(g, i);
        /* Pairs with the load of n_waiters in df_group_node_finished. */
        atomic_fetch_add_explicit(&g->n_waiters, 1, memory_order_seq_cst);
    }
    /* Phase one: the own bit and every ancestor's, up to the root that
     * producers read (seq_cst).  Not only while words go non-zero: another
     * parker that made the leaf non-zero may not have reached the root
     * yet, and a producer would see nobody parked while this worker
     * sleeps. */
    df_summary_set_path(&s->parked, i);
    /* Phase two: the announcement above must be visible before the
     * re-check below reads the has-work summary and the group.  Pairs
     * with the fence after a push (df_ready_sets_mark, or make_ready's for
     * shared-set policies and background pushes: the background count is
     * re-checked here) and in df_sched_requeued, each before the
     * parked summary's root is read, and in df_group_node_finished (after
     * pending reached 0, before reading n_waiters). */
    DF_FENCE_SEQ_CST();
    if (should_stop_parking(s, w, g, NULL)) {
        clear_parked(s, i);
    } else {
        DF_WCTR_ADD(w, parks, 1);
        df_worker_set_state(w, DF_WS_PARKED);
        df_futex_wait(&w->park_word, seq);
        df_worker_set_state(w, g && w->current ? DF_WS_WAITING : DF_WS_IDLE);
        clear_parked(s, i); /* spurious wake-ups leave the bit set */
    }
    if (g) {
        atomic_fetch_sub_explicit(&g->n_waiters, 1, memory_order_seq_cst);
        atomic_store_explicit(&w->waiting_on, NULL, memory_order_relaxed);
    }
}

/* Nothing to run: spin for poll_us, then park.  Returns when there may be
 * work, when `g` (if any) is done, or on stop.  Inside a task's wait
 * (`nested`) the worker counts as busy for thieves (DF_WS_WAITING): it
 * will not run the nodes of its set that its wait does not accept, so
 * they are fair game, and a parked worker is woken to take them. */
void df_worker_idle(DfWorker *w, DfGroup *g, bool nested)
{
    DfSched *s = w->sched;
    df_worker_set_state(w, nested ? DF_WS_WAITING : DF_WS_IDLE);
    if (!nested && s->pops->idle)
        s->pops->idle(s->policy, w->index);
    if (nested && s->cfg.poll_us >= 0 &&
        (!df_ready_own_empty(s, w->index) || df_background_may_run(s, NULL))) {
        DF_FENCE_SEQ_CST(); /* as in make_ready */
        if (anyone_parked(s))
            df_wake_near(s, -1, true, w->index);
    }
    const int64_t start = df_now_ns();
    const int64_t limit = (int64_t)s->cfg.poll_us * 1000;
    unsigned round = 0;
    for (;;) {
        for (int k = 0; k < 32; k++)
            df_cpu_relax();
        atomic_store_explicit(&s->state[w->index].beat, df_now_ns(), memory_order_relaxed);
        unsigned lines = 0;
        const bool stop = should_stop_parking(s, w, g, &lines);
        DF_WCTR_ADD(w, idle_rounds, 1);
        DF_WCTR_ADD(w, idle_lines, lines);
        if (stop)
            break;
        round++;
        if (s->topo.oversubscribed && (round & 7) == 0)
            sched_yield(); /* more workers than cores: let the busy ones run */
        if (s->cfg.poll_us >= 0 && (round & 15) == 0 && df_now_ns() - start >= limit) {
            park(s, w, g);
            break;
        }
    }
    DF_WCTR_ADD(w, idle_ns, (uint64_t)(df_now_ns() - start));
}

bool df_ready_own_empty(DfSched *s, int w)
{
    return !s->pops->queued(s->policy, w);
}

/* Nodes went back into worker w's inbox (policy callback): w may be
 * parked, or busy in a task that will not take them soon. */
void df_sched_requeued(void *ctx, int w)
{
    DfSched *s = ctx;
    if (s->cfg.poll_us < 0)
        return;
    /* Pairs with the fence in park, like the one in make_ready (the
     * caller's nodes, or its restored summary bit, are visible before
     * the parked summary's root is read). */
    DF_FENCE_SEQ_CST();
    if (!anyone_parked(s))
        return;
    const bool spinning = atomic_load_explicit(&s->state[w].v, memory_order_relaxed) == DF_WS_IDLE;
    df_wake_near(s, w, !spinning, w);
}

static void wake_for(DfSched *s, DfWorker *self, DfPlacement p, bool running);

static void make_ready(DfSched *s, DfWorker *self, DfNode *n, bool running)
{
    if (atomic_load_explicit(&s->tracing, memory_order_relaxed) && !(n->flags & DF_NF_SHORT))
        n->ready_ns = df_now_ns();
    DfPlacement p;
    if (DF_UNLIKELY(df_node_background(n)) && df_background_push(s, n)) {
        /* On no worker's set: any parked worker may take it.  wake_for's
         * fence orders the queue's count (stored under its lock) before
         * the parked summary's root; park re-reads the count after its
         * fence (should_stop_parking). */
        p = (DfPlacement){.worker = -1};
    } else {
        p = s->pops->push(s->policy, self ? self->index : -1, n);
    }
    if (!self)
        atomic_fetch_add_explicit(&s->external_submits, 1, memory_order_relaxed);
    wake_for(s, self, p, running);
}

void df_make_ready_placed(DfSched *s, DfWorker *self, DfPlacement p)
{
    wake_for(s, self, p, false);
}

/* A node was pushed and placed at p: wake a parked worker if it needs
 * one. */
static void wake_for(DfSched *s, DfWorker *self, DfPlacement p, bool running)
{
    if (s->cfg.poll_us < 0)
        return; /* poll mode: every idle worker is spinning */
    if (self && s->n_workers == 1)
        return; /* the only worker is this one, and it is not parked */
    /* Phase two of the producer's side: the push above (and its bit in the
     * has-work summary) must be visible before the parked summary's root
     * is read; pairs
     * with the fence in park.  Stealing policies fenced after the push
     * already (df_ready_sets_mark) and then set the bit with seq_cst RMWs,
     * which the seq_cst load below stays behind. */
    if (!p.fenced)
        DF_FENCE_SEQ_CST();
    if (!anyone_parked(s))
        return;
    if (p.worker < 0) {
        df_wake_near(s, -1, true, self ? self->index : -1);
    } else if (!self || p.worker != self->index) {
        /* Placed on another worker: wake it if it is parked.  If it is not
         * spinning idle either it is running a task, and the node would
         * wait for that task to end: wake the parked worker nearest to it,
         * which may steal the node. */
        const bool spinning =
            atomic_load_explicit(&s->state[p.worker].v, memory_order_relaxed) == DF_WS_IDLE;
        df_wake_near(s, p.worker, !spinning || p.backlog, p.worker);
    } else if (p.backlog || running) {
        df_wake_near(s, -1, true, self->index);
    }
}

void df_make_ready(DfSched *s, DfWorker *self, DfNode *n)
{
    make_ready(s, self, n, false);
}

void df_make_ready_running(DfSched *s, DfWorker *self, DfNode *n)
{
    make_ready(s, self, n, self != NULL);
}

void df_node_requeue(DfSched *s, DfWorker *self, DfNode *n)
{
    /* Taken, not run: how it was taken no longer describes it. */
    n->flags &= (uint8_t) ~(DF_NF_STOLEN | DF_NF_EXPLORED);
    make_ready(s, self, n, false);
}

/* ------------------------------------------------------------ running */

/* Worker w now runs the body of n, a node whose start released an ordered
 * job (NULL: none such), for thieves deciding whether that job in its set
 * waits for this body (df_env_worker_running).  Only such bodies are
 * published: nobody asks about the others.  Relaxed: a hint; a store on
 * the worker's own state line. */
static inline void publish_running(DfWorker *w, const DfNode *n)
{
    atomic_store_explicit(&w->sched->state[w->index].running,
                          n && (n->flags & DF_NF_RELEASER) ? n->id : 0, memory_order_relaxed);
}

/* One node: body, accounting, completion; returns the successor to run
 * next (continuation) or NULL. */
static DfNode *run_one(DfWorker *w, DfNode *n, bool keep, const DfGroup *waited)
{
    DfSched *s = w->sched;
    DfTask t = {.sched = s, .node = n, .worker = w->index};
    /* Completions held back for another group are counted before this
     * body runs (it may run long); see df_worker_node_done. */
    if (n->group != w->done_group)
        df_worker_flush_done(w);

    DfPInputCursor cur = df_pnode_inputs(n);
    for (DfPInput in; df_pnode_input_next(&cur, &in);) {
        if (in.worker < 0 || in.bytes == 0)
            continue;
        const DfLevel l = df_topo_level(&s->topo, in.worker, w->index);
        DF_WCTR_ADD(w, bytes_level[l], in.bytes);
        if (l == DF_LEVEL_SELF)
            DF_WCTR_ADD(w, bytes_local, in.bytes);
    }

    const bool skip =
        (n->flags & DF_NF_DISCARD) ||
        (n->group && atomic_load_explicit(&n->group->cancelled, memory_order_relaxed));
    const uint64_t seq0 = ++w->runs_seq;
    /* Every node when tracing; for a learning policy one in four, picked by
     * a hash of the id so that a periodic graph is not sampled in step. */
    const bool timed = atomic_load_explicit(&s->tracing, memory_order_relaxed) ||
                       (s->policy_timing && ((n->id * 0x9e3779b97f4a7c15ull) >> 62) == 0);
    /* Tracing also takes the thread's CPU time (a system call each, so
     * outside the timed span): it tells work from blocking inside a body. */
    const bool traced = timed && atomic_load_explicit(&s->tracing, memory_order_relaxed);
    const int64_t c0 = traced ? df_thread_cpu_ns() : 0;
    const int64_t t0 = timed ? df_now_ns() : 0;
    DfNode *outer = w->current;
    w->current = n;
    if (n->flags & DF_NF_RELEASER)
        publish_running(w, n);
    DfLoadRun lr;
    df_load_run_begin(w, n, &lr);
    if (DF_LIKELY(!skip)) {
        n->fn(&t, n->arg);
    } else {
        n->flags |= DF_NF_SKIPPED;
        DF_WCTR_ADD(w, tasks_skipped, 1);
        if (n->cancel)
            n->cancel(&t, n->arg);
    }
    df_load_run_end(w, n, &lr);
    w->current = outer;
    if (n->flags & DF_NF_RELEASER)
        publish_running(w, outer);
    DF_WCTR_ADD(w, tasks_run, 1);
    if (n->flags & DF_NF_STOLEN)
        DF_WCTR_ADD(w, tasks_stolen, 1);
    if (n->flags & DF_NF_EXPLORED)
        DF_WCTR_ADD(w, tasks_explored, 1);
    if (timed) {
        const int64_t t1 = df_now_ns();
        DF_WCTR_ADD(w, busy_ns, (uint64_t)(t1 - t0));
        /* A body that helped while waiting ran other nodes inside its own
         * time: that is no measure of the body, so it is not learnt from. */
        if (s->pops->done && !skip && w->runs_seq == seq0)
            s->pops->done(s->policy, w->index, n, t1 - t0);
        if (traced) {
            const int64_t c1 = df_thread_cpu_ns();
            df_trace_record(w, n, t0, t1, c0 > 0 && c1 >= c0 ? c1 - c0 : 0);
        }
    }
    return df_node_complete(w, n, keep, waited);
}

/* The next node for worker w that filter f accepts (NULL: any): from the
 * policy's sets, else from the background queue. */
static DfNode *next_node(DfSched *s, DfWorker *w, const DfWaitFilter *f)
{
    DfNode *n = s->pops->pop(s->policy, w->index, f);
    return n ? n : df_background_take(s, f);
}

void df_run_node(DfWorker *w, DfNode *n, const DfGroup *waited)
{
    /* A loop, not recursion: the stack does not grow with a chain. */
    for (unsigned k = 1; n; k++)
        n = run_one(w, n, k < DF_CONTINUE_MAX, waited);
}

void *df_worker_main(void *arg)
{
    DfWorker *w = arg;
    DfSched *s = w->sched;
    tls_worker = w;
    w->stack_base = (uintptr_t)__builtin_frame_address(0);
    w->stack_size = s->cfg.stack_size ? s->cfg.stack_size : 8u << 20;
    atomic_fetch_add_explicit(&s->started, 1, memory_order_release);
    while (!atomic_load_explicit(&s->stop, memory_order_acquire)) {
        DfNode *n = next_node(s, w, NULL);
        if (n) {
            df_worker_set_state(w, DF_WS_RUNNING);
            df_run_node(w, n, NULL);
        } else {
            df_worker_flush_done(w);
            df_worker_idle(w, NULL, false);
        }
    }
    df_worker_flush_done(w);
    tls_worker = NULL;
    return NULL;
}

/* Stop every worker and join it (sched_destroy). */
void df_workers_stop(DfSched *s)
{
    atomic_store_explicit(&s->stop, true, memory_order_seq_cst);
    for (int i = 0; i < s->n_workers; i++) {
        if (s->parked.words) /* NULL when creation failed early */
            clear_parked(s, i);
        atomic_fetch_add_explicit(&s->workers[i].park_word, 1, memory_order_seq_cst);
        df_futex_wake(&s->workers[i].park_word, 1);
    }
    for (int i = 0; i < s->n_workers; i++)
        if (s->workers[i].thread)
            pthread_join(s->workers[i].thread, NULL);
}

/* ------------------------------------------------------------ waiting */

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
        df_group_wait_outside_until(g, INT64_MAX);
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
    const DfNode *first_moved = NULL;
    unsigned moved = 0;
    while (!df_group_done_by(g, w)) {
        DfNode *n = next_node(s, w, f);
        if (!n && f && (s->pops->queued(s->policy, w->index) || df_background_may_run(s, NULL))) {
            const int64_t now = df_now_ns();
            if (!fruitless_since || !df_others_waiting(s->state, s->n_workers, w->index))
                fruitless_since = now;
            if (s->n_workers == 1 || now - fruitless_since >= DF_WAIT_PATIENCE_NS) {
                n = next_node(s, w, NULL);
                if (n && n != first_moved && moved < DF_WAIT_ROTATE_MAX) {
                    if (!first_moved)
                        first_moved = n;
                    moved++;
                    df_node_requeue(s, w, n);
                    continue;
                }
                if (n)
                    DF_WCTR_ADD(w, wait_fallbacks, 1);
            }
        }
        if (n) {
            fruitless_since = 0;
            first_moved = NULL;
            moved = 0;
            df_worker_set_state(w, DF_WS_RUNNING);
            df_run_node(w, n, g);
        } else {
            df_worker_flush_done(w);
            df_worker_idle(w, g, f != NULL);
        }
    }
    df_worker_set_state(w, DF_WS_RUNNING); /* back in the waiting body */
    w->wait_depth--;
    w->current = waiter;
    if (traced)
        df_trace_record_wait(w, g, t0, df_now_ns());
}

bool df_sched_wait_until(DfSched *s, DfGroup *g, int64_t until_ns)
{
    if (!g)
        return true;
    df_group_seal(g);
    if (df_group_done(g))
        return true;
    /* A worker helps instead of sleeping, and a node it runs cannot be cut
     * short: it waits the whole way, as df_sched_wait(). */
    if (df_current_worker(s)) {
        df_sched_wait(s, g);
        return true;
    }
    return df_group_wait_outside_until(g, until_ns);
}
