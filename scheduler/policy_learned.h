/* The learned policy's model, as its tests and its trace snapshot read it. */
#ifndef DF_SCHED_POLICY_LEARNED_H
#define DF_SCHED_POLICY_LEARNED_H

#include "policy.h"

#define DF_LEARN_MAX_MODULES 32

/* What the learned policy has measured (module ids < DF_LEARN_MAX_MODULES).
 * Not in dfsched.h: a program sees it through the trace's policy data. */
typedef struct DfLearnedModel {
    int n_modules;
    double size_scale[DF_LEARN_MAX_MODULES];       /* size(n) correction of each producer module */
    uint64_t samples_local[DF_LEARN_MAX_MODULES];  /* consumer runs with its bytes local */
    uint64_t samples_remote[DF_LEARN_MAX_MODULES]; /* ... with its bytes on another worker */
    double ns_per_byte[DF_N_LEVELS];               /* measured transfer cost per level (0: none) */
    double ref_ns_per_byte;                        /* speed of one trCost unit in the model */
    uint64_t samples;                              /* timed runs learnt from */
    uint64_t explored;                             /* nodes stolen on purpose */
} DfLearnedModel;

/* Snapshot of the learned model; -ENOTSUP unless the policy is "learned"
 * (exported for the tests). */
DF_SCHED_API int df_sched_learned_model(DfSched *sched, DfLearnedModel *out);

/* The learned policy's model (explored left 0); -ENOTSUP for other
 * policies. */
int df_policy_learned_model(DfPolicy *p, DfLearnedModel *out);
/* learned's snapshot op (policy_learned_trace.c). */
int df_policy_learned_snapshot(DfPolicy *p, const DfPolicySnapshotCtx *ctx, DfTrace *t);

#endif /* DF_SCHED_POLICY_LEARNED_H */
