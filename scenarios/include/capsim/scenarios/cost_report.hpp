// `capsim cost`: a scenario's `cost:` section turned into the cost model's inputs (prices,
// power and facility figures from the catalog, converted to US dollars) and the comparison
// turned into tables: totals, cost per unit of work, break-even and sensitivity.
//
// For a training workload each option's run time comes from the performance model on that
// option's node type (the sizing search restricted to it), so a faster GPU is busy fewer
// hours per run; for a service workload every option carries the same GPUs at the
// scenario's utilization.
#pragma once

#include <string>
#include <vector>

#include "capsim/core/result.hpp"
#include "capsim/hardware/catalog.hpp"
#include "capsim/models/cost.hpp"
#include "capsim/models/search.hpp"
#include "capsim/scenarios/scenario.hpp"
#include "capsim/scenarios/table.hpp"

namespace capsim::scenarios {

struct CostReport {
  std::string scenario;
  models::CostInputs inputs;
  models::CostComparison comparison;
  std::vector<std::string> option_notes;  // per option: where its figures come from
  std::string work_unit;                  // "month" or "training run"
  // Training: per option, the node type it runs on and the configuration the search chose
  // there (none for a service, or an option that failed).
  std::vector<std::optional<models::NodeType>> option_node_types;
  std::vector<std::optional<models::Candidate>> option_runs;
};

// A run time the plan knows better than the analytic model (a simulation found a constraint
// it does not see): options on `node_id` take `time` per run instead of the search's.
struct RunTimeOverride {
  std::string node_id;
  Seconds time;
  std::string why;  // "simulated"
};

Result<CostReport> cost_scenario(const Scenario& scenario, const hardware::Catalog& catalog,
                                 const std::vector<RunTimeOverride>& overrides = {});

// An amount in the cost tables' short form, without its currency: "1.23 M", "45.6 k", "789".
std::string money_short(double amount);

// A horizon in the unit people give it: "12 months", "2 years" stays "24 months", "90 days".
std::string horizon_text(Seconds horizon);

Table cost_table(const CostReport& r);
Table break_even_table(const CostReport& r);
Table sensitivity_table(const CostReport& r);
std::string cost_text(const CostReport& r);
std::string cost_json(const CostReport& r);

}  // namespace capsim::scenarios
