/* The node's layout (the core's).  Policies include it only through
 * policy.h, for the inline accessors there that read it; they do not name
 * its fields (tests/check_policy_seam.sh). */
#ifndef DF_SCHED_NODE_H
#define DF_SCHED_NODE_H

#include "dfsched.h"
#include "sched_base.h"

#include <stdatomic.h>
#include <stddef.h>

/* ------------------------------------------------------------------ nodes */

#define DF_INLINE_INPUTS 4
#define DF_BLOCK_INPUTS  4

typedef struct DfInput {
    uint64_t bytes;
    uint64_t pred_id;
    int32_t worker; /* producer's worker, -1 until it finished / outside
                     * (no bytes, stolen producer: df_node_input_worker) */
    int32_t module;
} DfInput;

typedef struct DfInputBlock {
    struct DfInputBlock *next;
    struct DfInputBlock *last; /* in a node's first block: its last (O(1) append) */
    DfInput in[DF_BLOCK_INPUTS];
} DfInputBlock;

typedef struct DfEdge {
    struct DfEdge *next;
    DfNode *succ;
    DfInput *in; /* succ's input slot for this edge */
} DfEdge;

/* Sentinel for a finished node's successor list. */
#define DF_EDGES_CLOSED ((DfEdge *)(uintptr_t)1)

enum {
    DF_NF_SKIPPED = 1 << 0,
    DF_NF_STOLEN = 1 << 1,
    DF_NF_EXPLORED = 1 << 2,
    DF_NF_SUBMITTED = 1 << 3,
    DF_NF_DISCARD = 1 << 4,
    DF_NF_SPAWNED = 1 << 5,  /* df_spawn: no handle, so no edge can be added */
    DF_NF_SHORT = 1 << 6,    /* allocated without its tail (DF_NODE_SHORT_SIZE) */
    DF_NF_RELEASER = 1 << 7, /* its start releases an ordered job (jobs.c) */
};

/* The fields every node's path reads come first, up to `more`: that head
 * is all a spawned node has when nothing traces it (DF_NF_SHORT, from the
 * caches' `tasks` slab: 128 bytes with the slab's header, where a whole
 * node takes 296).  A root spawning a hundred thousand tasks then streams
 * half the memory through the caches.  Whoever reads the tail of a node
 * that may be short tests DF_NF_SHORT first. */
/* A node's pending count until it is submitted: more than any number of
 * edges and holds, so that it cannot reach 0 before the submit. */
#define DF_PENDING_OPEN (1 << 30)

struct DfNode {
    /* Unmet dependencies + holds, + DF_PENDING_OPEN - counted until submit. */
    _Atomic int32_t pending;
    _Atomic uint32_t refs;
    _Atomic(DfEdge *) succ; /* successors, or DF_EDGES_CLOSED */
    _Atomic uint8_t pred_cancelled;
    uint8_t flags;
    uint16_t n_inputs;
    /* module and index apart: adjacent here as in DfNodeDesc, the
     * compiler copied them with one 8-byte load, which store-to-load
     * forwarding cannot serve when the caller has just written the desc
     * field by field (a stall on every node, ~5 % of a fan-out's time). */
    int32_t module;
    int32_t worker; /* who ran it; published by the succ exchange */
    int32_t index;
    int32_t placed; /* worker whose ready set received it (-1 shared) */
    DfTaskFn fn;
    DfTaskFn cancel;
    void *arg;
    DfGroup *group;
    DfSched *sched;
    int64_t deadline;
    uint64_t id;
    DfNode *next; /* ready-set links */
    DfNode *prev;
    DfLoad *load; /* stream account (load.c), or NULL */
    /* The tail: not there in a DF_NF_SHORT node (which has no inputs). */
    uint64_t in_bytes; /* sum of input bytes */
    DfInputBlock *more;
    int32_t counted;        /* edges published and holds taken (creator, before submit) */
    int64_t ready_ns;       /* when it became ready (tracing) */
    int64_t created_ns;     /* when it was created (tracing) */
    uint64_t parent_id;     /* node running on the creating worker, 0 if none */
    uint64_t start_pred_id; /* ordered jobs: released by the start of this node */
    uint64_t out_size;
    uintptr_t aux[2]; /* for internal users (jobs) */
    DfInput in[DF_INLINE_INPUTS];
    uint64_t cost_cache[]; /* policy scratch (cost policy: one per worker) */
};

#define DF_NODE_SHORT_SIZE offsetof(DfNode, in_bytes)
/* With the slab's 8-byte header (slab.c): two cache lines. */
_Static_assert(DF_NODE_SHORT_SIZE == 120, "a short node is its head");

/* Input slot `i` of a node (walks the blocks: O(i); loops use the
 * cursor of policy.h, df_pnode_inputs). */
DfInput *df_node_input(DfNode *node, unsigned i);
const DfInput *df_node_input_c(const DfNode *node, unsigned i);

#endif /* DF_SCHED_NODE_H */
