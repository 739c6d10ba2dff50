/* The "df" plugin: dfmedia's GStreamer elements. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstdfdec.h"

#define PACKAGE "dfmedia"

static gboolean plugin_init(GstPlugin *plugin)
{
    gst_df_dec_install_log();
    return GST_ELEMENT_REGISTER(dfdec, plugin);
}

GST_PLUGIN_DEFINE(GST_VERSION_MAJOR, GST_VERSION_MINOR, df,
                  "dfmedia: video decode as dataflow tasks on pinned workers", plugin_init,
                  DF_VERSION, "LGPL", "dfmedia", "https://example.invalid/dfmedia")
