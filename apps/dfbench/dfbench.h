/* dfbench's subcommands: each lives in its own file and has one entry
 * point taking the arguments after its name (argv[0] is the subcommand). */
#ifndef DF_BENCH_H
#define DF_BENCH_H

#include "cli.h"

#include <limits.h>

/* Exit status of a subcommand: 0 fine, 1 a run failed or a result did not
 * check out, 2 usage error (the statuses of every app, cli.h). */
enum { DF_BENCH_OK = DF_CLI_OK, DF_BENCH_FAILED = DF_CLI_FAILED, DF_BENCH_USAGE = DF_CLI_USAGE };

/* --poll-us not given: dfsched's default (-1 is poll mode, so no value a
 * user may type). */
#define POLL_US_UNSET INT_MIN

/* dfbench sched: scheduler overhead and locality (bench_sched.c). */
int df_bench_sched_main(int argc, char **argv);
/* dfbench transfer: cost per byte read across workers, per level (bench_transfer.c). */
int df_bench_transfer_main(int argc, char **argv);

#ifdef DF_BENCH_HAVE_MEDIA
/* dfbench decode: decode fps over workers, policies and peers (bench_decode.c). */
int df_bench_decode_main(int argc, char **argv);
/* dfbench realtime: concurrent real-time streams per worker count (bench_realtime.c). */
int df_bench_realtime_main(int argc, char **argv);
/* dfbench live: latency of a live RTP stream per decoder (bench_live.c). */
int df_bench_live_main(int argc, char **argv);
#endif

#endif
