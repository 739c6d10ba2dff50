/* dfdec through GstHarness: every frame's md5 against single-threaded
 * libavcodec, caps and timestamps, live and non-live, flush and new
 * segment, EOS drain, QoS, state cycles without leaks, several instances
 * on one shared scheduler, corrupt input, bad properties; and seeks in a
 * real pipeline. */
#include "dftest.h"
#include "element_util.h"

#include <limits.h>

#include "dfsched_trace.h"

#include <dirent.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define INIT_OR_SKIP()                                                                             \
    do {                                                                                           \
        DF_ASSERT_MSG(e_init(), "the dfdec plugin did not load");                                  \
    } while (0)

/* What downstream takes: copy when it takes no GstVideoMeta. */
enum { META_NONE, META_VIDEO, META_CROP };

/* Decode a whole clip through a harness; returns frames, fills `got`. */
static int decode_clip(const TClip *clip, const char *const *props, int meta, bool live, TSums *got,
                       int *bad_ts)
{
    GstHarness *h = e_harness(clip, props);
    DF_EXPECT(h != NULL);
    if (!h)
        return -1;
    if (meta >= META_VIDEO)
        gst_harness_add_propose_allocation_meta(h, GST_VIDEO_META_API_TYPE, NULL);
    if (meta == META_CROP)
        gst_harness_add_propose_allocation_meta(h, GST_VIDEO_CROP_META_API_TYPE, NULL);
    if (live)
        gst_harness_set_live(h, TRUE);
    GstFlowReturn flow = e_push_range(h, clip, 0, clip->n_pkts, got, bad_ts);
    DF_EXPECT_MSG(flow == GST_FLOW_OK, "%s: flow %s", clip->name, gst_flow_get_name(flow));
    DF_EXPECT(gst_harness_push_event(h, gst_event_new_eos()));
    e_pull_all(h, got, bad_ts);
    GList *pending = gst_video_decoder_get_frames(GST_VIDEO_DECODER(h->element));
    DF_EXPECT_MSG(pending == NULL, "%s: %u frames still pending after EOS", clip->name,
                  g_list_length(pending));
    g_list_free_full(pending, (GDestroyNotify)gst_video_codec_frame_unref);
    gst_harness_teardown(h);
    return got->n;
}

static bool has_timestamps(const TClip *clip)
{
    return strstr(clip->name, ".mkv") != NULL;
}

static void check_exact(const TClip *clip, const TSums *ref, const char *const *props, int meta,
                        bool live, const char *what)
{
    TSums got = {0};
    int bad_ts = 0;
    char msg[256];
    decode_clip(clip, props, meta, live, &got, &bad_ts);
    int diff = has_timestamps(clip) ? t_sums_compare(ref, &got, msg, sizeof(msg))
                                    : e_compare_md5(ref, &got, msg, sizeof(msg));
    DF_EXPECT_MSG(diff == 0, "%s (%s): %s", clip->name, what, msg);
    DF_EXPECT_MSG(bad_ts == 0, "%s (%s): %d buffers without pts or duration", clip->name, what,
                  bad_ts);
    t_sums_free(&got);
}

static const char *const exact_clips[] = {
    "h264_cabac_slices8.mkv",
    "h264_cavlc_slices4.mkv",
    "h264_mbaff.mkv",
    "h264_422.mkv",
    "h264_odd.mkv",
    "h264_single.mkv",
    "hevc_wpp8.mkv",
    "hevc_wpp10.mkv",
    "hevc_wpp_slices.mkv",
    "hevc_nowpp.mkv",
    "mpeg2_prog.mkv",
    "mpeg2_int.mkv",
    "h264_cabac_slices8.h264",
    "mpeg2_prog.m2v",
    "h264_crop.mkv",
    "hevc_crop.mkv",
    "mpeg2_odd.mkv",
    NULL,
};

DF_TEST(Element, Metadata)
{
    INIT_OR_SKIP();
    GstElementFactory *f = gst_element_factory_find("dfdec");
    DF_ASSERT(f);
    DF_EXPECT(strcmp(gst_element_factory_get_metadata(f, GST_ELEMENT_METADATA_KLASS),
                     "Codec/Decoder/Video") == 0);
    /* Rank secondary (gstdfdec.c says why): autoplugged only where no
     * primary decoder handles the stream. */
    DF_EXPECT_EQ_INT(gst_plugin_feature_get_rank(GST_PLUGIN_FEATURE(f)), GST_RANK_SECONDARY);
    DF_EXPECT(strlen(gst_element_factory_get_metadata(f, GST_ELEMENT_METADATA_DESCRIPTION)) > 20);
    DF_EXPECT_EQ_INT(gst_element_factory_get_num_pad_templates(f), 2);
    GstElement *e = gst_element_factory_create(f, NULL);
    DF_ASSERT(e);
    GstCaps *sink = gst_pad_get_pad_template_caps(gst_element_get_static_pad(e, "sink"));
    gst_object_unref(gst_element_get_static_pad(e, "sink"));
    GstCaps *want = gst_caps_from_string(
        "video/x-h264,stream-format=avc,alignment=au; video/x-h264,stream-format=byte-stream,"
        "alignment=au; video/x-h265,stream-format=hvc1,alignment=au; "
        "video/mpeg,mpegversion=2,systemstream=false; video/mpeg,mpegversion=1,systemstream=false");
    DF_EXPECT(gst_caps_is_subset(want, sink));
    gst_caps_unref(want);
    gst_caps_unref(sink);

    static const struct {
        const char *name;
        GType type;
    } props[] = {
        {"n-workers", G_TYPE_INT},
        {"policy", G_TYPE_ENUM},
        {"threading", G_TYPE_ENUM},
        {"poll-us", G_TYPE_INT},
        {"filter", G_TYPE_STRING},
        {"trace-file", G_TYPE_STRING},
        {"shared-scheduler", G_TYPE_BOOLEAN},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(props); i++) {
        GParamSpec *p = g_object_class_find_property(G_OBJECT_GET_CLASS(e), props[i].name);
        DF_EXPECT_MSG(p != NULL, "no property %s", props[i].name);
        if (!p)
            continue;
        DF_EXPECT_MSG(g_type_is_a(G_PARAM_SPEC_VALUE_TYPE(p), props[i].type), "%s type",
                      props[i].name);
        DF_EXPECT_MSG(strlen(g_param_spec_get_blurb(p)) > 10, "%s has no blurb", props[i].name);
    }
    GParamSpecInt *nw =
        G_PARAM_SPEC_INT(g_object_class_find_property(G_OBJECT_GET_CLASS(e), "n-workers"));
    DF_EXPECT_EQ_INT(nw->default_value, 0);
    DF_EXPECT_EQ_INT(nw->minimum, 0);
    GParamSpecInt *pu =
        G_PARAM_SPEC_INT(g_object_class_find_property(G_OBJECT_GET_CLASS(e), "poll-us"));
    DF_EXPECT_EQ_INT(pu->minimum, -1);
    /* Every dfsched policy is selectable by its name. */
    for (const char *const *p = df_policy_names(); *p; p++) {
        gst_util_set_object_arg(G_OBJECT(e), "policy", *p);
        gchar *got = NULL;
        GValue v = G_VALUE_INIT;
        g_value_init(&v, G_PARAM_SPEC_VALUE_TYPE(
                             g_object_class_find_property(G_OBJECT_GET_CLASS(e), "policy")));
        g_object_get_property(G_OBJECT(e), "policy", &v);
        GEnumValue *ev =
            g_enum_get_value(g_type_class_peek(G_VALUE_TYPE(&v)), g_value_get_enum(&v));
        got = g_strdup(ev ? ev->value_nick : "?");
        DF_EXPECT_MSG(strcmp(got, *p) == 0, "policy %s reads back as %s", *p, got);
        /* The enum is the registry: value = index, description = blurb. */
        const int idx = df_policy_index(*p);
        DF_EXPECT_EQ_INT(g_value_get_enum(&v), idx);
        DF_EXPECT(ev && strcmp(ev->value_name, df_policy_info(idx)->blurb) == 0);
        g_free(got);
        g_value_unset(&v);
    }
    gboolean shared = FALSE;
    g_object_get(e, "shared-scheduler", &shared, NULL);
    DF_EXPECT(shared);
    gst_object_unref(e);
    gst_object_unref(f);
}

DF_TEST(Element, ExactEveryClip)
{
    INIT_OR_SKIP();
    for (int i = 0; exact_clips[i]; i++) {
        TClip clip;
        TSums ref = {0};
        DF_ASSERT_MSG(t_clip_load(exact_clips[i], &clip) == 0, "cannot load %s", exact_clips[i]);
        DF_ASSERT(e_ref(&clip, &ref) == 0 && ref.n >= 8);
        /* Downstream with GstVideoMeta (direct rendering), also with
         * GstVideoCropMeta, and without (copy). */
        check_exact(&clip, &ref, NULL, META_VIDEO, false, "video meta");
        check_exact(&clip, &ref, NULL, META_CROP, false, "video and crop meta");
        check_exact(&clip, &ref, NULL, META_NONE, false, "copy");
        t_sums_free(&ref);
        t_clip_free(&clip);
    }
}

/* A directly rendered picture goes downstream as it is, also while
 * libavcodec keeps it as a reference: a read-only view of the decoder's
 * picture, not a copy (GstVideoDecoder copied such shared pool buffers
 * whole in finish_frame); held views keep their pixels while decoding
 * goes on. */
DF_TEST(Element, ReferencePicturesGoOutWithoutACopy)
{
    INIT_OR_SKIP();
    TClip clip;
    TSums ref = {0};
    DF_ASSERT(t_clip_load("h264_cabac_slices8.mkv", &clip) == 0);
    DF_ASSERT(e_ref(&clip, &ref) == 0 && ref.n >= 8);
    GstHarness *h = e_harness(&clip, NULL);
    DF_ASSERT(h);
    gst_harness_add_propose_allocation_meta(h, GST_VIDEO_META_API_TYPE, NULL);
    GPtrArray *held = g_ptr_array_new_with_free_func((GDestroyNotify)gst_buffer_unref);
    for (int i = 0; i < clip.n_pkts; i++) {
        DF_ASSERT(gst_harness_push(h, e_clip_buffer(&clip, i)) == GST_FLOW_OK);
        GstBuffer *b;
        while ((b = gst_harness_try_pull(h)))
            g_ptr_array_add(held, b);
    }
    DF_EXPECT(gst_harness_push_event(h, gst_event_new_eos()));
    GstBuffer *b;
    while ((b = gst_harness_try_pull(h)))
        g_ptr_array_add(held, b);
    GstCaps *caps = gst_pad_get_current_caps(h->sinkpad);
    DF_ASSERT(caps);
    int views = 0;
    TSums got = {0};
    for (guint i = 0; i < held->len; i++) {
        GstBuffer *out = g_ptr_array_index(held, i);
        if (gst_buffer_n_memory(out) == 1 && GST_MEMORY_IS_READONLY(gst_buffer_peek_memory(out, 0)))
            views++;
        TSum sum;
        DF_ASSERT(e_buffer_sum(out, caps, &sum) == 0);
        t_sums_push(&got, &sum);
    }
    char msg[256];
    DF_EXPECT_MSG(t_sums_compare(&ref, &got, msg, sizeof(msg)) == 0, "%s", msg);
    /* The first pictures may be copied: they come before negotiation. */
    DF_EXPECT_MSG(views >= (int)held->len - 4, "%d of %u pictures went out as views", views,
                  held->len);
    gst_caps_unref(caps);
    g_ptr_array_free(held, TRUE);
    gst_harness_teardown(h);
    t_sums_free(&got);
    t_sums_free(&ref);
    t_clip_free(&clip);
}

/* Directly rendered pictures reuse the buffer released last, whose lines
 * are still in the caches: with every output dropped at once, a stream
 * cycles through no more pictures than it holds at a time (its
 * references, the frames in flight, the one going out), however many the
 * pool holds.  GstBufferPool's own FIFO would cycle through all of them,
 * including the ones faulted in at the start (dr_pool_touch). */
DF_TEST(Element, DirectRenderingReusesTheLastPicture)
{
    INIT_OR_SKIP();
    TClip clip;
    DF_ASSERT(t_clip_load("mpeg2_prog.mkv", &clip) == 0);
    static const char *const props[] = {"n-workers", "1", NULL};
    GstHarness *h = e_harness(&clip, props);
    DF_ASSERT(h);
    gst_harness_add_propose_allocation_meta(h, GST_VIDEO_META_API_TYPE, NULL);
    GHashTable *seen = g_hash_table_new(NULL, NULL);
    int out = 0;
    for (int i = 0; i <= clip.n_pkts; i++) {
        if (i < clip.n_pkts)
            DF_ASSERT(gst_harness_push(h, e_clip_buffer(&clip, i)) == GST_FLOW_OK);
        else
            DF_EXPECT(gst_harness_push_event(h, gst_event_new_eos()));
        GstBuffer *b;
        while ((b = gst_harness_try_pull(h))) {
            GstMapInfo mi;
            DF_ASSERT(gst_buffer_map(b, &mi, GST_MAP_READ));
            g_hash_table_add(seen, mi.data);
            gst_buffer_unmap(b, &mi);
            gst_buffer_unref(b);
            out++;
        }
    }
    /* MPEG-2 holds two references; with the picture being decoded and
     * the one going out that is four, one more for an output still
     * queued in the harness when the next picture is taken.  FIFO reuse
     * cycles through every buffer of the pool: at least the six beyond
     * the frames in flight that dr_pool_touch faults in (8 here). */
    const guint distinct = g_hash_table_size(seen);
    DF_EXPECT(out == clip.n_pkts);
    DF_EXPECT_MSG(distinct <= 5, "%d pictures in %u buffers", out, distinct);
    g_hash_table_unref(seen);
    gst_harness_teardown(h);
    t_clip_free(&clip);
}

/* The crop window on each path: GstVideoCropMeta on directly rendered
 * pictures when downstream takes it (and only then), plane offsets with
 * GstVideoMeta alone, a copy of the window without either; caps are the
 * window's size on all three (e_buffer_sum checks it against the meta). */
DF_TEST(Element, CropWindowEveryPath)
{
    INIT_OR_SKIP();
    static const struct {
        const char *clip;
        int width, height;
    } cases[] = {{"h264_crop.mkv", 326, 192}, {"hevc_crop.mkv", 324, 196}};
    static const char *const what[] = {"copy", "video meta", "video and crop meta"};
    for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
        TClip clip;
        TSums ref = {0};
        DF_ASSERT(t_clip_load(cases[c].clip, &clip) == 0);
        DF_ASSERT(e_ref(&clip, &ref) == 0 && ref.n >= 8);
        for (int meta = META_NONE; meta <= META_CROP; meta++) {
            TSums got = {0};
            char msg[256];
            e_crop_buffers = 0;
            decode_clip(&clip, NULL, meta, false, &got, NULL);
            DF_EXPECT_MSG(t_sums_compare(&ref, &got, msg, sizeof(msg)) == 0, "%s (%s): %s",
                          cases[c].clip, what[meta], msg);
            for (int i = 0; i < got.n; i++)
                DF_EXPECT_MSG(got.v[i].width == cases[c].width &&
                                  got.v[i].height == cases[c].height,
                              "%s (%s): buffer %d is %dx%d", cases[c].clip, what[meta], i,
                              got.v[i].width, got.v[i].height);
            if (meta == META_CROP)
                DF_EXPECT_MSG(e_crop_buffers > got.n / 2, "%s: %d of %d buffers with crop meta",
                              cases[c].clip, e_crop_buffers, got.n);
            else
                DF_EXPECT_MSG(e_crop_buffers == 0, "%s (%s): %d buffers with crop meta",
                              cases[c].clip, what[meta], e_crop_buffers);
            t_sums_free(&got);
        }
        t_sums_free(&ref);
        t_clip_free(&clip);
    }
}

DF_TEST(Element, ExactEveryPolicyAndThreading)
{
    INIT_OR_SKIP();
    const char *clips[] = {"h264_cabac_slices8.mkv", "hevc_wpp8.mkv", "mpeg2_prog.mkv"};
    for (size_t c = 0; c < G_N_ELEMENTS(clips); c++) {
        TClip clip;
        TSums ref = {0};
        DF_ASSERT(t_clip_load(clips[c], &clip) == 0);
        DF_ASSERT(e_ref(&clip, &ref) == 0);
        for (const char *const *p = df_policy_names(); *p; p++)
            for (int w = 1; w <= 3; w++) {
                char nw[8];
                snprintf(nw, sizeof(nw), "%d", w);
                const char *props[] = {
                    "policy", *p,        "n-workers",          nw,  "shared-scheduler",
                    "false",  "poll-us", w == 3 ? "-1" : "20", NULL};
                char what[64];
                snprintf(what, sizeof(what), "%s, %d workers", *p, w);
                check_exact(&clip, &ref, props, true, false, what);
            }
        const char *modes[] = {"slice", "frame", "none"};
        for (size_t m = 0; m < G_N_ELEMENTS(modes); m++) {
            const char *props[] = {"threading", modes[m], NULL};
            check_exact(&clip, &ref, props, m == 0, false, modes[m]);
        }
        t_sums_free(&ref);
        t_clip_free(&clip);
    }
}

DF_TEST(Element, LiveAndLatency)
{
    INIT_OR_SKIP();
    TClip clip;
    TSums ref = {0};
    DF_ASSERT(t_clip_load("h264_cabac_slices8.mkv", &clip) == 0);
    DF_ASSERT(e_ref(&clip, &ref) == 0);
    check_exact(&clip, &ref, NULL, true, true, "live");

    /* The latency answer: whole frames (40 ms each), at least one. */
    GstClockTime lat[2];
    const char *modes[] = {"slice", "frame"};
    for (int m = 0; m < 2; m++) {
        const char *props[] = {"threading",        modes[m], "n-workers", "2",
                               "shared-scheduler", "false",  NULL};
        GstHarness *h = e_harness(&clip, props);
        DF_ASSERT(h);
        gst_harness_set_live(h, TRUE);
        TSums got = {0};
        e_push_range(h, &clip, 0, 10, &got, NULL);
        lat[m] = gst_harness_query_latency(h);
        t_sums_free(&got);
        gst_harness_teardown(h);
        DF_EXPECT_MSG(lat[m] >= 40 * GST_MSECOND && lat[m] % (40 * GST_MSECOND) == 0 &&
                          lat[m] <= 8 * 40 * GST_MSECOND,
                      "%s threading: latency %" GST_TIME_FORMAT, modes[m], GST_TIME_ARGS(lat[m]));
    }
    /* Frame threads add frames of delay; slice jobs do not (no frame
     * threads under TSan, see e_harness()). */
    DF_EXPECT_MSG(lat[1] > lat[0] || t_under_tsan(),
                  "frame latency %" GST_TIME_FORMAT " <= slice %" GST_TIME_FORMAT,
                  GST_TIME_ARGS(lat[1]), GST_TIME_ARGS(lat[0]));

    /* Caps without a frame rate (framerate=0/1): the same frames at the
     * rate the bitstream signals (25 fps), as avdec does; it was 0. */
    GstHarness *h = e_harness(&clip, NULL);
    DF_ASSERT(h);
    GstCaps *caps = e_clip_caps(&clip);
    gst_caps_set_simple(caps, "framerate", GST_TYPE_FRACTION, 0, 1, NULL);
    gst_harness_set_src_caps(h, caps);
    gst_harness_set_live(h, TRUE);
    TSums got = {0};
    e_push_range(h, &clip, 0, 10, &got, NULL);
    const GstClockTime norate = gst_harness_query_latency(h);
    DF_EXPECT_MSG(norate >= 40 * GST_MSECOND && norate % (40 * GST_MSECOND) == 0,
                  "no caps frame rate: latency %" GST_TIME_FORMAT, GST_TIME_ARGS(norate));
    t_sums_free(&got);
    gst_harness_teardown(h);
    t_sums_free(&ref);
    t_clip_free(&clip);
}

/* What dfdec holds is what it reports: fed a packet at a time, as a live
 * source does, after each push no more packets wait inside it than its
 * latency answer counts (frames of 40 ms), whatever max-frame-delay
 * bounds it to, and at some point that many do (a larger answer would
 * make a live pipeline wait for nothing).  On every stream structure:
 * slices, a single slice (frame threads when the budget allows), WPP,
 * MPEG-2.  It used to take frames only at the next packet: a frame period
 * later than it reported. */
DF_TEST(Element, HoldsWhatItReports)
{
    INIT_OR_SKIP();
    static const struct {
        const char *clip, *budget;
    } cases[] = {
        {"h264_cabac_slices8.mkv", "0"}, {"h264_cabac_slices8.mkv", "1"},
        {"h264_cabac_slices8.mkv", "3"}, {"h264_single.mkv", "0"},
        {"h264_single.mkv", "1"},        {"h264_single.mkv", "2"},
        {"hevc_wpp8.mkv", "0"},          {"hevc_wpp8.mkv", "1"},
        {"hevc_nowpp.mkv", "1"},         {"mpeg2_prog.mkv", "0"},
        {"mpeg2_prog.mkv", "1"},
    };
    for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
        TClip clip;
        DF_ASSERT(t_clip_load(cases[c].clip, &clip) == 0);
        const char *props[] = {"max-frame-delay",  cases[c].budget, "n-workers", "2",
                               "shared-scheduler", "false",         NULL};
        GstHarness *h = e_harness(&clip, props);
        DF_ASSERT(h);
        TSums got = {0};
        int worst = INT_MIN, peak = 0, reported = -1;
        for (int i = 0; i < clip.n_pkts; i++) {
            DF_ASSERT(gst_harness_push(h, e_clip_buffer(&clip, i)) == GST_FLOW_OK);
            e_pull_all(h, &got, NULL);
            const GstClockTime lat = gst_harness_query_latency(h);
            /* From the first picture on: before it the decoder is still
             * probing the stream and knows neither its reorder delay nor
             * its threading. */
            if (got.n == 0)
                continue;
            reported = (int)(lat / (40 * GST_MSECOND));
            const int inside = i + 1 - got.n;
            if (inside - reported > worst)
                worst = inside - reported;
            if (inside > peak)
                peak = inside;
        }
        printf("%s max-frame-delay=%s: latency %d frames, at most %d held\n", cases[c].clip,
               cases[c].budget, reported, peak);
        DF_EXPECT_MSG(worst <= 0, "%s max-frame-delay=%s: %d packets held beyond the latency",
                      cases[c].clip, cases[c].budget, worst);
        DF_EXPECT_MSG(peak == reported, "%s max-frame-delay=%s: held at most %d, reported %d",
                      cases[c].clip, cases[c].budget, peak, reported);
        t_sums_free(&got);
        gst_harness_teardown(h);
        t_clip_free(&clip);
    }
}

DF_TEST(Element, FlushAndNewSegment)
{
    INIT_OR_SKIP();
    const char *clips[] = {"h264_cabac_slices8.mkv", "hevc_wpp8.mkv", "mpeg2_prog.mkv"};
    for (size_t c = 0; c < G_N_ELEMENTS(clips); c++) {
        TClip clip;
        DF_ASSERT(t_clip_load(clips[c], &clip) == 0);
        int k = 0; /* a keyframe in the second half */
        for (int i = clip.n_pkts / 2; i < clip.n_pkts && !k; i++)
            if (clip.pkts[i]->flags & AV_PKT_FLAG_KEY)
                k = i;
        DF_ASSERT_MSG(k > 0, "%s: no keyframe in the second half", clips[c]);
        TClip tail = clip;
        tail.pkts += k;
        tail.n_pkts -= k;
        TSums ref = {0};
        DF_ASSERT(e_ref(&tail, &ref) == 0);

        GstHarness *h = e_harness(&clip, NULL);
        DF_ASSERT(h);
        gst_harness_add_propose_allocation_meta(h, GST_VIDEO_META_API_TYPE, NULL);
        TSums before = {0}, got = {0};
        e_push_range(h, &clip, 0, k - 1, &before, NULL);
        DF_EXPECT(gst_harness_push_event(h, gst_event_new_flush_start()));
        DF_EXPECT(gst_harness_push_event(h, gst_event_new_flush_stop(TRUE)));
        e_pull_all(h, &before, NULL);
        GstSegment seg;
        gst_segment_init(&seg, GST_FORMAT_TIME);
        DF_EXPECT(gst_harness_push_event(h, gst_event_new_segment(&seg)));
        DF_EXPECT(e_push_range(h, &clip, k, clip.n_pkts, &got, NULL) == GST_FLOW_OK);
        DF_EXPECT(gst_harness_push_event(h, gst_event_new_eos()));
        e_pull_all(h, &got, NULL);
        char msg[256];
        DF_EXPECT_MSG(t_sums_compare(&ref, &got, msg, sizeof(msg)) == 0, "%s after flush: %s",
                      clips[c], msg);
        DF_EXPECT_MSG(before.n < k, "%s: %d frames before the flush from %d packets", clips[c],
                      before.n, k - 1);
        gst_harness_teardown(h);
        t_sums_free(&before);
        t_sums_free(&got);
        t_sums_free(&ref);
        t_clip_free(&clip);
    }
}

DF_TEST(Element, EosDrainsAndCapsChange)
{
    INIT_OR_SKIP();
    TClip a, b;
    DF_ASSERT(t_clip_load("h264_cabac_slices8.mkv", &a) == 0);
    DF_ASSERT(t_clip_load("hevc_wpp8.mkv", &b) == 0);
    TSums ra = {0}, rb = {0};
    DF_ASSERT(e_ref(&a, &ra) == 0);
    DF_ASSERT(e_ref(&b, &rb) == 0);
    GstHarness *h = e_harness(&a, NULL);
    DF_ASSERT(h);
    TSums ga = {0}, gb = {0};
    e_push_range(h, &a, 0, a.n_pkts, &ga, NULL);
    DF_EXPECT_MSG(ga.n < ra.n, "every frame out before EOS: nothing was in flight?");
    /* New caps mid-stream: the old stream's frames are drained first. */
    GstCaps *cb = e_clip_caps(&b);
    gst_harness_set_src_caps(h, cb);
    e_pull_all(h, &ga, NULL);
    char msg[256];
    DF_EXPECT_MSG(t_sums_compare(&ra, &ga, msg, sizeof(msg)) == 0, "first stream: %s", msg);
    e_push_range(h, &b, 0, b.n_pkts, &gb, NULL);
    DF_EXPECT(gst_harness_push_event(h, gst_event_new_eos()));
    e_pull_all(h, &gb, NULL);
    DF_EXPECT_MSG(t_sums_compare(&rb, &gb, msg, sizeof(msg)) == 0, "second stream: %s", msg);
    GstCaps *out = gst_pad_get_current_caps(h->sinkpad);
    GstStructure *s = gst_caps_get_structure(out, 0);
    int w = 0, hh = 0, pn = 0, pd = 0, fn = 0, fd = 0;
    DF_EXPECT(gst_structure_get_int(s, "width", &w) && w == b.par->width);
    DF_EXPECT(gst_structure_get_int(s, "height", &hh) && hh == b.par->height);
    DF_EXPECT(gst_structure_get_fraction(s, "pixel-aspect-ratio", &pn, &pd) && pn == pd);
    DF_EXPECT(gst_structure_get_fraction(s, "framerate", &fn, &fd) && fn == 25 && fd == 1);
    DF_EXPECT(strcmp(gst_structure_get_string(s, "format"), "I420") == 0);
    DF_EXPECT(gst_structure_get_string(s, "colorimetry") != NULL);
    gst_caps_unref(out);
    gst_harness_teardown(h);
    t_sums_free(&ga);
    t_sums_free(&gb);
    t_sums_free(&ra);
    t_sums_free(&rb);
    t_clip_free(&a);
    t_clip_free(&b);
}

/* New caps with a larger picture, downstream taking GstVideoMeta: the new
 * stream's first pictures were rendered into a pool made for the old
 * display size (a 352x288 meta on 640x360 pictures, which downstream
 * cannot map) until its first output renegotiated.  The third stream has
 * the second's coded size (640x368 after 640x360, 23 macroblock rows
 * each), whose pictures fit the old pool's buffers but not its meta. */
DF_TEST(Element, LargerPictureAfterCapsChangeWithVideoMeta)
{
    INIT_OR_SKIP();
    static const char *const names[] = {"h264_size_b.mkv", "h264_size_a.mkv", "h264_size_c.mkv"};
    enum { N = sizeof(names) / sizeof(names[0]) };
    TClip clip[N];
    TSums ref[N], got[N];
    memset(ref, 0, sizeof(ref));
    memset(got, 0, sizeof(got));
    for (int i = 0; i < N; i++) {
        DF_ASSERT(t_clip_load(names[i], &clip[i]) == 0);
        DF_ASSERT(e_ref(&clip[i], &ref[i]) == 0);
    }
    GstHarness *h = e_harness(&clip[0], NULL);
    DF_ASSERT(h);
    gst_harness_add_propose_allocation_meta(h, GST_VIDEO_META_API_TYPE, NULL);
    for (int i = 0; i < N; i++) {
        if (i > 0) {
            gst_harness_set_src_caps(h, e_clip_caps(&clip[i]));
            e_pull_all(h, &got[i - 1], NULL);
        }
        e_push_range(h, &clip[i], 0, clip[i].n_pkts, &got[i], NULL);
    }
    DF_EXPECT(gst_harness_push_event(h, gst_event_new_eos()));
    e_pull_all(h, &got[N - 1], NULL);
    for (int i = 0; i < N; i++) {
        char msg[256];
        DF_EXPECT_MSG(t_sums_compare(&ref[i], &got[i], msg, sizeof(msg)) == 0, "%s: %s", names[i],
                      msg);
        t_sums_free(&ref[i]);
        t_sums_free(&got[i]);
        t_clip_free(&clip[i]);
    }
    gst_harness_teardown(h);
}

/* End the stream and expect `ref`'s pictures in `got`, in order (their
 * timestamps aside). */
static void eos_and_expect_pictures(GstHarness *h, const TSums *ref, TSums *got, const char *what)
{
    DF_EXPECT(gst_harness_push_event(h, gst_event_new_eos()));
    e_pull_all(h, got, NULL);
    char msg[256];
    DF_EXPECT_MSG(e_compare_md5(ref, got, msg, sizeof(msg)) == 0, "%s: %s", what, msg);
}

/* A harness over the clip with default properties, and its reference. */
static GstHarness *clip_harness(const char *name, TClip *clip, TSums *ref)
{
    if (t_clip_load(name, clip) != 0 || e_ref(clip, ref) != 0 || ref->n <= 8) {
        df_test_fail(__FILE__, __LINE__, true, "%s: no clip or no reference", name);
        return NULL;
    }
    return e_harness(clip, NULL);
}

/* Downstream's answer to the allocation query: a pool of at most four
 * buffers (a sink's fixed set), without GstVideoMeta, so every picture is
 * copied into it; other queries go to the harness. */
static GstPadQueryFunction harness_query;

static gboolean fixed_pool_query(GstPad *pad, GstObject *parent, GstQuery *query)
{
    if (GST_QUERY_TYPE(query) != GST_QUERY_ALLOCATION)
        return harness_query(pad, parent, query);
    GstCaps *caps = NULL;
    gst_query_parse_allocation(query, &caps, NULL);
    GstVideoInfo info;
    if (!caps || !gst_video_info_from_caps(&info, caps))
        return FALSE;
    GstBufferPool *pool = gst_video_buffer_pool_new();
    GstStructure *config = gst_buffer_pool_get_config(pool);
    gst_buffer_pool_config_set_params(config, caps, (guint)info.size, 4, 4);
    gboolean ok = gst_buffer_pool_set_config(pool, config);
    if (ok)
        gst_query_add_allocation_pool(query, pool, (guint)info.size, 4, 4);
    gst_object_unref(pool);
    return ok;
}

typedef struct PushAll {
    GstHarness *h;
    const TClip *clip;
    GstFlowReturn flow;
    gint done; /* atomic: the pushing thread returned */
} PushAll;

static gpointer push_all(gpointer data)
{
    PushAll *p = data;
    p->flow = GST_FLOW_OK;
    for (int i = 0; i < p->clip->n_pkts && p->flow == GST_FLOW_OK; i++)
        p->flow = gst_harness_push(p->h, e_clip_buffer(p->clip, i));
    if (p->flow == GST_FLOW_OK && !gst_harness_push_event(p->h, gst_event_new_eos()))
        p->flow = GST_FLOW_ERROR;
    g_atomic_int_set(&p->done, 1);
    return NULL;
}

/* Downstream holds every buffer it was given and its pool cannot grow:
 * the stream still plays to the end (avdec swaps such a pool for one that
 * grows; dfdec waited for a buffer that never came back). */
DF_TEST(Element, FixedDownstreamPoolNeverStalls)
{
    INIT_OR_SKIP();
    TClip clip;
    TSums ref = {0}, got = {0};
    GstHarness *h = clip_harness("h264_cabac_slices8.mkv", &clip, &ref);
    DF_ASSERT(h);
    harness_query = GST_PAD_QUERYFUNC(h->sinkpad);
    gst_pad_set_query_function(h->sinkpad, fixed_pool_query);
    PushAll p = {.h = h, .clip = &clip};
    GThread *t = g_thread_new("push-all", push_all, &p);
    /* Nothing is pulled while the stream runs: the harness keeps it all. */
    for (int ms = 0; ms < 20000 && !g_atomic_int_get(&p.done); ms += 10)
        g_usleep(10000);
    const bool stalled = !g_atomic_int_get(&p.done);
    DF_EXPECT_MSG(!stalled, "the stream stalled with %u buffers held downstream",
                  gst_harness_buffers_received(h));
    /* Let a stalled stream go before judging the pictures. */
    while (!g_atomic_int_get(&p.done)) {
        e_pull_all(h, &got, NULL);
        g_usleep(10000);
    }
    g_thread_join(t);
    DF_EXPECT_MSG(p.flow == GST_FLOW_OK, "flow %s", gst_flow_get_name(p.flow));
    e_pull_all(h, &got, NULL);
    if (!stalled) {
        char msg[256];
        DF_EXPECT_MSG(e_compare_md5(&ref, &got, msg, sizeof(msg)) == 0, "%s", msg);
    }
    gst_harness_teardown(h);
    t_sums_free(&ref);
    t_sums_free(&got);
    t_clip_free(&clip);
}

static gint criticals; /* GLib criticals logged (atomic) */

static void count_critical(const gchar *domain, GLogLevelFlags level, const gchar *msg,
                           gpointer data)
{
    (void)domain, (void)level, (void)data;
    g_atomic_int_inc(&criticals);
    fprintf(stderr, "critical: %s\n", msg);
}

/* A GAP event before the first picture (rtpjitterbuffer do-lost=true on a
 * lossy start): GstVideoDecoder negotiates default caps for it, and
 * downstream's allocation allows direct rendering before any picture has
 * set its format.  dfdec took format 0 for the stream's and made a pool
 * for an unknown format: a GStreamer-Video-CRITICAL (fatal under
 * G_DEBUG=fatal-criticals).  The pictures still go out directly. */
DF_TEST(Element, GapBeforeTheFirstPicture)
{
    INIT_OR_SKIP();
    TClip clip;
    TSums ref = {0}, got = {0};
    GstHarness *h = clip_harness("h264_cabac_slices8.mkv", &clip, &ref);
    DF_ASSERT(h);
    gst_harness_add_propose_allocation_meta(h, GST_VIDEO_META_API_TYPE, NULL);
    g_atomic_int_set(&criticals, 0);
    const guint handler =
        g_log_set_handler("GStreamer-Video", G_LOG_LEVEL_CRITICAL, count_critical, NULL);
    DF_EXPECT(gst_harness_push_event(h, gst_event_new_gap(0, 40 * GST_MSECOND)));
    DF_EXPECT(e_push_range(h, &clip, 0, clip.n_pkts, &got, NULL) == GST_FLOW_OK);
    eos_and_expect_pictures(h, &ref, &got, "after a gap");
    g_log_remove_handler("GStreamer-Video", handler);
    DF_EXPECT_EQ_INT(g_atomic_int_get(&criticals), 0);
    GstStructure *st = NULL;
    g_object_get(h->element, "stats", &st, NULL);
    guint64 direct = 0;
    DF_EXPECT(st && gst_structure_get_uint64(st, "frames-direct", &direct));
    DF_EXPECT_MSG(direct > 0, "no picture rendered directly after the gap");
    if (st)
        gst_structure_free(st);
    gst_harness_teardown(h);
    t_sums_free(&ref);
    t_sums_free(&got);
    t_clip_free(&clip);
}

/* A B-frame stream whose PTS are in decode order, equal to its DTS (a
 * remux without composition offsets, e.g. ffmpeg -c copy into MP4 from
 * a raw stream): every picture still comes out, in presentation order.
 * dfdec let a frame go when a picture of a later PTS came out, which here
 * is the P-picture decoded before the B-pictures shown before it: half
 * the frames were lost. */
DF_TEST(Element, PtsInDecodeOrderLoseNoFrame)
{
    INIT_OR_SKIP();
    static const char *const names[] = {"h264_cabac_slices8.mkv", "hevc_wpp8.mkv",
                                        "mpeg2_prog.mkv"};
    for (size_t c = 0; c < sizeof(names) / sizeof(names[0]); c++) {
        TClip clip;
        TSums ref = {0}, got = {0};
        DF_ASSERT(t_clip_load(names[c], &clip) == 0);
        DF_ASSERT(e_ref(&clip, &ref) == 0 && ref.n > 8);
        GstHarness *h = e_harness(&clip, NULL);
        DF_ASSERT(h);
        for (int i = 0; i < clip.n_pkts; i++) {
            GstBuffer *b = e_clip_buffer(&clip, i);
            GST_BUFFER_PTS(b) = GST_BUFFER_DTS(b) = (GstClockTime)i * GST_SECOND / 25;
            DF_ASSERT(gst_harness_push(h, b) == GST_FLOW_OK);
            e_pull_all(h, &got, NULL);
        }
        eos_and_expect_pictures(h, &ref, &got, names[c]);
        gst_harness_teardown(h);
        t_sums_free(&got);
        t_sums_free(&ref);
        t_clip_free(&clip);
    }
}

/* Caps whose colorimetry leaves a part unknown (h264parse does for the
 * range of an RGB stream) get that part from the bitstream, as avdec's
 * do: hevc_wpp8 signals limited range; the range stayed unknown. */
DF_TEST(Element, UnknownColorimetryFromTheBitstream)
{
    INIT_OR_SKIP();
    TClip clip;
    DF_ASSERT(t_clip_load("hevc_wpp8.mkv", &clip) == 0);
    GstHarness *h = e_harness(&clip, NULL);
    DF_ASSERT(h);
    GstCaps *caps = e_clip_caps(&clip);
    gst_caps_set_simple(caps, "colorimetry", G_TYPE_STRING, "0:3:5:1", NULL);
    gst_harness_set_src_caps(h, caps);
    TSums got = {0};
    e_push_range(h, &clip, 0, clip.n_pkts, &got, NULL);
    DF_EXPECT(gst_harness_push_event(h, gst_event_new_eos()));
    e_pull_all(h, &got, NULL);
    DF_EXPECT(got.n > 0);
    GstCaps *out = gst_pad_get_current_caps(h->sinkpad);
    DF_ASSERT(out);
    GstVideoInfo info;
    DF_ASSERT(gst_video_info_from_caps(&info, out));
    DF_EXPECT_MSG(GST_VIDEO_INFO_COLORIMETRY(&info).range == GST_VIDEO_COLOR_RANGE_16_235,
                  "range %d", GST_VIDEO_INFO_COLORIMETRY(&info).range);
    gst_caps_unref(out);
    gst_harness_teardown(h);
    t_sums_free(&got);
    t_clip_free(&clip);
}

DF_TEST(Element, InterlacedAndTenBitCaps)
{
    INIT_OR_SKIP();
    const struct {
        const char *clip, *format, *interlace;
        bool tff; /* as libavcodec reports it (x264 interlaced=1:tff=1 comes out bff) */
    } cases[] = {
        {"mpeg2_int.mkv", "I420", "mixed", true},
        {"h264_mbaff.mkv", "I420", "mixed", false},
        {"hevc_wpp10.mkv", "I420_10LE", "progressive", false},
        {"h264_422.mkv", "Y42B", "progressive", false},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        TClip clip;
        DF_ASSERT(t_clip_load(cases[i].clip, &clip) == 0);
        GstHarness *h = e_harness(&clip, NULL);
        DF_ASSERT(h);
        TSums got = {0};
        e_push_range(h, &clip, 0, clip.n_pkts, &got, NULL);
        gst_harness_push_event(h, gst_event_new_eos());
        GstBuffer *first = NULL;
        GstCaps *out = gst_pad_get_current_caps(h->sinkpad);
        DF_ASSERT(out);
        GstStructure *s = gst_caps_get_structure(out, 0);
        DF_EXPECT_MSG(strcmp(gst_structure_get_string(s, "format"), cases[i].format) == 0,
                      "%s: format %s", cases[i].clip, gst_structure_get_string(s, "format"));
        const char *im = gst_structure_get_string(s, "interlace-mode");
        DF_EXPECT_MSG(im && strcmp(im, cases[i].interlace) == 0, "%s: interlace-mode %s",
                      cases[i].clip, im ? im : "(none)");
        if (strcmp(cases[i].interlace, "mixed") == 0) {
            /* Every remaining output buffer of an interlaced clip says so. */
            int flagged = 0, n = 0;
            while ((first = gst_harness_try_pull(h))) {
                n++;
                flagged += GST_BUFFER_FLAG_IS_SET(first, GST_VIDEO_BUFFER_FLAG_INTERLACED) &&
                           GST_BUFFER_FLAG_IS_SET(first, GST_VIDEO_BUFFER_FLAG_TFF) == cases[i].tff;
                gst_buffer_unref(first);
            }
            DF_EXPECT_MSG(flagged == n && n > 0,
                          "%s: %d of %d buffers interlaced with the right field order",
                          cases[i].clip, flagged, n);
        }
        gst_caps_unref(out);
        t_sums_free(&got);
        gst_harness_teardown(h);
        t_clip_free(&clip);
    }
}

/* Push packets [from, to), with their PTS taken away when `dts_only` (a
 * raw stream through a parser carries DTS only), pulling as it goes. */
static void push_qos_range(GstHarness *h, const TClip *clip, int from, int to, bool dts_only,
                           TSums *got)
{
    for (int i = from; i < to; i++) {
        GstBuffer *b = e_clip_buffer(clip, i);
        if (dts_only) {
            if (!GST_BUFFER_DTS_IS_VALID(b))
                GST_BUFFER_DTS(b) = GST_BUFFER_PTS(b);
            GST_BUFFER_PTS(b) = GST_CLOCK_TIME_NONE;
        }
        DF_EXPECT(gst_harness_push(h, b) == GST_FLOW_OK);
        e_pull_all(h, got, NULL);
    }
}

/* QoS cancels late frames, also for a stream whose buffers carry DTS
 * only (QoS was ignored there: no buffer pushed had a PTS to say which
 * running time the QoS could be about). */
DF_TEST(Element, QosCancelsLateFrames)
{
    INIT_OR_SKIP();
    TClip clip;
    TSums ref = {0};
    DF_ASSERT(t_clip_load("h264_cabac_slices8.mkv", &clip) == 0);
    DF_ASSERT(e_ref(&clip, &ref) == 0);
    for (int dts_only = 0; dts_only <= 1; dts_only++) {
        GstHarness *h = e_harness(&clip, NULL);
        DF_ASSERT(h);
        TSums got = {0};
        push_qos_range(h, &clip, 0, 8, dts_only, &got);
        /* Downstream says it is 320 ms behind at the 4th frame: the
         * frames up to about there are late. */
        GstClockTime ts = 4 * 40 * GST_MSECOND;
        DF_EXPECT(gst_harness_push_upstream_event(
            h, gst_event_new_qos(GST_QOS_TYPE_UNDERFLOW, 0.5, 320 * GST_MSECOND, ts)));
        push_qos_range(h, &clip, 8, clip.n_pkts, dts_only, &got);
        DF_EXPECT(gst_harness_push_event(h, gst_event_new_eos()));
        e_pull_all(h, &got, NULL);
        DF_EXPECT_MSG(got.n < ref.n && got.n > 0, "%d of %d frames out under QoS%s", got.n, ref.n,
                      dts_only ? " (DTS only)" : "");
        /* What came out is exact, matched by pts (by md5 without PTS). */
        if (!dts_only)
            DF_EXPECT_EQ_INT(e_count_inexact_by_pts(&ref, &got), 0);
        GList *pending = gst_video_decoder_get_frames(GST_VIDEO_DECODER(h->element));
        DF_EXPECT_EQ_INT(g_list_length(pending), 0);
        g_list_free_full(pending, (GDestroyNotify)gst_video_codec_frame_unref);
        gst_harness_teardown(h);
        t_sums_free(&got);
    }
    t_sums_free(&ref);
    t_clip_free(&clip);
}

/* Gapless playback: the next item comes as a new stream and segment whose
 * running time starts again at 0 (the offset is applied downstream), and
 * QoS about the previous item's buffers, seconds later in running time,
 * still arrives.  It must not make the new stream late: every picture of
 * it comes out (dfdec gave up GOP after GOP and put out almost nothing
 * of the next item). */
DF_TEST(Element, QosOfAnEarlierItemIsIgnored)
{
    INIT_OR_SKIP();
    TClip clip;
    TSums ref = {0}, first = {0}, got = {0};
    DF_ASSERT(t_clip_load("h264_cabac_slices8.mkv", &clip) == 0);
    DF_ASSERT(e_ref(&clip, &ref) == 0 && ref.n > 8);
    GstHarness *h = e_harness(&clip, NULL);
    DF_ASSERT(h);
    /* The first item plays from 10 s on; downstream reports its last
     * pictures 3 s late. */
    const GstClockTime item = 10 * GST_SECOND;
    for (int i = 0; i < clip.n_pkts; i++) {
        GstBuffer *b = e_clip_buffer(&clip, i);
        GST_BUFFER_PTS(b) += item;
        if (GST_BUFFER_DTS_IS_VALID(b))
            GST_BUFFER_DTS(b) += item;
        DF_ASSERT(gst_harness_push(h, b) == GST_FLOW_OK);
        e_pull_all(h, &first, NULL);
    }
    const GstClockTime last = item + GST_SECOND * (GstClockTime)(clip.n_pkts - 4) / 25;
    DF_EXPECT(gst_harness_push_upstream_event(
        h, gst_event_new_qos(GST_QOS_TYPE_UNDERFLOW, 0.5, 3 * GST_SECOND, last)));
    /* The next item: a new stream and segment, and more QoS of the first. */
    DF_EXPECT(gst_harness_push_event(h, gst_event_new_stream_start("next-item")));
    GstSegment seg;
    gst_segment_init(&seg, GST_FORMAT_TIME);
    DF_EXPECT(gst_harness_push_event(h, gst_event_new_segment(&seg)));
    DF_EXPECT(gst_harness_push_upstream_event(
        h,
        gst_event_new_qos(GST_QOS_TYPE_UNDERFLOW, 0.5, 3 * GST_SECOND, last + 80 * GST_MSECOND)));
    DF_EXPECT(e_push_range(h, &clip, 0, clip.n_pkts, &got, NULL) == GST_FLOW_OK);
    DF_EXPECT(gst_harness_push_event(h, gst_event_new_eos()));
    e_pull_all(h, &got, NULL);
    DF_EXPECT_MSG(got.n == ref.n, "%d of the next item's %d pictures out", got.n, ref.n);
    DF_EXPECT_EQ_INT(e_count_inexact_by_pts(&ref, &got), 0);
    gst_harness_teardown(h);
    t_sums_free(&ref);
    t_sums_free(&first);
    t_sums_free(&got);
    t_clip_free(&clip);
}

typedef struct Instance {
    const TClip *clip;
    const TSums *ref;
    const char *const *props;
    GstHarness *h;
    TSums got;
} Instance;

static void *instance_run(void *arg)
{
    Instance *in = arg;
    e_push_range(in->h, in->clip, 0, in->clip->n_pkts, &in->got, NULL);
    gst_harness_push_event(in->h, gst_event_new_eos());
    e_pull_all(in->h, &in->got, NULL);
    return NULL;
}

/* n instances decoding at once; returns the threads they added. */
static int run_instances(int n, const TClip *clip, const TSums *ref, const char *const *props)
{
    Instance in[4];
    pthread_t th[4];
    int base = df_test_thread_count();
    for (int i = 0; i < n; i++) {
        memset(&in[i], 0, sizeof(in[i]));
        in[i].clip = clip;
        in[i].ref = ref;
        in[i].h = e_harness(clip, props);
        gst_harness_add_propose_allocation_meta(in[i].h, GST_VIDEO_META_API_TYPE, NULL);
    }
    for (int i = 0; i < n; i++)
        pthread_create(&th[i], NULL, instance_run, &in[i]);
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    int added = df_test_thread_count() - base;
    for (int i = 0; i < n; i++) {
        char msg[256];
        DF_EXPECT_MSG(t_sums_compare(ref, &in[i].got, msg, sizeof(msg)) == 0, "instance %d: %s", i,
                      msg);
        gst_harness_teardown(in[i].h);
        t_sums_free(&in[i].got);
    }
    return added;
}

DF_TEST(Element, InstancesShareOneScheduler)
{
    INIT_OR_SKIP();
    TClip clip;
    TSums ref = {0};
    DF_ASSERT(t_clip_load("h264_cabac_slices8.mkv", &clip) == 0);
    DF_ASSERT(e_ref(&clip, &ref) == 0);
    const char *shared[] = {"n-workers", "2", "threading", "slice", NULL};
    const char *own[] = {"n-workers", "2", "threading", "slice", "shared-scheduler", "false", NULL};
    for (int n = 2; n <= 4; n += 2) {
        /* The harness threads are joined; what stays are scheduler workers
         * of elements still in PLAYING, until their teardown. */
        /* libavcodec starts slice threads of its own in every decoder (idle:
         * dfmedia runs their jobs), so compare the two instead of counting. */
        int s = run_instances(n, &clip, &ref, shared);
        int o = run_instances(n, &clip, &ref, own);
        DF_EXPECT_MSG(o - s >= 2 * n - 2,
                      "%d instances: %d threads shared, %d with schedulers of their own", n, s, o);
    }
    t_sums_free(&ref);
    t_clip_free(&clip);
}

/* Live objects the leaks tracer (GST_TRACERS=leaks) knows of; -1 without it.
 * The tracer's list holds each object without a reference of its own (it
 * "takes" them, GStreamer 1.22 to 1.26 at least): freeing the list would
 * unref every live object, so each gets a reference first. */
static int live_objects(void)
{
    GList *tracers = gst_tracing_get_active_tracers();
    int n = -1;
    for (GList *l = tracers; l; l = l->next) {
        if (strcmp(G_OBJECT_TYPE_NAME(l->data), "GstLeaksTracer") == 0) {
            GstStructure *info = NULL;
            g_signal_emit_by_name(l->data, "get-live-objects", &info);
            const GValue *list = info ? gst_structure_get_value(info, "live-objects-list") : NULL;
            n = list ? (int)gst_value_list_get_size(list) : -1;
            for (int i = 0; i < n; i++) {
                const GstStructure *o =
                    gst_value_get_structure(gst_value_list_get_value(list, (guint)i));
                const GValue *v = gst_structure_get_value(o, "object");
                if (v && G_VALUE_HOLDS_OBJECT(v))
                    g_object_ref(g_value_get_object(v));
                else if (v && G_VALUE_HOLDS_BOXED(v))
                    gst_mini_object_ref(g_value_get_boxed(v));
            }
            if (info)
                gst_structure_free(info);
        }
    }
    g_list_free_full(tracers, gst_object_unref);
    return n;
}

DF_TEST(Element, StateCyclesDoNotLeak)
{
    INIT_OR_SKIP();
    TClip clip;
    TSums ref = {0};
    DF_ASSERT(t_clip_load("hevc_wpp8.mkv", &clip) == 0);
    DF_ASSERT(e_ref(&clip, &ref) == 0);
    /* Warm-up: type classes, the shared scheduler's first creation. */
    check_exact(&clip, &ref, NULL, true, false, "warm-up");
    int threads0 = df_test_thread_count();
    int live0 = live_objects();
    GstElement *e = gst_element_factory_make("dfdec", NULL);
    DF_ASSERT(e);
    for (int i = 0; i < 200; i++) {
        DF_ASSERT(gst_element_set_state(e, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE);
        DF_ASSERT(gst_element_set_state(e, GST_STATE_NULL) == GST_STATE_CHANGE_SUCCESS);
    }
    gst_object_unref(e);
    /* And with data flowing: decode part of the clip, stop midway. */
    for (int i = 0; i < 20; i++) {
        GstHarness *h = e_harness(&clip, NULL);
        if (i % 2)
            gst_harness_add_propose_allocation_meta(h, GST_VIDEO_META_API_TYPE, NULL);
        TSums got = {0};
        e_push_range(h, &clip, 0, 3 + i % 7, &got, NULL);
        gst_harness_teardown(h);
        t_sums_free(&got);
    }
    DF_EXPECT_EQ_INT(df_test_thread_count(), threads0);
    int live1 = live_objects();
    t_sums_free(&ref);
    t_clip_free(&clip);
    if (live0 < 0)
        DF_SKIP("GST_TRACERS=leaks not set: thread count checked only");
    DF_EXPECT_MSG(live1 == live0, "%d GStreamer objects alive, %d before the cycles", live1, live0);
}

DF_TEST(Element, CorruptStreamWarnsAndContinues)
{
    INIT_OR_SKIP();
    TClip clip;
    DF_ASSERT(t_clip_load("h264_cabac_slices8.mkv", &clip) == 0);
    /* Every fifth packet loses its second half (its last slices). */
    for (int i = 2; i < clip.n_pkts; i += 5) {
        AVPacket *p = clip.pkts[i];
        DF_ASSERT(av_packet_make_writable(p) == 0);
        av_shrink_packet(p, p->size / 2);
    }
    GstHarness *h = e_harness(&clip, NULL);
    DF_ASSERT(h);
    GstBus *bus = gst_bus_new();
    gst_element_set_bus(h->element, bus);
    TSums got = {0};
    DF_EXPECT(e_push_range(h, &clip, 0, clip.n_pkts, &got, NULL) == GST_FLOW_OK);
    DF_EXPECT(gst_harness_push_event(h, gst_event_new_eos()));
    e_pull_all(h, &got, NULL);
    int warnings = 0, errors = 0;
    for (GstMessage *m; (m = gst_bus_pop(bus));) {
        warnings += GST_MESSAGE_TYPE(m) == GST_MESSAGE_WARNING;
        errors += GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR;
        gst_message_unref(m);
    }
    DF_EXPECT_MSG(warnings > 0, "no warning for a corrupt stream");
    DF_EXPECT_EQ_INT(errors, 0);
    DF_EXPECT_MSG(got.n >= clip.n_pkts * 3 / 4, "%d frames out of %d packets", got.n, clip.n_pkts);
    gst_element_set_bus(h->element, NULL);
    gst_object_unref(bus);
    gst_harness_teardown(h);
    t_sums_free(&got);
    t_clip_free(&clip);
}

/* The bus holds an error whose debug text contains `needle`. */
static void expect_error_saying(GstBus *bus, const char *needle, const char *what)
{
    GstMessage *m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
    DF_EXPECT_MSG(m != NULL, "no error message for %s", what);
    if (!m)
        return;
    GError *err = NULL;
    gchar *dbg = NULL;
    gst_message_parse_error(m, &err, &dbg);
    DF_EXPECT_MSG(dbg && strstr(dbg, needle), "the error for %s does not say \"%s\": %s", what,
                  needle, dbg ? dbg : "");
    g_clear_error(&err);
    g_free(dbg);
    gst_message_unref(m);
}

DF_TEST(Element, FilterGoodAndBad)
{
    INIT_OR_SKIP();
    /* A bad description: PAUSED fails with an element error, no crash. */
    GstElement *e = gst_element_factory_make("dfdec", NULL);
    DF_ASSERT(e);
    GstBus *bus = gst_bus_new();
    gst_element_set_bus(e, bus);
    g_object_set(e, "filter", "nosuchfilter=1", NULL);
    DF_EXPECT(gst_element_set_state(e, GST_STATE_PAUSED) == GST_STATE_CHANGE_FAILURE);
    expect_error_saying(bus, "nosuchfilter", "a bad filter");
    gst_element_set_state(e, GST_STATE_NULL);
    gst_element_set_bus(e, NULL);
    gst_object_unref(bus);
    gst_object_unref(e);

    /* A good one runs as band tasks and matches libavfilter's output. */
    TClip clip;
    TSums ref = {0};
    DF_ASSERT(t_clip_load("h264_cabac_slices8.mkv", &clip) == 0);
    DF_ASSERT(t_ref_decode(&clip, "hflip", AV_PIX_FMT_NONE, &ref) == 0);
    for (int i = 0; i < ref.n; i++)
        ref.v[i].pts = av_rescale_q(ref.v[i].pts, clip.tb, (AVRational){1, GST_SECOND});
    const char *props[] = {"filter", "hflip", NULL};
    check_exact(&clip, &ref, props, true, false, "hflip");
    t_sums_free(&ref);
    t_clip_free(&clip);
}

/* Filters judged by the stream they run on: a crop larger than any
 * nominal size (the check at PAUSED ran the graph on 320x240, the open on
 * 64x64, and refused crop=400:300 of a 640x360 stream); a graph whose
 * pictures are made anew by framesync (no opaque, its own time base: every
 * picture was lost, "No valid frames decoded"); and a graph that changes
 * the frame rate, refused with an error that says so (dfdec puts out one
 * picture per input frame; yadif=1 lost every second field silently).
 * fps=25 on a 25 fps stream keeps every picture (it lost the last one
 * while the graph's EOF carried no end time). */
DF_TEST(Element, FiltersOnTheStreamsSize)
{
    INIT_OR_SKIP();
    TClip clip;
    DF_ASSERT(t_clip_load("h264_cabac_slices8.mkv", &clip) == 0); /* 640x360 */
    static const char *const good[] = {"crop=400:300", "split[a][b];[a][b]hstack", "fps=25"};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        TSums ref = {0}, got = {0};
        DF_ASSERT(t_ref_decode(&clip, good[i], AV_PIX_FMT_NONE, &ref) == 0 && ref.n > 8);
        const char *props[] = {"filter", good[i], NULL};
        GstHarness *h = e_harness(&clip, props);
        DF_ASSERT(h);
        e_push_range(h, &clip, 0, clip.n_pkts, &got, NULL);
        eos_and_expect_pictures(h, &ref, &got, good[i]);
        gst_harness_teardown(h);
        t_sums_free(&ref);
        t_sums_free(&got);
    }

    const char *props[] = {"filter", "yadif=mode=1", NULL};
    GstHarness *h = e_harness(&clip, props);
    DF_ASSERT(h);
    GstBus *bus = gst_bus_new();
    gst_element_set_bus(h->element, bus);
    /* The caps carry the stream: the decoder opens and refuses the graph. */
    const GstFlowReturn flow = gst_harness_push(h, e_clip_buffer(&clip, 0));
    DF_EXPECT_MSG(flow != GST_FLOW_OK, "a rate-changing filter decoded (flow %d)", flow);
    expect_error_saying(bus, "frame rate", "a filter that changes the frame rate");
    gst_element_set_bus(h->element, NULL);
    gst_object_unref(bus);
    gst_harness_teardown(h);
    t_clip_free(&clip);
}

DF_TEST(Element, TraceFile)
{
    INIT_OR_SKIP();
    TClip clip;
    TSums ref = {0};
    DF_ASSERT(t_clip_load("h264_cabac_slices8.mkv", &clip) == 0);
    DF_ASSERT(e_ref(&clip, &ref) == 0);
    char path[] = "/tmp/dfdec-trace-XXXXXX";
    int fd = mkstemp(path);
    DF_ASSERT(fd >= 0);
    close(fd);
    const char *props[] = {"trace-file", path, NULL};
    check_exact(&clip, &ref, props, true, false, "traced");
    gchar *text = NULL;
    gsize len = 0;
    DF_EXPECT(g_file_get_contents(path, &text, &len, NULL));
    DF_EXPECT_MSG(text && strstr(text, "traceEvents") && len > 1000, "trace of %zu bytes",
                  (size_t)len);
    g_free(text);
    unlink(path);

    /* A trace path that cannot be written: PAUSED fails with an error. */
    GstElement *e = gst_element_factory_make("dfdec", NULL);
    GstBus *bus = gst_bus_new();
    gst_element_set_bus(e, bus);
    g_object_set(e, "trace-file", "/nonexistent-dir/trace.json", NULL);
    DF_EXPECT(gst_element_set_state(e, GST_STATE_PAUSED) == GST_STATE_CHANGE_FAILURE);
    GstMessage *m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
    DF_EXPECT_MSG(m != NULL, "no error for an unwritable trace-file");
    if (m)
        gst_message_unref(m);
    gst_element_set_state(e, GST_STATE_NULL);
    gst_element_set_bus(e, NULL);
    gst_object_unref(bus);
    gst_object_unref(e);
    t_sums_free(&ref);
    t_clip_free(&clip);
}

/* Decode the clip through a traced harness; the D nodes' deadlines
 * relative to their creation (ns) go to `rel` (DF_NO_DEADLINE: none). */
static int decode_traced(const TClip *clip, gboolean with_clock, double rate, GstClockTime now,
                         GstClockTime latency, TSums *got, int64_t **rel, int *n_rel)
{
    char path[] = "/tmp/dfdec-deadline-XXXXXX";
    int fd = mkstemp(path);
    DF_EXPECT(fd >= 0);
    if (fd < 0)
        return -1;
    close(fd);
    const char *props[] = {"trace-file", path, NULL};
    GstHarness *h = e_harness(clip, props);
    DF_EXPECT(h != NULL);
    if (!h) {
        unlink(path);
        return -1;
    }
    gst_harness_add_propose_allocation_meta(h, GST_VIDEO_META_API_TYPE, NULL);
    if (with_clock) {
        /* The harness element plays on a GstTestClock, base time 0. */
        gst_harness_use_testclock(h);
        gst_element_set_base_time(h->element, 0);
        DF_EXPECT(gst_harness_set_time(h, now));
        DF_EXPECT(gst_harness_push_upstream_event(h, gst_event_new_latency(latency)));
    } else {
        gst_element_set_clock(h->element, NULL);
    }
    if (rate != 1.0) {
        GstSegment seg;
        gst_segment_init(&seg, GST_FORMAT_TIME);
        seg.rate = rate;
        DF_EXPECT(gst_harness_push_event(h, gst_event_new_segment(&seg)));
    }
    DF_EXPECT(GST_STATE(h->element) == GST_STATE_PLAYING);
    GstFlowReturn flow = e_push_range(h, clip, 0, clip->n_pkts, got, NULL);
    DF_EXPECT_MSG(flow == GST_FLOW_OK, "flow %s", gst_flow_get_name(flow));
    DF_EXPECT(gst_harness_push_event(h, gst_event_new_eos()));
    e_pull_all(h, got, NULL);
    gst_harness_teardown(h); /* writes the trace */

    DfTrace t = {0};
    DfError err = {0};
    int ret = df_trace_read_json(path, &t, &err);
    unlink(path);
    DF_EXPECT_MSG(ret == 0, "trace: %s", err.msg);
    if (ret < 0)
        return -1;
    *rel = calloc(t.n_events ? t.n_events : 1, sizeof(**rel));
    *n_rel = 0;
    for (size_t i = 0; i < t.n_events && *rel; i++) {
        const DfTraceEvent *e = &t.events[i];
        if (e->module < 0 || e->module >= t.n_modules || strcmp(t.module_names[e->module], "D"))
            continue;
        (*rel)[(*n_rel)++] =
            e->deadline == DF_NO_DEADLINE ? DF_NO_DEADLINE : e->deadline - e->created_ns;
    }
    df_trace_free(&t);
    return 0;
}

/* With a running clock, every frame's D task carries the time at which the
 * sink renders the frame: base time + running time + pipeline latency, in
 * CLOCK_MONOTONIC.  The test clock stands still at `now`, so a frame of
 * PTS p is due (p + latency - now) after its packet was sent.  Without a
 * clock, or at a rate other than 1.0, no deadlines; exact output in every
 * case. */
DF_TEST(Element, DeadlinesFollowTheClock)
{
    INIT_OR_SKIP();
    TClip clip;
    TSums ref = {0};
    DF_ASSERT(t_clip_load("h264_cabac_slices8.mkv", &clip) == 0);
    DF_ASSERT(e_ref(&clip, &ref) == 0);
    DF_ASSERT(ref.n > 0);
    int64_t pmin = ref.v[0].pts, pmax = ref.v[0].pts;
    for (int i = 1; i < ref.n; i++) {
        pmin = ref.v[i].pts < pmin ? ref.v[i].pts : pmin;
        pmax = ref.v[i].pts > pmax ? ref.v[i].pts : pmax;
    }
    char msg[256];
    const int64_t now = GST_SECOND, latency = 10 * GST_SECOND;
    static const struct {
        gboolean clock;
        double rate;
    } cases[] = {{TRUE, 1.0}, {FALSE, 1.0}, {TRUE, 2.0}};
    for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
        const gboolean with_clock = cases[c].clock && cases[c].rate == 1.0;
        TSums got = {0};
        int64_t *rel = NULL;
        int n = 0;
        decode_traced(&clip, cases[c].clock, cases[c].rate, now, latency, &got, &rel, &n);
        DF_EXPECT_MSG(t_sums_compare(&ref, &got, msg, sizeof(msg)) == 0, "case %zu: %s", c, msg);
        DF_EXPECT_MSG(n >= ref.n, "case %zu: %d D tasks traced for %d frames", c, n, ref.n);
        /* Generous bounds: a node is created after its packet was sent
         * (at most by seconds under sanitizers), never before. */
        const int64_t lo = pmin + latency - now - 5 * (int64_t)GST_SECOND;
        const int64_t hi = pmax + latency - now + 100 * (int64_t)GST_MSECOND;
        int none = 0, outside = 0;
        int64_t worst = 0;
        for (int i = 0; i < n; i++) {
            if (rel[i] == DF_NO_DEADLINE) {
                none++;
            } else if (rel[i] < lo || rel[i] > hi) {
                outside++;
                worst = rel[i];
            }
        }
        if (with_clock) {
            DF_EXPECT_MSG(none == 0, "%d of %d D tasks without a deadline", none, n);
            DF_EXPECT_MSG(outside == 0,
                          "%d of %d D deadlines outside [%" PRId64 ", %" PRId64
                          "] ns after creation, e.g. %" PRId64,
                          outside, n, lo, hi, worst);
        } else {
            DF_EXPECT_MSG(none == n, "case %zu: %d of %d D tasks with a deadline", c, n - none, n);
        }
        free(rel);
        t_sums_free(&got);
    }
    t_sums_free(&ref);
    t_clip_free(&clip);
}
/* Bad string properties: PAUSED fails with one element error that names
 * the value (a trace path that cannot be written, a filter that does not
 * parse), never a crash; bad enum nicks leave the property as it was. */
DF_TEST(Element, BadPropertyValuesFailTheStateChange)
{
    INIT_OR_SKIP();
    char dir[] = "/tmp/dfdec-bad-XXXXXX";
    DF_ASSERT(mkdtemp(dir));
    const struct {
        const char *prop, *value;
        const char *says; /* in the error's debug text */
    } bad[] = {
        {"trace-file", "/nonexistent-dir/trace.json", "/nonexistent-dir/trace.json"},
        {"trace-file", "/proc/x/y", "/proc/x/y"},
        {"trace-file", dir, "Is a directory"},
        {"filter", "nosuchfilter=1", "nosuchfilter"},
        {"filter", "scale=w=", "scale=w="},
        {"filter", ",", ","},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        GstElement *e = gst_element_factory_make("dfdec", NULL);
        DF_ASSERT(e);
        GstBus *bus = gst_bus_new();
        gst_element_set_bus(e, bus);
        g_object_set(e, bad[i].prop, bad[i].value, NULL);
        DF_EXPECT_MSG(gst_element_set_state(e, GST_STATE_PAUSED) == GST_STATE_CHANGE_FAILURE,
                      "case %zu (%s=%s): PAUSED did not fail", i, bad[i].prop, bad[i].value);
        GstMessage *m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
        DF_EXPECT_MSG(m != NULL, "case %zu (%s=%s): no error message", i, bad[i].prop,
                      bad[i].value);
        if (m) {
            GError *err = NULL;
            gchar *dbg = NULL;
            gst_message_parse_error(m, &err, &dbg);
            DF_EXPECT_MSG(dbg && strstr(dbg, bad[i].says), "case %zu: \"%s\" not in: %s", i,
                          bad[i].says, dbg ? dbg : "");
            g_clear_error(&err);
            g_free(dbg);
            gst_message_unref(m);
        }
        gst_element_set_state(e, GST_STATE_NULL);
        gst_element_set_bus(e, NULL);
        gst_object_unref(bus);
        gst_object_unref(e);
    }
    /* The failed starts left nothing in the directory. */
    DF_EXPECT(rmdir(dir) == 0);

    /* Unknown nicks (gst-launch's path): the property keeps its value.
     * ("" is not among them: GStreamer's enum parser reads it as the
     * number 0, before the element sees it.) */
    GstElement *e = gst_element_factory_make("dfdec", NULL);
    DF_ASSERT(e);
    const char *const enums[][2] = {{"policy", "bogus"}, {"threading", "4x"}, {"policy", "-"}};
    for (size_t i = 0; i < G_N_ELEMENTS(enums); i++) {
        gint before = 0, after = 0;
        g_object_get(e, enums[i][0], &before, NULL);
        gst_util_set_object_arg(G_OBJECT(e), enums[i][0], enums[i][1]);
        g_object_get(e, enums[i][0], &after, NULL);
        DF_EXPECT_MSG(before == after, "%s=%s changed %d to %d", enums[i][0], enums[i][1], before,
                      after);
    }
    /* "" means none, for both strings. */
    g_object_set(e, "trace-file", "", "filter", "", NULL);
    gchar *trace = NULL, *filter = NULL;
    g_object_get(e, "trace-file", &trace, "filter", &filter, NULL);
    DF_EXPECT(trace == NULL && filter == NULL);
    g_free(trace);
    g_free(filter);
    gst_object_unref(e);
}

/* ---- a real pipeline: seeks ---------------------------------------- */

typedef struct SeekCount {
    pthread_mutex_t lock;
    int buffers;
    GstClockTime min_pts;
} SeekCount;

static void on_handoff(GstElement *sink, GstBuffer *buf, GstPad *pad, gpointer user)
{
    SeekCount *c = user;
    pthread_mutex_lock(&c->lock);
    c->buffers++;
    if (GST_BUFFER_PTS_IS_VALID(buf) && GST_BUFFER_PTS(buf) < c->min_pts)
        c->min_pts = GST_BUFFER_PTS(buf);
    pthread_mutex_unlock(&c->lock);
}

static bool wait_for(GstBus *bus, GstMessageType type, const char *what)
{
    GstMessage *m = gst_bus_timed_pop_filtered(bus, 20 * GST_SECOND, type | GST_MESSAGE_ERROR);
    bool ok = m && GST_MESSAGE_TYPE(m) == type;
    if (m && GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR) {
        GError *err = NULL;
        gst_message_parse_error(m, &err, NULL);
        DF_EXPECT_MSG(false, "%s: error %s", what, err->message);
        g_clear_error(&err);
    } else if (!m) {
        DF_EXPECT_MSG(false, "%s: timed out", what);
    }
    if (m)
        gst_message_unref(m);
    return ok;
}

DF_TEST(Element, SeeksInPipeline)
{
    INIT_OR_SKIP();
    /* A whole pipeline's threads synchronise inside uninstrumented
     * GStreamer; the harness tests cover dfdec's own threads under TSan. */
    if (t_under_tsan())
        DF_SKIP("GStreamer's pipeline threads are opaque to ThreadSanitizer");
    gchar *desc = g_strdup_printf("filesrc location=%s/h264_cabac_slices8.mkv ! parsebin ! dfdec ! "
                                  "fakesink name=sink sync=false signal-handoffs=true",
                                  df_test_media_dir());
    GError *err = NULL;
    GstElement *p = gst_parse_launch(desc, &err);
    g_free(desc);
    DF_ASSERT_MSG(p, "pipeline: %s", err ? err->message : "?");
    SeekCount c;
    pthread_mutex_init(&c.lock, NULL);
    c.buffers = 0;
    c.min_pts = GST_CLOCK_TIME_NONE;
    GstElement *sink = gst_bin_get_by_name(GST_BIN(p), "sink");
    g_signal_connect(sink, "handoff", G_CALLBACK(on_handoff), &c);
    g_signal_connect(sink, "preroll-handoff", G_CALLBACK(on_handoff), &c);
    GstBus *bus = gst_element_get_bus(p);
    gst_element_set_state(p, GST_STATE_PAUSED);
    DF_ASSERT(wait_for(bus, GST_MESSAGE_ASYNC_DONE, "preroll"));
    const gint64 targets[] = {320, 0, 640, 160, 480};
    for (size_t i = 0; i < G_N_ELEMENTS(targets); i++) {
        pthread_mutex_lock(&c.lock);
        c.buffers = 0;
        c.min_pts = GST_CLOCK_TIME_NONE;
        pthread_mutex_unlock(&c.lock);
        DF_ASSERT(gst_element_seek_simple(p, GST_FORMAT_TIME,
                                          GST_SEEK_FLAG_FLUSH | GST_SEEK_FLAG_ACCURATE,
                                          targets[i] * GST_MSECOND));
        DF_ASSERT(wait_for(bus, GST_MESSAGE_ASYNC_DONE, "seek"));
        pthread_mutex_lock(&c.lock);
        DF_EXPECT_MSG(c.buffers >= 1 && c.min_pts >= (GstClockTime)targets[i] * GST_MSECOND,
                      "seek to %" G_GINT64_FORMAT " ms: %d buffers, first pts %" GST_TIME_FORMAT,
                      targets[i], c.buffers, GST_TIME_ARGS(c.min_pts));
        pthread_mutex_unlock(&c.lock);
    }
    pthread_mutex_lock(&c.lock);
    c.buffers = 0;
    pthread_mutex_unlock(&c.lock);
    gst_element_set_state(p, GST_STATE_PLAYING);
    DF_EXPECT(wait_for(bus, GST_MESSAGE_EOS, "play to the end"));
    pthread_mutex_lock(&c.lock);
    /* From the last seek target (480 ms = frame 12) to the end (24 frames). */
    DF_EXPECT_MSG(c.buffers >= 11, "%d buffers after the last seek", c.buffers);
    pthread_mutex_unlock(&c.lock);
    gst_element_set_state(p, GST_STATE_NULL);
    gst_object_unref(bus);
    gst_object_unref(sink);
    gst_object_unref(p);
    pthread_mutex_destroy(&c.lock);
}
