// The exponential ziggurat (issue 52) against the exponential distribution: moments,
// quantiles and the Kolmogorov-Smirnov distance over 10^6 draws of one seed, each bound a
// fixed number of standard errors of that sample size, so a correct sampler passes and a
// wrong table (a shifted region, a lost tail) does not.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "capsim/core/des/random.hpp"

using capsim::des::Rng;

namespace {

std::vector<double> draws(std::uint64_t seed, std::size_t n) {
  Rng rng(seed);
  std::vector<double> x(n);
  for (double& v : x) v = rng.exponential_ziggurat();
  return x;
}

}  // namespace

TEST_CASE("the ziggurat's exponential has mean 1, variance 1 and the exponential's quantiles") {
  constexpr std::size_t n = 1'000'000;
  std::vector<double> x = draws(2024, n);
  double sum = 0.0, squares = 0.0;
  for (double v : x) {
    CHECK_MESSAGE(v >= 0.0, v);
    sum += v;
  }
  const double mean = sum / n;
  for (double v : x) squares += (v - mean) * (v - mean);
  const double variance = squares / (n - 1);
  // Exp(1): mean 1, standard error 1/sqrt(n) = 0.001; the sample variance's standard error
  // is sqrt((mu4 - sigma^4) / n) = sqrt(8 / n) = 0.0028 (mu4 = 9). Four standard errors each.
  std::printf("ziggurat: mean %.5f, variance %.5f over %zu draws\n", mean, variance, n);
  CHECK(std::abs(mean - 1.0) < 4 * 0.001);
  CHECK(std::abs(variance - 1.0) < 4 * 0.0028);
  // The fraction at or below the p-quantile -ln(1 - p) is p within 4 sqrt(p (1 - p) / n).
  // 0.9995 lies past r = 7.697, where the base region hands over to the tail.
  std::sort(x.begin(), x.end());
  for (double p : {0.05, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 0.9995, 0.99995}) {
    const double q = -std::log1p(-p);
    const double below = static_cast<double>(std::upper_bound(x.begin(), x.end(), q) - x.begin()) / n;
    const double tolerance = 4 * std::sqrt(p * (1 - p) / n);
    CHECK_MESSAGE(std::abs(below - p) < tolerance, "p = " << p << ": fraction " << below);
  }
  // Kolmogorov-Smirnov: sup |F_n - F| under 1.63 / sqrt(n), the 1 % critical value.
  double distance = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double f = -std::expm1(-x[i]);
    distance = std::max({distance, std::abs(f - static_cast<double>(i) / n),
                         std::abs(static_cast<double>(i + 1) / n - f)});
  }
  std::printf("ziggurat: Kolmogorov-Smirnov distance %.6f (1 %% critical value %.6f)\n", distance,
              1.63 / std::sqrt(static_cast<double>(n)));
  CHECK(distance < 1.63 / std::sqrt(static_cast<double>(n)));
}

TEST_CASE("the ziggurat is deterministic for a seed") {
  const std::vector<double> a = draws(7, 1000), b = draws(7, 1000), c = draws(8, 1000);
  CHECK(a == b);
  CHECK(a != c);
  // The stream is pinned: a change of the tables or the algorithm moves every simulation.
  double sum = 0.0;
  for (double v : a) sum += v;
  CHECK(sum == doctest::Approx(1008.7887682626742).epsilon(1e-14));
}
