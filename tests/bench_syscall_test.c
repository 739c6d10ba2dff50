/* "No system call on the hot path", counted: dfbench sched's empty case in
 * poll mode under `strace -f -c`, at two task counts.  Everything that does
 * not depend on the task count (start-up, thread creation, pinning, the
 * outside thread's futex wait) cancels in the difference, which leaves the
 * system calls per task. */
#include "bench_util.h"
#include "dftest.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The "calls" column of strace -c's total line, or -1. */
static long total_calls(const char *path)
{
    gchar *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, NULL))
        return -1;
    long calls = -1;
    gchar **lines = g_strsplit(text, "\n", -1);
    for (int i = 0; lines[i]; i++) {
        gchar **tok = g_strsplit_set(g_strstrip(lines[i]), " \t", -1);
        /* Runs of blanks leave empty strings: index the others. */
        const char *f[16];
        int n = 0;
        for (int k = 0; tok[k] && n < 16; k++)
            if (*tok[k])
                f[n++] = tok[k];
        /* "% time  seconds  usecs/call  calls  [errors]  total" */
        if (n >= 5 && strcmp(f[n - 1], "total") == 0)
            calls = strtol(f[3], NULL, 10);
        g_strfreev(tok);
    }
    g_strfreev(lines);
    g_free(text);
    return calls;
}

typedef struct Count {
    long calls;
    char *table; /* strace's summary, for the log */
} Count;

static Count count_syscalls(const char *strace, const char *dfbench, long tasks, const char *batch)
{
    Count c = {-1, NULL};
    gchar *out_path = NULL;
    int fd = g_file_open_tmp("dfbench-strace-XXXXXX.txt", &out_path, NULL);
    if (fd < 0)
        return c;
    close(fd);
    char n[32];
    snprintf(n, sizeof(n), "%ld", tasks);
    const char *argv[] = {strace, "-f", "-c", "-o", out_path, "--", dfbench, "sched",
                          "--case", "empty", "--poll-us", "-1", "--workers", "2", "--peers",
                          "none", "--policy", "cost-local", "--repeat", "1", "--tasks", n,
                          "--batch", batch, NULL};
    /* LeakSanitizer stops the world with ptrace, which a traced process cannot. */
    const char *env[] = {"ASAN_OPTIONS=detect_leaks=0", NULL};
    DfRun run = df_test_run(argv, env);
    if (run.status == 0) {
        c.calls = total_calls(out_path);
        g_file_get_contents(out_path, &c.table, NULL, NULL);
    } else {
        c.table = g_strdup_printf("exit %d: %s", run.status, run.err ? run.err : "");
    }
    df_run_clear(&run);
    unlink(out_path);
    g_free(out_path);
    return c;
}

DF_TEST(BenchSyscalls, PollModeMakesNoSyscallPerTask)
{
    const char *dfbench = df_test_dfbench();
    if (!dfbench)
        DF_SKIP("DFBENCH is not set: run through meson test");
    gchar *strace = g_find_program_in_path("strace");
    if (!strace)
        DF_SKIP("strace is not installed (Debian package strace)");
    const char *probe[] = {strace, "-f", "-o", "/dev/null", "true", NULL};
    DfRun p = df_test_run(probe, NULL);
    if (p.status != 0) {
        static char why[512];
        snprintf(why, sizeof(why), "ptrace is not permitted here (strace true: exit %d: %.300s)",
                 p.status, p.err ? p.err : "");
        df_run_clear(&p);
        g_free(strace);
        DF_SKIP(why);
    }
    df_run_clear(&p);

    /* dfbench runs each sample twice (warm-up, timed) plus one root task
     * per run: 2 * tasks bodies per invocation. */
    const long t1 = 10000, t2 = 100000;
    /* Steady state: rounds of 1000 tasks, so the slabs hold one round and
     * stop growing after the first. */
    Count a = count_syscalls(strace, dfbench, t1, "1000");
    Count b = count_syscalls(strace, dfbench, t2, "1000");
    /* All at once: the live set, hence the slabs, grow with the task count. */
    Count c = count_syscalls(strace, dfbench, t2, "0");
    DF_ASSERT_MSG(a.calls > 0 && b.calls > 0, "strace gave no totals:\n%s\n%s",
                  a.table ? a.table : "", b.table ? b.table : "");
    double per_task = (double)(b.calls - a.calls) / (double)(2 * (t2 - t1));
    double growth = c.calls > 0 ? (double)(c.calls - a.calls) / (double)(2 * (t2 - t1)) : -1;
    printf("syscalls per task, poll mode, 2 workers, cost-local: %.6f steady state "
           "(%ld calls at %ld tasks, %ld at %ld); %.6f with all %ld tasks live at once "
           "(slab growth: %ld calls)\n",
           per_task, a.calls, 2 * t1, b.calls, 2 * t2, growth, t2, c.calls);
    DF_EXPECT_MSG(per_task < 0.001, "%.6f system calls per task in poll mode; strace at %ld tasks:\n%s",
                  per_task, 2 * t2, b.table ? b.table : "");
    g_free(a.table);
    g_free(b.table);
    g_free(c.table);
    g_free(strace);
}
