/* Chrome/Perfetto trace JSON for dfsched traces, with json-glib. */
#include "dfsched_trace.h"

#include <errno.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    FILE *f = fopen(path, "w");
    if (!f)
        return set_err(err, -errno, "cannot write trace file %s: %s", path, strerror(errno));
    fclose(f);
    return 0;
}

static const char *module_name(const DfTrace *t, int m)
{
    return m >= 0 && m < t->n_modules && t->module_names[m] ? t->module_names[m] : "task";
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
    json_builder_end_object(b);
    json_builder_end_object(b);
    json_builder_end_object(b);

    JsonGenerator *gen = json_generator_new();
    JsonNode *root = json_builder_get_root(b);
    json_generator_set_root(gen, root);
    GError *gerr = NULL;
    int ret = 0;
    if (!json_generator_to_file(gen, path, &gerr)) {
        ret = set_err(err, -EIO, "cannot write trace file %s: %s", path, gerr->message);
        g_error_free(gerr);
    }
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
    JsonArray *events = ro && json_object_has_member(ro, "traceEvents")
                            ? json_object_get_array_member(ro, "traceEvents")
                            : NULL;
    JsonObject *other = ro && json_object_has_member(ro, "otherData")
                            ? json_object_get_object_member(ro, "otherData")
                            : NULL;
    JsonObject *meta = other && json_object_has_member(other, "dfsched")
                           ? json_object_get_object_member(other, "dfsched")
                           : NULL;
    if (!events || !meta) {
        ret = set_err(err, -EINVAL, "%s is not a dfsched trace (no traceEvents/otherData.dfsched)",
                      path);
        goto out;
    }
    t->n_workers = (int)get_int(meta, "n_workers", 0);
    t->dropped = (uint64_t)get_int(meta, "dropped", 0);
    if (t->n_workers <= 0 || t->n_workers > 65536) {
        ret = set_err(err, -EINVAL, "%s: bad worker count", path);
        goto out;
    }
    JsonArray *mods = json_object_has_member(meta, "modules")
                          ? json_object_get_array_member(meta, "modules")
                          : NULL;
    for (guint m = 0; mods && m < json_array_get_length(mods); m++)
        module_index(t, json_array_get_string_element(mods, m));
    size_t nn = (size_t)t->n_workers * (size_t)t->n_workers;
    t->trcost = calloc(nn, sizeof(uint32_t));
    t->levels = calloc(nn, 1);
    const char *mats[2] = {"trcost", "levels"};
    for (int k = 0; k < 2; k++) {
        JsonArray *rows = json_object_has_member(meta, mats[k])
                              ? json_object_get_array_member(meta, mats[k])
                              : NULL;
        for (guint a = 0; rows && a < json_array_get_length(rows) && a < (guint)t->n_workers; a++) {
            JsonArray *row = json_array_get_array_element(rows, a);
            for (guint c = 0; row && c < json_array_get_length(row) && c < (guint)t->n_workers;
                 c++) {
                gint64 v = json_array_get_int_element(row, c);
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
        JsonObject *e = json_array_get_object_element(events, i);
        const char *ph = e ? json_object_get_string_member_with_default(e, "ph", "") : "";
        JsonObject *args = e && json_object_has_member(e, "args")
                               ? json_object_get_object_member(e, "args")
                               : NULL;
        if (strcmp(ph, "X") == 0 && args && json_object_has_member(args, "inputs"))
            ni += json_array_get_length(json_object_get_array_member(args, "inputs"));
    }
    t->events = calloc(n ? n : 1, sizeof(DfTraceEvent));
    t->waits = calloc(n ? n : 1, sizeof(DfTraceWait));
    t->inputs = calloc(ni ? ni : 1, sizeof(DfTraceInput));
    if (!t->events || !t->inputs || !t->waits || !t->trcost || !t->levels) {
        ret = set_err(err, -ENOMEM, "out of memory reading %s", path);
        goto out;
    }
    for (guint i = 0; i < n; i++) {
        JsonObject *e = json_array_get_object_element(events, i);
        const char *ph = e ? json_object_get_string_member_with_default(e, "ph", "") : "";
        if (strcmp(ph, "X") != 0 || !json_object_has_member(e, "args"))
            continue;
        JsonObject *args = json_object_get_object_member(e, "args");
        if (json_object_has_member(args, "waiter")) {
            DfTraceWait *wt = &t->waits[t->n_waits++];
            wt->node_id = (uint64_t)get_int(args, "waiter", 0);
            wt->group_id = (uint64_t)get_int(args, "group", 0);
            wt->worker = (int32_t)get_int(e, "tid", 0);
            wt->start_ns = get_int(args, "start_ns", 0);
            wt->end_ns = get_int(args, "end_ns", wt->start_ns);
            continue;
        }
        DfTraceEvent *ev = &t->events[t->n_events++];
        ev->node_id = (uint64_t)get_int(args, "node", 0);
        ev->module =
            module_index(t, json_object_get_string_member_with_default(args, "module", "task"));
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
                ev->end_ns +
                (int64_t)(json_object_get_double_member(args, "deadline_slack_us") * 1000.0);
        ev->first_input = (uint32_t)t->n_inputs;
        JsonArray *ins = json_object_has_member(args, "inputs")
                             ? json_object_get_array_member(args, "inputs")
                             : NULL;
        for (guint k = 0; ins && k < json_array_get_length(ins); k++) {
            JsonObject *in = json_array_get_object_element(ins, k);
            DfTraceInput *ti = &t->inputs[t->n_inputs++];
            ti->pred_id = (uint64_t)get_int(in, "pred", 0);
            ti->worker = (int32_t)get_int(in, "worker", -1);
            ti->module =
                module_index(t, json_object_get_string_member_with_default(in, "module", "task"));
            ti->bytes = (uint64_t)get_int(in, "bytes", 0);
        }
        ev->n_inputs = (uint32_t)t->n_inputs - ev->first_input;
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
