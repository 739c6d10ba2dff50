/* Per-thread fixed-size slabs: the hot path never calls malloc.  Each slot
 * carries a pointer to its slab so that any thread can free it; frees from
 * other threads are pushed on the slab's remote list, which only the owner
 * empties (with one exchange, so there is no ABA problem). */
#include "sched_internal.h"

#include <stdlib.h>
#include <string.h>

#define SLOT_HEADER 16 /* keeps objects 16-byte aligned */

typedef struct SlotHeader {
    DfSlab *slab;
    void *next_free; /* while free */
} SlotHeader;

_Static_assert(sizeof(SlotHeader) <= SLOT_HEADER, "slot header too large");

static inline SlotHeader *header_of(void *obj)
{
    return (SlotHeader *)((char *)obj - SLOT_HEADER);
}

void df_slab_init(DfSlab *slab, DfCache *home, size_t obj_size, size_t per_chunk)
{
    memset(slab, 0, sizeof(*slab));
    slab->slot_size = (SLOT_HEADER + obj_size + 15) & ~(size_t)15;
    slab->per_chunk = per_chunk;
    slab->home = home;
    atomic_init(&slab->remote, NULL);
}

void df_slab_fini(DfSlab *slab)
{
    void *c = slab->chunks;
    while (c) {
        void *next = *(void **)c;
        free(c);
        c = next;
    }
    slab->chunks = NULL;
    slab->local = NULL;
    atomic_store(&slab->remote, NULL);
}

/* Cold path: a new chunk of slots. */
__attribute__((noinline, cold)) static int slab_grow(DfSlab *slab)
{
    size_t bytes = 64 + slab->slot_size * slab->per_chunk;
    char *chunk = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
    if (!chunk)
        return -1;
    *(void **)chunk = slab->chunks;
    slab->chunks = chunk;
    slab->n_chunks++;
    atomic_fetch_add_explicit(&slab->home->chunk_count, 1, memory_order_relaxed);
    char *p = chunk + 64;
    for (size_t i = 0; i < slab->per_chunk; i++, p += slab->slot_size) {
        SlotHeader *h = (SlotHeader *)p;
        h->slab = slab;
        h->next_free = slab->local;
        slab->local = p;
    }
    return 0;
}

void *df_slab_alloc(DfSlab *slab)
{
    char *slot = slab->local;
    if (DF_UNLIKELY(!slot)) {
        slot = atomic_exchange_explicit(&slab->remote, NULL, memory_order_acquire);
        if (!slot) {
            if (slab_grow(slab) < 0)
                return NULL;
            slot = slab->local;
        }
    }
    slab->local = ((SlotHeader *)slot)->next_free;
    return slot + SLOT_HEADER;
}

void df_slab_free(void *obj, const DfCache *self)
{
    SlotHeader *h = header_of(obj);
    DfSlab *slab = h->slab;
    if (slab->home == self) {
        h->next_free = slab->local;
        slab->local = h;
        return;
    }
    void *head = atomic_load_explicit(&slab->remote, memory_order_relaxed);
    do {
        h->next_free = head;
    } while (!atomic_compare_exchange_weak_explicit(&slab->remote, &head, h, memory_order_release,
                                                    memory_order_relaxed));
}
