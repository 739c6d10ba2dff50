/* dfsched-viz modules: per-module time, local vs. stolen/remote.
 *
 * A task is "local" when it ran where its inputs were (no byte from another
 * worker) and was not stolen; "stolen/remote" when it was taken from another
 * worker's ready set or read bytes another worker produced (df_viz_is_remote).
 * Tasks without inputs that were not stolen count as local: nothing had to
 * move.  Skipped tasks (cancelled groups) are left out of every column.
 * Every module the trace names gets a row, also one that never ran.  A
 * trace of the learned policy adds its sizes: per producer module, the
 * declared and the learned bytes per read and the samples behind them. */
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

#define N_LEARNED_COLS 7

/* The learned policy's sizes, when the trace has them. */
static void print_learned(const DfTrace *t, FILE *out)
{
    const DfTraceLearned *l = t->learned;
    static const char *const hdr[N_LEARNED_COLS] = {"producer",      "reads", "declared/read",
                                                    "learned/read",  "scale", "local samples",
                                                    "remote samples"};
    DfTable *tab = df_table_new(N_LEARNED_COLS, hdr, "lrrrrrr");
    for (int i = 0; i < l->n_modules; i++) {
        const DfTraceLearnedModule *m = &l->modules[i];
        char c[N_LEARNED_COLS][48];
        snprintf(c[0], sizeof(c[0]), "%s", df_viz_module_name(t, m->module));
        snprintf(c[1], sizeof(c[1]), "%llu", (unsigned long long)m->reads);
        /* A module measured but not read in the trace has no size per read. */
        if (m->reads) {
            df_viz_fmt_bytes(c[2], sizeof(c[2]), (double)m->declared_bytes);
            df_viz_fmt_bytes(c[3], sizeof(c[3]), (double)m->learned_bytes);
        } else {
            snprintf(c[2], sizeof(c[2]), "-");
            snprintf(c[3], sizeof(c[3]), "-");
        }
        snprintf(c[4], sizeof(c[4]), "%.3g", m->scale);
        snprintf(c[5], sizeof(c[5]), "%llu", (unsigned long long)m->samples_local);
        snprintf(c[6], sizeof(c[6]), "%llu", (unsigned long long)m->samples_remote);
        const char *cp[N_LEARNED_COLS] = {c[0], c[1], c[2], c[3], c[4], c[5], c[6]};
        df_table_row(tab, cp);
    }
    fprintf(out,
            "\nlearned sizes (the learned policy's model when the trace was collected; "
            "%llu timed runs, %llu explored):\n",
            (unsigned long long)l->samples, (unsigned long long)l->explored);
    df_table_print(tab, out);
    fprintf(out, "measured ns/B per level:");
    for (int lev = DF_LEVEL_PU; lev < DF_N_LEVELS; lev++)
        if (l->ns_per_byte[lev] > 0)
            fprintf(out, " %s %.3g", df_level_name((DfLevel)lev), l->ns_per_byte[lev]);
    fprintf(out, " (model reference %.3g per trCost unit)\n", l->ref_ns_per_byte);
    df_table_free(tab);
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
    if (t->learned)
        print_learned(t, out);
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
