/* The topology model: levels and trCost between workers (topo.c). */
#ifndef DF_SCHED_TOPO_H
#define DF_SCHED_TOPO_H

#include "dfsched.h"

#include <pthread.h>
#include <sched.h>

/* ------------------------------------------------------------ topology */

/* Levels PU..NUMA have a domain key per worker: two workers share level
 * l's domain when their keys at l are equal. */
#define DF_TOPO_KEYS (DF_LEVEL_NUMA - DF_LEVEL_PU + 1)

typedef struct DfTopo {
    int n_workers;
    int n_cores; /* cores of the CPU set on the real machine */
    int n_pus;
    bool oversubscribed;
    bool synthetic;
    void *real;            /* hwloc_topology_t */
    const void **pin_sets; /* hwloc_const_bitmap_t per worker, NULL when not pinning */
    void **pin_owned;      /* the pin sets allocated here (NULL: the topology's) */
    cpu_set_t **pin_cpus;  /* the same as CPU_ALLOC sets (pinning allocates nothing) */
    size_t *pin_bytes;     /* their CPU_ALLOC_SIZE */
    int *model_pu;         /* per worker: PU logical index in the model topology */
    uint64_t *keys;        /* n x DF_TOPO_KEYS: domain of each worker per level */
    int *nearest;          /* per worker: the other worker of least trCost */
    /* The workers in scatter order: consecutive entries as far apart as
     * the topology allows (another NUMA node, else another L3, another
     * L2, another core, before an SMT sibling), for spreading work round
     * robin; scatter_pos is its inverse. */
    int *scatter, *scatter_pos;
    uint32_t level_cost[DF_N_LEVELS];
    char desc[256];
} DfTopo;

int df_topo_init(DfTopo *t, const DfSchedConfig *cfg, DfError *err);
void df_topo_fini(DfTopo *t);
/* Give the thread to be created as worker `w` its pin set; false when
 * not pinning. */
bool df_topo_pin_attr(const DfTopo *t, int w, pthread_attr_t *attr);
/* Union of the workers' pin sets; -ENOENT when not pinning. */
int df_topo_cpus(const DfTopo *t, cpu_set_t *out);
/* One past the highest CPU a worker is pinned to (-ENOENT: not pinned). */
int df_topo_cpus_end(const DfTopo *t);
/* The union in a CPU_ALLOC set of `setsize` bytes; -ERANGE when a CPU
 * does not fit. */
int df_topo_cpus_s(const DfTopo *t, size_t setsize, cpu_set_t *out);
/* Compute the levels and trCost of `n_workers` workers on a topology
 * string (NULL: real machine) without creating a scheduler (dfsim, tests). */
int df_topo_model(DfTopo *t, const char *topology, int n_workers, DfCostModel model,
                  const uint32_t *level_cost, DfError *err);

/* Level between workers a and b: the lowest level whose domain they share
 * (N x levels keys instead of an N x N table; symmetric). */
static inline DfLevel df_topo_level(const DfTopo *t, int a, int b)
{
    if (a == b)
        return DF_LEVEL_SELF;
    const uint64_t *ka = t->keys + (size_t)a * DF_TOPO_KEYS;
    const uint64_t *kb = t->keys + (size_t)b * DF_TOPO_KEYS;
    for (int l = 0; l < DF_TOPO_KEYS; l++)
        if (ka[l] == kb[l])
            return (DfLevel)(DF_LEVEL_PU + l);
    return DF_LEVEL_MACHINE;
}

/* trCost(a, b): moving a byte from producer a's worker to consumer b's. */
static inline uint32_t df_topo_trcost(const DfTopo *t, int a, int b)
{
    return t->level_cost[df_topo_level(t, a, b)];
}

#endif /* DF_SCHED_TOPO_H */
