/* The scheduler: workers started once and pinned, the idle loop (spin with
 * a pause instruction, then park on a futex; poll mode never parks), and
 * the hand-off of ready nodes to the policy.
 *
 * Parking is a Dekker (store-buffering) handshake in two phases, as in
 * Taskflow's notifier: a worker announces itself (parked_mask, n_parked),
 * fences, re-checks for work and only then sleeps; a producer publishes
 * work, fences, then reads n_parked.  The two seq_cst fences (DF_FENCE_SEQ_CST)
 * are what C11 needs to exclude the outcome where each side misses the
 * other's store; seq_cst RMWs alone do not order the relaxed loads after
 * them on AArch64 or POWER.  The futex word closes the last gap: the worker
 * reads it before announcing and sleeps only if it is unchanged, and every
 * waker bumps it before the futex wake.  In poll mode nobody parks and
 * producers skip the check: no system call anywhere on the path of a task. */
#include "sched_internal.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* initial-exec: a plain %fs-relative load instead of a __tls_get_addr call
 * per access (libdfsched ends up in the dfdec plugin, a shared object that
 * GStreamer dlopens; 8 bytes fit glibc's static TLS surplus). */
static _Thread_local DfWorker *tls_worker __attribute__((tls_model("initial-exec")));

#ifdef DF_TSAN
_Atomic unsigned df_tsan_fence_word; /* DF_FENCE_SEQ_CST() in TSan builds */
#endif

void df_sched_config_init(DfSchedConfig *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->policy = "cost-local";
    cfg->poll_us = 50;
    cfg->pin = true;
    cfg->cost_model = DF_COST_HIER;
    cfg->explore_rate = 0.01;
}

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

static int64_t policy_clock(void *ctx)
{
    return df_now_ns();
}

/* ------------------------------------------------------------ parking */

static bool clear_parked(DfSched *s, int i)
{
    uint64_t bit = 1ull << (i & 63);
    /* The RMW decides which of several wakers owns the wake-up of i. */
    if (!(atomic_fetch_and_explicit(&s->parked_mask[i >> 6], ~bit, memory_order_seq_cst) & bit))
        return false;
    atomic_fetch_sub_explicit(&s->n_parked, 1, memory_order_seq_cst);
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

/* The parked worker nearest to `near` (least trCost from it), or -1. */
static int nearest_parked(DfSched *s, int near)
{
    const int nw = s->n_workers;
    int best = -1;
    uint32_t best_cost = UINT32_MAX;
    for (int k = 0; k < s->mask_words; k++) {
        uint64_t m = atomic_load_explicit(&s->parked_mask[k], memory_order_relaxed);
        while (m) {
            const int i = k * 64 + __builtin_ctzll(m);
            m &= m - 1;
            if (near < 0)
                return i;
            const uint32_t c = s->topo.trcost[(size_t)near * (size_t)nw + (size_t)i];
            if (c < best_cost) {
                best = i;
                best_cost = c;
            }
        }
    }
    return best;
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
    for (int tries = 0; tries < s->n_workers; tries++) {
        const int i = nearest_parked(s, near);
        if (i < 0)
            return;
        if (clear_parked(s, i)) {
            wake_worker(s, i);
            return;
        }
    }
}

static bool should_stop_parking(DfSched *s, DfWorker *w, DfGroup *g)
{
    return atomic_load_explicit(&s->stop, memory_order_relaxed) || (g && df_group_done(g)) ||
           s->pops->has_work(s->policy, w->index);
}

static void park(DfSched *s, DfWorker *w, DfGroup *g)
{
    const int i = w->index;
    /* Read before announcing; pairs with the RMW in wake_worker. */
    uint32_t seq = atomic_load_explicit(&w->park_word, memory_order_seq_cst);
    if (g) {
        atomic_store_explicit(&w->waiting_on, g, memory_order_seq_cst);
        /* Pairs with the load of n_waiters in df_group_node_finished. */
        atomic_fetch_add_explicit(&g->n_waiters, 1, memory_order_seq_cst);
    }
    atomic_fetch_or_explicit(&s->parked_mask[i >> 6], 1ull << (i & 63), memory_order_seq_cst);
    atomic_fetch_add_explicit(&s->n_parked, 1, memory_order_seq_cst);
    /* Phase two: the announcement above must be visible before the
     * re-check below reads the ready sets and the group.  Pairs with the
     * fence in make_ready / df_sched_requeued (after a push, before reading
     * n_parked) and in df_group_node_finished (after pending reached 0,
     * before reading n_waiters). */
    DF_FENCE_SEQ_CST();
    if (should_stop_parking(s, w, g)) {
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
    if (nested && s->cfg.poll_us >= 0 && !df_ready_own_empty(s, w->index)) {
        DF_FENCE_SEQ_CST(); /* as in make_ready */
        if (atomic_load_explicit(&s->n_parked, memory_order_relaxed) > 0)
            df_wake_near(s, -1, true, w->index);
    }
    const int64_t start = df_now_ns();
    const int64_t limit = (int64_t)s->cfg.poll_us * 1000;
    unsigned round = 0;
    for (;;) {
        for (int k = 0; k < 32; k++)
            df_cpu_relax();
        atomic_store_explicit(&s->state[w->index].beat, df_now_ns(), memory_order_relaxed);
        if (should_stop_parking(s, w, g))
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
static void requeued(void *ctx, int w)
{
    DfSched *s = ctx;
    if (s->cfg.poll_us < 0)
        return;
    /* Pairs with the fence in park, like the one in make_ready. */
    DF_FENCE_SEQ_CST();
    if (atomic_load_explicit(&s->n_parked, memory_order_relaxed) == 0)
        return;
    const bool spinning = atomic_load_explicit(&s->state[w].v, memory_order_relaxed) == DF_WS_IDLE;
    df_wake_near(s, w, !spinning, w);
}

static void make_ready(DfSched *s, DfWorker *self, DfNode *n, bool running)
{
    if (atomic_load_explicit(&s->tracing, memory_order_relaxed))
        n->ready_ns = df_now_ns();
    DfPlacement p = s->pops->push(s->policy, self ? self->index : -1, n);
    if (!self)
        atomic_fetch_add_explicit(&s->external_submits, 1, memory_order_relaxed);
    if (s->cfg.poll_us < 0)
        return; /* poll mode: every idle worker is spinning */
    /* Phase two of the producer's side: the push above must be visible
     * before n_parked is read; pairs with the fence in park. */
    DF_FENCE_SEQ_CST();
    if (atomic_load_explicit(&s->n_parked, memory_order_relaxed) == 0)
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

/* ------------------------------------------------------------ workers */

static void *worker_main(void *arg)
{
    DfWorker *w = arg;
    DfSched *s = w->sched;
    tls_worker = w;
    w->stack_base = (uintptr_t)__builtin_frame_address(0);
    w->stack_size = s->cfg.stack_size ? s->cfg.stack_size : 8u << 20;
    df_topo_pin(&s->topo, w->index);
    atomic_fetch_add_explicit(&s->started, 1, memory_order_release);
    while (!atomic_load_explicit(&s->stop, memory_order_acquire)) {
        DfNode *n = s->pops->pop(s->policy, w->index, NULL);
        if (n) {
            df_worker_set_state(w, DF_WS_RUNNING);
            df_run_node(w, n);
        } else {
            df_worker_idle(w, NULL, false);
        }
    }
    tls_worker = NULL;
    return NULL;
}

DfCache *df_cache_new_for_worker(DfSched *s, int worker);
void df_cache_thread_exit(void *p);
void df_trace_fini(DfSched *s);

static void sched_destroy(DfSched *s)
{
    if (s->workers) {
        atomic_store_explicit(&s->stop, true, memory_order_seq_cst);
        for (int i = 0; i < s->n_workers; i++) {
            if (s->parked_mask) /* NULL when creation failed early */
                clear_parked(s, i);
            atomic_fetch_add_explicit(&s->workers[i].park_word, 1, memory_order_seq_cst);
            df_futex_wake(&s->workers[i].park_word, 1);
        }
        for (int i = 0; i < s->n_workers; i++)
            if (s->workers[i].thread)
                pthread_join(s->workers[i].thread, NULL);
    }
    df_trace_fini(s);
    if (s->policy)
        s->pops->destroy(s->policy);
    pthread_key_delete(s->cache_key);
    DfCache *c = s->caches;
    while (c) {
        DfCache *next = c->next_all;
        df_cache_fini(c);
        free(c);
        c = next;
    }
    for (int i = 0; i < s->n_modules; i++)
        free(s->module_names[i]);
    free(s->workers);
    free(s->state);
    free((void *)s->parked_mask);
    df_topo_fini(&s->topo);
    pthread_mutex_destroy(&s->cache_lock);
    pthread_mutex_destroy(&s->module_lock);
    pthread_mutex_destroy(&s->trace_lock);
    free(s);
}

int df_sched_new(const DfSchedConfig *cfg_in, DfSched **out, DfError *err)
{
    DfSchedConfig defaults;
    if (!cfg_in) {
        df_sched_config_init(&defaults);
        cfg_in = &defaults;
    }
    *out = NULL;
    const char *pname = cfg_in->policy && *cfg_in->policy ? cfg_in->policy : "cost-local";
    const DfPolicyOps *ops = df_policy_find(pname);
    if (!ops) {
        char list[128] = "";
        for (const char *const *n = df_policy_names(); *n; n++) {
            strncat(list, *n, sizeof(list) - strlen(list) - 1);
            if (n[1])
                strncat(list, ", ", sizeof(list) - strlen(list) - 1);
        }
        return df_set_error(err, -EINVAL, "unknown policy \"%s\" (one of: %s)", pname, list);
    }
    if (cfg_in->n_workers < 0)
        return df_set_error(err, -EINVAL, "worker count %d is negative", cfg_in->n_workers);
    if (cfg_in->poll_us < -1)
        return df_set_error(err, -EINVAL, "poll time %d us is invalid (-1 = poll mode)",
                            cfg_in->poll_us);
    if (cfg_in->explore_rate < 0 || cfg_in->explore_rate > 0.5)
        return df_set_error(err, -EINVAL, "exploration rate %g is outside 0..0.5",
                            cfg_in->explore_rate);

    DfSched *s = aligned_alloc(DF_CACHELINE,
                               (sizeof(DfSched) + DF_CACHELINE - 1) & ~(size_t)(DF_CACHELINE - 1));
    if (!s)
        return df_set_error(err, -ENOMEM, "out of memory");
    memset(s, 0, sizeof(*s));
    atomic_init(&s->refs, 1);
    s->cfg = *cfg_in;
    snprintf(s->policy_name, sizeof(s->policy_name), "%s", ops->name);
    s->cfg.policy = s->policy_name;
    s->cfg.topology = NULL; /* strings are not kept; the topology is built below */
    s->cfg.cpuset = NULL;
    s->pops = ops;
    pthread_mutex_init(&s->cache_lock, NULL);
    pthread_mutex_init(&s->module_lock, NULL);
    pthread_mutex_init(&s->trace_lock, NULL);
    atomic_init(&s->next_node_id, 1);
    atomic_init(&s->next_group_id, 1);
    if (pthread_key_create(&s->cache_key, df_cache_thread_exit) != 0) {
        free(s);
        return df_set_error(err, -EAGAIN, "no pthread key left");
    }

    int ret = df_topo_init(&s->topo, cfg_in, err);
    if (ret < 0) {
        pthread_key_delete(s->cache_key);
        free(s);
        return ret;
    }
    const int nw = s->topo.n_workers;
    s->n_workers = nw;
    s->node_size = sizeof(DfNode) + ops->node_scratch(nw);
    s->policy_timing = ops->needs_timing;
    s->mask_words = (nw + 63) / 64;
    s->parked_mask = calloc((size_t)s->mask_words, sizeof(uint64_t));
    s->workers = aligned_alloc(DF_CACHELINE, sizeof(DfWorker) * (size_t)nw);
    if (s->workers)
        memset(s->workers, 0, sizeof(DfWorker) * (size_t)nw); /* sched_destroy reads it */
    s->state = aligned_alloc(DF_CACHELINE, sizeof(DfWorkerState) * (size_t)nw);
    if (!s->parked_mask || !s->workers || !s->state) {
        ret = df_set_error(err, -ENOMEM, "out of memory for %d workers", nw);
        goto fail;
    }
    for (int i = 0; i < nw; i++) {
        atomic_init(&s->state[i].v, DF_WS_IDLE);
        atomic_init(&s->state[i].beat, 0);
    }

    DfPolicyEnv env = {
        .n_workers = nw,
        .trcost = s->topo.trcost,
        .levels = s->topo.levels,
        .now = policy_clock,
        .seed = cfg_in->seed,
        .explore_rate = cfg_in->explore_rate,
        .state = s->state,
        .requeued = requeued,
        .wake_ctx = s,
    };
    if (ops->create(&env, &s->policy) < 0) {
        ret = df_set_error(err, -ENOMEM, "cannot create policy %s", ops->name);
        goto fail;
    }
    s->policy->ops = ops;
    for (int i = 0; i < nw; i++) {
        DfWorker *w = &s->workers[i];
        w->sched = s;
        w->index = i;
        w->rng = (cfg_in->seed ? cfg_in->seed : 88172645463325252ull) +
                 (uint64_t)i * 0x9e3779b97f4a7c15ull;
        w->cache = df_cache_new_for_worker(s, i);
        if (!w->cache) {
            ret = df_set_error(err, -ENOMEM, "out of memory for worker caches");
            goto fail;
        }
    }
    if (cfg_in->trace_capacity > 0 && df_sched_trace_start(s, cfg_in->trace_capacity) < 0) {
        ret = df_set_error(err, -ENOMEM, "out of memory for trace buffers");
        goto fail;
    }

    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, cfg_in->stack_size ? cfg_in->stack_size : 8u << 20);
    for (int i = 0; i < nw; i++) {
        if (pthread_create(&s->workers[i].thread, &attr, worker_main, &s->workers[i]) != 0) {
            s->workers[i].thread = 0;
            pthread_attr_destroy(&attr);
            ret = df_set_error(err, -EAGAIN, "cannot start worker %d of %d", i, nw);
            goto fail;
        }
        char name[16];
        snprintf(name, sizeof(name), "dfsched-%d", i & 0xffff);
        pthread_setname_np(s->workers[i].thread, name);
    }
    pthread_attr_destroy(&attr);
    *out = s;
    return 0;

fail:
    sched_destroy(s);
    return ret;
}

DfSched *df_sched_ref(DfSched *s)
{
    atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
    return s;
}

static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static DfSched *shared_sched;

void df_sched_unref(DfSched *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&shared_lock);
    bool last = atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) == 1;
    if (last && s == shared_sched)
        shared_sched = NULL;
    pthread_mutex_unlock(&shared_lock);
    if (last)
        sched_destroy(s);
}

int df_sched_get_shared(const DfSchedConfig *cfg, DfSched **out, DfError *err)
{
    pthread_mutex_lock(&shared_lock);
    int ret = 0;
    if (shared_sched) {
        *out = df_sched_ref(shared_sched);
    } else {
        ret = df_sched_new(cfg, &shared_sched, err);
        *out = shared_sched;
    }
    pthread_mutex_unlock(&shared_lock);
    return ret;
}

int df_sched_learned_model(DfSched *s, DfLearnedModel *out)
{
    int ret = df_policy_learned_model(s->policy, out);
    if (ret < 0)
        return ret;
    for (int i = 0; i < s->n_workers; i++)
        out->explored +=
            atomic_load_explicit(&s->workers[i].ctr.tasks_explored, memory_order_relaxed);
    return 0;
}

int df_sched_worker_cpus(const DfSched *s, cpu_set_t *out)
{
    return df_topo_cpus(&s->topo, out);
}

int df_sched_n_workers(const DfSched *s)
{
    return s->n_workers;
}

const char *df_sched_policy_name(const DfSched *s)
{
    return s->policy_name;
}

const uint32_t *df_sched_trcost(const DfSched *s)
{
    return s->topo.trcost;
}

const uint8_t *df_sched_levels(const DfSched *s)
{
    return s->topo.levels;
}

bool df_sched_oversubscribed(const DfSched *s)
{
    return s->topo.oversubscribed;
}

void df_sched_describe(const DfSched *s, char *buf, size_t len)
{
    snprintf(buf, len, "%s, policy %s, %s", s->topo.desc, s->policy_name,
             s->cfg.poll_us < 0 ? "poll mode" : "park after spin");
}

int df_sched_module_id(DfSched *s, const char *name)
{
    if (!name)
        return -1;
    pthread_mutex_lock(&s->module_lock);
    int id = -1;
    for (int i = 0; i < s->n_modules; i++)
        if (strcmp(s->module_names[i], name) == 0) {
            id = i;
            break;
        }
    if (id < 0 && s->n_modules < DF_MAX_MODULES) {
        char *copy = strdup(name);
        if (copy) {
            id = s->n_modules;
            s->module_names[id] = copy;
            /* Every reader of the names holds module_lock: no fence. */
            s->n_modules = id + 1;
        }
    }
    pthread_mutex_unlock(&s->module_lock);
    return id;
}

const char *df_sched_module_name(const DfSched *s, int module)
{
    DfSched *m = (DfSched *)s;
    pthread_mutex_lock(&m->module_lock);
    const char *name = module >= 0 && module < s->n_modules ? s->module_names[module] : "?";
    pthread_mutex_unlock(&m->module_lock);
    return name;
}
