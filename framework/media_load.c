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
    const double class_ns = df_load_class_ns_per_frame(dec->load, NULL);
    out->class_cores = out->fps > 0 ? class_ns * out->fps / 1e9 : 0.0;
}

/* hash_combine with splitmix64's finaliser: streams that differ in any
 * field get different keys (short of a 64-bit collision). */
static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    return h ^ (h >> 31);
}

uint64_t df_load_class_of(const AVCodecParameters *par, DfThreading threading)
{
    uint64_t h = mix(0, (uint64_t)par->codec_id);
    h = mix(h, (uint64_t)(uint32_t)par->profile);
    h = mix(h, (uint64_t)(uint32_t)par->width);
    h = mix(h, (uint64_t)(uint32_t)par->height);
    h = mix(h, (uint64_t)(uint32_t)par->format);
    h = mix(h, (uint64_t)threading);
    return h ? h : 1; /* 0 is "no class" */
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

void df_decoder_set_probation(DfDecoder *dec, bool on)
{
    if (dec && dec->load)
        atomic_store_explicit(&dec->probation_rank, df_load_set_probation(dec->load, on),
                              memory_order_relaxed);
}
