/* dfbench: benchmarks of dfmedia and dfsched, one subcommand per file. */
#include "dfbench.h"

#include <stdio.h>
#include <string.h>

typedef struct DfSubcommand {
    const char *name;
    int (*main)(int argc, char **argv);
    const char *summary;
} DfSubcommand;

/* A subcommand is a row here and a file. */
static const DfSubcommand subcommands[] = {
    {"sched", df_bench_sched_main,
     "scheduler overhead and locality: dfsched policies vs OpenMP and oneTBB"},
    {"transfer", df_bench_transfer_main,
     "what a byte another core wrote costs to read, per level (dfsim's --ns-per-byte)"},
#ifdef DF_BENCH_HAVE_MEDIA
    {"decode", df_bench_decode_main,
     "decode fps over worker counts: dfmedia policies vs libavcodec threads, avdec, dfdec"},
    {"realtime", df_bench_realtime_main,
     "how many real-time streams N workers carry (Gustafson's scaled size)"},
    {"live", df_bench_live_main, "latency of a live RTP stream through dfdec and avdec"},
#endif
};

#define N_SUBCOMMANDS ((int)(sizeof(subcommands) / sizeof(subcommands[0])))

static void usage(FILE *out, const char *prog)
{
    fprintf(out, "Usage: %s SUBCOMMAND [OPTION...]\n\nSubcommands:\n", prog);
    for (int i = 0; i < N_SUBCOMMANDS; i++)
        fprintf(out, "  %-10s %s\n", subcommands[i].name, subcommands[i].summary);
    fprintf(out, "\n'%s SUBCOMMAND --help' lists a subcommand's options.\n", prog);
}

int main(int argc, char **argv)
{
    /* No setlocale(): tables, CSV and JSON keep '.' as decimal point. */
    const char *slash = strrchr(argv[0], '/');
    const char *prog = slash ? slash + 1 : argv[0];
    if (argc < 2) {
        usage(stderr, prog);
        return df_cli_usage(prog, "no subcommand given");
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout, prog);
        return DF_BENCH_OK;
    }
    for (int i = 0; i < N_SUBCOMMANDS; i++)
        if (strcmp(argv[1], subcommands[i].name) == 0)
            return subcommands[i].main(argc - 1, argv + 1);
    return df_cli_usage(prog, "unknown subcommand \"%s\"", argv[1]);
}
