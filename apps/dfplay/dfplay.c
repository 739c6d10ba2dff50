/* dfplay: play a video file through dfmedia, on an SDL2 window (--vo sdl,
 * vo_sdl.c) or headless (--vo null, framemd5, yuv): every output is an
 * entry of vo.c's table. */
#include "dfplay.h"
#include "cli.h"
#include "dfsched_trace.h"
#include "rotate.h"

#include <glib.h>
#include <glib/gstdio.h>
#include <libavformat/avformat.h>
#include <libavutil/time.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ERROR_LINES 10

void df_player_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gchar *msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    df_cli_fail("dfplay", "%s", msg);
    g_free(msg);
}

static const char *err_str(int ret, char *buf, size_t len)
{
    av_strerror(ret, buf, len);
    return buf;
}

static int parse_options(int argc, char **argv, Options *o)
{
    /* The policies as dfsched's registry has them. */
    g_autofree char *policy_names = g_strjoinv(", ", (char **)df_policy_names());
    g_autofree char *policy_help =
        g_strdup_printf("Placement policy: %s (default %s)", policy_names, DF_POLICY_DEFAULT);
    GOptionEntry entries[] = {
        {"workers", 'w', 0, G_OPTION_ARG_INT, &o->workers, "Scheduler workers (0: one per core)",
         "N"},
        {"policy", 'p', 0, G_OPTION_ARG_STRING, &o->policy, policy_help, "NAME"},
        {"threading", 't', 0, G_OPTION_ARG_STRING, &o->threading,
         "How libavcodec runs: auto (default), slice, frame, none", "MODE"},
        {"filter", 'f', 0, G_OPTION_ARG_STRING, &o->filter,
         "libavfilter chain, e.g. yadif or unsharp", "DESC"},
        {"noautorotate", 0, 0, G_OPTION_ARG_NONE, &o->noautorotate,
         "Show the pictures as coded, not turned by the stream's display matrix (ffmpeg "
         "-noautorotate)",
         NULL},
        {"frames", 'n', 0, G_OPTION_ARG_INT64, &o->frames, "Stop after N frames (0: all)", "N"},
        {"untimed", 'u', 0, G_OPTION_ARG_NONE, &o->untimed,
         "As fast as possible (always so for the headless outputs)", NULL},
        {"vo", 0, 0, G_OPTION_ARG_STRING, &o->vo,
         "Output: sdl (a window; default with a display), null (default without), framemd5, yuv",
         "NAME"},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &o->output,
         "Output file of yuv and framemd5 (- for stdout; framemd5 default)", "FILE"},
        {"poll-us", 0, 0, G_OPTION_ARG_INT, &o->poll_us,
         "Idle spin of workers before they sleep, us (-1: never sleep)", "US"},
        {"verbose", 'v', 0, G_OPTION_ARG_NONE, &o->verbose, "Log libav* and dfmedia messages",
         NULL},
        {"quiet", 'q', 0, G_OPTION_ARG_NONE, &o->quiet, "No summary and no decode error lines",
         NULL},
        {"loop", 0, 0, G_OPTION_ARG_INT, &o->loop, "Play the input N times (0: until quit)", "N"},
        {"start", 0, 0, G_OPTION_ARG_DOUBLE, &o->start, "Start at this time", "SECONDS"},
        {"fullscreen", 0, 0, G_OPTION_ARG_NONE, &o->fullscreen, "Start in fullscreen (sdl)", NULL},
        {"stats", 0, 0, G_OPTION_ARG_NONE, &o->stats,
         "A status line while playing: decoded n/N, fps, speed", NULL},
        {"trace", 0, 0, G_OPTION_ARG_FILENAME, &o->trace,
         "Write the scheduler's trace (Chrome/Perfetto JSON) to FILE at exit", "FILE"},
        {"screenshot", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_FILENAME, &o->screenshot,
         "Test hook: write the window as PPM after showing the frame at --screenshot-pts", "FILE"},
        {"screenshot-pts", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_DOUBLE, &o->screenshot_pts,
         "Test hook: time of the frame to capture", "SECONDS"},
        {"test-keys", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_STRING, &o->test_keys,
         "Test hook: synthetic key presses, e.g. 0.5:space,1:s,1.2:q", "LIST"},
        {G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &o->inputs, NULL, "[FILE]"},
        {NULL},
    };
    const DfCliSpec spec = {
        .param = "- play a video through dfmedia",
        .summary = "Decodes any container or raw H.264 / H.265 / MPEG-2 stream that libavformat "
                   "reads,\nwith the decode work of each frame run as tasks on a dataflow "
                   "scheduler.",
        .entries = entries,
    };
    if (df_cli_parse_options("dfplay", &spec, &argc, &argv) != DF_CLI_OK)
        return -1;
    if (!o->policy)
        o->policy = g_strdup(DF_POLICY_DEFAULT);
    if (!o->threading)
        o->threading = g_strdup("auto");
    /* A window when there is a display to put it on. */
    if (!o->vo)
        o->vo = g_strdup((g_getenv("DISPLAY") || g_getenv("WAYLAND_DISPLAY")) && df_vo_find("sdl")
                             ? "sdl"
                             : "null");
    if (o->inputs && o->inputs[0] && o->inputs[1]) {
        df_cli_usage("dfplay", "unexpected argument \"%s\" (give one input file)", o->inputs[1]);
        return -1;
    }
    const struct {
        const char *flag, *value;
    } names[] = {{"--policy", o->policy}, {"--threading", o->threading}, {"--vo", o->vo}};
    for (size_t i = 0; i < G_N_ELEMENTS(names); i++)
        if (!*names[i].value) {
            df_cli_usage("dfplay", "bad %s \"\": an empty name", names[i].flag);
            return -1;
        }
    if (o->loop < 0) {
        df_cli_usage("dfplay", "--loop %d: expected a count >= 0 (0: until quit)", o->loop);
        return -1;
    }
    /* Negated: NaN fails every comparison. */
    /* At most what a 64-bit AV_TIME_BASE timestamp holds (~292 000 years):
     * beyond, the conversion overflowed and playback started at 0. */
    if (!(o->start >= 0 && o->start <= (double)(INT64_MAX / AV_TIME_BASE))) {
        df_cli_usage("dfplay", "--start %g: expected seconds >= 0 (at most %lld)", o->start,
                     (long long)(INT64_MAX / AV_TIME_BASE));
        return -1;
    }
    if (o->trace && !*o->trace) {
        df_cli_usage("dfplay", "bad --trace \"\": an empty file name");
        return -1;
    }
    if (o->workers < 0 || o->workers > 1024) {
        df_cli_usage("dfplay", "--workers %d: expected 0..1024", o->workers);
        return -1;
    }
    if (o->frames < 0) {
        df_cli_usage("dfplay", "--frames %" G_GINT64_FORMAT ": expected a count >= 0", o->frames);
        return -1;
    }
    if (o->poll_us < -1) {
        df_cli_usage("dfplay", "--poll-us %d: expected -1 or more", o->poll_us);
        return -1;
    }
    bool known = false;
    for (const char *const *p = df_policy_names(); *p; p++)
        known |= !strcmp(*p, o->policy);
    if (!known) {
        GString *s = g_string_new(NULL);
        for (const char *const *p = df_policy_names(); *p; p++)
            g_string_append_printf(s, "%s%s", s->len ? ", " : "", *p);
        df_cli_usage("dfplay", "--policy %s: unknown (expected %s)", o->policy, s->str);
        g_string_free(s, TRUE);
        return -1;
    }
    DfThreading t;
    if (df_threading_parse(o->threading, &t) < 0) {
        df_cli_usage("dfplay", "--threading %s: unknown (expected auto, slice, frame or none)",
                     o->threading);
        return -1;
    }
    const DfVoClass *cls = df_vo_find(o->vo);
    if (!cls) {
        df_cli_usage("dfplay", "--vo %s: unknown (expected %s)", o->vo, df_vo_names());
        return -1;
    }
    if (cls->needs_output && !o->output) {
        df_cli_usage("dfplay", "--vo %s needs -o FILE (- for stdout)", cls->name);
        return -1;
    }
    if (!cls->takes_output && o->output) {
        df_cli_usage("dfplay", "-o is only for outputs that write a file (framemd5, yuv)");
        return -1;
    }
    if (o->output && !*o->output) {
        df_cli_usage("dfplay", "bad -o \"\": an empty file name (- for stdout)");
        return -1;
    }
    return 0;
}

/* Outputs before the input is opened and decoded: a path that cannot be
 * written is a failure (1), not a bad command line. */
static int check_outputs(const Options *o)
{
    char msg[512];
    if (o->output && strcmp(o->output, "-") != 0 &&
        !df_cli_check_output(o->output, msg, sizeof(msg))) {
        df_player_fail("-o: %s", msg);
        return -1;
    }
    if (o->trace && !df_cli_check_output(o->trace, msg, sizeof(msg))) {
        df_player_fail("--trace: %s", msg);
        return -1;
    }
    return 0;
}

/* With no file: a generated 1080p clip (10 s of H.264 with 8 slices, the
 * ffmpeg CLI with the arguments of tests/media/gen.sh's demo clip), made
 * once and kept in the user's cache directory. */
static gchar *default_clip(void)
{
    gchar *dir = g_build_filename(g_get_user_cache_dir(), "dfmedia", NULL);
    gchar *path = g_build_filename(dir, "dfplay_demo_1080p_10s.mkv", NULL);
    if (g_file_test(path, G_FILE_TEST_EXISTS)) {
        g_free(dir);
        return path;
    }
    g_mkdir_with_parents(dir, 0755);
    gchar *tmp = g_strconcat(path, ".tmp.mkv", NULL);
    fprintf(stderr, "dfplay: no file given; generating a 10 s 1080p test clip into %s (once)\n",
            path);
    const char *argv[] = {
        "ffmpeg",    "-nostdin", "-hide_banner", "-loglevel",    "error",
        "-y",        "-f",       "lavfi",        "-i",           "testsrc2=size=1920x1080:rate=25",
        "-frames:v", "250",      "-pix_fmt",     "yuv420p",      "-c:v",
        "libx264",   "-preset",  "veryfast",     "-x264-params", "keyint=50:slices=8",
        tmp,         NULL};
    GError *e = NULL;
    gint status = 0;
    gboolean ok = g_spawn_sync(NULL, (gchar **)argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL,
                               NULL, &status, &e) &&
                  g_spawn_check_wait_status(status, &e) && g_rename(tmp, path) == 0;
    if (!ok) {
        df_player_fail("cannot generate the test clip with ffmpeg: %s", e ? e->message : "rename");
        g_clear_error(&e);
        g_unlink(tmp);
        g_free(path);
        path = NULL;
    }
    g_free(tmp);
    g_free(dir);
    return path;
}

static int open_input(Player *p, const char *path)
{
    char e[AV_ERROR_MAX_STRING_SIZE];
    /* "-" is standard input, as for ffmpeg -i. */
    int ret = avformat_open_input(&p->fmt, strcmp(path, "-") ? path : "pipe:0", NULL, NULL);
    if (ret < 0) {
        df_player_fail("cannot open %s: %s", path, err_str(ret, e, sizeof(e)));
        return ret;
    }
    ret = avformat_find_stream_info(p->fmt, NULL);
    if (ret < 0) {
        df_player_fail("%s: cannot read stream information: %s", path, err_str(ret, e, sizeof(e)));
        return ret;
    }
    ret = av_find_best_stream(p->fmt, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
    if (ret < 0) {
        df_player_fail("%s: no video stream", path);
        return ret;
    }
    p->stream = ret;
    for (unsigned i = 0; i < p->fmt->nb_streams; i++)
        if ((int)i != p->stream)
            p->fmt->streams[i]->discard = AVDISCARD_ALL;
    return 0;
}

static void show_errors(Player *p)
{
    DfDecodeError e;
    while (df_decoder_next_error(p->dec, &e) == 0) {
        p->errors++;
        if (p->opt->quiet)
            continue;
        if (p->errors_shown < MAX_ERROR_LINES)
            fprintf(stderr, "dfplay: warning: %s\n", e.msg);
        else if (p->errors_shown == MAX_ERROR_LINES)
            fprintf(stderr, "dfplay: warning: more decode errors (counted in the summary)\n");
        p->errors_shown++;
    }
}

/* Wait until the frame is due (a display's job; headless outputs never do). */
static void pace(Player *p, const AVFrame *f)
{
    const AVRational tb = p->fmt->streams[p->stream]->time_base;
    const int64_t pts = f->best_effort_timestamp;
    if (!p->timed || pts == AV_NOPTS_VALUE)
        return;
    if (p->first_pts == AV_NOPTS_VALUE) {
        p->first_pts = pts;
        p->t_start = av_gettime_relative();
    }
    int64_t due = p->t_start + av_rescale_q(pts - p->first_pts, tb, AV_TIME_BASE_Q);
    int64_t now = av_gettime_relative();
    if (due > now)
        av_usleep((unsigned)(due - now));
}

/* Like ffmpeg: pictures that come out of the drain without a timestamp
 * (raw streams give the last packets none) take the dts the packets after
 * the last one would have had. */
static void repair_timestamp(Player *p, AVFrame *f)
{
    if (!p->draining || f->best_effort_timestamp != AV_NOPTS_VALUE || p->next_dts == AV_NOPTS_VALUE)
        return;
    f->best_effort_timestamp = p->next_dts;
    p->next_dts += p->frame_ticks;
}

typedef struct DfOffsetChange {
    int64_t from; /* shown time (stream time base) */
    int64_t offset;
} DfOffsetChange;

/* The offset is `offset` for shown times from `from` on; a change before
 * the last recorded (the timeline replayed after a seek back) replaces
 * the ones after it. */
static void set_offset(Player *p, int64_t from, int64_t offset)
{
    p->ts_offset = offset;
    if (!p->offsets)
        p->offsets = g_array_new(FALSE, FALSE, sizeof(DfOffsetChange));
    while (p->offsets->len &&
           g_array_index(p->offsets, DfOffsetChange, p->offsets->len - 1).from >= from)
        g_array_set_size(p->offsets, p->offsets->len - 1);
    const DfOffsetChange c = {from, offset};
    g_array_append_val(p->offsets, c);
}

/* The offset in force at shown time `t`. */
static int64_t offset_at(const Player *p, int64_t t)
{
    int64_t off = 0;
    for (guint i = 0; p->offsets && i < p->offsets->len; i++) {
        const DfOffsetChange *c = &g_array_index(p->offsets, DfOffsetChange, i);
        if (c->from > t)
            break;
        off = c->offset;
    }
    return off;
}

/* ffmpeg's dts_delta_threshold: a larger jump is a discontinuity. */
#define DISCONT_SECONDS 10

/* A TS-like input whose timestamps jump (joined recordings, a restarted
 * encoder): ffmpeg takes the jump out of every later packet, so pictures
 * keep a continuous clock (the window would wait out the gap). */
static void take_out_jump(Player *p, AVPacket *pkt)
{
    /* No last packet since a seek: a jump there is the seek's. */
    if (!(p->fmt->iformat->flags & AVFMT_TS_DISCONT) || pkt->dts == AV_NOPTS_VALUE ||
        p->last_dts == AV_NOPTS_VALUE || p->next_dts == AV_NOPTS_VALUE)
        return;
    const AVRational tb = p->fmt->streams[p->stream]->time_base;
    const int64_t limit = av_rescale_q(DISCONT_SECONDS, (AVRational){1, 1}, tb);
    const int64_t tenth = av_rescale_q(1, (AVRational){1, 10}, tb);
    const int64_t delta = pkt->dts - p->next_dts;
    if (delta >= -limit && delta <= limit && pkt->dts + tenth >= p->last_dts)
        return;
    pkt->dts -= delta;
    if (pkt->pts != AV_NOPTS_VALUE)
        pkt->pts -= delta;
    set_offset(p, pkt->dts, p->ts_offset - delta);
}

/* Raw streams without any timestamp: number the packets like ffmpeg does
 * (first dts = -reorder delay), so that pictures get best_effort
 * timestamps.  Timestamps get the player's offset. */
static void track_dts(Player *p, AVPacket *pkt)
{
    if (pkt->dts == AV_NOPTS_VALUE && pkt->pts == AV_NOPTS_VALUE) {
        pkt->dts = p->next_dts;
    } else {
        if (pkt->dts != AV_NOPTS_VALUE)
            pkt->dts += p->ts_offset;
        if (pkt->pts != AV_NOPTS_VALUE)
            pkt->pts += p->ts_offset;
        take_out_jump(p, pkt);
    }
    if (pkt->dts == AV_NOPTS_VALUE)
        return;
    p->last_dts = pkt->dts;
    p->next_dts = pkt->dts + (pkt->duration > 0 ? pkt->duration : p->frame_ticks);
}

/* 1: the frame limit is reached. */
static int output(Player *p, AVFrame *f)
{
    repair_timestamp(p, f);
    if (p->skip_until != AV_NOPTS_VALUE) {
        /* Decoding forward from the keyframe before a seek target. */
        if (f->best_effort_timestamp != AV_NOPTS_VALUE &&
            f->best_effort_timestamp < p->skip_until) {
            av_frame_unref(f);
            return 0;
        }
        p->skip_until = AV_NOPTS_VALUE;
    }
    const int64_t pts = f->best_effort_timestamp;
    if (pts != AV_NOPTS_VALUE && (p->pass_max == AV_NOPTS_VALUE || pts > p->pass_max))
        p->pass_max = pts;
    pace(p, f);
    int ret = df_vo_frame(&p->vo, f);
    av_frame_unref(f);
    if (ret < 0) {
        df_player_fail("%s", p->vo.err[0] ? p->vo.err : "output failed");
        return AVERROR(EIO);
    }
    if (ret > 0)
        return 1;
    p->frames++;
    return p->opt->frames && p->frames >= p->opt->frames;
}

/* Frames that are ready, without waiting; 1 when the limit is reached. */
static int output_ready(Player *p, AVFrame *f)
{
    int ret;
    while ((ret = df_decoder_try_receive_frame(p->dec, f)) == 0)
        if ((ret = output(p, f)) != 0)
            return ret;
    return ret == AVERROR(EAGAIN) ? 0 : ret;
}

/* Flush and seek to `target` (the input's time, stream time base); frames
 * before it are decoded but not shown.  Like ffmpeg -ss, a format that
 * seeks by DTS (TS, PS) is asked for 3/23 s earlier when the stream
 * reorders, or it lands after the key frame that the target needs.  An
 * input without a time index (a raw .h264) goes back to its first byte
 * instead, and frames up to the target are skipped as they come.  False
 * when the input cannot seek at all: streams keep playing on (the warning
 * once per run). */
static bool seek_to(Player *p, int64_t target)
{
    df_decoder_flush(p->dec);
    const AVStream *st = p->fmt->streams[p->stream];
    int64_t at = target;
    if (!(p->fmt->iformat->flags & AVFMT_SEEK_TO_PTS) && st->codecpar->video_delay)
        at -= av_rescale_q(3, (AVRational){1, 23}, st->time_base);
    int ret = avformat_seek_file(p->fmt, p->stream, INT64_MIN, at, at, 0);
    if (ret < 0)
        ret = av_seek_frame(p->fmt, p->stream, target, AVSEEK_FLAG_BACKWARD);
    if (ret < 0)
        ret = av_seek_frame(p->fmt, -1, 0, AVSEEK_FLAG_BYTE);
    if (ret < 0 && !p->opt->quiet && !p->seek_warned) {
        fprintf(stderr, "dfplay: warning: this input cannot seek\n");
        p->seek_warned = true;
    }
    p->skip_until = target + p->ts_offset;
    p->last_dts = AV_NOPTS_VALUE;
    p->first_pts = AV_NOPTS_VALUE;
    p->draining = false;
    p->epoch++;
    return ret >= 0;
}

/* The stream's first timestamp (stream time base). */
static int64_t stream_start(const Player *p)
{
    const AVStream *st = p->fmt->streams[p->stream];
    return st->start_time != AV_NOPTS_VALUE ? st->start_time : 0;
}

/* One pass to the end of the input: 0, 1 (stopped: frame limit or the
 * display quit) or a negative error already reported. */
static int play_once(Player *p, AVPacket *pkt, AVFrame *f)
{
    char e[AV_ERROR_MAX_STRING_SIZE];
    int ret = 0;
    for (;;) {
        int64_t target;
        if (df_vo_seek(&p->vo, &target)) {
            /* The window's clock is the shown one: back to the input's
             * time with the offset in force there. */
            p->ts_offset = offset_at(p, target);
            seek_to(p, target - p->ts_offset);
            continue;
        }
        ret = av_read_frame(p->fmt, pkt);
        if (ret == AVERROR_EOF) {
            ret = 0;
            break;
        }
        if (ret < 0) {
            df_player_fail("read error: %s", err_str(ret, e, sizeof(e)));
            return ret;
        }
        if (pkt->stream_index != p->stream) {
            av_packet_unref(pkt);
            continue;
        }
        track_dts(p, pkt);
        /* Keep the decoder's queue full: wait for a frame only when it is. */
        while ((ret = df_decoder_send_packet(p->dec, pkt)) == AVERROR(EAGAIN)) {
            ret = df_decoder_receive_frame(p->dec, f);
            if (ret == 0)
                ret = output(p, f);
            else if (ret == AVERROR(EAGAIN))
                ret = 0;
            if (ret != 0)
                break;
        }
        av_packet_unref(pkt);
        show_errors(p);
        if (ret == 0)
            ret = output_ready(p, f);
        if (ret != 0)
            break;
    }
    if (ret < 0 && ret != AVERROR_EOF) {
        if (ret != AVERROR(EIO))
            df_player_fail("decode: %s", err_str(ret, e, sizeof(e)));
        return ret;
    }
    if (ret == 1)
        return 1;
    p->draining = true;
    ret = df_decoder_send_packet(p->dec, NULL);
    while (ret >= 0 && (ret = df_decoder_receive_frame(p->dec, f)) == 0)
        if ((ret = output(p, f)) != 0)
            break;
    show_errors(p);
    if (ret == AVERROR_EOF)
        return 0;
    if (ret < 0)
        df_player_fail("decode: %s", err_str(ret, e, sizeof(e)));
    return ret;
}

int df_player_run(Player *p)
{
    AVPacket *pkt = av_packet_alloc();
    AVFrame *f = av_frame_alloc();
    int ret = pkt && f ? 0 : AVERROR(ENOMEM);
    if (ret == 0 && p->opt->start > 0) {
        /* From the input's start, as ffmpeg -ss (a stream may begin later). */
        const AVRational tb = p->fmt->streams[p->stream]->time_base;
        const int64_t start = p->fmt->start_time != AV_NOPTS_VALUE ? p->fmt->start_time : 0;
        seek_to(p,
                av_rescale_q(start + (int64_t)(p->opt->start * AV_TIME_BASE), AV_TIME_BASE_Q, tb));
    }
    /* --loop N: N passes (0: until stopped); no pass more once the input
     * cannot go back, or a pass showed nothing (it would spin). */
    for (int pass = 1; ret == 0; pass++) {
        const int64_t shown = p->frames;
        p->pass_max = AV_NOPTS_VALUE;
        ret = play_once(p, pkt, f);
        if (ret != 0 || (p->opt->loop > 0 && pass >= p->opt->loop))
            break;
        if (p->frames == shown) {
            if (!p->opt->quiet)
                fprintf(stderr, "dfplay: warning: a pass showed no frame: not looping\n");
            break;
        }
        /* The next pass goes on one frame after this one's last picture,
         * as ffmpeg -stream_loop does (which, after -ss, counts from the
         * first picture it read rather than the stream's start). */
        if (p->pass_max != AV_NOPTS_VALUE) {
            const int64_t next = p->pass_max + (p->frame_ticks > 0 ? p->frame_ticks : 1);
            set_offset(p, next, next - stream_start(p));
        }
        if (!seek_to(p, stream_start(p)))
            break;
        p->skip_until = AV_NOPTS_VALUE;
    }
    av_packet_free(&pkt);
    av_frame_free(&f);
    return ret == 1 ? 0 : ret;
}

static int play(void *arg)
{
    return df_player_run(arg);
}

int main(int argc, char **argv)
{
    /* GOption replaces a string without freeing it: defaults come after. */
    Options o = {.poll_us = 50, .loop = 1};
    Player p = {.opt = &o,
                .stream = -1,
                .first_pts = AV_NOPTS_VALUE,
                .next_dts = AV_NOPTS_VALUE,
                .last_dts = AV_NOPTS_VALUE};
    int status = 2;
    gchar *filter = NULL; /* --filter after the turn of the display matrix */
    char e[AV_ERROR_MAX_STRING_SIZE];
    if (parse_options(argc, argv, &o) < 0)
        goto done;
    status = 1;
    if (check_outputs(&o) < 0)
        goto done;
    av_log_set_level(o.verbose ? AV_LOG_VERBOSE : AV_LOG_QUIET);
    gchar *clip = o.inputs && o.inputs[0] ? g_strdup(o.inputs[0]) : default_clip();
    if (!clip || open_input(&p, clip) < 0) {
        g_free(clip);
        goto done;
    }
    g_free(clip);

    DfSchedConfig sc;
    df_sched_config_init(&sc);
    sc.n_workers = o.workers;
    sc.policy = o.policy;
    sc.poll_us = o.poll_us;
    if (o.trace)
        sc.trace_capacity = DF_TRACE_DEFAULT_CAPACITY;
    DfError err = {0};
    if (df_sched_new(&sc, &p.sched, &err) < 0) {
        df_player_fail("scheduler: %s", err.msg);
        goto done;
    }
    DfDecoderConfig dc;
    df_decoder_config_init(&dc);
    df_threading_parse(o.threading, &dc.threading);
    /* ffmpeg's autorotate: the turn goes before the user's filters. */
    gchar *rotation = o.noautorotate ? NULL : df_rotation_filter(p.fmt->streams[p.stream]);
    filter = rotation && o.filter ? g_strconcat(rotation, ",", o.filter, NULL)
                                  : g_strdup(rotation ? rotation : o.filter);
    g_free(rotation);
    dc.filter = filter;
    dc.log_level = o.verbose ? AV_LOG_VERBOSE : AV_LOG_WARNING;
    const DfVoClass *cls = df_vo_find(o.vo);
    if (cls->yuv420p)
        dc.out_format = AV_PIX_FMT_YUV420P;
    AVStream *st = p.fmt->streams[p.stream];
    const AVRational rate = av_guess_frame_rate(p.fmt, st, NULL);
    dc.frame_rate = rate;
    if (df_decoder_new(p.sched, st->codecpar, st->time_base, &dc, &p.dec, &err) < 0) {
        df_player_fail("%s: %s", p.fmt->url, err.msg);
        goto done;
    }
    p.skip_until = AV_NOPTS_VALUE;
    p.total_frames = st->nb_frames;
    if (!p.total_frames && st->duration != AV_NOPTS_VALUE && st->avg_frame_rate.num)
        p.total_frames = av_rescale_q(st->duration, st->time_base, av_inv_q(st->avg_frame_rate));
    if (!p.total_frames && p.fmt->duration != AV_NOPTS_VALUE && st->avg_frame_rate.num)
        p.total_frames = av_rescale(p.fmt->duration, st->avg_frame_rate.num,
                                    (int64_t)st->avg_frame_rate.den * AV_TIME_BASE);
    DfVoParams vp = {
        .stream = st,
        .frame_rate = rate,
        .out_frame_rate = df_decoder_frame_rate(p.dec),
        .start_time = o.start > 0 ? (p.fmt->start_time != AV_NOPTS_VALUE ? p.fmt->start_time : 0) +
                                        (int64_t)(o.start * AV_TIME_BASE)
                                  : p.fmt->start_time,
        .ts_unreliable = p.fmt->iformat->flags & AVFMT_NOTIMESTAMPS,
        .output = o.output,
        .player = &p,
    };
    int ret = df_vo_open(&p.vo, cls, &vp);
    if (ret < 0) {
        df_player_fail("%s", p.vo.err[0] ? p.vo.err : err_str(ret, e, sizeof(e)));
        goto done;
    }
    p.vo_open = true;
    /* An output with a loop of its own (a window) paces the frames there. */
    p.timed = cls->timed && !cls->run && !o.untimed;
    p.frame_ticks =
        vp.frame_rate.num > 0 ? av_rescale_q(1, av_inv_q(vp.frame_rate), st->time_base) : 0;
    p.next_dts = st->avg_frame_rate.num ? -st->codecpar->video_delay * p.frame_ticks : 0;

    const int64_t t0 = av_gettime_relative();
    ret = df_vo_run(&p.vo, play, &p);
    const double secs = (double)(av_gettime_relative() - t0) / 1e6;
    p.vo_open = false;
    int cret = df_vo_close(&p.vo);
    if (cret < 0)
        df_player_fail("%s", p.vo.err[0] ? p.vo.err : "output could not be written");
    if (ret < 0 || cret < 0)
        goto done;
    if (p.frames == 0) {
        /* Nothing to show (a truncated file, --start past the end): no
         * success for a script to believe. */
        df_player_fail("%s: no picture came out", p.fmt->url);
        goto done;
    }
    if (!o.quiet && !cls->summary) {
        const char *why = NULL;
        const char *mode = df_decoder_threading(p.dec, &why);
        fprintf(stderr,
                "dfplay: %" PRId64 " frames in %.3f s, %.1f fps, threading %s (%s), %d workers, "
                "policy %s, %" PRIu64 " decode errors\n",
                p.frames, secs, secs > 0 ? (double)p.frames / secs : 0.0, mode, why,
                df_sched_n_workers(p.sched), df_sched_policy_name(p.sched), p.errors);
    }
    status = 0;
done:
    if (o.trace && p.sched) {
        DfError terr = {0};
        if (df_sched_trace_write(p.sched, o.trace, &terr) < 0) {
            df_player_fail("--trace: %s", terr.msg);
            status = 1;
        }
    }
    if (p.vo_open)
        df_vo_close(&p.vo);
    df_decoder_free(&p.dec);
    if (p.sched)
        df_sched_unref(p.sched);
    avformat_close_input(&p.fmt);
    g_free(o.policy);
    g_free(o.threading);
    g_free(o.filter);
    g_free(filter);
    g_free(o.vo);
    g_free(o.output);
    g_strfreev(o.inputs);
    g_free(o.trace);
    g_free(o.screenshot);
    g_free(o.test_keys);
    if (p.offsets)
        g_array_free(p.offsets, TRUE);
    return status;
}
