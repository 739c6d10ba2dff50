#include "bench_util.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

const char *df_test_dfbench(void)
{
    const char *p = getenv("DFBENCH");
    return p && *p ? p : NULL;
}

DfRun df_test_run(const char *const *argv, const char *const *env_add)
{
    DfRun r = {.status = -1};
    gchar **env = g_get_environ();
    for (int i = 0; env_add && env_add[i]; i++) {
        const char *eq = strchr(env_add[i], '=');
        if (!eq)
            continue;
        gchar *key = g_strndup(env_add[i], (gsize)(eq - env_add[i]));
        const gchar *old = g_environ_getenv(env, key);
        gchar *val = old && *old && g_str_has_suffix(key, "_OPTIONS")
                         ? g_strdup_printf("%s %s", old, eq + 1)
                         : g_strdup(eq + 1);
        env = g_environ_setenv(env, key, val, TRUE);
        g_free(val);
        g_free(key);
    }
    GError *err = NULL;
    int wait_status = 0;
    r.spawned = g_spawn_sync(NULL, (gchar **)argv, env, G_SPAWN_DEFAULT, NULL, NULL, &r.out,
                             &r.err, &wait_status, &err);
    if (!r.spawned) {
        r.err = g_strdup(err->message);
        g_error_free(err);
    } else if (WIFEXITED(wait_status)) {
        r.status = WEXITSTATUS(wait_status);
    }
    g_strfreev(env);
    return r;
}

void df_run_clear(DfRun *r)
{
    g_free(r->out);
    g_free(r->err);
    r->out = r->err = NULL;
}
