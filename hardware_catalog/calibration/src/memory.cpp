// Device memory bandwidth: STREAM copy (2 arrays) and triad (3 arrays) over working sets
// from inside the L2 cache to well past it, so the asymptotic HBM figure is the plateau.
// "bytes" is the working set = the bytes read plus written by one kernel.
#include <algorithm>
#include <cstdio>

#include "bench.hpp"

namespace capsim::calibration {
namespace {

struct Arrays {
  double* a = nullptr;
  double* b = nullptr;
  double* c = nullptr;
  explicit Arrays(std::size_t n) {
    check(cudaMalloc(&a, n * sizeof(double)), "cudaMalloc");
    check(cudaMalloc(&b, n * sizeof(double)), "cudaMalloc");
    check(cudaMalloc(&c, n * sizeof(double)), "cudaMalloc");
  }
  ~Arrays() {
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
  }
  Arrays(const Arrays&) = delete;
  Arrays& operator=(const Arrays&) = delete;
};

}  // namespace

void run_memory(const Options& o, const cudaDeviceProp& prop, std::vector<Measurement>& out) {
  std::size_t free_bytes = 0, total_bytes = 0;
  check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  // Largest array: 1 GiB each, or a quarter of free memory for three arrays; at least 16x
  // the L2 so the plateau is HBM, not cache.
  const std::size_t l2 = static_cast<std::size_t>(std::max(prop.l2CacheSize, 1 << 20));
  const std::size_t largest = std::min<std::size_t>(std::size_t{1} << 30, free_bytes / 4);
  const std::size_t smallest = std::size_t{1} << 20;  // 1 MiB: inside every L2
  if (largest < 16 * l2)
    std::fprintf(stderr, "capsim-calibrate: memory: little free memory, largest array only %zu MiB\n", largest >> 20);
  cudaStream_t stream = nullptr;
  check(cudaStreamCreate(&stream), "cudaStreamCreate");
  const std::size_t step = o.quick ? 16 : 4;
  for (std::size_t array_bytes = smallest; array_bytes <= largest; array_bytes *= step) {
    try {
      const std::size_t n = array_bytes / sizeof(double);
      Arrays arrays(n);
      launch_fill(arrays.a, 1.0, n, stream);
      launch_fill(arrays.b, 2.0, n, stream);
      launch_fill(arrays.c, 0.5, n, stream);
      check(cudaGetLastError(), "fill");

      Measurement copy;
      copy.kind = std::string("memory_copy");
      copy.bytes = static_cast<std::int64_t>(2 * array_bytes);
      copy.unit = "B/s";
      const auto copy_seconds = time_runs(stream, [&] { launch_copy(arrays.c, arrays.a, n, stream); }, o);
      add_measurement(out, std::move(copy), 2.0 * static_cast<double>(array_bytes), copy_seconds);

      Measurement triad;
      triad.kind = std::string("triad");
      triad.bytes = static_cast<std::int64_t>(3 * array_bytes);
      triad.unit = "B/s";
      const auto triad_seconds =
          time_runs(stream, [&] { launch_triad(arrays.a, arrays.b, arrays.c, 0.4, n, stream); }, o);
      add_measurement(out, std::move(triad), 3.0 * static_cast<double>(array_bytes), triad_seconds);
    } catch (const CudaError& e) {
      std::fprintf(stderr, "capsim-calibrate: memory %zu MiB arrays: %s, skipped\n", array_bytes >> 20, e.what());
      cudaGetLastError();
    }
  }
  cudaStreamDestroy(stream);
  std::fprintf(stderr, "capsim-calibrate: memory done\n");
}

}  // namespace capsim::calibration
