#include "capsim/scenarios/simulation.hpp"
#include "capsim/core/text.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>

#include "capsim/models/search.hpp"
#include "capsim/scenarios/table.hpp"

namespace capsim::scenarios {
namespace {

std::string num(double v, int decimals = 3) {
  if (!std::isfinite(v)) return "n/a";
  return significant(v, decimals);
}

std::string percent(double v) { return std::isfinite(v) ? num(100 * v, 3) + " %" : "n/a"; }

std::string interval(const des::Interval& i, bool as_percent = false) {
  auto f = [&](double v) { return as_percent ? percent(v) : num(v); };
  if (!std::isfinite(i.low) || !std::isfinite(i.high)) return f(i.mean);
  return f(i.mean) + " [" + f(i.low) + ", " + f(i.high) + "]";
}

std::string duration(double s) { return std::isfinite(s) ? to_string(Seconds(s)) : "n/a"; }

nlohmann::json interval_json(const des::Interval& i) {
  auto finite = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  return {{"mean", finite(i.mean)}, {"low", finite(i.low)}, {"high", finite(i.high)}};
}

nlohmann::json percentiles_json(const des::Percentiles& p) {
  return {{"p50", interval_json(p.p50)}, {"p95", interval_json(p.p95)}, {"p99", interval_json(p.p99)}};
}

}  // namespace

Result<SimulationReport> simulate_scenario(const Scenario& scenario, const hardware::Catalog& catalog,
                                           ProgressObserver* progress) {
  if (!scenario.simulate)
    return Diagnostic{{scenario.file}, "simulate", "the scenario has no simulate: section", "see docs/scenario-reference.md"};
  const SimulationSetup& s = *scenario.simulate;
  auto node = models::node_type_by_id(catalog, s.node);
  if (!node) return node.errors();
  models::TrainingPipelineSpec spec;
  spec.model = std::get<models::SampleModel>(scenario.training.model);
  spec.batch_per_gpu = s.batch_per_gpu;
  spec.cluster = node->cluster;
  spec.gpus = s.gpus;
  spec.options = scenario.training.options;
  spec.host = {s.cpu_cores, s.decode_time, s.decode_cv, s.sample_size, s.storage_bandwidth, s.storage_latency};
  spec.prefetch_batches = s.prefetch_batches;
  spec.checkpoint_every_steps = s.checkpoint_every_steps;
  spec.checkpoint_bandwidth = s.checkpoint_bandwidth;
  des::RunOptions run;
  run.warmup = s.warmup;
  run.duration = s.duration;
  run.seed = s.seed;
  run.max_events = s.max_events;
  const auto start = std::chrono::steady_clock::now();
  auto report = models::simulate_training_pipeline(spec, run, progress);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!report) return placed(scenario, in_scenario_terms(report.errors(), s, scenario.file));
  return SimulationReport{scenario.name, s.node, std::move(report).value(), wall};
}

std::vector<Diagnostic> in_scenario_terms(std::vector<Diagnostic> errors, const SimulationSetup& run,
                                          const std::string& file) {
  for (auto& d : errors) {
    if (d.key_path.rfind("run.", 0) == 0) {
      d.key_path = "simulate." + d.key_path.substr(4);
      if (d.where.file.empty()) d.where = run.duration_at;
      if (d.key_path == "simulate.max_events")
        d.hint = "shorten simulate.duration or raise simulate.max_events";
    }
    if (d.where.file.empty()) d.where.file = file;
  }
  return errors;
}

std::string simulation_text(const SimulationReport& r) {
  const auto& p = r.pipeline;
  const auto& sim = p.simulation;
  std::string out = "Simulation: " + r.scenario + " on " + r.node + "\n";
  out += "  " + num(static_cast<double>(sim.events), 4) + " events over " + to_string(sim.simulated_time) +
         " of simulated time (" + std::to_string(sim.batches) + " batches of " + to_string(sim.batch_length) +
         " after warm-up) in " + num(r.wall_seconds, 2) + " s\n\n";
  // Nothing completed in the measured window: the simulated column has no observation.
  const bool measured = p.measured();
  const std::string none = "not measured (0 samples)";
  if (!measured)
    out += "No training sample completed in the simulated window: lengthen simulate.duration.\n\n";
  Table summary{{"", "simulated (95 % CI)", "analytic"}, {}, {false, false, false}};
  summary.rows.push_back({"throughput (samples/s)", measured ? interval(sim.throughput) : none,
                          num(std::min({p.gpu_capacity, p.cpu_capacity, p.storage_capacity, p.pcie_capacity})) +
                              " (" + p.analytic_constraint + " bound)"});
  summary.rows.push_back({"step time", measured ? duration(p.simulated_step_time.value()) : none,
                          duration(p.analytic_step.step_time.value()) + " (data loading free)"});
  summary.rows.push_back({"GPU utilization", measured ? percent(p.gpu_utilization) : none,
                          percent(std::min(1.0, std::min({p.cpu_capacity, p.storage_capacity, p.pcie_capacity}) /
                                                    p.gpu_capacity))});
  out += render_text(summary);

  Table stations{{"station", "utilization", "queue length", "waiting (s)", "blocked", "starved", "sojourn p99 (s)"},
                 {},
                 {false, true, true, true, true, true, true}};
  for (const auto& s : sim.stations)
    stations.rows.push_back({s.name, interval(s.utilization, true), interval(s.queue_length),
                             interval(s.waiting_time), percent(s.blocked_fraction.mean), percent(s.starved_fraction.mean),
                             interval(s.sojourn.p99)});
  out += "\n" + render_text(stations);
  Table conveyors{{"conveyor", "utilization", "in transit", "throughput (items/s)"}, {}, {false, true, true, true}};
  for (const auto& c : sim.conveyors)
    conveyors.rows.push_back({c.name, interval(c.utilization, true), interval(c.in_transit), interval(c.throughput)});
  out += "\n" + render_text(conveyors);

  out += "\nConstraint: " + sim.constraint + " (" + percent(sim.constraint_utilization) + " busy)";
  if (sim.elevation_gain)
    out += "; elevating it gives up to +" + percent(*sim.elevation_gain) + " throughput before " + sim.next_constraint +
           " binds";
  out += ".\n";
  if (sim.constraint == "cpu decode")
    out += "The GPUs are starved: " + std::to_string(p.cores_to_feed_gpus) +
           " cores would keep them fed (10 % headroom).\n";
  return out;
}

std::string simulation_json(const SimulationReport& r) {
  using nlohmann::json;
  const auto& p = r.pipeline;
  const auto& sim = p.simulation;
  auto finite = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
  json j;
  j["scenario"] = r.scenario;
  j["node"] = r.node;
  j["events"] = sim.events;
  j["simulated_time_s"] = sim.simulated_time.value();
  j["throughput_samples_per_s"] = interval_json(sim.throughput);
  j["step_time_s"] = finite(p.simulated_step_time.value());
  j["gpu_utilization"] = finite(p.gpu_utilization);
  j["constraint"] = sim.constraint;
  j["next_constraint"] = sim.next_constraint;
  j["elevation_gain"] = sim.elevation_gain ? finite(*sim.elevation_gain) : json(nullptr);
  j["cores_to_feed_gpus"] = p.cores_to_feed_gpus;
  j["analytic"] = {{"step_time_s", p.analytic_step.step_time.value()},
                   {"constraint", p.analytic_constraint},
                   {"capacity_samples_per_s",
                    {{"gpu step", p.gpu_capacity},
                     {"cpu decode", p.cpu_capacity},
                     {"storage read", p.storage_capacity},
                     {"pcie h2d", p.pcie_capacity}}}};
  j["stations"] = json::array();
  for (const auto& s : sim.stations)
    j["stations"].push_back({{"name", s.name},
                             {"utilization", interval_json(s.utilization)},
                             {"queue_length", interval_json(s.queue_length)},
                             {"waiting_time_s", interval_json(s.waiting_time)},
                             {"throughput", interval_json(s.throughput)},
                             {"blocked_fraction", interval_json(s.blocked_fraction)},
                             {"starved_fraction", interval_json(s.starved_fraction)},
                             {"sojourn_s", percentiles_json(s.sojourn)}});
  j["conveyors"] = json::array();
  for (const auto& c : sim.conveyors)
    j["conveyors"].push_back({{"name", c.name},
                              {"utilization", interval_json(c.utilization)},
                              {"in_transit", interval_json(c.in_transit)},
                              {"throughput", interval_json(c.throughput)}});
  j["latency_s"] = percentiles_json(sim.latency_percentiles);
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace capsim::scenarios
