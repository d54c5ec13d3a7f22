// QuantileSketch: nearest-rank quantiles of a stream of non-negative values in fixed memory
// (private to capsim_core). The simulator keeps one per station and sink and clears it at
// each batch boundary, so what a percentile costs no longer grows with the run's length.
//
// Method: a log-linear histogram. A value's bucket is its IEEE-754 binary exponent and the
// first kSubBits bits of its mantissa (HdrHistogram's bucketing, G. Tene; the relative-error
// guarantee is DDSketch's, Masson, Rim & Lee, PVLDB 12(12), 2019), so each power of two is
// split into 2^kSubBits buckets of equal width, each at most 2^-kSubBits of its lower edge
// wide. The p-quantile's bucket is found exactly, by cumulative count; the estimate is the
// bucket's midpoint, clamped to the exact minimum and maximum, which are kept.
//
// Error bound. Let x be the nearest-rank p-quantile of the n values added since clear()
// (the smallest value with at least ceil(p·n) values at or below it; p = 0 gives the minimum).
//   - rank 1 (the minimum) and rank n (the maximum) are exact;
//   - otherwise |estimate - x| <= 2^-(kSubBits + 1) · x, that is 0.098 %, whenever x is at
//     least floor() (see below);
//   - below floor() only ranks are kept: the estimate is the minimum (exact for zeros).
// (Buckets of subnormal numbers, under 2.2e-308, have a fixed width instead; they lie far
// under floor() for any data this is used on.)
// The buckets cover kOctaves powers of two. The window starts kHeadroom octaves above the
// first value added and moves up (never down) whenever a larger value arrives, to kHeadroom
// octaves above it; so floor() is at most max / 2^(kOctaves - kHeadroom - 1) =
// max / 2^27 ≈ max / 1.3e8, where max is the largest value ever added.
//
// Memory: kOctaves · 2^kSubBits 64-bit counters (128 KiB) allocated on the first add(), and
// never more, however many values are added. add() is O(1): a shift, a compare and an
// increment; clear() and quantiles() walk only the buckets between the minimum and maximum.
//
// Not thread-safe; a plain value (copyable, movable).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace capsim::des::detail {

class QuantileSketch {
 public:
  static constexpr int kSubBits = 9;     // 512 buckets per power of two
  static constexpr int kOctaves = 32;    // powers of two the buckets cover
  static constexpr int kHeadroom = 4;    // octaves kept above the largest value seen
  static constexpr std::size_t kBuckets = std::size_t{kOctaves} << kSubBits;

  // Adds one value. Precondition: x >= 0 and finite (a negative or NaN x counts as 0).
  // Always inlined: the simulator calls it once per departure.
  [[gnu::always_inline]] void add(double x) {
    if (!(x > 0.0)) x = 0.0;
    ++count_;
    if (x < min_) min_ = x;
    if (x > max_) max_ = x;
    // Unsigned: a value under the window wraps to a huge index, as does every value before
    // the first add() (base_ starts far above any bucket number).
    const std::uint64_t index = (bits(x) >> kShift) - base_;
    if (index < kBuckets) {
      ++counts_[index];
    } else {
      add_outside(x);
    }
  }

  // Forgets the values (keeps the memory and the window's position).
  void clear();

  std::uint64_t count() const { return count_; }

  // The nearest-rank quantiles at the ascending probabilities ps[0..n) (each in [0, 1]) into
  // out[0..n); NaN when nothing was added. One pass over the occupied buckets.
  void quantiles(const double* ps, std::size_t n, double* out) const;

  // Bytes held, the object included: constant once the first value is added.
  std::size_t memory_bytes() const { return sizeof(*this) + counts_.capacity() * sizeof(std::uint64_t); }

 private:
  static constexpr int kShift = 52 - kSubBits;
  static std::uint64_t bits(double x) {
    std::uint64_t b;
    std::memcpy(&b, &x, sizeof b);
    return b;
  }
  static double from_bits(std::uint64_t b) {
    double x;
    std::memcpy(&x, &b, sizeof x);
    return x;
  }
  static constexpr std::uint64_t kNoWindow = std::uint64_t{1} << 62;  // above every bucket number
  void add_outside(double x);
  void move_window(std::uint64_t top_exponent);
  // The window's index of x's bucket, 0 for a value under the window. Precondition: x is
  // not above the window.
  std::size_t index_in_window(double x) const;
  double bucket_middle(std::size_t index) const;

  std::vector<std::uint64_t> counts_;  // kBuckets once the first value is added
  // The bucket number (exponent << kSubBits | first mantissa bits) of counts_[0]; the window's
  // floor is the value with that bucket number and zero mantissa bits after them.
  std::uint64_t base_ = kNoWindow;
  std::uint64_t below_ = 0;            // values under floor()
  std::uint64_t count_ = 0;
  double min_ = std::numeric_limits<double>::max(), max_ = 0.0;
};

}  // namespace capsim::des::detail
