/* dfsched-viz: pictures and tables of a dfsched trace (Chrome/Perfetto JSON
 * written by dfplay/dfbench --trace or dfdec trace-file, read back with
 * df_trace_read_json()).
 *
 *   graph    the task graph of some frames as Graphviz DOT (graph.c)
 *   matrix   the worker-to-worker transfer matrix, heat map + CSV (matrix.c)
 *   modules  per-module time with local vs. stolen/remote inputs (modules.c)
 *
 * common.c holds what they share: the worker palette, medians, byte
 * formatting and the local/remote split of an event's inputs. */
#ifndef DF_VIZ_H
#define DF_VIZ_H

#include "dfsched.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---------------------------------------------------------------- common */

/* Colour of worker `w` (the palette of dfbench's plots, repeating). */
void df_viz_worker_rgb(int w, double rgb[3]);
/* The same as "#rrggbb". */
void df_viz_worker_hex(int w, char out[8]);

/* Median of v[0..n) (sorts v in place); NAN when n == 0. */
double df_viz_median(double *v, size_t n);

/* "123 B", "4.5 KiB", "6.7 MiB", "1.2 GiB". */
void df_viz_fmt_bytes(char *buf, size_t len, double bytes);

/* Name of module `m` of the trace ("task" when unknown). */
const char *df_viz_module_name(const DfTrace *t, int m);

/* An event's input bytes: produced on its own worker (local), on another
 * worker of the scheduler (remote) or outside it (worker -1: the caller's
 * thread, e.g. the packet data; neither local nor remote). */
typedef struct DfVizInputs {
    uint64_t local, remote, outside;
    int remote_workers; /* distinct producer workers among the remote bytes */
    int remote_from;    /* the producer worker when remote_workers == 1, else -1 */
} DfVizInputs;
void df_viz_inputs(const DfTrace *t, const DfTraceEvent *e, DfVizInputs *out);

/* A task counts as "remote" when it was stolen from another worker's ready
 * set or read bytes another worker produced; otherwise "local". */
bool df_viz_is_remote(const DfTraceEvent *e, const DfVizInputs *in);

/* Check that `path` can be written (creates or truncates it), so that a bad
 * output is reported before the work, with the system's reason. */
int df_viz_check_output(const char *path, DfError *err);

/* Set err (code and message); returns code. */
int df_viz_error(DfError *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ----------------------------------------------------------------- graph */

typedef struct DfVizGraphOpts {
    int64_t first_frame, last_frame; /* inclusive; first < 0: the first 2 frames */
    const char *dot_path;            /* DOT output */
    const char *svg_path;            /* SVG via `dot -Tsvg` (NULL: none) */
} DfVizGraphOpts;

/* Write the DOT (and the SVG when asked and `dot` is in PATH).  Prints a
 * one-line summary on `out`.  Returns 0 or a negative errno. */
int df_viz_graph(const DfTrace *t, const DfVizGraphOpts *o, FILE *out, DfError *err);

/* ---------------------------------------------------------------- matrix */

typedef struct DfVizMatrix {
    int n;               /* workers */
    uint64_t *bytes;     /* [i * n + j]: produced on i, consumed on j */
    double *ns_per_byte; /* [i * n + j]: measured cost per remote byte, NAN n/a */
    int *cost_modules;   /* [i * n + j]: modules the cost estimate is built from */
    uint64_t outside;    /* bytes read from outside the scheduler (worker -1) */
} DfVizMatrix;

int df_viz_matrix_compute(const DfTrace *t, DfVizMatrix *m, DfError *err);
void df_viz_matrix_free(DfVizMatrix *m);
/* By `path`'s extension: .csv, .png or .svg. */
int df_viz_matrix_write(const DfVizMatrix *m, const char *path, DfError *err);
/* The heat map's fixed size in pixels (PNG) or points (SVG). */
#define DF_VIZ_MATRIX_W 800
#define DF_VIZ_MATRIX_H 640
/* A short summary: local byte share, bytes and cost per pair. */
void df_viz_matrix_print(const DfVizMatrix *m, FILE *out);

/* --------------------------------------------------------------- modules */

/* Print the per-module table on `out`; also as CSV to `csv_path` (NULL:
 * none). */
int df_viz_modules(const DfTrace *t, FILE *out, const char *csv_path, DfError *err);

#endif
