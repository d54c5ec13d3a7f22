// What a calibration profile says a GPU model delivers, reduced to the figures the models
// use. Filled by the store from the newest imported profile (calibration.hpp) and carried
// in GpuSpec::measured; plain value, thread-safe to share once built.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "capsim/core/units.hpp"

namespace capsim::hardware {

// Achieved GEMM throughput by shape, fitted to the functional form of the performance
// model (models/performance.hpp):
//   achieved(m, n, k) = ceiling * prod_{d in m, n, k} d / (d + half_saturation_dim)
// by least squares on the logarithms of the measured points (fit_gemm_curve).
struct GemmCurve {
  FlopsPerSecond ceiling;          // what an infinitely large GEMM would reach
  double half_saturation_dim = 0;  // GEMM dimension that alone halves the throughput
  int points = 0;                  // measurements the fit used
  double rms_relative_error = 0;   // root mean square of (fit / measured - 1)
};

struct MeasuredFigures {
  std::string device_name;  // as the driver reports it: "NVIDIA H100 80GB HBM3"
  std::string measured_at;  // UTC ISO 8601
  bool synthetic = false;   // invented numbers for tests, never a real measurement
  // Highest median GEMM throughput measured, by precision ("bf16").
  std::map<std::string, FlopsPerSecond, std::less<>> gemm_best;
  // Fitted efficiency curves, by precision; only where >= 3 shapes were measured and the
  // fit is well-posed.
  std::map<std::string, GemmCurve, std::less<>> gemm_curve;
  std::optional<BytesPerSecond> memory_bandwidth;   // triad at the largest working set
  std::optional<BytesPerSecond> memory_copy_bandwidth;
  std::optional<BytesPerSecond> h2d_pinned, d2h_pinned, h2d_pageable, d2h_pageable;  // largest size
  std::optional<BytesPerSecond> p2p_bandwidth;      // per direction, slowest GPU pair, largest size
  std::optional<Seconds> p2p_latency;               // 4-byte copy, slowest pair
  std::optional<BytesPerSecond> allreduce_bus_bandwidth;  // NCCL bus bandwidth, largest size
  std::optional<BytesPerSecond> allgather_bus_bandwidth;
  int collective_ranks = 0;                         // GPUs in those collectives
  std::optional<Seconds> launch_latency;            // queued launches

  // "calibrated (NVIDIA H100 80GB HBM3, measured 2025-06-01T12:00:00Z)", with
  // ", synthetic" for test profiles.
  std::string describe() const;
};

}  // namespace capsim::hardware
