// `capsim simulate`: a scenario's `simulate:` section run through the discrete-event
// simulator, with the analytic estimate beside it, for people (text) and machines (JSON).
#pragma once

#include <string>
#include <vector>

#include "capsim/core/progress.hpp"
#include "capsim/core/result.hpp"
#include "capsim/hardware/catalog.hpp"
#include "capsim/models/training_pipeline.hpp"
#include "capsim/scenarios/scenario.hpp"

namespace capsim::scenarios {

struct SimulationReport {
  std::string scenario;
  std::string node;
  models::TrainingPipelineReport pipeline;
  double wall_seconds = 0;
};

// Errors: no `simulate:` section, an unknown node, a pipeline the simulator refuses.
Result<SimulationReport> simulate_scenario(const Scenario& scenario, const hardware::Catalog& catalog,
                                           ProgressObserver* progress = nullptr);

// The simulator's "run.*" errors (its event budget, its run length) said in the scenario's
// terms: "simulate.*" keys, located at simulate.duration; other errors get the file.
std::vector<Diagnostic> in_scenario_terms(std::vector<Diagnostic> errors, const SimulationSetup& run,
                                          const std::string& file);

std::string simulation_text(const SimulationReport& r);
std::string simulation_json(const SimulationReport& r);  // finite numbers only (null where unknown)

}  // namespace capsim::scenarios
