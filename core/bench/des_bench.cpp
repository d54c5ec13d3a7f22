// Events per second of the DES kernel on one core: a Poisson source feeding a tandem of
// exponential single-server stations (rho = 0.8 each) into a sink.
//   ./capsim_core_bench --benchmark_filter=BM_TandemQueue
// items_per_second is events per second.
#include <benchmark/benchmark.h>

#include "capsim/core/des/examples.hpp"
#include "capsim/core/des/simulator.hpp"

namespace {

void BM_TandemQueue(benchmark::State& state) {
  const int stations = static_cast<int>(state.range(0));
  const capsim::des::Pipeline pipeline = capsim::des::make_tandem_pipeline(stations, 0.8, 1.0);
  capsim::des::RunOptions options;
  options.warmup = capsim::Seconds(1000.0);
  options.duration = capsim::Seconds(1'000'000.0);
  std::uint64_t events = 0;
  std::uint64_t seed = 1;
  for (auto _ : state) {
    options.seed = seed++;
    auto result = capsim::des::simulate(pipeline, options);
    if (!result) {
      state.SkipWithError("simulation failed");
      return;
    }
    events += result->events;
    benchmark::DoNotOptimize(result->throughput.mean);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(events));
  state.counters["events_per_run"] =
      benchmark::Counter(static_cast<double>(events) / static_cast<double>(state.iterations()));
}
BENCHMARK(BM_TandemQueue)->Arg(3)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
