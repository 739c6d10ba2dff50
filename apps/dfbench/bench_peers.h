/* dfbench sched's peers: the same cases (sched_cases.h) on OpenMP tasks
 * (bench_peers_omp.c) and oneTBB (bench_peers_tbb.cc), each built only
 * when its runtime is found.  Shared with C++. */
#ifndef DF_BENCH_PEERS_H
#define DF_BENCH_PEERS_H

#include "sched_cases.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef DF_BENCH_HAVE_OPENMP
int df_peer_omp_run(DfBenchCase c, const DfCaseParams *p, const int *cpus, int n,
                    DfCaseResult *out);
/* One line naming the OpenMP runtime (version, wait policy). */
void df_peer_omp_describe(char *buf, size_t len);
#endif
#ifdef DF_BENCH_HAVE_TBB
int df_peer_tbb_run(DfBenchCase c, const DfCaseParams *p, const int *cpus, int n,
                    DfCaseResult *out);
void df_peer_tbb_describe(char *buf, size_t len);
#endif

#ifdef __cplusplus
}
#endif
#endif
