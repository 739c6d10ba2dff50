/* dfdec's direct-rendering pool (elements/dfdec_pool.c) on its own: the
 * order in which it hands buffers out, and what it frees. */
#include "dfdec_pool.h"
#include "dftest.h"

#include <gst/gst.h>
#include <gst/video/video.h>

static int freed; /* pool buffers finalized (count_free) */
static GQuark tag;

static void count_free(gpointer data)
{
    (void)data;
    freed++;
}

/* A 64x64 I420 pool, active. */
static GstBufferPool *pool_new(guint max)
{
    gst_init(NULL, NULL);
    tag = g_quark_from_static_string("df-test-pool-buffer");
    GstBufferPool *pool = gst_df_dec_pool_new();
    GstVideoInfo info;
    gst_video_info_set_format(&info, GST_VIDEO_FORMAT_I420, 64, 64);
    GstCaps *caps = gst_video_info_to_caps(&info);
    GstStructure *config = gst_buffer_pool_get_config(pool);
    gst_buffer_pool_config_set_params(config, caps, (guint)info.size, 0, max);
    gst_caps_unref(caps);
    if (!gst_buffer_pool_set_config(pool, config) || !gst_buffer_pool_set_active(pool, TRUE)) {
        gst_object_unref(pool);
        return NULL;
    }
    return pool;
}

/* A buffer of the pool, marked so that its end is counted. */
static GstBuffer *take(GstBufferPool *pool)
{
    GstBuffer *b = NULL;
    if (gst_buffer_pool_acquire_buffer(pool, &b, NULL) != GST_FLOW_OK)
        return NULL;
    if (!gst_mini_object_get_qdata(GST_MINI_OBJECT(b), tag))
        gst_mini_object_set_qdata(GST_MINI_OBJECT(b), tag, GINT_TO_POINTER(1), count_free);
    return b;
}

DF_TEST(ElementPool, LastReleasedGoesOutFirst)
{
    GstBufferPool *pool = pool_new(0);
    DF_ASSERT(pool);
    GstBuffer *a = take(pool), *b = take(pool), *c = take(pool);
    DF_ASSERT(a && b && c && a != b && b != c);
    gst_buffer_unref(b);
    gst_buffer_unref(a);
    gst_buffer_unref(c);
    /* Released b, a, c: c, a, b come back (GstBufferPool's FIFO: b, a, c). */
    GstBuffer *x = take(pool), *y = take(pool), *z = take(pool);
    DF_EXPECT(x == c);
    DF_EXPECT(y == a);
    DF_EXPECT(z == b);
    gst_buffer_unref(x);
    gst_buffer_unref(y);
    gst_buffer_unref(z);
    freed = 0;
    DF_EXPECT(gst_buffer_pool_set_active(pool, FALSE));
    DF_EXPECT_EQ_INT(freed, 3); /* stopping frees what the stack held */
    gst_object_unref(pool);
}

/* Six buffers out at once, then a stream that uses one at a time: after
 * the first window (start-up, nothing freed) a whole window in which five
 * stayed at the bottom frees four of them, keeping one spare; the buffer
 * in use and the spare stay until the pool stops. */
DF_TEST(ElementPool, FreesWhatAWindowDidNotUse)
{
    GstBufferPool *pool = pool_new(0);
    DF_ASSERT(pool);
    freed = 0;
    GstBuffer *held[6];
    for (int i = 0; i < 6; i++)
        DF_ASSERT((held[i] = take(pool)));
    for (int i = 0; i < 6; i++)
        gst_buffer_unref(held[i]);
    int acquires = 6;
    for (; acquires < GST_DF_DEC_POOL_WINDOW; acquires++)
        gst_buffer_unref(take(pool));
    DF_EXPECT_MSG(freed == 0, "%d freed in the first window", freed);
    for (; acquires < 2 * GST_DF_DEC_POOL_WINDOW - 1; acquires++)
        gst_buffer_unref(take(pool));
    DF_EXPECT_MSG(freed == 0, "%d freed before the window ended", freed);
    GstBuffer *last = take(pool);
    DF_ASSERT(last);
    DF_EXPECT_EQ_INT(freed, 4);
    /* A third window: the spare stayed at the bottom, but one is kept. */
    for (acquires = 0; acquires < GST_DF_DEC_POOL_WINDOW; acquires++) {
        gst_buffer_unref(last);
        last = take(pool);
    }
    DF_EXPECT_EQ_INT(freed, 4);
    gst_buffer_unref(last);
    DF_EXPECT(gst_buffer_pool_set_active(pool, FALSE));
    DF_EXPECT_EQ_INT(freed, 6);
    gst_object_unref(pool);
}

/* A maximum would have the parent's acquire wait on its own queue, which
 * this pool leaves empty: refused when configured. */
DF_TEST(ElementPool, RefusesABoundedConfig)
{
    GstBufferPool *pool = pool_new(4);
    DF_EXPECT(pool == NULL);
    if (pool)
        gst_object_unref(pool);
}
