/* The decoder's protocol: EAGAIN/EOF, drain, flush and continue, QoS drop,
 * counters that show slice jobs ran as tasks, several decoders on one
 * scheduler, creation errors, frame lifetime after the decoder is gone. */
#include "dftest.h"
#include "framework_util.h"

#include <libavutil/imgutils.h>

#include <libavutil/time.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static DfDecoder *new_dec(DfSched *s, const TClip *c, const DfDecoderConfig *cfg)
{
    DfDecoder *dec = NULL;
    DfError err = {0};
    DfDecoderConfig tsan;
    if (t_under_tsan()) {
        /* As in t_df_decode(): no uninstrumented frame threads under TSan. */
        if (cfg)
            tsan = *cfg;
        else
            df_decoder_config_init(&tsan);
        tsan.threading = DF_THREADING_SLICE;
        cfg = &tsan;
    }
    if (df_decoder_new(s, c->par, c->tb, cfg, &dec, &err) < 0)
        df_test_fail(__FILE__, __LINE__, false, "%s: %s", c->name, err.msg);
    return dec;
}

/* Load `name` and decode it with plain single-threaded libavcodec, then
 * `filter` (or NULL), into `ref`.  0, or < 0 with nothing left to free. */
static int load_with_ref(const char *name, const char *filter, TClip *c, TSums *ref)
{
    *ref = (TSums){0};
    int ret = t_clip_load(name, c);
    if (ret >= 0 && (ret = t_ref_decode(c, filter, AV_PIX_FMT_NONE, ref)) < 0)
        t_sums_free(ref);
    if (ret < 0)
        t_clip_free(c);
    return ret;
}

/* Frames of `ref` with pts >= from, in order. */
static void tail_of(const TSums *ref, int64_t from, TSums *out)
{
    for (int i = 0; i < ref->n; i++)
        if (ref->v[i].pts >= from)
            t_sums_push(out, &ref->v[i]);
}

/* Send packets [from, to) keeping the pipeline full; collect frames. */
static int feed(DfDecoder *dec, const TClip *c, int from, int to, TSums *got)
{
    AVFrame *f = av_frame_alloc();
    int ret = 0;
    for (int i = from; i < to; i++) {
        while ((ret = df_decoder_send_packet(dec, c->pkts[i])) == AVERROR(EAGAIN)) {
            ret = df_decoder_receive_frame(dec, f);
            if (ret == 0)
                t_sums_add(got, f);
            else if (ret != AVERROR(EAGAIN))
                goto done;
        }
        if (ret < 0)
            goto done;
    }
done:
    av_frame_free(&f);
    return ret;
}

static int drain(DfDecoder *dec, TSums *got)
{
    AVFrame *f = av_frame_alloc();
    int ret = df_decoder_send_packet(dec, NULL);
    while (ret >= 0 && (ret = df_decoder_receive_frame(dec, f)) == 0)
        t_sums_add(got, f);
    av_frame_free(&f);
    return ret == AVERROR_EOF ? 0 : ret;
}

static int next_key(const TClip *c, int from)
{
    for (int i = from; i < c->n_pkts; i++)
        if (c->pkts[i]->flags & AV_PKT_FLAG_KEY)
            return i;
    return -1;
}

DF_TEST(FrameworkFlow, EagainEofAndDrain)
{
    DfSched *s = t_sched("cost-local", 2, 20);
    DF_ASSERT(s);
    TClip c;
    TSums ref = {0}, got = {0};
    DF_ASSERT(load_with_ref("h264_cabac_slices8.mkv", NULL, &c, &ref) == 0);
    DfDecoderConfig cfg;
    df_decoder_config_init(&cfg);
    cfg.max_in_flight = 3;
    DfDecoder *dec = new_dec(s, &c, &cfg);
    DF_ASSERT(dec);
    AVFrame *f = av_frame_alloc();
    DF_EXPECT_EQ_INT(df_decoder_receive_frame(dec, f), AVERROR(EAGAIN));
    DF_EXPECT_EQ_INT(df_decoder_try_receive_frame(dec, f), AVERROR(EAGAIN));
    for (int i = 0; i < 3; i++)
        DF_EXPECT_EQ_INT(df_decoder_send_packet(dec, c.pkts[i]), 0);
    DF_EXPECT_EQ_INT(df_decoder_send_packet(dec, c.pkts[3]), AVERROR(EAGAIN));
    /* B-frame delay: the first frame comes after a few packets; the queue
     * then drains one frame per receive. */
    int i = 3;
    while (i < c.n_pkts) {
        int ret = df_decoder_send_packet(dec, c.pkts[i]);
        if (ret == 0) {
            i++;
            continue;
        }
        DF_ASSERT_EQ_INT(ret, AVERROR(EAGAIN));
        ret = df_decoder_receive_frame(dec, f);
        DF_ASSERT(ret == 0 || ret == AVERROR(EAGAIN));
        if (ret == 0)
            t_sums_add(&got, f);
    }
    DF_EXPECT_EQ_INT(df_decoder_send_packet(dec, NULL), 0);
    DF_EXPECT_EQ_INT(df_decoder_send_packet(dec, c.pkts[0]), AVERROR_EOF);
    DF_EXPECT_EQ_INT(df_decoder_send_packet(dec, NULL), AVERROR_EOF);
    int ret;
    while ((ret = df_decoder_receive_frame(dec, f)) == 0)
        t_sums_add(&got, f);
    DF_EXPECT_EQ_INT(ret, AVERROR_EOF);
    DF_EXPECT_EQ_INT(df_decoder_receive_frame(dec, f), AVERROR_EOF);
    char msg[256];
    DF_EXPECT_MSG(t_sums_compare(&ref, &got, msg, sizeof(msg)) == 0, "%s", msg);

    /* After a flush the decoder takes packets again, from the start. */
    df_decoder_flush(dec);
    DF_EXPECT_EQ_INT(df_decoder_receive_frame(dec, f), AVERROR(EAGAIN));
    TSums again = {0};
    DF_EXPECT_EQ_INT(feed(dec, &c, 0, c.n_pkts, &again), 0);
    DF_EXPECT_EQ_INT(drain(dec, &again), 0);
    DF_EXPECT_MSG(t_sums_compare(&ref, &again, msg, sizeof(msg)) == 0, "after flush: %s", msg);
    DfDecoderStats st;
    df_decoder_stats(dec, &st);
    DF_EXPECT_EQ_INT(st.frames_out, 2 * ref.n);
    DF_EXPECT_EQ_INT(st.packets, 2 * c.n_pkts);
    DF_EXPECT(st.latency_p50_ms > 0 && st.latency_max_ms >= st.latency_p99_ms);

    /* Every packet queued, nothing received: a drain returns them all. */
    df_decoder_free(&dec);
    cfg.max_in_flight = c.n_pkts + 1;
    dec = new_dec(s, &c, &cfg);
    DF_ASSERT(dec);
    for (i = 0; i < c.n_pkts; i++)
        DF_EXPECT_EQ_INT(df_decoder_send_packet(dec, c.pkts[i]), 0);
    TSums all = {0};
    DF_EXPECT_EQ_INT(drain(dec, &all), 0);
    DF_EXPECT_MSG(t_sums_compare(&ref, &all, msg, sizeof(msg)) == 0, "queued: %s", msg);
    df_decoder_free(&dec);
    DF_EXPECT(dec == NULL);
    av_frame_free(&f);
    t_sums_free(&ref);
    t_sums_free(&got);
    t_sums_free(&again);
    t_sums_free(&all);
    t_clip_free(&c);
    df_sched_unref(s);
}

/* Flush mid-stream (with work in flight), resume at a later keyframe: the
 * frames from that keyframe on equal the reference. */
static void flush_case(DfSched *s, const char *clip, const char *filter)
{
    TClip c;
    TSums ref = {0};
    DF_ASSERT(load_with_ref(clip, filter, &c, &ref) == 0);
    DfDecoderConfig cfg;
    df_decoder_config_init(&cfg);
    cfg.filter = filter;
    cfg.max_in_flight = 3;
    DfDecoder *dec = new_dec(s, &c, &cfg);
    DF_ASSERT(dec);
    const int k2 = next_key(&c, 1);
    DF_ASSERT_MSG(k2 > 4, "%s: second keyframe at %d", clip, k2);
    TSums before = {0}, after = {0}, want = {0};
    /* Stop in the middle of the first GOP, with packets still queued. */
    DF_EXPECT_EQ_INT(feed(dec, &c, 0, k2 / 2 + 2, &before), 0);
    df_decoder_flush(dec);
    DF_EXPECT_EQ_INT(feed(dec, &c, k2, c.n_pkts, &after), 0);
    DF_EXPECT_EQ_INT(drain(dec, &after), 0);
    char msg[256];
    if (!filter) {
        tail_of(&ref, c.pkts[k2]->pts, &want);
    } else {
        /* A temporal filter (yadif) restarts at the seek: its first output
         * differs from a continuous run, and it may change the time base.
         * The frames after that one must match, and none may be missing. */
        DF_ASSERT_MSG(after.n > 2, "%s | %s: %d frames after the seek", clip, filter, after.n);
        tail_of(&ref, after.v[1].pts, &want);
        int first = 0;
        while (first < ref.n && ref.v[first].pts != after.v[1].pts)
            first++;
        DF_EXPECT_MSG(first > 0 && first < ref.n && ref.v[first - 1].pts == after.v[0].pts,
                      "%s | %s: first frames after the seek have pts %lld, %lld", clip, filter,
                      (long long)after.v[0].pts, (long long)after.v[1].pts);
        memmove(after.v, after.v + 1, sizeof(TSum) * (size_t)(after.n - 1));
        after.n--;
    }
    DF_EXPECT_MSG(t_sums_compare(&want, &after, msg, sizeof(msg)) == 0, "%s%s%s, %s x%d: %s", clip,
                  filter ? " | " : "", filter ? filter : "", df_sched_policy_name(s),
                  df_sched_n_workers(s), msg);
    /* Backwards seek to the start. */
    df_decoder_flush(dec);
    TSums full = {0};
    DF_EXPECT_EQ_INT(feed(dec, &c, 0, c.n_pkts, &full), 0);
    DF_EXPECT_EQ_INT(drain(dec, &full), 0);
    DF_EXPECT_MSG(t_sums_compare(&ref, &full, msg, sizeof(msg)) == 0, "%s from start: %s", clip,
                  msg);
    df_decoder_free(&dec);
    t_sums_free(&ref);
    t_sums_free(&before);
    t_sums_free(&after);
    t_sums_free(&want);
    t_sums_free(&full);
    t_clip_free(&c);
}

/* A paced caller: packets sent at their times, frames taken with
 * receive_frame_until() up to the next packet's time.  Every frame comes
 * out, bit-exact and in order, whether the limit expires or not. */
DF_TEST(FrameworkFlow, ReceiveUntilTheNextPacket)
{
    DfSched *s = t_sched("cost-local", 2, 20);
    DF_ASSERT(s);
    TClip c;
    TSums ref = {0}, got = {0};
    DF_ASSERT(load_with_ref("h264_cabac_slices8.mkv", NULL, &c, &ref) == 0);
    DfDecoder *dec = new_dec(s, &c, NULL);
    DF_ASSERT(dec);
    AVFrame *f = av_frame_alloc();
    /* Nothing in flight: EAGAIN at once, whatever the limit. */
    DF_EXPECT_EQ_INT(df_decoder_receive_frame_until(dec, f, INT64_MAX), AVERROR(EAGAIN));
    const int64_t period = 20000; /* 20 us a packet: shorter than a decode */
    const int64_t t0 = df_now_ns();
    int ret = 0, expired = 0;
    for (int i = 0; i < c.n_pkts && ret >= 0; i++) {
        const int64_t next = t0 + (int64_t)(i + 1) * period;
        while ((ret = df_decoder_send_packet(dec, c.pkts[i])) == AVERROR(EAGAIN))
            if ((ret = df_decoder_receive_frame_until(dec, f, INT64_MAX)) == 0)
                t_sums_add(&got, f);
        while (ret >= 0 && (ret = df_decoder_receive_frame_until(dec, f, next)) == 0)
            t_sums_add(&got, f);
        if (ret == AVERROR(EAGAIN)) {
            expired += df_now_ns() >= next;
            ret = 0;
        }
    }
    DF_EXPECT_EQ_INT(ret, 0);
    DF_EXPECT_EQ_INT(df_decoder_send_packet(dec, NULL), 0);
    while ((ret = df_decoder_receive_frame_until(dec, f, INT64_MAX)) == 0)
        t_sums_add(&got, f);
    DF_EXPECT_EQ_INT(ret, AVERROR_EOF);
    char msg[256];
    DF_EXPECT_MSG(t_sums_compare(&ref, &got, msg, sizeof(msg)) == 0, "%s", msg);
    DF_EXPECT_MSG(expired > 0, "no limit expired in %d packets", c.n_pkts);
    av_frame_free(&f);
    df_decoder_free(&dec);
    t_sums_free(&ref);
    t_sums_free(&got);
    t_clip_free(&c);
    df_sched_unref(s);
}

DF_TEST(FrameworkFlow, FlushMidStreamAndContinue)
{
    const char *const *pol = df_policy_names();
    for (int p = 0; pol[p]; p++)
        for (int w = 1; w <= 4; w += 3) {
            DfSched *s = t_sched(pol[p], w, 20);
            DF_ASSERT(s);
            flush_case(s, "h264_cabac_slices8.mkv", NULL);
            flush_case(s, "hevc_wpp8.mkv", NULL);
            flush_case(s, "mpeg2_prog.mkv", NULL);
            flush_case(s, "h264_single.mkv", NULL);
            flush_case(s, "h264_mbaff.mkv", "yadif");
            df_sched_unref(s);
        }
}

/* Joining an open-GOP stream at a key packet, at the start or after a
 * flush (a seek): the B-pictures decoded after it but shown before it read
 * a picture before the entry, and libavcodec skips them on purpose.  The
 * output is single-threaded libavcodec's from the same packet, and no
 * decode error is reported for them (dfplay --start said "no picture
 * decoded (corrupt or truncated)" twice per seek).  Joining between key
 * packets (a demuxer that resumes mid-GOP, a live stream tuned into): the
 * packets before the first key packet have nothing to reference and give
 * no picture, which is no error either (dfdec warned for each, and
 * max-errors ended the stream). */
static void open_gop_entry(DfSched *s, const TClip *c, const TSums *ref, int key, bool seek)
{
    DfDecoder *dec = new_dec(s, c, NULL);
    DF_ASSERT(dec);
    TSums before = {0}, got = {0};
    if (seek) {
        /* Some of the first GOP, then the seek. */
        DF_EXPECT_EQ_INT(feed(dec, c, 0, key / 2, &before), 0);
        df_decoder_flush(dec);
    }
    DF_EXPECT_EQ_INT(feed(dec, c, key, c->n_pkts, &got), 0);
    DF_EXPECT_EQ_INT(drain(dec, &got), 0);
    char msg[256];
    DF_EXPECT_MSG(t_sums_compare(ref, &got, msg, sizeof(msg)) == 0, "%s from packet %d%s: %s",
                  c->name, key, seek ? " after a flush" : "", msg);
    DfDecoderStats st;
    df_decoder_stats(dec, &st);
    DF_EXPECT_MSG(st.decode_errors == 0, "%s from packet %d%s: %" PRIu64 " decode errors", c->name,
                  key, seek ? " after a flush" : "", st.decode_errors);
    DfDecodeError e;
    if (df_decoder_next_error(dec, &e) == 0)
        DF_EXPECT_MSG(false, "%s: error \"%s\"", c->name, e.msg);
    df_decoder_free(&dec);
    t_sums_free(&before);
    t_sums_free(&got);
}

/* Timestamps that start again without a flush (concatenated streams):
 * the first GOP of the second pass is shown before the entry but is no
 * leading picture, and a picture lost there is still reported. */
static void lost_after_restart(DfSched *s, const TClip *c, int key)
{
    DfDecoder *dec = new_dec(s, c, NULL);
    DF_ASSERT(dec);
    TSums got = {0};
    DF_EXPECT_EQ_INT(feed(dec, c, key, c->n_pkts, &got), 0);
    const int lost = 1; /* a P or B picture of the first GOP */
    DF_ASSERT(!(c->pkts[lost]->flags & AV_PKT_FLAG_KEY) && c->pkts[lost]->pts < c->pkts[key]->pts);
    /* The clip again with that packet cut to a start code and no picture,
     * in a copy (a shrunk reference would zero the clip's own bytes). */
    AVPacket **pkts = av_malloc_array((size_t)c->n_pkts, sizeof(*pkts));
    DF_ASSERT(pkts);
    memcpy(pkts, c->pkts, sizeof(*pkts) * (size_t)c->n_pkts);
    AVPacket *cut = av_packet_alloc();
    DF_ASSERT(cut && av_new_packet(cut, 7) == 0 && av_packet_copy_props(cut, c->pkts[lost]) == 0);
    memcpy(cut->data, c->pkts[lost]->data, 7);
    pkts[lost] = cut;
    TClip again = *c;
    again.pkts = pkts;
    DF_EXPECT_EQ_INT(feed(dec, &again, 0, again.n_pkts, &got), 0);
    DF_EXPECT_EQ_INT(drain(dec, &got), 0);
    DfDecoderStats st;
    df_decoder_stats(dec, &st);
    DF_EXPECT_MSG(st.decode_errors >= 1,
                  "%s: the picture of packet %d (pts %" PRId64
                  ") was lost after the timestamps restarted, and no error said so",
                  c->name, lost, c->pkts[lost]->pts);
    av_packet_free(&cut);
    av_free(pkts);
    df_decoder_free(&dec);
    t_sums_free(&got);
}

DF_TEST(FrameworkFlow, OpenGopEntryIsNoError)
{
    TClip c;
    DF_ASSERT(t_clip_load("mpeg2_opengop.mkv", &c) == 0);
    const int key = next_key(&c, 1);
    DF_ASSERT(key > 0);
    TClip from = c;
    from.pkts = c.pkts + key;
    from.n_pkts = c.n_pkts - key;
    TSums ref = {0};
    DF_ASSERT(t_ref_decode(&from, NULL, AV_PIX_FMT_NONE, &ref) == 0);
    /* Not vacuous: the entry has leading pictures, which nobody decodes. */
    DF_EXPECT_MSG(ref.n < from.n_pkts, "%s: %d frames from %d packets at packet %d", c.name, ref.n,
                  from.n_pkts, key);
    for (int w = 1; w <= 2; w++) {
        DfSched *s = t_sched("cost-local", w, 20);
        DF_ASSERT(s);
        open_gop_entry(s, &c, &ref, key, false);
        open_gop_entry(s, &c, &ref, key, true);
        lost_after_restart(s, &c, key);
        df_sched_unref(s);
    }
    t_sums_free(&ref);
    t_clip_free(&c);

    /* Mid-GOP entries, closed and open GOPs (the lost-picture check is
     * MPEG-1/2's: packet_is_picture). */
    static const char *const mid[] = {"mpeg2_opengop.mkv", "mpeg2_prog.mkv"};
    for (size_t i = 0; i < sizeof(mid) / sizeof(mid[0]); i++) {
        DF_ASSERT(t_clip_load(mid[i], &c) == 0);
        const int k = next_key(&c, 1);
        DF_ASSERT(k > 3);
        const int entry = k - 3; /* three packets before the key */
        from = c;
        from.pkts = c.pkts + entry;
        from.n_pkts = c.n_pkts - entry;
        TSums mref = {0};
        DF_ASSERT(t_ref_decode(&from, NULL, AV_PIX_FMT_NONE, &mref) == 0);
        DF_EXPECT_MSG(mref.n <= from.n_pkts - 3, "%s: %d frames from %d packets at packet %d",
                      c.name, mref.n, from.n_pkts, entry);
        DfSched *s = t_sched("cost-local", 2, 20);
        DF_ASSERT(s);
        open_gop_entry(s, &c, &mref, entry, false);
        open_gop_entry(s, &c, &mref, entry, true);
        df_sched_unref(s);
        t_sums_free(&mref);
        t_clip_free(&c);
    }
}

/* The public contract: frame->opaque is the opaque of the packet that sent
 * the picture (AV_CODEC_FLAG_COPY_OPAQUE, or reordered_opaque before FFmpeg
 * 6.0), through reordering, slice and frame threads and a filter. */
typedef struct OpaqueCheck {
    const TClip *c;
    int frames, wrong, reordered;
} OpaqueCheck;

static void opaque_check(OpaqueCheck *k, const AVFrame *f)
{
    /* The packet with the picture's pts is the one that sent it. */
    int want = 0;
    for (int i = 0; i < k->c->n_pkts && !want; i++)
        if (k->c->pkts[i]->pts == f->pts)
            want = i + 1;
    if ((intptr_t)f->opaque != want && k->wrong++ == 0)
        df_test_fail(__FILE__, __LINE__, false,
                     "%s: frame pts %" PRId64 " has opaque %" PRIdPTR ", its packet's is %d",
                     k->c->name, f->pts, (intptr_t)f->opaque, want);
    k->reordered += want - 1 != k->frames;
    k->frames++;
}

static void opaque_case(DfSched *s, const char *clip, DfThreading threading, const char *filter)
{
    TClip c;
    DF_ASSERT(t_clip_load(clip, &c) == 0);
    DfDecoderConfig cfg;
    df_decoder_config_init(&cfg);
    cfg.threading = threading;
    cfg.filter = filter;
    DfDecoder *dec = new_dec(s, &c, &cfg);
    AVPacket *pkt = av_packet_alloc();
    AVFrame *f = av_frame_alloc();
    OpaqueCheck k = {.c = &c};
    int ret = 0;
    DF_ASSERT(dec && pkt && f);
    for (int i = 0; i < c.n_pkts && ret >= 0; i++) {
        DF_ASSERT(av_packet_ref(pkt, c.pkts[i]) == 0);
        pkt->opaque = (void *)(intptr_t)(i + 1);
        while ((ret = df_decoder_send_packet(dec, pkt)) == AVERROR(EAGAIN)) {
            if ((ret = df_decoder_receive_frame(dec, f)) == 0)
                opaque_check(&k, f);
            else if (ret != AVERROR(EAGAIN))
                break;
        }
        av_packet_unref(pkt);
    }
    DF_EXPECT_EQ_INT(ret, 0);
    DF_EXPECT_EQ_INT(df_decoder_send_packet(dec, NULL), 0);
    while ((ret = df_decoder_receive_frame(dec, f)) == 0)
        opaque_check(&k, f);
    DF_EXPECT_EQ_INT(ret, AVERROR_EOF);
    DF_EXPECT_EQ_INT(k.frames, c.n_pkts);
    DF_EXPECT_EQ_INT(k.wrong, 0);
    /* Not vacuous: presentation order differs from decode order. */
    DF_EXPECT_MSG(k.reordered > 0, "%s: no reordered picture", clip);
    av_frame_free(&f);
    av_packet_free(&pkt);
    df_decoder_free(&dec);
    t_clip_free(&c);
}

DF_TEST(FrameworkFlow, FrameOpaqueIsSendingPacket)
{
    DfSched *s = t_sched("cost-local", 2, 20);
    DF_ASSERT(s);
    opaque_case(s, "h264_cabac_slices8.mkv", DF_THREADING_SLICE, NULL);
    opaque_case(s, "h264_cabac_slices8.mkv", DF_THREADING_FRAME, NULL);
    opaque_case(s, "hevc_wpp8.mkv", DF_THREADING_SLICE, NULL);
    opaque_case(s, "mpeg2_int.mkv", DF_THREADING_SLICE, "hflip");
    opaque_case(s, "mpeg2_prog.mkv", DF_THREADING_NONE, NULL);
    df_sched_unref(s);
}

/* Slice jobs are scheduler tasks: counted per frame and per worker by the
 * decoder, and seen by the scheduler's trace as module "S".  The counts are
 * exact, the same with FFmpeg 5.1 and 7.1: one job per H.264 slice, HEVC
 * CTU row or MPEG-2 band; at 2 workers libavcodec calls execute once per
 * H.264 picture (thread_count = its slices, codec/h264.c), execute2 once
 * per HEVC slice segment and execute once per MPEG-2 picture. */
DF_TEST(FrameworkFlow, SliceJobsRunAsTasks)
{
    DfSched *s = t_sched("cost-local", 2, -1);
    DF_ASSERT(s);
    struct {
        const char *clip;
        int calls_per_frame, jobs_per_frame;
    } cases[] = {
        {"h264_cabac_slices8.mkv", 1, 8},
        {"h264_cavlc_slices4.mkv", 1, 4},
        {"hevc_wpp8.mkv", 1, 12},       /* one per CTU row: 360 / 32 (x265 ultrafast) */
        {"hevc_wpp_slices.mkv", 4, 12}, /* one call per slice segment */
        {"mpeg2_prog.mkv", 1, 6},       /* row bands: 23 macroblock rows / 4 */
    };
    const int s_module = df_sched_module_id(s, "S");
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        TClip c;
        DF_ASSERT(t_clip_load(cases[k].clip, &c) == 0);
        DfDecoderStats st;
        TSums got = {0};
        df_sched_trace_start(s, 1 << 16);
        int workers_seen = 0;
        uint64_t traced = 0;
        /* On a loaded machine one worker may sleep through a short clip:
         * try a few times before calling the jobs single-worker. */
        for (int attempt = 0; attempt < 5 && workers_seen < 2; attempt++) {
            t_sums_free(&got);
            DF_ASSERT(t_df_decode(s, &c, NULL, &got, &st, NULL, 0) == 0);
            workers_seen = 0;
            uint64_t sum = 0;
            for (int w = 0; w < 64; w++) {
                sum += st.jobs_per_worker[w];
                workers_seen += st.jobs_per_worker[w] > 0;
            }
            DF_EXPECT_EQ_INT(sum, st.slice_jobs);
        }
        df_sched_trace_stop(s);
        DfTrace tr;
        DF_ASSERT(df_sched_trace_collect(s, &tr) == 0);
        for (size_t e = 0; e < tr.n_events; e++)
            traced += tr.events[e].module == s_module;
        DF_EXPECT_MSG(st.frames_decoded > 0 &&
                          st.slice_calls == st.frames_decoded * cases[k].calls_per_frame &&
                          st.slice_jobs == st.frames_decoded * cases[k].jobs_per_frame,
                      "%s: %llu pictures, %llu execute calls, %llu jobs", cases[k].clip,
                      (unsigned long long)st.frames_decoded, (unsigned long long)st.slice_calls,
                      (unsigned long long)st.slice_jobs);
        DF_EXPECT_EQ_INT(st.frames_with_jobs, st.frames_decoded);
        DF_EXPECT_EQ_INT(st.frames_decoded, got.n);
        DF_EXPECT_MSG(workers_seen == 2, "%s: slice jobs ran on %d worker(s)", cases[k].clip,
                      workers_seen);
        /* Every S job seen by the trace (several attempts may be in it). */
        DF_EXPECT_MSG(traced >= st.slice_jobs && traced % st.slice_jobs == 0,
                      "%s: %llu traced S nodes, %llu jobs", cases[k].clip,
                      (unsigned long long)traced, (unsigned long long)st.slice_jobs);
        df_trace_free(&tr);
        t_sums_free(&got);
        t_clip_free(&c);
    }
    df_sched_unref(s);
}

typedef struct Stream {
    DfSched *sched;
    const char *clip;
    const char *filter;
    int rounds;
    int failures;
    char msg[256];
} Stream;

static void *stream_main(void *arg)
{
    Stream *st = arg;
    TClip c;
    TSums ref = {0};
    if (load_with_ref(st->clip, st->filter, &c, &ref) < 0) {
        st->failures++;
        snprintf(st->msg, sizeof(st->msg), "%s: cannot load", st->clip);
        return NULL;
    }
    DfDecoderConfig cfg;
    df_decoder_config_init(&cfg);
    cfg.filter = st->filter;
    for (int r = 0; r < st->rounds; r++) {
        TSums got = {0};
        if (t_df_decode(st->sched, &c, &cfg, &got, NULL, NULL, 0) != 0 ||
            t_sums_compare(&ref, &got, st->msg, sizeof(st->msg)) != 0)
            st->failures++;
        t_sums_free(&got);
    }
    t_sums_free(&ref);
    t_clip_free(&c);
    return NULL;
}

/* Four streams from four threads on one two-worker scheduler: the hooks
 * are re-entered by helping workers, outputs stay exact. */
DF_TEST(FrameworkFlow, SharedSchedulerManyDecoders)
{
    const char *const *pol = df_policy_names();
    for (int p = 0; pol[p]; p++) {
        DfSched *s = t_sched(pol[p], 2, p % 2 ? -1 : 20);
        DF_ASSERT(s);
        Stream st[4] = {
            {s, "h264_cabac_slices8.mkv", NULL, 2, 0, ""},
            {s, "hevc_wpp8.mkv", NULL, 2, 0, ""},
            {s, "mpeg2_prog.mkv", "unsharp", 2, 0, ""},
            {s, "h264_single.mkv", NULL, 2, 0, ""},
        };
        pthread_t th[4];
        for (int i = 0; i < 4; i++)
            pthread_create(&th[i], NULL, stream_main, &st[i]);
        for (int i = 0; i < 4; i++) {
            pthread_join(th[i], NULL);
            DF_EXPECT_MSG(st[i].failures == 0, "%s, %s: %s", pol[p], st[i].clip, st[i].msg);
        }
        df_sched_unref(s);
    }
}

static int64_t fake_clock_ns;

static int64_t fake_clock(void *opaque)
{
    return __atomic_load_n(&fake_clock_ns, __ATOMIC_RELAXED);
}

/* QoS: frames whose deadline passed are never returned; later ones stay
 * exact.  Once everything is decoded the cut is exact (frames with pts >=
 * cut come out, the others do not); while decodes are still queued, the
 * dropped packets still decode (skipping only non-reference pictures), so
 * whatever comes out is exact. */
DF_TEST(FrameworkFlow, DropLate)
{
    DfSched *s = t_sched("cost-local", 2, 20);
    DF_ASSERT(s);
    TClip c;
    TSums ref = {0};
    DF_ASSERT(load_with_ref("h264_cabac_slices8.mkv", NULL, &c, &ref) == 0);
    DF_ASSERT(ref.n > 12);
    DfDecoderConfig cfg;
    df_decoder_config_init(&cfg);
    cfg.clock_ns = fake_clock;
    cfg.max_in_flight = c.n_pkts + 1;
    const int64_t cut = av_rescale_q(ref.v[8].pts, c.tb, (AVRational){1, 1000000000});
    char msg[256];
    for (int pass = 0; pass < 2; pass++) {
        DfDecoder *dec = new_dec(s, &c, &cfg);
        DF_ASSERT(dec);
        for (int i = 0; i < c.n_pkts; i++)
            DF_EXPECT_EQ_INT(df_decoder_send_packet(dec, c.pkts[i]), 0);
        DF_EXPECT_EQ_INT(df_decoder_send_packet(dec, NULL), 0);
        DfDecoderStats st;
        if (pass == 0) {
            for (int spin = 0; spin < 20000; spin++) {
                df_decoder_stats(dec, &st);
                if (st.frames_decoded == (uint64_t)ref.n &&
                    st.decode_calls == (uint64_t)c.n_pkts + 1)
                    break;
                av_usleep(500);
            }
            DF_ASSERT_EQ_INT(st.frames_decoded, ref.n);
        }
        __atomic_store_n(&fake_clock_ns, cut, __ATOMIC_RELAXED);
        int n = df_decoder_drop_late(dec, cut);
        DF_EXPECT_MSG(n > 0, "pass %d: nothing dropped", pass);
        TSums got = {0};
        AVFrame *f = av_frame_alloc();
        int ret;
        while ((ret = df_decoder_receive_frame(dec, f)) == 0)
            t_sums_add(&got, f);
        DF_EXPECT_EQ_INT(ret, AVERROR_EOF);
        av_frame_free(&f);
        df_decoder_stats(dec, &st);
        DF_EXPECT(st.frames_dropped > 0);
        DF_EXPECT_EQ_INT(st.frames_out, got.n);
        if (pass == 0) {
            TSums want = {0};
            tail_of(&ref, ref.v[8].pts, &want);
            DF_EXPECT_MSG(t_sums_compare(&want, &got, msg, sizeof(msg)) == 0, "%s", msg);
            DF_EXPECT_EQ_INT(st.frames_dropped + st.frames_out, ref.n);
            t_sums_free(&want);
        } else {
            int j = 0;
            for (int i = 0; i < got.n; i++) {
                while (j < ref.n && ref.v[j].pts != got.v[i].pts)
                    j++;
                DF_EXPECT_MSG(j < ref.n && !memcmp(ref.v[j].md5, got.v[i].md5, 16),
                              "frame pts %lld differs or out of order", (long long)got.v[i].pts);
            }
            DF_EXPECT_MSG(got.n > 0 && got.v[got.n - 1].pts == ref.v[ref.n - 1].pts,
                          "last frame missing");
        }
        t_sums_free(&got);
        df_decoder_free(&dec);
    }
    t_sums_free(&ref);
    t_clip_free(&c);
    df_sched_unref(s);
}

DF_TEST(FrameworkFlow, CreationErrors)
{
    /* Eager: a stream on one worker still gets its plan from its slices. */
    DfSched *s = t_sched_jobs("fifo", 1, 20, true);
    DF_ASSERT(s);
    TClip c;
    DF_ASSERT(t_clip_load("h264_cabac_slices8.mkv", &c) == 0);
    DfDecoder *dec = NULL;
    DfError err = {0};
    DfDecoderConfig cfg;

    AVCodecParameters *par = avcodec_parameters_alloc();
    avcodec_parameters_copy(par, c.par);
    par->codec_type = AVMEDIA_TYPE_AUDIO;
    DF_EXPECT(df_decoder_new(s, par, c.tb, NULL, &dec, &err) < 0 && !dec);
    DF_EXPECT(strstr(err.msg, "video") != NULL);
    par->codec_type = AVMEDIA_TYPE_VIDEO;
    par->codec_id = AV_CODEC_ID_NONE;
    DF_EXPECT(df_decoder_new(s, par, c.tb, NULL, &dec, &err) < 0 && !dec);
    DF_EXPECT(strstr(err.msg, "decoder") != NULL);
    avcodec_parameters_free(&par);

    DF_EXPECT(df_decoder_new(NULL, c.par, c.tb, NULL, &dec, &err) < 0 && !dec);
    df_decoder_config_init(&cfg);
    cfg.out_format = AV_PIX_FMT_VAAPI;
    DF_EXPECT(df_decoder_new(s, c.par, c.tb, &cfg, &dec, &err) < 0 && !dec);
    DF_EXPECT(strstr(err.msg, "format") != NULL);
    df_decoder_config_init(&cfg);
    cfg.threading = (DfThreading)7;
    DF_EXPECT(df_decoder_new(s, c.par, c.tb, &cfg, &dec, &err) < 0 && !dec);
    df_decoder_config_init(&cfg);
    cfg.max_in_flight = -1;
    DF_EXPECT(df_decoder_new(s, c.par, c.tb, &cfg, &dec, &err) < 0 && !dec);

    DfThreading t;
    DF_EXPECT(df_threading_parse("frame", &t) == 0 && t == DF_THREADING_FRAME);
    DF_EXPECT(df_threading_parse("slices", &t) < 0);
    DF_EXPECT(df_threading_parse(NULL, &t) < 0);
    DF_EXPECT(!strcmp(df_threading_name(DF_THREADING_AUTO), "auto"));

    /* auto says what it chose and why. */
    DF_ASSERT(df_decoder_new(s, c.par, c.tb, NULL, &dec, &err) == 0);
    const char *why = NULL;
    DF_EXPECT(!strcmp(df_decoder_threading(dec, &why), "auto") && why);
    DF_EXPECT(df_decoder_output_format(dec, NULL, NULL) == -1);
    TSums got = {0};
    DF_EXPECT_EQ_INT(feed(dec, &c, 0, c.n_pkts, &got), 0);
    DF_EXPECT_EQ_INT(drain(dec, &got), 0);
    DF_EXPECT(!strcmp(df_decoder_threading(dec, &why), "slice") && strstr(why, "slices"));
    int w, h;
    DF_EXPECT(df_decoder_output_format(dec, &w, &h) == AV_PIX_FMT_YUV420P && w == 640 && h == 360);
    DF_EXPECT(df_decoder_latency_frames(dec) >= 1);
    df_decoder_free(&dec);
    df_decoder_free(&dec); /* NULL is fine */
    t_sums_free(&got);
    t_clip_free(&c);
    df_sched_unref(s);
}

/* Frames outlive their decoder (pool buffers are refcounted), and freeing
 * a decoder with work in flight neither leaks nor hangs. */
DF_TEST(FrameworkFlow, LifetimeAndFreeInFlight)
{
    DfSched *s = t_sched("steal", 2, 20);
    DF_ASSERT(s);
    TClip c;
    TSums ref = {0};
    DF_ASSERT(load_with_ref("hevc_wpp8.mkv", NULL, &c, &ref) == 0);
    DfDecoderConfig cfg;
    df_decoder_config_init(&cfg);
    cfg.max_in_flight = c.n_pkts + 1;
    DfDecoder *dec = new_dec(s, &c, &cfg);
    DF_ASSERT(dec);
    for (int i = 0; i < c.n_pkts; i++)
        DF_EXPECT_EQ_INT(df_decoder_send_packet(dec, c.pkts[i]), 0);
    DF_EXPECT_EQ_INT(df_decoder_send_packet(dec, NULL), 0);
    AVFrame *held[64];
    int n = 0;
    while (n < 64 && (held[n] = av_frame_alloc()) && df_decoder_receive_frame(dec, held[n]) == 0)
        n++;
    if (n < 64)
        av_frame_free(&held[n]);
    DfDecoderStats st;
    df_decoder_stats(dec, &st);
    DF_EXPECT_MSG(st.pool_outstanding >= n, "%lld buffers out, %d frames held",
                  (long long)st.pool_outstanding, n);
    df_decoder_free(&dec);
    DF_EXPECT_EQ_INT(n, ref.n);
    for (int i = 0; i < n; i++) {
        uint8_t md5[16];
        t_frame_md5(held[i], md5);
        DF_EXPECT_MSG(i < ref.n && !memcmp(md5, ref.v[i].md5, 16), "held frame %d changed", i);
        av_frame_free(&held[i]);
    }
    for (int round = 0; round < 8; round++) {
        cfg.max_in_flight = 1 + round;
        dec = new_dec(s, &c, &cfg);
        DF_ASSERT(dec);
        for (int i = 0; i < c.n_pkts && df_decoder_send_packet(dec, c.pkts[i]) == 0; i++)
            ;
        df_decoder_free(&dec);
    }
    t_sums_free(&ref);
    t_clip_free(&c);
    df_sched_unref(s);
}

/* Picture buffers are reused wherever the stream's decode runs: once the
 * clip has been decoded, decoding it again allocates (almost) nothing, even
 * when its tasks move between workers (a new picture costs page faults on
 * every first touch; each worker's free list used to grow its own). */
DF_TEST(FrameworkFlow, PicturesAreReusedAcrossWorkers)
{
    DfSched *s = t_sched("fifo", 2, 20);
    DF_ASSERT(s);
    TClip c;
    DF_ASSERT(t_clip_load("h264_cabac_slices8.mkv", &c) == 0);
    DfDecoderConfig cfg;
    df_decoder_config_init(&cfg);
    cfg.threading = DF_THREADING_NONE;
    DfDecoder *dec = new_dec(s, &c, &cfg);
    DF_ASSERT(dec);
    TSums got = {0};
    DfDecoderStats st;
    uint64_t after_first = 0;
    for (int pass = 0; pass < 6; pass++) {
        DF_EXPECT_EQ_INT(feed(dec, &c, 0, c.n_pkts, &got), 0);
        DF_EXPECT_EQ_INT(drain(dec, &got), 0);
        df_decoder_flush(dec);
        df_decoder_stats(dec, &st);
        if (pass == 0)
            after_first = st.pool_allocs;
    }
    /* Slack of one per worker: a free list peeked while its count is
     * stale, or a pass that holds one picture more than the first. */
    DF_EXPECT_MSG(st.pool_allocs <= after_first + 2,
                  "%llu pictures allocated by the first pass, %llu after five more",
                  (unsigned long long)after_first, (unsigned long long)st.pool_allocs);
    df_decoder_free(&dec);
    t_sums_free(&got);
    t_clip_free(&c);
    df_sched_unref(s);
}

typedef struct LateHook {
    int calls, fallbacks;
} LateHook;

/* A consumer that renders directly after its first few pictures (as dfdec
 * does once downstream's allocation is known): exactly the layout asked
 * for, in one buffer. */
static int late_get_picture(void *opaque, AVFrame *frame, const DfPictureLayout *layout, int flags)
{
    (void)flags;
    LateHook *h = opaque;
    if (h->calls++ < h->fallbacks)
        return AVERROR(ENOSYS);
    ptrdiff_t ls[4];
    size_t sizes[4];
    for (int i = 0; i < 4; i++)
        ls[i] = layout->linesize[i];
    if (av_image_fill_plane_sizes(sizes, frame->format, layout->height, ls) < 0)
        return AVERROR(EINVAL);
    size_t total = 0;
    for (int i = 0; i < 4; i++)
        total += FFALIGN(sizes[i], (size_t)layout->align);
    AVBufferRef *buf = av_buffer_alloc(total + 16 + 2 * (size_t)layout->align);
    if (!buf)
        return AVERROR(ENOMEM);
    uint8_t *p = (uint8_t *)FFALIGN((uintptr_t)buf->data, (uintptr_t)layout->align);
    frame->buf[0] = buf;
    for (int i = 0; i < 4; i++) {
        frame->data[i] = sizes[i] ? p : NULL;
        frame->linesize[i] = sizes[i] ? layout->linesize[i] : 0;
        p += FFALIGN(sizes[i], (size_t)layout->align);
    }
    frame->extended_data = frame->data;
    return 0;
}

/* Once the consumer renders directly, the framework's pool lets go of the
 * pictures it made for the first frames instead of keeping them free for
 * good (15 MB per 1080p stream through dfdec). */
DF_TEST(FrameworkFlow, PoolLetsGoOnceTheConsumerRendersDirectly)
{
    DfSched *s = t_sched("cost-local", 2, 20);
    DF_ASSERT(s);
    TClip c;
    TSums ref = {0}, got = {0};
    DF_ASSERT(load_with_ref("h264_cabac_slices8.mkv", NULL, &c, &ref) == 0);
    LateHook hook = {.fallbacks = 4};
    DfDecoderConfig cfg;
    df_decoder_config_init(&cfg);
    cfg.alloc.get_picture = late_get_picture;
    cfg.alloc.opaque = &hook;
    DfDecoder *dec = new_dec(s, &c, &cfg);
    DF_ASSERT(dec);
    DF_EXPECT_EQ_INT(feed(dec, &c, 0, c.n_pkts, &got), 0);
    DF_EXPECT_EQ_INT(drain(dec, &got), 0);
    char msg[256];
    DF_EXPECT_MSG(t_sums_compare(&ref, &got, msg, sizeof(msg)) == 0, "%s", msg);
    DfDecoderStats st;
    df_decoder_stats(dec, &st);
    DF_EXPECT_MSG(st.pool_allocs >= 1 && hook.calls > hook.fallbacks,
                  "%llu pool pictures, %d get_picture calls", (unsigned long long)st.pool_allocs,
                  hook.calls);
    DF_EXPECT_MSG(st.pool_idle == 0 && st.pool_outstanding == 0,
                  "%lld pool pictures kept free, %lld out", (long long)st.pool_idle,
                  (long long)st.pool_outstanding);
    df_decoder_free(&dec);
    t_sums_free(&got);
    t_sums_free(&ref);
    t_clip_free(&c);
    df_sched_unref(s);
}

typedef struct Sink {
    int calls;
} Sink;

static int plain_output(void *opaque, AVFrame *dst, const AVFrame *src)
{
    ((Sink *)opaque)->calls++;
    return av_frame_get_buffer(dst, 0);
}

/* t_df_decode() with the scheduler's trace on; the trace in `tr`. */
static int decode_traced(DfSched *s, const TClip *c, const DfDecoderConfig *cfg, TSums *got,
                         DfDecoderStats *st, DfTrace *tr)
{
    df_sched_trace_start(s, 1 << 16);
    int ret = t_df_decode(s, c, cfg, got, st, NULL, 0);
    df_sched_trace_stop(s);
    if (ret < 0)
        return ret;
    return df_sched_trace_collect(s, tr);
}

/* decode_traced() with the default configuration, for the trace alone. */
static int trace_clip(DfSched *s, const TClip *c, DfTrace *tr)
{
    DfDecoderConfig cfg;
    df_decoder_config_init(&cfg);
    TSums got = {0};
    DfDecoderStats st;
    const int ret = decode_traced(s, c, &cfg, &got, &st, tr);
    t_sums_free(&got);
    return ret;
}

static int64_t since_base(void *opaque)
{
    return df_now_ns() - *(const int64_t *)opaque;
}

static int cmp_i64(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Deadlines follow output order: with a reorder delay of d frames, the
 * decode of packet k outputs the (k - d)-th frame in presentation order
 * (the first frame for the first d packets), so D(k) is due when that
 * frame is, not when its own picture is: with B-frames an anchor's picture
 * (P4 in I0 P4 B2 B1 B3) is due frames after the B-frames decoded after it,
 * and an EDF scheduler given its own PTS would put it, and every frame
 * waiting for it, behind other streams' later work. */
DF_TEST(FrameworkFlow, DeadlinesFollowOutputOrder)
{
    DfSched *s = t_sched("cost-local", 2, 20);
    DF_ASSERT(s);
    TClip c;
    DF_ASSERT(t_clip_load("h264_cabac_slices8.mkv", &c) == 0);
    const int d = c.par->video_delay;
    DF_ASSERT_MSG(d > 0, "%s has no reorder delay", c.name);
    TSums ref = {0};
    DF_ASSERT(t_ref_decode(&c, NULL, AV_PIX_FMT_NONE, &ref) == 0);
    DF_ASSERT_EQ_INT(ref.n, c.n_pkts);
    /* Presentation times in ns, in presentation order. */
    int64_t *pres = calloc((size_t)ref.n, sizeof(*pres));
    DF_ASSERT(pres);
    for (int i = 0; i < ref.n; i++)
        pres[i] = av_rescale_q(ref.v[i].pts, c.tb, (AVRational){1, 1000000000});
    qsort(pres, (size_t)ref.n, sizeof(*pres), cmp_i64);
    /* Stream time 0 is `base`: PTS p is due at base + p. */
    int64_t base = df_now_ns();
    DfDecoderConfig cfg;
    df_decoder_config_init(&cfg);
    cfg.clock_ns = since_base;
    cfg.clock_opaque = &base;
    TSums got = {0};
    DfDecoderStats st;
    DfTrace tr;
    DF_ASSERT(decode_traced(s, &c, &cfg, &got, &st, &tr) == 0);
    DF_EXPECT_EQ_INT(got.n, ref.n);
    const int mod_d = df_sched_module_id(s, "D");
    int checked = 0, wrong = 0;
    for (size_t e = 0; e < tr.n_events; e++) {
        const DfTraceEvent *ev = &tr.events[e];
        if (ev->module != mod_d || ev->tag < 0 || ev->tag >= c.n_pkts)
            continue;
        const int k = (int)ev->tag;
        const int64_t due = base + pres[k < d ? 0 : k - d];
        /* deadline = send time + (due - clock at send): at most `due`,
         * earlier by the time between the two reads of the clock. */
        const bool ok = ev->deadline <= due && ev->deadline > due - 10000000;
        if (!ok && wrong++ < 5)
            df_test_fail(__FILE__, __LINE__, false,
                         "D(%d): deadline %+.1f ms from the due time of the frame it outputs", k,
                         ev->deadline == DF_NO_DEADLINE ? INFINITY
                                                        : (double)(ev->deadline - due) / 1e6);
        checked++;
    }
    DF_EXPECT_MSG(checked >= c.n_pkts, "%d D nodes traced for %d packets", checked, c.n_pkts);
    DF_EXPECT_EQ_INT(wrong, 0);
    df_trace_free(&tr);
    t_sums_free(&got);
    t_sums_free(&ref);
    free(pres);
    t_clip_free(&c);
    df_sched_unref(s);
}

static int64_t clock_unknown(void *opaque)
{
    (void)opaque;
    return INT64_MIN;
}

/* A clock that does not run (INT64_MIN) gives no deadline, not one
 * computed from INT64_MIN; the output stays exact. */
DF_TEST(FrameworkFlow, UnknownClockTimeGivesNoDeadline)
{
    DfSched *s = t_sched("cost-local", 2, 20);
    DF_ASSERT(s);
    TClip c;
    DF_ASSERT(t_clip_load("h264_cabac_slices8.mkv", &c) == 0);
    TSums ref = {0};
    DF_ASSERT(t_ref_decode(&c, NULL, AV_PIX_FMT_NONE, &ref) == 0);
    DfDecoderConfig cfg;
    df_decoder_config_init(&cfg);
    cfg.clock_ns = clock_unknown;
    TSums got = {0};
    DfDecoderStats st;
    DfTrace tr;
    DF_ASSERT(decode_traced(s, &c, &cfg, &got, &st, &tr) == 0);
    char msg[256];
    DF_EXPECT_MSG(t_sums_compare(&ref, &got, msg, sizeof(msg)) == 0, "%s", msg);
    const int mod_d = df_sched_module_id(s, "D");
    int checked = 0, with = 0;
    for (size_t e = 0; e < tr.n_events; e++) {
        if (tr.events[e].module != mod_d)
            continue;
        checked++;
        with += tr.events[e].deadline != DF_NO_DEADLINE;
    }
    DF_EXPECT_MSG(checked >= c.n_pkts, "%d D nodes traced for %d packets", checked, c.n_pkts);
    DF_EXPECT_EQ_INT(with, 0);
    df_trace_free(&tr);
    t_sums_free(&got);
    t_sums_free(&ref);
    t_clip_free(&c);
    df_sched_unref(s);
}

/* R(k,b) reads the rows of band b from the worker that wrote them last:
 * the trace shows, per R node, inputs whose bytes add up to the band's
 * rows and whose workers ran that module.  MPEG-2's rows are the S jobs';
 * H.264's are D's, because libavcodec deblocks the whole picture there
 * after the slice jobs; after a filter they are F.band's. */
DF_TEST(FrameworkFlow, BandInputsAreSliceRows)
{
    DfSched *s = t_sched("cost-local", 2, 20);
    DF_ASSERT(s);
    const struct {
        const char *clip, *filter, *writer;
    } cases[] = {
        {"h264_cabac_slices8.mkv", NULL, "D"},
        {"h264_cabac_slices8.mkv", "unsharp", "F.band"},
        {"mpeg2_prog.mkv", NULL, "S"},
    };
    const int mod_r = df_sched_module_id(s, "R");
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        const int mod_w = df_sched_module_id(s, cases[k].writer);
        const char *what = cases[k].filter ? cases[k].filter : cases[k].clip;
        TClip c;
        DF_ASSERT(t_clip_load(cases[k].clip, &c) == 0);
        Sink sink = {0};
        DfDecoderConfig cfg;
        df_decoder_config_init(&cfg);
        cfg.alloc.get_output = plain_output;
        cfg.alloc.opaque = &sink;
        cfg.filter = cases[k].filter;
        TSums got = {0};
        DfDecoderStats st;
        DfTrace tr;
        DF_ASSERT(decode_traced(s, &c, &cfg, &got, &st, &tr) == 0);
        /* Workers that ran the writing module. */
        bool wrote[2] = {false, false};
        for (size_t e = 0; e < tr.n_events; e++)
            if (tr.events[e].module == mod_w && tr.events[e].worker >= 0 && tr.events[e].worker < 2)
                wrote[tr.events[e].worker] = true;
        const uint64_t frame_bytes = 640 * 360 * 3 / 2;
        int r_nodes = 0, r_with_rows = 0, bad_worker = 0, other_module = 0;
        uint64_t row_bytes = 0;
        for (size_t e = 0; e < tr.n_events; e++) {
            const DfTraceEvent *ev = &tr.events[e];
            if (ev->module != mod_r || (ev->flags & DF_TRACE_SKIPPED))
                continue;
            r_nodes++;
            uint64_t bytes = 0;
            for (uint32_t i = 0; i < ev->n_inputs; i++) {
                const DfTraceInput *in = &tr.inputs[ev->first_input + i];
                if (in->bytes == 0)
                    continue; /* edges that carry no rows (O, previous R) */
                if (in->module != mod_w) {
                    other_module++;
                    continue;
                }
                bytes += in->bytes;
                if (in->worker < 0 || in->worker > 1 || !wrote[in->worker])
                    bad_worker++;
            }
            row_bytes += bytes;
            r_with_rows += bytes > 0;
        }
        /* Linesizes are padded, so the bytes are at least the visible ones. */
        /* R nodes of packets that gave no picture (reorder delay) read nothing. */
        DF_EXPECT_MSG(r_nodes > 0 && (uint64_t)r_with_rows == st.bands,
                      "%s: %d of %d R nodes read rows, %llu bands did work", what, r_with_rows,
                      r_nodes, (unsigned long long)st.bands);
        DF_EXPECT_MSG(row_bytes >= frame_bytes * (uint64_t)got.n &&
                          row_bytes < 2 * frame_bytes * (uint64_t)got.n,
                      "%s: %llu row bytes for %d frames", what, (unsigned long long)row_bytes,
                      got.n);
        DF_EXPECT_MSG(other_module == 0, "%s: %d row inputs not from %s", what, other_module,
                      cases[k].writer);
        DF_EXPECT_EQ_INT(bad_worker, 0);
        DF_EXPECT_EQ_INT(sink.calls, got.n);
        df_trace_free(&tr);
        t_sums_free(&got);
        t_clip_free(&c);
    }
    df_sched_unref(s);
}

typedef struct TBatch {
    uint64_t group, bytes;
} TBatch;

/* The traced event of node `id`, or NULL. */
static const DfTraceEvent *t_trace_event(const DfTrace *tr, uint64_t id)
{
    for (size_t e = 0; id && e < tr->n_events; e++)
        if (tr->events[e].node_id == id)
            return &tr->events[e];
    return NULL;
}

/* Slice jobs read the reference pictures: every job of a picture that
 * follows another declares the co-located rows of the pictures decoded
 * before it, naming the task that wrote them (its module and worker, as
 * traced), about one picture's rows per picture.  H.264's rows come from D
 * (deblocked there), MPEG-2's and HEVC's from the S jobs themselves. */
DF_TEST(FrameworkFlow, SliceJobsReadReferenceRows)
{
    DfSched *s = t_sched("cost-local", 2, 20);
    DF_ASSERT(s);
    const struct {
        const char *clip, *writer;
    } cases[] = {
        {"h264_cabac_slices8.mkv", "D"},
        {"mpeg2_prog.mkv", "S"},
        {"hevc_wpp8.mkv", "S"},
    };
    const int mod_s = df_sched_module_id(s, "S");
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        const int mod_w = df_sched_module_id(s, cases[k].writer);
        TClip c;
        DF_ASSERT(t_clip_load(cases[k].clip, &c) == 0);
        DfTrace tr;
        DF_ASSERT(trace_clip(s, &c, &tr) == 0);
        /* Bytes per picture: the S jobs of one D task, in one execute call
         * (MPEG-2, HEVC) or several (H.264: one per thread_count slices). */
        TBatch batch[256];
        int n_batch = 0, jobs = 0, with_inputs = 0, bad = 0, above = 0;
        for (size_t e = 0; e < tr.n_events; e++) {
            const DfTraceEvent *ev = &tr.events[e];
            if (ev->module != mod_s)
                continue;
            jobs++;
            with_inputs += ev->n_inputs > 0;
            int b = 0;
            while (b < n_batch && batch[b].group != ev->parent_id)
                b++;
            if (b == n_batch && n_batch < 256)
                batch[n_batch++] = (TBatch){ev->parent_id, 0};
            for (uint32_t i = 0; i < ev->n_inputs; i++) {
                const DfTraceInput *in = &tr.inputs[ev->first_input + i];
                const DfTraceEvent *p = t_trace_event(&tr, in->pred_id);
                if (in->pred_id && in->pred_id == ev->start_pred_id) {
                    /* The row above (WPP): read while it runs, from the
                     * worker that started it. */
                    above++;
                    if (!p || p->worker != in->worker || in->module != mod_s)
                        bad++;
                    continue;
                }
                if (b < n_batch)
                    batch[b].bytes += in->bytes;
                /* An input of no bytes from a node a thief ran names the
                 * worker it was placed on (df_node_input_worker). */
                const bool home = in->bytes == 0 && p && (p->flags & DF_TRACE_STOLEN);
                if (!p || in->module != mod_w || p->module != mod_w ||
                    (p->worker != in->worker && !home) || p->end_ns > ev->start_ns)
                    bad++;
            }
        }
        int batches = 0, one_picture = 0;
        const uint64_t frame_bytes = 640 * 360 * 3 / 2;
        for (int b = 0; b < n_batch; b++) {
            if (!batch[b].bytes)
                continue;
            batches++;
            one_picture += batch[b].bytes >= frame_bytes && batch[b].bytes < 2 * frame_bytes;
        }
        /* All but the first picture's jobs (and the odd job of a picture
         * that follows a flush) read references. */
        DF_EXPECT_MSG(jobs > 0 && with_inputs >= jobs * 3 / 4,
                      "%s: %d of %d slice jobs declare inputs", cases[k].clip, with_inputs, jobs);
        DF_EXPECT_MSG(bad == 0, "%s: %d inputs name no earlier %s task of their worker",
                      cases[k].clip, bad, cases[k].writer);
        DF_EXPECT_MSG(batches > 0 && one_picture == batches,
                      "%s: %d of %d pictures' jobs read one picture's rows", cases[k].clip,
                      one_picture, batches);
        /* Every WPP row but a picture's first reads the row above. */
        const bool wpp = !strcmp(cases[k].clip, "hevc_wpp8.mkv");
        DF_EXPECT_MSG(wpp ? above > 0 && above >= jobs * 3 / 4 : above == 0,
                      "%s: %d of %d jobs read the row above", cases[k].clip, above, jobs);
        df_trace_free(&tr);
        t_clip_free(&c);
    }
    df_sched_unref(s);
}

/* The picture type of each packet of `c`, from a plain single-threaded
 * libavcodec decode (frames matched to packets by pts). */
static int packet_types(const TClip *c, int *type)
{
    const AVCodec *codec = avcodec_find_decoder(c->par->codec_id);
    AVCodecContext *ctx = avcodec_alloc_context3(codec);
    AVFrame *f = av_frame_alloc();
    int ret = -1;
    if (!ctx || !f || avcodec_parameters_to_context(ctx, c->par) < 0)
        goto out;
    ctx->thread_count = 1;
    if (avcodec_open2(ctx, codec, NULL) < 0)
        goto out;
    for (int i = 0; i < c->n_pkts; i++)
        type[i] = AV_PICTURE_TYPE_NONE;
    for (int i = 0; i <= c->n_pkts; i++) {
        if (avcodec_send_packet(ctx, i < c->n_pkts ? c->pkts[i] : NULL) < 0)
            goto out;
        while (avcodec_receive_frame(ctx, f) == 0) {
            for (int k = 0; k < c->n_pkts; k++)
                if (c->pkts[k]->pts == f->pts)
                    type[k] = f->pict_type;
            av_frame_unref(f);
        }
    }
    ret = 0;
out:
    av_frame_free(&f);
    avcodec_free_context(&ctx);
    return ret;
}

/* MPEG-2 says which pictures a picture reads: a P picture's jobs declare
 * the rows of the I/P picture before it, a B picture's the two before it,
 * an I picture's none, and no job reads a B picture (the two pictures
 * decoded last, the rule for the other codecs, are mostly not the
 * references when there are B pictures). */
DF_TEST(FrameworkFlow, Mpeg2JobsReadTheirAnchors)
{
    DfSched *s = t_sched("cost-local", 2, 20);
    DF_ASSERT(s);
    const int mod_s = df_sched_module_id(s, "S");
    TClip c;
    DF_ASSERT(t_clip_load("mpeg2_prog.mkv", &c) == 0);
    int *type = calloc((size_t)c.n_pkts, sizeof(int));
    DF_ASSERT(type && packet_types(&c, type) == 0);
    DfTrace tr;
    DF_ASSERT(trace_clip(s, &c, &tr) == 0);
    int jobs[4] = {0}, right[4] = {0}, reads_b = 0, n_b = 0;
    for (size_t e = 0; e < tr.n_events; e++) {
        const DfTraceEvent *ev = &tr.events[e];
        const DfTraceEvent *d = ev->module == mod_s ? t_trace_event(&tr, ev->parent_id) : NULL;
        if (!d || d->tag < 0 || d->tag >= c.n_pkts)
            continue;
        const int t = type[d->tag];
        const int want = t == AV_PICTURE_TYPE_P ? 1 : t == AV_PICTURE_TYPE_B ? 2 : 0;
        int64_t pics[8];
        int n_pics = 0;
        for (uint32_t i = 0; i < ev->n_inputs; i++) {
            const DfTraceEvent *p = t_trace_event(&tr, tr.inputs[ev->first_input + i].pred_id);
            const DfTraceEvent *pd = p ? t_trace_event(&tr, p->parent_id) : NULL;
            if (!pd || pd->tag < 0 || pd->tag >= c.n_pkts)
                continue;
            reads_b += type[pd->tag] == AV_PICTURE_TYPE_B;
            bool seen = false;
            for (int k = 0; k < n_pics; k++)
                seen |= pics[k] == pd->tag;
            if (!seen && n_pics < 8)
                pics[n_pics++] = pd->tag;
        }
        const int slot = t == AV_PICTURE_TYPE_I ? 0 : want;
        n_b += t == AV_PICTURE_TYPE_B;
        jobs[slot]++;
        right[slot] += n_pics == want;
    }
    DF_EXPECT_MSG(reads_b == 0, "%d inputs read a B picture", reads_b);
    DF_EXPECT_MSG(n_b > 0 && jobs[0] > 0 && jobs[1] > 0, "I %d, P %d, B %d jobs", jobs[0], jobs[1],
                  jobs[2]);
    DF_EXPECT_MSG(right[0] == jobs[0], "%d of %d I-picture jobs read nothing", right[0], jobs[0]);
    /* All P and B pictures but those after the first I. */
    DF_EXPECT_MSG(right[1] >= jobs[1] * 3 / 4, "%d of %d P-picture jobs read one picture", right[1],
                  jobs[1]);
    DF_EXPECT_MSG(right[2] >= jobs[2] * 3 / 4, "%d of %d B-picture jobs read two pictures",
                  right[2], jobs[2]);
    df_trace_free(&tr);
    free(type);
    t_clip_free(&c);
    df_sched_unref(s);
}
