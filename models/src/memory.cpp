// Memory rules. Each public function computes plain numbers first (the terms) and only
// then, if asked for a breakdown, formats them, so the total the sizing search uses and the
// breakdown users read come from the same arithmetic.
#include "capsim/models/memory.hpp"
#include "capsim/core/text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace capsim::models {

namespace {

// ---- formatting ---------------------------------------------------------------------------

std::string sci(double v) {  // 7.00e9, 2.07e8 (printf's "7.00e+09" without '+' and zeros)
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2e", v);
  std::string s = buf;
  const auto e = s.find('e');
  if (e == std::string::npos) return s;  // inf, nan
  std::size_t digits = e + 1;
  if (s[digits] == '+') s.erase(digits, 1);
  if (s[digits] == '-') ++digits;
  while (digits + 1 < s.size() && s[digits] == '0') s.erase(digits, 1);
  return s;
}

std::string num(double v) {  // 12, 0.5, 1.406
  return significant(v, 6);
}

std::string gb(double bytes) { return to_string(Bytes(bytes)); }

void add_formula(MemoryBreakdown& m, double bytes, std::string text) {
  if (bytes > 0) m.formulas.push_back(std::move(text) + " = " + gb(bytes));
}

// `ranks` names what ZeRO shards over: "d", "d x cp" with context parallelism, "shard group"
// with hybrid sharding.
std::string zero_suffix(double divisor, int stage, const std::string& ranks = "d") {
  if (divisor <= 1) return "";
  return " / " + ranks + "=" + num(divisor) + " (ZeRO-" + std::to_string(stage) + ")";
}

// ---- model states -------------------------------------------------------------------------

// Bytes per trained parameter.
struct StateBytes {
  double weights = 0, gradients = 0, optimizer = 0;
};

// Mixed precision (Micikevicius et al. 2018; ZeRO Sec. 3.1): weights and gradients at the
// compute precision, Adam m and v in fp32 (8 B) and an fp32 master copy (4 B) unless the
// weights already are fp32. Without mixed precision, all four at the compute precision.
// 8-bit matrix math (FP8 training) keeps the weights and gradients in 16 bits and casts
// FP8 copies from them: Transformer Engine's modules hold "both higher precision and FP8
// copies" of their parameters unless built under fp8_model_init (transformer_engine/pytorch/
// fp8.py, fp8_model_init's docstring). A copy cast once per step is kept, with the transpose
// the backward's GEMM reads, until the optimizer changes the weight (2 x 1 B/param); copies
// cast for every micro-batch live one layer at a time and are not counted.
bool states_in_16_bits_beside_8_bit_math(const TrainingOptions& opt) {
  return opt.mixed_precision && bytes_per_value(opt.compute) < 2.0;
}

StateBytes trainable_state_bytes(const TrainingOptions& opt) {
  const double b = bytes_per_value(opt.compute);
  if (!opt.mixed_precision) return {b, b, 2 * b};
  if (states_in_16_bits_beside_8_bit_math(opt)) {
    const double copies = opt.fp8_weights_cast_once_per_step && !opt.fp8_rowwise_scaling ? 2.0 * b : 0.0;
    return {2.0 + copies, 2.0, 12.0};
  }
  const double master = b < 4 ? 4.0 : 0.0;
  return {b, b, 8.0 + master};
}

std::string state_bytes_note(const TrainingOptions& opt, const StateBytes& sb) {
  if (!opt.mixed_precision) return "Adam m, v at " + std::string(precision_name(opt.compute));
  return sb.optimizer > 8 ? "fp32 master 4 + Adam m, v 8" : "Adam m, v in fp32";
}

// What a trained parameter's weight and gradient bytes are, for the formulas.
std::string weight_bytes_note(const TrainingOptions& opt, const StateBytes& sb) {
  const std::string compute(precision_name(opt.compute));
  if (!states_in_16_bits_beside_8_bit_math(opt)) return compute;
  if (sb.weights > sb.gradients)
    return "bf16 2 + " + compute + " copy and transpose " + num(sb.weights - sb.gradients) + ", kept for the step";
  return "bf16; the " + compute + " copies are cast per micro-batch";
}

std::string gradient_bytes_note(const TrainingOptions& opt) {
  return states_in_16_bits_beside_8_bit_math(opt) ? "bf16" : std::string(precision_name(opt.compute));
}

// ZeRO-DP (Rajbhandari et al. 2020, Sec. 5): stage 1 shards optimizer states over the d
// data-parallel ranks, stage 2 also gradients, stage 3 also weights.
struct ZeroDivisors {
  double weights = 1, gradients = 1, optimizer = 1;
};

ZeroDivisors zero_divisors(int stage, int data_parallel) {
  const double d = data_parallel;
  return {stage >= 3 ? d : 1.0, stage >= 2 ? d : 1.0, stage >= 1 ? d : 1.0};
}

// QLoRA (Dettmers et al. 2023, Sec. 3, Double Quantization): 4-bit NF4 values plus 8-bit
// constants per 64-value block plus fp32 second-level constants per 256 blocks:
// 4 + 8/64 + 32/(64*256) = 4.127 bits per parameter.
constexpr double kNf4BytesPerParam = (4.0 + 8.0 / 64 + 32.0 / (64 * 256)) / 8.0;

// ---- the terms of a training estimate -----------------------------------------------------

struct Components {
  double weights = 0, gradients = 0, optimizer = 0, activations = 0, kv_cache = 0, overhead = 0;
  // Same order of additions as MemoryBreakdown::total(), so both give the same double.
  double total() const {
    return weights + gradients + optimizer + activations + kv_cache + overhead;
  }
};

struct TrainingTerms {
  double params = 0;        // whole model
  double trainable = 0;     // all params, or the LoRA adapters
  double frozen_bytes = 0;  // frozen base weights of the whole model (LoRA/QLoRA)
  double model_shards = 1;  // t x p
  StateBytes state;
  ZeroDivisors zero;
  double layer_bytes = 0;       // activations of one layer, one microbatch
  double layers_worth = 0;      // layers' activations held by the first stage
  double in_flight = 1;         // microbatches in flight on the first stage
  double edge_bytes = 0;        // embedding dropout + output layer activations
  double precision_factor = 1;  // activations stored at 4 B instead of 2 B
  Components c;
};

double adapted_matrices_params(const TransformerShape& s, int rank) {
  const double h = s.hidden, f = s.ffn_hidden, r = rank;
  const double kv = h * s.kv_heads / s.heads;
  const double attention = r * (h + h) * 2 + r * (h + kv) * 2;  // q, o; k, v
  const double mlp = (s.gated_mlp ? 3.0 : 2.0) * r * (h + f) * s.experts;
  return s.layers * (attention + mlp);
}

double frozen_weight_bytes(const TransformerShape& s, const TrainingOptions& opt) {
  const double b = bytes_per_value(opt.compute);
  const double params = parameter_count(s);
  if (opt.fine_tuning == FineTuning::lora) return params * b;
  const double embeddings = embedding_parameter_count(s);  // not quantized by QLoRA
  return embeddings * b + (params - embeddings) * kNf4BytesPerParam;
}

void fill_model_states(TrainingTerms& t, const TransformerShape& s, const Parallelism& par,
                       const TrainingOptions& opt) {
  t.params = parameter_count(s);
  // Expert parallelism splits the experts' MLP weights over ep ranks as well.
  if (s.experts > s.experts_per_token && par.expert > 1) {
    const double per_expert = (t.params - active_parameter_count(s)) / (s.experts - s.experts_per_token);
    t.params -= s.experts * per_expert * (1.0 - 1.0 / par.expert);
  }
  t.model_shards = static_cast<double>(par.tensor) * par.pipeline;
  // Uneven stages (p does not divide L): the first stage holds fewer layers than L / p.
  if (par.pipeline > 1 && s.layers % par.pipeline != 0)
    t.model_shards = static_cast<double>(par.tensor) * s.layers / first_stage_layers(s.layers, par.pipeline);
  t.state = trainable_state_bytes(opt);
  // ZeRO shards over the data-parallel ranks (d x cp, as Megatron-Core's distributed
  // optimizer does), or over the shard group of hybrid sharding.
  t.zero = zero_divisors(par.zero_stage, (par.zero_stage == 3 ? par.sharding_ranks() : par.data) * par.context);
  const bool adapters = opt.fine_tuning != FineTuning::full;
  t.trainable = adapters ? lora_adapter_parameter_count(s, opt.lora_rank) : t.params;
  t.frozen_bytes = adapters ? frozen_weight_bytes(s, opt) : 0.0;
  const double shard = t.model_shards;
  t.c.weights = (t.frozen_bytes + t.trainable * t.state.weights) / shard / t.zero.weights;
  t.c.gradients = t.trainable * t.state.gradients / shard / t.zero.gradients;
  t.c.optimizer = t.trainable * t.state.optimizer / shard / t.zero.optimizer;
}

// Korthikanti et al. 2022, Table 2: activation bytes of one transformer layer for one
// microbatch, with 16-bit activations and 1-byte dropout masks, for GPT (4h GeLU MLP,
// multi-head attention, dropout):
//   no parallelism:          sbh(34 + 5as/h)
//   tensor parallel t:       sbh(10 + 24/t + 5as/(ht))
//   + sequence parallel:     sbh(34/t + 5as/(ht))
//   selective recompute:     the 5as/(ht) term (attention scores, softmax, dropout) is dropped
//   full recompute:          2sbh (the layer input only), /t with sequence parallelism
// The same accounting for other shapes, per sbh: kept whole without sequence parallelism:
// the two norms' inputs 4, the attention and MLP inputs 2 + 2, dropout masks 2 (models
// without dropout, the Llama family, have none); split over t: Q 2, K and V 4 x kv/heads
// (grouped-query attention), the output projection's input 2, the MLP's inner activations
// 4f/h (GeLU input and output) or 6f/h (SwiGLU gate, up and product), times the experts a
// token visits. The 5as/(ht) term is eager attention's (2as/(ht) without dropout): FlashAttention
// never stores the scores; it keeps the softmax statistics (4 B per head per token, /t)
// and recomputes the scores in backward (Dao et al. 2022, sec. 3.1). Context parallelism
// splits the sequence: s/cp tokens per GPU.
double layer_activation_bytes(const TransformerShape& s, const Parallelism& par, Attention attention) {
  const double seq = static_cast<double>(s.seq_len) / par.context;
  const double sbh = seq * par.micro_batch * s.hidden;
  const double t = par.tensor;
  const bool sp = par.sequence_parallel && par.tensor > 1;
  if (par.recompute == Recompute::full) return 2.0 * sbh / (sp ? t : 1.0);
  const bool dropout = !s.gated_mlp;
  const double kv_ratio = static_cast<double>(s.kv_heads > 0 ? s.kv_heads : s.heads) / s.heads;
  const double q_ratio = static_cast<double>(s.heads) * s.head_dim() / s.hidden;
  const double ffn_ratio = static_cast<double>(s.ffn_hidden) / s.hidden * std::max(1, s.experts_per_token);
  const double whole = 8.0 + (dropout ? 2.0 : 0.0);
  const double split = 2.0 * q_ratio + 4.0 * kv_ratio * q_ratio + 2.0 * q_ratio +
                       (s.gated_mlp ? 6.0 : 4.0) * ffn_ratio;
  const double linear = sp ? (whole + split) / t : whole + split / t;
  if (attention == Attention::flash) return sbh * linear + 4.0 * s.heads * seq * par.micro_batch / t;
  const double scores = par.recompute == Recompute::selective
                            ? 0.0
                            : (dropout ? 5.0 : 2.0) * s.heads * seq / (s.hidden * t);
  return sbh * (linear + scores);
}

// Microbatches whose activations the first pipeline stage holds at its peak: with 1F1B it
// runs p forwards before its first backward (Narayanan et al. 2021, Sec. 2.2), fewer if the
// batch has fewer microbatches.
double first_stage_in_flight(const Parallelism& par) {
  const int microbatches = std::max(1, par.microbatches());
  return par.pipeline > 1 ? std::min(par.pipeline, microbatches) : 1;
}

// Layers' worth of activations on the first stage (Korthikanti et al. 2022, Sec. 4.3):
// L/p layers x p microbatches = L with 1F1B; the interleaved schedule with m virtual stages
// per GPU holds L(1 + (p-1)/(pm)).
double first_stage_layers_worth(const TransformerShape& s, const Parallelism& par,
                                double in_flight) {
  const double p = par.pipeline, m = std::max(1, par.interleave);
  const double interleaving = par.pipeline > 1 && m > 1 ? 1.0 + (p - 1) / (p * m) : 1.0;
  return first_stage_layers(s.layers, par.pipeline) * in_flight * interleaving;
}

// Korthikanti et al. 2022, Sec. 4.4: the input-embedding dropout mask (sbh bytes per
// microbatch in flight, /t with sequence parallelism) and, when the first stage is also the
// last (p = 1), the final layer norm and output projection inputs (2sbh + 2sbh, /t with
// sequence parallelism) and the fp32 logits of the cross-entropy loss (4sbv/t). Context
// parallelism splits the sequence here too: each rank embeds, projects and scores its s/cp
// tokens.
double edge_activation_bytes(const TransformerShape& s, const Parallelism& par, double in_flight,
                             double precision_factor) {
  const double sb = static_cast<double>(s.seq_len) / par.context * par.micro_batch;
  const double t = par.tensor;
  const double sp_div = par.sequence_parallel && par.tensor > 1 ? t : 1.0;
  const double dropout = sb * s.hidden * in_flight / sp_div;
  if (par.pipeline > 1) return dropout;
  const double output = 4.0 * sb * s.hidden / sp_div * precision_factor + 4.0 * sb * s.vocab / t;
  return dropout + output;
}

void fill_activations(TrainingTerms& t, const TransformerShape& s, const Parallelism& par,
                      const TrainingOptions& opt) {
  t.precision_factor = bytes_per_value(opt.compute) >= 4 ? 2.0 : 1.0;
  t.layer_bytes = layer_activation_bytes(s, par, opt.attention) * t.precision_factor;
  t.in_flight = first_stage_in_flight(par);
  t.layers_worth = first_stage_layers_worth(s, par, t.in_flight);
  t.edge_bytes = edge_activation_bytes(s, par, t.in_flight, t.precision_factor);
  t.c.activations = t.layer_bytes * t.layers_worth + t.edge_bytes;
}

TrainingTerms training_terms(const TransformerShape& s, const Parallelism& par,
                             const TrainingOptions& opt) {
  TrainingTerms t;
  fill_model_states(t, s, par, opt);
  fill_activations(t, s, par, opt);
  t.c.overhead = opt.overhead_fraction * t.c.total();
  return t;
}

MemoryBreakdown to_breakdown(const Components& c, std::string rule) {
  MemoryBreakdown m;
  m.weights = Bytes(c.weights);
  m.gradients = Bytes(c.gradients);
  m.optimizer = Bytes(c.optimizer);
  m.activations = Bytes(c.activations);
  m.kv_cache = Bytes(c.kv_cache);
  m.overhead = Bytes(c.overhead);
  m.rule = std::move(rule);
  return m;
}

void explain_overhead(MemoryBreakdown& m, double fraction, double overhead) {
  if (overhead <= 0) return;
  add_formula(m, overhead,
              "overhead = " + num(fraction * 100) + "% x " + gb(overhead / fraction) +
                  " (framework, allocator fragmentation)");
}

// The per-layer coefficients of layer_activation_bytes, as text: "sbh(34/t)" for GPT,
// "sbh(16 + 16.12/t)" for Llama without sequence parallelism.
std::string linear_text(const TransformerShape& s, const Parallelism& par) {
  const bool sp = par.sequence_parallel && par.tensor > 1;
  const bool dropout = !s.gated_mlp;
  const double kv_ratio = static_cast<double>(s.kv_heads > 0 ? s.kv_heads : s.heads) / s.heads;
  const double q_ratio = static_cast<double>(s.heads) * s.head_dim() / s.hidden;
  const double ffn_ratio = static_cast<double>(s.ffn_hidden) / s.hidden * std::max(1, s.experts_per_token);
  const double whole = 8.0 + (dropout ? 2.0 : 0.0);
  const double split = 4.0 * q_ratio + 4.0 * kv_ratio * q_ratio + (s.gated_mlp ? 6.0 : 4.0) * ffn_ratio;
  return sp ? "sbh(" + num(whole + split) + "/t)" : "sbh(" + num(whole) + " + " + num(split) + "/t)";
}

std::string recompute_text(const TransformerShape& s, const Parallelism& par, Attention attention) {
  const bool sp = par.sequence_parallel && par.tensor > 1;
  const std::string scores = !s.gated_mlp ? "5as/(ht)" : "2as/(ht)";
  if (attention == Attention::flash && par.recompute != Recompute::full)
    return linear_text(s, par) + " + 4asb/t softmax statistics, flash attention" +
           (par.recompute == Recompute::selective ? " (selective recompute: nothing more to drop)" : "");
  switch (par.recompute) {
    case Recompute::full:
      return sp ? "2sbh/t, full recompute" : "2sbh, full recompute";
    case Recompute::selective:
      return linear_text(s, par) + ", selective";
    case Recompute::none:
      break;
  }
  const std::string linear = linear_text(s, par);
  return linear.substr(0, linear.size() - 1) + " + " + scores + "), eager attention";
}

// "activations = 107 MB/layer [sbh(34/t), selective, s=2048 ...] x 96 layers' worth ..."
std::string activation_formula(const TrainingTerms& t, const TransformerShape& s,
                               const Parallelism& par, const TrainingOptions& opt) {
  return "activations = " + gb(t.layer_bytes) + "/layer [" + recompute_text(s, par, opt.attention) +
         ", s=" + std::to_string(s.seq_len) +
         (par.context > 1 ? "/cp=" + std::to_string(s.seq_len / par.context) + " per GPU" : "") +
         " b=" + std::to_string(par.micro_batch) +
         " h=" + std::to_string(s.hidden) + " a=" + std::to_string(s.heads) +
         " t=" + std::to_string(par.tensor) + (t.precision_factor > 1 ? ", x2 for fp32" : "") +
         "] x " + num(t.layers_worth) +
         " layers' worth (first stage of p=" + std::to_string(par.pipeline) + ", " +
         num(t.in_flight) + " microbatch" + (t.in_flight > 1 ? "es" : "") + " in flight" +
         (par.interleave > 1 ? ", interleaved" : "") + ") + " + gb(t.edge_bytes) +
         " embedding/output (Korthikanti et al. 2022)";
}

void explain_training(MemoryBreakdown& m, const TrainingTerms& t, const TransformerShape& s,
                      const Parallelism& par, const TrainingOptions& opt) {
  const bool uneven = par.pipeline > 1 && s.layers % par.pipeline != 0;
  const std::string shards =
      uneven ? " x " + std::to_string(first_stage_layers(s.layers, par.pipeline)) + "/" + std::to_string(s.layers) +
                   " layers (first of p=" + std::to_string(par.pipeline) + " uneven stages) / t=" +
                   std::to_string(par.tensor)
             : " / (t=" + std::to_string(par.tensor) + " x p=" + std::to_string(par.pipeline) + ")";
  const std::string compute(precision_name(opt.compute));
  const std::string trained =
      sci(t.trainable) + (opt.fine_tuning == FineTuning::full ? " params" : " adapter params");
  const int stage = par.zero_stage;
  const std::string ranks =
      std::string(stage == 3 && par.shard_group > 0 ? "shard group" : "d") + (par.context > 1 ? " x cp" : "");
  std::string weights = num(t.state.weights) + " B/param (" + weight_bytes_note(opt, t.state) + ") x " + trained;
  if (t.frozen_bytes > 0)
    weights =
        gb(t.frozen_bytes) + " frozen base (" + sci(t.params) + " params, " +
        (opt.fine_tuning == FineTuning::qlora ? "NF4 4.127 bit, embeddings " + compute : compute) +
        ") + " + weights;
  add_formula(m, t.c.weights, "weights = " + weights + shards + zero_suffix(t.zero.weights, stage, ranks));
  add_formula(m, t.c.gradients,
              "gradients = " + num(t.state.gradients) + " B/param (" + gradient_bytes_note(opt) + ") x " + trained +
                  shards + zero_suffix(t.zero.gradients, stage, ranks));
  add_formula(m, t.c.optimizer,
              "optimizer = " + num(t.state.optimizer) + " B/param (" +
                  state_bytes_note(opt, t.state) + ") x " + trained + shards +
                  zero_suffix(t.zero.optimizer, stage, ranks));
  add_formula(m, t.c.activations, activation_formula(t, s, par, opt));
  explain_overhead(m, opt.overhead_fraction, t.c.overhead);
}

}  // namespace

Bytes MemoryBreakdown::total() const {
  return weights + gradients + optimizer + activations + kv_cache + overhead;
}

double lora_adapter_parameter_count(const TransformerShape& shape, int rank) {
  return adapted_matrices_params(shape, rank);
}

// ---- simple rule --------------------------------------------------------------------------

MemoryBreakdown simple_rule(double params, SimpleMode mode, Precision precision) {
  Components c;
  if (mode == SimpleMode::inference) {
    c.weights = bytes_per_value(precision) * params;
    MemoryBreakdown m = to_breakdown(c, "simple");
    add_formula(m, c.weights,
                "weights = " + num(bytes_per_value(precision)) + " B/param (" +
                    std::string(precision_name(precision)) + ") x " + sci(params) + " params");
    return m;
  }
  // 24 B/param = 4 weights + 8 optimizer (Adam m, v) + 4 gradients + 8 activations.
  c.weights = 4 * params;
  c.optimizer = 8 * params;
  c.gradients = 4 * params;
  c.activations = 8 * params;
  MemoryBreakdown m = to_breakdown(c, "simple");
  const std::string n = " x " + sci(params) + " params";
  add_formula(m, c.weights, "weights = 4 B/param (fp32)" + n);
  add_formula(m, c.gradients, "gradients = 4 B/param (fp32)" + n);
  add_formula(m, c.optimizer, "optimizer = 8 B/param (Adam m, v in fp32)" + n);
  add_formula(m, c.activations, "activations = 8 B/param (rule of thumb)" + n);
  return m;
}

// ---- ZeRO ---------------------------------------------------------------------------------

MemoryBreakdown zero_model_states(double params, int data_parallel, int zero_stage,
                                  double optimizer_bytes_per_param) {
  const ZeroDivisors z = zero_divisors(zero_stage, data_parallel);
  Components c;
  c.weights = 2 * params / z.weights;  // fp16 weights
  c.gradients = 2 * params / z.gradients;
  c.optimizer = optimizer_bytes_per_param * params / z.optimizer;
  MemoryBreakdown m = to_breakdown(c, "detailed");
  const std::string n = " x " + sci(params) + " params";
  add_formula(m, c.weights, "weights = 2 B/param (fp16)" + n + zero_suffix(z.weights, zero_stage));
  add_formula(m, c.gradients,
              "gradients = 2 B/param (fp16)" + n + zero_suffix(z.gradients, zero_stage));
  add_formula(m, c.optimizer,
              "optimizer = K=" + num(optimizer_bytes_per_param) + " B/param" + n +
                  zero_suffix(z.optimizer, zero_stage));
  return m;
}

// ---- transformer training -----------------------------------------------------------------

MemoryBreakdown training_memory_per_gpu(const TransformerShape& shape, const Parallelism& par,
                                        const TrainingOptions& opt) {
  const TrainingTerms t = training_terms(shape, par, opt);
  MemoryBreakdown m = to_breakdown(t.c, "detailed");
  explain_training(m, t, shape, par, opt);
  return m;
}

Bytes training_memory_total_per_gpu(const TransformerShape& shape, const Parallelism& par,
                                    const TrainingOptions& opt) {
  return Bytes(training_terms(shape, par, opt).c.total());
}

// ---- inference ----------------------------------------------------------------------------

Bytes kv_cache_bytes_per_token(const TransformerShape& shape, Precision kv) {
  if (shape.encoder_only) return Bytes(0);
  // K and V, for every layer and KV head.
  return Bytes(2.0 * shape.layers * shape.kv_heads * shape.head_dim() * bytes_per_value(kv));
}

MemoryBreakdown inference_memory_per_gpu(const TransformerShape& shape,
                                         const InferenceOptions& opt) {
  const double params = parameter_count(shape);
  const double w = bytes_per_value(opt.weights);
  const int context = opt.context > 0 ? opt.context : shape.seq_len;
  // Tensor parallelism splits attention by heads; a GPU holds at least one KV head.
  const int kv_heads_per_gpu = (shape.kv_heads + opt.tensor - 1) / opt.tensor;
  const double kv_share = static_cast<double>(kv_heads_per_gpu) / shape.kv_heads;
  const double tokens = static_cast<double>(opt.batch) * context;

  Components c;
  c.weights = w * params / opt.tensor;
  c.kv_cache = kv_cache_bytes_per_token(shape, opt.kv_cache).value() * tokens * kv_share;
  c.overhead = opt.overhead_fraction * c.total();

  MemoryBreakdown m = to_breakdown(c, "detailed");
  const std::string t = " / t=" + std::to_string(opt.tensor);
  add_formula(m, c.weights,
              "weights = " + num(w) + " B/param (" + std::string(precision_name(opt.weights)) +
                  ") x " + sci(params) + " params" + t);
  add_formula(m, c.kv_cache,
              "kv_cache = 2 (K, V) x " + std::to_string(shape.layers) + " layers x " +
                  std::to_string(kv_heads_per_gpu) + " KV heads/GPU x " +
                  std::to_string(shape.head_dim()) + " dims x " +
                  num(bytes_per_value(opt.kv_cache)) + " B (" +
                  std::string(precision_name(opt.kv_cache)) + ") x " + std::to_string(context) +
                  " tokens x " + std::to_string(opt.batch) + " sequences");
  explain_overhead(m, opt.overhead_fraction, c.overhead);
  return m;
}

// ---- sample models ------------------------------------------------------------------------

MemoryBreakdown sample_model_training_memory(const SampleModel& model, int batch_per_gpu,
                                             const TrainingOptions& opt) {
  const StateBytes sb = trainable_state_bytes(opt);
  Components c;
  c.weights = sb.weights * model.params;
  c.gradients = sb.gradients * model.params;
  c.optimizer = sb.optimizer * model.params;
  c.activations = model.activation_bytes_per_sample * batch_per_gpu;
  c.overhead = opt.overhead_fraction * c.total();

  MemoryBreakdown m = to_breakdown(c, "detailed");
  const std::string n = " x " + sci(model.params) + " params";
  add_formula(m, c.weights, "weights = " + num(sb.weights) + " B/param (" + weight_bytes_note(opt, sb) + ")" + n);
  add_formula(m, c.gradients,
              "gradients = " + num(sb.gradients) + " B/param (" + gradient_bytes_note(opt) + ")" + n);
  add_formula(
      m, c.optimizer,
      "optimizer = " + num(sb.optimizer) + " B/param (" + state_bytes_note(opt, sb) + ")" + n);
  add_formula(m, c.activations,
              "activations = " + gb(model.activation_bytes_per_sample) + "/sample x batch " +
                  std::to_string(batch_per_gpu));
  explain_overhead(m, opt.overhead_fraction, c.overhead);
  return m;
}

}  // namespace capsim::models
