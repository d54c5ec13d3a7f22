// GEMM throughput through cuBLASLt for every precision the GPU supports, over a sweep of
// square and skinny shapes, so that the efficiency-by-size curve can be fitted
// (capsim's model: eff = e_max * prod_{d in m,n,k} d / (d + d_half)).
//
// Column-major D[m x n] = A[m x k] B[k x n]. fp8 and int8 need A transposed (the "TN"
// layout cuBLASLt requires for them), so every precision uses TN for comparability.
#include <cublasLt.h>

#include <cstdio>
#include <memory>

#include "bench.hpp"

namespace capsim::calibration {
namespace {

struct PrecisionSetup {
  const char* name;
  int min_cc;  // major * 10 + minor
  cudaDataType_t ab, cd;
  ElementType ab_fill, cd_fill;
  cublasComputeType_t compute;
  cudaDataType_t scale;
  std::size_t ab_bytes, cd_bytes;
};

// fp16/bf16 accumulate in fp32 as mixed-precision training does; fp8 (E4M3 inputs) writes
// bf16, the FP8 training recipe's output; int8 accumulates and writes int32.
constexpr PrecisionSetup kPrecisions[] = {
    {"fp32", 0, CUDA_R_32F, CUDA_R_32F, ElementType::f32, ElementType::f32, CUBLAS_COMPUTE_32F, CUDA_R_32F, 4, 4},
    {"tf32", 80, CUDA_R_32F, CUDA_R_32F, ElementType::f32, ElementType::f32, CUBLAS_COMPUTE_32F_FAST_TF32,
     CUDA_R_32F, 4, 4},
    {"fp16", 70, CUDA_R_16F, CUDA_R_16F, ElementType::f16, ElementType::f16, CUBLAS_COMPUTE_32F, CUDA_R_32F, 2, 2},
    {"bf16", 80, CUDA_R_16BF, CUDA_R_16BF, ElementType::bf16, ElementType::bf16, CUBLAS_COMPUTE_32F, CUDA_R_32F,
     2, 2},
    {"fp8", 89, CUDA_R_8F_E4M3, CUDA_R_16BF, ElementType::e4m3, ElementType::bf16, CUBLAS_COMPUTE_32F, CUDA_R_32F,
     1, 2},
    {"int8", 75, CUDA_R_8I, CUDA_R_32I, ElementType::i8, ElementType::i32, CUBLAS_COMPUTE_32I, CUDA_R_32I, 1, 4},
};

struct Shape {
  std::int64_t m, n, k;
};

// Square sizes from well below one wave of tiles to saturation, and the skinny shapes of
// transformer layers (few tokens, narrow heads, tensor-parallel slices). All dimensions
// are multiples of 16 (fp8 and int8 alignment).
std::vector<Shape> shapes(bool quick) {
  if (quick) return {{512, 512, 512}, {2048, 2048, 2048}, {8192, 8192, 8192}, {8192, 8192, 128}, {128, 8192, 8192}};
  std::vector<Shape> out;
  for (std::int64_t d : {128, 256, 512, 1024, 2048, 4096, 8192, 16384}) out.push_back({d, d, d});
  const Shape skinny[] = {{16, 8192, 8192},   {64, 8192, 8192},   {256, 8192, 8192},  {8192, 8192, 64},
                          {8192, 8192, 128},  {8192, 128, 8192},  {8192, 1024, 8192}, {8192, 8192, 1024},
                          {16384, 4096, 1024}, {4096, 16384, 4096}, {8192, 3072, 12288}, {8192, 12288, 3072}};
  out.insert(out.end(), std::begin(skinny), std::end(skinny));
  return out;
}

void check_lt(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw CudaError(std::string(what) + ": cuBLAS status " + std::to_string(static_cast<int>(status)));
}

struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(std::size_t bytes) { check(cudaMalloc(&p, bytes), "cudaMalloc"); }
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

// cuBLASLt descriptors for one (precision, shape), destroyed on scope exit.
struct LtProblem {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulPreference_t preference = nullptr;
  ~LtProblem() {
    if (preference) cublasLtMatmulPreferenceDestroy(preference);
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

constexpr std::size_t kWorkspaceBytes = 64u << 20;

void measure(cublasLtHandle_t lt, const PrecisionSetup& p, const Shape& s, void* workspace, cudaStream_t stream,
             const Options& o, std::vector<Measurement>& out) {
  const std::size_t bytes = static_cast<std::size_t>(s.m * s.k + s.k * s.n) * p.ab_bytes +
                            static_cast<std::size_t>(s.m * s.n) * p.cd_bytes;
  std::size_t free_bytes = 0, total_bytes = 0;
  check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  if (bytes > free_bytes / 10 * 9) {
    std::fprintf(stderr, "capsim-calibrate: gemm %s %lldx%lldx%lld needs more memory than is free, skipped\n",
                 p.name, static_cast<long long>(s.m), static_cast<long long>(s.n), static_cast<long long>(s.k));
    return;
  }
  DeviceBuffer a(static_cast<std::size_t>(s.m * s.k) * p.ab_bytes);
  DeviceBuffer b(static_cast<std::size_t>(s.k * s.n) * p.ab_bytes);
  DeviceBuffer d(static_cast<std::size_t>(s.m * s.n) * p.cd_bytes);
  launch_fill_elements(a.p, static_cast<std::size_t>(s.m * s.k), p.ab_fill, stream);
  launch_fill_elements(b.p, static_cast<std::size_t>(s.k * s.n), p.ab_fill, stream);
  launch_fill_elements(d.p, static_cast<std::size_t>(s.m * s.n), p.cd_fill, stream);
  check(cudaGetLastError(), "fill");

  LtProblem problem;
  check_lt(cublasLtMatmulDescCreate(&problem.op, p.compute, p.scale), "cublasLtMatmulDescCreate");
  const cublasOperation_t transpose = CUBLAS_OP_T, none = CUBLAS_OP_N;
  check_lt(cublasLtMatmulDescSetAttribute(problem.op, CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof transpose),
           "TRANSA");
  check_lt(cublasLtMatmulDescSetAttribute(problem.op, CUBLASLT_MATMUL_DESC_TRANSB, &none, sizeof none), "TRANSB");
  // A is stored k x m (transposed), B k x n, C = D m x n; C is not read (beta = 0).
  check_lt(cublasLtMatrixLayoutCreate(&problem.a, p.ab, s.k, s.m, s.k), "layout A");
  check_lt(cublasLtMatrixLayoutCreate(&problem.b, p.ab, s.k, s.n, s.k), "layout B");
  check_lt(cublasLtMatrixLayoutCreate(&problem.c, p.cd, s.m, s.n, s.m), "layout C");
  check_lt(cublasLtMatmulPreferenceCreate(&problem.preference), "preference");
  const std::size_t workspace_bytes = kWorkspaceBytes;
  check_lt(cublasLtMatmulPreferenceSetAttribute(problem.preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                &workspace_bytes, sizeof workspace_bytes),
           "workspace");
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  const auto status = cublasLtMatmulAlgoGetHeuristic(lt, problem.op, problem.a, problem.b, problem.c, problem.c,
                                                     problem.preference, 1, &heuristic, &found);
  if (status != CUBLAS_STATUS_SUCCESS || found == 0) {
    std::fprintf(stderr, "capsim-calibrate: gemm %s %lldx%lldx%lld: cuBLASLt has no algorithm, skipped\n", p.name,
                 static_cast<long long>(s.m), static_cast<long long>(s.n), static_cast<long long>(s.k));
    return;
  }
  const float alpha_f = 1.0f, beta_f = 0.0f;
  const std::int32_t alpha_i = 1, beta_i = 0;
  const bool integer = p.scale == CUDA_R_32I;
  const void* alpha = integer ? static_cast<const void*>(&alpha_i) : static_cast<const void*>(&alpha_f);
  const void* beta = integer ? static_cast<const void*>(&beta_i) : static_cast<const void*>(&beta_f);
  auto run = [&] {
    check_lt(cublasLtMatmul(lt, problem.op, alpha, a.p, problem.a, b.p, problem.b, beta, d.p, problem.c, d.p,
                            problem.c, &heuristic.algo, workspace, kWorkspaceBytes, stream),
             "cublasLtMatmul");
  };
  const auto seconds = time_runs(stream, run, o, o.sustain_seconds);
  Measurement m;
  m.kind = std::string("gemm");
  m.precision = std::string(p.name);
  m.m = s.m;
  m.n = s.n;
  m.k = s.k;
  m.unit = "FLOP/s";
  add_measurement(out, std::move(m), 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k),
                  seconds);
}

}  // namespace

void run_gemm(const Options& o, const cudaDeviceProp& prop, std::vector<Measurement>& out) {
  cublasLtHandle_t lt = nullptr;
  check_lt(cublasLtCreate(&lt), "cublasLtCreate");
  std::unique_ptr<cublasLtContext, decltype(&cublasLtDestroy)> guard(lt, cublasLtDestroy);
  cudaStream_t stream = nullptr;
  check(cudaStreamCreate(&stream), "cudaStreamCreate");
  std::unique_ptr<CUstream_st, decltype(&cudaStreamDestroy)> stream_guard(stream, cudaStreamDestroy);
  DeviceBuffer workspace(kWorkspaceBytes);
  const int cc = prop.major * 10 + prop.minor;
  for (const PrecisionSetup& p : kPrecisions) {
    if (cc < p.min_cc) {
      std::fprintf(stderr, "capsim-calibrate: gemm %s needs compute capability %d.%d, this GPU is %d.%d: skipped\n",
                   p.name, p.min_cc / 10, p.min_cc % 10, prop.major, prop.minor);
      continue;
    }
    for (const Shape& s : shapes(o.quick)) {
      try {
        measure(lt, p, s, workspace.p, stream, o, out);
      } catch (const CudaError& e) {
        std::fprintf(stderr, "capsim-calibrate: gemm %s %lldx%lldx%lld: %s, skipped\n", p.name,
                     static_cast<long long>(s.m), static_cast<long long>(s.n), static_cast<long long>(s.k), e.what());
        cudaGetLastError();  // clear a sticky launch error so the next shape can run
      }
    }
    std::fprintf(stderr, "capsim-calibrate: gemm %s done\n", p.name);
  }
}

}  // namespace capsim::calibration
