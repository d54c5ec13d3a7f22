// The registry of the models' empirical constants (constants.hpp). Each entry's longer
// reasoning stays in a comment beside the model that reads it (named in used_by); the
// registry holds what docs/model-constants.md lists: value, unit, and what it rests on.
// Changing a value here changes the model: do not tune a constant to the rows it is
// checked on (issue 48).
#include "capsim/models/constants.hpp"

#include <stdexcept>

namespace capsim::models {
namespace {

// The Megatron-LM SC'21 Table 1 rows (data/validation/megatron_sc21_table1.yaml, all fit).
constexpr std::string_view kSc21Rows =
    "megatron-sc21-t1-1.7b megatron-sc21-t1-3.6b megatron-sc21-t1-7.5b megatron-sc21-t1-18.4b "
    "megatron-sc21-t1-39.1b megatron-sc21-t1-76.1b megatron-sc21-t1-145.6b megatron-sc21-t1-310.1b "
    "megatron-sc21-t1-529.6b megatron-sc21-t1-1008.0b";

using B = ConstantBasis;
using I = ConstantId;

constexpr std::array<ModelConstant, kModelConstantCount> kRegistry{{
    {I::gemm_max_efficiency, "kGemmMaxEfficiency", 0.72, "fraction of the dense tensor-core peak", B::fit, kSc21Rows,
     "with kGemmHalfSaturationDim, reproduces Megatron-LM's SC'21 Table 1 (A100) with one setting for all ten rows",
     "performance.hpp: GEMM ceiling before Hopper (training, serving, vision)"},
    {I::gemm_max_efficiency_hopper, "kGemmMaxEfficiencyHopper", 0.57, "fraction of the dense tensor-core peak", B::fit,
     "mpt-70b-h10080gb-s2048-512g mpt-7b-h10080gb-s2048-128g fms-70b-h100-96g-fsdp mcore-r080-gpt-1.7b-h100-48g",
     "the Hopper and Blackwell GEMM ceiling, chosen on the four H100 training rows marked fit: true",
     "performance.hpp: GEMM ceiling on Hopper and newer"},
    {I::gemm_half_saturation_dim, "kGemmHalfSaturationDim", 96.0, "GEMM dimension (elements)", B::fit, kSc21Rows,
     "chosen with kGemmMaxEfficiency on SC'21 Table 1; between one half and one CUTLASS tile (128/256)",
     "performance.hpp: GEMM efficiency vs size (x the GPU's tensor rate per SM)"},
    {I::rowwise_fp8_half_saturation_factor, "kRowwiseFp8HalfSaturationFactor", 3.0,
     "x the tensor-wise half-saturation dimension", B::measurement, "",
     "torchao's rowwise FP8 microbenchmark (H100, docs/static/fp8-rowwise-perf.png, pytorch/ao#2312): 7 points at 4 % "
     "mean error; no validation row used",
     "performance.cpp: FP8 GEMMs with row-wise scales",
     "training"},
    {I::memory_bandwidth_efficiency, "kMemoryBandwidthEfficiency", 0.8, "fraction of the HBM datasheet bandwidth",
     B::publication, "", "BabelStream on A100 and H100 reports 80-90 % of the datasheet bandwidth",
     "performance.hpp: streaming (element-wise) kernels without a calibration profile"},
    {I::overlap_compute_slowdown, "kOverlapComputeSlowdown", 0.2, "fraction of the hidden collective's time",
     B::undeclared, "",
     "undeclared: no fit rows. Reasoned from NCCL's 16-32 channels holding 12-24 % of an H100's SMs while a layer "
     "computes; no measurement",
     "performance.cpp: compute slowed under hidden ZeRO-3/FSDP gathers and gradient all-reduce",
     "training"},
    {I::moe_layer_host_seconds, "kMoeLayerHostSeconds", 9e-3, "s per MoE layer per micro-batch", B::fit,
     "bridge-2511-qwen3-30b-a3b-b200-8g-fp8",
     "host time of one MoE layer's forward and backward, chosen on Qwen3-30B-A3B at micro-batch 1 on 8 B200",
     "performance.cpp: MoE host floor",
     "training"},
    {I::moe_layer_host_forward_share, "kMoeLayerHostForwardShare", 1.0 / 3.0, "fraction of kMoeLayerHostSeconds",
     B::undeclared, "",
     "undeclared: no fit rows. The forward's share taken as the step's FLOP split (1 : 2), not measured",
     "performance.cpp: MoE host floor, forward part",
     "training"},
    {I::collective_bandwidth_fraction, "kCollectiveBandwidthFraction", 0.8, "fraction of the link line rate",
     B::publication, "",
     "nccl-tests bus bandwidth on DGX A100: ~230-240 of 300 GB/s NVSwitch, ~20-23 of 25 GB/s HDR (NVIDIA)",
     "collectives.hpp: NCCL bus bandwidth on NVLink and network links"},
    {I::pcie_collective_bandwidth_fraction, "kPcieCollectiveBandwidthFraction", 0.53, "fraction of the PCIe line rate",
     B::fit, "trtllm017-llama-31-70b-l40s-fp8-tp8-i1000-o1000",
     "chosen on one L40S TP 8 serving row; inside NCCL's own topology bracket (0.51-0.76, src/graph/topo.h)",
     "collectives.hpp: collectives between PCIe GPUs"},
    {I::flash_ampere_fa2_forward, "kFlashAmpereFa2.forward", 0.6, "fraction of the dense 16-bit peak", B::publication,
     "", "Dao, FlashAttention-2 (2023), Fig. 5-6: ~180-200 of 312 TFLOP/s forward on A100",
     "performance.hpp: fused attention, FA2 before Hopper (and LLM serving attention)",
     "training llm-serving"},
    {I::flash_ampere_fa2_backward, "kFlashAmpereFa2.backward", 0.5, "fraction of the dense 16-bit peak",
     B::publication, "", "Dao, FlashAttention-2 (2023), Fig. 5-6: ~150-170 of 312 TFLOP/s backward on A100",
     "performance.hpp: fused attention, FA2 before Hopper",
     "training"},
    {I::flash_fa1_forward, "kFlashFa1.forward", 0.4, "fraction of the dense 16-bit peak", B::publication, "",
     "Dao, FlashAttention-2 (2023), sec. 1: FlashAttention reaches 'only 25-40%' of the peak",
     "performance.hpp: fused attention, FA1 (Hopper: scaled by FA2's Hopper/Ampere ratio)",
     "training"},
    {I::flash_fa1_backward, "kFlashFa1.backward", 0.3, "fraction of the dense 16-bit peak", B::publication, "",
     "Dao, FlashAttention-2 (2023), sec. 1: 25-40 %, backward the slower", "performance.hpp: fused attention, FA1",
     "training"},
    {I::flash_hopper_fa2_forward, "kFlashHopperFa2.forward", 0.35, "fraction of the dense 16-bit peak",
     B::publication, "", "Shah et al., FlashAttention-3 (2024), abstract: FA2 reaches 'only 35% utilization on the H100'",
     "performance.hpp: fused attention, FA2 on Hopper and newer",
     "training"},
    {I::flash_hopper_fa2_backward, "kFlashHopperFa2.backward", 0.3, "fraction of the dense 16-bit peak",
     B::publication, "", "Shah et al., FlashAttention-3 (2024): 35 % forward; backward taken lower, as on A100",
     "performance.hpp: fused attention, FA2 on Hopper and newer",
     "training"},
    {I::flash_hopper_fa3_forward, "kFlashHopperFa3.forward", 0.6, "fraction of the dense 16-bit peak",
     B::publication, "", "Shah et al., FlashAttention-3 (2024): 1.5-2.0x FA2's forward on H100",
     "performance.hpp: fused attention, FA3 / cuDNN on Hopper and newer",
     "training"},
    {I::flash_hopper_fa3_backward, "kFlashHopperFa3.backward", 0.5, "fraction of the dense 16-bit peak",
     B::publication, "", "Shah et al., FlashAttention-3 (2024): 1.5-1.75x FA2's backward on H100",
     "performance.hpp: fused attention, FA3 / cuDNN on Hopper and newer",
     "training"},
    {I::memory_overhead_fraction, "kMemoryOverheadFraction", 0.10, "fraction of the counted memory",
     B::undeclared, "",
     "undeclared: no fit rows. Framework buffers and allocator fragmentation, a default the user can state",
     "memory.hpp / parallelism.hpp: default overhead_fraction of the memory rules"},
    {I::cnn_host_time_per_kernel, "kCnnHostTimePerKernel", 65e-6, "s per operator", B::fit,
     "rn50-v100-sxm2-16gb-pt-fp32-b1-dle", "ResNet-50, PyTorch, V100, batch 1: 10.37 ms over 159 operators",
     "cnn.hpp: eager-framework host time per operator (CNN training)",
     "cnn-training vision-inference"},
    {I::transpose_elements_per_sm_clock, "kTransposeElementsPerSmClock", 1.7, "elements per SM per clock", B::fit,
     "rn50-h100-sxm-80gb-amp-fp16-nchw-b256-here rn50-h100-sxm-80gb-amp-fp16-nhwc-b256-here",
     "the NCHW / channels-last pair measured here on one H100 (94.8 vs 54.2 ms per step)",
     "cnn.hpp: layout transposes around tensor-core convolutions",
     "cnn-training vision-inference"},
    {I::shared_datapath_fp32_share, "kSharedDatapathFp32Share", 0.66, "fraction of the fp32 datasheet peak", B::fit,
     "rn50-rtx-3090-fp32-1g-lambda-pt", "ResNet-50 fp32 training on one RTX 3090 (Lambda)",
     "cnn.hpp: CUDA-core convolutions on GA10x / Ada",
     "cnn-training vision-inference"},
    {I::kernel_gpu_floor_seconds, "kKernelGpuFloorSeconds", 3.9e-6, "s per kernel", B::fit,
     "rn50-l4-trt-int8-b1-singlestream-mlperf-v30", "ResNet-50 INT8 batch 1 on an L4: 0.362 ms over 57 kernels",
     "cnn.hpp: GPU-side launch and drain per kernel (CNN and vision inference)",
     "cnn-training vision-inference llm-serving"},
    {I::kernel_launch_seconds, "kKernelLaunchSeconds", 5e-6, "s per kernel", B::publication, "",
     "NVIDIA, 'Getting Started with CUDA Graphs' (2019): a few microseconds per short kernel; 5 us assumed",
     "serving.hpp: launch time in the bare roofline (no engine profile)",
     "cnn-training vision-inference llm-serving"},
    {I::triton_request_overhead_seconds, "kTritonRequestOverheadSeconds", 1.54e-3, "s per request", B::fit,
     "rn50-a100-sxm-80gb-ort-trt-fp16-b1-triton", "Triton ResNet-50 at batch 1 (2.128 ms), DeepLearningExamples",
     "serving.hpp: Triton per-request cost (vision inference)",
     "vision-inference"},
    {I::triton_payload_bytes_per_second, "kTritonPayloadBytesPerSecond", 0.96e9, "B/s", B::fit,
     "rn50-a100-sxm-80gb-ort-trt-fp16-b128-triton", "Triton ResNet-50 at batch 128 (48.1 ms), DeepLearningExamples",
     "serving.hpp: Triton input payload rate (vision inference)",
     "vision-inference"},
    {I::tf_input_seconds_per_image, "kTfInputSecondsPerImage", 2.83e-3, "CPU s per image", B::fit,
     "rn50-a100-sxm-40gb-tf-amp-fp16-b64-dle", "TensorFlow ResNet-50 at batch 64 on a DGX A100: 18.14 ms per batch",
     "serving.hpp: tf.data input pipeline (vision inference)",
     "vision-inference"},
    {I::process_context_bytes, "kProcessContextBytes", 0.5e9, "B per process", B::undeclared, "",
     "undeclared: no fit rows. The order of a PyTorch/Triton process's CUDA context on A100/H100 (nvidia-smi), "
     "not a recorded measurement",
     "serving.hpp: memory of each MPS / time-sliced process",
     "cnn-training vision-inference llm-serving"},
    {I::time_slice_seconds, "kTimeSliceSeconds", 2e-3, "s", B::undeclared, "",
     "undeclared: no fit rows. NVIDIA does not publish the time-slice length; assumed",
     "serving.hpp: GPU time-slicing",
     "cnn-training vision-inference llm-serving"},
    {I::context_switch_seconds, "kContextSwitchSeconds", 25e-6, "s per switch", B::undeclared, "",
     "undeclared: no fit rows. NVIDIA does not publish the context-switch cost; assumed",
     "serving.hpp: GPU time-slicing",
     "cnn-training vision-inference llm-serving"},
    {I::llm_layer_overhead_seconds, "kLayerOverheadSeconds", 60e-6, "s per layer per step", B::fit,
     "trtllm014-online-llama-31-70b-h100-bf16-tp4-i467-o256-qps2-itl "
     "trtllm014-online-llama-31-8b-h100-bf16-tp1-i467-o256-qps4-itl",
     "low-load decode latencies of TensorRT-LLM 0.14 on H100 (Triton backend tables)",
     "serving_llm.hpp: fixed cost per layer and step (LLM serving)",
     "llm-serving"},
    {I::llm_engine_step_overhead_seconds, "kEngineStepOverheadSeconds", 0.8e-3, "s per step", B::fit,
     "trtllm014-online-llama-31-70b-h100-bf16-tp4-i467-o256-qps2-itl "
     "trtllm014-online-llama-31-8b-h100-bf16-tp1-i467-o256-qps4-itl",
     "low-load decode latencies of TensorRT-LLM 0.14 on H100 (Triton backend tables)",
     "serving_llm.hpp: host cost per engine step (LLM serving)",
     "llm-serving"},
    {I::hopper_token_rows_half_saturation_dim, "kHopperTokenRowsHalfSaturationDim", 40.0, "GEMM rows (tokens)",
     B::measurement, "",
     "capsim-calibrate GEMMs on one H100 SXM and one H200 SXM (data/calibration/h100-sxm-80gb-2026-11-26-sustained.json, "
     "h200-sxm-141gb-2026-11-26.json): m x 8192 x 8192 at m = 256; no validation row used",
     "serving_llm.hpp: decode GEMM rows on Hopper",
     "llm-serving"},
    {I::default_intra_node_latency_seconds, "kDefaultIntraNodeLatencySeconds", 2e-6, "s per message",
     B::publication, "", "Li et al., IEEE TPDS 2020: a few microseconds GPU to GPU through NVSwitch (DGX-2)",
     "cluster.hpp: NVLink latency where the catalog has none"},
    {I::default_inter_node_latency_seconds, "kDefaultInterNodeLatencySeconds", 5e-6, "s per message",
     B::publication, "", "HDR switch and ConnectX-6 briefs (< 1 us on the wire) plus NCCL's proxy steps (nccl-tests)",
     "cluster.hpp: network latency where the catalog has none"},
    {I::default_pcie_latency_seconds, "kDefaultPcieLatencySeconds", 1e-6, "s per message", B::publication, "",
     "Neugebauer et al., SIGCOMM 2018: ~0.5-1 us per PCIe DMA round trip",
     "cluster.hpp: PCIe latency where the catalog has none"},
}};

constexpr std::array<double, kModelConstantCount> initial_values() {
  std::array<double, kModelConstantCount> v{};
  for (const auto& c : kRegistry) v[static_cast<std::size_t>(c.id)] = c.value;
  return v;
}

constexpr bool ids_in_order() {
  for (std::size_t i = 0; i < kRegistry.size(); ++i)
    if (static_cast<std::size_t>(kRegistry[i].id) != i) return false;
  return true;
}
static_assert(ids_in_order(), "kRegistry lists every ConstantId once, in enum order");

}  // namespace

namespace detail {
constinit thread_local std::array<double, kModelConstantCount> constant_values = initial_values();
}  // namespace detail

std::string_view constant_basis_name(ConstantBasis b) {
  switch (b) {
    case ConstantBasis::fit: return "fit";
    case ConstantBasis::measurement: return "measurement";
    case ConstantBasis::publication: return "publication";
    case ConstantBasis::undeclared: return "undeclared";
  }
  return "undeclared";
}

std::span<const ModelConstant> model_constants() { return kRegistry; }

const ModelConstant& model_constant(ConstantId id) {
  const auto i = static_cast<std::size_t>(id);
  if (i >= kRegistry.size()) throw std::out_of_range("model_constant: no such constant");
  return kRegistry[i];
}

ScopedConstantScale::ScopedConstantScale(ConstantId id, double factor)
    : id_(id), saved_(detail::constant_values[static_cast<std::size_t>(id)]) {
  detail::constant_values[static_cast<std::size_t>(id)] = saved_ * factor;
}

ScopedConstantScale::~ScopedConstantScale() { detail::constant_values[static_cast<std::size_t>(id_)] = saved_; }

}  // namespace capsim::models
