/* dfplay internals shared by the player loop (dfplay.c) and the outputs
 * that show more than frames (the SDL display, vo_sdl.c). */
#ifndef DFPLAY_H
#define DFPLAY_H

#include "dfmedia.h"
#include "vo.h"

#include <glib.h>
#include <stdbool.h>

typedef struct Options {
    gint workers;
    gchar *policy;
    gchar *threading;
    gchar *filter;
    gboolean noautorotate;
    gint64 frames;
    gboolean untimed;
    gchar *vo;
    gchar *output;
    gint poll_us;
    gboolean verbose;
    gboolean quiet;
    gint loop;
    gdouble start;
    gboolean fullscreen;
    gboolean stats;
    gchar *trace;
    gchar *screenshot; /* hidden: test hook */
    gdouble screenshot_pts;
    gchar *test_keys; /* hidden: test hook, "SECONDS:KEY,..." */
    gchar **inputs;
} Options;

typedef struct Player Player;
struct Player {
    const Options *opt;
    AVFormatContext *fmt;
    int stream;
    DfSched *sched;
    DfDecoder *dec;
    DfVo vo;
    bool vo_open;
    bool timed;
    int64_t frames;
    int64_t first_pts;
    int64_t t_start;
    int errors_shown;
    uint64_t errors;
    int64_t next_dts;    /* predicted dts after the last packet (stream time base) */
    int64_t frame_ticks; /* one frame in the stream time base */
    bool draining;
    int64_t skip_until; /* drop frames before this pts after a seek (stream tb) */
    int epoch;          /* incremented at every seek or loop: the display's clock restarts */
    bool seek_warned;   /* "cannot seek" said once */
    /* Added to every packet's timestamps (stream time base), as ffmpeg
     * does: a pass of --loop goes on where the last ended, a timestamp
     * jump of a TS-like input (AVFMT_TS_DISCONT) is taken out. */
    int64_t ts_offset;
    /* Each offset with the shown time it starts at (DfOffsetChange, in
     * order): a seek in the window to a shown time uses the offset in
     * force there, not the current one. */
    GArray *offsets;
    int64_t last_dts;     /* the last packet's, offset included */
    int64_t pass_max;     /* the pass's last picture PTS */
    int64_t total_frames; /* expected frames (stream info), 0 if unknown */
};

/* Demux, decode and hand frames out until the end, an error or a stop;
 * 0 or a negative error already reported.  Handles seek requests and
 * --loop. */
int df_player_run(Player *p);

/* One line on stderr, prefixed "dfplay: ". */
void df_player_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
