/* Nodes of the dataflow task graph: creation, dependencies, completion.
 *
 * A node's successor list is a lock-free stack of edges.  Completion swaps
 * it for a CLOSED sentinel, so an edge added concurrently either lands in
 * the list (and is released by the completion) or sees CLOSED and counts as
 * already satisfied — the only synchronisation between creating the graph
 * and running it.  The producer's worker id is written into the consumer's
 * input slot at that moment (the patent's "thread id recorded on the node").
 *
 * What a node costs in atomic read-modify-writes (RMW) and seq_cst fences,
 * step by step, under cost-local (the partner of each order is named
 * where it is used; docs/scheduler.md has the table):
 *   create (node_alloc)   slab: 0 (the owner's list; a remote list is taken
 *                         with one exchange per refill); id: 0 (a range of
 *                         ID_BLOCK per cache); group: 1 RMW
 *   input edge (depend)   pred's successor list: 1 CAS (counted by the
 *                         creator, no RMW on pending)
 *   submit / unhold       pending -(open - counted) / -1: 1 RMW
 *   make-ready            push into the own set: 0 (release store of
 *                         bottom), another's inbox: 1 CAS; round robin: 0
 *                         on a worker, 1 RMW outside; summary mark: 1
 *                         fence (+ RMWs up the summary when the bit was
 *                         clear; none of it in the own set of a one-worker
 *                         scheduler); outside threads: +1 RMW
 *                         (external_submits).  Continuation: none of it
 *   pop                   own FIFO lane: 1 CAS, no fence (lane_take_own;
 *                         0 with one worker: lane_take_solo);
 *                         inbox: 1 exchange per drained batch; a steal:
 *                         1 fence + 1 CAS (+ unmark: 1 RMW + 1 fence when
 *                         the set is found empty); continuation: 0
 *   completion            successor list: 1 exchange; per successor edge
 *                         pending -1: 1 RMW; the node's last reference: 0
 *                         (df_node_unref), an earlier one: 1 RMW
 *   group (group.c)       1 RMW per run of nodes of one group on a worker
 *                         (completions counted late), + 1 fence when the
 *                         group is done
 */
#include "sched_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define ID_BLOCK 4096

DfInput *df_node_input(DfNode *node, unsigned i)
{
    if (i < DF_INLINE_INPUTS)
        return &node->in[i];
    i -= DF_INLINE_INPUTS;
    DfInputBlock *b = node->more;
    while (i >= DF_BLOCK_INPUTS) {
        b = b->next;
        i -= DF_BLOCK_INPUTS;
    }
    return &b->in[i];
}

const DfInput *df_node_input_c(const DfNode *node, unsigned i)
{
    return df_node_input((DfNode *)node, i);
}

/* Per-cache id ranges keep node creation off a shared counter. */
static uint64_t next_id(DfSched *s, DfCache *c)
{
    if (DF_UNLIKELY(c->next_id == c->id_end)) {
        c->next_id = atomic_fetch_add_explicit(&s->next_node_id, ID_BLOCK, memory_order_relaxed);
        c->id_end = c->next_id + ID_BLOCK;
    }
    return c->next_id++;
}

/* The head of a node (what a short node has). */
static void node_init_head(DfNode *n, const DfNodeDesc *d, int64_t deadline, uint64_t id, int refs,
                           int pending)
{
    atomic_init(&n->pending, pending);
    atomic_init(&n->refs, (uint32_t)refs);
    atomic_init(&n->succ, NULL);
    atomic_init(&n->pred_cancelled, 0);
    n->flags = 0;
    n->n_inputs = 0;
    n->module = d->module;
    n->index = d->index;
    n->worker = -1;
    n->placed = -1;
    n->fn = d->fn;
    n->cancel = d->cancel;
    n->arg = d->arg;
    n->group = d->group;
    n->sched = NULL;
    n->deadline = deadline;
    n->id = id;
    n->next = n->prev = NULL;
    n->load = d->load;
}

void df_node_init(DfNode *n, const DfNodeDesc *d, int64_t deadline, uint64_t id, int refs,
                  int pending)
{
    node_init_head(n, d, deadline, id, refs, pending);
    n->in_bytes = 0;
    n->more = NULL;
    n->counted = 0;
    n->ready_ns = 0;
    n->created_ns = 0;
    n->parent_id = 0;
    n->start_pred_id = 0;
    n->out_size = d->out_size;
}

/* `spawned`: a df_spawn task, short unless it is traced (whoever traces
 * reads the tail) or the policy keeps scratch there. */
static DfNode *node_alloc(DfSched *s, DfCache *c, const DfNodeDesc *d, int refs, int pending,
                          bool spawned)
{
    const bool tracing = atomic_load_explicit(&s->tracing, memory_order_relaxed);
    const bool short_node = spawned && !tracing && s->node_size == sizeof(DfNode);
    DfNode *n = df_slab_alloc(short_node ? &c->tasks : &c->nodes);
    if (DF_UNLIKELY(!n))
        return NULL;
    const int64_t deadline =
        d->deadline ? d->deadline : (d->group ? d->group->deadline : DF_NO_DEADLINE);
    if (short_node) {
        node_init_head(n, d, deadline, next_id(s, c), refs, pending);
        n->flags = DF_NF_SHORT;
    } else {
        df_node_init(n, d, deadline, next_id(s, c), refs, pending);
    }
    n->sched = s;
    if (!n->load) {
        /* Work a body creates counts for its stream (load.c). */
        const DfWorker *w = df_current_worker(s);
        n->load = w && w->current ? w->current->load : NULL;
    }
    if (tracing) {
        DfWorker *w = df_current_worker(s);
        n->parent_id = w && w->current ? w->current->id : 0;
        n->created_ns = df_now_ns();
    }
    if (d->group)
        df_group_node_added(d->group);
    return n;
}

DfNode *df_node_new(DfSched *s, const DfNodeDesc *desc)
{
    DfCache *c = df_cache_get(s);
    if (!c)
        return NULL;
    /* One reference for the caller, one held until the node has run. */
    return node_alloc(s, c, desc, 2, DF_PENDING_OPEN, false);
}

bool df_node_input_block_needed(const DfNode *n)
{
    const unsigned i = n->n_inputs;
    return i >= DF_INLINE_INPUTS && (i - DF_INLINE_INPUTS) % DF_BLOCK_INPUTS == 0;
}

DfInput *df_node_input_slot(DfNode *n, DfInputBlock *block, uint64_t bytes)
{
    const unsigned i = n->n_inputs;
    DfInput *in;
    if (i < DF_INLINE_INPUTS) {
        in = &n->in[i];
    } else {
        /* The first block remembers the last: O(1), not a walk. */
        if (block) {
            block->next = NULL;
            if (n->more)
                n->more->last->next = block;
            else
                n->more = block;
            n->more->last = block;
        }
        in = &n->more->last->in[(i - DF_INLINE_INPUTS) % DF_BLOCK_INPUTS];
    }
    n->n_inputs = (uint16_t)(i + 1);
    n->in_bytes += bytes;
    return in;
}

DfInput *df_node_input_append(DfNode *n, DfInputBlock *block, const DfInput *val)
{
    DfInput *in = df_node_input_slot(n, block, val->bytes);
    *in = *val;
    return in;
}

void df_node_free_input_blocks(DfNode *n, void (*free_block)(void *block, const void *ctx),
                               const void *ctx)
{
    DfInputBlock *b = n->more;
    while (b) {
        DfInputBlock *next = b->next;
        free_block(b, ctx);
        b = next;
    }
    n->more = NULL;
}

/* The input's fields come in registers and go into the slot one by one:
 * copied from a DfInput on the stack, its two int32 fields were read back
 * as one 8-byte load, which store-to-load forwarding cannot serve from
 * the two 4-byte stores just made (a stall on every edge). */
static DfInput *new_input(DfNode *n, DfCache *c, uint64_t bytes, uint64_t pred_id, int32_t worker,
                          int32_t module)
{
    DfInputBlock *b = NULL;
    if (df_node_input_block_needed(n) && !(b = df_slab_alloc(&c->blocks)))
        return NULL;
    DfInput *in = df_node_input_slot(n, b, bytes);
    in->bytes = bytes;
    in->pred_id = pred_id;
    in->worker = worker;
    in->module = module;
    return in;
}

int df_node_add_input(DfNode *node, int worker, uint64_t bytes, int module, uint64_t pred_id)
{
    if (node->n_inputs == UINT16_MAX)
        return -E2BIG;
    return new_input(node, df_cache_get(node->sched), bytes, pred_id, worker, module) ? 0 : -ENOMEM;
}

int df_node_depend(DfNode *succ, DfNode *pred, uint64_t bytes)
{
    DfCache *c = df_cache_get(succ->sched);
    if (succ->n_inputs == UINT16_MAX)
        return -E2BIG;
    DfEdge *e = df_slab_alloc(&c->edges);
    if (!e)
        return -ENOMEM;
    DfInput *in = new_input(succ, c, bytes, pred->id, -1, pred->module);
    if (!in) {
        df_slab_free(e, c);
        return -ENOMEM;
    }
    e->succ = succ;
    e->in = in;
    /* Acquire, paired with the acq_rel exchange in df_node_complete: a
     * CLOSED list publishes pred->worker and pred->flags (and
     * pred->placed, stored before whoever ran it took it). */
    DfEdge *head = atomic_load_explicit(&pred->succ, memory_order_acquire);
    /* The edge is counted only by its creator (succ->counted, settled at
     * submit): pending starts at DF_PENDING_OPEN, which no number of
     * completions can bring to 0 before the submit takes the rest off, so
     * publishing the edge needs no RMW on pending; a pred found finished
     * needs no count at all. */
    for (;;) {
        if (head == DF_EDGES_CLOSED) {
            /* pred already finished: the dependency holds; record where. */
            in->worker = df_node_input_worker(pred, in->bytes, pred->worker);
            if (pred->flags & DF_NF_SKIPPED)
                atomic_store_explicit(&succ->pred_cancelled, 1, memory_order_relaxed);
            df_slab_free(e, c);
            return 0;
        }
        e->next = head;
        /* Release, paired with the acq_rel exchange in df_node_complete:
         * the completer that finds the edge sees e and succ's input slot. */
        if (atomic_compare_exchange_weak_explicit(&pred->succ, &head, e, memory_order_release,
                                                  memory_order_acquire)) {
            succ->counted++;
            return 0;
        }
    }
}

void df_node_submit(DfNode *node)
{
    node->flags |= DF_NF_SUBMITTED;
    /* What is left of pending after this is the edges whose producers
     * have not finished, and the holds not yet released.  acq_rel, paired
     * with the completers' and unholders' decrements (df_node_complete,
     * df_node_unhold): whichever RMW brings pending to 0 sees the node as
     * its creator and every producer left it. */
    const int32_t k = DF_PENDING_OPEN - node->counted;
    if (atomic_fetch_sub_explicit(&node->pending, k, memory_order_acq_rel) == k)
        df_make_ready_running(node->sched, df_current_worker(node->sched), node);
}

void df_node_discard(DfNode *node)
{
    node->flags |= DF_NF_DISCARD;
    df_node_submit(node);
}

void df_node_hold(DfNode *node)
{
    /* Before submit only, by the creator: counted like an edge. */
    node->counted++;
}

void df_node_unhold(DfNode *node)
{
    if (atomic_fetch_sub_explicit(&node->pending, 1, memory_order_acq_rel) == 1)
        df_make_ready_running(node->sched, df_current_worker(node->sched), node);
}

static void slab_free_block(void *block, const void *self)
{
    df_slab_free(block, self);
}

void df_node_unref(DfNode *n, const DfCache *self)
{
    /* refs only ever drops (df_node_init sets it), so a holder that reads
     * 1 holds the last reference: nobody can drop another concurrently,
     * and the free needs no RMW.  Acquire, paired with the acq_rel RMW
     * that dropped the other reference (its uses of the node happen
     * before the free). */
    if (atomic_load_explicit(&n->refs, memory_order_acquire) != 1 &&
        atomic_fetch_sub_explicit(&n->refs, 1, memory_order_acq_rel) != 1)
        return;
    df_node_free_input_blocks(n, slab_free_block, self);
    df_slab_free(n, self);
}

void df_node_release(DfNode *node)
{
    df_node_unref(node, df_cache_get(node->sched));
}

uint64_t df_node_id(const DfNode *node)
{
    return node->id;
}

int df_node_worker(const DfNode *node)
{
    if (atomic_load_explicit(&((DfNode *)node)->succ, memory_order_acquire) != DF_EDGES_CLOSED)
        return -1;
    return node->worker;
}

bool df_node_skipped(const DfNode *node)
{
    if (atomic_load_explicit(&((DfNode *)node)->succ, memory_order_acquire) != DF_EDGES_CLOSED)
        return false;
    return node->flags & DF_NF_SKIPPED;
}

void df_spawn(DfSched *s, DfTaskFn fn, void *arg, DfGroup *group)
{
    DfWorker *w = df_current_worker(s);
    DfCache *c = w ? w->cache : df_cache_get(s);
    DfNodeDesc d = {.fn = fn, .arg = arg, .module = -1, .group = group};
    DfNode *n = c ? node_alloc(s, c, &d, 1, 0, true) : NULL;
    if (DF_UNLIKELY(!n)) {
        /* No memory for a node: run it here rather than lose it. */
        DfTask t = {.sched = s, .node = NULL, .worker = df_sched_current_worker(s)};
        fn(&t, arg);
        return;
    }
    n->flags |= DF_NF_SUBMITTED | DF_NF_SPAWNED;
    df_make_ready_running(s, w, n);
}

static void sort_ready(DfNode **v, int n)
{
    /* Earliest deadline first among nodes made ready together; creation
     * order breaks ties.  Batches are small: insertion sort. */
    for (int i = 1; i < n; i++) {
        DfNode *x = v[i];
        int j = i - 1;
        while (j >= 0 && df_node_urgent_before(x, v[j])) {
            v[j + 1] = v[j];
            j--;
        }
        v[j + 1] = x;
    }
}

#define READY_BATCH 32

/* The most urgent successor of a batch, queued or kept (see
 * df_node_complete); returns it when kept. */
static DfNode *ready_or_keep(DfSched *s, DfWorker *w, DfNode *n, const DfGroup *waited)
{
    /* Background work is queued apart, for a worker with nothing else. */
    if ((waited && n->group != waited) || df_node_background(n)) {
        df_make_ready(s, w, n);
        return NULL;
    }
    if (atomic_load_explicit(&s->tracing, memory_order_relaxed))
        n->ready_ns = df_now_ns();
    const DfPlacement p = s->pops->push_keep(s->policy, w->index, n);
    if (p.kept)
        return n;
    /* Queued by push_keep already: only the wake-up is left. */
    df_make_ready_placed(s, w, p);
    return NULL;
}

DfNode *df_node_complete(DfWorker *w, DfNode *n, bool keep, const DfGroup *waited)
{
    DfSched *s = w->sched;
    n->worker = w->index;
    if (n->flags & DF_NF_SPAWNED) {
        /* Nobody holds a handle: no successor, no other reference. */
        DfGroup *g = n->group;
        df_slab_free(n, w->cache);
        if (g)
            df_worker_node_done(w, g);
        return NULL;
    }
    DfEdge *e = atomic_exchange_explicit(&n->succ, DF_EDGES_CLOSED, memory_order_acq_rel);
    const bool skipped = n->flags & DF_NF_SKIPPED;
    /* The list is newest first; reverse it to release in creation order. */
    DfEdge *rev = NULL;
    while (e) {
        DfEdge *next = e->next;
        e->next = rev;
        rev = e;
        e = next;
    }
    DfNode *batch[READY_BATCH];
    int nb = 0;
    for (e = rev; e;) {
        DfEdge *next = e->next;
        DfNode *succ = e->succ;
        e->in->worker = df_node_input_worker(n, e->in->bytes, w->index);
        if (skipped)
            atomic_store_explicit(&succ->pred_cancelled, 1, memory_order_relaxed);
        df_slab_free(e, w->cache);
        if (atomic_fetch_sub_explicit(&succ->pending, 1, memory_order_acq_rel) == 1) {
            if (nb == READY_BATCH) {
                /* A wide fan-out: release the first batch as it is. */
                for (int i = 0; i < nb; i++)
                    df_make_ready(s, w, batch[i]);
                nb = 0;
            }
            batch[nb++] = succ;
        }
        e = next;
    }
    if (nb > 1)
        sort_ready(batch, nb);
    DfNode *next = NULL;
    if (s->policy->env.lifo) {
        /* Newest runs first: push the earliest deadline last. */
        for (int i = nb - 1; i >= 0; i--)
            df_make_ready(s, w, batch[i]);
    } else {
        int i = 0;
        /* The most urgent first, so that the own set it is compared with
         * holds no sibling yet.  When it is kept the worker goes on
         * running, so its siblings are made ready as from a running task:
         * one placed in the own set wakes a parked helper, as it did when
         * the kept node was queued before it (backlog). */
        if (keep && nb > 0 && s->pops->push_keep) {
            /* The one to keep first, the rest in their order. */
            int k = 0;
            for (int j = 1; j < nb; j++)
                if (df_node_kept_before(batch[j], batch[k], n->module))
                    k = j;
            DfNode *const kept = batch[k];
            memmove(batch + 1, batch, (size_t)k * sizeof(*batch));
            batch[0] = kept;
            next = ready_or_keep(s, w, batch[i++], waited);
        }
        for (; i < nb; i++) {
            if (next)
                df_make_ready_running(s, w, batch[i]);
            else
                df_make_ready(s, w, batch[i]);
        }
    }
    if (n->group)
        df_worker_node_done(w, n->group);
    df_node_unref(n, w->cache);
    return next;
}

DfSched *df_task_sched(const DfTask *task)
{
    return task->sched;
}

int df_task_worker(const DfTask *task)
{
    return task->worker;
}

DfNode *df_task_node(const DfTask *task)
{
    return task->node;
}

int df_task_index(const DfTask *task)
{
    return task->node ? task->node->index : 0;
}

bool df_task_pred_cancelled(const DfTask *task)
{
    return task->node &&
           atomic_load_explicit(&task->node->pred_cancelled, memory_order_relaxed) != 0;
}

bool df_task_stolen(const DfTask *task)
{
    return task->node && (task->node->flags & DF_NF_STOLEN);
}
