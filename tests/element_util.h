/* Helpers for the dfdec tests: the plugin from the build, generated clips
 * pushed through a GstHarness, per-frame md5 of what comes out. */
#ifndef ELEMENT_UTIL_H
#define ELEMENT_UTIL_H

#include "framework_util.h"

#include <gst/check/gstharness.h>
#include <gst/gst.h>
#include <gst/video/video.h>

/* gst_init() and the plugin from DF_GST_PLUGIN (once); false on failure. */
bool e_init(void);

/* Caps for a clip's packets: avc/hvc1 with codec_data when the clip has
 * extradata in that form, else byte-stream; video/mpeg for MPEG-1/2. */
GstCaps *e_clip_caps(const TClip *clip);

/* Packet `i` of the clip as a GstBuffer (timestamps in ns). */
GstBuffer *e_clip_buffer(const TClip *clip, int i);

/* The reference of the clip (t_ref_decode) with pts in nanoseconds. */
int e_ref(const TClip *clip, TSums *out);

/* md5 (t_frame_md5) of a decoded buffer described by `caps`: of the
 * GstVideoCropMeta window when there is one (counted in e_crop_buffers;
 * -1 when the caps are not the window's size). */
int e_buffer_sum(GstBuffer *buf, GstCaps *caps, TSum *out);
extern int e_crop_buffers;

/* Pull every buffer waiting on the harness's sink into `out`; counts
 * buffers without a valid PTS or duration in *bad_ts. */
void e_pull_all(GstHarness *h, TSums *out, int *bad_ts);

/* A harness over "dfdec" with `props` (gst_util_set_object_arg pairs,
 * NULL-terminated) and the clip's caps. */
GstHarness *e_harness(const TClip *clip, const char *const *props);

/* Push packets [from, to) of the clip, pulling as it goes; returns the
 * first flow that was not GST_FLOW_OK (or GST_FLOW_OK). */
GstFlowReturn e_push_range(GstHarness *h, const TClip *clip, int from, int to, TSums *out,
                           int *bad_ts);

/* How many frames of `got` (a subset of `ref`, as when frames are dropped)
 * are not the reference's frame of the same pts, or come out of order. */
int e_count_inexact_by_pts(const TSums *ref, const TSums *got);

/* Compare ignoring pts (streams without timestamps). */
int e_compare_md5(const TSums *ref, const TSums *got, char *msg, size_t len);

#endif
