/* NAL unit walks and the RBSP bit reader of the probes (nal.h). */
#include "nal.h"

void df_bits_init(DfBits *b, const uint8_t *p, int len)
{
    int zeros = 0;
    b->n = b->pos = 0;
    for (int i = 0; i < len && b->n < (int)sizeof(b->buf); i++) {
        if (zeros >= 2 && p[i] == 3) {
            zeros = 0;
            continue;
        }
        zeros = p[i] == 0 ? zeros + 1 : 0;
        b->buf[b->n++] = p[i];
    }
}

static int bit(DfBits *b)
{
    if (b->pos >= b->n * 8)
        return -1;
    int v = (b->buf[b->pos >> 3] >> (7 - (b->pos & 7))) & 1;
    b->pos++;
    return v;
}

int df_bits_read(DfBits *b, int n, unsigned *v)
{
    *v = 0;
    for (int i = 0; i < n; i++) {
        int x = bit(b);
        if (x < 0)
            return -1;
        *v = *v << 1 | (unsigned)x;
    }
    return 0;
}

int df_bits_ue(DfBits *b, unsigned *v)
{
    int lz = 0;
    for (;;) {
        int x = bit(b);
        if (x < 0 || lz > 31)
            return -1;
        if (x)
            break;
        lz++;
    }
    unsigned rest;
    if (df_bits_read(b, lz, &rest) < 0)
        return -1;
    *v = (1u << lz) - 1 + rest;
    return 0;
}

int df_bits_se(DfBits *b)
{
    unsigned v;
    return df_bits_ue(b, &v);
}

void df_nal_walk_annexb(DfProbe *p, const uint8_t *d, int size, DfNalFn fn)
{
    int i = 0, start = -1;
    while (i + 3 <= size) {
        if (d[i] == 0 && d[i + 1] == 0 && d[i + 2] == 1) {
            if (start >= 0) {
                int end = i;
                while (end > start && d[end - 1] == 0)
                    end--;
                fn(p, d + start, end - start);
            }
            i += 3;
            start = i;
        } else {
            i++;
        }
    }
    if (start >= 0 && start < size)
        fn(p, d + start, size - start);
}

void df_nal_walk_lengths(DfProbe *p, const uint8_t *d, int size, int nls, DfNalFn fn)
{
    int i = 0;
    while (i + nls <= size) {
        uint32_t len = 0;
        for (int k = 0; k < nls; k++)
            len = len << 8 | d[i + k];
        i += nls;
        if (len > (uint32_t)(size - i))
            break;
        fn(p, d + i, (int)len);
        i += (int)len;
    }
}
