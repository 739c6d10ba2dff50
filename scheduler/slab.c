/* Per-thread fixed-size slabs: the hot path never calls malloc.  Each slot
 * carries a pointer to its slab so that any thread can free it; frees from
 * other threads are pushed on the slab's remote list, which only the owner
 * empties (with one exchange, so there is no ABA problem). */
#include "sched_internal.h"

#include <stdlib.h>
#include <string.h>

/* A slot is the slab's address, then the object (8-byte aligned: no
 * object kept in a slab asks for more).  A free slot's link lives in the
 * object's first bytes, so the header costs 8 bytes, not 16: a short node
 * (DF_NODE_SHORT_SIZE) then fills two cache lines exactly. */
#define SLOT_HEADER 8

static inline DfSlab **slab_of(void *slot)
{
    return (DfSlab **)slot;
}

static inline void **next_free(void *slot)
{
    return (void **)((char *)slot + SLOT_HEADER);
}

void df_slab_init(DfSlab *slab, DfCache *home, size_t obj_size, size_t per_chunk)
{
    memset(slab, 0, sizeof(*slab));
    /* Room for the free link too, whatever the object. */
    const size_t obj = obj_size < sizeof(void *) ? sizeof(void *) : obj_size;
    slab->slot_size = (SLOT_HEADER + obj + 7) & ~(size_t)7;
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
        *slab_of(p) = slab;
        *next_free(p) = slab->local;
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
    slab->local = *next_free(slot);
    return slot + SLOT_HEADER;
}

void df_slab_free(void *obj, const DfCache *self)
{
    char *slot = (char *)obj - SLOT_HEADER;
    DfSlab *slab = *slab_of(slot);
    if (slab->home == self) {
        *next_free(slot) = slab->local;
        slab->local = slot;
        return;
    }
    void *head = atomic_load_explicit(&slab->remote, memory_order_relaxed);
    do {
        *next_free(slot) = head;
        /* Release, paired with the owner's acquire exchange in
         * df_slab_alloc: the link (and the object's last uses) come
         * before the slot is handed out again. */
    } while (!atomic_compare_exchange_weak_explicit(&slab->remote, &head, slot,
                                                    memory_order_release, memory_order_relaxed));
}
