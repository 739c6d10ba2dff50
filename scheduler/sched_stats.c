/* Counters per worker, snapshot on demand. */
#include "sched_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define LOAD(w, f) atomic_load_explicit(&(w)->ctr.f, memory_order_relaxed)

static void snapshot(const DfWorker *wc, DfWorkerStats *o)
{
    DfWorker *w = (DfWorker *)wc;
    o->tasks_run = LOAD(w, tasks_run);
    o->tasks_stolen = LOAD(w, tasks_stolen);
    o->tasks_explored = LOAD(w, tasks_explored);
    o->tasks_skipped = LOAD(w, tasks_skipped);
    o->idle_ns = LOAD(w, idle_ns);
    o->busy_ns = LOAD(w, busy_ns);
    o->parks = LOAD(w, parks);
    o->wakeups_sent = LOAD(w, wakeups_sent);
    o->bytes_local = LOAD(w, bytes_local);
    for (int l = 0; l < DF_N_LEVELS; l++)
        o->bytes_level[l] = LOAD(w, bytes_level[l]);
    o->max_wait_depth = LOAD(w, max_wait_depth);
    o->wait_fallbacks = LOAD(w, wait_fallbacks);
    o->jobs_inline = LOAD(w, jobs_inline);
    o->idle_rounds = LOAD(w, idle_rounds);
    o->idle_lines = LOAD(w, idle_lines);
    o->slab_chunks = 0; /* filled from the caches by the caller */
}

static void add(DfWorkerStats *t, const DfWorkerStats *o)
{
    t->tasks_run += o->tasks_run;
    t->tasks_stolen += o->tasks_stolen;
    t->tasks_explored += o->tasks_explored;
    t->tasks_skipped += o->tasks_skipped;
    t->idle_ns += o->idle_ns;
    t->busy_ns += o->busy_ns;
    t->parks += o->parks;
    t->wakeups_sent += o->wakeups_sent;
    t->bytes_local += o->bytes_local;
    for (int l = 0; l < DF_N_LEVELS; l++)
        t->bytes_level[l] += o->bytes_level[l];
    t->slab_chunks += o->slab_chunks;
    t->wait_fallbacks += o->wait_fallbacks;
    t->jobs_inline += o->jobs_inline;
    t->idle_rounds += o->idle_rounds;
    t->idle_lines += o->idle_lines;
    if (o->max_wait_depth > t->max_wait_depth)
        t->max_wait_depth = o->max_wait_depth;
}

int df_sched_stats(DfSched *s, DfStats *out)
{
    memset(out, 0, sizeof(*out));
    out->workers = calloc((size_t)s->n_workers, sizeof(DfWorkerStats));
    if (!out->workers)
        return -ENOMEM;
    out->n_workers = s->n_workers;
    for (int i = 0; i < s->n_workers; i++) {
        snapshot(&s->workers[i], &out->workers[i]);
        out->workers[i].slab_chunks =
            atomic_load_explicit(&s->workers[i].cache->chunk_count, memory_order_relaxed);
    }
    pthread_mutex_lock(&s->cache_lock);
    uint64_t chunks = 0;
    for (DfCache *c = s->caches; c; c = c->next_all)
        chunks += atomic_load_explicit(&c->chunk_count, memory_order_relaxed);
    pthread_mutex_unlock(&s->cache_lock);
    for (int i = 0; i < s->n_workers; i++)
        add(&out->total, &out->workers[i]);
    out->total.slab_chunks = chunks;
    out->external_submits = atomic_load_explicit(&s->external_submits, memory_order_relaxed);
    return 0;
}

void df_stats_free(DfStats *stats)
{
    free(stats->workers);
    stats->workers = NULL;
}

void df_sched_stats_reset(DfSched *s)
{
    for (int i = 0; i < s->n_workers; i++) {
        DfWorker *w = &s->workers[i];
        DfCounters *c = &w->ctr;
        _Atomic uint64_t *p = (_Atomic uint64_t *)c;
        for (size_t k = 0; k < sizeof(*c) / sizeof(uint64_t); k++)
            atomic_store_explicit(&p[k], 0, memory_order_relaxed);
    }
    atomic_store_explicit(&s->external_submits, 0, memory_order_relaxed);
}

double df_stats_local_share(const DfStats *st)
{
    uint64_t all = 0;
    for (int l = 0; l < DF_N_LEVELS; l++)
        all += st->total.bytes_level[l];
    return all ? (double)st->total.bytes_local / (double)all : 1.0;
}

uint64_t df_sched_explored(const DfSched *s)
{
    uint64_t n = 0;
    for (int i = 0; i < s->n_workers; i++)
        n += LOAD(&s->workers[i], tasks_explored);
    return n;
}
