/* A small real trace for the tests of the apps that read traces (dfsim,
 * dfsched-viz): recorded by the scheduler itself, not written by hand. */
#ifndef TRACE_UTIL_H
#define TRACE_UTIL_H

/* Frames the recorded trace holds (tags 0 .. DF_TEST_TRACE_FRAMES - 1). */
#define DF_TEST_TRACE_FRAMES 30
/* Tasks per frame: D(k), its 4 slice jobs S and the 4 bands R it spawns. */
#define DF_TEST_TRACE_TASKS_PER_FRAME 9
#define DF_TEST_TRACE_WORKERS         2

/* Run DF_TEST_TRACE_FRAMES frames of D -> S jobs -> R bands on 2 workers,
 * each R reading 100000 bytes declared on D's worker, and write the trace
 * to `path`.  Returns 0 or a negative errno. */
int df_test_record_trace(const char *path);

#endif
