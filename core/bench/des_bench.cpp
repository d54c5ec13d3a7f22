// Events per second of the DES kernel on one core, with its same-run baseline.
//
// BM_TandemQueue: capsim's simulator on a Poisson source feeding a tandem of exponential
// single-server stations (rho = 0.8 each) into a sink, 1,000 s of warm-up and 10^6 s
// measured in 20 batches: every statistic, percentile and confidence interval included.
// BM_BareHeapLoop: the same queueing network as a bare event loop, the least a DES can do
// for it: a binary heap of 16-byte events, a count per station, the same Rng; no items,
// no statistics, no batch boundaries. Its argument picks the exponential sampler: 0 the
// ziggurat the kernel uses (the baseline), 1 inversion with a log (what the kernel used
// before issue 52, for the sampler's share).
// After the runs, the ratio of the tandem queue's events/s to the baseline's is printed
// (medians when repeated). Interleave the repetitions so both see the same machine load:
//   build/core/capsim_core_bench --benchmark_repetitions=5 --benchmark_enable_random_interleaving=true
// items_per_second is events per second.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "capsim/core/des/examples.hpp"
#include "capsim/core/des/random.hpp"
#include "capsim/core/des/simulator.hpp"

namespace {

constexpr int kStations = 3;
constexpr double kArrivalRate = 0.8, kServiceMean = 1.0;
constexpr double kWarmup = 1000.0, kDuration = 1'000'000.0;

void BM_TandemQueue(benchmark::State& state) {
  const int stations = static_cast<int>(state.range(0));
  const capsim::des::Pipeline pipeline =
      capsim::des::make_tandem_pipeline(stations, kArrivalRate, 1.0 / kServiceMean);
  capsim::des::RunOptions options;
  options.warmup = capsim::Seconds(kWarmup);
  options.duration = capsim::Seconds(kDuration);
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
BENCHMARK(BM_TandemQueue)->Arg(kStations)->Unit(benchmark::kMillisecond);

// The bare loop's event: a service completion at `station`, or an arrival (station == n).
struct BareEvent {
  double time;
  std::uint32_t station;
};

// A binary min-heap on time.
class BareHeap {
 public:
  void push(BareEvent e) {
    heap_.push_back(e);
    std::size_t i = heap_.size() - 1;
    while (i > 0 && e.time < heap_[(i - 1) / 2].time) {
      heap_[i] = heap_[(i - 1) / 2];
      i = (i - 1) / 2;
    }
    heap_[i] = e;
  }
  BareEvent pop() {
    const BareEvent top = heap_.front(), last = heap_.back();
    heap_.pop_back();
    const std::size_t n = heap_.size();
    std::size_t i = 0;
    for (std::size_t child = 1; child < n; child = 2 * i + 1) {
      if (child + 1 < n && heap_[child + 1].time < heap_[child].time) ++child;
      if (!(heap_[child].time < last.time)) break;
      heap_[i] = heap_[child];
      i = child;
    }
    if (n > 0) heap_[i] = last;
    return top;
  }

 private:
  std::vector<BareEvent> heap_;
};

// The tandem queue to `end` seconds; returns the events processed.
template <bool kInversion>
std::uint64_t bare_tandem(std::uint32_t stations, double end, std::uint64_t seed) {
  capsim::des::Rng rng(seed);
  auto exponential = [&rng] {
    return kInversion ? rng.exponential() : rng.exponential_ziggurat();
  };
  const std::uint32_t arrival = stations;
  std::vector<std::uint32_t> at_station(stations, 0);
  BareHeap heap;
  heap.push({exponential() / kArrivalRate, arrival});
  std::uint64_t events = 0;
  for (;;) {
    const BareEvent e = heap.pop();
    if (e.time > end) break;
    ++events;
    std::uint32_t next = 0;
    if (e.station == arrival) {
      heap.push({e.time + exponential() / kArrivalRate, arrival});
    } else {
      if (--at_station[e.station] > 0) heap.push({e.time + kServiceMean * exponential(), e.station});
      next = e.station + 1;
    }
    if (next < stations && at_station[next]++ == 0)
      heap.push({e.time + kServiceMean * exponential(), next});
  }
  return events;
}

void BM_BareHeapLoop(benchmark::State& state) {
  const auto stations = static_cast<std::uint32_t>(state.range(0));
  const bool inversion = state.range(1) != 0;
  std::uint64_t events = 0;
  std::uint64_t seed = 1;
  for (auto _ : state) {
    const std::uint64_t n = inversion ? bare_tandem<true>(stations, kWarmup + kDuration, seed++)
                                      : bare_tandem<false>(stations, kWarmup + kDuration, seed++);
    events += n;
    benchmark::DoNotOptimize(n);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(events));
  state.counters["events_per_run"] =
      benchmark::Counter(static_cast<double>(events) / static_cast<double>(state.iterations()));
}
BENCHMARK(BM_BareHeapLoop)
    ->Args({kStations, 0})
    ->Args({kStations, 1})
    ->ArgNames({"stations", "inversion"})
    ->Unit(benchmark::kMillisecond);

// The console reporter, which also keeps each benchmark's events/s (the median aggregate
// when the runs are repeated) to print the tandem queue's ratio to the baseline.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      const auto rate = run.counters.find("items_per_second");
      if (rate == run.counters.end() || run.error_occurred) continue;
      const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
      if (run.run_type == Run::RT_Iteration || median)
        (median ? medians_ : singles_)[run.run_name.str()] = rate->second.value;
    }
  }
  // events/s of `name`: its median if repeated, else its one run; 0 if it did not run.
  double events_per_second(const std::string& name) const {
    for (const auto* rates : {&medians_, &singles_})
      if (const auto it = rates->find(name); it != rates->end()) return it->second;
    return 0.0;
  }

 private:
  std::map<std::string, double> medians_, singles_;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  const std::string suffix = "/" + std::to_string(kStations);
  const double tandem = reporter.events_per_second("BM_TandemQueue" + suffix);
  const double bare = reporter.events_per_second("BM_BareHeapLoop/stations:3/inversion:0");
  const double bare_log = reporter.events_per_second("BM_BareHeapLoop/stations:3/inversion:1");
  if (tandem > 0.0 && bare > 0.0)
    std::printf("tandem queue %.1f M events/s = %.2f x the bare heap loop's %.1f M events/s\n",
                tandem / 1e6, tandem / bare, bare / 1e6);
  if (tandem > 0.0 && bare_log > 0.0)
    std::printf("  and %.2f x the bare heap loop with -log sampling (%.1f M events/s)\n",
                tandem / bare_log, bare_log / 1e6);
  benchmark::Shutdown();
  return 0;
}
