// Request length distributions (serving_lengths.hpp), what a token costs (llm_token_cost),
// and the check that output-length spread moves simulated latency and throughput the way
// queueing theory says it should.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "capsim/models/search.hpp"
#include "capsim/models/serving_lengths.hpp"
#include "capsim/models/serving_llm.hpp"
#include "capsim/models/serving_sizing.hpp"
#include "support/test_support.hpp"

using namespace capsim;
using namespace capsim::models;

namespace {

LlmLengthDistribution fixed(int tokens) {
  LlmLengthDistribution d;
  d.mean = tokens;
  d.min = d.max = tokens;
  return d;
}
LlmLengthDistribution exponential(double mean, int max = 1 << 22) {
  LlmLengthDistribution d;
  d.kind = LlmLengthKind::exponential;
  d.mean = mean;
  d.max = max;
  return d;
}
LlmLengthDistribution uniform(int min, int max) {
  LlmLengthDistribution d;
  d.kind = LlmLengthKind::uniform;
  d.min = min;
  d.max = max;
  d.mean = (min + max) / 2.0;
  return d;
}

double mean_output(const LlmRequestMix& m) {
  double sum = 0;
  for (const auto& r : m.requests) sum += r.output_tokens;
  return sum / static_cast<double>(m.requests.size());
}

// llama-2-7b on one H100 SXM of a DGX H100, at most `batch` sequences running.
LlmServingSpec small_replica(int batch) {
  LlmServingSpec s;
  s.shape = find_transformer_preset("llama-2-7b")->shape;
  s.cluster = node_type_by_id(testing::shipped_catalog(), "dgx-h100")->cluster;
  s.max_concurrent = batch;
  return s;
}

}  // namespace

TEST_CASE("length sampling: each distribution's mean, bounds and repeatability") {
  SUBCASE("exponential: the sample mean is the mean (standard error 0.7 % at 20,000)") {
    auto m = sample_llm_request_mix(fixed(64), exponential(256), 0, kLlmLengthSamples, 7);
    REQUIRE(m.ok());
    CHECK(m->requests.size() == static_cast<std::size_t>(kLlmLengthSamples));
    CHECK(mean_output(*m) == doctest::Approx(256).epsilon(0.03));
    CHECK(m->output_tokens == static_cast<int>(std::lround(mean_output(*m))));
    CHECK(m->prompt_tokens == 64);
    // Its spread: the standard deviation of an exponential is its mean.
    double var = 0;
    for (const auto& r : m->requests) var += (r.output_tokens - 256.0) * (r.output_tokens - 256.0);
    CHECK(std::sqrt(var / m->requests.size()) == doctest::Approx(256).epsilon(0.05));
  }
  SUBCASE("uniform: every length from min to max, none outside") {
    auto m = sample_llm_request_mix(fixed(64), uniform(100, 300), 0, kLlmLengthSamples, 7);
    REQUIRE(m.ok());
    const auto [lo, hi] = std::minmax_element(m->requests.begin(), m->requests.end(), [](auto& a, auto& b) {
      return a.output_tokens < b.output_tokens;
    });
    CHECK(lo->output_tokens == 100);
    CHECK(hi->output_tokens == 300);
    CHECK(mean_output(*m) == doctest::Approx(200).epsilon(0.01));
  }
  SUBCASE("truncation draws again: an exponential within [50, 400] never leaves it") {
    auto d = exponential(256, 400);
    d.min = 50;
    auto m = sample_llm_request_mix(fixed(64), d, 0, 5000, 3);
    REQUIRE(m.ok());
    for (const auto& r : m->requests) {
      CHECK(r.output_tokens >= 50);
      CHECK(r.output_tokens <= 400);
    }
  }
  SUBCASE("histogram: lengths in proportion to their weights") {
    LlmLengthDistribution h;
    h.kind = LlmLengthKind::histogram;
    h.histogram = {{128, 1.0}, {512, 3.0}};
    h.min = 128;
    h.max = 512;
    auto m = sample_llm_request_mix(fixed(64), h, 0, kLlmLengthSamples, 11);
    REQUIRE(m.ok());
    std::map<int, int> counts;
    for (const auto& r : m->requests) ++counts[r.output_tokens];
    CHECK(counts.size() == 2);
    CHECK(counts[512] / static_cast<double>(kLlmLengthSamples) == doctest::Approx(0.75).epsilon(0.03));
  }
  SUBCASE("lognormal and normal keep their means") {
    LlmLengthDistribution ln;
    ln.kind = LlmLengthKind::lognormal;
    ln.mean = 300;
    ln.sigma = 0.5;
    ln.max = 1 << 22;
    auto m = sample_llm_request_mix(fixed(64), ln, 0, kLlmLengthSamples, 5);
    REQUIRE(m.ok());
    CHECK(mean_output(*m) == doctest::Approx(300).epsilon(0.03));
    LlmLengthDistribution n;
    n.kind = LlmLengthKind::normal;
    n.mean = 300;
    n.sigma = 50;
    n.max = 1 << 22;
    m = sample_llm_request_mix(fixed(64), n, 0, kLlmLengthSamples, 5);
    REQUIRE(m.ok());
    CHECK(mean_output(*m) == doctest::Approx(300).epsilon(0.01));
  }
  SUBCASE("the same seed gives the same requests; another seed others") {
    auto a = sample_llm_request_mix(exponential(500), exponential(200), 0, 100, 42);
    auto b = sample_llm_request_mix(exponential(500), exponential(200), 0, 100, 42);
    auto c = sample_llm_request_mix(exponential(500), exponential(200), 0, 100, 43);
    REQUIRE((a.ok() && b.ok() && c.ok()));
    bool same = true, differs = false;
    for (std::size_t i = 0; i < 100; ++i) {
      same = same && a->requests[i].output_tokens == b->requests[i].output_tokens;
      differs = differs || a->requests[i].output_tokens != c->requests[i].output_tokens;
    }
    CHECK(same);
    CHECK(differs);
  }
  SUBCASE("a pair longer than the context is drawn again") {
    auto m = sample_llm_request_mix(exponential(1000), exponential(1000), 2048, 5000, 9);
    REQUIRE(m.ok());
    for (const auto& r : m->requests) CHECK(r.prompt_tokens + r.output_tokens <= 2048);
    auto none = sample_llm_request_mix(fixed(3000), fixed(100), 2048, 10, 9);
    REQUIRE_FALSE(none.ok());
    CHECK(none.errors().front().message.find("leave almost no request within the model's context of 2048") !=
          std::string::npos);
  }
}

TEST_CASE("length text says what was assumed") {
  CHECK(llm_length_text(fixed(512)) == "512");
  CHECK(llm_length_text(exponential(256, 4096)) == "exponential, mean 256, 1 to 4096");
  CHECK(llm_length_text(uniform(1, 255)) == "uniform, 1 to 255");
  LlmLengthDistribution h;
  h.kind = LlmLengthKind::histogram;
  h.histogram = {{128, 1.0}, {512, 3.0}};
  CHECK(llm_length_text(h) == "histogram (128: 0.25, 512: 0.75)");
}

TEST_CASE("token cost: the hour's price split by GPU time, over the tokens served") {
  LlmEstimate e;
  e.max_concurrent_sequences = 10;
  e.tpot_at_max = Seconds(0.02);       // a request's decode: 100 x 0.02 / 10 = 0.2 s of the replica
  e.prefill_per_request = Seconds(0.05);  // its prompt: 0.05 s
  LlmRequestMix mix{1000, 100, {}};
  // 3.6 USD an hour; 2 requests/s: 2,000 input and 200 output tokens a second.
  auto c = llm_token_cost(usd_per_hour(3.6), e, mix, 2.0, 0, "test");
  REQUIRE(c);
  CHECK(c->prefill_share == doctest::Approx(0.2));  // 0.05 / (0.05 + 0.2)
  // input: 3.6 x 0.2 / (2,000 x 3,600) x 1e6 = 0.1 USD; output: 3.6 x 0.8 / (200 x 3,600) x 1e6 = 4 USD;
  // both: 3.6 / (2,200 x 3,600) x 1e6 = 0.4545 USD.
  CHECK(c->usd_per_million_input == doctest::Approx(0.1));
  CHECK(c->usd_per_million_output == doctest::Approx(4.0));
  CHECK(c->usd_per_million_tokens == doctest::Approx(3.6 / 2200 / 3600 * 1e6));
  // A measured output rate replaces requests x the mean output.
  auto measured = llm_token_cost(usd_per_hour(3.6), e, mix, 2.0, 400, "test");
  REQUIRE(measured);
  CHECK(measured->usd_per_million_output == doctest::Approx(2.0));
  // Nothing served: no figure, never a division by zero.
  CHECK_FALSE(llm_token_cost(usd_per_hour(3.6), e, mix, 0.0, 0, "test"));
  CHECK(llm_token_cost_text(*c) ==
        "0.1 USD per million input tokens, 4 USD per million output tokens (0.455 USD per million tokens of both)");
}

// Output-length spread at the same mean, as queueing theory predicts it (issue 49).
TEST_CASE("output-length spread: exponential vs uniform at the same mean") {
  const auto prompt = fixed(64);
  auto exp_mix = sample_llm_request_mix(prompt, exponential(128, 4096), 0, kLlmLengthSamples, 1);
  auto uni_mix = sample_llm_request_mix(prompt, uniform(1, 255), 0, kLlmLengthSamples, 1);
  REQUIRE((exp_mix.ok() && uni_mix.ok()));
  CHECK(std::abs(exp_mix->output_tokens - uni_mix->output_tokens) <= 3);  // the same mean, 128

  SUBCASE("queueing: M/G/c waiting grows with (1 + CV^2) / 2 (Lee and Longton 1959)") {
    // At most c = 4 sequences run, each for its output x one decode step (the steps are
    // memory-bound, nearly the same at 1 to 4 sequences): an M/G/4 queue. The mean wait is
    // M/M/4's x (1 + CV^2) / 2, CV^2 = 1 for exponential and 1/3 for uniform lengths on
    // [1, 255]: exponential waits 1 / (2/3) = 1.5 times as long. TTFT = wait + a prefill.
    const auto spec = small_replica(4);
    auto est = estimate_llm_serving(spec, *exp_mix);
    REQUIRE(est.ok());
    LlmSimulationOptions o;
    o.rate = 0.7 * est->requests_per_second;  // utilization 0.7
    o.warmup = Seconds(200.0);
    o.duration = Seconds(12000.0);
    o.seed = 5;
    auto exp_sim = simulate_llm_serving(spec, *exp_mix, o);
    auto uni_sim = simulate_llm_serving(spec, *uni_mix, o);
    REQUIRE((exp_sim.ok() && uni_sim.ok()));
    CHECK_FALSE(exp_sim->saturated);
    const double base = est->ttft_unloaded.value();
    const double ratio = (exp_sim->ttft_mean - base) / (uni_sim->ttft_mean - base);
    MESSAGE("mean TTFT exponential " << exp_sim->ttft_mean << " s, uniform " << uni_sim->ttft_mean
                                     << " s, unloaded " << base << " s: waiting ratio " << ratio);
    CHECK(ratio > 1.5 * 0.8);
    CHECK(ratio < 1.5 * 1.25);
    // Throughput is the offered rate either way (the queue is stable): spread moves latency.
    CHECK(exp_sim->requests_per_second == doctest::Approx(uni_sim->requests_per_second).epsilon(0.05));
  }
  SUBCASE("static batches: a batch lasts its longest output (order statistics)") {
    // Batches of B = 8 run to their longest sequence: E[max of 8] is 128 x H_8 = 347.9 tokens
    // for exponential lengths and 1 + 254 x 8/9 = 226.8 for uniform ones, so uniform lengths
    // finish 347.9 / 226.8 = 1.53 times as many requests a second.
    auto spec = small_replica(8);
    spec.batching = LlmBatching::static_batches;
    LlmSimulationOptions o;
    o.offline_requests = 1600;
    auto exp_sim = simulate_llm_serving(spec, *exp_mix, o);
    auto uni_sim = simulate_llm_serving(spec, *uni_mix, o);
    REQUIRE((exp_sim.ok() && uni_sim.ok()));
    const double ratio = uni_sim->requests_per_second / exp_sim->requests_per_second;
    MESSAGE("static batches of 8: uniform " << uni_sim->requests_per_second << " requests/s, exponential "
                                            << exp_sim->requests_per_second << ": ratio " << ratio);
    CHECK(ratio == doctest::Approx(347.9 / 226.8).epsilon(0.10));
  }
}
