#include "capsim/scenarios/sizing.hpp"
#include "capsim/core/text.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "capsim/hardware/precision_fallback.hpp"
#include "capsim/models/fabric_timing.hpp"
#include "capsim/models/performance.hpp"
#include "capsim/scenarios/currency.hpp"

namespace capsim::scenarios {
namespace {

using models::Candidate;
using models::NodeType;

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string money_text(const std::optional<Money>& m) {
  if (!m) return "-";
  return human_count(m->value()) + " " + std::string(currency_code(m->currency()));
}

std::string duration_days(Seconds s) {
  const double d = s.value() / units::day;
  if (d >= 1) return fixed(d, d < 10 ? 1 : 0) + " d";
  const double h = s.value() / units::hour;
  return fixed(h, h < 10 ? 1 : 0) + " h";
}

std::string layout(const Candidate& c, bool transformer) {
  if (!transformer) return "data " + std::to_string(c.par.data) + ", batch " + std::to_string(c.batch_per_gpu) + "/GPU";
  return models::describe_layout(c.par);
}

int gpus_used(const Candidate& c) { return c.par.gpus(); }

std::string node_text(const SizingReport& r, const Candidate& c) {
  const NodeType& t = r.search.node_types[c.node_type];
  const int gpus = gpus_used(c);
  std::string s = std::to_string(c.nodes) + " x " + t.id + " (" + std::to_string(gpus) + " x " + t.cluster.gpu.id;
  if (gpus < c.nodes * t.cluster.gpus_per_node)
    s += " of " + std::to_string(c.nodes * t.cluster.gpus_per_node);
  return s + ")";
}

// A node type as people name it: the provider's instance type ("g6e.48xlarge (aws)"); an owned
// server by its catalog id.
std::string node_display(const NodeType& t) {
  return t.source == "instance" && !t.name.empty() ? t.name + " (" + t.provider + ")" : t.id;
}

std::string pool_name(const NodeType& t) {
  std::string name = "train-" + t.cluster.gpu.id;
  return name.size() > 40 ? name.substr(0, 40) : name;
}

}  // namespace

namespace {

Result<FabricCheck> check_on_fabric(const SizingReport& r) {
  const Candidate& c = *r.search.recommended;
  const auto& shape = std::get<models::TransformerShape>(r.scenario.training.model);
  const auto& cluster = r.search.node_types[c.node_type].cluster;
  auto fabric = models::fabric_data_parallel_all_reduce(shape, c.par, cluster, c.nodes, r.scenario.training.options);
  if (!fabric) return fabric.errors();
  const models::CollectiveOverrides overrides{fabric->time};
  auto analytic = models::estimate_training_step(shape, c.par, cluster, r.scenario.training.options);
  auto timed = models::estimate_training_step(shape, c.par, cluster, r.scenario.training.options, &overrides);
  if (!analytic) return analytic.errors();
  if (!timed) return timed.errors();
  const double steps = c.total_time.value() / c.step_time.value();
  return FabricCheck{fabric->analytic,     fabric->time, fabric->bottleneck_link, analytic->step_time,
                     timed->step_time, Seconds(timed->step_time.value() * steps)};
}

}  // namespace

models::SearchGrid search_grid(const Scenario& s) {
  models::SearchGrid g;
  g.micro_batch = s.search.micro_batch;
  g.zero_stage = s.search.zero_stage;
  g.recompute = s.search.recompute;
  g.tensor_parallel = s.search.tensor_parallel;
  g.pipeline_parallel = s.search.pipeline_parallel;
  g.batch_per_gpu = s.search.batch_per_gpu;
  g.min_gpus = s.hardware.min_gpus;
  g.max_gpus = s.hardware.max_gpus;
  g.virtual_stages = s.search.virtual_stages;
  g.sequence_parallel = s.search.sequence_parallel;
  g.context_parallel = s.search.context_parallel;
  g.expert_parallel = s.search.expert_parallel;
  g.fsdp_hybrid = s.search.fsdp_hybrid;
  g.recompute_fraction = s.search.recompute_fraction;
  return g;
}

std::vector<std::string> apply_precision_fallback(std::vector<NodeType>& types, const hardware::Catalog& catalog,
                                                  models::Precision requested) {
  // One note per GPU model, naming how many node types carry it.
  std::vector<std::string> gpus, reasons;
  std::vector<int> counts;
  for (auto& t : types) {
    const hardware::Entity* gpu = catalog.find_gpu(t.cluster.gpu.id);
    const auto choice = hardware::training_precision(t.cluster.gpu, models::precision_name(requested),
                                                     gpu != nullptr ? gpu->text("architecture") : std::string());
    if (!choice.fell_back()) continue;
    t.compute = models::precision_from_name(choice.precision);
    const auto at = std::find(gpus.begin(), gpus.end(), t.cluster.gpu.id);
    if (at != gpus.end()) {
      ++counts[static_cast<std::size_t>(at - gpus.begin())];
      continue;
    }
    gpus.push_back(t.cluster.gpu.id);
    reasons.push_back(choice.reason);
    counts.push_back(1);
  }
  std::vector<std::string> notes;
  for (std::size_t i = 0; i < gpus.size(); ++i)
    notes.push_back(gpus[i] + " (" + std::to_string(counts[i]) + " node type" + (counts[i] > 1 ? "s" : "") +
                    "): " + reasons[i]);
  return notes;
}

Result<SizingReport> size_scenario(const Scenario& s, const hardware::Catalog& catalog, ProgressObserver* progress,
                                   CollectiveTiming collectives) {
  auto attach_file = [&](std::vector<Diagnostic> errors) { return placed(s, std::move(errors)); };
  models::NodeTypeQuery q{s.hardware.gpus, s.hardware.providers, s.hardware.instances, s.hardware.servers,
                          std::string(commitment_price_field(s.commitment)), s.hardware.nodes};
  auto types = models::node_types_from_catalog(catalog, q);
  if (!types) return attach_file(types.errors());

  models::SearchRequest req;
  req.model = s.training.model;
  req.options = s.training.options;
  req.tokens = s.training.tokens;
  req.samples = s.training.samples * s.training.epochs;
  req.global_batch = s.training.global_batch;
  req.deadline = s.deadline;
  req.budget = s.budget;
  req.grid = search_grid(s);
  req.node_types = std::move(types).value();
  // hardware.scale_out: the NICs the scenario's nodes have instead of the catalog's.
  if (!s.hardware.scale_out_network.empty())
    for (auto& t : req.node_types) {
      auto cluster = models::with_scale_out(catalog, t.cluster, s.hardware.scale_out_network, s.hardware.scale_out_nics);
      if (!cluster) return attach_file(cluster.errors());
      t.cluster = std::move(cluster).value();
    }
  const auto conversion_of_type = prices_in_usd(req.node_types, catalog, s);
  auto precision_notes = apply_precision_fallback(req.node_types, catalog, req.options.compute);
  const auto start = std::chrono::steady_clock::now();
  auto result = models::run_search(req, progress);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!result) return attach_file(result.errors());
  // The conversions a reader needs: those of node types with a fitting configuration (every
  // price the outputs show is one of theirs), not of every candidate the search discarded.
  std::vector<std::string> conversions;
  for (const auto& c : result->fastest) add_conversion(conversions, conversion_of_type[static_cast<std::size_t>(c.node_type)]);
  SizingReport report{s, std::move(result).value(), wall, std::nullopt, std::move(precision_notes),
                      std::move(conversions), "", false};
  if (collectives == CollectiveTiming::simgrid && report.search.recommended && s.training.is_transformer() &&
      report.search.recommended->par.zero_stage != 3) {
    auto check = check_on_fabric(report);
    if (!check) return attach_file(check.errors());
    report.fabric = *check;
  }
  return report;
}

std::string describe_candidate(const SizingReport& r, const Candidate& c) {
  return node_text(r, c) + ", " + layout(c, r.scenario.training.is_transformer());
}

// The Kubernetes extended resource a node type's accelerators are requested by: GKE exposes
// Cloud TPU chips as google.com/tpu, NVIDIA's device plugin GPUs as nvidia.com/gpu.
std::string accelerator_resource(const NodeType& t) {
  return accelerator_resource(t.cluster.gpu.vendor).value_or("nvidia.com/gpu");
}

Table node_pools_table(const SizingReport& r, const Candidate& c) {
  const NodeType& t = r.search.node_types[c.node_type];
  Table table{{"pool", "node type", "provider", "GPUs/node", "nodes", "Kubernetes request"}, {}, {false, false, false, true, true, false}};
  const int per_node = std::min(t.cluster.gpus_per_node, gpus_used(c));
  table.rows.push_back({pool_name(t), t.name + " (" + t.id + ")", t.provider, std::to_string(t.cluster.gpus_per_node),
                        std::to_string(c.nodes), accelerator_resource(t) + ": " + std::to_string(per_node)});
  return table;
}

namespace {

Table candidates_table(const SizingReport& r, const std::vector<Candidate>& list) {
  const bool transformer = r.scenario.training.is_transformer();
  Table t{{"time", "cost", "GPUs", "node type", "layout", transformer ? "tokens/s" : "samples/s", "TFLOPS/GPU", "MFU",
           "memory/GPU", "constraint"},
          {},
          {true, true, true, false, false, true, true, true, true, false}};
  // Each number as sizing_json writes it (CSV keeps it whole): seconds, the cost, per-GPU FLOP/s
  // in TFLOP/s, MFU in percent, bytes.
  const std::string per_s = transformer ? "tokens/s" : "samples/s";
  for (const auto& c : list) {
    const Cell cost = c.cost ? Cell(money_text(c.cost), c.cost->value(), std::string(currency_code(c.cost->currency())))
                             : Cell("-", std::numeric_limits<double>::quiet_NaN(), "USD");
    t.rows.push_back({Cell(duration_days(c.total_time), c.total_time.value(), "s"), cost,
                      Cell(std::to_string(gpus_used(c)), gpus_used(c)),
                      std::to_string(c.nodes) + " x " + node_display(r.search.node_types[c.node_type]), layout(c, transformer),
                      Cell(human_count(c.throughput), c.throughput, per_s),
                      Cell(fixed(c.achieved_flops_per_gpu.value() / 1e12, 0), c.achieved_flops_per_gpu.value() / 1e12),
                      Cell(fixed(100 * c.mfu, 0) + " %", 100 * c.mfu, "%"),
                      Cell(to_string(c.memory_per_gpu), c.memory_per_gpu.value(), "B"),
                      std::string(models::bottleneck_name(static_cast<models::Bottleneck>(c.bottleneck)))});
  }
  return t;
}

}  // namespace

Table frontier_table(const SizingReport& r) {
  // A frontier can be long (every step down in cost); show at most a dozen, evenly spread.
  const auto& f = r.search.frontier;
  constexpr std::size_t kShown = 12;
  if (f.size() <= kShown) return candidates_table(r, f);
  std::vector<Candidate> picked;
  for (std::size_t i = 0; i < kShown; ++i) picked.push_back(f[i * (f.size() - 1) / (kShown - 1)]);
  return candidates_table(r, picked);
}

Table fastest_table(const SizingReport& r) { return candidates_table(r, r.search.fastest); }

Result<std::vector<NodePool>> sizing_node_pools(const SizingReport& r, const std::string& node_type) {
  const Candidate* chosen = r.search.recommended ? &*r.search.recommended : nullptr;
  if (!node_type.empty()) {
    chosen = nullptr;
    for (const auto& c : r.search.fastest)
      if (r.search.node_types[c.node_type].id == node_type) chosen = &c;
    if (chosen == nullptr) {
      std::vector<std::string> ids;
      for (const auto& c : r.search.fastest) ids.push_back(r.search.node_types[c.node_type].id);
      std::string list;
      for (const auto& id : ids) list += (list.empty() ? "" : ", ") + id;
      return Diagnostic{{}, "--node-type", "no fitting configuration on node type '" + node_type + "'",
                        "node types with one: " + list};
    }
  }
  if (chosen == nullptr) return Diagnostic{{}, "", "the search recommended nothing to export", ""};
  const NodeType& t = r.search.node_types[chosen->node_type];
  NodePool pool;
  pool.name = pool_name(t);
  pool.provider = t.provider;
  pool.instance_type = t.name;
  pool.gpu_id = t.cluster.gpu.id;
  pool.gpus_per_node = t.cluster.gpus_per_node;
  pool.nodes = chosen->nodes;
  pool.min_nodes = 0;  // a training job: nodes come up for the run and go away after it
  pool.max_nodes = chosen->nodes;
  pool.gpus_per_pod = std::min(t.cluster.gpus_per_node, gpus_used(*chosen));
  pool.spot = r.scenario.commitment == Commitment::spot ||
              (r.recommended_spot && r.search.recommended && chosen->node_type == r.search.recommended->node_type &&
               chosen->nodes == r.search.recommended->nodes);
  pool.tpu = accelerator_resource(t) == "google.com/tpu";
  pool.training = true;
  pool.pods = (gpus_used(*chosen) + pool.gpus_per_pod - 1) / pool.gpus_per_pod;  // one worker pod per node
  return std::vector<NodePool>{pool};
}

std::string sizing_text(const SizingReport& r) {
  const auto& s = r.scenario;
  const auto& res = r.search;
  std::string out = "Scenario: " + s.name + (s.description.empty() ? "" : "\n  " + s.description) + "\n\n";
  out += "Searched " + human_count(static_cast<double>(res.evaluated)) + " configurations on " +
         std::to_string(res.node_types.size()) + " node types in " + fixed(r.wall_seconds, 2) + " s; " +
         human_count(static_cast<double>(res.fitting)) + " fit in memory.\n";
  if (res.cancelled) out += "The search was cancelled: the results below cover part of the grid.\n";
  if (res.recommended) {
    const Candidate& c = *res.recommended;
    const NodeType& t = res.node_types[c.node_type];
    out += "\nRecommendation (" + res.recommendation + "):\n";
    out += "  " + describe_candidate(r, c) + "\n";
    out += "  time " + duration_days(c.total_time) + ", " + human_count(c.throughput) +
           (s.training.is_transformer() ? " tokens/s" : " samples/s") + ", " +
           fixed(c.achieved_flops_per_gpu.value() / 1e12, 0) + " TFLOPS per GPU (" + fixed(100 * c.mfu, 0) +
           " % MFU), step " + to_string(c.step_time) + "\n";
    out += "  memory " + to_string(c.memory_per_gpu) + " of " + to_string(t.cluster.gpu.memory) + " per GPU; " +
           human_count(c.gpu_hours) + " GPU-hours\n";
    if (c.cost && !r.recommended_cost_basis.empty())
      out += "  cost " + money_text(c.cost) + " (" + r.recommended_cost_basis + ")\n";
    else if (c.cost)
      out += "  cost " + money_text(c.cost) + " (" + std::string(commitment_name(s.commitment)) + ", " +
             to_string(*t.price) + " per node)\n";
    else
      out += "  cost: no " + std::string(commitment_name(s.commitment)) + " price for " + t.id + " in the catalog\n";
    out += "  constraint: " + std::string(models::bottleneck_name(static_cast<models::Bottleneck>(c.bottleneck))) +
           "\n\nNode pools:\n" + render_text(node_pools_table(r, c));
  }
  if (r.fabric) {
    const auto& f = *r.fabric;
    out += "\nData-parallel all-reduce on the SimGrid fabric: " + to_string(f.fabric_all_reduce) + " (formula " +
           to_string(f.analytic_all_reduce) + (f.bottleneck_link.empty() ? "" : ", bottleneck link " + f.bottleneck_link) +
           "); step " + to_string(f.fabric_step) + " (formula " + to_string(f.analytic_step) + "), run " +
           to_string(f.fabric_total_time) + "\n";
  }
  if (!res.frontier.empty()) out += "\nPareto frontier (time vs cost per run):\n" + render_text(frontier_table(r));
  out += "\nFastest configuration per node type:\n" + render_text(fastest_table(r));
  if (!r.precision_notes.empty()) {
    out += "\nPrecision fallbacks (the GPU lacks the requested precision):\n";
    for (const auto& note : r.precision_notes) out += "  " + note + "\n";
  }
  if (!res.skipped.empty()) {
    out += "\nNode types with no usable configuration:\n";
    for (const auto& [id, why] : res.skipped) out += "  " + id + ": " + why + "\n";
  }
  if (!res.closest_misses.empty()) {
    out += "\nClosest configurations that do not fit in memory:\n";
    for (const auto& m : res.closest_misses)
      out += "  " + describe_candidate(r, m.candidate) + ": needs " + to_string(m.needed) + " of " +
             to_string(m.available) + "\n";
  }
  return out;
}

std::string sizing_json(const SizingReport& r) {
  using nlohmann::json;
  const bool transformer = r.scenario.training.is_transformer();
  auto configuration = [&](const Candidate& c) {
    const NodeType& t = r.search.node_types[c.node_type];
    json j = {{"node_type", t.id}, {"gpu", t.cluster.gpu.id}, {"nodes", c.nodes}, {"gpus", gpus_used(c)}};
    if (transformer)
      j["parallelism"] = {{"tensor", c.par.tensor},         {"pipeline", c.par.pipeline},
                          {"data", c.par.data},             {"micro_batch", c.par.micro_batch},
                          {"zero_stage", c.par.zero_stage}, {"recompute", std::string(models::recompute_name(c.par.recompute))}};
    else
      j["parallelism"] = {{"data", c.par.data}, {"batch_per_gpu", c.batch_per_gpu}};
    return j;
  };
  auto candidate = [&](const Candidate& c) {
    json j = configuration(c);
    j.update({{"total_time_s", c.total_time.value()},
              {"step_time_s", c.step_time.value()},
              {transformer ? "tokens_per_s" : "samples_per_s", c.throughput},
              {"achieved_flops_per_gpu", c.achieved_flops_per_gpu.value()},
              {"mfu", c.mfu},
              {"memory_per_gpu_bytes", c.memory_per_gpu.value()},
              {"gpu_hours", c.gpu_hours},
              {"constraint", std::string(models::bottleneck_name(static_cast<models::Bottleneck>(c.bottleneck)))}});
    j["cost"] = c.cost ? json(c.cost->value()) : json(nullptr);
    return j;
  };
  json out;
  out["scenario"] = r.scenario.name;
  out["evaluated"] = r.search.evaluated;
  out["fitting"] = r.search.fitting;
  out["wall_seconds"] = r.wall_seconds;
  out["currency"] = "USD";
  out["commitment"] = std::string(commitment_name(r.scenario.commitment));
  if (r.search.recommended) {
    out["recommended"] = candidate(*r.search.recommended);
    out["recommended"]["reason"] = r.search.recommendation;
    const auto& c = *r.search.recommended;
    const NodeType& t = r.search.node_types[c.node_type];
    out["node_pools"] = json::array({{{"name", pool_name(t)},
                                      {"node_type", t.id},
                                      {"provider", t.provider},
                                      {"instance_type", t.name},
                                      {"gpus_per_node", t.cluster.gpus_per_node},
                                      {"nodes", c.nodes},
                                      {"resources", {{accelerator_resource(t), std::min(t.cluster.gpus_per_node, gpus_used(c))}}}}});
  }
  out["frontier"] = json::array();
  for (const auto& c : r.search.frontier) out["frontier"].push_back(candidate(c));
  out["fastest_per_node_type"] = json::array();
  for (const auto& c : r.search.fastest) out["fastest_per_node_type"].push_back(candidate(c));
  out["precision_fallbacks"] = r.precision_notes;
  out["skipped_node_types"] = json::array();
  for (const auto& [id, why] : r.search.skipped) out["skipped_node_types"].push_back({{"node_type", id}, {"reason", why}});
  if (r.fabric)
    out["fabric"] = {{"analytic_all_reduce_s", r.fabric->analytic_all_reduce.value()},
                     {"fabric_all_reduce_s", r.fabric->fabric_all_reduce.value()},
                     {"bottleneck_link", r.fabric->bottleneck_link},
                     {"analytic_step_s", r.fabric->analytic_step.value()},
                     {"fabric_step_s", r.fabric->fabric_step.value()},
                     {"fabric_total_time_s", r.fabric->fabric_total_time.value()}};
  out["closest_misses"] = json::array();
  for (const auto& m : r.search.closest_misses) {
    json j = configuration(m.candidate);
    j["needed_bytes"] = m.needed.value();
    j["available_bytes"] = m.available.value();
    out["closest_misses"].push_back(j);
  }
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace capsim::scenarios
