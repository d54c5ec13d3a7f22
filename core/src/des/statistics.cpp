#include "statistics.hpp"

#include <boost/math/distributions/students_t.hpp>

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

}  // namespace capsim::des::detail
