// Inference and LLM serving scenarios: `capsim simulate` runs the scenario's deployment
// request by request next to the analytic estimate; `capsim size` finds the cheapest
// deployment that meets the SLO at the peak rate and the node pools with autoscaling bounds.
#pragma once

#include <optional>
#include <string>

#include "capsim/core/progress.hpp"
#include "capsim/core/result.hpp"
#include "capsim/hardware/catalog.hpp"
#include "capsim/models/serving.hpp"
#include "capsim/models/serving_llm.hpp"
#include "capsim/models/serving_sizing.hpp"
#include "capsim/scenarios/export.hpp"
#include "capsim/scenarios/scenario.hpp"
#include "capsim/scenarios/table.hpp"

namespace capsim::scenarios {

struct ServingSimulationReport {
  std::string scenario;
  std::string node;
  std::optional<models::ServingReport> graph;  // inference
  std::optional<models::LlmEstimate> llm_estimate;
  std::optional<models::LlmSimulation> llm;     // llm-serving
  int replicas = 1;
  int pipeline_parallel = 1;  // llm-serving: stages per replica (the simulation follows one batch of p)
  models::Precision weights = models::Precision::bf16;   // llm-serving: as simulated
  models::Precision kv_cache = models::Precision::bf16;
  double rate = 0;  // requests/s simulated (the peak)
  int offline_requests = 0;  // llm-serving offline mode: requests queued at t = 0
};

struct ServingSizingReport {
  std::string scenario;
  std::optional<models::ServingSizingResult> graph;
  std::optional<models::LlmSizingResult> llm;
  std::vector<models::NodeType> node_types;
  std::vector<std::string> conversions;  // prices converted to USD, with the rate's source
};

Result<ServingSimulationReport> simulate_serving_scenario(const Scenario& s, const hardware::Catalog& catalog,
                                                          ProgressObserver* progress = nullptr);
Result<ServingSizingReport> size_serving_scenario(const Scenario& s, const hardware::Catalog& catalog,
                                                  ProgressObserver* progress = nullptr);

std::string serving_simulation_text(const ServingSimulationReport& r);
std::string serving_simulation_json(const ServingSimulationReport& r);
std::string serving_sizing_text(const ServingSizingReport& r);
std::string serving_sizing_json(const ServingSizingReport& r);

// Node pools of the recommended deployment, with autoscaling bounds.
Result<std::vector<NodePool>> serving_node_pools(const ServingSizingReport& r);
// The pools as a table: node type, GPUs per node, autoscaling bounds, the pod's GPU request.
Table serving_node_pool_table(const std::vector<NodePool>& pools);

// `capsim compare`: one LLM serving scenario sized on each GPU type alone, side by side for
// its SLO. Each row is what `capsim size` recommends with hardware.gpus set to that GPU.
struct ServingComparisonRow {
  std::string gpu;
  std::optional<models::SizedLlmDeployment> deployment;  // none: no layout met the SLO
  std::string why_none;                                  // then: the sizing's reason
  // Capacity over the offered peak, less one: replicas x each replica's analytic requests/s
  // over the peak rate (0.25: a quarter more than the peak needs).
  std::optional<double> headroom;
};
struct ServingComparison {
  std::string scenario;
  double peak_rate = 0;  // requests/s
  Seconds ttft_p99{0.0}, tpot_p99{0.0};
  std::vector<ServingComparisonRow> rows;  // cheapest first; those without a deployment last
  std::vector<std::string> conversions;
};

// Errors: not an llm-serving scenario or no TTFT/TPOT SLO; an unknown GPU id (with "did you
// mean", key path "--gpus"); no GPUs to compare. A GPU the sizing cannot place is a row
// with why_none, not an error.
Result<ServingComparison> compare_serving_gpus(const Scenario& s, const hardware::Catalog& catalog,
                                               const std::vector<std::string>& gpus);
std::string serving_comparison_text(const ServingComparison& c);
std::string serving_comparison_json(const ServingComparison& c);

// The LLM serving model of the scenario's deployment on `cluster` (the node's GPUs).
models::LlmServingSpec llm_serving_spec(const InferenceSetup& inf, const models::ClusterSpec& cluster);

}  // namespace capsim::scenarios
