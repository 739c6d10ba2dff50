/* The display matrix of a stream (a phone's portrait video) as the filters
 * ffmpeg inserts for it (-autorotate, its default). */
#ifndef DFPLAY_ROTATE_H
#define DFPLAY_ROTATE_H

#include <libavformat/avformat.h>

/* The filter chain that shows `st` upright ("transpose=clock", "hflip,vflip",
 * ...), newly allocated (g_free), or NULL when the stream needs none. */
char *df_rotation_filter(const AVStream *st);

#endif
