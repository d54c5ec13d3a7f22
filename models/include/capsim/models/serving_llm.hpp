// LLM serving: prefill and decode on a tensor-parallel replica, the KV cache as the limit on
// concurrent sequences, continuous batching, time to first token (TTFT) and time per output
// token (TPOT).
//
// The analytic model (estimate_llm_serving):
//   - memory: weights / TP per GPU; what is left of memory_utilization x GPU memory holds the
//     KV cache, kv_cache_bytes_per_token (memory.hpp) x the GPU's share of the KV heads per
//     token; concurrency = min(max_concurrent, KV tokens / (prompt + output)).
//   - prefill of T prompt tokens (compute-bound): max(F / (P e(T)), weights / (B eff)) + TP
//     all-reduces, F = 2 x active params x T / TP + causal attention 2 x layers x hidden x T^2
//     / TP; e(m) = kGemmMaxEfficiency x m / (m + kGemmHalfSaturationDim).
//   - decode step of n sequences holding C context tokens in all (memory-bound): max(2 x
//     active params x n / TP + 4 x layers x hidden x C / TP over P e(n), (weights / TP + KV
//     bytes of C tokens) / (B x kMemoryBandwidthEfficiency)) + TP all-reduces.
//   - TP: two all-reduces per layer (after attention and after the MLP; Shoeybi et al.,
//     Megatron-LM, 2019, Sec. 3) of tokens x hidden x 2 bytes over the node's NVLink, ring
//     all-reduce from collectives.hpp at kCollectiveBandwidthFraction of the line rate.
// The simulation (simulate_llm_serving) is a small dedicated event loop of one replica with
// iteration-level scheduling (Orca, Yu et al., OSDI 2022; vLLM, Kwon et al., SOSP 2023): at
// each iteration the scheduler admits waiting requests while their whole KV reservation
// (prompt + output tokens) fits and the concurrency cap allows, runs one prefill iteration
// for the newly admitted prompts (prefill first, as vLLM's default scheduler), otherwise one
// decode step for every running sequence; finished sequences free their KV at once.
// Reserving the full output up front (no preemption) is conservative against PagedAttention's
// on-demand blocks. Several replicas are simulated as one replica at rate / replicas
// (random routing splits a Poisson stream into Poisson streams).
//
// Plain values; pure functions, thread-safe.
#pragma once

#include <cstdint>

#include "capsim/core/des/metrics.hpp"
#include "capsim/core/result.hpp"
#include "capsim/core/units.hpp"
#include "capsim/models/cluster.hpp"
#include "capsim/models/workload.hpp"

namespace capsim::models {

// vLLM's default fraction of GPU memory its engine may use (gpu_memory_utilization = 0.9,
// vLLM engine arguments documentation).
inline constexpr double kVllmGpuMemoryUtilization = 0.9;
// vLLM's default cap on sequences per iteration (max_num_seqs = 256, engine arguments).
inline constexpr int kVllmMaxNumSeqs = 256;

struct LlmServingSpec {
  TransformerShape shape;
  ClusterSpec cluster;        // the node: GPU type, GPUs per node, NVLink for TP
  int tensor_parallel = 1;    // 1..gpus_per_node; heads must divide by it
  Precision weights = Precision::bf16;
  Precision kv_cache = Precision::bf16;
  double memory_utilization = kVllmGpuMemoryUtilization;  // (0, 1]
  int max_concurrent = kVllmMaxNumSeqs;                   // >= 1: the scheduler's cap
};

// One request class: prompt and output lengths in tokens (both >= 1).
struct LlmRequestMix {
  int prompt_tokens = 512;
  int output_tokens = 128;
};

struct LlmEstimate {
  Bytes weights_per_gpu{0.0};
  Bytes kv_bytes_per_token_per_gpu{0.0};
  double kv_capacity_tokens = 0;       // tokens the replica's KV cache holds
  int kv_limited_sequences = 0;        // floor(kv_capacity_tokens / (prompt + output))
  int max_concurrent_sequences = 0;    // min(that, max_concurrent)
  Seconds ttft_unloaded{0.0};          // prefill of one prompt on an idle replica
  Seconds tpot_single{0.0};            // decode step of one sequence at prompt + output/2 context
  Seconds tpot_at_max{0.0};            // decode step at max_concurrent_sequences
  Seconds tp_all_reduce_per_step{0.0}; // in tpot_single
  // At max concurrency with prefill iterations interleaved: sequences finish every
  // (output x tpot_at_max + ttft_unloaded x max_concurrent) / max_concurrent.
  double requests_per_second = 0;      // per replica
  double output_tokens_per_second = 0; // per replica
  double output_tokens_per_second_per_gpu = 0;
  std::string formula;                 // the TPOT arithmetic, for reports
};

// Errors: tensor_parallel out of 1..gpus_per_node or not dividing heads; no peak for the
// weights precision; weights that do not fit ("llama-2-70b does not fit on h100-sxm-80gb
// with TP=1: 151 GB of weights per GPU, 72 GB usable"); no room for one sequence's KV.
Result<LlmEstimate> estimate_llm_serving(const LlmServingSpec& spec, const LlmRequestMix& mix);

// The two phases on their own. sequences >= 1, context_tokens >= 0, tokens >= 1.
// Preconditions: estimate_llm_serving(spec, ...) succeeds.
Seconds llm_decode_step(const LlmServingSpec& spec, int sequences, double context_tokens);
Seconds llm_prefill(const LlmServingSpec& spec, int prompts, int tokens_per_prompt);

struct LlmSimulationOptions {
  double rate = 1.0;             // requests/s offered to the whole deployment (> 0)
  int replicas = 1;              // >= 1
  Seconds warmup{60.0};
  Seconds duration{600.0};       // > 0, measured after the warm-up
  std::uint64_t seed = 1;
  // The most events (arrivals plus batch iterations of one replica) a run may process;
  // a run that would need more is refused up front or as soon as its pace shows it.
  std::uint64_t max_events = 100'000'000;
};

struct LlmSimulation {
  des::Percentiles ttft;          // seconds; p50/p95/p99 (point values: low = high = mean)
  des::Percentiles tpot;          // seconds per output token after the first
  des::Percentiles end_to_end;    // seconds
  double requests_per_second = 0; // completed, whole deployment
  double output_tokens_per_second = 0;
  double mean_running = 0;        // time-average sequences in the running batch
  int peak_running = 0;
  double kv_utilization = 0;      // time-average reserved KV / capacity
  std::uint64_t completed = 0;
  std::uint64_t iterations = 0;
};

// Errors: those of estimate_llm_serving and invalid options.
Result<LlmSimulation> simulate_llm_serving(const LlmServingSpec& spec, const LlmRequestMix& mix,
                                           const LlmSimulationOptions& options);

}  // namespace capsim::models
