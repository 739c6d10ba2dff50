/* Background work: nodes whose deadline is at or past
 * DF_DEADLINE_BACKGROUND (dfsched.h) wait here, earliest deadline first,
 * until a worker has nothing else to run: its own set empty and nothing to
 * steal.  The scheduler's one queue of them, a binary heap under a mutex.
 *
 * Why not the workers' sets: a set's lanes are FIFO inside a lane (EDF
 * only between lanes), so background work queued there would run in
 * arrival order, mixed with the far-ahead frames of ordinary streams;
 * and a set's owner would run it before stealing someone's urgent node.
 * Background work runs by its own deadlines (dfmedia delays those of a
 * stream on probation by its rank) and only on capacity nothing else
 * wants.
 *
 * The mutex is off every ordinary node's path: only background nodes go
 * through it.  Workers never block on it (trylock: a busy lock is a
 * round of idling, and the count says to look again); a thread that
 * queues does. */
#include "sched_internal.h"

#include <errno.h>
#include <stdlib.h>

#define INITIAL_CAPACITY 64

int df_background_init(DfBackground *b)
{
    atomic_init(&b->n, 0);
    b->heap = NULL;
    b->len = b->cap = 0;
    return pthread_mutex_init(&b->lock, NULL) == 0 ? 0 : -ENOMEM;
}

void df_background_fini(DfBackground *b)
{
    free(b->heap);
    b->heap = NULL;
    pthread_mutex_destroy(&b->lock);
}

static bool before(const DfNode *a, const DfNode *b)
{
    return a->deadline < b->deadline || (a->deadline == b->deadline && a->id < b->id);
}

static void sift_up(DfNode **h, int64_t i)
{
    DfNode *x = h[i];
    while (i > 0) {
        const int64_t p = (i - 1) / 2;
        if (!before(x, h[p]))
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = x;
}

static void sift_down(DfNode **h, int64_t len, int64_t i)
{
    DfNode *x = h[i];
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= len)
            break;
        if (c + 1 < len && before(h[c + 1], h[c]))
            c++;
        if (!before(h[c], x))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = x;
}

/* Lock held: node n of group g enters (+1) or leaves (-1) the queue.
 * Relaxed, as the queue's count (publish_count). */
static void group_count(DfGroup *g, int32_t d)
{
    if (g)
        atomic_store_explicit(&g->n_background,
                              atomic_load_explicit(&g->n_background, memory_order_relaxed) + d,
                              memory_order_relaxed);
}

/* Lock held: take out entry i. */
static DfNode *remove_at(DfBackground *b, int64_t i)
{
    DfNode *n = b->heap[i];
    group_count(n->group, -1);
    b->heap[i] = b->heap[--b->len];
    if (i < b->len) {
        sift_down(b->heap, b->len, i);
        sift_up(b->heap, i);
    }
    return n;
}

/* Lock held.  Relaxed: the count is a hint to look (the mutex orders the
 * nodes themselves); the park handshake orders it by the fences on both
 * sides (df_background_push's caller, and park). */
static void publish_count(DfBackground *b)
{
    atomic_store_explicit(&b->n, b->len, memory_order_relaxed);
}

bool df_background_push(DfSched *s, DfNode *n)
{
    DfBackground *b = &s->background;
    pthread_mutex_lock(&b->lock);
    if (b->len == b->cap) {
        /* Grows with the background work queued at once (a few frames per
         * stream on probation), then stays. */
        const int64_t cap = b->cap ? 2 * b->cap : INITIAL_CAPACITY;
        DfNode **h = realloc(b->heap, sizeof(*h) * (size_t)cap);
        if (!h) {
            pthread_mutex_unlock(&b->lock);
            return false; /* the caller queues it as an ordinary node */
        }
        b->heap = h;
        b->cap = cap;
    }
    b->heap[b->len++] = n;
    sift_up(b->heap, b->len - 1);
    group_count(n->group, +1);
    publish_count(b);
    pthread_mutex_unlock(&b->lock);
    return true;
}

DfNode *df_background_take(DfSched *s, const DfWaitFilter *f)
{
    DfBackground *b = &s->background;
    if (atomic_load_explicit(&b->n, memory_order_relaxed) == 0 || pthread_mutex_trylock(&b->lock))
        return NULL;
    DfNode *n = NULL;
    if (!f) {
        if (b->len > 0)
            n = remove_at(b, 0);
    } else {
        /* A waiting task: the most urgent node it accepts (its group's, or
         * due before it).  The heap holds a few frames' nodes: a scan. */
        int64_t best = -1;
        for (int64_t i = 0; i < b->len; i++)
            if (df_pnode_accepts(f, b->heap[i]) && (best < 0 || before(b->heap[i], b->heap[best])))
                best = i;
        if (best >= 0)
            n = remove_at(b, best);
    }
    publish_count(b);
    pthread_mutex_unlock(&b->lock);
    return n;
}

bool df_background_may_run(DfSched *s, const DfGroup *g)
{
    DfBackground *b = &s->background;
    if (atomic_load_explicit(&b->n, memory_order_relaxed) == 0)
        return false;
    if (!g)
        return true;
    /* A waiting worker parks unless its own group's node is here.
     * Relaxed: the park handshake orders it as the queue's count. */
    return atomic_load_explicit(&g->n_background, memory_order_relaxed) > 0;
}
