/* --vo null: decode only. */
#include "vo.h"

const DfVoClass df_vo_null = {
    .name = "null",
    .help = "discard frames (benchmarking)",
};
