/* dfbench realtime --overload: more streams than the cores carry, through
 * dfdec, with admission on and off.
 *
 * Per worker count N: K = ceil(--overload-factor x K*) pipelines (K* =
 * N x T(1) fps / --fps, the first T(1) sample), filesrc ! parsebin !
 * dfdec n-workers=N ... ! SINK sync=true qos=true max-lateness=-1, all
 * started together and sharing the process's one scheduler, twice:
 *  - admission on:  dfdec admission=refuse: a stream that would take
 *    the admitted streams' measured load past max-load of the capacity
 *    is refused (a resource-busy error; its pipeline stops), once its
 *    first second of frames is measured, or at its first packet when
 *    streams like it already measured say so;
 *  - admission off: admission=none: every stream decodes.
 * The sink sends QoS events (qos=true) but renders every frame
 * (max-lateness=-1), so that a late frame is counted, not hidden; dfdec's
 * QoS drops what it finds late (non-reference pictures skipped, queued
 * output cancelled), and each frame it drops is a QoS message.  Per
 * stream: admitted or refused, frames, late frames (arrival at the sink
 * after running time + budget, as the search counts them) and frames
 * dropped.  The goal (issue 21): with admission on, the admitted streams
 * have no late frame; with it off, only the streams QoS drops from are
 * late.  With --stagger, the streams start one by one, each into the
 * load of those before it (admission's judgement by streams of the same
 * class).  With --memory-every, the process's memory along each run (the
 * ten-minute soak).  Timings are never pass/fail. */
#include "bench_realtime.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct OverloadRun {
    const char *admission; /* dfdec's admission property */
    DfGstResult *res;      /* k entries */
    GArray *memory;        /* DfProcPoint over the run (--memory-every), or NULL */
} OverloadRun;

/* Memory settles in the first minute (pools fill, the allocator's arenas
 * grow to the streams' working set); growth after it is a leak. */
#define MEMORY_WARMUP_S 60.0

static void run_one(const DfRt *rt, int workers, int k, const char *admission, DfGstResult *res)
{
    const char *policy = rt->policies->pdata[0];
    char dec[192];
    snprintf(dec, sizeof(dec), "dfdec n-workers=%d policy=%s admission=%s", workers, policy,
             admission);
    char sink[128];
    snprintf(sink, sizeof(sink), "%s qos=true max-lateness=-1", rt->sink);
    df_rt_run_pipelines(rt, workers, dec, sink, k, res, NULL);
}

/* "first-last" seconds of running time, "-" when nothing was late. */
static void late_span(char *buf, size_t len, double first_s, double last_s)
{
    if (isnan(first_s))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.1f-%.1f", first_s, last_s);
}

static void print_runs(const DfRt *rt, int workers, int k, double kstar, const OverloadRun *runs,
                       int n_runs)
{
    static const char *const headers[] = {"workers", "admission", "stream",  "admitted", "frames",
                                          "late",    "late at s", "dropped", "note"};
    DfTable *t = df_table_new(9, headers, "rlrlrrrrl");
    for (int r = 0; r < n_runs; r++) {
        int admitted = 0, late_admitted = 0, late_streams = 0, dropping = 0, late_undropped = 0;
        uint64_t late_frames = 0;
        double first_s = NAN, last_s = NAN;
        for (int i = 0; i < k; i++) {
            const DfGstResult *x = &runs[r].res[i];
            char w[16], s[16], fr[32], late[32], at[48], drop[32];
            snprintf(w, sizeof(w), "%d", workers);
            snprintf(s, sizeof(s), "%d", i);
            snprintf(fr, sizeof(fr), "%llu", (unsigned long long)x->frames);
            snprintf(late, sizeof(late), "%llu", (unsigned long long)x->late);
            late_span(at, sizeof(at), x->late_first_s, x->late_last_s);
            snprintf(drop, sizeof(drop), "%llu", (unsigned long long)x->dropped);
            const char *cells[] = {w,
                                   runs[r].admission,
                                   s,
                                   x->refused ? "refused" : "yes",
                                   fr,
                                   late,
                                   at,
                                   drop,
                                   x->error[0] ? x->error
                                   : x->warned ? "warned"
                                               : ""};
            df_table_row(t, cells);
            admitted += !x->refused;
            late_admitted += !x->refused && x->late > 0;
            late_streams += x->late > 0;
            dropping += x->dropped > 0;
            /* Late with nothing dropped: QoS did not act on it (with
             * admission off, a stream should be late only where it does). */
            late_undropped += x->late > 0 && x->dropped == 0;
            late_frames += x->late;
            first_s = fmin(first_s, x->late_first_s); /* fmin/fmax skip NAN */
            last_s = fmax(last_s, x->late_last_s);
        }
        df_table_rule(t);
        char stagger[48] = "";
        if (rt->o.stagger > 0)
            snprintf(stagger, sizeof(stagger), ", started %g s apart", rt->o.stagger);
        char at[48];
        late_span(at, sizeof(at), first_s, last_s);
        printf("%d workers, admission %s: K = %d requested (%.2f x K* = %.1f%s): %d admitted, %d "
               "refused; %d streams late (%d of them admitted), %llu late frames (at %s s); %d "
               "streams dropped frames; %d late streams dropped none\n",
               workers, runs[r].admission, k, rt->o.overload_factor, kstar, stagger, admitted,
               k - admitted, late_streams, late_admitted, (unsigned long long)late_frames, at,
               dropping, late_undropped);
    }
    df_table_print(t, stdout);
    df_table_free(t);
}

static void print_memory(const OverloadRun *run)
{
    const GArray *m = run->memory;
    if (!m || m->len == 0)
        return;
    printf("\nmemory, admission %s (after malloc_trim):\n%8s %8s %10s %10s\n", run->admission,
           "t s", "threads", "heap MiB", "RSS MiB");
    const DfProcPoint *warm = NULL;
    double heap_max = -INFINITY, rss_max = -INFINITY;
    for (guint i = 0; i < m->len; i++) {
        const DfProcPoint *pt = &g_array_index(m, DfProcPoint, i);
        printf("%8.0f %8d %10.1f %10.1f\n", pt->t_s, pt->p.threads, pt->p.heap_mib, pt->p.rss_mib);
        if (pt->t_s < MEMORY_WARMUP_S)
            continue;
        if (!warm)
            warm = pt;
        heap_max = fmax(heap_max, pt->p.heap_mib);
        rss_max = fmax(rss_max, pt->p.rss_mib);
    }
    const DfProcPoint *last = &g_array_index(m, DfProcPoint, m->len - 1);
    if (!warm || last == warm) {
        printf("(too short to compare after a %.0f s warm-up)\n", MEMORY_WARMUP_S);
        return;
    }
    const double min = (last->t_s - warm->t_s) / 60.0;
    printf("after the %.0f s warm-up, %.0f s to %.0f s: heap %.1f -> %.1f MiB (max %.1f, %+.2f "
           "MiB/min), RSS %.1f -> %.1f MiB (max %.1f, %+.2f MiB/min), threads %d -> %d\n",
           MEMORY_WARMUP_S, warm->t_s, last->t_s, warm->p.heap_mib, last->p.heap_mib, heap_max,
           (last->p.heap_mib - warm->p.heap_mib) / min, warm->p.rss_mib, last->p.rss_mib, rss_max,
           (last->p.rss_mib - warm->p.rss_mib) / min, warm->p.threads, last->p.threads);
}

void df_rt_overload(DfRt *rt, DfProgress *prog)
{
    static const char *const modes[] = {"refuse", "none"};
    for (int w = 0; w < rt->n_workers; w++) {
        const int workers = rt->workers[w];
        const double kstar = df_rt_k_star(rt, workers);
        if (isnan(kstar) || kstar <= 0) {
            fprintf(stderr, "dfbench realtime: error: no K* for %d workers (T(1) failed)\n",
                    workers);
            rt->overload_failed = true;
            continue;
        }
        int k = (int)ceil(rt->o.overload_factor * kstar);
        if (k > rt->o.max_streams)
            k = rt->o.max_streams;
        OverloadRun runs[2];
        for (int m = 0; m < 2; m++) {
            df_progress_step(prog, "dfdec, %d worker%s: %d streams, admission=%s", workers,
                             workers == 1 ? "" : "s", k, modes[m]);
            runs[m].admission = modes[m];
            runs[m].res = g_new0(DfGstResult, (gsize)k);
            DfProcSampler *sampler =
                rt->o.memory_every > 0 ? df_proc_sampler_start(rt->o.memory_every) : NULL;
            run_one(rt, workers, k, modes[m], runs[m].res);
            runs[m].memory = sampler ? df_proc_sampler_stop(sampler) : NULL;
            for (int i = 0; i < k; i++)
                if (runs[m].res[i].error[0])
                    rt->overload_failed = true;
        }
        printf("\n");
        print_runs(rt, workers, k, kstar, runs, 2);
        for (int m = 0; m < 2; m++) {
            print_memory(&runs[m]);
            g_free(runs[m].res);
            if (runs[m].memory)
                g_array_free(runs[m].memory, TRUE);
        }
    }
    printf("late: frames reaching the sink after running time + %d frame periods (late at: "
           "running time of the first and the last); dropped: "
           "frames dfdec's QoS dropped (QoS messages); refused: admission=refuse refused the "
           "stream after measuring it\n",
           rt->budget_frames);
}
