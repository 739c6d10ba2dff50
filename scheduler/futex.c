/* Parking: Linux futexes, the only system calls of an idle worker. */
#include "sched_internal.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

void df_futex_wait(_Atomic uint32_t *addr, uint32_t expected)
{
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

void df_futex_wake(_Atomic uint32_t *addr, int n)
{
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}
