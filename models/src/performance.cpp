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
#include <cmath>
#include <string>

#include "capsim/models/cnn.hpp"
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

// The fused attention kernel's fraction of the peak (performance.hpp, kFlash*): fa3 runs
// only on Hopper and newer, older GPUs run fa2 in its place.
FlashEfficiency flash_efficiency(FlashKernel kernel, bool hopper_class) {
  switch (kernel) {
    case FlashKernel::fa1: return hopper_class ? flash_hopper_fa1() : flash_fa1();
    case FlashKernel::fa2: return hopper_class ? flash_hopper_fa2() : flash_ampere_fa2();
    case FlashKernel::fa3: return hopper_class ? flash_hopper_fa3() : flash_ampere_fa2();
  }
  return flash_ampere_fa2();
}

double gemm_efficiency(const TrainingDevice& g, double m, double n, double k) {
  const double d = g.gemm_half_dim;
  return g.gemm_max_efficiency * (m / (m + d)) * (n / (n + d)) * (k / (k + d));
}

// `count` GEMMs [m x k] x [k x n]: roofline of 2mnk FLOPs against reading both operands
// and writing the result once.
double gemm_time(const TrainingDevice& g, double m, double n, double k, double count = 1.0) {
  const double flops = 2.0 * m * n * k * count;
  const double bytes = g.operand * (m * k + k * n + m * n) * count;
  return std::max(flops / (gemm_efficiency(g, m, n, k) * g.gemm_peak), bytes / g.bandwidth);
}

}  // namespace

double moe_routing_bytes(const TransformerShape& s, const Parallelism& par, double act) {
  if (s.experts <= 1) return 0.0;
  const double tokens = static_cast<double>(par.micro_batch) * s.seq_len / par.context;
  const double own = tokens / (par.sequence_parallel ? par.tensor : 1);  // before dispatch
  const double routed = std::max(1, s.experts_per_token);
  const double rows = tokens * routed;  // what this GPU's experts receive (balanced routing)
  const double sorts = s.experts / par.expert > 1 ? 2.0 * 2.0 * rows : 0.0;  // sort + unsort, read + write
  return (2.0 * own * (1.0 + routed) + sorts) * s.hidden * act + own * s.experts * kRouterLogitBytes;
}

namespace {

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
  double attention_fwd_time = 0;  // the attention core in forward (what ring attention overlaps)
  double linear_forward = 0;   // the linear layers' GEMMs alone (what TP comm overlap hides under)
  double linear_backward = 0;
  double params = 0;           // whole layer
  double trainable = 0;        // whole layer (LoRA: adapters only)
  double routing = 0;          // MoE permutations and router, forward + backward (in the above)
};

// One transformer layer for one micro-batch on one GPU of the tensor-parallel group.
// g: the device at the compute precision (GEMMs); g16: at 16 bits (attention core, which
// FP8 recipes keep in bf16).
LayerTimes layer_times(const TransformerShape& s, const Parallelism& par, const TrainingDevice& g,
                       const TrainingDevice& g16, double act, const TrainingOptions& options) {
  const double t = par.tensor;
  const double cp = par.context;
  const double ep = par.expert;
  const double b = par.micro_batch;
  const double seq = s.seq_len;
  const double tokens = b * seq / cp;  // this GPU's share of the sequence (context parallel)
  const double h = s.hidden;
  const double head_dim = s.head_dim();
  const double kv_heads = s.kv_heads > 0 ? s.kv_heads : s.heads;
  const double q_out = s.heads * head_dim;
  const double kv_out = kv_heads * head_dim;
  const double mlp_in = s.gated_mlp ? 2.0 * s.ffn_hidden : s.ffn_hidden;  // up (+ gate)
  const double experts = std::max(1, s.experts);
  const double routed = std::max(1, s.experts_per_token);
  const double experts_here = experts / ep;
  const bool frozen = options.fine_tuning != FineTuning::full;
  const bool fp8 = g.operand < 2.0;

  // Column-parallel then row-parallel linears (Megatron sec. 2.3): each GPU holds 1/t of
  // the output (column) or input (row) dimension.
  const std::array<Linear, 2> attention{{{(q_out + 2 * kv_out) / t, h}, {h, q_out / t}}};
  const std::array<Linear, 2> mlp{{{mlp_in / t, h}, {h, s.ffn_hidden / t}}};

  // The weights' FP8 casts per micro-batch: all of them, or one micro-batch's share when the
  // copy cast on the step's first micro-batch is reused (TrainingOptions).
  const double weight_casts = options.fp8_weights_cast_once_per_step ? 1.0 / std::max(1, par.microbatches()) : 1.0;

  LayerTimes r;
  auto add_linear = [&](const Linear& w, double m, double count) {
    const double fwd = gemm_time(g, m, w.n, w.k, count);
    const double bwd = gemm_time(g, m, w.k, w.n, count) +                // data gradient
                       (frozen ? 0.0 : gemm_time(g, w.k, w.n, m, count));  // weight gradient
    r.forward += fwd;
    r.backward += bwd;
    r.linear_forward += fwd;
    r.linear_backward += bwd;
    r.forward_flops += 2.0 * m * w.n * w.k * count * t * cp;
    if (fp8) {
      // Transformer Engine casts each GEMM input to FP8 with a scaling factor: read 16-bit,
      // write 8-bit (3 B per element) for the activation and the weight in forward, the
      // output gradient in backward (Micikevicius et al. 2022; NVIDIA TE user guide).
      r.forward += 3.0 * (m * w.k + weight_casts * w.k * w.n) * count / g.bandwidth;
      // Backward: the output gradient is cast, and Hopper's FP8 GEMMs take only the TN
      // layout, so the saved activation (weight gradient) and the weight (data gradient)
      // are also written transposed in FP8.
      r.backward += 3.0 * (m * w.n + m * w.k + weight_casts * w.k * w.n) * count / g.bandwidth;
      if (options.fp8_rowwise_scaling) {
        const auto& x = kRowwiseFp8ExtraCastBytes;
        r.backward += (x.input * m * w.k + x.output_gradient * m * w.n + x.weight * weight_casts * w.k * w.n +
                       x.backward_rescale * (m * w.k + (frozen ? 0.0 : w.k * w.n))) *
                      count / g.bandwidth;
      }
    }
  };
  for (const auto& w : attention) add_linear(w, tokens, 1.0);
  // Mixture of experts: with expert parallelism the ep ranks exchange tokens so that each
  // GPU runs its experts / ep experts on the tokens routed to them from all ep ranks:
  // tokens * k * ep / E tokens per expert (Lepikhin et al., GShard, 2020).
  for (const auto& w : mlp) add_linear(w, tokens * routed * ep / experts, experts_here);

  // Attention core, per query head on this GPU: scores [q x d][d x k], values [q x k][k x d]
  // for q = this GPU's queries and k the keys they see.
  const double heads_here = b * s.heads / t;
  const double queries = seq / cp;
  const double core_flops = 2.0 * 2.0 * seq * seq * head_dim * b * s.heads;  // model count, full s x s
  r.attention_core_flops = core_flops;
  r.forward_flops += core_flops;

  // Element-wise kernels are memory-bound: bytes moved / HBM bandwidth. Per element
  // (act = activation bytes, masks 1 byte), forward / backward, as fused kernels run them:
  //   layer norm (x2)          read+write 2 act / read x, dy, write dx, reduce again 4 act
  //   bias-dropout-residual x2 3 act + mask / 2 act + mask
  //   GeLU or SwiGLU           2 act / 3 act
  //   softmax on scores        2 act / 3 act           (eager attention only)
  //   dropout on probabilities 2 act + mask / 2 act + mask (eager attention only)
  // With sequence parallelism the layer norms and dropouts work on 1/t of the sequence.
  const double sp = par.sequence_parallel ? t : 1.0;
  const double hidden_elems = tokens * h / sp;
  const double ffn_elems = tokens * routed * s.ffn_hidden / t;
  const double act_fn_fwd = s.gated_mlp ? 3.0 * act : 2.0 * act;
  double ew_fwd_bytes = hidden_elems * (2 * 2.0 * act + 2 * (3.0 * act + 1.0)) + ffn_elems * act_fn_fwd;
  double ew_bwd_bytes = hidden_elems * (2 * 4.0 * act + 2 * (2.0 * act + 1.0)) + ffn_elems * 3.0 * act;
  if (options.kernels == Kernels::eager && s.gated_mlp) {
    // PyTorch eager mode runs a Llama-style layer's RMSNorm, rotary embedding and SwiGLU as
    // several kernels each, as written in the model code (torchtitan, Hugging Face):
    //   RMSNorm  x.float(); x.pow(2).mean(-1); x * rsqrt(..); .type_as(x); * weight
    //            = read 2 write 4, read 4 write 4, read 4, read 4 write 4, read 4 write 2,
    //              read 2 write 2 = 36 B forward against a fused kernel's 4 (read x, write
    //              y); autograd's backward through the same ops moves about twice that.
    //   rotary   q and k: .float(), view_as_complex, * freqs, view_as_real, .type_as
    //            = read 2 write 4, read 4 write 4, read 4 write 2 = 20 B against 4.
    //   SwiGLU   silu(a) then * b: 10 B forward against a fused 6, backward 18 against 10.
    // LayerNorm and GeLU are single kernels in eager PyTorch too (GPT-style layers).
    const double rotary_elems = tokens * (q_out + kv_out) / t;
    ew_fwd_bytes += hidden_elems * 2 * (36.0 - 4.0) + rotary_elems * (20.0 - 4.0) + ffn_elems * (10.0 - 6.0);
    ew_bwd_bytes += hidden_elems * 2 * 2 * (36.0 - 4.0) + rotary_elems * (20.0 - 4.0) + ffn_elems * (18.0 - 10.0);
  }
  if (s.experts > 1) {
    // Routing: the token permutations in HBM (moe_routing_bytes), the same again for the
    // gradients in backward, and the router GEMM [tokens x h][h x E] (data and weight
    // gradients in backward).
    const double bytes = moe_routing_bytes(s, par, act);
    const double gate = gemm_time(g16, tokens / sp, experts, h);
    r.routing = 2.0 * bytes / g.bandwidth + 3.0 * gate;
    r.forward += bytes / g.bandwidth + gate;
    r.backward += bytes / g.bandwidth + 2.0 * gate;
  }
  r.forward += ew_fwd_bytes / g.bandwidth;
  r.backward += ew_bwd_bytes / g.bandwidth;

  if (options.attention == Attention::flash) {
    // Fused kernels compute only the causal (or windowed) blocks: queries x attended keys,
    // and never write the scores. Backward recomputes the scores and runs dP, dS->dQ, dK,
    // dV: 5 products against the forward's 2 (Dao et al. 2022, 2023), at the kernels' own
    // efficiency.
    const double keys = s.attended_keys();
    const double fwd_flops = 2.0 * 2.0 * queries * keys * head_dim * heads_here;
    r.attention_core_fwd = 0;  // nothing to recompute selectively: the kernel already does
    // The kernels' efficiencies are fractions of the 16-bit dense peak (at the clock the
    // power limit allows, which device_of has applied).
    const FlashEfficiency eff = flash_efficiency(options.flash_kernel, g16.hopper_or_newer);
    const double fwd = fwd_flops / (eff.forward * g16.peak * g16.clock);
    const double bwd = 2.5 * fwd_flops / (eff.backward * g16.peak * g16.clock);
    r.forward += fwd;
    r.backward += bwd;
    r.attention_fwd_time = fwd;
  } else {
    // Backward: dQ, dK ([s x s][s x d]) and dV ([s x s]^T[s x d]) are s x d x s; dP is s x s x d.
    const double scores = gemm_time(g16, queries, seq, head_dim, heads_here);
    const double values = gemm_time(g16, queries, head_dim, seq, heads_here);
    const double score_elems = heads_here * queries * seq;
    const double core_ew_fwd = score_elems * (2.0 * act + (2.0 * act + 1.0));
    const double core_ew_bwd = score_elems * (3.0 * act + (2.0 * act + 1.0));
    r.attention_core_fwd = scores + values + core_ew_fwd / g.bandwidth;
    r.forward += r.attention_core_fwd;
    r.backward += 3.0 * values + scores + core_ew_bwd / g.bandwidth;
    r.attention_fwd_time = r.attention_core_fwd;
  }

  // Weights on this GPU's tensor-parallel group (all t shards): q/k/v/o, MLP (2 or 3
  // matrices per expert held), biases and two layer norms.
  const double mlp_matrices = s.gated_mlp ? 3.0 : 2.0;
  r.params = h * (q_out + 2 * kv_out) + q_out * h + experts_here * mlp_matrices * h * s.ffn_hidden +
             (q_out + 2 * kv_out) + h + experts_here * (s.ffn_hidden + h) + 4 * h;
  // LoRA adapters A [in x r] and B [r x out] on the attention and MLP matrices.
  const double rank = options.lora_rank;
  r.trainable = frozen ? rank * ((h + q_out + 2 * kv_out) + (q_out + h) +
                                 experts_here * mlp_matrices * (h + s.ffn_hidden))
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
  positive(par.context, "parallelism.context");
  positive(par.expert, "parallelism.expert");
  positive(par.micro_batch, "parallelism.micro_batch");
  positive(par.global_batch, "parallelism.global_batch");
  positive(c.gpus_per_node, "cluster.gpus_per_node");
  if (!e.empty()) return e;

  const int kv = s.kv_heads > 0 ? s.kv_heads : s.heads;
  if (s.head_dim_override <= 0 && s.hidden % s.heads != 0)
    e.push_back(invalid("shape.hidden", "hidden " + num(s.hidden) + " is not divisible by heads " + num(s.heads) +
                                            " (give head_dim when the heads are not hidden / heads wide)"));
  if (par.zero_stage < 0 || par.zero_stage > 3)
    e.push_back(invalid("parallelism.zero_stage", "must be 0-3, got " + num(par.zero_stage)));
  if (par.tensor > c.gpus_per_node)
    e.push_back(invalid("parallelism.tensor", "tensor parallelism " + num(par.tensor) +
                                                  " exceeds the " + num(c.gpus_per_node) + " GPUs of a node"));
  if (s.heads % par.tensor != 0 || kv % par.tensor != 0 || s.ffn_hidden % par.tensor != 0)
    e.push_back(invalid("parallelism.tensor", "tensor parallelism " + num(par.tensor) +
                                                  " does not divide heads " + num(s.heads) + ", kv_heads " +
                                                  num(kv) + " and ffn_hidden " + num(s.ffn_hidden)));
  if (s.layers < par.pipeline * par.interleave)
    e.push_back(invalid("parallelism.pipeline", "layers " + num(s.layers) + " are fewer than pipeline " +
                                                    num(par.pipeline) + " x interleave " + num(par.interleave) +
                                                    " chunks"));
  if (par.shard_group < 0 || (par.shard_group > 0 && par.data % par.shard_group != 0))
    e.push_back(invalid("parallelism.shard_group", "a shard group of " + num(par.shard_group) +
                                                       " does not divide data parallelism " + num(par.data)));
  if (par.context > 1 && s.seq_len % (2 * par.context) != 0)
    e.push_back(invalid("parallelism.context", "context parallelism " + num(par.context) +
                                                   " must split seq_len " + num(s.seq_len) +
                                                   " into 2 x cp equal chunks (load-balanced causal ring)"));
  if (par.expert < 1 || (par.expert > 1 && (s.experts <= 1 || s.experts % par.expert != 0 ||
                                             (par.data * par.context) % par.expert != 0)))
    e.push_back(invalid("parallelism.expert", "expert parallelism " + num(par.expert) +
                                                  (s.experts <= 1 ? " needs a mixture-of-experts model"
                                                                  : " must divide the " + num(s.experts) +
                                                                        " experts and d x cp = " +
                                                                        num(par.data * par.context))));
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

double all_reduce_over(double bytes, GroupPlacement where, int n, LinkModel intra, LinkModel inter) {
  if (n <= 1) return 0.0;
  if (where.nodes <= 1) return ring_all_reduce(Bytes(bytes), n, intra).value();
  if (where.in_node <= 1) return ring_all_reduce(Bytes(bytes), n, inter).value();
  return hierarchical_all_reduce(Bytes(bytes), where.in_node, where.nodes, intra, inter).value();
}

// A ring all-gather (or reduce-scatter: the same traffic reversed) of an S-byte buffer over
// a group placed `in_node` GPUs per node on `nodes` nodes. NCCL threads its rings through
// every GPU of a node over NVLink and leaves the node once per ring, one ring per NIC
// rail: each shard from another node enters a node once, over the in_node GPUs' NICs
// together, and reaches the node's other GPUs over NVLink at the same time (pipelined
// chunks). So the time is the slower of (k-1)/k S over in_node NIC shares and
// (n-1)/n S over NVLink, plus n - 1 ring steps at the slowest hop's latency. One GPU per
// node (in_node = 1) reduces to the flat ring on its own NIC.
double ring_gather_over(double bytes, GroupPlacement where, int n, LinkModel intra, LinkModel inter) {
  if (n <= 1) return 0.0;
  if (where.nodes <= 1) return all_gather(Bytes(bytes), n, intra).value();
  const double k = where.nodes;
  const double across = (k - 1) / k * bytes / (where.in_node * inter.bandwidth.value());
  const double inside = where.in_node > 1 ? (n - 1.0) / n * bytes / intra.bandwidth.value() : 0.0;
  return std::max(across, inside) + (n - 1) * inter.latency.value();
}

// Gradient synchronisation hidden behind the backward pass except for the last bucket
// (kGradientBucketBytes) or whatever exceeds the overlap window.
double exposed_gradient_sync(double sync_time, double gradient_bytes, double overlap_window) {
  if (sync_time <= 0 || gradient_bytes <= 0) return 0.0;
  const double last_bucket = sync_time * std::min(1.0, kGradientBucketBytes / gradient_bytes);
  return std::max(last_bucket, sync_time - overlap_window);
}

// The same on a stage of an interleaved pipeline (p stages, v model chunks per stage), where
// each chunk has its own gradient buffer and synchronises once its last micro-batch's
// backward is done (Megatron-Core: one DDP buffer per model chunk, grad sync enabled on each
// chunk's last micro-batch). The schedule's cool-down runs the last p micro-batches' backward
// chunk by chunk, v - 1 down to 0, so after chunk k's last backward k p chunk-backwards
// remain: chunk k's 1/v of the collective queues behind the chunks before it and hides
// under them. With c = sync / v and b = window / v (one chunk's backward of one micro-batch)
// the queue ends max_k ((k + 1) c - (k p + 1) b) after the last backward, largest at k = 0
// (chunk 0's share under its own backward) or k = v - 1 (everything under the cool-down);
// never less than chunk 0's last bucket. The parameter all-gather of the distributed
// optimizer mirrors it at the next step's warm-up, chunk 0 first. v = 1 is the plain case.
double exposed_chunked_sync(double sync_time, double gradient_bytes, double window, int p, int v) {
  if (v <= 1) return exposed_gradient_sync(sync_time, gradient_bytes, window);
  if (sync_time <= 0 || gradient_bytes <= 0) return 0.0;
  const double c = sync_time / v, b = window / v;
  const double last_bucket = sync_time * std::min(1.0 / v, kGradientBucketBytes / gradient_bytes);
  return std::max({last_bucket, c - b, sync_time - ((v - 1.0) * p + 1.0) * b});
}

double optimizer_time(double params, const TrainingOptions& o, double bandwidth) {
  const double per_param = o.mixed_precision ? kAdamBytesPerParamMixed : kAdamBytesPerParamFp32;
  return params * per_param / bandwidth;
}

Bottleneck largest(const StepBreakdown& b) {
  const std::array<std::pair<double, Bottleneck>, 11> parts{{
      {b.compute.value(), Bottleneck::compute},
      {b.recompute.value(), Bottleneck::recompute},
      {b.tensor_parallel_comm.value(), Bottleneck::tensor_parallel_comm},
      {b.pipeline_bubble.value(), Bottleneck::pipeline_bubble},
      {b.data_parallel_comm_exposed.value(), Bottleneck::data_parallel_comm},
      {b.zero_comm.value(), Bottleneck::zero_comm},
      {b.context_parallel_comm.value(), Bottleneck::context_parallel_comm},
      {b.expert_parallel_comm.value(), Bottleneck::expert_parallel_comm},
      {b.host_overhead.value(), Bottleneck::host_overhead},
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
         b.data_parallel_comm_exposed + b.zero_comm + b.context_parallel_comm +
         b.expert_parallel_comm + b.host_overhead + b.optimizer + b.data_loading;
}

}  // namespace

GroupPlacement data_parallel_placement(int data, int stride, int gpus_per_node) {
  GroupPlacement p;
  p.in_node = std::max(1, std::min(data, gpus_per_node / stride));
  p.nodes = (data + p.in_node - 1) / p.in_node;
  return p;
}

bool has_16bit_tensor_cores(const hardware::GpuSpec& gpu) {
  return gpu.architecture != "kepler" && gpu.architecture != "maxwell" && gpu.architecture != "pascal";
}

double streaming_bandwidth(const hardware::GpuSpec& gpu) {
  if (gpu.measured && gpu.measured->memory_bandwidth && gpu.measured->memory_bandwidth->value() > 0)
    return gpu.measured->memory_bandwidth->value();
  return gpu.memory_bandwidth.value() * kMemoryBandwidthEfficiency();
}

// The fixed cost of a GEMM tile (prologue, epilogue, the last partial wave) is a number of
// clocks, so in FLOPs it grows with what one SM's tensor cores do per clock: the
// half-saturation dimension scales with the GPU's dense 16-bit FLOPs per clock per SM
// (peak / (SMs x boost clock), catalog) over GA100's. Where the catalog lacks the SM count
// or the clock, the generation's rate stands in: Volta through Ada at most GA100's, Hopper's
// warpgroup MMA twice it (989 TFLOP/s on 132 SMs at 1.83 GHz), Blackwell four times
// (2,250 TFLOP/s on 148 SMs). GPUs without tensor cores keep GA100's dimension.
double tensor_rate_per_sm(const hardware::GpuSpec& gpu) {
  if (const auto rate = gpu.flops_per_clock_per_sm("fp16"); rate && has_16bit_tensor_cores(gpu))
    return *rate / kReferenceFlopsPerClockPerSm;
  if (gpu.architecture == "hopper") return 2.0;
  if (gpu.architecture == "blackwell") return 4.0;
  return 1.0;
}

double capped_gemm_ceiling(const hardware::GpuSpec& gpu, std::string_view precision, double ceiling) {
  return std::min(ceiling, gpu.max_achievable_fraction(precision).value_or(ceiling));
}

bool hopper_or_newer(const hardware::GpuSpec& gpu) {
  return gpu.architecture == "hopper" || gpu.architecture == "blackwell";
}

double generation_gemm_ceiling(const hardware::GpuSpec& gpu) {
  return hopper_or_newer(gpu) ? kGemmMaxEfficiencyHopper() : kGemmMaxEfficiency();
}

double gemm_half_saturation_dim(const hardware::GpuSpec& gpu, Precision p) {
  // An 8-bit GEMM does twice the math per operand byte of a 16-bit one, so the same
  // thread-block tile needs twice the depth to keep the tensor cores fed (Hopper's FP8
  // wgmma takes K = 32 per instruction where BF16 takes 16): the dimension at which a
  // GEMM dimension halves the efficiency scales with 2 B / operand bytes.
  return kGemmHalfSaturationDim() * std::max(1.0, 2.0 / operand_bytes(p)) * tensor_rate_per_sm(gpu);
}

namespace {

Result<TrainingDevice> device_of(const ClusterSpec& c, Precision p) {
  const auto peak = c.gpu.peak(peak_key(p));
  if (!peak || peak->value() <= 0)
    return invalid("options.compute", "GPU '" + c.gpu.id + "' has no dense " + std::string(peak_key(p)) +
                                          " peak in the catalog");
  const double eff = capped_gemm_ceiling(c.gpu, peak_key(p), generation_gemm_ceiling(c.gpu));
  const double half_dim = gemm_half_saturation_dim(c.gpu, p);
  // A power limit below the TDP lowers the sustained clock as (limit / TDP)^(1/3)
  // (ClusterSpec::power_limit), and every compute rate with it; HBM keeps its bandwidth.
  const double clock = c.power_limit.value() > 0 && c.gpu.tdp.value() > 0
                           ? std::cbrt(std::min(1.0, c.power_limit.value() / c.gpu.tdp.value()))
                           : 1.0;
  TrainingDevice d{peak->value(), peak->value() * clock, eff, half_dim, streaming_bandwidth(c.gpu),
                   operand_bytes(p), false, hopper_or_newer(c.gpu), clock};
  // Measured beats datasheet: the GEMM curve fitted to this precision's calibration points
  // replaces peak x kGemmMaxEfficiency and kGemmHalfSaturationDim (same functional form);
  // the achieved triad bandwidth replaces peak x kMemoryBandwidthEfficiency. Lookups by
  // string_view in maps with transparent comparators: no allocation.
  if (const auto& measured = c.gpu.measured) {
    if (auto curve = measured->gemm_curve.find(peak_key(p)); curve != measured->gemm_curve.end()) {
      d.gemm_peak = curve->second.ceiling.value() * clock;
      d.gemm_max_efficiency = 1.0;
      d.gemm_half_dim = curve->second.half_saturation_dim;
      d.calibrated = true;
    }
    if (measured->memory_bandwidth && measured->memory_bandwidth->value() > 0) d.calibrated = true;
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
    case Bottleneck::context_parallel_comm: return "context_parallel_comm";
    case Bottleneck::expert_parallel_comm: return "expert_parallel_comm";
    case Bottleneck::host_overhead: return "host_overhead";
    case Bottleneck::optimizer: return "optimizer";
    case Bottleneck::data_loading: return "data_loading";
  }
  return "compute";
}

Result<TrainingDevices> prepare_training_devices(const ClusterSpec& c, Precision compute) {
  const auto device = device_of(c, compute);
  if (!device) return device.errors();
  TrainingDevices d{*device, *device};
  // FP8 recipes keep attention, the output layer and element-wise work in 16 bits.
  if (device->operand < 2.0) {
    const auto d16 = device_of(c, Precision::bf16);
    if (!d16) return d16.errors();
    d.sixteen_bit = *d16;
  }
  return d;
}

Result<TrainingEstimate> estimate_training_step(const TransformerShape& s, const Parallelism& par,
                                                const ClusterSpec& c, const TrainingOptions& o,
                                                const CollectiveOverrides* overrides) {
  const auto devices = prepare_training_devices(c, o.compute);
  if (!devices) {
    if (auto errors = check_layout(s, par, c); !errors.empty()) return errors;  // the layout's errors first
    return devices.errors();
  }
  return estimate_training_step(s, par, c, o, *devices, overrides);
}

Result<TrainingEstimate> estimate_training_step(const TransformerShape& s, const Parallelism& par,
                                                const ClusterSpec& c, const TrainingOptions& o,
                                                const TrainingDevices& devices,
                                                const CollectiveOverrides* overrides) {
  if (auto errors = check_layout(s, par, c); !errors.empty()) return errors;
  TrainingDevice g = devices.compute;
  // Row-wise scaled FP8 kernels saturate later (kRowwiseFp8HalfSaturationFactor).
  if (g.operand < 2.0 && o.fp8_rowwise_scaling) g.gemm_half_dim *= kRowwiseFp8HalfSaturationFactor();
  const TrainingDevice& g16 = g.operand < 2.0 ? devices.sixteen_bit : g;

  const double act = activation_bytes(o.compute);
  const int t = par.tensor, p = par.pipeline, d = par.data, v = par.interleave, cp = par.context;
  const double m = par.microbatches();
  const double tokens = static_cast<double>(par.micro_batch) * s.seq_len / cp;  // per GPU
  const double h = s.hidden;
  const bool frozen = o.fine_tuning != FineTuning::full;
  const LinkModel intra = intra_node_link(c);
  const LinkModel inter = inter_node_link(c);
  const LinkModel tp_link = intra_node_link(c, t);  // a TP group wider than an NVLink pair crosses PCIe

  const LayerTimes layer = layer_times(s, par, g, g16, act, o);

  // Uneven stages: chunks of ceil(L / (p v)) layers; the busiest stage holds v of them, the
  // last stage what remains, plus the output layer.
  const int chunk = (s.layers + p * v - 1) / (p * v);
  const StageLayers uneven = stage_layers(s.layers, p);
  const int busiest_layers = v > 1 ? std::min(s.layers, chunk * v) : uneven.middle;
  const int last_layers = v > 1 ? std::max(0, s.layers - (p - 1) * busiest_layers) : uneven.last;

  // Output logits and loss on the last pipeline stage: [T x h][h x V/t], in 16 bits.
  const double vocab_here = static_cast<double>(s.vocab) / t;
  const double logits_fwd = gemm_time(g16, tokens, vocab_here, h) + tokens * vocab_here * kLossBytesForward / g.bandwidth;
  const double logits_bwd = gemm_time(g16, tokens, h, vocab_here) +
                            (frozen ? 0.0 : gemm_time(g16, h, vocab_here, tokens)) +
                            tokens * vocab_here * kLossBytesBackward / g.bandwidth;
  const double logits_flops = 2.0 * static_cast<double>(par.micro_batch) * s.seq_len * s.vocab * h;

  // Tensor parallelism: 2 all-reduces of [b s h] forward and 2 backward per layer
  // (Megatron sec. 2.3, the f/g operators); sequence parallelism replaces each with an
  // all-gather + reduce-scatter of the same total cost (Korthikanti et al. sec. 4.2.2).
  // Full recompute repeats the 2 forward ones. Not overlapped with compute.
  const double tp_one = ring_all_reduce(Bytes(tokens * h * act), t, tp_link).value();
  const double full_recompute = par.recompute == Recompute::full ? par.recompute_fraction : 0.0;
  const double tp_per_layer = 4.0 + 2.0 * full_recompute;

  // Context parallelism (ring attention, Megatron-Core): each layer all-gathers K and V of
  // the cp ranks in forward, and in backward gathers them again and reduce-scatters their
  // gradients; each ring step overlaps with the attention of the block already received,
  // so only what exceeds the attention compute shows. cp ranks are t apart in rank order.
  double cp_layer = 0;
  if (cp > 1) {
    const GroupPlacement cp_group = data_parallel_placement(cp, t, c.gpus_per_node);
    const double kv_bytes = tokens * 2.0 * (s.kv_heads > 0 ? s.kv_heads : s.heads) * s.head_dim() / t * act * cp;
    const LinkModel link = cp_group.nodes > 1 ? inter : intra;
    const double gather = all_gather(Bytes(kv_bytes), cp, link).value();
    cp_layer = std::max(0.0, gather - layer.attention_fwd_time) +
               std::max(0.0, 2.0 * gather - 2.5 * layer.attention_fwd_time);
  }

  // Expert parallelism: all-to-all dispatch and combine of the routed tokens in forward,
  // and of their gradients in backward (again in a full recompute's forward). With
  // sequence parallelism a GPU sends only its 1/t of the tokens, and the tensor-parallel
  // group all-gathers what its ranks received (and reduce-scatters the experts' output
  // before the combine): permute -> A2A(EP) -> AG(TP) -> sort, as Megatron-Core's
  // all-to-all dispatcher runs it (token_dispatcher.py, core_r0.10.0 and later).
  double ep_layer = 0;
  if (par.expert > 1) {
    const GroupPlacement ep_group = data_parallel_placement(par.expert, t * cp, c.gpus_per_node);
    const double routed = std::max(1, s.experts_per_token);
    const double sp = par.sequence_parallel ? t : 1.0;
    const double exchange =
        o.moe_dispatch_per_node
            ? node_deduplicated_all_to_all(tokens / sp, h * act, static_cast<int>(routed), s.experts, par.expert,
                                           ep_group.in_node, intra, inter)
                  .value()
            : all_to_all(Bytes(tokens / sp * routed * h * act), par.expert, ep_group.in_node, intra, inter).value();
    const double tp_gather = sp > 1 ? all_gather(Bytes(tokens * routed * h * act), t, tp_link).value() : 0.0;
    ep_layer = (4.0 + 2.0 * full_recompute) * (exchange + tp_gather);
  }

  double recompute_layer = 0, recompute_flops = 0;
  if (par.recompute == Recompute::full) {
    recompute_layer = full_recompute * layer.forward;
    recompute_flops = full_recompute * layer.forward_flops;
  } else if (par.recompute == Recompute::selective && o.attention == Attention::eager) {
    recompute_layer = layer.attention_core_fwd;
    recompute_flops = layer.attention_core_flops;
  }

  // One micro-batch on the slowest stage (the busiest, or the last with the output layer).
  auto stage_time = [&](int layers, bool last) {
    return layers * (layer.forward + layer.backward + recompute_layer) +
           (last ? logits_fwd + logits_bwd : 0.0);
  };
  const bool last_is_slowest = p == 1 || stage_time(last_layers, true) >= stage_time(busiest_layers, false);
  const int stage_layers = last_is_slowest ? (p == 1 ? s.layers : last_layers) : busiest_layers;
  const double fwd_mb = stage_layers * layer.forward + (last_is_slowest ? logits_fwd : 0.0);
  const double bwd_mb = stage_layers * layer.backward + (last_is_slowest ? logits_bwd : 0.0);
  const double rec_mb = stage_layers * recompute_layer;
  // With TP comm overlap each collective runs in t chunks under its linear's GEMM: the
  // first chunk waits, the rest hides as far as the layer's linear GEMMs last.
  double tp_layer = tp_per_layer * tp_one;
  if (o.tp_comm_overlap && t > 1) {
    auto exposed = [&](double comm, double gemm) { return comm / t + std::max(0.0, comm * (t - 1.0) / t - gemm); };
    const double backward = o.tp_comm_overlap_backward ? exposed(2.0 * tp_one, layer.linear_backward) : 2.0 * tp_one;
    tp_layer = exposed(2.0 * tp_one, layer.linear_forward) + backward +
               full_recompute * exposed(2.0 * tp_one, layer.linear_forward);
  }
  const double tp_mb = stage_layers * tp_layer;
  const double cp_mb = stage_layers * cp_layer;
  const double ep_mb = stage_layers * ep_layer;

  // Host-bound MoE layers (kMoeLayerHostSeconds): the forward (and a full recompute's
  // forward) and the backward each wait for the host where it issues them more slowly than
  // the GPU runs them. A pass's GPU time includes its share of the layer's communication
  // (two of the 4 + 2 x recompute collectives per pass).
  double host_mb = 0;
  if (s.experts > 1) {
    const double host_fwd = kMoeLayerHostSeconds() * kMoeLayerHostForwardShare();
    const double host_bwd = kMoeLayerHostSeconds() - host_fwd;
    const double comm_per_pass = (tp_layer + cp_layer + ep_layer) * 2.0 / (4.0 + 2.0 * full_recompute);
    host_mb = stage_layers * ((1.0 + full_recompute) * std::max(0.0, host_fwd - layer.forward - comm_per_pass) +
                              std::max(0.0, host_bwd - layer.backward - comm_per_pass));
  }

  // Pipeline point-to-point: activations forward and gradients backward at each of the v
  // chunk boundaries. Across nodes each of the t GPUs sends 1/t over its own NIC, then an
  // all-gather over NVLink rebuilds the tensor (Megatron sec. 4.1, scatter/gather).
  // An interleaved schedule that overlaps them (TrainingOptions::overlap_p2p) waits only for
  // what outlasts the chunk computed meanwhile; the hidden part holds SMs like any
  // overlapped collective (kOverlapComputeSlowdown).
  double p2p_mb = 0;
  if (p > 1) {
    const double message = tokens * h * act;
    const bool crosses_nodes = par.gpus() > c.gpus_per_node;
    const double one = crosses_nodes ? point_to_point(Bytes(message / t), inter).value() +
                                           all_gather(Bytes(message), t, tp_link).value()
                                     : point_to_point(Bytes(message), intra).value();
    p2p_mb = 2.0 * v * one;
    if (o.overlap_p2p && v > 1) {
      const double chunk_layers = static_cast<double>(stage_layers) / v;
      const auto exposed = [&](double chunk) {
        return std::max(0.0, one - chunk) + kOverlapComputeSlowdown() * std::min(one, chunk);
      };
      p2p_mb = v * (exposed(chunk_layers * layer.forward) + exposed(chunk_layers * layer.backward));
    }
  }

  // Bubble: (p-1)/(m v) of the ideal time (Narayanan et al. eq. 1, 2); the ideal time is
  // m micro-batches of forward, backward, recompute, communication and point-to-point work.
  const double busy_mb = fwd_mb + bwd_mb + rec_mb + tp_mb + cp_mb + ep_mb + host_mb + p2p_mb;
  const double bubble = static_cast<double>(p - 1) / v * busy_mb;

  // Parameters on the busiest GPU: its stage's layers plus the output embedding (and the
  // input embedding too when the whole model is one stage and they are not tied).
  const double embedding = static_cast<double>(s.vocab) * h;
  const double embeddings_here = (p == 1 && !s.tied_embeddings) ? 2.0 : 1.0;
  const double params_gpu = (stage_layers * layer.params + embeddings_here * embedding) / t;
  const double trainable_gpu = frozen ? stage_layers * layer.trainable / t : params_gpu;

  // Data parallelism (over d x cp ranks, t apart): gradient all-reduce overlapped with the
  // last micro-batch's backward.
  const int dp_ranks = d * cp;
  const GroupPlacement dp_group = data_parallel_placement(dp_ranks, t, c.gpus_per_node);
  const double param_bytes = trainable_gpu * gradient_bytes(o.compute);
  const double grad_bytes = o.fp32_gradient_reduce ? trainable_gpu * 4.0 : param_bytes;
  double dp_sync = 0, dp_exposed = 0, zero = 0, zero_total = 0, zero_gather = 0, zero_scatter = 0;
  const int shard = par.zero_stage == 3 ? par.sharding_ranks() * cp : 1;
  if (par.zero_stage == 3 && shard > 1) {
    // ZeRO-3 / FSDP (Rajbhandari et al. 2020 sec. 7; Zhao et al., PyTorch FSDP, VLDB 2023):
    // every layer's 16-bit parameters are all-gathered over the shard group before its
    // forward, again before its backward (and before a full recompute's forward), and its
    // gradients reduce-scattered after its backward -- per micro-batch, at per-layer
    // message sizes. NCCL runs all-gather and reduce-scatter as rings (ring_gather_over):
    // n - 1 steps, each paying the slowest hop's latency. The next layer's gather is
    // prefetched under the current
    // layer's compute; what exceeds it, and the first layer's gather, are exposed.
    const GroupPlacement sg = data_parallel_placement(shard, t, c.gpus_per_node);
    const double layer_bytes = layer.params / t * gradient_bytes(o.compute);
    const double gather = ring_gather_over(layer_bytes, sg, shard, intra, inter);
    // Reduce-scatter: the same ring the other way, of the gradients (fp32 when so reduced).
    const double scatter = o.fp32_gradient_reduce
                               ? ring_gather_over(layer.params / t * 4.0, sg, shard, intra, inter)
                               : gather;
    zero_gather = gather;
    zero_scatter = scatter;
    const double recompute_gathers = full_recompute;
    const double per_mb_total = stage_layers * ((2.0 + recompute_gathers) * gather + scatter);
    const double per_mb_exposed =
        stage_layers * (std::max(0.0, gather - layer.forward) +
                        std::max(0.0, gather + scatter - layer.backward - recompute_layer) +
                        recompute_gathers * std::max(0.0, gather - layer.forward)) +
        gather;
    zero_total = m * per_mb_total;
    // The hidden part still costs: NCCL's kernels hold SMs (and HBM bandwidth) while the
    // layer computes, so the compute under them runs slower (kOverlapComputeSlowdown).
    zero = m * (per_mb_exposed + kOverlapComputeSlowdown() * std::max(0.0, per_mb_total - per_mb_exposed));
    // Hybrid sharding: the reduce-scattered shard is then all-reduced across the replicas.
    if (dp_ranks > shard) {
      const int replicas = dp_ranks / shard;
      const GroupPlacement rg = data_parallel_placement(replicas, t * shard, c.gpus_per_node);
      dp_sync = all_reduce_over(grad_bytes / shard, rg, replicas, intra, inter);
      dp_exposed = o.overlap_gradient_reduce ? exposed_gradient_sync(dp_sync, grad_bytes / shard, bwd_mb) : dp_sync;
      dp_exposed += kOverlapComputeSlowdown() * (dp_sync - dp_exposed);
    }
  } else {
    dp_sync = overrides && overrides->data_parallel_all_reduce
                  ? overrides->data_parallel_all_reduce->value()
                  : all_reduce_over(grad_bytes, dp_group, dp_ranks, intra, inter);
    if (par.zero_stage >= 1) {
      // ZeRO-1/2 (Megatron's distributed optimizer): the all-reduce is a reduce-scatter of the
      // gradients, hidden under the last micro-batch's backward, then an all-gather of the
      // updated 16-bit parameters, hidden under the next step's first forward
      // (--overlap-param-gather: each bucket is gathered just before the layers that use it).
      // Without an override dp_sync is the all-reduce of the gradients, whose two halves are
      // these two collectives when the bytes match; an override (the fabric's re-timing) is
      // already their total.
      const double total = overrides && overrides->data_parallel_all_reduce
                               ? dp_sync
                               : dp_sync / 2.0 * (1.0 + param_bytes / grad_bytes);
      const double scatter = total * grad_bytes / (grad_bytes + param_bytes);
      const double gather = total - scatter;
      dp_sync = total;
      dp_exposed = o.overlap_gradient_reduce ? exposed_chunked_sync(scatter, grad_bytes, bwd_mb, p, v) +
                                                   exposed_chunked_sync(gather, param_bytes, fwd_mb, p, v)
                                             : dp_sync;
    } else {
      dp_exposed = o.overlap_gradient_reduce ? exposed_chunked_sync(dp_sync, grad_bytes, bwd_mb, p, v) : dp_sync;
    }
    dp_exposed += kOverlapComputeSlowdown() * (dp_sync - dp_exposed);
  }

  const double optimizer_params =
      trainable_gpu / (par.zero_stage >= 1 ? (par.zero_stage == 3 ? shard : dp_ranks) : 1);

  TrainingEstimate r;
  StepBreakdown& b = r.breakdown;
  b.compute = Seconds(m * (fwd_mb + bwd_mb));
  b.recompute = Seconds(m * rec_mb);
  b.tensor_parallel_comm = Seconds(m * tp_mb);
  b.context_parallel_comm = Seconds(m * cp_mb);
  b.expert_parallel_comm = Seconds(m * ep_mb);
  b.host_overhead = Seconds(m * host_mb);
  b.pipeline_bubble = Seconds(m * p2p_mb + bubble);
  b.data_parallel_comm_exposed = Seconds(dp_exposed);
  r.gradient_bytes_per_gpu = Bytes(grad_bytes);
  r.parameter_gather_bytes_per_gpu =
      Bytes(par.zero_stage >= 1 && par.zero_stage < 3 && dp_ranks > 1 ? param_bytes : 0.0);
  r.data_parallel_all_reduce = Seconds(dp_sync);
  b.zero_comm = Seconds(zero);
  r.zero_comm_total = Seconds(zero_total);
  r.zero_layer_all_gather = Seconds(zero_gather);
  r.zero_ranks = par.zero_stage == 3 ? shard : 0;
  r.stage_layers = stage_layers;
  r.microbatches = m;
  r.forward_per_microbatch = Seconds(fwd_mb);
  r.backward_per_microbatch = Seconds(bwd_mb);
  r.recompute_per_microbatch = Seconds(rec_mb);
  r.tensor_parallel_per_microbatch = Seconds(tp_mb);
  r.point_to_point_per_microbatch = Seconds(p2p_mb);
  r.zero_layer_reduce_scatter = Seconds(zero_scatter);
  r.moe_routing_per_microbatch = Seconds(stage_layers * layer.routing);
  r.optimizer_params_per_gpu = optimizer_params;
  b.optimizer = Seconds(optimizer_time(optimizer_params, o, g.bandwidth));
  b.data_loading = Seconds(0.0);  // token ids: a few bytes per token, prefetched
  r.step_time = total(b);
  r.bottleneck = largest(b);
  // A cluster figure that is zero or not a number where a collective needs it would make a
  // part infinite or NaN; no such estimate leaves here (sizing skips the layout).
  if (!std::isfinite(r.step_time.value()) || !(r.step_time.value() > 0))
    return invalid("cluster", "the step of " + describe_layout(par) + " on '" + c.gpu.id + "' is not a finite time (" +
                                  std::string(bottleneck_name(r.bottleneck)) +
                                  "): a bandwidth or peak of the cluster is zero or missing");

  // Model FLOPs of the whole step: forward, data gradient, weight gradient (2 forwards
  // together unless weights are frozen), plus recompute for the achieved figure.
  const double sequences = par.global_batch;
  const double per_sequence_fwd = (s.layers * layer.forward_flops + logits_flops) / par.micro_batch;
  const double backward_factor = frozen ? 1.0 : 2.0;
  const double model_flops = sequences * (1.0 + backward_factor) * per_sequence_fwd;
  const double recompute_total = sequences / par.micro_batch * s.layers * recompute_flops;
  const double gpus = par.gpus();
  const double step = r.step_time.value();
  r.tokens_per_second = sequences * s.seq_len / step;
  r.achieved_flops_per_gpu = FlopsPerSecond((model_flops + recompute_total) / gpus / step);
  r.mfu = model_flops / (gpus * step * g16.peak);
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
  const TrainingDevice& g = *device;

  // Forward + backward = 3 forwards of FLOPs in convolutions/GEMMs, plus the element-wise
  // kernels (batch norm, activation, pooling) that stream the saved activations: written
  // in forward, read and their gradients written in backward (3 passes). They are separate
  // kernels, so their times add.
  const double batch = batch_per_gpu;
  const double flops = 3.0 * model.forward_flops_per_sample * batch;
  double compute = flops / (g.gemm_max_efficiency * g.gemm_peak) +
                   3.0 * model.activation_bytes_per_sample * batch / g.bandwidth;
  // A network with a layer list (cnn.hpp: "resnet-50" -> resnet50) is timed layer by layer,
  // with the precision path a framework uses (and the GPU's calibration profile where one is
  // imported: cnn.cpp, with_measured); the per-sample figures above are the fallback
  // for models without one. Mixed precision is planned channels-last, as NVIDIA's training
  // recipes run it (DeepLearningExamples ConvNets/configs.yml: memory_format nhwc for every
  // AMP entry): in NCHW the layout transposes cost mixed-precision ResNet-50 a factor 1.75
  // on an H100 (data/validation/measured-here).
  std::string layered = model.name;
  layered.erase(std::remove(layered.begin(), layered.end(), '-'), layered.end());
  if (const CnnNetwork* net = find_cnn(layered); net != nullptr) {
    const bool sixteen_bit = o.compute == Precision::fp16 || o.compute == Precision::bf16;
    auto step = cnn_training_step(*net, batch_per_gpu, c.gpu, o.compute, sixteen_bit);
    if (step) compute = step->time.value();
  }

  const LinkModel intra = intra_node_link(c);
  const LinkModel inter = inter_node_link(c);
  const GroupPlacement group = data_parallel_placement(gpus, 1, c.gpus_per_node);
  const double grad_bytes = model.params * (o.fp32_gradient_reduce ? 4.0 : gradient_bytes(o.compute));
  const double sync = all_reduce_over(grad_bytes, group, gpus, intra, inter);

  // Input tensors cross PCIe while the previous step computes (DataLoader prefetch).
  double loading = 0;
  if (c.pcie_bandwidth.value() > 0)
    loading = std::max(0.0, model.input_bytes_per_sample * batch / c.pcie_bandwidth.value() - compute);

  TrainingEstimate r;
  StepBreakdown& b = r.breakdown;
  b.compute = Seconds(compute);
  b.data_parallel_comm_exposed =
      Seconds(o.overlap_gradient_reduce ? exposed_gradient_sync(sync, grad_bytes, compute * 2.0 / 3.0) : sync);
  b.optimizer = Seconds(optimizer_time(model.params, o, g.bandwidth));
  b.data_loading = Seconds(loading);
  r.gradient_bytes_per_gpu = Bytes(grad_bytes);
  r.data_parallel_all_reduce = Seconds(gpus > 1 ? sync : 0.0);
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
