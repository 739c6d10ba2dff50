/* Topology: which core each worker runs on, and trCost between workers.
 *
 * hwloc gives the real machine and accepts synthetic descriptions, so the
 * cost model can be built (and tested, and simulated) for hierarchies much
 * larger than the machine.  With a synthetic topology the workers are still
 * pinned to real cores (round robin); only the costs come from the model. */
#include "sched_internal.h"

#include <errno.h>
#include <hwloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const uint32_t hier_cost[DF_N_LEVELS] = {0, 1, 2, 4, 8, 16};
static const uint32_t flat_cost[DF_N_LEVELS] = {0, 1, 1, 1, 1, 1};

const char *df_level_name(DfLevel level)
{
    static const char *const names[DF_N_LEVELS] = {"self", "pu", "l2", "l3", "numa", "machine"};
    return (unsigned)level < DF_N_LEVELS ? names[level] : "?";
}

static hwloc_obj_t numa_of(hwloc_topology_t topo, hwloc_obj_t pu)
{
    hwloc_obj_t n = NULL;
    while ((n = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, n)))
        if (n->cpuset && hwloc_bitmap_isset(n->cpuset, (int)pu->os_index))
            return n;
    return NULL;
}

static DfLevel level_between(hwloc_topology_t topo, hwloc_obj_t a, hwloc_obj_t b)
{
    if (a == b)
        return DF_LEVEL_PU;
    hwloc_obj_t ca = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, a);
    hwloc_obj_t cb = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, b);
    if (ca && ca == cb)
        return DF_LEVEL_PU;
    hwloc_obj_t anc = hwloc_get_common_ancestor_obj(topo, a, b);
    switch (anc->type) {
    case HWLOC_OBJ_L1CACHE:
    case HWLOC_OBJ_L2CACHE:
        return DF_LEVEL_L2;
    case HWLOC_OBJ_L3CACHE:
    case HWLOC_OBJ_L4CACHE:
    case HWLOC_OBJ_L5CACHE:
        return DF_LEVEL_L3;
    default:
        break;
    }
    hwloc_obj_t pa = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, a);
    hwloc_obj_t pb = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, b);
    if (pa == pb && numa_of(topo, a) == numa_of(topo, b))
        return DF_LEVEL_NUMA;
    return DF_LEVEL_MACHINE;
}

static void set_costs(DfTopo *t, DfCostModel model, const uint32_t *override)
{
    const uint32_t *base = model == DF_COST_FLAT ? flat_cost : hier_cost;
    for (int l = 0; l < DF_N_LEVELS; l++)
        t->level_cost[l] = (override && override[l] && l != DF_LEVEL_SELF) ? override[l] : base[l];
}

/* Levels and costs for workers placed on PUs `pus` of `topo`. */
static int fill_matrices(DfTopo *t, hwloc_topology_t topo, hwloc_obj_t *pus, DfError *err)
{
    size_t n = (size_t)t->n_workers;
    t->levels = malloc(n * n);
    t->trcost = malloc(n * n * sizeof(uint32_t));
    if (!t->levels || !t->trcost)
        return df_set_error(err, -ENOMEM, "out of memory for a %zu-worker cost matrix", n);
    for (size_t a = 0; a < n; a++)
        for (size_t b = 0; b < n; b++) {
            DfLevel l = a == b ? DF_LEVEL_SELF : level_between(topo, pus[a], pus[b]);
            t->levels[a * n + b] = (uint8_t)l;
            t->trcost[a * n + b] = t->level_cost[l];
        }
    return 0;
}

/* Place workers: one per core while there are enough cores, else one per PU
 * (SMT siblings adjacent), wrapping around when oversubscribed. */
static void place_workers(hwloc_topology_t topo, hwloc_const_cpuset_t allowed, int n_workers,
                          hwloc_obj_t *out)
{
    int n_cores = hwloc_get_nbobjs_inside_cpuset_by_type(topo, allowed, HWLOC_OBJ_CORE);
    int n_pus = hwloc_get_nbobjs_inside_cpuset_by_type(topo, allowed, HWLOC_OBJ_PU);
    for (int w = 0; w < n_workers; w++) {
        if (n_cores > 0 && n_workers <= n_cores) {
            hwloc_obj_t core =
                hwloc_get_obj_inside_cpuset_by_type(topo, allowed, HWLOC_OBJ_CORE, (unsigned)w);
            out[w] = hwloc_get_obj_inside_cpuset_by_type(topo, core->cpuset, HWLOC_OBJ_PU, 0);
        } else {
            out[w] = hwloc_get_obj_inside_cpuset_by_type(topo, allowed, HWLOC_OBJ_PU,
                                                         (unsigned)(w % n_pus));
        }
    }
}

static int load_topology(hwloc_topology_t *out, const char *synthetic, DfError *err)
{
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) < 0)
        return df_set_error(err, -ENOMEM, "hwloc_topology_init failed");
    if (synthetic && hwloc_topology_set_synthetic(topo, synthetic) < 0) {
        hwloc_topology_destroy(topo);
        return df_set_error(err, -EINVAL,
                            "invalid topology \"%s\" (hwloc synthetic syntax, e.g. "
                            "\"package:2 l3:2 core:4 pu:2\")",
                            synthetic);
    }
    if (hwloc_topology_load(topo) < 0) {
        hwloc_topology_destroy(topo);
        return df_set_error(err, -EIO, "hwloc could not load the topology");
    }
    *out = topo;
    return 0;
}

/* The machine's topology, loaded once for the process and then shared
 * read-only (hwloc allows concurrent readers).  Loading takes milliseconds,
 * and keeping one topology alive also keeps hwloc's component registry
 * initialised: its first initialisation asserts instead of failing when
 * malloc fails, so that must not be repeated for every scheduler. */
static pthread_mutex_t real_lock = PTHREAD_MUTEX_INITIALIZER;
static hwloc_topology_t real_topology;

static int get_real(hwloc_topology_t *out, DfError *err)
{
    pthread_mutex_lock(&real_lock);
    int ret = 0;
    if (!real_topology)
        ret = load_topology(&real_topology, NULL, err);
    *out = real_topology;
    pthread_mutex_unlock(&real_lock);
    return ret;
}

int df_topo_model(DfTopo *t, const char *topology, int n_workers, DfCostModel model,
                  const uint32_t *level_cost, DfError *err)
{
    memset(t, 0, sizeof(*t));
    hwloc_topology_t topo;
    int ret = topology ? load_topology(&topo, topology, err) : get_real(&topo, err);
    if (ret < 0)
        return ret;
    hwloc_const_cpuset_t all = hwloc_topology_get_topology_cpuset(topo);
    t->n_cores = hwloc_get_nbobjs_inside_cpuset_by_type(topo, all, HWLOC_OBJ_CORE);
    t->n_pus = hwloc_get_nbobjs_inside_cpuset_by_type(topo, all, HWLOC_OBJ_PU);
    if (n_workers <= 0)
        n_workers = t->n_cores > 0 ? t->n_cores : t->n_pus;
    t->n_workers = n_workers;
    t->synthetic = topology != NULL;
    t->oversubscribed = n_workers > t->n_pus;
    set_costs(t, model, level_cost);
    hwloc_obj_t *pus = calloc((size_t)n_workers, sizeof(*pus));
    t->model_pu = calloc((size_t)n_workers, sizeof(int));
    if (!pus || !t->model_pu) {
        free(pus);
        if (topology)
            hwloc_topology_destroy(topo);
        return df_set_error(err, -ENOMEM, "out of memory");
    }
    place_workers(topo, all, n_workers, pus);
    for (int w = 0; w < n_workers; w++)
        t->model_pu[w] = (int)pus[w]->logical_index;
    ret = fill_matrices(t, topo, pus, err);
    snprintf(t->desc, sizeof(t->desc), "%d workers on %s (%d cores, %d PUs)", n_workers,
             topology ? topology : "this machine", t->n_cores, t->n_pus);
    free(pus);
    if (topology)
        hwloc_topology_destroy(topo);
    return ret;
}

int df_topo_init(DfTopo *t, const DfSchedConfig *cfg, DfError *err)
{
    memset(t, 0, sizeof(*t));
    hwloc_topology_t real;
    int ret = get_real(&real, err);
    if (ret < 0)
        return ret;
    t->real = real;

    hwloc_bitmap_t allowed = hwloc_bitmap_alloc();
    if (!allowed) {
        ret = df_set_error(err, -ENOMEM, "out of memory");
        goto fail;
    }
    if (cfg->cpuset && *cfg->cpuset) {
        if (hwloc_bitmap_list_sscanf(allowed, cfg->cpuset) < 0 || hwloc_bitmap_iszero(allowed)) {
            ret = df_set_error(err, -EINVAL, "invalid CPU set \"%s\" (expected a list like 0-3,6)",
                               cfg->cpuset);
            goto fail;
        }
        hwloc_bitmap_and(allowed, allowed, hwloc_topology_get_allowed_cpuset(real));
        if (hwloc_bitmap_iszero(allowed)) {
            ret = df_set_error(err, -EINVAL, "CPU set \"%s\" has no CPU this process may use",
                               cfg->cpuset);
            goto fail;
        }
    } else {
        /* The process's affinity straight from the kernel: hwloc's
         * get_proc_cpubind crashes when one of its allocations fails. */
        cpu_set_t set;
        CPU_ZERO(&set);
        if (sched_getaffinity(0, sizeof(set), &set) == 0) {
            for (int c = 0; c < CPU_SETSIZE; c++)
                if (CPU_ISSET(c, &set) && hwloc_bitmap_set(allowed, (unsigned)c) < 0) {
                    ret = df_set_error(err, -ENOMEM, "out of memory");
                    goto fail;
                }
            hwloc_bitmap_and(allowed, allowed, hwloc_topology_get_allowed_cpuset(real));
        }
        if (hwloc_bitmap_iszero(allowed) &&
            hwloc_bitmap_copy(allowed, hwloc_topology_get_allowed_cpuset(real)) < 0) {
            ret = df_set_error(err, -ENOMEM, "out of memory");
            goto fail;
        }
    }

    t->n_cores = hwloc_get_nbobjs_inside_cpuset_by_type(real, allowed, HWLOC_OBJ_CORE);
    t->n_pus = hwloc_get_nbobjs_inside_cpuset_by_type(real, allowed, HWLOC_OBJ_PU);
    if (t->n_cores <= 0)
        t->n_cores = t->n_pus;
    if (t->n_pus <= 0) {
        ret = df_set_error(err, -ENODEV, "no usable CPU found");
        goto fail;
    }
    int n = cfg->n_workers > 0 ? cfg->n_workers : t->n_cores;
    if (n > 4096) {
        ret = df_set_error(err, -EINVAL, "%d workers requested; at most 4096", n);
        goto fail;
    }
    t->n_workers = n;
    t->oversubscribed = n > t->n_pus;

    hwloc_obj_t *pus = calloc((size_t)n, sizeof(*pus));
    if (!pus) {
        ret = df_set_error(err, -ENOMEM, "out of memory");
        goto fail;
    }
    place_workers(real, allowed, n, pus);
    if (cfg->pin) {
        t->pin_sets = calloc((size_t)n, sizeof(cpu_set_t));
        if (!t->pin_sets) {
            free(pus);
            ret = df_set_error(err, -ENOMEM, "out of memory");
            goto fail;
        }
        for (int w = 0; w < n; w++) {
            hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(real, HWLOC_OBJ_CORE, pus[w]);
            hwloc_bitmap_t set =
                hwloc_bitmap_dup(core && n <= t->n_cores ? core->cpuset : pus[w]->cpuset);
            if (!set || hwloc_bitmap_and(set, set, allowed) < 0) {
                hwloc_bitmap_free(set);
                free(pus);
                ret = df_set_error(err, -ENOMEM, "out of memory");
                goto fail;
            }
            /* A glibc set, so that pinning in the worker allocates nothing
             * (hwloc_set_cpubind crashes when its allocation fails). */
            cpu_set_t *cs = &((cpu_set_t *)t->pin_sets)[w];
            CPU_ZERO(cs);
            for (int c = hwloc_bitmap_first(set); c >= 0 && c < CPU_SETSIZE;
                 c = hwloc_bitmap_next(set, c))
                CPU_SET(c, cs);
            hwloc_bitmap_free(set);
        }
    }

    if (cfg->topology && *cfg->topology) {
        free(pus);
        DfTopo model;
        ret = df_topo_model(&model, cfg->topology, n, cfg->cost_model, cfg->level_cost, err);
        if (ret < 0)
            goto fail;
        t->synthetic = true;
        t->model_pu = model.model_pu;
        t->levels = model.levels;
        t->trcost = model.trcost;
        memcpy(t->level_cost, model.level_cost, sizeof(t->level_cost));
    } else {
        set_costs(t, cfg->cost_model, cfg->level_cost);
        t->model_pu = calloc((size_t)n, sizeof(int));
        if (!t->model_pu) {
            free(pus);
            ret = df_set_error(err, -ENOMEM, "out of memory");
            goto fail;
        }
        for (int w = 0; w < n; w++)
            t->model_pu[w] = (int)pus[w]->logical_index;
        ret = fill_matrices(t, real, pus, err);
        free(pus);
        if (ret < 0)
            goto fail;
    }
    char cpus[128];
    hwloc_bitmap_list_snprintf(cpus, sizeof(cpus), allowed);
    snprintf(t->desc, sizeof(t->desc), "%d workers on %d cores (CPUs %s)%s%s%s", n, t->n_cores,
             cpus, t->oversubscribed ? ", oversubscribed" : "",
             cfg->topology && *cfg->topology ? ", cost model " : "",
             cfg->topology && *cfg->topology ? cfg->topology : "");
    hwloc_bitmap_free(allowed);
    return 0;

fail:
    hwloc_bitmap_free(allowed);
    df_topo_fini(t);
    return ret;
}

void df_topo_fini(DfTopo *t)
{
    free(t->pin_sets);
    /* t->real is the shared process topology: kept. */
    free(t->model_pu);
    free(t->levels);
    free(t->trcost);
    memset(t, 0, sizeof(*t));
}

int df_topo_cpus(const DfTopo *t, cpu_set_t *out)
{
    if (!t->pin_sets)
        return -ENOENT;
    CPU_ZERO(out);
    for (int w = 0; w < t->n_workers; w++)
        CPU_OR(out, out, &((const cpu_set_t *)t->pin_sets)[w]);
    return CPU_COUNT(out) > 0 ? 0 : -ENOENT;
}

void df_topo_pin(const DfTopo *t, int w)
{
    if (!t->pin_sets)
        return;
    /* Failure (e.g. a container forbids it) leaves the thread unpinned:
     * the costs stay a model, which is all the patent's scheme needs. */
    const cpu_set_t *cs = &((const cpu_set_t *)t->pin_sets)[w];
    if (CPU_COUNT(cs) > 0)
        pthread_setaffinity_np(pthread_self(), sizeof(*cs), cs);
}
