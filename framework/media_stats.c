/* Decoder counters and the packet-to-frame latency distribution. */
#include "media_internal.h"

#include <stdlib.h>
#include <string.h>

void df_latency_init(DfLatency *l)
{
    memset(l, 0, sizeof(*l));
    pthread_mutex_init(&l->lock, NULL);
}

void df_latency_fini(DfLatency *l)
{
    pthread_mutex_destroy(&l->lock);
}

void df_latency_add(DfLatency *l, double ms)
{
    pthread_mutex_lock(&l->lock);
    l->ms[l->next] = ms;
    l->next = (l->next + 1) % DF_LATENCY_RING;
    if (l->n < DF_LATENCY_RING)
        l->n++;
    if (ms > l->max_ms)
        l->max_ms = ms;
    pthread_mutex_unlock(&l->lock);
}

void df_latency_reset(DfLatency *l)
{
    pthread_mutex_lock(&l->lock);
    l->n = l->next = 0;
    l->max_ms = 0;
    pthread_mutex_unlock(&l->lock);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void df_latency_get(DfLatency *l, double *p50, double *p99, double *max)
{
    double *v = malloc(sizeof(double) * DF_LATENCY_RING);
    pthread_mutex_lock(&l->lock);
    int n = l->n;
    if (v)
        memcpy(v, l->ms, sizeof(double) * (size_t)n);
    *max = l->max_ms;
    pthread_mutex_unlock(&l->lock);
    *p50 = *p99 = 0;
    if (v && n > 0) {
        qsort(v, (size_t)n, sizeof(double), cmp_double);
        *p50 = v[(n - 1) / 2];
        *p99 = v[(int)((n - 1) * 0.99)];
    }
    free(v);
}

#define LOAD(field) atomic_load_explicit(&c->field, memory_order_relaxed)

void df_decoder_stats(const DfDecoder *dec, DfDecoderStats *out)
{
    memset(out, 0, sizeof(*out));
    if (!dec)
        return;
    DfDecoder *d = (DfDecoder *)dec;
    const DfMediaCounters *c = &dec->ctr;
    out->packets = LOAD(packets);
    out->frames_out = LOAD(frames_out);
    out->frames_dropped = LOAD(frames_dropped);
    out->frames_skipped = LOAD(frames_skipped);
    out->decode_errors = LOAD(decode_errors);
    out->decode_calls = LOAD(decode_calls);
    out->frames_decoded = LOAD(frames_decoded);
    out->frames_with_jobs = LOAD(frames_with_jobs);
    out->slice_calls = LOAD(slice_calls);
    out->slice_jobs = LOAD(slice_jobs);
    out->filter_calls = LOAD(filter_calls);
    out->filter_jobs = LOAD(filter_jobs);
    out->bands = LOAD(bands);
    for (int i = 0; i < 64; i++) {
        out->jobs_per_worker[i] = LOAD(jobs_per_worker[i]);
        out->filter_jobs_per_worker[i] = LOAD(filter_jobs_per_worker[i]);
    }
    df_pool_counts(dec->pool, &out->pool_allocs, &out->pool_reuses, &out->pool_outstanding,
                   &out->pool_idle);
    df_latency_get(&d->lat, &out->latency_p50_ms, &out->latency_p99_ms, &out->latency_max_ms);
}

void df_decoder_reset_latency(DfDecoder *dec)
{
    if (dec)
        df_latency_reset(&dec->lat);
}
