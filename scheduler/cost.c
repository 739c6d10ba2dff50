/* The patent's formula (1):
 *     Cost(tid, c) = sum_{n in Pred(c)} size(n) * trCost(n->tid, tid)
 * size(n) is the bytes c reads from n (recorded per input), n->tid the worker
 * that ran n.  Inputs from outside the scheduler (worker -1) cost nothing
 * anywhere, so they do not sway placement. */
#include "sched_internal.h"

uint64_t df_cost(const DfPolicyEnv *env, const DfNode *c, int tid)
{
    uint64_t sum = 0;
    for (unsigned i = 0; i < c->n_inputs; i++) {
        const DfInput *in = df_node_input_c(c, i);
        if (in->worker < 0 || in->bytes == 0)
            continue;
        sum += in->bytes * df_topo_trcost(env->topo, in->worker, tid);
    }
    return sum;
}
