/* The dfsim engine: the replay, of a graph sim_graph.c builds from a trace.
 *
 * The trace gives each task its module, inputs (producer, bytes), group,
 * the task that created it, the groups it waited for (help-while-waiting)
 * and, for ordered job batches, the job whose start released it.  A task's
 * body becomes segments of self time separated by those waits; children
 * are submitted at the end of the segment in which they were created.
 *
 * The policies are dfsched's own (same vtable, same ready sets); only the
 * clock and the workers are simulated.  A worker runs one segment at a
 * time; a waiting body's worker helps by popping other nodes, and resumes
 * the body when its group is done and nothing nested is running — the
 * stack discipline of df_sched_wait().  Every input byte read from another
 * worker is charged ns_per_byte of the trCost level between the two.
 *
 * Ordered jobs (HEVC WPP rows, which block in libavcodec until the row
 * above is ahead) run for their recorded time less their overlap with the
 * row above (never less than their CPU time) and end no earlier than the
 * row above, holding their worker meanwhile.  Resources shared between
 * cores (caches, memory bandwidth, a VM host's SMT siblings) enter as one
 * measured factor per busy count (SimConfig.slowdown): a body recorded
 * while k workers ran is first brought back to one busy worker, then
 * slowed by the count busy when the replay starts it.  A WPP row costs
 * more CPU while the row above runs on another core (libavcodec's
 * per-CTU progress handshake, and the rows above it filters, move between
 * the cores): one measured factor (SimConfig.wpp_factor) for a row that
 * starts while the row above runs elsewhere, taken off the rows the
 * recording ran so first.  Independent jobs of one batch (H.264 slices,
 * MPEG-2 bands) likewise cost more while a sibling runs on another core
 * (the picture's shared per-macroblock tables and the decoder context move
 * between the cores): SimConfig.job_factor, for a job that starts while a
 * sibling runs elsewhere.
 *
 * A completion's most urgent released successor may stay with the
 * finishing worker to run next, as df_node_complete's continuation does
 * for a policy with push_keep (release_batch).
 *
 * An idle worker's poll round costs SimConfig.poll_ns of pauses plus the
 * other workers' cache lines it reads, each at SimConfig.line_ns of its
 * level, one after the other (no overlap of the misses: an upper bound):
 * all of them under the scan model (has_work and linear steal before
 * 2026-12-05), a bounded number under the summary model (dfsched's now,
 * the default).  A spinning worker notices new
 * work within one round, a failed round delays its next one, and a steal
 * starts after the round that found it.  Not modelled: the owners' pushes
 * slowed by the lines the pollers keep shared. */
#include "sim_graph.h"
#include "sim.h"
#include "sched_internal.h"

#include <errno.h>
#include <glib.h>
#include <stdlib.h>
#include <string.h>

void sim_config_init(SimConfig *c)
{
    memset(c, 0, sizeof(*c));
    c->policy = "cost-local";
    c->n_workers = 1;
    c->task_overhead_ns = 300;
    c->poll_ns = 1000;
    c->idle_model = SIM_IDLE_SUMMARY;
    const double line[DF_N_LEVELS] = {0, 2, 5, 40, 100, 150};
    memcpy(c->line_ns, line, sizeof(line));
    /* policy_cost_local.c's candidates: the sticky victim, two of the
     * nearest domain, one of the next (charged at the nearest level). */
    c->summary_victims = 4;
    c->spin_ns = 50000;
    c->wake_ns = 10000;
    c->complete_ns = 200;
    c->streams = 1;
    const double npb[DF_N_LEVELS] = {0, 0.005, 0.01, 0.04, 0.08, 0.15};
    memcpy(c->ns_per_byte, npb, sizeof(npb));
    c->explore_rate = 0.01;
    c->budget_frames = 2;
    c->phase_frames = 1;
}

const char *sim_idle_model_name(int model)
{
    static const char *const names[] = {"scan", "summary", "none"};
    return model >= 0 && model < (int)G_N_ELEMENTS(names) ? names[model] : NULL;
}

/* ------------------------------------------------------------ simulation */

enum { EV_SEG_END, EV_POLL, EV_NEXT, EV_ARRIVE /* worker: the stream */ };

typedef struct Event {
    int64_t t;
    uint64_t seq;
    int type, worker;
    uint64_t epoch;
} Event;

typedef struct Frame {
    int node;
    int seg;
    double scale; /* of every segment: the WPP row factor now over the recording's */
} Frame;

enum { W_IDLE, W_RUNNING, W_PARKED };

typedef struct Worker {
    int status;
    Frame *stack;
    int depth, cap;
    uint64_t epoch; /* invalidates queued events of an earlier status */
    bool poll_queued;
    int64_t since;      /* status change, for idle time */
    int64_t spin_until; /* an idle worker spins (polls) until then, then parks */
    int kept;           /* successor kept by continuation, run next; -1 */
    int run_len;        /* nodes run in a row by continuation */
    /* Inside a timed wait with refused nodes in its set: since when every
     * other worker has been waiting too (0: not so), as df_sched_wait. */
    int64_t fruitless_since;
} Worker;

typedef struct Sim {
    const SimGraph *g;
    const SimConfig *cfg;
    int nw, total;
    DfTopo topo;
    DfPolicy *pol;
    const DfPolicyOps *ops;
    DfWorkerState *state;
    DfNode **dn;
    int *pending;
    uint8_t *done;
    int *ran_on;        /* worker that started the node; -1 */
    int *blocked_on;    /* worker an ordered job blocks, its work done; -1 */
    int *group_left;    /* streams * n_groups */
    DfGroup *gtok;      /* streams * n_groups: what a node's group points at
                           (policies and wait filters compare, never read) */
    int *group_running; /* streams * n_groups: jobs of the batch running now */
    int *ext_next, *ext_inflight;
    /* complete_node's successors made ready, g->n; consumed before any
     * nested completion (a blocked row's) can refill it. */
    int *batch;
    Worker *w;
    Event *heap;
    size_t heap_n, heap_cap;
    uint64_t seq;
    int64_t now;
    int finished;
    int64_t queued;
    SimResult *res;
    int64_t idle_ns;
    int n_running; /* workers running a body */
    int wake_rr;
    uint64_t rng;
    int64_t *poll_read_ns; /* per worker: what one poll round reads (idle_model) */
    int *poll_lines;       /* per worker: how many lines that is */
    /* Pacing (cfg->fps): each node's frame (index of its tag, a job's its
     * parent's; -1: none), the nodes of each frame left per stream, the
     * streams with an arrival event queued, and the frames' latencies. */
    int *frame_of, n_frames, *frame_left;
    int64_t period_ns;
    bool *arrival_queued;
    int64_t *latency;
    size_t n_latency;
} Sim;

static int64_t sim_clock(void *ctx)
{
    return ((Sim *)ctx)->now;
}

static void heap_push(Sim *s, Event e)
{
    if (s->heap_n == s->heap_cap) {
        s->heap_cap = s->heap_cap ? s->heap_cap * 2 : 1024;
        s->heap = realloc(s->heap, sizeof(Event) * s->heap_cap);
    }
    e.seq = s->seq++;
    size_t i = s->heap_n++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (s->heap[p].t < e.t || (s->heap[p].t == e.t && s->heap[p].seq < e.seq))
            break;
        s->heap[i] = s->heap[p];
        i = p;
    }
    s->heap[i] = e;
}

static Event heap_pop(Sim *s)
{
    Event top = s->heap[0];
    Event last = s->heap[--s->heap_n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= s->heap_n)
            break;
        if (c + 1 < s->heap_n &&
            (s->heap[c + 1].t < s->heap[c].t ||
             (s->heap[c + 1].t == s->heap[c].t && s->heap[c + 1].seq < s->heap[c].seq)))
            c++;
        if (last.t < s->heap[c].t || (last.t == s->heap[c].t && last.seq < s->heap[c].seq))
            break;
        s->heap[i] = s->heap[c];
        i = c;
    }
    s->heap[i] = last;
    return top;
}

static inline const SimNode *node_of(const Sim *s, int gi)
{
    return &s->g->nodes[gi % s->g->n];
}

static void set_status(Sim *s, int w, int st)
{
    Worker *wk = &s->w[w];
    if (wk->status != W_RUNNING)
        s->idle_ns += s->now - wk->since;
    s->n_running += (st == W_RUNNING) - (wk->status == W_RUNNING);
    wk->status = st;
    wk->since = s->now;
    wk->epoch++;
    wk->poll_queued = false;
    uint8_t v = st == W_RUNNING ? DF_WS_RUNNING : st == W_PARKED ? DF_WS_PARKED : DF_WS_IDLE;
    atomic_store_explicit(&s->state[w].v, v, memory_order_relaxed);
    if (st == W_IDLE) {
        /* A spinning worker's heartbeat stays fresh until it would park. */
        wk->spin_until = s->now + s->cfg->spin_ns;
        atomic_store_explicit(&s->state[w].beat, wk->spin_until - DF_IDLE_BEAT_NS + 1,
                              memory_order_relaxed);
    }
}

static bool spinning(const Sim *s, int w)
{
    return s->w[w].status == W_IDLE && s->now < s->w[w].spin_until;
}

static void schedule_poll(Sim *s, int w, int64_t delay)
{
    Worker *wk = &s->w[w];
    if (wk->status == W_RUNNING || wk->poll_queued)
        return;
    wk->poll_queued = true;
    heap_push(s, (Event){.t = s->now + delay, .type = EV_POLL, .worker = w, .epoch = wk->epoch});
}

/* One poll round of worker w: its pauses and what it reads. */
static int64_t poll_period(const Sim *s, int w)
{
    return s->cfg->poll_ns + s->poll_read_ns[w];
}

/* A poll round that read other workers' lines: a failed pop, or a steal. */
static int64_t charge_poll(Sim *s, int w)
{
    s->res->polls++;
    s->res->poll_lines += (uint64_t)s->poll_lines[w];
    s->res->poll_read_ns += s->poll_read_ns[w];
    return s->poll_read_ns[w];
}

/* What one poll round of each worker reads, from the topology: the scan
 * every other worker's two lines at its level; the summary one word per
 * level present around the worker (all of them: an upper bound for a walk
 * outward that stops at the first domain with work) and the victims' two
 * lines at the nearest level. */
static void poll_costs(Sim *s)
{
    const SimConfig *c = s->cfg;
    for (int w = 0; w < s->nw; w++) {
        double ns = 0;
        int lines = 0;
        if (c->idle_model == SIM_IDLE_SCAN) {
            for (int v = 0; v < s->nw; v++)
                if (v != w) {
                    ns += SIM_IDLE_LINES_PER_SET * c->line_ns[df_topo_level(&s->topo, w, v)];
                    lines += SIM_IDLE_LINES_PER_SET;
                }
        } else if (c->idle_model == SIM_IDLE_SUMMARY) {
            bool present[DF_N_LEVELS] = {false};
            int nearest = DF_N_LEVELS;
            for (int v = 0; v < s->nw; v++)
                if (v != w) {
                    const int l = (int)df_topo_level(&s->topo, w, v);
                    present[l] = true;
                    nearest = l < nearest ? l : nearest;
                }
            for (int l = 0; l < DF_N_LEVELS; l++)
                if (present[l]) {
                    ns += c->line_ns[l];
                    lines++;
                }
            /* No more victims than there are other workers. */
            const int victims = c->summary_victims < s->nw - 1 ? c->summary_victims : s->nw - 1;
            if (nearest < DF_N_LEVELS) {
                ns += (double)victims * SIM_IDLE_PROBE_LINES * c->line_ns[nearest];
                lines += victims * SIM_IDLE_PROBE_LINES;
            }
        }
        s->poll_read_ns[w] = (int64_t)(ns + 0.5);
        s->poll_lines[w] = lines;
    }
}

/* Delay before worker w notices new work: a spinning one at its next poll,
 * a parked one after a futex wake-up. */
static int64_t notice_delay(Sim *s, int w)
{
    if (!spinning(s, w))
        return s->cfg->wake_ns;
    /* Somewhere in its poll round. */
    const int64_t period = poll_period(s, w);
    return 1 + (int64_t)(df_rand_next(&s->rng) % (uint64_t)(period > 0 ? period : 1));
}

/* `running`: the worker that made it ready goes on running a body (a
 * submission from inside one, an ordered job released by its
 * predecessor's start), as df_make_ready_running() says. */
static void wake_for(Sim *s, int self, DfPlacement p, bool running);

/* What a node with successors points at (never followed). */
static DfEdge sim_edge_mark;

static void make_ready(Sim *s, int self, int gi, bool running)
{
    DfPlacement p = s->ops->push(s->pol, self, s->dn[gi]);
    s->queued++;
    wake_for(s, self, p, running);
}

/* Who notices a node placed at p. */
static void wake_for(Sim *s, int self, DfPlacement p, bool running)
{
    /* The worker it was placed with notices (woken if parked, as
     * df_make_ready does); spinning workers notice too, as thieves. */
    int target = p.worker;
    if (target >= 0 && target != self && s->w[target].status != W_RUNNING)
        schedule_poll(s, target, notice_delay(s, target));
    int woken = 0;
    for (int k = 0; k < s->nw && woken < 2; k++) {
        int v = (s->wake_rr + k) % s->nw;
        if (v == self || v == target || s->w[v].poll_queued || !spinning(s, v))
            continue;
        schedule_poll(s, v, notice_delay(s, v));
        s->wake_rr = v + 1;
        woken++;
    }
    /* A shared set, a busy owner with a backlog, or a node left with the
     * worker that goes on running: df_make_ready wakes a parked worker as
     * well. */
    if (!woken && (target < 0 || p.backlog || (running && self >= 0 && target == self)))
        for (int k = 0; k < s->nw; k++) {
            int v = (s->wake_rr + k) % s->nw;
            if (v != self && s->w[v].status != W_RUNNING && !s->w[v].poll_queued) {
                schedule_poll(s, v, notice_delay(s, v));
                s->wake_rr = v + 1;
                break;
            }
        }
}

static void release(Sim *s, int self, int gi, bool running)
{
    if (--s->pending[gi] == 0)
        make_ready(s, self, gi, running);
}

/* When frame f of stream `stream` arrives, and when it is due (pacing). */
static int64_t arrival_ns(const Sim *s, int stream, int f)
{
    return sim_arrival_ns(s->cfg, s->period_ns, s->cfg->streams, stream, f);
}

static int64_t due_ns(const Sim *s, int stream, int f)
{
    return arrival_ns(s, stream, f) + (int64_t)s->cfg->budget_frames * s->period_ns;
}

static void submit_children(Sim *s, int self, int gi, int seg)
{
    const SimGraph *g = s->g;
    int base = gi - gi % g->n, i = gi % g->n;
    for (int k = g->child_first[i]; k < g->child_first[i + 1]; k++) {
        int c = g->child[k];
        if (g->nodes[c].created_seg != seg)
            continue;
        /* Paced: what a body creates is due with its frame (as the
         * decoder gives jobs and bands its frame's deadline). */
        if (s->cfg->fps > 0 && s->frame_of[c] >= 0)
            s->dn[base + c]->deadline = due_ns(s, gi / g->n, s->frame_of[c]);
        release(s, self, base + c, true);
    }
}

/* Paced: node gi ended; its frame ends with its last node. */
static void frame_node_done(Sim *s, int gi)
{
    const int i = gi % s->g->n, stream = gi / s->g->n, f = s->frame_of[i];
    if (f < 0 || --s->frame_left[stream * s->n_frames + f] > 0)
        return;
    s->res->frames_late += s->now > due_ns(s, stream, f);
    s->latency[s->n_latency++] = s->now - arrival_ns(s, stream, f);
}

static void submit_external(Sim *s, int stream)
{
    const SimGraph *g = s->g;
    int window = s->cfg->window > 0 ? s->cfg->window : g->window;
    while (s->ext_next[stream] < g->n_ext && s->ext_inflight[stream] < window) {
        const int i = g->ext[s->ext_next[stream]];
        int gi = stream * g->n + i;
        if (s->cfg->fps > 0 && s->frame_of[i] >= 0) {
            const int64_t at = arrival_ns(s, stream, s->frame_of[i]);
            if (at > s->now) {
                /* Not there yet: come back when it is. */
                if (!s->arrival_queued[stream]) {
                    s->arrival_queued[stream] = true;
                    heap_push(s, (Event){.t = at, .type = EV_ARRIVE, .worker = stream});
                }
                return;
            }
            s->dn[gi]->deadline = due_ns(s, stream, s->frame_of[i]);
        }
        s->ext_next[stream]++;
        s->ext_inflight[stream]++;
        release(s, -1, gi, false);
    }
}

static void begin_segment(Sim *s, int w, int64_t extra)
{
    Worker *wk = &s->w[w];
    Frame *f = &wk->stack[wk->depth - 1];
    const SimNode *sn = node_of(s, f->node);
    if (wk->status != W_RUNNING)
        set_status(s, w, W_RUNNING);
    int64_t ns = sim_seg_ns(s->cfg, sn, s->g->segs[sn->first_seg + f->seg].ns);
    /* The machine's slowdown at the busy count now, against the one the
     * recording ran at (set for the whole segment: counts change at task
     * ends, which are many per segment only for long bodies). */
    if (s->cfg->n_slowdown > 0)
        ns = (int64_t)((double)ns * sim_slowdown_at(s->cfg, s->n_running) /
                       sim_slowdown_at(s->cfg, sn->rec_busy));
    if (f->scale != 1.0)
        ns = (int64_t)((double)ns * f->scale);
    heap_push(
        s, (Event){.t = s->now + extra + ns, .type = EV_SEG_END, .worker = w, .epoch = wk->epoch});
}

/* The node whose body worker w runs (its innermost) if its start released
 * an ordered job, as run_one publishes it for thieves. */
static void publish_running(Sim *s, int w)
{
    const Worker *wk = &s->w[w];
    const DfNode *n = wk->depth > 0 ? s->dn[wk->stack[wk->depth - 1].node] : NULL;
    const uint64_t id = n && (n->flags & DF_NF_RELEASER) ? n->id : 0;
    atomic_store_explicit(&s->state[w].running, id, memory_order_relaxed);
}

static void start_node(Sim *s, int w, DfNode *n)
{
    Worker *wk = &s->w[w];
    int gi = (int)n->aux[0];
    s->queued--;
    if (wk->depth == wk->cap) {
        wk->cap = wk->cap ? wk->cap * 2 : 8;
        wk->stack = realloc(wk->stack, sizeof(Frame) * (size_t)wk->cap);
    }
    /* A WPP row runs slower while the row above runs on another worker
     * (SimConfig.wpp_factor); one recorded so is first brought back. */
    const SimNode *sn = node_of(s, gi);
    double scale = 1.0;
    if (sn->start_pred >= 0) {
        const int above = gi - gi % s->g->n + sn->start_pred;
        const bool now_wpp = !s->done[above] && s->ran_on[above] >= 0 && s->ran_on[above] != w;
        if (s->cfg->wpp_factor > 1.0)
            scale = (now_wpp ? s->cfg->wpp_factor : 1.0) / (sn->rec_wpp ? s->cfg->wpp_factor : 1.0);
        s->res->rows++;
        s->res->rows_apart += now_wpp;
    }
    /* An unordered job likewise while a sibling runs on another worker
     * (this worker runs no other: jobs do not wait). */
    if (sn->job) {
        int *running = &s->group_running[gi / s->g->n * s->g->n_groups + sn->group];
        if (s->cfg->job_factor > 1.0)
            scale *= (*running > 0 ? s->cfg->job_factor : 1.0) /
                     (sn->rec_par ? s->cfg->job_factor : 1.0);
        (*running)++;
    }
    s->ran_on[gi] = w;
    wk->stack[wk->depth++] = (Frame){gi, 0, scale};
    publish_running(s, w);
    set_status(s, w, W_RUNNING);
    /* A steal comes at the end of a poll round that read the others. */
    int64_t poll = 0;
    if (n->flags & DF_NF_STOLEN) {
        s->res->stolen++;
        poll = charge_poll(s, w);
    }
    /* As run_one: the flags of how it was taken stay until it completes
     * (df_node_input_worker reads DF_NF_STOLEN). */
    n->flags &= DF_NF_RELEASER | DF_NF_STOLEN;
    /* Transfer: every input byte from another worker, at its level; not
     * the row above's, whose cost is the WPP factor. */
    double transfer = 0;
    DfPInputCursor cur = df_pnode_inputs(n);
    int k_in = 0;
    for (DfPInput in; df_pnode_input_next(&cur, &in); k_in++) {
        if (in.worker < 0 || in.bytes == 0 || k_in == sn->start_in)
            continue;
        const int lev = df_topo_level(&s->topo, in.worker, w);
        s->res->bytes_level[lev] += in.bytes;
        transfer += (double)in.bytes * s->cfg->ns_per_byte[lev];
    }
    s->res->transfer_ns += (int64_t)transfer;
    /* The recording's CPU time lost before this node (see lost_time()). */
    int64_t lost = s->cfg->lost_cpu ? sn->lost_ns : 0;
    s->res->lost_ns += lost;
    /* Ordered jobs released by this start. */
    const SimGraph *g = s->g;
    int base = gi - gi % g->n, i = gi % g->n;
    for (int k = g->startsucc_first[i]; k < g->startsucc_first[i + 1]; k++) {
        const int c = base + g->startsucc[k];
        /* The row above starts here: where the row below reads it from,
         * as job_body (jobs.c) fills it in. */
        const int in = node_of(s, c)->start_in;
        if (in >= 0)
            df_node_input(s->dn[c], (unsigned)in)->worker = w;
        release(s, w, c, true);
    }
    begin_segment(s, w, s->cfg->task_overhead_ns + (int64_t)transfer + lost + poll);
}

/* Worker w holds a node kept by continuation: it runs that first, whatever
 * woke it in the gap after the completion (a poll for work placed on it). */
static bool run_kept(Sim *s, int w)
{
    Worker *wk = &s->w[w];
    if (wk->kept < 0)
        return false;
    const int k = wk->kept;
    wk->kept = -1;
    start_node(s, w, s->dn[k]);
    return true;
}

/* What worker w's wait accepts (df_sched_wait's filter): a waiting body
 * with a deadline (a paced replay) runs only its group's nodes and nodes
 * due before it; false: anything (a wait without a deadline, or none). */
static bool wait_filter(const Sim *s, int w, DfWaitFilter *f)
{
    const Worker *wk = &s->w[w];
    if (wk->depth == 0)
        return false;
    const Frame *top = &wk->stack[wk->depth - 1];
    const DfNode *waiter = s->dn[top->node];
    if (waiter->deadline == DF_NO_DEADLINE)
        return false;
    const SimNode *sn = node_of(s, top->node);
    const int grp = s->g->segs[sn->first_seg + top->seg].wait;
    *f = (DfWaitFilter){.group = &s->gtok[top->node / s->g->n * s->g->n_groups + grp],
                        .deadline = waiter->deadline};
    return true;
}

/* A filtered pop for a waiting worker, with df_sched_wait's fallback: when
 * its own set holds only refused nodes and every other worker has waited
 * for DF_WAIT_PATIENCE_NS (or there is no other), it rotates refused nodes
 * to the back until an accepted one comes up, then runs the most urgent. */
static DfNode *wait_pop(Sim *s, int w, const DfWaitFilter *f)
{
    Worker *wk = &s->w[w];
    DfNode *n = s->ops->pop(s->pol, w, f);
    if (n || !s->ops->queued(s->pol, w))
        return n;
    if (!wk->fruitless_since || !df_others_waiting(s->state, s->nw, w))
        wk->fruitless_since = s->now;
    if (s->nw > 1 && s->now - wk->fruitless_since < DF_WAIT_PATIENCE_NS)
        return NULL;
    const DfNode *first_moved = NULL;
    for (unsigned moved = 0;; moved++) {
        n = s->ops->pop(s->pol, w, NULL);
        if (!n || n == first_moved || moved >= DF_WAIT_ROTATE_MAX || df_pnode_accepts(f, n))
            break;
        if (!first_moved)
            first_moved = n;
        /* Back into the set, still queued (df_node_requeue). */
        n->flags &= (uint8_t) ~(DF_NF_STOLEN | DF_NF_EXPLORED);
        wake_for(s, w, s->ops->push(s->pol, w, n), false);
        if ((n = s->ops->pop(s->pol, w, f)))
            break;
    }
    if (n && !df_pnode_accepts(f, n))
        s->res->wait_fallbacks++;
    return n;
}

/* A parked worker near w, woken for the nodes w's wait refuses
 * (df_worker_idle's df_wake_near). */
static void wake_parked_near(Sim *s, int w)
{
    int best = -1;
    for (int v = 0; v < s->nw; v++)
        if (s->w[v].status == W_PARKED && !s->w[v].poll_queued &&
            (best < 0 || df_topo_level(&s->topo, w, v) < df_topo_level(&s->topo, w, best)))
            best = v;
    if (best >= 0)
        schedule_poll(s, best, s->cfg->wake_ns);
}

static void dispatch(Sim *s, int w)
{
    if (run_kept(s, w))
        return;

    Worker *wk = &s->w[w];
    DfWaitFilter filter;
    const DfWaitFilter *f = wait_filter(s, w, &filter) ? &filter : NULL;
    DfNode *n = f ? wait_pop(s, w, f) : s->ops->pop(s->pol, w, NULL);
    if (n) {
        wk->fruitless_since = 0;
        wk->run_len = 0;
        start_node(s, w, n);
        return;
    }
    if (wk->status == W_RUNNING)
        set_status(s, w, W_IDLE);
    /* The failed round read the others before the worker could pause. */
    const int64_t read_ns = charge_poll(s, w);
    if (f) {
        /* As df_worker_idle inside a filtered wait: busy for thieves, and
         * with refused nodes in its set it neither parks nor stops polling
         * (its patience runs), and a parked worker is woken for them. */
        atomic_store_explicit(&s->state[w].v, DF_WS_WAITING, memory_order_relaxed);
        if (s->ops->queued(s->pol, w)) {
            wake_parked_near(s, w);
            schedule_poll(s, w, s->cfg->poll_ns + read_ns);
            return;
        }
    }
    /* While spinning, poll again if there is work somewhere (a thief's
     * grace, or work another thief got first); new work wakes it anyway. */
    if (spinning(s, w)) {
        if (s->queued > 0)
            schedule_poll(s, w, s->cfg->poll_ns + read_ns);
    } else if (wk->status != W_PARKED) {
        set_status(s, w, W_PARKED);
    }
}

/* The worker's innermost body waits for its group: resume it if that group
 * is done, else help. */
static void after_nested(Sim *s, int w)
{
    Worker *wk = &s->w[w];
    if (run_kept(s, w))
        return;
    if (wk->depth == 0) {
        dispatch(s, w);
        return;
    }
    Frame *f = &wk->stack[wk->depth - 1];
    const SimNode *sn = node_of(s, f->node);
    int stream = f->node / s->g->n;
    int grp = s->g->segs[sn->first_seg + f->seg].wait;
    if (s->group_left[stream * s->g->n_groups + grp] == 0) {
        f->seg++;
        begin_segment(s, w, 0);
    } else {
        dispatch(s, w);
    }
}

static void group_done(Sim *s, int stream, int grp)
{
    /* Resume bodies waiting on it whose worker is not inside a nested node. */
    for (int v = 0; v < s->nw; v++) {
        Worker *wk = &s->w[v];
        if (wk->status == W_RUNNING || wk->depth == 0)
            continue;
        Frame *f = &wk->stack[wk->depth - 1];
        const SimNode *sn = node_of(s, f->node);
        if (f->node / s->g->n == stream && s->g->segs[sn->first_seg + f->seg].wait == grp) {
            f->seg++;
            begin_segment(s, v, 0);
        }
    }
}

static void complete_node(Sim *s, int w, int gi);

/* The innermost node of worker w has run its last segment. */
static void finish_node(Sim *s, int w, int gi)
{
    Worker *wk = &s->w[w];
    wk->depth--;
    publish_running(s, w);
    /* Between two nodes: not running, so that group_done() may resume this
     * worker's own waiting body; it pops again once it is through the
     * completion, and a spinning thief may be faster. */
    set_status(s, w, W_IDLE);
    complete_node(s, w, gi);
    if (wk->status == W_RUNNING && wk->kept >= 0) {
        /* Its waiting body resumed first (not expected: a kept node is of
         * the group it waits for): queue the kept one after all. */
        const int k = wk->kept;
        wk->kept = -1;
        s->queued--;
        make_ready(s, w, k, true);
    }
    if (wk->status != W_RUNNING)
        heap_push(s, (Event){.t = s->now + s->cfg->complete_ns,
                             .type = EV_NEXT,
                             .worker = w,
                             .epoch = wk->epoch});
}

/* The successors a completion made ready (s->batch[0..nb)): as
 * df_node_complete does, the most urgent may stay with the worker to run
 * next, a node of the finished one's `module` first among equally urgent
 * ones (df_node_kept_before; continuation: a policy with push_keep that does not take its own
 * newest first, at most DF_CONTINUE_MAX in a row, and inside a wait only
 * a node of the waited group); the others are made ready in graph order,
 * as from a running task when one was kept. */
static void release_batch(Sim *s, int w, int nb, int32_t module)
{
    Worker *wk = &s->w[w];
    int first = -1;
    if (nb > 0 && s->ops->push_keep && !s->pol->env.lifo && wk->run_len + 1 < DF_CONTINUE_MAX) {
        first = 0;
        for (int k = 1; k < nb; k++)
            if (df_node_kept_before(s->dn[s->batch[k]], s->dn[s->batch[first]], module))
                first = k;
        const int c = s->batch[first];
        if (wk->depth > 0) {
            const Frame *f = &wk->stack[wk->depth - 1];
            const SimNode *waiter = node_of(s, f->node);
            if (c / s->g->n != f->node / s->g->n ||
                node_of(s, c)->group != s->g->segs[waiter->first_seg + f->seg].wait)
                first = -1;
        }
    }
    if (first >= 0) {
        const int c = s->batch[first];
        const DfPlacement p = s->ops->push_keep(s->pol, w, s->dn[c]);
        s->queued++;
        if (p.kept) {
            wk->kept = c;
            wk->run_len++;
            s->res->continued++;
        } else {
            wake_for(s, w, p, false);
        }
    }
    for (int k = 0; k < nb; k++)
        if (k != first)
            make_ready(s, w, s->batch[k], wk->kept >= 0);
}

static void complete_node(Sim *s, int w, int gi)
{
    const SimGraph *g = s->g;
    int stream = gi / g->n, i = gi % g->n, base = gi - i;
    const SimNode *sn = &g->nodes[i];
    s->done[gi] = 1;
    s->finished++;
    s->res->tasks++;
    if (s->cfg->fps > 0)
        frame_node_done(s, gi);
    if (sn->job)
        s->group_running[stream * g->n_groups + sn->group]--;
    int nb = 0;
    for (int k = g->succ_first[i]; k < g->succ_first[i + 1]; k++) {
        int c = base + g->succ[k];
        DfInput *in = df_node_input(s->dn[c], (unsigned)g->succ_slot[k]);
        in->worker = df_node_input_worker(s->dn[gi], in->bytes, w);
        if (--s->pending[c] == 0)
            s->batch[nb++] = c;
    }
    release_batch(s, w, nb, s->dn[gi]->module);
    if (sn->group >= 0 && --s->group_left[stream * g->n_groups + sn->group] == 0)
        group_done(s, stream, sn->group);
    if (sn->parent < 0) {
        s->ext_inflight[stream]--;
        submit_external(s, stream);
    }
    /* The ordered job below, if it ended its work already, ends now. */
    for (int k = g->startsucc_first[i]; k < g->startsucc_first[i + 1]; k++) {
        const int c = base + g->startsucc[k];
        const int bw = s->blocked_on[c];
        if (bw >= 0) {
            s->blocked_on[c] = -1;
            finish_node(s, bw, c);
        }
    }
}

static void on_seg_end(Sim *s, int w)
{
    Worker *wk = &s->w[w];
    Frame *f = &wk->stack[wk->depth - 1];
    const SimNode *sn = node_of(s, f->node);
    submit_children(s, w, f->node, f->seg);
    if (f->seg < sn->n_seg - 1) {
        int stream = f->node / s->g->n;
        int grp = s->g->segs[sn->first_seg + f->seg].wait;
        if (s->group_left[stream * s->g->n_groups + grp] == 0) {
            f->seg++;
            begin_segment(s, w, 0);
        } else {
            set_status(s, w, W_IDLE); /* helping */
            dispatch(s, w);
        }
        return;
    }
    const int gi = f->node;
    /* An ordered job (HEVC WPP row) cannot end before the row above it:
     * it blocks in libavcodec, holding its worker, until that one ends. */
    const int sp = node_of(s, gi)->start_pred;
    if (sp >= 0 && !s->done[gi - gi % s->g->n + sp]) {
        s->blocked_on[gi] = w;
        return;
    }
    finish_node(s, w, gi);
}

static int cmp_i64(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Pacing's tables: each node's frame (sim_graph_frame_of), each frame's
 * node count. */
static int pacing_init(Sim *s, DfError *err)
{
    const SimGraph *g = s->g;
    const int n = g->n, K = s->cfg->streams;
    s->frame_of = malloc(sizeof(int) * (size_t)(n ? n : 1));
    s->arrival_queued = calloc((size_t)K, sizeof(bool));
    const int u = s->frame_of ? sim_graph_frame_of(g, s->frame_of) : -ENOMEM;
    if (u < 0 || !s->arrival_queued)
        return df_set_error(err, -ENOMEM, "out of memory");
    s->n_frames = u;
    s->frame_left = calloc((size_t)K * (size_t)(u ? u : 1), sizeof(int));
    s->latency = malloc(sizeof(int64_t) * (size_t)K * (size_t)(u ? u : 1));
    if (!s->frame_left || !s->latency)
        return df_set_error(err, -ENOMEM, "out of memory");
    for (int st = 0; st < K; st++)
        for (int i = 0; i < n; i++)
            if (s->frame_of[i] >= 0)
                s->frame_left[st * u + s->frame_of[i]]++;
    s->period_ns = (int64_t)(1e9 / s->cfg->fps);
    return 0;
}

static void free_block(void *block, const void *ctx)
{
    free(block);
}

int sim_run(const SimGraph *g, const SimConfig *cfg, SimResult *res, DfError *err)
{
    memset(res, 0, sizeof(*res));
    const DfPolicyOps *ops = df_policy_find(cfg->policy);
    if (!ops)
        return df_set_error(err, -EINVAL, "unknown policy \"%s\"", cfg->policy);
    if (cfg->n_workers < 1 || cfg->streams < 1)
        return df_set_error(err, -EINVAL, "need at least one worker and one stream");
    Sim s = {.g = g,
             .cfg = cfg,
             .nw = cfg->n_workers,
             .ops = ops,
             .res = res,
             .rng = cfg->seed ? cfg->seed : 0x2545f4914f6cdd1dull};
    int ret = df_topo_model(&s.topo, cfg->topology, cfg->n_workers, cfg->cost_model, NULL, err);
    if (ret < 0)
        return ret;
    const int K = cfg->streams;
    s.total = g->n * K;
    size_t scratch = ops->node_scratch(s.nw);
    s.state = aligned_alloc(DF_CACHELINE, sizeof(DfWorkerState) * (size_t)s.nw);
    s.w = calloc((size_t)s.nw, sizeof(Worker));
    s.dn = calloc((size_t)(s.total ? s.total : 1), sizeof(DfNode *));
    s.pending = calloc((size_t)(s.total ? s.total : 1), sizeof(int));
    s.done = calloc((size_t)(s.total ? s.total : 1), 1);
    s.blocked_on = malloc(sizeof(int) * (size_t)(s.total ? s.total : 1));
    s.ran_on = malloc(sizeof(int) * (size_t)(s.total ? s.total : 1));
    s.group_left = calloc((size_t)K * (size_t)(g->n_groups ? g->n_groups : 1), sizeof(int));
    s.group_running = calloc((size_t)K * (size_t)(g->n_groups ? g->n_groups : 1), sizeof(int));
    s.gtok = calloc((size_t)K * (size_t)(g->n_groups ? g->n_groups : 1), sizeof(DfGroup));
    s.ext_next = calloc((size_t)K, sizeof(int));
    s.ext_inflight = calloc((size_t)K, sizeof(int));
    s.batch = malloc(sizeof(int) * (size_t)(g->n ? g->n : 1));
    s.poll_read_ns = calloc((size_t)s.nw, sizeof(int64_t));
    s.poll_lines = calloc((size_t)s.nw, sizeof(int));
    if (!s.state || !s.w || !s.dn || !s.pending || !s.done || !s.blocked_on || !s.ran_on ||
        !s.group_left || !s.group_running || !s.gtok || !s.ext_next || !s.ext_inflight ||
        !s.batch || !s.poll_read_ns || !s.poll_lines) {
        ret = df_set_error(err, -ENOMEM, "out of memory");
        goto out;
    }
    poll_costs(&s);
    for (int gi = 0; gi < s.total; gi++)
        s.blocked_on[gi] = s.ran_on[gi] = -1;
    for (int v = 0; v < s.nw; v++) {
        atomic_init(&s.state[v].v, DF_WS_PARKED);
        atomic_init(&s.state[v].beat, 0);
        atomic_init(&s.state[v].running, 0);
        s.w[v].status = W_PARKED;
        s.w[v].kept = -1;
    }
    DfPolicyEnv env = {.n_workers = s.nw,
                       .topo = &s.topo,
                       .now = sim_clock,
                       .clock_ctx = &s,
                       .seed = cfg->seed,
                       .explore_rate = cfg->explore_rate,
                       .state = s.state};
    if (ops->create(&env, &s.pol) < 0) {
        ret = df_set_error(err, -ENOMEM, "cannot create policy");
        goto out;
    }
    s.pol->ops = ops;
    for (int st = 0; st < K; st++)
        for (int grp = 0; grp < g->n_groups; grp++)
            s.group_left[st * g->n_groups + grp] = g->group_size[grp];
    for (int gi = 0; gi < s.total; gi++) {
        const SimNode *sn = node_of(&s, gi);
        DfNode *n = calloc(1, sizeof(DfNode) + scratch);
        if (!n) {
            ret = df_set_error(err, -ENOMEM, "out of memory");
            goto out;
        }
        s.dn[gi] = n;
        /* The scheduler's own node storage; the simulator keeps the
         * dependency counts (s.pending) itself. */
        df_node_init(n, &(DfNodeDesc){.module = sn->module, .index = sn->index}, sn->deadline,
                     (uint64_t)gi + 1, 0, 0);
        n->aux[0] = (uintptr_t)gi;
        if (sn->group >= 0)
            n->group = &s.gtok[gi / g->n * g->n_groups + sn->group];
        /* As jobs.c: an ordered job names the one whose start releases it,
         * which is marked. */
        if (sn->start_pred >= 0)
            n->start_pred_id = (uint64_t)(gi - gi % g->n + sn->start_pred) + 1;
        const int i = gi % g->n;
        if (g->startsucc_first[i] < g->startsucc_first[i + 1])
            n->flags |= DF_NF_RELEASER;
        /* Successors as a policy sees them (df_pnode_has_succ): a list
         * that is not empty when the recording made the node ready; the
         * simulator keeps the edges itself. */
        if (sn->rec_succ)
            atomic_store_explicit(&n->succ, &sim_edge_mark, memory_order_relaxed);
        for (int k = 0; k < sn->n_in; k++) {
            const SimIn *si = &g->ins[sn->first_in + k];
            DfInputBlock *b = NULL;
            if (df_node_input_block_needed(n) && !(b = calloc(1, sizeof(*b)))) {
                ret = df_set_error(err, -ENOMEM, "out of memory");
                goto out;
            }
            df_node_input_append(
                n, b,
                &(DfInput){.bytes = si->bytes,
                           .worker = -1,
                           .module = si->module,
                           .pred_id =
                               si->pred >= 0 ? (uint64_t)(gi - gi % g->n + si->pred) + 1 : 0});
            if (si->pred >= 0)
                s.pending[gi]++;
        }
        s.pending[gi] += 1 + (sn->start_pred >= 0); /* +1: submission */
    }
    if (cfg->fps > 0 && (ret = pacing_init(&s, err)) < 0)
        goto out;
    for (int st = 0; st < K; st++)
        submit_external(&s, st);
    while (s.heap_n > 0) {
        Event e = heap_pop(&s);
        s.now = e.t;
        if (e.type == EV_ARRIVE) {
            s.arrival_queued[e.worker] = false;
            submit_external(&s, e.worker);
            continue;
        }
        Worker *wk = &s.w[e.worker];
        if (e.epoch != wk->epoch)
            continue;
        if (e.type == EV_SEG_END) {
            on_seg_end(&s, e.worker);
        } else if (e.type == EV_NEXT) {
            if (wk->status != W_RUNNING)
                after_nested(&s, e.worker);
        } else if (e.type == EV_POLL) {
            wk->poll_queued = false;
            /* Woken: spins again, also one whose spin ran out before it
             * could park (a thief's grace needs its second poll). */
            if (wk->status == W_PARKED || (wk->status == W_IDLE && !spinning(&s, e.worker)))
                set_status(&s, e.worker, W_IDLE);
            if (wk->status != W_RUNNING)
                dispatch(&s, e.worker);
        }
        if (s.finished == s.total)
            break;
    }
    if (s.finished != s.total) {
        ret = df_set_error(err, -EDEADLK, "replay stalled: %d of %d tasks ran (trace incomplete?)",
                           s.finished, s.total);
        goto out;
    }
    for (int v = 0; v < s.nw; v++)
        if (s.w[v].status != W_RUNNING)
            s.idle_ns += s.now - s.w[v].since;
    res->makespan_ns = s.now;
    res->frames = (uint64_t)g->frames * (uint64_t)K;
    res->fps = s.now > 0 ? (double)res->frames * 1e9 / (double)s.now : 0;
    res->idle_share = s.now > 0 ? (double)s.idle_ns / ((double)s.now * s.nw) : 0;
    uint64_t all = 0;
    for (int l = 0; l < DF_N_LEVELS; l++)
        all += res->bytes_level[l];
    (void)all;
    /* Local bytes are those read on the producer's own worker: the level
     * matrix puts them at SELF, which start_node counts in bytes_level. */
    res->local_byte_share = all ? (double)res->bytes_level[DF_LEVEL_SELF] / (double)all : 1.0;
    if (s.n_latency > 0) {
        qsort(s.latency, s.n_latency, sizeof(int64_t), cmp_i64);
        res->latency_p99_ns = s.latency[(s.n_latency * 99 + 99) / 100 - 1];
        res->latency_max_ns = s.latency[s.n_latency - 1];
    }
out:
    if (s.pol)
        ops->destroy(s.pol);
    if (s.dn)
        for (int gi = 0; gi < s.total; gi++)
            if (s.dn[gi]) {
                df_node_free_input_blocks(s.dn[gi], free_block, NULL);
                free(s.dn[gi]);
            }
    for (int v = 0; s.w && v < s.nw; v++)
        free(s.w[v].stack);
    free(s.w);
    free(s.state);
    free(s.dn);
    free(s.pending);
    free(s.done);
    free(s.blocked_on);
    free(s.ran_on);
    free(s.group_left);
    free(s.group_running);
    free(s.gtok);
    free(s.ext_next);
    free(s.ext_inflight);
    free(s.batch);
    free(s.poll_read_ns);
    free(s.poll_lines);
    free(s.frame_of);
    free(s.frame_left);
    free(s.arrival_queued);
    free(s.latency);
    free(s.heap);
    df_topo_fini(&s.topo);
    return ret;
}

int sim_check_topology(const SimConfig *cfg, DfError *err)
{
    DfTopo t;
    int ret = df_topo_model(&t, cfg->topology, 1, cfg->cost_model, NULL, err);
    df_topo_fini(&t);
    return ret;
}
