/* The per-frame graph as the patent's control description (docs/design.md):
 *
 *   module  width    predecessors                       body
 *   D       1        D(k-1)                             decode call (S jobs inside)
 *   F       1        D(k), F(k-1)                       filter graph (F band jobs inside)
 *   R       bands    F(k) or D(k), R(k-1, same band)    copy / convert band b
 *   O       1        R(k, all), O(k-1)                  ordered output
 *
 * F is absent without a filter.  The table is compiled once per decoder and
 * instantiated for every packet in send_packet; D, F and O are submitted
 * there, R is submitted by its producer (D or F) once it has added the
 * bytes each band reads from the workers that ran the S or F band jobs:
 * that is what lets cost-local run band b on the worker holding its rows.
 * R(k-1,b) -> R(k,b) keeps one band's swscale context to one task at a
 * time and costs nothing in practice (bands of successive frames are far
 * apart in time). */
#include "media_internal.h"

#include <libavutil/pixdesc.h>
#include <stdlib.h>
#include <string.h>

int df_graph_setup(DfDecoder *dec, DfGraph *g, DfError *err)
{
    const bool filter = dec->filter_desc != NULL;
    DfModuleDesc mods[DF_N_MODS];
    DfLink links[8];
    int n = 0, nl = 0;
    for (int m = 0; m < DF_N_MODS; m++)
        g->idx[m] = -1;
    g->idx[DF_MOD_D] = n++;
    if (filter)
        g->idx[DF_MOD_F] = n++;
    g->idx[DF_MOD_R] = n++;
    g->idx[DF_MOD_O] = n++;
    const int producer = filter ? g->idx[DF_MOD_F] : g->idx[DF_MOD_D];

    DfLink *d_preds = &links[nl];
    links[nl++] = (DfLink){g->idx[DF_MOD_D], DF_LINK_ALL, true};
    mods[g->idx[DF_MOD_D]] = (DfModuleDesc){
        .name = "D",
        .fn = df_decode_task,
        .cancel = df_decode_task_cancel,
        .preds = d_preds,
        .n_preds = 1,
        .width = 1,
    };
    if (filter) {
        DfLink *f_preds = &links[nl];
        links[nl++] = (DfLink){g->idx[DF_MOD_D], DF_LINK_ALL, false};
        links[nl++] = (DfLink){g->idx[DF_MOD_F], DF_LINK_ALL, true};
        mods[g->idx[DF_MOD_F]] = (DfModuleDesc){
            .name = "F",
            .fn = df_filter_task,
            .cancel = df_filter_task_cancel,
            .preds = f_preds,
            .n_preds = 2,
            .width = 1,
        };
    }
    DfLink *r_preds = &links[nl];
    links[nl++] = (DfLink){producer, DF_LINK_ALL, false};
    links[nl++] = (DfLink){g->idx[DF_MOD_R], DF_LINK_SAME_INDEX, true};
    mods[g->idx[DF_MOD_R]] = (DfModuleDesc){
        .name = "R",
        .fn = df_output_band,
        .cancel = df_output_band_cancel,
        .preds = r_preds,
        .n_preds = 2,
        .width = g->n_bands,
    };
    DfLink *o_preds = &links[nl];
    links[nl++] = (DfLink){g->idx[DF_MOD_R], DF_LINK_ALL, false};
    links[nl++] = (DfLink){g->idx[DF_MOD_O], DF_LINK_ALL, true};
    mods[g->idx[DF_MOD_O]] = (DfModuleDesc){
        .name = "O",
        .fn = df_output_order,
        .cancel = df_output_order_cancel,
        .preds = o_preds,
        .n_preds = 2,
        .width = 1,
    };
    int ret = df_graph_compile(dec->sched, mods, n, &g->info, err);
    if (ret < 0)
        return AVERROR(-ret);
    g->mod_s = df_sched_module_id(dec->sched, "S");
    g->mod_d = df_sched_module_id(dec->sched, "D");
    g->mod_fb = df_sched_module_id(dec->sched, "F.band");
    return 0;
}

void df_graph_teardown(DfGraph *g)
{
    df_graph_free(g->info);
    g->info = NULL;
}

int df_graph_new_instance(DfDecoder *dec, DfMediaSlot *s, DfInstance *prev)
{
    const DfGraph *g = &dec->graph;
    DfInstanceParams p = {
        .arg = s,
        .group = s->group,
        .deadline = s->deadline != DF_NO_DEADLINE ? s->deadline : 0,
        .prev = prev,
        .load = dec->load,
    };
    s->inst = df_graph_instantiate(g->info, &p);
    if (!s->inst)
        return AVERROR(ENOMEM);
    /* R waits for its producer to add its inputs and submit it. */
    for (int m = 0; m < DF_N_MODS; m++) {
        if (g->idx[m] < 0 || m == DF_MOD_R)
            continue;
        df_node_submit(df_instance_node(s->inst, g->idx[m], 0));
    }
    return 0;
}

void df_band_rows(int h, int n, int b, int align, int *y0, int *y1)
{
    if (align < 1)
        align = 1;
    int a = (int)((int64_t)h * b / n) / align * align;
    int e = b == n - 1 ? h : (int)((int64_t)h * (b + 1) / n) / align * align;
    *y0 = a;
    *y1 = e < a ? a : e;
}

uint64_t df_row_bytes(const AVFrame *f)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(f->format);
    if (!d)
        return 0;
    uint64_t sum = 0;
    for (int p = 0; p < 4 && f->data[p]; p++) {
        int ls = abs(f->linesize[p]);
        sum += (p == 1 || p == 2) ? (uint64_t)ls >> d->log2_chroma_h : (uint64_t)ls;
    }
    return sum;
}

void df_graph_add_row_inputs(DfDecoder *dec, uint64_t *acc, DfNode *node, const DfRowMap *map,
                             int h, int y0, int y1, uint64_t row_bytes, int module)
{
    const int nw = dec->n_workers;
    if (y1 <= y0 || h <= 0)
        return;
    if (map->n == 0 || map->rewritten) {
        if (map->whole >= 0 && map->whole < nw)
            df_node_add_input(node, map->whole, (uint64_t)(y1 - y0) * row_bytes,
                              map->rewritten ? dec->graph.mod_d : module, map->whole_id);
        return;
    }
    memset(acc, 0, sizeof(*acc) * (size_t)nw);
    const int n = map->n;
    /* Jobs overlapping [y0, y1): job i covers [h*i/n, h*(i+1)/n). */
    int first = (int)((int64_t)y0 * n / h);
    for (int i = first < 0 ? 0 : first; i < n; i++) {
        int j0 = (int)((int64_t)h * i / n), j1 = (int)((int64_t)h * (i + 1) / n);
        if (j0 >= y1)
            break;
        int a = j0 > y0 ? j0 : y0, e = j1 < y1 ? j1 : y1;
        int w = map->worker[i];
        if (e <= a || w < 0 || w >= nw)
            continue;
        /* A known producer gets an input of its own (the cost sums per
         * worker all the same), so that a trace ties the rows to the job
         * that wrote them; unknown ones are summed per worker. */
        if (map->node[i])
            df_node_add_input(node, w, (uint64_t)(e - a) * row_bytes, module, map->node[i]);
        else
            acc[w] += (uint64_t)(e - a) * row_bytes;
    }
    for (int w = 0; w < nw; w++)
        if (acc[w])
            df_node_add_input(node, w, acc[w], module, 0);
}

void df_graph_submit_bands(DfDecoder *dec, DfMediaSlot *s, bool prepared)
{
    const DfGraph *g = &dec->graph;
    const int r = g->idx[DF_MOD_R];
    for (int b = 0; b < g->n_bands; b++) {
        DfNode *node = df_instance_node(s->inst, r, b);
        if (prepared) {
            for (int i = 0; i < s->out.n; i++) {
                const DfFrameItem *it = &s->out.v[i];
                if (!it->frame || it->error)
                    continue;
                int y0, y1;
                df_band_rows(it->frame->height, g->n_bands, b, 1, &y0, &y1);
                df_graph_add_row_inputs(dec, dec->worker_bytes, node, &it->map, it->frame->height,
                                        y0, y1, df_row_bytes(it->frame),
                                        dec->filter ? g->mod_fb : g->mod_s);
            }
        }
        df_node_submit(node);
    }
}
