/* A worker's Ready set.
 *
 * The deque is Chase-Lev's array deque (Lê et al., "Correct and Efficient
 * Work-Stealing for Weak Memory Models", PPoPP'13): only the owner pushes,
 * with no atomic read-modify-write; anyone takes the oldest node with one
 * CAS on `top`; the owner may take the newest (LIFO mode) without a CAS
 * except for the last element.  Retired buffers are kept until the deque is
 * destroyed, because a thief may still read the old one.
 *
 * The inbox takes nodes registered by other threads (patent fig. 13): a
 * Treiber stack pushed with a CAS and emptied with one exchange, so it needs
 * no memory reclamation scheme.
 */
#include "internal.h"

#include <sched.h>
#include <stdlib.h>

static DfDequeBuf *buf_new(int64_t cap)
{
    DfDequeBuf *b = malloc(sizeof(*b) + (size_t)cap * sizeof(b->slots[0]));
    if (!b)
        return NULL;
    b->mask = cap - 1;
    b->prev = NULL;
    for (int64_t i = 0; i < cap; i++)
        atomic_init(&b->slots[i], NULL);
    return b;
}

int df_ready_init(DfReady *r, int64_t capacity)
{
    int64_t cap = 64;
    while (cap < capacity)
        cap <<= 1;
    DfDequeBuf *b = buf_new(cap);
    if (!b)
        return -1;
    atomic_init(&r->top, 0);
    atomic_init(&r->bottom, 0);
    atomic_init(&r->buf, b);
    atomic_init(&r->inbox, NULL);
    return 0;
}

void df_ready_fini(DfReady *r)
{
    DfDequeBuf *b = atomic_load(&r->buf);
    while (b) {
        DfDequeBuf *p = b->prev;
        free(b);
        b = p;
    }
    atomic_store(&r->buf, NULL);
}

/* Cold path: double the buffer (owner only). */
__attribute__((noinline, cold)) static DfDequeBuf *grow(DfReady *r, DfDequeBuf *old, int64_t b, int64_t t)
{
    DfDequeBuf *nb = buf_new((old->mask + 1) * 2);
    if (!nb)
        abort(); /* no way to report from a push; the buffer only grows to the live set */
    for (int64_t i = t; i < b; i++)
        atomic_store_explicit(&nb->slots[i & nb->mask],
                              atomic_load_explicit(&old->slots[i & old->mask], memory_order_relaxed),
                              memory_order_relaxed);
    nb->prev = old;
    atomic_store_explicit(&r->buf, nb, memory_order_release);
    return nb;
}

void df_ready_push(DfReady *r, DfNode *n)
{
    int64_t b = atomic_load_explicit(&r->bottom, memory_order_relaxed);
    int64_t t = atomic_load_explicit(&r->top, memory_order_acquire);
    DfDequeBuf *a = atomic_load_explicit(&r->buf, memory_order_relaxed);
    if (DF_UNLIKELY(b - t > a->mask))
        a = grow(r, a, b, t);
    atomic_store_explicit(&a->slots[b & a->mask], n, memory_order_relaxed);
    /* A release store rather than fence + relaxed: the same instruction on
     * x86, and ThreadSanitizer understands it. */
    atomic_store_explicit(&r->bottom, b + 1, memory_order_release);
}

DfNode *df_ready_pop_newest(DfReady *r)
{
    int64_t b = atomic_load_explicit(&r->bottom, memory_order_relaxed) - 1;
    DfDequeBuf *a = atomic_load_explicit(&r->buf, memory_order_relaxed);
    atomic_store_explicit(&r->bottom, b, memory_order_relaxed);
    DF_FENCE_SEQ_CST();
    int64_t t = atomic_load_explicit(&r->top, memory_order_relaxed);
    DfNode *x = NULL;
    if (t <= b) {
        x = atomic_load_explicit(&a->slots[b & a->mask], memory_order_relaxed);
        if (t == b) {
            /* Last element: race against thieves. */
            if (!atomic_compare_exchange_strong_explicit(&r->top, &t, t + 1, memory_order_seq_cst,
                                                         memory_order_relaxed))
                x = NULL;
            atomic_store_explicit(&r->bottom, b + 1, memory_order_relaxed);
        }
    } else {
        atomic_store_explicit(&r->bottom, b + 1, memory_order_relaxed);
    }
    return x;
}

DfNode *df_ready_take_oldest(DfReady *r)
{
    for (;;) {
        int64_t t = atomic_load_explicit(&r->top, memory_order_acquire);
        DF_FENCE_SEQ_CST();
        int64_t b = atomic_load_explicit(&r->bottom, memory_order_acquire);
        if (t >= b)
            return NULL;
        DfDequeBuf *a = atomic_load_explicit(&r->buf, memory_order_acquire);
        DfNode *x = atomic_load_explicit(&a->slots[t & a->mask], memory_order_relaxed);
        if (atomic_compare_exchange_strong_explicit(&r->top, &t, t + 1, memory_order_seq_cst,
                                                    memory_order_relaxed))
            return x;
        /* Lost the race: another taker got it; retry while items remain. */
    }
}

void df_ready_post(DfReady *r, DfNode *n)
{
    DfNode *head = atomic_load_explicit(&r->inbox, memory_order_relaxed);
    do {
        n->next = head;
    } while (!atomic_compare_exchange_weak_explicit(&r->inbox, &head, n, memory_order_release,
                                                    memory_order_relaxed));
}

/* Push a whole chain (first..last, newest first) back onto an inbox. */
static void post_chain(DfReady *r, DfNode *first, DfNode *last)
{
    DfNode *head = atomic_load_explicit(&r->inbox, memory_order_relaxed);
    do {
        last->next = head;
    } while (!atomic_compare_exchange_weak_explicit(&r->inbox, &head, first, memory_order_release,
                                                    memory_order_relaxed));
}

int df_ready_drain_inbox(DfReady *r)
{
    if (!atomic_load_explicit(&r->inbox, memory_order_relaxed))
        return 0;
    DfNode *list = atomic_exchange_explicit(&r->inbox, NULL, memory_order_acquire);
    /* The stack is newest first: reverse it so the deque stays oldest first. */
    DfNode *rev = NULL;
    int count = 0;
    while (list) {
        DfNode *next = list->next;
        list->next = rev;
        rev = list;
        list = next;
        count++;
    }
    while (rev) {
        DfNode *next = rev->next;
        df_ready_push(r, rev);
        rev = next;
    }
    return count;
}

DfNode *df_ready_steal_inbox(DfReady *r)
{
    if (!atomic_load_explicit(&r->inbox, memory_order_relaxed))
        return NULL;
    DfNode *list = atomic_exchange_explicit(&r->inbox, NULL, memory_order_acquire);
    if (!list)
        return NULL;
    /* Keep the oldest (the tail); give the rest back to the owner. */
    DfNode *prev = NULL, *p = list;
    while (p->next) {
        prev = p;
        p = p->next;
    }
    if (prev) {
        prev->next = NULL;
        post_chain(r, list, prev);
    }
    return p;
}

uint64_t df_ready_head_key(const DfReady *r)
{
    uint64_t top = (uint64_t)atomic_load_explicit(&((DfReady *)r)->top, memory_order_relaxed);
    uintptr_t inbox = (uintptr_t)atomic_load_explicit(&((DfReady *)r)->inbox, memory_order_relaxed);
    return (top * 0x9e3779b97f4a7c15ull) ^ (uint64_t)inbox;
}

int64_t df_ready_size(const DfReady *r)
{
    int64_t b = atomic_load_explicit(&r->bottom, memory_order_relaxed);
    int64_t t = atomic_load_explicit(&r->top, memory_order_relaxed);
    int64_t n = b > t ? b - t : 0;
    if (atomic_load_explicit(&r->inbox, memory_order_relaxed))
        n++;
    return n;
}

bool df_ready_empty(const DfReady *r)
{
    return df_ready_size(r) == 0;
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

int df_ready_sets_init(DfReadySets *rs, int n)
{
    rs->n = n;
    rs->sets = aligned_alloc(DF_CACHELINE, ((size_t)n * sizeof(DfReady) + DF_CACHELINE - 1) &
                                               ~(size_t)(DF_CACHELINE - 1));
    if (!rs->sets)
        return -1;
    for (int i = 0; i < n; i++)
        if (df_ready_init(&rs->sets[i], 256) < 0) {
            for (int j = 0; j < i; j++)
                df_ready_fini(&rs->sets[j]);
            free(rs->sets);
            rs->sets = NULL;
            return -1;
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
}

bool df_ready_sets_any(const DfReadySets *rs)
{
    for (int i = 0; i < rs->n; i++)
        if (!df_ready_empty(&rs->sets[i]))
            return true;
    return false;
}

DfNode *df_ready_steal(DfReady *victim)
{
    DfNode *n = df_ready_take_oldest(victim);
    return n ? n : df_ready_steal_inbox(victim);
}
