/* The dfsim engine's graph, shared by its building from a trace
 * (sim_graph.c) and the replay (sim.c).  Private to the engine. */
#ifndef DFSIM_SIM_GRAPH_H
#define DFSIM_SIM_GRAPH_H

#include "sim.h"

#include <stdbool.h>
#include <stdint.h>

/* 2^50 ns (13 days) of recorded task time: times 4096 streams the
 * simulated clock still fits an int64. */
#define SIM_MAX_WORK_NS ((int64_t)1 << 50)

typedef struct SimIn {
    int pred; /* node index, -1: produced outside the graph */
    int module;
    uint64_t bytes;
    int32_t rec_worker;
} SimIn;

typedef struct SimSeg {
    int64_t ns;
    int wait; /* group index awaited after this segment; -1 for the last */
} SimSeg;

typedef struct SimNode {
    int module, index;
    int64_t tag;
    int group;
    int parent;
    int created_seg; /* parent's segment in which this node was created */
    int start_pred;
    int start_in; /* its input from start_pred (the row above: DfJobs.start_bytes), -1: none */
    int first_in, n_in;
    int first_seg, n_seg;
    int64_t created_ns;
    int64_t deadline;
    int64_t lost_ns;  /* recorded: ready, its worker idle, yet not started */
    int64_t cpu_ns;   /* single-segment body: recorded CPU time (0: unknown) */
    double cpu_share; /* body with waits: its own CPU time over its self time (0: unknown) */
    int rec_busy;     /* workers busy at its recorded start, itself included */
    bool rec_wpp;     /* ordered job whose row above was running on another worker
                       * when it started in the recording */
    bool job;         /* an unordered job of a batch (siblings: same group, same parent) */
    bool rec_succ;    /* had a successor when it was made ready in the recording (one
                       * created before then: df_pnode_has_succ at its placement) */
    bool rec_par;     /* such a job that started while a sibling ran on another worker */
} SimNode;

struct SimGraph {
    int n;
    SimNode *nodes;
    SimIn *ins;
    SimSeg *segs;
    int n_groups;
    int *group_size;
    /* CSR lists */
    int *succ_first, *succ; /* consumer node, input slot packed */
    int *succ_slot;
    int *child_first, *child; /* children sorted by created_seg */
    int *startsucc_first, *startsucc;
    int *ext; /* external nodes by creation time */
    int n_ext;
    int window;
    int frames;
    int64_t lost_ns;     /* sum of the nodes' lost_ns */
    int64_t span_ns;     /* recording: first creation to last end */
    int64_t dispatch_ns; /* median ready-to-start gap on an idle worker */
};

/* Pacing's frames: frame k is the k-th distinct tag in order, a node
 * without one belongs to its parent's frame, however deep (-1: none, not
 * paced).  Fills frame_of[g->n]; returns the number of frames, or
 * -ENOMEM. */
int sim_graph_frame_of(const SimGraph *g, int *frame_of);

/* When frame f of `stream` (of `streams`) arrives: SimConfig's pacing. */
static inline int64_t sim_arrival_ns(const SimConfig *cfg, int64_t period_ns, int streams,
                                     int stream, int f)
{
    const int64_t spread = period_ns * (cfg->phase_frames > 1 ? cfg->phase_frames : 1);
    return (int64_t)f * period_ns + spread * stream / streams;
}

/* A body segment's time as replayed before what depends on the schedule
 * (the busy count, WPP rows apart, jobs beside their siblings): off this
 * machine (!lost_cpu) a body's work is its CPU time, since its wall time
 * also holds the preemption by this machine's other load. */
static inline int64_t sim_seg_ns(const SimConfig *cfg, const SimNode *sn, int64_t recorded_ns)
{
    int64_t ns = recorded_ns;
    if (!cfg->lost_cpu && sn->cpu_ns > 0 && sn->cpu_ns < ns)
        ns = sn->cpu_ns;
    if (!cfg->lost_cpu && sn->cpu_share > 0)
        ns = (int64_t)((double)ns * sn->cpu_share);
    return ns;
}

/* SimConfig.slowdown at `busy` workers busy (1 at one). */
static inline double sim_slowdown_at(const SimConfig *c, int busy)
{
    if (busy <= 1)
        return 1.0;
    return c->slowdown[busy < c->n_slowdown ? busy : c->n_slowdown];
}

#endif
