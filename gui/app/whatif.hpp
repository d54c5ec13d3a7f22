// What-if planning: the inputs a planner turns up and down in the desktop app, applied to a
// loaded scenario, and the analytic results recomputed from it (sizing search, cost
// comparison, serving estimate) fast enough to follow a slider (the goal: 50 ms for a
// typical scenario; gui/bench measures it).
//
// No Qt here: the window, the tests and the benchmark call the same functions. Thread-safe
// as far as its inputs are (the catalog is immutable and may be shared).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "capsim/core/result.hpp"
#include "capsim/hardware/catalog.hpp"
#include "capsim/scenarios/cost_report.hpp"
#include "capsim/scenarios/report.hpp"
#include "capsim/scenarios/runner.hpp"
#include "capsim/scenarios/scenario.hpp"
#include "capsim/scenarios/sizing.hpp"
#include "serving_curve.hpp"

namespace capsim::gui {

// Each control that is set replaces the scenario's value; unset ones leave the file's.
struct WhatIf {
  std::optional<std::string> model;         // a transformer or sample-model preset name
  std::optional<std::string> gpu;           // the only candidate GPU (hardware.gpus = [gpu])
  std::optional<int> gpus;                  // training: hardware.max_gpus; service: workload.gpus;
                                            // inference: replicas of every stage (LLM: replicas)
  std::optional<double> request_rate;       // inference: arrivals.rate, requests/s
  std::optional<double> utilization;        // cost: the busy fraction of the calendar, (0, 1]
  std::optional<double> electricity_usd_per_kwh;  // cost: every owned option's electricity price
  std::optional<double> horizon_months;     // cost: horizon
  std::optional<double> deadline_days;      // training: deadline, days (> 0)
  std::optional<double> tokens;             // transformer training: tokens to train on (> 0)
  std::optional<int> prompt_tokens;         // llm-serving: prompt length, tokens (>= 1)
  std::optional<int> output_tokens;         // llm-serving: answer length, tokens (>= 1)
  std::optional<int> tensor_parallel;       // llm-serving: deployment.tensor_parallel (>= 1)
  std::optional<std::string> engine;        // llm-serving: workload.engine, its catalog settings with it

  bool empty() const { return *this == WhatIf{}; }
  bool operator==(const WhatIf&) const = default;
};

// The scenario with the what-if values in place. Errors name the control (an unknown model
// or GPU, a value out of range); nothing is clamped.
Result<scenarios::Scenario> apply_what_if(const scenarios::Scenario& base, const WhatIf& what_if,
                                          const hardware::Catalog& catalog);

// Re-prices a cost report with the electricity override (the scenario file has no such key:
// the price comes from each facility in the catalog).
Status apply_cost_overrides(scenarios::CostReport& report, const WhatIf& what_if);

// The analytic serving estimate of an inference scenario's deployment at its peak rate.
struct ServingEstimate {
  std::string node;
  double rate = 0;  // requests/s
  int replicas = 1;
  std::optional<models::ServingEstimate> graph;  // inference graphs
  std::optional<models::LlmEstimate> llm;        // llm-serving
};
Result<ServingEstimate> estimate_serving_scenario(const scenarios::Scenario& s, const hardware::Catalog& catalog);

// What the window shows after every change. `run` carries the scenario and the analytic
// parts (sizing, cost) so the report's chart data (memory_bars, cost_lines) and the report
// writer take it as is; a background simulation later fills in the rest.
struct Analysis {
  scenarios::RunResult run;
  std::optional<ServingEstimate> serving;
  std::optional<ServingCurve> curve;  // inference deployments: throughput against the request rate
  std::vector<Diagnostic> problems;  // a part that could not be computed (the others still are)
  bool planned = false;              // make_plan succeeded: run.expectations were checked
  double seconds = 0;                // wall time of the recompute
};

// The serving curve of the last recompute, reused while only the request rate changes
// (serving_curve_key). The window clears it when the scenario text changes.
struct ServingCurveCache {
  std::string key;
  std::optional<ServingCurve> curve;
};

// The recompute the window runs on every what-if change: apply, plan, estimate, and the
// serving curve (from `cache` when its key matches; the cache is updated).
// Errors: only those of apply_what_if; a part that fails is reported in Analysis::problems.
Result<Analysis> recompute(const scenarios::Scenario& base, const WhatIf& what_if, const hardware::Catalog& catalog,
                           ServingCurveCache* cache = nullptr);

// The headline figures of an analysis as (name, value) rows, for the summary and the
// side-by-side comparison; names are stable so two analyses line up.
std::vector<std::pair<std::string, std::string>> key_results(const Analysis& a);

// The plan's check, as the status bar shows it: "Plan check: passed (2 expectations hold)",
// "Plan check: FAILED - ttft_p99 = 6.5 s, expected ttft_p99 < 2 s (1 of 2 fail)", or
// "Plan check: no expectations", or "Plan check: not computed - <the plan's problem>" when
// make_plan failed. Never "passed" while an expectation fails or without a plan.
std::string plan_check_text(const Analysis& a);

// LLM serving: the plan's cost per month over its simulated output tokens, USD per million
// output tokens; none when the plan carries no cost or no measured throughput.
std::optional<double> cost_per_million_tokens(const Analysis& a);

// The metrics of the failing expectations ("ttft_p99", "memory_headroom", ...).
std::vector<std::string> failing_metrics(const Analysis& a);
// True when a key result row (by name) shows a figure an expectation that fails is about:
// "TTFT p99" with ttft_p99 failing, "load" with any latency failing, "expect ..." rows
// that fail. The window draws these in red.
bool key_result_violated(const Analysis& a, const std::string& row);

// Money as every view of the window writes it: "228.7 k USD", "13.1 k USD", "950 USD".
std::string money_text(double usd);
// `text` with every raw amount of five digits or more ("388061 USD") written as money_text.
std::string money_in_text(const std::string& text);

// Per-stage utilization of the analytic serving estimate, the constraint marked.
std::vector<scenarios::UtilizationBar> serving_utilization_bars(const ServingEstimate& e);

// Presets a "model" control offers: transformer presets, then sample models.
std::vector<std::string> model_presets();

}  // namespace capsim::gui
