/* dfsim's program around the engine (sim.h): its state, shared by the
 * command line (dfsim.c), the replays (dfsim_run.c), the measured figures
 * and the validation against them (dfsim_measured.c) and the output
 * (dfsim_out.c). */
#ifndef DFSIM_H
#define DFSIM_H

#include "dfsched_trace.h"
#include "report.h"
#include "sim.h"

#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdbool.h>

#define PROG        "dfsim"
#define MAX_WORKERS 4096
#define MAX_VALUES  64

typedef struct Opts {
    char **traces;
    char *topology, *policies, *workers, *streams, *json, *csv, *plot;
    char *ns_per_byte, *validate, *validate_input, *validate_impl, *lost_cpu, *slowdown;
    char *wpp_factor, *job_factor, *idle_model, *line_ns;
    int task_overhead_ns, poll_ns, window;
    double explore;
    double fps;        /* --fps: pacing, 0 off */
    int budget_frames; /* --budget-frames */
    int phase_frames;  /* --phase-frames */
} Opts;

typedef struct Row {
    char policy[32];
    int workers, streams;
    SimResult r;     /* the median over the traces, field by field */
    double *fps_run; /* per trace */
    double speedup;
    /* Paced: the median over the traces of sim_demand_bound at these
     * workers, whatever the policy and stream count; 0 unpaced. */
    int demand_bound;
} Row;

/* One recorded run to replay. */
typedef struct SimInput {
    const char *path;
    DfTrace trace;
    SimGraph *graph;
    double wpp_factor;           /* this graph's (its rows' share of the work differs) */
    double job_factor;           /* likewise for unordered jobs */
    double wpp_ratio;            /* the measured CPU ratio they came from; NAN: given or none */
    double lost_ns, dispatch_ns; /* the graph's (sim_graph_lost_ns(), _dispatch_ns()) */
    char threading[16];          /* the recording's libavcodec threading, "" when unknown */
    int repeat;                  /* the dfbench repeat it ran in, from 1; 0: unknown */
} SimInput;

typedef struct DfSim {
    Opts o;
    SimConfig base; /* the model: defaults, options and measured figures */
    int workers[MAX_VALUES], streams[MAX_VALUES];
    int n_workers, n_streams;
    gchar **pols;
    JsonParser *vparser; /* --validate */
    JsonArray *vresults; /* its "results" */
    SimInput *in;
    int n_in;
    Row *rows; /* policy by policy, streams by streams, workers */
    int n_rows;
    /* Model figures that differ from trace to trace: their medians. */
    double lost_ns, dispatch_ns, wpp_factor, job_factor, wpp_ratio;
    /* The recorded run: its workers, fps per trace and their median, and
     * its replay (NULL: not replayed). */
    int rec_workers;
    double *rec_fps_run, rec_fps;
    const Row *rec_row;
    JsonBuilder *vb; /* the validation's JSON (--validate) */
    bool all_ok;     /* every comparable projection within 10 % */
} DfSim;

static inline double median_of(const double *v, int n)
{
    return df_summarize(v, n).median;
}

/* The command line into d (dfsim.c): DF_CLI_OK or the exit status, the
 * error said. */
int df_sim_parse_options(DfSim *d, int argc, char **argv);

/* dfbench decode's measured figures (dfsim_measured.c). */
bool df_sim_parse_slowdown(const char *spec, SimConfig *c);
void df_sim_slowdown_from(JsonArray *results, const char *input, SimConfig *c);
void df_sim_trace_threading(JsonObject *vroot, const char *path, char *out, size_t len,
                            int *repeat);
double df_sim_factor_from(JsonArray *results, const char *input, const SimConfig *c, int64_t rw,
                          int64_t ra, int64_t other, double *ratio);
/* Prints the comparison with --validate's figures and fills d->vb and
 * d->all_ok. */
void df_sim_validate(DfSim *d);

/* The replays (dfsim_run.c): 0, or -1 with the error said. */
int df_sim_load(DfSim *d);
int df_sim_replay(DfSim *d);
/* The recorded run's figures (d->rec_*). */
void df_sim_recorded(DfSim *d);
void df_sim_free(DfSim *d);

/* The output (dfsim_out.c).  The writers return false with the error
 * said; a missing option is no error. */
void df_sim_print(const DfSim *d);
void df_sim_print_recorded(const DfSim *d);
bool df_sim_write_json(const DfSim *d);
bool df_sim_write_csv(const DfSim *d);
bool df_sim_write_plot(const DfSim *d);

#endif
