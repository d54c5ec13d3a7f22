// `capsim run`: everything a scenario asks for, in one result — the memory check and
// sizing search for training, the measurements its `expect:` entries are checked against,
// and the writers for people (a ten-second summary), CI (JUnit XML) and machines (JSON
// with a versioned schema, docs/run-result.md).
//
// The CLI and the GUI both run scenarios through run_scenario.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "capsim/core/progress.hpp"
#include "capsim/core/result.hpp"
#include "capsim/hardware/catalog.hpp"
#include "capsim/scenarios/expectations.hpp"
#include "capsim/scenarios/plan.hpp"
#include "capsim/scenarios/cost_report.hpp"
#include "capsim/scenarios/scenario.hpp"
#include "capsim/scenarios/serving_report.hpp"
#include "capsim/scenarios/simulation.hpp"
#include "capsim/scenarios/sizing.hpp"

namespace capsim::scenarios {

// The JSON schema name and version of a run result; bump the number on any change that
// removes or renames a field (adding fields keeps it).
inline constexpr const char* kRunSchema = "capsim-run/1";

// The Plan: everything capsim answers about a scenario, computed once by make_plan. Every
// command and the GUI render it, or a part of it; none computes its own variant.
struct RunResult {
  Scenario scenario;
  PlanFigures plan;  // the figures every view shares
  std::string catalog_hash;
  std::string started_at;  // UTC, ISO 8601
  std::optional<SizingReport> sizing;
  std::optional<SimulationReport> simulation;  // when the scenario has simulate:
  std::optional<CostReport> cost;              // when the scenario has cost:
  std::optional<ServingSimulationReport> serving_simulation;  // inference with deployment:
  std::optional<ServingSizingReport> serving_sizing;          // inference with hardware.gpus
  // inference without deployment: the simulation is of the recommended deployment
  bool simulated_recommendation = false;
  std::vector<Measurement> measurements;
  std::vector<Unmeasured> unmeasured;  // metrics with no observation (zero completed requests)
  std::vector<ExpectationResult> expectations;

  bool passed() const;  // every expectation holds (true when there are none)
  std::string status() const;  // "passed", "failed" or "no expectations"
};

// Errors: those of the sizing search (e.g. a model that fits nowhere).
using Plan = RunResult;

// `prices`: how old a price may be before the plan warns (PlanFigures::prices lists each
// price used, with its date).
Result<Plan> make_plan(const Scenario& scenario, const hardware::Catalog& catalog, ProgressObserver* progress = nullptr,
                       CollectiveTiming collectives = CollectiveTiming::analytic, const PriceAgePolicy& prices = {});
inline Result<RunResult> run_scenario(const Scenario& scenario, const hardware::Catalog& catalog,
                                      ProgressObserver* progress = nullptr, const PriceAgePolicy& prices = {}) {
  return make_plan(scenario, catalog, progress, CollectiveTiming::analytic, prices);
}

// `json` (a command's JSON object) with the plan's figures added under "plan".
std::string with_plan(const std::string& json, const Plan& plan);

std::string run_summary_text(const RunResult& r);  // what a person reads in ten seconds
std::string run_json(const RunResult& r);          // kRunSchema
std::string junit_xml(const RunResult& r);         // one test case per expectation

}  // namespace capsim::scenarios
