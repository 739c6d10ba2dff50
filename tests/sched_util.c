#include "sched_util.h"
#include "dftest.h"

DfSched *df_test_sched(const char *policy, int n, int poll_us)
{
    DfSchedConfig cfg;
    df_sched_config_init(&cfg);
    cfg.policy = policy;
    cfg.n_workers = n;
    cfg.poll_us = poll_us;
    DfSched *s = NULL;
    DfError err = {0};
    if (df_sched_new(&cfg, &s, &err) < 0) {
        df_test_fail(__FILE__, __LINE__, true, "df_sched_new(%s, %d): %s", policy, n, err.msg);
        return NULL;
    }
    return s;
}

uint64_t df_test_rand(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    return x;
}
