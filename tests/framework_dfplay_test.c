/* dfplay from the outside: --vo framemd5 prints what `ffmpeg -flags
 * unaligned -threads 1 -f framemd5` prints (the exact crop window), byte for
 * byte; --vo yuv writes what `ffmpeg -f
 * rawvideo` writes; bad input and bad flags give one line and a non-zero
 * status. */
#include "dftest.h"
#include "framework_util.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *dfplay_path(void)
{
    const char *p = getenv("DF_DFPLAY");
    return p && *p ? p : "apps/dfplay/dfplay";
}

typedef struct Result {
    int status;
    gchar *out, *err;
} Result;

static bool run(const char *const *argv, Result *r)
{
    GError *e = NULL;
    gint wait = 0;
    memset(r, 0, sizeof(*r));
    if (!g_spawn_sync(NULL, (gchar **)argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &r->out, &r->err,
                      &wait, &e)) {
        df_test_fail(__FILE__, __LINE__, false, "cannot run %s: %s", argv[0], e->message);
        g_error_free(e);
        return false;
    }
    r->status = WIFEXITED(wait) ? WEXITSTATUS(wait) : 128;
    return true;
}

static void result_free(Result *r)
{
    g_free(r->out);
    g_free(r->err);
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; s && *s; s++)
        n += *s == '\n';
    return n;
}

static void first_difference(const char *a, const char *b, char *msg, size_t len)
{
    int line = 1;
    const char *la = a, *lb = b;
    while (*a && *a == *b) {
        if (*a == '\n') {
            line++;
            la = a + 1;
            lb = b + 1;
        }
        a++;
        b++;
    }
    snprintf(msg, len, "line %d: \"%.*s\" vs ffmpeg \"%.*s\"", line, (int)strcspn(la, "\n"), la,
             (int)strcspn(lb, "\n"), lb);
}

DF_TEST(FrameworkDfplay, Framemd5EqualsFfmpeg)
{
    const char *cases[][4] = {
        /* clip, workers, policy, --filter */
        {"h264_cabac_slices8.mkv", "2", "cost-local"},
        {"h264_cavlc_slices4.mkv", "1", "fifo"},
        {"h264_mbaff.mkv", "3", "steal"},
        {"h264_422.mkv", "2", "cost"},
        {"h264_odd.mkv", "4", "cost-local"},
        {"h264_single.mkv", "2", "cost-local"},
        {"hevc_wpp8.mkv", "2", "steal"},
        {"hevc_wpp10.mkv", "3", "cost-local"},
        {"hevc_wpp_slices.mkv", "2", "fifo"},
        {"hevc_nowpp.mkv", "1", "cost"},
        {"mpeg2_prog.mkv", "2", "cost-local"},
        {"mpeg2_int.mkv", "4", "steal"},
        {"h264_cabac_slices8.h264", "2", "cost"},
        {"mpeg2_prog.m2v", "2", "cost-local"},
        {"h264_crop.mkv", "2", "cost-local"},
        {"hevc_crop.mkv", "3", "steal"},
        {"mpeg2_odd.mkv", "2", "cost"},
        /* Filters that make their own timing: the last picture's duration
         * (fps), the output rate (fps=50, yadif=1 double it), raw streams'
         * pictures without a PTS (timed by the best-effort timestamp). */
        {"h264_single.mkv", "2", "cost-local", "fps=25"},
        {"hevc_wpp8.mkv", "1", "steal", "fps=50"},
        {"mpeg2_int.mkv", "2", "cost", "yadif=mode=1"},
        {"mpeg2_prog.m2v", "2", "cost-local", "fps=25"},
        {"h264_cabac_slices8.h264", "2", "fifo", "fps=12"},
        /* A display matrix: turned as ffmpeg's autorotate turns it, before
         * the user's filter. */
        {"h264_rot90.mp4", "2", "cost-local"},
        {"h264_rot90.mp4", "1", "steal", "hflip"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *filter = cases[i][3];
#if LIBAVFORMAT_VERSION_MAJOR >= 61
        /* ffmpeg 7 numbers a raw stream's pictures by the codec's frame
         * duration before its filters (ffmpeg_dec.c); dfplay emulates
         * that for framemd5's clock only, so a filter that retimes (fps)
         * sees other timestamps than ffmpeg 7's. */
        if (filter && g_str_has_suffix(cases[i][0], ".h264") && g_str_has_prefix(filter, "fps"))
            continue;
#endif
        gchar *path = g_build_filename(df_test_media_dir(), cases[i][0], NULL);
        const char *ff[] = {"ffmpeg",    "-nostdin", "-flags", "unaligned", "-threads", "1",
                            "-loglevel", "error",    "-i",     path,        "-f",       "framemd5",
                            "-vf",       filter,     "-",      NULL};
        if (!filter) {
            ff[12] = "-"; /* no -vf */
            ff[13] = NULL;
        }
        const char *dp[] = {dfplay_path(), "--vo",      "framemd5",
                            "--workers",   cases[i][1], "--policy",
                            cases[i][2],   path,        filter ? "--filter" : NULL,
                            filter,        NULL};
        Result a, b;
        if (run(ff, &a) && run(dp, &b)) {
            char msg[512] = "";
            DF_EXPECT_MSG(a.status == 0 && count_lines(a.out) > 16, "ffmpeg failed on %s: %s",
                          cases[i][0], a.err);
            DF_EXPECT_MSG(b.status == 0, "dfplay failed on %s: %s", cases[i][0], b.err);
            if (strcmp(a.out, b.out))
                first_difference(b.out, a.out, msg, sizeof(msg));
            DF_EXPECT_MSG(!strcmp(a.out, b.out), "%s (%s workers, %s, filter %s): %s", cases[i][0],
                          cases[i][1], cases[i][2], filter ? filter : "none", msg);
            /* The summary: one line with frames, fps and the threading used. */
            DF_EXPECT_MSG(count_lines(b.err) == 1 && strstr(b.err, " frames in ") &&
                              strstr(b.err, " fps, threading "),
                          "%s: summary \"%s\"", cases[i][0], b.err);
            result_free(&b);
        }
        result_free(&a);
        g_free(path);
    }
}

DF_TEST(FrameworkDfplay, YuvAndFrameLimit)
{
    gchar *path = g_build_filename(df_test_media_dir(), "hevc_wpp10.mkv", NULL);
    gchar *tmp = g_build_filename(g_get_tmp_dir(), "dfplay-test-XXXXXX", NULL);
    int fd = g_mkstemp(tmp);
    DF_ASSERT(fd >= 0);
    close(fd);
    gchar *ref = g_strconcat(tmp, ".ref", NULL);
    /* Binary output goes to files (g_spawn_sync captures strings). */
    const char *ff[] = {"ffmpeg", "-nostdin", "-y", "-threads", "1", "-loglevel", "error",
                        "-i",     path,       "-f", "rawvideo", ref, NULL};
    const char *dp[] = {dfplay_path(), "--vo", "yuv", "-o", tmp, "-q", path, NULL};
    Result a, b;
    if (run(ff, &a) && run(dp, &b)) {
        DF_EXPECT_MSG(b.status == 0 && b.err[0] == 0, "dfplay: status %d, \"%s\"", b.status, b.err);
        gchar *x = NULL, *y = NULL;
        gsize lx = 0, ly = 0;
        DF_EXPECT(g_file_get_contents(ref, &x, &lx, NULL) &&
                  g_file_get_contents(tmp, &y, &ly, NULL));
        DF_EXPECT_MSG(lx == ly && lx > 0 && !memcmp(x, y, lx), "yuv output: %zu bytes, ffmpeg %zu",
                      (size_t)ly, (size_t)lx);
        g_free(x);
        g_free(y);
        result_free(&b);
    }
    result_free(&a);
    const char *lim[] = {dfplay_path(), "--vo", "framemd5", "--frames", "5", path, NULL};
    if (run(lim, &b)) {
        DF_EXPECT_EQ_INT(b.status, 0);
        int frames = 0;
        for (const char *s = b.out; s && *s;) {
            frames += s[0] == '0' && s[1] == ',';
            const char *nl = strchr(s, '\n');
            s = nl ? nl + 1 : s + strlen(s);
        }
        DF_EXPECT_EQ_INT(frames, 5);
        DF_EXPECT(strstr(b.err, "dfplay: 5 frames in ") != NULL);
        result_free(&b);
    }
    g_unlink(tmp);
    g_unlink(ref);
    g_free(ref);
    g_free(tmp);
    g_free(path);
}

/* --loop and --start on an input without a time index (a raw .h264,
 * 8 frames): the loop went back by bytes never, spun at EOF printing
 * "cannot seek" (--loop 0) or played one pass (--loop 3: 8 frames), and
 * --start left the demuxer at the end (0 frames; the .mkv gives 5). */
DF_TEST(FrameworkDfplay, LoopAndStartWithoutAnIndex)
{
    gchar *raw = g_build_filename(df_test_media_dir(), "h264_size_b.h264", NULL);
    const struct {
        const char *argv[10];
        const char *says;
    } cases[] = {
        {{dfplay_path(), "--vo", "null", "--loop", "3", raw, NULL}, "dfplay: 24 frames in "},
        {{dfplay_path(), "--vo", "null", "--loop", "0", "--frames", "50", raw, NULL},
         "dfplay: 50 frames in "},
        {{dfplay_path(), "--vo", "null", "--start", "0.1", raw, NULL}, "dfplay: 5 frames in "},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        Result r;
        if (!run(cases[i].argv, &r))
            continue;
        DF_EXPECT_MSG(r.status == 0 && strstr(r.err, cases[i].says) && count_lines(r.err) == 1,
                      "case %zu: status %d, stderr \"%s\" (expected \"%s\")", i, r.status, r.err,
                      cases[i].says);
        result_free(&r);
    }
    g_free(raw);
}

/* Where an input's timeline is not the stream's from 0: --start on a TS
 * (seeks by DTS: asked at the target it lands after the key frame the
 * target needs, a whole GOP lost), --start counted from the input's start
 * when the video begins later, --loop writing every pass on one clock, a
 * TS whose timestamps jump 50 s (the window waited out the jump): the
 * lines of ffmpeg -ss / -stream_loop / plain, byte for byte. */
DF_TEST(FrameworkDfplay, TimelinesAsFfmpeg)
{
    const struct {
        const char *clip, *ff[4], *dp[4];
    } cases[] = {
        {"h264_cabac_slices8.ts", {"-ss", "0.64"}, {"--start", "0.64"}},
        {"h264_cabac_slices8.ts", {"-ss", "0.32"}, {"--start", "0.32"}},
        {"h264_late.mkv", {"-ss", "0.8"}, {"--start", "0.8"}},
        {"h264_cabac_slices8.mkv", {"-stream_loop", "2"}, {"--loop", "3"}},
        {"h264_joined.ts", {NULL}, {NULL}},
        {"h264_rot90.mp4", {"-noautorotate"}, {"--noautorotate"}},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        gchar *path = g_build_filename(df_test_media_dir(), cases[i].clip, NULL);
        const char *ff[24] = {"ffmpeg",   "-nostdin", "-flags",    "unaligned",
                              "-threads", "1",        "-loglevel", "error"};
        const char *dp[24] = {dfplay_path(), "-q", "--vo", "framemd5"};
        int nf = 8, nd = 4;
        for (int k = 0; k < 4 && cases[i].ff[k]; k++)
            ff[nf++] = cases[i].ff[k];
        for (int k = 0; k < 4 && cases[i].dp[k]; k++)
            dp[nd++] = cases[i].dp[k];
        const char *tail[] = {"-i", path, "-map", "0:v", "-f", "framemd5", "-"};
        for (size_t k = 0; k < sizeof(tail) / sizeof(tail[0]); k++)
            ff[nf++] = tail[k];
        dp[nd++] = path;
        Result a, b;
        if (run(ff, &a) && run(dp, &b)) {
            char msg[512] = "";
            DF_EXPECT_MSG(a.status == 0 && count_lines(a.out) > 12, "ffmpeg failed on %s: %s",
                          cases[i].clip, a.err);
            DF_EXPECT_MSG(b.status == 0, "dfplay failed on %s: %s", cases[i].clip, b.err);
            if (strcmp(a.out, b.out))
                first_difference(b.out, a.out, msg, sizeof(msg));
            DF_EXPECT_MSG(!strcmp(a.out, b.out), "%s %s %s: %s", cases[i].clip,
                          cases[i].dp[0] ? cases[i].dp[0] : "",
                          cases[i].dp[1] ? cases[i].dp[1] : "", msg);
            result_free(&b);
        }
        result_free(&a);
        g_free(path);
    }
}

/* "-" reads standard input, as ffmpeg -i - does. */
DF_TEST(FrameworkDfplay, DashIsStandardInput)
{
    gchar *clip = g_build_filename(df_test_media_dir(), "h264_cabac_slices8.mkv", NULL);
    gchar *script = g_strdup_printf("exec \"%s\" --vo framemd5 -q - < \"%s\"", dfplay_path(), clip);
    const char *sh[] = {"sh", "-c", script, NULL};
    const char *direct[] = {dfplay_path(), "--vo", "framemd5", "-q", clip, NULL};
    Result a, b;
    if (run(sh, &a) && run(direct, &b)) {
        DF_EXPECT_MSG(a.status == 0 && count_lines(a.out) > 16, "dfplay -: status %d, %s", a.status,
                      a.err);
        DF_EXPECT_MSG(b.status == 0 && !strcmp(a.out, b.out), "dfplay - and the file differ");
        result_free(&b);
    }
    result_free(&a);
    g_free(script);
    g_free(clip);
}

DF_TEST(FrameworkDfplay, BadInputOneLine)
{
    gchar *clip = g_build_filename(df_test_media_dir(), "h264_cabac_slices8.mkv", NULL);
    gchar *text = g_build_filename(g_get_tmp_dir(), "dfplay-not-video.txt", NULL);
    g_file_set_contents(text, "this is not a video\n", -1, NULL);
    const char *d = dfplay_path();
    gchar *bytes = g_build_filename(g_get_tmp_dir(), "dfplay-random.mkv", NULL);
    gchar *empty = g_build_filename(g_get_tmp_dir(), "dfplay-empty.mkv", NULL);
    char raw[4096];
    for (size_t i = 0; i < sizeof(raw); i++)
        raw[i] = (char)(i * 2654435761u >> 11);
    g_file_set_contents(bytes, raw, sizeof(raw), NULL);
    g_file_set_contents(empty, "", 0, NULL);
    /* The clip's headers and no picture (a truncated download). */
    gchar *cut = g_build_filename(g_get_tmp_dir(), "dfplay-cut.mkv", NULL);
    gchar *whole = NULL;
    gsize whole_len = 0;
    DF_ASSERT(g_file_get_contents(clip, &whole, &whole_len, NULL) && whole_len > 3000);
    g_file_set_contents(cut, whole, 3000, NULL);
    g_free(whole);
    const char *tmp = g_get_tmp_dir();
    /* Usage errors: 2 and a hint to --help; failures (input missing or not
     * media, output that cannot be written): 1.  One line either way. */
    struct {
        const char *argv[10];
        int status;
        const char *says;
    } cases[] = {
        {{d, "/nonexistent/clip.mkv", NULL}, 1, "cannot open"},
        {{d, text, NULL}, 1, "cannot open"},
        {{d, bytes, NULL}, 1, "cannot open"},
        {{d, empty, NULL}, 1, "cannot open"},
        {{d, tmp, NULL}, 1, "cannot open"},
        /* Nothing came out: not a success ("0 frames", status 0). */
        {{d, "--vo", "null", cut, NULL}, 1, "no picture came out"},
        {{d, "--vo", "null", "--start", "100", clip, NULL}, 1, "no picture came out"},
        {{d, "--policy", "bogus", clip, NULL}, 2, "--policy bogus"},
        {{d, "--policy", "", clip, NULL}, 2, "bad --policy \"\""},
        {{d, "--threading", "fast", clip, NULL}, 2, "--threading fast"},
        {{d, "--workers", "-1", clip, NULL}, 2, "--workers"},
        {{d, "--workers", "two", clip, NULL}, 2, "workers"},
        {{d, "--workers", "4x", clip, NULL}, 2, "“4x” for --workers"},
        {{d, "--workers", "99999999999999999999", clip, NULL}, 2, "--workers out of range"},
        {{d, "--vo", "sdl9", clip, NULL}, 2, "--vo sdl9"},
        {{d, "--vo", "", clip, NULL}, 2, "bad --vo \"\""},
        {{d, "--vo", "yuv", clip, NULL}, 2, "needs -o"},
        {{d, "--vo", "null", "-o", "x.yuv", clip, NULL}, 2, "-o is only for"},
        {{d, "--vo", "yuv", "-o", "", clip, NULL}, 2, "bad -o \"\""},
        {{d, "--frames", "-3", clip, NULL}, 2, "--frames"},
        {{d, "--nosuchflag", clip, NULL}, 2, "nosuchflag"},
        {{d, clip, clip, NULL}, 2, "one input"},
        {{d, "--loop", "-1", clip, NULL}, 2, "--loop"},
        {{d, "--start", "-2", clip, NULL}, 2, "--start"},
        {{d, "--start", "nan", clip, NULL}, 2, "--start nan"},
        {{d, "--start", "1e13", clip, NULL}, 2, "--start 1e+13"}, /* overflowed: played from 0 */
        {{d, "--poll-us", "-5", clip, NULL}, 2, "--poll-us -5"},
        {{d, "--trace", "", clip, NULL}, 2, "bad --trace \"\""},
        {{d, "--trace", "/nonexistent/dir/t.json", clip, NULL}, 1, "--trace: cannot write"},
        {{d, "--trace", "/proc/x/y", clip, NULL}, 1, "--trace: cannot write /proc/x/y"},
        {{d, "--trace", tmp, clip, NULL}, 1, "Is a directory"},
        {{d, "--vo", "sdl", "--test-keys", "soon:q", clip, NULL}, 1, "--test-keys"},
        {{d, "--filter", "nosuchfilter", clip, NULL}, 1, "filter"},
        {{d, "--vo", "yuv", "-o", "/nonexistent/dir/out.yuv", clip, NULL}, 1, "cannot write"},
        {{d, "--vo", "framemd5", "-o", tmp, clip, NULL}, 1, "Is a directory"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        Result r;
        if (!run(cases[i].argv, &r))
            continue;
        DF_EXPECT_MSG(r.status == cases[i].status, "case %zu (%s): status %d, expected %d", i,
                      cases[i].says, r.status, cases[i].status);
        DF_EXPECT_MSG(count_lines(r.err) == 1 && !strncmp(r.err, "dfplay: ", 8) &&
                          strstr(r.err, cases[i].says),
                      "case %zu: stderr \"%s\" (expected one line with \"%s\")", i, r.err,
                      cases[i].says);
        DF_EXPECT_MSG(
            strstr(r.err, "dfplay: error: ") && (cases[i].status != 2 || strstr(r.err, "--help")),
            "case %zu: not an error line (with a hint to --help for usage): %s", i, r.err);
        DF_EXPECT_MSG(r.out[0] == 0, "case %zu: stdout \"%s\"", i, r.out);
        result_free(&r);
    }
    g_unlink(bytes);
    g_unlink(empty);
    g_unlink(cut);
    g_free(cut);
    g_free(bytes);
    g_free(empty);
    g_unlink(text);
    g_free(text);
    g_free(clip);
}
