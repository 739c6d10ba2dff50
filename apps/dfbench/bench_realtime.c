/* dfbench realtime (stub, filled below). */
#include "dfbench.h"

#include <stdio.h>

int df_bench_realtime_main(int argc, char **argv)
{
    fprintf(stderr, "dfbench realtime: not implemented yet\n");
    return DF_BENCH_FAILED;
}
