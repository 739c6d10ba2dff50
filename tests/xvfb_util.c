#include "xvfb_util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

bool df_test_xvfb_available(void)
{
    gchar *xvfb = g_find_program_in_path("Xvfb");
    g_free(xvfb);
    return xvfb != NULL;
}

bool df_test_xvfb_start(DfXvfb *x, const char *screen, char **why)
{
    memset(x, 0, sizeof *x);
    *why = NULL;
    int fds[2] = {-1, -1};
    GSubprocessLauncher *l = NULL;
    GError *err = NULL;
    char buf[32] = {0};
    size_t got = 0;
    gchar *xvfb = g_find_program_in_path("Xvfb");
    if (!xvfb) {
        *why = g_strdup("Xvfb is not installed");
        goto out;
    }
    if (pipe2(fds, O_CLOEXEC) != 0) {
        *why = g_strdup_printf("pipe: %s", g_strerror(errno));
        goto out;
    }
    l = g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDOUT_SILENCE |
                                  G_SUBPROCESS_FLAGS_STDERR_SILENCE);
    g_subprocess_launcher_take_fd(l, fds[1], 3);
    fds[1] = -1;
    /* -noreset: by default the server resets when its last client leaves,
     * and drops a client that connected meanwhile before answering its
     * setup (xserver issue 1102).  autovideosink opens and closes the
     * display while it probes its sinks, so the sink it then picks met a
     * resetting server now and then: "Could not open display". */
    x->proc = g_subprocess_launcher_spawn(l, &err, xvfb, "-displayfd", "3", "-nolisten", "tcp",
                                          "-noreset", "-screen", "0", screen, NULL);
    /* The launcher holds the write end: drop it so that a server that dies
     * before naming its display gives EOF here. */
    g_clear_object(&l);
    if (!x->proc) {
        *why = g_strdup_printf("Xvfb: %s", err->message);
        g_error_free(err);
        goto out;
    }
    const gint64 until = g_get_monotonic_time() + 20 * G_USEC_PER_SEC;
    while (got < sizeof buf - 1 && !memchr(buf, '\n', got)) {
        const gint64 left_ms = (until - g_get_monotonic_time()) / 1000;
        struct pollfd p = {.fd = fds[0], .events = POLLIN};
        if (left_ms <= 0 || poll(&p, 1, (int)left_ms) <= 0)
            break;
        const ssize_t n = read(fds[0], buf + got, sizeof buf - 1 - got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    int display = -1;
    if (!memchr(buf, '\n', got) || sscanf(buf, "%d", &display) != 1 || display < 0) {
        *why = g_strdup("Xvfb did not name a display within 20 s");
        df_test_xvfb_stop(x);
        goto out;
    }
    g_snprintf(x->display_env, sizeof x->display_env, "DISPLAY=:%d", display);
out:
    if (fds[0] >= 0)
        close(fds[0]);
    if (fds[1] >= 0)
        close(fds[1]);
    g_free(xvfb);
    return *why == NULL;
}

void df_test_xvfb_stop(DfXvfb *x)
{
    if (!x->proc)
        return;
    g_subprocess_send_signal(x->proc, SIGTERM);
    g_subprocess_wait(x->proc, NULL, NULL);
    g_clear_object(&x->proc);
}
