/* A worker's Ready set.
 *
 * Each lane is Chase-Lev's array deque (Lê et al., "Correct and Efficient
 * Work-Stealing for Weak Memory Models", PPoPP'13): only the owner pushes,
 * with no atomic read-modify-write; anyone takes the oldest node with one
 * CAS on `top`; the owner may take the newest (LIFO mode) without a CAS
 * except for the last element.  Retired buffers are kept until the deque is
 * destroyed, because a thief may still read the old one.
 *
 * The inbox takes nodes registered by other threads (patent fig. 13): a
 * Treiber stack pushed with a CAS and emptied with one exchange, so it needs
 * no memory reclamation scheme.  Whoever empties it sorts it by deadline,
 * so a thief that gives part of it back cannot disturb the order.
 *
 * The lanes and their order are described in sched_ready.h.
 */
#include "sched_internal.h"

#include <sched.h>
#include <stdlib.h>

static DfDequeBuf *buf_new(int64_t cap)
{
    DfDequeBuf *b = malloc(sizeof(*b) + (size_t)cap * sizeof(b->slots[0]));
    if (!b)
        return NULL;
    b->mask = cap - 1;
    b->prev = NULL;
    for (int64_t i = 0; i < cap; i++) {
        atomic_init(&b->slots[i].node, 0);
        atomic_init(&b->slots[i].deadline, DF_NO_DEADLINE);
        atomic_init(&b->slots[i].group, NULL);
        atomic_init(&b->slots[i].after, 0);
    }
    return b;
}

int df_ready_init(DfReady *r, int64_t capacity)
{
    int64_t cap = 64;
    while (cap < capacity)
        cap <<= 1;
    for (int l = 0; l < DF_LANES; l++) {
        /* Deadline lanes are short-lived and start small; they grow. */
        DfDequeBuf *b = buf_new(l == DF_LANE_NONE ? cap : 64);
        if (!b) {
            for (int k = 0; k < l; k++)
                free(atomic_load(&r->lane[k].buf));
            return -1;
        }
        atomic_init(&r->lane[l].top, 0);
        atomic_init(&r->lane[l].bottom, 0);
        atomic_init(&r->lane[l].buf, b);
    }
    atomic_init(&r->inbox, NULL);
    atomic_init(&r->inbox_due, DF_NO_DEADLINE);
    atomic_init(&r->live, 0);
    atomic_init(&r->due, DF_NO_DEADLINE);
    r->solo = false;
    return 0;
}

void df_ready_fini(DfReady *r)
{
    for (int l = 0; l < DF_LANES; l++) {
        DfDequeBuf *b = atomic_load(&r->lane[l].buf);
        while (b) {
            DfDequeBuf *p = b->prev;
            free(b);
            b = p;
        }
        atomic_store(&r->lane[l].buf, NULL);
    }
}

static void slot_copy(DfSlot *to, DfSlot *from)
{
    atomic_store_explicit(&to->node, atomic_load_explicit(&from->node, memory_order_relaxed),
                          memory_order_relaxed);
    atomic_store_explicit(&to->deadline,
                          atomic_load_explicit(&from->deadline, memory_order_relaxed),
                          memory_order_relaxed);
    atomic_store_explicit(&to->group, atomic_load_explicit(&from->group, memory_order_relaxed),
                          memory_order_relaxed);
    atomic_store_explicit(&to->after, atomic_load_explicit(&from->after, memory_order_relaxed),
                          memory_order_relaxed);
}

/* Cold path: double the buffer (owner only). */
__attribute__((noinline, cold)) static DfDequeBuf *grow(DfLane *q, DfDequeBuf *old, int64_t b,
                                                        int64_t t)
{
    DfDequeBuf *nb = buf_new((old->mask + 1) * 2);
    if (!nb)
        abort(); /* no way to report from a push; the buffer only grows to the live set */
    for (int64_t i = t; i < b; i++)
        slot_copy(&nb->slots[i & nb->mask], &old->slots[i & old->mask]);
    nb->prev = old;
    /* Pairs with the acquire load of `buf` in lane_take: a thief that sees
     * the new buffer sees the slots copied into it. */
    atomic_store_explicit(&q->buf, nb, memory_order_release);
    return nb;
}

/* The slot's tag, in the node pointer's low bit: DF_HEAD_MOVABLE
 * (sched_ready.h). */
#define SLOT_TAGS ((uintptr_t)DF_HEAD_MOVABLE)
_Static_assert(_Alignof(DfNode) > SLOT_TAGS, "a node pointer's low bits are free for the tags");

static inline DfNode *slot_node(uintptr_t v)
{
    return (DfNode *)(v & ~SLOT_TAGS);
}

static int lane_of(int64_t deadline)
{
    if (deadline == DF_NO_DEADLINE)
        return DF_LANE_NONE;
    const int64_t units = (deadline - df_now_ns()) >> DF_LANE_UNIT_LOG2;
    if (units <= 0)
        return 0;
    /* units in [2^k, 2^(k+1)): lane k + 1, the last deadline lane beyond. */
    const int l = 64 - __builtin_clzll((unsigned long long)units);
    return l < DF_LANE_NONE - 1 ? l : DF_LANE_NONE - 1;
}

/* Owner: lane l may hold nodes from now on.  Relaxed: the store comes
 * before the push's release store of `bottom` and before the pusher's
 * fence in df_ready_sets_mark, so whoever sees the node through either
 * (or through that fence: df_ready_sets_unmark's re-check) sees the bit. */
static inline void live_add(DfReady *r, int l)
{
    const uint32_t live = atomic_load_explicit(&r->live, memory_order_relaxed);
    if (!(live & (1u << l)))
        atomic_store_explicit(&r->live, live | (1u << l), memory_order_relaxed);
}

/* Owner: lane l was seen empty; only the owner refills it. */
static inline void live_drop(DfReady *r, int l)
{
    const uint32_t live = atomic_load_explicit(&r->live, memory_order_relaxed);
    atomic_store_explicit(&r->live, live & ~(1u << l), memory_order_relaxed);
}

/* Owner: publish the earliest head deadline for thieves.  Relaxed: a hint
 * read with no ordering; a stale value only misdirects one steal. */
static inline void due_set(DfReady *r, int64_t d)
{
    if (atomic_load_explicit(&r->due, memory_order_relaxed) != d)
        atomic_store_explicit(&r->due, d, memory_order_relaxed);
}

static void lane_push(DfReady *r, int l, DfNode *n)
{
    DfLane *q = &r->lane[l];
    live_add(r, l);
    int64_t b = atomic_load_explicit(&q->bottom, memory_order_relaxed);
    /* Pairs with the CAS on `top` in lane_take: slots below top are free. */
    int64_t t = atomic_load_explicit(&q->top, memory_order_acquire);
    DfDequeBuf *a = atomic_load_explicit(&q->buf, memory_order_relaxed);
    if (DF_UNLIKELY(b - t > a->mask))
        a = grow(q, a, b, t);
    DfSlot *sl = &a->slots[b & a->mask];
    /* A spawned task reads nothing and feeds nobody: it loses nothing by
     * running elsewhere.  An ordered job (a WPP row) was released by the
     * start of the job above it, whose rows it reads as they are made:
     * run elsewhere while that one runs, it costs more.  A thief learns
     * either here without touching the node (df_ready_head_tags).  (A
     * short node, which has no start_pred_id, is a spawned task.) */
    const bool movable = n->flags & DF_NF_SPAWNED;
    atomic_store_explicit(&sl->node, (uintptr_t)n | (movable ? SLOT_TAGS : 0),
                          memory_order_relaxed);
    atomic_store_explicit(&sl->after, movable ? 0 : n->start_pred_id, memory_order_relaxed);
    const int64_t deadline = n->deadline; /* n may be run and freed once published */
    atomic_store_explicit(&sl->deadline, deadline, memory_order_relaxed);
    atomic_store_explicit(&sl->group, n->group, memory_order_relaxed);
    if (!r->solo && deadline < atomic_load_explicit(&r->due, memory_order_relaxed))
        atomic_store_explicit(&r->due, deadline, memory_order_relaxed); /* as in due_set */
    /* Release, paired with the acquire load of `bottom` in lane_take: a
     * taker that sees the new bottom sees the slot and the node.  (Rather
     * than a fence + relaxed store: the same instruction on x86, and
     * ThreadSanitizer understands it.) */
    atomic_store_explicit(&q->bottom, b + 1, memory_order_release);
}

void df_ready_push(DfReady *r, DfNode *n)
{
    lane_push(r, lane_of(n->deadline), n);
}

/* Owner: the newest node of lane l if the filter accepts it. */
static DfNode *lane_pop_newest(DfLane *q, const DfWaitFilter *f)
{
    int64_t b = atomic_load_explicit(&q->bottom, memory_order_relaxed) - 1;
    DfDequeBuf *a = atomic_load_explicit(&q->buf, memory_order_relaxed);
    if (f) {
        /* Peek before claiming: only the owner writes slots, and a thief
         * that took this one leaves it unchanged. */
        int64_t t = atomic_load_explicit(&q->top, memory_order_acquire);
        if (t > b)
            return NULL;
        DfSlot *sl = &a->slots[b & a->mask];
        if (!df_wait_accepts(f, atomic_load_explicit(&sl->group, memory_order_relaxed),
                             atomic_load_explicit(&sl->deadline, memory_order_relaxed)))
            return NULL;
    }
    atomic_store_explicit(&q->bottom, b, memory_order_relaxed);
    /* Chase-Lev's fence: the store of bottom above and the load of top
     * below must not be reordered, paired with the fence in lane_take (a
     * thief loads top, fences, loads bottom): of an owner and a thief
     * racing for the last node, at least one sees the other. */
    DF_FENCE_SEQ_CST();
    int64_t t = atomic_load_explicit(&q->top, memory_order_relaxed);
    DfNode *x = NULL;
    if (t <= b) {
        x = slot_node(atomic_load_explicit(&a->slots[b & a->mask].node, memory_order_relaxed));
        if (t == b) {
            /* Last element: race against thieves (their CAS on top). */
            if (!atomic_compare_exchange_strong_explicit(&q->top, &t, t + 1, memory_order_seq_cst,
                                                         memory_order_relaxed))
                x = NULL;
            atomic_store_explicit(&q->bottom, b + 1, memory_order_relaxed);
        }
    } else {
        atomic_store_explicit(&q->bottom, b + 1, memory_order_relaxed);
    }
    return x;
}

/* Anyone: the oldest node of lane l if the filter accepts it.  *empty is
 * set when the lane held nothing. */
static DfNode *lane_take(DfLane *q, const DfWaitFilter *f, bool *empty)
{
    for (;;) {
        /* Acquire on top pairs with the CAS of another taker; the fence
         * pairs with the owner's in lane_pop_newest. */
        int64_t t = atomic_load_explicit(&q->top, memory_order_acquire);
        DF_FENCE_SEQ_CST();
        /* Pairs with the release store of bottom in lane_push. */
        int64_t b = atomic_load_explicit(&q->bottom, memory_order_acquire);
        if (t >= b) {
            *empty = true;
            return NULL;
        }
        *empty = false;
        /* Pairs with the release store of buf in grow. */
        DfDequeBuf *a = atomic_load_explicit(&q->buf, memory_order_acquire);
        DfSlot *sl = &a->slots[t & a->mask];
        DfNode *x = slot_node(atomic_load_explicit(&sl->node, memory_order_relaxed));
        if (f && !df_wait_accepts(f, atomic_load_explicit(&sl->group, memory_order_relaxed),
                                  atomic_load_explicit(&sl->deadline, memory_order_relaxed)))
            return NULL;
        /* seq_cst, paired with the owner's CAS on the last element. */
        if (atomic_compare_exchange_strong_explicit(&q->top, &t, t + 1, memory_order_seq_cst,
                                                    memory_order_relaxed))
            return x;
        /* Lost the race: another taker got it; retry while items remain. */
    }
}

/* Owner: the oldest node of lane l (FIFO order).  Cost: one CAS, no fence.
 * The fence of lane_take pairs with the one in lane_pop_newest, i.e. with
 * an owner that moved `bottom` down; here the owner leaves `bottom` alone
 * and only it writes `bottom`, so its relaxed load reads the latest value
 * (coherence: a thread sees its own last store).  Against thieves only
 * `top` is contended and the CAS alone decides who gets slot t: a thief
 * that took it moved top, so the CAS fails and the owner re-reads.  The
 * slot was written by this thread, so no acquire is needed to read it;
 * the CAS is acq_rel only so that a thief's successful CAS before it (its
 * slot read) happens-before a later overwrite of the slot by lane_push,
 * which loads top with acquire: the release sequence through this RMW
 * carries it. */
static DfNode *lane_take_own(DfLane *q)
{
    int64_t t = atomic_load_explicit(&q->top, memory_order_relaxed);
    const int64_t b = atomic_load_explicit(&q->bottom, memory_order_relaxed);
    DfDequeBuf *a = atomic_load_explicit(&q->buf, memory_order_relaxed);
    while (t < b) {
        DfNode *x =
            slot_node(atomic_load_explicit(&a->slots[t & a->mask].node, memory_order_relaxed));
        /* On failure t holds the new top: retry while nodes remain. */
        if (atomic_compare_exchange_weak_explicit(&q->top, &t, t + 1, memory_order_acq_rel,
                                                  memory_order_relaxed))
            return x;
    }
    return NULL;
}

/* lane_take_own in a set nobody else takes from (DfReady.solo): top is
 * the owner's alone, so a plain store moves it. */
static DfNode *lane_take_solo(DfLane *q)
{
    const int64_t t = atomic_load_explicit(&q->top, memory_order_relaxed);
    if (t >= atomic_load_explicit(&q->bottom, memory_order_relaxed))
        return NULL;
    DfDequeBuf *a = atomic_load_explicit(&q->buf, memory_order_relaxed);
    DfNode *x = slot_node(atomic_load_explicit(&a->slots[t & a->mask].node, memory_order_relaxed));
    atomic_store_explicit(&q->top, t + 1, memory_order_relaxed);
    return x;
}

/* Deadline at the old end of lane l, DF_NO_DEADLINE when empty.  A hint:
 * the node may be taken meanwhile. */
static int64_t lane_head_deadline(const DfLane *q)
{
    DfLane *m = (DfLane *)q;
    int64_t t = atomic_load_explicit(&m->top, memory_order_relaxed);
    /* Pairs with the release store of bottom in lane_push. */
    int64_t b = atomic_load_explicit(&m->bottom, memory_order_acquire);
    if (t >= b)
        return DF_NO_DEADLINE;
    DfDequeBuf *a = atomic_load_explicit(&m->buf, memory_order_acquire);
    return atomic_load_explicit(&a->slots[t & a->mask].deadline, memory_order_relaxed);
}

/* Lanes in the order a taker should try them: by the deadline at their old
 * end (into dl), the no-deadline lane last.  `mask` limits the lanes looked
 * at. */
static int lane_order(const DfReady *r, uint32_t mask, int order[DF_LANES], int64_t dl[DF_LANES])
{
    int n = 0;
    for (uint32_t m = mask & ~(1u << DF_LANE_NONE); m; m &= m - 1) {
        const int l = __builtin_ctz(m);
        const int64_t d = lane_head_deadline(&r->lane[l]);
        if (d == DF_NO_DEADLINE)
            continue;
        int j = n++;
        while (j > 0 && dl[j - 1] > d) {
            dl[j] = dl[j - 1];
            order[j] = order[j - 1];
            j--;
        }
        dl[j] = d;
        order[j] = l;
    }
    if (mask & (1u << DF_LANE_NONE)) {
        dl[n] = DF_NO_DEADLINE;
        order[n++] = DF_LANE_NONE;
    }
    return n;
}

/* The lanes that may hold nodes, as others see them. */
static inline uint32_t live_mask(const DfReady *r)
{
    /* Relaxed: see live_add. */
    return atomic_load_explicit(&((DfReady *)r)->live, memory_order_relaxed);
}

DfNode *df_ready_pop(DfReady *r, bool lifo, const DfWaitFilter *f)
{
    int order[DF_LANES];
    int64_t dl[DF_LANES];
    const int n = lane_order(r, live_mask(r), order, dl);
    for (int k = 0; k < n; k++) {
        DfLane *q = &r->lane[order[k]];
        bool empty = false;
        DfNode *x;
        if (lifo) {
            x = lane_pop_newest(q, f);
            if (!x && f)
                x = lane_take(q, f, &empty);
        } else if (f) {
            /* A waiting owner takes its group's jobs oldest first, as its
             * thieves do: both ends of one group's list then interleave
             * (list scheduling), where newest-first split it into a
             * thief's prefix and the owner's suffix, and jobs of unequal
             * cost (a picture's detailed rows) piled up on one side.
             * When the oldest is not the group's, the newest accepted
             * (the jobs it has just made ready), and only then an older
             * node due before the waiter: its own jobs first, so that its
             * task resumes soonest (oldest accepted first could make a
             * waiting stream run other streams' whole frames before its
             * own slices). */
            const DfWaitFilter group_only = {.group = f->group, .deadline = INT64_MIN};
            x = lane_take(q, &group_only, &empty);
            if (!x && !empty)
                x = lane_pop_newest(q, f);
            if (!x && !empty)
                x = lane_take(q, f, &empty);
        } else {
            x = r->solo ? lane_take_solo(q) : lane_take_own(q);
            empty = !x;
        }
        if (x) {
            if (!r->solo) {
                /* The next head: this lane's new one, or the first other
                 * lane's in the order (lanes refused before k keep theirs). */
                int64_t d = order[k] == DF_LANE_NONE ? DF_NO_DEADLINE : lane_head_deadline(q);
                if (n > 1) {
                    const int64_t other = dl[k == 0 ? 1 : 0];
                    d = other < d ? other : d;
                }
                due_set(r, d);
            }
            return x;
        }
        if (empty || (atomic_load_explicit(&q->top, memory_order_relaxed) >=
                      atomic_load_explicit(&q->bottom, memory_order_relaxed)))
            live_drop(r, order[k]);
    }
    if (!r->solo && !f)
        due_set(r, DF_NO_DEADLINE); /* every lane was empty */
    return NULL;
}

DfNode *df_ready_take(DfReady *r, const DfWaitFilter *f)
{
    int order[DF_LANES];
    int64_t dl[DF_LANES];
    const int n = lane_order(r, live_mask(r), order, dl);
    for (int k = 0; k < n; k++) {
        bool empty;
        DfNode *x = lane_take(&r->lane[order[k]], f, &empty);
        if (x)
            return x;
    }
    return NULL;
}

/* Lower the inbox's hint to `d`.  Relaxed: a hint (see inbox_take). */
static void inbox_due_lower(DfReady *r, int64_t d)
{
    int64_t cur = atomic_load_explicit(&r->inbox_due, memory_order_relaxed);
    while (d < cur && !atomic_compare_exchange_weak_explicit(
                          &r->inbox_due, &cur, d, memory_order_relaxed, memory_order_relaxed))
        ;
}

/* Push a whole chain (first..last, the earliest deadline in it `due`)
 * onto an inbox. */
static void post_chain(DfReady *r, DfNode *first, DfNode *last, int64_t due)
{
    if (due != DF_NO_DEADLINE)
        inbox_due_lower(r, due);
    DfNode *head = atomic_load_explicit(&r->inbox, memory_order_relaxed);
    do {
        last->next = head;
        /* Release, paired with the acquire exchange that empties the inbox:
         * the taker sees the nodes' fields and their links. */
    } while (!atomic_compare_exchange_weak_explicit(&r->inbox, &head, first, memory_order_release,
                                                    memory_order_relaxed));
}

void df_ready_post(DfReady *r, DfNode *n)
{
    post_chain(r, n, n, n->deadline);
}

/* Stable merge sort of a node list by (deadline, id): O(n log n), since an
 * inbox behind a busy owner can hold thousands of nodes. */
static DfNode *sort_urgent(DfNode *list)
{
    if (!list || !list->next)
        return list;
    DfNode *slow = list, *fast = list->next;
    while (fast && fast->next) {
        slow = slow->next;
        fast = fast->next->next;
    }
    DfNode *b = slow->next;
    slow->next = NULL;
    DfNode *a = sort_urgent(list);
    b = sort_urgent(b);
    DfNode *head = NULL, **tail = &head;
    while (a && b) {
        DfNode **pick = df_node_urgent_before(b, a) ? &b : &a;
        *tail = *pick;
        tail = &(*pick)->next;
        *pick = (*pick)->next;
    }
    *tail = a ? a : b;
    return head;
}

/* sort_urgent in O(n) for the common inbox: nodes posted in order of
 * urgency (a producer releasing its successors, a root spawning) arrive
 * newest first, so the reversed list is already sorted.  The result is
 * the same as sort_urgent's: (deadline, id) is a total order. */
static DfNode *order_urgent(DfNode *list)
{
    DfNode *rev = NULL;
    bool sorted = true;
    while (list) {
        DfNode *next = list->next;
        if (rev && df_node_urgent_before(rev, list)) /* rev comes after list */
            sorted = false;
        list->next = rev;
        rev = list;
        list = next;
    }
    return sorted ? rev : sort_urgent(rev);
}

/* The whole inbox (NULL when empty), newest first. */
static DfNode *inbox_take(DfReady *r)
{
    if (!atomic_load_explicit(&r->inbox, memory_order_relaxed))
        return NULL;
    /* The hint is reset before the exchange: a node posted in between
     * leaves it early (a thief may look here in vain), never late. */
    if (atomic_load_explicit(&r->inbox_due, memory_order_relaxed) != DF_NO_DEADLINE)
        atomic_store_explicit(&r->inbox_due, DF_NO_DEADLINE, memory_order_relaxed);
    /* Acquire, paired with the release CAS of post_chain. */
    return atomic_exchange_explicit(&r->inbox, NULL, memory_order_acquire);
}

/* Put the nodes of `list` (in order) back into the inbox. */
static bool give_back(DfReady *r, DfNode *list)
{
    if (!list)
        return false;
    DfNode *last = list;
    int64_t due = list->deadline;
    while (last->next) {
        last = last->next;
        due = last->deadline < due ? last->deadline : due;
    }
    post_chain(r, list, last, due);
    return true;
}

int df_ready_drain_inbox(DfReady *r, const DfWaitFilter *f, bool *returned)
{
    DfNode *list = order_urgent(inbox_take(r)), *rest = NULL, **rest_tail = &rest;
    int count = 0;
    while (list) {
        DfNode *next = list->next;
        if (df_wait_accepts(f, list->group, list->deadline)) {
            df_ready_push(r, list);
            count++;
        } else {
            list->next = NULL;
            *rest_tail = list;
            rest_tail = &list->next;
        }
        list = next;
    }
    const bool back = give_back(r, rest);
    if (returned)
        *returned = back;
    return count;
}

DfNode *df_ready_steal_inbox(DfReady *r, const DfWaitFilter *f, bool *returned)
{
    DfNode *list = inbox_take(r), **best = NULL;
    /* One pass for the most urgent node the thief may take; the rest goes
     * back as it is, and the owner sorts when it drains. */
    for (DfNode **pp = &list; *pp; pp = &(*pp)->next)
        if (df_wait_accepts(f, (*pp)->group, (*pp)->deadline) &&
            (!best || !df_node_urgent_before(*best, *pp)))
            best = pp;
    DfNode *got = NULL;
    if (best) {
        got = *best;
        *best = got->next;
    }
    const bool back = give_back(r, list);
    if (returned)
        *returned = back;
    return got;
}

int64_t df_ready_urgency(const DfReady *r)
{
    DfReady *m = (DfReady *)r;
    /* Relaxed: hints (see due_set, inbox_take). */
    const int64_t lanes = atomic_load_explicit(&m->due, memory_order_relaxed);
    const int64_t inbox = atomic_load_explicit(&m->inbox_due, memory_order_relaxed);
    return lanes < inbox ? lanes : inbox;
}

/* A head mark: the lane above MARK_SHIFT, its top below. */
#define MARK_SHIFT 60
#define MARK_TOP   ((1ull << MARK_SHIFT) - 1)

uint64_t df_ready_head_mark(const DfReady *r)
{
    /* The lowest live lane: the least slack when its nodes were pushed.
     * One line besides `live`, where summing every lane's top read
     * DF_LANES. */
    const uint32_t live = live_mask(r);
    const int l = live ? __builtin_ctz(live) : DF_LANE_NONE;
    /* Relaxed: a hint for thieves; tops only grow. */
    const int64_t t = atomic_load_explicit(&((DfReady *)r)->lane[l].top, memory_order_relaxed);
    return (uint64_t)l << MARK_SHIFT | ((uint64_t)t & MARK_TOP);
}

uint64_t df_ready_taken_since(const DfReady *r, uint64_t mark)
{
    const int l = (int)(mark >> MARK_SHIFT);
    /* Relaxed, as above. */
    const int64_t t = atomic_load_explicit(&((DfReady *)r)->lane[l].top, memory_order_relaxed);
    return ((uint64_t)t - mark) & MARK_TOP;
}

unsigned df_ready_head_tags(const DfReady *r, uint64_t *after)
{
    if (after)
        *after = 0;
    int order[DF_LANES];
    int64_t dl[DF_LANES];
    const int n = lane_order(r, live_mask(r), order, dl);
    for (int k = 0; k < n; k++) {
        DfLane *q = (DfLane *)&r->lane[order[k]];
        const int64_t t = atomic_load_explicit(&q->top, memory_order_relaxed);
        /* Pairs with the release store of bottom in lane_push: the slot
         * below it is written. */
        if (t >= atomic_load_explicit(&q->bottom, memory_order_acquire))
            continue;
        /* Pairs with the release store of buf in grow. */
        DfDequeBuf *a = atomic_load_explicit(&q->buf, memory_order_acquire);
        const DfSlot *sl = &a->slots[t & a->mask];
        if (after)
            *after = atomic_load_explicit(&((DfSlot *)sl)->after, memory_order_relaxed);
        return (unsigned)(atomic_load_explicit(&((DfSlot *)sl)->node, memory_order_relaxed) &
                          SLOT_TAGS);
    }
    return 0;
}

int64_t df_ready_size(const DfReady *r)
{
    DfReady *m = (DfReady *)r;
    int64_t n = 0;
    /* Lanes outside the live mask are empty (see live_add). */
    for (uint32_t live = live_mask(r); live; live &= live - 1) {
        const int l = __builtin_ctz(live);
        int64_t b = atomic_load_explicit(&m->lane[l].bottom, memory_order_relaxed);
        int64_t t = atomic_load_explicit(&m->lane[l].top, memory_order_relaxed);
        n += b > t ? b - t : 0;
    }
    if (atomic_load_explicit(&m->inbox, memory_order_relaxed))
        n++;
    return n;
}

bool df_ready_empty(const DfReady *r)
{
    return df_ready_size(r) == 0;
}

bool df_ready_empty_own(const DfReady *r)
{
    DfReady *m = (DfReady *)r;
    /* Relaxed: as df_ready_size, a hint; the owner's own pushes are seen
     * in program order, and lanes outside `live` are empty (only the
     * owner refills one, and it sets the bit when it does). */
    if (atomic_load_explicit(&m->inbox, memory_order_relaxed))
        return false;
    for (uint32_t live = live_mask(r); live; live &= live - 1) {
        const DfLane *q = &r->lane[__builtin_ctz(live)];
        if (atomic_load_explicit(&((DfLane *)q)->bottom, memory_order_relaxed) >
            atomic_load_explicit(&((DfLane *)q)->top, memory_order_relaxed))
            return false;
    }
    return true;
}

bool df_ready_none_before(const DfReady *r, int64_t deadline)
{
    /* Relaxed: a hint, read by the owner (a node posted meanwhile is
     * drained before the owner's next pop anyway). */
    if (atomic_load_explicit(&((DfReady *)r)->inbox, memory_order_relaxed))
        return false;
    for (uint32_t m = live_mask(r) & ~(1u << DF_LANE_NONE); m; m &= m - 1)
        if (lane_head_deadline(&r->lane[__builtin_ctz(m)]) < deadline)
            return false;
    return true;
}

void df_spin_lock(DfSpin *l)
{
    unsigned spins = 0;
    for (;;) {
        if (!atomic_exchange_explicit(&l->locked, 1, memory_order_acquire))
            return;
        while (atomic_load_explicit(&l->locked, memory_order_relaxed)) {
            df_cpu_relax();
            /* The holder may have been preempted (more threads than cores). */
            if (++spins % 1024 == 0)
                sched_yield();
        }
    }
}

void df_spin_unlock(DfSpin *l)
{
    atomic_store_explicit(&l->locked, 0, memory_order_release);
}

int df_ready_sets_init(DfReadySets *rs, const struct DfTopo *topo, int n)
{
    rs->n = n;
    if (df_summary_init(&rs->work, topo, n) < 0)
        return -1;
    rs->sets = aligned_alloc(DF_CACHELINE, ((size_t)n * sizeof(DfReady) + DF_CACHELINE - 1) &
                                               ~(size_t)(DF_CACHELINE - 1));
    if (!rs->sets) {
        df_summary_fini(&rs->work);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if (df_ready_init(&rs->sets[i], 256) < 0) {
            for (int j = 0; j < i; j++)
                df_ready_fini(&rs->sets[j]);
            free(rs->sets);
            rs->sets = NULL;
            df_summary_fini(&rs->work);
            return -1;
        }
        rs->sets[i].solo = n == 1;
    }
    return 0;
}

void df_ready_sets_fini(DfReadySets *rs)
{
    if (!rs->sets)
        return;
    for (int i = 0; i < rs->n; i++)
        df_ready_fini(&rs->sets[i]);
    free(rs->sets);
    rs->sets = NULL;
    df_summary_fini(&rs->work);
}

/* The has-work summary.  A set's bit is set by whoever puts nodes into it
 * (df_ready_sets_mark) and cleared by whoever sees it empty: its owner
 * before it steals, a thief after it took the last node or found a set
 * flagged but empty (df_ready_sets_unmark).  Two store-load races, each
 * closed by a pair of seq_cst fences:
 *  - pusher against clearer: the pusher stores the node, fences, reads
 *    the bit; the clearer clears the bit, fences, re-reads the set.  One
 *    of them sees the other: the pusher sets the bit again, or the clearer
 *    does (and, since an idle worker may have read the missing bit and
 *    parked, reports a wake check to its caller);
 *  - pusher against a parking worker (worker.c): the pusher's fence here
 *    is the producer's fence of the park handshake.  After it the pusher
 *    reads the bit, sets it (seq_cst RMWs) if clear and reads the parked
 *    summary's root with a seq_cst load; the parker announces itself, fences and reads
 *    the summary's root.  Either the parker sees the bit or the pusher
 *    sees the parker. */
bool df_ready_sets_any(DfReadySets *rs, unsigned *lines)
{
    return df_summary_any(&rs->work, lines);
}

void df_ready_sets_mark_alone(DfReadySets *rs, int w)
{
    if (!df_summary_test(&rs->work, w))
        df_summary_set(&rs->work, w);
}

void df_ready_sets_mark(DfReadySets *rs, int w)
{
    /* Pairs with the fence in df_ready_sets_unmark, and with the one in
     * park (worker.c): the nodes just put into w's set are visible before
     * the bit (and, in the caller, the parked summary's root) is read. */
    DF_FENCE_SEQ_CST();
    df_ready_sets_mark_alone(rs, w);
}

bool df_ready_sets_unmark(DfReadySets *rs, int w)
{
    DfSummary *s = &rs->work;
    if (!df_summary_test(s, w))
        return false;
    const uint64_t bit = 1ull << s->bit_of[w];
    const uint64_t old = df_summary_clear_bit(s, w);
    if (!(old & bit))
        return false; /* another clearer's */
    /* Pairs with the fence in df_ready_sets_mark: a node pushed before the
     * pusher read the bit as still set is seen here. */
    DF_FENCE_SEQ_CST();
    if (!df_ready_empty(&rs->sets[w])) {
        df_summary_set(s, w);
        return true;
    }
    return old == bit && df_summary_clear_up(s, w);
}

DfNode *df_ready_steal(DfReady *victim, const DfWaitFilter *f, bool *returned)
{
    *returned = false;
    DfNode *n = df_ready_take(victim, f);
    return n ? n : df_ready_steal_inbox(victim, f, returned);
}
