/* NAL unit walking and an RBSP bit reader, for the H.264 and HEVC probes:
 * only the first bytes of a slice header or a PPS are read. */
#ifndef DFMEDIA_CODEC_NAL_H
#define DFMEDIA_CODEC_NAL_H

#include "codec.h"

typedef struct DfBits {
    uint8_t buf[96]; /* enough for a slice header start or a PPS prefix */
    int n, pos;
} DfBits;

/* Copy the start of a NAL payload, dropping emulation prevention bytes. */
void df_bits_init(DfBits *b, const uint8_t *p, int len);
/* n bits into *v; -1 past the end. */
int df_bits_read(DfBits *b, int n, unsigned *v);
/* Exp-Golomb ue(v) into *v; -1 past the end. */
int df_bits_ue(DfBits *b, unsigned *v);
/* Skip an se(v); -1 past the end. */
int df_bits_se(DfBits *b);

typedef void (*DfNalFn)(DfProbe *p, const uint8_t *nal, int len);

/* Call fn on every NAL unit of Annex B data (start codes). */
void df_nal_walk_annexb(DfProbe *p, const uint8_t *d, int size, DfNalFn fn);
/* Call fn on every NAL unit of `nls`-byte length-prefixed data. */
void df_nal_walk_lengths(DfProbe *p, const uint8_t *d, int size, int nls, DfNalFn fn);

#endif
