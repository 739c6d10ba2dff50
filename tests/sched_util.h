/* Helpers shared by the scheduler tests. */
#ifndef SCHED_UTIL_H
#define SCHED_UTIL_H

#include "dfsched.h"

#include <stdatomic.h>

/* A scheduler with `policy`, `n` workers and `poll_us` (-1 = poll mode);
 * reports the error through the test and returns NULL on failure. */
DfSched *df_test_sched(const char *policy, int n, int poll_us);

/* Run fn(arg) as a task on a worker; return when it has finished. */
void df_test_run_task(DfSched *s, DfTaskFn fn, void *arg);

/* A task that holds a worker until the gate opens. */
typedef struct DfTestGate {
    _Atomic int started, open;
    _Atomic int worker; /* the worker held, once started */
} DfTestGate;

/* Spawn a task into `g` that holds its worker until gate->open is set;
 * return once it runs. */
void df_test_hold_worker(DfSched *s, DfTestGate *gate, DfGroup *g);

/* xorshift64. */
uint64_t df_test_rand(uint64_t *state);

#define DAG_WINDOW    64
#define DAG_MAX_PREDS 6

/* A random DAG run: each node records how often it ran and whether its
 * predecessors had finished when it started. */
typedef struct Dag {
    int n;
    int *preds;        /* n * DAG_MAX_PREDS, -1 = none */
    _Atomic int *runs; /* times each node ran */
    _Atomic int *done;
    _Atomic int order_violations;
    _Atomic int64_t seq;
} Dag;

/* Build and run a random DAG of n nodes from the calling thread while the
 * workers already run its beginning (edges race with completions). */
void run_random_dag(DfSched *s, int n, uint64_t seed, Dag *d);
/* Nodes that did not run exactly once. */
int dag_check(Dag *d);
void dag_free(Dag *d);

/* total_nodes spread over every policy and 1..8 workers; checks each run. */
void df_test_random_dag_all(long total_nodes);

#endif
