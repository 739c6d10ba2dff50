/* --vo sdl: dfplay's SDL2 window.  Its run op starts a decode thread for
 * the player loop (df_player_run), which hands frames over a bounded
 * queue (the frame op); the thread that called run owns
 * the window: events, pacing to the stream clock (frames are shown at
 * their PTS on the system clock, late ones dropped, early ones wait),
 * YUV texture upload, the overlay and the summary.  The decoder never
 * blocks the event loop: the queue hand-over is the only contact. */
#include "dfplay.h"
#include "dfsched_trace.h"
#include "vo.h"

#include <SDL.h>
#include <cairo.h>
#include <libavutil/time.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QUEUE_MAX    8
#define SEEK_STEP_US (5 * AV_TIME_BASE)
#define OSD_W        460
#define OSD_H        150

typedef struct QItem {
    AVFrame *f;
    int epoch;
} QItem;

typedef struct TestKey {
    double at; /* seconds after the first frame was shown */
    SDL_Keycode key;
    bool sent;
} TestKey;

typedef struct Sdl {
    DfVo *vo;
    Player *p;
    const Options *o;
    int (*play)(void *arg); /* the player loop, on the decode thread */
    void *play_arg;
    /* Shared with the decode thread (lock). */
    GMutex lock;
    GCond cond;
    QItem q[QUEUE_MAX];
    int head, n;
    bool quit, decode_done, seek_req;
    int64_t seek_target; /* stream time base */
    int min_epoch;       /* frames of older epochs are stale (before a seek) */
    int decode_ret;
    int64_t decoded;

    /* Display side. */
    SDL_Window *win;
    SDL_Renderer *ren;
    SDL_Texture *tex, *osd;
    int tex_w, tex_h;
    bool osd_on, paused, step, fullscreen, untimed;
    int64_t pause_start, osd_updated, stats_printed;
    int cur_epoch;
    bool have_base;
    int64_t base_time, base_pts, last_pts;
    int64_t shown, dropped, t_first, t_start;
    int64_t *jitter;
    size_t n_jitter, cap_jitter;
    AVRational tb;
    int64_t frame_us;
    bool screenshot_done;
    bool report_seek; /* print where each seek landed (--verbose, test keys) */
    double seek_to_s;
    bool after_seek;
    TestKey keys[32];
    int n_keys;
    int64_t fps_t0, fps_n;
    double fps_now;
} Sdl;

/* ---- decode thread side --------------------------------------------- */

static void queue_clear_locked(Sdl *s)
{
    while (s->n) {
        av_frame_free(&s->q[s->head].f);
        s->head = (s->head + 1) % QUEUE_MAX;
        s->n--;
    }
}

static int sdl_frame(DfVo *vo, const AVFrame *f)
{
    Sdl *s = vo->priv;
    const Player *p = s->p;
    g_mutex_lock(&s->lock);
    while (s->n == QUEUE_MAX && !s->quit && !s->seek_req)
        g_cond_wait(&s->cond, &s->lock);
    if (s->quit || s->seek_req || p->epoch < s->min_epoch) {
        const bool quit = s->quit;
        g_mutex_unlock(&s->lock);
        return quit ? 1 : 0;
    }
    /* A new reference to the same buffers: the player unrefs its own. */
    AVFrame *c = av_frame_alloc();
    if (!c || av_frame_ref(c, f) < 0) {
        g_mutex_unlock(&s->lock);
        av_frame_free(&c);
        return AVERROR(ENOMEM);
    }
    s->q[(s->head + s->n) % QUEUE_MAX] = (QItem){c, p->epoch};
    s->n++;
    s->decoded++;
    g_cond_broadcast(&s->cond);
    g_mutex_unlock(&s->lock);
    return 0;
}

static bool sdl_seek(DfVo *vo, int64_t *target)
{
    Sdl *s = vo->priv;
    const Player *p = s->p;
    g_mutex_lock(&s->lock);
    const bool req = s->seek_req;
    if (req) {
        *target = s->seek_target;
        s->seek_req = false;
        /* seek_to() starts epoch + 1; whatever is older is stale. */
        s->min_epoch = p->epoch + 1;
        queue_clear_locked(s);
        g_cond_broadcast(&s->cond);
    }
    g_mutex_unlock(&s->lock);
    return req;
}

static gpointer decode_thread(gpointer data)
{
    Sdl *s = data;
    const int ret = s->play(s->play_arg);
    g_mutex_lock(&s->lock);
    s->decode_ret = ret;
    s->decode_done = true;
    g_cond_broadcast(&s->cond);
    g_mutex_unlock(&s->lock);
    return NULL;
}

/* ---- window ----------------------------------------------------------- */

/* The reason open failed, for the player to print. */
static int fail(Sdl *s, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static int fail(Sdl *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->vo->err, sizeof(s->vo->err), fmt, ap);
    va_end(ap);
    return -1;
}

static int parse_keys(Sdl *s, const char *list)
{
    if (!list)
        return 0;
    gchar **items = g_strsplit(list, ",", -1);
    int ret = 0;
    for (int i = 0; items[i] && *items[i]; i++) {
        char name[32];
        double at;
        if (s->n_keys == (int)G_N_ELEMENTS(s->keys) ||
            sscanf(items[i], "%lf:%31s", &at, name) != 2) {
            ret = -1;
            break;
        }
        SDL_Keycode k = !strcmp(name, "space")   ? SDLK_SPACE
                        : !strcmp(name, "left")  ? SDLK_LEFT
                        : !strcmp(name, "right") ? SDLK_RIGHT
                        : !strcmp(name, "esc")   ? SDLK_ESCAPE
                        : strlen(name) == 1      ? (SDL_Keycode)name[0]
                                                 : SDLK_UNKNOWN;
        if (k == SDLK_UNKNOWN) {
            ret = -1;
            break;
        }
        s->keys[s->n_keys++] = (TestKey){at, k, false};
    }
    g_strfreev(items);
    if (ret < 0)
        fail(s, "--test-keys %s: expected SECONDS:KEY,... (space, left, right, s, f, o, q, esc)",
             list);
    return ret;
}

static int window_open(Sdl *s, int w, int h)
{
    if (SDL_Init(SDL_INIT_VIDEO) < 0)
        return fail(s, "no display for --vo sdl: %s (try --vo null)", SDL_GetError());
    s->win = SDL_CreateWindow("dfplay", SDL_WINDOWPOS_UNDEFINED, SDL_WINDOWPOS_UNDEFINED, w, h,
                              SDL_WINDOW_RESIZABLE |
                                  (s->fullscreen ? SDL_WINDOW_FULLSCREEN_DESKTOP : 0));
    if (!s->win)
        return fail(s, "cannot open a window: %s", SDL_GetError());
    s->ren = SDL_CreateRenderer(s->win, -1, SDL_RENDERER_ACCELERATED | SDL_RENDERER_PRESENTVSYNC);
    if (!s->ren) /* e.g. Xvfb without GL */
        s->ren = SDL_CreateRenderer(s->win, -1, SDL_RENDERER_SOFTWARE);
    if (!s->ren)
        return fail(s, "cannot create a renderer: %s", SDL_GetError());
    SDL_RenderSetLogicalSize(s->ren, w, h);
    return 0;
}

static void window_close(Sdl *s)
{
    if (s->osd)
        SDL_DestroyTexture(s->osd);
    if (s->tex)
        SDL_DestroyTexture(s->tex);
    if (s->ren)
        SDL_DestroyRenderer(s->ren);
    if (s->win)
        SDL_DestroyWindow(s->win);
    SDL_Quit();
}

static int cmp_i64(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* q-quantile of v (sorts v). */
static int64_t percentile(int64_t *v, size_t n, double q)
{
    if (!n)
        return 0;
    qsort(v, n, sizeof(*v), cmp_i64);
    return v[(size_t)(q * (double)(n - 1) + 0.5)];
}

static void osd_update(Sdl *s)
{
    cairo_surface_t *cs = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, OSD_W, OSD_H);
    cairo_t *cr = cairo_create(cs);
    cairo_set_source_rgba(cr, 0, 0, 0, 0.6);
    cairo_paint(cr);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_select_font_face(cr, "monospace", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, 15);
    DfDecoderStats st;
    df_decoder_stats(s->p->dec, &st);
    g_mutex_lock(&s->lock);
    const int depth = s->n;
    g_mutex_unlock(&s->lock);
    char lines[6][96];
    snprintf(lines[0], sizeof(lines[0]), "fps %.1f   shown %" PRId64 "   dropped %" PRId64,
             s->fps_now, s->shown, s->dropped);
    snprintf(lines[1], sizeof(lines[1]), "decode latency p50 %.1f ms  p99 %.1f ms",
             st.latency_p50_ms, st.latency_p99_ms);
    snprintf(lines[2], sizeof(lines[2]), "workers %d   policy %s", df_sched_n_workers(s->p->sched),
             df_sched_policy_name(s->p->sched));
    snprintf(lines[3], sizeof(lines[3]), "threading %s   queue %d/%d",
             df_decoder_threading(s->p->dec, NULL), depth, QUEUE_MAX);
    snprintf(lines[4], sizeof(lines[4]), "decode errors %" PRIu64 "%s", st.decode_errors,
             s->paused ? "   PAUSED" : "");
    snprintf(lines[5], sizeof(lines[5]), "pts %.3f s",
             s->last_pts == AV_NOPTS_VALUE ? 0.0 : (double)s->last_pts * av_q2d(s->tb));
    for (int i = 0; i < 6; i++) {
        cairo_move_to(cr, 10, 22 + 22 * i);
        cairo_show_text(cr, lines[i]);
    }
    cairo_destroy(cr);
    cairo_surface_flush(cs);
    if (!s->osd) {
        s->osd = SDL_CreateTexture(s->ren, SDL_PIXELFORMAT_ARGB8888, SDL_TEXTUREACCESS_STREAMING,
                                   OSD_W, OSD_H);
        if (s->osd)
            SDL_SetTextureBlendMode(s->osd, SDL_BLENDMODE_BLEND);
    }
    if (s->osd)
        SDL_UpdateTexture(s->osd, NULL, cairo_image_surface_get_data(cs),
                          cairo_image_surface_get_stride(cs));
    cairo_surface_destroy(cs);
}

static int write_ppm(Sdl *s, const char *path, int w, int h)
{
    uint8_t *buf = malloc((size_t)w * (size_t)h * 3);
    if (!buf)
        return -1;
    int ret = SDL_RenderReadPixels(s->ren, NULL, SDL_PIXELFORMAT_RGB24, buf, w * 3);
    FILE *f = ret == 0 ? fopen(path, "wb") : NULL;
    if (f) {
        fprintf(f, "P6\n%d %d\n255\n", w, h);
        ret = fwrite(buf, 3, (size_t)w * (size_t)h, f) == (size_t)w * (size_t)h ? 0 : -1;
        ret |= fclose(f);
    } else {
        ret = -1;
    }
    free(buf);
    return ret;
}

/* Draw `f` (when non-NULL) and the overlay, then present. */
static int render(Sdl *s, const AVFrame *f)
{
    if (f) {
        if (!s->tex || s->tex_w != f->width || s->tex_h != f->height) {
            if (s->tex)
                SDL_DestroyTexture(s->tex);
            s->tex = SDL_CreateTexture(s->ren, SDL_PIXELFORMAT_IYUV, SDL_TEXTUREACCESS_STREAMING,
                                       f->width, f->height);
            if (!s->tex) {
                df_player_fail("cannot create a %dx%d texture: %s", f->width, f->height,
                               SDL_GetError());
                return -1;
            }
            s->tex_w = f->width;
            s->tex_h = f->height;
            SDL_RenderSetLogicalSize(s->ren, f->width, f->height);
        }
        SDL_UpdateYUVTexture(s->tex, NULL, f->data[0], f->linesize[0], f->data[1], f->linesize[1],
                             f->data[2], f->linesize[2]);
    }
    SDL_RenderClear(s->ren);
    if (s->tex)
        SDL_RenderCopy(s->ren, s->tex, NULL, NULL);
    if (s->osd_on && s->osd)
        SDL_RenderCopy(s->ren, s->osd, NULL, &(SDL_Rect){8, 8, OSD_W, OSD_H});
    /* The hidden test hook reads the back buffer, so before presenting. */
    if (f && s->o->screenshot && !s->screenshot_done &&
        f->best_effort_timestamp != AV_NOPTS_VALUE &&
        (double)f->best_effort_timestamp * av_q2d(s->tb) >= s->o->screenshot_pts - 1e-6) {
        s->screenshot_done = true;
        if (write_ppm(s, s->o->screenshot, s->tex_w, s->tex_h) < 0)
            df_player_fail("cannot write the screenshot %s", s->o->screenshot);
        else
            fprintf(stderr, "dfplay: screenshot of the frame at %.3f s\n",
                    (double)f->best_effort_timestamp * av_q2d(s->tb));
    }
    SDL_RenderPresent(s->ren);
    return 0;
}

static void request_seek(Sdl *s, int64_t delta_us)
{
    const AVStream *st = s->p->fmt->streams[s->p->stream];
    const int64_t start = st->start_time != AV_NOPTS_VALUE ? st->start_time : 0;
    int64_t cur = s->last_pts != AV_NOPTS_VALUE ? s->last_pts : start;
    int64_t target = cur + av_rescale_q(delta_us, AV_TIME_BASE_Q, s->tb);
    if (target < start)
        target = start;
    if (s->report_seek) {
        s->seek_to_s = (double)target * av_q2d(s->tb);
        s->after_seek = true;
    }
    g_mutex_lock(&s->lock);
    s->seek_req = true;
    s->seek_target = target;
    queue_clear_locked(s);
    g_cond_broadcast(&s->cond);
    g_mutex_unlock(&s->lock);
    s->have_base = false;
}

static void handle_key(Sdl *s, SDL_Keycode k)
{
    const int64_t now = av_gettime_relative();
    switch (k) {
    case SDLK_SPACE:
        s->paused = !s->paused;
        if (s->paused)
            s->pause_start = now;
        else
            s->have_base = false; /* resume from the frame shown (steps moved it) */
        break;
    case SDLK_LEFT:
        request_seek(s, -SEEK_STEP_US);
        break;
    case SDLK_RIGHT:
        request_seek(s, SEEK_STEP_US);
        break;
    case SDLK_s:
        if (s->paused)
            s->step = true;
        break;
    case SDLK_f:
        s->fullscreen = !s->fullscreen;
        SDL_SetWindowFullscreen(s->win, s->fullscreen ? SDL_WINDOW_FULLSCREEN_DESKTOP : 0);
        break;
    case SDLK_o:
        s->osd_on = !s->osd_on;
        s->osd_updated = 0;
        break;
    case SDLK_q:
    case SDLK_ESCAPE:
        g_mutex_lock(&s->lock);
        s->quit = true;
        g_cond_broadcast(&s->cond);
        g_mutex_unlock(&s->lock);
        break;
    default:
        break;
    }
}

static void handle_events(Sdl *s)
{
    const int64_t now = av_gettime_relative();
    /* Synthetic presses go through SDL's own queue, like real ones. */
    for (int i = 0; i < s->n_keys && s->t_first; i++)
        if (!s->keys[i].sent && now - s->t_first >= (int64_t)(s->keys[i].at * 1e6)) {
            s->keys[i].sent = true;
            SDL_Event ev = {.type = SDL_KEYDOWN};
            ev.key.keysym.sym = s->keys[i].key;
            ev.key.state = SDL_PRESSED;
            SDL_PushEvent(&ev);
        }
    SDL_Event ev;
    while (SDL_PollEvent(&ev)) {
        if (ev.type == SDL_QUIT)
            handle_key(s, SDLK_q);
        else if (ev.type == SDL_KEYDOWN)
            handle_key(s, ev.key.keysym.sym);
        else if (ev.type == SDL_WINDOWEVENT && ev.window.event == SDL_WINDOWEVENT_EXPOSED)
            render(s, NULL);
    }
}

static void print_stats(Sdl *s, bool last)
{
    const double secs = (double)(av_gettime_relative() - s->t_start) / 1e6;
    const double fps = secs > 0 ? (double)s->decoded / secs : 0;
    const double rate = av_q2d(s->p->fmt->streams[s->p->stream]->avg_frame_rate);
    char total[32] = "?";
    if (s->p->total_frames > 0)
        snprintf(total, sizeof(total), "%" PRId64, s->p->total_frames);
    fprintf(stderr,
            "\rdfplay: decoded %" PRId64 "/%s frames, %.1f fps, %.2fx, shown %" PRId64
            ", dropped %" PRId64 "   %s",
            s->decoded, total, fps, rate > 0 ? fps / rate : 0.0, s->shown, s->dropped,
            last ? "\n" : "");
}

/* Due time (system clock, us) of a frame of this epoch. */
static int64_t due_time(Sdl *s, const QItem *it)
{
    const int64_t pts = it->f->best_effort_timestamp;
    if (!s->have_base || it->epoch != s->cur_epoch || pts == AV_NOPTS_VALUE) {
        s->have_base = true;
        s->cur_epoch = it->epoch;
        s->base_time = av_gettime_relative();
        s->base_pts = pts == AV_NOPTS_VALUE ? 0 : pts;
    }
    return s->base_time + av_rescale_q(pts - s->base_pts, s->tb, AV_TIME_BASE_Q);
}

static void display_loop(Sdl *s)
{
    for (;;) {
        handle_events(s);
        const int64_t now = av_gettime_relative();
        if (s->osd_on && now - s->osd_updated > 250000) {
            s->osd_updated = now;
            osd_update(s);
            if (s->paused)
                render(s, NULL);
        }
        if (s->o->stats && now - s->stats_printed > 500000) {
            s->stats_printed = now;
            print_stats(s, false);
        }
        g_mutex_lock(&s->lock);
        if (s->quit) {
            g_mutex_unlock(&s->lock);
            return;
        }
        while (s->n && s->q[s->head].epoch < s->min_epoch) {
            av_frame_free(&s->q[s->head].f);
            s->head = (s->head + 1) % QUEUE_MAX;
            s->n--;
            g_cond_broadcast(&s->cond);
        }
        if (!s->n) {
            const bool done = s->decode_done && !s->seek_req;
            if (!done)
                g_cond_wait_until(&s->cond, &s->lock, g_get_monotonic_time() + 5000);
            g_mutex_unlock(&s->lock);
            if (done)
                return;
            continue;
        }
        if (s->paused && !s->step) {
            g_mutex_unlock(&s->lock);
            SDL_Delay(5);
            continue;
        }
        QItem *it = &s->q[s->head];
        const int64_t due = s->step ? now : due_time(s, it);
        if (!s->untimed && !s->step && due > now) {
            g_mutex_unlock(&s->lock);
            const int64_t wait = due - now;
            SDL_Delay((Uint32)(wait > 5000 ? 5 : (wait + 999) / 1000));
            continue;
        }
        QItem item = *it;
        s->head = (s->head + 1) % QUEUE_MAX;
        s->n--;
        const bool next_due =
            s->n > 0 && s->q[s->head].epoch == item.epoch &&
            s->q[s->head].f->best_effort_timestamp != AV_NOPTS_VALUE &&
            s->base_time + av_rescale_q(s->q[s->head].f->best_effort_timestamp - s->base_pts, s->tb,
                                        AV_TIME_BASE_Q) <=
                now;
        g_cond_broadcast(&s->cond);
        g_mutex_unlock(&s->lock);
        /* Late: a frame whose successor is already due is skipped. */
        if (!s->untimed && !s->step && next_due && now > due + s->frame_us / 2) {
            s->dropped++;
            av_frame_free(&item.f);
            continue;
        }
        if (render(s, item.f) < 0) {
            av_frame_free(&item.f);
            handle_key(s, SDLK_q);
            return;
        }
        const int64_t shown_at = av_gettime_relative();
        if (!s->untimed && !s->step) {
            if (s->n_jitter == s->cap_jitter) {
                s->cap_jitter = s->cap_jitter ? 2 * s->cap_jitter : 1024;
                s->jitter = realloc(s->jitter, s->cap_jitter * sizeof(*s->jitter));
            }
            if (s->jitter)
                s->jitter[s->n_jitter++] = llabs(shown_at - due);
        }
        if (!s->t_first)
            s->t_first = shown_at;
        if (s->after_seek) {
            s->after_seek = false;
            fprintf(stderr, "dfplay: seek to %.3f s, first frame shown at %.3f s\n", s->seek_to_s,
                    (double)item.f->best_effort_timestamp * av_q2d(s->tb));
        }
        s->step = false;
        s->shown++;
        s->last_pts = item.f->best_effort_timestamp;
        if (++s->fps_n, shown_at - s->fps_t0 >= 1000000) {
            s->fps_now = (double)s->fps_n * 1e6 / (double)(shown_at - s->fps_t0);
            s->fps_t0 = shown_at;
            s->fps_n = 0;
        }
        av_frame_free(&item.f);
    }
}

static int sdl_open(DfVo *vo, const DfVoParams *vp)
{
    Sdl *s = vo->priv;
    Player *p = vp->player;
    const Options *o = p->opt;
    const AVStream *st = vp->stream;
    s->vo = vo;
    s->p = p;
    s->o = o;
    s->tb = st->time_base;
    s->untimed = o->untimed;
    s->fullscreen = o->fullscreen;
    s->last_pts = AV_NOPTS_VALUE;
    s->report_seek = o->verbose || o->test_keys;
    const AVRational rate = vp->out_frame_rate.num > 0 ? vp->out_frame_rate : vp->frame_rate;
    s->frame_us = rate.num > 0 ? av_rescale(AV_TIME_BASE, rate.den, rate.num) : 40000;
    g_mutex_init(&s->lock);
    g_cond_init(&s->cond);
    int ret = parse_keys(s, o->test_keys);
    if (ret == 0)
        ret = window_open(s, st->codecpar->width > 0 ? st->codecpar->width : 640,
                          st->codecpar->height > 0 ? st->codecpar->height : 360);
    if (ret < 0) {
        window_close(s);
        g_mutex_clear(&s->lock);
        g_cond_clear(&s->cond);
    }
    return ret;
}

static int sdl_run(DfVo *vo, int (*play)(void *arg), void *arg)
{
    Sdl *s = vo->priv;
    Player *p = s->p;
    const Options *o = s->o;
    s->play = play;
    s->play_arg = arg;
    s->t_start = s->fps_t0 = av_gettime_relative();
    GThread *th = g_thread_new("dfplay-decode", decode_thread, s);
    display_loop(s);
    g_mutex_lock(&s->lock);
    s->quit = true;
    g_cond_broadcast(&s->cond);
    g_mutex_unlock(&s->lock);
    g_thread_join(th);
    const int ret = s->decode_ret;
    if (o->stats)
        print_stats(s, true);
    g_mutex_lock(&s->lock);
    queue_clear_locked(s);
    g_mutex_unlock(&s->lock);
    if (ret >= 0 && !o->quiet) {
        const double secs = (double)(av_gettime_relative() - s->t_start) / 1e6;
        DfDecoderStats ds;
        df_decoder_stats(p->dec, &ds);
        const char *why = NULL;
        const char *mode = df_decoder_threading(p->dec, &why);
        fprintf(stderr,
                "dfplay: %" PRId64 " frames shown, %" PRId64 " dropped late, %" PRId64
                " decoded in %.3f s (%.1f fps); decode latency p50 %.1f p99 %.1f max %.1f ms; "
                "display jitter p50 %.1f p99 %.1f max %.1f ms; %d workers, policy %s, threading "
                "%s, %" PRIu64 " decode errors\n",
                s->shown, s->dropped, s->decoded, secs, secs > 0 ? (double)s->decoded / secs : 0,
                ds.latency_p50_ms, ds.latency_p99_ms, ds.latency_max_ms,
                (double)percentile(s->jitter, s->n_jitter, 0.5) / 1000.0,
                (double)percentile(s->jitter, s->n_jitter, 0.99) / 1000.0,
                (double)percentile(s->jitter, s->n_jitter, 1.0) / 1000.0,
                df_sched_n_workers(p->sched), df_sched_policy_name(p->sched), mode, p->errors);
    }
    return ret;
}

static int sdl_close(DfVo *vo)
{
    Sdl *s = vo->priv;
    window_close(s);
    g_mutex_clear(&s->lock);
    g_cond_clear(&s->cond);
    free(s->jitter);
    return 0;
}

/* The window shows IYUV textures: other formats are converted by the
 * decoder's reconstruction bands, in parallel. */
const DfVoClass df_vo_sdl = {
    .name = "sdl",
    .help = "an SDL2 window paced to the stream clock",
    .timed = true,
    .summary = true,
    .yuv420p = true,
    .priv_size = sizeof(Sdl),
    .open = sdl_open,
    .frame = sdl_frame,
    .close = sdl_close,
    .run = sdl_run,
    .seek = sdl_seek,
};
