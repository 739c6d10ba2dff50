/* dfsched traces as Chrome / Perfetto trace JSON (library dfsched-trace).
 *
 * One track per worker; each task a complete event ("ph":"X") named by
 * module, index and frame, with args: node id, inputs (producer node,
 * worker, module, bytes), bytes read per producer worker, local or stolen,
 * deadline slack.  "otherData.dfsched" keeps what the simulator and the
 * visualiser need: module names, the trCost and level matrices, and
 * "policy": the placing policy's name and its own data, written and read
 * without knowing the policy ({"name", "weighs_inputs", "values": {key:
 * number}, "tables": [{"name", "label", "columns", "rows": [{"label",
 * "cells"}]}]}, see DfTracePolicy); when it weighs inputs, every input has
 * "policy_bytes" next to "bytes".  Opens in ui.perfetto.dev and
 * chrome://tracing. */
#ifndef DFSCHED_TRACE_H
#define DFSCHED_TRACE_H

#include "dfsched.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Check that `path` can be written, so that a bad path is reported when
 * tracing is asked for, not at the end.  An existing file is not truncated
 * and a new one not left behind. */
DF_SCHED_API int df_trace_check_path(const char *path, DfError *err);

/* Write a collected trace to `path`. */
DF_SCHED_API int df_trace_write_json(const DfTrace *trace, const char *path, DfError *err);

/* Collect the scheduler's trace and write it to `path`. */
DF_SCHED_API int df_sched_trace_write(DfSched *sched, const char *path, DfError *err);

/* Read a trace written by df_trace_write_json() (times in ns from the
 * first event; t->policy is NULL when the file names no policy, and
 * inputs without "policy_bytes" read policy_bytes = bytes).  Free with
 * df_trace_free(). */
DF_SCHED_API int df_trace_read_json(const char *path, DfTrace *out, DfError *err);

#ifdef __cplusplus
}
#endif
#endif
