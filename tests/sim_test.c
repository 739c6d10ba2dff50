/* dfsim's engine on hand-built traces whose answers are known. */
#include "dftest.h"
#include "sched_internal.h"
#include "sim.h"
#include "sim_graph.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct Builder {
    DfTrace t;
    size_t cap_e, cap_i, cap_w;
} Builder;

static void b_init(Builder *b, int n_workers)
{
    memset(b, 0, sizeof(*b));
    b->cap_e = b->cap_i = b->cap_w = 4096;
    b->t.events = calloc(b->cap_e, sizeof(DfTraceEvent));
    b->t.inputs = calloc(b->cap_i, sizeof(DfTraceInput));
    b->t.waits = calloc(b->cap_w, sizeof(DfTraceWait));
    b->t.n_workers = n_workers;
    b->t.trcost = calloc((size_t)n_workers * n_workers, sizeof(uint32_t));
    b->t.levels = calloc((size_t)n_workers * n_workers, 1);
    for (int a = 0; a < n_workers; a++)
        for (int c = 0; c < n_workers; c++)
            b->t.levels[a * n_workers + c] = a == c ? DF_LEVEL_SELF : DF_LEVEL_L3;
    b->t.n_modules = 2;
    b->t.module_names = calloc(2, sizeof(char *));
    b->t.module_names[0] = strdup("D");
    b->t.module_names[1] = strdup("S");
}

/* A node of `dur_ns` self time; inputs are (pred id, bytes) pairs. */
static DfTraceEvent *b_node(Builder *b, uint64_t id, int module, int64_t tag, int64_t start,
                            int64_t dur, uint64_t parent, uint64_t group, int n_in,
                            const uint64_t *in_ids, const uint64_t *in_bytes)
{
    DfTraceEvent *e = &b->t.events[b->t.n_events++];
    *e = (DfTraceEvent){.node_id = id,
                        .module = module,
                        .tag = tag,
                        .worker = 0,
                        .start_ns = start,
                        .end_ns = start + dur,
                        .deadline = DF_NO_DEADLINE,
                        .created_ns = start,
                        .ready_ns = start,
                        .parent_id = parent,
                        .group_id = group};
    e->first_input = (uint32_t)b->t.n_inputs;
    for (int k = 0; k < n_in; k++)
        b->t.inputs[b->t.n_inputs++] = (DfTraceInput){
            .pred_id = in_ids[k], .worker = 0, .module = module, .bytes = in_bytes[k]};
    e->n_inputs = (uint32_t)n_in;
    return e;
}

static void b_free(Builder *b)
{
    df_trace_free(&b->t);
}

static SimGraph *graph_of(Builder *b)
{
    SimGraph *g = NULL;
    DfError err;
    if (sim_graph_from_trace(&b->t, NULL, &g, &err) < 0)
        df_test_fail(__FILE__, __LINE__, true, "%s", err.msg);
    return g;
}

static SimResult run_w(SimGraph *g, const char *policy, int workers, const char *topo, int streams,
                       int window)
{
    SimConfig c;
    sim_config_init(&c);
    c.policy = policy;
    c.n_workers = workers;
    c.topology = topo;
    c.streams = streams;
    c.task_overhead_ns = 0;
    c.window = window;
    SimResult r;
    DfError err = {0};
    if (sim_run(g, &c, &r, &err) < 0) {
        df_test_fail(__FILE__, __LINE__, false, "%s/%d: %s", policy, workers, err.msg);
        memset(&r, 0, sizeof(r));
    }
    return r;
}

static SimResult run(SimGraph *g, const char *policy, int workers, const char *topo, int streams)
{
    return run_w(g, policy, workers, topo, streams, 1000000);
}

/* 64 independent 100 us tasks: 1 worker takes 6.4 ms, 4 workers 1.6 ms. */
DF_TEST(Sim, IndependentTasksScale)
{
    Builder b;
    b_init(&b, 1);
    for (int i = 0; i < 64; i++)
        b_node(&b, (uint64_t)i + 1, 0, i, i * 100000, 100000, 0, 0, 0, NULL, NULL);
    SimGraph *g = graph_of(&b);
    DF_ASSERT(g);
    DF_EXPECT_EQ_INT(sim_graph_frames(g), 64);
    for (const char *const *p = df_policy_names(); *p; p++) {
        SimResult r1 = run(g, *p, 1, "core:4 pu:1", 1);
        SimResult r4 = run(g, *p, 4, "core:4 pu:1", 1);
        DF_EXPECT_EQ_INT(r1.tasks, 64);
        DF_EXPECT_MSG(fabs((double)r1.makespan_ns - 6.4e6) < 0.05 * 6.4e6, "%s: 1 worker %lld ns",
                      *p, (long long)r1.makespan_ns);
        DF_EXPECT_MSG(fabs((double)r4.makespan_ns - 1.6e6) < 0.1 * 1.6e6, "%s: 4 workers %lld ns",
                      *p, (long long)r4.makespan_ns);
        DF_EXPECT(r4.idle_share < 0.1);
    }
    sim_graph_free(g);
    b_free(&b);
}

/* A chain of n nodes of 10 us, each reading nothing from the one before. */
static SimGraph *chain_of(Builder *b, int n)
{
    b_init(b, 1);
    for (int i = 0; i < n; i++) {
        uint64_t pred = (uint64_t)i, bytes = 0;
        b_node(b, (uint64_t)i + 1, 0, i, i * 10000, 10000, 0, 0, i > 0, &pred, &bytes);
    }
    return graph_of(b);
}

/* A chain cannot go faster with more workers. */
DF_TEST(Sim, ChainDoesNotScale)
{
    Builder b;
    SimGraph *g = chain_of(&b, 50);
    DF_ASSERT(g);
    SimResult r1 = run(g, "cost-local", 1, "core:8 pu:1", 1);
    SimResult r8 = run(g, "cost-local", 8, "core:8 pu:1", 1);
    DF_EXPECT(fabs((double)r8.makespan_ns - (double)r1.makespan_ns) < 0.1 * (double)r1.makespan_ns);
    DF_EXPECT(r8.idle_share > 0.8);
    sim_graph_free(g);
    b_free(&b);
}

/* Continuation as df_run_node does it: each node of a chain keeps its
 * successor to run next, 63 in a row, then queues the 64th (older nodes of
 * the set get their turn); so 200 nodes are popped 4 times and continued
 * 196.  Kept nodes are in no set: nobody steals them.  steal (no
 * push_keep) queues every one. */
DF_TEST(Sim, ChainContinues)
{
    Builder b;
    SimGraph *g = chain_of(&b, 200);
    DF_ASSERT(g);
    SimResult r1 = run(g, "cost-local", 1, "core:8 pu:1", 1);
    SimResult r8 = run(g, "cost-local", 8, "core:8 pu:1", 1);
    SimResult s1 = run(g, "steal", 1, "core:8 pu:1", 1);
    DF_EXPECT_EQ_INT(r1.tasks, 200);
    DF_EXPECT_EQ_INT(r1.continued, 196);
    DF_EXPECT_EQ_INT(r8.continued, 196);
    DF_EXPECT_EQ_INT(r8.stolen, 0);
    DF_EXPECT_EQ_INT(s1.continued, 0);
    sim_graph_free(g);
    b_free(&b);
}

/* A chain of 100 links of 10 us, each also releasing a side node of 10
 * us made before the next link (older).  The finishing worker keeps the
 * next link, of its own module (df_node_kept_before), and the other worker
 * takes the side node: the links run back to back, 1 ms, plus the few
 * sides the first worker runs itself (1.14 ms).  Keeping the older side
 * node left each link to a thief a poll round later (1.32 ms). */
DF_TEST(Sim, ChainKeepsItsOwnModule)
{
    Builder b;
    b_init(&b, 1);
    uint64_t id = 1, prev = 0, zero = 0;
    for (int i = 0; i < 100; i++) {
        const uint64_t link = id++;
        b_node(&b, link, 0, i, i * 20000, 10000, 0, 0, prev != 0, &prev, &zero);
        b_node(&b, id++, 1, i, i * 20000 + 10000, 10000, 0, 0, 1, &link, &zero);
        prev = link;
    }
    SimGraph *g = graph_of(&b);
    DF_ASSERT(g);
    const SimResult r = run(g, "cost-local", 2, "core:2 pu:1", 1);
    DF_EXPECT_EQ_INT(r.tasks, 200);
    DF_EXPECT_MSG(r.makespan_ns < 1200000, "makespan %lld ns", (long long)r.makespan_ns);
    sim_graph_free(g);
    b_free(&b);
}

/* A node has successors for placement (df_pnode_has_succ) only if one
 * was created before the recording made it ready: an MPEG-2 slice job's
 * rows are read by output bands made after it ran, a graph's consumers
 * made before its producers are there when the producers are placed. */
DF_TEST(Sim, SuccessorsAsPlacementSawThem)
{
    Builder b;
    b_init(&b, 1);
    uint64_t a = 1, c = 3, zero = 0;
    b_node(&b, a, 0, 0, 1000, 1000, 0, 0, 0, NULL, NULL);
    b_node(&b, 2, 1, 0, 3000, 1000, 0, 0, 1, &a, &zero)->created_ns = 500; /* before a ready */
    b_node(&b, c, 0, 1, 5000, 1000, 0, 0, 0, NULL, NULL);
    b_node(&b, 4, 1, 1, 7000, 1000, 0, 0, 1, &c, &zero); /* created after c ran */
    SimGraph *g = graph_of(&b);
    DF_ASSERT(g);
    DF_EXPECT(g->nodes[0].rec_succ);
    DF_EXPECT(!g->nodes[2].rec_succ);
    DF_EXPECT(!g->nodes[1].rec_succ && !g->nodes[3].rec_succ);
    sim_graph_free(g);
    b_free(&b);
}

static SimResult run_paced_budget(SimGraph *g, int workers, int streams, double fps,
                                  int phase_frames, int budget_frames)
{
    SimConfig c;
    sim_config_init(&c);
    c.n_workers = workers;
    c.topology = "core:4 pu:1";
    c.streams = streams;
    c.task_overhead_ns = 0;
    c.window = 1000000;
    c.fps = fps;
    c.phase_frames = phase_frames;
    c.budget_frames = budget_frames;
    SimResult r;
    DfError err = {0};
    if (sim_run(g, &c, &r, &err) < 0) {
        df_test_fail(__FILE__, __LINE__, false, "%s", err.msg);
        memset(&r, 0, sizeof(r));
    }
    return r;
}

static SimResult run_paced(SimGraph *g, int workers, int streams, double fps, int phase_frames)
{
    return run_paced_budget(g, workers, streams, fps, phase_frames, 2);
}

/* Pacing: 20 frames of one 10 ms node each (a chain), arriving every 20
 * ms (50 fps), due 2 periods later.  One stream on one worker: no frame
 * late, each done 10 ms after it arrives, and the run lasts as long as
 * the arrivals do.  Three streams on one worker need 30 ms a period:
 * frames go late.  Unpaced, nothing is counted.  Starts spread over 10
 * periods put the second of two streams 5 periods after the first. */
DF_TEST(Sim, PacedStreamsArriveAndGoLate)
{
    Builder b;
    b_init(&b, 1);
    uint64_t prev = 0, zero = 0;
    for (int f = 0; f < 20; f++) {
        const uint64_t id = (uint64_t)f + 1;
        b_node(&b, id, 0, f, f * 10000000ll, 10000000, 0, 0, prev != 0, &prev, &zero);
        prev = id;
    }
    SimGraph *g = graph_of(&b);
    DF_ASSERT(g);
    const SimResult one = run_paced(g, 1, 1, 50, 1), three = run_paced(g, 1, 3, 50, 1),
                    unpaced = run_paced(g, 1, 1, 0, 1), apart = run_paced(g, 2, 2, 50, 10);
    DF_EXPECT_EQ_INT(one.frames_late, 0);
    DF_EXPECT_MSG(one.latency_p99_ns >= 10000000 && one.latency_p99_ns < 10100000, "p99 %lld ns",
                  (long long)one.latency_p99_ns);
    DF_EXPECT_MSG(one.makespan_ns >= 19 * 20000000ll + 10000000, "makespan %lld ns",
                  (long long)one.makespan_ns);
    DF_EXPECT_MSG(three.frames_late > 10, "%llu of 60 late", (unsigned long long)three.frames_late);
    DF_EXPECT(three.latency_max_ns > 40000000);
    DF_EXPECT_EQ_INT(unpaced.frames_late, 0);
    DF_EXPECT_EQ_INT(unpaced.latency_p99_ns, 0);
    DF_EXPECT_MSG(unpaced.makespan_ns < 201000000, "unpaced %lld ns",
                  (long long)unpaced.makespan_ns);
    /* Starts spread over 10 periods: the second stream's frames arrive 5
     * periods (100 ms) after the first's; its last ends 10 ms after it
     * arrives. */
    DF_EXPECT_MSG(apart.makespan_ns >= 19 * 20000000ll + 100000000 + 10000000 &&
                      apart.makespan_ns < 19 * 20000000ll + 100000000 + 10100000,
                  "spread starts: makespan %lld ns", (long long)apart.makespan_ns);
    DF_EXPECT_EQ_INT(apart.frames_late, 0);
    sim_graph_free(g);
    b_free(&b);
}

/* Frames like dfmedia's: D(k) (chain) spends 200 us, creates 8 jobs of
 * 400 us on `job_worker` and waits for them, then 100 us more.  With
 * `job_bytes`, every job after the first frame reads that many bytes that
 * the previous D wrote. */
static void b_help_frames(Builder *b, int job_worker, uint64_t job_bytes)
{
    uint64_t id = 1;
    int64_t t = 0;
    uint64_t prev_d = 0;
    for (int f = 0; f < 20; f++) {
        uint64_t d = id++;
        uint64_t zero = 0;
        DfTraceEvent *de =
            b_node(b, d, 0, f, t, 0, 0, 1000 + (uint64_t)f, prev_d != 0, &prev_d, &zero);
        uint64_t grp = 5000 + (uint64_t)f;
        for (int j = 0; j < 8; j++) {
            DfTraceEvent *je = b_node(b, id++, 1, f, t + 200000 + j * 400000, 400000, d, grp,
                                      job_bytes && prev_d, &prev_d, &job_bytes);
            je->created_ns = t + 200000;
            je->worker = job_worker;
        }
        b->t.waits[b->t.n_waits++] = (DfTraceWait){d, grp, 0, t + 200000, t + 200000 + 8 * 400000};
        de->end_ns = t + 200000 + 8 * 400000 + 100000;
        t = de->end_ns;
        prev_d = d;
    }
}

/* b_help_frames(): on one worker a frame costs
 * 200 + 8*400 + 100 = 3500 us; with 4 workers 200 + 2*400 + 100 = 1100 us
 * (the waiting worker helps), and the next D waits for this one. */
DF_TEST(Sim, HelpWhileWaitingReplays)
{
    Builder b;
    b_init(&b, 2);
    b_help_frames(&b, 1, 0);
    SimGraph *g = graph_of(&b);
    DF_ASSERT(g);
    SimResult r1 = run(g, "cost-local", 1, "core:4 pu:1", 1);
    SimResult r4 = run(g, "cost-local", 4, "core:4 pu:1", 1);
    DF_EXPECT_EQ_INT(r1.tasks, 180);
    DF_EXPECT_MSG(fabs((double)r1.makespan_ns - 20 * 3.5e6) < 0.02 * 20 * 3.5e6,
                  "1 worker: %lld ns", (long long)r1.makespan_ns);
    DF_EXPECT_MSG(fabs((double)r4.makespan_ns - 20 * 1.1e6) < 0.05 * 20 * 1.1e6,
                  "4 workers: %lld ns", (long long)r4.makespan_ns);
    /* One stream leaves 20 % of 4 workers idle (3.5 ms of work per 1.1 ms
     * frame); a second stream fills it, up to 4 / 3.5 ms = 1143 fps. */
    SimResult s2 = run(g, "cost-local", 4, "core:4 pu:1", 2);
    DF_EXPECT_EQ_INT(s2.frames, 40);
    DF_EXPECT_MSG(s2.fps > 1.1 * r4.fps && s2.fps <= 1143 * 1.01, "2 streams: %.0f fps, 1: %.0f",
                  s2.fps, r4.fps);
    sim_graph_free(g);
    b_free(&b);
}

/* cost-local registers jobs whose input rows are on the worker running
 * their parent (H.264 slices read rows D deblocked) with that worker; the
 * other one, idle since the last frame, must take them as a thief once it
 * is woken, though its spin ran out long ago: the grace needs a second
 * poll.  Without it the second worker sat idle (1 worker's time). */
DF_TEST(Sim, ThiefTakesJobsOfABusyOwner)
{
    Builder b;
    b_init(&b, 1);
    b_help_frames(&b, 0, 1024);
    SimGraph *g = graph_of(&b);
    DF_ASSERT(g);
    SimResult r1 = run(g, "cost-local", 1, "core:2 pu:1", 1);
    SimResult r2 = run(g, "cost-local", 2, "core:2 pu:1", 1);
    /* 0.3 ms of D and 8 x 0.4 ms of jobs per frame: 1.9 ms on 2 workers. */
    DF_EXPECT_MSG(fabs((double)r1.makespan_ns - 20 * 3.5e6) < 0.02 * 20 * 3.5e6,
                  "1 worker: %lld ns", (long long)r1.makespan_ns);
    DF_EXPECT_MSG(r2.makespan_ns < 20 * 1.9e6 * 1.1 && r2.stolen > 0,
                  "2 workers: %lld ns, %llu stolen", (long long)r2.makespan_ns,
                  (unsigned long long)r2.stolen);
    sim_graph_free(g);
    b_free(&b);
}

/* Ordered jobs (WPP): job j only becomes ready once job j-1 started. */
DF_TEST(Sim, OrderedStartLinks)
{
    Builder b;
    b_init(&b, 1);
    for (int j = 0; j < 10; j++) {
        DfTraceEvent *e = b_node(&b, (uint64_t)j + 1, 1, 0, 0, 100000, 0, 0, 0, NULL, NULL);
        e->start_pred_id = j ? (uint64_t)j : 0;
    }
    SimGraph *g = graph_of(&b);
    DF_ASSERT(g);
    /* Each job waits for its predecessor's start, then for a worker to
     * notice it (a parked one needs a 10 us wake-up): at least 100 us, at
     * most 100 us + 10 * (wake-up + dispatch). */
    SimResult r = run(g, "fifo", 10, "core:10 pu:1", 1);
    DF_EXPECT_EQ_INT(r.tasks, 10);
    DF_EXPECT(r.makespan_ns >= 100000);
    DF_EXPECT_MSG(r.makespan_ns < 100000 + 10 * (10000 + 2000), "%lld ns",
                  (long long)r.makespan_ns);
    sim_graph_free(g);
    b_free(&b);
}

/* The row above as an input (DfJobs.start_bytes: producer = the start
 * predecessor) is no completion dependency, and costs no transfer (the
 * WPP factor is its cost): ten rows of 100 us, recorded one after the
 * other, run at once on ten workers (as a dependency, one after the
 * other: 1 ms). */
DF_TEST(Sim, RowAboveInputIsNoCompletionDependency)
{
    Builder b;
    b_init(&b, 1);
    for (int j = 0; j < 10; j++) {
        const uint64_t above = (uint64_t)j, bytes = 1 << 20;
        DfTraceEvent *e =
            b_node(&b, (uint64_t)j + 1, 1, 0, j * 100000, 100000, 0, 0, j ? 1 : 0, &above, &bytes);
        e->start_pred_id = j ? (uint64_t)j : 0;
    }
    SimGraph *g = graph_of(&b);
    DF_ASSERT(g);
    const char *policies[] = {"fifo", "cost-local"};
    for (int p = 0; p < 2; p++) {
        SimResult r = run(g, policies[p], 10, "core:10 pu:1", 1);
        DF_EXPECT_EQ_INT(r.tasks, 10);
        DF_EXPECT_MSG(r.makespan_ns < 100000 + 10 * (10000 + 2000), "%s: %lld ns", policies[p],
                      (long long)r.makespan_ns);
        DF_EXPECT_MSG(r.transfer_ns == 0, "%s: %lld ns of transfer", policies[p],
                      (long long)r.transfer_ns);
    }
    sim_graph_free(g);
    b_free(&b);
}

/* A WPP row cannot end before the row above: row 1 (100 us of work) ends
 * with row 0 (400 us), so the 1 ms node reading row 1 ends near 1.4 ms,
 * not 1.1 ms. */
DF_TEST(Sim, OrderedJobsEndInOrder)
{
    Builder b;
    b_init(&b, 1);
    b_node(&b, 1, 1, 0, 0, 400000, 0, 0, 0, NULL, NULL);
    DfTraceEvent *e = b_node(&b, 2, 1, 0, 0, 100000, 0, 0, 0, NULL, NULL);
    e->start_pred_id = 1;
    uint64_t in = 2, bytes = 0;
    b_node(&b, 3, 0, 0, 0, 1000000, 0, 0, 1, &in, &bytes);
    SimGraph *g = graph_of(&b);
    DF_ASSERT(g);
    SimResult r = run(g, "fifo", 2, "core:2 pu:1", 1);
    DF_EXPECT_MSG(r.makespan_ns >= 1400000 && r.makespan_ns < 1450000, "%lld ns",
                  (long long)r.makespan_ns);
    sim_graph_free(g);
    b_free(&b);
}

/* Cross-worker bytes are charged by level; cost-local keeps them local. */
DF_TEST(Sim, TransferCostAndLocality)
{
    Builder b;
    b_init(&b, 1);
    uint64_t id = 1;
    for (int f = 0; f < 40; f++) {
        uint64_t prod[4];
        for (int i = 0; i < 4; i++) {
            prod[i] = id;
            b_node(&b, id++, 0, f, 0, 50000, 0, 0, 0, NULL, NULL);
        }
        for (int i = 0; i < 4; i++) {
            uint64_t bytes = 1 << 20;
            b_node(&b, id++, 1, f, 0, 50000, 0, 0, 1, &prod[i], &bytes);
        }
    }
    SimGraph *g = graph_of(&b);
    DF_ASSERT(g);
    /* One frame (8 outside submissions) in flight at a time. */
    SimResult cl = run_w(g, "cost-local", 4, "package:2 core:2 pu:1", 1, 8);
    SimResult fi = run_w(g, "fifo", 4, "package:2 core:2 pu:1", 1, 8);
    DF_EXPECT_MSG(cl.local_byte_share > 0.8,
                  "cost-local local share %.2f (fifo %.2f), stolen %llu of %llu",
                  cl.local_byte_share, fi.local_byte_share, (unsigned long long)cl.stolen,
                  (unsigned long long)cl.tasks);
    DF_EXPECT(cl.local_byte_share > fi.local_byte_share);
    DF_EXPECT(fi.transfer_ns > cl.transfer_ns);
    sim_graph_free(g);
    b_free(&b);
}

/* A node that waited, ready, while its worker was idle: the recording lost
 * that CPU time outside tasks (other threads on the core).  It is charged
 * again when asked, less the typical dispatch gap. */
DF_TEST(Sim, LostCpuFromRecordedGaps)
{
    Builder b;
    b_init(&b, 1);
    int64_t at = 0, prev_end = 0;
    for (int i = 0; i < 10; i++) {
        at += i == 5 ? 200500 : 500;
        DfTraceEvent *e = b_node(&b, (uint64_t)i + 1, 0, i, at, 100000, 0, 0, 0, NULL, NULL);
        e->created_ns = 0;
        e->ready_ns = prev_end;
        prev_end = at + 100000;
        at = prev_end;
    }
    SimGraph *g = graph_of(&b);
    DF_ASSERT(g);
    DF_EXPECT_EQ_INT(sim_graph_dispatch_ns(g), 500);
    DF_EXPECT_EQ_INT(sim_graph_lost_ns(g), 200000);
    DF_EXPECT_EQ_INT(sim_graph_span_ns(g), prev_end);
    SimConfig c;
    sim_config_init(&c);
    c.topology = "core:1 pu:1";
    c.task_overhead_ns = 0;
    c.complete_ns = 0;
    SimResult off, on;
    DfError err = {0};
    DF_ASSERT(sim_run(g, &c, &off, &err) == 0);
    c.lost_cpu = true;
    DF_ASSERT(sim_run(g, &c, &on, &err) == 0);
    /* 10 bodies and the first wake-up of the parked worker. */
    DF_EXPECT_EQ_INT(off.makespan_ns, 1000000 + c.wake_ns);
    DF_EXPECT_EQ_INT(on.makespan_ns - off.makespan_ns, 200000);
    DF_EXPECT_EQ_INT(on.lost_ns, 200000);
    sim_graph_free(g);
    b_free(&b);
}

/* 1024 workers on a large synthetic machine complete, for every policy. */
DF_TEST(Sim, ThousandWorkers)
{
    Builder b;
    b_init(&b, 1);
    for (int i = 0; i < 4096; i++)
        b_node(&b, (uint64_t)i + 1, 0, i / 16, 0, 20000, 0, 0, 0, NULL, NULL);
    SimGraph *g = graph_of(&b);
    DF_ASSERT(g);
    for (const char *const *p = df_policy_names(); *p; p++) {
        SimResult r = run(g, *p, 1024, "package:4 l3:2 core:16 pu:8", 1);
        DF_EXPECT_EQ_INT(r.tasks, 4096);
        DF_EXPECT(r.makespan_ns >= 4 * 20000);
    }
    sim_graph_free(g);
    b_free(&b);
}

/* What an idle poll round reads: the scan model every other worker's two
 * lines, so its cost per round grows with N; the summary model a word per
 * domain level and two victims, bounded whatever N. */
DF_TEST(Sim, IdlePollCostScanGrowsSummaryBounded)
{
    Builder b;
    b_init(&b, 1);
    /* Uneven bodies: workers run dry at different times and poll. */
    for (int i = 0; i < 2048; i++)
        b_node(&b, (uint64_t)i + 1, 0, i / 16, 0, 20000 + (i % 7) * 3000, 0, 0, 0, NULL, NULL);
    SimGraph *g = graph_of(&b);
    DF_ASSERT(g);
    static const int ns[] = {8, 64, 1024};
    double lines[2][3], cost[2][3];
    for (int m = 0; m < 2; m++)
        for (int k = 0; k < 3; k++) {
            SimConfig c;
            sim_config_init(&c);
            c.n_workers = ns[k];
            c.topology = "package:4 l3:2 core:16 pu:8";
            c.idle_model = m == 0 ? SIM_IDLE_SCAN : SIM_IDLE_SUMMARY;
            SimResult r;
            DfError err = {0};
            DF_ASSERT_MSG(sim_run(g, &c, &r, &err) == 0, "%s", err.msg);
            DF_EXPECT_EQ_INT(r.tasks, 2048);
            DF_ASSERT_MSG(r.polls > 0, "%s at %d workers: no idle poll", m ? "summary" : "scan",
                          ns[k]);
            lines[m][k] = (double)r.poll_lines / (double)r.polls;
            cost[m][k] = (double)r.poll_read_ns / (double)r.polls;
            printf("%s %4d workers: %llu polls, %.1f lines, %.0f ns per poll\n",
                   m ? "summary" : "scan", ns[k], (unsigned long long)r.polls, lines[m][k],
                   cost[m][k]);
        }
    for (int k = 0; k < 3; k++) {
        /* Every other worker's two lines, each round. */
        DF_EXPECT_MSG(lines[0][k] == 2.0 * (ns[k] - 1), "scan %d: %.1f lines", ns[k], lines[0][k]);
        DF_EXPECT_MSG(lines[1][k] <= DF_N_LEVELS + 4 * SIM_IDLE_PROBE_LINES,
                      "summary %d: %.1f lines", ns[k], lines[1][k]);
    }
    /* 1023 workers' lines, most across packages, against 63 in one L3. */
    DF_EXPECT_MSG(cost[0][2] > 10 * cost[0][1] && cost[0][1] > cost[0][0], "scan ns %g %g %g",
                  cost[0][0], cost[0][1], cost[0][2]);
    /* Only the levels a worker sees grow (its domains), not the count. */
    DF_EXPECT_MSG(cost[1][2] <= 3 * cost[1][1] && cost[1][2] < cost[0][1], "summary ns %g %g %g",
                  cost[1][0], cost[1][1], cost[1][2]);
    sim_graph_free(g);
    b_free(&b);
}

#ifdef DF_SIM_REAL_TRACE
#include "framework_util.h"

/* A trace of a real decode (framework tasks: D, its slice jobs S, bands R,
 * output O): each band's inputs name the slice jobs that wrote its rows, so
 * the replay ties them to those jobs wherever it runs them, and charges
 * the bytes read across workers by level. */
DF_TEST(Sim, RealDecodeTraceChargesCrossWorkerBytes)
{
    TClip clip;
    DF_ASSERT_EQ_INT(t_clip_load("h264_cabac_slices8.mkv", &clip), 0);
    DfSched *s = t_sched("cost-local", 2, 0);
    DF_ASSERT(s);
    DF_ASSERT_EQ_INT(df_sched_trace_start(s, 1 << 14), 0);
    DfDecoderConfig cfg;
    df_decoder_config_init(&cfg);
    cfg.threading = DF_THREADING_SLICE;
    TSums sums = {0};
    DF_ASSERT_EQ_INT(t_df_decode(s, &clip, &cfg, &sums, NULL, NULL, 0), 0);
    DF_EXPECT(sums.n > 0);
    DfTrace t;
    DF_ASSERT_EQ_INT(df_sched_trace_collect(s, &t), 0);
    df_sched_unref(s);
    DF_EXPECT_EQ_INT(t.dropped, 0);

    /* Every row input of a band or of a slice job (the reference rows)
     * names the recorded task that wrote the rows: D, which deblocks an
     * H.264 picture after its slice jobs. */
    int mod_s = -1, mod_r = -1, mod_d = -1;
    for (int m = 0; m < t.n_modules; m++) {
        if (strcmp(t.module_names[m], "S") == 0)
            mod_s = m;
        if (strcmp(t.module_names[m], "R") == 0)
            mod_r = m;
        if (strcmp(t.module_names[m], "D") == 0)
            mod_d = m;
    }
    DF_ASSERT(mod_s >= 0 && mod_r >= 0 && mod_d >= 0);
    uint64_t row_bytes = 0;
    size_t rows_in = 0, named = 0, slice_rows_in = 0;
    for (size_t i = 0; i < t.n_events; i++) {
        const DfTraceEvent *e = &t.events[i];
        if (e->module != mod_r && e->module != mod_s)
            continue;
        for (uint32_t k = 0; k < e->n_inputs; k++) {
            const DfTraceInput *in = &t.inputs[e->first_input + k];
            if (in->module != mod_d || !in->bytes)
                continue;
            rows_in++;
            slice_rows_in += e->module == mod_s;
            row_bytes += in->bytes;
            for (size_t j = 0; j < t.n_events; j++)
                if (t.events[j].node_id == in->pred_id && t.events[j].module == mod_d) {
                    named++;
                    break;
                }
        }
    }
    DF_EXPECT(rows_in > 0 && slice_rows_in > 0 && slice_rows_in < rows_in);
    DF_EXPECT_MSG(named == rows_in, "%zu of %zu row inputs name their D task", named, rows_in);

    /* The replay: on one worker every byte is local; on two workers in
     * different packages some are read across, at the machine level. */
    SimGraph *g = NULL;
    DfError err = {0};
    DF_ASSERT_MSG(sim_graph_from_trace(&t, NULL, &g, &err) == 0, "%s", err.msg);
    SimResult r1 = run(g, "cost-local", 1, "package:2 core:1 pu:1", 1);
    uint64_t all1 = 0;
    for (int l = 0; l < DF_N_LEVELS; l++)
        all1 += r1.bytes_level[l];
    DF_EXPECT_MSG(all1 >= row_bytes, "replayed %llu bytes, trace has %llu slice-row bytes",
                  (unsigned long long)all1, (unsigned long long)row_bytes);
    DF_EXPECT_EQ_INT(r1.bytes_level[DF_LEVEL_SELF], all1);
    for (const char *const *p = df_policy_names(); *p; p++) {
        SimResult r2 = run(g, *p, 2, "package:2 core:1 pu:1", 1);
        DF_EXPECT_MSG(r2.bytes_level[DF_LEVEL_MACHINE] > 0, "%s: no cross-package bytes", *p);
        DF_EXPECT(r2.transfer_ns > 0);
    }
    sim_graph_free(g);
    df_trace_free(&t);
    t_sums_free(&sums);
    t_clip_free(&clip);
}
#endif

/* fifo on "core:2 pu:1" without dispatch costs, with the slowdown f2 of
 * two busy workers (0: none) and the WPP row factor `wpp` (0: none). */
static SimResult run_model_jobs(SimGraph *g, int workers, double f2, double wpp, double job)
{
    SimConfig c;
    sim_config_init(&c);
    c.policy = "fifo";
    c.n_workers = workers;
    c.topology = "core:2 pu:1";
    c.task_overhead_ns = 0;
    c.complete_ns = 0;
    c.window = 1000000;
    c.slowdown[1] = 1;
    c.slowdown[2] = f2;
    c.n_slowdown = f2 > 0 ? 2 : 0;
    c.wpp_factor = wpp;
    c.job_factor = job;
    SimResult r;
    DfError err = {0};
    if (sim_run(g, &c, &r, &err) < 0) {
        df_test_fail(__FILE__, __LINE__, false, "%d workers: %s", workers, err.msg);
        memset(&r, 0, sizeof(r));
    }
    return r;
}

static SimResult run_model(SimGraph *g, int workers, double f2, double wpp)
{
    return run_model_jobs(g, workers, f2, wpp, 0);
}

/* Two busy cores each run slower than one (--slowdown 2:1.5).  40
 * independent 100 us tasks recorded on one worker: 2 ms on two workers
 * without the slowdown, 20 x 150 us = 3 ms with it; one worker is never
 * slowed (4 ms).  The same tasks recorded two at a time on two workers at
 * 150 us come back to 100 us on one worker (4 ms). */
DF_TEST(Sim, SlowdownOfBusyCores)
{
    Builder b;
    b_init(&b, 1);
    for (int i = 0; i < 40; i++)
        b_node(&b, (uint64_t)i + 1, 0, i, i * 100000, 100000, 0, 0, 0, NULL, NULL);
    SimGraph *g = graph_of(&b);
    DF_ASSERT(g);
    SimResult r1 = run_model(g, 2, 1.0, 0), r15 = run_model(g, 2, 1.5, 0);
    DF_EXPECT_MSG(fabs((double)r1.makespan_ns - 2e6) < 0.05 * 2e6, "no slowdown: %lld ns",
                  (long long)r1.makespan_ns);
    DF_EXPECT_MSG(fabs((double)r15.makespan_ns - 3e6) < 0.05 * 3e6, "slowdown 1.5: %lld ns",
                  (long long)r15.makespan_ns);
    /* One worker is never slowed. */
    SimResult one = run_model(g, 1, 1.5, 0);
    DF_EXPECT_MSG(fabs((double)one.makespan_ns - 4e6) < 0.05 * 4e6, "1 worker: %lld ns",
                  (long long)one.makespan_ns);
    sim_graph_free(g);
    b_free(&b);

    /* Recorded on two workers, both busy: 150 us bodies. */
    b_init(&b, 2);
    for (int i = 0; i < 40; i++) {
        DfTraceEvent *e =
            b_node(&b, (uint64_t)i + 1, 0, i, (i / 2) * 150000, 150000, 0, 0, 0, NULL, NULL);
        e->worker = i % 2;
    }
    g = graph_of(&b);
    DF_ASSERT(g);
    one = run_model(g, 1, 1.5, 0);
    DF_EXPECT_MSG(fabs((double)one.makespan_ns - 4e6) < 0.05 * 4e6,
                  "2-worker recording on 1 worker: %lld ns (bodies back to 100 us)",
                  (long long)one.makespan_ns);
    SimResult two = run_model(g, 2, 1.5, 0);
    DF_EXPECT_MSG(fabs((double)two.makespan_ns - 3e6) < 0.05 * 3e6,
                  "2-worker recording replayed: %lld ns", (long long)two.makespan_ns);
    sim_graph_free(g);
    b_free(&b);
}

/* A WPP row runs wpp_factor longer while the row above runs on another
 * worker.  20 rows of 100 us recorded one after the other on one worker:
 * on two workers they alternate, each next to the row above, so the
 * factor 1.5 makes the picture 1.5x as long (row 0 is never next to one);
 * on one worker no row is, so it stays 2 ms.  Recorded on two workers, each
 * row 150 us next to the row above, they come back to 100 us on one. */
DF_TEST(Sim, WppRowFactor)
{
    Builder b;
    b_init(&b, 1);
    for (int j = 0; j < 20; j++) {
        DfTraceEvent *e =
            b_node(&b, (uint64_t)j + 1, 1, 0, j * 100000, 100000, 0, 0, 0, NULL, NULL);
        e->start_pred_id = j ? (uint64_t)j : 0;
        e->cpu_ns = 100000;
    }
    SimGraph *g = graph_of(&b);
    DF_ASSERT(g);
    int64_t ordered_wpp, ordered_alone, other;
    sim_graph_self_split(g, &ordered_wpp, &ordered_alone, &other);
    DF_EXPECT_EQ_INT(ordered_wpp, 0);
    DF_EXPECT_EQ_INT(ordered_alone, 19 * 100000);
    DF_EXPECT_EQ_INT(other, 100000);
    const SimResult plain = run_model(g, 2, 0, 0), slow = run_model(g, 2, 0, 1.5),
                    one = run_model(g, 1, 0, 1.5);
    const double ratio = (double)slow.makespan_ns / (double)plain.makespan_ns;
    DF_EXPECT_MSG(ratio > 1.4 && ratio < 1.55, "2 workers: %lld ns with the factor, %lld without",
                  (long long)slow.makespan_ns, (long long)plain.makespan_ns);
    DF_EXPECT_MSG(fabs((double)one.makespan_ns - 2e6) < 0.05 * 2e6, "1 worker: %lld ns",
                  (long long)one.makespan_ns);
    /* Counted with or without the factor: every row but row 0 apart from
     * the row above on two workers, none on one. */
    DF_EXPECT_EQ_INT(plain.rows, 19);
    DF_EXPECT_EQ_INT(plain.rows_apart, 19);
    DF_EXPECT_EQ_INT(slow.rows_apart, 19);
    DF_EXPECT_EQ_INT(one.rows, 19);
    DF_EXPECT_EQ_INT(one.rows_apart, 0);
    sim_graph_free(g);
    b_free(&b);

    b_init(&b, 2);
    for (int j = 0; j < 20; j++) {
        DfTraceEvent *e =
            b_node(&b, (uint64_t)j + 1, 1, 0, j * 75000, j ? 150000 : 100000, 0, 0, 0, NULL, NULL);
        e->worker = j % 2;
        e->start_pred_id = j ? (uint64_t)j : 0;
        e->cpu_ns = e->end_ns - e->start_ns;
    }
    g = graph_of(&b);
    DF_ASSERT(g);
    sim_graph_self_split(g, &ordered_wpp, &ordered_alone, &other);
    DF_EXPECT_EQ_INT(ordered_wpp, 19 * 150000);
    DF_EXPECT_EQ_INT(ordered_alone, 0);
    const SimResult back = run_model(g, 1, 0, 1.5), kept = run_model(g, 1, 0, 0);
    DF_EXPECT_MSG(fabs((double)back.makespan_ns - 2e6) < 0.05 * 2e6,
                  "2-worker recording on 1 worker: %lld ns (rows back to 100 us)",
                  (long long)back.makespan_ns);
    DF_EXPECT_MSG(fabs((double)kept.makespan_ns - 2.95e6) < 0.05 * 2.95e6,
                  "without the factor: %lld ns", (long long)kept.makespan_ns);
    sim_graph_free(g);
    b_free(&b);
}

/* An independent job (slice, band) runs job_factor longer while another
 * job of its batch runs on another worker.  A decode call that makes 20
 * jobs of 100 us, recorded one after the other on one worker: on two
 * workers each runs next to a sibling (but the very first), so the factor
 * 1.5 makes the batch about 1.5x as long; on one worker it stays 2 ms.
 * Recorded on two workers, each job 150 us next to a sibling, they come
 * back to 100 us on one. */
DF_TEST(Sim, JobFactor)
{
    for (int workers = 1; workers <= 2; workers++) {
        Builder b;
        b_init(&b, workers);
        b_node(&b, 1, 0, 0, 0, 1000, 0, 0, 0, NULL, NULL);
        for (int j = 0; j < 20; j++) {
            const int64_t start = workers == 1 ? 1000 + j * 100000 : 1000 + (j / 2) * 150000;
            DfTraceEvent *e = b_node(&b, (uint64_t)j + 2, 1, 0, start,
                                     workers == 1 ? 100000 : 150000, 1, 7, 0, NULL, NULL);
            e->worker = workers == 1 ? 0 : j % 2;
            e->cpu_ns = e->end_ns - e->start_ns;
        }
        SimGraph *g = graph_of(&b);
        DF_ASSERT(g);
        int64_t par, alone, other;
        sim_graph_job_split(g, &par, &alone, &other);
        DF_EXPECT_EQ_INT(par, workers == 1 ? 0 : 20 * 150000);
        DF_EXPECT_EQ_INT(alone, workers == 1 ? 20 * 100000 : 0);
        DF_EXPECT_EQ_INT(other, 1000);
        if (workers == 1) {
            const SimResult plain = run_model_jobs(g, 2, 0, 0, 0),
                            slow = run_model_jobs(g, 2, 0, 0, 1.5),
                            one = run_model_jobs(g, 1, 0, 0, 1.5);
            const double ratio = (double)slow.makespan_ns / (double)plain.makespan_ns;
            DF_EXPECT_MSG(ratio > 1.4 && ratio < 1.55,
                          "2 workers: %lld ns with the factor, %lld without",
                          (long long)slow.makespan_ns, (long long)plain.makespan_ns);
            DF_EXPECT_MSG(fabs((double)one.makespan_ns - 2e6) < 0.05 * 2e6, "1 worker: %lld ns",
                          (long long)one.makespan_ns);
        } else {
            const SimResult back = run_model_jobs(g, 1, 0, 0, 1.5),
                            kept = run_model_jobs(g, 1, 0, 0, 0);
            DF_EXPECT_MSG(fabs((double)back.makespan_ns - 2e6) < 0.05 * 2e6,
                          "2-worker recording on 1 worker: %lld ns (jobs back to 100 us)",
                          (long long)back.makespan_ns);
            DF_EXPECT_MSG(fabs((double)kept.makespan_ns - 3e6) < 0.05 * 3e6,
                          "without the factor: %lld ns", (long long)kept.makespan_ns);
        }
        sim_graph_free(g);
        b_free(&b);
    }
}

#ifdef DF_SIM_REAL_TRACE
/* The graph of a traced HEVC WPP decode on `workers` workers. */
static SimGraph *wpp_graph(int workers)
{
    TClip clip;
    SimGraph *g = NULL;
    if (t_clip_load("hevc_wpp8.mkv", &clip) < 0)
        return NULL;
    DfSched *s = t_sched_jobs("cost-local", workers, 0, true); /* every row a node */
    DfTrace t = {0};
    DfDecoderConfig cfg;
    df_decoder_config_init(&cfg);
    cfg.threading = DF_THREADING_SLICE;
    TSums sums = {0};
    DfError err = {0};
    if (s && df_sched_trace_start(s, 1 << 14) == 0 &&
        t_df_decode(s, &clip, &cfg, &sums, NULL, NULL, 0) == 0 &&
        df_sched_trace_collect(s, &t) == 0 && t.dropped == 0 &&
        sim_graph_from_trace(&t, NULL, &g, &err) < 0)
        df_test_fail(__FILE__, __LINE__, false, "%s", err.msg);
    df_sched_unref(s);
    df_trace_free(&t);
    t_sums_free(&sums);
    t_clip_free(&clip);
    return g;
}

/* Real HEVC WPP decodes: the CTU-row jobs are ordered jobs.  Recorded on one worker, the replay on
 * two slows the rows it runs next to the row above on the other worker by the WPP row factor;
 * recorded on two, the rows recorded so run faster on one. */
DF_TEST(Sim, RealWppTraceRowsTakeTheFactor)
{
    SimGraph *g = wpp_graph(1);
    DF_ASSERT(g);
    int64_t ordered_wpp, ordered_alone, other;
    sim_graph_self_split(g, &ordered_wpp, &ordered_alone, &other);
    DF_EXPECT_EQ_INT(ordered_wpp, 0);
    /* At 640x360 the rows are short next to D's own work (parsing, and
     * the first pictures' page faults): a share, not most of it. */
    DF_EXPECT_MSG(ordered_alone > 0 && other > 0, "rows %lld ns, the rest %lld ns",
                  (long long)ordered_alone, (long long)other);
    const SimResult plain = run_model(g, 2, 0, 0), slow = run_model(g, 2, 0, 2.0);
    DF_EXPECT_MSG((double)slow.makespan_ns > 1.05 * (double)plain.makespan_ns,
                  "1-worker recording on 2: %lld ns with 2.0, %lld without",
                  (long long)slow.makespan_ns, (long long)plain.makespan_ns);
    sim_graph_free(g);

    g = wpp_graph(2);
    DF_ASSERT(g);
    sim_graph_self_split(g, &ordered_wpp, &ordered_alone, &other);
    DF_EXPECT_MSG(ordered_wpp + ordered_alone > 0, "no rows in a 2-worker trace");
    const SimResult one = run_model(g, 1, 0, 2.0), one_plain = run_model(g, 1, 0, 0);
    DF_EXPECT_MSG(ordered_wpp == 0 ? one.makespan_ns == one_plain.makespan_ns
                                   : one.makespan_ns < one_plain.makespan_ns,
                  "2-worker recording on 1: %lld ns with 2.0, %lld without (recorded next to "
                  "the row above: %lld ns)",
                  (long long)one.makespan_ns, (long long)one_plain.makespan_ns,
                  (long long)ordered_wpp);
    sim_graph_free(g);
}
#endif

/* D (0.1 ms, frame 0) creates N (3 ms, frame 1: due a period later) and
 * then a job J (2 ms), and waits for J. */
static void b_wait_frame(Builder *b)
{
    DfTraceEvent *de = b_node(b, 1, 0, 0, 0, 0, 0, 0, 0, NULL, NULL);
    DfTraceEvent *ne = b_node(b, 2, 0, 1, 100000, 3000000, 1, 0, 0, NULL, NULL);
    DfTraceEvent *je = b_node(b, 3, 1, 0, 100000, 2000000, 1, 50, 0, NULL, NULL);
    ne->created_ns = ne->ready_ns = je->created_ns = je->ready_ns = 100000;
    b->t.waits[b->t.n_waits++] = (DfTraceWait){1, 50, 0, 100000, 2100000};
    de->end_ns = 2100000;
}

/* A paced replay's waits filter as df_sched_wait's do: D's wait runs J
 * and refuses N, due after D.  1 ms periods, due 4 later.  Two workers:
 * the other one takes N, frame 0 ends with D at 2.1 ms, frame 1 with N
 * 2.1 ms after its arrival.  When a wait accepted anything, D ran N first
 * (created first) and ended at 3.1 ms.  One worker: D ends at 2.1 ms (on
 * time), N at 5.1 (latency 4.1, late); D under N ended at 5.1. */
DF_TEST(Sim, TimedWaitsRefuseLaterFrames)
{
    Builder b;
    b_init(&b, 1);
    b_wait_frame(&b);
    SimGraph *g = graph_of(&b);
    DF_ASSERT(g);
    const SimResult two = run_paced_budget(g, 2, 1, 1000, 1, 4),
                    one = run_paced_budget(g, 1, 1, 1000, 1, 4);
    DF_EXPECT_EQ_INT(two.frames_late, 0);
    DF_EXPECT_MSG(two.latency_max_ns < 2500000, "2 workers: max latency %lld ns",
                  (long long)two.latency_max_ns);
    DF_EXPECT_EQ_INT(one.frames_late, 1);
    DF_EXPECT_MSG(one.latency_max_ns > 4000000 && one.latency_max_ns < 4500000,
                  "1 worker: max latency %lld ns", (long long)one.latency_max_ns);
    DF_EXPECT_EQ_INT(two.wait_fallbacks + one.wait_fallbacks, 0);
    sim_graph_free(g);
    b_free(&b);
}

/* The demand bound, on a chain of 20 frames at 50 fps (20 ms periods),
 * due 2 periods after arrival, one worker.  Frames of 10 ms: two streams
 * fill the worker exactly and fit; with three, the jobs arrive every 6.7
 * ms and eleven of them (110 ms) cannot fit in the 66.7 + 40 ms of their
 * window.  Two workers: four streams (jobs every 5 ms), not five (every
 * 4 ms: 36 jobs need 360 ms of 2 x (140 + 40)).  A clip whose first five
 * frames take 16 ms and the rest 4 (140 ms a stream: K* 2.9): aligned
 * streams reach the heavy stretch together and only one fits (two need
 * 160 ms of 20 x 4 + 10 + 40); with their starts spread over the clip,
 * two fit.  No replay carries more than the bound. */
static SimGraph *paced_chain(Builder *b, int heavy_frames, int64_t heavy_ns, int64_t light_ns)
{
    b_init(b, 1);
    uint64_t prev = 0, zero = 0;
    for (int f = 0; f < 20; f++) {
        const uint64_t id = (uint64_t)f + 1;
        b_node(b, id, 0, f, f * 20000000ll, f < heavy_frames ? heavy_ns : light_ns, 0, 0, prev != 0,
               &prev, &zero);
        prev = id;
    }
    return graph_of(b);
}

/* sim_demand_bound with run_paced's model, at most `cap` streams (-1:
 * an error). */
static int bound_of(const SimGraph *g, int workers, double fps, int phase_frames, int cap)
{
    SimConfig c;
    sim_config_init(&c);
    c.n_workers = workers;
    c.task_overhead_ns = 0;
    c.fps = fps;
    c.phase_frames = phase_frames;
    int k = 0;
    DfError err = {0};
    return sim_demand_bound(g, &c, cap, &k, &err) < 0 ? -1 : k;
}

DF_TEST(Sim, DemandBoundOfPacedStreams)
{
    Builder b;
    SimGraph *g = paced_chain(&b, 0, 0, 10000000);
    DF_ASSERT(g);
    DF_EXPECT_EQ_INT(bound_of(g, 1, 50, 1, SIM_BOUND_MAX_STREAMS), 2);
    DF_EXPECT_EQ_INT(bound_of(g, 2, 50, 1, SIM_BOUND_MAX_STREAMS), 4);
    DF_EXPECT_EQ_INT(run_paced(g, 1, 2, 50, 1).frames_late, 0);
    DF_EXPECT(run_paced(g, 1, 3, 50, 1).frames_late > 0);
    DF_EXPECT(run_paced(g, 2, 5, 50, 1).frames_late > 0);
    DF_EXPECT_EQ_INT(bound_of(g, 1, 0, 1, SIM_BOUND_MAX_STREAMS), -1); /* unpaced */
    DF_EXPECT_EQ_INT(bound_of(g, 1, 50, 1, 1), 1);                     /* capped */
    sim_graph_free(g);
    b_free(&b);

    g = paced_chain(&b, 5, 16000000, 4000000);
    DF_ASSERT(g);
    const SimResult aligned = run_paced(g, 1, 1, 50, 1), two = run_paced(g, 1, 2, 50, 1),
                    spread = run_paced(g, 1, 2, 50, 20);
    DF_EXPECT_EQ_INT(bound_of(g, 1, 50, 1, SIM_BOUND_MAX_STREAMS), 1);
    DF_EXPECT_EQ_INT(aligned.frames_late, 0);
    DF_EXPECT(two.frames_late > 0);
    const int spread_bound = bound_of(g, 1, 50, 20, SIM_BOUND_MAX_STREAMS);
    DF_EXPECT_MSG(spread_bound >= 2, "starts spread: bound %d", spread_bound);
    DF_EXPECT_EQ_INT(spread.frames_late, 0);
    sim_graph_free(g);
    b_free(&b);
}

/* A thief that helps a stream once does not take the stream along
 * (df_node_input_worker): 5 paced chains of one 10 ms node a 20 ms frame
 * on 4 workers, 10 on 8.  Placement puts two streams on one worker; an
 * idle worker steals the second one's frame, and the frame's successor
 * names the worker it was placed on, since the node keeps DF_NF_STOLEN
 * until it completes.  So each extra stream is stolen at every frame but
 * the first (19 of 20); had the stream followed its thief, once. */
DF_TEST(Sim, StolenStreamGoesBack)
{
    Builder b;
    SimGraph *g = paced_chain(&b, 0, 0, 10000000);
    DF_ASSERT(g);
    const SimResult four = run_paced(g, 4, 5, 50, 1), eight = run_paced(g, 8, 10, 50, 1);
    DF_EXPECT_EQ_INT(four.stolen, 19);
    DF_EXPECT_EQ_INT(eight.stolen, 2 * 19);
    DF_EXPECT_EQ_INT(four.frames_late, 0);
    DF_EXPECT_EQ_INT(eight.frames_late, 0);
    sim_graph_free(g);
    b_free(&b);
}
