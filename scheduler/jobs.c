/* Job batches as libavcodec's execute/execute2 hooks hand them out.
 *
 * With ordered_start, job j becomes ready only when job j-1 has started, so
 * a job that blocks until its predecessor has made progress (HEVC WPP rows
 * do, in pthread_cond_wait) always waits on a job that is already running:
 * no deadlock, whatever the number of workers.  With n_slots, job j also
 * waits for job j - n_slots to finish, because they share a threadnr slot
 * (libavcodec's per-thread local context). */
#include "sched_internal.h"

#include <errno.h>
#include <stdlib.h>

#define STACK_JOBS 128

static void job_body(DfTask *t, void *arg)
{
    const DfJobs *jobs = arg;
    DfNode *self = t->node;
    if (self->aux[0] == UINTPTR_MAX)
        return; /* placeholder whose job runs inline after the batch */
    const int jobnr = (int)self->aux[0];
    DfNode *next = (DfNode *)self->aux[1];
    if (next) {
        /* Written before the unhold's release RMW on next->pending: the
         * worker that makes next ready places it after an acquire of it. */
        if (jobs->start_bytes && next->n_inputs > 0) /* none: out of memory */
            df_node_input(next, 0)->worker = t->worker;
        df_node_unhold(next); /* job j+1 may start now that j has */
    }
    const int threadnr = jobs->n_slots > 0 ? jobnr % jobs->n_slots : 0;
    jobs->fn(jobs->ctx, jobnr, threadnr);
    if (jobs->workers)
        jobs->workers[jobnr] = t->worker;
    if (jobs->node_ids)
        jobs->node_ids[jobnr] = self->id;
}

/* The group was cancelled (never, for job batches) or a node was discarded:
 * the job must still run, because libavcodec reads every ret[] slot. */
static void job_cancel(DfTask *t, void *arg)
{
    job_body(t, arg);
}

/* Jobs [from, n_jobs) on the calling thread, in index order: a WPP row
 * then finds its predecessors finished.  With `record`, workers[] and
 * node_ids[] say so (the caller, node 0), as dfsched.h promises for a
 * batch run inline; the out-of-memory fallbacks do not record. */
static void run_in_order(DfSched *s, const DfJobs *jobs, int from, bool record)
{
    const int self = record ? df_sched_current_worker(s) : -1;
    for (int j = from; j < jobs->n_jobs; j++) {
        jobs->fn(jobs->ctx, j, jobs->n_slots > 0 ? j % jobs->n_slots : 0);
        if (record && jobs->workers)
            jobs->workers[j] = self;
        if (record && jobs->node_ids)
            jobs->node_ids[j] = 0;
    }
}

/* One worker: a batch runs inline, in index order, without nodes.
 * Nobody else could run a job, so nodes would only add their cost (11
 * tasks a frame instead of 3 on H.264 8-slice; 5-8 % less CPU per frame
 * in dfbench realtime at 1 worker, docs/scheduler.md).  With more workers
 * the jobs stay nodes: running a batch inline whenever other nodes were
 * queued showed no gain at 2 workers (9 paced streams against 9-12 with
 * nodes, run to run), and its trials left the other worker idle behind a
 * frame decoded alone (docs/scheduler.md).  A batch that asks for nodes
 * (as_tasks) gets them on one worker too: its jobs are where other
 * streams' frames may run before the rest of a long one. */
static bool run_here(DfSched *s, const DfJobs *jobs)
{
    if (jobs->n_jobs == 1)
        return true; /* no parallelism to gain */
    if (!jobs->serial && (df_sched_splits_jobs(s) || jobs->as_tasks))
        return false;
    DfWorker *w = df_current_worker(s);
    if (!w)
        return false;
    DF_WCTR_ADD(w, jobs_inline, 1);
    return true;
}

int df_jobs_run(DfSched *s, const DfJobs *jobs)
{
    const int n = jobs->n_jobs;
    if (n <= 0)
        return 0;
    if (run_here(s, jobs)) {
        run_in_order(s, jobs, 0, true);
        return 0;
    }
    DfGroup *g = df_group_new(s, jobs->deadline);
    DfNode *stack_nodes[STACK_JOBS];
    DfNode **nodes = n <= STACK_JOBS ? stack_nodes : malloc(sizeof(DfNode *) * (size_t)n);
    if (!g || !nodes) {
        /* Out of memory: the jobs still have to run; run them in order here. */
        if (nodes != stack_nodes)
            free(nodes);
        df_group_release(g);
        run_in_order(s, jobs, 0, false);
        return -ENOMEM;
    }
    int created = 0;
    for (int j = 0; j < n; j++) {
        DfNodeDesc d = {
            .fn = job_body,
            .cancel = job_cancel,
            .arg = (void *)jobs,
            .module = jobs->module,
            .index = j,
            .group = g,
            .deadline = jobs->deadline,
            .out_size = jobs->out_size,
        };
        DfNode *node = df_node_new(s, &d);
        if (!node)
            break;
        node->aux[0] = (uintptr_t)j;
        node->aux[1] = 0;
        if (j > 0 && jobs->ordered_start) {
            df_node_hold(node);
            nodes[j - 1]->aux[1] = (uintptr_t)node;
            nodes[j - 1]->flags |= DF_NF_RELEASER;
            node->start_pred_id = nodes[j - 1]->id;
        }
        nodes[j] = node;
        created++;
        /* The row above: input 0, its worker filled in by job j-1's start
         * (job_body).  The producer id names it in traces only. */
        if (j > 0 && jobs->ordered_start && jobs->start_bytes &&
            df_node_add_input(node, -1, jobs->start_bytes, jobs->module, nodes[j - 1]->id) < 0) {
            /* Out of memory: this job and the rest run inline afterwards. */
            node->aux[0] = UINTPTR_MAX;
            break;
        }
        if (jobs->add_inputs)
            jobs->add_inputs(jobs->in_ctx, node, j);
        if (jobs->n_slots > 0 && j >= jobs->n_slots &&
            df_node_depend(node, nodes[j - jobs->n_slots], 0) < 0) {
            /* Out of memory: this job and the rest run inline afterwards. */
            node->aux[0] = UINTPTR_MAX;
            break;
        }
    }
    const int first_inline =
        created > 0 && nodes[created - 1]->aux[0] == UINTPTR_MAX ? created - 1 : created;
    for (int j = 0; j < created; j++)
        df_node_submit(nodes[j]);
    df_sched_wait(s, g);
    for (int j = 0; j < created; j++)
        df_node_release(nodes[j]);
    if (nodes != stack_nodes)
        free(nodes);
    df_group_release(g);
    /* Jobs that got no node (out of memory) run here, after the others. */
    run_in_order(s, jobs, first_inline, false);
    return first_inline < n ? -ENOMEM : 0;
}
