#include "stats.hpp"

#include <algorithm>
#include <cmath>

namespace capsim::calibration {

double percentile_of_sorted(const std::vector<double>& sorted, double p) {
  const double rank = p * static_cast<double>(sorted.size() - 1);
  const auto lower = static_cast<std::size_t>(std::floor(rank));
  const std::size_t upper = std::min(lower + 1, sorted.size() - 1);
  const double fraction = rank - static_cast<double>(lower);
  return sorted[lower] + fraction * (sorted[upper] - sorted[lower]);
}

std::optional<Summary> summarize(std::vector<double> samples) {
  if (samples.empty()) return std::nullopt;
  for (double s : samples)
    if (!std::isfinite(s)) return std::nullopt;
  std::sort(samples.begin(), samples.end());
  Summary out;
  out.count = static_cast<int>(samples.size());
  out.min = samples.front();
  out.max = samples.back();
  out.median = percentile_of_sorted(samples, 0.5);
  out.q1 = percentile_of_sorted(samples, 0.25);
  out.q3 = percentile_of_sorted(samples, 0.75);
  return out;
}

std::optional<Summary> summarize_rates(double work, const std::vector<double>& seconds) {
  if (!std::isfinite(work) || !(work > 0)) return std::nullopt;
  std::vector<double> rates;
  rates.reserve(seconds.size());
  for (double s : seconds) {
    if (!std::isfinite(s) || !(s > 0)) return std::nullopt;
    rates.push_back(work / s);
  }
  return summarize(std::move(rates));
}

}  // namespace capsim::calibration
