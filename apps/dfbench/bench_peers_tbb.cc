// The oneTBB peer: the same cases with task_group (empty, fanout) and a
// flow graph of continue_nodes (chain).
//
// A task_arena of n slots runs the work, a task_scheduler_observer pins
// every thread that joins it (slot i -> cpus[i]), and a global_control lets
// n exceed the machine (TBB otherwise caps its workers at the core count,
// and "4 workers" on 2 cores would quietly be 2).  fanout is fork-join
// like the OpenMP peer; the chain's nodes are built inside the timed
// region, as dfsched's and OpenMP's tasks are.
#include "affinity.h"
#include "bench_peers.h"
#include "sched_cases.h"

#include <oneapi/tbb/flow_graph.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/info.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>
#include <oneapi/tbb/task_scheduler_observer.h>
#include <oneapi/tbb/version.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace {

constexpr size_t kSlotStride = 64 / sizeof(uint64_t);

class Pinner : public tbb::task_scheduler_observer {
  public:
    Pinner(tbb::task_arena &arena, const int *cpus, int n)
        : tbb::task_scheduler_observer(arena), cpus_(cpus), n_(n)
    {
        observe(true);
    }
    ~Pinner() override { observe(false); }

    void on_scheduler_entry(bool) override
    {
        int slot = tbb::this_task_arena::current_thread_index();
        if (slot >= 0)
            df_pin_self(cpus_[slot % n_]);
    }

  private:
    const int *cpus_;
    int n_;
};

struct Run {
    const DfCaseParams *p;
    std::vector<uint64_t> slots;
    uint64_t tasks = 0;
    uint64_t errors = 0;
};

void tbb_empty(Run &r)
{
    const uint64_t m = r.p->tasks;
    const uint64_t batch = r.p->batch ? r.p->batch : m;
    tbb::task_group tg;
    for (uint64_t done = 0; done < m;) {
        uint64_t n = std::min(batch, m - done);
        for (uint64_t i = 0; i < n; i++)
            tg.run([] {});
        tg.wait();
        done += n;
    }
    r.tasks = m;
}

void tbb_fanout(Run &r)
{
    const int k = r.p->width;
    const uint64_t rounds = std::max<uint64_t>(r.p->tasks / uint64_t(k + 2), 1);
    uint64_t *s = r.slots.data();
    tbb::task_group tg;
    for (uint64_t round = 0; round < rounds; round++) {
        s[0] = round;
        for (int j = 0; j < k; j++)
            tg.run([s, j] { s[size_t(j + 1) * kSlotStride] = s[0] + uint64_t(j); });
        tg.wait();
        uint64_t sum = 0;
        for (int j = 0; j < k; j++)
            sum += s[size_t(j + 1) * kSlotStride];
        if (sum != uint64_t(k) * round + uint64_t(k) * uint64_t(k - 1) / 2)
            r.errors++;
    }
    r.tasks = rounds * uint64_t(k + 2);
}

void tbb_chain(Run &r)
{
    using Node = tbb::flow::continue_node<tbb::flow::continue_msg>;
    const uint64_t m = r.p->tasks;
    uint64_t *s = r.slots.data();
    tbb::flow::graph g;
    std::vector<std::unique_ptr<Node>> nodes;
    nodes.reserve(m);
    for (uint64_t i = 0; i < m; i++) {
        nodes.emplace_back(new Node(g, [s, i](const tbb::flow::continue_msg &) {
            s[i + 1] = s[i] + 1;
        }));
        if (i)
            tbb::flow::make_edge(*nodes[i - 1], *nodes[i]);
    }
    if (m)
        nodes[0]->try_put(tbb::flow::continue_msg());
    g.wait_for_all();
    r.tasks = m;
}

// metg's step: the arena's caller spawns into a task_group and waits
// (helping), as in empty.
// No exception may unwind through the C search loop that calls it.
int64_t tbb_metg_step(void *, int64_t grain, uint64_t tasks)
{
    try {
        tbb::task_group tg;
        const int64_t t0 = df_now_ns();
        for (uint64_t i = 0; i < tasks; i++)
            tg.run([grain] { df_bench_spin_ns(grain); });
        tg.wait();
        return df_now_ns() - t0;
    } catch (const std::bad_alloc &) {
        return -ENOMEM;
    } catch (...) {
        return -EIO;
    }
}

// Runs fn in an arena of n slots whose threads are pinned to cpus (slot i
// -> cpus[i]), n allowed to exceed the machine; the caller's affinity is
// what it was before.
template <typename Fn> void with_pinned_arena(int n, const int *cpus, Fn &&fn)
{
    const int hw = tbb::info::default_concurrency();
    tbb::global_control allow(tbb::global_control::max_allowed_parallelism, std::max(n, hw));
    tbb::task_arena arena(n);
    arena.initialize();
    Pinner pinner(arena, cpus, n);
    DfAffinity saved;
    df_affinity_save(&saved);
    arena.execute(std::forward<Fn>(fn));
    // The calling thread took slot 0 of the arena and was pinned there.
    df_affinity_restore(&saved);
}

int run_metg(const DfCaseParams *p, const int *cpus, int n, DfCaseResult *out)
{
    int ret = 0;
    with_pinned_arena(n, cpus,
                      [&] { ret = df_bench_metg_search(p, n, tbb_metg_step, nullptr, out); });
    return ret;
}

int run_case(DfBenchCase c, const DfCaseParams *p, const int *cpus, int n, DfCaseResult *out)
{
    Run r;
    r.p = p;
    const size_t n_slots = c == DF_CASE_CHAIN ? size_t(p->tasks) + 1 : size_t(p->width + 1) * kSlotStride;
    r.slots.assign(n_slots, 0);
    int64_t t0 = 0, t1 = 0, c0 = 0, c1 = 0;
    with_pinned_arena(n, cpus, [&] {
        for (int w = 0; w <= p->warmups; w++) {
            const bool timed = w == p->warmups;
            std::fill(r.slots.begin(), r.slots.end(), 0);
            r.errors = 0;
            if (timed) {
                t0 = df_now_ns();
                c0 = df_bench_cpu_ns();
            }
            switch (c) {
            case DF_CASE_EMPTY:
                tbb_empty(r);
                break;
            case DF_CASE_FANOUT:
                tbb_fanout(r);
                break;
            default:
                tbb_chain(r);
                break;
            }
            if (timed) {
                c1 = df_bench_cpu_ns();
                t1 = df_now_ns();
            }
        }
    });
    if (c == DF_CASE_CHAIN)
        for (uint64_t i = 0; i <= p->tasks; i++)
            r.errors += r.slots[i] != i;
    out->tasks = r.tasks;
    out->elapsed_ns = t1 - t0;
    out->ns_per_task = r.tasks ? double(out->elapsed_ns) / double(r.tasks) : NAN;
    out->cpu_ns_per_task = r.tasks ? double(c1 - c0) / double(r.tasks) : NAN;
    out->errors = r.errors;
    return 0;
}

} // namespace

extern "C" int df_peer_tbb_run(DfBenchCase c, const DfCaseParams *p, const int *cpus, int n,
                               DfCaseResult *out)
{
    df_case_result_init(out);
    if (c != DF_CASE_EMPTY && c != DF_CASE_FANOUT && c != DF_CASE_CHAIN && c != DF_CASE_METG)
        return -ENOTSUP;
    // No C++ exception may cross into the C driver.
    try {
        return c == DF_CASE_METG ? run_metg(p, cpus, n, out) : run_case(c, p, cpus, n, out);
    } catch (const std::bad_alloc &) {
        return -ENOMEM;
    } catch (...) {
        return -EIO;
    }
}

extern "C" void df_peer_tbb_describe(char *buf, size_t len)
{
    std::snprintf(buf, len, "oneTBB %s (runtime %s), default concurrency %d", TBB_VERSION_STRING,
                  TBB_runtime_version(), tbb::info::default_concurrency());
}
