// Request-level serving simulation speed, on one core.
//
//   build/models/capsim_serving_bench --benchmark_filter=OneHour
//
// BM_OneHourThreeModels: one simulated hour at 1,000 requests/s (3.6 million requests, plus
// a one-minute warm-up) through a three-model graph on A100s: a text detector, a text
// recognizer run on 3 crops per image, and a ResNet-50 classifier, each with dynamic
// batching. The goal is under 5 s of wall time; items_per_second is requests simulated per
// second of wall time.
//
// BM_LlmServer / BM_LlmStepsAlone: ten simulated minutes of Llama-2-70B on 8 x H100 (TP 8)
// at 8 requests/s, 1,024-token prompts and 256-token answers (continuous batching, paged KV).
// The baseline is the same run's engine steps timed alone (llm_step over the batch sizes the
// run sees): the simulation's own bookkeeping is the ratio between the two.
#include <benchmark/benchmark.h>

#include "bench_catalog.hpp"
#include "capsim/models/search.hpp"
#include "capsim/models/serving.hpp"
#include "capsim/models/serving_llm.hpp"
#include "capsim/models/workload.hpp"

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

LlmServingSpec llama70b_on_8xh100() {
  LlmServingSpec s;
  s.shape = find_transformer_preset("llama-2-70b")->shape;
  s.cluster = node_type_by_id(catalog(), "lambda-8x-h100-sxm")->cluster;
  s.tensor_parallel = 8;
  return s;
}

LlmSimulationOptions ten_minutes() {
  LlmSimulationOptions o;
  o.rate = 8.0;
  o.warmup = Seconds(60);
  o.duration = Seconds(600);
  return o;
}

void BM_LlmServer(benchmark::State& state) {
  const LlmServingSpec spec = llama70b_on_8xh100();
  const LlmSimulationOptions o = ten_minutes();
  double steps = 0;
  for (auto _ : state) {
    auto r = simulate_llm_serving(spec, {1024, 256}, o);
    if (!r) {
      state.SkipWithError(format_diagnostics(r.errors()).c_str());
      return;
    }
    steps += static_cast<double>(r->iterations);
    benchmark::DoNotOptimize(r->ttft.p99.mean);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(steps));  // engine steps per second
}
BENCHMARK(BM_LlmServer)->Unit(benchmark::kMillisecond);

// The baseline: as many llm_step calls as the run takes steps, at its mean running batch.
void BM_LlmStepsAlone(benchmark::State& state) {
  const LlmServingSpec spec = llama70b_on_8xh100();
  auto run = simulate_llm_serving(spec, {1024, 256}, ten_minutes());
  if (!run) {
    state.SkipWithError(format_diagnostics(run.errors()).c_str());
    return;
  }
  const auto steps = static_cast<std::int64_t>(run->iterations);
  const int batch = std::max(1, static_cast<int>(run->mean_running));
  for (auto _ : state) {
    double total = 0;
    for (std::int64_t i = 0; i < steps; ++i)
      total += llm_step(spec, batch, batch * (1024.0 + static_cast<double>(i % 256)), 0, 0).value();
    benchmark::DoNotOptimize(total);
  }
  state.SetItemsProcessed(steps * static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_LlmStepsAlone)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
