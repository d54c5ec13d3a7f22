#include "capsim/scenarios/runner.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>

#include "capsim/core/text.hpp"
#include "capsim/scenarios/currency.hpp"
#include "capsim/models/performance.hpp"
#include "capsim/version.hpp"

namespace capsim::scenarios {
namespace {

// Why a serving run's rate and latencies are "not measured".
constexpr const char* kNoRequestCompleted = "no request completed in the simulated window";

std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}


// The deployment a sized serving plan shows: the recommendation, or when no verified
// candidate met the SLO the closest one (the plan then says it misses); null when neither.
const models::SizedLlmDeployment* planned_llm(const ServingSizingReport& z) {
  if (!z.llm) return nullptr;
  return z.llm->recommended ? &*z.llm->recommended : z.llm->closest ? &*z.llm->closest : nullptr;
}
const models::SizedDeployment* planned_graph(const ServingSizingReport& z) {
  if (!z.graph) return nullptr;
  return z.graph->recommended ? &*z.graph->recommended : z.graph->closest ? &*z.graph->closest : nullptr;
}

// The planned serving deployment as the scenario's own, so the simulation runs what was
// sized, with the run the sizing verified it with (the same figures, not another run).
Scenario with_recommended_deployment(const Scenario& s, const ServingSizingReport& z) {
  Scenario out = s;
  auto& inf = *out.inference;
  if (const auto* d = planned_llm(z)) {
    inf.node = d->node_type;
    inf.tensor_parallel = d->spec.tensor_parallel;
    inf.pipeline_parallel = d->spec.pipeline_parallel;
    inf.max_num_seqs = d->spec.max_concurrent;  // the batch the sizing verified
    inf.replicas = d->replicas;
  } else if (const auto* g = planned_graph(z)) {
    // At the peak rate, as the sizing verified it: the plan's p99 is the busiest hour's.
    const auto peak = inf.arrivals.peak_rate();
    inf.arrivals = models::ArrivalSpec{};
    inf.arrivals.rate = peak;
    inf.node = g->node_type;
    inf.sharing = g->deployment.sharing;
    inf.stages = g->deployment.stages;
  }
  return out;
}

// Whether the sized plan shows a deployment that missed the SLO in simulation.
bool plans_closest(const ServingSizingReport& z) {
  return (z.llm && !z.llm->recommended && z.llm->closest) || (z.graph && !z.graph->recommended && z.graph->closest);
}

std::optional<models::NodeType> usd_node_type(const hardware::Catalog& catalog, const Scenario& s, const std::string& id,
                                              std::vector<std::string>& conversions) {
  auto node = models::node_type_by_id(catalog, id, commitment_price_field(s.commitment));
  if (!node) return std::nullopt;
  std::vector<models::NodeType> one{*node};
  add_conversion(conversions, prices_in_usd(one, catalog, s).front());
  return one.front();
}

std::string llm_or_graph_reason(const ServingSizingReport& z) {
  return z.llm ? z.llm->recommendation : z.graph ? z.graph->recommendation : std::string();
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out.empty() ? "any" : out;
}

// The question as capsim answered it: the keys that decide the answer, defaults filled in.
std::vector<std::pair<std::string, std::string>> resolved_question(const Scenario& s) {
  std::vector<std::pair<std::string, std::string>> q;
  auto count = [](double v) { return human_count(v); };
  if (s.inference) {
    const auto& inf = *s.inference;
    q.emplace_back("workload.type", inf.llm ? "llm-serving" : "inference");
    if (inf.llm) {
      q.emplace_back("workload.model", inf.shape.name);
      if (!inf.request_lengths_file.empty())
        q.emplace_back("workload.request_lengths", inf.request_lengths_file + " (" +
                                                       std::to_string(inf.mix.requests.size()) + " requests)");
      const std::string mean = inf.request_lengths_file.empty() ? "" : " (mean)";
      // A distribution: what was assumed, and the mean of the requests drawn from it.
      const auto length = [&](const models::LlmLengthDistribution& d, int mix_mean) {
        if (!inf.request_lengths_file.empty() || d.is_fixed()) return std::to_string(mix_mean) + mean;
        return models::llm_length_text(d) + " (" + std::to_string(inf.mix.requests.size()) +
               " requests drawn, mean " + std::to_string(mix_mean) + ")";
      };
      q.emplace_back("workload.prompt_tokens", length(inf.prompt_lengths, inf.mix.prompt_tokens));
      q.emplace_back("workload.output_tokens", length(inf.output_lengths, inf.mix.output_tokens));
      q.emplace_back("workload.kv_cache", std::string(models::precision_name(inf.kv_cache)));
      // Each engine setting as applied, and whose it is: the scenario's, the engine's
      // (data/catalog/llm_engines.yaml) or capsim's default.
      const auto from = [&](const char* key) {
        const auto it = inf.engine_setting_origin.find(key);
        return it == inf.engine_setting_origin.end() ? std::string() : " (" + it->second + ")";
      };
      q.emplace_back("workload.engine", inf.llm_engine + " (" + inf.llm_engine_name + ")");
      q.emplace_back("workload.kv_admission",
                     std::string(inf.kv_admission == models::LlmKvAdmission::reserve_full ? "reserved" : "on-demand") +
                         from("kv_admission"));
      q.emplace_back("workload.chunked_prefill", std::string(inf.chunked_prefill ? "true" : "false") + from("chunked_prefill"));
      q.emplace_back("workload.max_batched_tokens", std::to_string(inf.max_batched_tokens) + from("max_batched_tokens"));
      q.emplace_back("workload.batching", inf.batching == models::LlmBatching::static_batches ? "static" : "continuous");
      q.emplace_back("workload.decode_attention", inf.gqa_shared_kv ? "gqa-shared" : "per-query-head");
      q.emplace_back("workload.kv_memory_fraction",
                     significant(inf.memory_utilization, 3) +
                         (inf.kv_budget == models::LlmKvBudget::share_of_free ? " of what the weights leave free"
                                                                              : " of the device") +
                         from("kv_memory_fraction"));
      if (inf.offline_requests > 0)
        q.emplace_back("workload.offline_requests", std::to_string(inf.offline_requests));
      if (inf.server_requests > 0) q.emplace_back("arrivals.requests", std::to_string(inf.server_requests));
      if (inf.speculation.tokens > 0)
        q.emplace_back("workload.speculative",
                       std::to_string(inf.speculation.tokens) + " tokens at acceptance " +
                           significant(inf.speculation.acceptance_rate, 3) + ", draft " +
                           (inf.speculation.has_draft ? inf.speculation.draft.name : std::string("none (free proposals)")));
    } else {
      std::string stages;
      for (const auto& st : inf.graph.stages) stages += (stages.empty() ? "" : ", ") + st.name;
      q.emplace_back("workload.graph", stages);
    }
    q.emplace_back("workload.precision", std::string(models::precision_name(inf.exec.precision)));
    q.emplace_back("arrivals.peak_rate", count(inf.arrivals.peak_rate().value()) + " requests/s");
    if (inf.p99) q.emplace_back("slo.p99", to_string(*inf.p99));
    if (inf.ttft_p99) q.emplace_back("slo.ttft_p99", to_string(*inf.ttft_p99));
    if (inf.tpot_p99) q.emplace_back("slo.tpot_p99", to_string(*inf.tpot_p99));
    if (!inf.node.empty()) q.emplace_back("deployment.node", inf.node);
  } else if (s.training.service) {
    q.emplace_back("workload.type", "service");
    q.emplace_back("workload.gpus", std::to_string(s.training.service_gpus));
  } else {
    q.emplace_back("workload.type", "training");
    q.emplace_back("workload.model", s.training.model_name);
    if (s.training.is_transformer()) q.emplace_back("workload.tokens", count(s.training.tokens));
    else q.emplace_back("workload.samples", count(s.training.samples * s.training.epochs) + " (" +
                                                count(s.training.epochs) + " epochs)");
    q.emplace_back("workload.precision", std::string(models::precision_name(s.training.options.compute)));
    const auto& opt = s.training.options;
    q.emplace_back("workload.attention", opt.attention == models::Attention::eager
                                             ? std::string("eager")
                                             : "flash (" + std::string(models::flash_kernel_name(opt.flash_kernel)) + ")");
    q.emplace_back("workload.kernels", std::string(models::kernels_name(opt.kernels)));
    q.emplace_back("workload.tp_comm_overlap", opt.tp_comm_overlap ? "true" : "false");
    if (opt.tp_comm_overlap)
      q.emplace_back("workload.tp_comm_overlap_backward", opt.tp_comm_overlap_backward ? "true" : "false");
    q.emplace_back("workload.grad_reduce_overlap", opt.overlap_gradient_reduce ? "true" : "false");
    q.emplace_back("workload.grad_reduce", opt.fp32_gradient_reduce ? "fp32" : "compute");
    if (s.training.is_transformer()) q.emplace_back("workload.p2p_overlap", opt.overlap_p2p ? "true" : "false");
    if (opt.compute == models::Precision::fp8) {
      q.emplace_back("workload.fp8_weight_cast", opt.fp8_weights_cast_once_per_step ? "once_per_step" : "every_microbatch");
      q.emplace_back("workload.fp8_scaling", opt.fp8_rowwise_scaling ? "rowwise" : "tensorwise");
    }
    if (const auto* shape = std::get_if<models::TransformerShape>(&s.training.model); shape && shape->experts > 1)
      q.emplace_back("workload.moe_dispatch", opt.moe_dispatch_per_node ? "per-node" : "per-expert");
    q.emplace_back("hardware.gpus", joined(s.hardware.gpus));
    if (!s.hardware.scale_out_network.empty())
      q.emplace_back("hardware.scale_out", std::to_string(s.hardware.scale_out_nics) + " x " + s.hardware.scale_out_network);
    q.emplace_back("hardware.min_gpus", std::to_string(s.hardware.min_gpus));
    q.emplace_back("hardware.max_gpus", std::to_string(s.hardware.max_gpus));
    if (s.deadline) q.emplace_back("deadline", to_string(*s.deadline));
    if (s.budget) q.emplace_back("budget", to_string(*s.budget));
  }
  if (!s.inference && !s.training.service) {
    q.emplace_back("hardware.providers", joined(s.hardware.providers));
  }
  q.emplace_back("pricing", std::string(commitment_name(s.commitment)));
  if (s.cost) {
    q.emplace_back("cost.horizon", horizon_text(s.cost->horizon));
    if (!s.training.service && !s.inference) q.emplace_back("cost.runs_per_month", significant(s.cost->runs_per_month, 4));
  }
  return q;
}

std::string runs_a_month(double n) { return significant(n, 3) + (n == 1 ? " run" : " runs") + " a month"; }

int nodes_for(int gpus, int per_node) { return per_node > 0 ? (gpus + per_node - 1) / per_node : gpus; }

// Inference: the planned deployment is the scenario's own when it states one (what its
// expectations test), else the recommendation; either way its latency is the simulation's.
Status plan_serving(const Scenario& scenario, const hardware::Catalog& catalog, RunResult& r, ProgressObserver* progress) {
  auto& p = r.plan;
  const auto& inf = *scenario.inference;
  if (!scenario.hardware.gpus.empty()) {
    auto sized = size_serving_scenario(scenario, catalog, progress);
    if (!sized) return sized.errors();
    r.serving_sizing = std::move(sized).value();
    p.conversions = r.serving_sizing->conversions;
  }
  const bool stated = !inf.node.empty();
  Scenario simulated = scenario;
  if (!stated && r.serving_sizing) {
    simulated = with_recommended_deployment(scenario, *r.serving_sizing);
    r.simulated_recommendation = !simulated.inference->node.empty();
  }
  if (!simulated.inference->node.empty()) {
    auto sim = simulate_serving_scenario(simulated, catalog, progress);
    if (!sim) return sim.errors();
    r.serving_simulation = std::move(sim).value();
  }
  p.basis = stated ? "deployment" : "recommendation";
  if (!r.serving_simulation) return {};
  const auto& sim = *r.serving_simulation;
  auto node = usd_node_type(catalog, scenario, sim.node, p.conversions);
  if (!node) return {};
  p.node_type = node->id;
  p.gpu = node->cluster.gpu.id;
  const int per_node = node->cluster.gpus_per_node;
  NodePool pool{"serve-" + p.gpu, node->provider, node->name, p.gpu, per_node, 1, 1, 1,
                scenario.commitment == Commitment::spot, std::nullopt, 1, node->cluster.gpu.vendor == "google",
                false, 1};
  p.latency_basis = "simulated";
  // No request completed in the measured window: the simulated rate and latencies describe
  // nothing. They stay empty (not 0), and every view and expectation says "not measured".
  auto not_measured = [&](std::vector<std::string> figures) {
    p.not_measured = std::move(figures);
    p.not_measured_reason = kNoRequestCompleted;
  };
  if (sim.llm) {
    const int tp = simulated.inference->tensor_parallel, pp = simulated.inference->pipeline_parallel;
    const int replica_gpus = tp * pp;
    p.gpus = sim.replicas * replica_gpus;
    p.nodes = nodes_for(p.gpus, per_node);
    if (sim.llm->completed > 0) {
      p.ttft_p99 = Seconds(sim.llm->ttft.p99.mean);
      p.tpot_p99 = Seconds(sim.llm->tpot.p99.mean);
      p.throughput = sim.llm->requests_per_second;
    } else {
      not_measured({"throughput", "ttft_p99_seconds", "tpot_p99_seconds"});
    }
    // A replica of more than a node runs as one pod per node it spans.
    pool.gpus_per_pod = std::min(replica_gpus, per_node);
    pool.pods_per_replica = replica_gpus / pool.gpus_per_pod;
    pool.pods = sim.replicas * pool.pods_per_replica;
    p.configuration = plural(sim.replicas, "replica") + " of " + plural(replica_gpus, "GPU") + " (tensor parallel " +
                      std::to_string(tp) + (pp > 1 ? " x pipeline parallel " + std::to_string(pp) : std::string()) +
                      ") on " + plural(p.nodes, "node") + " of " + node->name + " (" + node->id + ")";
  } else {
    const auto& g = *sim.graph;
    p.gpus = g.plan.gpus;
    p.nodes = nodes_for(p.gpus, per_node);
    if (!g.simulation.latency_cdf.empty()) {  // empty when no request reached the end
      p.p99 = Seconds(g.latency.p99.mean);
      p.throughput = g.simulated_throughput;
    } else {
      not_measured({"throughput", "p99_seconds"});
    }
    p.configuration = plural(p.gpus, "GPU") + " (" + p.gpu + ") on " + plural(p.nodes, "node") + " of " + node->name +
                      " (" + node->id + ")";
    if (r.simulated_recommendation && planned_graph(*r.serving_sizing)) {
      const auto& d = *planned_graph(*r.serving_sizing);
      if (!d.k8s.empty() && d.k8s.front().resource.starts_with("nvidia.com/mig-"))
        pool.mig_profile = d.k8s.front().resource.substr(std::string("nvidia.com/mig-").size());
      if (!d.k8s.empty()) pool.gpus_per_pod = d.k8s.front().count;
      if (!d.k8s.empty()) pool.pods = d.k8s.front().max_replicas;
    }
  }
  p.throughput_unit = "requests/s";
  // The node pool: what the planned deployment needs at peak; a sized one scales down to its trough.
  pool.nodes = pool.max_nodes = p.nodes;
  pool.min_nodes = p.nodes;
  if (r.simulated_recommendation) {
    if (auto pools = serving_node_pools(*r.serving_sizing); pools && !pools->empty()) {
      pool.min_nodes = pools->front().min_nodes;
      pool.name = pools->front().name;
    }
  }
  p.node_pools = {pool};
  if (node->price) {
    p.cost_per_month = MoneyPerSecond(node->price->value() * p.nodes, Currency::usd);
    p.cost_basis = plural(p.nodes, "node") + " at " + to_string(*node->price) + " each, around the clock (" +
                   std::string(commitment_price_field(scenario.commitment)) + ")";
  }
  // LLM serving: what a token costs, over the tokens the simulation served (the analytic
  // capacity at the offered rate when none completed).
  if (sim.llm && sim.llm_estimate && p.cost_per_month) {
    const bool measured = sim.llm->completed > 0;
    const double served = measured ? sim.llm->requests_per_second
                                   : std::min(sim.rate, sim.llm_estimate->requests_per_second * sim.replicas);
    const std::string basis = measured ? "simulated: " + significant(served, 4) + " requests/s served"
                                       : "analytic: " + significant(served, 4) + " requests/s";
    if (auto c = models::llm_token_cost(*p.cost_per_month, *sim.llm_estimate, inf.mix, served,
                                        measured ? sim.llm->output_tokens_per_second : 0, basis)) {
      p.usd_per_million_input_tokens = c->usd_per_million_input;
      p.usd_per_million_output_tokens = c->usd_per_million_output;
      p.usd_per_million_tokens = c->usd_per_million_tokens;
      p.token_cost_basis = models::llm_token_cost_formula(*c, *p.cost_per_month);
    }
  }
  if (stated) {
    p.reason = "the deployment the scenario states";
    if (r.serving_sizing) {
      const bool llm = r.serving_sizing->llm.has_value();
      const auto rec_gpus = llm ? (r.serving_sizing->llm->recommended ? r.serving_sizing->llm->recommended->gpus : 0)
                                : (r.serving_sizing->graph->recommended ? r.serving_sizing->graph->recommended->gpus : 0);
      const auto rec_cost = llm ? (r.serving_sizing->llm->recommended ? r.serving_sizing->llm->recommended->cost : std::nullopt)
                                : (r.serving_sizing->graph->recommended ? r.serving_sizing->graph->recommended->cost
                                                                        : std::nullopt);
      if (rec_gpus > 0 && rec_cost && p.cost_per_month)
        p.warnings.push_back("this plan is the stated deployment; the sizing below finds " + plural(rec_gpus, "GPU") +
                             " at " + human_count(rec_cost->value() * units::month) + " USD a month (" +
                             (llm ? r.serving_sizing->llm->recommended->summary
                                  : r.serving_sizing->graph->recommended->summary) +
                             ")");
    }
  } else {
    p.reason = llm_or_graph_reason(*r.serving_sizing);
    if (plans_closest(*r.serving_sizing)) {
      p.basis = "closest";
      p.warnings.push_back("no layout capsim verified meets the SLO: this plan is the closest, and it misses");
    }
  }
  return {};
}

// Training: the search's recommendation, unless the cost comparison (whole nodes, runs a
// month) finds another of its node types cheaper: then that one, so that no view recommends
// one configuration and names another the cheapest.
Status plan_training(const Scenario& scenario, const hardware::Catalog& catalog, RunResult& r, ProgressObserver* progress,
                     CollectiveTiming collectives) {
  auto& p = r.plan;
  auto sizing = size_scenario(scenario, catalog, progress, collectives);
  if (!sizing) return sizing.errors();
  r.sizing = std::move(sizing).value();
  p.conversions = r.sizing->conversions;
  auto& search = r.sizing->search;
  if (!search.recommended) return {};
  p.basis = "recommendation";
  p.reason = search.recommendation;
  std::optional<std::size_t> cost_option;  // the comparison's option the plan is priced by
  auto index_of = [&](const std::string& id) -> std::optional<int> {
    for (std::size_t i = 0; i < search.node_types.size(); ++i)
      if (search.node_types[i].id == id) return static_cast<int>(i);
    return std::nullopt;
  };
  if (scenario.cost) {
    auto cost = cost_scenario(scenario, catalog);
    if (!cost) return cost.errors();
    r.cost = std::move(cost).value();
    const auto& c = r.cost->comparison;
    const auto& cheapest = r.cost->option_runs[static_cast<std::size_t>(c.cheapest)];
    const auto& cheapest_node = r.cost->option_node_types[static_cast<std::size_t>(c.cheapest)];
    const auto at = cheapest_node ? index_of(cheapest_node->id) : std::nullopt;
    if (cheapest && at) {
      models::Candidate chosen = *cheapest;
      chosen.node_type = *at;
      if (search.node_types[*at].price)
        chosen.cost = Money(search.node_types[*at].price->value() * chosen.nodes * chosen.total_time.value(), Currency::usd);
      if (search.node_types[search.recommended->node_type].id != cheapest_node->id || search.recommended->nodes != chosen.nodes)
        p.reason = "the cheapest option of the cost comparison (" + c.options[c.cheapest].name + ", " +
                   human_count(c.per_unit[c.cheapest].value()) + " USD per run at " +
                   runs_a_month(r.cost->inputs.demand.units_per_month) + "), which counts whole nodes and idle time";
      search.recommended = chosen;
      search.recommendation = p.reason;
      cost_option = static_cast<std::size_t>(c.cheapest);
    } else {
      const std::string rec_id = search.node_types[search.recommended->node_type].id;
      for (std::size_t i = 0; i < r.cost->option_node_types.size(); ++i)
        if (r.cost->option_node_types[i] && r.cost->option_node_types[i]->id == rec_id) cost_option = i;
      p.warnings.push_back("the cost comparison's cheapest option, " + c.options[c.cheapest].name +
                           ", is not among the node types sized (hardware.gpus, providers, instances, servers)");
    }
  }
  if (r.cost && cost_option) {  // the recommendation reads, and its pool is bought, as the option prices it
    const auto& o = r.cost->inputs.options[*cost_option];
    const bool rented = o.kind == models::OptionKind::cloud || o.kind == models::OptionKind::bare_metal;
    r.sizing->recommended_spot = rented && o.rented.pricing == models::CloudPricing::spot;
    r.sizing->recommended_cost_basis =
        "the cost comparison's option '" + o.name + "', " +
        (rented ? std::string(models::cloud_pricing_name(o.rented.pricing)) + ", " + to_string(o.rented.price_per_node) +
                      " per node"
                : std::string(models::option_kind_name(o.kind)));
  }
  const auto& rec = *search.recommended;
  const auto& type = search.node_types[rec.node_type];
  p.node_type = type.id;
  p.gpu = type.cluster.gpu.id;
  p.gpus = rec.par.gpus();
  p.nodes = rec.nodes;
  p.configuration = describe_candidate(*r.sizing, rec);
  p.memory_per_gpu = rec.memory_per_gpu;
  p.gpu_memory = type.cluster.gpu.memory;
  p.time = rec.total_time;
  p.time_basis = "analytic";
  p.throughput = rec.throughput;
  p.throughput_unit = scenario.training.is_transformer() ? "tokens/s" : "samples/s";
  if (auto pools = sizing_node_pools(*r.sizing); pools) p.node_pools = *pools;
  // A wanted GPU the chosen server does not carry is said, not swapped silently.
  if (std::find(scenario.hardware.gpus.begin(), scenario.hardware.gpus.end(), p.gpu) == scenario.hardware.gpus.end())
    p.warnings.push_back(type.id + " carries " + p.gpu + ", not one of the GPUs the scenario names (" +
                         [&] {
                           std::string list;
                           for (const auto& g : scenario.hardware.gpus) list += (list.empty() ? "" : ", ") + g;
                           return list;
                         }() + ")");

  if (scenario.simulate && !scenario.inference) {
    auto sim = simulate_scenario(scenario, catalog, progress);
    if (!sim) return sim.errors();
    r.simulation = std::move(sim).value();
    const auto& pipe = r.simulation->pipeline;
    if (r.simulation->node != type.id) {
      p.warnings.push_back("the simulation runs on " + r.simulation->node + ", not on the plan's " + type.id +
                           "; its rate does not change the plan's time");
    } else if (pipe.simulated_samples_per_second > 0 && !scenario.training.is_transformer()) {
      const double per_gpu = pipe.simulated_samples_per_second / std::max(1, scenario.simulate->gpus);
      const double rate = per_gpu * p.gpus;
      const double analytic = rec.throughput;
      if (rate < 0.99 * analytic) {
        const double samples = scenario.training.samples * scenario.training.epochs;
        p.time = Seconds(samples / rate);
        p.throughput = rate;
        auto& shown = *search.recommended;  // the sizing report shows the plan's figures
        if (shown.cost) shown.cost = Money(shown.cost->value() * p.time->value() / shown.total_time.value(), Currency::usd);
        shown.gpu_hours *= p.time->value() / shown.total_time.value();
        shown.total_time = *p.time;
        shown.throughput = rate;
        p.time_basis = "simulated: " + pipe.simulation.constraint + " holds the GPUs to " + human_count(rate) +
                       " samples/s; the analytic " + human_count(analytic) +
                       " samples/s assumes data loading is free";
        if (scenario.cost) {  // the comparison prices the simulated run time too
          auto cost = cost_scenario(scenario, catalog, {{type.id, *p.time, "simulated"}});
          if (!cost) return cost.errors();
          r.cost = std::move(cost).value();
        }
      }
    }
  }
  if (r.cost && cost_option) {
    const auto& c = r.cost->comparison;
    p.cost_per_run = c.per_unit[*cost_option];
    search.recommended->cost = p.cost_per_run;  // the sizing report shows the plan's figure
    p.cost_per_month = c.options[*cost_option].monthly_average(c.horizon);
    p.cost_basis = "the cost comparison's option '" + c.options[*cost_option].name + "': " +
                   runs_a_month(r.cost->inputs.demand.units_per_month) + " over " +
                   horizon_text(c.horizon) + ", whole nodes";
  } else if (type.price) {
    p.cost_per_run = Money(type.price->value() * p.nodes * p.time->value(), Currency::usd);
    p.cost_basis = plural(p.nodes, "node") + " x " + to_string(*type.price) + " x the run time (" +
                   std::string(commitment_price_field(scenario.commitment)) + ")";
  }
  return {};
}

Status plan_service(const Scenario& scenario, const hardware::Catalog& catalog, RunResult& r) {
  auto& p = r.plan;
  p.basis = "service";
  p.gpus = scenario.training.service_gpus;
  if (!scenario.cost) return {};
  auto cost = cost_scenario(scenario, catalog);
  if (!cost) return cost.errors();
  r.cost = std::move(cost).value();
  const auto& c = r.cost->comparison;
  const auto& o = c.options[c.cheapest];
  p.configuration = o.name;
  p.reason = "the cheapest option of the cost comparison over " + horizon_text(c.horizon);
  p.nodes = o.nodes;
  p.cost_per_month = o.monthly_average(c.horizon);
  p.cost_basis = "the cost comparison's option '" + o.name + "', averaged over " + horizon_text(c.horizon);
  return {};
}

// What expectations are checked against: the plan's figures, so a run never passes on a
// number another view contradicts.
void plan_measurements(RunResult& r) {
  const auto& p = r.plan;
  auto add = [&](const char* metric, double value, Dim dim, Currency currency = Currency::none) {
    if (std::isfinite(value)) r.measurements.push_back({metric, {value, dim, currency}});
  };
  if (p.time) add("training_time", p.time->value(), dims::seconds);
  if (p.cost_per_run) add("cost_per_run", p.cost_per_run->value(), dims::money, Currency::usd);
  if (p.gpus > 0) add("gpus", p.gpus, dims::none);
  if (r.sizing && r.sizing->search.recommended) {
    const auto& c = *r.sizing->search.recommended;
    const auto& type = r.sizing->search.node_types[c.node_type];
    add("memory_per_gpu", c.memory_per_gpu.value(), dims::bytes);
    add("memory_headroom", 1.0 - c.memory_per_gpu.value() / type.cluster.gpu.memory.value(), dims::none);
    add("mfu", c.mfu, dims::none);
    add("step_time", c.step_time.value(), dims::seconds);
  }
  if (p.cost_per_month) add("monthly_cost", p.cost_per_month->value(), dims::money / dims::seconds, Currency::usd);
  if (r.cost) {
    const auto& c = r.cost->comparison;
    add("total_cost", c.totals[c.cheapest].value(), dims::money, Currency::usd);
  }
  if (r.simulation) {
    // No sample reached the end of the pipeline in the measured window: its rates and the
    // GPUs' busy fraction describe nothing, so an expectation on them fails as not measured.
    const auto& pipe = r.simulation->pipeline;
    if (pipe.measured()) {
      add("gpu_utilization", pipe.gpu_utilization, dims::none);
      add("samples_per_second", pipe.simulated_samples_per_second, dims::none);
    } else {
      constexpr const char* kNoSample = "no training sample completed in the simulated window (0 samples)";
      r.unmeasured.push_back({"gpu_utilization", kNoSample});
      r.unmeasured.push_back({"samples_per_second", kNoSample});
    }
  }
  if (r.serving_simulation) {
    const auto& s = *r.serving_simulation;
    const std::string no_request = std::string(kNoRequestCompleted) + " (0 samples)";
    auto observed_or = [&](const char* metric, std::optional<double> v, Dim dim) {
      if (v) add(metric, *v, dim);
      else r.unmeasured.push_back({metric, no_request});
    };
    auto seconds = [](const std::optional<Seconds>& v) { return v ? std::optional(v->value()) : std::nullopt; };
    if (s.llm) {
      observed_or("ttft_p99", seconds(p.ttft_p99), dims::seconds);
      observed_or("tpot_p99", seconds(p.tpot_p99), dims::seconds);
    } else {
      observed_or("p99_latency", seconds(p.p99), dims::seconds);
    }
    // A run that completed nothing has no throughput: an upper bound on it must fail, not
    // pass on a 0 (the shipped 'throughput < 3380' passed a run of no requests).
    observed_or("throughput", p.throughput, dims::none);
  }
}

// What the plan is checked against: the scenario's expect:, and its SLO, which is a
// requirement even where expect: leaves it out (a plan whose simulated p99 misses the SLO
// fails `run --check`). An SLO bound becomes "METRIC <= BOUND" at its key's line unless an
// expectation already tests that metric.
std::vector<Expectation> expectations_with_slo(const Scenario& s) {
  std::vector<Expectation> out = s.expect;
  if (!s.inference) return out;
  auto add = [&](const std::string& metric, const std::optional<Seconds>& bound, const std::string& key) {
    if (!bound) return;
    for (const auto& e : s.expect)
      if (e.metric == metric) return;
    auto parsed = parse_expectation(metric + " <= " + to_string(*bound));
    if (!parsed) return;
    Expectation e = *parsed;
    if (auto at = s.key_at.find(key); at != s.key_at.end()) e.where = at->second;
    out.push_back(std::move(e));
  };
  const auto& inf = *s.inference;
  add("ttft_p99", inf.ttft_p99, "slo.ttft_p99");
  add("tpot_p99", inf.tpot_p99, "slo.tpot_p99");
  add("p99_latency", inf.p99, "slo.p99");
  return out;
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

Result<Plan> make_plan(const Scenario& scenario, const hardware::Catalog& catalog, ProgressObserver* progress,
                       CollectiveTiming collectives, const PriceAgePolicy& prices) {
  RunResult r;
  r.scenario = scenario;
  r.catalog_hash = catalog.content_hash;
  r.started_at = utc_now();
  r.plan.question = resolved_question(scenario);
  Status status;
  if (scenario.inference) status = plan_serving(scenario, catalog, r, progress);
  else if (scenario.training.service) status = plan_service(scenario, catalog, r);
  else status = plan_training(scenario, catalog, r, progress, collectives);
  if (!status.empty()) return status;
  complete_node_pools(r.plan.node_pools, catalog);  // each pool's vendor and EFA interfaces
  if (scenario.cost && !r.cost) {  // inference with a cost: section
    auto cost = cost_scenario(scenario, catalog);
    if (!cost) return cost.errors();
    r.cost = std::move(cost).value();
  }
  // The prices the plan rests on, dated; a stale one is a warning a reader must not miss.
  r.plan.prices = prices_used(scenario, catalog, r.plan.node_type.empty() ? std::vector<std::string>{}
                                                                           : std::vector<std::string>{r.plan.node_type},
                              prices);
  for (const auto& price : r.plan.prices)
    if (price.stale) r.plan.warnings.push_back("stale price: " + price.warning(prices));
  plan_measurements(r);
  r.expectations = check_expectations(expectations_with_slo(scenario), r.measurements, r.unmeasured);
  return r;
}

std::string with_plan(const std::string& text, const Plan& plan) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return text;
  j["plan"] = nlohmann::json::parse(plan_figures_json(plan.plan));
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string run_summary_text(const RunResult& r) {
  std::string out = r.scenario.name + ": " + r.status() + "\n" + plan_figures_text(r.plan);
  if (r.sizing && r.sizing->search.recommended) {
    const auto& c = *r.sizing->search.recommended;
    const auto& type = r.sizing->search.node_types[c.node_type];
    out += "  constraint      " + std::string(models::bottleneck_name(static_cast<models::Bottleneck>(c.bottleneck))) +
           " (analytic)\n";
    out += "  memory headroom " +
           to_string(ParsedQuantity{100 * (1 - c.memory_per_gpu.value() / type.cluster.gpu.memory.value()), {}, {}}) +
           " % of " + to_string(type.cluster.gpu.memory) + " per GPU\n";
  }
  for (const auto& pool : r.plan.node_pools)
    out += "  node pool       " + pool.name + ": " + plural(pool.nodes, "node") + " of " + pool.instance_type + " (" +
           pool.provider + "), " + (pool.tpu ? "google.com/tpu" : accelerator_resource(pool.vendor).value_or("nvidia.com/gpu")) + ": " +
           std::to_string(pool.gpus_per_pod) + " per pod\n";
  if (r.simulation) {
    const auto& p = r.simulation->pipeline;
    out += "  simulated       " + to_string(ParsedQuantity{p.simulated_samples_per_second, {}, {}}) +
           " samples/s on " + r.simulation->node + ", GPU " +
           to_string(ParsedQuantity{100 * p.gpu_utilization, {}, {}}) + " % busy, constraint " +
           p.simulation.constraint + "\n";
  }
  if (r.cost) {
    const auto& c = r.cost->comparison;
    out += "  cheapest        " + c.options[c.cheapest].name + ": " + human_count(c.totals[c.cheapest].value()) +
           " USD over " + horizon_text(c.horizon) + "\n";
  }
  if (r.serving_simulation)
    out += "\n" + std::string(r.simulated_recommendation ? "The recommended deployment, simulated:\n" : "") +
           serving_simulation_text(*r.serving_simulation);
  if (r.serving_sizing) out += "\n" + serving_sizing_text(*r.serving_sizing);
  if (!r.expectations.empty()) out += "\n";
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
  j["plan"] = json::parse(plan_figures_json(r.plan));
  j["measurements"] = json::object();
  for (const auto& m : r.measurements)
    j["measurements"][m.metric] = {{"value", m.value.value_si},
                                   {"unit", si_unit(m.value.dim, m.value.currency)},
                                   {"display", display_measurement(m.metric, m.value)}};
  // Metrics the run tried to measure and observed nothing for (absent from measurements).
  if (!r.unmeasured.empty()) {
    j["not_measured"] = json::object();
    for (const auto& u : r.unmeasured) j["not_measured"][u.metric] = u.reason;
  }
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

}  // namespace capsim::scenarios
