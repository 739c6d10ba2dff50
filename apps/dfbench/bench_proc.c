/* What the process holds at one moment: threads, resident memory, heap in
 * use.  dfbench realtime samples it before a trial and half way through,
 * and divides the growth by the trial's streams (threads and memory per
 * added stream, for dfmedia and for the pipelines alike). */
#include "bench_media.h"

#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* "Name:   value kB" of /proc/self/status; -1 when missing. */
static long status_field(const char *buf, const char *name)
{
    const char *p = strstr(buf, name);
    long v = -1;
    if (p && sscanf(p + strlen(name), " %ld", &v) != 1)
        v = -1;
    return v;
}

void df_proc_sample_trimmed(DfProcSample *out)
{
    /* Free memory of earlier trials back to the system first, or the
     * growth would hide in it. */
    malloc_trim(0);
    df_proc_sample(out);
}

void df_proc_sample(DfProcSample *out)
{
    out->threads = -1;
    out->rss_mib = out->heap_mib = NAN;
    char buf[4096];
    FILE *f = fopen("/proc/self/status", "r");
    if (f) {
        const size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        buf[n] = '\0';
        fclose(f);
        const long th = status_field(buf, "\nThreads:"), rss = status_field(buf, "\nVmRSS:");
        out->threads = (int)th;
        if (rss >= 0)
            out->rss_mib = (double)rss / 1024.0;
    }
    /* Arena chunks in use plus mmapped ones (libavcodec's and the pools'
     * pictures are mmapped at 1080p). */
    const struct mallinfo2 mi = mallinfo2();
    /* An allocator that is not glibc's (a sanitizer's) reports nothing. */
    if (mi.arena || mi.hblkhd)
        out->heap_mib = (double)(mi.uordblks + mi.hblkhd) / (1024.0 * 1024.0);
}

void df_proc_per_stream(const DfProcSample *before, const DfProcSample *mid, int k,
                        DfPerStream *out)
{
    out->threads = out->rss_mib = out->heap_mib = NAN;
    if (k <= 0)
        return;
    if (before->threads >= 0 && mid->threads >= 0)
        out->threads = (double)(mid->threads - before->threads) / k;
    out->rss_mib = (mid->rss_mib - before->rss_mib) / k;
    out->heap_mib = (mid->heap_mib - before->heap_mib) / k;
}
