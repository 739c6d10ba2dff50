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

/* Broken copies of the trace at `good`, for the bad-input tests: `empty`
 * (no bytes), `bytes` (2 KiB of noise), `trunc` (its first half) and
 * `shape` (valid JSON, members of the wrong types).  Returns 0 or -1. */
int df_test_write_broken_traces(const char *good, const char *empty, const char *bytes,
                                const char *trunc, const char *shape);

/* A mis-declared edge under the learned policy (sched_learned_test.c's
 * workload): per frame, P1 declares 64 KiB to C but hands over nothing
 * real; P2 declares 1 KiB but C pays 300 us whenever it runs away from
 * P2's worker.  Untraced frames let the policy measure (at least
 * DF_TEST_LEARNED_WARMUP, until the model has derived P2's size from local
 * and remote runs of C, at most DF_TEST_LEARNED_MAX_WARMUP_S seconds), then
 * DF_TEST_LEARNED_FRAMES frames (tags 0..) are traced.  The
 * collected trace goes to `out` (free with df_trace_free) and/or `path`
 * (either may be NULL).  Returns 0 or a negative errno.  P1's 64 KiB still
 * outweigh P2's 1 KiB by declaration, yet stay below what 300 us are in
 * the model at any trCost weight (300 us / (16 * 0.025 ns/B) = 750 kB), so
 * P2 -> C is the largest edge by learned size even before P1's correction. */
#define DF_TEST_LEARNED_WARMUP      400
#define DF_TEST_LEARNED_MAX_WARMUP_S 10
#define DF_TEST_LEARNED_FRAMES      60
#define DF_TEST_LEARNED_DECLARED_P1 (64u << 10)
#define DF_TEST_LEARNED_DECLARED_P2 1024u
typedef struct DfTrace DfTrace;
int df_test_record_learned_trace(const char *path, DfTrace *out);

#endif
