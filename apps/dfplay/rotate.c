/* ffmpeg's autorotate (fftools' configure_input_video_filter and
 * get_rotation, FFmpeg 5.1 to 7.1): the same filters for the same matrix,
 * so that --vo framemd5 still prints what ffmpeg prints. */
#include "rotate.h"

#include <glib.h>
#include <libavcodec/packet.h>
#include <libavcodec/version.h>
#include <libavutil/display.h>
#include <math.h>

static const int32_t *display_matrix(const AVStream *st)
{
    /* Stream side data moved to AVCodecParameters in FFmpeg 6.1 (lavc
     * 60.30.100); the AVStream accessor is gone in 7.0. */
#if LIBAVCODEC_VERSION_INT >= AV_VERSION_INT(60, 30, 100)
    const AVPacketSideData *sd = av_packet_side_data_get(
        st->codecpar->coded_side_data, st->codecpar->nb_coded_side_data, AV_PKT_DATA_DISPLAYMATRIX);
    return sd && sd->size >= 9 * sizeof(int32_t) ? (const int32_t *)sd->data : NULL;
#else
    size_t size = 0;
    const uint8_t *d = av_stream_get_side_data(st, AV_PKT_DATA_DISPLAYMATRIX, &size);
    return d && size >= 9 * sizeof(int32_t) ? (const int32_t *)d : NULL;
#endif
}

char *df_rotation_filter(const AVStream *st)
{
    const int32_t *m = display_matrix(st);
    if (!m)
        return NULL;
    /* Counter-clockwise degrees in [0, 360), as get_rotation(). */
    double theta = -round(av_display_rotation_get(m));
    theta -= 360 * floor(theta / 360 + 0.9 / 360);
    if (fabs(theta - 90) < 1.0)
        return g_strdup(m[3] > 0 ? "transpose=cclock_flip" : "transpose=clock");
    if (fabs(theta - 180) < 1.0) {
        if (m[0] < 0 && m[4] < 0)
            return g_strdup("hflip,vflip");
        if (m[0] < 0)
            return g_strdup("hflip");
        return m[4] < 0 ? g_strdup("vflip") : NULL;
    }
    if (fabs(theta - 270) < 1.0)
        return g_strdup(m[3] < 0 ? "transpose=clock_flip" : "transpose=cclock");
    if (fabs(theta) > 1.0)
        return g_strdup_printf("rotate=%f*PI/180", theta);
    return fabs(theta) < 1.0 && m[4] < 0 ? g_strdup("vflip") : NULL;
}
