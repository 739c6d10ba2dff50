/* HEVC (docs/codecs.md, "HEVC"). */
#include "nal.h"

#include <stdio.h>

static void hevc_pps(DfProbe *p, const uint8_t *nal, int len)
{
    DfBits b;
    unsigned v;
    df_bits_init(&b, nal + 2, len - 2);
    /* H.265 7.3.2.3.1 up to entropy_coding_sync_enabled_flag. */
    if (df_bits_ue(&b, &v) < 0 || df_bits_ue(&b, &v) < 0)
        return;
    if (df_bits_read(&b, 1 + 1 + 3 + 1 + 1, &v) < 0)
        return;
    if (df_bits_ue(&b, &v) < 0 || df_bits_ue(&b, &v) < 0 || df_bits_se(&b) < 0)
        return;
    unsigned cu_qp_delta;
    if (df_bits_read(&b, 2, &v) < 0 || df_bits_read(&b, 1, &cu_qp_delta) < 0)
        return;
    if (cu_qp_delta && df_bits_ue(&b, &v) < 0)
        return;
    if (df_bits_se(&b) < 0 || df_bits_se(&b) < 0)
        return;
    unsigned tiles, wpp;
    if (df_bits_read(&b, 4, &v) < 0 || df_bits_read(&b, 1, &tiles) < 0 ||
        df_bits_read(&b, 1, &wpp) < 0)
        return;
    p->pps_seen = 1;
    p->tiles |= (int)tiles;
    p->wpp |= (int)wpp;
}

static void hevc_nal(DfProbe *p, const uint8_t *nal, int len)
{
    if (len < 3)
        return;
    int type = (nal[0] >> 1) & 0x3f;
    if (type == 34)
        hevc_pps(p, nal, len);
    else if (type <= 21)
        p->vcl_seen = 1;
}

/* hvcC: 22 bytes of header, then arrays of NAL units with 16-bit lengths. */
static void walk_hvcc(DfProbe *p, const uint8_t *d, int size)
{
    if (size < 23)
        return;
    p->nal_length_size = (d[21] & 3) + 1;
    int n_arrays = d[22], i = 23;
    for (int a = 0; a < n_arrays && i + 3 <= size; a++) {
        int n = d[i + 1] << 8 | d[i + 2];
        i += 3;
        for (int k = 0; k < n && i + 2 <= size; k++) {
            int len = d[i] << 8 | d[i + 1];
            i += 2;
            if (len > size - i)
                return;
            hevc_nal(p, d + i, len);
            i += len;
        }
    }
}

static void hevc_extradata(DfProbe *p, const uint8_t *x, int n)
{
    if (x && n >= 23 && x[0] == 1)
        walk_hvcc(p, x, n);
    else if (x && n > 0)
        df_nal_walk_annexb(p, x, n, hevc_nal);
}

static bool hevc_done(const DfProbe *p)
{
    return p->pps_seen && p->vcl_seen;
}

/* Parallel jobs only with WPP (entropy_coding_sync_enabled_flag) and
 * without tiles (with tiles libavcodec 5.1 sets threads_number = 1). */
static bool hevc_auto_slices(const DfProbe *p, char *why, size_t size)
{
    if (p->wpp && !p->tiles) {
        snprintf(why, size, "HEVC with WPP (one job per CTU row)");
        return true;
    }
    snprintf(why, size, "%s",
             p->tiles      ? "HEVC with tiles gives no parallel jobs in libavcodec 5.1"
             : p->pps_seen ? "HEVC without WPP gives no parallel jobs"
                           : "HEVC PPS not seen");
    return false;
}

/* A WPP row started beyond the workers' count just blocks in
 * pthread_cond_wait (threading.c on the thread_count rule). */
static int hevc_thread_count(const DfProbe *p, int n_workers, int height)
{
    return n_workers > 2 ? n_workers : 2;
}

static const enum AVCodecID ids[] = {AV_CODEC_ID_HEVC, AV_CODEC_ID_NONE};

const DfCodecOps df_codec_hevc = {
    .name = "HEVC",
    .ids = ids,
    .probe_extradata = hevc_extradata,
    .probe_nal = hevc_nal,
    .probe_done = hevc_done,
    .auto_slices = hevc_auto_slices,
    .thread_count = hevc_thread_count,
    .refs = DF_REFS_LAST_TWO,
};
