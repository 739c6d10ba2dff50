/* Summaries: a bit per worker, grouped by topology domain, so that "is
 * any worker's set non-empty, and which, nearest first" (ready.c) and "is
 * any worker parked, and which, nearest first" (worker.c) cost O(depth)
 * cache lines instead of O(N).
 *
 * Leaf words hold the workers of one L3 domain (else NUMA node / package,
 * else all), at most 64 each (a larger domain is cut in index order); the
 * words above hold a bit per child word, grouped the same way by the next
 * level out, up to one root.  Each word has its own cache line.
 *
 * Protocol.  A bit is set by df_summary_set: a seq_cst fetch_or on the
 * leaf, and on each ancestor while the word below went 0 -> non-zero.  It
 * is cleared by df_summary_clear_bit (the leaf) and df_summary_clear_up
 * (the ancestors, while the word below went non-zero -> 0).  Clearing an
 * ancestor races with a setter below it that found the ancestor's bit
 * still set: so a clearer fences (DF_FENCE_SEQ_CST) and re-reads the word
 * below, and sets the bit again if it is non-zero (seq_cst RMWs on that
 * word are totally ordered with the setter's, so the re-read sees the
 * setter's bit whenever the clear came after the setter's fetch_or).  The
 * bit was missing meanwhile: a reader that decided on it may have gone to
 * sleep, so df_summary_clear_up reports the restore and its caller does a
 * wake check.  The opposite race leaves an ancestor bit set over a zero
 * word (a setter's fetch_or after the clearer's re-read): harmless for
 * correctness, and df_summary_pick, which meets it on the way down,
 * clears it.  What a bit at the leaf means, and who fences around it, is
 * the user's (ready.c, worker.c). */
#include "sched_internal.h"

#include <stdlib.h>
#include <string.h>

/* An item being grouped: a worker (level 0) or a word. */
typedef struct Item {
    int32_t id;
    int32_t rep; /* its first worker: the topology key is that worker's */
} Item;

typedef struct GroupCtx {
    const DfTopo *topo;
    int key; /* DF_TOPO_KEYS index, or -1: one domain */
} GroupCtx;

static uint64_t key_of(const GroupCtx *c, const Item *it)
{
    if (c->key < 0 || !c->topo)
        return 0;
    return c->topo->keys[(size_t)it->rep * DF_TOPO_KEYS + (size_t)c->key];
}

static int cmp_items(const void *a, const void *b, void *p)
{
    const GroupCtx *c = p;
    const Item *x = a, *y = b;
    const uint64_t kx = key_of(c, x), ky = key_of(c, y);
    if (kx != ky)
        return kx < ky ? -1 : 1;
    return (x->rep > y->rep) - (x->rep < y->rep);
}

/* Group `items` by the key, cut groups into runs of at most 64 and make a
 * word of each run.  Returns the number of words made (their items replace
 * `items`), or -1 when the key merged nothing (every group a single item,
 * and not the last level). */
static int make_level(DfSummary *s, Item *items, int n, const GroupCtx *c, bool leaf, bool force)
{
    qsort_r(items, (size_t)n, sizeof(Item), cmp_items, (void *)c);
    int groups = 0;
    for (int i = 0; i < n; i++)
        groups += i == 0 || key_of(c, &items[i]) != key_of(c, &items[i - 1]);
    if (groups == n && !force)
        return -1;
    int made = 0;
    for (int i = 0; i < n;) {
        int j = i + 1;
        while (j < n && j - i < 64 && key_of(c, &items[j]) == key_of(c, &items[i]))
            j++;
        const int wi = s->n_words++;
        DfSumWord *w = &s->words[wi];
        atomic_init(&w->bits, 0);
        w->parent = -1;
        w->parent_bit = 0;
        w->leaf = leaf;
        w->n_kids = (uint8_t)(j - i);
        w->first = s->n_kids;
        w->rep = items[i].rep;
        for (int k = i; k < j; k++) {
            s->kids[s->n_kids++] = items[k].id;
            if (leaf) {
                s->leaf_of[items[k].id] = wi;
                s->bit_of[items[k].id] = (uint8_t)(k - i);
            } else {
                s->words[items[k].id].parent = wi;
                s->words[items[k].id].parent_bit = (uint8_t)(k - i);
            }
        }
        items[made++] = (Item){.id = wi, .rep = items[i].rep};
        i = j;
    }
    return made;
}

int df_summary_init(DfSummary *s, const DfTopo *topo, int n)
{
    memset(s, 0, sizeof(*s));
    /* Each of the three domain levels makes at most as many words as it
     * has items, and the levels above at most a 64th of theirs: 4n + 8
     * bounds the words and the kids. */
    const size_t cap = 4 * (size_t)n + 8;
    s->words = aligned_alloc(DF_CACHELINE, cap * sizeof(DfSumWord));
    s->kids = malloc(cap * sizeof(int32_t));
    s->leaf_of = malloc((size_t)n * sizeof(int32_t));
    s->bit_of = malloc((size_t)n);
    Item *items = malloc((size_t)n * sizeof(Item));
    if (!s->words || !s->kids || !s->leaf_of || !s->bit_of || !items) {
        free(items);
        df_summary_fini(s);
        return -1;
    }
    for (int w = 0; w < n; w++)
        items[w] = (Item){.id = w, .rep = w};
    /* Domains from the inside out: L3, NUMA node with package, all. */
    static const int keys[] = {DF_LEVEL_L3 - DF_LEVEL_PU, DF_LEVEL_NUMA - DF_LEVEL_PU, -1};
    int count = n;
    bool leaf = true;
    s->depth = 0;
    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
        const GroupCtx c = {topo, keys[k]};
        const bool last = keys[k] < 0;
        const int made = make_level(s, items, count, &c, leaf, last && leaf);
        if (made < 0)
            continue;
        count = made;
        leaf = false;
        s->depth++;
    }
    /* More than 64 top-level domains: words of words up to one root. */
    while (count > 1) {
        const GroupCtx c = {topo, -1};
        count = make_level(s, items, count, &c, false, true);
        s->depth++;
    }
    s->root = items[0].id;
    free(items);
    return 0;
}

void df_summary_fini(DfSummary *s)
{
    free(s->words);
    free(s->kids);
    free(s->leaf_of);
    free(s->bit_of);
    memset(s, 0, sizeof(*s));
}

bool df_summary_set(DfSummary *s, int w)
{
    int wi = s->leaf_of[w];
    uint64_t bit = 1ull << s->bit_of[w];
    /* seq_cst: ordered with a clearer's RMW and re-read (see the top). */
    uint64_t old = atomic_fetch_or_explicit(&s->words[wi].bits, bit, memory_order_seq_cst);
    const bool was_clear = !(old & bit);
    while (old == 0 && s->words[wi].parent >= 0) {
        bit = 1ull << s->words[wi].parent_bit;
        wi = s->words[wi].parent;
        old = atomic_fetch_or_explicit(&s->words[wi].bits, bit, memory_order_seq_cst);
    }
    return was_clear;
}

bool df_summary_set_path(DfSummary *s, int w)
{
    int wi = s->leaf_of[w];
    /* seq_cst, as in df_summary_set. */
    const uint64_t bit = 1ull << s->bit_of[w];
    const bool was_clear =
        !(atomic_fetch_or_explicit(&s->words[wi].bits, bit, memory_order_seq_cst) & bit);
    /* Every ancestor, not only while words were 0: the worker that made a
     * word non-zero may still be on its way up, and until it gets there
     * the root would not show this one.  A bit seen set here and cleared
     * right after is a clearer's, which re-reads the word below and
     * restores it (clear_up_from). */
    for (; s->words[wi].parent >= 0; wi = s->words[wi].parent) {
        const int pi = s->words[wi].parent;
        const uint64_t pbit = 1ull << s->words[wi].parent_bit;
        if (!(atomic_load_explicit(&s->words[pi].bits, memory_order_seq_cst) & pbit))
            atomic_fetch_or_explicit(&s->words[pi].bits, pbit, memory_order_seq_cst);
    }
    return was_clear;
}

uint64_t df_summary_clear_bit(DfSummary *s, int w)
{
    const uint64_t bit = 1ull << s->bit_of[w];
    /* seq_cst: the RMW decides which of several clearers owns the bit. */
    return atomic_fetch_and_explicit(&s->words[s->leaf_of[w]].bits, ~bit, memory_order_seq_cst);
}

/* Word wi went to zero: clear its bit in the ancestors while they go to
 * zero too.  True when a bit had to be restored (see the top). */
static bool clear_up_from(DfSummary *s, int wi)
{
    bool restored = false;
    while (s->words[wi].parent >= 0) {
        const int pi = s->words[wi].parent;
        const uint64_t bit = 1ull << s->words[wi].parent_bit;
        const uint64_t old =
            atomic_fetch_and_explicit(&s->words[pi].bits, ~bit, memory_order_seq_cst);
        if (!(old & bit))
            break; /* another clearer took it */
        /* Pairs with the setter's fetch_or chain: re-read the word below
         * after the clear; a bit set there meanwhile restores ours. */
        DF_FENCE_SEQ_CST();
        if (atomic_load_explicit(&s->words[wi].bits, memory_order_seq_cst) != 0) {
            uint64_t o = atomic_fetch_or_explicit(&s->words[pi].bits, bit, memory_order_seq_cst);
            for (int up = pi; o == 0 && s->words[up].parent >= 0; up = s->words[up].parent)
                o = atomic_fetch_or_explicit(&s->words[s->words[up].parent].bits,
                                             1ull << s->words[up].parent_bit, memory_order_seq_cst);
            restored = true;
            break;
        }
        if (old != bit)
            break; /* the parent keeps other bits */
        wi = pi;
    }
    return restored;
}

bool df_summary_clear_up(DfSummary *s, int w)
{
    return clear_up_from(s, s->leaf_of[w]);
}

/* Bit `b` of word wi, whose child word is zero: clear it (with the same
 * re-read as clear_up_from).  True when it had to be restored. */
bool df_summary_clear_stale(DfSummary *s, int wi, int b)
{
    const int child = s->kids[s->words[wi].first + b];
    if (atomic_load_explicit(&s->words[child].bits, memory_order_relaxed) != 0)
        return false;
    /* Treat the child as a word that went to zero. */
    return clear_up_from(s, child);
}

int df_summary_random_bit(uint64_t bits, uint64_t *rng)
{
    const int n = __builtin_popcountll(bits);
    int k = rng ? (int)(df_rand_next(rng) % (uint64_t)n) : 0;
    while (k-- > 0)
        bits &= bits - 1;
    return __builtin_ctzll(bits);
}

int df_summary_pick(DfSummary *s, int wi, uint64_t bits, uint64_t *rng, unsigned *lines,
                    bool *restored)
{
    for (;;) {
        if (!bits)
            return -1;
        const int b = df_summary_random_bit(bits, rng);
        if (s->words[wi].leaf)
            return s->kids[s->words[wi].first + b];
        const int child = s->kids[s->words[wi].first + b];
        const uint64_t cb = atomic_load_explicit(&s->words[child].bits, memory_order_relaxed);
        if (lines)
            (*lines)++;
        if (!cb) {
            /* A stale bit (see the top): clear it and try the others. */
            if (df_summary_clear_stale(s, wi, b) && restored)
                *restored = true;
            bits &= ~(1ull << b);
            continue;
        }
        wi = child;
        bits = cb;
    }
}

bool df_summary_any(DfSummary *s, unsigned *lines)
{
    if (lines)
        (*lines)++;
    return atomic_load_explicit(&s->words[s->root].bits, memory_order_seq_cst) != 0;
}
