/* The learned policy's part of a trace: its snapshot op (a snapshot of its
 * model taken with the events, so that a trace shows what placement
 * believed each transfer cost, the patent's visualisation of learnt sizes,
 * not only what the program declared) and the accessors of that data. */
#include "sched_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

uint64_t df_trace_input_learned_bytes(const DfTraceInput *in)
{
    /* Hand-made traces leave the field 0: nothing was learnt about them. */
    return in->learned_bytes || !in->bytes ? in->learned_bytes : in->bytes;
}

const DfTraceLearnedModule *df_trace_learned_module(const DfTrace *t, int module)
{
    if (!t->learned)
        return NULL;
    for (int i = 0; i < t->learned->n_modules; i++)
        if (t->learned->modules[i].module == module)
            return &t->learned->modules[i];
    return NULL;
}

/* bytes * scale, at least 1 when bytes > 0 (0 means "not learnt"). */
static uint64_t scaled(uint64_t bytes, double scale)
{
    if (!bytes)
        return 0;
    const double v = (double)bytes * scale;
    if (!(v >= 1.0))
        return 1;
    return v < 1.8e19 ? (uint64_t)(v + 0.5) : UINT64_MAX;
}

int df_policy_learned_snapshot(DfPolicy *pol, const DfPolicySnapshotCtx *ctx, DfTrace *t)
{
    DfLearnedModel m;
    const int ret = df_policy_learned_model(pol, &m);
    if (ret < 0)
        return ret;
    m.explored = ctx->tasks_explored;
    const int nm = m.n_modules < t->n_modules ? m.n_modules : t->n_modules;
    uint64_t reads[DF_LEARN_MAX_MODULES] = {0}, bytes[DF_LEARN_MAX_MODULES] = {0};
    for (size_t i = 0; i < t->n_inputs; i++) {
        DfTraceInput *in = &t->inputs[i];
        const bool known = in->module >= 0 && in->module < nm;
        in->learned_bytes = scaled(in->bytes, known ? m.size_scale[in->module] : 1.0);
        if (known) {
            reads[in->module]++;
            bytes[in->module] += in->bytes;
        }
    }
    DfTraceLearned *l = calloc(1, sizeof(*l));
    if (!l)
        return -ENOMEM;
    l->modules = calloc((size_t)(nm > 0 ? nm : 1), sizeof(DfTraceLearnedModule));
    if (!l->modules) {
        free(l);
        return -ENOMEM;
    }
    for (int p = 0; p < nm; p++) {
        if (!reads[p] && !m.samples_local[p] && !m.samples_remote[p])
            continue;
        const uint64_t mean = reads[p] ? (bytes[p] + reads[p] / 2) / reads[p] : 0;
        l->modules[l->n_modules++] = (DfTraceLearnedModule){
            .module = p,
            .scale = m.size_scale[p],
            .reads = reads[p],
            .declared_bytes = mean,
            .learned_bytes = scaled(mean, m.size_scale[p]),
            .samples_local = m.samples_local[p],
            .samples_remote = m.samples_remote[p],
        };
    }
    memcpy(l->ns_per_byte, m.ns_per_byte, sizeof(l->ns_per_byte));
    l->ref_ns_per_byte = m.ref_ns_per_byte;
    l->samples = m.samples;
    l->explored = m.explored;
    t->learned = l;
    return 0;
}
