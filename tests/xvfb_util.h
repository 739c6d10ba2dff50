/* A private X server for the tests that open a window. */
#ifndef XVFB_UTIL_H
#define XVFB_UTIL_H

#include <gio/gio.h>
#include <stdbool.h>

typedef struct DfXvfb {
    GSubprocess *proc;
    char display_env[32]; /* "DISPLAY=:N", for df_test_run's env_add */
} DfXvfb;

/* Start Xvfb with one screen of `screen` ("WxHxD").  The server picks a
 * free display itself and names it once it accepts connections
 * (-displayfd), so parallel tests never race for a display number or
 * connect early, as xvfb-run's search of lock files can.  False, with the
 * reason in `why` (g_free it), when Xvfb is missing or does not start. */
bool df_test_xvfb_available(void);
bool df_test_xvfb_start(DfXvfb *x, const char *screen, char **why);
void df_test_xvfb_stop(DfXvfb *x);

#endif
