#include "statistics.hpp"

#include <boost/math/distributions/students_t.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace capsim::des::detail {

// The two-sided 95 % quantile of Student's t with `dof` degrees of freedom, from Boost.Math
// (it replaces a hand-typed table to 30 and a series beyond).
double student_t_975(int dof) {
  if (dof < 1) return std::numeric_limits<double>::quiet_NaN();
  return boost::math::quantile(boost::math::students_t_distribution<double>(dof), 0.975);
}

Interval batch_means_interval(const std::vector<double>& batch_values) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  double sum = 0.0;
  int n = 0;
  for (double x : batch_values) {
    if (std::isfinite(x)) {
      sum += x;
      ++n;
    }
  }
  if (n == 0) return {nan, nan, nan};
  const double mean = sum / n;
  if (n < 2) return {mean, nan, nan};
  double squares = 0.0;
  for (double x : batch_values)
    if (std::isfinite(x)) squares += (x - mean) * (x - mean);
  const double half = student_t_975(n - 1) * std::sqrt(squares / (n - 1) / n);
  return {mean, mean - half, mean + half};
}

std::vector<double> quantiles(std::vector<double>& samples, const std::vector<double>& ps) {
  std::vector<double> out(ps.size(), std::numeric_limits<double>::quiet_NaN());
  const std::size_t n = samples.size();
  if (n == 0) return out;
  auto lo = samples.begin();
  for (std::size_t i = 0; i < ps.size(); ++i) {
    // Nearest rank, as percentiles_50_95_99; ps ascending, so each search starts where the
    // previous one ended.
    std::size_t rank = static_cast<std::size_t>(std::ceil(ps[i] * static_cast<double>(n)));
    rank = std::clamp<std::size_t>(rank, 1, n);
    const auto nth = samples.begin() + static_cast<std::ptrdiff_t>(rank - 1);
    if (nth >= lo) std::nth_element(lo, nth, samples.end());
    out[i] = *nth;
    lo = nth;
  }
  return out;
}

std::array<double, 3> percentiles_50_95_99(std::vector<double>& samples) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::array<double, 3> out{nan, nan, nan};
  const std::size_t n = samples.size();
  if (n == 0) return out;
  static constexpr double ps[] = {0.50, 0.95, 0.99};
  auto lo = samples.begin();
  for (int i = 0; i < 3; ++i) {
    // Nearest rank: the smallest value with at least p·n values at or below it.
    std::size_t rank = static_cast<std::size_t>(std::ceil(ps[i] * static_cast<double>(n)));
    if (rank < 1) rank = 1;
    const auto nth = samples.begin() + static_cast<std::ptrdiff_t>(rank - 1);
    if (nth >= lo) std::nth_element(lo, nth, samples.end());
    out[i] = *nth;
    lo = nth;  // later ranks lie at or after this one
  }
  return out;
}

}  // namespace capsim::des::detail
