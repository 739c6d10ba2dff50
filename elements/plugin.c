/* The "df" plugin: dfmedia's GStreamer elements. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstdfdec.h"

/* GST_PLUGIN_DEFINE reads PACKAGE: the source module's name. */
#define PACKAGE "dfmedia"

/* GST_PACKAGE_NAME and GST_PACKAGE_ORIGIN come from meson's package-name
 * and package-origin options, as in GStreamer's own modules: dfmedia has no
 * public home page, so the origin stays GStreamer's "Unknown package
 * origin" unless a distributor sets it. */
#ifndef GST_PACKAGE_NAME
#define GST_PACKAGE_NAME "dfmedia source release"
#endif
#ifndef GST_PACKAGE_ORIGIN
#define GST_PACKAGE_ORIGIN "Unknown package origin"
#endif

static gboolean plugin_init(GstPlugin *plugin)
{
    gst_df_dec_install_log();
    return GST_ELEMENT_REGISTER(dfdec, plugin);
}

GST_PLUGIN_DEFINE(GST_VERSION_MAJOR, GST_VERSION_MINOR, df,
                  "dfmedia: video decode as dataflow tasks on pinned workers", plugin_init,
                  DF_VERSION, "LGPL", GST_PACKAGE_NAME, GST_PACKAGE_ORIGIN)
