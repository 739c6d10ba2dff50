/* The codec table: AVCodecID -> DfCodecOps (codec.h), and the probe
 * driver that feeds a codec's NAL units to its ops. */
#include "nal.h"

#include <string.h>

/* One line per codec file. */
static const DfCodecOps *const codecs[] = {
    &df_codec_h264,
    &df_codec_hevc,
    &df_codec_mpeg12,
};

/* Every rule generic. */
static const DfCodecOps generic = {.name = NULL};

const DfCodecOps *df_codec_find(enum AVCodecID id)
{
    for (size_t i = 0; i < sizeof(codecs) / sizeof(codecs[0]); i++)
        for (const enum AVCodecID *c = codecs[i]->ids; *c != AV_CODEC_ID_NONE; c++)
            if (*c == id)
                return codecs[i];
    return &generic;
}

static int probe_done(const DfCodecOps *ops, const DfProbe *p)
{
    return ops->probe_done ? ops->probe_done(p) : 1;
}

int df_codec_probe_init(const DfCodecOps *ops, DfProbe *p, const AVCodecParameters *par)
{
    memset(p, 0, sizeof(*p));
    if (ops->probe_extradata)
        ops->probe_extradata(p, par->extradata, par->extradata_size);
    return probe_done(ops, p);
}

int df_codec_probe_packet(const DfCodecOps *ops, DfProbe *p, const AVPacket *pkt)
{
    p->packets++;
    if (ops->probe_nal && pkt && pkt->size > 0) {
        if (p->nal_length_size)
            df_nal_walk_lengths(p, pkt->data, pkt->size, p->nal_length_size, ops->probe_nal);
        else
            df_nal_walk_annexb(p, pkt->data, pkt->size, ops->probe_nal);
    }
    return probe_done(ops, p);
}
