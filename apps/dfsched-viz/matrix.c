/* dfsched-viz matrix: the worker-to-worker transfer matrix.
 *
 * bytes[i][j] is the sum of the input bytes that tasks run on worker j read
 * from producers that ran on worker i, as the trace records them (the
 * diagonal is local).  Inputs produced outside the scheduler (worker -1)
 * are counted apart.
 *
 * What a remote byte costs is not in the trace; it is estimated from the
 * task durations.  For each consumer module m and pair i != j:
 *
 *   local  = m's runs on worker j whose inputs were all local (some bytes,
 *            none from another worker) - the same core, so a slower or
 *            busier core does not count as transfer cost;
 *   remote = m's runs on worker j that read from worker i and from no
 *            other remote worker;
 *   cost_m = (median duration(remote) - median duration(local))
 *            / median remote bytes(remote)                        [ns/byte]
 *
 * with at least DF_VIZ_MIN_RUNS runs on each side (medians, so that one
 * preempted run does not decide), and the pair's cost is the mean of cost_m
 * weighted by m's remote bytes i -> j.  Where no module has enough runs on
 * both sides the cost is "n/a" (NAN): a policy that never steals, or steals
 * everything, gives nothing to compare.  The estimate includes whatever else
 * differs between the two kinds of run (a stolen task also waited for a
 * steal), and comes out negative when the difference is within the noise;
 * it is a measurement, not a model. */
#include "viz.h"

#include <cairo-svg.h>
#include <cairo.h>
#include <errno.h>
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DF_VIZ_MIN_RUNS 3

/* Layout of the heat map inside DF_VIZ_MATRIX_W x DF_VIZ_MATRIX_H. */
#define MARGIN_L     110
#define MARGIN_T     80
#define MARGIN_B     80
#define SCALE_GAP    40
#define SCALE_W      22
#define SCALE_LABELS 90

/* Samples of one (module, i, j) or (module, j). */
typedef struct Runs {
    GArray *dur;   /* double ns */
    GArray *bytes; /* double remote bytes (remote runs only) */
    uint64_t total_remote;
} Runs;

static void runs_add(Runs *r, double dur, double bytes)
{
    if (!r->dur) {
        r->dur = g_array_new(FALSE, FALSE, sizeof(double));
        r->bytes = g_array_new(FALSE, FALSE, sizeof(double));
    }
    g_array_append_val(r->dur, dur);
    g_array_append_val(r->bytes, bytes);
    r->total_remote += (uint64_t)bytes;
}

static void runs_free(Runs *r)
{
    if (r->dur) {
        g_array_free(r->dur, TRUE);
        g_array_free(r->bytes, TRUE);
    }
}

static guint runs_n(const Runs *r)
{
    return r->dur ? r->dur->len : 0;
}

int df_viz_matrix_compute(const DfTrace *t, DfVizMatrix *m, DfError *err)
{
    memset(m, 0, sizeof(*m));
    const int n = t->n_workers, nm = t->n_modules > 0 ? t->n_modules : 1;
    const size_t nn = (size_t)n * (size_t)n;
    m->n = n;
    m->bytes = calloc(nn, sizeof(uint64_t));
    m->ns_per_byte = calloc(nn, sizeof(double));
    m->cost_modules = calloc(nn, sizeof(int));
    Runs *local = calloc((size_t)nm * (size_t)n, sizeof(Runs));
    Runs *remote = calloc((size_t)nm * nn, sizeof(Runs));
    int ret = 0;
    if (!m->bytes || !m->ns_per_byte || !m->cost_modules || !local || !remote) {
        ret = df_viz_error(err, -ENOMEM, "out of memory");
        goto cleanup;
    }
    for (size_t k = 0; k < t->n_events; k++) {
        const DfTraceEvent *e = &t->events[k];
        if (e->flags & DF_TRACE_SKIPPED)
            continue;
        for (uint32_t q = 0; q < e->n_inputs; q++) {
            const DfTraceInput *in = &t->inputs[e->first_input + q];
            if (in->worker >= 0 && in->worker < n)
                m->bytes[(size_t)in->worker * (size_t)n + (size_t)e->worker] += in->bytes;
            else
                m->outside += in->bytes;
        }
        DfVizInputs iv;
        df_viz_inputs(t, e, &iv);
        const int mod = e->module >= 0 && e->module < nm ? e->module : 0;
        const double dur = (double)(e->end_ns - e->start_ns);
        if (iv.remote == 0 && iv.local > 0)
            runs_add(&local[(size_t)mod * (size_t)n + (size_t)e->worker], dur, 0);
        else if (iv.remote_workers == 1)
            runs_add(
                &remote[(size_t)mod * nn + (size_t)iv.remote_from * (size_t)n + (size_t)e->worker],
                dur, (double)iv.remote);
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            const size_t ij = (size_t)i * (size_t)n + (size_t)j;
            double wsum = 0, csum = 0;
            int used = 0;
            for (int mod = 0; mod < nm && i != j; mod++) {
                Runs *l = &local[(size_t)mod * (size_t)n + (size_t)j];
                Runs *r = &remote[(size_t)mod * nn + ij];
                if (runs_n(l) < DF_VIZ_MIN_RUNS || runs_n(r) < DF_VIZ_MIN_RUNS)
                    continue;
                const double ld = df_viz_median((double *)(void *)l->dur->data, l->dur->len);
                const double rd = df_viz_median((double *)(void *)r->dur->data, r->dur->len);
                const double rb = df_viz_median((double *)(void *)r->bytes->data, r->bytes->len);
                if (rb <= 0)
                    continue;
                csum += (rd - ld) / rb * (double)r->total_remote;
                wsum += (double)r->total_remote;
                used++;
            }
            m->ns_per_byte[ij] = used && wsum > 0 ? csum / wsum : NAN;
            m->cost_modules[ij] = used;
        }
cleanup:
    if (local)
        for (size_t k = 0; k < (size_t)nm * (size_t)n; k++)
            runs_free(&local[k]);
    if (remote)
        for (size_t k = 0; k < (size_t)nm * nn; k++)
            runs_free(&remote[k]);
    free(local);
    free(remote);
    if (ret < 0)
        df_viz_matrix_free(m);
    return ret;
}

void df_viz_matrix_free(DfVizMatrix *m)
{
    free(m->bytes);
    free(m->ns_per_byte);
    free(m->cost_modules);
    memset(m, 0, sizeof(*m));
}

static uint64_t total_bytes(const DfVizMatrix *m, uint64_t *diag)
{
    uint64_t all = 0, d = 0;
    for (int i = 0; i < m->n; i++)
        for (int j = 0; j < m->n; j++) {
            all += m->bytes[(size_t)i * (size_t)m->n + (size_t)j];
            if (i == j)
                d += m->bytes[(size_t)i * (size_t)m->n + (size_t)j];
        }
    if (diag)
        *diag = d;
    return all;
}

void df_viz_matrix_print(const DfVizMatrix *m, FILE *out)
{
    uint64_t diag, all = total_bytes(m, &diag);
    char b[32];
    df_viz_fmt_bytes(b, sizeof(b), (double)all);
    fprintf(out, "bytes read across workers: %s, local share %.1f %%\n", b,
            all ? 100.0 * (double)diag / (double)all : 0.0);
    for (int i = 0; i < m->n; i++)
        for (int j = 0; j < m->n; j++) {
            const size_t ij = (size_t)i * (size_t)m->n + (size_t)j;
            if (!m->bytes[ij])
                continue;
            df_viz_fmt_bytes(b, sizeof(b), (double)m->bytes[ij]);
            fprintf(out, "  w%d -> w%d: %10s (%5.1f %%)", i, j, b,
                    100.0 * (double)m->bytes[ij] / (double)all);
            if (i == j)
                fprintf(out, "  local\n");
            else if (isnan(m->ns_per_byte[ij]))
                fprintf(out, "  cost n/a (too few local and remote runs of one module)\n");
            else
                fprintf(out, "  cost %.4f ns/B (from %d module%s)\n", m->ns_per_byte[ij],
                        m->cost_modules[ij], m->cost_modules[ij] == 1 ? "" : "s");
        }
    if (m->outside) {
        df_viz_fmt_bytes(b, sizeof(b), (double)m->outside);
        fprintf(out, "  from outside the scheduler: %s\n", b);
    }
}

static int write_csv(const DfVizMatrix *m, const char *path, DfError *err)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return df_viz_error(err, -errno, "cannot write %s: %s", path, strerror(errno));
    /* Header, then one row per producer worker: bytes to each consumer,
     * then the measured ns per byte to each consumer ("n/a" where not
     * derivable; the diagonal is local, always n/a). */
    fprintf(f, "producer");
    for (int j = 0; j < m->n; j++)
        fprintf(f, ",bytes_to_w%d", j);
    for (int j = 0; j < m->n; j++)
        fprintf(f, ",ns_per_byte_to_w%d", j);
    fprintf(f, "\n");
    for (int i = 0; i < m->n; i++) {
        fprintf(f, "w%d", i);
        for (int j = 0; j < m->n; j++)
            fprintf(f, ",%llu", (unsigned long long)m->bytes[(size_t)i * (size_t)m->n + (size_t)j]);
        for (int j = 0; j < m->n; j++) {
            const double c = m->ns_per_byte[(size_t)i * (size_t)m->n + (size_t)j];
            if (isnan(c))
                fprintf(f, ",n/a");
            else
                fprintf(f, ",%.6g", c);
        }
        fprintf(f, "\n");
    }
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0 || bad)
        return df_viz_error(err, -EIO, "cannot write %s: %s", path, strerror(errno));
    return 0;
}

/* Colour of t in [0, 1]: white to dark blue (ColorBrewer "Blues" ends). */
static void heat_rgb(double t, double rgb[3])
{
    static const double lo[3] = {0.97, 0.98, 1.00}, hi[3] = {0.03, 0.19, 0.42};
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    for (int k = 0; k < 3; k++)
        rgb[k] = lo[k] + (hi[k] - lo[k]) * t;
}

/* Bytes mapped linearly to [0, 1] of the largest cell: decodes move
 * hundreds of MiB between every pair, and a log scale paints them all the
 * same dark; the cells' text gives the small values exactly. */
static double heat_t(uint64_t b, uint64_t maxb)
{
    return maxb ? (double)b / (double)maxb : 0;
}

static void text_at(cairo_t *cr, double cx, double cy, const char *s)
{
    cairo_text_extents_t ex;
    cairo_text_extents(cr, s, &ex);
    cairo_move_to(cr, cx - ex.width / 2 - ex.x_bearing, cy - ex.height / 2 - ex.y_bearing);
    cairo_show_text(cr, s);
}

static void draw(cairo_t *cr, const DfVizMatrix *m)
{
    const int n = m->n;
    const double side_w = DF_VIZ_MATRIX_W - MARGIN_L - SCALE_GAP - SCALE_W - SCALE_LABELS;
    const double side_h = DF_VIZ_MATRIX_H - MARGIN_T - MARGIN_B;
    const double side = side_w < side_h ? side_w : side_h, cell = side / n;
    const double x0 = MARGIN_L, y0 = MARGIN_T;
    uint64_t diag, all = total_bytes(m, &diag), maxb = 0;
    for (size_t k = 0; k < (size_t)n * (size_t)n; k++)
        maxb = m->bytes[k] > maxb ? m->bytes[k] : maxb;
    char buf[96], b[32];

    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
    cairo_set_font_size(cr, 15);
    cairo_move_to(cr, x0, 28);
    cairo_show_text(cr, "bytes produced on worker i, read on worker j");
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, 11);
    df_viz_fmt_bytes(b, sizeof(b), (double)all);
    snprintf(buf, sizeof(buf), "%s in all, local share %.1f %%; cells: bytes, share, ns/byte", b,
             all ? 100.0 * (double)diag / (double)all : 0.0);
    cairo_move_to(cr, x0, 48);
    cairo_show_text(cr, buf);

    const int label_every = cell >= 18 ? 1 : (int)ceil(18 / cell);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            const size_t ij = (size_t)i * (size_t)n + (size_t)j;
            double c[3];
            const double tt = heat_t(m->bytes[ij], maxb);
            heat_rgb(tt, c);
            cairo_set_source_rgb(cr, c[0], c[1], c[2]);
            cairo_rectangle(cr, x0 + j * cell, y0 + i * cell, cell, cell);
            cairo_fill(cr);
            if (cell < 28)
                continue;
            /* Text in white on dark cells. */
            const double ink = tt > 0.55 ? 1 : 0;
            cairo_set_source_rgb(cr, ink, ink, ink);
            const double cx = x0 + (j + 0.5) * cell, cy = y0 + (i + 0.5) * cell;
            snprintf(buf, sizeof(buf), "%.1f %%",
                     all ? 100.0 * (double)m->bytes[ij] / (double)all : 0.0);
            if (cell < 64) {
                text_at(cr, cx, cy, buf);
                continue;
            }
            df_viz_fmt_bytes(b, sizeof(b), (double)m->bytes[ij]);
            text_at(cr, cx, cy - 15, b);
            text_at(cr, cx, cy, buf);
            if (i == j)
                snprintf(buf, sizeof(buf), "local");
            else if (isnan(m->ns_per_byte[ij]))
                snprintf(buf, sizeof(buf), "n/a ns/B");
            else
                snprintf(buf, sizeof(buf), "%.3g ns/B", m->ns_per_byte[ij]);
            text_at(cr, cx, cy + 15, buf);
        }
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_set_line_width(cr, 1);
    cairo_rectangle(cr, x0, y0, side, side);
    cairo_stroke(cr);
    for (int k = 0; k < n; k += label_every) {
        snprintf(buf, sizeof(buf), "w%d", k);
        text_at(cr, x0 + (k + 0.5) * cell, y0 + side + 12, buf);
        text_at(cr, x0 - 18, y0 + (k + 0.5) * cell, buf);
    }
    text_at(cr, x0 + side / 2, y0 + side + 36, "consumer worker j");
    cairo_save(cr);
    cairo_translate(cr, x0 - 52, y0 + side / 2);
    cairo_rotate(cr, -M_PI / 2);
    text_at(cr, 0, 0, "producer worker i");
    cairo_restore(cr);

    /* Colour scale, ticks at fifths. */
    const double sx = x0 + side + SCALE_GAP;
    for (int p = 0; p < (int)side; p++) {
        double c[3];
        heat_rgb(1.0 - (double)p / side, c);
        cairo_set_source_rgb(cr, c[0], c[1], c[2]);
        cairo_rectangle(cr, sx, y0 + p, SCALE_W, 1.5);
        cairo_fill(cr);
    }
    cairo_set_source_rgb(cr, 0, 0, 0);
    cairo_rectangle(cr, sx, y0, SCALE_W, side);
    cairo_stroke(cr);
    for (int k = 0; k <= 5; k++) {
        const double tt = k / 5.0, y = y0 + side * (1 - tt);
        df_viz_fmt_bytes(b, sizeof(b), tt * (double)maxb);
        cairo_move_to(cr, sx + SCALE_W, y);
        cairo_line_to(cr, sx + SCALE_W + 4, y);
        cairo_stroke(cr);
        cairo_move_to(cr, sx + SCALE_W + 7, y + 4);
        cairo_show_text(cr, b);
    }
    cairo_move_to(cr, sx - 6, y0 - 10);
    cairo_show_text(cr, "bytes");
}

static int write_image(const DfVizMatrix *m, const char *path, bool png, DfError *err)
{
    cairo_surface_t *surf =
        png ? cairo_image_surface_create(CAIRO_FORMAT_RGB24, DF_VIZ_MATRIX_W, DF_VIZ_MATRIX_H)
            : cairo_svg_surface_create(path, DF_VIZ_MATRIX_W, DF_VIZ_MATRIX_H);
    int ret = 0;
    if (cairo_surface_status(surf) != CAIRO_STATUS_SUCCESS) {
        ret = df_viz_error(err, -EIO, "cannot write %s: %s", path,
                           cairo_status_to_string(cairo_surface_status(surf)));
        goto cleanup;
    }
    cairo_t *cr = cairo_create(surf);
    draw(cr, m);
    cairo_destroy(cr);
    if (png) {
        const cairo_status_t st = cairo_surface_write_to_png(surf, path);
        if (st != CAIRO_STATUS_SUCCESS)
            ret = df_viz_error(err, -EIO, "cannot write %s: %s", path, cairo_status_to_string(st));
    }
    cairo_surface_finish(surf);
    if (!ret && cairo_surface_status(surf) != CAIRO_STATUS_SUCCESS)
        ret = df_viz_error(err, -EIO, "cannot write %s: %s", path,
                           cairo_status_to_string(cairo_surface_status(surf)));
cleanup:
    cairo_surface_destroy(surf);
    return ret;
}

int df_viz_matrix_write(const DfVizMatrix *m, const char *path, DfError *err)
{
    const char *dot = strrchr(path, '.');
    if (dot && strcmp(dot, ".csv") == 0)
        return write_csv(m, path, err);
    if (dot && (strcmp(dot, ".png") == 0 || strcmp(dot, ".svg") == 0))
        return write_image(m, path, strcmp(dot, ".png") == 0, err);
    return df_viz_error(err, -EINVAL, "%s: the output must end in .png, .svg or .csv", path);
}
