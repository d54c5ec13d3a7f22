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
// allocate their message). All functions are pure and thread-safe.
#pragma once

#include <optional>
#include <string_view>

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
inline constexpr double kGemmMaxEfficiency = 0.72;
// The same ceiling on Hopper (H100, H200), chosen on the validation rows marked fit: true
// for Hopper in data/validation (MosaicML MPT-7B/70B and IBM/Meta FSDP 13B/70B on H100):
// 0.50 of the 989 TFLOP/s datasheet peak. It is a constant, not a derivation: it absorbs
// what the model does not take apart on Hopper -- clocks below the datasheet's boost
// under the 700 W cap, and 2023-24 kernels (FlashAttention-2, unfused element-wise work)
// that do not use Hopper's wgmma/TMA paths. Rows on other Hopper setups are held out.
inline constexpr double kGemmMaxEfficiencyHopper = 0.50;
// GEMM dimension at which that dimension alone halves the efficiency. Efficiency is
//   kGemmMaxEfficiency * prod_{d in M,N,K} d / (d + kGemmHalfSaturationDim),
// a smooth saturating function of the three GEMM dimensions (symmetric, so forward,
// data-gradient and weight-gradient GEMMs of the same layer are treated alike). 96 is
// between one half and one of the 128- and 256-wide thread-block tiles of Ampere/Hopper
// tensor-core kernels (CUTLASS): a dimension of about one tile leaves much of the tile
// idle in the last wave.
inline constexpr double kGemmHalfSaturationDim = 96.0;
// Fraction of HBM peak that streaming element-wise kernels achieve (BabelStream on A100
// and H100 reports 80-90 % of the datasheet bandwidth).
inline constexpr double kMemoryBandwidthEfficiency = 0.8;
// Data-parallel gradient all-reduce overlaps with the backward pass, bucket by bucket
// (PyTorch DDP, Li et al., VLDB 2020; Megatron-LM's overlapped grad reduce): only the
// last bucket, or what does not fit under the last micro-batch's backward, is exposed.
// 25 MB is PyTorch DDP's default bucket_cap_mb.
inline constexpr double kGradientBucketBytes = 25e6;
// Adam with mixed precision touches per parameter: fp32 master weight, m and v read and
// written (24 B), the fp32 gradient read (4 B) and the 16-bit weight copy written (2 B).
// Without mixed precision: w, m, v, g read (16 B) and w, m, v written (12 B).
inline constexpr double kAdamBytesPerParamMixed = 30.0;
inline constexpr double kAdamBytesPerParamFp32 = 28.0;
// Fused attention kernels reach a lower fraction of the tensor-core peak than large GEMMs
// (softmax and masking between the two matrix products, small head dimension as the inner
// GEMM size). Dao, "FlashAttention-2", 2023, Fig. 5-6 (A100, head dim 128, causal, seq
// 2k-16k): ~180-200 TFLOP/s forward and ~150-170 TFLOP/s backward of 312: 0.6 and 0.5.
inline constexpr double kFlashForwardEfficiency = 0.6;
inline constexpr double kFlashBackwardEfficiency = 0.5;

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
