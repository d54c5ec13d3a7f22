#include <doctest/doctest.h>

#include <cmath>

#include "capsim/models/memory.hpp"
#include "capsim/models/search.hpp"
#include "capsim/models/serving_llm.hpp"
#include "support/test_support.hpp"

using namespace capsim;
using namespace capsim::models;

namespace {
LlmServingSpec llama70b_on_8xh100() {
  LlmServingSpec s;
  s.shape = find_transformer_preset("llama-2-70b")->shape;
  s.cluster = node_type_by_id(testing::shipped_catalog(), "lambda-8x-h100-sxm")->cluster;
  s.tensor_parallel = 8;
  return s;
}
}  // namespace

TEST_CASE("serving llm TPOT of llama-2-70b on 8 x H100 by hand") {
  const auto s = llama70b_on_8xh100();
  MESSAGE("params " << parameter_count(s.shape) << ", NVLink " << s.cluster.intra_node_bandwidth.value()
                    << " B/s, latency " << s.cluster.intra_node_latency.value());
  auto e = estimate_llm_serving(s, {512, 128});
  REQUIRE_MESSAGE(e.ok(), format_diagnostics(e.errors()));
  // weights/GPU = 2 B x P / 8; KV per token per GPU = 2 x 80 layers x 1 KV head x 128 x 2 B = 40,960 B.
  const double weights = 2.0 * parameter_count(s.shape) / 8;
  CHECK(e->kv_bytes_per_token_per_gpu.value() == doctest::Approx(40960));
  // Batch 1 at context 512 + 64 = 576 tokens: bytes = weights + 576 x 40,960 = weights + 23.6 MB,
  // over 3.35 TB/s x 0.8 = 2.68 TB/s.
  const double memory = (weights + 576 * 40960.0) / (3.35e12 * 0.8);
  // TP: 2 all-reduces x 80 layers, each a ring over 8 GPUs of 8192 x 2 B = 16 KiB:
  // 2 x 7/8 x 16384 / (B x 0.8) + 2 x 7 x alpha.
  const double bw = s.cluster.intra_node_bandwidth.value() * 0.8, alpha = s.cluster.intra_node_latency.value();
  const double allreduce = 160 * (2 * 7.0 / 8 * 16384 / bw + 14 * alpha);
  MESSAGE("memory term " << memory * 1e3 << " ms, all-reduce " << allreduce * 1e3 << " ms, TPOT "
                         << e->tpot_single.value() * 1e3 << " ms; " << e->formula);
  // Plus the engine's host-side time per step (kEngineStepOverheadSeconds).
  CHECK(e->tpot_single.value() == doctest::Approx(memory + allreduce + kEngineStepOverheadSeconds).epsilon(1e-6));
  CHECK(memory == doctest::Approx(6.44e-3).epsilon(0.01));  // 17.25 GB / 2.68 TB/s
}

TEST_CASE("serving llm paged KV cache limits concurrency, and overload is saturation, not zero") {
  auto s = llama70b_on_8xh100();
  // usable = 0.9 x 80 GB = 72 GB; minus weights/GPU leaves the KV pool; 40,960 B per token.
  // Paged: a running request of 3072 + 1024 tokens holds on average 3072 + 512 = 3584.
  const double weights = 2.0 * parameter_count(s.shape) / 8;
  const double tokens = std::floor((72e9 - weights) / 40960.0);
  const int sequences = static_cast<int>(tokens / 3584);
  auto e = estimate_llm_serving(s, {3072, 1024});
  REQUIRE(e.ok());
  MESSAGE("KV tokens " << tokens << ", sequences " << sequences << ", capacity " << e->requests_per_second << " req/s");
  CHECK(e->kv_capacity_tokens == doctest::Approx(tokens));
  CHECK(e->max_concurrent_sequences == sequences);
  // Offered 40 requests/s, far above capacity: the scheduler never holds more than the
  // KV cache's blocks (each admitted request has at least its prompt's), the server keeps
  // completing requests near its capacity, and the run says it is saturated.
  LlmSimulationOptions o;
  o.rate = 40;
  o.warmup = Seconds(30);
  o.duration = Seconds(120);
  auto sim = simulate_llm_serving(s, {3072, 1024}, o);
  REQUIRE(sim.ok());
  CHECK(sim->peak_running <= static_cast<int>(tokens / 3072));
  CHECK(sim->peak_running > static_cast<int>(tokens / 4096));  // more than full reservation allows
  CHECK(sim->kv_utilization <= 1.0);
  CHECK(sim->saturated);
  CHECK(sim->queue_growth_per_second > 30);
  MESSAGE("simulated " << sim->requests_per_second << " req/s, preemptions " << sim->preemptions << ", mean running " << sim->mean_running);
  // Overloaded, vLLM-style admission preempts and recomputes sequences: the delivered
  // rate is below the steady-state estimate but of its order, never zero.
  CHECK(sim->requests_per_second > 0.5 * e->requests_per_second);
  CHECK(sim->requests_per_second < 1.4 * e->requests_per_second);
}

TEST_CASE("serving llm offline throughput rises with KV capacity until compute binds") {
  // Llama-2-70B on 8 x H100, 1000 requests of 1024 + 1024 tokens at t = 0: more KV memory
  // means more sequences per decode step, which amortizes the weight reads, until the step
  // turns compute-bound; the H200's larger memory therefore serves more.
  auto run = [](const char* node, double utilization) {
    auto s = llama70b_on_8xh100();
    s.cluster = node_type_by_id(testing::shipped_catalog(), node)->cluster;
    s.memory_utilization = utilization;
    LlmSimulationOptions o;
    o.offline_requests = 1000;
    auto sim = simulate_llm_serving(s, {1024, 1024}, o);
    REQUIRE_MESSAGE(sim.ok(), format_diagnostics(sim.errors()));
    return sim->output_tokens_per_second;
  };
  double previous = 0;
  for (double u : {0.5, 0.7, 0.9}) {
    const double tps = run("lambda-8x-h100-sxm", u);
    MESSAGE("H100 x 8, memory utilization " << u << ": " << tps << " output tokens/s");
    CHECK(tps > previous);
    previous = tps;
  }
  const double h200 = run("hgx-h200-8gpu", 0.9);
  MESSAGE("H200 x 8: " << h200 << " output tokens/s, ratio " << h200 / previous);
  CHECK(h200 > 1.2 * previous);
}

TEST_CASE("serving llm does not fit and says why") {
  auto s = llama70b_on_8xh100();
  s.tensor_parallel = 1;
  auto e = estimate_llm_serving(s, {512, 128});
  REQUIRE_FALSE(e.ok());
  CHECK(e.errors()[0].message.rfind("llama-2-70b does not fit on h100-sxm-80gb with TP=1: ", 0) == 0);
}

TEST_CASE("serving llm simulation at light load matches the analytic TTFT and TPOT") {
  LlmServingSpec s;
  s.shape = find_transformer_preset("llama-2-7b")->shape;
  s.cluster = node_type_by_id(testing::shipped_catalog(), "lambda-1x-h100-sxm")->cluster;
  auto e = estimate_llm_serving(s, {512, 128});
  REQUIRE(e.ok());
  LlmSimulationOptions o;
  o.rate = 0.05;  // one request every 20 s: alone on the GPU
  o.warmup = Seconds(0);
  o.duration = Seconds(4000);
  auto sim = simulate_llm_serving(s, {512, 128}, o);
  REQUIRE(sim.ok());
  CHECK(sim->ttft.p50.mean == doctest::Approx(e->ttft_unloaded.value()).epsilon(0.01));
  CHECK(sim->tpot.p50.mean == doctest::Approx(e->tpot_single.value()).epsilon(0.02));
  MESSAGE("7B on H100: TTFT " << e->ttft_unloaded.value() * 1e3 << " ms, TPOT " << e->tpot_single.value() * 1e3
                              << " ms, " << e->output_tokens_per_second_per_gpu << " tokens/s/GPU at "
                              << e->max_concurrent_sequences << " sequences");
}
