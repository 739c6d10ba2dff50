/* ThreadSanitizer's suppressions for every test program that decodes
 * (linked into each, so that the runtime finds them), and t_under_tsan(). */
#include "tsan_supp.h"

#ifdef __SANITIZE_THREAD__
/* libavutil is not instrumented and counts AVBuffer references with atomics
 * ThreadSanitizer cannot see: when the last reference is dropped on another
 * thread (libavcodec keeps refs to SEI side data it also attached to our
 * frames), the free looks like a race with every earlier access.  Only
 * that free is suppressed; use-after-free is ASan's to find. */
const char *__tsan_default_suppressions(void);
const char *__tsan_default_suppressions(void)
{
    /* GLib (dfdec's tests): GMutex, GCond and GQueue-based thread pools
     * synchronise with futexes and atomics inside uninstrumented libglib. */
    /* av_buffer_pool_uninit (a filter graph's frame pool, on a worker):
     * the pool is freed by whichever of it and the last buffer's unref (on
     * the consumer) drops the pool's atomic count last, and TSan takes the
     * mutex_destroy for a race with that unref's mutex_lock. */
    /* libavcodec (Debian's, not instrumented) is visible to TSan only
     * through the libc calls it makes, memset and memcpy, and only those
     * calls: its own loads and stores are not.  On damaged MPEG-2 a slice
     * whose position is garbage decodes into another band's macroblocks,
     * and the two slice jobs memset the same per-macroblock table entries;
     * libavcodec's own slice threads do the same (same contexts, same
     * bands).  That is libavcodec's on broken input; what is ours (the
     * hooks, pools and bands, all instrumented) stays checked. */
    return "race:av_buffer_unref\n"
           "race:av_buffer_pool_uninit\n"
           "race:libglib-2.0.so\n"
           "called_from_lib:libavcodec.so\n";
}
#endif

bool t_under_tsan(void)
{
#ifdef __SANITIZE_THREAD__
    return true;
#else
    return false;
#endif
}
