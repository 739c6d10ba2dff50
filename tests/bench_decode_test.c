/* dfbench decode and dfbench realtime end to end on tiny clips: they run,
 * write JSON, CSV and a plot of the documented shape, and refuse bad input
 * with a clear message.  Timings are never checked. */
#include "bench_util.h"
#include "dftest.h"

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Whether meson built dfbench with GStreamer (DFBENCH_GST=1). */
static bool with_gst(void)
{
    const char *g = getenv("DFBENCH_GST");
    return g && strcmp(g, "1") == 0;
}

/* Whether meson put this build's dfdec on GStreamer's path (DFBENCH_DFDEC=1). */
static bool with_dfdec(void)
{
    const char *g = getenv("DFBENCH_DFDEC");
    return with_gst() && g && strcmp(g, "1") == 0;
}

static char *clip(const char *name)
{
    return g_strdup_printf("%s/%s", df_test_media_dir(), name);
}

static bool is_number(JsonObject *o, const char *name)
{
    JsonNode *n = json_object_get_member(o, name);
    return n && JSON_NODE_HOLDS_VALUE(n) &&
           (json_node_get_value_type(n) == G_TYPE_DOUBLE ||
            json_node_get_value_type(n) == G_TYPE_INT64);
}

static bool is_null(JsonObject *o, const char *name)
{
    JsonNode *n = json_object_get_member(o, name);
    return n && JSON_NODE_HOLDS_NULL(n);
}

static int count_lines(const char *path)
{
    gchar *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, NULL))
        return -1;
    int lines = 0;
    for (const char *c = text; *c; c++)
        lines += *c == '\n';
    g_free(text);
    return lines;
}

static bool file_contains(const char *path, const char *what)
{
    gchar *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, NULL))
        return false;
    const bool found = strstr(text, what) != NULL;
    g_free(text);
    return found;
}

static void rm_rf(const char *dir)
{
    gchar *cmd = g_strdup_printf("rm -rf '%s'", dir);
    DF_EXPECT(system(cmd) == 0);
    g_free(cmd);
}

DF_TEST(BenchDecode, RunsAndWritesJsonCsvPlotTrace)
{
    const char *dfbench = df_test_dfbench();
    if (!dfbench)
        DF_SKIP("DFBENCH is not set: run through meson test");
    char dir[] = "/tmp/dfbench-decode-XXXXXX";
    DF_ASSERT(mkdtemp(dir));
    gchar *json = g_strdup_printf("%s/d.json", dir), *csv = g_strdup_printf("%s/d.csv", dir),
          *svg = g_strdup_printf("%s/d.svg", dir), *trace = g_strdup_printf("%s/t.json", dir);
    char *h264 = clip("h264_cabac_slices8.mkv"), *hevc = clip("hevc_wpp8.mkv"),
         *mpeg2 = clip("mpeg2_prog.mkv");
    const char *peers = with_gst() ? "ffmpeg-slice,ffmpeg-frame,ffmpeg-streams,avdec"
                                   : "ffmpeg-slice,ffmpeg-frame,ffmpeg-streams";
    const char *argv[] = {
        dfbench,           "decode", "--input",   h264,  "--input",  hevc,
        "--input",         mpeg2,    "--workers", "1,2", "--policy", "cost-local,steal",
        "--peers",         peers,    "--repeat",  "1",   "--json",   json,
        "--csv",           csv,      "--plot",    svg,   "--trace",  trace,
        "--trace-workers", "1,2",    NULL};
    DfRun run = df_test_run(argv, NULL);
    DF_ASSERT_MSG(run.spawned && run.status == 0, "dfbench decode exited %d:\n%s\n%s", run.status,
                  run.out ? run.out : "", run.err ? run.err : "");
    DF_EXPECT(strstr(run.out, "dfmedia/cost-local") != NULL);
    DF_EXPECT(strstr(run.out, "Amdahl") != NULL);
    df_run_clear(&run);

    JsonParser *p = json_parser_new();
    GError *err = NULL;
    DF_ASSERT_MSG(json_parser_load_from_file(p, json, &err), "bad JSON: %s",
                  err ? err->message : "?");
    JsonObject *root = json_node_get_object(json_parser_get_root(p));
    DF_EXPECT(g_strcmp0(json_object_get_string_member_with_default(root, "bench", ""), "decode") ==
              0);
    DF_EXPECT(json_object_has_member(root, "machine"));
    /* The pipelines' sink: fakevideosink by default (tools/deps.sh installs
     * gst-plugins-bad), none without pipelines. */
    JsonObject *run0 = json_object_get_object_member(root, "run");
    DF_ASSERT(run0 && json_object_has_member(run0, "sink"));
    if (with_gst())
        DF_EXPECT_MSG(g_strcmp0(json_object_get_string_member_with_default(run0, "sink", ""),
                                "fakevideosink") == 0,
                      "sink %s", json_object_get_string_member_with_default(run0, "sink", "?"));
    else
        DF_EXPECT(is_null(run0, "sink"));
    /* Two traced worker counts: two files, named by count, and their fps. */
    JsonArray *traces =
        json_object_get_array_member(json_object_get_object_member(root, "run"), "traces");
    DF_ASSERT(traces);
    DF_EXPECT_EQ_INT((int)json_array_get_length(traces), 2);
    for (guint i = 0; i < json_array_get_length(traces); i++) {
        JsonObject *t = json_array_get_object_element(traces, i);
        DF_EXPECT_EQ_INT((int)json_object_get_int_member(t, "workers"), (int)i + 1);
        gchar *want = g_strdup_printf("%s/t.w%u.json", dir, i + 1);
        DF_EXPECT(g_strcmp0(json_object_get_string_member_with_default(t, "file", ""), want) == 0);
        DF_EXPECT_MSG(file_contains(want, "traceEvents"), "no dfsched trace in %s", want);
        DF_EXPECT(is_number(t, "fps") && json_object_get_double_member(t, "fps") > 0);
        g_free(want);
    }
    DF_EXPECT(!g_file_test(trace, G_FILE_TEST_EXISTS));
    JsonArray *res = json_object_get_array_member(root, "results");
    DF_ASSERT(res);
    /* Per clip: the 1-thread baseline once, then 2 policies + the peers
     * at 1 and 2 workers. */
    const int n_impl = 2 + 3 + (with_gst() ? 1 : 0);
    DF_EXPECT_EQ_INT((int)json_array_get_length(res), 3 * (1 + 2 * n_impl));
    /* Every implementation puts out every frame of the clip, as T(1) does
     * (ffmpeg-streams: one pass per worker): a pipeline whose decoder
     * skips frames on its sink's QoS would report the fps of less work. */
    GHashTable *t1_frames = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint i = 0; i < json_array_get_length(res); i++) {
        JsonObject *r = json_array_get_object_element(res, i);
        if (g_strcmp0(json_object_get_string_member_with_default(r, "impl", ""), "ffmpeg") == 0)
            g_hash_table_insert(
                t1_frames, (gpointer)json_object_get_string_member_with_default(r, "input", ""),
                GINT_TO_POINTER((int)json_object_get_int_member(r, "frames")));
    }
    GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (guint i = 0; i < json_array_get_length(res); i++) {
        JsonObject *r = json_array_get_object_element(res, i);
        const char *impl = json_object_get_string_member_with_default(r, "impl", "");
        const char *input = json_object_get_string_member_with_default(r, "input", "");
        const int workers = (int)json_object_get_int_member(r, "workers");
        gchar *key = g_strdup_printf("%s|%s|%d", input, impl, workers);
        DF_EXPECT_MSG(!g_hash_table_contains(seen, key), "%s twice", key);
        g_hash_table_add(seen, key);
        DF_EXPECT_MSG(is_number(r, "fps_median") && is_number(r, "fps_min") &&
                          is_number(r, "fps_max"),
                      "%s: fps", key);
        const double mn = json_object_get_double_member(r, "fps_min"),
                     med = json_object_get_double_member(r, "fps_median"),
                     mx = json_object_get_double_member(r, "fps_max");
        DF_EXPECT_MSG(mn > 0 && mn <= med && med <= mx, "%s: %g %g %g", key, mn, med, mx);
        DF_EXPECT_MSG(json_object_get_int_member(r, "failures") == 0, "%s failed: %s", key,
                      json_object_get_string_member_with_default(r, "error", "?"));
        DF_EXPECT_MSG(json_object_get_int_member(r, "frames") > 0, "%s: no frames", key);
        const int passes = strcmp(impl, "ffmpeg-streams") == 0 ? workers : 1;
        DF_EXPECT_MSG(json_object_get_int_member(r, "frames") ==
                          passes * GPOINTER_TO_INT(g_hash_table_lookup(t1_frames, input)),
                      "%s: %d frames, T(1) %d", key, (int)json_object_get_int_member(r, "frames"),
                      GPOINTER_TO_INT(g_hash_table_lookup(t1_frames, input)));
        DF_EXPECT(json_object_has_member(r, "oversubscribed"));
        /* Start-up and the rate once frames flow, for every
         * implementation: the pass from its start lasts at least as long
         * as from its first frame, so (frames - 1) / steady cannot exceed
         * frames / fps (medians of the same samples: with some slack). */
        DF_EXPECT_MSG(is_number(r, "fps_steady_median") && is_number(r, "first_frame_ms_median"),
                      "%s: steady fps and first frame", key);
        const double steady = json_object_get_double_member(r, "fps_steady_median"),
                     first = json_object_get_double_member(r, "first_frame_ms_median");
        const double n_frames = (double)json_object_get_int_member(r, "frames");
        DF_EXPECT_MSG(steady > 0 && first > 0 && (n_frames - 1) / steady <= 1.5 * n_frames / med,
                      "%s: steady %g fps, first frame %g ms, %g fps over %g frames", key, steady,
                      first, med, n_frames);
        if (g_str_has_prefix(impl, "dfmedia/"))
            DF_EXPECT_MSG(is_number(r, "latency_p50_ms") && is_number(r, "latency_p99_ms"),
                          "%s: dfmedia latency", key);
        else
            DF_EXPECT_MSG(is_null(r, "latency_p50_ms"), "%s: latency where none is measured", key);
        /* CPU per frame: measured for the in-process implementations. */
        if (g_str_has_prefix(impl, "ffmpeg") || g_str_has_prefix(impl, "dfmedia/"))
            DF_EXPECT_MSG(is_number(r, "cpu_ms_per_frame") &&
                              json_object_get_double_member(r, "cpu_ms_per_frame") > 0,
                          "%s: cpu_ms_per_frame", key);
        else
            DF_EXPECT_MSG(is_null(r, "cpu_ms_per_frame"), "%s: CPU of a pipeline", key);
        if (strcmp(impl, "ffmpeg") == 0)
            DF_EXPECT_MSG(workers == 1 &&
                              fabs(json_object_get_double_member(r, "speedup") - 1) < 1e-9,
                          "%s: the baseline is S = 1 at one worker", key);
    }
    const char *const must[] = {"h264_cabac_slices8.mkv|dfmedia/cost-local|2",
                                "hevc_wpp8.mkv|ffmpeg-frame|2", "mpeg2_prog.mkv|ffmpeg|1",
                                "mpeg2_prog.mkv|dfmedia/steal|1",
                                "h264_cabac_slices8.mkv|ffmpeg-streams|2"};
    for (size_t i = 0; i < G_N_ELEMENTS(must); i++)
        DF_EXPECT_MSG(g_hash_table_contains(seen, must[i]), "%s missing", must[i]);
    g_hash_table_destroy(seen);
    g_hash_table_destroy(t1_frames);

    JsonObject *sp = json_object_get_object_member(root, "speedup");
    DF_ASSERT_MSG(sp, "no speedup object");
    DF_EXPECT(g_strcmp0(json_object_get_string_member_with_default(sp, "impl", ""),
                        "dfmedia/cost-local") == 0);
    DF_EXPECT(is_number(sp, "amdahl_s"));
    JsonArray *kf = json_object_get_array_member(sp, "karp_flatt");
    JsonArray *w = json_object_get_array_member(sp, "workers");
    DF_ASSERT(kf && w);
    DF_EXPECT_EQ_INT((int)json_array_get_length(kf), 2);
    DF_EXPECT_EQ_INT((int)json_array_get_length(w), 2);
    DF_EXPECT(JSON_NODE_HOLDS_NULL(json_array_get_element(kf, 0))); /* N = 1 */
    /* With only N = 1, 2 the fitted s is e(2). */
    DF_EXPECT(fabs(json_array_get_double_element(kf, 1) -
                   json_object_get_double_member(sp, "amdahl_s")) < 1e-9);
    JsonArray *series = json_object_get_array_member(sp, "series");
    DF_EXPECT(series && (int)json_array_get_length(series) == 3 * n_impl);
    g_object_unref(p);

    DF_EXPECT_EQ_INT(count_lines(csv), 1 + 3 * (1 + 2 * n_impl));
    DF_EXPECT(file_contains(csv, "input,impl,workers,oversubscribed"));
    DF_EXPECT(file_contains(svg, "<svg"));
    rm_rf(dir);
    g_free(json);
    g_free(csv);
    g_free(svg);
    g_free(trace);
    g_free(h264);
    g_free(hevc);
    g_free(mpeg2);
}

DF_TEST(BenchRealtime, RunsAndWritesJsonCsvPlot)
{
    const char *dfbench = df_test_dfbench();
    if (!dfbench)
        DF_SKIP("DFBENCH is not set: run through meson test");
    char dir[] = "/tmp/dfbench-rt-XXXXXX";
    DF_ASSERT(mkdtemp(dir));
    gchar *json = g_strdup_printf("%s/r.json", dir), *csv = g_strdup_printf("%s/r.csv", dir),
          *png = g_strdup_printf("%s/r.png", dir), *trace = g_strdup_printf("%s/t.json", dir);
    char *h264 = clip("h264_cabac_slices8.mkv");
    const char *argv[] = {dfbench,
                          "realtime",
                          "--input",
                          h264,
                          "--fps",
                          "30",
                          "--duration",
                          "0.5",
                          "--workers",
                          "1,2",
                          "--policy",
                          "cost-local",
                          "--peers",
                          with_dfdec() ? "avdec,dfdec"
                          : with_gst() ? "avdec"
                                       : "none",
                          "--max-streams",
                          "2",
                          "--json",
                          json,
                          "--csv",
                          csv,
                          "--plot",
                          png,
                          "--trace",
                          trace,
                          "--trace-streams",
                          "2",
                          NULL};
    DfRun run = df_test_run(argv, NULL);
    DF_ASSERT_MSG(run.spawned && run.status == 0, "dfbench realtime exited %d:\n%s\n%s", run.status,
                  run.out ? run.out : "", run.err ? run.err : "");
    DF_EXPECT_MSG(run.out && strstr(run.out, "K/K*") && strstr(run.out, "T(1) = "),
                  "no K* in the table:\n%s", run.out ? run.out : "");
    df_run_clear(&run);
    JsonParser *p = json_parser_new();
    DF_ASSERT(json_parser_load_from_file(p, json, NULL));
    JsonObject *root = json_node_get_object(json_parser_get_root(p));
    DF_EXPECT(
        g_strcmp0(json_object_get_string_member_with_default(root, "bench", ""), "realtime") == 0);
    JsonObject *r0 = json_object_get_object_member(root, "run");
    DF_ASSERT(r0);
    DF_EXPECT(json_object_get_int_member(r0, "budget_frames") >= 2);
    DF_EXPECT_EQ_INT((int)json_object_get_int_member(r0, "frames_per_stream"), 15);
    DF_EXPECT(json_object_get_int_member(r0, "warmup_packets") > 0);
    /* T(1), sampled before and after the trials, both good. */
    DF_EXPECT(is_number(r0, "t1_fps"));
    const double t1 = json_object_get_double_member_with_default(r0, "t1_fps", NAN);
    DF_EXPECT_MSG(isfinite(t1) && t1 > 0, "t1_fps %g", t1);
    JsonArray *t1s = json_object_get_array_member(r0, "t1_fps_samples");
    DF_EXPECT(t1s && json_array_get_length(t1s) == 2);
    for (guint i = 0; t1s && i < json_array_get_length(t1s); i++) {
        JsonNode *n = json_array_get_element(t1s, i);
        DF_EXPECT_MSG(JSON_NODE_HOLDS_VALUE(n) && json_node_get_double(n) > 0, "T(1) sample %u", i);
    }
    DF_EXPECT(!json_object_has_member(r0, "t1_error"));
    DF_EXPECT(json_object_get_boolean_member_with_default(r0, "deadlines", FALSE));
    /* Key frames every 8 packets (tests/media/gen.sh), started together. */
    DF_EXPECT(!json_object_get_boolean_member_with_default(r0, "gop_phases", TRUE));
    DF_EXPECT_MSG(json_object_get_double_member_with_default(r0, "gop_frames", NAN) == 8,
                  "gop_frames %g",
                  json_object_get_double_member_with_default(r0, "gop_frames", NAN));
    /* The pipelines' sink: fakevideosink by default (tools/deps.sh installs
     * gst-plugins-bad), none without pipelines. */
    if (with_gst())
        DF_EXPECT_MSG(g_strcmp0(json_object_get_string_member_with_default(r0, "sink", ""),
                                "fakevideosink") == 0,
                      "sink %s", json_object_get_string_member_with_default(r0, "sink", "?"));
    else
        DF_EXPECT(is_null(r0, "sink"));
    JsonArray *res = json_object_get_array_member(root, "results");
    DF_ASSERT(res);
    /* 1 and 2 workers: dfmedia/cost-local, avdec, dfdec/cost-local. */
    const int n_results = 2 + (with_gst() ? 2 : 0) + (with_dfdec() ? 2 : 0);
    DF_EXPECT_EQ_INT((int)json_array_get_length(res), n_results);
    int n_dfdec = 0;
    for (guint i = 0; i < json_array_get_length(res); i++) {
        JsonObject *r = json_array_get_object_element(res, i);
        const char *impl = json_object_get_string_member_with_default(r, "impl", "");
        const int k = (int)json_object_get_int_member(r, "max_streams");
        DF_EXPECT_MSG(k >= 0 && k <= 2, "%s: max_streams %d", impl, k);
        DF_EXPECT(is_number(r, "pixels_per_s"));
        /* K* = workers x T(1) / fps, whatever the implementation; the share
         * is K / K*. */
        const int w = (int)json_object_get_int_member(r, "workers");
        DF_EXPECT_MSG(is_number(r, "k_star"), "%s: k_star missing or null", impl);
        const double ks = json_object_get_double_member_with_default(r, "k_star", NAN);
        DF_EXPECT_MSG(isfinite(ks) && ks > 0, "%s: k_star %g", impl, ks);
        DF_EXPECT_MSG(fabs(ks - w * t1 / 30) <= 1e-6 * ks, "%s: k_star %g, T(1) %g, %d workers",
                      impl, ks, t1, w);
        const double share = json_object_get_double_member_with_default(r, "k_share", NAN);
        DF_EXPECT_MSG(isfinite(share) && fabs(share - k / ks) <= 1e-9 + 1e-6 * share,
                      "%s: k_share %g for K %d of K* %g", impl, share, k, ks);
        JsonArray *trials = json_object_get_array_member(r, "trials");
        DF_EXPECT_MSG(trials && json_array_get_length(trials) >= 1, "%s: no trials", impl);
        /* The search starts at 3/4 of K*, within 1..--max-streams. */
        const int k0 = ks * 3 / 4 >= 2 ? 2 : 1;
        DF_EXPECT_MSG(trials && json_array_get_length(trials) >= 1 &&
                          json_object_get_int_member(json_array_get_object_element(trials, 0),
                                                     "streams") == k0,
                      "%s: first trial not at K %d (K* %g)", impl, k0, ks);
        for (guint j = 0; trials && j < json_array_get_length(trials); j++) {
            JsonObject *t = json_array_get_object_element(trials, j);
            DF_EXPECT_MSG(!json_object_has_member(t, "error"), "%s: %s", impl,
                          json_object_get_string_member_with_default(t, "error", ""));
            DF_EXPECT(json_object_get_int_member(t, "frames") > 0);
            /* Threads and memory per stream: at least a thread (dfmedia's
             * pacing thread, a pipeline's streaming thread) and some heap
             * (the pictures; null under a sanitizer's allocator, which
             * mallinfo2() does not see). */
            JsonObject *ps = json_object_get_object_member(t, "per_stream");
            DF_EXPECT_MSG(ps && is_number(ps, "threads") && is_number(ps, "rss_mib") &&
                              (is_number(ps, "heap_mib") || is_null(ps, "heap_mib")),
                          "%s: no per_stream", impl);
            if (ps && is_number(ps, "threads")) {
                const double th = json_object_get_double_member(ps, "threads");
                DF_EXPECT_MSG(th >= 0.99, "%s: %g threads per stream", impl, th);
            }
            if (ps && is_number(ps, "heap_mib"))
                DF_EXPECT_MSG(json_object_get_double_member(ps, "heap_mib") > 0,
                              "%s: %g MiB heap per stream", impl,
                              json_object_get_double_member(ps, "heap_mib"));
            /* In-process streams get every frame, once: the warm-up's are
             * not counted, and none is lost. */
            if (g_str_has_prefix(impl, "dfmedia/")) {
                DF_EXPECT_EQ_INT((int)json_object_get_int_member(t, "frames"),
                                 (int)json_object_get_int_member(t, "streams") * 15);
                /* dfsched's counters over the paced part: at least D and O
                 * per packet ran. */
                JsonObject *sc = json_object_get_object_member(t, "sched");
                DF_EXPECT_MSG(sc && json_object_get_int_member(sc, "tasks") >=
                                        2 * json_object_get_int_member(t, "frames"),
                              "%s: no or too few tasks in the scheduler's counters", impl);
                DF_EXPECT(sc && is_number(sc, "idle_ms") && json_object_has_member(sc, "parks") &&
                          json_object_has_member(sc, "max_wait_depth"));
                DF_EXPECT(!json_object_has_member(t, "input_lead_p50_ms"));
            } else {
                DF_EXPECT(!json_object_has_member(t, "sched"));
                /* Pipelines: how early packets reached the decoder. */
                DF_EXPECT_MSG(is_number(t, "input_lead_p50_ms") &&
                                  is_number(t, "input_lead_min_ms"),
                              "%s: no input lead", impl);
            }
        }
        if (g_str_has_prefix(impl, "dfmedia/")) {
            DF_EXPECT(is_number(r, "latency_p99_ms"));
            /* --trace: one more trial of 2 streams per worker count, its
             * trace in t.wN.json. */
            gchar *want = g_strdup_printf("%s/t.w%d.json", dir, w);
            DF_EXPECT_MSG(
                g_strcmp0(json_object_get_string_member_with_default(r, "trace", ""), want) == 0,
                "%s: trace %s", impl,
                json_object_get_string_member_with_default(r, "trace", "(none)"));
            DF_EXPECT_MSG(file_contains(want, "traceEvents"), "no dfsched trace in %s", want);
            /* The decoders have clocks: dfsched sees the frames' due times. */
            DF_EXPECT_MSG(file_contains(want, "deadline_slack_us"), "no deadline in %s", want);
            g_free(want);
            JsonObject *tt = json_object_get_object_member(r, "traced_trial");
            DF_EXPECT(tt && json_object_get_int_member(tt, "streams") == 2 &&
                      json_object_get_int_member(tt, "frames") == 30);
        } else {
            DF_EXPECT_MSG(!json_object_has_member(r, "trace"), "%s traced", impl);
        }
        n_dfdec += strcmp(impl, "dfdec/cost-local") == 0;
    }
    DF_EXPECT_EQ_INT(n_dfdec, with_dfdec() ? 2 : 0);
    g_object_unref(p);
    DF_EXPECT_EQ_INT(count_lines(csv), 1 + n_results);
    DF_EXPECT(file_contains(csv, ",k_star,"));
    gchar *text = NULL;
    gsize len = 0;
    DF_ASSERT(g_file_get_contents(png, &text, &len, NULL));
    DF_EXPECT(len > 8 && memcmp(text, "\x89PNG", 4) == 0);
    g_free(text);
    rm_rf(dir);
    g_free(json);
    g_free(csv);
    g_free(png);
    g_free(trace);
    g_free(h264);
}

/* --overload: per stream, when its first and last late frame arrived
 * ("-" when none was late), so that a start-up transient shows apart from
 * late frames all along; the rows agree with the late counts. */
/* --gop-phases starts stream i i/K of a GOP after the first: the run says
 * so, and every stream still decodes all its frames. */
DF_TEST(BenchRealtime, GopPhasesSpreadTheStarts)
{
    const char *dfbench = df_test_dfbench();
    if (!dfbench)
        DF_SKIP("DFBENCH is not set: run through meson test");
    char dir[] = "/tmp/dfbench-rt-XXXXXX";
    DF_ASSERT(mkdtemp(dir));
    gchar *json = g_strdup_printf("%s/r.json", dir);
    char *h264 = clip("h264_cabac_slices8.mkv");
    const char *argv[] = {dfbench,   "realtime",     "--input",  h264,         "--fps",
                          "30",      "--duration",   "0.5",      "--workers",  "1",
                          "--peers", "none",         "--policy", "cost-local", "--max-streams",
                          "2",       "--gop-phases", "--json",   json,         NULL};
    DfRun run = df_test_run(argv, NULL);
    DF_ASSERT_MSG(run.spawned && run.status == 0, "dfbench realtime exited %d:\n%s\n%s", run.status,
                  run.out ? run.out : "", run.err ? run.err : "");
    /* 8 frames at 30 fps. */
    DF_EXPECT_MSG(strstr(run.out, "stream i starts i/K of a GOP (8.0 frames, 267 ms)"),
                  "no GOP phases said:\n%s", run.out);
    df_run_clear(&run);
    JsonParser *p = json_parser_new();
    DF_ASSERT(json_parser_load_from_file(p, json, NULL));
    JsonObject *r0 =
        json_object_get_object_member(json_node_get_object(json_parser_get_root(p)), "run");
    DF_ASSERT(r0);
    DF_EXPECT(json_object_get_boolean_member_with_default(r0, "gop_phases", FALSE));
    JsonArray *res =
        json_object_get_array_member(json_node_get_object(json_parser_get_root(p)), "results");
    DF_ASSERT(res && json_array_get_length(res) == 1);
    JsonArray *trials =
        json_object_get_array_member(json_array_get_object_element(res, 0), "trials");
    DF_ASSERT(trials && json_array_get_length(trials) > 0);
    for (guint i = 0; i < json_array_get_length(trials); i++) {
        JsonObject *t = json_array_get_object_element(trials, i);
        DF_EXPECT_EQ_INT((int)json_object_get_int_member(t, "frames"),
                         (int)json_object_get_int_member(t, "expected_frames"));
    }
    g_object_unref(p);
    g_unlink(json);
    g_rmdir(dir);
    g_free(json);
    g_free(h264);
}

/* One in-process search of --workers 1 at `fps` (results[0]); its JSON
 * root, or NULL. */
static JsonParser *realtime_search(const char *dfbench, const char *h264, double fps,
                                   const char *max_streams, const char *json)
{
    char fps_s[32];
    snprintf(fps_s, sizeof(fps_s), "%.3f", fps);
    const char *argv[] = {dfbench,
                          "realtime",
                          "--input",
                          h264,
                          "--fps",
                          fps_s,
                          "--duration",
                          "0.5",
                          "--workers",
                          "1",
                          "--peers",
                          "none",
                          "--policy",
                          "cost-local",
                          "--max-streams",
                          max_streams,
                          "--latency-frames",
                          "8",
                          "--json",
                          json,
                          NULL};
    DfRun run = df_test_run(argv, NULL);
    DF_EXPECT_MSG(run.spawned && run.status == 0, "dfbench realtime exited %d:\n%s\n%s", run.status,
                  run.out ? run.out : "", run.err ? run.err : "");
    const bool ok = run.spawned && run.status == 0;
    df_run_clear(&run);
    JsonParser *p = json_parser_new();
    if (!ok || !json_parser_load_from_file(p, json, NULL)) {
        g_object_unref(p);
        return NULL;
    }
    return p;
}

/* The search at a frame rate that makes K* about 2.5 (from a first run's
 * T(1)), one worker, up to 8 streams: it starts at 3/4 of K*; a K at or under K* that
 * misses is tried once more (a miss may be a one-off), one over K* is not
 * (more streams than the cores decode at all); a step past K* tries the
 * smallest K over it first.  A budget of 8 frames lets K under K* keep
 * up; some K misses (8 is over 3 times K*). */
DF_TEST(BenchRealtime, SearchLooksOverKStarOnce)
{
    const char *dfbench = g_getenv("DFBENCH");
    if (!dfbench)
        DF_SKIP("DFBENCH is not set: run through meson test");
    char dir[] = "/tmp/dfbench-rt-XXXXXX";
    DF_ASSERT(mkdtemp(dir));
    gchar *json = g_strdup_printf("%s/r.json", dir);
    char *h264 = clip("h264_cabac_slices8.mkv");
    JsonParser *p = realtime_search(dfbench, h264, 30, "1", json);
    DF_ASSERT(p);
    const double t1 = json_object_get_double_member_with_default(
        json_object_get_object_member(json_node_get_object(json_parser_get_root(p)), "run"),
        "t1_fps", NAN);
    g_object_unref(p);
    DF_ASSERT_MSG(isfinite(t1) && t1 > 0, "T(1) %g", t1);
    p = realtime_search(dfbench, h264, t1 / 2.5 < 1000 ? t1 / 2.5 : 1000, "8", json);
    DF_ASSERT(p);
    JsonObject *root = json_node_get_object(json_parser_get_root(p));
    JsonObject *r = json_array_get_object_element(json_object_get_array_member(root, "results"), 0);
    /* K* as the search saw it: T(1)'s sample before the trials (the one
     * reported is the mean with the sample after). */
    JsonObject *run = json_object_get_object_member(root, "run");
    JsonArray *samples = json_object_get_array_member(run, "t1_fps_samples");
    DF_ASSERT(samples && json_array_get_length(samples) >= 1);
    const double ks = json_array_get_double_element(samples, 0) /
                      json_object_get_double_member_with_default(run, "fps", NAN);
    JsonArray *trials = json_object_get_array_member(r, "trials");
    DF_ASSERT(isfinite(ks) && ks > 0 && trials && json_array_get_length(trials) > 0);
    GString *seq = g_string_new(NULL);
    int tried[9] = {0}, missed[9] = {0};
    const int over = (int)floor(ks) + 1;
    bool past_over_first = false;
    for (guint j = 0; j < json_array_get_length(trials); j++) {
        JsonObject *t = json_array_get_object_element(trials, j);
        const int k = (int)json_object_get_int_member(t, "streams");
        const bool miss = json_object_get_int_member(t, "misses") > 0;
        g_string_append_printf(seq, " %d:%s", k, miss ? "miss" : "ok");
        DF_EXPECT_MSG(k >= 1 && k <= 8, "K %d of 1..8", k);
        if (k < 1 || k > 8)
            continue;
        past_over_first |= k > over && tried[over] == 0;
        tried[k]++;
        missed[k] += miss;
    }
    const int k0 = ks * 3 / 4 >= 1 ? (int)(ks * 3 / 4) : 1;
    DF_EXPECT_MSG(json_object_get_int_member(json_array_get_object_element(trials, 0), "streams") ==
                      k0,
                  "first trial not at K %d (K* %.2f):%s", k0, ks, seq->str);
    DF_EXPECT_MSG(!past_over_first, "a K past %d before %d (K* %.2f):%s", over, over, ks, seq->str);
    int misses = 0;
    for (int k = 1; k <= 8; k++) {
        misses += missed[k];
        if (missed[k] && k <= ks)
            DF_EXPECT_MSG(tried[k] == 2, "K %d under K* %.2f missed, tried %d times:%s", k, ks,
                          tried[k], seq->str);
        if (missed[k] && k > ks)
            DF_EXPECT_MSG(tried[k] == 1, "K %d over K* %.2f missed, tried %d times:%s", k, ks,
                          tried[k], seq->str);
    }
    DF_EXPECT_MSG(misses > 0, "no K up to 8 missed (K* %.2f):%s", ks, seq->str);
    g_string_free(seq, TRUE);
    g_object_unref(p);
    g_unlink(json);
    g_rmdir(dir);
    g_free(json);
    g_free(h264);
}

DF_TEST(BenchRealtime, OverloadSaysWhenFramesWereLate)
{
    const char *dfbench = df_test_dfbench();
    if (!dfbench)
        DF_SKIP("DFBENCH is not set: run through meson test");
    if (!with_dfdec())
        DF_SKIP("no dfdec on GStreamer's path: --overload runs it");
    char *h264 = clip("h264_cabac_slices8.mkv");
    const char *argv[] = {
        dfbench, "realtime",      "--input", h264,      "--fps", "30",         "--duration",
        "0.5",   "--workers",     "1",       "--peers", "dfdec", "--overload", "--overload-factor",
        "0.5",   "--max-streams", "2",       NULL};
    DfRun run = df_test_run(argv, NULL);
    DF_ASSERT_MSG(run.spawned && run.status == 0, "dfbench realtime exited %d:\n%s\n%s", run.status,
                  run.out ? run.out : "", run.err ? run.err : "");
    DF_EXPECT_MSG(strstr(run.out, "late at s") && strstr(run.out, "late frames (at "),
                  "no times of late frames:\n%s", run.out);
    /* Whether QoS acted on every late stream (issue 21: with admission
     * off, only the streams QoS drops from may be late). */
    DF_EXPECT_MSG(strstr(run.out, " late streams dropped none"),
                  "no count of late streams "
                  "that dropped nothing:\n%s",
                  run.out);
    int rows = 0;
    gchar **lines = g_strsplit(run.out, "\n", -1);
    for (gchar **l = lines; *l; l++) {
        char mode[16], admitted[16], at[48];
        int workers, stream;
        unsigned long long frames, late, dropped;
        if (sscanf(*l, "%d %15s %d %15s %llu %llu %47s %llu", &workers, mode, &stream, admitted,
                   &frames, &late, at, &dropped) != 8 ||
            (strcmp(mode, "refuse") != 0 && strcmp(mode, "none") != 0))
            continue;
        rows++;
        double first = NAN, last = NAN;
        if (late == 0) {
            DF_EXPECT_MSG(strcmp(at, "-") == 0, "no late frame, but late at %s: %s", at, *l);
        } else {
            DF_EXPECT_MSG(sscanf(at, "%lf-%lf", &first, &last) == 2 && first >= 0 && first <= last,
                          "%llu late frames at \"%s\": %s", late, at, *l);
        }
    }
    g_strfreev(lines);
    DF_EXPECT_MSG(rows >= 2, "%d stream rows in:\n%s", rows, run.out);
    df_run_clear(&run);
    g_free(h264);
}

/* The pipelines' window ends at an I-frame of an open GOP (25 fps played
 * at 25, 0.48 s: frame 12 of mpeg2_opengop.mkv), which is decoded before
 * the two B-frames shown just before it.  Every frame of the window, 0 to
 * 11, still reaches the sink: the demuxer, which stops at the first
 * keyframe at or past the seek's stop, must not cut those B-frames (it
 * did: 9 of 11 counted, so that every trial missed).  Counts, not
 * timings. */
DF_TEST(BenchRealtime, PipelinesGetEveryFrameOfAnOpenGopWindow)
{
    const char *dfbench = df_test_dfbench();
    if (!dfbench)
        DF_SKIP("DFBENCH is not set: run through meson test");
    if (!with_gst())
        DF_SKIP("dfbench without GStreamer: no pipelines");
    char dir[] = "/tmp/dfbench-rt-XXXXXX";
    DF_ASSERT(mkdtemp(dir));
    gchar *json = g_strdup_printf("%s/r.json", dir);
    char *mpeg2 = clip("mpeg2_opengop.mkv");
    const char *argv[] = {dfbench,
                          "realtime",
                          "--input",
                          mpeg2,
                          "--fps",
                          "25",
                          "--duration",
                          "0.48",
                          "--workers",
                          "1",
                          "--policy",
                          "cost-local",
                          "--peers",
                          with_dfdec() ? "avdec,dfdec" : "avdec",
                          "--max-streams",
                          "1",
                          "--json",
                          json,
                          NULL};
    DfRun run = df_test_run(argv, NULL);
    DF_ASSERT_MSG(run.spawned && run.status == 0, "dfbench realtime exited %d:\n%s\n%s", run.status,
                  run.out ? run.out : "", run.err ? run.err : "");
    df_run_clear(&run);
    JsonParser *p = json_parser_new();
    DF_ASSERT(json_parser_load_from_file(p, json, NULL));
    JsonObject *root = json_node_get_object(json_parser_get_root(p));
    JsonArray *res = json_object_get_array_member(root, "results");
    DF_ASSERT(res);
    int n_pipelines = 0;
    for (guint i = 0; i < json_array_get_length(res); i++) {
        JsonObject *r = json_array_get_object_element(res, i);
        const char *impl = json_object_get_string_member_with_default(r, "impl", "");
        const bool pipeline = !g_str_has_prefix(impl, "dfmedia/");
        n_pipelines += pipeline;
        JsonArray *trials = json_object_get_array_member(r, "trials");
        DF_EXPECT_MSG(trials && json_array_get_length(trials) >= 1, "%s: no trials", impl);
        for (guint j = 0; trials && j < json_array_get_length(trials); j++) {
            JsonObject *t = json_array_get_object_element(trials, j);
            const int frames = (int)json_object_get_int_member(t, "frames");
            const int expected = (int)json_object_get_int_member(t, "expected_frames");
            /* dfmedia: 12 packets sent, 12 frames; pipelines: frames 0 to
             * 11 less the prerolled one. */
            DF_EXPECT_EQ_INT(expected, pipeline ? 11 : 12);
            DF_EXPECT_MSG(frames == expected, "%s, trial %u: %d of %d frames", impl, j, frames,
                          expected);
        }
    }
    DF_EXPECT_EQ_INT(n_pipelines, with_dfdec() ? 2 : 1);
    g_object_unref(p);
    rm_rf(dir);
    g_free(json);
    g_free(mpeg2);
}

/* Bad values: exit 2 and one line naming the flag and the value; a missing
 * or non-media input or an output that cannot be written: exit 1, before any
 * decode (nothing on stdout), for both subcommands. */
DF_TEST(BenchDecode, BadInputIsRefused)
{
    const char *dfbench = df_test_dfbench();
    if (!dfbench)
        DF_SKIP("DFBENCH is not set: run through meson test");
    char *h264 = clip("h264_cabac_slices8.mkv");
    char dir[] = "/tmp/dfbench-bad-XXXXXX";
    DF_ASSERT(mkdtemp(dir));
    gchar *junk = g_strdup_printf("%s/junk.mkv", dir),
          *empty = g_strdup_printf("%s/empty.mkv", dir);
    guint8 bytes[4096];
    for (size_t i = 0; i < sizeof(bytes); i++)
        bytes[i] = (guint8)(i * 2654435761u >> 13);
    DF_ASSERT(g_file_set_contents(junk, (const char *)bytes, sizeof(bytes), NULL));
    DF_ASSERT(g_file_set_contents(empty, "", 0, NULL));
    const struct {
        const char *argv[10];
        int status;
        const char *says;
    } bad[] = {
        {{"decode", "--input", "/nonexistent/clip.mkv"}, 1, "/nonexistent/clip.mkv"},
        {{"decode", "--input", junk}, 1, junk},
        {{"decode", "--input", empty}, 1, empty},
        {{"decode", "--input", dir}, 1, dir},
        {{"decode", "--input", h264, "--workers", "0"}, 2, "bad --workers \"0\""},
        {{"decode", "--input", h264, "--workers", "1,x"}, 2, "bad --workers \"1,x\""},
        {{"decode", "--input", h264, "--workers", "1,,2"}, 2, "bad --workers \"1,,2\""},
        {{"decode", "--input", h264, "--workers", "99999999999999999999"}, 2, "bad --workers"},
        {{"decode", "--input", h264, "--peers", "vlc"}, 2, "unknown peer \"vlc\""},
        {{"decode", "--input", h264, "--peers", ""}, 2, "bad --peers \"\""},
        {{"decode", "--input", h264, "--policy", "lifo"}, 2, "unknown policy \"lifo\""},
        {{"decode", "--input", h264, "--policy", "fifo,,steal"}, 2, "bad --policy \"fifo,,steal\""},
        {{"decode", "--input", h264, "--threading", "fast"}, 2, "bad --threading \"fast\""},
        {{"decode", "--input", h264, "--sink", "xvimagesink"}, 2, "bad --sink \"xvimagesink\""},
        {{"decode", "--input", h264, "--repeat", "-1"}, 2, "bad --repeat -1"},
        {{"decode", "--input", h264, "--repeat", "4x"}, 2, "--repeat"},
        {{"decode", "--input", h264, "--in-flight", "-1"}, 2, "bad --in-flight -1"},
        {{"decode", "--input", h264, "--poll-us", "-3"}, 2, "bad --poll-us -3"},
        {{"decode", "--input", h264, "--poll-us", "-2"}, 2, "bad --poll-us -2"},
        {{"decode", "--input", h264, "--plot", "/tmp/x.pdf"}, 2, ".svg"},
        {{"decode", "--input", h264, "--policy", "none", "--trace", "/tmp/t.json"},
         2,
         "--trace needs a dfmedia policy"},
        {{"decode", "--input", h264, "extra"}, 2, "unexpected argument \"extra\""},
        {{"decode", "--input", h264, "--trace-workers", "1"}, 2, "--trace-workers needs --trace"},
        {{"decode", "--input", h264, "--trace-workers", "x", "--trace", "/tmp/t.json"},
         2,
         "bad --trace-workers \"x\""},
        {{"decode", "--input", h264, "--trace-workers", "1000", "--trace", "/tmp/t.json"},
         2,
         "1000 is not one of --workers"},
        {{"decode", "--input", h264, "--trace-runs", "2"}, 2, "--trace-runs needs --trace"},
        {{"decode", "--input", h264, "--trace-runs", "-1", "--trace", "/tmp/t.json"},
         2,
         "bad --trace-runs -1"},
        {{"decode", "--input", h264, "--repeat", "2", "--trace-runs", "3", "--trace",
          "/tmp/t.json"},
         2,
         "bad --trace-runs 3: at most --repeat (2)"},
        {{"decode", "--input", h264, "--trace-policy", "fifo"}, 2, "--trace-policy needs --trace"},
        {{"decode", "--input", h264, "--policy", "fifo", "--trace-policy", "steal", "--trace",
          "/tmp/t.json"},
         2,
         "bad --trace-policy \"steal\": not one of --policy"},
        {{"decode", NULL}, 2, "--input"},
        {{"decode", "--input", h264, "--json", "/nonexistent/dir/d.json"},
         1,
         "--json: cannot write /nonexistent/dir/d.json"},
        {{"decode", "--input", h264, "--csv", "/proc/x/y"}, 1, "--csv: cannot write /proc/x/y"},
        {{"decode", "--input", h264, "--plot", "/nonexistent/p.svg"}, 1, "--plot: cannot write"},
        {{"decode", "--input", h264, "--trace", dir}, 1, "Is a directory"},
        {{"decode", "--input", h264, "--json", ""}, 2, "bad --json \"\""},
        {{"realtime", "--input", "/nonexistent/clip.mkv"}, 1, "/nonexistent/clip.mkv"},
        {{"realtime", "--input", junk}, 1, junk},
        {{"realtime", "--input", h264, "--workers", "-3"}, 2, "bad --workers \"-3\""},
        {{"realtime", "--input", h264, "--peers", "vlc"}, 2, "unknown peer \"vlc\""},
        {{"realtime", "--input", h264, "--policy", "none", "--peers", "dfdec"},
         2,
         "dfdec runs once per --policy"},
        {{"realtime", "--input", h264, "--policy", ""}, 2, "bad --policy \"\""},
        {{"realtime", "--input", h264, "--fps", "0"}, 2, "bad --fps 0"},
        {{"realtime", "--input", h264, "--fps", "nan"}, 2, "bad --fps nan"},
        {{"realtime", "--input", h264, "--fps", "1e-300"}, 2, "bad --fps 1e-300"},
        {{"realtime", "--input", h264, "--duration", "-1"}, 2, "bad --duration -1"},
        {{"realtime", "--input", h264, "--max-streams", "0"}, 2, "bad --max-streams 0"},
        {{"realtime", "--input", h264, "--latency-frames", "-1"}, 2, "bad --latency-frames -1"},
        {{"realtime", "--input", h264, "--sink", "xvimagesink"}, 2, "bad --sink \"xvimagesink\""},
        {{"realtime", "--input", h264, "--trace-streams", "2"}, 2, "--trace-streams needs --trace"},
        {{"realtime", "--input", h264, "--csv", "/proc/x/y"}, 1, "--csv: cannot write /proc/x/y"},
        {{"realtime", "--input", h264, "extra"}, 2, "unexpected argument \"extra\""},
        {{"realtime", "--input", h264, "--overload-factor", "0"}, 2, "bad --overload-factor 0"},
        {{"realtime", "--input", h264, "--stagger", "-1"}, 2, "bad --stagger -1"},
        {{"realtime", "--input", h264, "--stagger", "1"}, 2, "--stagger needs --overload"},
        {{"realtime", "--input", h264, "--overload", "--stagger", "1", "--gop-phases"},
         2,
         "--gop-phases and --stagger are two ways"},
        {{"realtime", "--input", h264, "--overload", "--peers", "none"},
         2,
         "--overload needs the dfdec peer"},
        {{"nosuch"}, 2, "unknown subcommand \"nosuch\""},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        const char *argv[12] = {dfbench};
        for (int k = 0; bad[i].argv[k]; k++)
            argv[k + 1] = bad[i].argv[k];
        DfRun run = df_test_run(argv, NULL);
        DF_EXPECT_MSG(run.spawned && run.status == bad[i].status, "case %zu (%s %s): exit %d", i,
                      bad[i].argv[0], bad[i].argv[1] ? bad[i].argv[1] : "", run.status);
        DF_EXPECT_MSG(run.err && strstr(run.err, bad[i].says), "case %zu: stderr lacks \"%s\": %s",
                      i, bad[i].says, run.err ? run.err : "");
        DF_EXPECT_MSG(run.err && strstr(run.err, ": error: "), "case %zu: not an error line: %s", i,
                      run.err ? run.err : "");
        DF_EXPECT_MSG(bad[i].status != 2 || (run.err && strstr(run.err, "--help")),
                      "case %zu: no hint to --help: %s", i, run.err ? run.err : "");
        DF_EXPECT_MSG(run.out && !strstr(run.out, "load average"), "case %zu ran: %s", i,
                      run.out ? run.out : "");
        df_run_clear(&run);
    }
    const char *help[] = {dfbench, "decode", "--help", NULL};
    DfRun run = df_test_run(help, NULL);
    DF_EXPECT_EQ_INT(run.status, 0);
    static const char *const options[] = {"--input", "--workers", "--policy", "--peers", "--repeat",
                                          "--json",  "--csv",     "--plot",   "--trace"};
    for (size_t i = 0; run.out && i < G_N_ELEMENTS(options); i++)
        DF_EXPECT_MSG(strstr(run.out, options[i]), "--help does not mention %s", options[i]);
    df_run_clear(&run);
    g_unlink(junk);
    g_unlink(empty);
    DF_EXPECT(rmdir(dir) == 0);
    g_free(junk);
    g_free(empty);
    g_free(h264);
}

/* --trace-overhead: every dfmedia policy x workers has fps untraced and
 * traced from the same repeats, and an overhead from them.  Structure
 * only: what tracing costs is measured, never asserted. */
DF_TEST(BenchDecode, TraceOverheadPairsEveryPolicy)
{
    const char *dfbench = df_test_dfbench();
    if (!dfbench)
        DF_SKIP("DFBENCH is not set: run through meson test");
    char dir[] = "/tmp/dfbench-trace-XXXXXX";
    DF_ASSERT(mkdtemp(dir));
    gchar *json = g_strdup_printf("%s/o.json", dir);
    char *h264 = clip("h264_cabac_slices8.mkv");
    const char *argv[] = {
        dfbench,   "decode", "--input",  h264, "--workers",        "1,2",    "--policy", "all",
        "--peers", "none",   "--repeat", "2",  "--trace-overhead", "--json", json,       NULL};
    DfRun run = df_test_run(argv, NULL);
    DF_ASSERT_MSG(run.spawned && run.status == 0, "dfbench decode exited %d:\n%s\n%s", run.status,
                  run.out ? run.out : "", run.err ? run.err : "");
    DF_EXPECT_MSG(strstr(run.out, "trace overhead"), "no trace overhead table:\n%s", run.out);
    df_run_clear(&run);
    JsonParser *p = json_parser_new();
    DF_ASSERT(json_parser_load_from_file(p, json, NULL));
    JsonObject *root = json_node_get_object(json_parser_get_root(p));
    JsonArray *rows = json_object_get_array_member(root, "trace_overhead");
    DF_ASSERT_MSG(rows, "no trace_overhead member");
    static const char *const policies[] = {"fifo", "steal", "cost", "cost-local", "learned"};
    GHashTable *seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (guint i = 0; i < json_array_get_length(rows); i++) {
        JsonObject *r = json_array_get_object_element(rows, i);
        char *key =
            g_strdup_printf("%s|%lld", json_object_get_string_member_with_default(r, "policy", "?"),
                            (long long)json_object_get_int_member_with_default(r, "workers", 0));
        DF_EXPECT_MSG(!g_hash_table_contains(seen, key), "%s twice", key);
        DF_EXPECT_MSG(is_number(r, "fps_off") && is_number(r, "fps_on") &&
                          is_number(r, "overhead_pct") && is_number(r, "overhead_pct_paired"),
                      "%s: fps_off, fps_on, overhead_pct and _paired must be numbers", key);
        JsonArray *off = json_object_get_array_member(r, "fps_off_samples"),
                  *on = json_object_get_array_member(r, "fps_on_samples");
        DF_EXPECT_MSG(off && on && json_array_get_length(off) == 2 &&
                          json_array_get_length(on) == 2,
                      "%s: 2 samples each way expected", key);
        DF_EXPECT_MSG(json_object_get_int_member_with_default(r, "dropped_events", -1) == 0,
                      "%s: trace events dropped", key);
        g_hash_table_add(seen, key);
    }
    for (size_t k = 0; k < G_N_ELEMENTS(policies); k++)
        for (int w = 1; w <= 2; w++) {
            char *key = g_strdup_printf("%s|%d", policies[k], w);
            DF_EXPECT_MSG(g_hash_table_contains(seen, key), "%s missing", key);
            g_free(key);
        }
    g_hash_table_destroy(seen);
    g_object_unref(p);
    g_free(h264);
    g_free(json);
    rm_rf(dir);
}

/* --trace-runs: one traced run per repeat, each to FILE.rK, listed with
 * the policy (--trace-policy) and threading it ran, which dfsim compares
 * like with like. */
DF_TEST(BenchDecode, TraceRunsSpreadOverTheRepeats)
{
    const char *dfbench = df_test_dfbench();
    if (!dfbench)
        DF_SKIP("DFBENCH is not set: run through meson test");
    char dir[] = "/tmp/dfbench-runs-XXXXXX";
    DF_ASSERT(mkdtemp(dir));
    gchar *json = g_strdup_printf("%s/r.json", dir), *trace = g_strdup_printf("%s/t.json", dir);
    char *mpeg2 = clip("mpeg2_prog.mkv");
    const char *argv[] = {dfbench,
                          "decode",
                          "--input",
                          mpeg2,
                          "--workers",
                          "1",
                          "--policy",
                          "fifo,cost-local",
                          "--peers",
                          "none",
                          "--repeat",
                          "3",
                          "--trace",
                          trace,
                          "--trace-runs",
                          "3",
                          "--trace-policy",
                          "cost-local",
                          "--json",
                          json,
                          NULL};
    DfRun run = df_test_run(argv, NULL);
    DF_ASSERT_MSG(run.spawned && run.status == 0, "dfbench decode exited %d:\n%s\n%s", run.status,
                  run.out ? run.out : "", run.err ? run.err : "");
    df_run_clear(&run);
    JsonParser *p = json_parser_new();
    DF_ASSERT(json_parser_load_from_file(p, json, NULL));
    JsonObject *root = json_node_get_object(json_parser_get_root(p));
    JsonArray *traces =
        json_object_get_array_member(json_object_get_object_member(root, "run"), "traces");
    DF_ASSERT(traces);
    DF_EXPECT_EQ_INT((int)json_array_get_length(traces), 3);
    for (guint i = 0; i < json_array_get_length(traces); i++) {
        JsonObject *t = json_array_get_object_element(traces, i);
        DF_EXPECT_EQ_INT((int)json_object_get_int_member(t, "run"), (int)i + 1);
        /* One run per repeat: run k in repeat k, for dfsim to pair. */
        DF_EXPECT_EQ_INT((int)json_object_get_int_member(t, "repeat"), (int)i + 1);
        DF_EXPECT_EQ_INT((int)json_object_get_int_member(t, "workers"), 1);
        gchar *want = g_strdup_printf("%s/t.r%u.json", dir, i + 1);
        DF_EXPECT(g_strcmp0(json_object_get_string_member_with_default(t, "file", ""), want) == 0);
        DF_EXPECT_MSG(file_contains(want, "traceEvents"), "no dfsched trace in %s", want);
        g_free(want);
        DF_EXPECT(g_strcmp0(json_object_get_string_member_with_default(t, "impl", ""),
                            "dfmedia/cost-local") == 0);
        DF_EXPECT_MSG(
            g_str_has_prefix(json_object_get_string_member_with_default(t, "threading", ""),
                             "slice: "),
            "threading of the traced run: %s",
            json_object_get_string_member_with_default(t, "threading", ""));
        DF_EXPECT(is_number(t, "fps") && json_object_get_double_member(t, "fps") > 0);
    }
    DF_EXPECT(!g_file_test(trace, G_FILE_TEST_EXISTS));
    g_object_unref(p);
    g_free(mpeg2);
    g_free(json);
    g_free(trace);
    rm_rf(dir);
}

DF_TEST(BenchLive, RunsAndWritesJson)
{
    const char *dfbench = df_test_dfbench();
    if (!dfbench)
        DF_SKIP("DFBENCH is not set: run through meson test");
    if (!with_dfdec())
        DF_SKIP("dfbench without GStreamer or dfdec");
    char dir[] = "/tmp/dfbench-live-XXXXXX";
    DF_ASSERT(mkdtemp(dir));
    gchar *json = g_strdup_printf("%s/l.json", dir);
    const char *argv[] = {dfbench,     "live", "--size", "320x240", "--duration", "2",
                          "--workers", "2",    "--json", json,      NULL};
    DfRun run = df_test_run(argv, NULL);
    DF_ASSERT(run.spawned);
    if (run.status == 1 && run.err && strstr(run.err, "no GStreamer element")) {
        df_run_clear(&run);
        g_free(json);
        g_rmdir(dir);
        DF_SKIP("a GStreamer element of the live pipeline is missing");
    }
    DF_ASSERT_MSG(run.status == 0, "dfbench live exited %d:\n%s\n%s", run.status,
                  run.out ? run.out : "", run.err ? run.err : "");
    DF_EXPECT_MSG(run.out && strstr(run.out, "lat p99 ms") && strstr(run.out, "dfdec") &&
                      strstr(run.out, "avdec"),
                  "no table:\n%s", run.out ? run.out : "");
    df_run_clear(&run);
    JsonParser *p = json_parser_new();
    DF_ASSERT(json_parser_load_from_file(p, json, NULL));
    JsonObject *root = json_node_get_object(json_parser_get_root(p));
    DF_EXPECT(g_strcmp0(json_object_get_string_member_with_default(root, "bench", ""), "live") ==
              0);
    JsonArray *res = json_object_get_array_member(root, "results");
    DF_ASSERT(res && json_array_get_length(res) == 2);
    for (guint i = 0; i < 2; i++) {
        JsonObject *r = json_array_get_object_element(res, i);
        const char *dec = json_object_get_string_member_with_default(r, "decoder", "");
        DF_EXPECT(strcmp(dec, i == 0 ? "dfdec" : "avdec") == 0);
        DF_EXPECT_EQ_INT(json_object_get_int_member(r, "frames_sent"), 60);
        const gint64 rendered = json_object_get_int_member(r, "rendered");
        DF_EXPECT_MSG(rendered > 0 && rendered <= 60, "%s rendered %" G_GINT64_FORMAT, dec,
                      rendered);
        DF_EXPECT_EQ_INT(json_object_get_int_member(r, "late"), 60 - rendered);
        DF_EXPECT_MSG(json_object_get_int_member(r, "latency_samples") > 0,
                      "%s: no latency from the tracer", dec);
        const char *nums[] = {"latency_p50_ms", "latency_p99_ms", "latency_max_ms",
                              "reported_latency_ms"};
        for (size_t k = 0; k < G_N_ELEMENTS(nums); k++)
            DF_EXPECT_MSG(is_number(r, nums[k]), "%s: %s is not a number", dec, nums[k]);
        DF_EXPECT(json_object_get_double_member(r, "latency_p50_ms") <=
                  json_object_get_double_member(r, "latency_p99_ms"));
    }
    g_object_unref(p);
    g_unlink(json);
    g_rmdir(dir);
    g_free(json);

    /* Each bad value named, with its range. */
    const struct {
        const char *flag, *value, *says;
    } bad[] = {{"--decoders", "ffmpeg", "unknown decoder"},
               {"--size", "64x64garbage", "bad --size \"64x64garbage\""},
               {"--fps", "0", "--fps 0: expected 1 to 240"},
               {"--jitter-ms", "-1", "--jitter-ms -1: expected 0 to 10000"}};
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        const char *args[] = {dfbench, "live", bad[i].flag, bad[i].value, NULL};
        DfRun b = df_test_run(args, NULL);
        DF_EXPECT_MSG(b.spawned && b.status == 2 && b.err && strstr(b.err, bad[i].says),
                      "%s %s: status %d, %s", bad[i].flag, bad[i].value, b.status,
                      b.err ? b.err : "");
        df_run_clear(&b);
    }
}
