// The analytic training step-time model: how long one optimizer step of a transformer
// takes on a cluster for a given parallel layout, and why.
//
// The step is built from per-operation rooflines on one GPU (dense tensor-core peak for
// the precision with a size-dependent GEMM efficiency, HBM bandwidth for element-wise
// work) plus alpha-beta collectives (collectives.hpp) for tensor, pipeline and data
// parallelism. The formulas and their sources are in performance.cpp; the physical
// constants are below, one set for all GPUs. When the GPU carries calibrated figures
// (hardware::GpuSpec::measured, from capsim-calibrate), the GEMM curve fitted to the
// measured points replaces kGemmMaxEfficiency x peak and kGemmHalfSaturationDim for that
// precision, and the measured triad bandwidth replaces peak x kMemoryBandwidthEfficiency.
//
// Attention runs as the scenario says (TrainingOptions::attention): fused flash kernels by
// default (causal: half the score blocks computed; backward recomputes the scores), or
// eager, as Megatron-LM 2021 ran it: score and value GEMMs plus a softmax and dropout that
// stream the s x s score matrix through HBM.
//
// estimate_training_step is the hot function of the sizing search: it allocates nothing,
// builds no strings and throws nothing on success (errors for invalid layouts do
// allocate their message); the search passes it the GPU's rates prepared once per node
// type (prepare_training_devices). All functions are pure and thread-safe.
#pragma once

#include <optional>
#include <string_view>

#include "capsim/models/constants.hpp"
#include "capsim/core/result.hpp"
#include "capsim/core/units.hpp"
#include "capsim/models/cluster.hpp"
#include "capsim/models/parallelism.hpp"
#include "capsim/models/workload.hpp"

namespace capsim::models {

// --- Physical constants of the model ------------------------------------------------

// Highest fraction of the dense tensor-core peak a large GEMM sustains inside a training
// step. cuBLAS reaches ~80-88 % of peak in isolated large fp16 GEMMs on A100, less under
// the power cap with other kernels running; 0.72 (225 of 312 TFLOP/s on A100) is the
// value that, together with kGemmHalfSaturationDim, reproduces Megatron-LM's Table 1
// (Narayanan et al., SC'21) to 2.4 % mean error with one setting for all ten rows.
// kGemmMaxEfficiency: read from the registry, capsim/models/constants.hpp (value, unit, basis).
// The same ceiling on Hopper and Blackwell, chosen on the validation rows marked fit: true
// for Hopper in data/validation (MosaicML MPT-7B and MPT-70B, IBM/Meta FSDP 70B, Megatron-Core
// GPT 1.7B, all on H100): 0.57 of the 989 TFLOP/s datasheet peak, together with the
// Hopper half-saturation dimension (twice A100's, see tensor_rate_per_sm in
// performance.cpp). It stays below A100's 0.72 because H100 SXM runs its tensor cores
// below the datasheet's boost clock under the 700 W cap in a training step; rows on
// other Hopper stacks and on H200/B200 are held out.
// kGemmMaxEfficiencyHopper: read from the registry, capsim/models/constants.hpp (value, unit, basis).
// GEMM dimension at which that dimension alone halves the efficiency. Efficiency is
//   kGemmMaxEfficiency * prod_{d in M,N,K} d / (d + kGemmHalfSaturationDim),
// a smooth saturating function of the three GEMM dimensions (symmetric, so forward,
// data-gradient and weight-gradient GEMMs of the same layer are treated alike). 96 is
// between one half and one of the 128- and 256-wide thread-block tiles of Ampere/Hopper
// tensor-core kernels (CUTLASS): a dimension of about one tile leaves much of the tile
// idle in the last wave.
// kGemmHalfSaturationDim: read from the registry, capsim/models/constants.hpp (value, unit, basis).
// FP8 GEMMs with row-wise scales (torchao's rowwise recipe on H100: a CUTLASS kernel that
// applies the row and column scales in its epilogue in forward; in backward, where it is
// slow without fast accumulation, the tensor-wise cuBLAS kernel plus a separate rescale of
// the output, torchao/float8/float8_ops.py addmm_float8_unwrapped) reach the same ceiling
// but saturate at three times the tensor-wise half-saturation dimension. Chosen on torchao's
// own rowwise microbenchmark (LayerNorm -> Linear -> Sigmoid, forward + backward, speedup
// over bf16, H100; docs/static/fp8-rowwise-perf.png, PR pytorch/ao#2312, June 2025): with
// this model's element-wise, cast and rescale bytes, 3x reproduces its seven points from
// (1024, 2048, 1024) -> 0.40x to 16384^3 -> 1.42x at 4 % mean error, where 1x (tensor-wise
// kernels) predicts 0.79x and 1.67x -- the tensor-wise table's own 0.80x and 1.39x at
// those sizes. No validation row was used.
// kRowwiseFp8HalfSaturationFactor: read from the registry, capsim/models/constants.hpp (value, unit, basis).
// Row-wise scales are taken along different axes for forward and backward, so nothing a
// forward cast writes serves the backward: torchao's roofline model counts 8 B per element
// of an input or an output gradient and 10 B per weight element over forward + backward,
// against 6 and 8 with one scale per tensor (torchao/testing/training/roofline_utils.py,
// get_tensor_memory_traffic_ovhd_s). Over what the model charges tensor-wise casts (inputs
// 6 B, output gradients 3 B, weights 6 B) that is 2, 5 and 4 B more; and each backward
// GEMM's output is rescaled in a separate pass (read and write 16 bits: 4 B per element).
struct RowwiseFp8ExtraCastBytes {
  double input = 2.0, output_gradient = 5.0, weight = 4.0, backward_rescale = 4.0;
};
inline constexpr RowwiseFp8ExtraCastBytes kRowwiseFp8ExtraCastBytes{};
// Dense 16-bit tensor-core FLOPs per clock per SM of GA100, the GPU kGemmHalfSaturationDim
// was chosen on: 312 TFLOP/s on 108 SMs at 1.41 GHz (NVIDIA A100 Tensor Core GPU
// Architecture whitepaper, 2020), about 1,024 FMA per clock per SM.
inline constexpr double kReferenceFlopsPerClockPerSm = 312e12 / (108 * 1.41e9);
// The GPU's dense 16-bit FLOPs per clock per SM over GA100's (kReferenceFlopsPerClockPerSm),
// and the half-saturation dimension of its GEMMs at precision p: kGemmHalfSaturationDim
// times that rate, doubled for 8-bit operands (performance.cpp says why).
double tensor_rate_per_sm(const hardware::GpuSpec& gpu);
double gemm_half_saturation_dim(const hardware::GpuSpec& gpu, Precision p);
// A GEMM ceiling (a fraction of the dense peak at `precision`) never above the published
// measured maximum where the catalog has one (GpuSpec::max_achievable); every model that
// times GEMMs passes its ceiling through here.
double capped_gemm_ceiling(const hardware::GpuSpec& gpu, std::string_view precision, double ceiling);
// The GPU generation's GEMM ceiling before that cap: kGemmMaxEfficiencyHopper on Hopper and
// Blackwell, kGemmMaxEfficiency before them. Training, serving and vision all take it from here.
bool hopper_or_newer(const hardware::GpuSpec& gpu);
double generation_gemm_ceiling(const hardware::GpuSpec& gpu);
// Fraction of HBM peak that streaming element-wise kernels achieve (BabelStream on A100
// and H100 reports 80-90 % of the datasheet bandwidth).
// kMemoryBandwidthEfficiency: read from the registry, capsim/models/constants.hpp (value, unit, basis).
// Streaming bandwidth: the calibration profile's triad where one is imported, else the
// datasheet's at kMemoryBandwidthEfficiency (measured beats datasheet).
double streaming_bandwidth(const hardware::GpuSpec& gpu);
// Where a data-parallel group of `data` ranks sits: Megatron orders ranks tensor-fastest,
// then data, then pipeline, so the replicas of one shard are `stride` (t) ranks apart and a
// node of gpus_per_node GPUs holds gpus_per_node / stride of them (at least one).
struct GroupPlacement {
  int in_node = 1;
  int nodes = 1;
};
GroupPlacement data_parallel_placement(int data, int stride, int gpus_per_node);
// Tensor cores for 16-bit matrix math: Volta and every later generation.
bool has_16bit_tensor_cores(const hardware::GpuSpec& gpu);
// Communication that overlaps compute still costs some of it: NCCL runs one thread block
// per channel, and with 16-32 channels on NVLink/InfiniBand systems it holds 12-24 % of an
// H100's 132 SMs (and HBM bandwidth) while the layer computes. The compute under a hidden
// collective is charged this fraction of the collective's time (ZeRO-3/FSDP gathers and
// reduce-scatters, the gradient all-reduce).
// kOverlapComputeSlowdown: read from the registry, capsim/models/constants.hpp (value, unit, basis).
// The host issues every kernel of a layer (Python, the framework's dispatch, the CUDA
// launch); when a layer's GPU work for one micro-batch takes less than that, the GPU waits
// on the host. A mixture-of-experts layer issues several times a dense layer's kernels:
// the router, the token dispatcher (Megatron-Core's all-to-all dispatcher copies the
// per-expert token counts to the host, a device-to-host sync that stops the host running
// ahead), the permutations, and each local expert's GEMMs and FP8 casts. Megatron-Bridge's
// MoE guide names "small expert GEMMs + host overhead" as the compute wall of MoE training
// and "increase MBS" or CUDA graphs as the fix (docs/training/moe-optimization.md).
// Host time of one MoE layer's forward and backward for one micro-batch, a third of it
// the forward's (the backward issues a data- and a weight-gradient kernel for each forward
// GEMM, as the step's FLOPs split 1:2): CHOSEN on the training row bridge-2511-qwen3-30b-a3b-b200-8g-fp8 (fit:
// true; Qwen3-30B-A3B at micro-batch 1 on 8 B200, 9,299 tokens/s per GPU, where the same
// model at micro-batch 4 runs 27,136). Dense layers are not floored: no row shows it.
// kMoeLayerHostSeconds: read from the registry, capsim/models/constants.hpp (value, unit, basis).
// kMoeLayerHostForwardShare: read from the registry, capsim/models/constants.hpp (value, unit, basis).
// Data-parallel gradient all-reduce overlaps with the backward pass, bucket by bucket
// (PyTorch DDP, Li et al., VLDB 2020; Megatron-LM's overlapped grad reduce): only the
// last bucket, or what does not fit under the last micro-batch's backward, is exposed.
// 25 MB is PyTorch DDP's default bucket_cap_mb.
inline constexpr double kGradientBucketBytes = 25e6;
// A mixture-of-experts router writes fp32 logits, which the softmax reads and rewrites and
// the top-k reads: 16 bytes per token and expert.
inline constexpr double kRouterLogitBytes = 16.0;
// Adam with mixed precision touches per parameter: fp32 master weight, m and v read and
// written (24 B), the fp32 gradient read (4 B) and the 16-bit weight copy written (2 B).
// Without mixed precision: w, m, v, g read (16 B) and w, m, v written (12 B).
inline constexpr double kAdamBytesPerParamMixed = 30.0;
inline constexpr double kAdamBytesPerParamFp32 = 28.0;
// Fused attention kernels reach a lower fraction of the tensor-core peak than large GEMMs
// (softmax and masking between the two matrix products, the head dimension as the inner
// GEMM size), and it depends on the kernel generation and the GPU. Fractions of the dense
// 16-bit peak, forward and backward (backward recomputes the scores: 2.5 forwards of FLOPs):
// - fa2 before Hopper: Dao, "FlashAttention-2", 2023, Fig. 5-6 (A100, head dim 128, causal,
//   seq 2k-16k): ~180-200 TFLOP/s forward and ~150-170 backward of 312 -> 0.6 and 0.5.
// - fa1: the same paper (abstract, sec. 1): FlashAttention reaches "only 25-40% of the
//   theoretical maximum FLOPs/s" -> 0.4 forward, 0.3 backward (backward is the slower).
// - fa2 on Hopper and newer: Shah et al., "FlashAttention-3", 2024 (abstract): FA2 achieves
//   "only 35% utilization on the H100" -> 0.35 forward, 0.3 backward.
// - fa3 (or cuDNN fused attention), Hopper and newer: the same paper reports 1.5-2.0x FA2's
//   forward and 1.5-1.75x its backward on H100 -> 0.6 and 0.5.
struct FlashEfficiency {
  double forward;
  double backward;
};
// The four measured pairs are read from the registry (constants.hpp).
inline FlashEfficiency flash_ampere_fa2() {
  return {constant(ConstantId::flash_ampere_fa2_forward), constant(ConstantId::flash_ampere_fa2_backward)};
}
inline FlashEfficiency flash_fa1() {
  return {constant(ConstantId::flash_fa1_forward), constant(ConstantId::flash_fa1_backward)};
}
inline FlashEfficiency flash_hopper_fa2() {
  return {constant(ConstantId::flash_hopper_fa2_forward), constant(ConstantId::flash_hopper_fa2_backward)};
}
inline FlashEfficiency flash_hopper_fa3() {
  return {constant(ConstantId::flash_hopper_fa3_forward), constant(ConstantId::flash_hopper_fa3_backward)};
}
// fa1 on Hopper runs Ampere's mma.sync path like fa2 does: scaled by fa2's Hopper/Ampere ratio.
inline FlashEfficiency flash_hopper_fa1() {
  return {flash_fa1().forward * flash_hopper_fa2().forward / flash_ampere_fa2().forward,
          flash_fa1().backward * flash_hopper_fa2().backward / flash_ampere_fa2().backward};
}

// The loss: logits [tokens x vocab] are upcast to fp32 for a numerically stable
// cross-entropy (PyTorch F.cross_entropy on .float() logits; Megatron-LM's vocab-parallel
// cross-entropy in fp32). Bytes per logit element: forward cast (read 2, write 4),
// log-softmax with its max and sum passes (read 4 x 2, write 4); backward softmax gradient
// (read 4, write 4) and the cast back (read 4, write 2).
inline constexpr double kLossBytesForward = 18.0;
inline constexpr double kLossBytesBackward = 14.0;

// --- Results -------------------------------------------------------------------------

// The parts of one optimizer step on the slowest pipeline stage; they add up to
// step_time (nothing is counted twice, overlapped work is counted only where exposed).
struct StepBreakdown {
  Seconds compute;                     // forward + backward GEMMs and element-wise kernels
  Seconds recompute;                   // activation recomputation (selective or full)
  Seconds tensor_parallel_comm;        // TP all-reduces (or SP all-gather/reduce-scatter), not overlapped
  Seconds pipeline_bubble;             // (p-1)/(m v) idle time plus point-to-point activation sends
  Seconds data_parallel_comm_exposed;  // gradient all-reduce not hidden under backward
  Seconds zero_comm;                   // ZeRO-3 / FSDP per-layer all-gathers and reduce-scatters not hidden
  Seconds context_parallel_comm;       // ring-attention K/V exchange not hidden under attention
  Seconds expert_parallel_comm;        // MoE all-to-all dispatch and combine (not overlapped)
  Seconds host_overhead;               // GPU idle while the host issues a layer's kernels
  Seconds optimizer;                   // optimizer step, memory-bound on its states
  Seconds data_loading;                // exposed host-to-device input transfer
};

// The largest part of the step: the constraint to elevate.
enum class Bottleneck {
  compute,
  recompute,
  tensor_parallel_comm,
  pipeline_bubble,
  data_parallel_comm,
  zero_comm,
  context_parallel_comm,
  expert_parallel_comm,
  host_overhead,
  optimizer,
  data_loading,
};
std::string_view bottleneck_name(Bottleneck b);  // "tensor_parallel_comm"

struct TrainingEstimate {
  Seconds step_time;
  double tokens_per_second = 0;  // samples per second for estimate_sample_model_step
  // Model FLOPs per GPU per second including recompute FLOPs (how Megatron-LM reports
  // "achieved TFLOP/s per GPU").
  FlopsPerSecond achieved_flops_per_gpu;
  // Model FLOPs utilization: FLOPs of forward + backward without recompute, over the
  // dense peak of all GPUs for the step (Chowdhery et al., PaLM, 2022, appendix B).
  double mfu = 0;
  StepBreakdown breakdown;
  Bottleneck bottleneck = Bottleneck::compute;
  // The data-parallel gradient all-reduce before overlap: its size per GPU and its time.
  Bytes gradient_bytes_per_gpu;
  // ZeRO-1/2: the distributed optimizer's all-gather of the updated 16-bit parameters
  // after the gradients' reduce-scatter (0 otherwise).
  Bytes parameter_gather_bytes_per_gpu;
  Seconds data_parallel_all_reduce;
  // ZeRO-3 / FSDP: every per-layer all-gather and reduce-scatter of the step before overlap,
  // one such all-gather of one layer, and the ranks they run over.
  Seconds zero_comm_total;
  Seconds zero_layer_all_gather;
  int zero_ranks = 0;
  // Layers on the slowest pipeline stage (uneven when p does not divide the layers).
  int stage_layers = 0;
  // The per-micro-batch terms the breakdown is built from (slowest stage), for reports
  // that show the arithmetic (capsim estimate).
  double microbatches = 0;
  Seconds forward_per_microbatch, backward_per_microbatch, recompute_per_microbatch;
  Seconds tensor_parallel_per_microbatch, point_to_point_per_microbatch;
  Seconds zero_layer_reduce_scatter;
  // Mixture of experts: the routing part of forward + backward (token permutations and the
  // router), already inside forward_per_microbatch and backward_per_microbatch.
  Seconds moe_routing_per_microbatch;
  double optimizer_params_per_gpu = 0;
  // True when calibrated figures were used: the GPU's fitted GEMM curve for the compute
  // precision or its measured memory bandwidth (GpuSpec::measured), or measured link
  // figures (ClusterSpec::calibrated). False: datasheet figures and the constants above.
  bool calibrated = false;
};

// Collective times measured elsewhere (the SimGrid fabric) that replace the analytic
// alpha-beta formula; the overlap rules stay the model's.
struct CollectiveOverrides {
  std::optional<Seconds> data_parallel_all_reduce;  // one gradient all-reduce per step
};

// HBM bytes one GPU moves to route one micro-batch through one mixture-of-experts layer in
// forward (backward moves the gradients through the same passes), as Megatron-Core's
// all-to-all token dispatcher runs it (megatron/core/transformer/moe/token_dispatcher.py,
// MoEAlltoAllTokenDispatcher), for k = experts_per_token and h = hidden, act bytes each:
//   permute      this GPU's tokens (its sequence-parallel share) gathered into expert
//                order, k copies each: read 1, write k vectors per token
//   sort chunks  the rows received from the all-to-all (and the TP all-gather), k per token
//                of the micro-batch, reordered by local expert when the GPU holds more
//                than one: read + write; unsort after the experts the same
//   unpermute    the k outputs summed with the router's weights: read k, write 1
// plus the router's fp32 logits (kRouterLogitBytes per token and expert). Routing is
// taken as balanced. 0 for a dense model.
double moe_routing_bytes(const TransformerShape& shape, const Parallelism& par, double activation_bytes);

// One GPU at one compute precision as the step model uses it, from datasheet or calibrated
// figures (hardware::GpuSpec::measured).
struct TrainingDevice {
  double peak;        // FLOP/s, dense datasheet peak at the compute precision (for MFU)
  double gemm_peak;   // FLOP/s the GEMM curve scales: the datasheet peak, or the fitted ceiling
  double gemm_max_efficiency;  // kGemmMaxEfficiency, or 1 for a fitted curve (in its ceiling)
  double gemm_half_dim;        // kGemmHalfSaturationDim, or the fitted value
  double bandwidth;   // achievable HBM bytes/s
  double operand;     // bytes per GEMM operand element
  bool calibrated;    // any of the above came from a calibration profile
  bool hopper_or_newer;  // warpgroup tensor-core kernels (FlashAttention-3 and its peers)
  double clock;       // sustained clock / boost clock under the power limit (1: at TDP)
};

// A cluster's GPU at a training compute precision, and at 16 bits for what FP8 recipes keep
// there (attention, the output layer, element-wise work; the same as `compute` otherwise).
// The catalog keys its peaks by name, so reading them is the costliest part of a step
// estimate: a search over layouts on one cluster prepares this once.
// Errors: a GPU without a dense peak for the precision (or for bf16 under FP8).
struct TrainingDevices {
  TrainingDevice compute, sixteen_bit;
};
Result<TrainingDevices> prepare_training_devices(const ClusterSpec& cluster, Precision compute);

// One optimizer step of global_batch sequences of shape.seq_len tokens.
// Layers need not divide evenly over pipeline stages: the busiest stage holds
// ceil(layers / (p v)) layers per chunk, the last stage fewer plus the output layer (as
// Llama 3 405B ran 126 layers on 16 stages).
// Errors (each names the offending value): degrees < 1; more GPUs than one node without a
// network; tensor > gpus_per_node; heads, kv_heads or ffn_hidden not divisible by tensor;
// fewer layers than pipeline * interleave chunks; global_batch not divisible by
// micro_batch * data; interleave > 1 without pipeline > 1; zero_stage outside 0-3; a shard
// group that does not divide d; context parallelism that does not divide seq_len; expert
// parallelism on a dense model or not dividing the experts or d x cp; a GPU without a
// dense peak for options.compute; a shape with a non-positive dimension.
Result<TrainingEstimate> estimate_training_step(const TransformerShape& shape, const Parallelism& par,
                                                const ClusterSpec& cluster,
                                                const TrainingOptions& options,
                                                const CollectiveOverrides* overrides = nullptr);
// The same with the devices prepared for this cluster and options.compute
// (prepare_training_devices(cluster, options.compute)).
Result<TrainingEstimate> estimate_training_step(const TransformerShape& shape, const Parallelism& par,
                                                const ClusterSpec& cluster, const TrainingOptions& options,
                                                const TrainingDevices& devices,
                                                const CollectiveOverrides* overrides = nullptr);

// A whole run of `tokens` training tokens: steps = tokens / (global_batch * seq_len).
// Errors: tokens <= 0, and those of estimate_training_step.
struct TrainingRun {
  TrainingEstimate step;
  double steps = 0;
  Seconds total_time;
  double gpu_hours = 0;
};
Result<TrainingRun> estimate_training_run(const TransformerShape& shape, const Parallelism& par,
                                          const ClusterSpec& cluster, const TrainingOptions& options,
                                          double tokens);

// CNN or other per-sample model, data-parallel over `gpus` GPUs with batch_per_gpu
// samples each: forward + backward = 3 forwards at the GEMM efficiency of a large
// convolution (kGemmMaxEfficiency), plus 3 passes of the activation bytes over HBM for
// the element-wise layers (separate kernels, so the times add); ring/hierarchical
// gradient all-reduce overlapped as above; input transfer over PCIe overlapped with
// compute (prefetch). tokens_per_second holds samples per second.
Result<TrainingEstimate> estimate_sample_model_step(const SampleModel& model, int batch_per_gpu,
                                                    int gpus, const ClusterSpec& cluster,
                                                    const TrainingOptions& options);

}  // namespace capsim::models
