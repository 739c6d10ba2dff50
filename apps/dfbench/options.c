/* Option values shared by the subcommands. */
#include "dfbench.h"

#include <errno.h>
#include <glib.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static bool parse_long(const char *s, long min, long max, long *out)
{
    char *end;
    errno = 0;
    const long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min || v > max)
        return false;
    *out = v;
    return true;
}

int df_parse_int_list(const char *spec, int max, int **out)
{
    gchar **parts = g_strsplit(spec, ",", -1);
    GArray *v = g_array_new(FALSE, FALSE, sizeof(int));
    int ret = -1;
    for (int i = 0; parts[i]; i++) {
        gchar *item = g_strstrip(parts[i]);
        char *dash = strchr(item, '-');
        long lo, hi;
        if (dash) {
            *dash = '\0';
            if (!parse_long(item, 1, max, &lo) || !parse_long(dash + 1, lo, max, &hi))
                goto cleanup;
        } else if (parse_long(item, 1, max, &lo)) {
            hi = lo;
        } else {
            goto cleanup;
        }
        for (long w = lo; w <= hi; w++) {
            const int x = (int)w;
            bool dup = false;
            for (guint k = 0; k < v->len; k++)
                dup |= g_array_index(v, int, k) == x;
            if (!dup)
                g_array_append_val(v, x);
        }
    }
    if (v->len == 0)
        goto cleanup;
    ret = (int)v->len;
    *out = g_memdup2(v->data, sizeof(int) * v->len);
cleanup:
    g_array_free(v, TRUE);
    g_strfreev(parts);
    return ret;
}
