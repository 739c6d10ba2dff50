/* What the process holds at one moment: threads, resident memory, heap in
 * use.  dfbench realtime samples it before a trial and half way through,
 * and divides the growth by the trial's streams (threads and memory per
 * added stream, for dfmedia and for the pipelines alike); --overload can
 * sample it all along a run (df_proc_sampler_start). */
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

struct DfProcSampler {
    GThread *thread;
    GMutex lock;
    GCond cond;
    bool stop; /* under lock */
    double every_s;
    int64_t t0_us; /* g_get_monotonic_time() at the start */
    GArray *points;
};

static gpointer sampler_main(gpointer data)
{
    DfProcSampler *s = data;
    const int64_t every_us = (int64_t)(s->every_s * 1e6);
    int64_t next = s->t0_us + every_us;
    g_mutex_lock(&s->lock);
    for (;;) {
        /* A spurious wake-up or a stop both come back here. */
        while (!s->stop && g_get_monotonic_time() < next)
            g_cond_wait_until(&s->cond, &s->lock, next);
        if (s->stop)
            break;
        g_mutex_unlock(&s->lock);
        DfProcPoint pt = {.t_s = (double)(g_get_monotonic_time() - s->t0_us) / 1e6};
        df_proc_sample_trimmed(&pt.p);
        g_array_append_val(s->points, pt);
        next += every_us;
        g_mutex_lock(&s->lock);
    }
    g_mutex_unlock(&s->lock);
    return NULL;
}

DfProcSampler *df_proc_sampler_start(double every_s)
{
    DfProcSampler *s = g_new0(DfProcSampler, 1);
    g_mutex_init(&s->lock);
    g_cond_init(&s->cond);
    s->every_s = every_s;
    s->points = g_array_new(FALSE, FALSE, sizeof(DfProcPoint));
    s->t0_us = g_get_monotonic_time();
    s->thread = g_thread_new("dfbench-mem", sampler_main, s);
    return s;
}

GArray *df_proc_sampler_stop(DfProcSampler *s)
{
    g_mutex_lock(&s->lock);
    s->stop = true;
    g_cond_signal(&s->cond);
    g_mutex_unlock(&s->lock);
    g_thread_join(s->thread);
    GArray *points = s->points;
    g_mutex_clear(&s->lock);
    g_cond_clear(&s->cond);
    g_free(s);
    return points;
}
