// The device kernels of capsim-calibrate: STREAM copy and triad (McCalpin, "Memory
// Bandwidth and Machine Balance", 1995; BabelStream's GPU versions), a fill, and an empty
// kernel for launch latency. Built as CUDA C++17 (CMake 3.25 cannot ask nvcc for C++20).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>

#include "bench.hpp"

namespace capsim::calibration {
namespace {

constexpr int kThreads = 256;

__global__ void copy_kernel(double* __restrict__ dst, const double* __restrict__ src, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

__global__ void triad_kernel(double* __restrict__ a, const double* __restrict__ b, const double* __restrict__ c,
                             double scalar, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    a[i] = b[i] + scalar * c[i];
}

__global__ void fill_kernel(double* a, double value, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    a[i] = value;
}

__global__ void empty_kernel() {}

// Values in [-1, 1) from a hash of the index: GEMM power draw (and so clocks under the
// power cap) depends on the data, and all-zero inputs would flatter the tensor cores.
__device__ float pseudo_random(std::size_t i) {
  std::uint32_t x = static_cast<std::uint32_t>(i) * 2654435761u + 0x9e3779b9u;
  x ^= x >> 16;
  x *= 0x85ebca6bu;
  x ^= x >> 13;
  return static_cast<float>(x & 0xffffu) / 32768.0f - 1.0f;
}

__global__ void fill_elements_kernel(void* p, std::size_t n, ElementType type) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float v = pseudo_random(i);
    switch (type) {
      case ElementType::f32: static_cast<float*>(p)[i] = v; break;
      case ElementType::f16: static_cast<__half*>(p)[i] = __float2half(v); break;
      case ElementType::bf16: static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16(v); break;
      case ElementType::e4m3: static_cast<__nv_fp8_e4m3*>(p)[i] = __nv_fp8_e4m3(v); break;
      case ElementType::i8: static_cast<std::int8_t*>(p)[i] = static_cast<std::int8_t>(v * 100.0f); break;
      case ElementType::i32: static_cast<std::int32_t*>(p)[i] = static_cast<std::int32_t>(v * 100.0f); break;
    }
  }
}

// Enough blocks to fill every SM several times over; grid-stride loops cover the rest.
unsigned blocks_for(std::size_t n) {
  // Looked up once: the memory benchmarks run on one device, and a query per launch would
  // leave the GPU idle between back-to-back small kernels.
  static const int sms = [] {
    int device = 0, count = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device);
    return count;
  }();
  const std::size_t wanted = (n + kThreads - 1) / kThreads;
  const std::size_t cap = static_cast<std::size_t>(sms > 0 ? sms : 1) * 32;
  return static_cast<unsigned>(wanted < cap ? (wanted > 0 ? wanted : 1) : cap);
}

}  // namespace

void launch_copy(double* dst, const double* src, std::size_t n, cudaStream_t stream) {
  copy_kernel<<<blocks_for(n), kThreads, 0, stream>>>(dst, src, n);
}

void launch_triad(double* a, const double* b, const double* c, double scalar, std::size_t n, cudaStream_t stream) {
  triad_kernel<<<blocks_for(n), kThreads, 0, stream>>>(a, b, c, scalar, n);
}

void launch_fill(double* a, double value, std::size_t n, cudaStream_t stream) {
  fill_kernel<<<blocks_for(n), kThreads, 0, stream>>>(a, value, n);
}

void launch_empty(cudaStream_t stream) { empty_kernel<<<1, 1, 0, stream>>>(); }

void launch_fill_elements(void* p, std::size_t n, ElementType type, cudaStream_t stream) {
  fill_elements_kernel<<<blocks_for(n), kThreads, 0, stream>>>(p, n, type);
}

}  // namespace capsim::calibration
