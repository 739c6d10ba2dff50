/* dfdec: a GstVideoDecoder that decodes H.264, HEVC and MPEG-1/2 through
 * dfmedia, its decode work cut into tasks on the dfsched scheduler. */
#ifndef GST_DF_DEC_H
#define GST_DF_DEC_H

#include <gst/gst.h>
#include <gst/video/video.h>

#include "dfmedia.h"

G_BEGIN_DECLS

#define GST_TYPE_DF_DEC (gst_df_dec_get_type())
G_DECLARE_FINAL_TYPE(GstDfDec, gst_df_dec, GST, DF_DEC, GstVideoDecoder)

#define GST_TYPE_DF_DEC_POLICY (gst_df_dec_policy_get_type())
GType gst_df_dec_policy_get_type(void);

#define GST_TYPE_DF_DEC_THREADING (gst_df_dec_threading_get_type())
GType gst_df_dec_threading_get_type(void);

/* What dfdec does with a stream that overloads the shared scheduler. */
typedef enum {
    GST_DF_DEC_ADMISSION_NONE = 0,
    GST_DF_DEC_ADMISSION_WARN,
    GST_DF_DEC_ADMISSION_REFUSE,
} GstDfDecAdmission;

#define GST_TYPE_DF_DEC_ADMISSION (gst_df_dec_admission_get_type())
GType gst_df_dec_admission_get_type(void);

GST_ELEMENT_REGISTER_DECLARE(dfdec);

/* Route libavcodec's log into the dfdec debug category (plugin load). */
void gst_df_dec_install_log(void);

G_END_DECLS

#endif
