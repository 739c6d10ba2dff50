/* dfsim's replays: the traces into graphs (with the factors measured for
 * each), every policy, stream count and worker count replayed on every
 * trace, and the medians over the traces. */
#include "dfsim.h"

#include "cli.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The median over the inputs of the double at `offset` in each. */
static double inputs_median(const SimInput *in, int n, size_t offset)
{
    double *v = g_new(double, (gsize)n);
    for (int i = 0; i < n; i++)
        memcpy(&v[i], (const char *)&in[i] + offset, sizeof(double));
    const double m = median_of(v, n);
    g_free(v);
    return m;
}

/* The per-trace results of one configuration, field by field. */
static SimResult median_result(const SimResult *runs, int n)
{
    SimResult m = runs[0];
    double *v = g_new(double, (gsize)n);
#define MEDIAN_FIELD(f, type)                                                                      \
    do {                                                                                           \
        for (int i = 0; i < n; i++)                                                                \
            v[i] = (double)runs[i].f;                                                              \
        m.f = (type)median_of(v, n);                                                               \
    } while (0)
    MEDIAN_FIELD(makespan_ns, int64_t);
    MEDIAN_FIELD(frames, uint64_t);
    MEDIAN_FIELD(fps, double);
    MEDIAN_FIELD(idle_share, double);
    MEDIAN_FIELD(tasks, uint64_t);
    MEDIAN_FIELD(stolen, uint64_t);
    MEDIAN_FIELD(continued, uint64_t);
    MEDIAN_FIELD(wait_fallbacks, uint64_t);
    MEDIAN_FIELD(rows, uint64_t);
    MEDIAN_FIELD(rows_apart, uint64_t);
    MEDIAN_FIELD(local_byte_share, double);
    MEDIAN_FIELD(transfer_ns, int64_t);
    MEDIAN_FIELD(lost_ns, int64_t);
    MEDIAN_FIELD(polls, uint64_t);
    MEDIAN_FIELD(poll_lines, uint64_t);
    MEDIAN_FIELD(poll_read_ns, int64_t);
    MEDIAN_FIELD(frames_late, uint64_t);
    MEDIAN_FIELD(latency_p99_ns, int64_t);
    MEDIAN_FIELD(latency_max_ns, int64_t);
    for (int l = 0; l < DF_N_LEVELS; l++)
        MEDIAN_FIELD(bytes_level[l], uint64_t);
#undef MEDIAN_FIELD
    g_free(v);
    return m;
}

int df_sim_load(DfSim *d)
{
    const Opts *o = &d->o;
    const SimConfig *base = &d->base;
    JsonParser *vparser = d->vparser;
    JsonArray *vresults = d->vresults;
    DfError err = {0};
    const int n_in = d->n_in = (int)g_strv_length(o->traces);
    SimInput *in = d->in = g_new0(SimInput, (gsize)n_in);
    for (int i = 0; i < n_in; i++) {
        SimInput *x = &in[i];
        x->path = o->traces[i];
        x->wpp_factor = base->wpp_factor;
        x->job_factor = base->job_factor;
        x->wpp_ratio = NAN;
        if (df_trace_read_json(x->path, &x->trace, &err) < 0) {
            df_cli_fail(PROG, "%s", err.msg);
            return -1;
        }
        if (x->trace.n_events == 0) {
            /* Nothing to replay: every figure would be 0/0. */
            df_cli_fail(PROG, "%s: the trace holds no task", x->path);
            return -1;
        }
        if (sim_graph_from_trace(&x->trace, base->ns_per_byte, &x->graph, &err) < 0) {
            df_cli_fail(PROG, "%s", err.msg);
            return -1;
        }
        x->lost_ns = (double)sim_graph_lost_ns(x->graph);
        x->dispatch_ns = (double)sim_graph_dispatch_ns(x->graph);
        /* Medians over runs of one configuration only: other clips or
         * worker counts are other measurements. */
        if (i > 0 && (x->trace.n_workers != in[0].trace.n_workers ||
                      sim_graph_frames(x->graph) != sim_graph_frames(in[0].graph))) {
            df_cli_fail(PROG,
                        "%s (%d workers, %d frames) is not a run of the same clip and worker "
                        "count as %s (%d workers, %d frames): give the traces of one "
                        "configuration",
                        x->path, x->trace.n_workers, sim_graph_frames(x->graph), in[0].path,
                        in[0].trace.n_workers, sim_graph_frames(in[0].graph));
            return -1;
        }
        if (vresults) {
            JsonObject *vr = json_node_get_object(json_parser_get_root(vparser));
            df_sim_trace_threading(vr, x->path, x->threading, sizeof(x->threading), &x->repeat);
            /* A clip has WPP rows or independent jobs (or neither); both
             * factors come from the same measurement. */
            int64_t rw, ra, ro, jw, ja, jo;
            sim_graph_self_split(x->graph, &rw, &ra, &ro);
            sim_graph_job_split(x->graph, &jw, &ja, &jo);
            const struct {
                int64_t par, alone, other;
                const char *given;
                double *out;
            } kinds[] = {{rw, ra, ro, o->wpp_factor, &x->wpp_factor},
                         {jw, ja, jo, o->job_factor, &x->job_factor}};
            for (size_t k = 0; k < G_N_ELEMENTS(kinds) && !base->topology; k++) {
                if (kinds[k].given || kinds[k].par + kinds[k].alone == 0)
                    continue;
                const double f = df_sim_factor_from(vresults, o->validate_input, base, kinds[k].par,
                                                    kinds[k].alone, kinds[k].other, &x->wpp_ratio);
                if (!isnan(f))
                    *kinds[k].out = f;
            }
        }
    }
    const SimGraph *graph = in[0].graph;
    if (sim_graph_frames(graph) == 0)
        fprintf(stderr, "dfsim: warning: the trace has no frame tags; fps counts 1 frame\n");
    return 0;
}

int df_sim_replay(DfSim *d)
{
    const SimConfig *base = &d->base;
    SimInput *in = d->in;
    const int n_in = d->n_in;
    gchar **pols = d->pols;
    const int *workers = d->workers, *streams = d->streams;
    const int n_workers = d->n_workers, n_streams = d->n_streams;
    DfError err = {0};
    int n_pol = (int)g_strv_length(pols);
    Row *rows = d->rows = calloc((size_t)(n_pol * n_workers * n_streams), sizeof(Row));
    SimResult *runs = g_new(SimResult, (gsize)n_in);
    /* Paced: the demand bound of each worker count, over the traces; it
     * depends on neither the policy nor the stream count, so it is
     * computed once here, not by every replay. */
    int *bound = g_new0(int, (gsize)n_workers);
    double *v = g_new(double, (gsize)n_in);
    for (int wi = 0; wi < n_workers && base->fps > 0; wi++) {
        for (int i = 0; i < n_in; i++) {
            SimConfig c = *base;
            c.n_workers = workers[wi];
            c.wpp_factor = in[i].wpp_factor;
            c.job_factor = in[i].job_factor;
            int k = 0;
            if (sim_demand_bound(in[i].graph, &c, SIM_BOUND_MAX_STREAMS, &k, &err) < 0) {
                df_cli_fail(PROG, "%d workers: %s: %s", workers[wi], in[i].path, err.msg);
                g_free(v);
                g_free(bound);
                g_free(runs);
                return -1;
            }
            v[i] = k;
        }
        bound[wi] = (int)median_of(v, n_in);
    }
    g_free(v);
    DfProgress prog;
    df_progress_begin(&prog, n_pol * n_workers * n_streams * n_in);
    for (int p = 0; p < n_pol; p++)
        for (int si = 0; si < n_streams; si++) {
            double fps1 = NAN;
            for (int wi = 0; wi < n_workers; wi++) {
                Row *r = &rows[d->n_rows];
                snprintf(r->policy, sizeof(r->policy), "%s", pols[p]);
                r->workers = workers[wi];
                r->streams = streams[si];
                r->fps_run = g_new(double, (gsize)n_in);
                for (int i = 0; i < n_in; i++) {
                    df_progress_step(&prog, "%s, %d workers, %d streams%s", pols[p], workers[wi],
                                     streams[si], n_in > 1 ? ", next trace" : "");
                    SimConfig c = *base;
                    c.policy = pols[p];
                    c.n_workers = workers[wi];
                    c.streams = streams[si];
                    c.wpp_factor = in[i].wpp_factor;
                    c.job_factor = in[i].job_factor;
                    if (sim_run(in[i].graph, &c, &runs[i], &err) < 0) {
                        df_progress_end(&prog);
                        df_cli_fail(PROG, "%s, %d workers: %s: %s", pols[p], workers[wi],
                                    in[i].path, err.msg);
                        g_free(runs);
                        g_free(bound);
                        d->n_rows++; /* freed with the others */
                        return -1;
                    }
                    r->fps_run[i] = runs[i].fps;
                }
                r->r = median_result(runs, n_in);
                if (workers[wi] == 1)
                    fps1 = r->r.fps;
                r->speedup = isnan(fps1) ? NAN : r->r.fps / fps1;
                r->demand_bound = bound[wi];
                d->n_rows++;
            }
        }
    g_free(runs);
    g_free(bound);
    df_progress_end(&prog);

    /* Model figures that differ from trace to trace: their medians. */
    d->lost_ns = inputs_median(in, n_in, offsetof(SimInput, lost_ns));
    d->dispatch_ns = inputs_median(in, n_in, offsetof(SimInput, dispatch_ns));
    d->wpp_factor = inputs_median(in, n_in, offsetof(SimInput, wpp_factor));
    d->job_factor = inputs_median(in, n_in, offsetof(SimInput, job_factor));
    d->wpp_ratio = inputs_median(in, n_in, offsetof(SimInput, wpp_ratio));
    return 0;
}

void df_sim_recorded(DfSim *d)
{
    const SimConfig *base = &d->base;
    const SimInput *in = d->in;
    const int n_in = d->n_in;
    const Row *rows = d->rows;
    const int n_rows = d->n_rows;
    gchar **pols = d->pols;
    /* The recorded run itself: the replay of the trace on its own worker
     * count (first policy, this machine) against the trace's wall time.
     * Free of run-to-run noise, unlike the comparison with dfbench. */
    const int rec_workers = d->rec_workers = in[0].trace.n_workers;
    double *rec_fps_run = d->rec_fps_run = g_new(double, (gsize)n_in);
    for (int i = 0; i < n_in; i++) {
        const int64_t span = sim_graph_span_ns(in[i].graph);
        rec_fps_run[i] =
            span > 0 ? (double)sim_graph_frames(in[i].graph) * 1e9 / (double)span : NAN;
    }
    d->rec_fps = median_of(rec_fps_run, n_in);
    d->rec_row = NULL;
    for (int i = 0; i < n_rows && !base->topology; i++)
        if (rows[i].workers == rec_workers && rows[i].streams == 1 &&
            strcmp(rows[i].policy, pols[0]) == 0)
            d->rec_row = &rows[i];
}

void df_sim_free(DfSim *d)
{
    Opts *o = &d->o;
    g_strfreev(d->pols);
    if (d->vparser)
        g_object_unref(d->vparser);
    if (d->vb)
        g_object_unref(d->vb);
    for (int i = 0; i < d->n_in; i++) {
        sim_graph_free(d->in[i].graph);
        df_trace_free(&d->in[i].trace);
    }
    g_free(d->in);
    g_free(d->rec_fps_run);
    for (int i = 0; i < d->n_rows; i++)
        g_free(d->rows[i].fps_run);
    free(d->rows);
    g_strfreev(o->traces);
    g_free(o->topology);
    g_free(o->policies);
    g_free(o->workers);
    g_free(o->streams);
    g_free(o->json);
    g_free(o->csv);
    g_free(o->plot);
    g_free(o->ns_per_byte);
    g_free(o->idle_model);
    g_free(o->line_ns);
    g_free(o->validate);
    g_free(o->validate_input);
    g_free(o->validate_impl);
    g_free(o->lost_cpu);
    g_free(o->slowdown);
    g_free(o->wpp_factor);
    g_free(o->job_factor);
}
