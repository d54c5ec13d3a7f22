// The analytic training step-time model. Sources for the formulas:
// - Narayanan et al., "Efficient Large-Scale Language Model Training on GPU Clusters Using
//   Megatron-LM", SC'21 (arXiv 2104.04473): GEMM shapes of a tensor-parallel layer (sec. 2.3),
//   pipeline bubble (p-1)/m for 1F1B and (p-1)/(m v) interleaved (sec. 2.2, eq. 1 and 2),
//   scatter/gather of pipeline activations over InfiniBand (sec. 4.1), FLOP count (sec. 5.1).
// - Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models",
//   MLSys 2023 (arXiv 2205.05198): sequence parallelism (all-gather + reduce-scatter
//   instead of all-reduce, sec. 4.2.2) and selective recomputation of the attention core.
// - Rajbhandari et al., "ZeRO", SC'20: ZeRO-3 parameter all-gathers in forward and backward,
//   gradient reduce-scatter instead of all-reduce (sec. 7).
// - Williams, Waterman, Patterson, "Roofline", CACM 2009: an operation takes
//   max(FLOPs / achievable FLOP/s, bytes / achievable bandwidth).
// Internal arithmetic is in doubles of SI units (seconds, bytes, FLOPs); the API is typed.
#include "capsim/models/performance.hpp"

#include <algorithm>
#include <array>
#include <string>

#include "capsim/models/collectives.hpp"

namespace capsim::models {
namespace {

// Catalog key of the dense peak for a compute precision (kept here so the hot path does
// no string work).
std::string_view peak_key(Precision p) {
  switch (p) {
    case Precision::fp32: return "fp32";
    case Precision::tf32: return "tf32";
    case Precision::fp16: return "fp16";
    case Precision::bf16: return "bf16";
    case Precision::fp8: return "fp8";
    case Precision::int8: return "int8";
    case Precision::int4: return "int4";
  }
  return "bf16";
}

// Bytes of one GEMM operand element at the compute precision.
double operand_bytes(Precision p) {
  switch (p) {
    case Precision::fp32:
    case Precision::tf32: return 4.0;
    case Precision::fp16:
    case Precision::bf16: return 2.0;
    case Precision::fp8:
    case Precision::int8: return 1.0;
    case Precision::int4: return 0.5;
  }
  return 2.0;
}

// Activations (element-wise kernels, communicated tensors) stay in 16 bits when the
// matrix math is 8 bits or less (FP8 recipes keep activations in bf16: Micikevicius et
// al., "FP8 Formats for Deep Learning", 2022).
double activation_bytes(Precision p) { return std::max(2.0, operand_bytes(p)); }
// Gradients are reduced in 16 bits under mixed precision, in fp32 otherwise.
double gradient_bytes(Precision p) { return std::max(2.0, operand_bytes(p)); }

// One GPU at one compute precision, from datasheet or calibrated figures (device_of).
struct Device {
  double peak;        // FLOP/s, dense datasheet peak at the compute precision (for MFU)
  double gemm_peak;   // FLOP/s the GEMM curve scales: the datasheet peak, or the fitted ceiling
  double gemm_max_efficiency;  // kGemmMaxEfficiency, or 1 for a fitted curve (in its ceiling)
  double gemm_half_dim;        // kGemmHalfSaturationDim, or the fitted value
  double bandwidth;   // achievable HBM bytes/s
  double operand;     // bytes per GEMM operand element
  bool calibrated;    // any of the above came from a calibration profile
};

double gemm_efficiency(const Device& g, double m, double n, double k) {
  const double d = g.gemm_half_dim;
  return g.gemm_max_efficiency * (m / (m + d)) * (n / (n + d)) * (k / (k + d));
}

// `count` GEMMs [m x k] x [k x n]: roofline of 2mnk FLOPs against reading both operands
// and writing the result once.
double gemm_time(const Device& g, double m, double n, double k, double count = 1.0) {
  const double flops = 2.0 * m * n * k * count;
  const double bytes = g.operand * (m * k + k * n + m * n) * count;
  return std::max(flops / (gemm_efficiency(g, m, n, k) * g.gemm_peak), bytes / g.bandwidth);
}

// A linear layer y[T x n] = x[T x k] W[k x n] in forward; backward is the data gradient
// [T x n][n x k] and, when W is trained, the weight gradient [k x T][T x n].
struct Linear {
  double n, k;
};

struct LayerTimes {
  double forward = 0;          // GEMMs + element-wise
  double backward = 0;
  double attention_core_fwd = 0;  // QK^T, softmax, dropout, AV: what selective recompute redoes
  double forward_flops = 0;    // whole layer, all TP ranks (model FLOPs)
  double attention_core_flops = 0;
  double params = 0;           // whole layer
  double trainable = 0;        // whole layer (LoRA: adapters only)
};

// One transformer layer for one micro-batch on one GPU of the tensor-parallel group.
LayerTimes layer_times(const TransformerShape& s, const Parallelism& par, const Device& g,
                       double act, const TrainingOptions& options) {
  const double t = par.tensor;
  const double b = par.micro_batch;
  const double seq = s.seq_len;
  const double tokens = b * seq;
  const double h = s.hidden;
  const double head_dim = static_cast<double>(s.hidden) / s.heads;
  const double kv_heads = s.kv_heads > 0 ? s.kv_heads : s.heads;
  const double q_out = s.heads * head_dim;
  const double kv_out = kv_heads * head_dim;
  const double mlp_in = s.gated_mlp ? 2.0 * s.ffn_hidden : s.ffn_hidden;  // up (+ gate)
  const double experts = std::max(1, s.experts);
  const double routed = std::max(1, s.experts_per_token);
  const bool frozen = options.fine_tuning != FineTuning::full;

  // Column-parallel then row-parallel linears (Megatron sec. 2.3): each GPU holds 1/t of
  // the output (column) or input (row) dimension.
  const std::array<Linear, 2> attention{{{(q_out + 2 * kv_out) / t, h}, {h, q_out / t}}};
  const std::array<Linear, 2> mlp{{{mlp_in / t, h}, {h, s.ffn_hidden / t}}};

  LayerTimes r;
  auto add_linear = [&](const Linear& w, double m, double count) {
    r.forward += gemm_time(g, m, w.n, w.k, count);
    r.backward += gemm_time(g, m, w.k, w.n, count);               // data gradient
    if (!frozen) r.backward += gemm_time(g, w.k, w.n, m, count);  // weight gradient
    r.forward_flops += 2.0 * m * w.n * w.k * count * t;
  };
  for (const auto& w : attention) add_linear(w, tokens, 1.0);
  // Mixture of experts: each expert sees tokens * k / E tokens (no expert parallelism:
  // every GPU runs all experts of its layer).
  for (const auto& w : mlp) add_linear(w, tokens * routed / experts, experts);

  // Attention core, per query head on this GPU: scores [s x d][d x s], values [s x s][s x d].
  // Backward: dQ, dK ([s x s][s x d]) and dV ([s x s]^T[s x d]) are s x d x s; dP is s x s x d.
  const double heads_here = b * s.heads / t;
  const double scores = gemm_time(g, seq, seq, head_dim, heads_here);
  const double values = gemm_time(g, seq, head_dim, seq, heads_here);
  const double core_flops = 2.0 * 2.0 * seq * seq * head_dim * b * s.heads;

  // Element-wise kernels are memory-bound: bytes moved / HBM bandwidth. Per element
  // (act = activation bytes, masks 1 byte), forward / backward:
  //   layer norm (x2)          read+write 2 act / read x, dy, write dx, reduce again 4 act
  //   bias-dropout-residual x2 3 act + mask / 2 act + mask
  //   GeLU or SwiGLU           2 act / 3 act
  //   softmax on scores        2 act / 3 act
  //   dropout on probabilities 2 act + mask / 2 act + mask
  // With sequence parallelism the layer norms and dropouts work on 1/t of the sequence.
  const double sp = par.sequence_parallel ? t : 1.0;
  const double hidden_elems = tokens * h / sp;
  const double ffn_elems = tokens * routed * s.ffn_hidden / t;
  const double score_elems = heads_here * seq * seq;
  const double act_fn_fwd = s.gated_mlp ? 3.0 * act : 2.0 * act;
  const double ew_fwd_bytes = hidden_elems * (2 * 2.0 * act + 2 * (3.0 * act + 1.0)) +
                              ffn_elems * act_fn_fwd;
  const double ew_bwd_bytes = hidden_elems * (2 * 4.0 * act + 2 * (2.0 * act + 1.0)) +
                              ffn_elems * 3.0 * act;
  const double core_ew_fwd = score_elems * (2.0 * act + (2.0 * act + 1.0));
  const double core_ew_bwd = score_elems * (3.0 * act + (2.0 * act + 1.0));

  r.attention_core_fwd = scores + values + core_ew_fwd / g.bandwidth;
  r.forward += r.attention_core_fwd + ew_fwd_bytes / g.bandwidth;
  r.backward += 3.0 * values + scores + (ew_bwd_bytes + core_ew_bwd) / g.bandwidth;
  r.forward_flops += core_flops;
  r.attention_core_flops = core_flops;

  // Weights: q/k/v/o, MLP (2 or 3 matrices per expert), biases and two layer norms.
  const double mlp_matrices = s.gated_mlp ? 3.0 : 2.0;
  r.params = h * (q_out + 2 * kv_out) + q_out * h + experts * mlp_matrices * h * s.ffn_hidden +
             (q_out + 2 * kv_out) + h + experts * (s.ffn_hidden + h) + 4 * h;
  // LoRA adapters A [in x r] and B [r x out] on the attention and MLP matrices.
  const double rank = options.lora_rank;
  r.trainable = frozen ? rank * ((h + q_out + 2 * kv_out) + (q_out + h) +
                                 experts * mlp_matrices * (h + s.ffn_hidden))
                       : r.params;
  return r;
}

Diagnostic invalid(std::string key, std::string message) {
  return Diagnostic{{}, std::move(key), std::move(message), {}};
}

std::string num(long long v) { return std::to_string(v); }

// Checks of the layout against the shape and the cluster. Empty on success (no allocation).
std::vector<Diagnostic> check_layout(const TransformerShape& s, const Parallelism& par,
                                     const ClusterSpec& c) {
  std::vector<Diagnostic> e;
  if (s.layers < 1 || s.hidden < 1 || s.heads < 1 || s.ffn_hidden < 1 || s.vocab < 1 ||
      s.seq_len < 1 || s.kv_heads < 0) {
    e.push_back(invalid("shape", "model '" + s.name +
                                     "' needs positive layers, hidden, heads, ffn_hidden, vocab and seq_len"));
    return e;
  }
  const auto positive = [&](int v, const char* key) {
    if (v < 1) e.push_back(invalid(key, "must be at least 1, got " + num(v)));
  };
  positive(par.tensor, "parallelism.tensor");
  positive(par.pipeline, "parallelism.pipeline");
  positive(par.data, "parallelism.data");
  positive(par.interleave, "parallelism.interleave");
  positive(par.micro_batch, "parallelism.micro_batch");
  positive(par.global_batch, "parallelism.global_batch");
  positive(c.gpus_per_node, "cluster.gpus_per_node");
  if (!e.empty()) return e;

  const int kv = s.kv_heads > 0 ? s.kv_heads : s.heads;
  if (s.hidden % s.heads != 0)
    e.push_back(invalid("shape.hidden", "hidden " + num(s.hidden) + " is not divisible by heads " + num(s.heads)));
  if (par.zero_stage < 0 || par.zero_stage > 3)
    e.push_back(invalid("parallelism.zero_stage", "must be 0-3, got " + num(par.zero_stage)));
  if (par.tensor > c.gpus_per_node)
    e.push_back(invalid("parallelism.tensor", "tensor parallelism " + num(par.tensor) +
                                                  " exceeds the " + num(c.gpus_per_node) + " GPUs of a node"));
  if (s.heads % par.tensor != 0 || kv % par.tensor != 0 || s.ffn_hidden % par.tensor != 0)
    e.push_back(invalid("parallelism.tensor", "tensor parallelism " + num(par.tensor) +
                                                  " does not divide heads " + num(s.heads) + ", kv_heads " +
                                                  num(kv) + " and ffn_hidden " + num(s.ffn_hidden)));
  if (s.layers % (par.pipeline * par.interleave) != 0)
    e.push_back(invalid("parallelism.pipeline", "layers " + num(s.layers) + " are not divisible by pipeline " +
                                                    num(par.pipeline) + " x interleave " + num(par.interleave)));
  if (par.interleave > 1 && par.pipeline < 2)
    e.push_back(invalid("parallelism.interleave", "an interleaved schedule needs pipeline parallelism"));
  if (par.global_batch % (par.micro_batch * par.data) != 0)
    e.push_back(invalid("parallelism.global_batch", "global batch " + num(par.global_batch) +
                                                        " is not divisible by micro_batch " + num(par.micro_batch) +
                                                        " x data " + num(par.data)));
  if (par.gpus() > c.gpus_per_node && c.inter_node_bandwidth.value() <= 0)
    e.push_back(invalid("cluster.network", num(par.gpus()) + " GPUs span several nodes of " +
                                               num(c.gpus_per_node) + " but the cluster has no network"));
  if (c.gpus_per_node > 1 && c.intra_node_bandwidth.value() <= 0)
    e.push_back(invalid("cluster.intra_node", "nodes of " + num(c.gpus_per_node) +
                                                  " GPUs need a positive intra-node bandwidth"));
  if (c.gpu.memory_bandwidth.value() <= 0)
    e.push_back(invalid("cluster.gpu", "GPU '" + c.gpu.id + "' has no memory bandwidth"));
  return e;
}

// Where a data-parallel group sits: Megatron orders ranks tensor-fastest, then data, then
// pipeline, so the d replicas of one shard are t ranks apart.
struct GroupPlacement {
  int in_node = 1;
  int nodes = 1;
};
GroupPlacement data_parallel_placement(int data, int stride, int gpus_per_node) {
  GroupPlacement p;
  p.in_node = std::max(1, std::min(data, gpus_per_node / stride));
  p.nodes = (data + p.in_node - 1) / p.in_node;
  return p;
}

double all_reduce_over(double bytes, GroupPlacement where, int n, LinkModel intra, LinkModel inter) {
  if (n <= 1) return 0.0;
  if (where.nodes <= 1) return ring_all_reduce(Bytes(bytes), n, intra).value();
  if (where.in_node <= 1) return ring_all_reduce(Bytes(bytes), n, inter).value();
  return hierarchical_all_reduce(Bytes(bytes), where.in_node, where.nodes, intra, inter).value();
}

double all_gather_over(double bytes, GroupPlacement where, int n, LinkModel intra, LinkModel inter) {
  if (n <= 1) return 0.0;
  // Same ring volume as half an all-reduce over the same placement.
  return 0.5 * all_reduce_over(bytes, where, n, intra, inter);
}

// Gradient synchronisation hidden behind the backward pass except for the last bucket
// (kGradientBucketBytes) or whatever exceeds the overlap window.
double exposed_gradient_sync(double sync_time, double gradient_bytes, double overlap_window) {
  if (sync_time <= 0 || gradient_bytes <= 0) return 0.0;
  const double last_bucket = sync_time * std::min(1.0, kGradientBucketBytes / gradient_bytes);
  return std::max(last_bucket, sync_time - overlap_window);
}

double optimizer_time(double params, const TrainingOptions& o, double bandwidth) {
  const double per_param = o.mixed_precision ? kAdamBytesPerParamMixed : kAdamBytesPerParamFp32;
  return params * per_param / bandwidth;
}

Bottleneck largest(const StepBreakdown& b) {
  const std::array<std::pair<double, Bottleneck>, 8> parts{{
      {b.compute.value(), Bottleneck::compute},
      {b.recompute.value(), Bottleneck::recompute},
      {b.tensor_parallel_comm.value(), Bottleneck::tensor_parallel_comm},
      {b.pipeline_bubble.value(), Bottleneck::pipeline_bubble},
      {b.data_parallel_comm_exposed.value(), Bottleneck::data_parallel_comm},
      {b.zero_comm.value(), Bottleneck::zero_comm},
      {b.optimizer.value(), Bottleneck::optimizer},
      {b.data_loading.value(), Bottleneck::data_loading},
  }};
  auto best = parts[0];
  for (const auto& p : parts)
    if (p.first > best.first) best = p;
  return best.second;
}

Seconds total(const StepBreakdown& b) {
  return b.compute + b.recompute + b.tensor_parallel_comm + b.pipeline_bubble +
         b.data_parallel_comm_exposed + b.zero_comm + b.optimizer + b.data_loading;
}

Result<Device> device_of(const ClusterSpec& c, Precision p) {
  const auto peak = c.gpu.peak(peak_key(p));
  if (!peak || peak->value() <= 0)
    return invalid("options.compute", "GPU '" + c.gpu.id + "' has no dense " + std::string(peak_key(p)) +
                                          " peak in the catalog");
  Device d{peak->value(), peak->value(), kGemmMaxEfficiency, kGemmHalfSaturationDim,
           c.gpu.memory_bandwidth.value() * kMemoryBandwidthEfficiency, operand_bytes(p), false};
  // Measured beats datasheet: the GEMM curve fitted to this precision's calibration points
  // replaces peak x kGemmMaxEfficiency and kGemmHalfSaturationDim (same functional form);
  // the achieved triad bandwidth replaces peak x kMemoryBandwidthEfficiency. Lookups by
  // string_view in maps with transparent comparators: no allocation.
  if (const auto& measured = c.gpu.measured) {
    if (auto curve = measured->gemm_curve.find(peak_key(p)); curve != measured->gemm_curve.end()) {
      d.gemm_peak = curve->second.ceiling.value();
      d.gemm_max_efficiency = 1.0;
      d.gemm_half_dim = curve->second.half_saturation_dim;
      d.calibrated = true;
    }
    if (measured->memory_bandwidth && measured->memory_bandwidth->value() > 0) {
      d.bandwidth = measured->memory_bandwidth->value();
      d.calibrated = true;
    }
  }
  return d;
}

}  // namespace

std::string_view bottleneck_name(Bottleneck b) {
  switch (b) {
    case Bottleneck::compute: return "compute";
    case Bottleneck::recompute: return "recompute";
    case Bottleneck::tensor_parallel_comm: return "tensor_parallel_comm";
    case Bottleneck::pipeline_bubble: return "pipeline_bubble";
    case Bottleneck::data_parallel_comm: return "data_parallel_comm";
    case Bottleneck::zero_comm: return "zero_comm";
    case Bottleneck::optimizer: return "optimizer";
    case Bottleneck::data_loading: return "data_loading";
  }
  return "compute";
}

Result<TrainingEstimate> estimate_training_step(const TransformerShape& s, const Parallelism& par,
                                                const ClusterSpec& c, const TrainingOptions& o,
                                                const CollectiveOverrides* overrides) {
  if (auto errors = check_layout(s, par, c); !errors.empty()) return errors;
  const auto device = device_of(c, o.compute);
  if (!device) return device.errors();
  const Device& g = *device;

  const double act = activation_bytes(o.compute);
  const int t = par.tensor, p = par.pipeline, d = par.data, v = par.interleave;
  const double m = par.microbatches();
  const double tokens = static_cast<double>(par.micro_batch) * s.seq_len;
  const double h = s.hidden;
  const double layers_per_stage = static_cast<double>(s.layers) / p;
  const bool frozen = o.fine_tuning != FineTuning::full;
  const LinkModel intra{c.intra_node_bandwidth * kCollectiveBandwidthFraction, c.intra_node_latency};
  const LinkModel inter{c.inter_node_bandwidth * kCollectiveBandwidthFraction, c.inter_node_latency};

  const LayerTimes layer = layer_times(s, par, g, act, o);

  // Output logits and loss on the last (slowest) pipeline stage: [T x h][h x V/t].
  const double vocab_here = static_cast<double>(s.vocab) / t;
  const double logits_fwd = gemm_time(g, tokens, vocab_here, h) + tokens * vocab_here * 2 * act / g.bandwidth;
  const double logits_bwd = gemm_time(g, tokens, h, vocab_here) +
                            (frozen ? 0.0 : gemm_time(g, h, vocab_here, tokens)) +
                            tokens * vocab_here * 2 * act / g.bandwidth;
  const double logits_flops = 2.0 * tokens * s.vocab * h;

  // Tensor parallelism: 2 all-reduces of [b s h] forward and 2 backward per layer
  // (Megatron sec. 2.3, the f/g operators); sequence parallelism replaces each with an
  // all-gather + reduce-scatter of the same total cost (Korthikanti et al. sec. 4.2.2).
  // Full recompute repeats the 2 forward ones. Not overlapped with compute.
  const double tp_one = ring_all_reduce(Bytes(tokens * h * act), t, intra).value();
  const double tp_per_layer = 4.0 + (par.recompute == Recompute::full ? 2.0 : 0.0);

  double recompute_layer = 0, recompute_flops = 0;
  if (par.recompute == Recompute::full) {
    recompute_layer = layer.forward;
    recompute_flops = layer.forward_flops;
  } else if (par.recompute == Recompute::selective) {
    recompute_layer = layer.attention_core_fwd;
    recompute_flops = layer.attention_core_flops;
  }

  // One micro-batch on the slowest stage.
  const double fwd_mb = layers_per_stage * layer.forward + logits_fwd;
  const double bwd_mb = layers_per_stage * layer.backward + logits_bwd;
  const double rec_mb = layers_per_stage * recompute_layer;
  const double tp_mb = layers_per_stage * tp_per_layer * tp_one;

  // Pipeline point-to-point: activations forward and gradients backward at each of the v
  // chunk boundaries. Across nodes each of the t GPUs sends 1/t over its own NIC, then an
  // all-gather over NVLink rebuilds the tensor (Megatron sec. 4.1, scatter/gather).
  double p2p_mb = 0;
  if (p > 1) {
    const double message = tokens * h * act;
    const bool crosses_nodes = par.gpus() > c.gpus_per_node;
    const double one = crosses_nodes ? point_to_point(Bytes(message / t), inter).value() +
                                           all_gather(Bytes(message), t, intra).value()
                                     : point_to_point(Bytes(message), intra).value();
    p2p_mb = 2.0 * v * one;
  }

  // Bubble: (p-1)/(m v) of the ideal time (Narayanan et al. eq. 1, 2); the ideal time is
  // m micro-batches of forward, backward, recompute, TP and point-to-point work.
  const double busy_mb = fwd_mb + bwd_mb + rec_mb + tp_mb + p2p_mb;
  const double bubble = static_cast<double>(p - 1) / v * busy_mb;

  // Parameters on the busiest GPU: its stage's layers plus the output embedding (and the
  // input embedding too when the whole model is one stage and they are not tied).
  const double embedding = static_cast<double>(s.vocab) * h;
  const double embeddings_here = (p == 1 && !s.tied_embeddings) ? 2.0 : 1.0;
  const double params_gpu = (layers_per_stage * layer.params + embeddings_here * embedding) / t;
  const double trainable_gpu =
      frozen ? layers_per_stage * layer.trainable / t : params_gpu;

  // Data parallelism: gradient all-reduce (ZeRO-3: reduce-scatter only, half the volume).
  const GroupPlacement dp_group = data_parallel_placement(d, t, c.gpus_per_node);
  const double grad_bytes = trainable_gpu * gradient_bytes(o.compute);
  double dp_sync = overrides && overrides->data_parallel_all_reduce
                       ? overrides->data_parallel_all_reduce->value()
                       : all_reduce_over(grad_bytes, dp_group, d, intra, inter);
  if (par.zero_stage == 3) dp_sync *= 0.5;
  const double dp_exposed = exposed_gradient_sync(dp_sync, grad_bytes, bwd_mb);

  // ZeRO-3: all-gather of the 16-bit parameters before forward, backward (and the
  // recomputed forward), prefetched so only what exceeds that pass's compute shows.
  double zero = 0;
  if (par.zero_stage == 3 && d > 1) {
    const double gather = all_gather_over(params_gpu * operand_bytes(o.compute), dp_group, d, intra, inter);
    zero = m * (std::max(0.0, gather - fwd_mb) + std::max(0.0, gather - bwd_mb) +
                (par.recompute == Recompute::full ? std::max(0.0, gather - rec_mb) : 0.0));
  }

  const double optimizer_params = trainable_gpu / (par.zero_stage >= 1 ? d : 1);

  TrainingEstimate r;
  StepBreakdown& b = r.breakdown;
  b.compute = Seconds(m * (fwd_mb + bwd_mb));
  b.recompute = Seconds(m * rec_mb);
  b.tensor_parallel_comm = Seconds(m * tp_mb);
  b.pipeline_bubble = Seconds(m * p2p_mb + bubble);
  b.data_parallel_comm_exposed = Seconds(dp_exposed);
  r.gradient_bytes_per_gpu = Bytes(grad_bytes);
  r.data_parallel_all_reduce = Seconds(dp_sync);
  b.zero_comm = Seconds(zero);
  b.optimizer = Seconds(optimizer_time(optimizer_params, o, g.bandwidth));
  b.data_loading = Seconds(0.0);  // token ids: a few bytes per token, prefetched
  r.step_time = total(b);
  r.bottleneck = largest(b);

  // Model FLOPs of the whole step: forward, data gradient, weight gradient (2 forwards
  // together unless weights are frozen), plus recompute for the achieved figure.
  const double sequences = par.global_batch;
  const double per_sequence_fwd = s.layers * layer.forward_flops + logits_flops;
  const double backward_factor = frozen ? 1.0 : 2.0;
  const double model_flops = sequences / par.micro_batch * (1.0 + backward_factor) * per_sequence_fwd;
  const double recompute_total = sequences / par.micro_batch * s.layers * recompute_flops;
  const double gpus = par.gpus();
  const double step = r.step_time.value();
  r.tokens_per_second = sequences * s.seq_len / step;
  r.achieved_flops_per_gpu = FlopsPerSecond((model_flops + recompute_total) / gpus / step);
  r.mfu = model_flops / (gpus * step * g.peak);
  r.calibrated = g.calibrated || c.calibrated;
  return r;
}

Result<TrainingRun> estimate_training_run(const TransformerShape& s, const Parallelism& par,
                                          const ClusterSpec& c, const TrainingOptions& o,
                                          double tokens) {
  if (!(tokens > 0))
    return invalid("tokens", "the number of training tokens must be positive, got " + std::to_string(tokens));
  auto step = estimate_training_step(s, par, c, o);
  if (!step) return step.errors();
  TrainingRun run;
  run.step = *step;
  run.steps = tokens / (static_cast<double>(par.global_batch) * s.seq_len);
  run.total_time = step->step_time * run.steps;
  run.gpu_hours = run.total_time.value() / units::hour * par.gpus();
  return run;
}

Result<TrainingEstimate> estimate_sample_model_step(const SampleModel& model, int batch_per_gpu,
                                                    int gpus, const ClusterSpec& c,
                                                    const TrainingOptions& o) {
  std::vector<Diagnostic> errors;
  if (batch_per_gpu < 1) errors.push_back(invalid("batch_per_gpu", "must be at least 1, got " + num(batch_per_gpu)));
  if (gpus < 1) errors.push_back(invalid("gpus", "must be at least 1, got " + num(gpus)));
  if (!(model.forward_flops_per_sample > 0) || !(model.params > 0))
    errors.push_back(invalid("model", "model '" + model.name + "' needs positive params and forward FLOPs"));
  if (gpus > c.gpus_per_node && c.inter_node_bandwidth.value() <= 0)
    errors.push_back(invalid("cluster.network", num(gpus) + " GPUs span several nodes but the cluster has no network"));
  if (!errors.empty()) return errors;
  const auto device = device_of(c, o.compute);
  if (!device) return device.errors();
  const Device& g = *device;

  // Forward + backward = 3 forwards of FLOPs in convolutions/GEMMs, plus the element-wise
  // kernels (batch norm, activation, pooling) that stream the saved activations: written
  // in forward, read and their gradients written in backward (3 passes). They are separate
  // kernels, so their times add.
  const double batch = batch_per_gpu;
  const double flops = 3.0 * model.forward_flops_per_sample * batch;
  const double compute = flops / (g.gemm_max_efficiency * g.gemm_peak) +
                         3.0 * model.activation_bytes_per_sample * batch / g.bandwidth;

  const LinkModel intra{c.intra_node_bandwidth * kCollectiveBandwidthFraction, c.intra_node_latency};
  const LinkModel inter{c.inter_node_bandwidth * kCollectiveBandwidthFraction, c.inter_node_latency};
  const GroupPlacement group = data_parallel_placement(gpus, 1, c.gpus_per_node);
  const double grad_bytes = model.params * gradient_bytes(o.compute);
  const double sync = all_reduce_over(grad_bytes, group, gpus, intra, inter);

  // Input tensors cross PCIe while the previous step computes (DataLoader prefetch).
  double loading = 0;
  if (c.pcie_bandwidth.value() > 0)
    loading = std::max(0.0, model.input_bytes_per_sample * batch / c.pcie_bandwidth.value() - compute);

  TrainingEstimate r;
  StepBreakdown& b = r.breakdown;
  b.compute = Seconds(compute);
  b.data_parallel_comm_exposed = Seconds(exposed_gradient_sync(sync, grad_bytes, compute * 2.0 / 3.0));
  b.optimizer = Seconds(optimizer_time(model.params, o, g.bandwidth));
  b.data_loading = Seconds(loading);
  r.step_time = total(b);
  r.bottleneck = largest(b);
  const double step = r.step_time.value();
  r.tokens_per_second = batch * gpus / step;
  r.achieved_flops_per_gpu = FlopsPerSecond(flops / step);
  r.mfu = flops / (step * g.peak);
  r.calibrated = g.calibrated || c.calibrated;
  return r;
}

}  // namespace capsim::models
