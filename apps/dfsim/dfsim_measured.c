/* dfsim's use of dfbench decode's JSON (--validate): the measured
 * figures that calibrate the model (slowdown, WPP and job factors, a
 * trace's threading and repeat) and the comparison of the projections
 * with them. */
#include "dfsim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The member `field` of dfbench decode's result for impl/workers (NULL
 * if absent). */
static JsonNode *measured_node(JsonArray *results, const char *impl, int workers, const char *input,
                               const char *field)
{
    for (guint i = 0; i < json_array_get_length(results); i++) {
        /* The file is user input: a member of another type is no match
         * (json-glib's getters would warn and hand strcmp() a NULL). */
        JsonNode *on = json_array_get_element(results, i);
        JsonObject *o = JSON_NODE_HOLDS_OBJECT(on) ? json_node_get_object(on) : NULL;
        JsonNode *in = o ? json_object_get_member(o, "impl") : NULL;
        JsonNode *wn = o ? json_object_get_member(o, "workers") : NULL;
        JsonNode *pn = o ? json_object_get_member(o, "input") : NULL;
        JsonNode *fn = o ? json_object_get_member(o, field) : NULL;
        const char *name = in && JSON_NODE_HOLDS_VALUE(in) ? json_node_get_string(in) : NULL;
        const char *inp = pn && JSON_NODE_HOLDS_VALUE(pn) ? json_node_get_string(pn) : NULL;
        if (!name || !wn || !JSON_NODE_HOLDS_VALUE(wn) || strcmp(name, impl) != 0 ||
            json_node_get_int(wn) != workers)
            continue;
        if (input && inp && !strstr(inp, input))
            continue;
        return fn;
    }
    return NULL;
}

/* A number of dfbench decode's result for impl/workers (NAN if absent). */
static double measured(JsonArray *results, const char *impl, int workers, const char *input,
                       const char *field)
{
    JsonNode *fn = measured_node(results, impl, workers, input, field);
    return fn && JSON_NODE_HOLDS_VALUE(fn) && json_node_get_value_type(fn) != G_TYPE_STRING
               ? json_node_get_double(fn)
               : NAN;
}

/* The threading mode in dfbench decode's "threading" text ("slice",
 * "frame", "none": the word before the reason); "" for no text. */
static void threading_mode(JsonNode *fn, char *out, size_t len)
{
    const char *t = fn && JSON_NODE_HOLDS_VALUE(fn) && json_node_get_value_type(fn) == G_TYPE_STRING
                        ? json_node_get_string(fn)
                        : "";
    snprintf(out, len, "%.*s", (int)strcspn(t, ":"), t);
}

/* The samples of dfbench decode's result for impl/workers (NULL if none). */
static JsonArray *measured_samples(JsonArray *results, const char *impl, int workers,
                                   const char *input)
{
    JsonNode *fn = measured_node(results, impl, workers, input, "fps_samples");
    return fn && JSON_NODE_HOLDS_ARRAY(fn) ? json_node_get_array(fn) : NULL;
}

/* The i-th (from 0) of those samples, NAN when absent. */
static double sample_at(JsonArray *samples, int i)
{
    JsonNode *v = samples && i >= 0 && (guint)i < json_array_get_length(samples)
                      ? json_array_get_element(samples, (guint)i)
                      : NULL;
    return v && JSON_NODE_HOLDS_VALUE(v) && json_node_get_value_type(v) != G_TYPE_STRING
               ? json_node_get_double(v)
               : NAN;
}

/* The threading of a trace's own run and the repeat it ran in (from 1;
 * 0 when not said), from dfbench decode's run.traces entry for the same
 * file name ("" and 0 when the trace is not listed). */
void df_sim_trace_threading(JsonObject *vroot, const char *path, char *out, size_t len, int *repeat)
{
    out[0] = '\0';
    *repeat = 0;
    JsonNode *rn = json_object_get_member(vroot, "run");
    JsonObject *run = rn && JSON_NODE_HOLDS_OBJECT(rn) ? json_node_get_object(rn) : NULL;
    JsonNode *tn = run ? json_object_get_member(run, "traces") : NULL;
    JsonArray *traces = tn && JSON_NODE_HOLDS_ARRAY(tn) ? json_node_get_array(tn) : NULL;
    gchar *want = g_path_get_basename(path);
    for (guint i = 0; traces && i < json_array_get_length(traces); i++) {
        JsonNode *en = json_array_get_element(traces, i);
        JsonObject *e = JSON_NODE_HOLDS_OBJECT(en) ? json_node_get_object(en) : NULL;
        JsonNode *fn = e ? json_object_get_member(e, "file") : NULL;
        JsonNode *thn = e ? json_object_get_member(e, "threading") : NULL;
        if (!fn || !thn || json_node_get_value_type(fn) != G_TYPE_STRING ||
            json_node_get_value_type(thn) != G_TYPE_STRING)
            continue;
        gchar *name = g_path_get_basename(json_node_get_string(fn));
        const bool same = strcmp(name, want) == 0;
        g_free(name);
        if (same) {
            threading_mode(thn, out, len);
            JsonNode *rn2 = json_object_get_member(e, "repeat");
            if (rn2 && JSON_NODE_HOLDS_VALUE(rn2) && json_node_get_value_type(rn2) == G_TYPE_INT64)
                *repeat = (int)json_node_get_int(rn2);
            break;
        }
    }
    g_free(want);
}

static double measured_fps(JsonArray *results, const char *impl, int workers, const char *input)
{
    return measured(results, impl, workers, input, "fps_median");
}

/* The WPP row factor dfbench decode measured: its ffmpeg-slice peer runs
 * the same rows on libavcodec's own threads, each row's above on the other
 * thread at 2 workers, alone at 1.  Its CPU per frame grows by
 * r = 1 - rho + rho * f where rho is the rows' share of the work, here the
 * ordered jobs' share of the graph's self time (rows recorded next to a
 * remote row above counted at 1/f, so a fixed point), after the slowdown
 * every body has with 2 busy.  The job factor likewise, from the
 * unordered jobs (slices, bands: each next to a sibling on the other
 * thread at 2 workers).  NAN when not measured or no such jobs. */
double df_sim_factor_from(JsonArray *results, const char *input, const SimConfig *c, int64_t rw,
                          int64_t ra, int64_t other, double *ratio)
{
    const double one = measured(results, "ffmpeg-slice", 1, input, "cpu_ms_per_frame");
    const double two = measured(results, "ffmpeg-slice", 2, input, "cpu_ms_per_frame");
    *ratio = two / one;
    if (rw + ra == 0 || !(one > 0) || !(two > 0))
        return NAN;
    const double r = two / one / (c->n_slowdown >= 2 ? c->slowdown[2] : 1.0);
    if (r <= 1)
        return 1.0;
    double f = r;
    for (int it = 0; it < 50; it++) {
        const double rows = (double)ra + (double)rw / f;
        f = 1 + (r - 1) * (rows + (double)other) / rows;
        if (f > 10)
            return 10;
    }
    return f;
}

/* --slowdown "N:F,...": F for N busy workers, linear between the points
 * given (1 busy: 1), the last beyond.  false on a bad list. */
bool df_sim_parse_slowdown(const char *spec, SimConfig *c)
{
    double f[SIM_MAX_SLOWDOWN + 1] = {0};
    f[1] = 1;
    int max = 1;
    gchar **parts = g_strsplit(spec, ",", -1);
    bool ok = parts[0] != NULL;
    for (int i = 0; ok && parts[i]; i++) {
        char *end = NULL;
        errno = 0;
        const long n = strtol(parts[i], &end, 10);
        ok = errno == 0 && end != parts[i] && *end == ':' && n >= 2 && n <= SIM_MAX_SLOWDOWN &&
             f[n] == 0;
        if (!ok)
            break;
        const char *fs = end + 1;
        const double v = g_ascii_strtod(fs, &end);
        /* Negated: NaN fails. */
        ok = end != fs && *end == '\0' && v >= 0.5 && v <= 10;
        f[n] = v;
        max = (int)n > max ? (int)n : max;
    }
    g_strfreev(parts);
    if (!ok)
        return false;
    for (int k = 2, lo = 1; k <= max; k++) {
        if (f[k] > 0) {
            lo = k;
            continue;
        }
        int hi = k + 1;
        while (f[hi] == 0)
            hi++;
        f[k] = f[lo] + (f[hi] - f[lo]) * (k - lo) / (hi - lo);
    }
    memcpy(c->slowdown, f, sizeof(f));
    c->n_slowdown = max;
    return true;
}

/* The slowdown dfbench decode measured: its ffmpeg-streams peer decodes N
 * independent single-threaded streams at once, so fps(1) / (fps(N) / N)
 * is how much slower each core decoded with N busy.  Taken per repeat
 * (both samples in the same stretch of this machine's drifting speed),
 * the median over repeats; with no samples, from the medians.  Never
 * below 1: more busy cores cannot make a body faster, and a figure below
 * 1 (seen here: 0.87) is the drift between the two samples. */
static double streams_slowdown(JsonArray *results, const char *input, int n)
{
    JsonArray *a = measured_samples(results, "ffmpeg-streams", 1, input);
    JsonArray *b = measured_samples(results, "ffmpeg-streams", n, input);
    double f = NAN;
    const guint len = a && b ? MIN(json_array_get_length(a), json_array_get_length(b)) : 0;
    if (len > 0) {
        double *r = g_new(double, len);
        for (guint i = 0; i < len; i++) {
            const double one = sample_at(a, (int)i), many = sample_at(b, (int)i);
            r[i] = one > 0 && many > 0 ? one / (many / n) : NAN;
        }
        f = median_of(r, (int)len);
        g_free(r);
    }
    if (isnan(f)) {
        const double one = measured_fps(results, "ffmpeg-streams", 1, input);
        const double many = measured_fps(results, "ffmpeg-streams", n, input);
        f = one > 0 && many > 0 ? one / (many / n) : NAN;
    }
    return isnan(f) ? NAN : f < 1 ? 1 : f > 10 ? 10 : f;
}

void df_sim_slowdown_from(JsonArray *results, const char *input, SimConfig *c)
{
    double f[SIM_MAX_SLOWDOWN + 1] = {0};
    int max = 0;
    for (int n = 2; n <= SIM_MAX_SLOWDOWN; n++) {
        const double fn = streams_slowdown(results, input, n);
        if (!isnan(fn)) {
            f[n] = fn;
            max = n;
        }
    }
    if (!max)
        return;
    GString *spec = g_string_new(NULL);
    for (int n = 2; n <= max; n++)
        if (f[n] > 0)
            g_string_append_printf(spec, "%s%d:%.4f", spec->len ? "," : "", n, f[n]);
    df_sim_parse_slowdown(spec->str, c);
    g_string_free(spec, TRUE);
}

void df_sim_validate(DfSim *d)
{
    const Opts *o = &d->o;
    const SimInput *in = d->in;
    const int n_in = d->n_in;
    const Row *rows = d->rows;
    const int n_rows = d->n_rows;
    JsonArray *results = d->vresults;
    bool all_ok = true;
    JsonBuilder *vb = json_builder_new();
    json_builder_begin_object(vb);
    json_builder_set_member_name(vb, "source");
    json_builder_add_string_value(vb, o->validate);
    json_builder_set_member_name(vb, "entries");
    json_builder_begin_array(vb);
    int checked = 0, not_comparable = 0, n_paired = 0;
    printf("\nvalidation against %s%s:\n", o->validate,
           in[0].threading[0] ? "" : " (the trace is not in its run.traces: threading unknown)");
    for (int i = 0; i < n_rows; i++) {
        const Row *r = &rows[i];
        if (r->streams != 1 || r->workers > 2)
            continue;
        char impl[64];
        snprintf(impl, sizeof(impl), "%s%s", o->validate_impl ? o->validate_impl : "dfmedia/",
                 r->policy);
        double m = measured_fps(results, impl, r->workers, o->validate_input);
        if (isnan(m))
            continue;
        double e = (r->r.fps - m) / m;
        /* Paired: each trace's projection against the sample of the
         * repeat it ran in, the median over them.  This machine's speed
         * drifts (by 25 % from one minute to the next, seen here), and
         * both sides of a pair see the same stretch of it. */
        JsonArray *samples = measured_samples(results, impl, r->workers, o->validate_input);
        double *pe = g_new(double, (gsize)n_in);
        bool paired = true;
        for (int k = 0; k < n_in && paired; k++) {
            const double sm = sample_at(samples, in[k].repeat - 1);
            paired = in[k].repeat > 0 && sm > 0;
            pe[k] = paired ? (r->fps_run[k] - sm) / sm : NAN;
        }
        const double ep = paired ? median_of(pe, n_in) : NAN;
        g_free(pe);
        bool ok = fabs(paired ? ep : e) <= 0.10;
        /* A trace holds the tasks of its own threading mode only:
         * libavcodec's frame threads run inside D, outside the trace,
         * and a run without threads has no jobs to spread. */
        char mode[16];
        threading_mode(measured_node(results, impl, r->workers, o->validate_input, "threading"),
                       mode, sizeof(mode));
        const bool comparable =
            !in[0].threading[0] || !mode[0] || strcmp(in[0].threading, mode) == 0;
        if (comparable) {
            all_ok &= ok;
            checked++;
            n_paired += paired;
        } else {
            not_comparable++;
        }
        printf("  %-24s %d workers: measured %.1f fps, projected %.1f fps, error %+.1f %%", impl,
               r->workers, m, r->r.fps, 100 * e);
        if (paired)
            printf(", paired %+.1f %%", 100 * ep);
        printf(" %s", !comparable ? "not comparable" : ok ? "ok" : "OUTSIDE 10 %");
        if (!comparable)
            printf(" (threading %s there, %s in the trace)", mode, in[0].threading);
        printf("\n");
        json_builder_begin_object(vb);
        json_builder_set_member_name(vb, "impl");
        json_builder_add_string_value(vb, impl);
        json_builder_set_member_name(vb, "workers");
        json_builder_add_int_value(vb, r->workers);
        df_json_double(vb, "measured_fps", m);
        df_json_double(vb, "projected_fps", r->r.fps);
        df_json_double(vb, "error", e);
        /* null: the traces do not say which repeat they ran in. */
        df_json_double(vb, "error_paired", ep);
        json_builder_set_member_name(vb, "within_10pct");
        json_builder_add_boolean_value(vb, ok);
        json_builder_set_member_name(vb, "threading");
        json_builder_add_string_value(vb, mode);
        json_builder_set_member_name(vb, "comparable");
        json_builder_add_boolean_value(vb, comparable);
        json_builder_end_object(vb);
    }
    json_builder_end_array(vb);
    json_builder_set_member_name(vb, "all_within_10pct");
    json_builder_add_boolean_value(vb, checked > 0 && all_ok);
    json_builder_set_member_name(vb, "checked");
    json_builder_add_int_value(vb, checked);
    json_builder_set_member_name(vb, "not_comparable");
    json_builder_add_int_value(vb, not_comparable);
    /* What the 10 % bound was held against. */
    json_builder_set_member_name(vb, "basis");
    json_builder_add_string_value(vb, n_paired == checked ? "paired"
                                      : n_paired == 0     ? "medians"
                                                          : "mixed");
    json_builder_set_member_name(vb, "trace_threading");
    json_builder_add_string_value(vb, in[0].threading);
    json_builder_end_object(vb);
    if (checked)
        printf("  within 10 %% means: %s\n",
               n_paired == checked
                   ? "the median of the paired errors (each trace against the sample of "
                     "its repeat)"
                   : "the median projection against the median sample");
    if (not_comparable)
        printf("  %d not comparable: the trace ran libavcodec's %s threading; a trace "
               "projects only its own mode (frame threads run inside D, outside it)\n",
               not_comparable, in[0].threading);
    if (!checked)
        fprintf(stderr, "dfsim: warning: no matching 1- or 2-worker results in %s\n", o->validate);
    d->vb = vb;
    d->all_ok = all_ok;
}
