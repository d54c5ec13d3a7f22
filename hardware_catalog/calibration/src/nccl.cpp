// NCCL all-reduce and all-gather over all GPUs of this node (one process, one communicator
// per GPU via ncclCommInitAll), over message sizes. Reported as NCCL "bus bandwidth", the
// figure nccl-tests prints and that is comparable across GPU counts
// (https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md):
//   all-reduce: busbw = S / t * 2 (n - 1) / n    (S = buffer bytes)
//   all-gather: busbw = S / t * (n - 1) / n      (S = total bytes received per rank)
// Each sample is timed with CUDA events on every rank's stream; the slowest rank counts.
#include <nccl.h>

#include <algorithm>
#include <cstdio>

#include "bench.hpp"

namespace capsim::calibration {
namespace {

void check_nccl(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) throw CudaError(std::string(what) + ": " + ncclGetErrorString(r));
}

struct Rank {
  int device = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  void* send = nullptr;
  void* recv = nullptr;
};

enum class Collective { all_reduce, all_gather };

// One sample: `inner` back-to-back collectives on all ranks; seconds per collective on the
// slowest rank.
double sample(std::vector<Rank>& ranks, Collective c, std::size_t bytes, int inner) {
  const std::size_t n = ranks.size();
  for (auto& r : ranks) {
    check(cudaSetDevice(r.device), "cudaSetDevice");
    check(cudaEventRecord(r.start, r.stream), "cudaEventRecord");
  }
  for (int i = 0; i < inner; ++i) {
    check_nccl(ncclGroupStart(), "ncclGroupStart");
    for (auto& r : ranks) {
      if (c == Collective::all_reduce)
        check_nccl(ncclAllReduce(r.send, r.recv, bytes / sizeof(float), ncclFloat, ncclSum, r.comm, r.stream),
                   "ncclAllReduce");
      else
        check_nccl(ncclAllGather(r.send, r.recv, bytes / n / sizeof(float), ncclFloat, r.comm, r.stream),
                   "ncclAllGather");
    }
    check_nccl(ncclGroupEnd(), "ncclGroupEnd");
  }
  double slowest = 0;
  for (auto& r : ranks) {
    check(cudaSetDevice(r.device), "cudaSetDevice");
    check(cudaEventRecord(r.stop, r.stream), "cudaEventRecord");
  }
  for (auto& r : ranks) {
    check(cudaEventSynchronize(r.stop), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, r.start, r.stop), "cudaEventElapsedTime");
    slowest = std::max(slowest, ms * 1e-3 / inner);
  }
  return slowest;
}

}  // namespace

void run_nccl(const Options& o, int gpu_count, std::vector<Measurement>& out) {
  if (gpu_count < 2) {
    std::fprintf(stderr, "capsim-calibrate: nccl: one GPU, skipped\n");
    return;
  }
  const std::size_t largest = std::size_t{1} << 30;
  std::vector<Rank> ranks(static_cast<std::size_t>(gpu_count));
  std::vector<ncclComm_t> comms(ranks.size());
  std::vector<int> devices(ranks.size());
  for (int i = 0; i < gpu_count; ++i) devices[static_cast<std::size_t>(i)] = i;
  try {
    check_nccl(ncclCommInitAll(comms.data(), gpu_count, devices.data()), "ncclCommInitAll");
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      ranks[i].device = devices[i];
      ranks[i].comm = comms[i];
    }
    for (Rank& r : ranks) {
      check(cudaSetDevice(r.device), "cudaSetDevice");
      check(cudaStreamCreate(&r.stream), "cudaStreamCreate");
      check(cudaEventCreate(&r.start), "cudaEventCreate");
      check(cudaEventCreate(&r.stop), "cudaEventCreate");
      check(cudaMalloc(&r.send, largest), "cudaMalloc");
      check(cudaMalloc(&r.recv, largest), "cudaMalloc");
      check(cudaMemset(r.send, 0, largest), "cudaMemset");
    }
    const double n = gpu_count;
    for (Collective c : {Collective::all_reduce, Collective::all_gather}) {
      for (std::size_t bytes = std::size_t{1} << 20; bytes <= largest; bytes *= o.quick ? 32 : 4) {
        const std::size_t aligned = bytes / (ranks.size() * sizeof(float)) * ranks.size() * sizeof(float);
        for (int i = 0; i < o.warmup; ++i) sample(ranks, c, aligned, 1);
        const double probe = sample(ranks, c, aligned, 1);
        const int inner = probe > 0 && probe < o.min_sample_seconds
                              ? static_cast<int>(std::min(1000.0, o.min_sample_seconds / probe + 1))
                              : 1;
        std::vector<double> seconds;
        for (int r = 0; r < o.repeats; ++r) seconds.push_back(sample(ranks, c, aligned, inner));
        Measurement m;
        m.kind = c == Collective::all_reduce ? "allreduce" : "allgather";
        m.ranks = gpu_count;
        m.bytes = static_cast<std::int64_t>(aligned);
        m.unit = "B/s";
        const double factor = c == Collective::all_reduce ? 2.0 * (n - 1) / n : (n - 1) / n;
        add_measurement(out, std::move(m), static_cast<double>(aligned) * factor, seconds);
      }
    }
  } catch (const CudaError& e) {
    std::fprintf(stderr, "capsim-calibrate: nccl: %s, skipped\n", e.what());
  }
  for (auto& r : ranks) {
    cudaSetDevice(r.device);
    if (r.comm) ncclCommDestroy(r.comm);
    if (r.stream) cudaStreamDestroy(r.stream);
    if (r.start) cudaEventDestroy(r.start);
    if (r.stop) cudaEventDestroy(r.stop);
    cudaFree(r.send);
    cudaFree(r.recv);
  }
  cudaSetDevice(o.device);
  std::fprintf(stderr, "capsim-calibrate: nccl done\n");
}

}  // namespace capsim::calibration
