/* Helpers of the dfbench tests: run the program the build made. */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <glib.h>
#include <stdbool.h>

/* The dfbench executable (DFBENCH, set by meson), or NULL. */
const char *df_test_dfbench(void);

typedef struct DfRun {
    bool spawned;  /* the program could be started */
    int status;    /* exit status (-1 when it did not exit normally) */
    char *out;     /* stdout */
    char *err;     /* stderr */
} DfRun;

/* Run argv (NULL-terminated) with `env_add` (NULL-terminated "K=V" list,
 * may be NULL) added to the environment.  A K ending in _OPTIONS that is
 * already set keeps its value and gets V appended after a space, the way
 * sanitizer option lists (ASAN_OPTIONS) combine, later options winning;
 * any other K is replaced. */
DfRun df_test_run(const char *const *argv, const char *const *env_add);
void df_run_clear(DfRun *r);

#endif
