// Precision names and sizes, and parameter / FLOP counts derived from a transformer shape.
//
// The shape has no explicit "biases" or "position embedding" switch, so the count follows the
// two architecture families the presets cover:
//   - gated_mlp (Llama, Mistral, Mixtral): no biases, RMSNorm (one weight vector per norm),
//     rotary positions (no position table).
//   - otherwise (GPT-2/3, BERT): biases on every linear layer, LayerNorm (weight and bias),
//     a learned position table of seq_len rows.
#include <array>
#include <utility>

#include "capsim/models/workload.hpp"
#include "capsim/models/parallelism.hpp"
#include "capsim/core/text.hpp"

namespace capsim::models {

namespace {

constexpr std::array<std::pair<Precision, std::string_view>, 7> kPrecisionNames{{
    {Precision::fp32, "fp32"},
    {Precision::tf32, "tf32"},
    {Precision::fp16, "fp16"},
    {Precision::bf16, "bf16"},
    {Precision::fp8, "fp8"},
    {Precision::int8, "int8"},
    {Precision::int4, "int4"},
}};

// Width of the key and value projections: kv_heads * head_dim, kept exact for shapes whose
// hidden size is not a multiple of the head count (GPT-3 13B lists d_model 5140, 40 heads).
// With an explicit head width (GPT-3 1.3B: 24 x 128 in a 2048-wide model) the widths are
// heads x head_dim.
double kv_width(const TransformerShape& s) {
  if (s.head_dim_override > 0) return static_cast<double>(s.kv_heads) * s.head_dim_override;
  return static_cast<double>(s.hidden) * s.kv_heads / s.heads;
}
double q_width(const TransformerShape& s) {
  if (s.head_dim_override > 0) return static_cast<double>(s.heads) * s.head_dim_override;
  return s.hidden;
}

bool has_biases(const TransformerShape& s) { return !s.gated_mlp; }

// LayerNorm has a weight and a bias; RMSNorm only a weight.
double norm_params(const TransformerShape& s) { return has_biases(s) ? 2.0 * s.hidden : s.hidden; }

double attention_params(const TransformerShape& s) {
  const double h = s.hidden, q = q_width(s), kv = kv_width(s);
  const double weights = 2 * h * q + 2 * h * kv;  // q and o: h x q; k and v: h x kv
  const double biases = has_biases(s) ? q + h + 2 * kv : 0.0;
  return weights + biases;
}

double expert_mlp_params(const TransformerShape& s) {
  const double h = s.hidden, f = s.ffn_hidden;
  const double matrices = s.gated_mlp ? 3.0 : 2.0;  // SwiGLU: gate, up, down
  const double biases = has_biases(s) ? f + h : 0.0;
  return matrices * h * f + biases;
}

double router_params(const TransformerShape& s) {
  return s.experts > 1 ? static_cast<double>(s.hidden) * s.experts : 0.0;
}

// One transformer block with `experts_held` copies of the MLP.
double layer_params(const TransformerShape& s, int experts_held) {
  return attention_params(s) + experts_held * expert_mlp_params(s) + router_params(s) +
         2 * norm_params(s);
}

// Token table, output projection (unless tied), learned position table, final norm.
double embedding_params(const TransformerShape& s) {
  const double h = s.hidden;
  const double tables = s.tied_embeddings ? 1.0 : 2.0;
  const double positions = has_biases(s) ? static_cast<double>(s.seq_len) * h : 0.0;
  return tables * s.vocab * h + positions;
}

double count(const TransformerShape& s, int experts_held) {
  return s.layers * layer_params(s, experts_held) + embedding_params(s) + norm_params(s);
}

}  // namespace

std::string_view precision_name(Precision p) {
  for (const auto& [value, name] : kPrecisionNames)
    if (value == p) return name;
  return "unknown";
}

std::optional<Precision> precision_from_name(std::string_view name) {
  for (const auto& [value, known] : kPrecisionNames)
    if (known == name) return value;
  return std::nullopt;
}

double bytes_per_value(Precision p) {
  switch (p) {
    case Precision::fp32:
    case Precision::tf32:  // tf32 is an fp32 storage format with a shorter mantissa in the MMA
      return 4.0;
    case Precision::fp16:
    case Precision::bf16:
      return 2.0;
    case Precision::fp8:
    case Precision::int8:
      return 1.0;
    case Precision::int4:
      return 0.5;
  }
  return 4.0;
}

double parameter_count(const TransformerShape& s) { return count(s, s.experts); }

double embedding_parameter_count(const TransformerShape& s) { return embedding_params(s); }

double active_parameter_count(const TransformerShape& s) {
  return count(s, s.experts > 1 ? s.experts_per_token : 1);
}

// Kaplan et al. 2020 (Scaling Laws, Table 1) with 2 FLOPs per multiply-add: every weight
// of a linear layer is one multiply-add per token, attention adds QK^T and AV over the
// context (2 * seq_len * hidden multiply-adds per layer), and the output logits are a
// hidden x vocab product whether or not the table is tied to the input.
double forward_flops_per_token(const TransformerShape& s) {
  const double non_embedding = active_parameter_count(s) - embedding_params(s);
  const double attention = 2.0 * 2.0 * s.layers * static_cast<double>(s.seq_len) * q_width(s);
  const double logits = 2.0 * static_cast<double>(s.hidden) * s.vocab;
  return 2.0 * non_embedding + attention + logits;
}

// Backward costs two forwards: gradients with respect to activations and to weights
// (Narayanan et al. 2021, Sec. 5.1).
double training_flops_per_token(const TransformerShape& s) {
  return 3.0 * forward_flops_per_token(s);
}

}  // namespace capsim::models

namespace capsim::models {

std::string describe_layout(const Parallelism& p) {
  std::string out = "t=" + std::to_string(p.tensor) + " p=" + std::to_string(p.pipeline);
  if (p.interleave > 1) out += " v=" + std::to_string(p.interleave);
  if (p.context > 1) out += " cp=" + std::to_string(p.context);
  if (p.expert > 1) out += " ep=" + std::to_string(p.expert);
  out += " d=" + std::to_string(p.data) + " mb=" + std::to_string(p.micro_batch);
  if (p.tensor > 1 && !p.sequence_parallel) out += " no-sp";
  out += " zero=" + std::to_string(p.zero_stage);
  if (p.zero_stage == 3 && p.shard_group > 0) out += " shard=" + std::to_string(p.shard_group);
  out += " recompute=" + std::string(recompute_name(p.recompute));
  if (p.recompute == Recompute::full && p.recompute_fraction < 1) out += "(" + significant(p.recompute_fraction, 3) + ")";
  return out;
}

StageLayers stage_layers(int layers, int pipeline) {
  if (pipeline <= 1) return {layers, layers, layers};
  if (layers % pipeline == 0) return {layers / pipeline, layers / pipeline, layers / pipeline};
  const int middle = (layers + pipeline - 1) / pipeline;
  const int rest = layers - (pipeline - 2) * middle;
  if (rest < 2) return {middle, std::max(0, rest), 0};  // too few layers to share: the last gets none
  return {middle, rest / 2, rest - rest / 2};
}

std::string_view attention_name(Attention a) { return a == Attention::flash ? "flash" : "eager"; }

std::string_view flash_kernel_name(FlashKernel k) {
  switch (k) {
    case FlashKernel::fa1: return "fa1";
    case FlashKernel::fa2: return "fa2";
    case FlashKernel::fa3: return "fa3";
  }
  return "fa2";
}

std::string_view kernels_name(Kernels k) { return k == Kernels::fused ? "fused" : "eager"; }

double TransformerShape::attended_keys() const {
  // Causal attention: query i sees i + 1 keys, (s + 1) / 2 on average; a sliding window
  // of w caps each query at w keys.
  const double s = seq_len;
  if (sliding_window <= 0 || sliding_window >= seq_len) return (s + 1.0) / 2.0;
  const double w = sliding_window;
  return (w * (w + 1.0) / 2.0 + (s - w) * w) / s;
}

std::string_view recompute_name(Recompute r) {
  switch (r) {
    case Recompute::none: return "none";
    case Recompute::selective: return "selective";
    case Recompute::full: return "full";
  }
  return "";
}

}  // namespace capsim::models
