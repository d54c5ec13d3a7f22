// LLM serving: the analytic prefill/decode model and a continuous-batching event loop.
#include "capsim/models/serving_llm.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
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


double efficiency(double rows) { return kGemmMaxEfficiency * rows / (rows + kGemmHalfSaturationDim); }

double peak_of(const LlmServingSpec& s) {
  const auto p = s.cluster.gpu.peak(precision_name(s.weights));
  return p ? p->value() : 0.0;
}

double weights_per_gpu(const LlmServingSpec& s) {
  return bytes_per_value(s.weights) * parameter_count(s.shape) / s.tensor_parallel;
}

double kv_per_token_per_gpu(const LlmServingSpec& s) {
  // A GPU holds at least one KV head (memory.hpp's rule).
  const int heads_here = (s.shape.kv_heads + s.tensor_parallel - 1) / s.tensor_parallel;
  return kv_cache_bytes_per_token(s.shape, s.kv_cache).value() * heads_here / s.shape.kv_heads;
}

// Two all-reduces per layer of tokens x hidden activations at 2 bytes.
double tp_all_reduce(const LlmServingSpec& s, double tokens) {
  if (s.tensor_parallel <= 1) return 0.0;
  const LinkModel link{s.cluster.intra_node_bandwidth * kCollectiveBandwidthFraction, s.cluster.intra_node_latency};
  return 2.0 * s.shape.layers * ring_all_reduce(Bytes(tokens * s.shape.hidden * 2.0), s.tensor_parallel, link).value();
}

double bandwidth(const LlmServingSpec& s) { return s.cluster.gpu.memory_bandwidth.value() * kMemoryBandwidthEfficiency; }

}  // namespace

Seconds llm_decode_step(const LlmServingSpec& s, int sequences, double context_tokens) {
  const double t = s.tensor_parallel;
  const double flops = (2.0 * active_parameter_count(s.shape) * sequences +
                        4.0 * s.shape.layers * s.shape.hidden * context_tokens) / t;
  const double bytes = weights_per_gpu(s) + kv_per_token_per_gpu(s) * context_tokens;
  const double compute = flops / (peak_of(s) * efficiency(sequences));
  return Seconds(std::max(compute, bytes / bandwidth(s)) + tp_all_reduce(s, sequences));
}

Seconds llm_prefill(const LlmServingSpec& s, int prompts, int tokens_per_prompt) {
  const double t = s.tensor_parallel;
  const double tokens = static_cast<double>(prompts) * tokens_per_prompt;
  // Causal attention: scores and values over on average half the prompt.
  const double attention = 2.0 * s.shape.layers * s.shape.hidden * prompts * double(tokens_per_prompt) * tokens_per_prompt;
  const double flops = (2.0 * active_parameter_count(s.shape) * tokens + attention) / t;
  const double bytes = weights_per_gpu(s) + kv_per_token_per_gpu(s) * tokens;
  const double compute = flops / (peak_of(s) * efficiency(tokens));
  return Seconds(std::max(compute, bytes / bandwidth(s)) + tp_all_reduce(s, tokens));
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
    errors.push_back(invalid("weights", "GPU '" + gpu.id + "' has no dense " + std::string(precision_name(s.weights)) +
                                            " peak in the catalog"));
  if (!(s.memory_utilization > 0 && s.memory_utilization <= 1))
    errors.push_back(invalid("memory_utilization", "must be in (0, 1]"));
  if (s.max_concurrent < 1) errors.push_back(invalid("max_concurrent", "must be at least 1"));
  if (mix.prompt_tokens < 1 || mix.output_tokens < 1)
    errors.push_back(invalid("request", "prompt and output lengths must be at least 1 token"));
  if (s.tensor_parallel > 1 && !(s.cluster.intra_node_bandwidth.value() > 0))
    errors.push_back(invalid("cluster", "TP needs the node's intra-node bandwidth"));
  if (!errors.empty()) return errors;

  LlmEstimate e;
  e.weights_per_gpu = Bytes(weights_per_gpu(s));
  e.kv_bytes_per_token_per_gpu = Bytes(kv_per_token_per_gpu(s));
  const double usable = gpu.memory.value() * s.memory_utilization;
  if (e.weights_per_gpu.value() >= usable)
    return invalid("memory", s.shape.name + " does not fit on " + gpu.id + " with TP=" + std::to_string(s.tensor_parallel) +
                                 ": " + significant(e.weights_per_gpu.value() / 1e9) + " GB of weights per GPU, " +
                                 significant(usable / 1e9) + " GB usable");
  e.kv_capacity_tokens = std::floor((usable - e.weights_per_gpu.value()) / e.kv_bytes_per_token_per_gpu.value());
  const int per_sequence = mix.prompt_tokens + mix.output_tokens;
  e.kv_limited_sequences = static_cast<int>(e.kv_capacity_tokens / per_sequence);
  if (e.kv_limited_sequences < 1)
    return invalid("memory", s.shape.name + " on " + gpu.id + " with TP=" + std::to_string(s.tensor_parallel) +
                                 ": the KV cache holds " + significant(e.kv_capacity_tokens) + " tokens, less than one request's " +
                                 std::to_string(per_sequence));
  e.max_concurrent_sequences = std::min(e.kv_limited_sequences, s.max_concurrent);
  const double mean_context = mix.prompt_tokens + mix.output_tokens / 2.0;
  e.ttft_unloaded = llm_prefill(s, 1, mix.prompt_tokens);
  e.tpot_single = llm_decode_step(s, 1, mean_context);
  e.tpot_at_max = llm_decode_step(s, e.max_concurrent_sequences, mean_context * e.max_concurrent_sequences);
  e.tp_all_reduce_per_step = Seconds(tp_all_reduce(s, 1));
  const double n = e.max_concurrent_sequences;
  const double cycle = mix.output_tokens * e.tpot_at_max.value() + n * e.ttft_unloaded.value();
  e.requests_per_second = n / cycle;
  e.output_tokens_per_second = e.requests_per_second * mix.output_tokens;
  e.output_tokens_per_second_per_gpu = e.output_tokens_per_second / s.tensor_parallel;
  e.formula = "TPOT(1) = max(compute, (" + significant(e.weights_per_gpu.value() / 1e9) + " GB weights/GPU + " +
              significant(e.kv_bytes_per_token_per_gpu.value() * mean_context / 1e9) + " GB KV) / (" +
              significant(gpu.memory_bandwidth.value() / 1e12) + " TB/s x " + significant(kMemoryBandwidthEfficiency) + ")) + " +
              significant(e.tp_all_reduce_per_step.value() * 1e3) + " ms TP all-reduce = " +
              significant(e.tpot_single.value() * 1e3) + " ms";
  return e;
}

namespace {

struct Sequence {
  double arrival = 0;
  double first_token = 0;
  int generated = 0;
};

des::Percentiles percentiles(std::vector<double> v) {
  des::Percentiles p;
  if (v.empty()) return p;
  auto at = [&](double q) {
    const auto k = static_cast<std::size_t>(std::ceil(q * v.size())) - 1;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
    const double x = v[k];
    return des::Interval{x, x, x};
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
  if (!(o.rate > 0)) errors.push_back(invalid("rate", "must be greater than zero"));
  if (o.replicas < 1) errors.push_back(invalid("replicas", "must be at least 1"));
  if (!(o.duration.value() > 0)) errors.push_back(invalid("duration", "must be greater than zero"));
  if (o.warmup.value() < 0) errors.push_back(invalid("warmup", "must not be negative"));
  if (o.max_events < 1) errors.push_back(invalid("max_events", "must be at least 1"));
  if (!errors.empty()) return errors;

  des::Rng rng(o.seed);
  const double rate = o.rate / o.replicas;
  const double end = o.warmup.value() + o.duration.value();
  // One replica is simulated; its events are the arrivals plus the batch iterations.
  auto over_budget = [&](double needed, const std::string& why) {
    char about[32];
    std::snprintf(about, sizeof about, "%.3g", needed);
    return Diagnostic{{}, "run.max_events",
                      "simulation refused: " + why + " the run needs about " + about +
                          " events, over the event budget of " + std::to_string(o.max_events),
                      "shorten the duration or raise max_events"};
  };
  if (rate * end > static_cast<double>(o.max_events))
    return over_budget(rate * end, "with " + std::to_string(static_cast<long long>(std::llround(rate * end))) +
                                       " arrivals per replica");
  std::uint64_t events = 0;
  const double reserve = mix.prompt_tokens + mix.output_tokens;
  const double capacity = est->kv_capacity_tokens;
  const int cap = est->max_concurrent_sequences;

  std::deque<double> waiting;  // arrival times
  std::vector<Sequence> running;
  double t = 0, next_arrival = rng.exponential() / rate;
  std::vector<double> ttft, tpot, e2e;
  LlmSimulation out;
  double running_area = 0, kv_area = 0, measured = 0;
  std::uint64_t completed = 0;

  auto account = [&](double from, double to) {
    const double a = std::max(from, o.warmup.value()), b = std::min(to, end);
    if (b <= a) return;
    running_area += running.size() * (b - a);
    kv_area += running.size() * reserve / capacity * (b - a);
    measured += b - a;
  };

  while (t < end) {
    while (next_arrival <= t) {
      waiting.push_back(next_arrival);
      next_arrival += rng.exponential() / rate;
      ++events;
    }
    // Admit while the whole reservation fits and the cap allows.
    std::vector<Sequence> admitted;
    while (!waiting.empty() && static_cast<int>(running.size() + admitted.size()) < cap &&
           (running.size() + admitted.size() + 1) * reserve <= capacity) {
      admitted.push_back({waiting.front(), 0, 0});
      waiting.pop_front();
    }
    double step = 0;
    if (!admitted.empty()) {
      step = llm_prefill(s, static_cast<int>(admitted.size()), mix.prompt_tokens).value();
      account(t, t + step);
      t += step;
      for (auto& q : admitted) {
        q.first_token = t;
        q.generated = 1;
        if (q.arrival >= o.warmup.value() && t <= end) ttft.push_back(t - q.arrival);
        running.push_back(q);
      }
    } else if (!running.empty()) {
      double context = 0;
      for (const auto& q : running) context += mix.prompt_tokens + q.generated;
      step = llm_decode_step(s, static_cast<int>(running.size()), context).value();
      account(t, t + step);
      t += step;
      for (auto& q : running) q.generated += 1;
    } else {
      account(t, next_arrival);
      t = next_arrival;
      continue;
    }
    out.iterations += 1;
    ++events;
    if ((out.iterations & 0xffff) == 0 && t > 0) {
      const double projected = static_cast<double>(events) * (end / t);
      if (projected > 1.05 * static_cast<double>(o.max_events) || events >= o.max_events)
        return over_budget(projected, "at the pace of its first " + std::to_string(events) + " events,");
    }
    out.peak_running = std::max(out.peak_running, static_cast<int>(running.size()));
    // Finished sequences leave and free their KV reservation.
    auto done = std::partition(running.begin(), running.end(),
                               [&](const Sequence& q) { return q.generated < mix.output_tokens; });
    for (auto it = done; it != running.end(); ++it) {
      if (it->arrival < o.warmup.value() || t > end) continue;
      completed += 1;
      e2e.push_back(t - it->arrival);
      if (mix.output_tokens > 1) tpot.push_back((t - it->first_token) / (mix.output_tokens - 1));
    }
    running.erase(done, running.end());
  }
  out.completed = completed;
  out.ttft = percentiles(std::move(ttft));
  out.tpot = percentiles(std::move(tpot));
  out.end_to_end = percentiles(std::move(e2e));
  out.requests_per_second = completed / o.duration.value() * o.replicas;
  out.output_tokens_per_second = out.requests_per_second * mix.output_tokens;
  out.mean_running = measured > 0 ? running_area / measured : 0;
  out.kv_utilization = measured > 0 ? kv_area / measured : 0;
  return out;
}

}  // namespace capsim::models
