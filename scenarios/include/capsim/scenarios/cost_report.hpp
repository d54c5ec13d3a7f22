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
#include "capsim/scenarios/scenario.hpp"
#include "capsim/scenarios/table.hpp"

namespace capsim::scenarios {

struct CostReport {
  std::string scenario;
  models::CostInputs inputs;
  models::CostComparison comparison;
  std::vector<std::string> option_notes;  // per option: where its figures come from
  std::string work_unit;                  // "month" or "training run"
};

Result<CostReport> cost_scenario(const Scenario& scenario, const hardware::Catalog& catalog);

Table cost_table(const CostReport& r);
Table break_even_table(const CostReport& r);
Table sensitivity_table(const CostReport& r);
std::string cost_text(const CostReport& r);
std::string cost_json(const CostReport& r);

}  // namespace capsim::scenarios
