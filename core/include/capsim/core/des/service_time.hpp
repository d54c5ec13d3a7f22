// ServiceTime: how long a station's server takes to process one batch.
//
// Four kinds:
//   deterministic(mean)      every batch takes `mean`;
//   exponential(mean)        exponentially distributed with that mean;
//   lognormal(mean, cv)      lognormal with that mean and coefficient of variation;
//   empirical(table)         measured rows "batch size -> time": linear interpolation between
//                            rows, linear extrapolation past the last row (with the slope of
//                            the last two rows; a one-row table is constant), and the first
//                            row's time below the first row. Deterministic given the batch.
// For the first three kinds the time is per batch: a batch of k items takes the same time
// as a batch of one (an inference server's batched forward pass). Use an empirical table to
// make time grow with the batch size.
//
// Ownership and thread-safety: a plain immutable value after construction; sample() only
// touches the caller's Rng, so one ServiceTime may be shared by simulations in many threads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "capsim/core/des/random.hpp"
#include "capsim/core/units.hpp"

namespace capsim::des {

class ServiceTime {
 public:
  enum class Kind : std::uint8_t { deterministic, exponential, lognormal, empirical };
  struct Row {
    int batch = 1;          // batch size, >= 1, rows strictly increasing
    Seconds time{0.0};      // time to process a batch of that size, > 0
  };

  // The default is deterministic(0 s), which check() rejects: set one of the kinds.
  ServiceTime() = default;
  static ServiceTime deterministic(Seconds mean);
  static ServiceTime exponential(Seconds mean);
  static ServiceTime lognormal(Seconds mean, double cv);
  static ServiceTime empirical(std::vector<Row> table);

  Kind kind() const { return kind_; }

  // Expected time of a batch of `batch` items (>= 1).
  Seconds mean(int batch) const;
  // One draw for a batch of `batch` items (>= 1). Precondition: check() is empty.
  // Always inlined: the simulator calls it for every service.
  [[gnu::always_inline]] Seconds sample(int batch, Rng& rng) const {
    switch (kind_) {
      case Kind::deterministic: return Seconds(mean_);
      case Kind::exponential: return Seconds(mean_ * rng.exponential_ziggurat());
      case Kind::lognormal: return Seconds(std::exp(mu_ + sigma_ * rng.normal()));
      case Kind::empirical: break;
    }
    return mean(batch);
  }

  // Empty when the parameters are usable; otherwise what is wrong, e.g.
  // "service time mean must be > 0 s (got 0 s)".
  std::string check() const;

 private:
  Kind kind_ = Kind::deterministic;
  double mean_ = 0.0;    // seconds
  double cv_ = 0.0;      // lognormal only
  double mu_ = 0.0;      // lognormal: parameters of the underlying normal
  double sigma_ = 0.0;
  std::vector<Row> table_;
};

}  // namespace capsim::des
