/* F(k): the optional libavfilter chain, with its slice jobs as F band nodes.
 *
 * AVFilterGraph.execute and nb_threads must be set right after
 * avfilter_graph_alloc(), before the first filter exists: each filter
 * copies the graph's execute function when it is created, and with
 * nb_threads left at 0 slice-threaded filters get 0 jobs and pass frames
 * through untouched, silently (docs/design.md).  Job j of n covers rows
 * h*j/n .. h*(j+1)/n of the filter's input, so each band job reads the rows
 * that the S jobs (or the previous filter's jobs) wrote, and the scheduler
 * is told so.  Filters that are not slice-threaded simply run inside F(k)
 * as one task.  The graph is created once at configuration to reject a bad
 * description early, and rebuilt when the input geometry changes or after a
 * flush.
 *
 * Every picture carries the opaque of the frame it came from (callers map
 * pictures to packets by it, dfdec to its GstVideoCodecFrames): a picture
 * a filter made anew (framesync's: hstack, overlay) gets the opaque of
 * the input of its PTS.  A caller that takes one picture per packet
 * (filter_keeps_rate) has a graph that changes the frame rate (yadif=1,
 * fps, framestep) refused. */
#include "media_internal.h"

#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <stdlib.h>
#include <string.h>

struct DfFilter {
    DfDecoder *dec;
    char *desc;
    AVFilterGraph *graph;
    AVFilterContext *src, *sink;
    int w, h, fmt;
    AVRational sar, tb;
    int n_jobs;
    bool eof_sent;
    /* Where the input ends (the latest PTS + that picture's duration), for
     * the EOF a rate filter needs to time its last output (fps=25 on a
     * 25 fps stream puts out the last picture only when it knows that
     * picture's duration, as fftools gives it); AV_NOPTS_VALUE until a
     * picture with a PTS came. */
    int64_t end_pts, last_pts;
    /* F chain state during a push */
    const DfRowMap *in_map; /* rows of the frame being pushed */
    uint64_t in_row_bytes;
    int64_t deadline;
    bool ran_jobs;
    DfRowMap last; /* workers of the last execute call */
    /* PTS and opaque of the last inputs, for pictures made without one. */
    struct {
        int64_t pts;
        void *opaque;
    } recent[16];
    unsigned n_recent;
};

/* The graph's input rate: the stream's when the caller gives it, else a
 * nominal one, enough to see whether the graph changes it. */
static AVRational input_rate(const DfFilter *f)
{
    if (f->dec && f->dec->cfg.frame_rate.num > 0 && f->dec->cfg.frame_rate.den > 0)
        return f->dec->cfg.frame_rate;
    return (AVRational){25, 1};
}

typedef struct FilterCall {
    AVFilterContext *ctx;
    avfilter_action_func *func;
    void *arg;
    int *ret;
    int nb_jobs;
    int *workers;
    uint64_t *ids; /* node id of each job, for the bands' inputs; may be NULL */
} FilterCall;

static void filter_job(DfTask *t, void *arg)
{
    FilterCall *c = arg;
    const int j = df_task_index(t);
    int r = c->func(c->ctx, c->arg, j, c->nb_jobs);
    if (c->ret)
        c->ret[j] = r;
    c->workers[j] = df_task_worker(t);
    if (c->ids)
        c->ids[j] = df_node_id(df_task_node(t));
}

/* Jobs must run even if some group were cancelled: the filter reads ret[]. */
static void filter_job_cancel(DfTask *t, void *arg)
{
    filter_job(t, arg);
}

static int filter_execute(AVFilterContext *ctx, avfilter_action_func *func, void *arg, int *ret,
                          int nb_jobs)
{
    DfFilter *f = ctx->graph->opaque;
    DfDecoder *dec = f->dec;
    if (nb_jobs <= 0)
        return 0;
    int stack_workers[DF_ROWMAP_MAX];
    int *workers = nb_jobs <= DF_ROWMAP_MAX ? stack_workers : calloc((size_t)nb_jobs, sizeof(int));
    if (!workers) {
        for (int j = 0; j < nb_jobs; j++) {
            int r = func(ctx, arg, j, nb_jobs);
            if (ret)
                ret[j] = r;
        }
        return 0;
    }
    /* Only as many ids as the row map keeps (the rest stay unknown). */
    uint64_t stack_ids[DF_ROWMAP_MAX];
    FilterCall call = {
        ctx, func, arg, ret, nb_jobs, workers, nb_jobs <= DF_ROWMAP_MAX ? stack_ids : NULL};
    const int h = ctx->nb_inputs && ctx->inputs[0] ? ctx->inputs[0]->h : f->h;
    const DfRowMap *map = f->in_map;
    DfGroup *g = df_group_new(dec->sched, f->deadline);
    for (int j = 0; j < nb_jobs; j++) {
        DfNodeDesc d = {
            .fn = filter_job,
            .cancel = filter_job_cancel,
            .arg = &call,
            .module = dec->graph.mod_fb,
            .index = j,
            .group = g,
        };
        DfNode *node = g ? df_node_new(dec->sched, &d) : NULL;
        if (!node) {
            /* Out of memory: run the rest here, in order. */
            for (int k = j; k < nb_jobs; k++) {
                int r = func(ctx, arg, k, nb_jobs);
                if (ret)
                    ret[k] = r;
                workers[k] = df_sched_current_worker(dec->sched);
            }
            break;
        }
        if (map && h > 0) {
            int y0 = (int)((int64_t)h * j / nb_jobs), y1 = (int)((int64_t)h * (j + 1) / nb_jobs);
            df_graph_add_row_inputs(dec, dec->worker_bytes, node, map, h, y0, y1, f->in_row_bytes,
                                    map == &f->last ? dec->graph.mod_fb : dec->graph.mod_s);
        }
        df_node_submit(node);
        df_node_release(node);
    }
    df_sched_wait(dec->sched, g);
    df_group_release(g);

    DF_MEDIA_CTR_ADD(dec, filter_calls, 1);
    DF_MEDIA_CTR_ADD(dec, filter_jobs, nb_jobs);
    f->last.n = 0;
    f->last.whole = -1;
    f->last.whole_id = 0;
    f->last.rewritten = false;
    for (int j = 0; j < nb_jobs; j++) {
        if (workers[j] >= 0 && workers[j] < 64 && workers[j] < dec->n_workers)
            DF_MEDIA_CTR_ADD(dec, filter_jobs_per_worker[workers[j]], 1);
        if (f->last.n < DF_ROWMAP_MAX) {
            f->last.node[f->last.n] = call.ids ? call.ids[j] : 0;
            f->last.worker[f->last.n++] = (int16_t)workers[j];
        }
    }
    /* The next filter in the chain reads what these jobs wrote. */
    f->in_map = &f->last;
    f->ran_jobs = true;
    if (workers != stack_workers)
        free(workers);
    return 0;
}

static void graph_free(DfFilter *f)
{
    avfilter_graph_free(&f->graph);
    f->src = f->sink = NULL;
}

/* `configure`: link and configure the graph at f's geometry; else only
 * parse it (filter names, options, labels: no geometry involved). */
static int build(DfFilter *f, bool configure, DfError *err)
{
    char args[256];
    AVFilterInOut *outputs = NULL, *inputs = NULL;
    int ret;
    graph_free(f);
    f->eof_sent = false;
    f->end_pts = f->last_pts = AV_NOPTS_VALUE;
    AVFilterGraph *g = avfilter_graph_alloc();
    if (!g)
        return df_err(err, AVERROR(ENOMEM), "out of memory");
    /* Before any filter is created (see the top of this file). */
    g->opaque = f;
    g->execute = filter_execute;
    g->nb_threads = f->n_jobs;
    g->thread_type = AVFILTER_THREAD_SLICE;
    f->graph = g;

    snprintf(args, sizeof(args),
             "video_size=%dx%d:pix_fmt=%d:time_base=%d/%d:pixel_aspect=%d/%d:frame_rate=%d/%d",
             f->w, f->h, f->fmt, f->tb.num, f->tb.den, f->sar.num, f->sar.den > 0 ? f->sar.den : 1,
             input_rate(f).num, input_rate(f).den);
    ret =
        avfilter_graph_create_filter(&f->src, avfilter_get_by_name("buffer"), "in", args, NULL, g);
    if (ret < 0)
        goto fail;
    ret = avfilter_graph_create_filter(&f->sink, avfilter_get_by_name("buffersink"), "out", NULL,
                                       NULL, g);
    if (ret < 0)
        goto fail;
    outputs = avfilter_inout_alloc();
    inputs = avfilter_inout_alloc();
    if (!outputs || !inputs) {
        ret = AVERROR(ENOMEM);
        goto fail;
    }
    outputs->name = av_strdup("in");
    outputs->filter_ctx = f->src;
    inputs->name = av_strdup("out");
    inputs->filter_ctx = f->sink;
    ret = avfilter_graph_parse_ptr(g, f->desc, &inputs, &outputs, NULL);
    if (ret < 0)
        goto fail;
    if (!configure) {
        avfilter_inout_free(&inputs);
        avfilter_inout_free(&outputs);
        graph_free(f);
        return 0;
    }
    ret = avfilter_graph_config(g, NULL);
    if (ret < 0)
        goto fail;
    avfilter_inout_free(&inputs);
    avfilter_inout_free(&outputs);
    const AVRational rate = av_buffersink_get_frame_rate(f->sink);
    const AVRational in_rate = input_rate(f);
    if (f->dec && f->dec->cfg.filter_keeps_rate && av_cmp_q(rate, in_rate) != 0) {
        graph_free(f);
        return df_err(err, AVERROR(ENOTSUP),
                      "filter \"%s\" changes the frame rate (%d/%d from %d/%d): this decoder "
                      "puts out one picture per decoded frame",
                      f->desc, rate.num, rate.den, in_rate.num, in_rate.den);
    }
    return 0;
fail:
    avfilter_inout_free(&inputs);
    avfilter_inout_free(&outputs);
    graph_free(f);
    char e[AV_ERROR_MAX_STRING_SIZE];
    av_strerror(ret, e, sizeof(e));
    return df_err(err, ret, "filter \"%s\" for %dx%d %s: %s", f->desc, f->w, f->h,
                  av_get_pix_fmt_name(f->fmt) ? av_get_pix_fmt_name(f->fmt) : "?", e);
}

int df_filter_new(DfDecoder *dec, const char *desc, int width, int height, int format,
                  AVRational sar, AVRational tb, int n_jobs, DfFilter **out, DfError *err)
{
    *out = NULL;
    DfFilter *f = calloc(1, sizeof(*f));
    if (!f)
        return df_err(err, AVERROR(ENOMEM), "out of memory");
    f->dec = dec;
    f->desc = strdup(desc);
    f->w = width;
    f->h = height;
    f->fmt = format;
    f->sar = sar;
    f->tb = tb;
    f->n_jobs = n_jobs > 0 ? n_jobs : 1;
    f->deadline = DF_NO_DEADLINE;
    if (!f->desc) {
        free(f);
        return df_err(err, AVERROR(ENOMEM), "out of memory");
    }
    int ret = build(f, true, err);
    if (ret < 0) {
        df_filter_free(&f);
        return ret;
    }
    *out = f;
    return 0;
}

int df_filter_check(const char *desc, DfError *err)
{
    if (!desc)
        return df_err(err, AVERROR(EINVAL), "no filter description");
    DfFilter f = {.desc = strdup(desc),
                  .w = 320,
                  .h = 240,
                  .fmt = AV_PIX_FMT_YUV420P,
                  .sar = {1, 1},
                  .tb = {1, 25},
                  .n_jobs = 1};
    if (!f.desc)
        return df_err(err, AVERROR(ENOMEM), "out of memory");
    const int ret = build(&f, false, err);
    free(f.desc);
    return ret;
}

void df_filter_free(DfFilter **pf)
{
    DfFilter *f = *pf;
    if (!f)
        return;
    graph_free(f);
    free(f->desc);
    free(f);
    *pf = NULL;
}

AVRational df_filter_frame_rate(const DfFilter *f)
{
    return f->graph ? av_buffersink_get_frame_rate(f->sink) : (AVRational){0, 1};
}

int df_filter_reset(DfFilter *f)
{
    DfError err;
    int ret = build(f, true, &err);
    if (ret < 0)
        df_log(f->dec, AV_LOG_ERROR, "%s\n", err.msg);
    return ret;
}

/* A picture's duration in the stream's time base: its own, else the gap
 * since the previous input, else one period of the input rate. */
static int64_t input_duration(const DfFilter *f, const AVFrame *in)
{
    if (df_frame_duration(in) > 0)
        return df_frame_duration(in);
    if (f->last_pts != AV_NOPTS_VALUE && in->pts > f->last_pts)
        return in->pts - f->last_pts;
    const int64_t d = av_rescale_q(1, av_inv_q(input_rate(f)), f->tb);
    return d > 0 ? d : 1;
}

static void note_input(DfFilter *f, const AVFrame *in)
{
    if (in->pts == AV_NOPTS_VALUE)
        return;
    const int64_t end = in->pts + input_duration(f, in);
    if (f->end_pts == AV_NOPTS_VALUE || end > f->end_pts)
        f->end_pts = end;
    f->last_pts = in->pts;
}

static int send_eof(DfFilter *f)
{
    if (f->end_pts == AV_NOPTS_VALUE)
        return av_buffersrc_add_frame_flags(f->src, NULL, 0);
    return av_buffersrc_close(f->src, f->end_pts, AV_BUFFERSRC_FLAG_PUSH);
}

static int pull(DfFilter *f, DfFilterSink sink, void *opaque)
{
    for (;;) {
        AVFrame *out = av_frame_alloc();
        if (!out)
            return AVERROR(ENOMEM);
        int ret = av_buffersink_get_frame(f->sink, out);
        if (ret < 0) {
            av_frame_free(&out);
            return ret == AVERROR(EAGAIN) || ret == AVERROR_EOF ? 0 : ret;
        }
        /* Framesync's filters put out their own time base (hstack:
         * microseconds): the caller's PTS are in the stream's. */
        const AVRational otb = av_buffersink_get_time_base(f->sink);
        if (av_cmp_q(otb, f->tb) != 0) {
            if (out->pts != AV_NOPTS_VALUE)
                out->pts = av_rescale_q(out->pts, otb, f->tb);
            df_frame_set_duration(out, av_rescale_q(df_frame_duration(out), otb, f->tb));
        }
        /* The graph's timing is the picture's (fps' duplicates keep their
         * source's best-effort timestamp otherwise). */
        out->best_effort_timestamp = out->pts;
        const unsigned n = f->n_recent < 16 ? f->n_recent : 16;
        for (unsigned i = 0; !out->opaque && i < n; i++)
            if (f->recent[i].pts == out->pts)
                out->opaque = f->recent[i].opaque;
        DfRowMap whole = {.n = 0,
                          .whole = df_sched_current_worker(f->dec->sched),
                          .whole_id = df_sched_current_node_id(f->dec->sched)};
        ret = sink(opaque, out, f->ran_jobs ? &f->last : &whole);
        if (ret < 0)
            return ret;
    }
}

int df_filter_push(DfFilter *f, AVFrame *in, const DfRowMap *map, DfFilterSink sink, void *opaque)
{
    int ret = 0;
    if (!f->graph || (in && (in->width != f->w || in->height != f->h || in->format != f->fmt))) {
        /* New geometry: flush what the old graph holds, then rebuild. */
        if (f->graph && !f->eof_sent) {
            f->ran_jobs = false;
            f->in_map = NULL;
            if (send_eof(f) >= 0)
                pull(f, sink, opaque);
        }
        if (in) {
            f->w = in->width;
            f->h = in->height;
            f->fmt = in->format;
            f->sar = in->sample_aspect_ratio;
        }
        DfError err;
        ret = build(f, true, &err);
        if (ret < 0) {
            df_log(f->dec, AV_LOG_ERROR, "%s\n", err.msg);
            av_frame_free(&in);
            return ret;
        }
    }
    if (f->eof_sent) {
        av_frame_free(&in);
        return AVERROR_EOF;
    }
    /* The graph times pictures as fftools has them: by the best-effort
     * timestamp (raw streams' B-pictures have no PTS of their own). */
    if (in && in->best_effort_timestamp != AV_NOPTS_VALUE)
        in->pts = in->best_effort_timestamp;
    /* A picture with no time at all (drained from a raw stream): where
     * the stream went on, as fftools gives the drain the next predicted
     * DTS. */
    if (in && in->pts == AV_NOPTS_VALUE)
        in->pts = f->end_pts;
    if (in && in->opaque) {
        f->recent[f->n_recent % 16].pts = in->pts;
        f->recent[f->n_recent % 16].opaque = in->opaque;
        f->n_recent++;
    }
    f->in_map = map;
    f->in_row_bytes = in ? df_row_bytes(in) : 0;
    f->ran_jobs = false;
    if (in) {
        note_input(f, in);
        ret = av_buffersrc_add_frame_flags(f->src, in, AV_BUFFERSRC_FLAG_PUSH);
    } else {
        ret = send_eof(f);
        f->eof_sent = true;
    }
    av_frame_free(&in);
    if (ret < 0)
        return ret;
    return pull(f, sink, opaque);
}

/* ------------------------------------------------------------- F(k) */

static int add_out(void *opaque, AVFrame *frame, const DfRowMap *map)
{
    DfMediaSlot *s = opaque;
    int ret = df_frame_list_add(&s->out, frame, map);
    if (ret < 0)
        av_frame_free(&frame);
    return ret;
}

void df_filter_task(DfTask *t, void *arg)
{
    DfMediaSlot *s = arg;
    DfDecoder *dec = s->dec;
    DfFilter *f = dec->filter;
    f->deadline = s->deadline;
    for (int i = 0; i < s->decoded.n; i++) {
        DfFrameItem *it = &s->decoded.v[i];
        const int64_t pts = it->frame->pts;
        AVFrame *in = it->frame;
        it->frame = NULL;
        int ret = df_filter_push(f, in, &it->map, add_out, s);
        if (ret < 0) {
            char e[AV_ERROR_MAX_STRING_SIZE];
            av_strerror(ret, e, sizeof(e));
            df_slot_error(s, pts, ret, "filter: %s", e);
        }
    }
    if (!s->pkt && !f->eof_sent) {
        int ret = df_filter_push(f, NULL, NULL, add_out, s);
        if (ret < 0 && ret != AVERROR_EOF) {
            char e[AV_ERROR_MAX_STRING_SIZE];
            av_strerror(ret, e, sizeof(e));
            df_slot_error(s, AV_NOPTS_VALUE, ret, "filter drain: %s", e);
        }
    }
    df_frame_list_clear(&s->decoded);
    df_output_prepare(dec, s);
    df_graph_submit_bands(dec, s, true);
}

void df_filter_task_cancel(DfTask *t, void *arg)
{
    DfMediaSlot *s = arg;
    df_frame_list_clear(&s->decoded);
    df_graph_submit_bands(s->dec, s, false);
}
