#include "fuzz_replay.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int replay_file(const char *prog, const char *path, DfFuzzInputFn fn, void *opaque)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "%s: cannot open %s: %s\n", prog, path, strerror(errno));
        return -1;
    }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(len > 0 ? (size_t)len : 1);
    size_t got = buf && len > 0 ? fread(buf, 1, (size_t)len, f) : 0;
    fclose(f);
    if (!buf || len < 0 || got != (size_t)len) {
        free(buf);
        fprintf(stderr, "%s: cannot read %s\n", prog, path);
        return -1;
    }
    fn(buf, got, opaque);
    free(buf);
    return 0;
}

int df_fuzz_replay(const char *prog, const char *path, DfFuzzInputFn fn, void *opaque)
{
    struct stat st;
    if (stat(path, &st) < 0) {
        fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode))
        return replay_file(prog, path, fn, opaque);
    DIR *d = opendir(path);
    if (!d) {
        fprintf(stderr, "%s: cannot list %s: %s\n", prog, path, strerror(errno));
        return -1;
    }
    int ret = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.') {
            char p[4096];
            snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
            ret |= replay_file(prog, p, fn, opaque);
        }
    closedir(d);
    return ret;
}
