/* Messages: av_log with the decoder's level, and DfError filling. */
#include "media_internal.h"

#include <stdarg.h>
#include <stdio.h>

void df_log(const DfDecoder *dec, int level, const char *fmt, ...)
{
    if (dec && level > dec->cfg.log_level)
        return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    av_log(NULL, level, "dfmedia: %s", buf);
}

int df_err(DfError *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return code;
}
