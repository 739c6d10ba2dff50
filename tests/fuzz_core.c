/* The framework's decode path under untrusted bytes. */
#include "fuzz_core.h"

#include <libavutil/imgutils.h>
#include <libavutil/md5.h>
#include <libavutil/pixdesc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static void frame_md5(const AVFrame *f, uint8_t out[16])
{
    struct AVMD5 *m = av_md5_alloc();
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(f->format);
    memset(out, 0, 16);
    if (!m || !d) {
        av_free(m);
        return;
    }
    av_md5_init(m);
    int planes = av_pix_fmt_count_planes(f->format);
    for (int p = 0; p < planes && f->data[p]; p++) {
        int h = p == 0 || p == 3 ? f->height : AV_CEIL_RSHIFT(f->height, d->log2_chroma_h);
        int w = av_image_get_linesize(f->format, f->width, p);
        for (int y = 0; y < h && w > 0; y++)
            av_md5_update(m, f->data[p] + (ptrdiff_t)y * f->linesize[p], (size_t)w);
    }
    av_md5_final(m, out);
    av_free(m);
}

static void frames_add(DfFuzzFrames *fs, const AVFrame *f)
{
    if (!fs)
        return;
    if (fs->n == fs->cap) {
        int cap = fs->cap ? fs->cap * 2 : 64;
        DfFuzzFrame *v = realloc(fs->v, sizeof(*v) * (size_t)cap);
        if (!v)
            return;
        fs->v = v;
        fs->cap = cap;
    }
    DfFuzzFrame *x = &fs->v[fs->n++];
    x->pts = f->pts;
    frame_md5(f, x->md5);
}

void df_fuzz_frames_free(DfFuzzFrames *f)
{
    free(f->v);
    memset(f, 0, sizeof(*f));
}

static void drain_errors(DfDecoder *dec, DfFuzzResult *r)
{
    DfDecodeError e;
    while (df_decoder_next_error(dec, &e) == 0)
        r->errors++;
}

int df_fuzz_decode_packets(DfSched *s, const AVCodecParameters *par, AVRational tb,
                           DfThreading threading, AVPacket *const *pkts, int n, DfFuzzResult *r,
                           DfFuzzFrames *frames)
{
    memset(r, 0, sizeof(*r));
    DfDecoderConfig cfg;
    df_decoder_config_init(&cfg);
    cfg.threading = threading;
    DfDecoder *dec = NULL;
    if (df_decoder_new(s, par, tb, &cfg, &dec, NULL) < 0) {
        r->create_failed = 1;
        return 0;
    }
    AVFrame *f = av_frame_alloc();
    if (!f) {
        df_decoder_free(&dec);
        return -1;
    }
    int ret;
    for (int i = 0; i < n; i++) {
        while ((ret = df_decoder_send_packet(dec, pkts[i])) == AVERROR(EAGAIN)) {
            ret = df_decoder_receive_frame(dec, f);
            if (ret == 0) {
                r->frames++;
                frames_add(frames, f);
            } else if (ret != AVERROR(EAGAIN)) {
                break;
            }
        }
        if (ret < 0 && ret != AVERROR(EAGAIN))
            r->send_failures++;
        while (df_decoder_try_receive_frame(dec, f) == 0) {
            r->frames++;
            frames_add(frames, f);
        }
        drain_errors(dec, r);
    }
    df_decoder_send_packet(dec, NULL);
    while ((ret = df_decoder_receive_frame(dec, f)) == 0) {
        r->frames++;
        frames_add(frames, f);
    }
    drain_errors(dec, r);
    av_frame_free(&f);
    df_decoder_free(&dec);
    return 0;
}

/* ------------------------------------------------------------ libFuzzer */

static const enum AVCodecID codecs[4] = {AV_CODEC_ID_H264, AV_CODEC_ID_HEVC,
                                         AV_CODEC_ID_MPEG2VIDEO, AV_CODEC_ID_MPEG1VIDEO};
static const char *const policies[5] = {"fifo", "steal", "cost", "cost-local", "learned"};

static pthread_mutex_t scheds_lock = PTHREAD_MUTEX_INITIALIZER;
static DfSched *scheds[5][4];

static DfSched *sched_for(int policy, int workers)
{
    pthread_mutex_lock(&scheds_lock);
    DfSched **slot = &scheds[policy][workers - 1];
    if (!*slot) {
        DfSchedConfig cfg;
        df_sched_config_init(&cfg);
        cfg.policy = policies[policy];
        cfg.n_workers = workers;
        cfg.poll_us = 20;
        df_sched_new(&cfg, slot, NULL);
    }
    DfSched *s = *slot;
    pthread_mutex_unlock(&scheds_lock);
    return s;
}

void df_fuzz_cleanup(void)
{
    pthread_mutex_lock(&scheds_lock);
    for (int p = 0; p < 5; p++)
        for (int w = 0; w < 4; w++) {
            df_sched_unref(scheds[p][w]);
            scheds[p][w] = NULL;
        }
    pthread_mutex_unlock(&scheds_lock);
}

#define MAX_PACKETS 512

int df_fuzz_decode_es(const uint8_t *data, size_t size, DfFuzzResult *res)
{
    memset(res, 0, sizeof(*res));
    if (size < 2)
        return 0;
    const enum AVCodecID id = codecs[data[0] & 3];
    const int policy = (data[1] & 7) % 5, workers = 1 + ((data[1] >> 3) & 3);
    /* Slice jobs as tasks most of the time; frame threads and none too. */
    const DfThreading th = (data[1] >> 5) == 7 ? DF_THREADING_FRAME
                           : (data[1] >> 5) == 6 ? DF_THREADING_NONE
                                                 : DF_THREADING_AUTO;
    data += 2;
    size -= 2;
    DfSched *s = sched_for(policy, workers);
    if (!s)
        return 0;
    const AVCodec *codec = avcodec_find_decoder(id);
    AVCodecParserContext *parser = av_parser_init(id);
    AVCodecContext *pctx = codec ? avcodec_alloc_context3(codec) : NULL;
    AVCodecParameters *par = avcodec_parameters_alloc();
    AVPacket *pkts[MAX_PACKETS];
    int n = 0;
    if (!parser || !pctx || !par)
        goto out;
    par->codec_type = AVMEDIA_TYPE_VIDEO;
    par->codec_id = id;
    /* The parser's padding: it may read past the end of its input. */
    uint8_t *buf = av_malloc(size + AV_INPUT_BUFFER_PADDING_SIZE);
    if (!buf)
        goto out;
    memcpy(buf, data, size);
    memset(buf + size, 0, AV_INPUT_BUFFER_PADDING_SIZE);
    const uint8_t *p = buf;
    int left = (int)size, pts = 0;
    for (int flush = 0; flush < 2 && n < MAX_PACKETS;) {
        uint8_t *out = NULL;
        int out_size = 0;
        int used = av_parser_parse2(parser, pctx, &out, &out_size, flush ? NULL : p, flush ? 0 : left,
                                    pts, pts, 0);
        if (used < 0)
            break;
        p += used;
        left -= used;
        if (out_size > 0) {
            AVPacket *pkt = av_packet_alloc();
            if (!pkt || av_new_packet(pkt, out_size) < 0) {
                av_packet_free(&pkt);
                break;
            }
            memcpy(pkt->data, out, (size_t)out_size);
            pkt->pts = pkt->dts = pts++;
            pkts[n++] = pkt;
        } else if (flush) {
            break;
        }
        if (left <= 0)
            flush++;
    }
    av_free(buf);
    df_fuzz_decode_packets(s, par, (AVRational){1, 25}, th, pkts, n, res, NULL);
out:
    for (int i = 0; i < n; i++)
        av_packet_free(&pkts[i]);
    avcodec_parameters_free(&par);
    avcodec_free_context(&pctx);
    av_parser_close(parser);
    return 0;
}
