/* Chrome/Perfetto trace JSON for dfsched traces, with json-glib. */
#include "dfsched_trace.h"

#include <errno.h>
#include <fcntl.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int set_err(DfError *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int set_err(DfError *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
        va_end(ap);
    }
    return code;
}

int df_trace_check_path(const char *path, DfError *err)
{
    if (!path || !*path)
        return set_err(err, -EINVAL, "empty trace file name");
    struct stat st;
    int fd;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return set_err(err, -EISDIR, "cannot write trace file %s: %s", path, strerror(EISDIR));
        /* Not truncated: a stream that never starts keeps the old trace. */
        fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    } else {
        /* Created and removed: no empty trace is left when no stream runs. */
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY | O_CLOEXEC, 0644);
        if (fd >= 0)
            unlink(path);
    }
    if (fd < 0)
        return set_err(err, -errno, "cannot write trace file %s: %s", path, strerror(errno));
    close(fd);
    return 0;
}

static const char *module_name(const DfTrace *t, int m)
{
    return m >= 0 && m < t->n_modules && t->module_names[m] ? t->module_names[m] : "task";
}

/* A policy's number: counts as integers (readable, and exact up to 2^53
 * either way), the rest as doubles. */
static void add_number(JsonBuilder *b, double v)
{
    if (v == (double)(gint64)v && v > -9007199254740992.0 && v < 9007199254740992.0)
        json_builder_add_int_value(b, (gint64)v);
    else
        json_builder_add_double_value(b, v);
}

/* otherData.dfsched.policy: the placing policy's name and its own data
 * (DfTracePolicy), written without knowing what it means. */
static void write_policy(JsonBuilder *b, const DfTracePolicy *p)
{
    json_builder_set_member_name(b, "policy");
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "name");
    json_builder_add_string_value(b, p->name);
    json_builder_set_member_name(b, "weighs_inputs");
    json_builder_add_boolean_value(b, p->weighs_inputs);
    json_builder_set_member_name(b, "values");
    json_builder_begin_object(b);
    for (int i = 0; i < p->n_values; i++) {
        json_builder_set_member_name(b, p->values[i].key);
        add_number(b, p->values[i].value);
    }
    json_builder_end_object(b);
    json_builder_set_member_name(b, "tables");
    json_builder_begin_array(b);
    for (int i = 0; i < p->n_tables; i++) {
        const DfTraceTable *tab = p->tables[i];
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "name");
        json_builder_add_string_value(b, tab->name);
        json_builder_set_member_name(b, "label");
        json_builder_add_string_value(b, tab->label);
        json_builder_set_member_name(b, "columns");
        json_builder_begin_array(b);
        for (int c = 0; c < tab->n_cols; c++)
            json_builder_add_string_value(b, tab->cols[c]);
        json_builder_end_array(b);
        json_builder_set_member_name(b, "rows");
        json_builder_begin_array(b);
        for (size_t r = 0; r < tab->n_rows; r++) {
            json_builder_begin_object(b);
            json_builder_set_member_name(b, "label");
            json_builder_add_string_value(b, tab->row_labels[r]);
            json_builder_set_member_name(b, "cells");
            json_builder_begin_array(b);
            for (int c = 0; c < tab->n_cols; c++)
                add_number(b, df_trace_table_cell(tab, r, c));
            json_builder_end_array(b);
            json_builder_end_object(b);
        }
        json_builder_end_array(b);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
}

int df_trace_write_json(const DfTrace *t, const char *path, DfError *err)
{
    int64_t base = t->n_events ? t->events[0].start_ns : 0;
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "displayTimeUnit");
    json_builder_add_string_value(b, "ns");
    json_builder_set_member_name(b, "traceEvents");
    json_builder_begin_array(b);
    for (int w = 0; w < t->n_workers; w++) {
        char name[32];
        snprintf(name, sizeof(name), "worker %d", w);
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "name");
        json_builder_add_string_value(b, "thread_name");
        json_builder_set_member_name(b, "ph");
        json_builder_add_string_value(b, "M");
        json_builder_set_member_name(b, "pid");
        json_builder_add_int_value(b, 1);
        json_builder_set_member_name(b, "tid");
        json_builder_add_int_value(b, w);
        json_builder_set_member_name(b, "args");
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "name");
        json_builder_add_string_value(b, name);
        json_builder_end_object(b);
        json_builder_end_object(b);
    }
    uint64_t *from = calloc((size_t)(t->n_workers > 0 ? t->n_workers : 1), sizeof(uint64_t));
    if (!from) {
        g_object_unref(b);
        return set_err(err, -ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < t->n_events; i++) {
        const DfTraceEvent *e = &t->events[i];
        const char *mod = module_name(t, e->module);
        char name[96];
        if (e->tag >= 0)
            snprintf(name, sizeof(name), "%s[%d] f%lld", mod, e->index, (long long)e->tag);
        else
            snprintf(name, sizeof(name), "%s[%d]", mod, e->index);
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "name");
        json_builder_add_string_value(b, name);
        json_builder_set_member_name(b, "cat");
        json_builder_add_string_value(b, mod);
        json_builder_set_member_name(b, "ph");
        json_builder_add_string_value(b, "X");
        json_builder_set_member_name(b, "pid");
        json_builder_add_int_value(b, 1);
        json_builder_set_member_name(b, "tid");
        json_builder_add_int_value(b, e->worker);
        json_builder_set_member_name(b, "ts");
        json_builder_add_double_value(b, (double)(e->start_ns - base) / 1000.0);
        json_builder_set_member_name(b, "dur");
        json_builder_add_double_value(b, (double)(e->end_ns - e->start_ns) / 1000.0);
        json_builder_set_member_name(b, "args");
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "node");
        json_builder_add_int_value(b, (gint64)e->node_id);
        json_builder_set_member_name(b, "module");
        json_builder_add_string_value(b, mod);
        json_builder_set_member_name(b, "index");
        json_builder_add_int_value(b, e->index);
        json_builder_set_member_name(b, "frame");
        json_builder_add_int_value(b, e->tag);
        json_builder_set_member_name(b, "start_ns");
        json_builder_add_int_value(b, e->start_ns - base);
        json_builder_set_member_name(b, "end_ns");
        json_builder_add_int_value(b, e->end_ns - base);
        json_builder_set_member_name(b, "group");
        json_builder_add_int_value(b, (gint64)e->group_id);
        json_builder_set_member_name(b, "created_ns");
        json_builder_add_int_value(b, e->created_ns ? e->created_ns - base : 0);
        json_builder_set_member_name(b, "ready_ns");
        json_builder_add_int_value(b, e->ready_ns ? e->ready_ns - base : 0);
        if (e->cpu_ns > 0) {
            json_builder_set_member_name(b, "cpu_ns");
            json_builder_add_int_value(b, e->cpu_ns);
        }
        if (e->parent_id) {
            json_builder_set_member_name(b, "parent");
            json_builder_add_int_value(b, (gint64)e->parent_id);
        }
        if (e->start_pred_id) {
            json_builder_set_member_name(b, "after_start_of");
            json_builder_add_int_value(b, (gint64)e->start_pred_id);
        }
        json_builder_set_member_name(b, "stolen");
        json_builder_add_boolean_value(b, (e->flags & DF_TRACE_STOLEN) != 0);
        json_builder_set_member_name(b, "explored");
        json_builder_add_boolean_value(b, (e->flags & DF_TRACE_EXPLORED) != 0);
        json_builder_set_member_name(b, "skipped");
        json_builder_add_boolean_value(b, (e->flags & DF_TRACE_SKIPPED) != 0);
        if (e->deadline != DF_NO_DEADLINE) {
            json_builder_set_member_name(b, "deadline_slack_us");
            json_builder_add_double_value(b, (double)(e->deadline - e->end_ns) / 1000.0);
        }
        memset(from, 0, sizeof(uint64_t) * (size_t)t->n_workers);
        uint64_t local = 0, remote = 0;
        json_builder_set_member_name(b, "inputs");
        json_builder_begin_array(b);
        for (uint32_t k = 0; k < e->n_inputs; k++) {
            const DfTraceInput *in = &t->inputs[e->first_input + k];
            json_builder_begin_object(b);
            json_builder_set_member_name(b, "pred");
            json_builder_add_int_value(b, (gint64)in->pred_id);
            json_builder_set_member_name(b, "worker");
            json_builder_add_int_value(b, in->worker);
            json_builder_set_member_name(b, "module");
            json_builder_add_string_value(b, module_name(t, in->module));
            json_builder_set_member_name(b, "bytes");
            json_builder_add_int_value(b, (gint64)in->bytes);
            if (t->policy && t->policy->weighs_inputs) {
                json_builder_set_member_name(b, "policy_bytes");
                json_builder_add_int_value(b, (gint64)df_trace_input_policy_bytes(in));
            }
            json_builder_end_object(b);
            if (in->worker >= 0 && in->worker < t->n_workers) {
                from[in->worker] += in->bytes;
                if (in->worker == e->worker)
                    local += in->bytes;
                else
                    remote += in->bytes;
            }
        }
        json_builder_end_array(b);
        json_builder_set_member_name(b, "bytes_from");
        json_builder_begin_object(b);
        for (int w = 0; w < t->n_workers; w++)
            if (from[w]) {
                char key[16];
                snprintf(key, sizeof(key), "w%d", w);
                json_builder_set_member_name(b, key);
                json_builder_add_int_value(b, (gint64)from[w]);
            }
        json_builder_end_object(b);
        json_builder_set_member_name(b, "bytes_local");
        json_builder_add_int_value(b, (gint64)local);
        json_builder_set_member_name(b, "bytes_remote");
        json_builder_add_int_value(b, (gint64)remote);
        json_builder_end_object(b);
        json_builder_end_object(b);
    }
    free(from);
    for (size_t i = 0; i < t->n_waits; i++) {
        const DfTraceWait *wt = &t->waits[i];
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "name");
        json_builder_add_string_value(b, "wait");
        json_builder_set_member_name(b, "cat");
        json_builder_add_string_value(b, "wait");
        json_builder_set_member_name(b, "ph");
        json_builder_add_string_value(b, "X");
        json_builder_set_member_name(b, "pid");
        json_builder_add_int_value(b, 1);
        json_builder_set_member_name(b, "tid");
        json_builder_add_int_value(b, wt->worker);
        json_builder_set_member_name(b, "ts");
        json_builder_add_double_value(b, (double)(wt->start_ns - base) / 1000.0);
        json_builder_set_member_name(b, "dur");
        json_builder_add_double_value(b, (double)(wt->end_ns - wt->start_ns) / 1000.0);
        json_builder_set_member_name(b, "args");
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "waiter");
        json_builder_add_int_value(b, (gint64)wt->node_id);
        json_builder_set_member_name(b, "group");
        json_builder_add_int_value(b, (gint64)wt->group_id);
        json_builder_set_member_name(b, "start_ns");
        json_builder_add_int_value(b, wt->start_ns - base);
        json_builder_set_member_name(b, "end_ns");
        json_builder_add_int_value(b, wt->end_ns - base);
        json_builder_end_object(b);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);

    json_builder_set_member_name(b, "otherData");
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "dfsched");
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "version");
    json_builder_add_int_value(b, 1);
    json_builder_set_member_name(b, "n_workers");
    json_builder_add_int_value(b, t->n_workers);
    json_builder_set_member_name(b, "dropped");
    json_builder_add_int_value(b, (gint64)t->dropped);
    json_builder_set_member_name(b, "modules");
    json_builder_begin_array(b);
    for (int m = 0; m < t->n_modules; m++)
        json_builder_add_string_value(b, module_name(t, m));
    json_builder_end_array(b);
    const char *mats[2] = {"trcost", "levels"};
    for (int k = 0; k < 2; k++) {
        json_builder_set_member_name(b, mats[k]);
        json_builder_begin_array(b);
        for (int a = 0; a < t->n_workers; a++) {
            json_builder_begin_array(b);
            for (int c = 0; c < t->n_workers; c++) {
                size_t i = (size_t)a * (size_t)t->n_workers + (size_t)c;
                json_builder_add_int_value(b, k == 0 ? (t->trcost ? t->trcost[i] : 0)
                                                     : (t->levels ? t->levels[i] : 0));
            }
            json_builder_end_array(b);
        }
        json_builder_end_array(b);
    }
    if (t->policy)
        write_policy(b, t->policy);
    json_builder_end_object(b);
    json_builder_end_object(b);
    json_builder_end_object(b);

    JsonGenerator *gen = json_generator_new();
    JsonNode *root = json_builder_get_root(b);
    json_generator_set_root(gen, root);
    /* Written in place, not through json_generator_to_file(), which
     * renames a new file over the path: a device (/dev/stdout) or a
     * symlink would be replaced by a regular file, and a full disk (or
     * /dev/full) not reported. */
    gsize len = 0;
    gchar *text = json_generator_to_data(gen, &len);
    int ret = 0;
    errno = 0;
    FILE *fp = fopen(path, "w");
    if (!fp || fwrite(text, 1, len, fp) != len || fflush(fp) != 0 || ferror(fp)) {
        const int e = errno ? errno : EIO;
        ret = set_err(err, -e, "cannot write trace file %s: %s", path, g_strerror(e));
    }
    if (fp && fclose(fp) != 0 && ret == 0)
        ret = set_err(err, -errno, "cannot write trace file %s: %s", path, g_strerror(errno));
    g_free(text);
    json_node_unref(root);
    g_object_unref(gen);
    g_object_unref(b);
    return ret;
}

int df_sched_trace_write(DfSched *s, const char *path, DfError *err)
{
    DfTrace t;
    int ret = df_sched_trace_collect(s, &t);
    if (ret < 0)
        return set_err(err, ret, "cannot collect the trace: out of memory");
    ret = df_trace_write_json(&t, path, err);
    df_trace_free(&t);
    return ret;
}

static int module_index(DfTrace *t, const char *name)
{
    for (int m = 0; m < t->n_modules; m++)
        if (strcmp(t->module_names[m], name) == 0)
            return m;
    char **grown = realloc(t->module_names, sizeof(char *) * (size_t)(t->n_modules + 1));
    if (!grown)
        return -1;
    t->module_names = grown;
    t->module_names[t->n_modules] = strdup(name);
    return t->n_modules++;
}

static gint64 get_int(JsonObject *o, const char *k, gint64 dflt)
{
    JsonNode *n = json_object_get_member(o, k);
    return n && JSON_NODE_HOLDS_VALUE(n) ? json_node_get_int(n) : dflt;
}

static gboolean get_bool(JsonObject *o, const char *k)
{
    JsonNode *n = json_object_get_member(o, k);
    return n && JSON_NODE_HOLDS_VALUE(n) && json_node_get_boolean(n);
}

/* The getters below return NULL or the default for a member (or element)
 * of another type than asked: a file is user input, and json-glib's own
 * getters answer a wrong type with a critical warning and NULL strings
 * that strcmp() would crash on. */
static double get_double(JsonObject *o, const char *k, double dflt)
{
    JsonNode *n = json_object_get_member(o, k);
    return n && JSON_NODE_HOLDS_VALUE(n) ? json_node_get_double(n) : dflt;
}

static const char *get_string(JsonObject *o, const char *k, const char *dflt)
{
    JsonNode *n = o ? json_object_get_member(o, k) : NULL;
    const char *v = n && JSON_NODE_HOLDS_VALUE(n) ? json_node_get_string(n) : NULL;
    return v ? v : dflt;
}

static JsonArray *get_array(JsonObject *o, const char *k)
{
    JsonNode *n = o ? json_object_get_member(o, k) : NULL;
    return n && JSON_NODE_HOLDS_ARRAY(n) ? json_node_get_array(n) : NULL;
}

static JsonObject *get_object(JsonObject *o, const char *k)
{
    JsonNode *n = o ? json_object_get_member(o, k) : NULL;
    return n && JSON_NODE_HOLDS_OBJECT(n) ? json_node_get_object(n) : NULL;
}

static JsonObject *elem_object(JsonArray *a, guint i)
{
    JsonNode *n = json_array_get_element(a, i);
    return n && JSON_NODE_HOLDS_OBJECT(n) ? json_node_get_object(n) : NULL;
}

static JsonArray *elem_array(JsonArray *a, guint i)
{
    JsonNode *n = json_array_get_element(a, i);
    return n && JSON_NODE_HOLDS_ARRAY(n) ? json_node_get_array(n) : NULL;
}

static gint64 elem_int(JsonArray *a, guint i)
{
    JsonNode *n = json_array_get_element(a, i);
    return n && JSON_NODE_HOLDS_VALUE(n) ? json_node_get_int(n) : 0;
}

static const char *elem_string(JsonArray *a, guint i, const char *dflt)
{
    JsonNode *n = json_array_get_element(a, i);
    const char *v = n && JSON_NODE_HOLDS_VALUE(n) ? json_node_get_string(n) : NULL;
    return v ? v : dflt;
}

static double elem_double(JsonArray *a, guint i)
{
    JsonNode *n = json_array_get_element(a, i);
    return n && JSON_NODE_HOLDS_VALUE(n) ? json_node_get_double(n) : 0;
}

/* otherData.dfsched.policy, when the trace has it. */
static int read_policy(DfTrace *t, JsonObject *meta)
{
    JsonObject *po = get_object(meta, "policy");
    if (!po)
        return 0;
    if (df_trace_set_policy(t, get_string(po, "name", "")) < 0)
        return -ENOMEM;
    DfTracePolicy *p = t->policy;
    p->weighs_inputs = get_bool(po, "weighs_inputs");
    JsonObject *vals = get_object(po, "values");
    GList *keys = vals ? json_object_get_members(vals) : NULL;
    int ret = 0;
    for (GList *k = keys; k && ret == 0; k = k->next)
        ret = df_trace_policy_add_value(p, k->data, get_double(vals, k->data, 0));
    g_list_free(keys);
    JsonArray *tabs = get_array(po, "tables");
    for (guint i = 0; tabs && i < json_array_get_length(tabs) && ret == 0; i++) {
        JsonObject *to = elem_object(tabs, i);
        JsonArray *cols = get_array(to, "columns");
        const guint nc = cols ? json_array_get_length(cols) : 0;
        if (!to || nc > 4096)
            continue;
        const char **names = calloc(nc ? nc : 1, sizeof(char *));
        double *cells = calloc(nc ? nc : 1, sizeof(double));
        DfTraceTable *tab = NULL;
        if (names && cells) {
            for (guint c = 0; c < nc; c++)
                names[c] = elem_string(cols, c, "");
            tab = df_trace_policy_add_table(p, get_string(to, "name", ""),
                                            get_string(to, "label", ""), (int)nc, names);
        }
        ret = tab ? 0 : -ENOMEM;
        JsonArray *rows = get_array(to, "rows");
        for (guint r = 0; tab && rows && r < json_array_get_length(rows) && ret == 0; r++) {
            JsonObject *ro = elem_object(rows, r);
            JsonArray *rc = get_array(ro, "cells");
            for (guint c = 0; c < nc; c++)
                cells[c] = rc && c < json_array_get_length(rc) ? elem_double(rc, c) : 0;
            ret = df_trace_table_add_row(tab, get_string(ro, "label", ""), cells);
        }
        free(names);
        free(cells);
    }
    return ret;
}

/* Any clock's reading (2^61 ns is 73 years): readers take differences
 * of two times, which then cannot overflow. */
static bool time_ok(int64_t ns)
{
    return ns >= -((int64_t)1 << 61) && ns <= (int64_t)1 << 61;
}

int df_trace_read_json(const char *path, DfTrace *t, DfError *err)
{
    memset(t, 0, sizeof(*t));
    JsonParser *p = json_parser_new();
    GError *gerr = NULL;
    int ret = 0;
    if (!json_parser_load_from_file(p, path, &gerr)) {
        ret = set_err(err, -EINVAL, "cannot read trace %s: %s", path, gerr->message);
        g_error_free(gerr);
        goto out;
    }
    JsonNode *root = json_parser_get_root(p);
    JsonObject *ro = root && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
    JsonArray *events = get_array(ro, "traceEvents");
    JsonObject *meta = get_object(get_object(ro, "otherData"), "dfsched");
    if (!events || !meta) {
        ret = set_err(err, -EINVAL, "%s is not a dfsched trace (no traceEvents/otherData.dfsched)",
                      path);
        goto out;
    }
    /* Range-checked before the cast: 2^32 + 2 must not read as 2. */
    const gint64 n_workers = get_int(meta, "n_workers", 0);
    t->n_workers = n_workers > 0 && n_workers <= 65536 ? (int)n_workers : 0;
    t->dropped = (uint64_t)get_int(meta, "dropped", 0);
    if (t->n_workers <= 0 || t->n_workers > 65536) {
        ret = set_err(err, -EINVAL, "%s: bad worker count", path);
        goto out;
    }
    JsonArray *mods = get_array(meta, "modules");
    for (guint m = 0; mods && m < json_array_get_length(mods); m++)
        module_index(t, elem_string(mods, m, "task"));
    if (read_policy(t, meta) < 0) {
        ret = set_err(err, -ENOMEM, "out of memory reading %s", path);
        goto out;
    }
    size_t nn = (size_t)t->n_workers * (size_t)t->n_workers;
    t->trcost = calloc(nn, sizeof(uint32_t));
    t->levels = calloc(nn, 1);
    if (!t->trcost || !t->levels) {
        ret = set_err(err, -ENOMEM, "out of memory reading %s", path);
        goto out;
    }
    const char *mats[2] = {"trcost", "levels"};
    for (int k = 0; k < 2; k++) {
        JsonArray *rows = get_array(meta, mats[k]);
        for (guint a = 0; rows && a < json_array_get_length(rows) && a < (guint)t->n_workers; a++) {
            JsonArray *row = elem_array(rows, a);
            for (guint c = 0; row && c < json_array_get_length(row) && c < (guint)t->n_workers;
                 c++) {
                gint64 v = elem_int(row, c);
                /* A level indexes per-level tables (dfsim's): one out of
                 * range would read past them. */
                if (v < 0 || (k == 1 && v >= DF_N_LEVELS) || (k == 0 && v > UINT32_MAX)) {
                    ret = set_err(err, -EINVAL,
                                  "%s: %s[%u][%u] = %" G_GINT64_FORMAT " is out of range", path,
                                  mats[k], a, c, v);
                    goto out;
                }
                if (k == 0)
                    t->trcost[a * (size_t)t->n_workers + c] = (uint32_t)v;
                else
                    t->levels[a * (size_t)t->n_workers + c] = (uint8_t)v;
            }
        }
    }
    guint n = json_array_get_length(events);
    size_t ni = 0;
    for (guint i = 0; i < n; i++) {
        JsonObject *e = elem_object(events, i);
        JsonArray *ins = get_array(get_object(e, "args"), "inputs");
        if (strcmp(get_string(e, "ph", ""), "X") == 0 && ins)
            ni += json_array_get_length(ins);
    }
    t->events = calloc(n ? n : 1, sizeof(DfTraceEvent));
    t->waits = calloc(n ? n : 1, sizeof(DfTraceWait));
    t->inputs = calloc(ni ? ni : 1, sizeof(DfTraceInput));
    if (!t->events || !t->inputs || !t->waits || !t->trcost || !t->levels) {
        ret = set_err(err, -ENOMEM, "out of memory reading %s", path);
        goto out;
    }
    for (guint i = 0; i < n; i++) {
        JsonObject *e = elem_object(events, i);
        JsonObject *args = get_object(e, "args");
        if (strcmp(get_string(e, "ph", ""), "X") != 0 || !args)
            continue;
        if (json_object_has_member(args, "waiter")) {
            DfTraceWait *wt = &t->waits[t->n_waits++];
            wt->node_id = (uint64_t)get_int(args, "waiter", 0);
            wt->group_id = (uint64_t)get_int(args, "group", 0);
            wt->worker = (int32_t)get_int(e, "tid", 0);
            wt->start_ns = get_int(args, "start_ns", 0);
            wt->end_ns = get_int(args, "end_ns", wt->start_ns);
            if (!time_ok(wt->start_ns) || !time_ok(wt->end_ns)) {
                ret = set_err(err, -EINVAL, "%s: event %u: a time beyond +-2^61 ns", path, i);
                goto out;
            }
            continue;
        }
        DfTraceEvent *ev = &t->events[t->n_events++];
        ev->node_id = (uint64_t)get_int(args, "node", 0);
        ev->module = module_index(t, get_string(args, "module", "task"));
        ev->index = (int32_t)get_int(args, "index", 0);
        ev->tag = get_int(args, "frame", -1);
        ev->worker = (int32_t)get_int(e, "tid", 0);
        ev->start_ns = get_int(args, "start_ns", 0);
        ev->end_ns = get_int(args, "end_ns", ev->start_ns);
        ev->created_ns = get_int(args, "created_ns", ev->start_ns);
        ev->ready_ns = get_int(args, "ready_ns", ev->start_ns);
        ev->cpu_ns = get_int(args, "cpu_ns", 0);
        ev->parent_id = (uint64_t)get_int(args, "parent", 0);
        ev->group_id = (uint64_t)get_int(args, "group", 0);
        ev->start_pred_id = (uint64_t)get_int(args, "after_start_of", 0);
        ev->flags = (get_bool(args, "stolen") ? DF_TRACE_STOLEN : 0) |
                    (get_bool(args, "explored") ? DF_TRACE_EXPLORED : 0) |
                    (get_bool(args, "skipped") ? DF_TRACE_SKIPPED : 0);
        ev->deadline = DF_NO_DEADLINE;
        if (json_object_has_member(args, "deadline_slack_us"))
            ev->deadline =
                ev->end_ns + (int64_t)(get_double(args, "deadline_slack_us", 0) * 1000.0);
        ev->first_input = (uint32_t)t->n_inputs;
        JsonArray *ins = get_array(args, "inputs");
        for (guint k = 0; ins && k < json_array_get_length(ins); k++) {
            JsonObject *in = elem_object(ins, k);
            if (!in)
                continue;
            DfTraceInput *ti = &t->inputs[t->n_inputs++];
            ti->pred_id = (uint64_t)get_int(in, "pred", 0);
            ti->worker = (int32_t)get_int(in, "worker", -1);
            ti->module = module_index(t, get_string(in, "module", "task"));
            ti->bytes = (uint64_t)get_int(in, "bytes", 0);
            /* Absent: the policy placed by the declared size. */
            ti->policy_bytes = (uint64_t)get_int(in, "policy_bytes", (gint64)ti->bytes);
        }
        ev->n_inputs = (uint32_t)t->n_inputs - ev->first_input;
        if (!time_ok(ev->start_ns) || !time_ok(ev->end_ns) || !time_ok(ev->created_ns) ||
            !time_ok(ev->ready_ns)) {
            ret = set_err(err, -EINVAL, "%s: event %u: a time beyond +-2^61 ns", path, i);
            goto out;
        }
        if (ev->worker < 0 || ev->worker >= t->n_workers) {
            ret = set_err(err, -EINVAL, "%s: event on worker %d of %d", path, ev->worker,
                          t->n_workers);
            goto out;
        }
    }
out:
    g_object_unref(p);
    if (ret < 0)
        df_trace_free(t);
    return ret;
}
