/* dfsched-viz graph: the task graph of some frames as Graphviz DOT.
 *
 * One node per task of the selected frames (id "t<node id>"), labelled
 * module[index], frame, worker and duration, filled with its worker's
 * colour, with a double border when it was stolen.  Edges come from the
 * trace's inputs, producer -> consumer, and carry the bytes read.  Their
 * size is what the placing policy weighed when the trace records its own
 * weights (DfTracePolicy.weighs_inputs; e.g. a learning policy's size(n)
 * correction of the producer module, snapshot when the trace was
 * collected), else the bytes declared to the scheduler (df_node_depend,
 * df_node_add_input); the label shows it, prefixed with the policy's name,
 * and the declared bytes too where they differ.  The width is
 *
 *     penwidth = 0.5 + 5.5 * log(1 + size) / log(1 + max size of the graph)
 *
 * log-scaled because one frame's inputs span bytes (dependencies) to
 * megabytes (frame rows), which a linear width cannot show at once.
 *
 * An input whose producer is not a task of the selection gets a grey
 * "source" node ("s<k>"): the framework declares row inputs by worker
 * without a producer id (S rows on w1), the producer may belong to another
 * frame, or the bytes came from outside the scheduler (worker -1).  Tasks
 * created from inside another task's body get a dotted "spawned" edge, and
 * the jobs of an ordered batch a dashed "after start of" edge, both without
 * bytes.  The frames are clusters; a legend cluster lists the workers. */
#include "viz.h"

#include <errno.h>
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct Edge {
    char src[48], dst[24];
    uint64_t bytes;   /* as declared */
    uint64_t weighed; /* as the policy weighed them (= bytes without) */
    int kind;         /* 0 data, 1 spawned, 2 after start of */
} Edge;

typedef struct Source {
    char key[64]; /* identity: what makes two inputs the same source */
    char label[160];
    int worker; /* -1 outside */
} Source;

typedef struct Graph {
    const DfTrace *t;
    GHashTable *sel;       /* node id -> event index + 1 (selected tasks only) */
    GHashTable *all;       /* node id -> event index + 1 (whole trace) */
    GArray *edges;         /* Edge */
    GArray *sources;       /* Source */
    GHashTable *edge_at;   /* "src dst kind" -> index + 1 into edges */
    GHashTable *source_at; /* Source.key -> index + 1 into sources */
    int64_t *frame;        /* event index -> its frame (event_frame), -1 none */
} Graph;

/* DOT double-quoted string contents: escape quote and backslash. */
static void dot_escape(char *out, size_t len, const char *s)
{
    size_t o = 0;
    for (; *s && o + 2 < len; s++) {
        if (*s == '"' || *s == '\\')
            out[o++] = '\\';
        out[o++] = *s;
    }
    out[o] = 0;
}

static void add_edge(Graph *g, const char *src, const char *dst, uint64_t bytes, uint64_t weighed,
                     int kind)
{
    /* Inputs of one task from the same source add up into one edge. */
    gchar *key = g_strdup_printf("%s %s %d", src, dst, kind);
    gpointer at = g_hash_table_lookup(g->edge_at, key);
    if (at) {
        Edge *e = &g_array_index(g->edges, Edge, GPOINTER_TO_UINT(at) - 1);
        e->bytes += bytes;
        e->weighed += weighed;
        g_free(key);
        return;
    }
    Edge e = {.bytes = bytes, .weighed = weighed, .kind = kind};
    snprintf(e.src, sizeof(e.src), "%s", src);
    snprintf(e.dst, sizeof(e.dst), "%s", dst);
    g_array_append_val(g->edges, e);
    g_hash_table_insert(g->edge_at, key, GUINT_TO_POINTER(g->edges->len));
}

/* The id of the source node with `key`, created with `label` if new. */
static void source_id(Graph *g, const char *key, const char *label, int worker, char *id,
                      size_t len)
{
    gpointer at = g_hash_table_lookup(g->source_at, key);
    guint i = GPOINTER_TO_UINT(at);
    if (!at) {
        Source s = {.worker = worker};
        snprintf(s.key, sizeof(s.key), "%s", key);
        snprintf(s.label, sizeof(s.label), "%s", label);
        g_array_append_val(g->sources, s);
        i = g->sources->len;
        g_hash_table_insert(g->source_at, g_strdup(key), GUINT_TO_POINTER(i));
    }
    snprintf(id, len, "s%u", i - 1);
}

/* Where an input's bytes come from, as a node id. */
static void input_source(Graph *g, int64_t frame, const DfTraceInput *in, char *id, size_t len)
{
    const DfTrace *t = g->t;
    gpointer v = in->pred_id ? g_hash_table_lookup(g->sel, &in->pred_id) : NULL;
    if (v) {
        snprintf(id, len, "t%llu", (unsigned long long)in->pred_id);
        return;
    }
    char key[64], label[160], mod[64];
    dot_escape(mod, sizeof(mod), df_viz_module_name(t, in->module));
    v = in->pred_id ? g_hash_table_lookup(g->all, &in->pred_id) : NULL;
    if (v) {
        const DfTraceEvent *p = &t->events[GPOINTER_TO_SIZE(v) - 1];
        snprintf(key, sizeof(key), "p%llu", (unsigned long long)in->pred_id);
        snprintf(label, sizeof(label), "%s[%d] f%lld on w%d\\n(not in the selection)", mod,
                 p->index, (long long)g->frame[GPOINTER_TO_SIZE(v) - 1], p->worker);
        source_id(g, key, label, p->worker, id, len);
    } else if (in->worker < 0 || in->worker >= t->n_workers) {
        snprintf(key, sizeof(key), "o%d", in->module);
        snprintf(label, sizeof(label), "%s\\noutside the scheduler", mod);
        source_id(g, key, label, -1, id, len);
    } else {
        /* Rows declared by worker only: one source per frame, module, worker. */
        snprintf(key, sizeof(key), "w%lld:%d:%d", (long long)frame, in->module, in->worker);
        snprintf(label, sizeof(label), "%s rows on w%d\\n(read in f%lld; producer not recorded)",
                 mod, in->worker, (long long)frame);
        source_id(g, key, label, in->worker, id, len);
    }
}

static int cmp_i64(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Resolve the default selection (the first 2 frames) and check that the
 * range holds tasks.  `tagged` tells whether the trace has frame tags. */
static int select_frames(const DfTrace *t, const DfVizGraphOpts *o, int64_t *first, int64_t *last,
                         bool *tagged, DfError *err)
{
    int64_t *tags = malloc(sizeof(int64_t) * (t->n_events ? t->n_events : 1));
    if (!tags)
        return df_viz_error(err, -ENOMEM, "out of memory");
    size_t n = 0;
    for (size_t i = 0; i < t->n_events; i++)
        if (t->events[i].tag >= 0)
            tags[n++] = t->events[i].tag;
    qsort(tags, n, sizeof(int64_t), cmp_i64);
    size_t nd = 0;
    for (size_t i = 0; i < n; i++)
        if (!nd || tags[nd - 1] != tags[i])
            tags[nd++] = tags[i];
    int ret = 0;
    *tagged = nd > 0;
    if (!nd) {
        /* Untagged traces (plain dfsched users): every task. */
        *first = *last = -1;
    } else if (o->first_frame < 0) {
        *first = tags[0];
        *last = tags[nd > 1 ? 1 : 0];
    } else {
        *first = o->first_frame;
        *last = o->last_frame;
        bool any = false;
        for (size_t i = 0; i < nd; i++)
            any |= tags[i] >= *first && tags[i] <= *last;
        if (!any)
            ret = df_viz_error(
                err, -EINVAL, "no tasks in frames %lld-%lld (the trace has %lld-%lld)",
                (long long)*first, (long long)*last, (long long)tags[0], (long long)tags[nd - 1]);
    }
    free(tags);
    return ret;
}

/* qsort has no context argument; the graph being ordered. */
static const Graph *order_graph;

/* By frame, then by index in the trace (= start time). */
static int cmp_frame_start(const void *a, const void *b)
{
    const size_t i = *(const size_t *)a, j = *(const size_t *)b;
    const int64_t x = order_graph->frame[i], y = order_graph->frame[j];
    if (x != y)
        return (x > y) - (x < y);
    return (i > j) - (i < j);
}

/* The frame of an event: its group's tag, or for an untagged task (the
 * slice jobs libavcodec runs inside D(k) are in no tagged group) the frame
 * of the task that created it, up the parent chain. */
static int64_t event_frame(const DfTrace *t, GHashTable *all, const DfTraceEvent *e)
{
    for (int depth = 0; e->tag < 0 && e->parent_id && depth < 16; depth++) {
        gpointer v = g_hash_table_lookup(all, &e->parent_id);
        if (!v)
            break;
        e = &t->events[GPOINTER_TO_SIZE(v) - 1];
    }
    return e->tag;
}

static bool selected(int64_t frame, bool tagged, int64_t first, int64_t last)
{
    return !tagged || (frame >= first && frame <= last);
}

static void write_dot(const Graph *g, FILE *f, const size_t *order, size_t n_order, bool tagged,
                      int64_t first, int64_t last)
{
    const DfTrace *t = g->t;
    fprintf(f, "// dfsched-viz graph: frames %lld-%lld\n", (long long)first, (long long)last);
    fprintf(f, "digraph dfsched {\n");
    fprintf(f, "    rankdir=LR;\n    newrank=true;\n");
    fprintf(f, "    node [shape=box, style=\"filled,rounded\", fontname=\"sans-serif\", "
               "fontsize=10];\n");
    fprintf(f, "    edge [fontname=\"sans-serif\", fontsize=8];\n");
    /* Tasks, one cluster per frame: `order` is sorted by frame, then start. */
    for (size_t k = 0; k < n_order; k++) {
        const DfTraceEvent *e = &t->events[order[k]];
        const int64_t fr = g->frame[order[k]];
        if (tagged && (k == 0 || g->frame[order[k - 1]] != fr))
            fprintf(f,
                    "    subgraph cluster_f%lld {\n        label=\"frame %lld\";\n"
                    "        style=rounded;\n        color=\"#999999\";\n",
                    (long long)fr, (long long)fr);
        char col[8], mod[64];
        df_viz_worker_hex(e->worker, col);
        dot_escape(mod, sizeof(mod), df_viz_module_name(t, e->module));
        char frame[32] = "";
        if (fr >= 0)
            snprintf(frame, sizeof(frame), " f%lld", (long long)fr);
        fprintf(f, "        t%llu [label=\"%s[%d]%s\\nw%d %.1f us%s%s\", fillcolor=\"%s\"%s];\n",
                (unsigned long long)e->node_id, mod, e->index, frame, e->worker,
                (double)(e->end_ns - e->start_ns) / 1000.0,
                (e->flags & DF_TRACE_STOLEN) ? " stolen" : "",
                (e->flags & DF_TRACE_EXPLORED) ? " (explored)" : "", col,
                (e->flags & DF_TRACE_STOLEN) ? ", peripheries=2" : "");
        if (tagged && (k + 1 == n_order || g->frame[order[k + 1]] != fr))
            fprintf(f, "    }\n");
    }
    for (guint i = 0; i < g->sources->len; i++) {
        const Source *s = &g_array_index(g->sources, Source, i);
        char col[8] = "#dddddd";
        if (s->worker >= 0)
            df_viz_worker_hex(s->worker, col);
        fprintf(f,
                "    s%u [label=\"%s\", shape=ellipse, style=\"filled,dashed\", "
                "fillcolor=\"#eeeeee\", color=\"%s\", penwidth=2];\n",
                i, s->label, col);
    }
    const bool weighs = t->policy && t->policy->weighs_inputs;
    const char *pname = t->policy ? t->policy->name : "";
    uint64_t maxb = 0;
    for (guint i = 0; i < g->edges->len; i++)
        maxb = MAX(maxb, g_array_index(g->edges, Edge, i).weighed);
    for (guint i = 0; i < g->edges->len; i++) {
        const Edge *e = &g_array_index(g->edges, Edge, i);
        if (e->kind == 1) {
            fprintf(f, "    %s -> %s [style=dotted, color=\"#888888\", arrowsize=0.5];\n", e->src,
                    e->dst);
        } else if (e->kind == 2) {
            fprintf(f, "    %s -> %s [style=dashed, color=\"#bbbbbb\", arrowsize=0.5];\n", e->src,
                    e->dst);
        } else {
            double pw = 0.5;
            if (e->weighed && maxb)
                pw += 5.5 * log1p((double)e->weighed) / log1p((double)maxb);
            char lab[96] = "", sz[32], decl[32];
            if (e->weighed)
                df_viz_fmt_bytes(sz, sizeof(sz), (double)e->weighed);
            if (e->weighed != e->bytes) {
                df_viz_fmt_bytes(decl, sizeof(decl), (double)e->bytes);
                snprintf(lab, sizeof(lab), "%s%s%s\\n(declared %s)", e->weighed ? pname : "",
                         e->weighed ? " " : "", e->weighed ? sz : "", decl);
            } else if (e->weighed) {
                snprintf(lab, sizeof(lab), "%s", sz);
            }
            fprintf(f, "    %s -> %s [penwidth=%.2f, label=\"%s\"];\n", e->src, e->dst, pw, lab);
        }
    }
    /* Legend: the workers' colours and what the strokes mean. */
    fprintf(f,
            "    subgraph cluster_legend {\n        label=\"legend\";\n        style=rounded;\n");
    for (int w = 0; w < t->n_workers && w < 64; w++) {
        char col[8];
        df_viz_worker_hex(w, col);
        fprintf(f, "        legend_w%d [label=\"worker %d\", fillcolor=\"%s\"];\n", w, w, col);
    }
    char maxs[32];
    df_viz_fmt_bytes(maxs, sizeof(maxs), (double)maxb);
    fprintf(f,
            "        legend_note [shape=note, style=filled, fillcolor=\"#ffffff\", "
            "label=\"edge: %s%s%s, producer -> consumer\\l"
            "width 0.5 + 5.5 log(1+bytes)/log(1+%s) pt\\l"
            "double border: stolen\\l"
            "dotted: spawned by; dashed: after start of\\l"
            "dashed ellipse: producer outside the selection\\l\"];\n",
            weighs ? "bytes read as policy " : "bytes read (declared)", weighs ? pname : "",
            weighs ? " weighed them" : "", maxs);
    for (int w = 0; w + 1 < t->n_workers && w < 63; w++)
        fprintf(f, "        legend_w%d -> legend_w%d [style=invis];\n", w, w + 1);
    fprintf(f, "    }\n}\n");
}

/* `dot -Tsvg` when dot is in PATH; a warning otherwise. */
static int render_svg(const char *dot_path, const char *svg_path, FILE *out, DfError *err)
{
    gchar *dot = g_find_program_in_path("dot");
    if (!dot) {
        fprintf(stderr, "dfsched-viz: warning: dot (Graphviz) is not in PATH: %s not written\n",
                svg_path);
        return 0;
    }
    const char *argv[] = {dot, "-Tsvg", dot_path, "-o", svg_path, NULL};
    gchar *serr = NULL;
    GError *gerr = NULL;
    int status = 0, ret = 0;
    if (!g_spawn_sync(NULL, (gchar **)argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL,
                      &serr, &status, &gerr)) {
        ret = df_viz_error(err, -EIO, "cannot run %s: %s", dot, gerr->message);
        g_error_free(gerr);
    } else if (!g_spawn_check_wait_status(status, NULL)) {
        ret = df_viz_error(err, -EIO, "dot -Tsvg failed writing %s: %s", svg_path,
                           serr && *serr ? g_strstrip(serr) : "(no message)");
    } else {
        fprintf(out, "dfsched-viz: wrote %s\n", svg_path);
    }
    g_free(serr);
    g_free(dot);
    return ret;
}

int df_viz_graph(const DfTrace *t, const DfVizGraphOpts *o, FILE *out, DfError *err)
{
    int64_t first = -1, last = -1;
    bool tagged = false;
    int ret = select_frames(t, o, &first, &last, &tagged, err);
    if (ret < 0)
        return ret;
    Graph g = {.t = t,
               .sel = g_hash_table_new(g_int64_hash, g_int64_equal),
               .all = g_hash_table_new(g_int64_hash, g_int64_equal),
               .edges = g_array_new(FALSE, FALSE, sizeof(Edge)),
               .sources = g_array_new(FALSE, FALSE, sizeof(Source)),
               .edge_at = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
               .source_at = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL)};
    const size_t ne = t->n_events ? t->n_events : 1;
    size_t n_tasks = 0, *order = malloc(sizeof(size_t) * ne);
    g.frame = malloc(sizeof(int64_t) * ne);
    if (!order || !g.frame) {
        ret = df_viz_error(err, -ENOMEM, "out of memory");
        goto cleanup;
    }
    /* node_id is uint64_t; g_int64_hash reads it as gint64, the same bits. */
    for (size_t i = 0; i < t->n_events; i++)
        if (t->events[i].node_id)
            g_hash_table_insert(g.all, (gpointer)&t->events[i].node_id, GSIZE_TO_POINTER(i + 1));
    for (size_t i = 0; i < t->n_events; i++) {
        const DfTraceEvent *e = &t->events[i];
        g.frame[i] = event_frame(t, g.all, e);
        if (e->node_id && selected(g.frame[i], tagged, first, last)) {
            g_hash_table_insert(g.sel, (gpointer)&e->node_id, GSIZE_TO_POINTER(i + 1));
            order[n_tasks++] = i;
        }
    }
    order_graph = &g;
    qsort(order, n_tasks, sizeof(size_t), cmp_frame_start);
    order_graph = NULL;
    for (size_t k = 0; k < n_tasks; k++) {
        const DfTraceEvent *e = &t->events[order[k]];
        char dst[24], src[48];
        snprintf(dst, sizeof(dst), "t%llu", (unsigned long long)e->node_id);
        for (uint32_t q = 0; q < e->n_inputs; q++) {
            const DfTraceInput *in = &t->inputs[e->first_input + q];
            input_source(&g, g.frame[order[k]], in, src, sizeof(src));
            add_edge(&g, src, dst, in->bytes, df_trace_input_policy_bytes(in), 0);
        }
        if (e->parent_id && g_hash_table_lookup(g.sel, &e->parent_id)) {
            snprintf(src, sizeof(src), "t%llu", (unsigned long long)e->parent_id);
            add_edge(&g, src, dst, 0, 0, 1);
        }
        if (e->start_pred_id && g_hash_table_lookup(g.sel, &e->start_pred_id)) {
            snprintf(src, sizeof(src), "t%llu", (unsigned long long)e->start_pred_id);
            add_edge(&g, src, dst, 0, 0, 2);
        }
    }
    if (n_tasks > 2000)
        fprintf(stderr,
                "dfsched-viz: warning: %zu tasks in one graph; --frames A-B selects fewer\n",
                n_tasks);

    FILE *f = fopen(o->dot_path, "w");
    if (!f) {
        ret = df_viz_error(err, -errno, "cannot write %s: %s", o->dot_path, strerror(errno));
        goto cleanup;
    }
    write_dot(&g, f, order, n_tasks, tagged, first, last);
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0 || bad) {
        ret = df_viz_error(err, -EIO, "cannot write %s: %s", o->dot_path, strerror(errno));
        goto cleanup;
    }
    if (tagged)
        fprintf(out, "dfsched-viz: wrote %s: frames %lld-%lld, %zu tasks, %u edges\n", o->dot_path,
                (long long)first, (long long)last, n_tasks, g.edges->len);
    else
        fprintf(out, "dfsched-viz: wrote %s: no frame tags, all %zu tasks, %u edges\n", o->dot_path,
                n_tasks, g.edges->len);
    if (o->svg_path)
        ret = render_svg(o->dot_path, o->svg_path, out, err);
cleanup:
    g_hash_table_destroy(g.sel);
    g_hash_table_destroy(g.all);
    g_array_free(g.edges, TRUE);
    g_array_free(g.sources, TRUE);
    g_hash_table_destroy(g.edge_at);
    g_hash_table_destroy(g.source_at);
    free(order);
    free(g.frame);
    return ret;
}
