/* Output helpers shared by dfbench, dfsim and dfsched-viz: summaries of repeated
 * samples, a progress line, terminal tables, CSV, JSON and a description of
 * the machine the numbers came from. */
#ifndef DF_BENCH_REPORT_H
#define DF_BENCH_REPORT_H

#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* ----------------------------------------------------------- summaries */

typedef struct DfSummary {
    int n;                   /* samples that were measured (NAN ones are not) */
    double min, median, max; /* NAN when n == 0 */
} DfSummary;

/* Min, median and max of the non-NAN values of v[0..n). */
DfSummary df_summarize(const double *v, int n);

/* ------------------------------------------------------------ progress */

/* One self-overwriting line on stderr when it is a terminal; silent
 * otherwise, so that logs and pipes stay clean. */
typedef struct DfProgress {
    int total, done;
    bool tty;
    int64_t start_ns;
} DfProgress;

void df_progress_begin(DfProgress *p, int total);
/* Count one step done and show what runs next. */
void df_progress_step(DfProgress *p, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
void df_progress_end(DfProgress *p);

/* -------------------------------------------------------------- tables */

typedef struct DfTable DfTable;

/* `align` has one letter per column: 'l' or 'r'. */
DfTable *df_table_new(int n_cols, const char *const *headers, const char *align);
/* Append a row of n_cols cells (copied; NULL prints as empty). */
void df_table_row(DfTable *t, const char *const *cells);
/* A separator line before the next row. */
void df_table_rule(DfTable *t);
void df_table_print(const DfTable *t, FILE *out);
void df_table_free(DfTable *t);

/* "12.3" or "-" for NAN, with `decimals` digits. */
void df_fmt_num(char *buf, size_t len, double v, int decimals);

/* ----------------------------------------------------------------- CSV */

typedef struct DfCsv {
    FILE *f;
    int n_cols;
} DfCsv;

/* Open `path` and write the header line.  Returns 0 or -errno. */
int df_csv_open(DfCsv *c, const char *path, int n_cols, const char *const *headers);
/* One row of n_cols cells, quoted as RFC 4180 wants (NULL = empty). */
void df_csv_row(DfCsv *c, const char *const *cells);
/* Returns 0 or -errno (a write error). */
int df_csv_close(DfCsv *c);

/* ---------------------------------------------------------------- JSON */

/* A double member, null when NAN. */
void df_json_double(JsonBuilder *b, const char *name, double v);
/* An array member of `n` doubles, each null when NAN. */
void df_json_double_array(JsonBuilder *b, const char *name, const double *v, int n);
/* How much longer a unit of work takes with tracing on than off, in %, from
 * the two medians: for a time per unit (ns per task) on/off - 1, for a rate
 * (fps) off/on - 1.  NAN when either is missing. */
double df_overhead_pct(double off, double on, bool rate);
/* The median over repeats of df_overhead_pct(off[i], on[i]): sample i of
 * both ran back to back, so a load that drifts between repeats cancels. */
double df_overhead_pct_paired(const double *off, int n_off, const double *on, int n_on, bool rate);
/* Members "<name>_off" and "<name>_on" (medians of the non-NAN samples),
 * "<name>_off_samples" and "<name>_on_samples", "overhead_pct"
 * (df_overhead_pct of the medians) and "overhead_pct_paired". */
void df_json_overhead(JsonBuilder *b, const char *name, const double *off, int n_off,
                      const double *on, int n_on, bool rate);
/* Write the builder's root, pretty-printed.  Returns TRUE or sets `err`. */
gboolean df_json_write(JsonBuilder *b, const char *path, GError **err);

/* ------------------------------------------------------------- machine */

/* Add "machine": {cpu model, kernel, cores, PUs, topology, caches, ...}. */
void df_report_machine_json(JsonBuilder *b);
/* One line for the terminal: model, cores/PUs, topology. */
void df_report_machine_line(char *buf, size_t len);
/* /proc/loadavg's three figures (NAN when unreadable): other users of a
 * shared machine show up here. */
void df_report_loadavg(double out[3]);
/* CPU time of `clock` (CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID)
 * in ns, -1 when it cannot be read.  A system call: outside timed loops. */
int64_t df_report_cpu_ns(clockid_t clock);

#endif
