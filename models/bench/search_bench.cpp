// Configurations evaluated per second by the sizing search, on one core.
//
//   build/models/bench/capsim_models_bench --benchmark_filter=Search
//
// BM_SearchLlama70B: the full search of a realistic space (Llama-3.1-70B on four GPU
// types from 64 to 8192 GPUs, every layout, micro-batch, ZeRO stage and recompute policy).
// items_per_second is configurations evaluated per second (memory rule + step-time model
// for those that fit). BM_EvaluateOne times the two model calls for one configuration.
#include <benchmark/benchmark.h>

#include "bench_catalog.hpp"
#include "capsim/models/memory.hpp"
#include "capsim/models/performance.hpp"
#include "capsim/models/search.hpp"

namespace {

using namespace capsim;
using namespace capsim::models;

using bench::catalog;

SearchRequest llama_request(int max_gpus, std::vector<std::string> gpus = {"h100-sxm-80gb", "h200-sxm-141gb",
                                                                          "a100-sxm-80gb", "a100-sxm-40gb"}) {
  SearchRequest r;
  r.model = find_transformer_preset("llama-3.1-70b")->shape;
  r.tokens = 15e12;
  r.global_batch = 2048;
  r.grid.min_gpus = 64;
  r.grid.max_gpus = max_gpus;
  NodeTypeQuery q;
  q.gpus = std::move(gpus);
  r.node_types = std::move(node_types_from_catalog(catalog(), q)).value();
  return r;
}

void BM_SearchLlama70B(benchmark::State& state) {
  const SearchRequest request = llama_request(static_cast<int>(state.range(0)));
  std::size_t evaluated = 0;
  for (auto _ : state) {
    auto result = run_search(request);
    benchmark::DoNotOptimize(result);
    evaluated += result.ok() ? result->evaluated : 0;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(evaluated));
  state.counters["configs_per_search"] =
      benchmark::Counter(static_cast<double>(evaluated) / static_cast<double>(state.iterations()));
}
BENCHMARK(BM_SearchLlama70B)->Arg(8192)->Unit(benchmark::kMillisecond);

// The yardstick: ten GPU types, clusters up to 4096 GPUs, one core, under a second.
void BM_SearchTenGpuTypes(benchmark::State& state) {
  SearchRequest request = llama_request(4096, {"h100-sxm-80gb", "h200-sxm-141gb", "a100-sxm-80gb", "a100-sxm-40gb",
                                               "l40s", "l4", "a10", "v100-sxm2-16gb", "t4", "b200"});
  request.grid.min_gpus = 1;
  std::size_t evaluated = 0;
  for (auto _ : state) {
    auto result = run_search(request);
    benchmark::DoNotOptimize(result);
    evaluated += result.ok() ? result->evaluated : 0;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(evaluated));
  state.counters["node_types"] = static_cast<double>(request.node_types.size());
  state.counters["configs_per_search"] =
      benchmark::Counter(static_cast<double>(evaluated) / static_cast<double>(state.iterations()));
}
BENCHMARK(BM_SearchTenGpuTypes)->Unit(benchmark::kMillisecond);

void BM_EvaluateOne(benchmark::State& state) {
  const auto shape = find_transformer_preset("llama-3.1-70b")->shape;
  const ClusterSpec cluster = llama_request(4096).node_types.front().cluster;
  Parallelism par;
  par.tensor = 8;
  par.pipeline = 4;
  par.data = 32;
  par.global_batch = 2048;
  par.zero_stage = 1;
  par.recompute = Recompute::selective;
  par.sequence_parallel = true;
  TrainingOptions opt;
  for (auto _ : state) {
    benchmark::DoNotOptimize(training_memory_total_per_gpu(shape, par, opt));
    benchmark::DoNotOptimize(estimate_training_step(shape, par, cluster, opt));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EvaluateOne);

}  // namespace

BENCHMARK_MAIN();
