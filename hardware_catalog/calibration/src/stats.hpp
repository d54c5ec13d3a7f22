// Order statistics of repeated timed runs: median, extremes and quartiles.
//
// Plain C++ (no CUDA) so that it is unit-tested on machines without a GPU. Pure functions,
// thread-safe.
#pragma once

#include <optional>
#include <vector>

namespace capsim::calibration {

struct Summary {
  double median = 0;
  double min = 0;
  double max = 0;
  double q1 = 0;  // first quartile (25th percentile)
  double q3 = 0;  // third quartile (75th percentile)
  int count = 0;
};

// Percentile p in [0, 1] of sorted samples, linear interpolation between closest ranks
// (Hyndman & Fan 1996, definition 7 — what numpy.percentile and R's default use).
// Precondition: `sorted` is non-empty and ascending.
double percentile_of_sorted(const std::vector<double>& sorted, double p);

// Summary of the samples; nullopt when there are none or any is NaN or infinite (a broken
// timer must not turn into a plausible-looking number).
std::optional<Summary> summarize(std::vector<double> samples);

// Each timed sample is converted to a rate (work / seconds) before summarizing, so the
// median rate is the rate of the median run and min/max rates come from the slowest and
// fastest runs. nullopt when `work` or any time is not finite and positive.
std::optional<Summary> summarize_rates(double work, const std::vector<double>& seconds);

}  // namespace capsim::calibration
