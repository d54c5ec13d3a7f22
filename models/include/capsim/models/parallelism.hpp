// How a training job is laid out over GPUs, and the training options that change memory
// and time. Shared by the memory rules, the performance model and the sizing search.
#pragma once

#include <string>
#include <string_view>

#include "capsim/models/constants.hpp"
#include "capsim/models/workload.hpp"

namespace capsim::models {

enum class Recompute { none, selective, full };  // Korthikanti et al. 2022
std::string_view recompute_name(Recompute r);

enum class FineTuning { full, lora, qlora };

// How attention's score matrix is computed. flash: fused kernels that never write the
// s x s scores to HBM and recompute them in backward (Dao et al., FlashAttention,
// NeurIPS 2022; FlashAttention-2, 2023) -- what every current training stack runs.
// eager: score and value GEMMs with softmax and dropout as separate kernels that keep the
// scores (Megatron-LM 2021, Korthikanti et al. 2022's 5as/h activation term).
enum class Attention { flash, eager };
std::string_view attention_name(Attention a);

// Which fused attention kernel a flash run uses; they differ in the fraction of the tensor
// peak they reach (performance.hpp, kFlashEfficiency). fa2 is what PyTorch's
// scaled_dot_product_attention and flash-attn 2 run on every GPU generation; fa3 is
// FlashAttention-3 / cuDNN fused attention (Transformer Engine), Hopper and newer only
// (older GPUs run fa2 instead); fa1 the 2022 kernels.
enum class FlashKernel { fa1, fa2, fa3 };
std::string_view flash_kernel_name(FlashKernel k);  // "fa2"

// How element-wise work is launched. fused: few kernels per layer (Megatron-LM and
// Transformer Engine's fused kernels, torch.compile); eager: PyTorch eager mode, where an
// RMSNorm, a rotary embedding or a SwiGLU is several kernels each, each a pass over HBM,
// with fp32 intermediates (performance.cpp counts the bytes).
enum class Kernels { fused, eager };
std::string_view kernels_name(Kernels k);  // "fused"

struct Parallelism {
  int tensor = 1;            // t: tensor-parallel degree (inside a node)
  int pipeline = 1;          // p: pipeline stages
  int data = 1;              // d: data-parallel replicas
  bool sequence_parallel = false;  // Megatron sequence parallelism (with t > 1)
  int interleave = 1;        // virtual pipeline stages per GPU (interleaved 1F1B when > 1)
  int micro_batch = 1;       // b: sequences per micro-batch
  int global_batch = 1;      // B: sequences per optimizer step (B = b * d * microbatches)
  int zero_stage = 0;        // 0-3 (ZeRO-DP, Rajbhandari et al. 2020)
  // ZeRO-3 / FSDP hybrid sharding: parameters sharded over groups of this many data-parallel
  // ranks and replicated across groups (FSDP HYBRID_SHARD, ZeRO++ hpZ). 0: over all d.
  int shard_group = 0;
  int context = 1;           // cp: context parallelism, the sequence split over cp ranks
                             // (ring attention; Megatron-Core context_parallel_size)
  int expert = 1;            // ep: expert parallelism for MoE layers, experts split over ep
                             // ranks of the data-parallel group (ep divides d x cp)
  Recompute recompute = Recompute::none;
  // With Recompute::full: the fraction of layers checkpointed and recomputed in backward
  // (PyTorch stacks checkpoint every k-th block: 1/k; torchtitan's "selective layer" AC
  // with its default frequency 2 is 0.5). 1: every layer (Megatron's full recompute).
  double recompute_fraction = 1.0;

  int gpus() const { return tensor * pipeline * context * data; }
  // Ranks over which ZeRO-3 shards parameters.
  int sharding_ranks() const { return shard_group > 0 ? shard_group : data; }
  int microbatches() const { return global_batch / (micro_batch * data); }
};

// Layers per pipeline stage when p does not divide them: every stage but the first and the
// last holds ceil(L / p); the first and last share what remains (the last also runs the
// output layer), as Llama 3 405B ran 126 layers on 16 stages (Llama Team 2024, sec. 3.3.2:
// one layer fewer on the first and on the last stage). When p divides L, L / p each.
struct StageLayers {
  int middle = 0;  // the busiest stages
  int first = 0;
  int last = 0;
};
StageLayers stage_layers(int layers, int pipeline);
inline int first_stage_layers(int layers, int pipeline) { return stage_layers(layers, pipeline).first; }

// "t=4 p=2 v=2 d=256 mb=1 zero=1 recompute=selective": the layout as the search and the
// reports print it; v, cp, ep, no-sp and the shard group appear only when they are not
// the default.
std::string describe_layout(const Parallelism& par);

struct TrainingOptions {
  Precision compute = Precision::bf16;     // precision of matrix math and weights copy
  bool mixed_precision = true;             // fp32 master weights + Adam states (16 B/param)
  FineTuning fine_tuning = FineTuning::full;
  int lora_rank = 16;                      // LoRA/QLoRA adapter rank
  double overhead_fraction = kMemoryOverheadFraction();         // framework + fragmentation, stated and adjustable
  Attention attention = Attention::flash;  // attention kernels (memory and compute)
  FlashKernel flash_kernel = FlashKernel::fa2;  // with Attention::flash
  Kernels kernels = Kernels::fused;        // element-wise kernels
  // Tensor-parallel all-gathers and reduce-scatters split into chunks that run under the
  // neighbouring linear layers' GEMMs (Transformer Engine's --tp-comm-overlap, PyTorch's
  // async TP); without it they sit between the GEMMs, exposed.
  bool tp_comm_overlap = false;
  // With tp_comm_overlap: the backward pass's collectives overlap too (Transformer Engine's
  // userbuffers overlap the data- and weight-gradient GEMMs' all-gathers and
  // reduce-scatters). PyTorch's async TP (torch.compile's micro-pipeline TP, torchtitan)
  // hides the forward's: its authors measured the forward up to 29 % faster and the step
  // 8 % (Llama 3 8B, TP 8; "Introducing Async Tensor Parallelism in PyTorch", 2024), which
  // leaves the backward's collectives exposed (false).
  bool tp_comm_overlap_backward = true;
  // The data-parallel gradient reduction (and the distributed optimizer's parameter
  // all-gather) runs bucket by bucket under the last micro-batch's backward (and the next
  // step's first forward): PyTorch DDP, Megatron's --overlap-grad-reduce and
  // --overlap-param-gather. Without it (Megatron-LM's default, the flags being opt-in) the
  // reduction starts after the last backward and the step waits for all of it.
  bool overlap_gradient_reduce = true;
  // Gradients reduced in fp32 (4 B each) rather than at the 16-bit compute precision:
  // Megatron-LM accumulates and all-reduces bf16 models' gradients in fp32 unless told
  // otherwise (arguments.py: "bfloat16 requires gradient accumulation and all-reduce to be
  // done in fp32"). The distributed optimizer still gathers 16-bit parameters.
  bool fp32_gradient_reduce = false;
  // FP8 training: Transformer Engine casts (and transposes) each weight to FP8 on the first
  // micro-batch of a step and reuses the copy until the optimizer changes the weight
  // (te.Linear's is_first_microbatch, which Megatron-Core passes since commit 3c44fb9f,
  // January 2024: NeMo and Megatron-Bridge run on it). Stacks that do not pass it, and
  // torchao's float8 linears, cast the weights again for every micro-batch (false).
  bool fp8_weights_cast_once_per_step = true;
  // FP8 training's scaling granularity (only read when the compute precision is FP8).
  // tensorwise: one scale per tensor (Transformer Engine's delayed and current scaling,
  // torchao's default). rowwise: one scale per row (torchao's "rowwise" recipe), whose
  // kernels saturate later and whose casts move more bytes (performance.hpp,
  // kRowwiseFp8HalfSaturationFactor and kRowwiseFp8ExtraCastBytes).
  bool fp8_rowwise_scaling = false;
  // An interleaved pipeline schedule (v > 1) sends a chunk's activations and gradients while
  // the next chunk computes, waiting only for what outlasts it: Megatron-LM's
  // overlap_p2p_comm, an option since commit f9283c5a (May 2023) and the default since
  // 4eeff55d (October 2023); NeMo turns it on with virtual stages. Without it (or with one
  // stage per GPU) every send is waited for.
  bool overlap_p2p = true;
  // How a mixture-of-experts layer's tokens cross nodes. false (per expert): the all-to-all
  // sends a copy of each token to every expert it is routed to, over the NIC for experts on
  // other nodes (NCCL all-to-all; Megatron-Core's alltoall dispatcher). true (per node): a
  // token crosses the network once per node that holds any of its experts, to the GPU of
  // the same local rank there, which forwards it over NVLink (DeepEP and HybridEP, Megatron's
  // flex dispatcher; DeepSeek-V3 technical report, 2024, sec. 3.2.2), and the combine
  // reduces within the node before sending back.
  bool moe_dispatch_per_node = false;
};

}  // namespace capsim::models
