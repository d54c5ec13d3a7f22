#include "statistics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace capsim::des::detail {

double student_t_975(int dof) {
  static constexpr double table[] = {12.706205, 4.302653, 3.182446, 2.776445, 2.570582,
                                     2.446912,  2.364624, 2.306004, 2.262157, 2.228139,
                                     2.200985,  2.178813, 2.160369, 2.144787, 2.131450,
                                     2.119905,  2.109816, 2.100922, 2.093024, 2.085963,
                                     2.079614,  2.073873, 2.068658, 2.063899, 2.059539,
                                     2.055529,  2.051831, 2.048407, 2.045230, 2.042272};
  if (dof < 1) return std::numeric_limits<double>::quiet_NaN();
  if (dof <= 30) return table[dof - 1];
  const double z = 1.959963985, v = dof, z2 = z * z;
  return z + (z2 * z + z) / (4 * v) + (5 * z2 * z2 * z + 16 * z2 * z + 3 * z) / (96 * v * v) +
         (3 * z2 * z2 * z2 * z + 19 * z2 * z2 * z + 17 * z2 * z - 15 * z) / (384 * v * v * v);
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
