// The registry of the models' empirical constants (issue 48): every number the performance,
// memory and serving models take from a fit, a measurement or a publication rather than from
// the workload, the catalog or arithmetic, with its value, unit and basis. The model code
// reads each one from here (the k...() functions below read the registry's current value), so
// docs/model-constants.md, written from this registry by `capsim accuracy --constants`, is
// the list of what the models assume, and the sensitivity that command reports is the
// effect of moving the very value the models use.
//
// Thread safety: each thread reads its own copy of the values, initialized from the
// registry; ScopedConstantScale changes the calling thread's copy only, so the sensitivity
// tool predicts the corpus with a different constant moved on each of its threads.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <string_view>

namespace capsim::models {

enum class ConstantId : std::size_t {
  gemm_max_efficiency,
  gemm_max_efficiency_hopper,
  gemm_half_saturation_dim,
  rowwise_fp8_half_saturation_factor,
  memory_bandwidth_efficiency,
  overlap_compute_slowdown,
  moe_layer_host_seconds,
  moe_layer_host_forward_share,
  collective_bandwidth_fraction,
  pcie_collective_bandwidth_fraction,
  flash_ampere_fa2_forward,
  flash_ampere_fa2_backward,
  flash_fa1_forward,
  flash_fa1_backward,
  flash_hopper_fa2_forward,
  flash_hopper_fa2_backward,
  flash_hopper_fa3_forward,
  flash_hopper_fa3_backward,
  memory_overhead_fraction,
  cnn_host_time_per_kernel,
  transpose_elements_per_sm_clock,
  shared_datapath_fp32_share,
  kernel_gpu_floor_seconds,
  kernel_launch_seconds,
  triton_request_overhead_seconds,
  triton_payload_bytes_per_second,
  tf_input_seconds_per_image,
  process_context_bytes,
  time_slice_seconds,
  context_switch_seconds,
  llm_layer_overhead_seconds,
  llm_engine_step_overhead_seconds,
  hopper_token_rows_half_saturation_dim,
  default_intra_node_latency_seconds,
  default_inter_node_latency_seconds,
  default_pcie_latency_seconds,
  count
};
inline constexpr std::size_t kModelConstantCount = static_cast<std::size_t>(ConstantId::count);

// What a constant's value rests on.
enum class ConstantBasis {
  fit,          // chosen on the validation rows in fit_rows (each marked fit: true)
  measurement,  // a measurement outside the validation corpus (a calibration profile, a benchmark)
  publication,  // a figure or range stated in a publication (cited in `basis`)
  undeclared,   // none: an assumption with no fit rows and no measurement
};
std::string_view constant_basis_name(ConstantBasis b);

struct ModelConstant {
  ConstantId id;
  std::string_view name;       // the name the code reads it by, e.g. kOverlapComputeSlowdown
  double value;                // the registry's value (the models read the current one)
  std::string_view unit;
  ConstantBasis basis;
  std::string_view fit_rows;   // ids of the validation rows it was chosen on, space-separated (fit only)
  std::string_view basis_text; // the measurement or publication, or why there is none
  std::string_view used_by;    // which model reads it
  // The validation kinds whose predictions read it (space-separated), "all" when every kind
  // may: the sensitivity tool predicts only those.
  std::string_view kinds = "all";
};

// Every registered constant, in ConstantId order.
std::span<const ModelConstant> model_constants();
const ModelConstant& model_constant(ConstantId id);

namespace detail {
// The values the models read on this thread, constant-initialized from the registry.
extern thread_local constinit std::array<double, kModelConstantCount> constant_values;
}  // namespace detail

// The current value of a constant on this thread (the registry's, unless a
// ScopedConstantScale of this thread is alive).
inline double constant(ConstantId id) { return detail::constant_values[static_cast<std::size_t>(id)]; }

// Multiplies one constant by `factor` on the calling thread until destroyed (then restores
// it). For the sensitivity tool and tests.
class ScopedConstantScale {
 public:
  ScopedConstantScale(ConstantId id, double factor);
  ~ScopedConstantScale();
  ScopedConstantScale(const ScopedConstantScale&) = delete;
  ScopedConstantScale& operator=(const ScopedConstantScale&) = delete;

 private:
  ConstantId id_;
  double saved_;
};

// The names the model code reads: the current value of each constant on this thread. Their
// meaning and basis are in constants.cpp and beside the model that reads them.
#define CAPSIM_MODEL_CONSTANT(name, id) \
  inline double name() { return constant(ConstantId::id); }
CAPSIM_MODEL_CONSTANT(kGemmMaxEfficiency, gemm_max_efficiency)
CAPSIM_MODEL_CONSTANT(kGemmMaxEfficiencyHopper, gemm_max_efficiency_hopper)
CAPSIM_MODEL_CONSTANT(kGemmHalfSaturationDim, gemm_half_saturation_dim)
CAPSIM_MODEL_CONSTANT(kRowwiseFp8HalfSaturationFactor, rowwise_fp8_half_saturation_factor)
CAPSIM_MODEL_CONSTANT(kMemoryBandwidthEfficiency, memory_bandwidth_efficiency)
CAPSIM_MODEL_CONSTANT(kOverlapComputeSlowdown, overlap_compute_slowdown)
CAPSIM_MODEL_CONSTANT(kMoeLayerHostSeconds, moe_layer_host_seconds)
CAPSIM_MODEL_CONSTANT(kMoeLayerHostForwardShare, moe_layer_host_forward_share)
CAPSIM_MODEL_CONSTANT(kCollectiveBandwidthFraction, collective_bandwidth_fraction)
CAPSIM_MODEL_CONSTANT(kPcieCollectiveBandwidthFraction, pcie_collective_bandwidth_fraction)
CAPSIM_MODEL_CONSTANT(kMemoryOverheadFraction, memory_overhead_fraction)
CAPSIM_MODEL_CONSTANT(kCnnHostTimePerKernel, cnn_host_time_per_kernel)
CAPSIM_MODEL_CONSTANT(kTransposeElementsPerSmClock, transpose_elements_per_sm_clock)
CAPSIM_MODEL_CONSTANT(kSharedDatapathFp32Share, shared_datapath_fp32_share)
CAPSIM_MODEL_CONSTANT(kKernelGpuFloorSeconds, kernel_gpu_floor_seconds)
CAPSIM_MODEL_CONSTANT(kKernelLaunchSeconds, kernel_launch_seconds)
CAPSIM_MODEL_CONSTANT(kTritonRequestOverheadSeconds, triton_request_overhead_seconds)
CAPSIM_MODEL_CONSTANT(kTritonPayloadBytesPerSecond, triton_payload_bytes_per_second)
CAPSIM_MODEL_CONSTANT(kTfInputSecondsPerImage, tf_input_seconds_per_image)
CAPSIM_MODEL_CONSTANT(kProcessContextBytes, process_context_bytes)
CAPSIM_MODEL_CONSTANT(kTimeSliceSeconds, time_slice_seconds)
CAPSIM_MODEL_CONSTANT(kContextSwitchSeconds, context_switch_seconds)
CAPSIM_MODEL_CONSTANT(kLayerOverheadSeconds, llm_layer_overhead_seconds)
CAPSIM_MODEL_CONSTANT(kEngineStepOverheadSeconds, llm_engine_step_overhead_seconds)
CAPSIM_MODEL_CONSTANT(kHopperTokenRowsHalfSaturationDim, hopper_token_rows_half_saturation_dim)
CAPSIM_MODEL_CONSTANT(kDefaultIntraNodeLatencySeconds, default_intra_node_latency_seconds)
CAPSIM_MODEL_CONSTANT(kDefaultInterNodeLatencySeconds, default_inter_node_latency_seconds)
CAPSIM_MODEL_CONSTANT(kDefaultPcieLatencySeconds, default_pcie_latency_seconds)
#undef CAPSIM_MODEL_CONSTANT

}  // namespace capsim::models
