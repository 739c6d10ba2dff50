/* What graph, matrix and modules share. */
#include "viz.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* dfbench's plot palette, so that a worker has one colour everywhere. */
static const double palette[][3] = {
    {0.12, 0.47, 0.71}, {1.00, 0.50, 0.05}, {0.17, 0.63, 0.17}, {0.84, 0.15, 0.16},
    {0.58, 0.40, 0.74}, {0.55, 0.34, 0.29}, {0.89, 0.47, 0.76}, {0.50, 0.50, 0.50},
    {0.74, 0.74, 0.13}, {0.09, 0.75, 0.81},
};
#define N_PALETTE ((int)(sizeof(palette) / sizeof(palette[0])))

void df_viz_worker_rgb(int w, double rgb[3])
{
    const double *c = palette[(w < 0 ? 0 : w) % N_PALETTE];
    memcpy(rgb, c, 3 * sizeof(double));
}

void df_viz_worker_hex(int w, char out[8])
{
    double c[3];
    df_viz_worker_rgb(w, c);
    snprintf(out, 8, "#%02x%02x%02x", (unsigned)lround(c[0] * 255), (unsigned)lround(c[1] * 255),
             (unsigned)lround(c[2] * 255));
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double df_viz_median(double *v, size_t n)
{
    if (!n)
        return NAN;
    qsort(v, n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void df_viz_fmt_bytes(char *buf, size_t len, double bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024 && u < 4) {
        bytes /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, len, "%.0f B", bytes);
    else
        snprintf(buf, len, "%.*f %s", bytes < 10 ? 2 : bytes < 100 ? 1 : 0, bytes, units[u]);
}

const char *df_viz_module_name(const DfTrace *t, int m)
{
    return m >= 0 && m < t->n_modules && t->module_names[m] ? t->module_names[m] : "task";
}

void df_viz_inputs(const DfTrace *t, const DfTraceEvent *e, DfVizInputs *out)
{
    memset(out, 0, sizeof(*out));
    out->remote_from = -1;
    for (uint32_t k = 0; k < e->n_inputs; k++) {
        const DfTraceInput *in = &t->inputs[e->first_input + k];
        if (in->worker < 0 || in->worker >= t->n_workers) {
            out->outside += in->bytes;
        } else if (in->worker == e->worker) {
            out->local += in->bytes;
        } else if (in->bytes) {
            out->remote += in->bytes;
            if (out->remote_workers == 0) {
                out->remote_workers = 1;
                out->remote_from = in->worker;
            } else if (in->worker != out->remote_from) {
                /* Only "one or several" matters to the callers. */
                out->remote_workers = 2;
                out->remote_from = -1;
            }
        }
    }
}

bool df_viz_is_remote(const DfTraceEvent *e, const DfVizInputs *in)
{
    return (e->flags & DF_TRACE_STOLEN) || in->remote > 0;
}

int df_viz_error(DfError *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
        va_end(ap);
    }
    return code;
}

int df_viz_check_output(const char *path, DfError *err)
{
    if (!path || !*path)
        return df_viz_error(err, -EINVAL, "empty output file name");
    FILE *f = fopen(path, "w");
    if (!f)
        return df_viz_error(err, -errno, "cannot write %s: %s", path, strerror(errno));
    fclose(f);
    return 0;
}
