/* dfbench live: one live H.264 stream over RTP on loopback UDP, decoded by
 * each decoder in turn in the same setup, with GStreamer's own latency
 * measurement.
 *
 *   sender:   videotestsrc is-live=true ! x264enc tune=zerolatency ...
 *             ! rtph264pay ! udpsink host=127.0.0.1
 *   receiver: udpsrc ! rtpjitterbuffer ! rtph264depay ! h264parse
 *             ! DECODER ! fakevideosink sync=true qos=true
 *
 * Latency is per picture, from its last RTP packet leaving udpsrc to the
 * decoded picture reaching the sink, so jitterbuffer, depayloader, parser
 * and decoder, without the sink's clock wait: the span of GStreamer's
 * `latency` tracer, taken with pad probes because that tracer deadlocks a
 * state change in GStreamer 1.26.2 (its hooks and gst_bin_iterate_sorted
 * wait on each other's object locks).  Packets are matched to pictures by
 * RTP timestamp, and the timestamp to the picture by the PTS the
 * jitterbuffer gives it.  Late frames are those sent but not rendered: dropped by the sink
 * (its stats' "dropped", qos=true with max-lateness 20 ms as a video sink
 * has) or, on the sink's QoS events, by the decoder before the sink.  The
 * decoder's reported latency is what it sets on GstVideoDecoder (its part
 * of the latency query).  Sender and receiver run in this process on the
 * same cores, so the encoder's work competes with the decoder's. */
#include "bench_media.h"
#include "dfbench.h"
#include "report.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "dfbench live"

#ifndef DF_BENCH_HAVE_GST

int df_bench_live_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return df_cli_fail(PROG, "built without GStreamer");
}

#else

#include <gst/gst.h>
#include <gst/video/gstvideodecoder.h>

typedef struct LiveOpts {
    char *decoders, *size, *json;
    int fps, duration, workers, slices, bitrate, jitter_ms;
} LiveOpts;

typedef struct LiveResult {
    const char *decoder;
    int frames_sent;
    guint64 rendered, dropped;
    double lat_p50_ms, lat_p99_ms, lat_max_ms;
    int lat_samples;
    double reported_ms; /* gst_video_decoder_get_latency() min */
    char error[256];
} LiveResult;

/* The probes run on the streaming threads. */
typedef struct LatProbe {
    GMutex lock;
    GHashTable *arrival; /* RTP timestamp -> last packet's arrival (ns) */
    GHashTable *rtp_ts;  /* PTS (gint64 key) -> RTP timestamp */
    GArray *ns;          /* guint64 samples */
} LatProbe;

static bool rtp_timestamp(GstBuffer *b, guint32 *ts)
{
    guint8 h[8];
    if (gst_buffer_extract(b, 0, h, sizeof(h)) != sizeof(h) || (h[0] >> 6) != 2)
        return false;
    *ts = (guint32)h[4] << 24 | (guint32)h[5] << 16 | (guint32)h[6] << 8 | h[7];
    return true;
}

static GstPadProbeReturn probe_udp(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
    (void)pad;
    LatProbe *lp = data;
    guint32 ts;
    if (rtp_timestamp(GST_PAD_PROBE_INFO_BUFFER(info), &ts)) {
        const gint64 now = g_get_monotonic_time() * 1000;
        g_mutex_lock(&lp->lock);
        g_hash_table_insert(lp->arrival, GUINT_TO_POINTER(ts), g_memdup2(&now, sizeof(now)));
        g_mutex_unlock(&lp->lock);
    }
    return GST_PAD_PROBE_OK;
}

static GstPadProbeReturn probe_jb(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
    (void)pad;
    LatProbe *lp = data;
    GstBuffer *b = GST_PAD_PROBE_INFO_BUFFER(info);
    guint32 ts;
    if (GST_BUFFER_PTS_IS_VALID(b) && rtp_timestamp(b, &ts)) {
        const gint64 pts = (gint64)GST_BUFFER_PTS(b);
        g_mutex_lock(&lp->lock);
        g_hash_table_insert(lp->rtp_ts, g_memdup2(&pts, sizeof(pts)), GUINT_TO_POINTER(ts));
        g_mutex_unlock(&lp->lock);
    }
    return GST_PAD_PROBE_OK;
}

static GstPadProbeReturn probe_sink(GstPad *pad, GstPadProbeInfo *info, gpointer data)
{
    (void)pad;
    LatProbe *lp = data;
    GstBuffer *b = GST_PAD_PROBE_INFO_BUFFER(info);
    if (!GST_BUFFER_PTS_IS_VALID(b))
        return GST_PAD_PROBE_OK;
    const gint64 now = g_get_monotonic_time() * 1000, pts = (gint64)GST_BUFFER_PTS(b);
    g_mutex_lock(&lp->lock);
    gpointer ts;
    if (g_hash_table_lookup_extended(lp->rtp_ts, &pts, NULL, &ts)) {
        const gint64 *at = g_hash_table_lookup(lp->arrival, ts);
        if (at && now >= *at) {
            const guint64 d = (guint64)(now - *at);
            g_array_append_val(lp->ns, d);
        }
        g_hash_table_remove(lp->arrival, ts);
        g_hash_table_remove(lp->rtp_ts, &pts);
    }
    g_mutex_unlock(&lp->lock);
    return GST_PAD_PROBE_OK;
}

static void add_probe(GstElement *e, const char *pad_name, GstPadProbeCallback cb, LatProbe *lp)
{
    GstPad *pad = gst_element_get_static_pad(e, pad_name);
    if (pad) {
        gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, cb, lp, NULL);
        gst_object_unref(pad);
    }
}

static int cmp_u64(const void *a, const void *b)
{
    const guint64 x = *(const guint64 *)a, y = *(const guint64 *)b;
    return x < y ? -1 : x > y;
}

static double quantile_ms(const guint64 *v, guint n, double q)
{
    if (n == 0)
        return NAN;
    guint i = (guint)(q * (n - 1) + 0.5);
    return v[i] / 1e6;
}

static bool wait_for(GstElement *pipe, GstMessageType type, GstClockTime timeout, char *err,
                     size_t len)
{
    GstBus *bus = gst_element_get_bus(pipe);
    GstMessage *m =
        gst_bus_timed_pop_filtered(bus, timeout, (GstMessageType)(type | GST_MESSAGE_ERROR));
    const bool ok = m && GST_MESSAGE_TYPE(m) == type;
    if (m && !ok) {
        GError *e = NULL;
        gst_message_parse_error(m, &e, NULL);
        snprintf(err, len, "%s: %s", GST_OBJECT_NAME(GST_MESSAGE_SRC(m)), e ? e->message : "?");
        g_clear_error(&e);
    } else if (!m) {
        snprintf(err, len, "no %s within %.0f s", gst_message_type_get_name(type),
                 (double)timeout / GST_SECOND);
    }
    if (m)
        gst_message_unref(m);
    gst_object_unref(bus);
    return ok;
}

/* The decoder element of a --decoders item, with its properties. */
static gchar *decoder_desc(const char *name, const LiveOpts *o)
{
    if (strcmp(name, "dfdec") == 0)
        return g_strdup_printf("dfdec n-workers=%d", o->workers);
    if (strcmp(name, "avdec") == 0)
        return g_strdup_printf("avdec_h264 max-threads=%d", o->workers);
    return NULL;
}

static void run_one(const LiveOpts *o, int w, int h, const char *name, LiveResult *r)
{
    memset(r, 0, sizeof(*r));
    r->decoder = name;
    r->lat_p50_ms = r->lat_p99_ms = r->lat_max_ms = r->reported_ms = NAN;
    GstElement *rx = NULL, *tx = NULL, *src = NULL, *sink = NULL, *dec = NULL;
    LatProbe lp;
    g_mutex_init(&lp.lock);
    lp.arrival = g_hash_table_new_full(NULL, NULL, NULL, g_free);
    lp.rtp_ts = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    lp.ns = g_array_new(FALSE, FALSE, sizeof(guint64));
    GError *err = NULL;
    gchar *dec_desc = decoder_desc(name, o);
    gchar *rx_desc = g_strdup_printf(
        "udpsrc name=rx_src port=0 address=127.0.0.1 buffer-size=8388608 "
        "caps=\"application/x-rtp,media=video,encoding-name=H264,payload=96,clock-rate=90000\" "
        "! rtpjitterbuffer name=rx_jb latency=%d ! rtph264depay ! h264parse ! %s name=dec "
        "! fakevideosink name=rx_sink_%s sync=true qos=true max-lateness=20000000",
        o->jitter_ms, dec_desc, name);
    rx = gst_parse_launch(rx_desc, &err);
    if (!rx || err) {
        snprintf(r->error, sizeof(r->error), "receiver: %s", err ? err->message : "?");
        goto out;
    }
    src = gst_bin_get_by_name(GST_BIN(rx), "rx_src");
    dec = gst_bin_get_by_name(GST_BIN(rx), "dec");
    gchar *sink_name = g_strdup_printf("rx_sink_%s", name);
    sink = gst_bin_get_by_name(GST_BIN(rx), sink_name);
    g_free(sink_name);
    GstElement *jb = gst_bin_get_by_name(GST_BIN(rx), "rx_jb");
    add_probe(src, "src", probe_udp, &lp);
    add_probe(jb, "src", probe_jb, &lp);
    add_probe(sink, "sink", probe_sink, &lp);
    gst_object_unref(jb);
    if (gst_element_set_state(rx, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
        wait_for(rx, GST_MESSAGE_EOS, 0, r->error, sizeof(r->error));
        goto out;
    }
    int port = 0;
    g_object_get(src, "port", &port, NULL);

    r->frames_sent = o->duration * o->fps;
    gchar *tx_desc = g_strdup_printf(
        "videotestsrc is-live=true pattern=ball num-buffers=%d "
        "! video/x-raw,format=I420,width=%d,height=%d,framerate=%d/1 "
        "! x264enc tune=zerolatency speed-preset=ultrafast bframes=0 key-int-max=%d bitrate=%d "
        "option-string=slices=%d ! rtph264pay config-interval=-1 pt=96 mtu=1400 "
        "! udpsink host=127.0.0.1 port=%d sync=true",
        r->frames_sent, w, h, o->fps, o->fps, o->bitrate, o->slices, port);
    tx = gst_parse_launch(tx_desc, &err);
    g_free(tx_desc);
    if (!tx || err) {
        snprintf(r->error, sizeof(r->error), "sender: %s", err ? err->message : "?");
        goto out;
    }
    gst_element_set_state(tx, GST_STATE_PLAYING);

    /* Half way, while pictures flow: the latency the decoder reports
     * (GstVideoDecoder's, which both are: its part of the query). */
    g_usleep((gulong)o->duration * G_USEC_PER_SEC / 2);
    GstClockTime dmin = GST_CLOCK_TIME_NONE;
    gst_video_decoder_get_latency(GST_VIDEO_DECODER(dec), &dmin, NULL);
    if (GST_CLOCK_TIME_IS_VALID(dmin))
        r->reported_ms = (double)dmin / 1e6;

    if (!wait_for(tx, GST_MESSAGE_EOS, (GstClockTime)(o->duration + 30) * GST_SECOND, r->error,
                  sizeof(r->error)))
        goto out;
    /* UDP carries no EOS: wait out the jitterbuffer, then end the receiver. */
    g_usleep((gulong)(o->jitter_ms + 400) * 1000);
    gst_element_send_event(rx, gst_event_new_eos());
    if (!wait_for(rx, GST_MESSAGE_EOS, 30 * GST_SECOND, r->error, sizeof(r->error)))
        goto out;
    GstStructure *stats = NULL;
    g_object_get(sink, "stats", &stats, NULL);
    if (stats) {
        gst_structure_get_uint64(stats, "rendered", &r->rendered);
        gst_structure_get_uint64(stats, "dropped", &r->dropped);
        gst_structure_free(stats);
    }
out:
    if (tx)
        gst_element_set_state(tx, GST_STATE_NULL);
    if (rx)
        gst_element_set_state(rx, GST_STATE_NULL);
    /* The pipelines are stopped: no probe runs any more. */
    qsort(lp.ns->data, lp.ns->len, sizeof(guint64), cmp_u64);
    const guint64 *v = (const guint64 *)(void *)lp.ns->data;
    r->lat_samples = (int)lp.ns->len;
    r->lat_p50_ms = quantile_ms(v, lp.ns->len, 0.50);
    r->lat_p99_ms = quantile_ms(v, lp.ns->len, 0.99);
    r->lat_max_ms = quantile_ms(v, lp.ns->len, 1.0);
    g_clear_error(&err);
    if (src)
        gst_object_unref(src);
    if (dec)
        gst_object_unref(dec);
    if (sink)
        gst_object_unref(sink);
    if (tx)
        gst_object_unref(tx);
    if (rx)
        gst_object_unref(rx);
    g_free(rx_desc);
    g_free(dec_desc);
    g_hash_table_destroy(lp.arrival);
    g_hash_table_destroy(lp.rtp_ts);
    g_array_free(lp.ns, TRUE);
    g_mutex_clear(&lp.lock);
}

static void print_results(const LiveResult *res, int n, const LiveOpts *o, int w, int h)
{
    printf("live H.264 %dx%d@%d over RTP/UDP loopback, %d s, %d slices, %d kbit/s, "
           "jitterbuffer %d ms, fakevideosink sync=true qos=true\n",
           w, h, o->fps, o->duration, o->slices, o->bitrate, o->jitter_ms);
    static const char *const hdr[] = {"decoder",    "sent",       "rendered",   "late",
                                      "lat p50 ms", "lat p99 ms", "lat max ms", "reported ms"};
    DfTable *t = df_table_new(8, hdr, "lrrrrrrr");
    for (int i = 0; i < n; i++) {
        char c[8][32];
        snprintf(c[0], sizeof(c[0]), "%s", res[i].decoder);
        snprintf(c[1], sizeof(c[1]), "%d", res[i].frames_sent);
        snprintf(c[2], sizeof(c[2]), "%" G_GUINT64_FORMAT, res[i].rendered);
        snprintf(c[3], sizeof(c[3]), "%" G_GINT64_FORMAT,
                 (gint64)res[i].frames_sent - (gint64)res[i].rendered);
        df_fmt_num(c[4], sizeof(c[4]), res[i].lat_p50_ms, 1);
        df_fmt_num(c[5], sizeof(c[5]), res[i].lat_p99_ms, 1);
        df_fmt_num(c[6], sizeof(c[6]), res[i].lat_max_ms, 1);
        df_fmt_num(c[7], sizeof(c[7]), res[i].reported_ms, 1);
        const char *cells[8];
        for (int k = 0; k < 8; k++)
            cells[k] = c[k];
        df_table_row(t, cells);
    }
    df_table_print(t, stdout);
    df_table_free(t);
    for (int i = 0; i < n; i++)
        if (res[i].error[0])
            fprintf(stderr, "%s: %s: %s\n", PROG, res[i].decoder, res[i].error);
}

static int write_json(const char *path, const LiveResult *res, int n, const LiveOpts *o, int w,
                      int h)
{
    JsonBuilder *jb = json_builder_new();
    json_builder_begin_object(jb);
    json_builder_set_member_name(jb, "bench");
    json_builder_add_string_value(jb, "live");
    json_builder_set_member_name(jb, "machine");
    df_report_machine_json(jb);
    json_builder_set_member_name(jb, "stream");
    json_builder_begin_object(jb);
    json_builder_set_member_name(jb, "width");
    json_builder_add_int_value(jb, w);
    json_builder_set_member_name(jb, "height");
    json_builder_add_int_value(jb, h);
    json_builder_set_member_name(jb, "fps");
    json_builder_add_int_value(jb, o->fps);
    json_builder_set_member_name(jb, "slices");
    json_builder_add_int_value(jb, o->slices);
    json_builder_set_member_name(jb, "bitrate_kbit");
    json_builder_add_int_value(jb, o->bitrate);
    json_builder_set_member_name(jb, "duration_s");
    json_builder_add_int_value(jb, o->duration);
    json_builder_set_member_name(jb, "jitterbuffer_ms");
    json_builder_add_int_value(jb, o->jitter_ms);
    json_builder_set_member_name(jb, "sink");
    json_builder_add_string_value(jb, "fakevideosink");
    json_builder_end_object(jb);
    json_builder_set_member_name(jb, "results");
    json_builder_begin_array(jb);
    for (int i = 0; i < n; i++) {
        const LiveResult *r = &res[i];
        json_builder_begin_object(jb);
        json_builder_set_member_name(jb, "decoder");
        json_builder_add_string_value(jb, r->decoder);
        json_builder_set_member_name(jb, "workers");
        json_builder_add_int_value(jb, o->workers);
        json_builder_set_member_name(jb, "frames_sent");
        json_builder_add_int_value(jb, r->frames_sent);
        json_builder_set_member_name(jb, "rendered");
        json_builder_add_int_value(jb, (gint64)r->rendered);
        json_builder_set_member_name(jb, "late");
        json_builder_add_int_value(jb, (gint64)r->frames_sent - (gint64)r->rendered);
        json_builder_set_member_name(jb, "dropped_by_sink");
        json_builder_add_int_value(jb, (gint64)r->dropped);
        json_builder_set_member_name(jb, "latency_samples");
        json_builder_add_int_value(jb, r->lat_samples);
        df_json_double(jb, "latency_p50_ms", r->lat_p50_ms);
        df_json_double(jb, "latency_p99_ms", r->lat_p99_ms);
        df_json_double(jb, "latency_max_ms", r->lat_max_ms);
        df_json_double(jb, "reported_latency_ms", r->reported_ms);
        if (r->error[0]) {
            json_builder_set_member_name(jb, "error");
            json_builder_add_string_value(jb, r->error);
        }
        json_builder_end_object(jb);
    }
    json_builder_end_array(jb);
    json_builder_end_object(jb);
    GError *err = NULL;
    const gboolean ok = df_json_write(jb, path, &err);
    g_object_unref(jb);
    if (!ok) {
        const int st = df_cli_fail(PROG, "cannot write %s: %s", path, err ? err->message : "?");
        g_clear_error(&err);
        return st;
    }
    return DF_BENCH_OK;
}

int df_bench_live_main(int argc, char **argv)
{
    LiveOpts o = {
        .fps = 30, .duration = 10, .workers = 0, .slices = 8, .bitrate = 8000, .jitter_ms = 50};
    GOptionEntry entries[] = {
        {"decoders", 'd', 0, G_OPTION_ARG_STRING, &o.decoders,
         "Decoders to run in turn: dfdec, avdec (default dfdec,avdec)", "LIST"},
        {"size", 's', 0, G_OPTION_ARG_STRING, &o.size, "Picture size (default 1920x1080)", "WxH"},
        {"fps", 0, 0, G_OPTION_ARG_INT, &o.fps, "Frame rate (default 30)", "N"},
        {"duration", 't', 0, G_OPTION_ARG_INT, &o.duration, "Seconds per decoder (default 10)",
         "S"},
        {"workers", 'w', 0, G_OPTION_ARG_INT, &o.workers,
         "dfdec n-workers and avdec max-threads (default 0: every core)", "N"},
        {"slices", 0, 0, G_OPTION_ARG_INT, &o.slices, "x264 slices per picture (default 8)", "N"},
        {"bitrate", 0, 0, G_OPTION_ARG_INT, &o.bitrate, "x264 bitrate in kbit/s (default 8000)",
         "KBIT"},
        {"jitter-ms", 0, 0, G_OPTION_ARG_INT, &o.jitter_ms,
         "rtpjitterbuffer latency in ms (default 50)", "MS"},
        {"json", 'j', 0, G_OPTION_ARG_FILENAME, &o.json, "Write the results as JSON to FILE",
         "FILE"},
        {NULL, 0, 0, 0, NULL, NULL, NULL}};
    const DfCliSpec spec = {
        .param = "- latency of a live RTP stream per decoder",
        .description =
            "Streams a live x264 encode as RTP over loopback UDP into each decoder in turn\n"
            "and reports pictures rendered, late (dropped by the sink), the latency\n"
            "p50/p99/max from udpsrc to the sink, and the latency the decoder\n"
            "reports.  Example: dfbench live --size 1280x720 --duration 20 --json live.json",
        .entries = entries,
        .no_args = true,
    };
    LiveResult res[2];
    int n = 0, w = 1920, h = 1080;
    int status = df_cli_parse_options(PROG, &spec, &argc, &argv);
    if (status != DF_BENCH_OK)
        goto out;
    char end = 0;
    if (o.size && (sscanf(o.size, "%dx%d%c", &w, &h, &end) != 2 || w < 16 || h < 16 || w > 8192 ||
                   h > 8192 || (w | h) & 1)) {
        status = df_cli_usage(PROG, "bad --size \"%s\" (even WxH, 16 to 8192)", o.size);
        goto out;
    }
    const struct {
        const char *flag;
        int value, min, max;
    } ranges[] = {{"--fps", o.fps, 1, 240},
                  {"--duration", o.duration, 1, 3600},
                  {"--workers", o.workers, 0, 1024},
                  {"--slices", o.slices, 1, 64},
                  {"--bitrate", o.bitrate, 100, 1000000},
                  {"--jitter-ms", o.jitter_ms, 0, 10000}};
    for (size_t i = 0; i < G_N_ELEMENTS(ranges); i++)
        if (ranges[i].value < ranges[i].min || ranges[i].value > ranges[i].max) {
            status = df_cli_usage(PROG, "%s %d: expected %d to %d", ranges[i].flag, ranges[i].value,
                                  ranges[i].min, ranges[i].max);
            goto out;
        }
    const DfCliOutput outs[] = {{"--json", o.json}};
    if ((status = df_cli_check_outputs(PROG, outs, 1)) != DF_CLI_OK)
        goto out;
    gchar **names = g_strsplit(o.decoders ? o.decoders : "dfdec,avdec", ",", -1);
    for (int i = 0; names[i]; i++) {
        if (strcmp(names[i], "dfdec") != 0 && strcmp(names[i], "avdec") != 0) {
            status = df_cli_usage(PROG, "unknown decoder \"%s\" (dfdec, avdec)", names[i]);
            break;
        }
    }
    if (status != DF_BENCH_OK || !names[0]) {
        if (status == DF_BENCH_OK)
            status = df_cli_usage(PROG, "no decoder in --decoders");
        g_strfreev(names);
        goto out;
    }
    if (!df_gst_init()) {
        status = df_cli_fail(PROG, "GStreamer does not start");
        g_strfreev(names);
        goto out;
    }
    static const char *const needed[] = {"x264enc",   "rtph264pay",      "udpsink",
                                         "udpsrc",    "rtpjitterbuffer", "rtph264depay",
                                         "h264parse", "fakevideosink"};
    for (size_t i = 0; i < G_N_ELEMENTS(needed); i++)
        if (!df_gst_have(needed[i])) {
            status = df_cli_fail(PROG, "no GStreamer element %s", needed[i]);
            g_strfreev(names);
            goto out;
        }
    for (int i = 0; names[i] && n < 2; i++) {
        const char *factory = strcmp(names[i], "dfdec") == 0 ? "dfdec" : "avdec_h264";
        if (!df_gst_have(factory)) {
            fprintf(stderr, "%s: no %s, skipped\n", PROG, factory);
            continue;
        }
        run_one(&o, w, h, strcmp(names[i], "dfdec") == 0 ? "dfdec" : "avdec", &res[n]);
        if (res[n].error[0])
            status = DF_BENCH_FAILED;
        n++;
    }
    g_strfreev(names);
    print_results(res, n, &o, w, h);
    if (o.json && n > 0) {
        const int st = write_json(o.json, res, n, &o, w, h);
        if (st != DF_BENCH_OK)
            status = st;
    }
out:
    g_free(o.decoders);
    g_free(o.size);
    g_free(o.json);
    return status;
}

#endif
