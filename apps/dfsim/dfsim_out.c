/* dfsim's output: the text report (model figures, the table, the
 * recorded run), JSON, CSV and the plot. */
#include "dfsim.h"

#include "cli.h"
#include "plot.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void df_sim_print(const DfSim *d)
{
    const Opts *o = &d->o;
    const SimConfig *base = &d->base;
    const SimInput *in = d->in;
    const int n_in = d->n_in;
    const Row *rows = d->rows;
    const int n_rows = d->n_rows;
    const SimGraph *graph = in[0].graph;
    const double lost_ns = d->lost_ns, dispatch_ns = d->dispatch_ns;
    const double wpp_factor = d->wpp_factor, job_factor = d->job_factor, wpp_ratio = d->wpp_ratio;
    const int frames = sim_graph_frames(graph) > 0 ? sim_graph_frames(graph) : 1;
    if (n_in == 1)
        printf("dfsim: %s, %zu tasks, %d frames, window %d, topology %s\n", in[0].path,
               sim_graph_tasks(graph), sim_graph_frames(graph), sim_graph_window(graph),
               base->topology ? base->topology : "this machine");
    else
        printf("dfsim: %d traces (%s, ...), median of their replays; %zu tasks, %d frames, "
               "window %d, topology %s\n",
               n_in, in[0].path, sim_graph_tasks(graph), sim_graph_frames(graph),
               sim_graph_window(graph), base->topology ? base->topology : "this machine");
    printf("lost CPU in the recording: %.3f ms per frame (%s), dispatch %lld ns%s\n",
           lost_ns / 1e6 / frames, base->lost_cpu ? "charged" : "not charged",
           (long long)dispatch_ns, n_in > 1 ? " (medians)" : "");
    if (base->n_slowdown) {
        printf("slowdown of a body with N workers busy (%s):",
               o->slowdown ? "--slowdown" : "ffmpeg-streams in --validate");
        for (int k = 2; k <= base->n_slowdown; k++)
            printf(" %d: %.3f", k, base->slowdown[k]);
        printf("\n");
    }
    if (job_factor > 1) {
        printf("job factor (a slice job or band while another of its picture runs on another "
               "worker): %.3f",
               job_factor);
        if (o->job_factor)
            printf(" (--job-factor)\n");
        else
            printf(" (ffmpeg-slice in --validate: CPU per frame x%.3f at 2 workers)\n", wpp_ratio);
    }
    if (wpp_factor > 1) {
        printf("WPP row factor (a row whose row above runs on another worker): %.3f", wpp_factor);
        if (o->wpp_factor)
            printf(" (--wpp-factor)\n");
        else
            printf(" (ffmpeg-slice in --validate: CPU per frame x%.3f at 2 workers)\n", wpp_ratio);
    }
    printf("idle polls: %s model, %lld ns pause + lines read at",
           sim_idle_model_name(base->idle_model), (long long)base->poll_ns);
    for (int l = DF_LEVEL_PU; l < DF_N_LEVELS; l++)
        printf(" %s %g", df_level_name((DfLevel)l), base->line_ns[l]);
    printf(" ns\n");
    if (base->fps > 0)
        printf("paced: %g fps a stream, starts spread over %d period%s, due %d periods after "
               "arrival\n",
               base->fps, base->phase_frames, base->phase_frames == 1 ? "" : "s",
               base->budget_frames);
    const char *hdr[] = {"policy",   "workers", "streams", "fps",          "fps/stream",
                         "speed-up", "idle %",  "local %", "cross-L3+ MB", "lines/poll",
                         "poll ns",  "late",    "p99 ms",  "bound"};
    const int n_col = base->fps > 0 ? 14 : 11;
    DfTable *tab = df_table_new(n_col, hdr, "lrrrrrrrrrrrrr");
    for (int i = 0; i < n_rows; i++) {
        const Row *r = &rows[i];
        char c[14][32];
        snprintf(c[0], 32, "%s", r->policy);
        snprintf(c[1], 32, "%d", r->workers);
        snprintf(c[2], 32, "%d", r->streams);
        df_fmt_num(c[3], 32, r->r.fps, 1);
        df_fmt_num(c[4], 32, r->r.fps / r->streams, 1);
        df_fmt_num(c[5], 32, r->speedup, 2);
        df_fmt_num(c[6], 32, 100 * r->r.idle_share, 1);
        df_fmt_num(c[7], 32, 100 * r->r.local_byte_share, 1);
        uint64_t far = r->r.bytes_level[DF_LEVEL_L3] + r->r.bytes_level[DF_LEVEL_NUMA] +
                       r->r.bytes_level[DF_LEVEL_MACHINE];
        df_fmt_num(c[8], 32, (double)far / 1e6, 1);
        /* Per round: what one idle worker reads before it may pause. */
        const double polls = r->r.polls ? (double)r->r.polls : 1;
        df_fmt_num(c[9], 32, (double)r->r.poll_lines / polls, 0);
        df_fmt_num(c[10], 32, (double)r->r.poll_read_ns / polls, 0);
        snprintf(c[11], 32, "%llu", (unsigned long long)r->r.frames_late);
        df_fmt_num(c[12], 32, (double)r->r.latency_p99_ns / 1e6, 2);
        snprintf(c[13], 32, "%d", r->demand_bound);
        const char *cells[14];
        for (int k = 0; k < n_col; k++)
            cells[k] = c[k];
        df_table_row(tab, cells);
    }
    df_table_print(tab, stdout);
    df_table_free(tab);
}

void df_sim_print_recorded(const DfSim *d)
{
    const SimInput *in = d->in;
    const int n_in = d->n_in;
    const Row *rec_row = d->rec_row;
    const double *rec_fps_run = d->rec_fps_run, rec_fps = d->rec_fps;
    const int rec_workers = d->rec_workers;
    if (rec_row) {
        printf("\n");
        for (int i = 0; i < n_in && n_in > 1; i++)
            printf("recorded run %d (%s): %.1f fps; replayed %.1f fps, error %+.1f %%\n", i + 1,
                   in[i].path, rec_fps_run[i], rec_row->fps_run[i],
                   100 * (rec_row->fps_run[i] - rec_fps_run[i]) / rec_fps_run[i]);
        printf("recorded run%s: %d workers, %.1f fps%s; replayed (%s) %.1f fps, error %+.1f %%\n",
               n_in > 1 ? "s" : "", rec_workers, rec_fps, n_in > 1 ? " (median)" : "",
               rec_row->policy, rec_row->r.fps, 100 * (rec_row->r.fps - rec_fps) / rec_fps);
    }
}

/* Member `name`: v, or null when it does not apply. */
static void json_int_or_null(JsonBuilder *b, const char *name, bool applies, gint64 v)
{
    json_builder_set_member_name(b, name);
    if (applies)
        json_builder_add_int_value(b, v);
    else
        json_builder_add_null_value(b);
}

bool df_sim_write_json(const DfSim *d)
{
    const Opts *o = &d->o;
    const Row *rows = d->rows;
    const int n_rows = d->n_rows;
    const SimConfig *base = &d->base;
    const SimInput *in = d->in;
    const int n_in = d->n_in;
    const SimGraph *graph = in[0].graph;
    const int frames = sim_graph_frames(graph) > 0 ? sim_graph_frames(graph) : 1;
    const double lost_ns = d->lost_ns, dispatch_ns = d->dispatch_ns;
    const double wpp_factor = d->wpp_factor, job_factor = d->job_factor;
    const Row *rec_row = d->rec_row;
    const double *rec_fps_run = d->rec_fps_run, rec_fps = d->rec_fps;
    const int rec_workers = d->rec_workers;
    JsonBuilder *vb = d->vb;
    GError *gerr = NULL;
    if (!o->json)
        return true;
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "bench");
    json_builder_add_string_value(b, "sim");
    json_builder_set_member_name(b, "trace");
    json_builder_add_string_value(b, in[0].path);
    json_builder_set_member_name(b, "traces");
    json_builder_begin_array(b);
    for (int i = 0; i < n_in; i++)
        json_builder_add_string_value(b, in[i].path);
    json_builder_end_array(b);
    json_builder_set_member_name(b, "topology");
    json_builder_add_string_value(b, base->topology ? base->topology : "this machine");
    json_builder_set_member_name(b, "tasks");
    json_builder_add_int_value(b, (gint64)sim_graph_tasks(graph));
    json_builder_set_member_name(b, "frames");
    json_builder_add_int_value(b, sim_graph_frames(graph));
    json_builder_set_member_name(b, "window");
    json_builder_add_int_value(b, o->window ? o->window : sim_graph_window(graph));
    json_builder_set_member_name(b, "recording");
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "workers");
    json_builder_add_int_value(b, rec_workers);
    df_json_double(b, "fps", rec_fps);
    if (rec_row) {
        json_builder_set_member_name(b, "policy");
        json_builder_add_string_value(b, rec_row->policy);
        df_json_double(b, "projected_fps", rec_row->r.fps);
        df_json_double(b, "error", (rec_row->r.fps - rec_fps) / rec_fps);
    }
    /* Each trace's own run and replay; the figures above are medians. */
    json_builder_set_member_name(b, "runs");
    json_builder_begin_array(b);
    for (int i = 0; i < n_in; i++) {
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "trace");
        json_builder_add_string_value(b, in[i].path);
        df_json_double(b, "fps", rec_fps_run[i]);
        if (rec_row)
            df_json_double(b, "projected_fps", rec_row->fps_run[i]);
        json_builder_set_member_name(b, "threading");
        json_builder_add_string_value(b, in[i].threading);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
    json_builder_set_member_name(b, "model");
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "ns_per_byte");
    json_builder_begin_object(b);
    for (int l = 0; l < DF_N_LEVELS; l++)
        df_json_double(b, df_level_name((DfLevel)l), base->ns_per_byte[l]);
    json_builder_end_object(b);
    json_builder_set_member_name(b, "task_overhead_ns");
    json_builder_add_int_value(b, base->task_overhead_ns);
    json_builder_set_member_name(b, "poll_ns");
    json_builder_add_int_value(b, base->poll_ns);
    json_builder_set_member_name(b, "idle_model");
    json_builder_add_string_value(b, sim_idle_model_name(base->idle_model));
    json_builder_set_member_name(b, "line_ns");
    json_builder_begin_object(b);
    for (int l = 0; l < DF_N_LEVELS; l++)
        df_json_double(b, df_level_name((DfLevel)l), base->line_ns[l]);
    json_builder_end_object(b);
    json_builder_set_member_name(b, "summary_victims");
    json_builder_add_int_value(b, base->summary_victims);
    json_builder_set_member_name(b, "lost_cpu");
    json_builder_add_boolean_value(b, base->lost_cpu);
    df_json_double(b, "lost_ms_per_frame", lost_ns / 1e6 / frames);
    json_builder_set_member_name(b, "recorded_dispatch_ns");
    json_builder_add_int_value(b, (gint64)dispatch_ns);
    /* Factor per busy count, from 2 (empty: not modelled). */
    json_builder_set_member_name(b, "slowdown");
    json_builder_begin_array(b);
    for (int k = 2; k <= base->n_slowdown; k++)
        json_builder_add_double_value(b, base->slowdown[k]);
    json_builder_end_array(b);
    /* null: not modelled. */
    df_json_double(b, "wpp_factor", wpp_factor > 1 ? wpp_factor : NAN);
    df_json_double(b, "job_factor", job_factor > 1 ? job_factor : NAN);
    /* null: unpaced. */
    df_json_double(b, "paced_fps", base->fps > 0 ? base->fps : NAN);
    json_int_or_null(b, "budget_frames", base->fps > 0, base->budget_frames);
    json_int_or_null(b, "phase_frames", base->fps > 0, base->phase_frames);
    json_builder_end_object(b);
    json_builder_set_member_name(b, "results");
    json_builder_begin_array(b);
    for (int i = 0; i < n_rows; i++) {
        const Row *r = &rows[i];
        char impl[64];
        snprintf(impl, sizeof(impl), "dfsim/%s", r->policy);
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "impl");
        json_builder_add_string_value(b, impl);
        json_builder_set_member_name(b, "policy");
        json_builder_add_string_value(b, r->policy);
        json_builder_set_member_name(b, "workers");
        json_builder_add_int_value(b, r->workers);
        json_builder_set_member_name(b, "streams");
        json_builder_add_int_value(b, r->streams);
        df_json_double(b, "fps", r->r.fps);
        df_json_double(b, "fps_per_stream", r->r.fps / r->streams);
        /* The replay of each trace, of which fps is the median. */
        json_builder_set_member_name(b, "fps_runs");
        json_builder_begin_array(b);
        for (int k = 0; k < n_in; k++)
            json_builder_add_double_value(b, r->fps_run[k]);
        json_builder_end_array(b);
        df_json_double(b, "speedup", r->speedup);
        df_json_double(b, "idle_share", r->r.idle_share);
        df_json_double(b, "local_byte_share", r->r.local_byte_share);
        df_json_double(b, "makespan_ms", (double)r->r.makespan_ns / 1e6);
        df_json_double(b, "transfer_ms", (double)r->r.transfer_ns / 1e6);
        df_json_double(b, "lost_ms", (double)r->r.lost_ns / 1e6);
        /* Idle poll rounds and what they read (model.idle_model). */
        json_builder_set_member_name(b, "polls");
        json_builder_add_int_value(b, (gint64)r->r.polls);
        df_json_double(b, "poll_lines_per_poll",
                       r->r.polls ? (double)r->r.poll_lines / (double)r->r.polls : 0);
        df_json_double(b, "poll_read_ns_per_poll",
                       r->r.polls ? (double)r->r.poll_read_ns / (double)r->r.polls : 0);
        df_json_double(b, "poll_read_ms", (double)r->r.poll_read_ns / 1e6);
        json_builder_set_member_name(b, "tasks_stolen");
        json_builder_add_int_value(b, (gint64)r->r.stolen);
        json_builder_set_member_name(b, "tasks_continued");
        json_builder_add_int_value(b, (gint64)r->r.continued);
        if (d->base.fps > 0) {
            json_builder_set_member_name(b, "frames_late");
            json_builder_add_int_value(b, (gint64)r->r.frames_late);
            df_json_double(b, "latency_p99_ms", (double)r->r.latency_p99_ns / 1e6);
            df_json_double(b, "latency_max_ms", (double)r->r.latency_max_ns / 1e6);
            json_builder_set_member_name(b, "wait_fallbacks");
            json_builder_add_int_value(b, (gint64)r->r.wait_fallbacks);
            /* Streams no schedule could exceed on these workers (the
             * demand test; at most SIM_BOUND_MAX_STREAMS). */
            json_builder_set_member_name(b, "demand_bound_streams");
            json_builder_add_int_value(b, r->demand_bound);
        }
        json_builder_set_member_name(b, "wpp_rows");
        json_builder_add_int_value(b, (gint64)r->r.rows);
        json_builder_set_member_name(b, "wpp_rows_apart");
        json_builder_add_int_value(b, (gint64)r->r.rows_apart);
        json_builder_set_member_name(b, "bytes_level");
        json_builder_begin_object(b);
        for (int l = 0; l < DF_N_LEVELS; l++) {
            json_builder_set_member_name(b, df_level_name((DfLevel)l));
            json_builder_add_int_value(b, (gint64)r->r.bytes_level[l]);
        }
        json_builder_end_object(b);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    if (vb) {
        json_builder_set_member_name(b, "validation");
        JsonNode *vn = json_builder_get_root(vb);
        json_builder_add_value(b, vn);
    }
    json_builder_end_object(b);
    gboolean ok = df_json_write(b, o->json, &gerr);
    g_object_unref(b);
    if (!ok) {
        df_cli_fail(PROG, "--json: %s", gerr->message);
        g_error_free(gerr);
        return false;
    }
    return true;
}

bool df_sim_write_csv(const DfSim *d)
{
    const Opts *o = &d->o;
    const Row *rows = d->rows;
    const int n_rows = d->n_rows;
    if (!o->csv)
        return true;
    const char *ch[] = {"impl",
                        "workers",
                        "streams",
                        "fps",
                        "fps_per_stream",
                        "speedup",
                        "idle_share",
                        "local_byte_share",
                        "bytes_self",
                        "bytes_pu",
                        "bytes_l2",
                        "bytes_l3",
                        "bytes_numa",
                        "bytes_machine",
                        "polls",
                        "poll_lines_per_poll",
                        "poll_read_ns_per_poll"};
    DfCsv csvf;
    if (df_csv_open(&csvf, o->csv, 17, ch) < 0) {
        df_cli_fail(PROG, "--csv: cannot write %s: %s", o->csv, strerror(errno));
        return false;
    }
    for (int i = 0; i < n_rows; i++) {
        const Row *r = &rows[i];
        char c[17][40];
        snprintf(c[0], 40, "dfsim/%s", r->policy);
        snprintf(c[1], 40, "%d", r->workers);
        snprintf(c[2], 40, "%d", r->streams);
        snprintf(c[3], 40, "%.3f", r->r.fps);
        snprintf(c[4], 40, "%.3f", r->r.fps / r->streams);
        snprintf(c[5], 40, "%.4f", r->speedup);
        snprintf(c[6], 40, "%.4f", r->r.idle_share);
        snprintf(c[7], 40, "%.4f", r->r.local_byte_share);
        for (int l = 0; l < DF_N_LEVELS; l++)
            snprintf(c[8 + l], 40, "%llu", (unsigned long long)r->r.bytes_level[l]);
        const double polls = r->r.polls ? (double)r->r.polls : 1;
        snprintf(c[14], 40, "%llu", (unsigned long long)r->r.polls);
        snprintf(c[15], 40, "%.2f", (double)r->r.poll_lines / polls);
        snprintf(c[16], 40, "%.1f", (double)r->r.poll_read_ns / polls);
        const char *cells[17];
        for (int k = 0; k < 17; k++)
            cells[k] = c[k];
        df_csv_row(&csvf, cells);
    }
    if (df_csv_close(&csvf) < 0) {
        df_cli_fail(PROG, "--csv: cannot write %s", o->csv);
        return false;
    }
    return true;
}

bool df_sim_write_plot(const DfSim *d)
{
    const Opts *o = &d->o;
    const Row *rows = d->rows;
    const int n_rows = d->n_rows;
    const int n_pol = (int)g_strv_length(d->pols);
    const int n_workers = d->n_workers, n_streams = d->n_streams;
    if (!o->plot)
        return true;
    int n_series = n_pol * n_streams;
    DfPlotSeries *fps_s = calloc((size_t)n_series, sizeof(DfPlotSeries));
    DfPlotSeries *sp_s = calloc((size_t)n_series, sizeof(DfPlotSeries));
    double *xs = calloc((size_t)n_rows, sizeof(double)),
           *yf = calloc((size_t)n_rows, sizeof(double)),
           *ys = calloc((size_t)n_rows, sizeof(double));
    char(*labels)[64] = calloc((size_t)n_series, 64);
    for (int i = 0; i < n_rows; i++) {
        xs[i] = rows[i].workers;
        yf[i] = rows[i].r.fps;
        ys[i] = rows[i].speedup;
    }
    for (int k = 0; k < n_series; k++) {
        const Row *r0 = &rows[k * n_workers];
        if (n_streams > 1)
            snprintf(labels[k], 64, "%s, %d streams", r0->policy, r0->streams);
        else
            snprintf(labels[k], 64, "%s", r0->policy);
        fps_s[k] = (DfPlotSeries){labels[k], n_workers, xs + k * n_workers, yf + k * n_workers};
        sp_s[k] = (DfPlotSeries){labels[k], n_workers, xs + k * n_workers, ys + k * n_workers};
    }
    DfPlotPanel panels[2] = {
        {"projected frame rate", "frames per second", n_series, fps_s, false},
        {"speed-up over 1 worker", "speed-up", n_series, sp_s, true},
    };
    char perr[256];
    int pr = df_plot_write(o->plot, "workers", true, panels, 2, perr, sizeof(perr));
    free(fps_s);
    free(sp_s);
    free(xs);
    free(yf);
    free(ys);
    free(labels);
    if (pr < 0) {
        df_cli_fail(PROG, "--plot: %s", perr);
        return false;
    }
    return true;
}
