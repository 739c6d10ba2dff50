/* Worker counts as CPU sets: "N workers" means the first N cores of the
 * process's CPU set (one PU per core), wrapping over all PUs when N is
 * larger than the machine.  The same mapping dfsched uses for its own
 * workers, so that every implementation runs thread i on the same CPU.
 * Shared with C++. */
#ifndef DF_BENCH_AFFINITY_H
#define DF_BENCH_AFFINITY_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct DfCpuMap {
    int n_cores;    /* cores in the process's CPU set */
    int n_pus;      /* PUs (hardware threads) in it */
    int *core_cpu;  /* n_cores: OS index of each core's first PU */
    char **core_set; /* n_cores: "a-b" list of each core's PUs (OS indices) */
    int *pu_cpu;    /* n_pus: OS index of each PU, in hwloc logical order */
} DfCpuMap;

/* Read the process's CPU set and topology.  Returns 0 or a negative errno. */
int df_cpu_map_init(DfCpuMap *m);
void df_cpu_map_fini(DfCpuMap *m);

/* OS CPU of thread `i` of `n`. */
int df_cpu_map_cpu(const DfCpuMap *m, int i, int n);

/* Fill cpus[0..n) with df_cpu_map_cpu(m, i, n). */
void df_cpu_map_cpus(const DfCpuMap *m, int n, int *cpus);

/* The CPU list ("0-1") to give dfsched for `n` workers. */
void df_cpu_map_list(const DfCpuMap *m, int n, char *buf, size_t len);

/* More threads than PUs. */
bool df_cpu_map_oversubscribed(const DfCpuMap *m, int n);

/* Pin the calling thread to one CPU.  Returns 0 or a negative errno. */
int df_pin_self(int cpu);

/* The calling thread's affinity, to put back after a peer pinned it. */
typedef struct DfAffinity {
    unsigned long mask[16]; /* a cpu_set_t, opaque here so that C++ needs no glibc macros */
    bool valid;
} DfAffinity;
void df_affinity_save(DfAffinity *a);
void df_affinity_restore(const DfAffinity *a);

#ifdef __cplusplus
}
#endif
#endif
