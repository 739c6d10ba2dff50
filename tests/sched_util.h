/* Helpers shared by the scheduler tests. */
#ifndef SCHED_UTIL_H
#define SCHED_UTIL_H

#include "dfsched.h"

/* A scheduler with `policy`, `n` workers and `poll_us` (-1 = poll mode);
 * reports the error through the test and returns NULL on failure. */
DfSched *df_test_sched(const char *policy, int n, int poll_us);

/* xorshift64. */
uint64_t df_test_rand(uint64_t *state);

#endif
