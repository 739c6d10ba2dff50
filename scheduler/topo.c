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

/* An object's key: unique in the topology (gp_index counts from 1). */
static uint64_t key_of(const struct hwloc_obj *o)
{
    return o ? (uint64_t)o->gp_index : 0;
}

/* The outermost ancestor of `pu` whose type is one of `types`, or NULL. */
static hwloc_obj_t outermost(hwloc_obj_t pu, const hwloc_obj_type_t *types, int n_types)
{
    hwloc_obj_t best = NULL;
    for (hwloc_obj_t o = pu->parent; o; o = o->parent)
        for (int k = 0; k < n_types; k++)
            if (o->type == types[k])
                best = o;
    return best;
}

/* Worker w's domain at each level PU..NUMA (see df_topo_level): the core
 * (or the PU itself), the outermost L1/L2 cache, the outermost L3-L5
 * cache, the package with the NUMA node.  A worker with no cache at a
 * level gets a key no other worker has there (bit 63 set, its index);
 * "no package" and "no NUMA node" compare equal, as hwloc's NULLs did. */
static void fill_keys(DfTopo *t, hwloc_topology_t topo, hwloc_obj_t *pus)
{
    static const hwloc_obj_type_t l2[] = {HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE};
    static const hwloc_obj_type_t l3[] = {HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L4CACHE, HWLOC_OBJ_L5CACHE};
    for (int w = 0; w < t->n_workers; w++) {
        uint64_t *k = t->keys + (size_t)w * DF_TOPO_KEYS;
        const uint64_t none = (1ull << 63) | (uint64_t)w;
        hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, pus[w]);
        k[DF_LEVEL_PU - DF_LEVEL_PU] = key_of(core ? core : pus[w]);
        hwloc_obj_t c2 = outermost(pus[w], l2, 2), c3 = outermost(pus[w], l3, 3);
        k[DF_LEVEL_L2 - DF_LEVEL_PU] = c2 ? key_of(c2) : none;
        k[DF_LEVEL_L3 - DF_LEVEL_PU] = c3 ? key_of(c3) : none;
        hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, pus[w]);
        k[DF_LEVEL_NUMA - DF_LEVEL_PU] = key_of(pkg) << 32 | key_of(numa_of(topo, pus[w]));
    }
}

/* The other worker nearest to w: least trCost, then least index distance
 * (w+1, w+2, ... cyclically), as a victim order sorted by those two keys
 * starts.  Walks each level's candidates from w + 1 on and stops at the
 * first of that level, so it is O(n) per worker only on odd placements. */
static int nearest_of(const DfTopo *t, int w)
{
    const int n = t->n_workers;
    int best = w;
    uint32_t best_cost = UINT32_MAX;
    int best_dist = n;
    bool found[DF_N_LEVELS] = {[DF_LEVEL_SELF] = true};
    for (int d = 1; d < n; d++) {
        const int v = (w + d) % n;
        const DfLevel l = df_topo_level(t, v, w);
        if (found[l])
            continue;
        found[l] = true;
        const uint32_t c = t->level_cost[l];
        if (c < best_cost || (c == best_cost && d < best_dist)) {
            best = v;
            best_cost = c;
            best_dist = d;
        }
        /* Farther candidates win only at a level that is cheaper still. */
        bool cheaper_left = false;
        for (int k = DF_LEVEL_PU; k < DF_N_LEVELS; k++)
            cheaper_left |= !found[k] && t->level_cost[k] < best_cost;
        if (!cheaper_left)
            break;
    }
    return best;
}

static void set_costs(DfTopo *t, DfCostModel model, const uint32_t *override)
{
    const uint32_t *base = model == DF_COST_FLAT ? flat_cost : hier_cost;
    for (int l = 0; l < DF_N_LEVELS; l++)
        t->level_cost[l] = (override && override[l] && l != DF_LEVEL_SELF) ? override[l] : base[l];
}

/* Scatter order (DfTopo.scatter).  Each worker gets a digit per level: its
 * rank among the workers of its core, its core's among the cores of its
 * L2, and so on up to its NUMA node's among all, ranks in order of first
 * appearance by worker index.  Sorted by those digits with the worker's
 * own most significant, consecutive workers differ first in NUMA node,
 * then L3, L2, core: what a round robin over the order should visit.
 * O(n log n) per level. */
#define SCATTER_LEVELS (DF_TOPO_KEYS + 1)

typedef struct ScatterRow {
    uint64_t parent, key;
    int first, w;
} ScatterRow;

/* Domain of worker w at scatter level j: itself, then its keys, then one
 * machine. */
static uint64_t scatter_key(const DfTopo *t, int w, int j)
{
    if (j == 0)
        return (uint64_t)w;
    return j <= DF_TOPO_KEYS ? t->keys[(size_t)w * DF_TOPO_KEYS + (size_t)(j - 1)] : 0;
}

static int by_key_then_worker(const void *a, const void *b)
{
    const ScatterRow *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->w > y->w) - (x->w < y->w);
}

static int by_parent_then_first(const void *a, const void *b)
{
    const ScatterRow *x = a, *y = b;
    if (x->parent != y->parent)
        return x->parent < y->parent ? -1 : 1;
    if (x->first != y->first)
        return (x->first > y->first) - (x->first < y->first);
    return (x->w > y->w) - (x->w < y->w);
}

/* Workers by their digits (ctx: SCATTER_LEVELS per worker). */
static int by_digits(const void *a, const void *b, void *ctx)
{
    const int x = *(const int *)a, y = *(const int *)b;
    const int *dx = (const int *)ctx + (size_t)x * SCATTER_LEVELS;
    const int *dy = (const int *)ctx + (size_t)y * SCATTER_LEVELS;
    for (int j = 0; j < SCATTER_LEVELS; j++)
        if (dx[j] != dy[j])
            return (dx[j] > dy[j]) - (dx[j] < dy[j]);
    return (x > y) - (x < y);
}

static int fill_scatter(DfTopo *t, DfError *err)
{
    const int n = t->n_workers;
    ScatterRow *r = calloc((size_t)n, sizeof(*r));
    int *digits = malloc(sizeof(int) * (size_t)n * SCATTER_LEVELS);
    t->scatter = malloc(sizeof(int) * (size_t)n);
    t->scatter_pos = malloc(sizeof(int) * (size_t)n);
    if (!r || !digits || !t->scatter || !t->scatter_pos) {
        free(r);
        free(digits);
        return df_set_error(err, -ENOMEM, "out of memory for the topology of %d workers", n);
    }
    for (int j = 0; j < SCATTER_LEVELS; j++) {
        for (int w = 0; w < n; w++)
            r[w] = (ScatterRow){
                .parent = scatter_key(t, w, j + 1), .key = scatter_key(t, w, j), .w = w};
        /* The first worker of each domain at level j... */
        qsort(r, (size_t)n, sizeof(*r), by_key_then_worker);
        for (int i = 0; i < n; i++)
            r[i].first = i > 0 && r[i].key == r[i - 1].key ? r[i - 1].first : r[i].w;
        /* ...numbers the domains within their parent. */
        qsort(r, (size_t)n, sizeof(*r), by_parent_then_first);
        int rank = 0;
        for (int i = 0; i < n; i++) {
            if (i > 0 && r[i].parent != r[i - 1].parent)
                rank = 0;
            else if (i > 0 && r[i].first != r[i - 1].first)
                rank++;
            digits[(size_t)r[i].w * SCATTER_LEVELS + (size_t)j] = rank;
        }
    }
    for (int w = 0; w < n; w++)
        t->scatter[w] = w;
    qsort_r(t->scatter, (size_t)n, sizeof(int), by_digits, digits);
    for (int i = 0; i < n; i++)
        t->scatter_pos[t->scatter[i]] = i;
    free(r);
    free(digits);
    return 0;
}

/* Domain keys of workers placed on PUs `pus` of `topo`, their nearest
 * others and the scatter order: n x DF_TOPO_KEYS words and 3n ints, where
 * a matrix of levels and costs would be n x n. */
static int fill_keys_and_nearest(DfTopo *t, hwloc_topology_t topo, hwloc_obj_t *pus, DfError *err)
{
    const size_t n = (size_t)t->n_workers;
    t->keys = malloc(n * DF_TOPO_KEYS * sizeof(uint64_t));
    t->nearest = malloc(n * sizeof(int));
    if (!t->keys || !t->nearest)
        return df_set_error(err, -ENOMEM, "out of memory for the topology of %zu workers", n);
    fill_keys(t, topo, pus);
    for (int w = 0; w < (int)n; w++)
        t->nearest[w] = nearest_of(t, w);
    return fill_scatter(t, err);
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
    ret = fill_keys_and_nearest(t, topo, pus, err);
    snprintf(t->desc, sizeof(t->desc), "%d workers on %s (%d cores, %d PUs)", n_workers,
             topology ? topology : "this machine", t->n_cores, t->n_pus);
    free(pus);
    if (topology)
        hwloc_topology_destroy(topo);
    return ret;
}

/* The calling process's CPU affinity, within `limit`, into `out` (left
 * empty when the kernel does not say; the caller then takes `limit`). */
static int process_cpus(hwloc_bitmap_t out, hwloc_const_bitmap_t limit, DfError *err)
{
    int ret = 0;
    for (int n_cpus = CPU_SETSIZE; n_cpus <= (1 << 20); n_cpus *= 2) {
        cpu_set_t *set = CPU_ALLOC((size_t)n_cpus);
        if (!set)
            return df_set_error(err, -ENOMEM, "out of memory");
        const size_t size = CPU_ALLOC_SIZE((size_t)n_cpus);
        CPU_ZERO_S(size, set);
        if (sched_getaffinity(0, size, set) == 0) {
            for (int c = 0; c < n_cpus && ret == 0; c++)
                if (CPU_ISSET_S((size_t)c, size, set) && hwloc_bitmap_set(out, (unsigned)c) < 0)
                    ret = df_set_error(err, -ENOMEM, "out of memory");
            CPU_FREE(set);
            if (ret == 0)
                hwloc_bitmap_and(out, out, limit);
            break;
        }
        const int e = errno;
        CPU_FREE(set);
        if (e != EINVAL) /* EINVAL: the kernel's mask is larger */
            break;
    }
    if (ret == 0 && hwloc_bitmap_iszero(out) && hwloc_bitmap_copy(out, limit) < 0)
        ret = df_set_error(err, -ENOMEM, "out of memory");
    return ret;
}

/* Each worker's pin set: its core's PUs (one per core) or its PU,
 * within `allowed`.  hwloc bitmaps, so any CPU number works; a core or PU
 * inside `allowed` lends its own set (the shared topology outlives every
 * scheduler), only the others are copied.  Each also becomes a glibc set
 * sized for its highest CPU (CPU_ALLOC), so that pinning in the worker
 * allocates nothing: hwloc_set_cpubind's Linux backend allocates one and
 * crashes when that fails. */
static int make_pin_sets(DfTopo *t, hwloc_topology_t real, hwloc_const_bitmap_t allowed,
                         hwloc_obj_t *pus, DfError *err)
{
    const int n = t->n_workers;
    t->pin_sets = calloc((size_t)n, sizeof(*t->pin_sets));
    t->pin_owned = calloc((size_t)n, sizeof(*t->pin_owned));
    if (!t->pin_sets || !t->pin_owned)
        return df_set_error(err, -ENOMEM, "out of memory");
    for (int w = 0; w < n; w++) {
        hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(real, HWLOC_OBJ_CORE, pus[w]);
        hwloc_const_bitmap_t whole = core && n <= t->n_cores ? core->cpuset : pus[w]->cpuset;
        if (hwloc_bitmap_isincluded(whole, allowed)) {
            t->pin_sets[w] = whole;
            continue;
        }
        hwloc_bitmap_t set = hwloc_bitmap_dup(whole);
        if (!set || hwloc_bitmap_and(set, set, allowed) < 0) {
            hwloc_bitmap_free(set);
            return df_set_error(err, -ENOMEM, "out of memory");
        }
        t->pin_sets[w] = t->pin_owned[w] = set;
    }
    t->pin_cpus = calloc((size_t)n, sizeof(*t->pin_cpus));
    t->pin_bytes = calloc((size_t)n, sizeof(*t->pin_bytes));
    if (!t->pin_cpus || !t->pin_bytes)
        return df_set_error(err, -ENOMEM, "out of memory");
    for (int w = 0; w < n; w++) {
        const int last = hwloc_bitmap_last(t->pin_sets[w]);
        if (last < 0)
            continue; /* an empty set: left unpinned */
        cpu_set_t *cs = CPU_ALLOC((size_t)last + 1);
        if (!cs)
            return df_set_error(err, -ENOMEM, "out of memory");
        const size_t bytes = CPU_ALLOC_SIZE((size_t)last + 1);
        CPU_ZERO_S(bytes, cs);
        for (int c = hwloc_bitmap_first(t->pin_sets[w]); c >= 0;
             c = hwloc_bitmap_next(t->pin_sets[w], c))
            CPU_SET_S((size_t)c, bytes, cs);
        t->pin_cpus[w] = cs;
        t->pin_bytes[w] = bytes;
    }
    return 0;
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
        /* The process's affinity straight from the kernel (hwloc's
         * get_proc_cpubind crashes when one of its allocations fails), in
         * a set sized for the machine's CPUs, not glibc's fixed 1024. */
        ret = process_cpus(allowed, hwloc_topology_get_allowed_cpuset(real), err);
        if (ret < 0)
            goto fail;
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
        ret = make_pin_sets(t, real, allowed, pus, err);
        if (ret < 0) {
            free(pus);
            goto fail;
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
        t->keys = model.keys;
        t->nearest = model.nearest;
        t->scatter = model.scatter;
        t->scatter_pos = model.scatter_pos;
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
        ret = fill_keys_and_nearest(t, real, pus, err);
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
    if (t->pin_owned)
        for (int w = 0; w < t->n_workers; w++)
            hwloc_bitmap_free(t->pin_owned[w]);
    free(t->pin_owned);
    free(t->pin_sets);
    if (t->pin_cpus)
        for (int w = 0; w < t->n_workers; w++)
            CPU_FREE(t->pin_cpus[w]);
    free(t->pin_cpus);
    free(t->pin_bytes);
    /* t->real is the shared process topology: kept. */
    free(t->model_pu);
    free(t->keys);
    free(t->nearest);
    free(t->scatter);
    free(t->scatter_pos);
    memset(t, 0, sizeof(*t));
}

int df_topo_cpus_end(const DfTopo *t)
{
    if (!t->pin_sets)
        return -ENOENT;
    int end = 0;
    for (int w = 0; w < t->n_workers; w++) {
        const int last = hwloc_bitmap_last(t->pin_sets[w]);
        end = last + 1 > end ? last + 1 : end;
    }
    return end;
}

int df_topo_cpus_s(const DfTopo *t, size_t setsize, cpu_set_t *out)
{
    if (!t->pin_sets)
        return -ENOENT;
    const int end = df_topo_cpus_end(t);
    if (end <= 0 || (size_t)end > 8 * setsize)
        return end <= 0 ? -ENOENT : -ERANGE;
    CPU_ZERO_S(setsize, out);
    for (int w = 0; w < t->n_workers; w++) {
        hwloc_const_bitmap_t set = t->pin_sets[w];
        for (int c = hwloc_bitmap_first(set); c >= 0; c = hwloc_bitmap_next(set, c))
            CPU_SET_S((size_t)c, setsize, out);
    }
    return 0;
}

int df_topo_cpus(const DfTopo *t, cpu_set_t *out)
{
    if (!t->pin_sets)
        return -ENOENT;
    /* The fixed glibc set holds CPUs below CPU_SETSIZE only: those. */
    CPU_ZERO(out);
    for (int w = 0; w < t->n_workers; w++) {
        hwloc_const_bitmap_t set = t->pin_sets[w];
        for (int c = hwloc_bitmap_first(set); c >= 0 && c < CPU_SETSIZE;
             c = hwloc_bitmap_next(set, c))
            CPU_SET(c, out);
    }
    return CPU_COUNT(out) > 0 ? 0 : -ENOENT;
}

bool df_topo_pin_attr(const DfTopo *t, int w, pthread_attr_t *attr)
{
    return t->pin_sets && t->pin_cpus[w] &&
           pthread_attr_setaffinity_np(attr, t->pin_bytes[w], t->pin_cpus[w]) == 0;
}
