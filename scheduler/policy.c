/* The policy registry: every policy behind one small vtable, chosen by
 * name, so that benchmarks and the simulator compare them in one run.  A
 * new policy is its own file plus its line in each list here, appended (the dfdec
 * element's enum values are these indices). */
#include "policy.h"

#include <pthread.h>
#include <string.h>

extern const DfPolicyOps df_policy_fifo;
extern const DfPolicyOps df_policy_steal;
extern const DfPolicyOps df_policy_cost;
extern const DfPolicyOps df_policy_cost_local;
extern const DfPolicyOps df_policy_learned;

static const DfPolicyOps *const registry[] = {
    &df_policy_fifo, &df_policy_steal, &df_policy_cost, &df_policy_cost_local, &df_policy_learned,
};

#define N_POLICIES ((int)(sizeof(registry) / sizeof(registry[0])))

int df_policy_count(void)
{
    return N_POLICIES;
}

const DfPolicyInfo *df_policy_info(int i)
{
    return i >= 0 && i < N_POLICIES ? &registry[i]->info : NULL;
}

int df_policy_index(const char *name)
{
    for (int i = 0; name && i < N_POLICIES; i++)
        if (strcmp(registry[i]->info.name, name) == 0)
            return i;
    return -1;
}

const DfPolicyOps *df_policy_find(const char *name)
{
    const int i = df_policy_index(name);
    return i >= 0 ? registry[i] : NULL;
}

static const char *names[N_POLICIES + 1];
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static void names_init(void)
{
    for (int i = 0; i < N_POLICIES; i++)
        names[i] = registry[i]->info.name;
}

const char *const *df_policy_names(void)
{
    pthread_once(&names_once, names_init);
    return names;
}
