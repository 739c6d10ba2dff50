/* The framework's decode path under untrusted bytes: shared by the libFuzzer
 * target, its plain replay driver and the mutation runner of the suite. */
#ifndef FUZZ_CORE_H
#define FUZZ_CORE_H

#include "dfmedia.h"

#include <libavcodec/avcodec.h>

typedef struct DfFuzzResult {
    int frames;         /* frames received */
    int errors;         /* decode errors reported (df_decoder_next_error) */
    int send_failures;  /* send_packet calls that returned an error */
    int create_failed;  /* df_decoder_new failed (bad parameters) */
} DfFuzzResult;

/* Per frame: pts and md5 of the visible planes, for "resumes at the next
 * keyframe" checks (may be NULL). */
typedef struct DfFuzzFrame {
    int64_t pts;
    uint8_t md5[16];
} DfFuzzFrame;

typedef struct DfFuzzFrames {
    DfFuzzFrame *v;
    int n, cap;
} DfFuzzFrames;

/* Decode `n` packets through dfmedia on `sched`, drain, and free the
 * decoder.  Never fails the process: every error is counted.  `frames`
 * collects what came out (may be NULL). */
int df_fuzz_decode_packets(DfSched *sched, const AVCodecParameters *par, AVRational tb,
                           DfThreading threading, AVPacket *const *pkts, int n,
                           DfFuzzResult *res, DfFuzzFrames *frames);

/* libFuzzer input: byte 0 picks the codec (H.264, HEVC, MPEG-2, MPEG-1),
 * byte 1 the policy, worker count and threading mode; the rest is an
 * elementary stream, split into packets with libavcodec's parser.  Uses
 * a scheduler per (policy, workers), kept for the process. */
int df_fuzz_decode_es(const uint8_t *data, size_t size, DfFuzzResult *res);

/* Free the kept schedulers (for leak checkers at exit). */
void df_fuzz_cleanup(void);

void df_fuzz_frames_free(DfFuzzFrames *f);

#endif
