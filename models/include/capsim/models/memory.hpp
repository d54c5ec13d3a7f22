// Memory rules: how many bytes a model needs per GPU to train or to serve.
//
// Two levels, both shown to users with their arithmetic:
//   - the simple rule people quote (4 B/param to hold fp32 weights, 24 B/param to train);
//   - the detailed rules: mixed precision, ZeRO stages, tensor/pipeline/sequence
//     parallelism, activation recompute (Korthikanti et al. 2022), KV cache, LoRA/QLoRA
//     and weight quantization.
//
// All functions are pure and thread-safe. Sizes are decimal (1 GB = 1e9 B) in `formulas`.
// Preconditions (checked by the scenario loader, not here): parallel degrees >= 1,
// zero_stage in 0..3, shapes with layers, hidden, heads, kv_heads >= 1.
#pragma once

#include <string>
#include <vector>

#include "capsim/models/constants.hpp"
#include "capsim/core/units.hpp"
#include "capsim/models/parallelism.hpp"
#include "capsim/models/workload.hpp"

namespace capsim::models {

struct MemoryBreakdown {
  Bytes weights, gradients, optimizer, activations, kv_cache, overhead;
  Bytes total() const;
  std::string rule;                   // "simple" or "detailed"
  std::vector<std::string> formulas;  // one line per non-zero component, with its numbers, e.g.
  // "weights = 2 B/param (bf16) x 7.00e9 params / (t=1 x p=1) = 14.0 GB"
};

enum class SimpleMode { inference, training };

// The rules users quote: inference 4 B/param fp32 (2 fp16/bf16, 1 int8/fp8, 0.5 int4);
// training 24 B/param = 4 weights + 8 optimizer + 4 gradients + 8 activations (precision is
// ignored for training). No overhead.
MemoryBreakdown simple_rule(double params, SimpleMode mode, Precision precision = Precision::fp32);

// Model states per GPU from the ZeRO paper (Rajbhandari et al. 2020, Figure 1) with Ψ params,
// Nd data-parallel GPUs and K optimizer bytes per param (12 for mixed-precision Adam):
// stage 0: (2+2+K)Ψ; 1: 2Ψ+2Ψ+KΨ/Nd; 2: 2Ψ+(2+K)Ψ/Nd; 3: (2+2+K)Ψ/Nd. No activations.
MemoryBreakdown zero_model_states(double params, int data_parallel, int zero_stage,
                                  double optimizer_bytes_per_param = 12);

// Per-GPU training memory of a transformer (the first pipeline stage, the fullest one):
//   - model states: mixed precision keeps weights and gradients at the compute precision,
//     Adam m and v in fp32 and an fp32 master copy when the weights are narrower than fp32
//     (bf16: 2 + 2 + 12 B/param); without mixed precision everything is at the compute
//     precision (fp32: 4 + 4 + 8). Sharded by t x p, then over d by the ZeRO stage.
//   - LoRA/QLoRA: frozen base weights at the compute precision (QLoRA: linear layers in
//     4-bit NF4 with double-quantized constants, embeddings at the compute precision), no
//     gradients or optimizer for them; adapters of rank r on q, k, v, o and every MLP matrix,
//     r x (d_in + d_out) params each, trained like full weights.
//   - activations: Korthikanti et al. 2022 Table 2 per layer, for the layers and in-flight
//     microbatches of the first pipeline stage, plus embedding and output-layer terms (Sec. 4.3).
//   - overhead: overhead_fraction x the sum of the rest.
MemoryBreakdown training_memory_per_gpu(const TransformerShape& shape, const Parallelism& par,
                                        const TrainingOptions& opt);
// LoRA adapter parameters of rank r (Hu et al. 2021): r x (d_in + d_out) for each adapted
// matrix, on q, k, v, o and every MLP matrix of every layer (and every expert).
double lora_adapter_parameter_count(const TransformerShape& shape, int rank);

// The same total without building the breakdown's strings: what the sizing search calls.
// Always equal to training_memory_per_gpu(...).total().
Bytes training_memory_total_per_gpu(const TransformerShape& shape, const Parallelism& par,
                                    const TrainingOptions& opt);

struct InferenceOptions {
  Precision weights = Precision::bf16;
  Precision kv_cache = Precision::bf16;
  int batch = 1;              // concurrent sequences
  int context = 0;            // tokens per sequence held in the KV cache; 0 = shape.seq_len
  int tensor = 1;             // tensor-parallel GPUs sharing the weights and the KV heads
  double overhead_fraction = kMemoryOverheadFraction();
};

// 2 (K and V) x layers x kv_heads x head_dim x bytes. Zero for encoder-only models.
Bytes kv_cache_bytes_per_token(const TransformerShape& shape, Precision kv);

// Weights / t and the KV cache of batch x context tokens, with the KV heads split over t
// (a GPU holds at least one KV head: with t > kv_heads heads are replicated).
// Transient activations are left to overhead_fraction.
MemoryBreakdown inference_memory_per_gpu(const TransformerShape& shape,
                                         const InferenceOptions& opt);

// A CNN or other sample model trained data-parallel: model states as in
// training_memory_per_gpu (full fine-tuning), activations = activation_bytes_per_sample x batch.
MemoryBreakdown sample_model_training_memory(const SampleModel& model, int batch_per_gpu,
                                             const TrainingOptions& opt);

}  // namespace capsim::models
