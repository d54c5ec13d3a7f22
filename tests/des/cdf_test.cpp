#include <doctest/doctest.h>

#include <cmath>

#include "capsim/core/des/examples.hpp"
#include "capsim/core/des/simulator.hpp"

using namespace capsim;
using namespace capsim::des;

TEST_CASE("the latency distribution of an M/M/1 queue is exponential with rate mu minus lambda") {
  // One exponential station at rho = 0.8: sojourn ~ Exp(mu - lambda) = Exp(0.2 /s), so the
  // q-quantile is -ln(1 - q) / 0.2 s: median 3.466 s, 90th percentile 11.513 s.
  const Pipeline p = make_tandem_pipeline(1, 0.8, 1.0);
  RunOptions run;
  run.warmup = Seconds(1e4);
  run.duration = Seconds(1e6);
  run.seed = 1;
  auto r = simulate(p, run);
  REQUIRE(r.ok());
  REQUIRE(r->latency_cdf.size() == 21);
  CHECK(r->latency_cdf.front().second == 0.0);
  CHECK(r->latency_cdf.back().second == 1.0);
  for (std::size_t i = 1; i < r->latency_cdf.size(); ++i) CHECK(r->latency_cdf[i].first >= r->latency_cdf[i - 1].first);
  const auto at = [&](double q) {
    for (const auto& [t, f] : r->latency_cdf)
      if (std::fabs(f - q) < 1e-9) return t;
    return -1.0;
  };
  CHECK(at(0.5) == doctest::Approx(-std::log(0.5) / 0.2).epsilon(0.03));
  CHECK(at(0.9) == doctest::Approx(-std::log(0.1) / 0.2).epsilon(0.03));
}
