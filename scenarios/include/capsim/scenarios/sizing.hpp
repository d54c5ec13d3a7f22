// Sizing a training scenario: the scenario turned into a search over the catalog's node
// types, and the result turned into what people and machines read (text, JSON, node
// pools for Kubernetes).
#pragma once

#include <string>

#include "capsim/core/progress.hpp"
#include "capsim/core/result.hpp"
#include "capsim/hardware/catalog.hpp"
#include "capsim/models/search.hpp"
#include "capsim/scenarios/export.hpp"
#include "capsim/scenarios/scenario.hpp"
#include "capsim/scenarios/table.hpp"

namespace capsim::scenarios {

// The recommendation's data-parallel all-reduce timed on the SimGrid fabric, and the
// step and run re-estimated with it (`capsim size --fabric simgrid`).
struct FabricCheck {
  Seconds analytic_all_reduce;
  Seconds fabric_all_reduce;
  std::string bottleneck_link;
  Seconds analytic_step;
  Seconds fabric_step;
  Seconds fabric_total_time;
};

struct SizingReport {
  Scenario scenario;
  models::SearchResult search;
  double wall_seconds = 0;
  std::optional<FabricCheck> fabric;
  // Node types whose GPU trains in another precision than the scenario asks for (bf16 on a
  // Turing GPU runs as fp16 mixed precision, on Pascal as fp32): "gpu (N node types): why", one per GPU model.
  std::vector<std::string> precision_notes;
  std::vector<std::string> conversions;  // prices converted to USD, with the rate's source
  // Set by the plan when an option of the scenario's cost comparison prices the
  // recommendation: how its cost line reads, and whether its node pool is bought as spot
  // (the exported pool is the one the plan's cost assumes).
  std::string recommended_cost_basis;
  bool recommended_spot = false;
};

// The vendor's device-plugin resource (export.hpp accelerator_resource): "google.com/tpu" for
// Cloud TPU node types, "amd.com/gpu" for AMD GPUs, else "nvidia.com/gpu".
std::string accelerator_resource(const models::NodeType& t);

// Sets each node type's own training precision where its GPU lacks the requested one
// (hardware::training_precision) and returns one note per GPU model that fell back.
std::vector<std::string> apply_precision_fallback(std::vector<models::NodeType>& types,
                                                  const hardware::Catalog& catalog, models::Precision requested);

enum class CollectiveTiming { analytic, simgrid };

// Errors carry the scenario file and the key path (e.g. a model that fits nowhere). The
// search always uses the analytic collectives; with CollectiveTiming::simgrid the
// recommendation is then re-timed on the fabric.
Result<SizingReport> size_scenario(const Scenario& scenario, const hardware::Catalog& catalog,
                                   ProgressObserver* progress = nullptr,
                                   CollectiveTiming collectives = CollectiveTiming::analytic);

// One line describing a configuration: "512 x aws-p5-48xlarge (4096 x h100-sxm-80gb), t=8 p=4 ...".
std::string describe_candidate(const SizingReport& r, const models::Candidate& c);

// The search grid a scenario asks for: its `search:` lists and its GPU count bounds.
models::SearchGrid search_grid(const Scenario& s);

// The node pools a candidate needs: one pool per node type, with the Kubernetes request.
Table node_pools_table(const SizingReport& r, const models::Candidate& c);
// Pareto frontier (time vs cost), fastest first.
Table frontier_table(const SizingReport& r);
// The fastest fitting configuration of each node type.
Table fastest_table(const SizingReport& r);

// The node pools to create for the recommendation, or for the fastest configuration of
// `node_type` (an id of the search's node types). A training pool scales from zero to the
// nodes the run needs. Errors: an unknown node type, or one with no fitting configuration.
Result<std::vector<NodePool>> sizing_node_pools(const SizingReport& r, const std::string& node_type = {});

std::string sizing_text(const SizingReport& r);  // the report people read
std::string sizing_json(const SizingReport& r);  // the same, for machines

}  // namespace capsim::scenarios
