#include "capsim/scenarios/plan.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

#include "capsim/core/text.hpp"
#include "capsim/scenarios/table.hpp"

namespace capsim::scenarios {
namespace {

using nlohmann::json;

json finite(std::optional<double> v) { return v && std::isfinite(*v) ? json(*v) : json(nullptr); }

std::string money_text(double usd) {  // "66.15 USD", "12,700 USD": no exponent, one currency
  if (std::fabs(usd) >= 1e4) return human_count(usd) + " USD";
  return significant(usd, std::fabs(usd) >= 100 ? 4 : 3) + " USD";
}

// "not measured (no request completed in the simulated window)"
std::string not_measured_text(const PlanFigures& p) {
  return "not measured" + (p.not_measured_reason.empty() ? std::string() : " (" + p.not_measured_reason + ")");
}

}  // namespace

bool PlanFigures::measured(std::string_view figure) const {
  return std::find(not_measured.begin(), not_measured.end(), figure) == not_measured.end();
}

std::string plan_figures_json(const PlanFigures& p) {
  json j;
  j["schema"] = kPlanSchema;
  j["basis"] = p.basis;
  j["question"] = json::object();
  for (const auto& [k, v] : p.question) j["question"][k] = v;
  j["memory_per_gpu_bytes"] = finite(p.memory_per_gpu ? std::optional(p.memory_per_gpu->value()) : std::nullopt);
  j["gpu_memory_bytes"] = finite(p.gpu_memory ? std::optional(p.gpu_memory->value()) : std::nullopt);
  j["configuration"] = p.configuration;
  j["reason"] = p.reason;
  j["node_type"] = p.node_type.empty() ? json(nullptr) : json(p.node_type);
  j["gpu"] = p.gpu.empty() ? json(nullptr) : json(p.gpu);
  j["gpus"] = p.gpus;
  j["nodes"] = p.nodes;
  j["time_seconds"] = finite(p.time ? std::optional(p.time->value()) : std::nullopt);
  j["time_basis"] = p.time ? json(p.time_basis) : json(nullptr);
  j["throughput"] = finite(p.throughput);
  j["throughput_unit"] = p.throughput ? json(p.throughput_unit) : json(nullptr);
  j["currency"] = "USD";
  j["cost_per_run"] = finite(p.cost_per_run ? std::optional(p.cost_per_run->value()) : std::nullopt);
  j["cost_per_month"] =
      finite(p.cost_per_month ? std::optional(p.cost_per_month->value() * units::month) : std::nullopt);
  j["cost_basis"] = p.cost_basis;
  j["cost_per_million_input_tokens"] = finite(p.usd_per_million_input_tokens);
  j["cost_per_million_output_tokens"] = finite(p.usd_per_million_output_tokens);
  j["cost_per_million_tokens"] = finite(p.usd_per_million_tokens);
  j["token_cost_basis"] = p.usd_per_million_tokens ? json(p.token_cost_basis) : json(nullptr);
  j["p99_seconds"] = finite(p.p99 ? std::optional(p.p99->value()) : std::nullopt);
  j["ttft_p99_seconds"] = finite(p.ttft_p99 ? std::optional(p.ttft_p99->value()) : std::nullopt);
  j["tpot_p99_seconds"] = finite(p.tpot_p99 ? std::optional(p.tpot_p99->value()) : std::nullopt);
  j["latency_basis"] = p.p99 || p.ttft_p99 ? json(p.latency_basis) : json(nullptr);
  j["node_pools"] = json::array();
  for (const auto& pool : p.node_pools)
    j["node_pools"].push_back({{"name", pool.name},
                               {"provider", pool.provider},
                               {"instance_type", pool.instance_type},
                               {"gpu", pool.gpu_id},
                               {"gpus_per_node", pool.gpus_per_node},
                               {"nodes", pool.nodes},
                               {"min_nodes", pool.min_nodes},
                               {"max_nodes", pool.max_nodes},
                               {"gpus_per_pod", pool.gpus_per_pod},
                               {"pods", pool.pods},
                               {"pods_per_replica", pool.pods_per_replica},
                               {"mig_profile", pool.mig_profile ? json(*pool.mig_profile) : json(nullptr)},
                               {"spot", pool.spot}});
  j["prices"] = json::array();
  for (const auto& price : p.prices)
    j["prices"].push_back({{"entry", price.entry},
                           {"field", price.field},
                           {"value", price.value},
                           {"as_of", price.as_of.empty() ? json(nullptr) : json(price.as_of)},
                           {"source", price.source},
                           {"your_quote", price.user_quote()},
                           {"overlay", price.user_quote() ? json(price.overlay) : json(nullptr)},
                           {"age_months", finite(price.age_months ? std::optional(std::floor(*price.age_months)) : std::nullopt)},
                           {"stale", price.stale}});
  j["conversions"] = json::array();
  for (const auto& c : p.conversions) j["conversions"].push_back(c);
  j["warnings"] = json::array();
  for (const auto& w : p.warnings) j["warnings"].push_back(w);
  // Only when a simulated figure has no observation: its value above is null, this says why.
  if (!p.not_measured.empty()) {
    j["not_measured"] = json::object();
    for (const auto& figure : p.not_measured) j["not_measured"][figure] = p.not_measured_reason;
  }
  return j.dump(2, ' ', false, json::error_handler_t::replace);
}

std::string plan_figures_text(const PlanFigures& p) {
  std::string out = "Plan (" + p.basis + "): " + p.configuration + "\n";
  if (!p.reason.empty()) out += "  why             " + p.reason + "\n";
  out += "  GPUs            " + plural(p.gpus, "GPU") + " on " + plural(p.nodes, "node") +
         (p.gpu.empty() ? "" : " (" + p.gpu + ")") + "\n";
  if (p.memory_per_gpu && p.gpu_memory)
    out += "  memory per GPU  " + to_string(*p.memory_per_gpu) + " of " + to_string(*p.gpu_memory) + "\n";
  if (p.time) out += "  time per run    " + to_string(*p.time) + " (" + p.time_basis + ")\n";
  if (p.throughput) out += "  throughput      " + human_count(*p.throughput) + " " + p.throughput_unit + "\n";
  else if (!p.measured("throughput")) out += "  throughput      " + not_measured_text(p) + "\n";
  if (p.p99) out += "  p99 latency     " + to_string(*p.p99) + " (" + p.latency_basis + ")\n";
  else if (!p.measured("p99_seconds")) out += "  p99 latency     " + not_measured_text(p) + "\n";
  if (p.ttft_p99) out += "  TTFT p99        " + to_string(*p.ttft_p99) + " (" + p.latency_basis + ")\n";
  else if (!p.measured("ttft_p99_seconds")) out += "  TTFT p99        " + not_measured_text(p) + "\n";
  if (p.tpot_p99) out += "  TPOT p99        " + to_string(*p.tpot_p99) + " (" + p.latency_basis + ")\n";
  else if (!p.measured("tpot_p99_seconds")) out += "  TPOT p99        " + not_measured_text(p) + "\n";
  if (p.cost_per_run) out += "  cost per run    " + money_text(p.cost_per_run->value()) + "\n";
  if (p.cost_per_month) out += "  cost per month  " + money_text(p.cost_per_month->value() * units::month) + "\n";
  if ((p.cost_per_run || p.cost_per_month) && !p.cost_basis.empty()) out += "  cost basis      " + p.cost_basis + "\n";
  if (p.usd_per_million_input_tokens && p.usd_per_million_output_tokens && p.usd_per_million_tokens)
    out += "  per M tokens    " + money_text(*p.usd_per_million_input_tokens) + " input, " +
           money_text(*p.usd_per_million_output_tokens) + " output (" + money_text(*p.usd_per_million_tokens) +
           " input and output together)\n  token cost      " + p.token_cost_basis + "\n";
  if (!p.cost_per_run && !p.cost_per_month) out += "  cost            no price in the catalog\n";
  for (const auto& price : p.prices) out += "  price           " + price.text() + "\n";
  for (const auto& c : p.conversions) out += "  currency        " + c + "\n";
  for (const auto& w : p.warnings) out += "  warning         " + w + "\n";
  return out;
}

ExportAnnotations plan_annotations(const PlanFigures& p) {
  ExportAnnotations out{{"capsim.dev/plan-schema", kPlanSchema},
                        {"capsim.dev/plan-gpus", std::to_string(p.gpus)},
                        {"capsim.dev/plan-nodes", std::to_string(p.nodes)}};
  auto add = [&](const char* key, std::optional<double> v) {
    if (v && std::isfinite(*v)) out.emplace_back(key, significant(*v, 12));
  };
  add("capsim.dev/plan-time-seconds", p.time ? std::optional(p.time->value()) : std::nullopt);
  add("capsim.dev/plan-cost-per-run-usd", p.cost_per_run ? std::optional(p.cost_per_run->value()) : std::nullopt);
  add("capsim.dev/plan-cost-per-month-usd",
      p.cost_per_month ? std::optional(p.cost_per_month->value() * units::month) : std::nullopt);
  add("capsim.dev/plan-p99-seconds", p.p99 ? std::optional(p.p99->value()) : std::nullopt);
  return out;
}

}  // namespace capsim::scenarios
