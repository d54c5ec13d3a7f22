// Batch-means statistics used by the simulator (private to capsim_core).
#pragma once

#include <vector>

#include "capsim/core/des/metrics.hpp"

namespace capsim::des::detail {

// The 0.975 quantile of Student's t with `dof` degrees of freedom (>= 1): exact table to
// 30, then the Cornish-Fisher expansion (Abramowitz & Stegun 26.7.5), within 1e-4.
double student_t_975(int dof);

// mean ± t · s / sqrt(n) over the finite values; NaN bounds when fewer than two.
Interval batch_means_interval(const std::vector<double>& batch_values);

}  // namespace capsim::des::detail
