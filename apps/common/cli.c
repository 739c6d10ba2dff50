/* Command-line helpers shared by dfbench, dfsim, dfsched-viz and dfplay. */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void vline(const char *prog, const char *fmt, va_list ap, bool hint)
{
    /* One fprintf per line keeps the line whole next to other writers. */
    gchar *msg = g_strdup_vprintf(fmt, ap);
    if (hint)
        fprintf(stderr, "%s: error: %s (see '%s --help')\n", prog, msg, prog);
    else
        fprintf(stderr, "%s: error: %s\n", prog, msg);
    g_free(msg);
}

int df_cli_usage(const char *prog, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vline(prog, fmt, ap, true);
    va_end(ap);
    return DF_CLI_USAGE;
}

int df_cli_fail(const char *prog, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vline(prog, fmt, ap, false);
    va_end(ap);
    return DF_CLI_FAILED;
}

bool df_cli_parse_long(const char *s, long min, long max, long *out)
{
    if (!s)
        return false;
    char *end;
    errno = 0;
    const long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min || v > max)
        return false;
    *out = v;
    return true;
}

int df_cli_parse_int_list(const char *spec, int max, int **out)
{
    gchar **parts = g_strsplit(spec ? spec : "", ",", -1);
    GArray *v = g_array_new(FALSE, FALSE, sizeof(int));
    int ret = -1;
    for (int i = 0; parts[i]; i++) {
        gchar *item = g_strstrip(parts[i]);
        /* The dash of a range, not a minus sign of its first value. */
        char *dash = *item ? strchr(item + 1, '-') : NULL;
        long lo, hi;
        if (dash) {
            *dash = '\0';
            if (!df_cli_parse_long(item, 1, max, &lo) || !df_cli_parse_long(dash + 1, lo, max, &hi))
                goto cleanup;
        } else if (df_cli_parse_long(item, 1, max, &lo)) {
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

bool df_cli_check_output(const char *path, char *msg, size_t len)
{
    if (!path || !*path) {
        snprintf(msg, len, "empty output file name");
        return false;
    }
    struct stat st;
    int fd;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            snprintf(msg, len, "cannot write %s: %s", path, g_strerror(EISDIR));
            return false;
        }
        /* Opened, not truncated: the old contents stay until the run ends. */
        fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    } else {
        /* Created and removed again: the only exact test of the directory
         * (root passes access(); /proc refuses only at creation). */
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY | O_CLOEXEC, 0644);
        if (fd >= 0)
            unlink(path);
    }
    if (fd < 0) {
        snprintf(msg, len, "cannot write %s: %s", path, g_strerror(errno));
        return false;
    }
    close(fd);
    return true;
}

int df_cli_check_lists(const char *prog, const DfCliOption *lists, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *v = lists[i].value;
        while (v && g_ascii_isspace(*v))
            v++;
        if (v && !*v)
            return df_cli_usage(prog, "bad %s \"\": an empty list", lists[i].flag);
    }
    return DF_CLI_OK;
}

int df_cli_check_outputs(const char *prog, const DfCliOutput *outs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char msg[512];
        if (!outs[i].value)
            continue;
        if (!*outs[i].value)
            return df_cli_usage(prog, "bad %s \"\": an empty file name", outs[i].flag);
        if (!df_cli_check_output(outs[i].value, msg, sizeof(msg)))
            return df_cli_fail(prog, "%s: %s", outs[i].flag, msg);
    }
    return DF_CLI_OK;
}

bool df_cli_has_suffix(const char *path, const char *const *suffixes)
{
    for (int i = 0; path && suffixes[i]; i++)
        if (g_str_has_suffix(path, suffixes[i]) && strlen(path) > strlen(suffixes[i]))
            return true;
    return false;
}

int df_cli_parse_options(const char *prog, const DfCliSpec *spec, int *argc, char ***argv)
{
    /* The usage line names the program as the errors do ("dfbench live",
     * not the subcommand's argv[0]). */
    g_set_prgname(prog);
    GOptionContext *ctx = g_option_context_new(spec->param);
    if (spec->summary)
        g_option_context_set_summary(ctx, spec->summary);
    if (spec->description)
        g_option_context_set_description(ctx, spec->description);
    g_option_context_add_main_entries(ctx, spec->entries, NULL);
    GError *err = NULL;
    int status = DF_CLI_OK;
    if (!g_option_context_parse(ctx, argc, argv, &err))
        status = df_cli_usage(prog, "%s", err->message);
    else if (spec->no_args && *argc > 1)
        status = df_cli_usage(prog, "unexpected argument \"%s\"", (*argv)[1]);
    g_clear_error(&err);
    g_option_context_free(ctx);
    return status;
}
