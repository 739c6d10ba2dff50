/* dfdec chosen by autoplugging: with GST_PLUGIN_FEATURE_RANK=dfdec:257 in
 * the environment (set by meson, before gst_init) uridecodebin and playbin
 * pick dfdec over every other decoder and decode H.264, HEVC and MPEG-2
 * clips to EOS, every frame's md5 and pts equal to single-threaded
 * libavcodec's. */
#include "dftest.h"
#include "element_util.h"

#include <gst/app/gstappsink.h>
#include <stdlib.h>
#include <string.h>

/* PRIMARY + 1, as docs/dfdec.md tells users to set it. */
#define WANT_RANK    (GST_RANK_PRIMARY + 1)
#define PULL_TIMEOUT (60 * GST_SECOND)

static const char *const clips[] = {"h264_cabac_slices8.mkv", "hevc_wpp8.mkv", "mpeg2_prog.mkv"};

static bool init(void)
{
    static int state; /* 0 not yet, 1 ok, -1 failed */
    if (!state) {
        gst_init(NULL, NULL);
        state = getenv("DF_GST_PLUGIN") ? 1 : -1;
    }
    return state > 0;
}

/* Every decoder the pipeline instantiated, space-separated. */
static void on_element(GstBin *bin, GstBin *sub, GstElement *e, gpointer data)
{
    GString *decoders = data;
    GstElementFactory *f = gst_element_get_factory(e);
    const char *klass = f ? gst_element_factory_get_metadata(f, GST_ELEMENT_METADATA_KLASS) : NULL;
    if (klass && strstr(klass, "Codec/Decoder"))
        g_string_append_printf(decoders, "%s ", GST_OBJECT_NAME(f));
}

static void on_pad_added(GstElement *src, GstPad *pad, gpointer sink)
{
    GstPad *sinkpad = gst_element_get_static_pad(GST_ELEMENT(sink), "sink");
    if (!gst_pad_is_linked(sinkpad))
        gst_pad_link(pad, sinkpad);
    gst_object_unref(sinkpad);
}

/* Run `pipeline` to EOS, summing every picture that reaches `sink`. */
static void run_to_eos(const char *clip, GstElement *pipeline, GstElement *sink, TSums *got)
{
    DF_ASSERT_MSG(gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE,
                  "%s: the pipeline does not start", clip);
    GstBus *bus = gst_element_get_bus(pipeline);
    for (;;) {
        GstSample *s = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), PULL_TIMEOUT);
        if (!s) {
            GstMessage *m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
            if (m) {
                GError *err = NULL;
                gchar *dbg = NULL;
                gst_message_parse_error(m, &err, &dbg);
                DF_EXPECT_MSG(false, "%s: error from %s: %s (%s)", clip,
                              GST_OBJECT_NAME(GST_MESSAGE_SRC(m)), err->message, dbg ? dbg : "");
                g_clear_error(&err);
                g_free(dbg);
                gst_message_unref(m);
            } else {
                DF_EXPECT_MSG(gst_app_sink_is_eos(GST_APP_SINK(sink)),
                              "%s: no picture and no EOS for 60 s", clip);
            }
            break;
        }
        TSum sum;
        DF_EXPECT_MSG(e_buffer_sum(gst_sample_get_buffer(s), gst_sample_get_caps(s), &sum) == 0,
                      "%s: cannot read a picture", clip);
        t_sums_push(got, &sum);
        gst_sample_unref(s);
    }
    gst_object_unref(bus);
    gst_element_set_state(pipeline, GST_STATE_NULL);
}

static GstElement *make_sink(void)
{
    GstElement *sink = gst_element_factory_make("appsink", NULL);
    if (sink)
        g_object_set(sink, "sync", FALSE, "max-buffers", 4, NULL);
    return sink;
}

/* Decode `clip` with `how` ("uridecodebin" or "playbin") and compare. */
static void check_clip(const char *name, const char *how)
{
    TClip clip;
    TSums ref = {0}, got = {0};
    DF_ASSERT_MSG(t_clip_load(name, &clip) == 0, "cannot load %s", name);
    DF_ASSERT(e_ref(&clip, &ref) == 0 && ref.n >= 8);
    gchar *path = g_build_filename(df_test_media_dir(), name, NULL);
    gchar *uri = gst_filename_to_uri(path, NULL);
    GString *decoders = g_string_new(NULL);
    GstElement *pipeline = NULL, *sink = make_sink();
    DF_ASSERT(uri && sink);
    if (strcmp(how, "playbin") == 0) {
        pipeline = gst_element_factory_make("playbin", NULL);
        DF_ASSERT(pipeline);
        /* Video only, in the decoder's own format: no converter between
         * dfdec and the sink. */
        g_object_set(pipeline, "uri", uri, "video-sink", sink, NULL);
        gst_util_set_object_arg(G_OBJECT(pipeline), "flags", "video+native-video");
    } else {
        pipeline = gst_pipeline_new(NULL);
        GstElement *src = gst_element_factory_make("uridecodebin", NULL);
        DF_ASSERT(pipeline && src);
        g_object_set(src, "uri", uri, NULL);
        gst_bin_add_many(GST_BIN(pipeline), src, sink, NULL);
        g_signal_connect(src, "pad-added", G_CALLBACK(on_pad_added), sink);
    }
    g_signal_connect(pipeline, "deep-element-added", G_CALLBACK(on_element), decoders);
    run_to_eos(name, pipeline, sink, &got);
    DF_EXPECT_MSG(strcmp(decoders->str, "dfdec ") == 0, "%s via %s: decoders [%s], want [dfdec ]",
                  name, how, decoders->str);
    char msg[256];
    DF_EXPECT_MSG(t_sums_compare(&ref, &got, msg, sizeof(msg)) == 0, "%s via %s: %s", name, how,
                  msg);
    gst_object_unref(pipeline);
    g_string_free(decoders, TRUE);
    g_free(uri);
    g_free(path);
    t_sums_free(&got);
    t_sums_free(&ref);
    t_clip_free(&clip);
}

/* The environment's rank reached the registry, on the plugin of this
 * build, and outranks every other decoder of these codecs. */
DF_TEST(ElementAutoplug, RankFromEnvironment)
{
    DF_ASSERT_MSG(init(), "DF_GST_PLUGIN not set (run through meson test)");
    GstElementFactory *f = gst_element_factory_find("dfdec");
    DF_ASSERT_MSG(f, "dfdec is not in the registry (GST_PLUGIN_PATH)");
    DF_EXPECT_EQ_INT(gst_plugin_feature_get_rank(GST_PLUGIN_FEATURE(f)), WANT_RANK);
    GstPlugin *p = gst_plugin_feature_get_plugin(GST_PLUGIN_FEATURE(f));
    DF_ASSERT(p);
    gchar *want = realpath(getenv("DF_GST_PLUGIN"), NULL);
    gchar *have = realpath(gst_plugin_get_filename(p), NULL);
    DF_EXPECT_MSG(want && have && strcmp(want, have) == 0, "dfdec comes from %s, not %s",
                  gst_plugin_get_filename(p), getenv("DF_GST_PLUGIN"));
    free(want);
    free(have);
    /* Truthful metadata: no placeholder origin. */
    DF_EXPECT(strstr(gst_plugin_get_origin(p), "example") == NULL);
    DF_EXPECT(strcmp(gst_plugin_get_license(p), "LGPL") == 0);
    gst_object_unref(p);

    GList *decs = gst_element_factory_list_get_elements(
        GST_ELEMENT_FACTORY_TYPE_DECODER | GST_ELEMENT_FACTORY_TYPE_MEDIA_VIDEO, GST_RANK_NONE);
    GstCaps *h264 = gst_caps_from_string("video/x-h264,stream-format=avc,alignment=au");
    int n = 0;
    for (GList *l = decs; l; l = l->next) {
        GstElementFactory *d = l->data;
        if (d == f || !gst_element_factory_can_sink_any_caps(d, h264))
            continue;
        n++;
        DF_EXPECT_MSG(gst_plugin_feature_get_rank(GST_PLUGIN_FEATURE(d)) < WANT_RANK,
                      "%s has rank %u", GST_OBJECT_NAME(d),
                      gst_plugin_feature_get_rank(GST_PLUGIN_FEATURE(d)));
    }
    g_print("%d other H.264 decoder(s) installed\n", n);
    gst_caps_unref(h264);
    gst_plugin_feature_list_free(decs);
    gst_object_unref(f);
}

DF_TEST(ElementAutoplug, UriDecodeBinExact)
{
    DF_ASSERT_MSG(init(), "DF_GST_PLUGIN not set (run through meson test)");
    for (size_t i = 0; i < G_N_ELEMENTS(clips); i++)
        check_clip(clips[i], "uridecodebin");
}

DF_TEST(ElementAutoplug, PlaybinExact)
{
    DF_ASSERT_MSG(init(), "DF_GST_PLUGIN not set (run through meson test)");
    for (size_t i = 0; i < G_N_ELEMENTS(clips); i++)
        check_clip(clips[i], "playbin");
}
