/* The dfsim engine: replays a recorded dfsched trace on a synthetic
 * topology with the scheduler's own policy code, driven by a simulated
 * clock instead of threads. */
#ifndef DFSIM_SIM_H
#define DFSIM_SIM_H

#include "dfsched.h"

/* A task graph rebuilt from a trace. */
typedef struct SimGraph SimGraph;

/* Build the replayable graph from a trace.  Durations become self times
 * (minus time spent waiting and the transfer cost the recording paid, at
 * `rec_ns_per_byte` per level of the recording machine). */
int sim_graph_from_trace(const DfTrace *trace, const double *rec_ns_per_byte, SimGraph **out,
                         DfError *err);
void sim_graph_free(SimGraph *g);

/* Frames (distinct tags) and tasks in the graph. */
int sim_graph_frames(const SimGraph *g);
size_t sim_graph_tasks(const SimGraph *g);
/* External submissions allowed in flight (from the recording). */
int sim_graph_window(const SimGraph *g);
/* CPU time the recording lost outside tasks: the sum, over the nodes, of
 * the time each was ready with its worker idle (between two bodies) but
 * not yet started, less the median such gap, which is the dispatch itself
 * (sim_graph_dispatch_ns()).  The decoding thread's packet and frame
 * handling, the OS and other processes on the recording's cores. */
int64_t sim_graph_lost_ns(const SimGraph *g);
/* The median ready-to-start gap on an idle worker in the recording. */
int64_t sim_graph_dispatch_ns(const SimGraph *g);
/* Wall time of the recording, from the first node's creation to the last
 * node's end: the recorded run's own frame rate is frames / span. */
int64_t sim_graph_span_ns(const SimGraph *g);

/* Self time of the graph's bodies (as replayed at one busy worker):
 * ordered jobs (WPP rows) whose row above ran on another worker when they
 * started in the recording, the other ordered jobs, and the rest. */
void sim_graph_self_split(const SimGraph *g, int64_t *ordered_wpp, int64_t *ordered_alone,
                          int64_t *other);
/* The same for unordered jobs (a batch of independent slice jobs or
 * bands): those that started while a sibling ran on another worker in the
 * recording, the other jobs, and the rest. */
void sim_graph_job_split(const SimGraph *g, int64_t *par, int64_t *alone, int64_t *other);

#define SIM_MAX_SLOWDOWN 64

/* What an idle worker pays per poll round, besides --poll-ns of pauses:
 * SIM_IDLE_SUMMARY, dfsched since 2026-12-05: per-domain has-work
 * summaries and bounded random victims, one summary word per level of the
 * worker's hierarchy and `summary_victims` victims probed in its nearest
 * domain, SIM_IDLE_PROBE_LINES each, O(1); SIM_IDLE_SCAN, the scheduler
 * before: it read every other worker's ready set (two cache lines each,
 * each at its topology distance), O(N) a round; SIM_IDLE_NONE: nothing
 * (the model before 2026-12-05). */
typedef enum { SIM_IDLE_SCAN, SIM_IDLE_SUMMARY, SIM_IDLE_NONE } SimIdleModel;
#define SIM_IDLE_LINES_PER_SET 2
/* A thief's probe of a victim with one live lane (ready.c): the word of
 * `live` and `due`, the inbox's, and that lane's top and bottom. */
#define SIM_IDLE_PROBE_LINES 4

/* "scan", "summary", "none"; NULL past the last. */
const char *sim_idle_model_name(int model);

typedef struct SimConfig {
    const char *topology; /* hwloc synthetic string, NULL: this machine */
    int n_workers;
    const char *policy;
    DfCostModel cost_model;
    double ns_per_byte[DF_N_LEVELS]; /* charged per input byte at each level */
    int64_t task_overhead_ns;        /* dispatch cost per task */
    int64_t poll_ns;                 /* an idle worker's pause between two polls */
    SimIdleModel idle_model;         /* what a poll reads (default SIM_IDLE_SUMMARY) */
    double line_ns[DF_N_LEVELS];     /* one cache line from a worker at each level */
    int summary_victims;             /* SIM_IDLE_SUMMARY: victims tried per poll */
    int64_t spin_ns;                 /* idle spin before parking (poll_us) */
    int64_t wake_ns;                 /* futex wake-up of a parked worker */
    int64_t complete_ns;             /* finishing a node until the next pop */
    int streams;                     /* the graph replayed this many times at once */
    int window;                      /* external submissions in flight per stream (0: recorded) */
    double explore_rate;
    uint64_t seed;
    /* How much slower a body runs while k workers are busy (itself
     * included): slowdown[k] for k = 1..n_slowdown (slowdown[1] = 1), the
     * last one beyond.  Measured on the machine (dfbench decode's
     * ffmpeg-streams peer); the recorded bodies are first brought back to
     * one busy worker with the busy count of their own recorded start.
     * n_slowdown 0: no such effect. */
    double slowdown[SIM_MAX_SLOWDOWN + 1];
    int n_slowdown;
    /* How much longer an ordered job (a WPP row) runs when the row above
     * runs on another worker at its start: libavcodec's per-CTU progress
     * waits and the row above's pixels, which the row filters, cross the
     * cores.  Measured on the machine (dfbench decode's ffmpeg-slice CPU
     * per frame at 2 workers over 1); 0 or 1: no such effect. */
    double wpp_factor;
    /* How much longer an unordered job (an H.264 slice, an MPEG-2 band)
     * runs when another job of its batch runs on another worker at its
     * start: the picture's shared per-macroblock tables and the decoder's
     * context move between the cores.  Measured the same way (dfbench
     * decode's ffmpeg-slice CPU per frame at 2 workers over 1); 0 or 1:
     * no such effect. */
    double job_factor;
    bool lost_cpu; /* this machine's load: charge each node the CPU time
                    * the recording lost before it (sim_graph_lost_ns()) and
                    * run bodies for their wall time; off (other machines),
                    * single-segment bodies run for their recorded CPU time
                    * when the trace has it */
    /* Pacing: frame k of stream s arrives at (k + phase_frames x s /
     * streams) / fps (the streams' starts spread over phase_frames
     * periods: 1, within one period, every stream's k-th frame due
     * together; a GOP, independent sources) and its outside submissions
     * wait for it; every node of the frame is due budget_frames periods
     * after its arrival.  0: unpaced, nodes keep their recorded deadlines. */
    double fps;
    int budget_frames;
    int phase_frames; /* the streams' starts spread over this many periods (default 1) */
} SimConfig;

/* Defaults: 300 ns per task, 200 ns from a node's end to the next pop,
 * 1 us polls plus what the idle model reads (a spinning thief notices new
 * work within one round, at random), the scan model, a cache line at
 * {0, 2, 5, 40, 100, 150} ns for self, pu, l2, l3, numa, machine, 2
 * summary victims,
 * 50 us spin, 10 us wake-up,
 * ns/byte {0, .005, .01, .04, .08, .15} for self, pu, l2, l3, numa, machine. */
void sim_config_init(SimConfig *cfg);

typedef struct SimResult {
    int64_t makespan_ns;
    uint64_t frames; /* frames of all streams */
    double fps;
    double idle_share; /* idle worker time / (workers * makespan) */
    uint64_t tasks;
    uint64_t stolen;
    uint64_t continued;  /* nodes kept by their releaser to run next (continuation) */
    /* Nodes a timed wait ran although its filter refused them, after its
     * patience (DF_WAIT_PATIENCE_NS): paced replays only. */
    uint64_t wait_fallbacks;
    uint64_t rows;       /* WPP rows (ordered jobs with a row above) */
    uint64_t rows_apart; /* of them, started while the row above ran elsewhere */
    uint64_t bytes_level[DF_N_LEVELS];
    double local_byte_share;
    int64_t transfer_ns;  /* total transfer time charged */
    int64_t lost_ns;      /* recorded lost CPU time charged (lost_cpu) */
    uint64_t polls;       /* idle poll rounds (a failed pop or a steal) */
    uint64_t poll_lines;  /* other workers' cache lines those rounds read */
    int64_t poll_read_ns; /* time those reads took (idle_model) */
    /* Paced (SimConfig.fps): frames whose last node ended after their
     * deadline, and the 99th percentile and the largest of a frame's
     * latency (its last node's end less its arrival); 0 unpaced. */
    uint64_t frames_late;
    int64_t latency_p99_ns, latency_max_ns;
} SimResult;

#define SIM_BOUND_MAX_STREAMS 8192

/* Run one configuration. */
int sim_run(const SimGraph *g, const SimConfig *cfg, SimResult *out, DfError *err);
/* The most paced streams (at most max_streams) that could be carried
 * without a late frame by any schedule at all of cfg's workers, as far as
 * the work of each frame and the pacing of cfg tell (the processor-demand
 * test of EDF; sim_bound.c): an upper bound on what a policy carries. */
int sim_demand_bound(const SimGraph *g, const SimConfig *cfg, int max_streams, int *out,
                     DfError *err);
/* Whether `topology` (hwloc synthetic string) loads under `cfg`'s cost
 * model: checked once before the runs rather than by each of them. */
int sim_check_topology(const SimConfig *cfg, DfError *err);

#endif
