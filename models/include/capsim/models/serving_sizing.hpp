// Sizing a serving deployment under a latency SLO: the cheapest GPU type, sharing mode,
// replicas and batching settings that meet the bound at the peak rate, the best few
// verified by simulation, and the node pools with autoscaling bounds and Kubernetes
// resource requests to run them.
//
// Method (size_serving): for every node type x sharing mode (x MIG profile) x max batch x
// max queue delay, replicas are allocated greedily: each stage starts with the fewest
// replicas that keep it stable, then the stage with the largest analytic p99 gets one more
// replica until the end-to-end analytic p99 (estimate_serving) meets the bound, or the
// stage limit is reached. Candidates are ranked by cost per hour (GPUs rounded up to whole
// nodes x the node price; GPU count when unpriced), then by p99. The `verify_top` cheapest
// are simulated at the peak rate (Poisson); a candidate whose simulated p99 misses the
// bound gets one more replica at its simulated constraint and is simulated again (at most
// kMaxVerifyRepairs times). Autoscaling: the same allocation at the trough rate (the
// lowest hour of a diurnal profile) gives the minimum replicas; the peak gives the maximum.
//
// LLMs (size_llm_serving): per node type x tensor parallelism (powers of two up to the
// node; where none holds the model, TP over the node and the fewest pipeline stages across
// 2, 4 or 8 nodes that do), the largest concurrency whose decode step meets the TPOT bound (and KV allows)
// sets a replica's throughput (estimate_llm_serving); replicas = peak rate / (throughput x
// kLlmTargetUtilization), rejecting layouts whose unloaded TTFT misses its bound; the best
// few are verified with simulate_llm_serving (p99 TTFT and TPOT).
//
// Plain values; pure functions, thread-safe for distinct requests.
#pragma once

#include "capsim/core/progress.hpp"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "capsim/core/des/simulator.hpp"
#include "capsim/core/result.hpp"
#include "capsim/models/search.hpp"
#include "capsim/models/serving.hpp"
#include "capsim/models/serving_llm.hpp"

namespace capsim::models {

// Re-simulations a failed verification may trigger, each adding one replica.
inline constexpr int kMaxVerifyRepairs = 3;
// LLM replicas are sized to run at this fraction of their analytic throughput, leaving room
// for the queueing of prompts that the throughput figure ignores. Assumption (a common
// capacity-planning headroom), verified by simulation for the best candidates.
inline constexpr double kLlmTargetUtilization = 0.8;
// The most nodes one LLM replica may span with pipeline stages (TP over each node): sizing
// tries 2, 4, ... up to this many where no layout within a node holds the model.
inline constexpr int kMaxLlmPipelineNodes = 8;

struct ServingSizingRequest {
  InferenceGraph graph;
  ArrivalSpec arrivals;                // peak and trough rates come from here
  Seconds p99_bound{0.0};              // end-to-end, > 0
  std::vector<NodeType> node_types;    // at least one (models/search.hpp)
  std::vector<SharingMode> sharing{SharingMode::exclusive, SharingMode::mig, SharingMode::mps};
  std::vector<int> max_batch{1, 4, 8, 16, 32};
  std::vector<Seconds> max_queue_delay{Seconds(0.0), Seconds(0.002), Seconds(0.005)};
  ExecutionOptions exec;               // every stage
  int max_replicas_per_stage = 256;
  int verify_top = 3;                  // candidates simulated
  ProgressObserver* progress = nullptr;  // may cancel the search and the verifying simulations
  des::RunOptions verify_run{Seconds(10.0), Seconds(60.0), 1, 20, 1'000'000'000};
};

// Kubernetes: what one replica's pod requests.
struct K8sResourceRequest {
  std::string stage;
  std::string resource;   // "nvidia.com/gpu" or "nvidia.com/mig-1g.10gb"
  int count = 1;          // per pod
  int min_replicas = 1;   // autoscaler bounds (HPA minReplicas / maxReplicas)
  int max_replicas = 1;
};

struct SizedDeployment {
  std::string node_type;                // NodeType::id
  Deployment deployment;
  DeploymentPlan plan;
  ServingEstimate analytic;             // at the peak rate
  int gpus = 0;
  int nodes = 0;                        // peak: the node pool's maximum
  int min_nodes = 0;                    // trough: the node pool's minimum
  std::optional<MoneyPerSecond> cost;   // per hour at peak; none when the node type has no price
  bool verified = false;                // simulated at the peak rate
  std::optional<des::Percentiles> simulated_latency;
  bool meets_slo = false;               // analytic, and simulated when verified
  std::vector<K8sResourceRequest> k8s;  // one per stage
  std::string summary;                  // "3 x t4 (aws-g4dn-xlarge), exclusive, batch 8 / 2 ms: p99 41 ms"
};

struct ServingSizingResult {
  std::size_t evaluated = 0;                // configurations looked at
  std::vector<SizedDeployment> candidates;  // meeting the SLO analytically, cheapest first
  std::vector<SizedDeployment> verified;    // the best few after simulation, cheapest first
  std::optional<SizedDeployment> recommended;  // the cheapest verified one meeting the SLO
  // When no verified candidate meets the bound: the one whose simulated p99 comes nearest.
  std::optional<SizedDeployment> closest;
  std::string recommendation;
  std::vector<std::pair<std::string, std::string>> skipped;  // node type / mode, reason
  // The progress observer cancelled the sizing (the GUI's Esc): the candidates cover the
  // settings evaluated until then, and none was simulated.
  bool cancelled = false;
};

// Errors: no node types, bound <= 0, invalid arrivals, no configuration meeting the bound
// (naming the closest analytic p99 found), and a cancel before any configuration met it.
Result<ServingSizingResult> size_serving(const ServingSizingRequest& request);

struct LlmSizingRequest {
  TransformerShape shape;
  LlmRequestMix mix;
  double peak_rate = 0;                 // requests/s, > 0
  double trough_rate = 0;               // requests/s, >= 0 (0: minimum one replica)
  // A day's load curve: requests/s in each hour from midnight (24), or empty for a constant
  // rate. The deployment is sized for its peak; each hour gets the replicas its rate needs
  // (SizedLlmDeployment::replicas_by_hour).
  std::vector<double> hourly_rates;
  Seconds ttft_p99{0.0};                // > 0
  Seconds tpot_p99{0.0};                // > 0
  std::vector<NodeType> node_types;
  Precision weights = Precision::bf16;
  Precision kv_cache = Precision::bf16;  // as the deployment would run it (workload.kv_cache)
  int max_batched_tokens = kMaxBatchedTokens;  // tokens per step (workload.max_batched_tokens)
  int max_num_seqs = 0;                 // the engine's cap on running sequences; 0: none
  LlmSpeculation speculation;           // speculative decoding, as the deployment would run it
  // How the engine runs, as the deployment would run it (workload.engine and its keys).
  LlmKvAdmission kv_admission = LlmKvAdmission::on_demand;
  LlmBatching batching = LlmBatching::continuous;
  LlmKvBudget kv_budget = LlmKvBudget::share_of_device;
  double memory_utilization = kVllmGpuMemoryUtilization;
  bool gqa_shared_kv = true;
  int verify_top = 3;
  // The verifying simulations' run: the scenario's simulate: keys, so that the plan's
  // simulated figures are the recommendation's verification, not another run.
  Seconds verify_duration{600.0};
  Seconds verify_warmup{60.0};
  std::uint64_t verify_seed = 1;
  std::uint64_t verify_max_events = 100'000'000;
};

// What a deployment's tokens cost: its price per hour spread over the tokens it serves,
// split between input (prompt) and output tokens by the GPU time each takes (the analytic
// cycle of estimate_llm_serving: a request's prompt costs prefill_per_request of extra step
// time, its output output_tokens x tpot_at_max / n of decode steps it shares with n others):
//   prefill share s = prefill / (prefill + decode)
//   USD per million input tokens  = cost per hour x s       / (input tokens per hour)  x 1e6
//   USD per million output tokens = cost per hour x (1 - s) / (output tokens per hour) x 1e6
//   USD per million tokens        = cost per hour / (input + output tokens per hour) x 1e6
// Tokens per hour are those served at the rate given (the simulation's completed requests,
// or the offered peak when no simulation measured one): a deployment sized for a peak and
// paid around the clock costs this per token at that peak. Input tokens = requests x the
// mean prompt. Costs are in USD (the plan's currency).
struct LlmTokenCost {
  double prefill_share = 0;            // of the replica's GPU time, in [0, 1]
  double requests_per_second = 0;      // served, whole deployment
  double input_tokens_per_second = 0;
  double output_tokens_per_second = 0;
  double usd_per_million_input = 0;
  double usd_per_million_output = 0;
  double usd_per_million_tokens = 0;   // input and output together
  std::string basis;                   // "simulated" or "analytic", with the rate
};

// None when the cost is unknown or nothing is served (requests_per_second <= 0); the
// figures are finite otherwise. output_tokens_per_second <= 0 takes requests x the mean output.
std::optional<LlmTokenCost> llm_token_cost(MoneyPerSecond cost, const LlmEstimate& estimate, const LlmRequestMix& mix,
                                           double requests_per_second, double output_tokens_per_second,
                                           std::string basis);
// "0.123 USD per million input tokens, 1.23 USD per million output tokens (0.456 per million tokens)"
std::string llm_token_cost_text(const LlmTokenCost& c);
// The formula with this deployment's numbers, for reports.
std::string llm_token_cost_formula(const LlmTokenCost& c, MoneyPerSecond cost);

struct SizedLlmDeployment {
  std::string node_type;
  LlmServingSpec spec;                  // with max_concurrent set to the TPOT-limited batch
  LlmEstimate estimate;
  int replicas = 0;                     // at peak
  int needed_at_peak = 0;               // what the analytic capacity gives at peak (before whole nodes and repairs)
  int repairs = 0;                      // replicas added because the verifying simulation missed the bounds
  int min_replicas = 0;                 // at trough
  int gpus = 0;
  int nodes = 0;
  std::optional<MoneyPerSecond> cost;
  bool verified = false;
  std::optional<LlmSimulation> simulation;
  bool meets_slo = false;
  // At the peak: the simulation's served rate once verified, the offered peak before.
  std::optional<LlmTokenCost> token_cost;
  // With a load curve: the replicas each hour of the day needs, ceil(rate / (a replica's
  // analytic requests/s x kLlmTargetUtilization)), at least one, filling whole nodes, at most
  // the peak's; and the day's mean cost at those nodes (an autoscaled pool, per hour).
  std::vector<int> replicas_by_hour;
  std::vector<int> nodes_by_hour;
  std::optional<MoneyPerSecond> autoscaled_cost;
  K8sResourceRequest k8s;               // nvidia.com/gpu: TP per pod
  std::string summary;
};

struct LlmSizingResult {
  std::vector<SizedLlmDeployment> candidates;  // cheapest first
  std::optional<SizedLlmDeployment> recommended;
  // When no verified candidate meets the bounds: the one whose simulated TTFT and TPOT p99
  // come nearest to them (the smallest worst ratio to its bound), for the plan to show.
  std::optional<SizedLlmDeployment> closest;
  std::string recommendation;
  std::vector<std::pair<std::string, std::string>> skipped;
};

Result<LlmSizingResult> size_llm_serving(const LlmSizingRequest& request);

}  // namespace capsim::models
