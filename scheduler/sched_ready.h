/* Ready sets and the has-work summary (ready.c, summary.c): the queues the
 * stealing policies keep their nodes in, a service of the core that
 * policies use through these functions. */
#ifndef DF_SCHED_READY_H
#define DF_SCHED_READY_H

#include "sched_node.h"

#include <stdatomic.h>
#include <stdbool.h>

struct DfTopo;
typedef struct DfWaitFilter DfWaitFilter;

/* ------------------------------------------------------------ summaries */

/* A bit per worker, summarised by topology domain (summary.c): leaf words
 * of at most 64 workers of one L3 / NUMA / package domain, and words of a
 * bit per child word above them, up to one root.  A reader learns "anyone,
 * and where, nearest first" from O(depth) cache lines, not O(N). */
typedef struct DfSumWord {
    DF_ALIGNED _Atomic uint64_t bits;
    int32_t parent;     /* word index, -1 at the root */
    int32_t first;      /* first child in DfSummary.kids */
    int32_t rep;        /* first worker below */
    uint8_t parent_bit; /* this word's bit in the parent */
    uint8_t n_kids;
    bool leaf; /* kids are workers (else words) */
} DfSumWord;

typedef struct DfSummary {
    int n_words, n_kids;
    int root;
    int depth; /* words from a leaf to the root */
    DfSumWord *words;
    int32_t *kids;
    int32_t *leaf_of; /* per worker: its leaf word */
    uint8_t *bit_of;  /* per worker: its bit there */
} DfSummary;

/* Domains from `topo` (NULL: index order only).  0 or -1 (memory). */
int df_summary_init(DfSummary *s, const struct DfTopo *topo, int n_workers);
void df_summary_fini(DfSummary *s);
/* Set w's bit (and its ancestors' as words go non-zero); true if it was
 * clear.  seq_cst RMWs. */
bool df_summary_set(DfSummary *s, int w);
/* Set w's bit and make sure every ancestor's is set (not only those of
 * words that went non-zero): for a summary whose root must show w as soon
 * as this returns, whoever else is setting bits on the way.  seq_cst. */
bool df_summary_set_path(DfSummary *s, int w);
/* Clear w's bit at the leaf; returns the leaf word before. */
uint64_t df_summary_clear_bit(DfSummary *s, int w);
/* w's leaf word went to zero: clear its bit above.  True when a bit had to
 * be restored because a setter raced: the caller does a wake check. */
bool df_summary_clear_up(DfSummary *s, int w);
/* Bit b of word wi is set but its child word is zero: clear it (true:
 * restored, as above). */
bool df_summary_clear_stale(DfSummary *s, int wi, int b);
/* A worker whose bit is set below word `wi`, `bits` being the bits of wi
 * to choose from (random with rng, else the lowest), or -1.  Clears stale
 * ancestor bits on the way (*restored as above); counts words read. */
int df_summary_pick(DfSummary *s, int wi, uint64_t bits, uint64_t *rng, unsigned *lines,
                    bool *restored);
/* One of the set bits of `bits` (non-zero): at random with rng, else the
 * lowest. */
int df_summary_random_bit(uint64_t bits, uint64_t *rng);
/* Any bit set (the root, seq_cst). */
bool df_summary_any(DfSummary *s, unsigned *lines);

static inline uint64_t df_summary_word(const DfSummary *s, int wi)
{
    return atomic_load_explicit(&((DfSummary *)s)->words[wi].bits, memory_order_seq_cst);
}

static inline bool df_summary_test(const DfSummary *s, int w)
{
    return df_summary_word(s, s->leaf_of[w]) & (1ull << s->bit_of[w]);
}

/* --------------------------------------------------------- ready sets */

/* A worker's Ready set serves the earliest deadline first.  It is
 * DF_LANES Chase-Lev deques ("lanes") that only the owner pushes to (no
 * lock; anyone takes from the old end with one CAS; the owner may also take
 * from the new end), plus an inbox that any thread pushes to (lock-free
 * stack) for nodes registered by other threads (patent fig. 13).
 *
 * A node goes to the lane of its slack when it is pushed (deadline - now),
 * the lanes doubling in width: under 2^22 ns (4.2 ms), under 8.4, 16.8,
 * 33.5, 67, 134 and 268 ms, later; and one lane for no deadline.  Whoever
 * takes from the set takes the head of the lane whose head has the
 * earliest deadline.  So the order is EDF between lanes and FIFO inside
 * one, and a node can be passed only by one pushed later into the same
 * lane with an earlier deadline, by less than the lane's lower edge (4.2
 * ms in the first lane): at most half the slack it was pushed with, up to
 * 268 ms of slack.  Nodes without a deadline come after every node that
 * has one. */
#define DF_LANES          9
#define DF_LANE_NONE      (DF_LANES - 1)
#define DF_LANE_UNIT_LOG2 22 /* the first lane: slack under 2^22 ns */

typedef struct DfSlot {
    /* The node, with DF_HEAD_* tags in its low bits. */
    _Atomic uintptr_t node;
    _Atomic int64_t deadline; /* the node's, readable while a thief takes it */
    _Atomic(const DfGroup *) group;
    _Atomic uint64_t after; /* the node's start_pred_id: released by that one's start */
} DfSlot;

typedef struct DfDequeBuf {
    int64_t mask;
    struct DfDequeBuf *prev; /* retired buffers, freed with the deque */
    DfSlot slots[];
} DfDequeBuf;

typedef struct DfLane {
    DF_ALIGNED _Atomic int64_t top;
    DF_ALIGNED _Atomic int64_t bottom;
    _Atomic(DfDequeBuf *) buf;
} DfLane;

typedef struct DfReady {
    DfLane lane[DF_LANES];
    DF_ALIGNED _Atomic(DfNode *) inbox;
    /* The earliest deadline posted to the inbox since it was last emptied
     * (a hint for thieves; DF_NO_DEADLINE: none). */
    _Atomic int64_t inbox_due;
    /* Lanes that may hold nodes, written by the owner only: it sets a bit
     * before the push that fills the lane and clears it when it finds the
     * lane empty (a thief may have emptied it).  Others look only at these
     * lanes: since only the owner refills a lane, a lane outside the mask
     * is empty. */
    DF_ALIGNED _Atomic uint32_t live;
    /* The earliest deadline at a lane head as the owner last saw it (after
     * its pushes and takes; a thief's take leaves it early): a thief
     * choosing a victim reads this one line, not the lanes.  Not kept in a
     * solo set, which has no thief. */
    _Atomic int64_t due;
    /* The only set of a one-worker scheduler: nobody but its owner ever
     * takes from its lanes (there is no thief), so the owner's FIFO take
     * needs no CAS.  Set once, before the worker starts. */
    bool solo;
} DfReady;

/* What a task that waits inside its body may run meanwhile: nodes of the
 * group it waits for and nodes due before its own deadline.  Anything else
 * could keep it from resuming long after its group is done. */
struct DfWaitFilter {
    const DfGroup *group;
    int64_t deadline;
};

static inline bool df_wait_accepts(const DfWaitFilter *f, const DfGroup *g, int64_t deadline)
{
    return !f || g == f->group || deadline < f->deadline;
}

int df_ready_init(DfReady *r, int64_t capacity);
void df_ready_fini(DfReady *r);
/* Owner only: into the lane of the node's deadline. */
void df_ready_push(DfReady *r, DfNode *n);
/* Owner only: the most urgent node (newest first inside a lane when
 * `lifo`).  With a filter, only a node it accepts, looked for at both ends
 * of each lane: a waiting task's own jobs are the newest. */
DfNode *df_ready_pop(DfReady *r, bool lifo, const DfWaitFilter *f);
/* Anyone (thieves): the most urgent node at the old end of a lane that the
 * filter accepts (NULL: any). */
DfNode *df_ready_take(DfReady *r, const DfWaitFilter *f);
/* Anyone: push into the inbox. */
void df_ready_post(DfReady *r, DfNode *n);
/* Owner: move the inbox into the lanes, most urgent first (order by
 * deadline, then id, whatever order thieves left the inbox in).  With a
 * filter, only the nodes it accepts; the rest go back.  Returns the number
 * of nodes moved; *returned is set when nodes went back to the inbox. */
int df_ready_drain_inbox(DfReady *r, const DfWaitFilter *f, bool *returned);
/* Anyone but the owner: take the most urgent inbox node the filter
 * accepts, put the rest back.  *returned as above. */
DfNode *df_ready_steal_inbox(DfReady *r, const DfWaitFilter *f, bool *returned);
/* Earliest deadline queued, from the owner's word and the inbox's hint
 * (DF_NO_DEADLINE: none or empty); for thieves choosing a victim. */
int64_t df_ready_urgency(const DfReady *r);
/* Where the head of the set's most urgent live lane is: the lane and its
 * top, as one word (a hint, read by a thief without ordering). */
uint64_t df_ready_head_mark(const DfReady *r);
/* Nodes taken from the lane of `mark` since it was read: one line. */
uint64_t df_ready_taken_since(const DfReady *r, uint64_t mark);
/* What a thief knows of the node it would take first without reading it
 * (a hint; 0 when the set looks empty): DF_HEAD_MOVABLE, a spawned task
 * (no input, no consumer: nothing to lose by running elsewhere).  *after
 * (if not NULL): the id of the node whose start released it (an ordered
 * job: a WPP row, which costs more run elsewhere while the row above
 * runs), else 0. */
#define DF_HEAD_MOVABLE 1u
unsigned df_ready_head_tags(const DfReady *r, uint64_t *after);
/* Cache lines of another worker's set that df_ready_empty and
 * df_ready_urgency read at most (the live mask and `due`, the inbox, the
 * live lanes' top and bottom): a thief's probe, for counting. */
#define DF_READY_PROBE_LINES (2 * DF_LANES + 2)
/* Approximate number of nodes queued (lanes + non-empty inbox as 1). */
int64_t df_ready_size(const DfReady *r);
bool df_ready_empty(const DfReady *r);
/* The same, by the owner: reads only the lanes it may have filled. */
bool df_ready_empty_own(const DfReady *r);
/* Owner: nothing queued in r is due before `deadline` (lane heads; a
 * non-empty inbox counts as due: its order is not known until drained). */
bool df_ready_none_before(const DfReady *r, int64_t deadline);

/* One Ready set per worker, as the stealing policies keep them, with a
 * summary of the sets that may hold nodes (ready.c: the protocol). */
typedef struct DfReadySets {
    int n;
    DfReady *sets;  /* n entries, cache-line aligned */
    DfSummary work; /* bit per worker whose set may be non-empty */
} DfReadySets;
int df_ready_sets_init(DfReadySets *rs, const struct DfTopo *topo, int n);
void df_ready_sets_fini(DfReadySets *rs);
/* True if any set may hold a node: one summary word, whatever n (a stale
 * bit answers true until a thief clears it).  Adds the words read to
 * *lines (may be NULL). */
bool df_ready_sets_any(DfReadySets *rs, unsigned *lines);
/* Nodes went into w's set (push, post, or given back): publish w's bit.
 * Begins with a seq_cst fence, after which the caller needs none to read
 * the parked summary's root with a seq_cst load. */
void df_ready_sets_mark(DfReadySets *rs, int w);
/* w's set was seen empty: clear w's bit.  True when nodes arrived
 * meanwhile, or an ancestor bit had to be restored: the caller then does a
 * wake check (DfPolicyEnv.requeued). */
bool df_ready_sets_unmark(DfReadySets *rs, int w);
/* df_ready_sets_mark for the owner's push into its own set when it is the
 * only worker: no thief clears its bit and no other worker parks, so the
 * bit needs no fence before it (outside threads post with the fence). */
void df_ready_sets_mark_alone(DfReadySets *rs, int w);
/* Take the most urgent node of another worker's set that the filter
 * accepts (lanes, then inbox).  *returned as for df_ready_steal_inbox. */
DfNode *df_ready_steal(DfReady *victim, const DfWaitFilter *f, bool *returned);

/* A spinlock for the shared sets of the baseline policies. */
typedef struct DfSpin {
    _Atomic int locked;
} DfSpin;
void df_spin_lock(DfSpin *l);
void df_spin_unlock(DfSpin *l);

#endif /* DF_SCHED_READY_H */
