/* Measured load per stream: accounts that df_run_node charges with the
 * self time of their nodes (load_internal.h), a moving average of the
 * time per frame, and the scheduler's sum for admission (dfdec).
 *
 * The accounts of every scheduler sit in one registry under one mutex:
 * they are registered once per stream and summed once per admission
 * decision, never on a task's path. */
#include "load_internal.h"

#include <stdlib.h>

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static DfLoad *registry;

DfLoad *df_load_new(DfSched *s, double fps)
{
    if (!s)
        return NULL;
    DfLoad *l = calloc(1, sizeof(*l));
    if (!l)
        return NULL;
    if (pthread_mutex_init(&l->lock, NULL) != 0) {
        free(l);
        return NULL;
    }
    atomic_init(&l->ns, 0);
    l->sched = df_sched_ref(s);
    l->fps = fps;
    l->ring_t[0] = df_now_ns();
    pthread_mutex_lock(&registry_lock);
    l->next = registry;
    if (registry)
        registry->prev = l;
    registry = l;
    atomic_fetch_add_explicit(&s->n_streams, 1, memory_order_relaxed); /* struct DfSched */
    pthread_mutex_unlock(&registry_lock);
    return l;
}

void df_load_free(DfLoad *l)
{
    if (!l)
        return;
    pthread_mutex_lock(&registry_lock);
    if (l->prev)
        l->prev->next = l->next;
    else
        registry = l->next;
    if (l->next)
        l->next->prev = l->prev;
    atomic_fetch_sub_explicit(&l->sched->n_streams, 1, memory_order_relaxed); /* struct DfSched */
    pthread_mutex_unlock(&registry_lock);
    pthread_mutex_destroy(&l->lock);
    df_sched_unref(l->sched);
    free(l);
}

void df_load_set_fps(DfLoad *l, double fps)
{
    pthread_mutex_lock(&l->lock);
    l->fps = fps;
    pthread_mutex_unlock(&l->lock);
}

double df_load_fps(DfLoad *l)
{
    pthread_mutex_lock(&l->lock);
    const double fps = l->fps;
    pthread_mutex_unlock(&l->lock);
    return fps;
}

void df_load_add_ns(DfLoad *l, uint64_t ns)
{
    /* Relaxed, as a worker's add (struct DfLoad): an estimate. */
    if (l)
        atomic_fetch_add_explicit(&l->ns, ns, memory_order_relaxed);
}

void df_load_frame_done(DfLoad *l)
{
    /* Relaxed: see struct DfLoad for what orders a frame's adds before. */
    const uint64_t ns = atomic_load_explicit(&l->ns, memory_order_relaxed);
    const int64_t now = df_now_ns();
    pthread_mutex_lock(&l->lock);
    l->frames++;
    const size_t i = (size_t)(l->frames % (DF_LOAD_WINDOW + 1));
    l->ring_ns[i] = ns;
    l->ring_t[i] = now;
    pthread_mutex_unlock(&l->lock);
}

uint64_t df_load_frames(DfLoad *l)
{
    pthread_mutex_lock(&l->lock);
    const uint64_t n = l->frames;
    pthread_mutex_unlock(&l->lock);
    return n;
}

uint64_t df_load_total_ns(const DfLoad *l)
{
    return atomic_load_explicit(&((DfLoad *)l)->ns, memory_order_relaxed);
}

/* Time and wall time over the window ending at the last frame (lock held). */
static uint64_t window(const DfLoad *l, uint64_t *ns, int64_t *wall)
{
    if (l->frames == 0) {
        *ns = 0;
        *wall = 0;
        return 0;
    }
    const uint64_t w = l->frames < DF_LOAD_WINDOW ? l->frames : DF_LOAD_WINDOW;
    const size_t last = (size_t)(l->frames % (DF_LOAD_WINDOW + 1));
    const size_t first = (size_t)((l->frames - w) % (DF_LOAD_WINDOW + 1));
    *ns = l->ring_ns[last] - l->ring_ns[first];
    *wall = l->ring_t[last] - l->ring_t[first];
    return w;
}

static double ns_per_frame_locked(const DfLoad *l)
{
    uint64_t ns;
    int64_t wall;
    const uint64_t w = window(l, &ns, &wall);
    return w ? (double)ns / (double)w : 0.0;
}

static double cores_locked(const DfLoad *l)
{
    uint64_t ns;
    int64_t wall;
    const uint64_t w = window(l, &ns, &wall);
    if (!w)
        return 0.0;
    if (l->fps > 0)
        return (double)ns / (double)w * l->fps / 1e9;
    /* Unknown rate: the rate the frames completed at, i.e. the share of a
     * core the stream took over the window. */
    return wall > 0 ? (double)ns / (double)wall : 0.0;
}

double df_load_ns_per_frame(DfLoad *l)
{
    pthread_mutex_lock(&l->lock);
    const double v = ns_per_frame_locked(l);
    pthread_mutex_unlock(&l->lock);
    return v;
}

double df_load_cores(DfLoad *l)
{
    pthread_mutex_lock(&l->lock);
    const double v = cores_locked(l);
    pthread_mutex_unlock(&l->lock);
    return v;
}

void df_load_set_admitted(DfLoad *l, bool admitted)
{
    /* Lock order: registry, then the account (as df_sched_load). */
    pthread_mutex_lock(&registry_lock);
    pthread_mutex_lock(&l->lock);
    l->admitted = admitted;
    pthread_mutex_unlock(&l->lock);
    pthread_mutex_unlock(&registry_lock);
}

unsigned df_load_set_probation(DfLoad *l, bool on)
{
    unsigned rank = 0;
    bool others = false;
    pthread_mutex_lock(&registry_lock);
    for (const DfLoad *o = on ? registry : NULL; o; o = o->next) {
        if (o == l || o->sched != l->sched)
            continue;
        /* Read under the registry lock: written under it too (admitted
         * also under the account's, which df_sched_load takes inside). */
        others |= o->admitted || o->on_probation;
        if (o->probation > rank)
            rank = o->probation;
    }
    /* Alone on the scheduler: there is nobody to run behind, and as
     * ordinary work the stream keeps its placement (rank 0). */
    l->probation = others ? rank + 1 : 0;
    l->on_probation = on;
    pthread_mutex_unlock(&registry_lock);
    return l->probation;
}

int df_sched_n_streams(const DfSched *s)
{
    return atomic_load_explicit(&((DfSched *)s)->n_streams, memory_order_relaxed);
}

double df_sched_capacity(const DfSched *s)
{
    if (s->topo.oversubscribed && s->topo.n_pus > 0 && s->topo.n_pus < s->n_workers)
        return (double)s->topo.n_pus;
    return (double)s->n_workers;
}

void df_sched_load(DfSched *s, DfSchedLoad *out)
{
    *out = (DfSchedLoad){.capacity = df_sched_capacity(s)};
    /* Lock order: registry, then an account (nobody takes them the other
     * way round). */
    pthread_mutex_lock(&registry_lock);
    for (DfLoad *l = registry; l; l = l->next) {
        if (l->sched != s)
            continue;
        pthread_mutex_lock(&l->lock);
        const double c = cores_locked(l);
        if (l->admitted) {
            out->admitted += c;
            out->n_admitted++;
        } else {
            out->pending += c;
            out->n_pending++;
        }
        pthread_mutex_unlock(&l->lock);
    }
    pthread_mutex_unlock(&registry_lock);
}

void df_load_set_class(DfLoad *l, uint64_t cls)
{
    pthread_mutex_lock(&l->lock);
    l->cls = cls;
    pthread_mutex_unlock(&l->lock);
}

double df_load_class_ns_per_frame(DfLoad *self, int *n)
{
    pthread_mutex_lock(&self->lock);
    const uint64_t cls = self->cls;
    pthread_mutex_unlock(&self->lock);
    double sum = 0.0;
    int count = 0;
    /* Lock order: registry, then an account (as df_sched_load). */
    pthread_mutex_lock(&registry_lock);
    for (DfLoad *l = cls ? registry : NULL; l; l = l->next) {
        if (l == self || l->sched != self->sched)
            continue;
        pthread_mutex_lock(&l->lock);
        if (l->cls == cls && l->frames >= DF_LOAD_WINDOW) {
            sum += ns_per_frame_locked(l);
            count++;
        }
        pthread_mutex_unlock(&l->lock);
    }
    pthread_mutex_unlock(&registry_lock);
    if (n)
        *n = count;
    return count ? sum / count : 0.0;
}
