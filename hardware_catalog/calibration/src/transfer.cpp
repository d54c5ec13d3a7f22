// Host <-> device copies (pinned and pageable, both directions) and peer-to-peer copies
// between every ordered pair of GPUs (bandwidth over sizes, and the latency of a 4-byte
// copy), all timed with CUDA events.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "bench.hpp"

namespace capsim::calibration {
namespace {

void free_host(void* p, bool pinned) {
  if (pinned) cudaFreeHost(p);
  else std::free(p);
}

std::vector<std::size_t> sizes(bool quick, std::size_t largest) {
  std::vector<std::size_t> out;
  for (std::size_t s = 4096; s <= largest; s *= quick ? 64 : 4) out.push_back(s);
  return out;
}

void transfers(bool pinned, const Options& o, std::vector<Measurement>& out) {
  const std::size_t largest = std::size_t{1} << 30;
  void* host = nullptr;
  if (pinned) check(cudaMallocHost(&host, largest), "cudaMallocHost");
  else {
    host = std::malloc(largest);
    if (host == nullptr) throw CudaError("malloc of 1 GiB failed");
    std::memset(host, 1, largest);  // touch every page so the OS has mapped them
  }
  void* device = nullptr;
  const cudaError_t alloc = cudaMalloc(&device, largest);
  if (alloc != cudaSuccess) {
    free_host(host, pinned);
    check(alloc, "cudaMalloc");
  }
  cudaStream_t stream = nullptr;  // the legacy default stream: pageable copies synchronize with it
  for (std::size_t bytes : sizes(o.quick, largest)) {
    for (bool to_device : {true, false}) {
      Measurement m;
      m.kind = to_device ? "h2d" : "d2h";
      m.bytes = static_cast<std::int64_t>(bytes);
      m.pinned = pinned;
      m.unit = "B/s";
      try {
        const auto seconds = time_runs(
            stream,
            [&] {
              if (to_device) check(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream), "h2d");
              else check(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream), "d2h");
            },
            o);
        add_measurement(out, std::move(m), static_cast<double>(bytes), seconds);
      } catch (const CudaError& e) {
        std::fprintf(stderr, "capsim-calibrate: %s %zu B: %s, skipped\n", m.kind.c_str(), bytes, e.what());
        cudaGetLastError();
      }
    }
  }
  cudaFree(device);
  free_host(host, pinned);
}

}  // namespace

void run_host_transfers(const Options& o, std::vector<Measurement>& out) {
  for (bool pinned : {true, false}) {
    try {
      transfers(pinned, o, out);
    } catch (const CudaError& e) {
      std::fprintf(stderr, "capsim-calibrate: %s host transfers: %s, skipped\n", pinned ? "pinned" : "pageable",
                   e.what());
    }
  }
  std::fprintf(stderr, "capsim-calibrate: host transfers done\n");
}

void run_peer_to_peer(const Options& o, int gpu_count, std::vector<Measurement>& out) {
  if (gpu_count < 2) {
    std::fprintf(stderr, "capsim-calibrate: p2p: one GPU, skipped\n");
    return;
  }
  const std::size_t largest = std::size_t{256} << 20;
  for (int src = 0; src < gpu_count; ++src) {
    for (int dst = 0; dst < gpu_count; ++dst) {
      if (src == dst) continue;
      int can = 0;
      cudaDeviceCanAccessPeer(&can, dst, src);
      void* from = nullptr;
      void* to = nullptr;
      cudaStream_t stream = nullptr;
      try {
        // Without peer access the copy is staged through host memory, which is what such
        // a pair delivers; the measurement says which one it was through the bandwidth.
        if (can) {
          check(cudaSetDevice(dst), "cudaSetDevice");
          const cudaError_t e = cudaDeviceEnablePeerAccess(src, 0);
          if (e != cudaErrorPeerAccessAlreadyEnabled) check(e, "cudaDeviceEnablePeerAccess");
          cudaGetLastError();
        }
        check(cudaSetDevice(dst), "cudaSetDevice");
        check(cudaMalloc(&to, largest), "cudaMalloc");
        check(cudaSetDevice(src), "cudaSetDevice");
        check(cudaMalloc(&from, largest), "cudaMalloc");
        check(cudaStreamCreate(&stream), "cudaStreamCreate");
        for (std::size_t bytes : sizes(o.quick, largest)) {
          Measurement m;
          m.kind = std::string("p2p");
          m.src = src;
          m.dst = dst;
          m.bytes = static_cast<std::int64_t>(bytes);
          m.unit = "B/s";
          const auto seconds = time_runs(
              stream, [&] { check(cudaMemcpyPeerAsync(to, dst, from, src, bytes, stream), "cudaMemcpyPeerAsync"); }, o);
          add_measurement(out, std::move(m), static_cast<double>(bytes), seconds);
        }
        Measurement latency;
        latency.kind = std::string("p2p");
        latency.src = src;
        latency.dst = dst;
        latency.bytes = 4;
        latency.unit = std::string("s");
        Options one_at_a_time = o;
        one_at_a_time.min_sample_seconds = 0;  // each sample is one copy: a latency, not a rate
        const auto seconds = time_runs(
            stream, [&] { check(cudaMemcpyPeerAsync(to, dst, from, src, 4, stream), "cudaMemcpyPeerAsync"); },
            one_at_a_time);
        add_measurement(out, std::move(latency), 1.0, seconds);
      } catch (const CudaError& e) {
        std::fprintf(stderr, "capsim-calibrate: p2p %d -> %d: %s, skipped\n", src, dst, e.what());
        cudaGetLastError();
      }
      if (stream) cudaStreamDestroy(stream);
      cudaFree(from);
      cudaFree(to);
    }
  }
  cudaSetDevice(o.device);
  std::fprintf(stderr, "capsim-calibrate: p2p done\n");
}

void run_launch_latency(const Options& o, std::vector<Measurement>& out) {
  cudaStream_t stream = nullptr;
  check(cudaStreamCreate(&stream), "cudaStreamCreate");
  // Queued: many empty kernels back to back, time per launch (the launch rate limit).
  Measurement queued;
  queued.kind = std::string("launch_latency");
  queued.mode = std::string("queued");
  queued.unit = std::string("s");
  add_measurement(out, std::move(queued), 1.0, time_runs(stream, [&] { launch_empty(stream); }, o));
  // Round trip: one launch, then wait for it (what a synchronizing host loop pays). Host
  // clock, since the interval includes the host's wait.
  std::vector<double> seconds;
  for (int i = 0; i < o.warmup; ++i) {
    launch_empty(stream);
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  }
  for (int r = 0; r < o.repeats; ++r) {
    const int inner = 100;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < inner; ++i) {
      launch_empty(stream);
      check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    }
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / inner);
  }
  Measurement round_trip;
  round_trip.kind = std::string("launch_latency");
  round_trip.mode = std::string("round_trip");
  round_trip.unit = std::string("s");
  add_measurement(out, std::move(round_trip), 1.0, seconds);
  cudaStreamDestroy(stream);
  std::fprintf(stderr, "capsim-calibrate: launch latency done\n");
}

}  // namespace capsim::calibration
