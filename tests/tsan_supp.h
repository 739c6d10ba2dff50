/* ThreadSanitizer's suppressions (tsan_supp.c) and the build's kind. */
#ifndef DF_TSAN_SUPP_H
#define DF_TSAN_SUPP_H

#include <stdbool.h>

/* True in a ThreadSanitizer build.  libavcodec's frame threads then stay
 * off: their progress atomics are uninstrumented, so TSan would report
 * every frame they hand over. */
bool t_under_tsan(void);

#endif
