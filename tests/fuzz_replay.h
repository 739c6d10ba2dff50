/* The fuzz targets' plain drivers: every file of a corpus (files or
 * directories, one level), read whole and handed to a callback. */
#ifndef FUZZ_REPLAY_H
#define FUZZ_REPLAY_H

#include <stddef.h>
#include <stdint.h>

typedef void (*DfFuzzInputFn)(const uint8_t *data, size_t size, void *opaque);

/* Replay `path` (a file, or each file of a directory) through `fn`;
 * 0, or -1 after a message prefixed by `prog` for what could not be read. */
int df_fuzz_replay(const char *prog, const char *path, DfFuzzInputFn fn, void *opaque);

#endif
