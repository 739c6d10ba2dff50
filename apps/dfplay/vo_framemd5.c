/* --vo framemd5: exactly what `ffmpeg -i IN -f framemd5 -` prints for the
 * decoder's native pixel format.  The lines come from libavformat's own
 * framemd5 muxer fed rawvideo packets; the timestamps follow ffmpeg 5.1's
 * path for that muxer (variable frame rate sync): frame pts =
 * best_effort_timestamp minus the input's start time, rescaled to
 * 1/frame_rate (after --filter) with ffmpeg's extra precision, a frame dropped when it falls
 * 0.6 frames behind the output clock.  Durations are left to the muxer, as
 * ffmpeg's rawvideo packets carry none. */
#include "vo.h"

#include "lavcompat.h"

#include <libavutil/imgutils.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct Md5 {
    AVFormatContext *oc;
    AVStream *st;
    AVRational in_tb, enc_tb;
    int64_t ts_offset; /* in in_tb */
    AVRational stream_sar;
    int64_t sync_opts; /* next output pts */
    bool ts_unreliable;
    AVRational frame_rate;
    int64_t next_ts; /* in in_tb, when ts_unreliable */
    bool header;
    const char *output;
    uint8_t *buf;
    int size;
} Md5;

static int md5_open(DfVo *vo, const DfVoParams *p)
{
    Md5 *m = vo->priv;
    m->in_tb = p->stream->time_base;
    /* ffmpeg's encoder time base: the filter graph's output rate. */
    m->enc_tb = av_inv_q(p->out_frame_rate.num > 0 ? p->out_frame_rate : p->frame_rate);
    if (!m->enc_tb.num || !m->enc_tb.den)
        m->enc_tb = (AVRational){1, 25};
    m->ts_offset = p->start_time != AV_NOPTS_VALUE
                       ? -av_rescale_q(p->start_time, AV_TIME_BASE_Q, m->in_tb)
                       : 0;
    m->stream_sar = p->stream->sample_aspect_ratio;
    m->ts_unreliable = p->ts_unreliable;
    m->frame_rate = p->frame_rate;
    m->output = p->output && strcmp(p->output, "-") ? p->output : "pipe:1";
    int ret = avformat_alloc_output_context2(&m->oc, NULL, "framemd5", m->output);
    if (ret < 0) {
        snprintf(vo->err, sizeof(vo->err), "cannot create the framemd5 muxer");
        return ret;
    }
    ret = avio_open(&m->oc->pb, m->output, AVIO_FLAG_WRITE);
    if (ret < 0) {
        char e[AV_ERROR_MAX_STRING_SIZE];
        av_strerror(ret, e, sizeof(e));
        snprintf(vo->err, sizeof(vo->err), "cannot write %s: %s", m->output, e);
        avformat_free_context(m->oc);
        m->oc = NULL;
        return ret;
    }
    return 0;
}

static int write_header(DfVo *vo, const AVFrame *f)
{
    Md5 *m = vo->priv;
    m->st = avformat_new_stream(m->oc, NULL);
    if (!m->st)
        return AVERROR(ENOMEM);
    AVCodecParameters *par = m->st->codecpar;
    par->codec_type = AVMEDIA_TYPE_VIDEO;
    par->codec_id = AV_CODEC_ID_RAWVIDEO;
    par->format = f->format;
    par->width = f->width;
    par->height = f->height;
    par->sample_aspect_ratio = f->sample_aspect_ratio.num ? f->sample_aspect_ratio : m->stream_sar;
    m->st->sample_aspect_ratio = par->sample_aspect_ratio; /* what the muxer prints */
    m->st->time_base = m->enc_tb;
    int ret = avformat_write_header(m->oc, NULL);
    if (ret < 0) {
        snprintf(vo->err, sizeof(vo->err), "framemd5 header could not be written");
        return ret;
    }
    m->enc_tb = m->st->time_base;
    m->header = true;
    return 0;
}

/* ffmpeg 5.1 adjust_frame_pts_to_encoder_tb(). */
static double encoder_pts(const Md5 *m, int64_t pts)
{
    AVRational tb = m->enc_tb;
    int extra_bits = av_clip(29 - av_log2((unsigned)tb.den), 0, 16);
    tb.den <<= extra_bits;
    double fp = (double)av_rescale_q(pts, m->in_tb, tb);
    fp /= 1 << extra_bits;
    return fp + FFSIGN(fp) * 1.0 / (1 << 17);
}

static int md5_frame(DfVo *vo, const AVFrame *f)
{
    Md5 *m = vo->priv;
    int ret;
    if (!m->header && (ret = write_header(vo, f)) < 0)
        return ret;
    int64_t ts = f->best_effort_timestamp;
#if LIBAVFORMAT_VERSION_MAJOR >= 61
    if (m->ts_unreliable) {
        /* ffmpeg 7 ignores the timestamps of a format that has none (raw
         * H.264, MPEG-2 elementary streams): pictures count from 0 by the
         * codec's frame duration (fftools/ffmpeg_dec.c). */
        ts = m->next_ts;
        int64_t d = 0;
        if (m->frame_rate.num > 0 && m->frame_rate.den > 0)
            d = av_rescale_q(f->repeat_pict + 2,
                             av_inv_q(av_mul_q(m->frame_rate, (AVRational){2, 1})), m->in_tb);
        if (d <= 0)
            d = df_frame_duration(f) > 0 ? df_frame_duration(f) : 1;
        m->next_ts = ts + d;
    }
#endif
    if (ts == AV_NOPTS_VALUE)
        return 0; /* ffmpeg's VFR sync drops frames without a timestamp */
    double sync_ipts = encoder_pts(m, ts + m->ts_offset);
    double duration = 1;
    if (df_frame_duration(f) > 0) {
        long d = lrintf((float)(df_frame_duration(f) * av_q2d(m->in_tb) / av_q2d(m->enc_tb)));
        if (d > 0)
            duration = (double)d;
    }
    double delta0 = sync_ipts - (double)m->sync_opts;
    double delta = delta0 + duration;
    if (delta0 < 0 && delta > 0)
        sync_ipts = (double)m->sync_opts;
    if (delta <= -0.6)
        return 0;
    if (delta > 0.6)
        m->sync_opts = llrint(sync_ipts);

    int size = av_image_get_buffer_size(f->format, f->width, f->height, 1);
    if (size < 0)
        return size;
    AVPacket *pkt = av_packet_alloc();
    if (!pkt || (ret = av_new_packet(pkt, size)) < 0) {
        av_packet_free(&pkt);
        return AVERROR(ENOMEM);
    }
    av_image_copy_to_buffer(pkt->data, size, (const uint8_t *const *)f->data, f->linesize,
                            f->format, f->width, f->height, 1);
    pkt->pts = pkt->dts = m->sync_opts++;
    pkt->stream_index = 0;
    pkt->flags |= AV_PKT_FLAG_KEY;
    ret = av_write_frame(m->oc, pkt);
    av_packet_free(&pkt);
    if (ret < 0)
        snprintf(vo->err, sizeof(vo->err), "framemd5: write error");
    return ret;
}

static int md5_close(DfVo *vo)
{
    Md5 *m = vo->priv;
    int ret = 0;
    if (m->header && (ret = av_write_trailer(m->oc)) < 0)
        snprintf(vo->err, sizeof(vo->err), "framemd5: write error");
    if (m->oc) {
        int r = avio_closep(&m->oc->pb);
        if (r < 0 && ret >= 0) {
            ret = r;
            snprintf(vo->err, sizeof(vo->err), "cannot write %s", m->output);
        }
        avformat_free_context(m->oc);
    }
    return ret;
}

const DfVoClass df_vo_framemd5 = {
    .name = "framemd5",
    .help = "per-frame md5 lines as ffmpeg -f framemd5 (to -o FILE, default stdout)",
    .takes_output = true,
    .priv_size = sizeof(Md5),
    .open = md5_open,
    .frame = md5_frame,
    .close = md5_close,
};
