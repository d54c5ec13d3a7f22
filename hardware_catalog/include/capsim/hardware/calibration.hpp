// Calibration profiles written by capsim-calibrate (hardware_catalog/calibration): parsing
// and validation, matching the measured device to a catalog GPU, and reducing the
// measurements to the figures the models use (MeasuredFigures, measured.hpp).
//
// The profile format is documented in hardware_catalog/calibration/src/profile_json.hpp
// (schema "capsim-calibration/1"). Errors are values: every problem in a profile comes back
// at once, each naming its JSON path ("measurements[3].median"). Pure functions,
// thread-safe.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "capsim/core/result.hpp"
#include "capsim/hardware/catalog.hpp"
#include "capsim/hardware/measured.hpp"

namespace capsim::hardware {

inline constexpr std::string_view kCalibrationSchema = "capsim-calibration/1";

struct CalibrationDevice {
  std::string name;          // "NVIDIA H100 80GB HBM3"
  double memory_bytes = 0;   // as the driver reports it (GiB-ish: 85.0e9 for an "80 GB" H100)
  int sm_count = 0;
  int clock_mhz = 0;
  int memory_clock_mhz = 0;
  int bus_width_bits = 0;
  std::string compute_capability;  // "9.0"
};

// One measurement; the parameters that do not apply to its kind are 0 / empty / nullopt.
struct CalibrationMeasurement {
  std::string kind;       // gemm memory_copy triad h2d d2h p2p allreduce allgather launch_latency
  std::string precision;  // gemm
  double m = 0, n = 0, k = 0;  // gemm
  double bytes = 0;
  std::optional<bool> pinned;     // h2d, d2h
  int src = -1, dst = -1;         // p2p
  int ranks = 0;                  // allreduce, allgather
  std::string mode;               // launch_latency
  double median = 0, min = 0, max = 0;
  std::string unit;               // "FLOP/s", "B/s", "s"
  int repeats = 0;
};

struct CalibrationProfile {
  bool synthetic = false;
  CalibrationDevice device;
  int gpu_count = 1;
  std::string driver_version;
  std::string cuda_runtime_version;
  std::string measured_at;  // "2025-06-01T12:00:00Z"
  std::vector<CalibrationMeasurement> measurements;
};

// Parses and validates a profile. `file` only labels the diagnostics. Errors: not JSON
// (with line and column), wrong schema, missing or mistyped fields, unknown keys, numbers
// that are not finite and positive, min <= median <= max violated, unknown kinds,
// precisions or units, missing per-kind parameters. Never throws.
Result<CalibrationProfile> parse_calibration_profile(std::string_view json_text, const std::string& file = "");
// Reads the file and parses it; an error if it cannot be read.
Result<CalibrationProfile> read_calibration_profile(const std::filesystem::path& path);

// The catalog GPU a measured device is, from its driver-reported name and memory:
// a table of known name patterns (e.g. "H100" + "PCIe" -> h100-pcie-80gb, "H100" ->
// h100-sxm-80gb, "A100" + 80 GB -> a100-sxm-80gb), then an exact (normalized) match of
// the catalog `name`; the candidate's catalog memory must be within -5 % / +12 % of the
// reported memory (drivers report GiB-ish totals a little above the decimal GB of the
// datasheet). Error: names the device and its memory and lists the closest catalog GPUs,
// with the hint to pass --gpu.
Result<std::string> match_calibration_gpu(const Catalog& catalog, const CalibrationDevice& device);

// One measured GEMM: dimensions and achieved FLOP/s.
struct GemmPoint {
  double m = 0, n = 0, k = 0;
  double flops_per_second = 0;
};

// Least-squares fit (Gauss-Newton on the logarithms, Eigen) of
//   flops(m, n, k) = ceiling * prod_d d / (d + half_saturation_dim)
// — the performance model's GEMM efficiency curve. nullopt with fewer than 3 points, when
// the shapes cannot separate the two parameters (all the same), or when the fit lands
// outside 1e-3 <= half_saturation_dim <= 1e6.
std::optional<GemmCurve> fit_gemm_curve(const std::vector<GemmPoint>& points);

// A GEMM whose FLOPs, at its precision's best measured rate, take fewer queued kernel-launch
// latencies than this is timing its launch and minimum duration, not the tensor cores
// (shapes_the_curve).
inline constexpr double kLaunchBoundLatencies = 4.0;

// Whether a measured GEMM is fitted into the efficiency curve: not launch-bound at `f`'s
// launch latency and best rate, not memory-bound at its triad bandwidth (calibration.cpp).
bool shapes_the_curve(const CalibrationMeasurement& m, const MeasuredFigures& f);

// The figures the models use, from a valid profile: best GEMM per precision, and the curve
// fitted to the GEMMs that shape it (shapes_the_curve); triad bandwidth at the largest working set; host transfers at the largest
// size; the slowest GPU pair's p2p bandwidth (largest size) and latency; NCCL bus
// bandwidths at the largest size; queued launch latency.
MeasuredFigures measured_figures(const CalibrationProfile& profile);

}  // namespace capsim::hardware
