// capsim estimate: one training step of a scenario's layout, taken apart the way a
// performance engineer reads it -- compute, recompute, tensor/context/expert-parallel
// communication, pipeline bubble and point-to-point, data-parallel and ZeRO communication
// (total and exposed), optimizer -- each with its formula and inputs, and the memory per
// GPU by component. The layout is the scenario's pinned one (every search list one
// element long) or else the sizing recommendation.
#pragma once

#include <string>
#include <vector>

#include "capsim/core/result.hpp"
#include "capsim/hardware/catalog.hpp"
#include "capsim/models/memory.hpp"
#include "capsim/models/performance.hpp"
#include "capsim/scenarios/scenario.hpp"

namespace capsim::scenarios {

struct StepPart {
  std::string part;     // "compute", "zero_comm", ...
  Seconds time;         // its share of the step (exposed time)
  Seconds total;        // before overlap (communication that hides partly); == time otherwise
  std::string formula;  // how it was computed, with the numbers
};

struct StepEstimate {
  std::string scenario;
  bool pinned = false;       // the scenario pins the layout; false: the sizing recommendation
  std::string node_type;     // catalog id
  int nodes = 0;
  int gpus = 0;
  std::string gpu;
  std::string layout;        // describe_layout
  bool transformer = true;   // throughput in tokens/s; false: samples/s
  models::TrainingEstimate step;
  std::vector<StepPart> parts;
  models::MemoryBreakdown memory;
  std::vector<std::string> notes;
};

// Errors: not a training scenario, no configuration fits (the sizing error).
Result<StepEstimate> estimate_scenario(const Scenario& s, const hardware::Catalog& catalog);
std::string estimate_text(const StepEstimate& e);
std::string estimate_json(const StepEstimate& e);

}  // namespace capsim::scenarios
