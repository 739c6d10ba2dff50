/* dfbench realtime's output: the table, the traces written, JSON, CSV and
 * the plot. */
#include "bench_realtime.h"
#include "plot.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --------------------------------------------------------------- output */

void df_rt_print_table(const DfRt *rt)
{
    static const char *const headers[] = {"workers",     "impl",     "max K",  "K*",
                                          "K/K*",        "Mpixel/s", "frames", "p99 lat ms",
                                          "p99 late ms", "trials",   "note"};
    DfTable *t = df_table_new(11, headers, "rlrrrrrrrll");
    const double px = (double)rt->clip.par->width * rt->clip.par->height * rt->o.fps / 1e6;
    for (guint i = 0; i < rt->results->len; i++) {
        const DfRtResult *r = &g_array_index(rt->results, DfRtResult, i);
        char w[16], k[32], ks[32], share[32], mp[32], fr[32], lat[32], late[32], note[320];
        GString *trials = g_string_new(NULL);
        for (guint j = 0; j < r->trials->len; j++) {
            const DfRtTrial *tr = &g_array_index(r->trials, DfRtTrial, j);
            g_string_append_printf(trials, "%s%d:%s", j ? " " : "", tr->streams,
                                   tr->error[0] ? "err"
                                   : tr->misses ? "miss"
                                                : "ok");
        }
        snprintf(w, sizeof(w), "%d", r->workers);
        snprintf(k, sizeof(k), "%d%s", r->max_streams, r->capped ? "+" : "");
        const double kst = df_rt_k_star(rt, r->workers);
        df_fmt_num(ks, sizeof(ks), kst, 1);
        if (isnan(kst) || kst <= 0)
            snprintf(share, sizeof(share), "-");
        else
            snprintf(share, sizeof(share), "%.0f%%", 100.0 * r->max_streams / kst);
        df_fmt_num(mp, sizeof(mp), r->max_streams * px, 1);
        snprintf(fr, sizeof(fr), "%llu/%llu", (unsigned long long)r->best.frames,
                 (unsigned long long)r->best.expected);
        df_fmt_num(lat, sizeof(lat), r->best.latency_p99_ms, 1);
        df_fmt_num(late, sizeof(late), r->best.late_p99_ms, 1);
        note[0] = '\0';
        if (r->oversubscribed)
            snprintf(note, sizeof(note), "oversubscribed");
        for (guint j = 0; j < r->trials->len; j++) {
            const DfRtTrial *tr = &g_array_index(r->trials, DfRtTrial, j);
            if (tr->error[0]) {
                const size_t len = strlen(note);
                snprintf(note + len, sizeof(note) - len, "%sK=%d: %s", len ? "; " : "", tr->streams,
                         tr->error);
                break;
            }
        }
        const char *cells[] = {w, r->impl, k, ks, share, mp, fr, lat, late, trials->str, note};
        df_table_row(t, cells);
        g_string_free(trials, TRUE);
    }
    df_table_print(t, stdout);
    df_table_free(t);
    char t1[64];
    df_fmt_num(t1, sizeof(t1), rt->t1_fps, 1);
    printf("max K: most concurrent streams with no frame later than start + (i + %d)/%.3g s "
           "(B = reorder delay %d + %d frames); '+': --max-streams reached\n"
           "K*: workers x T(1) / %.3g, T(1) = %s fps, single-threaded libavcodec on one core "
           "(mean of %d samples, before and after the trials); K/K*: max K as a share of it\n"
           "Mpixel/s: K x width x height x fps carried in real time (Gustafson's scaled size)\n"
           "p99 lat: dfmedia's packet-in to frame-out latency (worst stream) at max K; p99 late: "
           "arrival - due over all frames (negative: early)\n",
           rt->budget_frames, rt->o.fps, rt->clip.par->video_delay, rt->o.latency_frames, rt->o.fps,
           t1, rt->n_t1);
    for (guint i = 0; i < rt->results->len; i++) {
        const DfRtResult *r = &g_array_index(rt->results, DfRtResult, i);
        const DfPerStream *p = &r->best.per_stream;
        if (r->max_streams <= 0 || isnan(p->rss_mib))
            continue;
        if (i == 0)
            printf("per stream at max K, half way through (growth of the process / K; dfmedia's "
                   "beyond its scheduler, with its pacing thread):\n");
        printf("  %d worker%s  %-20s %5.2f threads  %6.1f MiB resident  %6.1f MiB heap\n",
               r->workers, r->workers == 1 ? " " : "s", r->impl, p->threads, p->rss_mib,
               p->heap_mib);
    }
}

void df_rt_print_traces(const DfRt *rt)
{
    for (guint i = 0; i < rt->results->len; i++) {
        const DfRtResult *r = &g_array_index(rt->results, DfRtResult, i);
        if (!r->trace_path)
            continue;
        if (r->trace_written)
            printf("trace of %s, %d worker%s, %d stream%s (%llu of %llu frames late, not a "
                   "trial): %s\n",
                   r->impl, r->workers, r->workers == 1 ? "" : "s", r->traced.streams,
                   r->traced.streams == 1 ? "" : "s", (unsigned long long)r->traced.misses,
                   (unsigned long long)r->traced.expected, r->trace_path);
        else
            fprintf(stderr, "dfbench realtime: error: traced trial of %s, %d worker%s: %s\n",
                    r->impl, r->workers, r->workers == 1 ? "" : "s", r->traced.error);
    }
}

static void json_trial(JsonBuilder *jb, const DfRtTrial *t)
{
    json_builder_begin_object(jb);
    json_builder_set_member_name(jb, "streams");
    json_builder_add_int_value(jb, t->streams);
    json_builder_set_member_name(jb, "frames");
    json_builder_add_int_value(jb, (gint64)t->frames);
    json_builder_set_member_name(jb, "expected_frames");
    json_builder_add_int_value(jb, (gint64)t->expected);
    json_builder_set_member_name(jb, "misses");
    json_builder_add_int_value(jb, (gint64)t->misses);
    df_json_double(jb, "latency_p99_ms", t->latency_p99_ms);
    df_json_double(jb, "late_p99_ms", t->late_p99_ms);
    if (!isnan(t->first_miss_ms)) {
        df_json_double(jb, "first_miss_ms", t->first_miss_ms);
        df_json_double(jb, "last_miss_ms", t->last_miss_ms);
    }
    if (!isnan(t->lead_p50_ms)) {
        /* Pipelines read ahead: how early packets reached the decoder. */
        df_json_double(jb, "input_lead_p50_ms", t->lead_p50_ms);
        df_json_double(jb, "input_lead_min_ms", t->lead_min_ms);
    }
    if (!isnan(t->per_stream.rss_mib)) {
        /* What the trial added per stream, half way through. */
        json_builder_set_member_name(jb, "per_stream");
        json_builder_begin_object(jb);
        df_json_double(jb, "threads", t->per_stream.threads);
        df_json_double(jb, "rss_mib", t->per_stream.rss_mib);
        df_json_double(jb, "heap_mib", t->per_stream.heap_mib);
        json_builder_end_object(jb);
    }
    if (t->has_sched) {
        /* dfsched's counters over the paced part, all workers. */
        json_builder_set_member_name(jb, "sched");
        json_builder_begin_object(jb);
        const struct {
            const char *name;
            uint64_t v;
        } c[] = {{"tasks", t->tasks},
                 {"stolen", t->stolen},
                 {"parks", t->parks},
                 {"wakeups", t->wakeups},
                 {"max_wait_depth", t->max_wait_depth},
                 {"jobs_inline", t->jobs_inline}};
        for (size_t i = 0; i < G_N_ELEMENTS(c); i++) {
            json_builder_set_member_name(jb, c[i].name);
            json_builder_add_int_value(jb, (gint64)c[i].v);
        }
        df_json_double(jb, "idle_ms", t->idle_ms);
        json_builder_end_object(jb);
    }
    if (t->error[0]) {
        json_builder_set_member_name(jb, "error");
        json_builder_add_string_value(jb, t->error);
    }
    json_builder_end_object(jb);
}

bool df_rt_write_json(const DfRt *rt)
{
    JsonBuilder *jb = json_builder_new();
    json_builder_begin_object(jb);
    json_builder_set_member_name(jb, "bench");
    json_builder_add_string_value(jb, "realtime");
    df_report_machine_json(jb);
    json_builder_set_member_name(jb, "run");
    json_builder_begin_object(jb);
    json_builder_set_member_name(jb, "input");
    json_builder_add_string_value(jb, rt->clip.name);
    json_builder_set_member_name(jb, "codec");
    json_builder_add_string_value(jb, avcodec_get_name(rt->clip.par->codec_id));
    json_builder_set_member_name(jb, "width");
    json_builder_add_int_value(jb, rt->clip.par->width);
    json_builder_set_member_name(jb, "height");
    json_builder_add_int_value(jb, rt->clip.par->height);
    df_json_double(jb, "fps", rt->o.fps);
    df_json_double(jb, "duration_s", rt->o.duration);
    json_builder_set_member_name(jb, "frames_per_stream");
    json_builder_add_int_value(jb, rt->total_frames);
    json_builder_set_member_name(jb, "reorder_delay_frames");
    json_builder_add_int_value(jb, rt->clip.par->video_delay);
    json_builder_set_member_name(jb, "budget_frames");
    json_builder_add_int_value(jb, rt->budget_frames);
    df_json_double(jb, "budget_ms", rt->budget_frames * 1000.0 / rt->o.fps);
    json_builder_set_member_name(jb, "warmup_packets");
    json_builder_add_int_value(jb, df_clip_warmup_packets(&rt->clip));
    json_builder_set_member_name(jb, "max_streams_tried");
    json_builder_add_int_value(jb, rt->o.max_streams);
    json_builder_set_member_name(jb, "deadlines");
    json_builder_add_boolean_value(jb, rt->o.deadlines);
    json_builder_set_member_name(jb, "threading");
    json_builder_add_string_value(jb, df_threading_name(rt->threading));
    json_builder_set_member_name(jb, "eager_jobs");
    json_builder_add_boolean_value(jb, rt->o.eager_jobs);
    json_builder_set_member_name(jb, "gop_phases");
    json_builder_add_boolean_value(jb, rt->o.gop_phases);
    df_json_double(jb, "gop_frames", rt->gop_frames);
    /* The pipelines' sink (null: no pipeline ran). */
    json_builder_set_member_name(jb, "sink");
    if (rt->avdec || rt->dfdec)
        json_builder_add_string_value(jb, rt->sink);
    else
        json_builder_add_null_value(jb);
    /* T(1) of the clip, sampled in this run: K* = workers x t1_fps / fps. */
    df_json_double(jb, "t1_fps", rt->t1_fps);
    df_json_double_array(jb, "t1_fps_samples", rt->t1_samples, rt->n_t1);
    if (rt->t1_error[0]) {
        json_builder_set_member_name(jb, "t1_error");
        json_builder_add_string_value(jb, rt->t1_error);
    }
    json_builder_end_object(jb);
    json_builder_set_member_name(jb, "results");
    json_builder_begin_array(jb);
    const double px = (double)rt->clip.par->width * rt->clip.par->height * rt->o.fps;
    for (guint i = 0; i < rt->results->len; i++) {
        const DfRtResult *r = &g_array_index(rt->results, DfRtResult, i);
        json_builder_begin_object(jb);
        json_builder_set_member_name(jb, "impl");
        json_builder_add_string_value(jb, r->impl);
        json_builder_set_member_name(jb, "workers");
        json_builder_add_int_value(jb, r->workers);
        json_builder_set_member_name(jb, "oversubscribed");
        json_builder_add_boolean_value(jb, r->oversubscribed);
        json_builder_set_member_name(jb, "max_streams");
        json_builder_add_int_value(jb, r->max_streams);
        json_builder_set_member_name(jb, "capped");
        json_builder_add_boolean_value(jb, r->capped);
        df_json_double(jb, "pixels_per_s", r->max_streams * px);
        const double kst = df_rt_k_star(rt, r->workers);
        df_json_double(jb, "k_star", kst);
        df_json_double(jb, "k_share", kst > 0 ? r->max_streams / kst : NAN);
        df_json_double(jb, "latency_p99_ms", r->best.latency_p99_ms);
        df_json_double(jb, "late_p99_ms", r->best.late_p99_ms);
        json_builder_set_member_name(jb, "trials");
        json_builder_begin_array(jb);
        for (guint j = 0; j < r->trials->len; j++)
            json_trial(jb, &g_array_index(r->trials, DfRtTrial, j));
        json_builder_end_array(jb);
        if (r->trace_path) {
            json_builder_set_member_name(jb, "traced_trial");
            json_trial(jb, &r->traced);
            json_builder_set_member_name(jb, "trace");
            if (r->trace_written)
                json_builder_add_string_value(jb, r->trace_path);
            else
                json_builder_add_null_value(jb);
        }
        json_builder_end_object(jb);
    }
    json_builder_end_array(jb);
    json_builder_end_object(jb);
    GError *err = NULL;
    const bool ok = df_json_write(jb, rt->o.json, &err);
    if (!ok) {
        fprintf(stderr, "dfbench realtime: error: cannot write %s: %s\n", rt->o.json, err->message);
        g_error_free(err);
    }
    g_object_unref(jb);
    return ok;
}

bool df_rt_write_csv(const DfRt *rt)
{
    static const char *const headers[] = {
        "impl",         "workers", "oversubscribed", "max_streams", "capped",
        "pixels_per_s", "k_star",  "latency_p99_ms", "late_p99_ms", "trials"};
    enum { N_COLS = sizeof(headers) / sizeof(headers[0]) };
    DfCsv csv;
    int ret = df_csv_open(&csv, rt->o.csv, N_COLS, headers);
    if (ret < 0) {
        fprintf(stderr, "dfbench realtime: error: cannot write %s: %s\n", rt->o.csv,
                g_strerror(-ret));
        return false;
    }
    const double px = (double)rt->clip.par->width * rt->clip.par->height * rt->o.fps;
    for (guint i = 0; i < rt->results->len; i++) {
        const DfRtResult *r = &g_array_index(rt->results, DfRtResult, i);
        char w[16], k[16], p[40], ks[40], lat[40], late[40], n[16];
        snprintf(w, sizeof(w), "%d", r->workers);
        snprintf(k, sizeof(k), "%d", r->max_streams);
        snprintf(p, sizeof(p), "%.0f", r->max_streams * px);
        const double kst = df_rt_k_star(rt, r->workers);
        if (isnan(kst))
            ks[0] = '\0';
        else
            snprintf(ks, sizeof(ks), "%.3f", kst);
        if (isnan(r->best.latency_p99_ms))
            lat[0] = '\0';
        else
            snprintf(lat, sizeof(lat), "%.3f", r->best.latency_p99_ms);
        if (isnan(r->best.late_p99_ms))
            late[0] = '\0';
        else
            snprintf(late, sizeof(late), "%.3f", r->best.late_p99_ms);
        snprintf(n, sizeof(n), "%u", r->trials->len);
        const char *cells[N_COLS] = {r->impl,
                                     w,
                                     r->oversubscribed ? "true" : "false",
                                     k,
                                     r->capped ? "true" : "false",
                                     p,
                                     ks,
                                     lat,
                                     late,
                                     n};
        df_csv_row(&csv, cells);
    }
    ret = df_csv_close(&csv);
    if (ret < 0)
        fprintf(stderr, "dfbench realtime: error: cannot write %s: %s\n", rt->o.csv,
                g_strerror(-ret));
    return ret == 0;
}

bool df_rt_write_plot(const DfRt *rt)
{
    const guint n = rt->results->len;
    DfPlotSeries *series = g_new0(DfPlotSeries, n);
    double *x = g_new0(double, n), *y = g_new0(double, n);
    int ns = 0;
    guint used = 0;
    /* Results are grouped by implementation, worker counts in order. */
    for (guint i = 0; i < n;) {
        const DfRtResult *r = &g_array_index(rt->results, DfRtResult, i);
        DfPlotSeries *s = &series[ns++];
        s->label = r->impl;
        s->x = x + used;
        s->y = y + used;
        while (i < n && strcmp(g_array_index(rt->results, DfRtResult, i).impl, r->impl) == 0) {
            const DfRtResult *q = &g_array_index(rt->results, DfRtResult, i);
            x[used] = q->workers;
            y[used] = q->max_streams;
            used++;
            s->n++;
            i++;
        }
    }
    const DfPlotPanel panel = {.title = "real-time streams carried",
                               .y_label = "largest K without a missed deadline",
                               .n_series = ns,
                               .series = series};
    char err[256];
    const int ret =
        df_plot_write(rt->o.plot, "workers (cores)", false, &panel, 1, err, sizeof(err));
    if (ret < 0)
        fprintf(stderr, "dfbench realtime: error: %s\n", err);
    g_free(series);
    g_free(x);
    g_free(y);
    return ret == 0;
}
