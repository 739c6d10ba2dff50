/* The OpenMP peer (gcc's libgomp): the same cases with explicit tasks.
 *
 * One parallel region per call; its threads pin themselves, then one
 * thread (inside `single`) creates the tasks while the others wait at the
 * region's barrier and run them, which is how task-parallel OpenMP code is
 * written.  fanout is fork-join (the source and sink bodies run in the
 * spawning task around a taskwait); chain uses `depend(inout)`.  Warm-up
 * and timed runs share the region, so thread start-up is timed in neither. */
#include "affinity.h"
#include "bench_peers.h"
#include "sched_cases.h"

#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOT_STRIDE (64 / sizeof(uint64_t))

typedef struct OmpRun {
    const DfCaseParams *p;
    uint64_t *slots;
    uint64_t tasks;
    uint64_t errors;
} OmpRun;

static void omp_empty(OmpRun *r)
{
    const uint64_t m = r->p->tasks;
    const uint64_t batch = r->p->batch ? r->p->batch : m;
    for (uint64_t done = 0; done < m;) {
        uint64_t n = m - done < batch ? m - done : batch;
        for (uint64_t i = 0; i < n; i++) {
#pragma omp task
            {
                /* gcc drops a task with an empty body altogether; this
                 * emits no instruction but keeps the task. */
                __asm__ __volatile__("" ::: "memory");
            }
        }
#pragma omp taskwait
        done += n;
    }
    r->tasks = m;
}

static void omp_fanout(OmpRun *r)
{
    const int k = r->p->width;
    const uint64_t rounds = r->p->tasks / (uint64_t)(k + 2) ? r->p->tasks / (uint64_t)(k + 2) : 1;
    uint64_t *s = r->slots;
    for (uint64_t round = 0; round < rounds; round++) {
        s[0] = round;
        for (int j = 0; j < k; j++) {
#pragma omp task firstprivate(j, s)
            s[(size_t)(j + 1) * SLOT_STRIDE] = s[0] + (uint64_t)j;
        }
#pragma omp taskwait
        uint64_t sum = 0;
        for (int j = 0; j < k; j++)
            sum += s[(size_t)(j + 1) * SLOT_STRIDE];
        if (sum != (uint64_t)k * round + (uint64_t)k * (uint64_t)(k - 1) / 2)
            r->errors++;
    }
    r->tasks = rounds * (uint64_t)(k + 2);
}

static void omp_chain(OmpRun *r)
{
    const uint64_t m = r->p->tasks;
    uint64_t *s = r->slots;
    char dep = 0; /* the object every task reads and writes: a chain */
    (void)dep;    /* gcc does not count a depend clause as a use */
    for (uint64_t i = 0; i < m; i++) {
#pragma omp task firstprivate(i, s) shared(dep) depend(inout : dep)
        s[i + 1] = s[i] + 1;
    }
#pragma omp taskwait
    r->tasks = m;
}

/* metg's step: called inside `single`, so the region's other threads are
 * at its barrier and run the tasks; the spawning thread helps in the
 * taskwait. */
static int64_t omp_metg_step(void *ctx, int64_t grain, uint64_t tasks)
{
    (void)ctx;
    const int64_t t0 = df_now_ns();
    for (uint64_t i = 0; i < tasks; i++) {
#pragma omp task firstprivate(grain)
        df_bench_spin_ns(grain);
    }
#pragma omp taskwait
    return df_now_ns() - t0;
}

static int omp_metg(const DfCaseParams *p, const int *cpus, int n, DfCaseResult *out)
{
    DfAffinity saved;
    df_affinity_save(&saved);
    int ret = 0, got_threads = 0;
#pragma omp parallel num_threads(n) shared(ret, got_threads)
    {
        df_pin_self(cpus[omp_get_thread_num() % n]);
#pragma omp barrier
#pragma omp single
        {
            got_threads = omp_get_num_threads();
            ret = df_bench_metg_search(p, n, omp_metg_step, NULL, out);
        }
    }
    df_affinity_restore(&saved);
    return got_threads != n ? -EAGAIN : ret;
}

int df_peer_omp_run(DfBenchCase c, const DfCaseParams *p, const int *cpus, int n,
                    DfCaseResult *out)
{
    df_case_result_init(out);
    if (c == DF_CASE_METG)
        return omp_metg(p, cpus, n, out);
    if (c != DF_CASE_EMPTY && c != DF_CASE_FANOUT && c != DF_CASE_CHAIN)
        return -ENOTSUP;
    OmpRun r = {.p = p};
    size_t n_slots = c == DF_CASE_CHAIN ? (size_t)p->tasks + 1
                                        : (size_t)(p->width + 1) * SLOT_STRIDE;
    r.slots = calloc(n_slots, sizeof(uint64_t));
    if (!r.slots)
        return -ENOMEM;
    DfAffinity saved;
    df_affinity_save(&saved);
    int64_t t0 = 0, t1 = 0, c0 = 0, c1 = 0;
    int got_threads = 0;
#pragma omp parallel num_threads(n) shared(r, t0, t1, c0, c1, got_threads)
    {
        df_pin_self(cpus[omp_get_thread_num() % n]);
#pragma omp barrier
#pragma omp single
        {
            got_threads = omp_get_num_threads();
            for (int w = 0; w <= p->warmups; w++) {
                const bool timed = w == p->warmups;
                memset(r.slots, 0, n_slots * sizeof(uint64_t));
                r.errors = 0;
                if (timed) {
                    t0 = df_now_ns();
                    c0 = df_bench_cpu_ns();
                }
                switch (c) {
                case DF_CASE_EMPTY:
                    omp_empty(&r);
                    break;
                case DF_CASE_FANOUT:
                    omp_fanout(&r);
                    break;
                default:
                    omp_chain(&r);
                    break;
                }
                if (timed) {
                    c1 = df_bench_cpu_ns();
                    t1 = df_now_ns();
                }
            }
        }
    }
    /* The calling thread was the region's master and is pinned now. */
    df_affinity_restore(&saved);
    if (c == DF_CASE_CHAIN)
        for (uint64_t i = 0; i <= p->tasks; i++)
            r.errors += r.slots[i] != i;
    free(r.slots);
    if (got_threads != n)
        return -EAGAIN;
    out->tasks = r.tasks;
    out->elapsed_ns = t1 - t0;
    out->ns_per_task = r.tasks ? (double)out->elapsed_ns / (double)r.tasks : NAN;
    out->cpu_ns_per_task = r.tasks ? (double)(c1 - c0) / (double)r.tasks : NAN;
    out->errors = r.errors;
    return 0;
}

void df_peer_omp_describe(char *buf, size_t len)
{
    const char *wait = getenv("OMP_WAIT_POLICY");
    const char *spin = getenv("GOMP_SPINCOUNT");
    snprintf(buf, len, "libgomp, OpenMP %d, OMP_WAIT_POLICY=%s, GOMP_SPINCOUNT=%s", _OPENMP,
             wait ? wait : "(default)", spin ? spin : "(default)");
}
