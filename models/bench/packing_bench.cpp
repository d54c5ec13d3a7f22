// Packing speed, on one core.
//
//   build/models/capsim_packing_bench --benchmark_filter=TwoHundred
//
// BM_TwoHundredWorkloads: pack_heuristic on a generated team of 200 workloads (fixed seed):
// a quarter training jobs of 1-16 GPUs, the rest services of 1-6 replicas on whole GPUs,
// MIG 1g.10gb / 3g.40gb instances or time-sliced halves and quarters, in four weekly
// windows, onto four node types (1, 4 and 8 A100 80GB, 4 T4). The goal is under 2 s.
#include <benchmark/benchmark.h>

#include <random>

#include "bench_catalog.hpp"
#include "capsim/models/packing.hpp"

namespace {

using namespace capsim;
using namespace capsim::models;

using bench::catalog;

PoolNodeType node_type(const char* id, const char* gpu, int gpus, double price, double cpu) {
  PoolNodeType t;
  t.id = id;
  t.gpu = catalog().gpu(gpu).value();
  t.gpus_per_node = gpus;
  t.cpu_cores = cpu;
  t.memory = Bytes(gpus * 128e9);
  t.reserve = {2, Bytes(8e9)};
  t.price_per_node = usd_per_hour(price);
  return t;
}

PackingProblem two_hundred_workloads() {
  std::mt19937 rng(200);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  PackingProblem p;
  p.node_types = {node_type("a100x1", "a100-sxm-80gb", 1, 4.1, 12), node_type("a100x4", "a100-sxm-80gb", 4, 15.5, 48),
                  node_type("a100x8", "a100-sxm-80gb", 8, 29.0, 96), node_type("t4x4", "t4", 4, 3.9, 48)};
  const WeekHours windows[] = {WeekHours::always(), WeekHours::business_days(), WeekHours::burst(5 * 24, 24),
                               WeekHours{~WeekHours::business_days().hours}};
  for (int i = 0; i < 200; ++i) {
    PackingWorkload w;
    w.name = "w" + std::to_string(i);
    w.priority = pick(3);
    w.active = windows[pick(4)];
    if (pick(4) == 0) {
      w.is_training = true;
      w.training.gpus = 1 + pick(16);
      w.training.gpu_memory_per_gpu = Bytes(40e9 + pick(4) * 10e9);
      w.training.cpu_per_gpu = 4;
      w.training.memory_per_gpu = Bytes(32e9);
      w.training.may_borrow_serving = pick(2) == 1;
    } else {
      const GpuRequest kinds[] = {{SharingMode::exclusive, 1, "", 0, Bytes(14e9)},
                                  {SharingMode::mig, 1, "1g.10gb", 0, Bytes(8e9)},
                                  {SharingMode::mig, 1, "3g.40gb", 0, Bytes(30e9)},
                                  {SharingMode::time_slicing, 1, "", 0.5, Bytes(12e9)},
                                  {SharingMode::time_slicing, 1, "", 0.25, Bytes(6e9)}};
      w.service.gpu = kinds[pick(5)];
      w.service.replicas = 1 + pick(6);
      w.service.min_replicas = pick(2);
      w.service.cpu_per_replica = 1 + pick(4);
      w.service.memory_per_replica = Bytes(8e9);
      w.service.spread = pick(3) == 0 ? Spread::node : Spread::none;
    }
    p.workloads.push_back(w);
  }
  return p;
}

void BM_TwoHundredWorkloads(benchmark::State& state) {
  const PackingProblem problem = two_hundred_workloads();
  for (auto _ : state) {
    auto plan = pack_heuristic(problem);
    if (!plan) {
      state.SkipWithError(format_diagnostics(plan.errors()).c_str());
      return;
    }
    benchmark::DoNotOptimize(plan->weekly_cost);
    state.counters["nodes"] = static_cast<double>(plan->nodes.size());
    state.counters["weekly_usd"] = plan->weekly_cost.value();
  }
}
BENCHMARK(BM_TwoHundredWorkloads)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
