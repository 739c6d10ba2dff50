/* dfdec in a live pipeline: a live x264 stream sent as RTP over loopback
 * UDP, received through udpsrc ! rtpjitterbuffer ! rtph264depay !
 * h264parse and decoded by dfdec and, in the same pipeline, by a
 * single-threaded avdec_h264.  Every picture must come out of both, equal
 * per frame, and dfdec's latency in the live pipeline must be what it
 * reports (docs/dfdec.md, "Latency"). */
#include "dftest.h"
#include "element_util.h"

#include <gst/app/gstappsink.h>
#include <string.h>

#define LIVE_FRAMES 60
#define LIVE_FPS    30

static const char *const needed[] = {"x264enc",         "rtph264pay",   "udpsink",   "udpsrc",
                                     "rtpjitterbuffer", "rtph264depay", "h264parse", "avdec_h264"};

typedef struct LiveSide {
    GstElement *sink;
    TSums sums;
    int bad;
} LiveSide;

/* Take every sample the appsink holds now (timeout 0 after the first). */
static void drain(LiveSide *side, GstClockTime first_timeout)
{
    GstClockTime timeout = first_timeout;
    GstSample *s;
    while ((s = gst_app_sink_try_pull_sample(GST_APP_SINK(side->sink), timeout))) {
        TSum sum;
        if (e_buffer_sum(gst_sample_get_buffer(s), gst_sample_get_caps(s), &sum) == 0)
            t_sums_push(&side->sums, &sum);
        else
            side->bad++;
        gst_sample_unref(s);
        timeout = 0;
    }
}

/* The latency `pad` answers for upstream of it (min), or -1. */
static gint64 upstream_latency(GstPad *pad)
{
    GstQuery *q = gst_query_new_latency();
    gint64 out = -1;
    gboolean live = FALSE;
    GstClockTime min = 0, max = 0;
    if (gst_pad_peer_query(pad, q)) {
        gst_query_parse_latency(q, &live, &min, &max);
        if (live)
            out = (gint64)min;
    }
    gst_query_unref(q);
    return out;
}

static bool wait_message(GstElement *pipeline, GstMessageType type, GstClockTime timeout, char *err,
                         size_t len)
{
    GstBus *bus = gst_element_get_bus(pipeline);
    GstMessage *m =
        gst_bus_timed_pop_filtered(bus, timeout, (GstMessageType)(type | GST_MESSAGE_ERROR));
    bool ok = m && GST_MESSAGE_TYPE(m) == type;
    if (m && GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR) {
        GError *e = NULL;
        gst_message_parse_error(m, &e, NULL);
        snprintf(err, len, "%s: %s", GST_OBJECT_NAME(GST_MESSAGE_SRC(m)), e ? e->message : "?");
        g_clear_error(&e);
    } else if (!m) {
        snprintf(err, len, "timed out");
    }
    if (m)
        gst_message_unref(m);
    gst_object_unref(bus);
    return ok;
}

/* One run of the live pipeline with dfdec's `props`; dfdec must add
 * `want_frames` frames of latency (the stream has no B-frames). */
static void live_case(const char *props, int want_frames)
{
    DF_ASSERT(e_init());
    for (size_t i = 0; i < G_N_ELEMENTS(needed); i++) {
        GstElementFactory *f = gst_element_factory_find(needed[i]);
        if (!f)
            DF_SKIP("an element of the live pipeline is missing (gstreamer1.0-plugins-ugly, -good, "
                    "-libav)");
        gst_object_unref(f);
    }
    char err[256] = "";
    GError *perr = NULL;
    /* udpsrc port=0 binds an ephemeral port and reports it as "port". */
    gchar *rx_desc = g_strdup_printf(
        "udpsrc name=src port=0 buffer-size=4194304 address=127.0.0.1 "
        "caps=\"application/x-rtp,media=video,encoding-name=H264,payload=96,clock-rate=90000\" "
        "! rtpjitterbuffer latency=100 ! rtph264depay ! h264parse ! tee name=t "
        "t. ! queue max-size-time=0 max-size-bytes=0 max-size-buffers=0 ! dfdec name=dec %s "
        "! appsink name=a sync=true max-buffers=0 wait-on-eos=false "
        "t. ! queue max-size-time=0 max-size-bytes=0 max-size-buffers=0 "
        "! avdec_h264 max-threads=1 ! appsink name=b sync=true max-buffers=0 wait-on-eos=false",
        props);
    GstElement *rx = gst_parse_launch(rx_desc, &perr);
    g_free(rx_desc);
    DF_ASSERT_MSG(rx && !perr, "receiver: %s", perr ? perr->message : "?");
    LiveSide df = {gst_bin_get_by_name(GST_BIN(rx), "a"), {0}, 0};
    LiveSide av = {gst_bin_get_by_name(GST_BIN(rx), "b"), {0}, 0};
    GstElement *dec = gst_bin_get_by_name(GST_BIN(rx), "dec");
    GstElement *src = gst_bin_get_by_name(GST_BIN(rx), "src");
    DF_ASSERT(df.sink && av.sink && dec && src);

    /* udpsrc has bound its port once the change has not failed. */
    const GstStateChangeReturn sr = gst_element_set_state(rx, GST_STATE_PLAYING);
    if (sr == GST_STATE_CHANGE_FAILURE)
        wait_message(rx, GST_MESSAGE_EOS, 0, err, sizeof(err));
    DF_ASSERT_MSG(sr != GST_STATE_CHANGE_FAILURE, "receiver to PLAYING: %s (%s)",
                  gst_element_state_change_return_get_name(sr), err);
    int port = 0;
    g_object_get(src, "port", &port, NULL);
    DF_ASSERT_MSG(port > 0, "udpsrc bound no port");

    gchar *tx_desc = g_strdup_printf(
        "videotestsrc is-live=true pattern=ball num-buffers=%d "
        "! video/x-raw,format=I420,width=320,height=240,framerate=%d/1 "
        "! x264enc tune=zerolatency speed-preset=ultrafast key-int-max=15 bframes=0 "
        "! rtph264pay config-interval=-1 pt=96 ! udpsink host=127.0.0.1 port=%d",
        LIVE_FRAMES, LIVE_FPS, port);
    GstElement *tx = gst_parse_launch(tx_desc, &perr);
    g_free(tx_desc);
    DF_ASSERT_MSG(tx && !perr, "sender: %s", perr ? perr->message : "?");
    gst_element_set_state(tx, GST_STATE_PLAYING);

    /* While pictures flow, dfdec's own part of the live latency: what its
     * src pad's peer (the appsink) is told, less what its sink pad's peer
     * (upstream) answers.  The stream has no B-frames: what dfdec holds is
     * its frames in flight (k is output once k+1 has been decoded, when
     * max-frame-delay allows it). */
    drain(&df, 5 * GST_SECOND);
    DF_EXPECT_MSG(df.sums.n > 0, "no picture from dfdec within 5 s");
    GstPad *sinkpad = gst_element_get_static_pad(dec, "sink");
    GstPad *apad = gst_element_get_static_pad(df.sink, "sink");
    const gint64 up = upstream_latency(sinkpad);
    const gint64 total = upstream_latency(apad);
    DF_EXPECT_MSG(up >= 100 * GST_MSECOND,
                  "upstream latency %" G_GINT64_FORMAT " ns in a live "
                  "pipeline with a 100 ms jitterbuffer",
                  up);
    const gint64 own = total - up;
    const gint64 want = want_frames * (gint64)GST_SECOND / LIVE_FPS;
    DF_EXPECT_MSG(own >= want - GST_MSECOND && own <= want + GST_MSECOND,
                  "dfdec %s adds %" G_GINT64_FORMAT " ns of latency, want %d frame(s)", props, own,
                  want_frames);
    gst_object_unref(sinkpad);
    gst_object_unref(apad);

    DF_EXPECT_MSG(wait_message(tx, GST_MESSAGE_EOS, 30 * GST_SECOND, err, sizeof(err)),
                  "sender: %s", err);
    gst_element_set_state(tx, GST_STATE_NULL);
    gst_object_unref(tx);

    /* UDP carries no EOS: let the jitterbuffer's 100 ms pass, then end the
     * receiver, which drains both decoders. */
    g_usleep(500 * 1000);
    gst_element_send_event(rx, gst_event_new_eos());
    const bool eos = wait_message(rx, GST_MESSAGE_EOS, 30 * GST_SECOND, err, sizeof(err));
    drain(&df, 0);
    drain(&av, 0);
    DF_EXPECT_MSG(eos, "receiver: %s (%d and %d pictures)", err, df.sums.n, av.sums.n);
    gst_element_set_state(rx, GST_STATE_NULL);

    DF_EXPECT_MSG(df.bad == 0 && av.bad == 0, "unreadable pictures: dfdec %d, avdec %d", df.bad,
                  av.bad);
    /* Loopback loses nothing in practice; the reference is what avdec got. */
    DF_EXPECT_MSG(av.sums.n >= LIVE_FRAMES - 5, "avdec_h264 decoded %d of %d pictures", av.sums.n,
                  LIVE_FRAMES);
    char msg[512] = "";
    DF_EXPECT_MSG(t_sums_compare(&av.sums, &df.sums, msg, sizeof(msg)) == 0,
                  "dfdec differs from avdec_h264 max-threads=1: %s", msg);

    t_sums_free(&df.sums);
    t_sums_free(&av.sums);
    gst_object_unref(df.sink);
    gst_object_unref(av.sink);
    gst_object_unref(dec);
    gst_object_unref(src);
    gst_object_unref(rx);
}

/* Automatic max-frame-delay in a live pipeline: no frame beyond the one
 * being decoded, as avdec_h264 in the same pipeline. */
DF_TEST(ElementLive, RtpLoopbackMatchesAvdec)
{
    live_case("", 0);
}

/* An explicit budget of one frame: frame k+1 is decoded while frame k's
 * bands run, and the latency says so. */
DF_TEST(ElementLive, OneFrameDelayIsReported)
{
    live_case("max-frame-delay=1", 1);
}
