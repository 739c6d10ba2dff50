/* dfplay's window under Xvfb: a screenshot matches the decoded frame at
 * that time, synthetic keys (pause, step, seek, overlay, quit) do what they
 * say, the summary is consistent; no display gives one clear line. */
#include "bench_util.h"
#include "dftest.h"
#include "xvfb_util.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CLIP "play_h264_10s.mkv"
#define W    320
#define H    240

static const char *dfplay(void)
{
    return getenv("DF_DFPLAY");
}

/* Run dfplay on a private Xvfb with `args` (NULL-terminated). */
static DfRun run_xvfb(const char *const *args)
{
    DfRun r = {.status = -1};
    DfXvfb x;
    char *why = NULL;
    if (!df_test_xvfb_start(&x, "1024x768x24", &why)) {
        r.err = why;
        return r;
    }
    const char *argv[32] = {dfplay()};
    int n = 1;
    for (int i = 0; args[i] && n < 31; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    const char *env[] = {x.display_env, NULL};
    r = df_test_run(argv, env);
    df_test_xvfb_stop(&x);
    return r;
}

static uint8_t *read_ppm(const char *path, int *w, int *h)
{
    gchar *data = NULL;
    gsize len = 0;
    if (!g_file_get_contents(path, &data, &len, NULL))
        return NULL;
    int maxv = 0, off = 0;
    if (sscanf(data, "P6 %d %d %d%n", w, h, &maxv, &off) != 3 || maxv != 255 ||
        (gsize)(off + 1 + *w * *h * 3) > len) {
        g_free(data);
        return NULL;
    }
    uint8_t *px = g_memdup2(data + off + 1, (gsize)(*w * *h * 3));
    g_free(data);
    return px;
}

/* The frame at `secs` as RGB24 by the ffmpeg CLI (accurate seek). */
static uint8_t *ffmpeg_frame(const char *clip, double secs)
{
    gchar *out = g_strdup_printf("/tmp/dfplay-ref-%d.rgb", (int)getpid());
    gchar *ss = g_strdup_printf("%.3f", secs);
    gchar *ff = g_find_program_in_path("ffmpeg");
    const char *argv[] = {ff,         "-nostdin", "-v",    "error",     "-y", "-i",
                          clip,       "-ss",      ss,      "-frames:v", "1",  "-f",
                          "rawvideo", "-pix_fmt", "rgb24", out,         NULL};
    DfRun r = df_test_run(argv, NULL);
    gchar *data = NULL;
    gsize len = 0;
    uint8_t *px = NULL;
    if (r.status == 0 && g_file_get_contents(out, &data, &len, NULL) && len == W * H * 3)
        px = (uint8_t *)data;
    else
        g_free(data);
    df_run_clear(&r);
    g_unlink(out);
    g_free(out);
    g_free(ss);
    g_free(ff);
    return px;
}

static double mean_abs_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += abs((int)a[i] - (int)b[i]);
    return s / (double)n;
}

DF_TEST(DfplaySdl, ScreenshotMatchesTheDecodedFrame)
{
    if (!dfplay())
        DF_SKIP("DF_DFPLAY not set (run through meson test)");
    if (!df_test_xvfb_available())
        DF_SKIP("Xvfb is not installed");
    gchar *clip = g_build_filename(df_test_media_dir(), CLIP, NULL);
    gchar *shot = g_strdup_printf("/tmp/dfplay-shot-%d.ppm", (int)getpid());
    const char *args[] = {"--vo", "sdl",      "--screenshot", shot, "--screenshot-pts",
                          "1.2",  "--frames", "50",           clip, NULL};
    DfRun r = run_xvfb(args);
    DF_ASSERT_MSG(r.spawned, "%s", r.err ? r.err : "");
    DF_EXPECT_MSG(r.status == 0, "dfplay exited %d: %s", r.status, r.err);
    DF_EXPECT_MSG(r.err && strstr(r.err, "screenshot of the frame at 1.200 s"), "stderr: %s",
                  r.err ? r.err : "");
    df_run_clear(&r);
    int w = 0, h = 0;
    uint8_t *got = read_ppm(shot, &w, &h);
    DF_ASSERT_MSG(got, "no readable screenshot %s", shot);
    DF_EXPECT_EQ_INT(w, W);
    DF_EXPECT_EQ_INT(h, H);
    uint8_t *ref = ffmpeg_frame(clip, 1.2), *other = ffmpeg_frame(clip, 1.8);
    DF_ASSERT(ref && other);
    /* SDL's YUV->RGB and swscale's differ by rounding: close, not equal;
     * and much closer to the right frame than to another one. */
    const double d = mean_abs_diff(got, ref, W * H * 3);
    const double d_other = mean_abs_diff(got, other, W * H * 3);
    DF_EXPECT_MSG(d < 4.0, "screenshot vs frame at 1.2 s: mean |diff| %.2f", d);
    DF_EXPECT_MSG(d_other > 2 * d, "screenshot vs another frame: %.2f (right frame %.2f)", d_other,
                  d);
    g_free(got);
    g_free(ref);
    g_free(other);
    g_unlink(shot);
    g_free(shot);
    g_free(clip);
}

static double seek_landing(const char *err, int nth, double *target)
{
    const char *p = err;
    for (int i = 0; p && i <= nth; i++) {
        p = strstr(p, "dfplay: seek to ");
        if (p && i < nth)
            p++;
    }
    double t = -1, at = -1;
    if (p && sscanf(p, "dfplay: seek to %lf s, first frame shown at %lf s", &t, &at) == 2) {
        *target = t;
        return at;
    }
    return -1;
}

DF_TEST(DfplaySdl, KeysPauseStepSeekOverlayQuit)
{
    if (!dfplay())
        DF_SKIP("DF_DFPLAY not set (run through meson test)");
    if (!df_test_xvfb_available())
        DF_SKIP("Xvfb is not installed");
    gchar *clip = g_build_filename(df_test_media_dir(), CLIP, NULL);
    const char *args[] = {"--vo",
                          "sdl",
                          "--stats",
                          "--test-keys",
                          "0.3:space,0.6:s,0.8:s,1.0:space,1.3:right,2.0:left,2.3:o,2.8:q",
                          clip,
                          NULL};
    DfRun r = run_xvfb(args);
    DF_ASSERT_MSG(r.spawned, "%s", r.err ? r.err : "");
    DF_EXPECT_MSG(r.status == 0, "dfplay exited %d: %s", r.status, r.err);
    const char *err = r.err ? r.err : "";
    /* Seeks land on the target (decode forward from the keyframe). */
    double t0 = 0, t1 = 0;
    const double at0 = seek_landing(err, 0, &t0), at1 = seek_landing(err, 1, &t1);
    DF_EXPECT_MSG(at0 >= 0 && fabs(at0 - t0) < 0.041 && t0 > 5.0, "right: %s", err);
    DF_EXPECT_MSG(at1 >= 0 && fabs(at1 - t1) < 0.041 && t1 < t0, "left: %s", err);
    /* Quit at 2.8 s of a 10 s clip: not every frame shown; the summary
     * agrees with itself. */
    long shown = -1, dropped = -1, decoded = -1;
    gchar **lines = g_strsplit_set(err, "\r\n", -1);
    for (int i = 0; lines[i] && shown < 0; i++)
        if (sscanf(lines[i], "dfplay: %ld frames shown, %ld dropped late, %ld decoded", &shown,
                   &dropped, &decoded) != 3)
            shown = -1;
    g_strfreev(lines);
    DF_EXPECT_MSG(shown > 10 && shown < 250 && dropped >= 0 && decoded >= shown + dropped - 1,
                  "summary: shown %ld, dropped %ld, decoded %ld: %s", shown, dropped, decoded, err);
    DF_EXPECT(strstr(err, "display jitter p50") != NULL);
    DF_EXPECT(strstr(err, "decoded ") && strstr(err, "fps,"));
    df_run_clear(&r);
    g_free(clip);
}

/* A TS whose timestamps jump 50 s (two recordings joined): the player
 * takes the jump out, and a seek in the window goes back to the input's
 * time with the offset in force at the target, not the current one (the
 * window decodes ahead: it had passed the jump, and the seek went 50 s
 * past the end, showing nothing more). */
DF_TEST(DfplaySdl, SeekBackOverATimestampJump)
{
    if (!dfplay())
        DF_SKIP("DF_DFPLAY not set (run through meson test)");
    if (!df_test_xvfb_available())
        DF_SKIP("Xvfb is not installed");
    gchar *clip = g_build_filename(df_test_media_dir(), "h264_joined.ts", NULL);
    const char *args[] = {"--vo", "sdl", "--test-keys", "0.5:left,1.5:q", clip, NULL};
    DfRun r = run_xvfb(args);
    DF_ASSERT_MSG(r.spawned, "%s", r.err ? r.err : "");
    DF_EXPECT_MSG(r.status == 0, "dfplay exited %d: %s", r.status, r.err);
    double t = 0;
    const double at = seek_landing(r.err ? r.err : "", 0, &t);
    DF_EXPECT_MSG(at >= 0 && fabs(at - t) < 0.041, "the seek back did not land: %s", r.err);
    df_run_clear(&r);
    g_free(clip);
}

DF_TEST(DfplaySdl, NoDisplayIsOneClearLine)
{
    if (!dfplay())
        DF_SKIP("DF_DFPLAY not set (run through meson test)");
    if (getenv("DISPLAY") || getenv("WAYLAND_DISPLAY"))
        DF_SKIP("a display is set");
    gchar *clip = g_build_filename(df_test_media_dir(), CLIP, NULL);
    const char *argv[] = {dfplay(), "--vo", "sdl", clip, NULL};
    const char *env[] = {"SDL_VIDEODRIVER=x11", NULL};
    DfRun r = df_test_run(argv, env);
    DF_EXPECT(r.status != 0);
    DF_EXPECT_MSG(r.err && strstr(r.err, "dfplay: error: no display for --vo sdl"), "stderr: %s",
                  r.err ? r.err : "");
    df_run_clear(&r);
    const char *argv2[] = {dfplay(), "--vo", "sdl", "/nonexistent.mkv", NULL};
    r = df_test_run(argv2, env);
    DF_EXPECT(r.status != 0);
    DF_EXPECT_MSG(r.err && strstr(r.err, "cannot open /nonexistent.mkv"), "stderr: %s",
                  r.err ? r.err : "");
    df_run_clear(&r);
    g_free(clip);
}
