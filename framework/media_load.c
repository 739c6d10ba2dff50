/* The stream's measured load (dfsched's account, scheduler/load.c): the
 * decoder's graph instances carry it, the slice jobs and filter bands that
 * its tasks create inherit it, and the slot queue marks a frame done when
 * a packet's work has finished (slot.c). */
#include "media_internal.h"

#include <string.h>

void df_decoder_load(DfDecoder *dec, DfDecoderLoad *out)
{
    memset(out, 0, sizeof(*out));
    if (!dec || !dec->load)
        return;
    out->cores = df_load_cores(dec->load);
    out->ns_per_frame = df_load_ns_per_frame(dec->load);
    out->fps = df_load_fps(dec->load);
    out->frames = df_load_frames(dec->load);
    df_sched_load(dec->sched, &out->sched);
}

void df_decoder_add_load_ns(DfDecoder *dec, uint64_t ns)
{
    if (dec && dec->load)
        df_load_add_ns(dec->load, ns);
}

void df_decoder_set_admitted(DfDecoder *dec, bool admitted)
{
    if (dec && dec->load)
        df_load_set_admitted(dec->load, admitted);
}
