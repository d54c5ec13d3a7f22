// The sizing search: enumerate GPU type x GPUs per node x node count x tensor/pipeline/data
// parallelism x micro-batch x ZeRO stage x recompute, drop what does not fit in memory
// (keeping the closest misses to explain), and rank the rest by time and by cost per run.
//
// The analytic models are cheap (well under a microsecond per configuration), so the
// search is exhaustive over its grid; the grid keeps node counts to 1, 2, 3, 4, 6, 8, 12,
// ... (powers of two and 1.5x powers of two) so that 4096 GPUs stay in reach.
// run_search is thread-safe for distinct requests; it allocates per call, not per point.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "capsim/core/progress.hpp"
#include "capsim/core/result.hpp"
#include "capsim/core/units.hpp"
#include "capsim/hardware/catalog.hpp"
#include "capsim/models/cluster.hpp"
#include "capsim/models/parallelism.hpp"
#include "capsim/models/workload.hpp"

namespace capsim::models {

// A kind of node the job can run on: a cloud instance type or an owned server model.
struct NodeType {
  std::string id;        // catalog id
  std::string source;    // "instance" or "server"
  std::string provider;  // "aws", ... or "owned"
  std::string name;      // the provider's instance type or the server model
  ClusterSpec cluster;
  std::optional<MoneyPerSecond> price;  // per node for the chosen commitment; none for servers
  // The precision this node type's GPU trains in when it differs from the request's (a
  // fallback chosen by the caller, e.g. bf16 -> fp16 on Turing); empty: the request's.
  std::optional<Precision> compute;
};

// One node type by its catalog id (an instance or a server), priced from `price_field`.
Result<NodeType> node_type_by_id(const hardware::Catalog& catalog, std::string_view id,
                                 std::string_view price_field = "price.on_demand");

struct NodeTypeQuery {
  std::vector<std::string> gpus;       // candidate GPU ids (required)
  std::vector<std::string> providers;  // empty: all
  std::vector<std::string> instances;  // empty: every instance with a candidate GPU
  std::vector<std::string> servers;    // owned servers to add
  std::string price_field = "price.on_demand";
  // Pinned node types (instances or servers): only these compete, and `gpus` must carry
  // theirs; empty: the rules above.
  std::vector<std::string> nodes;
};

// The node types for a query. An instance without the requested price is kept (it ranks
// by time only). Error when a candidate GPU has no instance or server to run on.
Result<std::vector<NodeType>> node_types_from_catalog(const hardware::Catalog& catalog, const NodeTypeQuery& q);

struct SearchGrid {
  std::vector<int> micro_batch{1, 2, 4, 8};
  std::vector<int> zero_stage{0, 1, 2, 3};
  std::vector<Recompute> recompute{Recompute::none, Recompute::selective, Recompute::full};
  std::vector<int> tensor_parallel;    // empty: powers of two up to the GPUs per node
  std::vector<int> pipeline_parallel;  // empty: powers of two dividing the layers, up to 128
  std::vector<int> batch_per_gpu{32, 64, 128, 256};  // sample models
  int min_gpus = 1;
  int max_gpus = 4096;
  // Interleaved 1F1B: virtual stages per GPU (only with p > 1 and p x v <= layers).
  std::vector<int> virtual_stages{1, 2, 4};
  std::vector<bool> sequence_parallel{true};  // tried with t > 1
  std::vector<int> context_parallel{1};
  std::vector<int> expert_parallel{1};        // MoE models only
  std::vector<bool> fsdp_hybrid{false};       // ZeRO-3 sharded within a node, replicated across
  // With full recompute: the fractions of layers checkpointed tried (Parallelism::recompute_fraction).
  std::vector<double> recompute_fraction{1.0};
};

struct SearchRequest {
  Workload model;
  TrainingOptions options;
  double tokens = 0;        // transformers
  double samples = 0;       // sample models: samples x epochs in total
  int global_batch = 1024;  // transformers: sequences per step
  std::optional<Seconds> deadline;
  std::optional<Money> budget;
  SearchGrid grid;
  std::vector<NodeType> node_types;
};

// One evaluated configuration. The search keeps only those it can still choose (the
// frontier, the fastest of each node type, those near the cheapest), not every one that fits.
struct Candidate {
  int node_type = 0;  // index into SearchResult::node_types
  int nodes = 0;
  Parallelism par;
  int batch_per_gpu = 0;  // sample models
  Seconds step_time;
  double throughput = 0;  // tokens/s (transformers) or samples/s
  FlopsPerSecond achieved_flops_per_gpu;
  double mfu = 0;
  Bytes memory_per_gpu;
  Seconds total_time;
  double gpu_hours = 0;
  std::optional<Money> cost;  // per run; none without a price
  int bottleneck = 0;         // Bottleneck as int (performance.hpp)

  int gpus(const std::vector<NodeType>& types) const { return nodes * types[node_type].cluster.gpus_per_node; }
};

struct MemoryMiss {
  Candidate candidate;
  Bytes needed;
  Bytes available;
};

struct SearchResult {
  std::vector<NodeType> node_types;
  std::size_t evaluated = 0;    // configurations looked at
  std::size_t fitting = 0;      // of which fit in memory
  std::vector<Candidate> frontier;  // Pareto-optimal in (total time, cost), fastest first
  std::vector<Candidate> fastest;   // the fastest fitting configuration of each node type
  std::optional<Candidate> recommended;
  std::string recommendation;       // why this one, in a sentence
  std::vector<MemoryMiss> closest_misses;  // configurations that almost fit, smallest overflow first
  // Node types with no fitting configuration and why (e.g. a GPU without a sourced peak
  // for the precision, or every layout over its memory).
  std::vector<std::pair<std::string, std::string>> skipped;  // node type id, reason
  bool cancelled = false;
};

// Errors: no node types, no tokens/samples, a workload that fits nowhere (naming the
// closest miss and how much memory it lacks).
Result<SearchResult> run_search(const SearchRequest& request, ProgressObserver* progress = nullptr);

// Node counts the grid visits between min and max nodes: 1, 2, 3, 4, 6, 8, 12, 16, ...
std::vector<int> node_count_grid(int min_nodes, int max_nodes);

}  // namespace capsim::models
