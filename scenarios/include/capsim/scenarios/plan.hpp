#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "capsim/core/units.hpp"
#include "capsim/scenarios/export.hpp"
#include "capsim/scenarios/prices.hpp"

namespace capsim::scenarios {

// The Plan's schema: the "plan" object every command's --format json carries
// (docs/plan-schema.md). Bump it when a field changes meaning.
inline constexpr const char* kPlanSchema = "capsim-plan/1";

// The figures every view of a scenario shares, computed once (runner.cpp, make_plan): size,
// simulate, cost, run, export, report, sweep, history and the GUI print these and never their
// own variant. Money is in US dollars; conversions are listed with their sources.
struct PlanFigures {
  // "recommendation" (capsim's choice), "closest" (sized serving: no verified layout met the SLO;
  // the nearest, which misses it), "deployment" (the scenario's own, as stated) or
  // "service" (a service whose GPUs the scenario states).
  std::string basis;
  // The question as resolved: every key that decides the answer, defaults filled in, as text.
  std::vector<std::pair<std::string, std::string>> question;
  std::string configuration;  // one line a person reads
  std::string reason;         // why this configuration
  std::string node_type;      // catalog id
  std::string gpu;            // catalog GPU id
  int gpus = 0;
  int nodes = 0;
  std::optional<Bytes> memory_per_gpu;  // training: the configuration's memory per GPU
  std::optional<Bytes> gpu_memory;      // and what the GPU holds
  std::optional<Seconds> time;  // training: one run
  std::string time_basis;       // "analytic", or "simulated: <why>"
  std::optional<double> throughput;
  std::string throughput_unit;  // "samples/s", "tokens/s", "requests/s"
  std::optional<Money> cost_per_run;             // training, USD
  std::optional<MoneyPerSecond> cost_per_month;  // USD, as a rate
  std::string cost_basis;
  // LLM serving: cost_per_month over the tokens the planned deployment serves at the peak,
  // split between input and output tokens by their GPU time (models::llm_token_cost).
  std::optional<double> usd_per_million_input_tokens;
  std::optional<double> usd_per_million_output_tokens;
  std::optional<double> usd_per_million_tokens;  // input and output together
  std::string token_cost_basis;                  // the formula with its numbers
  std::optional<Seconds> p99;       // inference: the planned deployment's p99 latency
  std::optional<Seconds> ttft_p99;  // llm-serving
  std::optional<Seconds> tpot_p99;  // llm-serving
  std::string latency_basis;        // "simulated" or "analytic"
  std::vector<NodePool> node_pools;
  std::vector<std::string> conversions;  // "1 EUR = 1.0411 USD (source)"
  // Every price the plan used, with its as_of and whether it is the user's own quote (an
  // overlay); one older than the price-age limit also has a line in `warnings`.
  std::vector<PriceUsed> prices;
  std::vector<std::string> warnings;     // what a reader must not miss
  // Simulated figures with no observation, by their JSON name ("throughput", "p99_seconds",
  // "ttft_p99_seconds", "tpot_p99_seconds"), and why (no request completed in the simulated
  // window). Each is left empty above and shown as "not measured": never as 0.
  std::vector<std::string> not_measured;
  std::string not_measured_reason;
  bool measured(std::string_view figure) const;  // false when `figure` is in not_measured
};

std::string plan_figures_json(const PlanFigures& p);  // {"schema": kPlanSchema, ...}: finite numbers, null where none
std::string plan_figures_text(const PlanFigures& p);  // the "Plan" block every text output starts with
// The figures exports carry: capsim.dev/plan-gpus, -nodes, -time-seconds, -cost-per-run-usd, ...
ExportAnnotations plan_annotations(const PlanFigures& p);

}  // namespace capsim::scenarios
