/* The patent's formula (1):
 *     Cost(tid, c) = sum_{n in Pred(c)} size(n) * trCost(n->tid, tid)
 * size(n) is the bytes c reads from n (recorded per input), n->tid the worker
 * that ran n.  Inputs from outside the scheduler (worker -1) cost nothing
 * anywhere, so they do not sway placement. */
#include "policy.h"

uint64_t df_cost(const DfPolicyEnv *env, const DfNode *c, int tid)
{
    uint64_t sum = 0;
    DfPInputCursor cur = df_pnode_inputs(c);
    for (DfPInput in; df_pnode_input_next(&cur, &in);) {
        if (in.worker < 0 || in.bytes == 0)
            continue;
        sum += in.bytes * df_env_trcost(env, in.worker, tid);
    }
    return sum;
}
