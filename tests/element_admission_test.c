/* dfdec's admission and its QoS under overload: a stream whose measured
 * load (with the admitted ones) exceeds max-load of the scheduler's
 * capacity gets a warning, or with admission=refuse an error and a flow
 * error that frees its decoder; an admitted stream is never refused later;
 * a late stream sheds non-reference pictures and reports them dropped,
 * and what it outputs stays exact.  The overload is forced by a max-load
 * far below (or above) anything measurable, so no bound depends on the
 * machine's speed. */
#include "dftest.h"
#include "element_util.h"

#include <string.h>

#define TINY "0.000001" /* max-load that every measured stream exceeds */

typedef struct Msgs {
    int warnings, errors, busy, qos;
    char text[512]; /* first warning's or error's message */
} Msgs;

static void drain_bus(GstBus *bus, Msgs *m)
{
    memset(m, 0, sizeof(*m));
    for (GstMessage *msg; (msg = gst_bus_pop(bus));) {
        GError *err = NULL;
        gchar *dbg = NULL;
        switch (GST_MESSAGE_TYPE(msg)) {
        case GST_MESSAGE_WARNING:
            gst_message_parse_warning(msg, &err, &dbg);
            m->warnings++;
            break;
        case GST_MESSAGE_ERROR:
            gst_message_parse_error(msg, &err, &dbg);
            m->errors++;
            break;
        case GST_MESSAGE_QOS:
            m->qos++;
            break;
        default:
            break;
        }
        if (err) {
            m->busy += g_error_matches(err, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_BUSY);
            if (!m->text[0])
                g_snprintf(m->text, sizeof(m->text), "%s | %s", err->message, dbg ? dbg : "");
            g_error_free(err);
        }
        g_free(dbg);
        gst_message_unref(msg);
    }
}

/* A harness with its own bus (messages are kept there). */
static GstHarness *harness(const TClip *clip, const char *const *props, GstBus **bus)
{
    GstHarness *h = e_harness(clip, props);
    if (!h)
        return NULL;
    *bus = gst_bus_new();
    gst_element_set_bus(h->element, *bus);
    return h;
}

static void teardown(GstHarness *h, GstBus *bus)
{
    gst_element_set_bus(h->element, NULL);
    gst_object_unref(bus);
    gst_harness_teardown(h);
}

/* A whole clip through an element with `props`; the frames out must be
 * the reference. */
static void decode_all(const char *const *props, Msgs *m)
{
    TClip clip;
    TSums ref = {0}, got = {0};
    DF_ASSERT(t_clip_load("h264_cabac_slices8.mkv", &clip) == 0);
    DF_ASSERT(e_ref(&clip, &ref) == 0);
    GstBus *bus = NULL;
    GstHarness *h = harness(&clip, props, &bus);
    DF_ASSERT(h);
    DF_EXPECT(e_push_range(h, &clip, 0, clip.n_pkts, &got, NULL) == GST_FLOW_OK);
    DF_EXPECT(gst_harness_push_event(h, gst_event_new_eos()));
    e_pull_all(h, &got, NULL);
    char msg[256];
    DF_EXPECT_MSG(t_sums_compare(&ref, &got, msg, sizeof(msg)) == 0, "%s", msg);
    drain_bus(bus, m);
    teardown(h, bus);
    t_sums_free(&got);
    t_sums_free(&ref);
    t_clip_free(&clip);
}

/* The clip one packet at a time until a flow error: that packet's index,
 * or -1. */
static int push_until_error(GstHarness *h, const TClip *clip, TSums *got)
{
    for (int i = 0; i < clip->n_pkts; i++)
        if (e_push_range(h, clip, i, i + 1, got, NULL) != GST_FLOW_OK)
            return i;
    return -1;
}

/* The clip through `h`: 4 frames, then a QoS event 10 s late (every later
 * frame is far behind), the rest and EOS; the frames out into `got`. */
static void push_far_behind(GstHarness *h, const TClip *clip, TSums *got)
{
    e_push_range(h, clip, 0, 4, got, NULL);
    DF_EXPECT(gst_harness_push_upstream_event(
        h, gst_event_new_qos(GST_QOS_TYPE_UNDERFLOW, 0.5, 10 * GST_SECOND, 0)));
    e_push_range(h, clip, 4, clip->n_pkts, got, NULL);
    DF_EXPECT(gst_harness_push_event(h, gst_event_new_eos()));
    e_pull_all(h, got, NULL);
}

/* GstVideoDecoder holds no frame after EOS: each was output or dropped. */
static void expect_no_pending_frame(GstHarness *h)
{
    GList *pending = gst_video_decoder_get_frames(GST_VIDEO_DECODER(h->element));
    DF_EXPECT_EQ_INT(g_list_length(pending), 0);
    g_list_free_full(pending, (GDestroyNotify)gst_video_codec_frame_unref);
}

DF_TEST(Admission, WarnsWhenOverloaded)
{
    DF_ASSERT(e_init());
    const char *props[] = {"n-workers", "2",  "shared-scheduler", "false", "threading", "slice",
                           "max-load",  TINY, "admission-frames", "8",     NULL};
    Msgs m;
    decode_all(props, &m);
    DF_EXPECT_EQ_INT(m.warnings, 1);
    DF_EXPECT_EQ_INT(m.errors, 0);
    DF_EXPECT_EQ_INT(m.busy, 1);
    DF_EXPECT_MSG(strstr(m.text, "Overload") && strstr(m.text, "cores") &&
                      strstr(m.text, "capacity 2 workers"),
                  "warning does not name the load and the capacity: %s", m.text);
}

DF_TEST(Admission, NothingUnderCapacity)
{
    DF_ASSERT(e_init());
    /* 16 x 2 cores: more than two workers can ever be measured to use. */
    const char *props[] = {"n-workers", "2",  "shared-scheduler", "false", "admission", "refuse",
                           "max-load",  "16", "admission-frames", "8",     NULL};
    Msgs m;
    decode_all(props, &m);
    DF_EXPECT_EQ_INT(m.warnings + m.errors, 0);
}

DF_TEST(Admission, NoneNeverWarns)
{
    DF_ASSERT(e_init());
    const char *props[] = {"n-workers", "2",  "shared-scheduler", "false", "admission", "none",
                           "max-load",  TINY, "admission-frames", "8",     NULL};
    Msgs m;
    decode_all(props, &m);
    DF_EXPECT_EQ_INT(m.warnings + m.errors, 0);
}

DF_TEST(Admission, RefuseFailsAndReleases)
{
    DF_ASSERT(e_init());
    TClip clip;
    DF_ASSERT(t_clip_load("h264_cabac_slices8.mkv", &clip) == 0);
    const int threads0 = df_test_thread_count();
    const char *props[] = {"n-workers", "2",  "shared-scheduler", "false", "admission", "refuse",
                           "max-load",  TINY, "admission-frames", "8",     NULL};
    GstBus *bus = NULL;
    GstHarness *h = harness(&clip, props, &bus);
    DF_ASSERT(h);
    TSums got = {0};
    const int failed_at = push_until_error(h, &clip, &got);
    /* Packet 7 completes the 8-frame window at the earliest. */
    DF_EXPECT_MSG(failed_at >= 7, "flow error at packet %d (8 frames are measured first)",
                  failed_at);
    /* And every frame after it, without a hang. */
    if (failed_at >= 0 && failed_at + 1 < clip.n_pkts)
        DF_EXPECT(e_push_range(h, &clip, failed_at + 1, failed_at + 2, &got, NULL) ==
                  GST_FLOW_ERROR);
    Msgs m;
    drain_bus(bus, &m);
    DF_EXPECT_EQ_INT(m.errors, 1);
    DF_EXPECT_EQ_INT(m.busy, 1);
    DF_EXPECT_MSG(strstr(m.text, "refused") && strstr(m.text, "capacity 2 workers"),
                  "error does not say why: %s", m.text);
    teardown(h, bus);
    /* The element's scheduler and decoder are gone with it. */
    DF_EXPECT_EQ_INT(df_test_thread_count(), threads0);
    t_sums_free(&got);
    t_clip_free(&clip);
}

/* On one scheduler, a stream like one already measured (same codec, size,
 * format) is judged by it from its first packet: one that cannot fit is
 * refused before it has decoded a frame, so it never takes the cores from
 * the admitted streams.  A stream of another class is not judged so. */
DF_TEST(Admission, StreamLikeAMeasuredOneIsJudgedAtOnce)
{
    DF_ASSERT(e_init());
    TClip clip, other;
    DF_ASSERT(t_clip_load("h264_cabac_slices8.mkv", &clip) == 0);
    DF_ASSERT(t_clip_load("hevc_wpp8.mkv", &other) == 0);
    const char *first_props[] = {
        "n-workers", "2",  "shared-scheduler", "true", "admission", "refuse",
        "max-load",  "16", "admission-frames", "20",   NULL};
    GstBus *bus1 = NULL, *bus2 = NULL, *bus3 = NULL;
    GstHarness *h1 = harness(&clip, first_props, &bus1);
    DF_ASSERT(h1);
    TSums got1 = {0}, got2 = {0}, got3 = {0};
    /* Measured over more than a whole window (16 frames) and admitted. */
    DF_EXPECT(e_push_range(h1, &clip, 0, clip.n_pkts, &got1, NULL) == GST_FLOW_OK);

    const char *props[] = {"n-workers", "2",  "shared-scheduler", "true", "admission", "refuse",
                           "max-load",  TINY, "admission-frames", "1000", NULL};
    GstHarness *h2 = harness(&clip, props, &bus2);
    DF_ASSERT(h2);
    const int failed_at = push_until_error(h2, &clip, &got2);
    DF_EXPECT_MSG(failed_at == 0, "the stream like a measured one failed at packet %d, not 0",
                  failed_at);
    Msgs m;
    drain_bus(bus2, &m);
    DF_EXPECT_EQ_INT(m.errors, 1);
    DF_EXPECT_MSG(strstr(m.text, "refused") && strstr(m.text, "streams like it"),
                  "error does not say it judged by streams like it: %s", m.text);

    /* HEVC: not of the H.264 stream's class; measured first (5 frames
     * pass, fewer than the early 8). */
    GstHarness *h3 = harness(&other, props, &bus3);
    DF_ASSERT(h3);
    DF_EXPECT(e_push_range(h3, &other, 0, 5, &got3, NULL) == GST_FLOW_OK);
    drain_bus(bus3, &m);
    DF_EXPECT_EQ_INT(m.errors, 0);

    teardown(h3, bus3);
    teardown(h2, bus2);
    teardown(h1, bus1);
    t_sums_free(&got3);
    t_sums_free(&got2);
    t_sums_free(&got1);
    t_clip_free(&other);
    t_clip_free(&clip);
}

DF_TEST(Admission, AdmittedNeverRefusedLater)
{
    DF_ASSERT(e_init());
    TClip clip;
    TSums ref = {0}, got = {0};
    DF_ASSERT(t_clip_load("h264_cabac_slices8.mkv", &clip) == 0);
    DF_ASSERT(e_ref(&clip, &ref) == 0);
    const char *props[] = {"n-workers", "2",  "shared-scheduler", "false", "admission", "refuse",
                           "max-load",  "16", "admission-frames", "8",     NULL};
    GstBus *bus = NULL;
    GstHarness *h = harness(&clip, props, &bus);
    DF_ASSERT(h);
    DF_EXPECT(e_push_range(h, &clip, 0, 14, &got, NULL) == GST_FLOW_OK);
    /* Admitted by now; what would refuse it does not apply any more. */
    g_object_set(h->element, "max-load", 0.000001, NULL);
    DF_EXPECT(e_push_range(h, &clip, 14, clip.n_pkts, &got, NULL) == GST_FLOW_OK);
    DF_EXPECT(gst_harness_push_event(h, gst_event_new_eos()));
    e_pull_all(h, &got, NULL);
    char msg[256];
    DF_EXPECT_MSG(t_sums_compare(&ref, &got, msg, sizeof(msg)) == 0, "%s", msg);
    Msgs m;
    drain_bus(bus, &m);
    DF_EXPECT_EQ_INT(m.errors, 0);
    teardown(h, bus);
    t_sums_free(&got);
    t_sums_free(&ref);
    t_clip_free(&clip);
}

/* Late from the 4th frame on: the stream skips its non-reference pictures
 * and cancels queued output; every frame not output is reported dropped
 * (a QoS message each), and every frame output is exact. */
DF_TEST(Admission, LateStreamShedsNonReferenceExact)
{
    DF_ASSERT(e_init());
    const char *clips[] = {"h264_cabac_slices8.mkv", "mpeg2_prog.mkv"};
    for (size_t c = 0; c < sizeof(clips) / sizeof(clips[0]); c++) {
        TClip clip;
        TSums ref = {0}, got = {0};
        DF_ASSERT(t_clip_load(clips[c], &clip) == 0);
        DF_ASSERT(e_ref(&clip, &ref) == 0);
        const char *props[] = {"threading", "slice", "admission", "none", NULL};
        GstBus *bus = NULL;
        GstHarness *h = harness(&clip, props, &bus);
        DF_ASSERT(h);
        push_far_behind(h, &clip, &got);
        DF_EXPECT_MSG(got.n < ref.n && got.n > 0, "%s: %d of %d frames out", clips[c], got.n,
                      ref.n);
        DF_EXPECT_EQ_INT(e_count_inexact_by_pts(&ref, &got), 0);
        Msgs m;
        drain_bus(bus, &m);
        DF_EXPECT_MSG(m.qos == ref.n - got.n, "%s: %d frames dropped, %d QoS messages", clips[c],
                      ref.n - got.n, m.qos);
        expect_no_pending_frame(h);
        teardown(h, bus);
        t_sums_free(&got);
        t_sums_free(&ref);
        t_clip_free(&clip);
    }
}

/* Far behind, skipping non-reference pictures cannot catch up (reference
 * pictures still decode): the stream gives up the rest of each group of
 * pictures.  Frames up to the next sync point are dropped without being
 * decoded (`stats`: packets sent + qos-skipped = the clip's packets, and
 * some were skipped), each with a QoS message, and what is output is
 * still exact: decoding restarts cleanly at the sync point. */
DF_TEST(Admission, FarBehindStreamSkipsToTheNextSyncPoint)
{
    DF_ASSERT(e_init());
    const char *clips[] = {"h264_cabac_slices8.mkv", "hevc_wpp8.mkv", "mpeg2_prog.mkv"};
    for (size_t c = 0; c < sizeof(clips) / sizeof(clips[0]); c++) {
        TClip clip;
        TSums ref = {0}, got = {0};
        DF_ASSERT(t_clip_load(clips[c], &clip) == 0);
        DF_ASSERT(e_ref(&clip, &ref) == 0);
        const char *props[] = {"admission", "none", NULL};
        GstBus *bus = NULL;
        GstHarness *h = harness(&clip, props, &bus);
        DF_ASSERT(h);
        push_far_behind(h, &clip, &got);
        GstStructure *st = NULL;
        g_object_get(h->element, "stats", &st, NULL);
        DF_ASSERT_MSG(st, "%s: no stats", clips[c]);
        guint64 packets = 0, skipped = 0;
        DF_EXPECT(gst_structure_get_uint64(st, "packets", &packets));
        DF_EXPECT(gst_structure_get_uint64(st, "qos-skipped", &skipped));
        gst_structure_free(st);
        DF_EXPECT_MSG(skipped > 0 && packets + skipped == (guint64)clip.n_pkts,
                      "%s: %" G_GUINT64_FORMAT " packets decoded, %" G_GUINT64_FORMAT
                      " skipped, of %d",
                      clips[c], packets, skipped, clip.n_pkts);
        DF_EXPECT_MSG(got.n > 0, "%s: nothing out", clips[c]);
        DF_EXPECT_EQ_INT(e_count_inexact_by_pts(&ref, &got), 0);
        Msgs m;
        drain_bus(bus, &m);
        DF_EXPECT_MSG(m.qos == ref.n - got.n, "%s: %d frames dropped, %d QoS messages", clips[c],
                      ref.n - got.n, m.qos);
        expect_no_pending_frame(h);
        teardown(h, bus);
        t_sums_free(&got);
        t_sums_free(&ref);
        t_clip_free(&clip);
    }
}

/* On probation a stream runs on the capacity the admitted streams leave;
 * one that falls behind there is decided at once, whatever its measure
 * says (here it fits 16 times over): refused with admission=refuse, a
 * warning with admission=warn.  The window (1000 frames) is far from
 * over: only the lateness decides.  Falling behind is the stream's own
 * pictures taking longer than the latency it reports (here a filter far
 * slower than the frame rate on one worker); a stream that keeps up but
 * whose frames come late (a jitter buffer waiting out lost packets) is
 * measured as usual: it was refused on a network's lateness. */
static void fall_behind(const char *mode, bool slow, Msgs *m, int *failed_at)
{
    TClip clip;
    TSums got = {0};
    DF_ASSERT(t_clip_load("h264_cabac_slices8.mkv", &clip) == 0);
    const char *props[] = {"admission",
                           mode,
                           "max-load",
                           "16",
                           "admission-frames",
                           "1000",
                           slow ? "filter" : NULL,
                           "nlmeans",
                           "n-workers",
                           "1",
                           NULL};
    GstBus *bus = NULL;
    GstHarness *h = harness(&clip, props, &bus);
    DF_ASSERT(h);
    DF_EXPECT(e_push_range(h, &clip, 0, 4, &got, NULL) == GST_FLOW_OK);
    DF_EXPECT(gst_harness_push_upstream_event(
        h, gst_event_new_qos(GST_QOS_TYPE_UNDERFLOW, 0.5, 10 * GST_SECOND, 0)));
    *failed_at = -1;
    for (int i = 4; i < clip.n_pkts && *failed_at < 0; i++) {
        if (e_push_range(h, &clip, i, i + 1, &got, NULL) != GST_FLOW_OK)
            *failed_at = i;
        /* Enough to see a slow stream decided (each picture costs
         * hundreds of ms). */
        if (slow && i >= 12)
            break;
    }
    drain_bus(bus, m);
    teardown(h, bus);
    t_sums_free(&got);
    t_clip_free(&clip);
}

DF_TEST(Admission, StreamThatFallsBehindOnProbationIsDecidedAtOnce)
{
    DF_ASSERT(e_init());
    Msgs m;
    int failed_at = -1;
    fall_behind("refuse", true, &m, &failed_at);
    DF_EXPECT_MSG(failed_at >= 4, "never refused");
    DF_EXPECT_EQ_INT(m.errors, 1);
    DF_EXPECT_EQ_INT(m.busy, 1);
    DF_EXPECT_MSG(strstr(m.text, "refused") && strstr(m.text, "fell behind"),
                  "error does not say why: %s", m.text);

    fall_behind("warn", true, &m, &failed_at);
    DF_EXPECT_EQ_INT(failed_at, -1);
    DF_EXPECT_EQ_INT(m.warnings, 1);
    DF_EXPECT_EQ_INT(m.errors, 0);
    DF_EXPECT_MSG(strstr(m.text, "Overload") && strstr(m.text, "fell behind"),
                  "warning does not say why: %s", m.text);

    /* Late on arrival, kept up with: not decided, no message. */
    fall_behind("refuse", false, &m, &failed_at);
    DF_EXPECT_MSG(failed_at == -1, "refused at packet %d on lateness it did not cause", failed_at);
    DF_EXPECT_EQ_INT(m.errors, 0);
    DF_EXPECT_EQ_INT(m.warnings, 0);
}
