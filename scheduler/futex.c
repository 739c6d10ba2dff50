/* Parking: Linux futexes, the only system calls of an idle worker. */
#include "sched_internal.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Returns at `until_ns` (CLOCK_MONOTONIC, absolute; INT64_MAX: no limit)
 * at the latest: FUTEX_WAIT_BITSET takes an absolute time on that clock,
 * so a wake-up that comes early does not stretch the next wait. */
void df_futex_wait_until(_Atomic uint32_t *addr, uint32_t expected, int64_t until_ns)
{
    const struct timespec ts = {.tv_sec = until_ns / 1000000000, .tv_nsec = until_ns % 1000000000};
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT_BITSET_PRIVATE, expected,
            until_ns == INT64_MAX ? NULL : &ts, NULL, FUTEX_BITSET_MATCH_ANY);
}

void df_futex_wake(_Atomic uint32_t *addr, int n)
{
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}
