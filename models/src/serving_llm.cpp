// LLM serving: the analytic prefill/decode model and a continuous-batching event loop.
#include "capsim/models/serving_llm.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <limits>
#include <vector>

#include "capsim/core/text.hpp"
#include "capsim/core/des/random.hpp"
#include "capsim/models/collectives.hpp"
#include "capsim/models/memory.hpp"
#include "capsim/models/performance.hpp"

namespace capsim::models {
namespace {

Diagnostic invalid(const std::string& key, const std::string& message) {
  return Diagnostic{{}, key, message, ""};
}


double peak_of(const LlmServingSpec& s) {
  const auto p = s.cluster.gpu.peak(precision_name(llm_compute_precision(s)));
  return p ? p->value() : 0.0;
}

bool hopper(const LlmServingSpec& s) { return s.cluster.gpu.architecture == "hopper"; }

// A GEMM dimension that halves efficiency is given for 16-bit operands and scales by
// 2 B / operand bytes for 8-bit ones (twice the tile depth; performance.cpp's rule).
double operand_depth(const LlmServingSpec& s) { return std::max(1.0, 2.0 / bytes_per_value(llm_compute_precision(s))); }

// For the n and k dimensions: kGemmHalfSaturationDim.
double half_dim(const LlmServingSpec& s) { return kGemmHalfSaturationDim() * operand_depth(s); }

// For the token rows (m): measured on Hopper (kHopperTokenRowsHalfSaturationDim).
double rows_half_dim(const LlmServingSpec& s) {
  return (hopper(s) ? kHopperTokenRowsHalfSaturationDim() : kGemmHalfSaturationDim()) * operand_depth(s);
}

double ceiling(const LlmServingSpec& s) {
  return capped_gemm_ceiling(s.cluster.gpu, precision_name(llm_compute_precision(s)),
                             generation_gemm_ceiling(s.cluster.gpu));
}

double bandwidth(const LlmServingSpec& s) { return s.cluster.gpu.memory_bandwidth.value() * kMemoryBandwidthEfficiency(); }

// What a step's kernels need of the GPU at the spec's compute precision, each a catalog
// lookup by precision name: resolved once per step, or once per simulation (the draft model
// runs on the same GPUs at the same precisions, so its steps share them).
struct StepConstants {
  double peak = 0, bandwidth = 0, ceiling = 0, half_dim = 0, rows_half_dim = 0;
  bool cast = false;  // 8-bit compute: activations written or cast to 8 bits
};

StepConstants step_constants(const LlmServingSpec& s) {
  return {peak_of(s), bandwidth(s), ceiling(s), half_dim(s), rows_half_dim(s),
          bytes_per_value(llm_compute_precision(s)) < 2.0};
}

// Fraction of the peak an m x n x k GEMM sustains (performance.hpp's form, m being the token rows).
double efficiency(const StepConstants& c, double m, double n, double k) {
  const double d = c.half_dim, d_m = c.rows_half_dim;
  return c.ceiling * m / (m + d_m) * n / (n + d) * k / (k + d);
}

// The m-dependence alone, for the analytic estimate.
double efficiency(const LlmServingSpec& s, double rows) { return ceiling(s) * rows / (rows + rows_half_dim(s)); }


bool drafting(const LlmServingSpec& s) { return s.speculation.tokens > 0 && s.speculation.has_draft; }

// The draft model as a serving spec of its own: same GPUs, TP, precisions, no speculation.
LlmServingSpec draft_of(const LlmServingSpec& s) {
  LlmServingSpec d = s;
  d.shape = s.speculation.draft;
  d.speculation = {};
  return d;
}

int pipeline(const LlmServingSpec& s) { return std::max(1, s.pipeline_parallel); }

// "TP=4", or "TP=8 PP=2" with stages.
std::string layout(const LlmServingSpec& s) {
  return "TP=" + std::to_string(s.tensor_parallel) + (pipeline(s) > 1 ? " PP=" + std::to_string(pipeline(s)) : "");
}

// Layers on the busiest pipeline stage: ceil(L / p) (all of them without PP).
int busiest_stage_layers(const LlmServingSpec& s) { return (s.shape.layers + pipeline(s) - 1) / pipeline(s); }

// The pipeline's pace: p stages of the busiest one's layers against the L layers they split.
double pipeline_pace(const LlmServingSpec& s) {
  return static_cast<double>(pipeline(s)) * busiest_stage_layers(s) / s.shape.layers;
}

// On the busiest GPU: its stage's share of the layers and, with stages, one of the two
// embedding tables (the first stage holds the input table, the last the output projection;
// a tied table sits on both), split over TP.
double model_weights_per_gpu(const LlmServingSpec& s) {
  const double all = parameter_count(s.shape);
  if (pipeline(s) == 1) return bytes_per_value(s.weights) * all / s.tensor_parallel;
  const double tables = embedding_parameter_count(s.shape);
  const double table_here = s.shape.tied_embeddings ? tables : tables / 2.0;
  const double body = (all - tables) * busiest_stage_layers(s) / s.shape.layers;
  return bytes_per_value(s.weights) * (body + table_here) / s.tensor_parallel;
}

double model_kv_per_token_per_gpu(const LlmServingSpec& s) {
  // A GPU holds at least one KV head (memory.hpp's rule), of its stage's layers.
  const int heads_here = (s.shape.kv_heads + s.tensor_parallel - 1) / s.tensor_parallel;
  return kv_cache_bytes_per_token(s.shape, s.kv_cache).value() * heads_here / s.shape.kv_heads * busiest_stage_layers(s) /
         s.shape.layers;
}

// The p - 1 sends of one step's activations between stages: hidden states and residual,
// 16-bit, each TP rank to its peer on the next stage over its own link (the network when
// the replica spans nodes, NVLink or PCIe within one).
double pipeline_sends(const LlmServingSpec& s, double tokens) {
  if (pipeline(s) == 1 || tokens <= 0) return 0.0;
  const bool across_nodes = llm_replica_gpus(s) > s.cluster.gpus_per_node;
  const LinkModel link = across_nodes ? inter_node_link(s.cluster) : intra_node_link(s.cluster);
  return (pipeline(s) - 1) * point_to_point(Bytes(2.0 * tokens * s.shape.hidden * 2.0), link).value();
}

// With a draft model, its weights and its cache of every token sit beside the model's.
double weights_per_gpu(const LlmServingSpec& s) {
  return model_weights_per_gpu(s) + (drafting(s) ? model_weights_per_gpu(draft_of(s)) : 0.0);
}

double kv_per_token_per_gpu(const LlmServingSpec& s) {
  return model_kv_per_token_per_gpu(s) + (drafting(s) ? model_kv_per_token_per_gpu(draft_of(s)) : 0.0);
}

// One-shot all-reduce, as inference engines run small ones (TensorRT-LLM's custom
// all-reduce, vLLM's custom_all_reduce): each GPU reads its n - 1 peers' buffers directly
// and reduces locally, one latency step for the data and one for the barrier.
double one_shot_all_reduce(double bytes, int n, const LinkModel& link) {
  return 2.0 * link.latency.value() + (n - 1) * bytes / link.bandwidth.value();
}

// Two all-reduces per layer of tokens x hidden activations at 2 bytes.
double tp_all_reduce(const LlmServingSpec& s, double tokens) {
  if (s.tensor_parallel <= 1) return 0.0;
  const LinkModel link = intra_node_link(s.cluster, s.tensor_parallel);
  const double bytes = tokens * s.shape.hidden * 2.0;
  const double ring = ring_all_reduce(Bytes(bytes), s.tensor_parallel, link).value();
  return 2.0 * s.shape.layers * std::min(ring, one_shot_all_reduce(bytes, s.tensor_parallel, link));
}

// Query-key products of attention per query and key, all layers: scores and values, 2 FLOPs
// per multiply-add, over the query heads' width.
double attention_flops_per_pair(const LlmServingSpec& s) {
  return 4.0 * s.shape.layers * static_cast<double>(s.shape.heads) * s.shape.head_dim();
}

// Parameters a token multiplies through, the vocabulary projection aside: the active
// parameters less the embedding tables.
double body_params(const LlmServingSpec& s) {
  return active_parameter_count(s.shape) - embedding_parameter_count(s.shape);
}

// The GEMMs of one step on one GPU, each the roofline of its own FLOPs and weight bytes
// (one kernel after another): per layer the QKV and output projections (column- then
// row-parallel, Megatron sec. 2.3), the MLP's up (+ gate) and down projections, and the
// vocabulary projection for the sampled tokens. A mixture-of-experts layer runs each expert
// its tokens route to (uniform routing: E x (1 - (1 - k/E)^tokens) distinct experts, each
// on tokens x k / E tokens on average) and reads only those experts' weights.
double gemm_time(const LlmServingSpec& s, const StepConstants& c, double tokens, double sampled) {
  const auto& sh = s.shape;
  const double t = s.tensor_parallel, h = sh.hidden, hd = sh.head_dim();
  const double q_out = sh.heads * hd, kv_out = (sh.kv_heads > 0 ? sh.kv_heads : sh.heads) * hd;
  const double mlp_in = sh.gated_mlp ? 2.0 * sh.ffn_hidden : sh.ffn_hidden;
  const double bytes = bytes_per_value(s.weights), peak = c.peak, bw = c.bandwidth;
  // 8-bit GEMMs take 8-bit activations. The norms and the gated activation write theirs
  // already quantized (llm_elementwise); the attention output is cast with its scale
  // before the output projection, reading 16 bits and writing 8 (3 B per element;
  // performance.cpp's rule for FP8 training).
  const bool cast = c.cast;
  auto linear = [&](double m, double n, double k, double count) {
    if (m <= 0 || count <= 0) return 0.0;
    const double compute = 2.0 * m * n * k / (peak * efficiency(c, m, n, k));
    return count * std::max(compute, n * k * bytes / bw);
  };
  double time = 0;
  if (tokens > 0) {
    time += sh.layers * (linear(tokens, (q_out + 2 * kv_out) / t, h, 1) + linear(tokens, h, q_out / t, 1) +
                         (cast ? 3.0 * tokens * q_out / t / bw : 0.0));
    const int e = sh.experts, k = sh.experts_per_token;
    double experts = 1, per_expert = tokens;
    if (e > 1 && k >= 1 && k < e) {
      experts = e * (1.0 - std::pow(1.0 - static_cast<double>(k) / e, tokens));
      per_expert = tokens * k / experts;
    }
    time += sh.layers * (linear(per_expert, mlp_in / t, h, experts) + linear(per_expert, h, sh.ffn_hidden / t, experts));
  }
  time += linear(sampled, sh.vocab / t, h, 1);
  return time;
}

}  // namespace

LlmRequestMix llm_request_mix(std::vector<LlmRequestLength> requests) {
  LlmRequestMix mix;
  if (!requests.empty()) {
    double prompt = 0, output = 0;
    for (const auto& r : requests) {
      prompt += r.prompt_tokens;
      output += r.output_tokens;
    }
    const double n = static_cast<double>(requests.size());
    mix.prompt_tokens = std::max(1, static_cast<int>(std::lround(prompt / n)));
    mix.output_tokens = std::max(1, static_cast<int>(std::lround(output / n)));
  }
  mix.requests = std::move(requests);
  return mix;
}

int llm_replica_gpus(const LlmServingSpec& s) { return s.tensor_parallel * pipeline(s); }

double llm_device_memory(const hardware::GpuSpec& gpu) {
  return gpu.memory.value() / 1e9 * static_cast<double>(1ull << 30) * kDriverReportedMemoryShare;
}

namespace {

double elementwise(const LlmServingSpec& s, const StepConstants& c, double tokens) {
  const auto& sh = s.shape;
  const double t = s.tensor_parallel, h = sh.hidden;
  const double out = c.cast ? 1.0 : 2.0;
  const double k = sh.experts > 1 ? std::max(1, sh.experts_per_token) : 1.0;
  const double l2 = s.cluster.gpu.l2_cache.value(), bw = c.bandwidth;
  auto kernel = [&](double bytes_per_token) {
    const double bytes = bytes_per_token * tokens;
    return bytes <= l2 ? 0.0 : bytes / bw;
  };
  double layer = 2.0 * kernel((3.0 * 2.0 + out) * h) + kernel((2.0 * 2.0 + out) * k * sh.ffn_hidden / t);
  if (sh.experts > 1) layer += 2.0 * kernel(2.0 * (k + 1.0) * h);
  return sh.layers * layer;
}

double step_time(const LlmServingSpec& s, const StepConstants& c, int decode_sequences, double decode_context,
                 double prefill_tokens, double prefill_attention, int prompts_completed) {
  const double t = s.tensor_parallel;
  // With speculation each decoding sequence is verified at its proposals + 1 positions, each
  // attending to the sequence's context and each sampled.
  const double positions = 1.0 + s.speculation.tokens;
  const double tokens = decode_sequences * positions + prefill_tokens;
  const double sampled = decode_sequences * positions + prompts_completed;
  const double peak = c.peak, bw = c.bandwidth;
  const double gemm = gemm_time(s, c, tokens, sampled);
  // Attention: query-key products at the fused kernel's efficiency; KV reads of the decode
  // tokens' contexts (once per query head without GQA sharing) and KV writes of new tokens.
  const double group = s.gqa_shared_kv ? 1.0 : static_cast<double>(s.shape.heads) / s.shape.kv_heads;
  const double attention_flops = attention_flops_per_pair(s) * (decode_context * positions + prefill_attention) / t;
  const double kv_bytes = model_kv_per_token_per_gpu(s) * (decode_context * group + tokens);
  const double attention = std::max(attention_flops / (peak * flash_ampere_fa2().forward), kv_bytes / bw);
  // The draft's forwards: `tokens` decode steps of the decoding sequences, and the new prompts'
  // prefill, without the engine's per-step host cost (one engine step runs them all). The
  // draft runs on the same GPUs at the same precisions: the same constants.
  double draft = 0;
  if (drafting(s)) {
    const LlmServingSpec d = draft_of(s);
    if (decode_sequences > 0)
      draft += s.speculation.tokens * (step_time(d, c, decode_sequences, decode_context, 0, 0, 0) - kEngineStepOverheadSeconds());
    if (prefill_tokens > 0)
      draft += step_time(d, c, 0, 0, prefill_tokens, prefill_attention, prompts_completed) - kEngineStepOverheadSeconds();
  }
  // Every stage in turn, at the busiest stage's pace, and the sends between them.
  const double layers = gemm + attention + elementwise(s, c, tokens) + tp_all_reduce(s, tokens) +
                        kLayerOverheadSeconds() * s.shape.layers;
  return layers * pipeline_pace(s) + pipeline_sends(s, tokens) + kEngineStepOverheadSeconds() + draft;
}

}  // namespace

Seconds llm_elementwise(const LlmServingSpec& s, double tokens) { return Seconds(elementwise(s, step_constants(s), tokens)); }

Precision llm_compute_precision(const LlmServingSpec& s) {
  const auto& gpu = s.cluster.gpu;
  auto has = [&](Precision p) { return gpu.peak(precision_name(p)).has_value(); };
  const Precision sixteen = has(Precision::bf16) ? Precision::bf16 : Precision::fp16;
  switch (s.weights) {
    case Precision::fp8: return has(Precision::fp8) ? Precision::fp8 : sixteen;
    case Precision::int8: return has(Precision::int8) ? Precision::int8 : sixteen;
    case Precision::int4: return sixteen;
    default: return s.weights;
  }
}

Seconds llm_step(const LlmServingSpec& s, int decode_sequences, double decode_context, double prefill_tokens,
                 double prefill_attention, int prompts_completed) {
  return Seconds(step_time(s, step_constants(s), decode_sequences, decode_context, prefill_tokens, prefill_attention,
                           prompts_completed));
}

double llm_tokens_per_step(const LlmSpeculation& sp) {
  if (sp.tokens <= 0) return 1.0;
  const double a = sp.acceptance_rate;
  return (1.0 - std::pow(a, sp.tokens + 1)) / (1.0 - a);
}

Seconds llm_tpot(const LlmServingSpec& s, int sequences, double context_tokens) {
  return Seconds(llm_decode_step(s, sequences, context_tokens).value() / llm_tokens_per_step(s.speculation));
}

Seconds llm_decode_step(const LlmServingSpec& s, int sequences, double context_tokens) {
  return llm_step(s, sequences, context_tokens, 0, 0);
}

Seconds llm_prefill(const LlmServingSpec& s, int prompts, int tokens_per_prompt) {
  // Causal attention: each prompt token attends to (n + 1) / 2 keys on average.
  const double n = tokens_per_prompt;
  return llm_step(s, 0, 0, prompts * n, prompts * n * (n + 1) / 2, prompts);
}

Result<LlmEstimate> estimate_llm_serving(const LlmServingSpec& s, const LlmRequestMix& mix) {
  std::vector<Diagnostic> errors;
  const auto& gpu = s.cluster.gpu;
  if (s.tensor_parallel < 1 || s.tensor_parallel > s.cluster.gpus_per_node)
    errors.push_back(invalid("tensor_parallel", "must be between 1 and the node's " +
                                                    std::to_string(s.cluster.gpus_per_node) + " GPUs (got " +
                                                    std::to_string(s.tensor_parallel) + ")"));
  else if (s.shape.heads % s.tensor_parallel != 0)
    errors.push_back(invalid("tensor_parallel", s.shape.name + " has " + std::to_string(s.shape.heads) +
                                                    " heads, not divisible by TP=" + std::to_string(s.tensor_parallel)));
  if (s.shape.encoder_only) errors.push_back(invalid("model", s.shape.name + " is encoder-only: it does not decode"));
  if (peak_of(s) <= 0)
    errors.push_back(invalid("weights", "GPU '" + gpu.id + "' has no dense " +
                                            std::string(precision_name(llm_compute_precision(s))) + " peak in the catalog"));
  if (!(s.memory_utilization > 0 && s.memory_utilization <= 1))
    errors.push_back(invalid("memory_utilization", "must be in (0, 1]"));
  if (s.max_concurrent < 0) errors.push_back(invalid("max_concurrent", "must be at least 1, or 0 for no cap"));
  if (s.max_batched_tokens < 1) errors.push_back(invalid("max_batched_tokens", "must be at least 1"));
  if (mix.prompt_tokens < 1 || mix.output_tokens < 1)
    errors.push_back(invalid("request", "prompt and output lengths must be at least 1 token"));
  for (std::size_t k = 0; k < mix.requests.size(); ++k)
    if (mix.requests[k].prompt_tokens < 1 || mix.requests[k].output_tokens < 1) {
      errors.push_back(invalid("request", "request " + std::to_string(k + 1) + " of the lengths list has " +
                                              std::to_string(mix.requests[k].prompt_tokens) + " prompt and " +
                                              std::to_string(mix.requests[k].output_tokens) +
                                              " output tokens: both must be at least 1"));
      break;
    }
  if (s.tensor_parallel > 1 && !(s.cluster.intra_node_bandwidth.value() > 0))
    errors.push_back(invalid("cluster", "TP needs the node's intra-node bandwidth"));
  const int pp = s.pipeline_parallel, gpus_per_node = std::max(1, s.cluster.gpus_per_node);
  const int replica = s.tensor_parallel * pp;
  if (pp < 1 || pp > std::max(1, s.shape.layers))
    errors.push_back(invalid("pipeline_parallel", "must be between 1 and the model's " + std::to_string(s.shape.layers) +
                                                      " layers (got " + std::to_string(pp) + ")"));
  else if (pp > 1 && replica > gpus_per_node && replica % gpus_per_node != 0)
    errors.push_back(invalid("pipeline_parallel", "a replica of TP=" + std::to_string(s.tensor_parallel) + " x PP=" +
                                                      std::to_string(pp) + " = " + std::to_string(replica) +
                                                      " GPUs spans part of a node: more than a node's " +
                                                      std::to_string(gpus_per_node) + " GPUs must be whole nodes"));
  else if (pp > 1 && replica > gpus_per_node && !(s.cluster.inter_node_bandwidth.value() > 0))
    errors.push_back(invalid("pipeline_parallel", "a replica of " + std::to_string(replica) +
                                                      " GPUs spans nodes, and the cluster has no network between them"));
  else if (pp > 1 && replica <= gpus_per_node && !(s.cluster.intra_node_bandwidth.value() > 0))
    errors.push_back(invalid("cluster", "PP needs the node's intra-node bandwidth"));
  if (pp > 1 && s.speculation.tokens > 0)
    errors.push_back(invalid("speculative", "speculative decoding with pipeline stages is not modelled (PP=" +
                                                std::to_string(pp) + ")"));
  const auto& sp = s.speculation;
  if (sp.tokens < 0 || sp.tokens > kMaxSpeculativeTokens)
    errors.push_back(invalid("speculative.tokens", "must be from 0 (off) to " + std::to_string(kMaxSpeculativeTokens) +
                                                       " (got " + std::to_string(sp.tokens) + ")"));
  if (sp.tokens > 0 && !(sp.acceptance_rate >= 0 && sp.acceptance_rate < 1))
    errors.push_back(invalid("speculative.acceptance_rate", "must be at least 0 and below 1 (got " +
                                                                significant(sp.acceptance_rate) + ")"));
  if (drafting(s) && s.tensor_parallel >= 1 && sp.draft.heads % s.tensor_parallel != 0)
    errors.push_back(invalid("speculative.draft_model", "the draft " + sp.draft.name + " has " +
                                                            std::to_string(sp.draft.heads) + " heads, not divisible by TP=" +
                                                            std::to_string(s.tensor_parallel)));
  if (drafting(s) && sp.draft.encoder_only)
    errors.push_back(invalid("speculative.draft_model", "the draft " + sp.draft.name + " is encoder-only: it does not decode"));
  if (!errors.empty()) return errors;

  LlmEstimate e;
  e.weights_per_gpu = Bytes(weights_per_gpu(s));
  e.kv_bytes_per_token_per_gpu = Bytes(kv_per_token_per_gpu(s));
  const double device = llm_device_memory(gpu);
  const double usable = s.kv_budget == LlmKvBudget::share_of_free
                            ? e.weights_per_gpu.value() + s.memory_utilization * (device - e.weights_per_gpu.value())
                            : device * s.memory_utilization;
  if (e.weights_per_gpu.value() >= usable)
    return invalid("memory", s.shape.name + " does not fit on " + gpu.id + " with " + layout(s) +
                                 ": " + significant(e.weights_per_gpu.value() / 1e9) + " GB of weights per GPU, " +
                                 significant(usable / 1e9) + " GB usable");
  e.kv_capacity_tokens = std::floor((usable - e.weights_per_gpu.value()) / e.kv_bytes_per_token_per_gpu.value());
  // With stages, each of the p batches in flight has 1/p of the cache.
  const int engines = pipeline(s);
  const double engine_capacity = std::floor(e.kv_capacity_tokens / engines);
  const int per_sequence = mix.prompt_tokens + mix.output_tokens;
  int longest = per_sequence;  // with a lengths list, its longest request must fit as well
  for (const auto& r : mix.requests) longest = std::max(longest, r.prompt_tokens + r.output_tokens);
  if (engine_capacity < longest)
    return invalid("memory", s.shape.name + " on " + gpu.id + " with " + layout(s) +
                                 ": the KV cache holds " + significant(engine_capacity) + " tokens" +
                                 (engines > 1 ? " per batch in flight" : "") + ", less than " +
                                 (longest > per_sequence ? "the longest request's " : "one request's ") +
                                 std::to_string(longest) + " (FP8 weights or KV cache, or more GPUs per replica, make room)");
  // Paged KV: a running sequence holds its prompt and the tokens generated so far, on
  // average prompt + output / 2 (rounded up to whole blocks); a scheduler that reserves the
  // whole sequence at admission holds prompt + output for each.
  const double block = kKvBlockTokens;
  e.mean_context_tokens = std::ceil((mix.prompt_tokens + mix.output_tokens / 2.0) / block) * block;
  const double held = s.kv_admission == LlmKvAdmission::reserve_full
                          ? std::ceil(static_cast<double>(per_sequence) / block) * block
                          : e.mean_context_tokens;
  const int per_engine = std::max(1, static_cast<int>(engine_capacity / held));
  const int capped = s.max_concurrent > 0 ? std::min(per_engine, s.max_concurrent) : per_engine;
  e.kv_limited_sequences = engines * per_engine;
  e.max_concurrent_sequences = engines * capped;
  const double mean_context = mix.prompt_tokens + mix.output_tokens / 2.0;
  e.ttft_unloaded = llm_prefill(s, 1, mix.prompt_tokens);
  e.tpot_single = llm_tpot(s, 1, mean_context);
  e.tpot_at_max = llm_tpot(s, capped, mean_context * capped);
  e.tp_all_reduce_per_step = Seconds(tp_all_reduce(s, 1));
  e.pipeline_send_per_step = Seconds(pipeline_sends(s, 1));
  const double n = capped;  // per batch in flight
  // Steady state at n running in each of the p batches: every request costs output decode
  // steps shared by n, and its prompt rides along in those steps as chunked prefill: the
  // extra compute of its tokens, at the pipeline's pace.
  const double p = mix.prompt_tokens;
  const double prefill_extra =
      pipeline_pace(s) *
      (2.0 * body_params(s) * p / s.tensor_parallel / (peak_of(s) * efficiency(s, std::min<double>(s.max_batched_tokens, n + p))) +
       attention_flops_per_pair(s) * p * (p + 1) / 2 / s.tensor_parallel / (peak_of(s) * flash_ampere_fa2().forward));
  const double cycle = mix.output_tokens * e.tpot_at_max.value() + n * prefill_extra;
  e.prefill_per_request = Seconds(prefill_extra);
  e.requests_per_second = engines * n / cycle;
  e.output_tokens_per_second = e.requests_per_second * mix.output_tokens;
  e.output_tokens_per_second_per_gpu = e.output_tokens_per_second / llm_replica_gpus(s);
  // The formula of one step at one sequence; with speculation, the verify step (the model's
  // weights and KV only), the draft's forwards, and the tokens a step yields.
  const bool speculating = s.speculation.tokens > 0;
  // With stages: p x the busiest stage's step (its layers' weights, KV and all-reduces).
  const double stage_share = static_cast<double>(busiest_stage_layers(s)) / s.shape.layers;
  e.formula = std::string("TPOT(1) = ") + (speculating ? "(" : "") +
              (engines > 1 ? std::to_string(engines) + " stages x (" : "") + "max(compute, (" +
              significant(model_weights_per_gpu(s) / 1e9) + " GB weights/GPU + " +
              significant(model_kv_per_token_per_gpu(s) * mean_context / 1e9) + " GB KV) / (" +
              significant(gpu.memory_bandwidth.value() / 1e12) + " TB/s x " + significant(kMemoryBandwidthEfficiency()) + ")) + " +
              significant(e.tp_all_reduce_per_step.value() * stage_share * 1e3) + " ms TP all-reduce + " +
              std::to_string(busiest_stage_layers(s)) + " layers x " + significant(kLayerOverheadSeconds() * 1e3) + " ms" +
              (engines > 1 ? ") + " + significant(e.pipeline_send_per_step.value() * 1e3) + " ms sends between stages"
                           : std::string()) +
              " + " + significant(kEngineStepOverheadSeconds() * 1e3) + " ms fixed" +
              (drafting(s) ? " + " + std::to_string(s.speculation.tokens) + " forwards of the draft " + s.speculation.draft.name
                           : std::string()) +
              (speculating ? ") / " + significant(llm_tokens_per_step(s.speculation), 3) + " tokens per step (" + std::to_string(s.speculation.tokens) +
                                 " proposals verified at acceptance " + significant(s.speculation.acceptance_rate, 3) + ")"
                           : std::string()) +
              " = " + significant(e.tpot_single.value() * 1e3) + " ms";
  return e;
}

namespace {

struct Sequence {
  double arrival = 0;
  double first_token = -1;  // time of the first output token; < 0 before it
  int prompt = 0;           // tokens to prefill (the prompt, or prompt + generated after a preemption)
  int prefilled = 0;        // of those, already in the KV cache
  int generated = 0;        // output tokens produced
  std::uint64_t id = 0;
  LlmRequestLength length;  // the request's own prompt and output lengths
  bool chunked = false;     // prefilled a chunk in the current step (it was not decoding)
};

// KV blocks holding `tokens` (>= 0): ceil(tokens / kKvBlockTokens), in integers (the
// simulation asks this of every running sequence in every step).
double blocks_for(int tokens) { return static_cast<double>((tokens + kKvBlockTokens - 1) / kKvBlockTokens); }

// Percentiles of the whole sample, each with a 95 % interval from 10 batch means over the
// samples in completion order (Student t, 9 degrees of freedom: 2.262).
des::Percentiles percentiles(const std::vector<double>& ordered) {
  des::Percentiles p;
  if (ordered.empty()) return p;
  auto quantile = [](std::vector<double> v, double q) {
    const auto k = static_cast<std::size_t>(std::max(0.0, std::ceil(q * static_cast<double>(v.size())) - 1));
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
    return v[k];
  };
  auto at = [&](double q) {
    const double x = quantile(ordered, q);
    des::Interval r{x, x, x};
    constexpr int kBatches = 10;
    if (ordered.size() < 2 * kBatches) return r;
    const std::size_t per = ordered.size() / kBatches;
    double sum = 0, sum2 = 0;
    for (int b = 0; b < kBatches; ++b) {
      std::vector<double> batch(ordered.begin() + static_cast<std::ptrdiff_t>(b * per),
                                ordered.begin() + static_cast<std::ptrdiff_t>((b + 1) * per));
      const double v = quantile(std::move(batch), q);
      sum += v;
      sum2 += v * v;
    }
    const double mean = sum / kBatches;
    const double var = std::max(0.0, (sum2 - kBatches * mean * mean) / (kBatches - 1));
    const double half = 2.262 * std::sqrt(var / kBatches);
    r.low = std::min(x, mean - half);
    r.high = std::max(x, mean + half);
    return r;
  };
  p.p50 = at(0.50);
  p.p95 = at(0.95);
  p.p99 = at(0.99);
  return p;
}

}  // namespace

Result<LlmSimulation> simulate_llm_serving(const LlmServingSpec& s, const LlmRequestMix& mix,
                                           const LlmSimulationOptions& o) {
  auto est = estimate_llm_serving(s, mix);
  if (!est) return est.errors();
  std::vector<Diagnostic> errors;
  const bool offline = o.offline_requests > 0;
  const bool counted = !offline && o.server_requests > 0;  // a fixed number of Poisson arrivals
  if (o.offline_requests < 0) errors.push_back(invalid("offline_requests", "must not be negative"));
  if (o.server_requests < 0) errors.push_back(invalid("server_requests", "must not be negative"));
  if (!offline && !(o.rate > 0)) errors.push_back(invalid("rate", "must be greater than zero"));
  if (o.replicas < 1) errors.push_back(invalid("replicas", "must be at least 1"));
  if (!offline && !counted && !(o.duration.value() > 0)) errors.push_back(invalid("duration", "must be greater than zero"));
  if (o.warmup.value() < 0) errors.push_back(invalid("warmup", "must not be negative"));
  if (o.max_events < 1) errors.push_back(invalid("max_events", "must be at least 1"));
  if (!errors.empty()) return errors;

  des::Rng rng(o.seed);
  // The engines simulated as one: every replica's batches in flight (one per pipeline stage).
  const int engines = o.replicas * pipeline(s);
  const double rate = offline ? 0.0 : o.rate / engines;
  const bool to_completion = offline || counted;
  const double warmup = to_completion ? 0.0 : o.warmup.value();
  const double end = to_completion ? std::numeric_limits<double>::infinity() : warmup + o.duration.value();
  auto over_budget = [&](double needed, const std::string& why) {
    const std::string about = significant(needed, 3);
    return Diagnostic{{}, "run.max_events",
                      "simulation refused: " + why + " the run needs about " + about +
                          " events, over the event budget of " + std::to_string(o.max_events),
                      "shorten the duration or raise max_events"};
  };
  const int offline_here = offline ? (o.offline_requests + engines - 1) / engines : 0;
  const int counted_here = counted ? (o.server_requests + engines - 1) / engines : 0;
  const double expected_requests = offline ? offline_here : counted ? counted_here : rate * end;
  // Steps: at least one per output token of each request over the batch it shares.
  if (expected_requests > static_cast<double>(o.max_events))
    return over_budget(expected_requests, "with " + std::to_string(static_cast<long long>(std::llround(expected_requests))) +
                                              (engines > o.replicas ? " requests per pipeline batch" : " requests per replica"));

  const double capacity_blocks =
      std::floor(std::floor(est->kv_capacity_tokens / pipeline(s)) / kKvBlockTokens);
  const int cap = s.max_concurrent > 0 ? s.max_concurrent : std::numeric_limits<int>::max();
  const bool static_batches = s.batching == LlmBatching::static_batches;
  const bool reserve_full = s.kv_admission == LlmKvAdmission::reserve_full;
  // Speculation: a decoding sequence holds KV room for the positions verified in a step, and
  // gains 1 + the proposals accepted before the first rejection (each with probability
  // acceptance_rate), drawn per sequence and step from the run's seed.
  const int positions = 1 + s.speculation.tokens;
  des::Rng accept_rng(o.seed ^ 0x5bd1e995u);
  auto gained = [&] {
    int n = 1;
    while (n < positions && accept_rng.uniform() < s.speculation.acceptance_rate) ++n;
    return n;
  };
  // Static batches prefill their prompts in one step, whatever their length.
  const int budget = static_batches ? std::numeric_limits<int>::max() : s.max_batched_tokens;
  // The k-th request's lengths: the mix's class, or the k-th pair of its list, cycling.
  auto request = [&](double arrival, std::uint64_t id) {
    const LlmRequestLength length = mix.requests.empty()
                                        ? LlmRequestLength{mix.prompt_tokens, mix.output_tokens}
                                        : mix.requests[id % mix.requests.size()];
    return Sequence{arrival, -1, length.prompt_tokens, 0, 0, id, length};
  };
  auto full_blocks = [](const Sequence& q) { return blocks_for(q.length.prompt_tokens + q.length.output_tokens); };
  // On-demand KV admits a prompt only while kVllmWatermark of the blocks stay free after it,
  // so that running sequences can grow a while before one is preempted (vLLM's block
  // manager); a reserving scheduler already holds every block a sequence will need.
  const double watermark_blocks = reserve_full ? 0.0 : std::floor(kVllmWatermark * capacity_blocks);

  const StepConstants constants = step_constants(s);
  std::deque<Sequence> waiting;
  std::vector<Sequence> running;  // admitted: prefilling or decoding, in admission order
  std::uint64_t next_id = 0, events = 0;
  double t = 0, next_arrival = offline ? std::numeric_limits<double>::infinity() : rng.exponential() / rate;
  std::uint64_t arrived = 0;
  for (int k = 0; k < offline_here; ++k) waiting.push_back(request(0.0, next_id++));
  std::vector<double> ttft, tpot, e2e;
  LlmSimulation out;
  out.offered_rate = offline ? 0.0 : o.rate;
  double running_area = 0, kv_area = 0, measured = 0;
  std::uint64_t completed_in_window = 0, completed_total = 0;
  double generated_in_window = 0, generated_total = 0;  // output tokens of those requests
  int waiting_at_warmup = -1;

  // KV blocks: a decoding sequence needs its tokens plus the one this step adds; a
  // prefilling one has its whole prompt's blocks reserved at admission, so admitted
  // prompts never stall half-way.
  auto decoding = [](const Sequence& q) { return q.prefilled >= q.prompt; };
  auto reserve = [&](const Sequence& q) {
    if (reserve_full) return full_blocks(q);
    return decoding(q) ? blocks_for(q.prefilled + q.generated + positions) : blocks_for(q.prompt);
  };
  // Sums over the running sequences, kept as they change rather than recounted each step:
  // blocks reserved, blocks holding tokens, and the decoding sequences and their context.
  // Every term is a whole number, so the sums are exact in any order.
  struct Totals {
    double reserved = 0, used = 0, decode_context = 0;
    int decode = 0;
    void add(const Sequence& q, double reserve_blocks, int sign) {
      reserved += sign * reserve_blocks;
      used += sign * blocks_for(q.prefilled + q.generated);
      if (q.prefilled >= q.prompt) {
        decode += sign;
        decode_context += sign * static_cast<double>(q.prefilled + q.generated);
      }
    }
  } totals;
  std::size_t first_prefilling = 0;  // every running sequence before it is decoding
  auto account = [&](double from, double to, double used_blocks) {
    const double a = std::max(from, warmup), b = std::min(to, end);
    if (b <= a) return;
    running_area += static_cast<double>(running.size()) * (b - a);
    kv_area += used_blocks / capacity_blocks * (b - a);
    measured += b - a;
  };

  while (t < end) {
    while (next_arrival <= t) {
      waiting.push_back(request(next_arrival, next_id++));
      ++arrived;
      next_arrival = counted && arrived >= static_cast<std::uint64_t>(counted_here)
                         ? std::numeric_limits<double>::infinity()
                         : next_arrival + rng.exponential() / rate;
      ++events;
    }
    if (waiting_at_warmup < 0 && t >= warmup) waiting_at_warmup = static_cast<int>(waiting.size());
    if (to_completion && running.empty() && waiting.empty() && !std::isfinite(next_arrival)) break;

    // Without room for a decode step, the newest sequence is preempted and recomputed later
    // (vLLM's recompute policy).
    bool preempted = false;
    while (!running.empty() && totals.reserved > capacity_blocks) {
      preempted = true;
      Sequence victim = running.back();
      running.pop_back();
      totals.add(victim, reserve(victim), -1);
      victim.prompt = victim.length.prompt_tokens + victim.generated;  // recompute prompt + output so far
      victim.prefilled = 0;
      waiting.push_front(victim);
      ++out.preemptions;
    }
    const int decode = totals.decode;
    const double decode_context = totals.decode_context;
    double used_blocks = totals.used;  // as the step runs: the admitted sequences' too
    // Prefill chunks within the token budget: partly prefilled sequences first, then new
    // ones from the queue while their prompt's blocks fit and the cap allows.
    int room = static_batches ? budget : std::max(0, budget - decode);
    double prefill_tokens = 0, prefill_pairs = 0;
    std::vector<std::pair<std::size_t, int>> chunks;  // running index, tokens
    double free_blocks = capacity_blocks - totals.reserved;
    auto take = [&](std::size_t index) {
      const Sequence& q = running[index];
      const int chunk = std::min(room, q.prompt - q.prefilled);
      if (chunk <= 0) return;
      room -= chunk;
      prefill_tokens += chunk;
      // Each chunk token attends to the cached prefix and, causally, to the chunk.
      prefill_pairs += chunk * (q.prefilled + (chunk + 1) / 2.0);
      chunks.emplace_back(index, chunk);
    };
    for (std::size_t k = first_prefilling; k < running.size() && room > 0; ++k)
      if (!decoding(running[k])) take(k);
    // No new prompts in a step that had to preempt (vLLM's scheduler admits waiting
    // requests only when no running one was preempted in the step).
    const bool admitting = (!static_batches || running.empty()) && !preempted;
    auto admission_blocks = [&](const Sequence& q) { return reserve_full ? full_blocks(q) : blocks_for(q.prompt); };
    while (admitting && room > 0 && !waiting.empty() && static_cast<int>(running.size()) < cap &&
           free_blocks - admission_blocks(waiting.front()) >= watermark_blocks) {
      free_blocks -= admission_blocks(waiting.front());
      running.push_back(waiting.front());
      waiting.pop_front();
      used_blocks += blocks_for(running.back().prefilled + running.back().generated);
      take(running.size() - 1);
    }
    if (decode == 0 && chunks.empty()) {
      if (running.empty() && !waiting.empty())
        return invalid("memory", "a request does not fit in the KV cache");
      const double next = std::min(next_arrival, end);
      account(t, next, used_blocks);
      t = next;
      continue;
    }
    int completing = 0;
    for (const auto& [index, chunk] : chunks) {
      const Sequence& q = running[index];
      if (q.prefilled + chunk >= q.prompt && q.first_token < 0) ++completing;
    }
    const double step = step_time(s, constants, decode, decode_context, prefill_tokens, prefill_pairs, completing);
    account(t, t + step, used_blocks);
    t += step;
    ++out.iterations;
    ++events;
    if ((out.iterations & 0xffff) == 0 && !to_completion) {
      const double projected = static_cast<double>(events) * (end / t);
      if (projected > 1.05 * static_cast<double>(o.max_events) || events >= o.max_events)
        return over_budget(projected, "at the pace of its first " + std::to_string(events) + " events,");
    }
    if (events > o.max_events) return over_budget(static_cast<double>(events), "after");
    for (const auto& [index, chunk] : chunks) {
      Sequence& q = running[index];
      q.chunked = true;
      q.prefilled += chunk;
      // The step that completes a prompt also produces its first token (none again after
      // a preemption's recompute).
      if (q.prefilled >= q.prompt && q.first_token < 0) {
        q.first_token = t;
        q.generated = std::max(q.generated, 1);
        if (t > warmup && t <= end) ttft.push_back(t - q.arrival);
      }
    }
    out.peak_running = std::max(out.peak_running, static_cast<int>(running.size()));
    // One pass: the decoding sequences (those that were at the step's start: not chunked)
    // gain their tokens, in running order as the acceptance draws go; finished ones leave,
    // in running order; the totals are recounted over those that stay.
    totals = Totals{};
    first_prefilling = std::numeric_limits<std::size_t>::max();
    std::size_t kept = 0;
    for (std::size_t k = 0; k < running.size(); ++k) {
      Sequence& q = running[k];
      if (q.chunked) q.chunked = false;
      else if (decoding(q)) q.generated += std::min(gained(), q.length.output_tokens - q.generated);
      if (q.generated < q.length.output_tokens) {
        totals.add(q, reserve(q), +1);
        if (!decoding(q)) first_prefilling = std::min(first_prefilling, kept);
        if (kept != k) running[kept] = std::move(q);
        ++kept;
        continue;
      }
      ++completed_total;
      generated_total += q.length.output_tokens;
      if (t > warmup && t <= end) {
        ++completed_in_window;
        generated_in_window += q.length.output_tokens;
      }
      // Latencies of the requests that finish inside the window, whenever they arrived:
      // under overload they carry the queueing delay, as users see it.
      if (t <= warmup || t > end) continue;
      e2e.push_back(t - q.arrival);
      if (q.length.output_tokens > 1) tpot.push_back((t - q.first_token) / (q.length.output_tokens - 1));
    }
    running.resize(kept);
    first_prefilling = std::min(first_prefilling, kept);
  }

  out.completed = to_completion ? completed_total : completed_in_window;
  out.ttft = percentiles(ttft);
  out.tpot = percentiles(tpot);
  out.end_to_end = percentiles(e2e);
  auto mean = [](const std::vector<double>& v) {
    double sum = 0;
    for (double x : v) sum += x;
    return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
  };
  out.ttft_mean = mean(ttft);
  out.tpot_mean = mean(tpot);
  out.end_to_end_mean = mean(e2e);
  out.mean_running = measured > 0 ? running_area / measured : 0;
  out.kv_utilization = measured > 0 ? kv_area / measured : 0;
  out.waiting_at_end = static_cast<std::int64_t>(waiting.size()) * engines;  // many replicas: past int
  if (to_completion) {
    out.makespan_s = t;
    out.requests_per_second = t > 0 ? completed_total / t * engines : 0;
  } else {
    // Throughput counts every completion inside the window, whenever it arrived: an
    // overloaded server still completes requests at its capacity.
    out.requests_per_second = completed_in_window / o.duration.value() * engines;
    const double growth = static_cast<double>(waiting.size()) - std::max(0, waiting_at_warmup);
    out.queue_growth_per_second = growth / o.duration.value() * engines;
    const double arrivals = rate * o.duration.value();
    out.saturated = growth > std::max(10.0, 0.05 * arrivals);
  }
  // Output tokens of the requests counted, at their mean length (the mix's when all alike).
  const double completed = to_completion ? static_cast<double>(completed_total) : static_cast<double>(completed_in_window);
  const double generated = to_completion ? generated_total : generated_in_window;
  out.output_tokens_per_second = completed > 0 ? out.requests_per_second * (generated / completed) : 0.0;
  return out;
}

}  // namespace capsim::models
