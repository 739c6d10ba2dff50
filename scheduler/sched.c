/* The scheduler object: configuration, creation of the policy, the
 * topology and the workers (whose loop is worker.c), teardown, modules and
 * the accessors of the public API. */
#include "sched_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef DF_TSAN
_Atomic unsigned df_tsan_fence_word; /* DF_FENCE_SEQ_CST() in TSan builds */
#endif

void df_sched_config_init(DfSchedConfig *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->policy = DF_POLICY_DEFAULT;
    cfg->poll_us = 50;
    cfg->pin = true;
    cfg->cost_model = DF_COST_HIER;
    cfg->explore_rate = 0.01;
}

static int64_t policy_clock(void *ctx)
{
    return df_now_ns();
}

static void sched_destroy(DfSched *s)
{
    if (s->workers)
        df_workers_stop(s);
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
    df_summary_fini(&s->parked);
    df_topo_fini(&s->topo);
    pthread_mutex_destroy(&s->cache_lock);
    pthread_mutex_destroy(&s->module_lock);
    pthread_mutex_destroy(&s->trace_lock);
    df_background_fini(&s->background);
    free(s);
}

/* A worker is born pinned: pinning from inside the thread left a window
 * in which it ran (and first-touched memory) anywhere, and in which
 * df_sched_worker_cpus() did not yet describe the threads. */
static int start_worker(DfSched *s, int i)
{
    const size_t stack = s->cfg.stack_size ? s->cfg.stack_size : 8u << 20;
    int ret = 0;
    for (int pin = 1; pin >= 0; pin--) {
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, stack);
        const bool pinned = pin && df_topo_pin_attr(&s->topo, i, &attr);
        ret = pthread_create(&s->workers[i].thread, &attr, df_worker_main, &s->workers[i]);
        pthread_attr_destroy(&attr);
        /* EINVAL: the pin set is not allowed here (a container, a cgroup
         * that shrank): run unpinned, the costs stay a model, which is
         * all the patent's scheme needs. */
        if (ret != EINVAL || !pinned)
            break;
    }
    return ret;
}

int df_sched_new(const DfSchedConfig *cfg_in, DfSched **out, DfError *err)
{
    DfSchedConfig defaults;
    if (!cfg_in) {
        df_sched_config_init(&defaults);
        cfg_in = &defaults;
    }
    *out = NULL;
    const char *pname = cfg_in->policy && *cfg_in->policy ? cfg_in->policy : DF_POLICY_DEFAULT;
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
    snprintf(s->policy_name, sizeof(s->policy_name), "%s", ops->info.name);
    s->cfg.policy = s->policy_name;
    s->cfg.topology = NULL; /* strings are not kept; the topology is built below */
    s->cfg.cpuset = NULL;
    s->pops = ops;
    pthread_mutex_init(&s->cache_lock, NULL);
    pthread_mutex_init(&s->module_lock, NULL);
    pthread_mutex_init(&s->trace_lock, NULL);
    df_background_init(&s->background);
    atomic_init(&s->next_node_id, 1);
    atomic_init(&s->next_group_id, 1);
    atomic_init(&s->n_streams, 0);
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
    const int sum_ret = df_summary_init(&s->parked, &s->topo, nw);
    s->workers = aligned_alloc(DF_CACHELINE, sizeof(DfWorker) * (size_t)nw);
    if (s->workers)
        memset(s->workers, 0, sizeof(DfWorker) * (size_t)nw); /* sched_destroy reads it */
    s->state = aligned_alloc(DF_CACHELINE, sizeof(DfWorkerState) * (size_t)nw);
    if (sum_ret < 0 || !s->workers || !s->state) {
        ret = df_set_error(err, -ENOMEM, "out of memory for %d workers", nw);
        goto fail;
    }
    for (int i = 0; i < nw; i++) {
        atomic_init(&s->state[i].v, DF_WS_IDLE);
        atomic_init(&s->state[i].beat, 0);
        atomic_init(&s->state[i].running, 0);
    }

    DfPolicyEnv env = {
        .n_workers = nw,
        .topo = &s->topo,
        .now = policy_clock,
        .seed = cfg_in->seed,
        .explore_rate = cfg_in->explore_rate,
        .state = s->state,
        .requeued = df_sched_requeued,
        .wake_ctx = s,
    };
    if (ops->create(&env, &s->policy) < 0) {
        ret = df_set_error(err, -ENOMEM, "cannot create policy %s", ops->info.name);
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

    for (int i = 0; i < nw; i++) {
        if (start_worker(s, i) != 0) {
            s->workers[i].thread = 0;
            ret = df_set_error(err, -EAGAIN, "cannot start worker %d of %d", i, nw);
            goto fail;
        }
        char name[16];
        snprintf(name, sizeof(name), "dfsched-%d", i & 0xffff);
        pthread_setname_np(s->workers[i].thread, name);
    }
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

int df_sched_worker_cpus(const DfSched *s, cpu_set_t *out)
{
    return df_topo_cpus(&s->topo, out);
}

int df_sched_worker_cpus_end(const DfSched *s)
{
    return df_topo_cpus_end(&s->topo);
}

int df_sched_worker_cpus_s(const DfSched *s, size_t setsize, cpu_set_t *out)
{
    return df_topo_cpus_s(&s->topo, setsize, out);
}

int df_sched_n_workers(const DfSched *s)
{
    return s->n_workers;
}

bool df_sched_splits_jobs(const DfSched *s)
{
    return s->n_workers > 1 || s->cfg.eager_jobs;
}

DfPolicy *df_sched_policy(DfSched *s)
{
    return s->policy;
}

const char *df_sched_policy_name(const DfSched *s)
{
    return s->policy_name;
}

uint32_t df_sched_trcost(const DfSched *s, int producer, int consumer)
{
    return df_topo_trcost(&s->topo, producer, consumer);
}

DfLevel df_sched_level(const DfSched *s, int producer, int consumer)
{
    return df_topo_level(&s->topo, producer, consumer);
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
