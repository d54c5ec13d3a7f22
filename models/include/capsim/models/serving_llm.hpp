// LLM serving: prefill and decode on a tensor-parallel replica, the KV cache as the limit on
// concurrent sequences, continuous (or static) batching, time to first token (TTFT) and time
// per output token (TPOT).
//
// One engine step (llm_step) runs a forward pass over its tokens: decode tokens of running
// sequences and prefill chunks of prompts. Its time is the sum of its kernels' rooflines, in
// the order an engine runs them (the kernels of one step do not overlap):
//   - GEMMs: max(2 x matmul params x tokens / TP over P e(tokens), weight bytes / (B eff)),
//     e(m, n, k) = GEMM ceiling x m / (m + d_m) x n / (n + d) x k / (k + d), d =
//     kGemmHalfSaturationDim (performance.hpp) and, on Hopper, d_m =
//     kHopperTokenRowsHalfSaturationDim for the token rows (measured). The output
//     projection to the vocabulary runs only for tokens that are sampled (decode tokens and
//     the last token of a prompt), not for every prompt token. A mixture-of-experts model
//     reads the experts its tokens route to: E x (1 - (1 - k/E)^tokens) of them on average.
//   - attention: max(4 x layers x q_width x query-key pairs / TP over P x
//     kFlashAmpereFa2.forward (engines' fused kernels), KV bytes read / (B eff)). Decode attention reads each running
//     sequence's whole KV cache (context grows the cost); a decode kernel that does not share
//     K/V among the query heads of a GQA group (LlmServingSpec::gqa_shared_kv false, as
//     TensorRT-LLM's masked MHA kernel before XQA) reads it once per query head.
//   - element-wise kernels, memory-bound: two fused residual-add + RMSNorm per layer, the
//     gated activation (per routed expert), a mixture-of-experts layer's token permutation
//     and its inverse; 8-bit GEMM inputs are written quantized by the kernel before them,
//     only the attention output is cast separately. Hidden-wide kernels are not split by
//     TP. A kernel whose input and output fit in L2 does not reach HBM.
//   - TP: two all-reduces per layer (after attention and after the MLP; Shoeybi et al.,
//     Megatron-LM, 2019, Sec. 3) of tokens x hidden x 2 bytes over the node's intra-node
//     link (intra_node_link: NCCL's share of an NVLink or a PCIe line rate), the cheaper of
//     a ring (collectives.hpp) and a one-shot all-reduce.
//   - fixed costs: kLayerOverheadSeconds per layer (kernel launches and the fixed ramp of
//     each small kernel, which the roofline does not see) and kEngineStepOverheadSeconds per
//     step (host scheduling and sampling).
//   - pipeline parallelism (LlmServingSpec::pipeline_parallel = p > 1): the layers are split
//     over p stages of TP GPUs each, and the engine keeps p batches in flight, one per stage
//     (vLLM's virtual engines: p schedulers, each with 1/p of the KV blocks and its own
//     max_num_seqs; TensorRT-LLM's micro-batches). A batch's step passes every stage in turn,
//     so it takes the whole model's step at TP, paced by the busiest stage (ceil(L / p) layers,
//     x p ceil(L / p) / L), plus p - 1 sends of the step's activations between stages (the
//     hidden states and the residual, 16-bit, as vLLM's IntermediateTensors carry them; over
//     the network when the replica spans nodes). PP lowers the weights and KV per GPU, not the
//     time per token: it adds batches in flight, each paying its own weight reads.
// The analytic model (estimate_llm_serving): weights / TP per GPU; what is left of
// memory_utilization x the GPU's device memory (llm_device_memory), or memory_utilization of
// what the weights leave free (LlmKvBudget::share_of_free), holds the KV cache
// (kv_cache_bytes_per_token, memory.hpp, x the GPU's share of the KV heads); concurrency = KV tokens / (a sequence's mean paged
// context, or its whole prompt + output when the scheduler reserves it up front), capped by
// max_concurrent; TTFT = one prompt's prefill, TPOT = one decode step.
// The simulation (simulate_llm_serving) is a small dedicated event loop of one replica with
// iteration-level scheduling as current engines run it (Orca, Yu et al., OSDI 2022; vLLM,
// Kwon et al., SOSP 2023; chunked prefill, Agrawal et al., Sarathi-Serve, OSDI 2024): each
// step runs one decode token for every running sequence plus prefill chunks of waiting or
// partly prefilled prompts up to a token budget (max_batched_tokens), all in one forward
// pass (llm_step). The KV cache is paged in blocks of kKvBlockTokens. With on-demand KV
// (vLLM, TensorRT-LLM's max_utilization) a sequence holds the blocks of the tokens it has, a
// new prompt is admitted while its prompt's blocks fit with kVllmWatermark of the cache left
// free, and when a decode step finds no free block the newest running sequence is
// preempted and recomputed later (vLLM's recompute policy); with reserved KV (TensorRT-LLM's
// guaranteed_no_evict) a prompt is admitted only when the blocks of its prompt and whole
// output fit, and nothing is preempted. Static
// batching (TensorRT-LLM's gptSessionBenchmark, vLLM's benchmark_latency) admits a batch
// only when the previous one has finished, and prefills its prompts in one step. Running
// sequences are limited by the KV cache; max_concurrent caps them only when the scenario
// sets it. Offline mode puts every request in the queue at t = 0 and measures the makespan;
// server mode draws Poisson arrivals, for a window or for a fixed number of requests.
// Several replicas are simulated as one replica at rate / replicas (random routing splits a
// Poisson stream into Poisson streams); a replica of p pipeline stages as p engines, each
// with 1/p of the KV cache, at rate / (replicas x p). An overloaded server is a result: it completes
// requests at its capacity while the queue grows, and the simulation says "saturated" with
// the growth rate.
//
// Plain values; pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "capsim/models/constants.hpp"
#include "capsim/core/des/metrics.hpp"
#include "capsim/core/result.hpp"
#include "capsim/core/units.hpp"
#include "capsim/models/cluster.hpp"
#include "capsim/models/workload.hpp"

namespace capsim::models {

// vLLM's default fraction of GPU memory its engine may use (gpu_memory_utilization = 0.9,
// vLLM engine arguments documentation).
inline constexpr double kVllmGpuMemoryUtilization = 0.9;
// TensorRT-LLM's default share of the memory left free after the engine has loaded that
// its KV cache takes (KvCacheConfig free_gpu_memory_fraction = 0.9; trtllm-bench's
// --kv_cache_free_gpu_mem_fraction defaults to the same 0.90, perf-overview.md).
inline constexpr double kTrtllmFreeGpuMemoryFraction = 0.9;
// GPU makers state memory in binary gigabytes (an "80 GB" H100 carries 80 GiB of HBM) and
// the driver reports a little less than that to CUDA (cudaDeviceProp::totalGlobalMem): the
// calibration profiles in data/calibration read 85,017,493,504 B on an H100 SXM "80 GB"
// (0.9897 of 80 GiB) and 150,109,880,320 B on an H200 "141 GB" (0.9915 of 141 GiB).
inline constexpr double kDriverReportedMemoryShare = 0.99;
// vLLM's default cap on sequences per iteration (max_num_seqs = 256, engine arguments): used
// only when a scenario asks for vLLM's defaults; capsim's default is no cap (0).
inline constexpr int kVllmMaxNumSeqs = 256;
// Tokens per KV-cache block (vLLM's default block_size = 16, engine arguments).
inline constexpr int kKvBlockTokens = 16;
// Fraction of the KV blocks vLLM's block manager keeps free when it admits a prompt
// (watermark = 0.01 in BlockSpaceManagerV1/V2: can_allocate is OK only when free blocks -
// the prompt's blocks >= 0.01 x all blocks, "to avoid frequent cache eviction";
// vllm/core/block_manager_v1.py and block_manager_v2.py). Applied to on-demand admission.
inline constexpr double kVllmWatermark = 0.01;
// Token budget of one step with chunked prefill (vLLM V1 max_num_batched_tokens default for
// online serving, 8192, engine arguments).
inline constexpr int kMaxBatchedTokens = 8192;
// Fixed costs of a step that the roofline does not see. Both are chosen on the rows of
// data/validation/llm_serving.yaml marked fit: true (low-load decode latencies, where a step
// is a few GEMVs per layer and the fixed costs are a large share of it); every other row is
// held out. kLayerOverheadSeconds: per transformer layer per step, the launch and ramp of
// the layer's ~10 small kernels. kEngineStepOverheadSeconds: per step, the host side
// (scheduling, sampling, detokenizing).
// kLayerOverheadSeconds: read from the registry, capsim/models/constants.hpp (value, unit, basis).
// kEngineStepOverheadSeconds: read from the registry, capsim/models/constants.hpp (value, unit, basis).
// The token rows (m) of a step's GEMMs on Hopper: the GEMM size at which that dimension
// alone halves the efficiency, for 16-bit operands (doubled for 8-bit ones, performance.cpp's
// rule). Decode multiplies a few hundred token rows by the whole weight matrix; cuBLAS keeps
// such GEMMs near its large-GEMM rate where the n and k dimensions (kGemmHalfSaturationDim)
// would halve it. CHOSEN on the GEMMs capsim-calibrate timed on one H100 SXM and one H200 SXM
// (data/calibration/h100-sxm-80gb-2026-11-26-sustained.json, h200-sxm-141gb-2026-11-26.json),
// no validation row used: m x 8192 x 8192 at m = 256 runs at 0.855 (H100) and 0.877 (H200)
// of the 8192^3 GEMM's rate in bf16, 0.814 and 0.802 in fp8; with this model's n and k
// factors those are half-saturation rows of 47 and 39 (bf16) and 2 x 31 and 2 x 33 (fp8),
// and 40 puts each within 5 %. (The m = 16 and 64 points are bound by the weight reads, the
// roofline's other side.) Other architectures keep kGemmHalfSaturationDim for the rows until
// a profile measures them.
// kHopperTokenRowsHalfSaturationDim: read from the registry, capsim/models/constants.hpp (value, unit, basis).

// How the scheduler forms batches: continuous (iteration-level, in-flight batching) or
// static (a batch runs to completion before the next one is admitted).
enum class LlmBatching { continuous, static_batches };
// When a sequence's KV blocks are taken: as its tokens arrive (vLLM, TensorRT-LLM
// max_utilization; preemption when they run out), or all of prompt + output at admission
// (TensorRT-LLM guaranteed_no_evict; never preempts).
enum class LlmKvAdmission { on_demand, reserve_full };
// How the engine sizes its KV cache: memory_utilization of the device memory, weights
// included (vLLM's gpu_memory_utilization), or memory_utilization of what the weights leave
// free (TensorRT-LLM's free_gpu_memory_fraction).
enum class LlmKvBudget { share_of_device, share_of_free };

// Speculative decoding (Leviathan, Kalman and Matias, "Fast Inference from Transformers via
// Speculative Decoding", ICML 2023, sec. 3): each step a draft proposes `tokens` tokens for
// every decoding sequence and the model verifies them in one forward pass over tokens + 1
// positions per sequence. Each proposal is accepted with probability acceptance_rate (the
// paper's alpha, taken as independent) up to the first rejection, and the verification adds
// one token of its own, so a step yields (1 - alpha^(tokens + 1)) / (1 - alpha) tokens on
// average (the paper's eq. 1). The draft, when given, is a smaller model on the same GPUs at
// the same TP: `tokens` decode forwards of its own per step and its own prefill of new
// prompts, each without the engine's per-step host cost; its weights and KV cache come out
// of the model's KV cache. Without a draft the proposals cost nothing (prompt lookup,
// n-gram matching). tokens = 0: off.
inline constexpr int kMaxSpeculativeTokens = 16;
struct LlmSpeculation {
  int tokens = 0;
  double acceptance_rate = 0;  // in [0, 1)
  bool has_draft = false;
  TransformerShape draft;
};

// Expected tokens a sequence gains per step: (1 - alpha^(tokens + 1)) / (1 - alpha); 1 when off.
double llm_tokens_per_step(const LlmSpeculation& speculation);

struct LlmServingSpec {
  TransformerShape shape;
  ClusterSpec cluster;        // the node: GPU type, GPUs per node, NVLink for TP
  int tensor_parallel = 1;    // 1..gpus_per_node; heads must divide by it
  // Pipeline stages of tensor_parallel GPUs each, 1..layers; a replica of more than a node's
  // GPUs takes whole nodes (tensor_parallel x pipeline_parallel a multiple of gpus_per_node)
  // and needs the cluster's network.
  int pipeline_parallel = 1;
  Precision weights = Precision::bf16;
  Precision kv_cache = Precision::bf16;
  double memory_utilization = kVllmGpuMemoryUtilization;  // (0, 1]
  int max_concurrent = 0;                                 // the scheduler's cap; 0: the KV cache decides
  int max_batched_tokens = kMaxBatchedTokens;             // >= 1: tokens per step (chunked prefill)
  LlmBatching batching = LlmBatching::continuous;
  LlmKvAdmission kv_admission = LlmKvAdmission::on_demand;
  LlmKvBudget kv_budget = LlmKvBudget::share_of_device;
  // Decode attention reads a KV head once for all query heads of its GQA group (FlashAttention,
  // vLLM, TensorRT-LLM's XQA); false: once per query head (TensorRT-LLM before v0.7).
  bool gqa_shared_kv = true;
  LlmSpeculation speculation;
};

// The precision the weights' matrix math runs at: 8-bit weights on 8-bit tensor cores where
// the GPU has them; 4-bit weights (AWQ/GPTQ) and 8-bit weights on GPUs without them are
// dequantized into 16-bit GEMMs (weight-only quantization: fewer bytes, 16-bit math).
Precision llm_compute_precision(const LlmServingSpec& spec);

// The memory CUDA reports on one GPU, in bytes: the catalog's binary gigabytes at
// kDriverReportedMemoryShare.
double llm_device_memory(const hardware::GpuSpec& gpu);

// One request's prompt and output lengths in tokens (both >= 1).
struct LlmRequestLength {
  int prompt_tokens = 0;
  int output_tokens = 0;
};

// The requests' lengths: one class (every request prompt_tokens and output_tokens), or a
// list of per-request lengths, a dataset's (prompt, output) pairs, which the simulation's
// requests take in order, the k-th request the (k mod size)-th pair. With a list,
// prompt_tokens and output_tokens are its rounded means (llm_request_mix), which the
// analytic estimate uses. Lengths that vary matter where they change who is in the batch:
// all requests queued at once finish spread over the run instead of together, and the
// batch drains as they do.
struct LlmRequestMix {
  int prompt_tokens = 512;
  int output_tokens = 128;
  std::vector<LlmRequestLength> requests = {};
};

// A mix of per-request lengths, with their rounded means (at least 1) as its class.
LlmRequestMix llm_request_mix(std::vector<LlmRequestLength> requests);

struct LlmEstimate {
  Bytes weights_per_gpu{0.0};
  Bytes kv_bytes_per_token_per_gpu{0.0};
  double kv_capacity_tokens = 0;       // tokens the replica's KV cache holds (all its stages' batches)
  int kv_limited_sequences = 0;        // p x floor(kv_capacity_tokens / p / (prompt + output))
  int max_concurrent_sequences = 0;    // min(that, p x max_concurrent)
  double mean_context_tokens = 0;      // KV tokens a running sequence holds on average (paged)
  Seconds ttft_unloaded{0.0};          // prefill of one prompt on an idle replica
  Seconds tpot_single{0.0};            // decode step of one sequence at prompt + output/2 context
  Seconds tpot_at_max{0.0};            // decode step at max_concurrent_sequences (/ p per batch)
  Seconds tp_all_reduce_per_step{0.0}; // in tpot_single
  // At max concurrency with prefill iterations interleaved: sequences finish every
  // (output x tpot_at_max + ttft_unloaded x max_concurrent) / max_concurrent.
  Seconds pipeline_send_per_step{0.0}; // in tpot_single: the p - 1 sends between stages
  // GPU time of one request's prompt at max concurrency: the extra compute its tokens add to
  // the decode steps they ride in (chunked prefill); the request's decode time is
  // output_tokens x tpot_at_max / max_concurrent (per batch). Their sum is the cycle that
  // sets requests_per_second, and their ratio splits a replica's cost between input and
  // output tokens (llm_token_cost, serving_sizing.hpp).
  Seconds prefill_per_request{0.0};
  double requests_per_second = 0;      // per replica
  double output_tokens_per_second = 0; // per replica
  double output_tokens_per_second_per_gpu = 0;
  std::string formula;                 // the TPOT arithmetic, for reports
};

// GPUs of one replica: tensor_parallel x pipeline_parallel.
int llm_replica_gpus(const LlmServingSpec& spec);

// Errors: tensor_parallel out of 1..gpus_per_node or not dividing heads; pipeline_parallel
// out of 1..layers, a replica spanning part of a node or nodes without a network,
// speculation with pipeline stages (not modelled); no peak for the
// weights precision; weights that do not fit ("llama-2-70b does not fit on h100-sxm-80gb
// with TP=1: 151 GB of weights per GPU, 72 GB usable"); no room for one sequence's KV.
Result<LlmEstimate> estimate_llm_serving(const LlmServingSpec& spec, const LlmRequestMix& mix);

// The element-wise kernels of one step of `tokens` tokens on one GPU, memory-bound (bytes /
// HBM bandwidth at kMemoryBandwidthEfficiency), per layer and token: two fused residual-add +
// RMSNorm kernels (read the input and the residual, write the residual and the normalized
// input: 16-bit, or 8-bit where it feeds 8-bit GEMMs), the gated activation of each routed
// expert's MLP (read gate and up, write the product: 16-bit in, 16- or 8-bit out), and in a
// mixture-of-experts layer the permutation of the tokens to their k experts and back (read
// h, write k h; read k h, write h; 16-bit). Under tensor parallelism the hidden-wide kernels
// run whole on every GPU; the MLP's is split. A kernel whose input and output fit in the
// GPU's L2 cache does not reach HBM (cnn.cpp's rule for inference).
Seconds llm_elementwise(const LlmServingSpec& spec, double tokens);

// One engine step: decode_sequences tokens attending to decode_context KV tokens in all,
// plus prefill_tokens prompt tokens whose attention covers prefill_attention query-key
// pairs, of which prompts_completed end their prompt in this step (their last token is
// sampled). GEMMs, attention, element-wise kernels, TP all-reduces and fixed costs as
// described above.
Seconds llm_step(const LlmServingSpec& spec, int decode_sequences, double decode_context, double prefill_tokens,
                 double prefill_attention, int prompts_completed = 0);
// The two phases on their own. sequences >= 1, context_tokens >= 0, tokens >= 1.
// Preconditions: estimate_llm_serving(spec, ...) succeeds.
Seconds llm_decode_step(const LlmServingSpec& spec, int sequences, double context_tokens);
// Time per output token of that decode step: the step over the tokens it yields per sequence
// (llm_tokens_per_step; the step itself without speculation).
Seconds llm_tpot(const LlmServingSpec& spec, int sequences, double context_tokens);
Seconds llm_prefill(const LlmServingSpec& spec, int prompts, int tokens_per_prompt);

struct LlmSimulationOptions {
  // Offline max-throughput mode: this many requests queued at t = 0 (per deployment),
  // run to the last completion; 0: server mode with Poisson arrivals at `rate`.
  int offline_requests = 0;
  // Server mode with a fixed number of requests (a benchmark client sending N requests at
  // `rate`): this many Poisson arrivals, run to the last completion, every request
  // measured (no warm-up, no window); 0: arrivals for warmup + duration.
  int server_requests = 0;
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
  // seconds; p50/p95/p99 of the requests whose first token (TTFT) or last token (TPOT,
  // end to end) came inside the measured window, with 95 % confidence intervals from 10
  // batch means in completion order (a point value when fewer than 20 requests finished;
  // all zero when none did: completed == 0 means "not measured")
  des::Percentiles ttft;
  des::Percentiles tpot;          // seconds per output token after the first
  des::Percentiles end_to_end;    // seconds
  double requests_per_second = 0; // completed, whole deployment
  double output_tokens_per_second = 0;
  double mean_running = 0;        // time-average sequences in the running batch (of one of
                                  // a replica's p pipeline batches with stages)
  int peak_running = 0;
  double kv_utilization = 0;      // time-average reserved KV / capacity
  std::uint64_t completed = 0;
  std::uint64_t iterations = 0;
  std::uint64_t preemptions = 0;  // sequences evicted for lack of KV blocks and recomputed
  // Server mode: true when arrivals outran completions (the queue grew by more than 5 % of
  // the arrivals, and by more than 10 requests, over the measured window); throughput is
  // then the capacity the server delivered while the queue grew at queue_growth_per_second.
  bool saturated = false;
  double offered_rate = 0;             // requests/s offered (server mode)
  double queue_growth_per_second = 0;  // waiting requests added per second over the window
  std::int64_t waiting_at_end = 0;
  double makespan_s = 0;               // offline or fixed-count server mode: time to the last completion
  // Means over the same requests as the percentiles (seconds; 0 when none finished).
  double ttft_mean = 0;
  double tpot_mean = 0;
  double end_to_end_mean = 0;
  // The running batch and the KV cache over the run (of one engine, as mean_running): at
  // most a few hundred samples, evenly spaced over the measured window (or the whole run
  // when it runs to completion), each at the start of an engine step or idle spell.
  struct Sample {
    double t = 0;              // seconds since the start of the run
    int running = 0;           // sequences in the running batch
    double kv_used = 0;        // KV blocks holding tokens / the cache's blocks, 0 to 1
  };
  std::vector<Sample> timeline;
};

// Errors: those of estimate_llm_serving and invalid options.
Result<LlmSimulation> simulate_llm_serving(const LlmServingSpec& spec, const LlmRequestMix& mix,
                                           const LlmSimulationOptions& options);

}  // namespace capsim::models
