/* dfdec's direct-rendering pool: a GstVideoBufferPool that hands out the
 * most recently released buffer first. */
#ifndef GST_DF_DEC_POOL_H
#define GST_DF_DEC_POOL_H

#include <gst/video/gstvideopool.h>

G_BEGIN_DECLS

#define GST_TYPE_DF_DEC_POOL (gst_df_dec_pool_get_type())
G_DECLARE_FINAL_TYPE(GstDfDecPool, gst_df_dec_pool, GST, DF_DEC_POOL, GstVideoBufferPool)

GstBufferPool *gst_df_dec_pool_new(void);

G_END_DECLS

#endif
