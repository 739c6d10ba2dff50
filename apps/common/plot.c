/* Line charts with cairo. */
#include "plot.h"

#include <cairo-svg.h>
#include <cairo.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define PANEL_W 560
#define PANEL_H 400
#define MARGIN_L 70
#define MARGIN_R 20
#define MARGIN_T 40
#define MARGIN_B 110

static const double palette[][3] = {
    {0.12, 0.47, 0.71}, {1.00, 0.50, 0.05}, {0.17, 0.63, 0.17}, {0.84, 0.15, 0.16},
    {0.58, 0.40, 0.74}, {0.55, 0.34, 0.29}, {0.89, 0.47, 0.76}, {0.50, 0.50, 0.50},
    {0.74, 0.74, 0.13}, {0.09, 0.75, 0.81},
};

static double nice_step(double range)
{
    double raw = range / 5, mag = pow(10, floor(log10(raw)));
    double f = raw / mag;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

static void draw_panel(cairo_t *cr, double ox, const DfPlotPanel *p, const char *x_label,
                       bool log_x)
{
    double xmin = INFINITY, xmax = -INFINITY, ymax = 0;
    for (int s = 0; s < p->n_series; s++)
        for (int i = 0; i < p->series[s].n; i++) {
            double x = p->series[s].x[i], y = p->series[s].y[i];
            if (isnan(y) || (log_x && x <= 0))
                continue;
            xmin = fmin(xmin, x);
            xmax = fmax(xmax, x);
            ymax = fmax(ymax, y);
        }
    if (!isfinite(xmin)) {
        xmin = 1;
        xmax = 2;
    }
    if (xmax <= xmin)
        xmax = xmin + 1;
    if (p->ideal_line)
        ymax = fmax(ymax, xmax);
    if (ymax <= 0)
        ymax = 1;
    ymax *= 1.08;
    const double pw = PANEL_W - MARGIN_L - MARGIN_R, ph = PANEL_H - MARGIN_T - MARGIN_B;
    const double x0 = ox + MARGIN_L, y0 = MARGIN_T + ph;
#define PX(x) (x0 + pw * (log_x ? (log2(x) - log2(xmin)) / fmax(log2(xmax) - log2(xmin), 1e-9) \
                                : ((x) - xmin) / (xmax - xmin)))
#define PY(y) (y0 - ph * (y) / ymax)
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_set_line_width(cr, 1);
    cairo_rectangle(cr, x0, MARGIN_T, pw, ph);
    cairo_stroke(cr);
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
    cairo_set_font_size(cr, 14);
    cairo_move_to(cr, x0, MARGIN_T - 14);
    cairo_show_text(cr, p->title ? p->title : "");
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, 11);
    /* y ticks */
    double step = nice_step(ymax);
    char buf[64];
    for (double y = 0; y <= ymax; y += step) {
        cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
        cairo_move_to(cr, x0, PY(y));
        cairo_line_to(cr, x0 + pw, PY(y));
        cairo_stroke(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        snprintf(buf, sizeof(buf), "%g", y);
        cairo_move_to(cr, x0 - 8 - 6.5 * (double)strlen(buf), PY(y) + 4);
        cairo_show_text(cr, buf);
    }
    /* x ticks: the x values present */
    for (int s = 0; s < p->n_series; s++)
        for (int i = 0; i < p->series[s].n; i++) {
            double x = p->series[s].x[i];
            if (log_x && x <= 0)
                continue;
            snprintf(buf, sizeof(buf), "%g", x);
            cairo_move_to(cr, PX(x) - 3.2 * (double)strlen(buf), y0 + 16);
            cairo_show_text(cr, buf);
        }
    cairo_move_to(cr, x0 + pw / 2 - 30, y0 + 34);
    cairo_show_text(cr, x_label ? x_label : "");
    cairo_save(cr);
    cairo_move_to(cr, ox + 16, MARGIN_T + ph / 2 + 40);
    cairo_rotate(cr, -M_PI / 2);
    cairo_show_text(cr, p->y_label ? p->y_label : "");
    cairo_restore(cr);
    if (p->ideal_line) {
        double dash[] = {4, 4};
        cairo_set_dash(cr, dash, 2, 0);
        cairo_set_source_rgb(cr, 0.5, 0.5, 0.5);
        cairo_move_to(cr, PX(xmin), PY(xmin));
        cairo_line_to(cr, PX(xmax), PY(xmax));
        cairo_stroke(cr);
        cairo_set_dash(cr, NULL, 0, 0);
    }
    for (int s = 0; s < p->n_series; s++) {
        const DfPlotSeries *se = &p->series[s];
        const double *c = palette[s % (int)(sizeof(palette) / sizeof(palette[0]))];
        cairo_set_source_rgb(cr, c[0], c[1], c[2]);
        cairo_set_line_width(cr, 2);
        bool pen = false;
        for (int i = 0; i < se->n; i++) {
            if (isnan(se->y[i]) || (log_x && se->x[i] <= 0)) {
                pen = false;
                continue;
            }
            if (pen)
                cairo_line_to(cr, PX(se->x[i]), PY(se->y[i]));
            else
                cairo_move_to(cr, PX(se->x[i]), PY(se->y[i]));
            pen = true;
        }
        cairo_stroke(cr);
        for (int i = 0; i < se->n; i++)
            if (!isnan(se->y[i]) && !(log_x && se->x[i] <= 0)) {
                cairo_arc(cr, PX(se->x[i]), PY(se->y[i]), 3, 0, 2 * M_PI);
                cairo_fill(cr);
            }
        /* legend below the axis, two columns */
        double lx = x0 + (s % 2) * pw / 2, ly = y0 + 52 + (s / 2) * 15;
        cairo_rectangle(cr, lx, ly - 8, 12, 8);
        cairo_fill(cr);
        cairo_set_source_rgb(cr, 0, 0, 0);
        cairo_move_to(cr, lx + 16, ly);
        cairo_show_text(cr, se->label ? se->label : "");
    }
#undef PX
#undef PY
}

int df_plot_write(const char *path, const char *x_label, bool log_x, const DfPlotPanel *panels,
                  int n_panels, char *err, int err_len)
{
    const double w = PANEL_W * n_panels, h = PANEL_H;
    const char *dot = strrchr(path, '.');
    bool png = dot && strcmp(dot, ".png") == 0;
    if (!png && !(dot && strcmp(dot, ".svg") == 0)) {
        snprintf(err, (size_t)err_len, "plot file %s: use a .svg or .png name", path);
        return -EINVAL;
    }
    cairo_surface_t *surf = png ? cairo_image_surface_create(CAIRO_FORMAT_RGB24, (int)w, (int)h)
                                : cairo_svg_surface_create(path, w, h);
    if (cairo_surface_status(surf) != CAIRO_STATUS_SUCCESS) {
        snprintf(err, (size_t)err_len, "cannot create plot %s: %s", path,
                 cairo_status_to_string(cairo_surface_status(surf)));
        cairo_surface_destroy(surf);
        return -EIO;
    }
    cairo_t *cr = cairo_create(surf);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    for (int i = 0; i < n_panels; i++)
        draw_panel(cr, PANEL_W * i, &panels[i], x_label, log_x);
    cairo_destroy(cr);
    int ret = 0;
    if (png && cairo_surface_write_to_png(surf, path) != CAIRO_STATUS_SUCCESS) {
        snprintf(err, (size_t)err_len, "cannot write plot %s", path);
        ret = -EIO;
    }
    cairo_surface_finish(surf);
    if (!png && cairo_surface_status(surf) != CAIRO_STATUS_SUCCESS) {
        snprintf(err, (size_t)err_len, "cannot write plot %s: %s", path,
                 cairo_status_to_string(cairo_surface_status(surf)));
        ret = -EIO;
    }
    cairo_surface_destroy(surf);
    return ret;
}
