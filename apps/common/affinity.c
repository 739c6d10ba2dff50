/* Worker counts to CPUs, from hwloc's view of the process's CPU set. */
#include "affinity.h"

#include <errno.h>
#include <hwloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(cpu_set_t) <= sizeof(((DfAffinity *)0)->mask), "DfAffinity too small");

int df_cpu_map_init(DfCpuMap *m)
{
    memset(m, 0, sizeof(*m));
    int ret = -ENOMEM;
    hwloc_topology_t topo = NULL;
    hwloc_bitmap_t allowed = hwloc_bitmap_alloc();
    if (!allowed)
        return -ENOMEM;
    if (hwloc_topology_init(&topo) < 0 || hwloc_topology_load(topo) < 0) {
        ret = -EIO;
        goto out;
    }
    if (hwloc_get_proc_cpubind(topo, 0, allowed, HWLOC_CPUBIND_PROCESS) < 0 ||
        hwloc_bitmap_iszero(allowed))
        hwloc_bitmap_copy(allowed, hwloc_topology_get_allowed_cpuset(topo));
    m->n_pus = hwloc_get_nbobjs_inside_cpuset_by_type(topo, allowed, HWLOC_OBJ_PU);
    m->n_cores = hwloc_get_nbobjs_inside_cpuset_by_type(topo, allowed, HWLOC_OBJ_CORE);
    if (m->n_pus <= 0) {
        ret = -ENODEV;
        goto out;
    }
    bool have_cores = m->n_cores > 0;
    if (!have_cores)
        m->n_cores = m->n_pus;
    m->core_cpu = calloc((size_t)m->n_cores, sizeof(int));
    m->core_set = calloc((size_t)m->n_cores, sizeof(char *));
    m->pu_cpu = calloc((size_t)m->n_pus, sizeof(int));
    if (!m->core_cpu || !m->core_set || !m->pu_cpu)
        goto out;
    for (int i = 0; i < m->n_pus; i++) {
        hwloc_obj_t pu = hwloc_get_obj_inside_cpuset_by_type(topo, allowed, HWLOC_OBJ_PU, (unsigned)i);
        m->pu_cpu[i] = (int)pu->os_index;
    }
    for (int i = 0; i < m->n_cores; i++) {
        hwloc_obj_t obj = hwloc_get_obj_inside_cpuset_by_type(
            topo, allowed, have_cores ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU, (unsigned)i);
        hwloc_bitmap_t set = hwloc_bitmap_dup(obj->cpuset);
        if (!set)
            goto out;
        hwloc_bitmap_and(set, set, allowed);
        m->core_cpu[i] = hwloc_bitmap_first(set);
        char buf[256];
        hwloc_bitmap_list_snprintf(buf, sizeof(buf), set);
        hwloc_bitmap_free(set);
        m->core_set[i] = strdup(buf);
        if (!m->core_set[i])
            goto out;
    }
    ret = 0;
out:
    if (ret < 0)
        df_cpu_map_fini(m);
    if (topo)
        hwloc_topology_destroy(topo);
    hwloc_bitmap_free(allowed);
    return ret;
}

void df_cpu_map_fini(DfCpuMap *m)
{
    if (m->core_set)
        for (int i = 0; i < m->n_cores; i++)
            free(m->core_set[i]);
    free(m->core_set);
    free(m->core_cpu);
    free(m->pu_cpu);
    memset(m, 0, sizeof(*m));
}

int df_cpu_map_cpu(const DfCpuMap *m, int i, int n)
{
    /* dfsched's placement: a core each while there are enough, else PUs
     * round robin (oversubscribed threads share them). */
    if (n <= m->n_cores)
        return m->core_cpu[i];
    return m->pu_cpu[i % m->n_pus];
}

void df_cpu_map_cpus(const DfCpuMap *m, int n, int *cpus)
{
    for (int i = 0; i < n; i++)
        cpus[i] = df_cpu_map_cpu(m, i, n);
}

void df_cpu_map_list(const DfCpuMap *m, int n, char *buf, size_t len)
{
    buf[0] = '\0';
    int cores = n < m->n_cores ? n : m->n_cores;
    size_t used = 0;
    for (int i = 0; i < cores && used < len; i++) {
        int w = snprintf(buf + used, len - used, "%s%s", i ? "," : "", m->core_set[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

bool df_cpu_map_oversubscribed(const DfCpuMap *m, int n)
{
    return n > m->n_pus;
}

int df_pin_self(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return -pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

void df_affinity_save(DfAffinity *a)
{
    memset(a, 0, sizeof(*a));
    a->valid = pthread_getaffinity_np(pthread_self(), sizeof(cpu_set_t), (cpu_set_t *)a->mask) == 0;
}

void df_affinity_restore(const DfAffinity *a)
{
    if (a->valid)
        pthread_setaffinity_np(pthread_self(), sizeof(cpu_set_t), (const cpu_set_t *)a->mask);
}
