/* Fuzz target for the framework decode path (packet bytes -> frames, with
 * multi-worker scheduling).  Built with -fsanitize=fuzzer (meson
 * -Dfuzzing=true, clang) it is a libFuzzer target; otherwise main() replays
 * corpus files or directories, so the default build and CI run it too.
 *
 *   fuzz_decode FILE|DIR...            replay
 *   fuzz_decode --make-seeds DIR CLIP... write a seed corpus from clips */
#include "fuzz_core.h"
#include "fuzz_replay.h"

#include <dirent.h>
#include <errno.h>
#include <libavcodec/bsf.h>
#include <libavformat/avformat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    DfFuzzResult r;
    df_fuzz_decode_es(data, size, &r);
    return 0;
}

#ifndef DF_LIBFUZZER

static long cases, frames, errors;

static void replay_one(const uint8_t *data, size_t size, void *opaque)
{
    DfFuzzResult r;
    df_fuzz_decode_es(data, size, &r);
    cases++;
    frames += r.frames;
    errors += r.errors + r.send_failures;
}

/* One elementary stream per clip (Annex B for H.264/HEVC), at most
 * `max_bytes`, written with a few header variants (policy, workers,
 * threading) so the corpus starts from every configuration. */
static int make_seeds(const char *dir, const char *clip)
{
    AVFormatContext *fmt = NULL;
    if (avformat_open_input(&fmt, clip, NULL, NULL) < 0 ||
        avformat_find_stream_info(fmt, NULL) < 0) {
        fprintf(stderr, "fuzz_decode: cannot read %s\n", clip);
        avformat_close_input(&fmt);
        return -1;
    }
    int si = av_find_best_stream(fmt, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
    if (si < 0) {
        avformat_close_input(&fmt);
        return -1;
    }
    const AVCodecParameters *par = fmt->streams[si]->codecpar;
    int codec_byte;
    const char *bsf_name = NULL;
    switch (par->codec_id) {
    case AV_CODEC_ID_H264:
        codec_byte = 0;
        bsf_name = "h264_mp4toannexb";
        break;
    case AV_CODEC_ID_HEVC:
        codec_byte = 1;
        bsf_name = "hevc_mp4toannexb";
        break;
    case AV_CODEC_ID_MPEG2VIDEO:
        codec_byte = 2;
        break;
    case AV_CODEC_ID_MPEG1VIDEO:
        codec_byte = 3;
        break;
    default:
        avformat_close_input(&fmt);
        return 0; /* not a fuzzed codec */
    }
    AVBSFContext *bsf = NULL;
    if (bsf_name) {
        const AVBitStreamFilter *f = av_bsf_get_by_name(bsf_name);
        if (!f || av_bsf_alloc(f, &bsf) < 0 || avcodec_parameters_copy(bsf->par_in, par) < 0 ||
            av_bsf_init(bsf) < 0) {
            av_bsf_free(&bsf);
            avformat_close_input(&fmt);
            return -1;
        }
    }
    const size_t max_bytes = 192 * 1024;
    uint8_t *es = malloc(max_bytes);
    size_t len = 0;
    AVPacket *pkt = av_packet_alloc();
    while (es && pkt && len < max_bytes && av_read_frame(fmt, pkt) >= 0) {
        if (pkt->stream_index != si) {
            av_packet_unref(pkt);
            continue;
        }
        if (bsf && av_bsf_send_packet(bsf, pkt) < 0) {
            av_packet_unref(pkt);
            break;
        }
        while (!bsf || av_bsf_receive_packet(bsf, pkt) == 0) {
            size_t take = (size_t)pkt->size < max_bytes - len ? (size_t)pkt->size : max_bytes - len;
            memcpy(es + len, pkt->data, take);
            len += take;
            av_packet_unref(pkt);
            if (!bsf)
                break;
        }
    }
    av_packet_free(&pkt);
    av_bsf_free(&bsf);
    avformat_close_input(&fmt);
    if (!es)
        return -1;
    const char *base = strrchr(clip, '/');
    base = base ? base + 1 : clip;
    /* policy | workers << 3 | threading << 5 */
    const int variants[4] = {3 | (1 << 3), 1 | (0 << 3), 4 | (3 << 3), 0 | (1 << 3) | (7 << 5)};
    int ret = 0;
    for (int v = 0; v < 4; v++) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s.%d", dir, base, v);
        FILE *f = fopen(path, "wb");
        uint8_t hdr[2] = {(uint8_t)codec_byte, (uint8_t)variants[v]};
        if (!f || fwrite(hdr, 1, 2, f) != 2 || fwrite(es, 1, len, f) != len) {
            fprintf(stderr, "fuzz_decode: cannot write %s\n", path);
            ret = -1;
        }
        if (f)
            fclose(f);
    }
    free(es);
    return ret;
}

int main(int argc, char **argv)
{
    av_log_set_level(AV_LOG_QUIET);
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE|DIR...  |  %s --make-seeds DIR CLIP...\n", argv[0],
                argv[0]);
        return 2;
    }
    int ret = 0;
    if (strcmp(argv[1], "--make-seeds") == 0) {
        if (argc < 4) {
            fprintf(stderr, "fuzz_decode: --make-seeds DIR CLIP...\n");
            return 2;
        }
        mkdir(argv[2], 0755);
        for (int i = 3; i < argc; i++)
            ret |= make_seeds(argv[2], argv[i]);
        return ret ? 1 : 0;
    }
    for (int i = 1; i < argc; i++)
        ret |= df_fuzz_replay("fuzz_decode", argv[i], replay_one, NULL);
    df_fuzz_cleanup();
    printf("fuzz_decode: %ld inputs, %ld frames, %ld errors reported\n", cases, frames, errors);
    return ret ? 1 : 0;
}
#endif
