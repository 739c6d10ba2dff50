/* A trace's policy section: named values and tables of numbers that the
 * placing policy fills from its snapshot op and that trace readers fill
 * from a file.  Generic on purpose: the core and the readers carry a
 * policy's data without knowing which policy it is, so that a new policy
 * shows its model in a trace without touching them. */
#include "sched_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

uint64_t df_trace_input_policy_bytes(const DfTraceInput *in)
{
    return in->policy_bytes ? in->policy_bytes : in->bytes;
}

int df_trace_set_policy(DfTrace *t, const char *name)
{
    if (t->policy)
        return 0;
    DfTracePolicy *p = calloc(1, sizeof(*p));
    if (!p)
        return -ENOMEM;
    p->name = strdup(name ? name : "");
    if (!p->name) {
        free(p);
        return -ENOMEM;
    }
    t->policy = p;
    return 0;
}

/* Room for element n of an array grown by doubling (n elements so far). */
static int grow(void **arr, size_t n, size_t elem)
{
    if (n & (n - 1))
        return 0;
    void *g = realloc(*arr, (n ? 2 * n : 1) * elem);
    if (!g)
        return -ENOMEM;
    *arr = g;
    return 0;
}

int df_trace_policy_add_value(DfTracePolicy *p, const char *key, double value)
{
    if (grow((void **)&p->values, (size_t)p->n_values, sizeof(*p->values)) < 0)
        return -ENOMEM;
    char *k = strdup(key);
    if (!k)
        return -ENOMEM;
    p->values[p->n_values++] = (DfTraceValue){.key = k, .value = value};
    return 0;
}

static void table_free(DfTraceTable *tab)
{
    if (!tab)
        return;
    for (int c = 0; c < tab->n_cols && tab->cols; c++)
        free(tab->cols[c]);
    for (size_t r = 0; r < tab->n_rows; r++)
        free(tab->row_labels[r]);
    free(tab->cols);
    free(tab->row_labels);
    free(tab->cells);
    free(tab->name);
    free(tab->label);
    free(tab);
}

DfTraceTable *df_trace_policy_add_table(DfTracePolicy *p, const char *name, const char *label,
                                        int n_cols, const char *const *cols)
{
    if (n_cols < 0 || grow((void **)&p->tables, (size_t)p->n_tables, sizeof(*p->tables)) < 0)
        return NULL;
    DfTraceTable *tab = calloc(1, sizeof(*tab));
    if (!tab)
        return NULL;
    tab->name = strdup(name);
    tab->label = strdup(label ? label : "");
    tab->cols = calloc((size_t)(n_cols ? n_cols : 1), sizeof(char *));
    if (!tab->name || !tab->label || !tab->cols)
        goto fail;
    for (; tab->n_cols < n_cols; tab->n_cols++)
        if (!(tab->cols[tab->n_cols] = strdup(cols[tab->n_cols])))
            goto fail;
    p->tables[p->n_tables++] = tab;
    return tab;
fail:
    table_free(tab);
    return NULL;
}

int df_trace_table_add_row(DfTraceTable *tab, const char *label, const double *cells)
{
    const size_t n = tab->n_rows, nc = (size_t)tab->n_cols;
    if (grow((void **)&tab->row_labels, n, sizeof(char *)) < 0)
        return -ENOMEM;
    /* Same doubling as the labels, in rows of nc cells. */
    if (nc && !(n & (n - 1))) {
        double *g = realloc(tab->cells, (n ? 2 * n : 1) * nc * sizeof(double));
        if (!g)
            return -ENOMEM;
        tab->cells = g;
    }
    char *l = strdup(label ? label : "");
    if (!l)
        return -ENOMEM;
    tab->row_labels[n] = l;
    if (nc)
        memcpy(tab->cells + n * nc, cells, nc * sizeof(double));
    tab->n_rows++;
    return 0;
}

const DfTraceTable *df_trace_policy_table(const DfTrace *t, const char *name)
{
    for (int i = 0; t->policy && i < t->policy->n_tables; i++)
        if (strcmp(t->policy->tables[i]->name, name) == 0)
            return t->policy->tables[i];
    return NULL;
}

bool df_trace_policy_value(const DfTrace *t, const char *key, double *out)
{
    for (int i = 0; t->policy && i < t->policy->n_values; i++)
        if (strcmp(t->policy->values[i].key, key) == 0) {
            *out = t->policy->values[i].value;
            return true;
        }
    return false;
}

int df_trace_table_col(const DfTraceTable *tab, const char *col)
{
    for (int c = 0; tab && c < tab->n_cols; c++)
        if (strcmp(tab->cols[c], col) == 0)
            return c;
    return -1;
}

ptrdiff_t df_trace_table_row(const DfTraceTable *tab, const char *label)
{
    for (size_t r = 0; tab && r < tab->n_rows; r++)
        if (strcmp(tab->row_labels[r], label) == 0)
            return (ptrdiff_t)r;
    return -1;
}

double df_trace_table_cell(const DfTraceTable *tab, size_t row, int col)
{
    return row < tab->n_rows && col >= 0 && col < tab->n_cols
               ? tab->cells[row * (size_t)tab->n_cols + (size_t)col]
               : 0.0;
}

void df_trace_policy_free(DfTracePolicy *p)
{
    if (!p)
        return;
    for (int i = 0; i < p->n_values; i++)
        free(p->values[i].key);
    for (int i = 0; i < p->n_tables; i++)
        table_free(p->tables[i]);
    free(p->values);
    free(p->tables);
    free(p->name);
    free(p);
}
