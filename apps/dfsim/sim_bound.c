/* The demand bound of a paced replay: how many streams no schedule could
 * exceed, so that a policy's capacity is read against what the work
 * allows and not only against K*.
 *
 * K paced streams are jobs (stream s, frame f): arrival a(s, f) as the
 * replay paces them (sim_arrival_ns), deadline a + budget x period, and
 * work w(f), the least that frame's nodes take in the model.  Whatever the
 * order, the jobs that arrive within [a1, a2] are all due by a2 + budget x
 * period and none can start before a1, so W workers must do
 *
 *     sum of their work <= W x (a2 - a1 + budget x period)
 *
 * for every such window: the processor-demand test of EDF (Baruah, Mok
 * and Rosier 1990) for a machine of W workers that could split any job
 * between them.  Necessary, not sufficient: nodes are not preemptive and
 * a stream's frames are a chain.  K* (total work over W) is the same test
 * over the whole run with the budget ignored; this one also sees the
 * clip's heavy stretches that aligned streams reach together.
 *
 * Windows need only start and end at arrivals.  With arrivals sorted and
 * S(j) the work of the first j jobs, the test is, for all i <= j,
 *     (S(j) - W a_j) - (S(i - 1) - W a_i) <= W x budget x period,
 * one pass keeping the least second term so far. */
#include "sim_graph.h"
#include "sched_internal.h"

#include <errno.h>
#include <stdlib.h>

typedef struct Job {
    int64_t arrival;
    int64_t work;
} Job;

static int cmp_job(const void *a, const void *b)
{
    const int64_t x = ((const Job *)a)->arrival, y = ((const Job *)b)->arrival;
    return (x > y) - (x < y);
}

/* The least busy-count slowdown of the model (1: none). */
static double least_slowdown(const SimConfig *cfg)
{
    double least = 1.0;
    for (int k = 2; k <= cfg->n_slowdown; k++)
        if (cfg->slowdown[k] < least)
            least = cfg->slowdown[k];
    return least;
}

/* The least time node i's bodies take in the replay: its segments as
 * replayed (sim_seg_ns), at the least slowdown `least` (least_slowdown),
 * a WPP row never apart from the row above nor a job beside a sibling
 * (factors the recorded body first comes back from), plus its dispatch. */
static int64_t least_work_ns(const SimGraph *g, const SimConfig *cfg, double least, int i)
{
    const SimNode *sn = &g->nodes[i];
    double f = 1.0;
    if (cfg->n_slowdown > 0)
        f = least / sim_slowdown_at(cfg, sn->rec_busy);
    if (sn->start_pred >= 0 && sn->rec_wpp && cfg->wpp_factor > 1.0)
        f /= cfg->wpp_factor;
    if (sn->job && sn->rec_par && cfg->job_factor > 1.0)
        f /= cfg->job_factor;
    int64_t ns = 0;
    for (int k = 0; k < sn->n_seg; k++)
        ns += sim_seg_ns(cfg, sn, g->segs[sn->first_seg + k].ns);
    return (int64_t)((double)ns * f) + cfg->task_overhead_ns;
}

/* Whether `streams` paced streams pass the test (-ENOMEM: unknown). */
static int passes(const SimConfig *cfg, const int64_t *work, int n_frames, int streams)
{
    Job *jobs = malloc(sizeof(*jobs) * (size_t)streams * (size_t)(n_frames ? n_frames : 1));
    if (!jobs)
        return -ENOMEM;
    const int64_t period = (int64_t)(1e9 / cfg->fps);
    size_t n = 0;
    for (int s = 0; s < streams; s++)
        for (int f = 0; f < n_frames; f++)
            if (work[f] > 0)
                jobs[n++] = (Job){sim_arrival_ns(cfg, period, streams, s, f), work[f]};
    qsort(jobs, n, sizeof(*jobs), cmp_job);
    /* In doubles: W x arrival reaches 2^60 at 1024 workers and 13 days. */
    const double w = cfg->n_workers, slack = w * (double)cfg->budget_frames * (double)period;
    double sum = 0, least = 0;
    int ok = 1;
    for (size_t j = 0; j < n && ok; j++) {
        const double e = sum - w * (double)jobs[j].arrival;
        if (j == 0 || e < least)
            least = e;
        sum += (double)jobs[j].work;
        ok = sum - w * (double)jobs[j].arrival - least <= slack;
    }
    free(jobs);
    return ok;
}

int sim_demand_bound(const SimGraph *g, const SimConfig *cfg, int max_streams, int *out,
                     DfError *err)
{
    *out = 0;
    if (cfg->fps <= 0 || cfg->n_workers < 1 || max_streams < 1)
        return df_set_error(err, -EINVAL, "the demand bound needs pacing, workers and streams");
    int *frame_of = malloc(sizeof(int) * (size_t)(g->n ? g->n : 1));
    const int n_frames = frame_of ? sim_graph_frame_of(g, frame_of) : -ENOMEM;
    int64_t *work = n_frames >= 0 ? calloc((size_t)(n_frames ? n_frames : 1), sizeof(*work)) : NULL;
    int ret = 0;
    if (!work) {
        ret = df_set_error(err, -ENOMEM, "out of memory");
        goto out;
    }
    /* Nodes of no frame (a decoder's set-up) are not paced: left out, the
     * test stays necessary. */
    const double least = least_slowdown(cfg);
    for (int i = 0; i < g->n; i++)
        if (frame_of[i] >= 0)
            work[frame_of[i]] += least_work_ns(g, cfg, least, i);
    /* Grow by doubling to the first count that fails, then bisect: more
     * streams ask for more work in every window, give or take where the
     * phases fall. */
    int lo = 0, hi = 1, r = 1;
    while (hi <= max_streams && (r = passes(cfg, work, n_frames, hi)) > 0) {
        lo = hi;
        hi *= 2;
    }
    if (hi > max_streams)
        hi = max_streams + 1;
    while (hi - lo > 1 && r >= 0) {
        const int mid = lo + (hi - lo) / 2;
        if ((r = passes(cfg, work, n_frames, mid)) > 0)
            lo = mid;
        else
            hi = mid;
    }
    if (r < 0) {
        ret = df_set_error(err, -ENOMEM, "out of memory");
        goto out;
    }
    *out = lo;
out:
    free(work);
    free(frame_of);
    return ret;
}
