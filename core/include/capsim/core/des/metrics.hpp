// What a simulation measured, with 95 % confidence intervals.
//
// Method: the run is warm-up [0, warmup) followed by `batches` equal batches of the
// measurement window; the warm-up is deleted. Each metric is computed per batch and the
// interval is mean ± t(0.975, batches-1) · s / sqrt(batches) over the batch values (the
// method of batch means; Law, "Simulation Modeling and Analysis", 5th ed., §9.5.3).
// Percentiles are computed per batch (nearest rank) and their intervals come from those
// per-batch percentiles, so `mean` of a percentile is the mean of the batch percentiles.
// Each batch's percentile comes from a fixed-memory sketch, within 0.1 % of the exact
// nearest-rank value (core/src/des/quantile_sketch.hpp states the bound); the minimum and
// maximum (latency_cdf's fractions 0 and 1) are exact.
// A metric with fewer than two batch values (e.g. nothing departed) has NaN bounds.
//
// Definitions (time averages are over the measurement window):
//   utilization       time-average busy servers / c (a server is busy while processing; a
//                     server holding finished items for a full queue is blocked, not busy)
//   queue_length      time-average items waiting (not in service): Lq
//   in_station        time-average items at the station: waiting + in service + blocked: L
//   waiting_time      mean time from arrival at the station to the start of service: Wq
//   sojourn           time from arrival at the station until the item leaves it (mean W,
//                     p50/p95/p99), counted in the batch in which it leaves
//   throughput        items leaving per second
//   blocked_fraction  time-average blocked servers / c
//   starved_fraction  fraction of time with every server idle (none busy, none blocked)
// Conveyors: utilization = fraction of time the bandwidth is in use (at least one item in
// its bandwidth phase); in_transit = time-average items in it; throughput = items delivered
// per second. Sinks: throughput and end-to-end latency (from the item's creation at its
// source, or its latest re-entry for a closed source).
//
// Plain values; no thread-safety concerns.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "capsim/core/units.hpp"

namespace capsim::des {

struct Interval {
  double mean = 0.0;
  double low = 0.0;   // 95 % confidence bounds
  double high = 0.0;
  bool contains(double x) const { return low <= x && x <= high; }
};

struct Percentiles {
  Interval p50, p95, p99;  // seconds
};

struct StationMetrics {
  std::string name;
  Interval utilization;
  Interval queue_length;
  Interval in_station;
  Interval waiting_time;      // seconds
  Interval sojourn_time;      // seconds (mean)
  Percentiles sojourn;
  Interval throughput;        // items per second
  Interval blocked_fraction;
  Interval starved_fraction;
};

struct ConveyorMetrics {
  std::string name;
  Interval utilization;
  Interval in_transit;
  Interval throughput;        // items per second
};

struct SinkMetrics {
  std::string name;
  Interval throughput;        // items per second
  Interval latency;           // seconds (mean end-to-end)
  Percentiles latency_percentiles;
};

struct SimulationResult {
  std::vector<StationMetrics> stations;    // in the order they were added
  std::vector<ConveyorMetrics> conveyors;  // in the order of their connect()
  std::vector<SinkMetrics> sinks;          // in the order they were added
  Interval throughput;                     // all sinks together, items per second
  Interval latency;                        // all sinks together, seconds (mean)
  Percentiles latency_percentiles;         // all sinks together
  // The end-to-end latency distribution, all sinks together: (seconds, fraction of requests
  // at or below it) at 21 evenly spaced fractions 0, 0.05, ..., 1, each the mean over the
  // batches of that batch's nearest-rank quantile. Empty when nothing reached a sink.
  std::vector<std::pair<double, double>> latency_cdf;

  // The constraint: among stations and conveyors, the most utilized one that is busy at
  // least 95 % of the time or, when none is, the most utilized one.
  std::string constraint;
  double constraint_utilization = 0.0;
  // How much more throughput elevating the constraint gives before the next constraint
  // binds, as a fraction (0.25 = +25 %). Each resource i can carry throughput_i /
  // utilization_i; if all flows scale together the next most utilized resource (utilization
  // u2) saturates when throughput grows by 1/u2 - 1. Empty when no other resource is used.
  std::optional<double> elevation_gain;
  std::string next_constraint;

  std::uint64_t events = 0;                // events processed
  Seconds simulated_time{0.0};             // clock at the end
  Seconds batch_length{0.0};
  int batches = 0;                         // batches completed and used
};

}  // namespace capsim::des
