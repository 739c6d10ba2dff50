/* dfsched-viz modules: per-module time, local vs. stolen/remote.
 *
 * A task is "local" when it ran where its inputs were (no byte from another
 * worker) and was not stolen; "stolen/remote" when it was taken from another
 * worker's ready set or read bytes another worker produced (df_viz_is_remote).
 * Tasks without inputs that were not stolen count as local: nothing had to
 * move.  Skipped tasks (cancelled groups) are left out of every column.
 * Every module the trace names gets a row, also one that never ran.  The
 * placing policy's own data follows, as the trace carries it: its values,
 * then each of its tables under "<policy> <table>" (a column whose name
 * ends in "bytes" shown as a size). */
#include "report.h"
#include "viz.h"

#include <errno.h>
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct ModStats {
    GArray *all, *local, *remote; /* double durations in ns */
    uint64_t stolen, explored, bytes_local, bytes_remote;
    double total_ns;
} ModStats;

#define N_COLS 11

static double median_of(GArray *a)
{
    return df_viz_median((double *)(void *)a->data, a->len);
}

/* A policy's number: counts plainly, the rest to 3 digits. */
static void fmt_number(char *buf, size_t len, double v, bool is_bytes)
{
    if (is_bytes)
        df_viz_fmt_bytes(buf, len, v);
    else if (v == floor(v) && fabs(v) < 1e15)
        snprintf(buf, len, "%.0f", v);
    else
        snprintf(buf, len, "%.3g", v);
}

/* The policy's data, whatever the policy: the trace says what it is. */
static int print_policy(const DfTrace *t, FILE *out)
{
    const DfTracePolicy *p = t->policy;
    fprintf(out, "\npolicy %s", p->name);
    for (int i = 0; i < p->n_values; i++) {
        char v[48];
        fmt_number(v, sizeof(v), p->values[i].value, false);
        fprintf(out, "%s %s %s", i ? "," : ":", p->values[i].key, v);
    }
    fprintf(out, "\n");
    for (int i = 0; i < p->n_tables; i++) {
        const DfTraceTable *tab = p->tables[i];
        const int nc = tab->n_cols + 1;
        const char **hdr = calloc((size_t)nc, sizeof(char *));
        const char **cp = calloc((size_t)nc, sizeof(char *));
        char(*cells)[48] = calloc((size_t)nc, sizeof(*cells));
        char *align = calloc((size_t)nc + 1, 1);
        DfTable *dt = NULL;
        if (hdr && cp && cells && align) {
            hdr[0] = tab->label[0] ? tab->label : "row";
            align[0] = 'l';
            for (int c = 1; c < nc; c++) {
                hdr[c] = tab->cols[c - 1];
                align[c] = 'r';
            }
            dt = df_table_new(nc, hdr, align);
        }
        for (size_t r = 0; dt && r < tab->n_rows; r++) {
            cp[0] = tab->row_labels[r];
            for (int c = 1; c < nc; c++) {
                fmt_number(cells[c], sizeof(cells[c]), df_trace_table_cell(tab, r, c - 1),
                           g_str_has_suffix(tab->cols[c - 1], "bytes"));
                cp[c] = cells[c];
            }
            df_table_row(dt, cp);
        }
        if (dt) {
            fprintf(out, "\n%s %s (the policy's data when the trace was collected):\n", p->name,
                    tab->name);
            df_table_print(dt, out);
            df_table_free(dt);
        }
        free(hdr);
        free(cp);
        free(cells);
        free(align);
        if (!dt)
            return -ENOMEM;
    }
    return 0;
}

int df_viz_modules(const DfTrace *t, FILE *out, const char *csv_path, DfError *err)
{
    const int nm = t->n_modules;
    ModStats *ms = calloc((size_t)(nm > 0 ? nm : 1), sizeof(ModStats));
    if (!ms)
        return df_viz_error(err, -ENOMEM, "out of memory");
    for (int m = 0; m < nm; m++) {
        ms[m].all = g_array_new(FALSE, FALSE, sizeof(double));
        ms[m].local = g_array_new(FALSE, FALSE, sizeof(double));
        ms[m].remote = g_array_new(FALSE, FALSE, sizeof(double));
    }
    for (size_t k = 0; k < t->n_events; k++) {
        const DfTraceEvent *e = &t->events[k];
        if (e->module < 0 || e->module >= nm || (e->flags & DF_TRACE_SKIPPED))
            continue;
        ModStats *s = &ms[e->module];
        DfVizInputs iv;
        df_viz_inputs(t, e, &iv);
        const double dur = (double)(e->end_ns - e->start_ns);
        g_array_append_val(s->all, dur);
        s->total_ns += dur;
        g_array_append_val(df_viz_is_remote(e, &iv) ? s->remote : s->local, dur);
        s->stolen += (e->flags & DF_TRACE_STOLEN) != 0;
        s->explored += (e->flags & DF_TRACE_EXPLORED) != 0;
        s->bytes_local += iv.local;
        s->bytes_remote += iv.remote;
    }

    static const char *const hdr[N_COLS] = {"module",        "tasks",         "total ms",
                                            "median us",     "local",         "local median us",
                                            "stolen/remote", "s/r median us", "stolen %",
                                            "explored",      "remote bytes %"};
    static const char *const csv_hdr[N_COLS] = {
        "module",       "tasks",           "total_ms",         "median_us",
        "local_tasks",  "local_median_us", "remote_tasks",     "remote_median_us",
        "stolen_share", "explored",        "remote_byte_share"};
    DfTable *tab = df_table_new(N_COLS, hdr, "lrrrrrrrrrr");
    DfCsv csv = {0};
    int ret = 0;
    if (csv_path && df_csv_open(&csv, csv_path, N_COLS, csv_hdr) < 0) {
        ret = df_viz_error(err, -errno, "cannot write %s: %s", csv_path, strerror(errno));
        goto cleanup;
    }
    for (int m = 0; m < nm; m++) {
        ModStats *s = &ms[m];
        const double n = s->all->len;
        const double bytes = (double)(s->bytes_local + s->bytes_remote);
        const double v[N_COLS] = {
            0,
            n,
            s->total_ns / 1e6,
            n ? median_of(s->all) / 1e3 : NAN,
            s->local->len,
            s->local->len ? median_of(s->local) / 1e3 : NAN,
            s->remote->len,
            s->remote->len ? median_of(s->remote) / 1e3 : NAN,
            n ? (double)s->stolen / n : NAN,
            (double)s->explored,
            bytes > 0 ? (double)s->bytes_remote / bytes : NAN,
        };
        static const int decimals[N_COLS] = {0, 0, 3, 2, 0, 2, 0, 2, 1, 0, 1};
        char cells[N_COLS][48];
        const char *cp[N_COLS];
        snprintf(cells[0], sizeof(cells[0]), "%s", df_viz_module_name(t, m));
        cp[0] = cells[0];
        for (int c = 1; c < N_COLS; c++) {
            /* Shares print as percentages in the table. */
            const bool pct = c == 8 || c == 10;
            df_fmt_num(cells[c], sizeof(cells[c]), pct ? v[c] * 100 : v[c], decimals[c]);
            cp[c] = cells[c];
        }
        df_table_row(tab, cp);
        if (csv.f) {
            char cc[N_COLS][48];
            const char *ccp[N_COLS] = {cells[0]};
            for (int c = 1; c < N_COLS; c++) {
                if (isnan(v[c]))
                    snprintf(cc[c], sizeof(cc[c]), "n/a");
                else
                    snprintf(cc[c], sizeof(cc[c]), "%.6g", v[c]);
                ccp[c] = cc[c];
            }
            df_csv_row(&csv, ccp);
        }
    }
    fprintf(out, "%zu tasks of %d modules on %d workers%s\n", t->n_events, nm, t->n_workers,
            t->dropped ? " (events were dropped: the trace buffer was full)" : "");
    df_table_print(tab, out);
    fprintf(out, "local: no input byte from another worker and not stolen; stolen/remote: "
                 "stolen or read another worker's bytes\n");
    if (t->policy && print_policy(t, out) < 0)
        ret = df_viz_error(err, -ENOMEM, "out of memory");
    if (csv.f && df_csv_close(&csv) < 0)
        ret = df_viz_error(err, -EIO, "cannot write %s", csv_path);
cleanup:
    df_table_free(tab);
    for (int m = 0; m < nm; m++) {
        g_array_free(ms[m].all, TRUE);
        g_array_free(ms[m].local, TRUE);
        g_array_free(ms[m].remote, TRUE);
    }
    free(ms);
    return ret;
}
