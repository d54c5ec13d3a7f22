// Shared pieces of the capsim-calibrate benchmarks: options, CUDA error checks, and the
// timing loop (warm-up, then repeated samples between CUDA events).
//
// Every benchmark appends Measurements to a vector and reports problems on stderr; a
// benchmark that cannot run (unsupported precision, no peer access, out of memory) is
// skipped with a note, never aborting the whole calibration.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "profile_json.hpp"

namespace capsim::calibration {

struct Options {
  int device = 0;
  int warmup = 5;                 // untimed runs before sampling
  int repeats = 20;               // timed samples per measurement
  double min_sample_seconds = 1e-3;  // each sample repeats the operation until it lasts this long
  // GEMMs run back to back this long before their samples, so that they are timed at the
  // clock the power limit holds under sustained tensor work, not the boost clock a cold GPU
  // starts at (an H100 at 700 W: 1,980 MHz for the first ~0.1 s, then 1,350-1,450 MHz, and a
  // bf16 8192^3 GEMM 12 % slower). 0 times them cold, as a burst.
  double sustain_seconds = 1.0;
  bool quick = false;             // fewer shapes and sizes (a smoke test, minutes -> seconds)
  std::vector<std::string> skip;  // groups: gemm, memory, transfer, p2p, nccl, launch
  std::string output = "calibration.json";
  bool skipped(const std::string& group) const;
};

class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws CudaError naming `what` when `status` is not cudaSuccess.
void check(cudaError_t status, const std::string& what);

// Seconds per run of `op` (which enqueues one run on `stream`): `warmup` runs, then one
// probe to choose `inner` (runs per sample, so a sample lasts >= min_sample_seconds and
// the event resolution of ~0.5 us does not dominate), then `repeats` samples of `inner`
// back-to-back runs between two events; each sample is divided by `inner`.
// Warm-up runs, then (sustain_seconds > 0) the operation back to back for that long, then
// o.repeats samples of at least o.min_sample_seconds each; seconds per operation.
std::vector<double> time_runs(cudaStream_t stream, const std::function<void()>& op, const Options& o,
                              double sustain_seconds = 0.0);

// Appends a measurement built from per-run seconds: rates work/seconds in `unit`, or the
// seconds themselves when unit is "s". Non-finite or empty samples are dropped with a note.
void add_measurement(std::vector<Measurement>& out, Measurement m, double work, const std::vector<double>& seconds);

// Benchmarks (each in its own file). They set Measurement's strings as
// `m.kind = std::string("triad")`, not from a bare literal: GCC 12 at -O3 reports a false
// -Wrestrict on std::string::operator=(const char*) there (GCC bug 105329).
void run_gemm(const Options& o, const cudaDeviceProp& prop, std::vector<Measurement>& out);
void run_memory(const Options& o, const cudaDeviceProp& prop, std::vector<Measurement>& out);
void run_host_transfers(const Options& o, std::vector<Measurement>& out);
void run_peer_to_peer(const Options& o, int gpu_count, std::vector<Measurement>& out);
void run_launch_latency(const Options& o, std::vector<Measurement>& out);
// Defined in nccl.cpp when NCCL was found, otherwise in no_nccl.cpp (says it was skipped).
void run_nccl(const Options& o, int gpu_count, std::vector<Measurement>& out);

// Kernels (kernels.cu).
void launch_copy(double* dst, const double* src, std::size_t n, cudaStream_t stream);
void launch_triad(double* a, const double* b, const double* c, double scalar, std::size_t n, cudaStream_t stream);
void launch_fill(double* a, double value, std::size_t n, cudaStream_t stream);
void launch_empty(cudaStream_t stream);
// Element types of GEMM operands, filled with pseudo-random values in [-1, 1) (integers
// in [-100, 100)).
enum class ElementType { f32, f16, bf16, e4m3, i8, i32 };
void launch_fill_elements(void* p, std::size_t n, ElementType type, cudaStream_t stream);

}  // namespace capsim::calibration
