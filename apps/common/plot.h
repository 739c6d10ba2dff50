/* Line charts with cairo (SVG or PNG, by the file name's extension),
 * shared by dfbench and dfsim: one line per implementation, x = workers. */
#ifndef DF_BENCH_PLOT_H
#define DF_BENCH_PLOT_H

#include <stdbool.h>

typedef struct DfPlotSeries {
    const char *label;
    int n;
    const double *x;
    const double *y; /* NAN points are skipped */
} DfPlotSeries;

typedef struct DfPlotPanel {
    const char *title;
    const char *y_label;
    int n_series;
    const DfPlotSeries *series;
    bool ideal_line; /* draw y = x (linear speed-up) */
} DfPlotPanel;

/* Draw `n_panels` panels side by side into `path` (.svg or .png) with a
 * shared x axis (log2 when `log_x`).  Returns 0 or a negative errno; `err`
 * gets a message. */
int df_plot_write(const char *path, const char *x_label, bool log_x, const DfPlotPanel *panels,
                  int n_panels, char *err, int err_len);

#endif
