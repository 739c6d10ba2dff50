/* Allocation caches: one per worker (created with it) and one per outside
 * thread that submits work, found through a pthread key.  A cache outlives
 * its thread (objects it handed out may still be in use); caches of exited
 * threads are reused by new ones and all are freed with the scheduler. */
#include "sched_internal.h"

#include <stdlib.h>

/* The slabs' slots align objects to 8 bytes only (slab.c). */
_Static_assert(_Alignof(DfNode) <= 8 && _Alignof(DfEdge) <= 8 && _Alignof(DfInputBlock) <= 8 &&
                   _Alignof(DfGroup) <= 8,
               "slab objects need no more than 8-byte alignment");

static void cache_init(DfCache *c, DfSched *s, int worker)
{
    c->sched = s;
    c->worker = worker;
    df_slab_init(&c->nodes, c, s->node_size, 256);
    df_slab_init(&c->tasks, c, DF_NODE_SHORT_SIZE, 512);
    df_slab_init(&c->edges, c, sizeof(DfEdge), 512);
    df_slab_init(&c->blocks, c, sizeof(DfInputBlock), 128);
    df_slab_init(&c->groups, c, sizeof(DfGroup), 128);
}

void df_cache_fini(DfCache *c)
{
    df_slab_fini(&c->nodes);
    df_slab_fini(&c->tasks);
    df_slab_fini(&c->edges);
    df_slab_fini(&c->blocks);
    df_slab_fini(&c->groups);
}

static DfCache *cache_new_locked(DfSched *s, int worker)
{
    DfCache *c = s->orphans;
    if (c && worker < 0) {
        /* Reuse an exited thread's cache: its slabs keep their objects. */
        s->orphans = c->next_free;
        c->next_free = NULL;
        return c;
    }
    c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    cache_init(c, s, worker);
    c->next_all = s->caches;
    s->caches = c;
    return c;
}

DfCache *df_cache_new_for_worker(DfSched *s, int worker)
{
    pthread_mutex_lock(&s->cache_lock);
    DfCache *c = cache_new_locked(s, worker);
    pthread_mutex_unlock(&s->cache_lock);
    return c;
}

void df_cache_thread_exit(void *p)
{
    DfCache *c = p;
    DfSched *s = c->sched;
    pthread_mutex_lock(&s->cache_lock);
    c->next_free = s->orphans;
    s->orphans = c;
    pthread_mutex_unlock(&s->cache_lock);
}

DfCache *df_cache_get(DfSched *s)
{
    DfWorker *w = df_current_worker(s);
    if (w)
        return w->cache;
    DfCache *c = pthread_getspecific(s->cache_key);
    if (DF_LIKELY(c))
        return c;
    pthread_mutex_lock(&s->cache_lock);
    c = cache_new_locked(s, -1);
    pthread_mutex_unlock(&s->cache_lock);
    if (c)
        pthread_setspecific(s->cache_key, c);
    return c;
}
