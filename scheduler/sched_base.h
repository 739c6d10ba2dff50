/* What every scheduler header leans on: cache-line alignment, branch hints
 * and a tiny generator.  Included by the core and the policies alike. */
#ifndef DF_SCHED_BASE_H
#define DF_SCHED_BASE_H

#include <stdint.h>

#define DF_CACHELINE   64
#define DF_ALIGNED     __attribute__((aligned(DF_CACHELINE)))
#define DF_LIKELY(x)   __builtin_expect(!!(x), 1)
#define DF_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* A tiny xorshift generator. */
static inline uint64_t df_rand_next(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    return x;
}

#endif /* DF_SCHED_BASE_H */
