/* dfdec's direct-rendering pool: a GstVideoBufferPool that hands out the
 * most recently released buffer first, and frees what it holds beyond
 * what the stream uses. */
#ifndef GST_DF_DEC_POOL_H
#define GST_DF_DEC_POOL_H

#include <gst/video/gstvideopool.h>

G_BEGIN_DECLS

/* Buffers at the bottom of the stack that no acquire reached for a whole
 * window of this many acquires are more than the stream uses
 * (dr_pool_touch faults in an estimate made before the stream is known:
 * with the stack, 3-4 of a 1080p stream's 7-10 pictures were never used,
 * 2026-12-07); all but one of them are freed.  The first window, which
 * holds the start-up whose first-touch faults dr_pool_touch keeps off
 * the workers, frees nothing: 32 pictures are about 1 s at 30 fps. */
#define GST_DF_DEC_POOL_WINDOW 32

#define GST_TYPE_DF_DEC_POOL (gst_df_dec_pool_get_type())
G_DECLARE_FINAL_TYPE(GstDfDecPool, gst_df_dec_pool, GST, DF_DEC_POOL, GstVideoBufferPool)

GstBufferPool *gst_df_dec_pool_new(void);

G_END_DECLS

#endif
