/* The learned policy's part of a trace: its snapshot op (a snapshot of its
 * model taken with the events, so that a trace shows what placement
 * believed each transfer cost, the patent's visualisation of learnt sizes,
 * not only what the program declared).  What it records, in the trace's
 * generic policy section:
 *   values  ref_ns_per_byte (speed of one trCost unit in the model),
 *           samples (timed runs learnt from), explored (stolen on purpose);
 *   table "sizes", one row per producer module measured or read in the
 *           trace (label: its name): reads (inputs of the trace reading
 *           it), declared_bytes (mean per read, 0 without reads),
 *           learned_bytes (the same times scale), scale (the size(n)
 *           correction), samples_local, samples_remote (timed consumer
 *           runs with its bytes on the same / another worker);
 *   table "ns_per_byte", one row per level measured (label: level name);
 *   every input's policy_bytes: its bytes times its producer's scale. */
#include "policy_learned.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
        in->policy_bytes = scaled(in->bytes, known ? m.size_scale[in->module] : 1.0);
        if (known) {
            reads[in->module]++;
            bytes[in->module] += in->bytes;
        }
    }
    DfTracePolicy *pol_data = t->policy;
    pol_data->weighs_inputs = true;
    if (df_trace_policy_add_value(pol_data, "ref_ns_per_byte", m.ref_ns_per_byte) < 0 ||
        df_trace_policy_add_value(pol_data, "samples", (double)m.samples) < 0 ||
        df_trace_policy_add_value(pol_data, "explored", (double)m.explored) < 0)
        return -ENOMEM;
    static const char *const cols[] = {"reads", "declared_bytes", "learned_bytes",
                                       "scale", "samples_local",  "samples_remote"};
    DfTraceTable *sizes = df_trace_policy_add_table(pol_data, "sizes", "producer", 6, cols);
    if (!sizes)
        return -ENOMEM;
    for (int p = 0; p < nm; p++) {
        if (!reads[p] && !m.samples_local[p] && !m.samples_remote[p])
            continue;
        const uint64_t mean = reads[p] ? (bytes[p] + reads[p] / 2) / reads[p] : 0;
        const double row[6] = {
            (double)reads[p],
            (double)mean,
            (double)scaled(mean, m.size_scale[p]),
            m.size_scale[p],
            (double)m.samples_local[p],
            (double)m.samples_remote[p],
        };
        const char *name = t->module_names && t->module_names[p] ? t->module_names[p] : "task";
        if (df_trace_table_add_row(sizes, name, row) < 0)
            return -ENOMEM;
    }
    static const char *const npb_col[] = {"ns_per_byte"};
    DfTraceTable *npb = df_trace_policy_add_table(pol_data, "ns_per_byte", "level", 1, npb_col);
    if (!npb)
        return -ENOMEM;
    for (int lev = 0; lev < DF_N_LEVELS; lev++)
        if (m.ns_per_byte[lev] > 0 &&
            df_trace_table_add_row(npb, df_level_name((DfLevel)lev), &m.ns_per_byte[lev]) < 0)
            return -ENOMEM;
    return 0;
}
