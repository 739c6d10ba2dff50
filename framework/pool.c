/* Picture buffers for get_buffer2: per-worker free lists, so a buffer goes
 * back to the worker whose D task took it last and whose slice jobs last
 * wrote it (warm in its caches, and on its NUMA node since that worker's
 * jobs touched the pages first: nothing here writes the pixels).
 *
 * Geometry follows avcodec_default_get_buffer2() exactly: dimensions from
 * avcodec_align_dimensions2(), linesizes widened until every plane meets
 * its stride alignment, each plane padded by 16 + STRIDE_ALIGN - 1 bytes.
 * All planes live in one refcounted allocation (buf[0]).  Free lists are
 * bounded; a buffer of a stale size is freed instead of kept. */
#include "media_internal.h"

#include <errno.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>
#include <stdlib.h>
#include <string.h>

#define POOL_ALIGN 64 /* libavcodec's largest STRIDE_ALIGN (docs/design.md, Frame pools) */

typedef struct PoolBuf {
    struct PoolBuf *next;
    DfPool *pool;
    int home; /* free list it returns to */
    size_t size;
    uint8_t *raw; /* av_malloc'd; mem is raw aligned up to POOL_ALIGN */
    uint8_t *mem;
} PoolBuf;

typedef struct PoolList {
    pthread_mutex_t lock;
    PoolBuf *free;
    atomic_int n_free; /* written under lock; peeked without it by pool_take */
    char pad[64];
} PoolList;

struct DfPool {
    atomic_int refs; /* decoder + buffers out */
    DfSched *sched;
    int n_lists; /* workers + one for other threads */
    int max_free;
    PoolList *lists;
    _Atomic uint64_t allocs, reuses;
    _Atomic int64_t out;
    /* The lists' n_free summed, so that a miss at home skips looking at
     * every other list when nothing is free anywhere (O(workers) lines). */
    atomic_int n_free_all;
    /* The consumer's get_picture serves the pictures: buffers coming back
     * are freed instead of kept (a hint, relaxed both ways: a stale value
     * keeps or frees one buffer too many). */
    atomic_bool bypassed;
};

int df_pool_new(DfSched *sched, int max_free, DfPool **out)
{
    DfPool *p = calloc(1, sizeof(*p));
    if (!p)
        return AVERROR(ENOMEM);
    p->sched = sched;
    p->n_lists = df_sched_n_workers(sched) + 1;
    p->max_free = max_free > 0 ? max_free : 4;
    p->lists = calloc((size_t)p->n_lists, sizeof(PoolList));
    if (!p->lists) {
        free(p);
        return AVERROR(ENOMEM);
    }
    for (int i = 0; i < p->n_lists; i++) {
        pthread_mutex_init(&p->lists[i].lock, NULL);
        atomic_init(&p->lists[i].n_free, 0);
    }
    atomic_init(&p->refs, 1);
    atomic_init(&p->n_free_all, 0);
    atomic_init(&p->bypassed, false);
    *out = p;
    return 0;
}

static void free_chain(PoolBuf *b)
{
    while (b) {
        PoolBuf *next = b->next;
        av_free(b->raw);
        free(b);
        b = next;
    }
}

static void pool_destroy(DfPool *p)
{
    for (int i = 0; i < p->n_lists; i++) {
        free_chain(p->lists[i].free);
        pthread_mutex_destroy(&p->lists[i].lock);
    }
    free(p->lists);
    free(p);
}

void df_pool_unref(DfPool *p)
{
    if (p && atomic_fetch_sub_explicit(&p->refs, 1, memory_order_acq_rel) == 1)
        pool_destroy(p);
}

void df_pool_counts(const DfPool *p, uint64_t *allocs, uint64_t *reuses, int64_t *out,
                    int64_t *idle)
{
    DfPool *q = (DfPool *)p;
    *allocs = atomic_load_explicit(&q->allocs, memory_order_relaxed);
    *reuses = atomic_load_explicit(&q->reuses, memory_order_relaxed);
    *out = atomic_load_explicit(&q->out, memory_order_relaxed);
    *idle = atomic_load_explicit(&q->n_free_all, memory_order_relaxed);
}

/* n_free of list l and the pool's sum change by `delta` (under l's lock;
 * relaxed: counts that readers only peek at). */
static void count_free(DfPool *p, PoolList *l, int delta)
{
    atomic_store_explicit(&l->n_free,
                          atomic_load_explicit(&l->n_free, memory_order_relaxed) + delta,
                          memory_order_relaxed);
    atomic_fetch_add_explicit(&p->n_free_all, delta, memory_order_relaxed);
}

/* Pictures now come from the consumer (dfdec's direct rendering, once
 * downstream's allocation is known): the ones kept for the first pictures
 * would never be used again. */
/* Empty list `l`; returns what it held.  Not inlined: GCC 12 with
 * -fsanitize=address,undefined then takes the store to n_free for an
 * overflow of a zero-size region (-Wstringop-overflow, a false positive). */
__attribute__((noinline)) static PoolBuf *list_drain(DfPool *p, PoolList *l)
{
    pthread_mutex_lock(&l->lock);
    PoolBuf *chain = l->free;
    l->free = NULL;
    count_free(p, l, -atomic_load_explicit(&l->n_free, memory_order_relaxed));
    pthread_mutex_unlock(&l->lock);
    return chain;
}

static void pool_bypass(DfPool *p)
{
    if (atomic_load_explicit(&p->bypassed, memory_order_relaxed) ||
        atomic_exchange_explicit(&p->bypassed, true, memory_order_relaxed))
        return;
    for (int i = 0; i < p->n_lists; i++)
        free_chain(list_drain(p, &p->lists[i]));
}

/* AVBuffer free callback: any thread (the consumer's, a codec thread). */
static void pool_buf_free(void *opaque, uint8_t *data)
{
    PoolBuf *b = opaque;
    DfPool *p = b->pool;
    PoolList *l = &p->lists[b->home];
    atomic_fetch_sub_explicit(&p->out, 1, memory_order_relaxed);
    pthread_mutex_lock(&l->lock);
    const int n_free = atomic_load_explicit(&l->n_free, memory_order_relaxed);
    if (n_free < p->max_free && !atomic_load_explicit(&p->bypassed, memory_order_relaxed)) {
        b->next = l->free;
        l->free = b;
        count_free(p, l, 1);
        b = NULL;
    }
    pthread_mutex_unlock(&l->lock);
    if (b) {
        av_free(b->raw);
        free(b);
    }
    df_pool_unref(p);
}

/* A free buffer of `size` from list `l`, or NULL; buffers of another size
 * (the stream changed geometry) are freed on the way. */
static PoolBuf *list_take(DfPool *p, PoolList *l, size_t size)
{
    PoolBuf *stale = NULL, *b = NULL;
    pthread_mutex_lock(&l->lock);
    while (l->free) {
        PoolBuf *c = l->free;
        l->free = c->next;
        count_free(p, l, -1);
        if (c->size == size) {
            b = c;
            break;
        }
        c->next = stale;
        stale = c;
    }
    pthread_mutex_unlock(&l->lock);
    free_chain(stale);
    return b;
}

static PoolBuf *pool_take(DfPool *p, int home, size_t size)
{
    PoolBuf *b = list_take(p, &p->lists[home], size);
    /* Home is empty: another worker's free buffer before a new one.  A
     * stream whose D tasks move between workers would otherwise grow a
     * full list on each, and a new picture costs more than cold caches:
     * the kernel faults in and zeroes every page of it on first touch. */
    const bool elsewhere = !b && atomic_load_explicit(&p->n_free_all, memory_order_relaxed) > 0;
    for (int i = 1; elsewhere && !b && i < p->n_lists; i++) {
        PoolList *l = &p->lists[(home + i) % p->n_lists];
        /* Relaxed peek: the list's lock orders the buffers themselves; a
         * stale count costs one allocation or one empty lock, no more. */
        if (atomic_load_explicit(&l->n_free, memory_order_relaxed) > 0 &&
            (b = list_take(p, l, size)))
            b->home = home; /* it comes back here, where it was written last */
    }
    if (b) {
        atomic_fetch_add_explicit(&p->reuses, 1, memory_order_relaxed);
        return b;
    }
    b = calloc(1, sizeof(*b));
    if (!b)
        return NULL;
    /* av_malloc aligns to 32 or 64 depending on the build: align here. */
    b->raw = av_malloc(size + POOL_ALIGN);
    if (!b->raw) {
        free(b);
        return NULL;
    }
    b->mem = (uint8_t *)FFALIGN((uintptr_t)b->raw, POOL_ALIGN);
    b->pool = p;
    b->home = home;
    b->size = size;
    atomic_fetch_add_explicit(&p->allocs, 1, memory_order_relaxed);
    return b;
}

/* libavcodec's update_frame_pool() geometry. */
static int geometry(AVCodecContext *avctx, const AVFrame *frame, int linesize[4], size_t offset[4],
                    size_t *total, DfPictureLayout *layout)
{
    int w = frame->width, h = frame->height;
    int stride_align[AV_NUM_DATA_POINTERS];
    int unaligned, ret;
    ptrdiff_t linesize1[4];
    size_t size[4];

    int used_w;
    avcodec_align_dimensions2(avctx, &w, &h, stride_align);
    do {
        /* Widen w, not each linesize: libavcodec assumes e.g. that
         * linesize[0] == 2 * linesize[1] for 4:2:2. */
        ret = av_image_fill_linesizes(linesize, frame->format, w);
        if (ret < 0)
            return ret;
        used_w = w;
        w += w & ~(w - 1);
        unaligned = 0;
        for (int i = 0; i < 4; i++)
            unaligned |= linesize[i] % stride_align[i];
    } while (unaligned);

    for (int i = 0; i < 4; i++)
        linesize1[i] = linesize[i];
    ret = av_image_fill_plane_sizes(size, frame->format, h, linesize1);
    if (ret < 0)
        return ret;
    size_t t = 0;
    for (int i = 0; i < 4; i++) {
        offset[i] = t;
        if (size[i])
            t += FFALIGN(size[i] + 16 + POOL_ALIGN - 1, POOL_ALIGN);
    }
    *total = t;
    layout->width = used_w;
    layout->height = h;
    for (int i = 0; i < 4; i++)
        layout->linesize[i] = linesize[i];
    layout->align = POOL_ALIGN;
    return 0;
}

int df_pool_get_buffer2(AVCodecContext *avctx, AVFrame *frame, int flags)
{
    DfDecoder *dec = avctx->opaque;
    int ret;
    const AVPixFmtDescriptor *desc = av_pix_fmt_desc_get(frame->format);
    if (!desc || (desc->flags & (AV_PIX_FMT_FLAG_HWACCEL | AV_PIX_FMT_FLAG_PAL)) ||
        !(avctx->codec->capabilities & AV_CODEC_CAP_DR1))
        return avcodec_default_get_buffer2(avctx, frame, flags);

    int linesize[4];
    size_t offset[4], total;
    DfPictureLayout layout;
    ret = geometry(avctx, frame, linesize, offset, &total, &layout);
    if (ret < 0)
        return ret;
    if (dec->cfg.alloc.get_picture) {
        ret = dec->cfg.alloc.get_picture(dec->cfg.alloc.opaque, frame, &layout, flags);
        if (ret >= 0)
            pool_bypass(dec->pool);
        else if (ret == AVERROR(ENOSYS))
            atomic_store_explicit(&dec->pool->bypassed, false, memory_order_relaxed);
        if (ret != AVERROR(ENOSYS)) {
            if (ret >= 0 && dec->plan.mode != DF_THREADING_FRAME)
                df_hooks_new_picture(dec, frame);
            return ret;
        }
    }
    DfPool *p = dec->pool;
    int w = df_sched_current_worker(dec->sched);
    int home = w >= 0 && w < p->n_lists - 1 ? w : p->n_lists - 1;
    PoolBuf *b = pool_take(p, home, total);
    if (!b)
        return AVERROR(ENOMEM);
    atomic_fetch_add_explicit(&p->refs, 1, memory_order_relaxed);
    frame->buf[0] = av_buffer_create(b->mem, total, pool_buf_free, b, 0);
    if (!frame->buf[0]) {
        av_free(b->raw);
        free(b);
        df_pool_unref(p);
        return AVERROR(ENOMEM);
    }
    atomic_fetch_add_explicit(&p->out, 1, memory_order_relaxed);
    memset(frame->data, 0, sizeof(frame->data));
    for (int i = 0; i < 4; i++) {
        frame->linesize[i] = linesize[i];
        frame->data[i] = linesize[i] ? b->mem + offset[i] : NULL;
    }
    frame->extended_data = frame->data;
    /* In frame threading this runs on libavcodec's threads, concurrently:
     * the picture table belongs to the D chain, so it is not used then. */
    if (dec->plan.mode != DF_THREADING_FRAME)
        df_hooks_new_picture(dec, frame);
    return 0;
}
