/* dfbench transfer: what reading a picture band costs when another core
 * wrote it, per trCost level of this machine: the ns per byte that dfsim
 * charges for a byte read across workers (--ns-per-byte).
 *
 * Method: a band of --size KiB (1920-byte rows, as a 1080p picture's luma)
 * is written by a thread pinned to worker j's CPU, then read by a thread
 * pinned to worker 0's CPU the way motion compensation reads a reference:
 * one 16x16 block per block of the band, at random positions, so that the
 * reads wait on each line rather than stream behind the prefetcher.  The
 * same reads after worker 0 wrote the band itself are the local baseline.
 * The cost is (remote - local) / band bytes, medians over --repeat rounds;
 * one pair of workers per level that the machine has (the level matrix of
 * a dfsched on every PU, workers on the CPUs dfsched pins them to). */
#include "affinity.h"
#include "dfbench.h"
#include "dfsched.h"
#include "report.h"

#include <errno.h>
#include <glib.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define PROG           "dfbench transfer"
#define ROW_BYTES      1920
#define BLOCK          16
#define DEFAULT_KIB    512
#define DEFAULT_REPEAT 31

typedef struct DfXferPair {
    int level, worker, cpu_reader, cpu_writer;
    double remote_us, local_us, ns_per_byte; /* medians; NAN: not measured */
} DfXferPair;

typedef struct DfXferRun {
    uint8_t *band;
    size_t bytes;
    const uint32_t *offsets; /* block origins */
    int n_blocks, repeat;
    int cpu_writer;
    atomic_int turn; /* 0: the writer fills the band, 1: the reader reads it */
    bool pinned;
} DfXferRun;

static uint64_t read_blocks(const DfXferRun *r)
{
    uint64_t sum = 0;
    for (int b = 0; b < r->n_blocks; b++) {
        const uint8_t *p = r->band + r->offsets[b];
        for (int y = 0; y < BLOCK; y++) {
            uint64_t a, c;
            memcpy(&a, p + (size_t)y * ROW_BYTES, 8);
            memcpy(&c, p + (size_t)y * ROW_BYTES + 8, 8);
            sum += a ^ c;
        }
    }
    return sum;
}

static void *writer_main(void *arg)
{
    DfXferRun *r = arg;
    if (df_pin_self(r->cpu_writer) < 0)
        r->pinned = false;
    for (int i = 0; i < r->repeat; i++) {
        while (atomic_load_explicit(&r->turn, memory_order_acquire) != 0)
            ;
        memset(r->band, i & 0xff, r->bytes);
        atomic_store_explicit(&r->turn, 1, memory_order_release);
    }
    return NULL;
}

/* Measure one pair; the calling thread is the reader.  0 or -errno. */
static int measure_pair(DfXferRun *r, DfXferPair *p)
{
    double *remote = g_new(double, (gsize)r->repeat), *local = g_new(double, (gsize)r->repeat);
    volatile uint64_t sink = 0;
    int ret = 0;
    DfAffinity saved;
    df_affinity_save(&saved);
    r->cpu_writer = p->cpu_writer;
    r->pinned = true;
    atomic_store(&r->turn, 0);
    pthread_t th;
    if (df_pin_self(p->cpu_reader) < 0 || pthread_create(&th, NULL, writer_main, r) != 0) {
        ret = -EAGAIN;
        goto out;
    }
    for (int i = 0; i < r->repeat; i++) {
        while (atomic_load_explicit(&r->turn, memory_order_acquire) != 1)
            ;
        int64_t t0 = df_now_ns();
        sink += read_blocks(r);
        remote[i] = (double)(df_now_ns() - t0) / 1e3;
        memset(r->band, (i + 1) & 0xff, r->bytes);
        t0 = df_now_ns();
        sink += read_blocks(r);
        local[i] = (double)(df_now_ns() - t0) / 1e3;
        atomic_store_explicit(&r->turn, 0, memory_order_release);
    }
    pthread_join(th, NULL);
    if (!r->pinned) {
        ret = -EINVAL;
        goto out;
    }
    p->remote_us = df_summarize(remote, r->repeat).median;
    p->local_us = df_summarize(local, r->repeat).median;
    p->ns_per_byte = (p->remote_us - p->local_us) * 1e3 / (double)r->bytes;
out:
    (void)sink;
    df_affinity_restore(&saved);
    g_free(remote);
    g_free(local);
    return ret;
}

/* One pair (0, j) per level the machine has, j the first worker there. */
static int find_pairs(const DfCpuMap *m, DfXferPair *pairs, char *err, size_t len)
{
    const int n = m->n_pus;
    if (n < 2)
        return 0;
    char cpus[256];
    df_cpu_map_list(m, n, cpus, sizeof(cpus));
    DfSchedConfig sc;
    df_sched_config_init(&sc);
    sc.n_workers = n;
    sc.cpuset = cpus;
    DfSched *s = NULL;
    DfError e = {0};
    if (df_sched_new(&sc, &s, &e) < 0) {
        snprintf(err, len, "cannot read the topology: %.200s", e.msg);
        return -1;
    }

    int n_pairs = 0;
    for (int l = DF_LEVEL_SELF + 1; l < DF_N_LEVELS; l++)
        for (int j = 1; j < n; j++)
            if (df_sched_level(s, 0, j) == (DfLevel)l) {
                pairs[n_pairs++] = (DfXferPair){.level = l,
                                                .worker = j,
                                                .cpu_reader = df_cpu_map_cpu(m, 0, n),
                                                .cpu_writer = df_cpu_map_cpu(m, j, n),
                                                .remote_us = NAN,
                                                .local_us = NAN,
                                                .ns_per_byte = NAN};
                break;
            }
    df_sched_unref(s);
    return n_pairs;
}

static bool write_json(const char *path, const DfXferPair *pairs, int n, size_t bytes, int repeat,
                       const char *arg)
{
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "bench");
    json_builder_add_string_value(b, "transfer");
    df_report_machine_json(b);
    json_builder_set_member_name(b, "band_bytes");
    json_builder_add_int_value(b, (gint64)bytes);
    json_builder_set_member_name(b, "repeat");
    json_builder_add_int_value(b, repeat);
    json_builder_set_member_name(b, "levels");
    json_builder_begin_array(b);
    for (int i = 0; i < n; i++) {
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "level");
        json_builder_add_string_value(b, df_level_name((DfLevel)pairs[i].level));
        json_builder_set_member_name(b, "workers");
        json_builder_begin_array(b);
        json_builder_add_int_value(b, 0);
        json_builder_add_int_value(b, pairs[i].worker);
        json_builder_end_array(b);
        json_builder_set_member_name(b, "cpus");
        json_builder_begin_array(b);
        json_builder_add_int_value(b, pairs[i].cpu_reader);
        json_builder_add_int_value(b, pairs[i].cpu_writer);
        json_builder_end_array(b);
        df_json_double(b, "remote_us", pairs[i].remote_us);
        df_json_double(b, "local_us", pairs[i].local_us);
        df_json_double(b, "ns_per_byte", pairs[i].ns_per_byte);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_set_member_name(b, "ns_per_byte_arg");
    json_builder_add_string_value(b, arg);
    json_builder_end_object(b);
    GError *err = NULL;
    const gboolean ok = df_json_write(b, path, &err);
    if (!ok) {
        df_cli_fail(PROG, "cannot write %s: %s", path, err->message);
        g_error_free(err);
    }
    g_object_unref(b);
    return ok;
}

int df_bench_transfer_main(int argc, char **argv)
{
    int size_kib = DEFAULT_KIB, repeat = DEFAULT_REPEAT;
    char *json = NULL;
    GOptionEntry entries[] = {
        {"size", 0, 0, G_OPTION_ARG_INT, &size_kib,
         "Band size in KiB (16 to 65536; default 512, about one slice job's reference rows)",
         "KIB"},
        {"repeat", 0, 0, G_OPTION_ARG_INT, &repeat, "Rounds per pair (3 to 1000; default 31)", "N"},
        {"json", 0, 0, G_OPTION_ARG_FILENAME, &json, "Write the results as JSON", "FILE"},
        {NULL},
    };
    const DfCliSpec spec = {
        .param = "- what a byte written by another core costs to read, per level",
        .description =
            "A band is written on one worker's CPU and read on worker 0's in 16x16 blocks at\n"
            "random positions (motion compensation), against the same reads of a band worker 0\n"
            "wrote itself.  The last line is the --ns-per-byte argument for dfsim.\n",
        .entries = entries,
        .no_args = true,
    };
    int rc = DF_BENCH_USAGE;
    DfCpuMap map = {0};
    uint8_t *band = NULL;
    uint32_t *offsets = NULL;
    GString *arg = g_string_new(NULL);
    if (df_cli_parse_options(PROG, &spec, &argc, &argv) != DF_BENCH_OK)
        goto out;
    if (size_kib < 16 || size_kib > 65536) {
        df_cli_usage(PROG, "bad --size %d (16 to 65536 KiB)", size_kib);
        goto out;
    }
    if (repeat < 3 || repeat > 1000) {
        df_cli_usage(PROG, "bad --repeat %d (3 to 1000)", repeat);
        goto out;
    }
    const DfCliOutput outs[] = {{"--json", json}};
    rc = df_cli_check_outputs(PROG, outs, G_N_ELEMENTS(outs));
    if (rc != DF_CLI_OK)
        goto out;
    rc = DF_BENCH_FAILED;
    if (df_cpu_map_init(&map) < 0) {
        df_cli_fail(PROG, "cannot read the CPU set");
        goto out;
    }
    DfXferPair pairs[DF_N_LEVELS];
    char err[256] = "";
    const int n_pairs = find_pairs(&map, pairs, err, sizeof(err));
    if (n_pairs < 0) {
        df_cli_fail(PROG, "%s", err);
        goto out;
    }
    const size_t rows = (size_t)size_kib * 1024 / ROW_BYTES;
    const size_t bytes = rows * ROW_BYTES;
    const int n_blocks = (int)((rows / BLOCK) * (ROW_BYTES / BLOCK));
    band = aligned_alloc(64, (bytes + 63) / 64 * 64);
    offsets = malloc(sizeof(uint32_t) * (size_t)n_blocks);
    if (!band || !offsets) {
        df_cli_fail(PROG, "out of memory");
        goto out;
    }
    memset(band, 0, bytes);
    /* Fixed seed: every run and every pair reads the same blocks. */
    GRand *rand = g_rand_new_with_seed(1);
    for (int b = 0; b < n_blocks; b++) {
        const uint32_t x = (uint32_t)g_rand_int_range(rand, 0, ROW_BYTES - BLOCK);
        const uint32_t y = (uint32_t)g_rand_int_range(rand, 0, (gint32)(rows - BLOCK));
        offsets[b] = y * ROW_BYTES + x;
    }
    g_rand_free(rand);
    char machine[512];
    df_report_machine_line(machine, sizeof(machine));
    printf("%s on %s\nband %zu KiB (%zu rows of %d bytes), %d blocks of %dx%d read per round, "
           "%d rounds\n\n",
           PROG, machine, bytes / 1024, rows, ROW_BYTES, n_blocks, BLOCK, BLOCK, repeat);
    if (n_pairs == 0)
        printf("one PU: no pair of workers to measure\n");
    DfXferRun run = {
        .band = band, .bytes = bytes, .offsets = offsets, .n_blocks = n_blocks, .repeat = repeat};
    bool failed = false;
    for (int i = 0; i < n_pairs; i++)
        if (measure_pair(&run, &pairs[i]) < 0) {
            df_cli_fail(PROG, "cannot run a thread on CPU %d and %d", pairs[i].cpu_reader,
                        pairs[i].cpu_writer);
            failed = true;
        }
    static const char *const headers[] = {"level",     "workers",  "cpus",
                                          "remote us", "local us", "ns/byte"};
    DfTable *t = df_table_new(6, headers, "llrrrr");
    for (int i = 0; i < n_pairs; i++) {
        char w[32], c[32], rem[32], loc[32], npb[32];
        snprintf(w, sizeof(w), "0,%d", pairs[i].worker);
        snprintf(c, sizeof(c), "%d,%d", pairs[i].cpu_reader, pairs[i].cpu_writer);
        df_fmt_num(rem, sizeof(rem), pairs[i].remote_us, 1);
        df_fmt_num(loc, sizeof(loc), pairs[i].local_us, 1);
        df_fmt_num(npb, sizeof(npb), pairs[i].ns_per_byte, 3);
        const char *cells[] = {df_level_name((DfLevel)pairs[i].level), w, c, rem, loc, npb};
        df_table_row(t, cells);
        /* A remote read no slower than the local one costs nothing extra. */
        if (!isnan(pairs[i].ns_per_byte))
            g_string_append_printf(arg, "%s%s=%.4f", arg->len ? "," : "",
                                   df_level_name((DfLevel)pairs[i].level),
                                   pairs[i].ns_per_byte > 0 ? pairs[i].ns_per_byte : 0.0);
    }
    if (n_pairs)
        df_table_print(t, stdout);
    df_table_free(t);
    if (arg->len)
        printf("\ndfsim --ns-per-byte %s\n", arg->str);
    if (json && !write_json(json, pairs, n_pairs, bytes, repeat, arg->str))
        failed = true;
    rc = failed ? DF_BENCH_FAILED : DF_BENCH_OK;
out:
    free(band);
    free(offsets);
    g_string_free(arg, TRUE);
    df_cpu_map_fini(&map);
    g_free(json);
    return rc;
}
