// Tests that catch wrong numbers (issue 22): properties every correct model keeps, checked
// over a grid of inputs rather than at one point, so that a sign error, a swapped term or
// a dropped factor fails here even where no golden covers it.
//   - step time never rises with more FLOPS or more bandwidth;
//   - memory per GPU never rises with more sharding (tensor, pipeline, ZeRO stage);
//   - cost per run = price per GPU-hour x time x GPUs;
//   - the DES obeys Little's law, and a saturated line runs at its bottleneck's rate.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "capsim/core/des/examples.hpp"
#include "capsim/core/des/simulator.hpp"
#include "capsim/models/cost.hpp"
#include "capsim/models/memory.hpp"
#include "capsim/models/performance.hpp"
#include "capsim/scenarios/runner.hpp"
#include "capsim/scenarios/scenario.hpp"
#include "support/test_support.hpp"

using namespace capsim;
using namespace capsim::models;

namespace {

ClusterSpec a100_like() {
  ClusterSpec c;
  c.gpu.id = "test-gpu";
  c.gpu.memory = gigabytes(80);
  c.gpu.memory_bandwidth = gigabytes_per_second(2000);
  c.gpu.peak_dense.emplace("bf16", teraflops(312));
  c.gpu.peak_dense.emplace("fp16", teraflops(312));
  c.gpus_per_node = 8;
  c.intra_node_bandwidth = gigabytes_per_second(300);
  c.intra_node_latency = seconds(2e-6);
  c.inter_node_bandwidth = gigabytes_per_second(12.5);
  c.inter_node_latency = seconds(5e-6);
  c.pcie_bandwidth = gigabytes_per_second(31.5);
  return c;
}

TransformerShape gpt_1_3b() {
  TransformerShape s;
  s.name = "gpt-1.3b";
  s.layers = 24;
  s.hidden = 2048;
  s.heads = 16;
  s.kv_heads = 16;
  s.ffn_hidden = 8192;
  s.vocab = 50304;
  s.seq_len = 2048;
  return s;
}

// The one layout where the invariant does not hold today (found by this test): ZeRO-3
// with t=8 over 4 nodes; its step time rises ~1.5 % as FLOPS or HBM bandwidth grow (the
// exposed ZeRO all-gather grows faster than the compute shrinks). A models/performance.cpp
// defect for its owner; the should_fail case below turns red when it is fixed.
bool known_zero3_defect(const Parallelism& par) {
  return par.tensor == 8 && par.pipeline == 1 && par.data == 4 && par.zero_stage == 3;
}

// Layouts of 1 to 32 GPUs that the model accepts on 8-GPU nodes.
std::vector<Parallelism> layouts() {
  std::vector<Parallelism> out;
  for (int t : {1, 2, 8})
    for (int p : {1, 2, 4})
      for (int d : {1, 4})
        for (int zero : {0, 1, 3}) {
          Parallelism par;
          par.tensor = t;
          par.pipeline = p;
          par.data = d;
          par.micro_batch = 1;
          par.global_batch = 16 * d;
          par.zero_stage = zero;
          if (!known_zero3_defect(par)) out.push_back(par);
        }
  return out;
}

double step_seconds(const Parallelism& par, const ClusterSpec& c) {
  auto est = estimate_training_step(gpt_1_3b(), par, c, TrainingOptions{});
  REQUIRE_MESSAGE(est.ok(), format_diagnostics(est.errors()));
  return est->step_time.value();
}

}  // namespace

TEST_CASE("invariant: step time never rises with more FLOPS") {
  for (const auto& par : layouts()) {
    CAPTURE(par.tensor);
    CAPTURE(par.pipeline);
    CAPTURE(par.data);
    CAPTURE(par.zero_stage);
    double previous = INFINITY;
    for (double scale : {0.25, 0.5, 1.0, 2.0, 4.0, 16.0}) {
      ClusterSpec c = a100_like();
      for (auto& [precision, peak] : c.gpu.peak_dense) peak = FlopsPerSecond(peak.value() * scale);
      const double t = step_seconds(par, c);
      CAPTURE(scale);
      CHECK(std::isfinite(t));
      CHECK(t <= previous * (1 + 1e-12));
      previous = t;
    }
  }
}

TEST_CASE("invariant: step time never rises with more memory, intra-node or network bandwidth") {
  for (const auto& par : layouts()) {
    CAPTURE(par.tensor);
    CAPTURE(par.pipeline);
    CAPTURE(par.data);
    CAPTURE(par.zero_stage);
    for (int which = 0; which < 3; ++which) {
      CAPTURE(which);
      double previous = INFINITY;
      for (double scale : {0.25, 0.5, 1.0, 2.0, 8.0}) {
        ClusterSpec c = a100_like();
        if (which == 0) c.gpu.memory_bandwidth = BytesPerSecond(c.gpu.memory_bandwidth.value() * scale);
        if (which == 1) c.intra_node_bandwidth = BytesPerSecond(c.intra_node_bandwidth.value() * scale);
        if (which == 2) c.inter_node_bandwidth = BytesPerSecond(c.inter_node_bandwidth.value() * scale);
        const double t = step_seconds(par, c);
        CAPTURE(scale);
        CHECK(t <= previous * (1 + 1e-12));
        previous = t;
      }
    }
  }
}

// Was a known defect (the whole-model ZeRO-3 gather exposed more as compute got faster);
// per-layer overlap makes a layer cost max(compute, communication), monotone in FLOPS.
TEST_CASE("invariant: ZeRO-3 (t=8 d=4) step time never rises with more FLOPS") {
  Parallelism par;
  par.tensor = 8;
  par.data = 4;
  par.global_batch = 64;
  par.zero_stage = 3;
  double previous = INFINITY;
  for (double scale : {0.25, 0.5, 1.0, 2.0, 4.0, 16.0}) {
    ClusterSpec c = a100_like();
    for (auto& [precision, peak] : c.gpu.peak_dense) peak = FlopsPerSecond(peak.value() * scale);
    const double t = step_seconds(par, c);
    CHECK(t <= previous * (1 + 1e-12));
    previous = t;
  }
}

TEST_CASE("invariant: memory per GPU never rises with more sharding") {
  const TrainingOptions opt{};
  auto memory = [&](int t, int p, int d, int zero) {
    Parallelism par;
    par.tensor = t;
    par.pipeline = p;
    par.data = d;
    par.micro_batch = 1;
    par.global_batch = 8 * d;
    par.zero_stage = zero;
    return training_memory_total_per_gpu(gpt_1_3b(), par, opt).value();
  };
  for (int p : {1, 2, 4})
    for (int d : {1, 8})
      for (int zero : {0, 1, 2, 3}) {
        double previous = INFINITY;
        for (int t : {1, 2, 4, 8}) {  // more tensor parallelism
          CAPTURE(t);
          CAPTURE(p);
          CAPTURE(d);
          CAPTURE(zero);
          const double m = memory(t, p, d, zero);
          CHECK(m > 0);
          CHECK(m <= previous * (1 + 1e-12));
          previous = m;
        }
      }
  for (int t : {1, 2, 8})
    for (int d : {1, 8})
      for (int zero : {0, 3}) {
        double previous = INFINITY;
        for (int p : {1, 2, 4, 8}) {  // more pipeline stages
          CAPTURE(t);
          CAPTURE(p);
          CAPTURE(d);
          CAPTURE(zero);
          const double m = memory(t, p, d, zero);
          CHECK(m <= previous * (1 + 1e-12));
          previous = m;
        }
      }
  for (int t : {1, 8})
    for (int d : {2, 8, 64}) {
      double previous = INFINITY;
      for (int zero : {0, 1, 2, 3}) {  // more ZeRO sharding of the model states
        CAPTURE(t);
        CAPTURE(d);
        CAPTURE(zero);
        const double m = memory(t, 1, d, zero);
        CHECK(m <= previous * (1 + 1e-12));
        previous = m;
      }
    }
}

TEST_CASE("invariant: cost per run = price per node-hour / GPUs per node x time x GPUs, on every candidate") {
  for (const char* name : {"lora-7b-one-node", "llama-70b-pretrain", "resnet101-small-gpus"}) {
    CAPTURE(name);
    auto scenario = scenarios::load_scenario_file(testing::example_scenario(name), testing::shipped_catalog());
    REQUIRE_MESSAGE(scenario.ok(), format_diagnostics(scenario.errors()));
    auto run = scenarios::run_scenario(*scenario, testing::shipped_catalog());
    REQUIRE(run.ok());
    REQUIRE(run->sizing);
    const auto& search = run->sizing->search;
    int checked = 0;
    for (const auto& c : search.frontier) {
      const auto& type = search.node_types[c.node_type];
      if (!c.cost || !type.price) continue;
      const double per_gpu_second = type.price->value() / type.cluster.gpus_per_node;
      const double expected = per_gpu_second * c.total_time.value() * c.gpus(search.node_types);
      CHECK(c.cost->value() == doctest::Approx(expected).epsilon(1e-9));
      // and gpu_hours is the same product without the price
      CHECK(c.gpu_hours == doctest::Approx(c.total_time.value() / 3600.0 * c.gpus(search.node_types)).epsilon(1e-9));
      ++checked;
    }
    CHECK(checked > 0);
  }
}

TEST_CASE("invariant: the DES obeys Little's law (L = lambda W) at every load") {
  for (double rho : {0.3, 0.6, 0.85}) {
    CAPTURE(rho);
    const double service_rate = 100.0, arrival_rate = rho * service_rate;
    auto pipeline = des::make_tandem_pipeline(2, arrival_rate, service_rate);
    des::RunOptions run;
    run.warmup = Seconds(200);
    run.duration = Seconds(4000);
    run.seed = 7;
    auto result = des::simulate(pipeline, run);
    REQUIRE(result.ok());
    // Flow conservation: what leaves is what arrives.
    CHECK(result->throughput.mean == doctest::Approx(arrival_rate).epsilon(0.03));
    for (const auto& s : result->stations) {
      CAPTURE(s.name);
      // Little's law per station: items in the station = throughput x time in the station.
      CHECK(s.in_station.mean == doctest::Approx(s.throughput.mean * s.sojourn_time.mean).epsilon(0.03));
      // and M/M/1: utilization = rho, sojourn = 1 / (mu - lambda).
      CHECK(s.utilization.mean == doctest::Approx(rho).epsilon(0.03));
      CHECK(s.sojourn_time.mean == doctest::Approx(1.0 / (service_rate - arrival_rate)).epsilon(0.08));
    }
    // End to end: the sum of the stations (Jackson tandem).
    CHECK(result->latency.mean == doctest::Approx(2.0 / (service_rate - arrival_rate)).epsilon(0.08));
    // At light load the analytic figures lie within the simulation's own 95 % confidence
    // intervals, not only near its means.
    if (rho < 0.5) {
      const double analytic = 1.0 / (service_rate - arrival_rate);
      for (const auto& s : result->stations) {
        CAPTURE(s.name);
        CHECK(s.sojourn_time.low <= analytic);
        CHECK(analytic <= s.sojourn_time.high);
        CHECK(s.utilization.low <= rho);
        CHECK(rho <= s.utilization.high);
      }
      CHECK(result->throughput.low <= arrival_rate);
      CHECK(arrival_rate <= result->throughput.high);
    }
  }
}

TEST_CASE("invariant: an overloaded line delivers its bottleneck's service rate, not the offered load") {
  // 150 items/s offered to a station that serves 100/s: the line carries 100/s.
  auto pipeline = des::make_tandem_pipeline(1, 150.0, 100.0);
  des::RunOptions run;
  run.warmup = Seconds(50);
  run.duration = Seconds(500);
  run.seed = 3;
  auto result = des::simulate(pipeline, run);
  REQUIRE(result.ok());
  CHECK(result->throughput.mean == doctest::Approx(100.0).epsilon(0.03));
  CHECK(result->stations.at(0).utilization.mean > 0.99);
}

TEST_CASE("invariant: each expectation operator holds below, at and above its bound as written") {
  // Found by tools/mutate: '<' accepting equality and '>=' flipped both survived the suite.
  using scenarios::check_expectations;
  using scenarios::parse_expectation;
  const struct {
    const char* text;
    bool below, at, above;  // measured 1 s, 2 s, 3 s against a bound of 2 s
  } cases[] = {
      {"step_time < 2 s", true, false, false},
      {"step_time <= 2 s", true, true, false},
      {"step_time > 2 s", false, false, true},
      {"step_time >= 2 s", false, true, true},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    auto e = parse_expectation(c.text);
    REQUIRE(e.ok());
    auto at = [&](double seconds) {
      return check_expectations({*e}, {{"step_time", {seconds, dims::seconds, Currency::none}}})[0].passed;
    };
    CHECK(at(1.0) == c.below);
    CHECK(at(2.0) == c.at);
    CHECK(at(3.0) == c.above);
  }
}

TEST_CASE("invariant: owned hardware costs operating x time plus its purchases minus the last one's residual") {
  // Found by tools/mutate: depreciation past the purchase price survived the suite. With
  // refresh (issue 18) the hardware is bought again at the end of each 3-year life inside
  // the horizon; what is charged is every purchase minus the undepreciated rest of the last.
  CostBreakdown b;
  b.capex = Money(120000, Currency::usd);
  b.power = usd_per_hour(1.0);
  b.life = Seconds(36 * units::month);
  b.depreciation = MoneyPerSecond(b.capex.value() / b.life.value(), Currency::usd);
  for (double months : {1.0, 12.0, 36.0, 60.0, 120.0}) {
    CAPTURE(months);
    const Seconds t(months * units::month);
    const double operating = b.operating().value() * t.value();
    const double residual = b.residual_value(t).value();
    CHECK(residual >= -1e-6);
    CHECK(residual <= b.capex.value() * (1 + 1e-12));
    CHECK(b.over(t).value() ==
          doctest::Approx(operating + b.capex.value() * b.purchases(t) - residual).epsilon(1e-9));
    // Within the first life: the used part of one purchase, never more than its price.
    if (months <= 36) CHECK(b.over(t).value() <= operating + b.capex.value() * (1 + 1e-12));
  }
}
