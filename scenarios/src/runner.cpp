#include "capsim/scenarios/runner.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <ctime>

#include "capsim/core/text.hpp"
#include "capsim/models/performance.hpp"
#include "capsim/version.hpp"

namespace capsim::scenarios {
namespace {

std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::vector<Measurement> training_measurements(const SizingReport& s) {
  std::vector<Measurement> out;
  if (!s.search.recommended) return out;
  const auto& c = *s.search.recommended;
  const auto& type = s.search.node_types[c.node_type];
  const double gpus = c.par.gpus();
  out.push_back({"training_time", {c.total_time.value(), dims::seconds, Currency::none}});
  if (c.cost) out.push_back({"cost_per_run", {c.cost->value(), dims::money, c.cost->currency()}});
  out.push_back({"gpus", {gpus, dims::none, Currency::none}});
  out.push_back({"memory_per_gpu", {c.memory_per_gpu.value(), dims::bytes, Currency::none}});
  out.push_back({"memory_headroom",
                 {1.0 - c.memory_per_gpu.value() / type.cluster.gpu.memory.value(), dims::none, Currency::none}});
  out.push_back({"mfu", {c.mfu, dims::none, Currency::none}});
  out.push_back({"step_time", {c.step_time.value(), dims::seconds, Currency::none}});
  return out;
}


}  // namespace

namespace {

// The serving part of a run: simulate the stated deployment, size one under the SLO.
Status run_serving(const Scenario& scenario, const hardware::Catalog& catalog, RunResult& r, ProgressObserver* progress) {
  auto add = [&](const char* metric, double value, Dim dim) {
    if (std::isfinite(value)) r.measurements.push_back({metric, {value, dim, Currency::none}});
  };
  if (!scenario.inference->node.empty()) {
    auto sim = simulate_serving_scenario(scenario, catalog, progress);
    if (!sim) return sim.errors();
    r.serving_simulation = std::move(sim).value();
    const auto& s = *r.serving_simulation;
    // Latency percentiles are statistics of completed requests: with none completed
    // (overload, a window shorter than one request) they are not measured, never 0 s.
    auto add_statistic = [&](const char* metric, double value, Dim dim, std::uint64_t samples, const char* why) {
      if (auto m = statistic(metric, value, dim, samples)) r.measurements.push_back(*m);
      else r.unmeasured.push_back({metric, why});
    };
    constexpr const char* kNoRequest = "no request completed in the simulated window (0 samples)";
    if (s.llm) {
      add_statistic("ttft_p99", s.llm->ttft.p99.mean, dims::seconds, s.llm->completed, kNoRequest);
      add_statistic("tpot_p99", s.llm->tpot.p99.mean, dims::seconds, s.llm->completed, kNoRequest);
      add("throughput", s.llm->requests_per_second, dims::none);
    } else {
      add_statistic("p99_latency", s.graph->latency.p99.mean, dims::seconds, s.graph->simulation.latency_cdf.empty() ? 0 : 1,
                    kNoRequest);
      add("throughput", s.graph->simulated_throughput, dims::none);
    }
  }
  if (!scenario.hardware.gpus.empty()) {
    auto sized = size_serving_scenario(scenario, catalog);
    if (!sized) return sized.errors();
    r.serving_sizing = std::move(sized).value();
    const auto& z = *r.serving_sizing;
    std::optional<MoneyPerSecond> cost = z.llm ? (z.llm->recommended ? z.llm->recommended->cost : std::nullopt)
                                               : (z.graph->recommended ? z.graph->recommended->cost : std::nullopt);
    if (cost) r.measurements.push_back({"monthly_cost", {cost->value(), dims::money / dims::seconds, Currency::usd}});
    const int gpus = z.llm ? (z.llm->recommended ? z.llm->recommended->gpus : 0)
                           : (z.graph->recommended ? z.graph->recommended->gpus : 0);
    if (gpus > 0) add("gpus", gpus, dims::none);
  }
  return {};
}

}  // namespace

bool RunResult::passed() const {
  for (const auto& e : expectations)
    if (!e.passed) return false;
  return true;
}

std::string RunResult::status() const {
  if (expectations.empty()) return "no expectations";
  return passed() ? "passed" : "failed";
}

Result<RunResult> run_scenario(const Scenario& scenario, const hardware::Catalog& catalog, ProgressObserver* progress) {
  RunResult r;
  r.scenario = scenario;
  r.catalog_hash = catalog.content_hash;
  r.started_at = utc_now();
  if (scenario.inference) {
    if (auto status = run_serving(scenario, catalog, r, progress); !status.empty()) return status;
  } else if (!scenario.training.service) {
    auto sizing = size_scenario(scenario, catalog, progress);
    if (!sizing) return sizing.errors();
    r.sizing = std::move(sizing).value();
    r.measurements = training_measurements(*r.sizing);
  }
  if (scenario.cost) {
    auto cost = cost_scenario(scenario, catalog);
    if (!cost) return cost.errors();
    r.cost = std::move(cost).value();
    const auto& c = r.cost->comparison;
    r.measurements.push_back(
        {"monthly_cost", {c.options[c.cheapest].monthly_average(c.horizon).value(), dims::money / dims::seconds, Currency::usd}});
    r.measurements.push_back({"total_cost", {c.totals[c.cheapest].value(), dims::money, Currency::usd}});
  }
  if (scenario.simulate && !scenario.inference) {  // inference: simulate: only sets the run
    auto sim = simulate_scenario(scenario, catalog, progress);
    if (!sim) return sim.errors();
    r.simulation = std::move(sim).value();
    r.measurements.push_back({"gpu_utilization", {r.simulation->pipeline.gpu_utilization, dims::none, Currency::none}});
    r.measurements.push_back(
        {"samples_per_second", {r.simulation->pipeline.simulated_samples_per_second, dims::none, Currency::none}});
  }
  r.expectations = check_expectations(scenario.expect, r.measurements, r.unmeasured);
  return r;
}

std::string run_summary_text(const RunResult& r) {
  std::string out = r.scenario.name + ": " + r.status() + "\n";
  if (r.sizing && r.sizing->search.recommended) {
    const auto& s = *r.sizing;
    const auto& c = *s.search.recommended;
    const auto& type = s.search.node_types[c.node_type];
    out += "  recommendation  " + describe_candidate(s, c) + "\n";
    out += "  time            " + to_string(c.total_time) + " (" + s.search.recommendation + ")\n";
    out += "  cost            " + (c.cost ? to_string(*c.cost) + " per run" : std::string("no price in the catalog")) +
           "\n";
    out += "  constraint      " + std::string(models::bottleneck_name(static_cast<models::Bottleneck>(c.bottleneck))) +
           "\n";
    out += "  memory headroom " +
           to_string(ParsedQuantity{100 * (1 - c.memory_per_gpu.value() / type.cluster.gpu.memory.value()), {}, {}}) +
           " % of " + to_string(type.cluster.gpu.memory) + " per GPU\n";
    out += "  node pool       " + std::to_string(c.nodes) + " x " + type.name + " (" + type.provider + "), " +
           accelerator_resource(type) + ": " + std::to_string(type.cluster.gpus_per_node) + "\n";
  }
  if (r.simulation) {
    const auto& p = r.simulation->pipeline;
    out += "  simulated       " + to_string(ParsedQuantity{p.simulated_samples_per_second, {}, {}}) +
           " samples/s on " + r.simulation->node + ", GPU " +
           to_string(ParsedQuantity{100 * p.gpu_utilization, {}, {}}) + " % busy, constraint " +
           p.simulation.constraint + "\n";
  }
  if (r.serving_simulation) out += "\n" + serving_simulation_text(*r.serving_simulation);
  if (r.serving_sizing) out += "\n" + serving_sizing_text(*r.serving_sizing);
  if (r.cost) {
    const auto& c = r.cost->comparison;
    out += "  cheapest        " + c.options[c.cheapest].name + ": " + to_string(c.totals[c.cheapest]) + " over " +
           to_string(c.horizon) + " (" + to_string(c.options[c.cheapest].monthly_average(c.horizon)) + ")\n";
  }
  for (const auto& e : r.expectations) out += std::string(e.passed ? "  ok    " : "  FAIL  ") + e.message + "\n";
  return out;
}

std::string run_json(const RunResult& r) {
  using nlohmann::json;
  json j;
  j["schema"] = kRunSchema;
  j["capsim_version"] = CAPSIM_VERSION;
  j["catalog_hash"] = r.catalog_hash;
  j["started_at"] = r.started_at;
  j["scenario"] = {{"name", r.scenario.name}, {"file", r.scenario.file}, {"description", r.scenario.description}};
  j["status"] = r.status();
  j["measurements"] = json::object();
  for (const auto& m : r.measurements)
    j["measurements"][m.metric] = {{"value", m.value.value_si},
                                   {"unit", si_unit(m.value.dim, m.value.currency)},
                                   {"display", display_measurement(m.metric, m.value)}};
  j["expectations"] = json::array();
  for (const auto& e : r.expectations)
    j["expectations"].push_back({{"expect", e.expectation.text},
                                 {"metric", e.expectation.metric},
                                 {"passed", e.passed},
                                 {"measured", e.measured ? json(e.measured->value_si) : json(nullptr)},
                                 {"message", e.message}});
  if (r.simulation) j["simulation"] = json::parse(simulation_json(*r.simulation));
  if (r.cost) j["cost"] = json::parse(cost_json(*r.cost));
  if (r.serving_simulation) j["serving_simulation"] = json::parse(serving_simulation_json(*r.serving_simulation));
  if (r.serving_sizing) j["serving_sizing"] = json::parse(serving_sizing_json(*r.serving_sizing));
  if (r.sizing) {
    json sizing = json::parse(sizing_json(*r.sizing));
    sizing.erase("scenario");
    j["sizing"] = sizing;
  }
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string junit_xml(const RunResult& r) {
  int failures = 0;
  for (const auto& e : r.expectations) failures += e.passed ? 0 : 1;
  const std::string suite = xml_escape(r.scenario.name);
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<testsuites name=\"capsim\" tests=\"" + std::to_string(r.expectations.size()) + "\" failures=\"" +
         std::to_string(failures) + "\">\n";
  out += "  <testsuite name=\"" + suite + "\" tests=\"" + std::to_string(r.expectations.size()) + "\" failures=\"" +
         std::to_string(failures) + "\" errors=\"0\" timestamp=\"" + r.started_at + "\">\n";
  for (const auto& e : r.expectations) {
    out += "    <testcase classname=\"" + suite + "\" name=\"" + xml_escape(e.expectation.text) + "\" file=\"" +
           xml_escape(e.expectation.where.file) + "\" line=\"" + std::to_string(e.expectation.where.line) + "\"";
    if (e.passed) {
      out += ">\n      <system-out>" + xml_escape(e.message) + "</system-out>\n    </testcase>\n";
    } else {
      out += ">\n      <failure message=\"" + xml_escape(e.message) + "\" type=\"expectation\">" + xml_escape(e.message) +
             "</failure>\n    </testcase>\n";
    }
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace capsim::scenarios
