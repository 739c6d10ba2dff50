/* cost-local's state and steps, shared with learned, which extends it. */
#ifndef DF_SCHED_POLICY_COST_LOCAL_H
#define DF_SCHED_POLICY_COST_LOCAL_H

#include "policy.h"

/* A cost-local worker's own state as a thief (one cache line). */
typedef struct DfThief {
    DF_ALIGNED uint64_t rng;
    uint64_t head;          /* df_ready_head_mark of `victim` when it was last chosen */
    int32_t victim;         /* last victim chosen (sticky), -1 */
    uint32_t rr;            /* round robin of this worker's pushes (owner only) */
    _Atomic uint64_t lines; /* debug: summary words and sets read by steals */
} DfThief;

#define DF_THIEF_LINES_ADD(th, v)                                                                  \
    atomic_store_explicit(&(th)->lines,                                                            \
                          atomic_load_explicit(&(th)->lines, memory_order_relaxed) + (v),          \
                          memory_order_relaxed)

/* cost-local's state, shared with learned (which extends it). */
typedef struct DfCostLocal DfCostLocal;
struct DfCostLocal {
    DfPolicy base;
    DfReadySets rs;
    DfThief *thief; /* per worker */
    /* Cost(tid, c) used for placement (formula (1) or a learned variant). */
    uint64_t (*cost)(DfCostLocal *cl, const DfNode *n, int tid);
    /* Learned: its size factor for inputs of a producer module (NULL:
     * formula (1), bytes as declared).  Placement sums bytes per producer
     * worker with it, so that Cost is a sum over producers. */
    double (*scale)(DfCostLocal *cl, int module);
    /* Learned: take from another worker on purpose now (may be NULL). */
    DfNode *(*explore)(DfCostLocal *cl, int self);
    /* Round robin of outside threads (workers keep theirs in DfThief):
     * its own line, away from the pointers every push and pop reads. */
    DF_ALIGNED _Atomic uint32_t rr;
};
int df_cost_local_init(DfCostLocal *cl, const DfPolicyEnv *env);
void df_cost_local_fini(DfCostLocal *cl);
DfPlacement df_cost_local_push(DfPolicy *p, int self, DfNode *n);
DfPlacement df_cost_local_push_keep(DfPolicy *p, int self, DfNode *n);
DfNode *df_cost_local_pop(DfPolicy *p, int self, const DfWaitFilter *f);
bool df_cost_local_has_work(DfPolicy *p, int self, unsigned *lines);
bool df_cost_local_queued(DfPolicy *p, int w);
/* Steal the oldest node from the nearest non-empty victim of `self`.
 * Victims spinning idle are skipped (they run their own nodes, which stay
 * local) unless `explore` is set. */
DfNode *df_cost_local_steal(DfCostLocal *cl, int self, bool explore, const DfWaitFilter *f);
/* One draw of the exploration coin for worker `self`. */
bool df_cost_local_explore_now(DfCostLocal *cl, int self);
#endif /* DF_SCHED_POLICY_COST_LOCAL_H */
