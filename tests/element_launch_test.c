/* dfdec from the command line: gst-inspect-1.0 shows it, gst-launch-1.0
 * pipelines decode generated clips to the same raw bytes as the ffmpeg CLI,
 * and bad property values are refused with a message. */
#include "bench_util.h"
#include "dftest.h"
#include "xvfb_util.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *plugin_dir(void)
{
    return getenv("DF_GST_PLUGIN_DIR");
}

/* df_test_run() does not search PATH. */
static const char *tool(const char *name)
{
    static gchar *paths[5];
    static const char *names[5] = {"gst-launch-1.0", "gst-inspect-1.0", "ffmpeg", NULL};
    for (int i = 0; names[i]; i++)
        if (strcmp(names[i], name) == 0) {
            if (!paths[i])
                paths[i] = g_find_program_in_path(name);
            return paths[i] ? paths[i] : name;
        }
    return name;
}

static gchar *file_md5(const char *path)
{
    gchar *data = NULL;
    gsize len = 0;
    if (!g_file_get_contents(path, &data, &len, NULL))
        return NULL;
    gchar *sum =
        len ? g_compute_checksum_for_data(G_CHECKSUM_MD5, (const guchar *)data, len) : NULL;
    g_free(data);
    return sum;
}

/* md5 of a file of I420 frames in GStreamer's default layout (rows
 * padded to 4 bytes) repacked as ffmpeg's rawvideo writes them (no
 * padding): the two differ when the width is not a multiple of 8. */
static gchar *gst_i420_md5(const char *path, int w, int h)
{
    gchar *data = NULL;
    gsize len = 0;
    if (!g_file_get_contents(path, &data, &len, NULL))
        return NULL;
    const gsize sy = (gsize)((w + 3) & ~3), cw = (gsize)(w + 1) / 2, ch = (gsize)(h + 1) / 2;
    const gsize sc = (((gsize)(w + 1) & ~(gsize)1) / 2 + 3) & ~(gsize)3;
    const gsize frame = sy * (gsize)((h + 1) & ~1) + 2 * sc * ch;
    GChecksum *sum = g_checksum_new(G_CHECKSUM_MD5);
    gsize n = 0;
    for (gsize off = 0; off + frame <= len; off += frame, n++) {
        const guchar *f = (const guchar *)data + off;
        for (int y = 0; y < h; y++)
            g_checksum_update(sum, f + sy * (gsize)y, (gssize)w);
        const guchar *u = f + sy * (gsize)((h + 1) & ~1);
        for (int p = 0; p < 2; p++, u += sc * ch)
            for (gsize y = 0; y < ch; y++)
                g_checksum_update(sum, u + sc * y, (gssize)cw);
    }
    gchar *out = n && n * frame == len ? g_strdup(g_checksum_get_string(sum)) : NULL;
    g_checksum_free(sum);
    g_free(data);
    return out;
}

DF_TEST(ElementLaunch, InspectShowsMetadata)
{
    if (!plugin_dir())
        DF_SKIP("DF_GST_PLUGIN_DIR not set (run through meson test)");
    gchar *env = g_strdup_printf("GST_PLUGIN_PATH=%s", plugin_dir());
    const char *envs[] = {env, NULL};
    const char *argv[] = {tool("gst-inspect-1.0"), "dfdec", NULL};
    DfRun r = df_test_run(argv, envs);
    DF_ASSERT(r.spawned);
    DF_EXPECT_MSG(r.status == 0, "gst-inspect-1.0 exited %d: %s", r.status, r.err);
    /* The last: the settings that take effect at the next stream. */
    const char *want[] = {"Codec/Decoder/Video",
                          "n-workers",
                          "policy",
                          "cost-local",
                          "threading",
                          "poll-us",
                          "filter",
                          "trace-file",
                          "shared-scheduler",
                          "video/x-h265",
                          "I420_10LE",
                          "changeable only in NULL or READY state"};
    for (size_t i = 0; i < G_N_ELEMENTS(want); i++)
        DF_EXPECT_MSG(r.out && strstr(r.out, want[i]), "gst-inspect output lacks %s", want[i]);
    df_run_clear(&r);
    g_free(env);
}

DF_TEST(ElementLaunch, RawOutputMatchesFfmpeg)
{
    if (!plugin_dir())
        DF_SKIP("DF_GST_PLUGIN_DIR not set (run through meson test)");
    gchar *env = g_strdup_printf("GST_PLUGIN_PATH=%s", plugin_dir());
    const char *envs[] = {env, NULL};
    const char *clips[] = {
        "h264_cabac_slices8.mkv", "hevc_wpp8.mkv",           "mpeg2_prog.mkv",
        "mpeg2_int.mkv",          "h264_cabac_slices8.h264", "hevc_wpp_slices.mkv",
        "h264_crop.mkv",          "hevc_crop.mkv",           "mpeg2_odd.mkv"};
    /* The crop windows' sizes (the other clips' rows need no repacking). */
    const int sizes[][2] = {{0, 0}, {0, 0},     {0, 0},     {0, 0},    {0, 0},
                            {0, 0}, {326, 192}, {324, 196}, {718, 398}};
    gchar *dir = g_dir_make_tmp("dfdec-launch-XXXXXX", NULL);
    DF_ASSERT(dir);
    gchar *a = g_build_filename(dir, "dfdec.yuv", NULL);
    gchar *b = g_build_filename(dir, "ffmpeg.yuv", NULL);
    for (size_t i = 0; i < G_N_ELEMENTS(clips); i++) {
        gchar *in = g_build_filename(df_test_media_dir(), clips[i], NULL);
        gchar *loc_in = g_strdup_printf("location=%s", in);
        gchar *loc_out = g_strdup_printf("location=%s", a);
        const char *gst[] = {tool("gst-launch-1.0"),
                             "-q",
                             "filesrc",
                             loc_in,
                             "!",
                             "parsebin",
                             "!",
                             "dfdec",
                             "!",
                             "videoconvert",
                             "!",
                             "video/x-raw,format=I420",
                             "!",
                             "filesink",
                             loc_out,
                             NULL};
        DfRun r = df_test_run(gst, envs);
        DF_EXPECT_MSG(r.spawned && r.status == 0, "%s: gst-launch-1.0 exited %d: %s", clips[i],
                      r.status, r.err);
        df_run_clear(&r);
        const char *ff[] = {tool("ffmpeg"), "-nostdin",  "-v",      "error", "-y",
                            "-flags",       "unaligned", "-i",      in,      "-f",
                            "rawvideo",     "-pix_fmt",  "yuv420p", b,       NULL};
        r = df_test_run(ff, NULL);
        DF_EXPECT_MSG(r.spawned && r.status == 0, "%s: ffmpeg exited %d: %s", clips[i], r.status,
                      r.err);
        df_run_clear(&r);
        gchar *ma = sizes[i][0] ? gst_i420_md5(a, sizes[i][0], sizes[i][1]) : file_md5(a);
        gchar *mb = file_md5(b);
        DF_EXPECT_MSG(ma && mb && strcmp(ma, mb) == 0, "%s: dfdec %s, ffmpeg %s", clips[i],
                      ma ? ma : "(nothing)", mb ? mb : "(nothing)");
        g_free(ma);
        g_free(mb);
        g_free(loc_in);
        g_free(loc_out);
        g_free(in);
    }
    g_unlink(a);
    g_unlink(b);
    g_rmdir(dir);
    g_free(a);
    g_free(b);
    g_free(dir);
    g_free(env);
}

DF_TEST(ElementLaunch, BadValuesAreRefused)
{
    if (!plugin_dir())
        DF_SKIP("DF_GST_PLUGIN_DIR not set (run through meson test)");
    gchar *env = g_strdup_printf("GST_PLUGIN_PATH=%s", plugin_dir());
    const char *envs[] = {env, NULL};
    gchar *in = g_build_filename(df_test_media_dir(), "h264_cabac_slices8.mkv", NULL);
    gchar *loc = g_strdup_printf("location=%s", in);
    const struct {
        const char *prop, *needle;
    } cases[] = {
        {"policy=nosuch", "policy"},
        {"threading=sideways", "threading"},
        {"filter=nosuchfilter", "nosuchfilter"},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        const char *gst[] = {
            tool("gst-launch-1.0"), "filesrc", loc,        "!", "parsebin", "!", "dfdec",
            cases[i].prop,          "!",       "fakesink", NULL};
        DfRun r = df_test_run(gst, envs);
        DF_EXPECT_MSG(r.spawned && r.status != 0, "%s: accepted (exit %d)", cases[i].prop,
                      r.status);
        DF_EXPECT_MSG((r.err && strstr(r.err, cases[i].needle)) ||
                          (r.out && strstr(r.out, cases[i].needle)),
                      "%s: the message does not name %s: %s %s", cases[i].prop, cases[i].needle,
                      r.out ? r.out : "", r.err ? r.err : "");
        df_run_clear(&r);
    }
    /* Out of range: GLib refuses the value, the pipeline runs on the default. */
    const char *gst[] = {
        tool("gst-launch-1.0"), "filesrc", loc,        "!", "parsebin", "!", "dfdec",
        "n-workers=-3",         "!",       "fakesink", NULL};
    DfRun r = df_test_run(gst, envs);
    DF_EXPECT_MSG(r.err && strstr(r.err, "n-workers"), "no message for n-workers=-3: %s",
                  r.err ? r.err : "");
    df_run_clear(&r);
    g_free(loc);
    g_free(in);
    g_free(env);
}

DF_TEST(ElementLaunch, PlaysOnADisplay)
{
    if (!plugin_dir())
        DF_SKIP("DF_GST_PLUGIN_DIR not set (run through meson test)");
    if (!df_test_xvfb_available())
        DF_SKIP("Xvfb is not installed");
    DfXvfb x;
    char *why = NULL;
    DF_ASSERT_MSG(df_test_xvfb_start(&x, "1280x1024x24", &why), "%s", why);
    gchar *env = g_strdup_printf("GST_PLUGIN_PATH=%s", plugin_dir());
    const char *envs[] = {env, x.display_env, NULL};
    gchar *in = g_build_filename(df_test_media_dir(), "hevc_wpp8.mkv", NULL);
    gchar *loc = g_strdup_printf("location=%s", in);
    const char *argv[] = {tool("gst-launch-1.0"), "filesrc", loc, "!", "parsebin", "!", "dfdec",
                          "!", "videoconvert", "!", "autovideosink", NULL};
    DfRun r = df_test_run(argv, envs);
    DF_EXPECT_MSG(r.spawned && r.status == 0, "autovideosink on Xvfb (%s): exit %d: %s %s",
                  x.display_env, r.status, r.out ? r.out : "", r.err ? r.err : "");
    DF_EXPECT(r.out && strstr(r.out, "Got EOS"));
    df_run_clear(&r);
    df_test_xvfb_stop(&x);
    g_free(loc);
    g_free(in);
    g_free(env);
}

/* tools/demo, the main job, on a clip of each codec (the user's own clip,
 * as its usage says), headless and without its real-time part: it finds
 * the peer for the codec, and both decoders put out every frame.  Built
 * tree as it is (DF_DEMO_BUILD), so that the test builds nothing. */
DF_TEST(ElementLaunch, DemoDecodesAClipOfEachCodec)
{
    const char *demo = getenv("DF_DEMO");
    if (!plugin_dir() || !demo || !getenv("DF_DEMO_BUILD"))
        DF_SKIP("DF_DEMO, DF_DEMO_BUILD not set (run through meson test)");
    const struct {
        const char *clip, *peer;
        int frames;
    } cases[] = {{"h264_cabac_slices8.mkv", "avdec_h264", 24},
                 {"hevc_wpp8.mkv", "avdec_h265", 16},
                 {"mpeg2_prog.mkv", "avdec_mpeg2video", 24}};
    const char *envs[] = {"DF_DEMO_REALTIME=0", "DF_DEMO_SINK=fakevideosink", NULL};
    for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
        gchar *in = g_build_filename(df_test_media_dir(), cases[i].clip, NULL);
        const char *argv[] = {"/bin/bash", demo, in, NULL};
        DfRun r = df_test_run(argv, envs);
        DF_EXPECT_MSG(r.spawned && r.status == 0, "tools/demo %s: exit %d: %s %s", cases[i].clip,
                      r.status, r.out ? r.out : "", r.err ? r.err : "");
        gchar *df = g_strdup_printf("dfdec:    %d frames in ", cases[i].frames);
        gchar *av = g_strdup_printf("%s: %d frames in ", cases[i].peer, cases[i].frames);
        gchar *ratio = g_strdup_printf("ratio:    dfdec / %s = ", cases[i].peer);
        DF_EXPECT_MSG(r.out && strstr(r.out, df) && strstr(r.out, av) && strstr(r.out, ratio),
                      "tools/demo %s: want \"%s\", \"%s\" and \"%s\" in:\n%s", cases[i].clip, df,
                      av, ratio, r.out ? r.out : "");
        DF_EXPECT_MSG(r.out && strstr(r.out, "0 decode errors"), "%s: decode errors",
                      cases[i].clip);
        g_free(ratio);
        g_free(av);
        g_free(df);
        df_run_clear(&r);
        g_free(in);
    }
}
