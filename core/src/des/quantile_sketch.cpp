#include "quantile_sketch.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace capsim::des::detail {

namespace {
constexpr std::uint64_t kLargestFiniteExponent = 2046;
}  // namespace

// Values above the window (and the very first value) move it up; values under it are
// counted in below_.
void QuantileSketch::add_outside(double x) {
  const std::uint64_t bucket = bits(x) >> kShift;
  if (base_ != kNoWindow && bucket < base_) {
    ++below_;
    return;
  }
  if (counts_.empty()) counts_.assign(kBuckets, 0);
  move_window(std::min((bits(x) >> 52) + kHeadroom, kLargestFiniteExponent));
  ++counts_[bucket - base_];
}

// Places the window's top octave at `top_exponent` (a biased IEEE exponent); the buckets
// that fall out of the bottom add their counts to below_.
void QuantileSketch::move_window(std::uint64_t top_exponent) {
  const std::uint64_t lowest = top_exponent >= kOctaves - 1 ? top_exponent - (kOctaves - 1) : 0;
  const std::uint64_t new_base = lowest << kSubBits;
  if (base_ != kNoWindow && new_base > base_) {
    const std::size_t shift = static_cast<std::size_t>(std::min<std::uint64_t>(new_base - base_, kBuckets));
    for (std::size_t i = 0; i < shift; ++i) below_ += counts_[i];
    std::copy(counts_.begin() + static_cast<std::ptrdiff_t>(shift), counts_.end(), counts_.begin());
    std::fill(counts_.end() - static_cast<std::ptrdiff_t>(shift), counts_.end(), 0);
  }
  base_ = new_base;
}

std::size_t QuantileSketch::index_in_window(double x) const {
  const std::uint64_t bucket = bits(x) >> kShift;
  return bucket < base_ ? 0 : static_cast<std::size_t>(bucket - base_);
}

double QuantileSketch::bucket_middle(std::size_t index) const {
  const std::uint64_t bucket = base_ + index;
  return 0.5 * (from_bits(bucket << kShift) + from_bits((bucket + 1) << kShift));
}

void QuantileSketch::clear() {
  if (count_ == 0) return;
  const std::size_t lo = index_in_window(min_), hi = index_in_window(max_);
  std::fill(counts_.begin() + static_cast<std::ptrdiff_t>(lo),
            counts_.begin() + static_cast<std::ptrdiff_t>(hi) + 1, 0);
  below_ = 0;
  count_ = 0;
  min_ = std::numeric_limits<double>::max();
  max_ = 0.0;
}

void QuantileSketch::quantiles(const double* ps, std::size_t n, double* out) const {
  if (count_ == 0) {
    std::fill(out, out + n, std::numeric_limits<double>::quiet_NaN());
    return;
  }
  // Walk the buckets from the minimum's up; ps ascend, so each search goes on from where
  // the previous one stopped. `seen` counts the values in buckets before `index`.
  std::size_t index = index_in_window(min_);
  std::uint64_t seen = below_;
  for (std::size_t i = 0; i < n; ++i) {
    // Nearest rank: the smallest value with at least p·n values at or below it.
    std::uint64_t rank = static_cast<std::uint64_t>(std::ceil(ps[i] * static_cast<double>(count_)));
    rank = std::clamp<std::uint64_t>(rank, 1, count_);
    if (rank == 1 || rank <= below_) {
      out[i] = min_;
    } else if (rank == count_) {
      out[i] = max_;
    } else {
      while (seen + counts_[index] < rank) seen += counts_[index++];
      out[i] = std::clamp(bucket_middle(index), min_, max_);
    }
  }
}

}  // namespace capsim::des::detail
