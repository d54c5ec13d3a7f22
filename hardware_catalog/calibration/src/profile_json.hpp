// The calibration profile capsim-calibrate writes, written with nlohmann-json (header-only,
// Debian nlohmann-json3-dev: the one thing besides the CUDA toolkit a GPU node needs to build
// the tool).
//
// Schema "capsim-calibration/1" (the importer, hardware/calibration.hpp, checks it):
//   {"schema": "capsim-calibration/1", "synthetic": bool (optional, default false),
//    "device": {"name", "memory_bytes", "sm_count", "clock_mhz", "memory_clock_mhz",
//               "bus_width_bits", "compute_capability" ("9.0"), "l2_cache_bytes"?},
//    "gpu_count", "driver_version", "cuda_runtime_version", "measured_at" (UTC ISO 8601),
//    "host": {string: string} (optional),
//    "measurements": [{"kind", parameters..., "median", "min", "max", "q1", "q3", "unit",
//                      "repeats"}]}
// Kinds and their parameters:
//   gemm (precision, m, n, k; FLOP/s — integer GEMMs count 2mnk operations too),
//   memory_copy and triad (bytes = bytes read + written per kernel = working set; B/s),
//   h2d and d2h (bytes, pinned; B/s), p2p (src, dst, bytes; B/s, or s for the latency
//   measurement, which has bytes = 4), allreduce and allgather (ranks, bytes; B/s of NCCL
//   "bus bandwidth"), launch_latency (mode: "queued" | "round_trip"; s).
// No UUID or serial number is written: a profile identifies a model of GPU, not a board.
//
// Plain C++ (no CUDA); pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "stats.hpp"

namespace capsim::calibration {

inline constexpr std::string_view kSchema = "capsim-calibration/1";

struct DeviceInfo {
  std::string name;              // cudaDeviceProp::name, e.g. "NVIDIA H100 80GB HBM3"
  std::uint64_t memory_bytes = 0;
  int sm_count = 0;
  int clock_mhz = 0;             // peak SM clock
  int memory_clock_mhz = 0;      // peak memory clock
  int bus_width_bits = 0;
  std::string compute_capability;  // "major.minor"
  std::uint64_t l2_cache_bytes = 0;  // 0: unknown, not written
};

struct Measurement {
  std::string kind;  // gemm, memory_copy, triad, h2d, d2h, p2p, allreduce, allgather, launch_latency
  std::string precision;            // gemm only
  std::optional<std::int64_t> m, n, k;  // gemm only
  std::optional<std::int64_t> bytes;
  std::optional<bool> pinned;       // h2d, d2h
  std::optional<int> src, dst;      // p2p device ordinals
  std::optional<int> ranks;         // allreduce, allgather
  std::string mode;                 // launch_latency
  Summary stats;
  std::string unit;                 // "FLOP/s", "B/s" or "s"
};

struct Profile {
  DeviceInfo device;
  int gpu_count = 1;
  std::string driver_version;        // "13.0"
  std::string cuda_runtime_version;  // "13.0"
  std::string measured_at;           // "2025-06-01T12:00:00Z"
  std::vector<std::pair<std::string, std::string>> host;  // optional facts about the host
  bool synthetic = false;            // invented numbers (tests only); never set by the tool
  std::vector<Measurement> measurements;
};

// "YYYY-MM-DDTHH:MM:SSZ" in UTC.
std::string utc_iso8601(std::time_t t);

// "major.minor" of a CUDA version integer (12040 -> "12.4").
std::string cuda_version_text(int version);

// True when every statistic is finite and positive and the unit is set: only such
// measurements are written (write_profile drops the others and counts them).
bool is_writable(const Measurement& m);

// The whole profile as JSON (nlohmann-json's 2-space indent, keys in the order above, numbers
// as the shortest text that reads back as the same double), ending with a newline. Measurements
// that are not writable are left out, so no NaN or infinity reaches the file; `dropped`
// (optional) receives how many. Bytes that are not UTF-8 in a string are written as U+FFFD.
std::string write_profile(const Profile& profile, int* dropped = nullptr);

}  // namespace capsim::calibration
