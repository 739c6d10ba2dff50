/* Formula (1), the topology levels and the placement rules, checked by hand
 * against the patent's examples and against synthetic hierarchies. */
#include "dftest.h"
#include "sched_internal.h"

#include <errno.h>
#include <hwloc.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* A policy's ops, through the registry as the scheduler finds them. */
static const DfPolicyOps *ops_of(const char *name)
{
    const DfPolicyOps *ops = df_policy_find(name);
    if (!ops)
        abort();
    return ops;
}

/* A detached node with given inputs (white box: no scheduler needed). */
static DfNode *fake_node(int n_inputs, const int *workers, const uint64_t *bytes)
{
    DfNode *n = calloc(1, sizeof(DfNode) + 64 * sizeof(uint64_t));
    n->deadline = DF_NO_DEADLINE;
    n->placed = -1;
    for (int i = 0; i < n_inputs && i < DF_INLINE_INPUTS; i++) {
        n->in[i].worker = workers[i];
        n->in[i].bytes = bytes[i];
        n->in[i].module = -1;
        n->in_bytes += bytes[i];
    }
    n->n_inputs = (uint16_t)n_inputs;
    return n;
}

static DfPolicyEnv env_of(const DfTopo *t)
{
    return (DfPolicyEnv){.n_workers = t->n_workers, .topo = t};
}

/* Patent fig. 10(B): c reads a and b.  a ran on thread 0 producing 300
 * bytes, b on thread 1 producing 100.  With the flat cost (0 same thread,
 * 1 otherwise): Cost(0,c) = 100, Cost(1,c) = 300, Cost(2,c) = 400. */
DF_TEST(Cost, PatentFig10Flat)
{
    DfTopo t;
    DfError err;
    DF_ASSERT_EQ_INT(df_topo_model(&t, "core:4 pu:1", 4, DF_COST_FLAT, NULL, &err), 0);
    DfPolicyEnv env = env_of(&t);
    const int w[] = {0, 1};
    const uint64_t b[] = {300, 100};
    DfNode *c = fake_node(2, w, b);
    DF_EXPECT_EQ_INT(df_cost(&env, c, 0), 100);
    DF_EXPECT_EQ_INT(df_cost(&env, c, 1), 300);
    DF_EXPECT_EQ_INT(df_cost(&env, c, 2), 400);
    DF_EXPECT_EQ_INT(df_cost(&env, c, 3), 400);
    free(c);
    df_topo_fini(&t);
}

/* A node whose inputs all come from outside the scheduler costs nothing. */
DF_TEST(Cost, OutsideInputsAreFree)
{
    DfTopo t;
    DF_ASSERT_EQ_INT(df_topo_model(&t, "core:2 pu:1", 2, DF_COST_FLAT, NULL, NULL), 0);
    DfPolicyEnv env = env_of(&t);
    const int w[] = {-1, -1};
    const uint64_t b[] = {1000, 5};
    DfNode *c = fake_node(2, w, b);
    DF_EXPECT_EQ_INT(df_cost(&env, c, 0), 0);
    DF_EXPECT_EQ_INT(df_cost(&env, c, 1), 0);
    free(c);
    df_topo_fini(&t);
}

/* "package:2 l3:2 core:4 pu:2" with 32 workers puts one worker per PU:
 * w0/w1 SMT siblings, w0..w7 one L3, w8..w15 the other L3 of package 0,
 * w16.. package 1.  Hierarchical weights 0,1,2,4,8,16. */
DF_TEST(Cost, HierarchyLevels)
{
    DfTopo t;
    DfError err;
    DF_ASSERT_EQ_INT(df_topo_model(&t, "package:2 l3:2 core:4 pu:2", 32, DF_COST_HIER, NULL, &err),
                     0);
    DF_ASSERT_EQ_INT(t.n_workers, 32);
    DF_EXPECT_EQ_INT(t.n_pus, 32);
    DF_EXPECT_EQ_INT(t.n_cores, 16);
    DF_EXPECT_EQ_INT(df_topo_level(&t, 0, 0), DF_LEVEL_SELF);
    DF_EXPECT_EQ_INT(df_topo_level(&t, 0, 1), DF_LEVEL_PU);
    DF_EXPECT_EQ_INT(df_topo_level(&t, 0, 2), DF_LEVEL_L3);
    DF_EXPECT_EQ_INT(df_topo_level(&t, 0, 7), DF_LEVEL_L3);
    DF_EXPECT_EQ_INT(df_topo_level(&t, 0, 8), DF_LEVEL_NUMA);
    DF_EXPECT_EQ_INT(df_topo_level(&t, 0, 15), DF_LEVEL_NUMA);
    DF_EXPECT_EQ_INT(df_topo_level(&t, 0, 16), DF_LEVEL_MACHINE);
    DF_EXPECT_EQ_INT(df_topo_level(&t, 17, 16), DF_LEVEL_PU);
    DF_EXPECT_EQ_INT(df_topo_trcost(&t, 0, 1), 1);
    DF_EXPECT_EQ_INT(df_topo_trcost(&t, 0, 5), 4);
    DF_EXPECT_EQ_INT(df_topo_trcost(&t, 0, 9), 8);
    DF_EXPECT_EQ_INT(df_topo_trcost(&t, 0, 31), 16);
    /* The matrix is symmetric and zero only on the diagonal. */
    for (int a = 0; a < 32; a++)
        for (int b = 0; b < 32; b++) {
            DF_EXPECT(df_topo_trcost(&t, a, b) == df_topo_trcost(&t, b, a));
            DF_EXPECT((df_topo_trcost(&t, a, b) == 0) == (a == b));
        }

    /* Hand-computed formula (1): c reads 1000 B from w1 (SMT), 200 B from w9
     * (other L3), 10 B from w20 (other package). */
    DfPolicyEnv env = env_of(&t);
    const int w[] = {1, 9, 20};
    const uint64_t b[] = {1000, 200, 10};
    DfNode *c = fake_node(3, w, b);
    /* tid 0: 1000*1 + 200*8 + 10*16 = 2760 */
    DF_EXPECT_EQ_INT(df_cost(&env, c, 0), 2760);
    /* tid 1: 0 + 200*8 + 10*16 = 1760 */
    DF_EXPECT_EQ_INT(df_cost(&env, c, 1), 1760);
    /* tid 9: 1000*8 + 0 + 160 = 8160 */
    DF_EXPECT_EQ_INT(df_cost(&env, c, 9), 8160);
    /* tid 20: 1000*16 + 200*16 + 0 = 19200 */
    DF_EXPECT_EQ_INT(df_cost(&env, c, 20), 19200);
    /* tid 21 (SMT sibling of 20): 16000 + 3200 + 10 = 19210 */
    DF_EXPECT_EQ_INT(df_cost(&env, c, 21), 19210);
    free(c);
    df_topo_fini(&t);
}

/* Fewer workers than cores: one per core, so no two share a PU. */
DF_TEST(Cost, OneWorkerPerCore)
{
    DfTopo t;
    DF_ASSERT_EQ_INT(df_topo_model(&t, "package:2 l3:2 core:4 pu:2", 16, DF_COST_HIER, NULL, NULL),
                     0);
    for (int a = 0; a < 16; a++)
        for (int b = 0; b < 16; b++)
            if (a != b)
                DF_EXPECT(df_topo_level(&t, a, b) >= DF_LEVEL_L3);
    DF_EXPECT_EQ_INT(df_topo_level(&t, 0, 4), DF_LEVEL_NUMA);
    DF_EXPECT_EQ_INT(df_topo_level(&t, 0, 8), DF_LEVEL_MACHINE);
    df_topo_fini(&t);
}

/* The level of two PUs as hwloc's tree says it (the rule the scheduler
 * applied to every pair when it kept n x n tables). */
static DfLevel hwloc_level(hwloc_topology_t topo, hwloc_obj_t a, hwloc_obj_t b)
{
    if (a == b)
        return DF_LEVEL_PU;
    hwloc_obj_t ca = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, a);
    hwloc_obj_t cb = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, b);
    if (ca && ca == cb)
        return DF_LEVEL_PU;
    hwloc_obj_t anc = hwloc_get_common_ancestor_obj(topo, a, b);
    if (anc->type == HWLOC_OBJ_L1CACHE || anc->type == HWLOC_OBJ_L2CACHE)
        return DF_LEVEL_L2;
    if (anc->type == HWLOC_OBJ_L3CACHE || anc->type == HWLOC_OBJ_L4CACHE ||
        anc->type == HWLOC_OBJ_L5CACHE)
        return DF_LEVEL_L3;
    hwloc_obj_t pa = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, a);
    hwloc_obj_t pb = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, b);
    hwloc_obj_t na =
        hwloc_get_next_obj_covering_cpuset_by_type(topo, a->cpuset, HWLOC_OBJ_NUMANODE, NULL);
    hwloc_obj_t nb =
        hwloc_get_next_obj_covering_cpuset_by_type(topo, b->cpuset, HWLOC_OBJ_NUMANODE, NULL);
    return pa == pb && na == nb ? DF_LEVEL_NUMA : DF_LEVEL_MACHINE;
}

/* Levels from the per-worker domain keys equal hwloc's answer for every
 * pair, on hierarchies with and without L2, L4, NUMA nodes and SMT, one
 * worker per PU and oversubscribed. */
DF_TEST(Cost, KeysMatchHwlocForEveryPair)
{
    static const struct {
        const char *topo;
        int n;
    } cases[] = {
        {"package:2 l3:2 core:4 pu:2", 32},
        {"package:2 l3:2 core:4 pu:2", 16},
        {"package:2 numa:2 l3:1 l2:2 core:2 pu:2", 32},
        {"package:2 l4:1 l3:2 l2:1 core:2 pu:1", 8},
        {"package:2 core:2 pu:2", 8},
        {"package:2 core:2 pu:2", 20},
        {"core:4 pu:1", 4},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        DfTopo t;
        DF_ASSERT_EQ_INT(df_topo_model(&t, cases[c].topo, cases[c].n, DF_COST_HIER, NULL, NULL), 0);
        hwloc_topology_t h;
        DF_ASSERT_EQ_INT(hwloc_topology_init(&h), 0);
        DF_ASSERT_EQ_INT(hwloc_topology_set_synthetic(h, cases[c].topo), 0);
        DF_ASSERT_EQ_INT(hwloc_topology_load(h), 0);
        int mismatches = 0;
        for (int a = 0; a < t.n_workers; a++)
            for (int b = 0; b < t.n_workers; b++) {
                hwloc_obj_t pa = hwloc_get_obj_by_type(h, HWLOC_OBJ_PU, (unsigned)t.model_pu[a]);
                hwloc_obj_t pb = hwloc_get_obj_by_type(h, HWLOC_OBJ_PU, (unsigned)t.model_pu[b]);
                const DfLevel want = a == b ? DF_LEVEL_SELF : hwloc_level(h, pa, pb);
                mismatches += df_topo_level(&t, a, b) != want;
                mismatches += df_topo_trcost(&t, a, b) != t.level_cost[want];
            }
        DF_EXPECT_MSG(mismatches == 0, "%s, %d workers: %d mismatches", cases[c].topo, cases[c].n,
                      mismatches);
        hwloc_topology_destroy(h);
        df_topo_fini(&t);
    }
}

/* The nearest other worker is the first of a victim order sorted by
 * trCost, then by steps from w + 1 on: checked against a full sort. */
DF_TEST(Cost, NearestOtherIsFirstByCostThenDistance)
{
    static const uint32_t flat_l3[DF_N_LEVELS] = {0, 5, 5, 1, 5, 5};
    const uint32_t *weights[] = {NULL, flat_l3};
    for (int k = 0; k < 2; k++)
        for (int model = 0; model < 2; model++) {
            DfTopo t;
            DF_ASSERT_EQ_INT(df_topo_model(&t, "package:2 l3:2 core:4 pu:2", 24,
                                           model ? DF_COST_FLAT : DF_COST_HIER, weights[k], NULL),
                             0);
            const int n = t.n_workers;
            for (int w = 0; w < n; w++) {
                int best = -1;
                for (int d = 1; d < n; d++) {
                    const int v = (w + d) % n;
                    if (best < 0 || df_topo_trcost(&t, v, w) < df_topo_trcost(&t, best, w))
                        best = v;
                }
                DF_EXPECT_EQ_INT(t.nearest[w], best);
            }
            df_topo_fini(&t);
        }
}

DF_TEST(Cost, FlatIsZeroOne)
{
    DfTopo t;
    DF_ASSERT_EQ_INT(df_topo_model(&t, "package:2 l3:2 core:4 pu:2", 32, DF_COST_FLAT, NULL, NULL),
                     0);
    for (int a = 0; a < 32; a++)
        for (int b = 0; b < 32; b++)
            DF_EXPECT_EQ_INT(df_topo_trcost(&t, a, b), a == b ? 0 : 1);
    df_topo_fini(&t);
}

DF_TEST(Cost, LevelOverrides)
{
    DfTopo t;
    const uint32_t w[DF_N_LEVELS] = {0, 3, 0, 7, 0, 100};
    DF_ASSERT_EQ_INT(df_topo_model(&t, "package:2 l3:1 core:2 pu:2", 8, DF_COST_HIER, w, NULL), 0);
    DF_EXPECT_EQ_INT(df_topo_trcost(&t, 0, 1), 3);   /* SMT: overridden */
    DF_EXPECT_EQ_INT(df_topo_trcost(&t, 0, 2), 7);   /* L3: overridden */
    DF_EXPECT_EQ_INT(df_topo_trcost(&t, 0, 4), 100); /* other package */
    df_topo_fini(&t);
}

DF_TEST(Cost, BadTopologyIsAClearError)
{
    DfTopo t;
    DfError err = {0};
    int ret = df_topo_model(&t, "package:two", 4, DF_COST_HIER, NULL, &err);
    DF_EXPECT(ret < 0);
    DF_EXPECT(strstr(err.msg, "invalid topology") != NULL);
}

/* cost-local registers a ready node in the Ready set of the worker of least
 * Cost (fig. 13): the producer of most of its bytes. */
DF_TEST(CostLocal, RegistersAtProducer)
{
    DfTopo t;
    DF_ASSERT_EQ_INT(df_topo_model(&t, "core:4 pu:1", 4, DF_COST_FLAT, NULL, NULL), 0);
    DfPolicyEnv env = env_of(&t);
    DfPolicy *p;
    DF_ASSERT_EQ_INT(ops_of("cost-local")->create(&env, &p), 0);
    const int w[] = {2, 1};
    const uint64_t b[] = {1000, 10};
    DfNode *c = fake_node(2, w, b);
    DfPlacement pl = ops_of("cost-local")->push(p, 0, c);
    DF_EXPECT_EQ_INT(pl.worker, 2);
    DF_EXPECT_EQ_INT(c->placed, 2);
    /* Worker 2 finds it in its own set, not stolen. */
    DfNode *got = ops_of("cost-local")->pop(p, 2, NULL);
    DF_EXPECT(got == c);
    DF_EXPECT(!(c->flags & DF_NF_STOLEN));
    /* A node without inputs stays with the worker that made it ready. */
    DfNode *d = fake_node(0, NULL, NULL);
    pl = ops_of("cost-local")->push(p, 3, d);
    DF_EXPECT_EQ_INT(pl.worker, 3);
    DF_EXPECT(ops_of("cost-local")->pop(p, 3, NULL) == d);
    ops_of("cost-local")->destroy(p);
    free(c);
    free(d);
    df_topo_fini(&t);
}

/* A node with k inputs spread over blocks, as dfsim builds them. */
static DfNode *block_node(int k, const int *workers, const uint64_t *bytes)
{
    DfNode *n = calloc(1, sizeof(DfNode) + 64 * sizeof(uint64_t));
    n->deadline = DF_NO_DEADLINE;
    n->placed = -1;
    for (int i = 0; i < k; i++) {
        DfInputBlock *b = df_node_input_block_needed(n) ? calloc(1, sizeof(*b)) : NULL;
        const DfInput in = {
            .bytes = bytes[i], .pred_id = (uint64_t)i, .worker = workers[i], .module = -1};
        df_node_input_append(n, b, &in);
    }
    return n;
}

static void free_block(void *b, const void *ctx)
{
    (void)ctx;
    free(b);
}

/* The worker formula (1) picks, input by input through df_node_input_c:
 * the least Cost among self and the producers, earlier candidates winning
 * ties (self first, then in the order of the inputs). */
static int naive_best(const DfPolicyEnv *env, const DfNode *n, int self)
{
    int best = self;
    uint64_t best_cost = df_cost(env, n, self);
    for (unsigned i = 0; i < n->n_inputs && best_cost > 0; i++) {
        const int w = df_node_input_c(n, i)->worker;
        if (w < 0 || w == best)
            continue;
        const uint64_t c = df_cost(env, n, w);
        if (c < best_cost) {
            best_cost = c;
            best = w;
        }
    }
    return best;
}

/* Many inputs in blocks: the cursor sees each once, in order, and
 * placement by per-producer sums (up to 16 producers), by domain sums (up
 * to 128) and past that by the inputs picks what formula (1) input by
 * input picks, for cost-local and for learned before it has measured
 * anything (its sizes are the bytes). */
DF_TEST(CostLocal, ManyInputsPlaceAsFormulaOne)
{
    DfTopo t;
    DF_ASSERT_EQ_INT(
        df_topo_model(&t, "package:2 l3:2 core:16 pu:4", 256, DF_COST_HIER, NULL, NULL), 0);
    DfPolicyEnv env = env_of(&t);
    enum { K = 301 };
    int w[K];
    uint64_t b[K];
    const char *names[] = {"cost-local", "learned"};
    for (int pi = 0; pi < 2; pi++) {
        const DfPolicyOps *ops = ops_of(names[pi]);
        DfPolicy *p;
        DF_ASSERT_EQ_INT(ops->create(&env, &p), 0);
        /* Producers; one: all on worker 0 (self 0 keeps it without sums). */
        static const int spreads[] = {1, 3, 16, 29, 100, 200};
        for (size_t si = 0; si < sizeof(spreads) / sizeof(spreads[0]); si++) {
            const int spread = spreads[si];
            uint64_t seed = 0x9e3779b97f4a7c15ull * (uint64_t)spread;
            for (int i = 0; i < K; i++) {
                w[i] = i % 7 == 5 ? -1 : (int)((i * 11) % spread);
                b[i] = (df_rand_next(&seed) % 5000) * (i % 9 != 0);
            }
            for (int self = 0; self < 256; self += 37) {
                DfNode *n = block_node(K, w, b);
                DF_ASSERT_EQ_INT(n->n_inputs, K);
                DfPInputCursor cur = df_pnode_inputs(n);
                int i = 0;
                for (DfPInput in; df_pnode_input_next(&cur, &in); i++) {
                    const DfInput *want = df_node_input_c(n, (unsigned)i);
                    DF_EXPECT(in.bytes == want->bytes && in.worker == want->worker);
                }
                DF_EXPECT_EQ_INT(i, K);
                const int want = naive_best(&env, n, self);
                DfPlacement pl = ops->push(p, self, n);
                DF_EXPECT_MSG(pl.worker == want,
                              "%s, %d producers, self %d: placed on %d, "
                              "formula %d",
                              names[pi], spread, self, pl.worker, want);
                DF_EXPECT(ops->pop(p, pl.worker, NULL) == n);
                df_node_free_input_blocks(n, free_block, NULL);
                free(n);
            }
        }
        ops->destroy(p);
    }
    df_topo_fini(&t);
}

/* cost-local on `n` workers of a synthetic topology with cost model
 * `model`, the workers' state `state` (NULL: all busy) (t is the caller's
 * to finish), or NULL. */
static DfPolicy *model_cost_local(DfTopo *t, const char *topo, int n, DfCostModel model,
                                  DfWorkerState *state)
{
    if (df_topo_model(t, topo, n, model, NULL, NULL) != 0)
        return NULL;
    DfPolicyEnv env = env_of(t);
    env.state = state;
    DfPolicy *p = NULL;
    if (ops_of("cost-local")->create(&env, &p) != 0) {
        df_topo_fini(t);
        return NULL;
    }
    return p;
}

/* A source (no producer) that has consumers goes round robin from a
 * worker whose set holds work; one without (a decode task's slice job)
 * stays there, for thieves; a node whose producer's edge carries no bytes
 * (a decoder's chain of decode tasks) stays with the worker placing it,
 * wherever the producer ran. */
DF_TEST(CostLocal, ZeroByteEdgeKeepsItsWorker)
{
    DfTopo t;
    const DfPolicyOps *ops = ops_of("cost-local");
    DfPolicy *p = model_cost_local(&t, "core:4 pu:1", 4, DF_COST_FLAT, NULL);
    DF_ASSERT(p != NULL);
    DfNode *busy = fake_node(0, NULL, NULL);
    DF_EXPECT_EQ_INT(ops->push(p, 1, busy).worker, 1); /* own set empty: stays */
    /* Worker 1's set holds work now. */
    static DfEdge consumer; /* a successor list that is not empty */
    int away = 0, leaf_away = 0;
    DfNode *src[3], *leaf[3], *chained[3];
    for (int i = 0; i < 3; i++) {
        src[i] = fake_node(0, NULL, NULL);
        atomic_store(&src[i]->succ, &consumer);
        away += ops->push(p, 1, src[i]).worker != 1;
        leaf[i] = fake_node(0, NULL, NULL);
        leaf_away += ops->push(p, 1, leaf[i]).worker != 1;
    }
    DF_EXPECT_MSG(away >= 2, "sources spread: %d of 3 left worker 1", away);
    DF_EXPECT_MSG(leaf_away == 0, "sources without consumers: %d of 3 left worker 1", leaf_away);
    const int from[] = {2, 1, 3};
    const uint64_t none[] = {0};
    for (int i = 0; i < 3; i++) {
        chained[i] = fake_node(1, &from[i], none);
        DF_EXPECT_EQ_INT(ops->push(p, 1, chained[i]).worker, 1);
    }
    /* From outside (no placing worker) it goes to its producer. */
    DfNode *outside = fake_node(1, &from[0], none);
    DF_EXPECT_EQ_INT(ops->push(p, -1, outside).worker, from[0]);
    for (int w = 0; w < 4; w++)
        while (ops->pop(p, w, NULL))
            ;
    ops->destroy(p);
    free(busy);
    free(outside);
    for (int i = 0; i < 3; i++) {
        free(src[i]);
        free(leaf[i]);
        free(chained[i]);
    }
    df_topo_fini(&t);
}

/* push_keep keeps a node placed on the caller when nothing in its set is
 * due before it, and queues it otherwise. */
DF_TEST(CostLocal, KeepsOnlyWhatNothingQueuedPrecedes)
{
    DfTopo t;
    const DfPolicyOps *ops = ops_of("cost-local");
    DfPolicy *p = model_cost_local(&t, "core:2 pu:1", 2, DF_COST_FLAT, NULL);
    DF_ASSERT(p != NULL);
    const int w[] = {0};
    const uint64_t b[] = {100};
    DfNode *a = fake_node(1, w, b);
    DfPlacement pl = ops->push_keep(p, 0, a);
    DF_EXPECT(pl.kept && pl.worker == 0 && a->placed == 0);
    DF_EXPECT(ops->pop(p, 0, NULL) == NULL); /* not queued */
    DF_EXPECT(!ops->has_work(p, 1, NULL));   /* nor marked for thieves */
    /* An urgent node waits in the set: a later one is queued behind it. */
    DfNode *urgent = fake_node(1, w, b), *late = fake_node(1, w, b);
    urgent->deadline = df_now_ns() + 1000000;
    late->deadline = urgent->deadline + 1000000;
    ops->push(p, 0, urgent);
    pl = ops->push_keep(p, 0, late);
    DF_EXPECT(!pl.kept && pl.worker == 0);
    DF_EXPECT(ops->pop(p, 0, NULL) == urgent);
    DF_EXPECT(ops->pop(p, 0, NULL) == late);
    /* A node placed on another worker is never kept. */
    const int w1[] = {1};
    DfNode *far = fake_node(1, w1, b);
    pl = ops->push_keep(p, 0, far);
    DF_EXPECT(!pl.kept && pl.worker == 1);
    DF_EXPECT(ops->pop(p, 1, NULL) == far);
    ops->destroy(p);
    free(a);
    free(urgent);
    free(late);
    free(far);
    df_topo_fini(&t);
}

/* A thief's pop, given its grace: with env.state NULL every owner counts
 * as busy, so a node is taken on the second poll that sees it at the
 * head (the first one only remembers it). */
static DfNode *pop_after_grace(DfPolicy *p, int w)
{
    DfNode *n = ops_of("cost-local")->pop(p, w, NULL);
    return n ? n : ops_of("cost-local")->pop(p, w, NULL);
}

/* fig. 14: with an empty own set, steal from the thread of least trCost
 * first.  Nodes sit in the sets of w31 (other package), w9 (other L3) and
 * w1 (SMT sibling); worker 0 must take them in that order of nearness. */
DF_TEST(CostLocal, StealOrderFollowsTrCost)
{
    DfTopo t;
    DfPolicy *p = model_cost_local(&t, "package:2 l3:2 core:4 pu:2", 32, DF_COST_HIER, NULL);
    DF_ASSERT(p);
    const int owners[] = {31, 9, 1};
    DfNode *n[3];
    for (int i = 0; i < 3; i++) {
        n[i] = fake_node(0, NULL, NULL);
        ops_of("cost-local")->push(p, owners[i], n[i]);
    }
    DF_EXPECT(ops_of("cost-local")->pop(p, 0, NULL) == NULL); /* grace */
    DF_EXPECT(ops_of("cost-local")->pop(p, 0, NULL) == n[2]);
    DF_EXPECT(pop_after_grace(p, 0) == n[1]);
    DF_EXPECT(pop_after_grace(p, 0) == n[0]);
    DF_EXPECT(pop_after_grace(p, 0) == NULL);
    for (int i = 0; i < 3; i++)
        DF_EXPECT(n[i]->flags & DF_NF_STOLEN);
    /* Worker 0's nearest other is its SMT sibling. */
    DF_EXPECT_EQ_INT(t.nearest[0], 1);
    DF_EXPECT_EQ_INT(t.nearest[1], 0);
    DF_EXPECT_EQ_INT(t.nearest[31], 30);
    ops_of("cost-local")->destroy(p);
    for (int i = 0; i < 3; i++)
        free(n[i]);
    df_topo_fini(&t);
}

/* A WPP row whose owner runs the row above it (the node whose start
 * released it) stays with that owner while a candidate as urgent offers
 * anything else, even a farther one; with nothing else a thief takes it (a
 * lone wavefront's parallelism).  Rows sit with worker 0's SMT sibling
 * (running the row above one of them) and in the other L3, a plain node in
 * the other package: the sibling's row goes last, and once its owner has
 * moved on it is a row like any other, taken nearest first. */
DF_TEST(CostLocal, ThiefLeavesARowToItsOwner)
{
    static DfWorkerState state[32]; /* every worker busy, running nothing */
    for (int i = 0; i < 32; i++)
        atomic_store(&state[i].v, DF_WS_RUNNING);
    DfTopo t;
    DfPolicy *p = model_cost_local(&t, "package:2 l3:2 core:4 pu:2", 32, DF_COST_HIER, state);
    DF_ASSERT(p);
    DfNode *row = fake_node(0, NULL, NULL), *far_row = fake_node(0, NULL, NULL),
           *plain = fake_node(0, NULL, NULL);
    row->start_pred_id = 7;
    far_row->start_pred_id = 8;
    atomic_store(&state[1].running, 7);  /* the row above `row` */
    atomic_store(&state[9].running, 99); /* not far_row's: its row above is done */
    ops_of("cost-local")->push(p, 1, row);
    ops_of("cost-local")->push(p, 9, far_row);
    ops_of("cost-local")->push(p, 25, plain);
    DF_EXPECT(pop_after_grace(p, 0) == far_row);
    DF_EXPECT(pop_after_grace(p, 0) == plain);
    DF_EXPECT(pop_after_grace(p, 0) == row);
    DF_EXPECT(pop_after_grace(p, 0) == NULL);
    /* The same row with its owner on another body: nearest first. */
    ops_of("cost-local")->push(p, 1, row);
    ops_of("cost-local")->push(p, 25, plain);
    atomic_store(&state[1].running, 99);
    DF_EXPECT(pop_after_grace(p, 0) == row);
    DF_EXPECT(pop_after_grace(p, 0) == plain);
    ops_of("cost-local")->destroy(p);
    free(row);
    free(far_row);
    free(plain);
    df_topo_fini(&t);
}

/* A decode task a thief took names, to its stream's next one, the worker
 * it was placed on (df_node_input_worker, as df_node_complete and dfsim
 * record it): submitted from outside, the next one goes back there, not
 * to the thief.  Inputs with bytes, and nodes their owner ran, name the
 * worker that ran them. */
DF_TEST(CostLocal, StolenChainLinkSendsItsStreamHome)
{
    static DfWorkerState state[4]; /* every worker busy */
    for (int i = 0; i < 4; i++)
        atomic_store(&state[i].v, DF_WS_RUNNING);
    DfTopo t;
    const DfPolicyOps *ops = ops_of("cost-local");
    DfPolicy *p = model_cost_local(&t, "core:4 pu:1", 4, DF_COST_FLAT, state);
    DF_ASSERT(p);
    const int home = 1;
    const uint64_t none[] = {0};
    DfNode *link = fake_node(1, &home, none), *own = fake_node(1, &home, none);
    DF_EXPECT_EQ_INT(ops->push(p, -1, link).worker, home);
    DfNode *got = pop_after_grace(p, 2);
    DF_ASSERT(got == link);
    DF_EXPECT(link->flags & DF_NF_STOLEN);
    DF_EXPECT_EQ_INT(df_node_input_worker(link, 0, 2), home);
    DF_EXPECT_EQ_INT(df_node_input_worker(link, 4096, 2), 2); /* its bytes are on the thief */
    const int named = df_node_input_worker(link, 0, 2);
    DfNode *next = fake_node(1, &named, none);
    DF_EXPECT_EQ_INT(ops->push(p, -1, next).worker, home);
    /* Run by its owner: the owner. */
    DF_EXPECT_EQ_INT(ops->push(p, -1, own).worker, home);
    DF_EXPECT(ops->pop(p, home, NULL) == next);
    DF_EXPECT(ops->pop(p, home, NULL) == own);
    DF_EXPECT(!(own->flags & DF_NF_STOLEN));
    DF_EXPECT_EQ_INT(df_node_input_worker(own, 0, home), home);
    DF_EXPECT_EQ_INT(df_node_input_worker(own, 0, 3), 3);
    ops->destroy(p);
    free(link);
    free(own);
    free(next);
    df_topo_fini(&t);
}

/* cost (fig. 12): a free worker takes the node of least Cost(tid, c); ties
 * go to the earliest deadline; the cost is cached per node and worker. */
DF_TEST(CostShared, LeastCostThenDeadline)
{
    DfTopo t;
    DF_ASSERT_EQ_INT(df_topo_model(&t, "core:3 pu:1", 3, DF_COST_FLAT, NULL, NULL), 0);
    DfPolicyEnv env = env_of(&t);
    DfPolicy *p;
    DF_ASSERT_EQ_INT(ops_of("cost")->create(&env, &p), 0);
    const int wa[] = {1}, wb[] = {0}, wc[] = {0};
    const uint64_t big[] = {500}, small[] = {50};
    DfNode *a = fake_node(1, wa, big);   /* data on worker 1 */
    DfNode *b = fake_node(1, wb, small); /* data on worker 0, late deadline */
    DfNode *c = fake_node(1, wc, small); /* data on worker 0, early deadline */
    b->deadline = 2000;
    c->deadline = 1000;
    ops_of("cost")->push(p, -1, a);
    ops_of("cost")->push(p, -1, b);
    ops_of("cost")->push(p, -1, c);
    /* Worker 0: b and c cost 0, a costs 500; c has the earlier deadline. */
    DF_EXPECT(ops_of("cost")->pop(p, 0, NULL) == c);
    DF_EXPECT_EQ_INT(a->cost_cache[0], 500);
    /* Worker 1: a costs 0. */
    DF_EXPECT(ops_of("cost")->pop(p, 1, NULL) == a);
    DF_EXPECT(ops_of("cost")->pop(p, 2, NULL) == b);
    DF_EXPECT(ops_of("cost")->pop(p, 2, NULL) == NULL);
    ops_of("cost")->destroy(p);
    free(a);
    free(b);
    free(c);
    df_topo_fini(&t);
}

/* Scatter order: a permutation in which the first workers are as far
 * apart as the topology allows: the first two in two packages, the first
 * four in four L3s, the first sixteen on sixteen cores, and SMT siblings
 * only after every core had one. */
DF_TEST(SchedTopo, ScatterOrderSpreadsOverDomains)
{
    DfTopo t;
    DF_ASSERT_EQ_INT(df_topo_model(&t, "package:2 l3:2 core:4 pu:2", 32, DF_COST_HIER, NULL, NULL),
                     0);
    bool seen[32] = {false};
    for (int i = 0; i < 32; i++) {
        const int w = t.scatter[i];
        DF_ASSERT(w >= 0 && w < 32 && !seen[w]);
        seen[w] = true;
        DF_EXPECT_EQ_INT(t.scatter_pos[w], i);
    }
    DF_EXPECT_EQ_INT(df_topo_level(&t, t.scatter[0], t.scatter[1]), DF_LEVEL_MACHINE);
    for (int a = 0; a < 16; a++)
        for (int b = a + 1; b < 16; b++) {
            const DfLevel l = df_topo_level(&t, t.scatter[a], t.scatter[b]);
            DF_EXPECT_MSG(l > DF_LEVEL_PU, "%d and %d share a core", t.scatter[a], t.scatter[b]);
            if (a < 4 && b < 4)
                DF_EXPECT_MSG(l > DF_LEVEL_L3, "%d and %d share an L3", t.scatter[a], t.scatter[b]);
        }
    df_topo_fini(&t);
}

/* cost-local spreads sources from outside round robin in scatter order:
 * four go to four L3s (in index order they went to two cores of one). */
DF_TEST(CostLocal, SourcesSpreadInScatterOrder)
{
    DfTopo t;
    DfPolicy *p = model_cost_local(&t, "package:2 l3:2 core:4 pu:2", 32, DF_COST_HIER, NULL);
    DF_ASSERT(p);
    int at[4];
    DfNode *n[4];
    for (int i = 0; i < 4; i++) {
        n[i] = fake_node(0, NULL, NULL);
        at[i] = ops_of("cost-local")->push(p, -1, n[i]).worker;
    }
    for (int a = 0; a < 4; a++)
        for (int b = a + 1; b < 4; b++)
            DF_EXPECT_MSG(df_topo_level(&t, at[a], at[b]) > DF_LEVEL_L3,
                          "sources %d and %d on workers %d and %d of one L3", a, b, at[a], at[b]);
    ops_of("cost-local")->destroy(p);
    for (int i = 0; i < 4; i++)
        free(n[i]);
    df_topo_fini(&t);
}

/* The workers' CPUs past glibc's fixed 1024: the sized query holds them,
 * refuses a set too small for them, and the fixed one keeps those below. */
DF_TEST(SchedTopo, WorkerCpusBeyond1024)
{
    hwloc_bitmap_t a = hwloc_bitmap_alloc(), b = hwloc_bitmap_alloc();
    DF_ASSERT(a && b);
    hwloc_bitmap_set(a, 3);
    hwloc_bitmap_set(b, 1500);
    const void *sets[2] = {a, b};
    DfTopo t;
    memset(&t, 0, sizeof(t));
    t.n_workers = 2;
    t.pin_sets = sets;
    DF_EXPECT_EQ_INT(df_topo_cpus_end(&t), 1501);
    cpu_set_t *big = CPU_ALLOC(1501), *small = CPU_ALLOC(1024);
    DF_ASSERT(big && small);
    DF_EXPECT_EQ_INT(df_topo_cpus_s(&t, CPU_ALLOC_SIZE(1501), big), 0);
    DF_EXPECT(CPU_ISSET_S(3, CPU_ALLOC_SIZE(1501), big));
    DF_EXPECT(CPU_ISSET_S(1500, CPU_ALLOC_SIZE(1501), big));
    DF_EXPECT_EQ_INT(CPU_COUNT_S(CPU_ALLOC_SIZE(1501), big), 2);
    DF_EXPECT_EQ_INT(df_topo_cpus_s(&t, CPU_ALLOC_SIZE(1024), small), -ERANGE);
    cpu_set_t fixed;
    DF_EXPECT_EQ_INT(df_topo_cpus(&t, &fixed), 0);
    DF_EXPECT(CPU_ISSET(3, &fixed));
    DF_EXPECT_EQ_INT(CPU_COUNT(&fixed), 1);
    t.pin_sets = NULL; /* not pinned */
    DF_EXPECT_EQ_INT(df_topo_cpus_end(&t), -ENOENT);
    DF_EXPECT_EQ_INT(df_topo_cpus_s(&t, CPU_ALLOC_SIZE(1501), big), -ENOENT);
    CPU_FREE(big);
    CPU_FREE(small);
    hwloc_bitmap_free(a);
    hwloc_bitmap_free(b);
}
