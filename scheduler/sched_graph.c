/* The parallel execution control description (patent fig. 5): a module
 * table compiled once into graph-generation information, then instantiated
 * for every input into linked, not yet submitted nodes. */
#include "sched_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct ModInfo {
    int id; /* scheduler module id */
    DfTaskFn fn, cancel;
    DfLink *preds;
    int n_preds;
    int out_type;
    uint64_t out_size;
    int width;
} ModInfo;

struct DfGraphInfo {
    DfSched *sched;
    int n;
    ModInfo *mods;
    int *order; /* topological order within an instance */
};

struct DfInstance {
    const DfGraphInfo *info;
    int *widths;
    int *first; /* index of module m's first node in nodes[] */
    int n_nodes;
    DfNode **nodes;
};

int df_graph_compile(DfSched *s, const DfModuleDesc *mods, int n, DfGraphInfo **out, DfError *err)
{
    *out = NULL;
    if (n <= 0)
        return df_set_error(err, -EINVAL, "empty module table");
    DfGraphInfo *g = calloc(1, sizeof(*g));
    int *indeg = calloc((size_t)n, sizeof(int));
    if (!g || !indeg) {
        free(g);
        free(indeg);
        return df_set_error(err, -ENOMEM, "out of memory");
    }
    g->sched = s;
    g->n = n;
    g->mods = calloc((size_t)n, sizeof(ModInfo));
    g->order = calloc((size_t)n, sizeof(int));
    int ret = 0;
    if (!g->mods || !g->order) {
        ret = df_set_error(err, -ENOMEM, "out of memory");
        goto fail;
    }
    for (int m = 0; m < n; m++) {
        const DfModuleDesc *d = &mods[m];
        ModInfo *mi = &g->mods[m];
        if (!d->fn) {
            ret = df_set_error(err, -EINVAL, "module %d (%s) has no function", m,
                               d->name ? d->name : "?");
            goto fail;
        }
        mi->id = df_sched_module_id(s, d->name ? d->name : "module");
        mi->fn = d->fn;
        mi->cancel = d->cancel;
        mi->out_type = d->out_type;
        mi->out_size = d->out_size;
        mi->width = d->width > 0 ? d->width : 1;
        mi->n_preds = d->n_preds;
        if (d->n_preds > 0) {
            mi->preds = malloc(sizeof(DfLink) * (size_t)d->n_preds);
            if (!mi->preds) {
                ret = df_set_error(err, -ENOMEM, "out of memory");
                goto fail;
            }
            memcpy(mi->preds, d->preds, sizeof(DfLink) * (size_t)d->n_preds);
        }
        for (int k = 0; k < d->n_preds; k++) {
            const DfLink *l = &d->preds[k];
            if (l->module < 0 || l->module >= n) {
                ret = df_set_error(err, -EINVAL, "module %d (%s) links to unknown module %d", m,
                                   d->name ? d->name : "?", l->module);
                goto fail;
            }
            if (l->kind == DF_LINK_SAME_INDEX) {
                int wp = mods[l->module].width > 0 ? mods[l->module].width : 1;
                if (wp != mi->width) {
                    ret = df_set_error(err, -EINVAL,
                                       "module %d (%s) links index by index to module %d of "
                                       "another width (%d vs %d)",
                                       m, d->name ? d->name : "?", l->module, mi->width, wp);
                    goto fail;
                }
            }
            if (!l->prev_instance)
                indeg[m]++;
        }
    }
    /* Kahn's algorithm: a cycle inside one instance could never run. */
    int done = 0;
    for (int m = 0; m < n; m++)
        if (indeg[m] == 0)
            g->order[done++] = m;
    for (int k = 0; k < done; k++) {
        int p = g->order[k];
        for (int m = 0; m < n; m++)
            for (int j = 0; j < g->mods[m].n_preds; j++) {
                const DfLink *l = &g->mods[m].preds[j];
                if (l->module == p && !l->prev_instance && --indeg[m] == 0)
                    g->order[done++] = m;
            }
    }
    if (done != n) {
        ret = df_set_error(err, -EINVAL, "module table has a cycle within one instance");
        goto fail;
    }
    free(indeg);
    *out = g;
    return 0;

fail:
    free(indeg);
    df_graph_free(g);
    return ret;
}

void df_graph_free(DfGraphInfo *g)
{
    if (!g)
        return;
    if (g->mods)
        for (int m = 0; m < g->n; m++)
            free(g->mods[m].preds);
    free(g->mods);
    free(g->order);
    free(g);
}

DfNode *df_instance_node(const DfInstance *inst, int module, int index)
{
    if (!inst || module < 0 || module >= inst->info->n || index < 0 ||
        index >= inst->widths[module])
        return NULL;
    return inst->nodes[inst->first[module] + index];
}

int df_instance_width(const DfInstance *inst, int module)
{
    return inst && module >= 0 && module < inst->info->n ? inst->widths[module] : 0;
}

/* Instantiation failed: the caller gets NULL and frees its arg, but nodes
 * already linked after the previous instance's still run (skipped) once
 * those finish, so they must not call back with that arg. */
static void abandon(DfInstance *inst)
{
    for (int i = 0; i < inst->n_nodes; i++)
        if (inst->nodes[i]) {
            inst->nodes[i]->cancel = NULL;
            df_node_discard(inst->nodes[i]);
            df_node_release(inst->nodes[i]);
        }
    free(inst);
}

DfInstance *df_graph_instantiate(const DfGraphInfo *g, const DfInstanceParams *p)
{
    const int n = g->n;
    int total = 0;
    int widths_tmp[64];
    int *wv = n <= 64 ? widths_tmp : malloc(sizeof(int) * (size_t)n);
    if (!wv)
        return NULL;
    for (int m = 0; m < n; m++) {
        int w = p->widths && p->widths[m] > 0 ? p->widths[m] : g->mods[m].width;
        wv[m] = w;
        total += w;
    }
    /* One block: header, widths, offsets, node pointers. */
    size_t bytes = sizeof(DfInstance) + sizeof(int) * 2 * (size_t)n + sizeof(DfNode *) * (size_t)total;
    DfInstance *inst = calloc(1, bytes);
    if (!inst) {
        if (wv != widths_tmp)
            free(wv);
        return NULL;
    }
    inst->info = g;
    inst->widths = (int *)(inst + 1);
    inst->first = inst->widths + n;
    inst->nodes = (DfNode **)(void *)(inst->first + n); /* 2n ints: stays 8-aligned */
    inst->n_nodes = total;
    memcpy(inst->widths, wv, sizeof(int) * (size_t)n);
    if (wv != widths_tmp)
        free(wv);
    for (int m = 0, k = 0; m < n; m++) {
        inst->first[m] = k;
        k += inst->widths[m];
    }
    for (int m = 0; m < n; m++) {
        const ModInfo *mi = &g->mods[m];
        for (int i = 0; i < inst->widths[m]; i++) {
            DfNodeDesc d = {
                .fn = mi->fn,
                .cancel = mi->cancel,
                .arg = p->arg,
                .module = mi->id,
                .index = i,
                .group = p->group,
                .deadline = p->deadline,
                .out_size = p->out_size && p->out_size[m] ? p->out_size[m] : mi->out_size,
                .load = p->load,
            };
            DfNode *node = df_node_new(g->sched, &d);
            if (!node) {
                abandon(inst);
                return NULL;
            }
            inst->nodes[inst->first[m] + i] = node;
        }
    }
    for (int m = 0; m < n; m++) {
        const ModInfo *mi = &g->mods[m];
        for (int k = 0; k < mi->n_preds; k++) {
            const DfLink *l = &mi->preds[k];
            const DfInstance *src = l->prev_instance ? p->prev : inst;
            if (!src)
                continue; /* the first instance has no predecessor */
            int pw = src->widths[l->module];
            for (int i = 0; i < inst->widths[m]; i++) {
                DfNode *succ = inst->nodes[inst->first[m] + i];
                for (int j = 0; j < pw; j++) {
                    if (l->kind == DF_LINK_SAME_INDEX && j != i)
                        continue;
                    DfNode *pred = src->nodes[src->first[l->module] + j];
                    if (df_node_depend(succ, pred, pred->out_size) < 0) {
                        abandon(inst);
                        return NULL;
                    }
                }
            }
        }
    }
    return inst;
}

void df_instance_submit(DfInstance *inst)
{
    const DfGraphInfo *g = inst->info;
    for (int k = 0; k < g->n; k++) {
        int m = g->order[k];
        for (int i = 0; i < inst->widths[m]; i++)
            df_node_submit(inst->nodes[inst->first[m] + i]);
    }
}

void df_instance_release(DfInstance *inst)
{
    if (!inst)
        return;
    for (int i = 0; i < inst->n_nodes; i++)
        df_node_release(inst->nodes[i]);
    free(inst);
}
