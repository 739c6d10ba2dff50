/* Output helpers shared by the dfbench subcommands. */
#include "report.h"

#include "dfsched.h"

#include <errno.h>
#include <hwloc.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

/* ----------------------------------------------------------- summaries */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

DfSummary df_summarize(const double *v, int n)
{
    DfSummary s = {.n = 0, .min = NAN, .median = NAN, .max = NAN};
    double *sorted = n > 0 ? malloc(sizeof(double) * (size_t)n) : NULL;
    if (!sorted)
        return s;
    for (int i = 0; i < n; i++)
        if (!isnan(v[i]))
            sorted[s.n++] = v[i];
    if (s.n > 0) {
        qsort(sorted, (size_t)s.n, sizeof(double), cmp_double);
        s.min = sorted[0];
        s.max = sorted[s.n - 1];
        s.median = s.n % 2 ? sorted[s.n / 2] : (sorted[s.n / 2 - 1] + sorted[s.n / 2]) / 2;
    }
    free(sorted);
    return s;
}

/* ------------------------------------------------------------ progress */

void df_progress_begin(DfProgress *p, int total)
{
    p->total = total;
    p->done = 0;
    p->tty = isatty(STDERR_FILENO);
    p->start_ns = df_now_ns();
}

void df_progress_step(DfProgress *p, const char *fmt, ...)
{
    if (!p->tty)
        return;
    char what[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    const int width = 24;
    int filled = p->total ? p->done * width / p->total : width;
    char bar[32];
    for (int i = 0; i < width; i++)
        bar[i] = i < filled ? '#' : '.';
    bar[width] = '\0';
    double elapsed = (double)(df_now_ns() - p->start_ns) / 1e9;
    double eta = p->done ? elapsed * (p->total - p->done) / p->done : NAN;
    char eta_s[32] = "";
    if (!isnan(eta))
        snprintf(eta_s, sizeof(eta_s), ", ~%.0f s left", eta);
    /* \033[K: clear what a longer previous line left behind. */
    fprintf(stderr, "\r[%s] %d/%d%s  %s\033[K", bar, p->done, p->total, eta_s, what);
    fflush(stderr);
    p->done++;
}

void df_progress_end(DfProgress *p)
{
    if (!p->tty)
        return;
    fprintf(stderr, "\r\033[K");
    fflush(stderr);
}

/* -------------------------------------------------------------- tables */

struct DfTable {
    int n_cols;
    char *align;
    GPtrArray *rows; /* of char ** (g_strfreev), NULL for a rule */
};

static char **copy_cells(int n, const char *const *cells)
{
    char **row = g_new0(char *, (gsize)n + 1);
    for (int i = 0; i < n; i++)
        row[i] = g_strdup(cells[i] ? cells[i] : "");
    return row;
}

static void free_row(gpointer row)
{
    g_strfreev(row);
}

DfTable *df_table_new(int n_cols, const char *const *headers, const char *align)
{
    DfTable *t = g_new0(DfTable, 1);
    t->n_cols = n_cols;
    t->align = g_strdup(align);
    t->rows = g_ptr_array_new_with_free_func(free_row);
    g_ptr_array_add(t->rows, copy_cells(n_cols, headers));
    g_ptr_array_add(t->rows, NULL);
    return t;
}

void df_table_row(DfTable *t, const char *const *cells)
{
    g_ptr_array_add(t->rows, copy_cells(t->n_cols, cells));
}

void df_table_rule(DfTable *t)
{
    g_ptr_array_add(t->rows, NULL);
}

void df_table_print(const DfTable *t, FILE *out)
{
    int *w = g_new0(int, (gsize)t->n_cols);
    for (guint r = 0; r < t->rows->len; r++) {
        char **row = g_ptr_array_index(t->rows, r);
        for (int c = 0; row && c < t->n_cols; c++) {
            int len = (int)g_utf8_strlen(row[c], -1);
            if (len > w[c])
                w[c] = len;
        }
    }
    int total = 0;
    for (int c = 0; c < t->n_cols; c++)
        total += w[c] + (c ? 2 : 0);
    for (guint r = 0; r < t->rows->len; r++) {
        char **row = g_ptr_array_index(t->rows, r);
        if (!row) {
            for (int i = 0; i < total; i++)
                fputc('-', out);
            fputc('\n', out);
            continue;
        }
        GString *line = g_string_new(NULL);
        for (int c = 0; c < t->n_cols; c++) {
            int pad = w[c] - (int)g_utf8_strlen(row[c], -1);
            bool right = t->align && t->align[c] == 'r';
            if (c)
                g_string_append(line, "  ");
            if (right)
                for (int i = 0; i < pad; i++)
                    g_string_append_c(line, ' ');
            g_string_append(line, row[c]);
            if (!right && c + 1 < t->n_cols)
                for (int i = 0; i < pad; i++)
                    g_string_append_c(line, ' ');
        }
        fprintf(out, "%s\n", line->str);
        g_string_free(line, TRUE);
    }
    g_free(w);
}

void df_table_free(DfTable *t)
{
    if (!t)
        return;
    g_ptr_array_free(t->rows, TRUE);
    g_free(t->align);
    g_free(t);
}

void df_fmt_num(char *buf, size_t len, double v, int decimals)
{
    if (isnan(v))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.*f", decimals, v);
}

/* ----------------------------------------------------------------- CSV */

int df_csv_open(DfCsv *c, const char *path, int n_cols, const char *const *headers)
{
    c->f = fopen(path, "w");
    c->n_cols = n_cols;
    if (!c->f)
        return -errno;
    df_csv_row(c, headers);
    return 0;
}

void df_csv_row(DfCsv *c, const char *const *cells)
{
    for (int i = 0; i < c->n_cols; i++) {
        const char *s = cells[i] ? cells[i] : "";
        if (i)
            fputc(',', c->f);
        if (strpbrk(s, ",\"\n\r")) {
            fputc('"', c->f);
            for (; *s; s++) {
                if (*s == '"')
                    fputc('"', c->f);
                fputc(*s, c->f);
            }
            fputc('"', c->f);
        } else {
            fputs(s, c->f);
        }
    }
    fputs("\r\n", c->f);
}

int df_csv_close(DfCsv *c)
{
    if (!c->f)
        return 0;
    int ret = ferror(c->f) ? -EIO : 0;
    if (fclose(c->f) != 0 && ret == 0)
        ret = -errno;
    c->f = NULL;
    return ret;
}

/* ---------------------------------------------------------------- JSON */

void df_json_double(JsonBuilder *b, const char *name, double v)
{
    json_builder_set_member_name(b, name);
    if (isnan(v) || isinf(v))
        json_builder_add_null_value(b);
    else
        json_builder_add_double_value(b, v);
}

void df_json_double_array(JsonBuilder *b, const char *name, const double *v, int n)
{
    json_builder_set_member_name(b, name);
    json_builder_begin_array(b);
    for (int i = 0; i < n; i++)
        if (isnan(v[i]) || isinf(v[i]))
            json_builder_add_null_value(b);
        else
            json_builder_add_double_value(b, v[i]);
    json_builder_end_array(b);
}

double df_overhead_pct(double off, double on, bool rate)
{
    if (isnan(off) || isnan(on) || off <= 0 || on <= 0)
        return NAN;
    return 100.0 * (rate ? off / on - 1.0 : on / off - 1.0);
}

void df_json_overhead(JsonBuilder *b, const char *name, const double *off, int n_off,
                      const double *on, int n_on, bool rate)
{
    const double m_off = df_summarize(off, n_off).median, m_on = df_summarize(on, n_on).median;
    gchar *k = g_strdup_printf("%s_off", name);
    df_json_double(b, k, m_off);
    g_free(k);
    k = g_strdup_printf("%s_on", name);
    df_json_double(b, k, m_on);
    g_free(k);
    k = g_strdup_printf("%s_off_samples", name);
    df_json_double_array(b, k, off, n_off);
    g_free(k);
    k = g_strdup_printf("%s_on_samples", name);
    df_json_double_array(b, k, on, n_on);
    g_free(k);
    df_json_double(b, "overhead_pct", df_overhead_pct(m_off, m_on, rate));
    df_json_double(b, "overhead_pct_paired", df_overhead_pct_paired(off, n_off, on, n_on, rate));
}

double df_overhead_pct_paired(const double *off, int n_off, const double *on, int n_on, bool rate)
{
    const int n = n_off < n_on ? n_off : n_on;
    double *pct = g_new(double, (gsize)(n > 0 ? n : 1));
    for (int i = 0; i < n; i++)
        pct[i] = df_overhead_pct(off[i], on[i], rate);
    const double m = df_summarize(pct, n).median;
    g_free(pct);
    return m;
}

gboolean df_json_write(JsonBuilder *b, const char *path, GError **err)
{
    JsonNode *root = json_builder_get_root(b);
    JsonGenerator *gen = json_generator_new();
    json_generator_set_pretty(gen, TRUE);
    json_generator_set_root(gen, root);
    /* In place, not json_generator_to_file()'s rename of a new file over
     * the path: a device (/dev/stdout) or a symlink stays what it is, and
     * a full disk is an error. */
    gsize len = 0;
    gchar *text = json_generator_to_data(gen, &len);
    g_object_unref(gen);
    json_node_unref(root);
    errno = 0;
    FILE *fp = fopen(path, "w");
    gboolean ok = fp && fwrite(text, 1, len, fp) == len && fflush(fp) == 0 && !ferror(fp);
    int e = errno;
    if (fp && fclose(fp) != 0 && ok) {
        ok = FALSE;
        e = errno;
    }
    g_free(text);
    if (!ok)
        g_set_error(err, G_FILE_ERROR, g_file_error_from_errno(e ? e : EIO), "%s: %s", path,
                    g_strerror(e ? e : EIO));
    return ok;
}

/* ------------------------------------------------------------- machine */

static void cpu_model(char *buf, size_t len)
{
    snprintf(buf, len, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "model name", 10) != 0)
            continue;
        const char *colon = strchr(line, ':');
        if (!colon)
            break;
        snprintf(buf, len, "%s", colon + 1 + (colon[1] == ' '));
        buf[strcspn(buf, "\n")] = '\0';
        break;
    }
    fclose(f);
}

typedef struct MachineInfo {
    char model[128];
    char kernel[256];
    char topology[512];
    char process_cpus[128];
    char caches[128];
    int cores, pus, numa_nodes, packages;
} MachineInfo;

static void cache_sizes(hwloc_topology_t topo, char *buf, size_t len)
{
    static const struct {
        hwloc_obj_type_t type;
        const char *name;
    } levels[] = {
        {HWLOC_OBJ_L1CACHE, "L1d"},
        {HWLOC_OBJ_L2CACHE, "L2"},
        {HWLOC_OBJ_L3CACHE, "L3"},
    };
    buf[0] = '\0';
    size_t used = 0;
    for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
        int n = hwloc_get_nbobjs_by_type(topo, levels[i].type);
        hwloc_obj_t o = hwloc_get_obj_by_type(topo, levels[i].type, 0);
        if (n <= 0 || !o || !o->attr)
            continue;
        int w = snprintf(buf + used, len - used, "%s%s %llu KiB x%d", used ? ", " : "",
                         levels[i].name, (unsigned long long)o->attr->cache.size / 1024, n);
        if (w < 0 || (size_t)w >= len - used)
            break;
        used += (size_t)w;
    }
}

static void machine_info(MachineInfo *mi)
{
    memset(mi, 0, sizeof(*mi));
    cpu_model(mi->model, sizeof(mi->model));
    struct utsname u;
    if (uname(&u) == 0)
        snprintf(mi->kernel, sizeof(mi->kernel), "%s %s %s", u.sysname, u.release, u.machine);
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) < 0)
        return;
    if (hwloc_topology_load(topo) == 0) {
        /* Symmetric machines export as a synthetic string, which dfsched
         * accepts as a topology: the run can be replayed on a model. */
        if (hwloc_topology_export_synthetic(topo, mi->topology, sizeof(mi->topology),
                                            HWLOC_TOPOLOGY_EXPORT_SYNTHETIC_FLAG_NO_ATTRS) < 0)
            snprintf(mi->topology, sizeof(mi->topology), "asymmetric");
        mi->cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
        mi->pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
        mi->numa_nodes = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
        mi->packages = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
        cache_sizes(topo, mi->caches, sizeof(mi->caches));
        hwloc_bitmap_t set = hwloc_bitmap_alloc();
        if (set && hwloc_get_proc_cpubind(topo, 0, set, HWLOC_CPUBIND_PROCESS) == 0)
            hwloc_bitmap_list_snprintf(mi->process_cpus, sizeof(mi->process_cpus), set);
        hwloc_bitmap_free(set);
    }
    hwloc_topology_destroy(topo);
}

static void add_string(JsonBuilder *b, const char *name, const char *v)
{
    json_builder_set_member_name(b, name);
    json_builder_add_string_value(b, v);
}

static void add_int(JsonBuilder *b, const char *name, int64_t v)
{
    json_builder_set_member_name(b, name);
    json_builder_add_int_value(b, v);
}

void df_report_machine_json(JsonBuilder *b)
{
    MachineInfo mi;
    machine_info(&mi);
    char host[256] = "";
    gethostname(host, sizeof(host) - 1);
    json_builder_set_member_name(b, "machine");
    json_builder_begin_object(b);
    add_string(b, "hostname", host);
    add_string(b, "cpu_model", mi.model);
    add_string(b, "kernel", mi.kernel);
    add_int(b, "packages", mi.packages);
    add_int(b, "numa_nodes", mi.numa_nodes);
    add_int(b, "cores", mi.cores);
    add_int(b, "pus", mi.pus);
    add_string(b, "process_cpus", mi.process_cpus);
    add_string(b, "topology", mi.topology);
    add_string(b, "caches", mi.caches);
    add_string(b, "compiler", "gcc " __VERSION__);
    json_builder_end_object(b);
}

void df_report_machine_line(char *buf, size_t len)
{
    MachineInfo mi;
    machine_info(&mi);
    snprintf(buf, len, "%s, %d cores / %d PUs (CPUs %s), %s; %s; %s", mi.model, mi.cores, mi.pus,
             mi.process_cpus, mi.caches, mi.topology, mi.kernel);
}

void df_report_loadavg(double out[3])
{
    out[0] = out[1] = out[2] = NAN;
    FILE *f = fopen("/proc/loadavg", "r");
    if (!f)
        return;
    if (fscanf(f, "%lf %lf %lf", &out[0], &out[1], &out[2]) != 3)
        out[0] = out[1] = out[2] = NAN;
    fclose(f);
}

int64_t df_report_cpu_ns(clockid_t clock)
{
    struct timespec ts;
    if (clock_gettime(clock, &ts) != 0)
        return -1;
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
