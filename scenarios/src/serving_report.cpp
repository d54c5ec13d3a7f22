#include "capsim/scenarios/serving_report.hpp"
#include "capsim/core/text.hpp"

#include "capsim/scenarios/currency.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "capsim/models/search.hpp"
#include "capsim/scenarios/simulation.hpp"
#include "capsim/scenarios/table.hpp"

namespace capsim::scenarios {
namespace {

using nlohmann::json;

// Durations for people, as every output writes them (units.hpp to_string): no exponents.
std::string ms(double s) { return std::isfinite(s) ? to_string(Seconds(s)) : "n/a"; }

std::string num(double v) {
  if (!std::isfinite(v)) return "n/a";
  if (std::fabs(v) >= 1e4) return human_count(v);
  return significant(v, 4);
}

std::string interval_ms(const des::Interval& i) {
  if (!std::isfinite(i.low) || !std::isfinite(i.high) || i.low == i.high) return ms(i.mean);
  // "3.87 s [3.2, 4.64 s]": the low end without its unit when it shares the high end's
  // (the unit is " s", " ms" or " us"), with it when it does not ("980 ms, 1.2 s").
  std::string low = ms(i.low);
  const std::string high = ms(i.high);
  const auto unit_of = [](const std::string& t) { return t.substr(t.rfind(' ')); };
  if (unit_of(low) == unit_of(high)) low.erase(low.rfind(' '));
  return ms(i.mean) + " [" + low + ", " + high + "]";
}

json finite(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json interval_json(const des::Interval& i) {
  return {{"mean", finite(i.mean)}, {"low", finite(i.low)}, {"high", finite(i.high)}};
}

json percentiles_json(const des::Percentiles& p) {
  return {{"p50", interval_json(p.p50)}, {"p95", interval_json(p.p95)}, {"p99", interval_json(p.p99)}};
}

std::string sharing_name(models::SharingMode m) {
  switch (m) {
    case models::SharingMode::exclusive: return "exclusive";
    case models::SharingMode::mig: return "mig";
    case models::SharingMode::mps: return "mps";
    case models::SharingMode::time_slicing: return "time-slicing";
  }
  return "";
}

std::string price_field(const Scenario& s) { return std::string(commitment_price_field(s.commitment)); }

double trough_rate(const models::ArrivalSpec& a) {
  if (a.kind != models::ArrivalSpec::Kind::diurnal) return a.peak_rate().value();
  return a.rate.value() * *std::min_element(a.hourly.begin(), a.hourly.end());
}

std::vector<Diagnostic> run_errors(std::vector<Diagnostic> ds, const Scenario& s) {
  return placed(s, s.simulate ? in_scenario_terms(std::move(ds), *s.simulate, s.file) : std::move(ds));
}

// The scenario's simulate: keys, or their documented defaults (docs/scenario-reference.md:
// 10 min measured after 1 min of warm-up, seed 1) when the file has no simulate: section.
des::RunOptions run_options(const Scenario& s) {
  const SimulationSetup setup = s.simulate ? *s.simulate : SimulationSetup{};
  des::RunOptions run;
  run.warmup = setup.warmup;
  run.duration = setup.duration;
  run.seed = setup.seed;
  run.max_events = setup.max_events;
  return run;
}

}  // namespace

// The Kubernetes resource one pod of a serving pool requests: a MIG slice, or its vendor's
// whole-accelerator resource (amd.com/gpu on MI300X, google.com/tpu), as the exports request.
namespace {
std::string pool_resource(const NodePool& p) {
  if (p.mig_profile) return "nvidia.com/mig-" + *p.mig_profile;
  const std::string_view vendor = p.tpu ? std::string_view("google") : std::string_view(p.vendor);
  return accelerator_resource(vendor).value_or("nvidia.com/gpu");
}
}  // namespace

Table serving_node_pool_table(const std::vector<NodePool>& pools) {
  Table t{{"pool", "node type", "GPUs/node", "min nodes", "max nodes", "Kubernetes request per pod"},
          {},
          {false, false, true, true, true, false}};
  for (const auto& p : pools)
    t.rows.push_back({p.name, p.instance_type + " (" + p.provider + ")", std::to_string(p.gpus_per_node),
                      std::to_string(p.min_nodes), std::to_string(p.max_nodes),
                      pool_resource(p) + ": " + std::to_string(p.gpus_per_pod)});
  return t;
}

models::LlmServingSpec llm_serving_spec(const InferenceSetup& inf, const models::ClusterSpec& cluster) {
  models::LlmServingSpec spec;
  spec.shape = inf.shape;
  spec.cluster = cluster;
  spec.tensor_parallel = inf.tensor_parallel;
  spec.pipeline_parallel = inf.pipeline_parallel;
  spec.weights = inf.exec.precision;
  spec.kv_cache = inf.kv_cache;
  spec.max_concurrent = inf.max_num_seqs;
  spec.max_batched_tokens = inf.max_batched_tokens;
  // An engine without chunked prefill runs a prompt whole in one step: the step's budget is
  // at least the longest prompt.
  if (!inf.chunked_prefill) {
    int longest = inf.mix.prompt_tokens;
    for (const auto& r : inf.mix.requests) longest = std::max(longest, r.prompt_tokens);
    spec.max_batched_tokens = std::max(spec.max_batched_tokens, longest);
  }
  spec.speculation = inf.speculation;
  spec.kv_admission = inf.kv_admission;
  spec.batching = inf.batching;
  spec.gqa_shared_kv = inf.gqa_shared_kv;
  spec.kv_budget = inf.kv_budget;  // the engine's (llm_engines.yaml), the scenario's fraction over it
  spec.memory_utilization = inf.memory_utilization;
  return spec;
}

Result<ServingSimulationReport> simulate_serving_scenario(const Scenario& s, const hardware::Catalog& catalog,
                                                          ProgressObserver* progress) {
  if (!s.inference || s.inference->node.empty())
    return placed(s, {Diagnostic{{}, "deployment", "the scenario has no deployment: to simulate",
                                 "capsim size finds one"}});
  const auto& inf = *s.inference;
  auto node = models::node_type_by_id(catalog, inf.node, price_field(s));
  if (!node) return placed(s, node.errors());
  ServingSimulationReport r;
  r.scenario = s.name;
  r.node = inf.node;
  r.rate = inf.arrivals.peak_rate().value();
  const des::RunOptions run = run_options(s);
  if (inf.llm) {
    const models::LlmServingSpec spec = llm_serving_spec(inf, node->cluster);
    auto estimate = models::estimate_llm_serving(spec, inf.mix);
    if (!estimate) return placed(s, estimate.errors());
    models::LlmSimulationOptions options;
    options.rate = r.rate;
    options.replicas = inf.replicas;
    options.warmup = run.warmup;
    options.duration = run.duration;
    options.seed = run.seed;
    options.max_events = run.max_events;
    options.offline_requests = inf.offline_requests;
    options.server_requests = inf.server_requests;
    r.offline_requests = inf.offline_requests;
    auto sim = models::simulate_llm_serving(spec, inf.mix, options);
    if (!sim) return run_errors(sim.errors(), s);
    r.llm_estimate = *estimate;
    r.llm = *sim;
    r.replicas = inf.replicas;
    r.pipeline_parallel = inf.pipeline_parallel;
    r.weights = spec.weights;
    r.kv_cache = spec.kv_cache;
    return r;
  }
  models::Deployment d;
  d.gpu = node->cluster.gpu;
  d.sharing = inf.sharing;
  d.stages = inf.stages;
  auto plan = models::plan_deployment(inf.graph, d);
  if (!plan) return placed(s, plan.errors());
  // The loader checks the GPUs a deployment states; MIG's are known once its slices are packed.
  if (plan->gpus > s.hardware.max_gpus)
    return placed(s, {Diagnostic{{}, "deployment.stages",
                                 "the deployment's replicas take " + std::to_string(plan->gpus) + " GPUs (" +
                                     std::string(models::sharing_mode_name(plan->sharing)) +
                                     "), more than hardware.max_gpus (" + std::to_string(s.hardware.max_gpus) + ")",
                                 "state fewer replicas, or raise hardware.max_gpus"}});
  auto sim = models::simulate_serving(*plan, inf.arrivals, run, progress);
  if (!sim) return run_errors(sim.errors(), s);
  r.graph = std::move(sim).value();
  return r;
}

// hardware.max_gpus bounds serving as it bounds training: a recommendation beyond it (1e9
// requests/s recommended 472 M GPUs) is refused, naming the limit.
static std::optional<Diagnostic> beyond_max_gpus(const Scenario& s, long long gpus) {
  if (gpus <= s.hardware.max_gpus) return std::nullopt;
  return placed(s, {Diagnostic{{}, "hardware.max_gpus",
                               "the cheapest deployment that meets the SLO needs " + std::to_string(gpus) +
                                   " GPUs, more than max_gpus (" + std::to_string(s.hardware.max_gpus) + ")",
                               "lower the arrival rate, relax the SLO, or raise hardware.max_gpus"}})
      .front();
}

Result<ServingSizingReport> size_serving_scenario(const Scenario& s, const hardware::Catalog& catalog,
                                                  ProgressObserver* progress) {
  const auto& inf = *s.inference;
  if (s.hardware.gpus.empty())
    return placed(s, {Diagnostic{{}, "hardware.gpus", "sizing needs candidate GPUs",
                                 "e.g. hardware: {gpus: [t4, l4]}"}});
  models::NodeTypeQuery q{s.hardware.gpus, s.hardware.providers, s.hardware.instances, s.hardware.servers,
                          price_field(s), s.hardware.nodes};
  auto types = models::node_types_from_catalog(catalog, q);
  if (!types) return placed(s, types.errors());
  ServingSizingReport r;
  r.scenario = s.name;
  r.node_types = std::move(types).value();
  const auto conversion_of_type = prices_in_usd(r.node_types, catalog, s);
  // The conversions a reader needs: those of node types some deployment the sizing compared uses.
  const auto keep_conversions = [&](const auto& deployments) {
    for (const auto& d : deployments)
      for (std::size_t i = 0; i < r.node_types.size(); ++i)
        if (r.node_types[i].id == d.node_type) add_conversion(r.conversions, conversion_of_type[i]);
  };
  if (inf.llm) {
    models::LlmSizingRequest req;
    req.shape = inf.shape;
    req.mix = inf.mix;
    req.speculation = inf.speculation;
    req.peak_rate = inf.arrivals.peak_rate().value();
    req.trough_rate = trough_rate(inf.arrivals);
    if (inf.arrivals.kind == models::ArrivalSpec::Kind::diurnal)
      for (const double m : inf.arrivals.hourly) req.hourly_rates.push_back(inf.arrivals.rate.value() * m);
    req.ttft_p99 = *inf.ttft_p99;
    req.tpot_p99 = *inf.tpot_p99;
    req.node_types = r.node_types;
    req.weights = inf.exec.precision;
    req.kv_cache = inf.kv_cache;
    req.max_batched_tokens = llm_serving_spec(inf, models::ClusterSpec{}).max_batched_tokens;
    req.max_num_seqs = inf.max_num_seqs;
    {  // the engine's policy, as the deployment runs it
      const models::LlmServingSpec engine = llm_serving_spec(inf, models::ClusterSpec{});
      req.kv_admission = engine.kv_admission;
      req.batching = engine.batching;
      req.kv_budget = engine.kv_budget;
      req.memory_utilization = engine.memory_utilization;
      req.gqa_shared_kv = engine.gqa_shared_kv;
    }
    const des::RunOptions run = run_options(s);  // the plan's simulation is the recommendation's verification
    req.verify_duration = run.duration;
    req.verify_warmup = run.warmup;
    req.verify_seed = run.seed;
    req.verify_max_events = run.max_events;
    auto result = models::size_llm_serving(req);
    if (!result) return placed(s, result.errors());
    r.llm = std::move(result).value();
    keep_conversions(r.llm->candidates);
    if (r.llm->recommended)
      if (auto refused = beyond_max_gpus(s, r.llm->recommended->gpus)) return *refused;
    return r;
  }
  models::ServingSizingRequest req;
  req.graph = inf.graph;
  req.arrivals = inf.arrivals;
  req.p99_bound = *inf.p99;
  req.node_types = r.node_types;
  req.sharing = inf.sharing_modes;
  req.max_batch = inf.max_batch;
  req.max_queue_delay = inf.max_queue_delay;
  req.exec = inf.exec;
  req.verify_run = run_options(s);
  req.progress = progress;
  auto result = models::size_serving(req);
  if (!result) return placed(s, result.errors());
  r.graph = std::move(result).value();
  keep_conversions(r.graph->candidates);
  keep_conversions(r.graph->verified);
  if (r.graph->recommended)
    if (auto refused = beyond_max_gpus(s, r.graph->recommended->gpus)) return *refused;
  return r;
}

std::string serving_simulation_text(const ServingSimulationReport& r) {
  std::string out = "Serving simulation: " + r.scenario + " on " + r.node +
                    (r.offline_requests > 0 ? ", offline: " + std::to_string(r.offline_requests) +
                                                  " requests queued at t = 0 (makespan " + ms(r.llm ? r.llm->makespan_s : 0) + ")"
                                            : " at " + num(r.rate) + " requests/s") +
                    "\n\n";
  if (r.llm) {
    const auto& e = *r.llm_estimate;
    const auto& m = *r.llm;
    Table t{{"", "simulated", "analytic"}, {}, {false, true, true}};
    // Rates and percentiles of no completed request are not 0: they were not measured.
    const bool measured = m.completed > 0;
    const std::string none = "not measured (no request completed)";
    t.rows.push_back({"requests/s", measured ? num(m.requests_per_second) : none,
                      num(e.requests_per_second * r.replicas) + " capacity"});
    t.rows.push_back({"output tokens/s", measured ? num(m.output_tokens_per_second) : none,
                      num(e.output_tokens_per_second * r.replicas) + " capacity"});
    t.rows.push_back({"time to first token p50 / p99", measured ? ms(m.ttft.p50.mean) + " / " + ms(m.ttft.p99.mean) : none,
                      ms(e.ttft_unloaded.value()) + " unloaded"});
    t.rows.push_back({"time per output token p50 / p99", measured ? ms(m.tpot.p50.mean) + " / " + ms(m.tpot.p99.mean) : none,
                      ms(e.tpot_single.value()) + " at 1 sequence, " + ms(e.tpot_at_max.value()) + " at " +
                          (r.pipeline_parallel > 1
                               ? std::to_string(e.max_concurrent_sequences / r.pipeline_parallel) + " per batch"
                               : std::to_string(e.max_concurrent_sequences))});
    t.rows.push_back({"end to end p50 / p95 / p99",
                      measured ? ms(m.end_to_end.p50.mean) + " / " + ms(m.end_to_end.p95.mean) + " / " +
                                     ms(m.end_to_end.p99.mean)
                               : none,
                      ""});
    // With pipeline stages the simulation follows one of a replica's p batches in flight.
    const int stages = r.pipeline_parallel;
    if (stages > 1)
      t.rows.push_back({"running sequences per pipeline batch (mean / peak)",
                        num(m.mean_running) + " / " + std::to_string(m.peak_running),
                        std::to_string(e.max_concurrent_sequences / stages) + " fit in each of " +
                            std::to_string(stages) + " (KV cache " + num(e.kv_capacity_tokens) + " tokens)"});
    else
      t.rows.push_back({"running sequences (mean / peak)", num(m.mean_running) + " / " + std::to_string(m.peak_running),
                        std::to_string(e.max_concurrent_sequences) + " fit (KV cache " +
                            num(e.kv_capacity_tokens) + " tokens)"});
    t.rows.push_back({"KV cache in use", num(100 * m.kv_utilization) + " %", ""});
    if (m.preemptions > 0)
      t.rows.push_back({"preemptions (KV cache full, recomputed)", std::to_string(m.preemptions), ""});
    out += render_text(t);
    if (m.saturated)
      out += "\nSATURATED: " + num(r.rate) + " requests/s offered, " +
             (measured ? num(m.requests_per_second) + " completed" : std::string("none completed")) +
             "; the queue grows by " + num(m.queue_growth_per_second) + " requests/s (" +
             std::to_string(m.waiting_at_end) +
             " waiting at the end). Latencies are of the requests that finished; add replicas or GPUs.\n";
    out += "\nPer replica: " + to_string(e.weights_per_gpu) + " of weights per GPU; " + e.formula + "\n";
    const bool kv_bound = m.kv_utilization > 0.9 || m.preemptions > 0;
    out += "Constraint: " + std::string(kv_bound ? "the KV cache (memory)" : "decode steps (memory bandwidth)") + ".\n";
    if (kv_bound || e.kv_limited_sequences < 32) {
      // The remedies the deployment has not taken yet: an 8-bit cache, smaller weights, more GPUs.
      std::vector<std::string> remedies;
      if (models::bytes_per_value(r.kv_cache) >= 2.0)
        remedies.push_back("an FP8 KV cache (workload.kv_cache: fp8) doubles that");
      if (models::bytes_per_value(r.weights) >= 2.0)
        remedies.push_back("FP8 or INT4 weights (workload.precision) free memory for it");
      else if (models::bytes_per_value(r.weights) >= 1.0)
        remedies.push_back("INT4 weights (workload.precision) free memory for it");
      remedies.push_back("more GPUs per replica (deployment.tensor_parallel) add theirs");
      std::string list;
      for (std::size_t i = 0; i < remedies.size(); ++i)
        list += (i == 0 ? "" : i + 1 == remedies.size() ? (remedies.size() > 2 ? ", and " : " and ") : ", ") + remedies[i];
      out += "The KV cache holds " + num(e.kv_capacity_tokens) + " tokens, about " +
             std::to_string(e.kv_limited_sequences) + " running sequences: " + list + ".\n";
    }
    return out;
  }
  const auto& g = *r.graph;
  Table t{{"", "simulated (95 % CI)", "analytic"}, {}, {false, true, true}};
  // No request reached the end of the graph: its rate and latencies were not measured.
  const bool measured = !g.simulation.latency_cdf.empty();
  auto observed = [&](std::string text) { return measured ? text : std::string("not measured (no request completed)"); };
  t.rows.push_back({"throughput (requests/s)", observed(num(g.simulated_throughput)),
                    num(g.analytic.capacity) + " capacity (" + g.analytic.constraint + ")"});
  t.rows.push_back({"latency p50", observed(interval_ms(g.latency.p50)), ""});
  t.rows.push_back({"latency p95", observed(interval_ms(g.latency.p95)), ""});
  t.rows.push_back({"latency p99", observed(interval_ms(g.latency.p99)), ms(g.analytic.p99_latency.value()) + " (estimate)"});
  t.rows.push_back({"latency mean", observed(ms(g.simulation.latency.mean)), ms(g.analytic.mean_latency.value())});
  out += render_text(t);
  if (!g.analytic_note.empty()) out += "Note: " + g.analytic_note + ".\n";
  Table stages{{"stage", "servers", "batch", "share", "utilization (sim)", "utilization (analytic)", "capacity (req/s)"},
               {},
               {false, true, true, false, true, true, true}};
  for (std::size_t i = 0; i < g.plan.stages.size(); ++i) {
    const auto& p = g.plan.stages[i];
    const auto& a = g.analytic.stages[i];
    stages.rows.push_back({p.name, std::to_string(p.servers), std::to_string(p.max_batch_requests), p.share.description,
                           num(100 * g.stage_utilization[i]) + " %", num(100 * a.utilization) + " %", num(a.capacity)});
  }
  out += "\n" + render_text(stages);
  out += "\nConstraint: " + g.simulation.constraint + " (" + num(100 * g.simulation.constraint_utilization) + " % busy)";
  if (g.simulation.elevation_gain)
    out += "; elevating it gives up to +" + num(100 * *g.simulation.elevation_gain) + " % before " +
           g.simulation.next_constraint + " binds";
  return out + ".\nGPUs used: " + std::to_string(g.plan.gpus) + " x " + g.plan.gpu + " (" +
         sharing_name(g.plan.sharing) + ").\n";
}

std::string serving_simulation_json(const ServingSimulationReport& r) {
  json j{{"scenario", r.scenario}, {"node", r.node}, {"rate", r.rate}};
  if (r.llm) {
    const auto& m = *r.llm;
    const bool measured = m.completed > 0;  // else the rates are null, not 0
    j["llm"] = {{"requests_per_second", measured ? finite(m.requests_per_second) : json(nullptr)},
                {"output_tokens_per_second", measured ? finite(m.output_tokens_per_second) : json(nullptr)},
                {"ttft_s", m.completed > 0 ? percentiles_json(m.ttft) : json(nullptr)},
                {"tpot_s", m.completed > 0 ? percentiles_json(m.tpot) : json(nullptr)},
                {"end_to_end_s", m.completed > 0 ? percentiles_json(m.end_to_end) : json(nullptr)},
                {"ttft_mean_s", m.completed > 0 ? finite(m.ttft_mean) : json(nullptr)},
                {"tpot_mean_s", m.completed > 0 ? finite(m.tpot_mean) : json(nullptr)},
                {"end_to_end_mean_s", m.completed > 0 ? finite(m.end_to_end_mean) : json(nullptr)},
                {"makespan_s", finite(m.makespan_s)},
                {"mean_running", finite(m.mean_running)},
                {"peak_running", m.peak_running},
                {"kv_utilization", finite(m.kv_utilization)},
                {"preemptions", m.preemptions},
                {"saturated", m.saturated},
                {"queue_growth_per_second", finite(m.queue_growth_per_second)},
                {"waiting_at_end", m.waiting_at_end},
                {"completed", m.completed},
                {"analytic",
                 {{"ttft_unloaded_s", r.llm_estimate->ttft_unloaded.value()},
                  {"tpot_single_s", r.llm_estimate->tpot_single.value()},
                  {"tpot_at_max_s", r.llm_estimate->tpot_at_max.value()},
                  {"max_concurrent_sequences", r.llm_estimate->max_concurrent_sequences},
                  {"kv_capacity_tokens", r.llm_estimate->kv_capacity_tokens},
                  {"output_tokens_per_second_per_gpu", r.llm_estimate->output_tokens_per_second_per_gpu}}}};
    return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  }
  const auto& g = *r.graph;
  const bool measured = !g.simulation.latency_cdf.empty();  // else null, not 0
  j["throughput"] = measured ? finite(g.simulated_throughput) : json(nullptr);
  j["latency_s"] = measured ? percentiles_json(g.latency) : json(nullptr);
  j["constraint"] = g.simulation.constraint;
  j["analytic"] = {{"capacity", finite(g.analytic.capacity)},
                   {"constraint", g.analytic.constraint},
                   {"mean_latency_s", finite(g.analytic.mean_latency.value())},
                   {"p99_latency_s", finite(g.analytic.p99_latency.value())},
                   {"note", g.analytic_note.empty() ? json(nullptr) : json(g.analytic_note)}};
  j["stages"] = json::array();
  for (std::size_t i = 0; i < g.plan.stages.size(); ++i)
    j["stages"].push_back({{"name", g.plan.stages[i].name},
                           {"servers", g.plan.stages[i].servers},
                           {"batch_requests", g.plan.stages[i].max_batch_requests},
                           {"share", g.plan.stages[i].share.description},
                           {"utilization", finite(g.stage_utilization[i])},
                           {"analytic_utilization", finite(g.analytic.stages[i].utilization)},
                           {"capacity", finite(g.analytic.stages[i].capacity)}});
  j["gpus"] = g.plan.gpus;
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string serving_sizing_text(const ServingSizingReport& r) {
  std::string out = "Serving sizing: " + r.scenario + "\n\n";
  auto cost_text = [](const std::optional<MoneyPerSecond>& c) {
    return c ? to_string(*c) + " (" + num(c->value() * units::month) + " USD/month)" : std::string("no price");
  };
  if (r.llm) {
    const auto& res = *r.llm;
    if (!res.recommended) return out + "No deployment meets the SLO: " + res.recommendation + "\n";
    const auto& d = *res.recommended;
    out += "Recommendation (" + res.recommendation + "):\n  " + d.summary + "\n  cost " + cost_text(d.cost) + "\n";
    out += "  replicas " + std::to_string(d.min_replicas) + " (trough) to " + std::to_string(d.replicas) +
           " (peak), " + plural(d.gpus, "GPU") + " on " + plural(d.nodes, "node") + "\n";
    if (d.token_cost) out += "  tokens " + models::llm_token_cost_text(*d.token_cost) + "\n";
    if (!d.replicas_by_hour.empty()) {
      out += "  replicas by hour (from midnight):";
      for (std::size_t h = 0; h < d.replicas_by_hour.size(); ++h)
        out += (h % 6 == 0 ? "\n    " : "  ") + (h < 10 ? std::string("0") : std::string()) + std::to_string(h) +
               "h " + std::to_string(d.replicas_by_hour[h]);
      out += "\n";
      if (d.autoscaled_cost)
        out += "  autoscaled hour by hour: " + cost_text(*d.autoscaled_cost) + " on average (the peak's nodes around the clock: " +
               cost_text(d.cost) + ")\n";
    }
    if (d.simulation && d.simulation->completed == 0)
      out += "  simulated at peak: TTFT and TPOT not measured (no request completed)\n";
    else if (d.simulation)
      out += "  simulated at peak: TTFT p99 " + ms(d.simulation->ttft.p99.mean) + ", TPOT p99 " +
             ms(d.simulation->tpot.p99.mean) + "\n";
  } else {
    const auto& res = *r.graph;
    out += "Evaluated " + std::to_string(res.evaluated) + " deployments; " + std::to_string(res.candidates.size()) +
           " meet the SLO analytically.\n";
    if (!res.recommended) return out + "No deployment meets the SLO: " + res.recommendation + "\n";
    const auto& d = *res.recommended;
    out += "\nRecommendation (" + res.recommendation + "):\n  " + d.summary + "\n  cost " + cost_text(d.cost) + "\n";
    out += "  nodes " + std::to_string(d.min_nodes) + " (trough) to " + std::to_string(d.nodes) + " (peak)\n";
    if (d.simulated_latency) {
      out += "  simulated at peak: p50 " + ms(d.simulated_latency->p50.mean) + ", p99 " +
             ms(d.simulated_latency->p99.mean) + "\n";
      const double simulated = d.simulated_latency->p99.mean, analytic = d.analytic.p99_latency.value();
      if (simulated > 0 && std::isfinite(analytic) && std::abs(analytic / simulated - 1) > models::kAnalyticAgreement)
        out += "  note: the analytic p99 is " + num(100 * std::abs(analytic / simulated - 1)) + " % " +
               (analytic > simulated ? "above" : "below") + " the simulated one" +
               ": the batch-service approximation takes one batch size per load; the batches formed vary more" +
               "\n";
    }
    Table alt{{"deployment", "cost", "verified"}, {}, {false, true, false}};
    for (const auto& v : res.verified)
      alt.rows.push_back({v.summary, cost_text(v.cost), v.verified ? (v.meets_slo ? "meets SLO" : "misses SLO") : "-"});
    if (!alt.rows.empty()) out += "\nVerified by simulation:\n" + render_text(alt);
  }
  if (auto pools = serving_node_pools(r)) out += "\nNode pools:\n" + render_text(serving_node_pool_table(*pools));
  const auto& skipped = r.llm ? r.llm->skipped : r.graph->skipped;
  if (!skipped.empty()) {
    out += "\nSkipped:\n";
    for (const auto& [what, why] : skipped) out += "  " + what + ": " + why + "\n";
  }
  return out;
}

std::string serving_sizing_json(const ServingSizingReport& r) {
  json j{{"scenario", r.scenario}};
  auto cost = [](const std::optional<MoneyPerSecond>& c) { return c ? json(c->value() * units::hour) : json(nullptr); };
  if (r.llm && r.llm->recommended) {
    const auto& d = *r.llm->recommended;
    j["recommended"] = {{"summary", d.summary},
                        {"node_type", d.node_type},
                        {"tensor_parallel", d.spec.tensor_parallel},
                        {"pipeline_parallel", d.spec.pipeline_parallel},
                        {"replicas", d.replicas},
                        {"min_replicas", d.min_replicas},
                        {"gpus", d.gpus},
                        {"cost_per_hour_usd", cost(d.cost)},
                        {"meets_slo", d.meets_slo}};
    if (!d.replicas_by_hour.empty()) {
      j["recommended"]["replicas_by_hour"] = d.replicas_by_hour;
      j["recommended"]["nodes_by_hour"] = d.nodes_by_hour;
      j["recommended"]["autoscaled_cost_per_hour_usd"] = cost(d.autoscaled_cost);
    }
    if (d.token_cost)
      j["recommended"]["token_cost"] = {{"usd_per_million_input_tokens", finite(d.token_cost->usd_per_million_input)},
                                        {"usd_per_million_output_tokens", finite(d.token_cost->usd_per_million_output)},
                                        {"usd_per_million_tokens", finite(d.token_cost->usd_per_million_tokens)},
                                        {"prefill_share", finite(d.token_cost->prefill_share)},
                                        {"input_tokens_per_second", finite(d.token_cost->input_tokens_per_second)},
                                        {"output_tokens_per_second", finite(d.token_cost->output_tokens_per_second)},
                                        {"basis", d.token_cost->basis}};
  } else if (r.graph && r.graph->recommended) {
    const auto& d = *r.graph->recommended;
    j["recommended"] = {{"summary", d.summary},   {"node_type", d.node_type},      {"gpus", d.gpus},
                        {"nodes", d.nodes},       {"min_nodes", d.min_nodes},      {"cost_per_hour_usd", cost(d.cost)},
                        {"meets_slo", d.meets_slo}, {"verified", d.verified}};
    if (d.simulated_latency) j["recommended"]["simulated_latency_s"] = percentiles_json(*d.simulated_latency);
  }
  j["node_pools"] = json::array();
  if (auto pools = serving_node_pools(r))
    for (const auto& p : *pools)
      j["node_pools"].push_back({{"name", p.name},
                                 {"instance_type", p.instance_type},
                                 {"provider", p.provider},
                                 {"gpus_per_node", p.gpus_per_node},
                                 {"min_nodes", p.min_nodes},
                                 {"max_nodes", p.max_nodes},
                                 {"resource", pool_resource(p)},
                                 {"per_pod", p.gpus_per_pod}});
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

Result<std::vector<NodePool>> serving_node_pools(const ServingSizingReport& r) {
  auto find_type = [&](const std::string& id) -> const models::NodeType* {
    for (const auto& t : r.node_types)
      if (t.id == id) return &t;
    return nullptr;
  };
  std::vector<NodePool> pools;
  if (r.llm && r.llm->recommended) {
    const auto& d = *r.llm->recommended;
    const auto* t = find_type(d.node_type);
    if (t == nullptr) return Diagnostic{{}, "", "unknown node type " + d.node_type, ""};
    // A replica of more than a node runs as one pod per node it spans (d.k8s.count GPUs each).
    const int replica_gpus = models::llm_replica_gpus(d.spec);
    const int pods_per_replica = replica_gpus / std::max(1, d.k8s.count);
    pools.push_back({"serve-" + t->cluster.gpu.id, t->provider, t->name, t->cluster.gpu.id, t->cluster.gpus_per_node,
                     d.nodes, std::max(1, (d.min_replicas * replica_gpus + t->cluster.gpus_per_node - 1) /
                                               t->cluster.gpus_per_node),
                     d.nodes, false, std::nullopt, d.k8s.count, t->cluster.gpu.vendor == "google", false,
                     d.replicas * pods_per_replica, pods_per_replica});
    pools.back().vendor = t->cluster.gpu.vendor;
    return pools;
  }
  if (!r.graph || !r.graph->recommended) return Diagnostic{{}, "", "no recommended deployment", ""};
  const auto& d = *r.graph->recommended;
  const auto* t = find_type(d.node_type);
  if (t == nullptr) return Diagnostic{{}, "", "unknown node type " + d.node_type, ""};
  NodePool pool{"serve-" + t->cluster.gpu.id, t->provider, t->name, t->cluster.gpu.id, t->cluster.gpus_per_node,
                d.nodes, std::max(1, d.min_nodes), d.nodes, false, std::nullopt, 1, t->cluster.gpu.vendor == "google",
                false, 1};
  pool.vendor = t->cluster.gpu.vendor;
  if (!d.k8s.empty() && d.k8s.front().resource.starts_with("nvidia.com/mig-"))
    pool.mig_profile = d.k8s.front().resource.substr(std::string("nvidia.com/mig-").size());
  if (!d.k8s.empty()) pool.gpus_per_pod = d.k8s.front().count;
  if (!d.k8s.empty()) pool.pods = d.k8s.front().max_replicas;
  pools.push_back(pool);
  return pools;
}

Result<ServingComparison> compare_serving_gpus(const Scenario& s, const hardware::Catalog& catalog,
                                               const std::vector<std::string>& gpus) {
  if (!s.inference || !s.inference->llm || !s.inference->ttft_p99 || !s.inference->tpot_p99)
    return placed(s, {Diagnostic{{}, "workload.type",
                                 "compare sizes an llm-serving scenario for its SLO (slo: {ttft_p99, tpot_p99})",
                                 "capsim size sizes the other kinds"}});
  std::vector<std::string> ids = gpus.empty() ? s.hardware.gpus : gpus;
  if (ids.empty())
    return Diagnostic{{}, "--gpus", "no GPU types to compare", "e.g. --gpus h100-sxm-80gb,h200-sxm-141gb,l40s"};
  std::vector<Diagnostic> errors;
  for (const auto& id : ids)
    if (auto g = catalog.gpu(id); !g)
      for (auto d : g.errors()) {
        d.key_path = "--gpus";
        errors.push_back(std::move(d));
      }
  if (!errors.empty()) return errors;
  ServingComparison c;
  c.scenario = s.name;
  c.peak_rate = s.inference->arrivals.peak_rate().value();
  c.ttft_p99 = *s.inference->ttft_p99;
  c.tpot_p99 = *s.inference->tpot_p99;
  for (const auto& id : ids) {
    Scenario one = s;
    one.hardware.gpus = {id};
    ServingComparisonRow row;
    row.gpu = id;
    auto sized = size_serving_scenario(one, catalog);
    if (!sized) {
      row.why_none = sized.errors().front().message;
    } else if (!sized->llm || !sized->llm->recommended) {
      row.why_none = sized->llm ? sized->llm->recommendation : "no LLM sizing";
    } else {
      const auto& d = *sized->llm->recommended;
      row.deployment = d;
      if (c.peak_rate > 0) row.headroom = d.estimate.requests_per_second * d.replicas / c.peak_rate - 1;
      for (const auto& conv : sized->conversions) add_conversion(c.conversions, conv);
    }
    c.rows.push_back(std::move(row));
  }
  // Cheapest first (a priced deployment before an unpriced one), then fewest GPUs.
  std::stable_sort(c.rows.begin(), c.rows.end(), [](const auto& a, const auto& b) {
    const auto key = [](const ServingComparisonRow& r) {
      if (!r.deployment) return std::pair{2.0, 0.0};
      if (!r.deployment->cost) return std::pair{1.0, static_cast<double>(r.deployment->gpus)};
      return std::pair{0.0, r.deployment->cost->value()};
    };
    return key(a) < key(b);
  });
  return c;
}

std::string serving_comparison_text(const ServingComparison& c) {
  std::string out = "GPU comparison: " + c.scenario + " at " + num(c.peak_rate) + " requests/s, TTFT p99 <= " +
                    ms(c.ttft_p99.value()) + ", TPOT p99 <= " + ms(c.tpot_p99.value()) + "\n\n";
  Table t{{"GPU", "node type", "GPUs", "replicas", "cost/month (USD)", "USD/M input", "USD/M output", "headroom",
           "TTFT / TPOT p99 (simulated)"},
          {},
          {false, false, true, true, true, true, true, true, false}};
  std::vector<std::string> none;
  for (const auto& r : c.rows) {
    if (!r.deployment) {
      none.push_back(r.gpu + ": " + r.why_none);
      continue;
    }
    const auto& d = *r.deployment;
    const bool measured = d.simulation && d.simulation->completed > 0;
    t.rows.push_back({r.gpu, d.node_type + " x " + std::to_string(d.nodes), std::to_string(d.gpus),
                      std::to_string(d.replicas) + " x TP=" + std::to_string(d.spec.tensor_parallel),
                      d.cost ? num(d.cost->value() * units::month) : "no price",
                      d.token_cost ? significant(d.token_cost->usd_per_million_input, 3) : "-",
                      d.token_cost ? significant(d.token_cost->usd_per_million_output, 3) : "-",
                      r.headroom ? "+" + significant(100 * *r.headroom, 3) + " %" : "-",
                      measured ? ms(d.simulation->ttft.p99.mean) + " / " + ms(d.simulation->tpot.p99.mean)
                               : "not measured"});
  }
  if (!t.rows.empty()) out += render_text(t);
  if (!none.empty()) {
    out += "\nNo deployment meets the SLO:\n";
    for (const auto& n : none) out += "  " + n + "\n";
  }
  out += "\nEach row is `capsim size` with hardware.gpus set to that GPU: whole nodes at the catalog's price, "
         "around the clock. Cost per million tokens: the hour's price split between input and output tokens by "
         "their GPU time, over the tokens served at the peak. Headroom: the replicas' analytic capacity over the "
         "peak rate.\n";
  for (const auto& conv : c.conversions) out += "Currency: " + conv + "\n";
  return out;
}

std::string serving_comparison_json(const ServingComparison& c) {
  json j{{"scenario", c.scenario},
         {"peak_rate", finite(c.peak_rate)},
         {"ttft_p99_bound_s", finite(c.ttft_p99.value())},
         {"tpot_p99_bound_s", finite(c.tpot_p99.value())},
         {"currency", "USD"}};
  j["gpus"] = json::array();
  for (const auto& r : c.rows) {
    json row{{"gpu", r.gpu}};
    if (!r.deployment) {
      row["meets_slo"] = false;
      row["why"] = r.why_none;
      j["gpus"].push_back(row);
      continue;
    }
    const auto& d = *r.deployment;
    const bool measured = d.simulation && d.simulation->completed > 0;
    row["meets_slo"] = d.meets_slo;
    row["node_type"] = d.node_type;
    row["nodes"] = d.nodes;
    row["gpu_count"] = d.gpus;
    row["replicas"] = d.replicas;
    row["tensor_parallel"] = d.spec.tensor_parallel;
    row["pipeline_parallel"] = d.spec.pipeline_parallel;
    row["cost_per_month"] = d.cost ? finite(d.cost->value() * units::month) : json(nullptr);
    row["cost_per_million_input_tokens"] = d.token_cost ? finite(d.token_cost->usd_per_million_input) : json(nullptr);
    row["cost_per_million_output_tokens"] = d.token_cost ? finite(d.token_cost->usd_per_million_output) : json(nullptr);
    row["cost_per_million_tokens"] = d.token_cost ? finite(d.token_cost->usd_per_million_tokens) : json(nullptr);
    row["headroom"] = r.headroom ? finite(*r.headroom) : json(nullptr);
    row["ttft_p99_s"] = measured ? finite(d.simulation->ttft.p99.mean) : json(nullptr);
    row["tpot_p99_s"] = measured ? finite(d.simulation->tpot.p99.mean) : json(nullptr);
    row["summary"] = d.summary;
    j["gpus"].push_back(row);
  }
  j["conversions"] = c.conversions;
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace capsim::scenarios
