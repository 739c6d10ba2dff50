/* What every app's command line shares: exit statuses, the two kinds of
 * error line, strict numbers and lists, and checking an output path before
 * the work that will fill it (libdfapps_common.a, apps/meson.build). */
#ifndef DF_CLI_H
#define DF_CLI_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>

/* Exit status of every app: 0 done, 1 the work failed (an input missing,
 * unreadable or malformed, an output that cannot be written), 2 a bad
 * command line. */
enum { DF_CLI_OK = 0, DF_CLI_FAILED = 1, DF_CLI_USAGE = 2 };

/* "PROG: error: MESSAGE (see 'PROG --help')" on one stderr line; returns
 * DF_CLI_USAGE.  PROG may hold a subcommand ("dfbench sched"). */
int df_cli_usage(const char *prog, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

/* What an app's command line is: GOption's parameter string after the
 * program name in --help ("- what it does", "graph TRACE"), the text above
 * and below the options (NULL: none) and the option table. */
typedef struct DfCliSpec {
    const char *param, *summary, *description;
    const GOptionEntry *entries;
    bool no_args; /* a word left after the options is a usage error */
} DfCliSpec;

/* The GOption prologue of every app: build the context, parse argc/argv
 * (which then hold what the options left), free the context.  A bad command
 * line is reported as df_cli_usage() does; returns DF_CLI_OK or
 * DF_CLI_USAGE.  GLib's --help prints and exits inside. */
int df_cli_parse_options(const char *prog, const DfCliSpec *spec, int *argc, char ***argv);

/* "PROG: error: MESSAGE" on one stderr line; returns DF_CLI_FAILED. */
int df_cli_fail(const char *prog, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

/* The decimal integer S in min..max, the whole string (no sign-only, no
 * trailing garbage such as "4x", no overflow). */
bool df_cli_parse_long(const char *s, long min, long max, long *out);

/* "1,2,4" or "1-4" (or a mix) of values in 1..max into a new array
 * (g_free), duplicates dropped; the count, or -1 for an empty list, an
 * empty item ("1,,2") or a value out of range. */
int df_cli_parse_int_list(const char *spec, int max, int **out);

/* Whether PATH can be written as a file, checked without truncating an
 * existing one and without leaving a new one behind: for outputs written
 * after a long run.  On failure `msg` says why ("cannot write PATH: ..."). */
bool df_cli_check_output(const char *path, char *msg, size_t len);

/* An option given on the command line: its flag ("--json") and value
 * (NULL: not given). */
typedef struct DfCliOption {
    const char *flag, *value;
} DfCliOption;
typedef DfCliOption DfCliOutput;

/* Lists given as "" (or blanks): a usage error naming the flag
 * (DF_CLI_USAGE), or DF_CLI_OK.  "none" is how to ask for nothing. */
int df_cli_check_lists(const char *prog, const DfCliOption *lists, size_t n);

/* Check every output before the work that fills it: an empty name is a
 * usage error (DF_CLI_USAGE), a path that cannot be written a failure
 * (DF_CLI_FAILED), each reported on its stderr line; DF_CLI_OK else. */
int df_cli_check_outputs(const char *prog, const DfCliOutput *outs, size_t n);

/* PATH ends in one of the NULL-terminated suffixes (".svg", ...). */
bool df_cli_has_suffix(const char *path, const char *const *suffixes);

#endif
