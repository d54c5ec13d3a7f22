// Workloads: what is trained or served. Transformers (dense and mixture-of-experts) from
// presets or an explicit shape, CNNs from presets, and generic models given by FLOPs and
// bytes per sample. Parameter counts and FLOPs are derived from the shape; presets carry
// the published figures they are checked against, with their source.
//
// All types are plain values; all functions are pure and thread-safe.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "capsim/core/result.hpp"
#include "capsim/core/units.hpp"

namespace capsim::models {

enum class Precision { fp32, tf32, fp16, bf16, fp8, int8, int4 };
std::string_view precision_name(Precision p);  // "bf16"
std::optional<Precision> precision_from_name(std::string_view name);
double bytes_per_value(Precision p);            // fp32 4, tf32 4, fp16/bf16 2, fp8/int8 1, int4 0.5

struct TransformerShape {
  std::string name;
  int layers = 0;
  int hidden = 0;        // model width h
  int heads = 0;         // attention heads a
  int kv_heads = 0;      // key/value heads (grouped-query attention); == heads for MHA
  int ffn_hidden = 0;    // MLP inner width (4h for GPT; 14336 for Llama-3-8B)
  int vocab = 0;
  int seq_len = 0;       // training / context sequence length s
  bool gated_mlp = false;        // SwiGLU-style MLP with three weight matrices (Llama, Mistral)
  int experts = 1;               // mixture-of-experts: experts per MoE layer
  int experts_per_token = 1;     // top-k routing
  bool tied_embeddings = false;  // input and output embeddings share weights
  bool encoder_only = false;     // BERT-style (bidirectional; no KV cache at inference)
  // Width of one attention head when it is not hidden / heads (GPT-3 1.3B: 24 heads of
  // 128 in a 2048-wide model, Brown et al. 2020 Table 2.1). 0: hidden / heads.
  int head_dim_override = 0;
  int sliding_window = 0;        // tokens a query attends to (Mistral 4096); 0: the whole context

  int head_dim() const { return head_dim_override > 0 ? head_dim_override : hidden / heads; }
  // Keys a query attends to on average in a causal sequence of seq_len tokens.
  double attended_keys() const;
};

// Parameters (weights) counted from the shape: embeddings, attention (q, k, v, o with
// grouped-query k/v), MLP (2 or 3 matrices, times experts), layer norms and biases as
// the architecture has them. `active` counts only the experts_per_token experts (MoE).
double parameter_count(const TransformerShape& s);
double active_parameter_count(const TransformerShape& s);
// The token table, the output projection unless tied, and a learned position table where
// the architecture has one: the parameters that are not inside the transformer blocks.
double embedding_parameter_count(const TransformerShape& s);

// Model FLOPs per token for one forward pass, counting 2 FLOPs per multiply-add:
// 2 * active non-embedding parameters + the attention score/value products
// (2 * 2 * layers * seq_len * hidden, causal masking not subtracted) + the output logits.
double forward_flops_per_token(const TransformerShape& s);
// Training: forward + backward = 3 forwards (no recompute).
double training_flops_per_token(const TransformerShape& s);

struct TransformerPreset {
  TransformerShape shape;
  double published_params = 0;  // as the model's authors state it
  std::string source;           // paper or model card
  std::string as_of;
  // Tokens the released model attends over, prompt and output together (its position
  // embeddings or max_position_embeddings), from `source`; shape.seq_len is the training
  // length, which can be shorter (Llama 3.1: 8192 trained, 131072 released). LLM serving
  // refuses a request longer than this. Every shipped preset gives one.
  int context_length = 0;
};
std::span<const TransformerPreset> transformer_presets();
const TransformerPreset* find_transformer_preset(std::string_view name);  // e.g. "llama-3.1-70b"

// CNN or any model described by per-sample figures.
struct SampleModel {
  std::string name;
  double params = 0;
  double forward_flops_per_sample = 0;   // 2 FLOPs per multiply-add
  double activation_bytes_per_sample = 0;  // saved for backward, at the training precision
  double input_bytes_per_sample = 0;     // decoded input tensor (e.g. 3x224x224 fp32)
  int input_resolution = 0;              // pixels per side, 0 when not an image model
  std::string source;
  std::string as_of;
};
std::span<const SampleModel> sample_model_presets();  // resnet-34/50/101, efficientnet-b2
const SampleModel* find_sample_model_preset(std::string_view name);

using Workload = std::variant<TransformerShape, SampleModel>;

}  // namespace capsim::models
