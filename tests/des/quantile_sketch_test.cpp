// The simulator's percentile sketch (issue 52) against exact nearest-rank quantiles on known
// distributions, within its stated bound, and its memory against the number of values.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "capsim/core/des/random.hpp"
#include "../../core/src/des/quantile_sketch.hpp"

using capsim::des::Rng;
using capsim::des::detail::QuantileSketch;

namespace {

// Nearest rank: the smallest value with at least ceil(p n) values at or below it.
double exact_quantile(const std::vector<double>& sorted, double p) {
  const std::size_t n = sorted.size();
  auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(n)));
  rank = std::clamp<std::size_t>(rank, 1, n);
  return sorted[rank - 1];
}

const std::vector<double> kPs = {0.0,  0.001, 0.01, 0.05, 0.1,  0.25,  0.5,
                                 0.75, 0.9,   0.95, 0.99, 0.999, 0.9999, 1.0};

// 2^-(kSubBits + 1) of the exact value, and a few ulps for the bucket arithmetic.
constexpr double kBound = 1.0 / (2 << QuantileSketch::kSubBits);

void check_against_exact(const std::string& name, std::vector<double> values) {
  QuantileSketch sketch;
  for (double v : values) sketch.add(v);
  std::sort(values.begin(), values.end());
  std::vector<double> estimates(kPs.size());
  sketch.quantiles(kPs.data(), kPs.size(), estimates.data());
  double worst = 0.0;
  for (std::size_t i = 0; i < kPs.size(); ++i) {
    const double exact = exact_quantile(values, kPs[i]);
    const double error = exact > 0 ? std::abs(estimates[i] - exact) / exact : estimates[i];
    worst = std::max(worst, error);
    CHECK_MESSAGE(error <= kBound * (1 + 1e-12),
                  name << " p = " << kPs[i] << ": estimate " << estimates[i] << ", exact " << exact);
    if (kPs[i] == 0.0 || kPs[i] == 1.0) CHECK(estimates[i] == exact);  // the minimum, the maximum
  }
  std::printf("sketch, %-34s worst relative error %.5f %% (bound %.5f %%)\n", name.c_str(),
              100 * worst, 100 * kBound);
}

std::vector<double> sample(std::size_t n, const std::function<double(Rng&)>& draw) {
  Rng rng(42);
  std::vector<double> v(n);
  for (double& x : v) x = draw(rng);
  return v;
}

}  // namespace

TEST_CASE("sketch quantiles are within 2^-(kSubBits+1) of the exact nearest-rank ones") {
  check_against_exact("exponential, mean 5 s, 10^5", sample(100'000, [](Rng& r) {
                        return 5.0 * r.exponential_ziggurat();
                      }));
  check_against_exact("uniform on [1 ms, 2 ms), 10^5", sample(100'000, [](Rng& r) {
                        return 0.001 * (1.0 + r.uniform());
                      }));
  check_against_exact("lognormal, sigma 2 (heavy tail), 10^5", sample(100'000, [](Rng& r) {
                        return std::exp(2.0 * r.normal());
                      }));
  check_against_exact("three values with ties, 10^4", sample(10'000, [](Rng& r) {
                        const double u = r.uniform();
                        return u < 0.5 ? 0.25 : u < 0.9 ? 1.5 : 1000.0;
                      }));
  check_against_exact("zeros and positives, 10^4", sample(10'000, [](Rng& r) {
                        return r.uniform() < 0.3 ? 0.0 : r.exponential_ziggurat();
                      }));
  check_against_exact("one value", {3.25});
  check_against_exact("two values", {3.25, 1.0});
}

TEST_CASE("an empty sketch has NaN quantiles, and clear() forgets the values") {
  QuantileSketch sketch;
  const double ps[] = {0.0, 0.5, 1.0};
  double out[3];
  sketch.quantiles(ps, 3, out);
  for (double q : out) CHECK(std::isnan(q));
  for (int i = 1; i <= 100; ++i) sketch.add(i);
  sketch.clear();
  CHECK(sketch.count() == 0);
  sketch.add(7.0);
  sketch.quantiles(ps, 3, out);
  for (double q : out) CHECK(q == 7.0);
}

TEST_CASE("values far under the largest are counted by rank and reported as the minimum") {
  // 1e-12 s is 2^43 times under 1e1 s, beyond the window: its rank still counts.
  QuantileSketch sketch;
  for (int i = 0; i < 10; ++i) sketch.add(1e-12);
  for (int i = 0; i < 90; ++i) sketch.add(10.0 + i);
  const double ps[] = {0.05, 0.1, 0.11, 0.5, 1.0};
  double out[5];
  sketch.quantiles(ps, 5, out);
  CHECK(out[0] == 1e-12);
  CHECK(out[1] == 1e-12);
  CHECK(out[2] == doctest::Approx(10.0).epsilon(kBound));
  CHECK(out[3] == doctest::Approx(10.0 + 49 - 10).epsilon(kBound));  // rank 50: the 40th above
  CHECK(out[4] == 99.0);
}

TEST_CASE("the sketch's memory is the same after 10^6 and after 10^7 values") {
  // Its memory is fixed at the first add(): kOctaves * 2^kSubBits counters, whatever the
  // number of values (the nth_element percentiles it replaced kept every value).
  QuantileSketch sketch;
  Rng rng(3);
  for (int i = 0; i < 1'000'000; ++i) sketch.add(rng.exponential_ziggurat());
  const std::size_t after_million = sketch.memory_bytes();
  for (int i = 0; i < 9'000'000; ++i) sketch.add(1e3 * rng.exponential_ziggurat());
  std::printf("sketch memory: %zu bytes after 10^6 values, %zu after 10^7\n", after_million,
              sketch.memory_bytes());
  CHECK(sketch.count() == 10'000'000);
  CHECK(sketch.memory_bytes() == after_million);
  CHECK(after_million <= sizeof(QuantileSketch) + QuantileSketch::kBuckets * sizeof(std::uint64_t));
  CHECK(after_million < 10'000'000 * sizeof(double) / 100);  // vs the values themselves: 80 MB
}
