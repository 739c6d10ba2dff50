/* The policy registry: every policy behind one small vtable, chosen by name,
 * so that benchmarks and the simulator compare them in one run. */
#include "sched_internal.h"

#include <string.h>

static const DfPolicyOps *const all_policies[] = {
    &df_policy_fifo, &df_policy_steal, &df_policy_cost, &df_policy_cost_local, &df_policy_learned,
};

static const char *const names[] = {"fifo", "steal", "cost", "cost-local", "learned", NULL};

const char *const *df_policy_names(void)
{
    return names;
}

const DfPolicyOps *df_policy_find(const char *name)
{
    for (size_t i = 0; i < sizeof(all_policies) / sizeof(all_policies[0]); i++)
        if (strcmp(all_policies[i]->name, name) == 0)
            return all_policies[i];
    return NULL;
}
