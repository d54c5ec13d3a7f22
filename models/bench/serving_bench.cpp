// Request-level serving simulation speed, on one core.
//
//   build/models/capsim_serving_bench --benchmark_filter=OneHour
//
// BM_OneHourThreeModels: one simulated hour at 1,000 requests/s (3.6 million requests, plus
// a one-minute warm-up) through a three-model graph on A100s: a text detector, a text
// recognizer run on 3 crops per image, and a ResNet-50 classifier, each with dynamic
// batching. The goal is under 5 s of wall time; items_per_second is requests simulated per
// second of wall time.
#include <benchmark/benchmark.h>

#include "bench_catalog.hpp"
#include "capsim/models/serving.hpp"

namespace {

using namespace capsim;
using namespace capsim::models;

using bench::catalog;

DeploymentPlan three_model_plan() {
  InferenceGraph g{"ocr-and-classify",
                   {{"text-detector", *find_reference_served_model("horizontal-text-detection-0001"), 1.0},
                    {"text-recognizer", *find_reference_served_model("text-recognition-0012"), 3.0},
                    {"classifier", *find_reference_served_model("resnet-50"), 1.0}}};
  Deployment d;
  d.gpu = catalog().gpu("a100-sxm-80gb").value();
  for (int replicas : {4, 2, 2}) {
    StageDeployment s;
    s.replicas = replicas;
    s.batching = {16, Seconds(0.002)};
    d.stages.push_back(s);
  }
  return std::move(plan_deployment(g, d)).value();
}

void BM_OneHourThreeModels(benchmark::State& state) {
  const DeploymentPlan plan = three_model_plan();
  ArrivalSpec arrivals;
  arrivals.rate = des::Rate(1000.0);
  des::RunOptions run;
  run.warmup = Seconds(60);
  run.duration = hours(1);
  double requests = 0;
  for (auto _ : state) {
    auto r = simulate_serving(plan, arrivals, run);
    if (!r) {
      state.SkipWithError(format_diagnostics(r.errors()).c_str());
      return;
    }
    requests += r->simulated_throughput * run.duration.value();
    benchmark::DoNotOptimize(r->latency.p99.mean);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(requests));
  state.counters["requests_per_run"] = requests / static_cast<double>(state.iterations());
}
BENCHMARK(BM_OneHourThreeModels)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
