#include <chrono>
#include "bench.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace capsim::calibration {

bool Options::skipped(const std::string& group) const {
  return std::find(skip.begin(), skip.end(), group) != skip.end();
}

void check(cudaError_t status, const std::string& what) {
  if (status != cudaSuccess) throw CudaError(what + ": " + cudaGetErrorString(status));
}

namespace {

// Events that destroy themselves.
struct EventPair {
  cudaEvent_t start = nullptr, stop = nullptr;
  EventPair() {
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&stop), "cudaEventCreate");
  }
  ~EventPair() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
};

double timed(cudaStream_t stream, const std::function<void()>& op, int inner, EventPair& e) {
  check(cudaEventRecord(e.start, stream), "cudaEventRecord");
  for (int i = 0; i < inner; ++i) op();
  check(cudaGetLastError(), "launch");
  check(cudaEventRecord(e.stop, stream), "cudaEventRecord");
  check(cudaEventSynchronize(e.stop), "cudaEventSynchronize");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, e.start, e.stop), "cudaEventElapsedTime");
  return ms * 1e-3;
}

}  // namespace

std::vector<double> time_runs(cudaStream_t stream, const std::function<void()>& op, const Options& o,
                              double sustain_seconds) {
  EventPair events;
  for (int i = 0; i < o.warmup; ++i) op();
  check(cudaGetLastError(), "warm-up launch");
  check(cudaStreamSynchronize(stream), "warm-up");
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < sustain_seconds) {
    for (int i = 0; i < 16; ++i) op();
    check(cudaStreamSynchronize(stream), "sustained run");
  }
  const double probe = timed(stream, op, 1, events);
  int inner = 1;
  if (probe > 0 && probe < o.min_sample_seconds)
    inner = static_cast<int>(std::min(10000.0, std::ceil(o.min_sample_seconds / probe)));
  std::vector<double> seconds;
  seconds.reserve(static_cast<std::size_t>(o.repeats));
  for (int r = 0; r < o.repeats; ++r) seconds.push_back(timed(stream, op, inner, events) / inner);
  return seconds;
}

void add_measurement(std::vector<Measurement>& out, Measurement m, double work, const std::vector<double>& seconds) {
  const auto summary = m.unit == "s" ? summarize(seconds) : summarize_rates(work, seconds);
  if (!summary) {
    std::fprintf(stderr, "capsim-calibrate: %s: no usable samples, measurement dropped\n", m.kind.c_str());
    return;
  }
  m.stats = *summary;
  out.push_back(std::move(m));
}

}  // namespace capsim::calibration
