/* Fuzz target for the dfdec element: untrusted bytes through a GstHarness
 * "<parser> ! dfdec" (the parser splits them as a real pipeline would).
 * Same input format as fuzz_decode (byte 0 codec, byte 1 policy and
 * workers, then an elementary stream), so both share the seed corpus.
 * With -Dfuzzing=true (clang) it is a libFuzzer target; otherwise main()
 * replays files or directories and, with --mutate N, N deterministic
 * mutants of each (bit flips, byte runs, truncation, a chunk dropped or
 * duplicated), each case bounded by an alarm.
 *
 *   fuzz_element [--mutate N] FILE|DIR...   (DF_GST_PLUGIN: the plugin) */
#include "fuzz_replay.h"
#include "tsan_supp.h"

#include <gst/check/gstharness.h>
#include <gst/gst.h>

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef __SANITIZE_ADDRESS__
/* Full stacks for allocations: GLib keeps a block from a library
 * constructor once GStreamer is loaded; tests/lsan.supp names its caller
 * (_dl_init), which the fast unwinder cannot see through libglib. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "fast_unwind_on_malloc=0";
}
#endif

static const char *const parsers[] = {"h264parse", "h265parse", "mpegvideoparse", "mpegvideoparse"};
static const char *const caps[] = {
    "video/x-h264, stream-format=byte-stream",
    "video/x-h265, stream-format=byte-stream",
    "video/mpeg, mpegversion=2, systemstream=false",
    "video/mpeg, mpegversion=1, systemstream=false",
};
static const char *const policies[] = {"fifo", "steal", "cost", "cost-local", "learned"};

static long n_cases, n_frames, n_warnings, n_errors;

static void ensure_init(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    gst_init(NULL, NULL);
    const char *path = getenv("DF_GST_PLUGIN");
    GError *err = NULL;
    GstPlugin *p = path ? gst_plugin_load_file(path, &err) : NULL;
    if (!p) {
        fprintf(stderr, "fuzz_element: cannot load the plugin %s: %s\n",
                path ? path : "(set DF_GST_PLUGIN)", err ? err->message : "");
        exit(2);
    }
    gst_object_unref(p);
}

static void run_case(const uint8_t *data, size_t size)
{
    if (size < 2)
        return;
    ensure_init();
    const int codec = data[0] & 3;
    const int policy = (data[1] & 7) % 5, workers = 1 + ((data[1] >> 3) & 3);
    char launch[256];
    /* Own schedulers now and then, so creation and teardown get fuzzed too. */
    snprintf(launch, sizeof(launch), "%s ! dfdec policy=%s n-workers=%d shared-scheduler=%s%s",
             parsers[codec], policies[policy], workers, (data[1] & 0x80) ? "false" : "true",
             t_under_tsan() ? " threading=slice" : "");
    GstHarness *h = gst_harness_new_parse(launch);
    if (!h)
        return;
    GstBus *bus = gst_bus_new();
    gst_element_set_bus(h->element, bus);
    gst_harness_set_src_caps_str(h, caps[codec]);
    data += 2;
    size -= 2;
    /* Chunks of varying size, as a network source would deliver them. */
    size_t off = 0, chunk = 4096;
    while (off < size) {
        size_t n = size - off < chunk ? size - off : chunk;
        GstBuffer *b = gst_buffer_new_memdup(data + off, n);
        if (gst_harness_push(h, b) != GST_FLOW_OK)
            break;
        off += n;
        chunk = 512 + (data[off % size] * 97u) % 16384;
        for (GstBuffer *o; (o = gst_harness_try_pull(h));) {
            n_frames++;
            gst_buffer_unref(o);
        }
    }
    gst_harness_push_event(h, gst_event_new_eos());
    for (GstBuffer *o; (o = gst_harness_try_pull(h));) {
        n_frames++;
        gst_buffer_unref(o);
    }
    for (GstMessage *m; (m = gst_bus_pop(bus));) {
        n_warnings += GST_MESSAGE_TYPE(m) == GST_MESSAGE_WARNING;
        if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR) {
            GError *err = NULL;
            gchar *dbg = NULL;
            gst_message_parse_error(m, &err, &dbg);
            fprintf(stderr, "fuzz_element: error from %s: %s (%s)\n", GST_MESSAGE_SRC_NAME(m),
                    err->message, dbg ? dbg : "");
            g_clear_error(&err);
            g_free(dbg);
            n_errors++;
        }
        gst_message_unref(m);
    }
    gst_element_set_bus(h->element, NULL);
    gst_object_unref(bus);
    gst_harness_teardown(h);
    n_cases++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    run_case(data, size);
    return 0;
}

#ifndef DF_LIBFUZZER

static uint64_t rnd(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* Mutant `k` of `in` into `out` (capacity len * 2); returns its length.
 * Bytes 0-1 (the configuration) are kept valid, the stream is damaged. */
static size_t mutate(const uint8_t *in, size_t len, uint8_t *out, int k)
{
    uint64_t seed = 0x9e3779b97f4a7c15ull ^ ((uint64_t)k * 0x2545f4914f6cdd1dull) ^ len;
    memcpy(out, in, len);
    out[1] = (uint8_t)rnd(&seed);
    if (len < 64)
        return len;
    size_t body = len - 2;
    switch (k % 5) {
    case 0: /* bit flips */
        for (int i = 0; i < 1 + (int)(rnd(&seed) % 16); i++)
            out[2 + rnd(&seed) % body] ^= (uint8_t)(1u << (rnd(&seed) % 8));
        return len;
    case 1: { /* a run of one byte */
        size_t at = 2 + rnd(&seed) % body, n = 1 + rnd(&seed) % 256;
        memset(out + at, (int)(rnd(&seed) & 0xff), at + n > len ? len - at : n);
        return len;
    }
    case 2: /* truncation */
        return 2 + rnd(&seed) % body;
    case 3: { /* a chunk dropped */
        size_t at = 2 + rnd(&seed) % body, n = 1 + rnd(&seed) % (body / 4 + 1);
        if (at + n > len)
            n = len - at;
        memmove(out + at, in + at + n, len - at - n);
        return len - n;
    }
    default: { /* a chunk duplicated */
        size_t at = 2 + rnd(&seed) % body, n = 1 + rnd(&seed) % (body / 4 + 1);
        if (at + n > len)
            n = len - at;
        memcpy(out + at + n, in + at, len - at);
        return len + n;
    }
    }
}

static int mutants;

static void on_alarm(int sig)
{
    static const char msg[] = "fuzz_element: a case did not finish within 60 s (hang)\n";
    ssize_t r = write(2, msg, sizeof(msg) - 1);
    (void)r;
    _exit(3);
}

static void replay_one(const uint8_t *data, size_t size, void *opaque)
{
    uint8_t *mut = malloc(2 * size + 1);
    if (!mut)
        return;
    alarm(60);
    run_case(data, size);
    for (int k = 0; k < mutants; k++) {
        alarm(60);
        run_case(mut, mutate(data, size, mut, k));
    }
    alarm(0);
    free(mut);
}

int main(int argc, char **argv)
{
    int i = 1, ret = 0;
    if (i + 1 < argc && strcmp(argv[i], "--mutate") == 0) {
        mutants = atoi(argv[i + 1]);
        i += 2;
    }
    if (i >= argc) {
        fprintf(stderr, "usage: fuzz_element [--mutate N] FILE|DIR...\n");
        return 2;
    }
    signal(SIGALRM, on_alarm);
    for (; i < argc; i++)
        ret |= df_fuzz_replay("fuzz_element", argv[i], replay_one, NULL);
    printf("fuzz_element: %ld cases, %ld frames out, %ld warnings, %ld errors posted, "
           "0 crashes, 0 hangs\n",
           n_cases, n_frames, n_warnings, n_errors);
    return ret ? 1 : 0;
}
#endif
