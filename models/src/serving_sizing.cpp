// The SLO sizing search for inference graphs and LLM serving.
#include "capsim/models/serving_sizing.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "capsim/core/text.hpp"

namespace capsim::models {
namespace {

Diagnostic invalid(const std::string& key, const std::string& message) {
  return Diagnostic{{}, key, message, ""};
}


std::string ms(Seconds s) { return std::isfinite(s.value()) ? to_string(s) : "unbounded"; }

struct Setting {
  SharingMode sharing;
  std::string mig_profile;
  int max_batch;
  Seconds delay;
};

Deployment make_deployment(const hardware::GpuSpec& gpu, const InferenceGraph& g, const Setting& s,
                           const ExecutionOptions& exec, const std::vector<int>& replicas) {
  Deployment d;
  d.gpu = gpu;
  d.sharing = s.sharing;
  for (std::size_t i = 0; i < g.stages.size(); ++i) {
    StageDeployment sd;
    sd.replicas = replicas[i];
    sd.batching = {s.max_batch, s.delay};
    sd.exec = exec;
    sd.mig_profile = s.mig_profile;
    d.stages.push_back(sd);
  }
  return d;
}

struct Allocation {
  std::vector<int> replicas;
  DeploymentPlan plan;
  ServingEstimate estimate;
};

// Greedy replica allocation meeting `bound` at `rate`; an error when it cannot.
Result<Allocation> allocate(const hardware::GpuSpec& gpu, const InferenceGraph& g, const Setting& s,
                            const ExecutionOptions& exec, double rate, Seconds bound, int max_replicas) {
  std::vector<int> replicas(g.stages.size(), 1);
  auto plan = plan_deployment(g, make_deployment(gpu, g, s, exec, replicas));
  if (!plan) return plan.errors();
  // Start every stage at the fewest replicas that keep it stable.
  for (std::size_t i = 0; i < g.stages.size(); ++i) {
    const auto one = estimate_serving(*plan, rate).stages[i];
    replicas[i] = static_cast<int>(std::floor(rate / one.capacity)) + 1;  // capacity of one replica
    if (replicas[i] > max_replicas) return invalid("replicas", "stage '" + g.stages[i].name + "' needs more than " +
                                                               std::to_string(max_replicas) + " replicas");
  }
  for (int step = 0; step < 4 * max_replicas; ++step) {
    plan = plan_deployment(g, make_deployment(gpu, g, s, exec, replicas));
    if (!plan) return plan.errors();
    auto est = estimate_serving(*plan, rate);
    if (est.stable && est.p99_latency <= bound) return Allocation{replicas, std::move(plan).value(), std::move(est)};
    // One more replica where the p99 is largest.
    std::size_t worst = 0;
    for (std::size_t i = 1; i < est.stages.size(); ++i)
      if (est.stages[i].p99_latency > est.stages[worst].p99_latency) worst = i;
    // A stage already past the bound on its service time alone cannot be helped by replicas.
    if (est.stages[worst].stable && est.stages[worst].service > bound)
      return invalid("p99", "stage '" + g.stages[worst].name + "' alone takes " + ms(est.stages[worst].service));
    if (replicas[worst] >= max_replicas) return invalid("replicas", "replica limit reached");
    replicas[worst] += 1;
  }
  return invalid("replicas", "no allocation found");
}

std::vector<Setting> settings(const ServingSizingRequest& r, const hardware::GpuSpec& gpu) {
  std::vector<Setting> out;
  for (SharingMode mode : r.sharing) {
    std::vector<std::string> profiles{""};
    if (mode == SharingMode::mig) {
      profiles.clear();
      for (const auto& p : gpu.mig_profiles) profiles.push_back(p.name);
    }
    for (const auto& profile : profiles)
      for (int b : r.max_batch)
        for (Seconds d : r.max_queue_delay) {
          if (b == 1 && d.value() > 0) continue;  // a delay without batching only adds latency
          out.push_back({mode, profile, b, d});
        }
  }
  return out;
}

double trough_rate(const ArrivalSpec& a) {
  if (a.kind != ArrivalSpec::Kind::diurnal) return a.peak_rate().value();
  return a.rate.value() * *std::min_element(a.hourly.begin(), a.hourly.end());
}

int physical_gpus(const DeploymentPlan& p) { return p.gpus; }

void finish(SizedDeployment& d, const NodeType& nt, const ServingSizingRequest& r, const Setting& s) {
  d.gpus = physical_gpus(d.plan);
  const int gpn = nt.cluster.gpus_per_node;
  d.nodes = (d.gpus + gpn - 1) / gpn;
  if (nt.price) d.cost = *nt.price * static_cast<double>(d.nodes);
  d.k8s.clear();
  for (std::size_t i = 0; i < d.plan.stages.size(); ++i)
    d.k8s.push_back({d.plan.stages[i].name, d.plan.stages[i].k8s_resource, 1, 1, d.deployment.stages[i].replicas});
  // Trough: the same settings at the lowest rate give the autoscaler's minimum.
  auto low = allocate(nt.cluster.gpu, r.graph, s, r.exec, std::max(trough_rate(r.arrivals), 1e-9), r.p99_bound,
                      r.max_replicas_per_stage);
  d.min_nodes = d.nodes;
  if (low) {
    for (std::size_t i = 0; i < d.k8s.size(); ++i) d.k8s[i].min_replicas = std::min(low->replicas[i], d.k8s[i].max_replicas);
    d.min_nodes = (low->plan.gpus + gpn - 1) / gpn;
  }
  d.summary = std::to_string(d.gpus) + " x " + nt.cluster.gpu.id + " (" + nt.id + "), " +
              std::string(sharing_mode_name(s.sharing)) + (s.mig_profile.empty() ? "" : " " + s.mig_profile) +
              ", batch " + std::to_string(s.max_batch) + " / " + ms(s.delay) + ": analytic p99 " +
              ms(d.analytic.p99_latency);
}

bool cheaper(const SizedDeployment& a, const SizedDeployment& b) {
  const double ca = a.cost ? a.cost->value() : std::numeric_limits<double>::infinity();
  const double cb = b.cost ? b.cost->value() : std::numeric_limits<double>::infinity();
  if (ca != cb) return ca < cb;
  if (a.gpus != b.gpus) return a.gpus < b.gpus;
  return a.analytic.p99_latency < b.analytic.p99_latency;
}

void verify(SizedDeployment& d, const ServingSizingRequest& r) {
  ArrivalSpec peak;
  peak.kind = ArrivalSpec::Kind::poisson;
  peak.rate = r.arrivals.peak_rate();
  for (int attempt = 0; attempt <= kMaxVerifyRepairs; ++attempt) {
    auto rep = simulate_serving(d.plan, peak, r.verify_run, r.progress);
    if (!rep) return;
    d.verified = true;
    // No request reached the end in the window: its p99 is not 0 s but not measured, which
    // meets no bound; more replicas would not make the window longer.
    if (rep->simulation.latency_cdf.empty()) {
      d.simulated_latency.reset();
      d.meets_slo = false;
      return;
    }
    d.simulated_latency = rep->latency;
    d.meets_slo = rep->latency.p99.mean <= r.p99_bound.value();
    if (d.meets_slo || attempt == kMaxVerifyRepairs) return;
    // Elevate the simulated constraint by one replica and try again.
    std::size_t worst = 0;
    for (std::size_t i = 1; i < rep->stage_utilization.size(); ++i)
      if (rep->stage_utilization[i] > rep->stage_utilization[worst]) worst = i;
    d.deployment.stages[worst].replicas += 1;
    auto plan = plan_deployment(r.graph, d.deployment);
    if (!plan) return;
    d.plan = std::move(plan).value();
    d.analytic = estimate_serving(d.plan, peak.rate.value());
    d.k8s[worst].max_replicas = d.deployment.stages[worst].replicas;
  }
}

}  // namespace

Result<ServingSizingResult> size_serving(const ServingSizingRequest& r) {
  std::vector<Diagnostic> errors;
  if (r.node_types.empty()) errors.push_back(invalid("node_types", "no node types to size for"));
  if (!(r.p99_bound.value() > 0)) errors.push_back(invalid("slo.p99", "must be greater than zero"));
  if (!(r.arrivals.peak_rate().value() > 0)) errors.push_back(invalid("arrivals", "the peak rate must be above zero"));
  if (r.graph.stages.empty()) errors.push_back(invalid("graph", "the graph has no stages"));
  if (!errors.empty()) return errors;

  ServingSizingResult out;
  const double peak = r.arrivals.peak_rate().value();
  Seconds closest(std::numeric_limits<double>::infinity());
  for (const auto& nt : r.node_types) {
    if (out.cancelled) break;
    const auto& gpu = nt.cluster.gpu;
    for (const auto& s : settings(r, gpu)) {
      if (r.progress != nullptr && r.progress->cancelled()) {
        out.cancelled = true;
        break;
      }
      out.evaluated += 1;
      auto a = allocate(gpu, r.graph, s, r.exec, peak, r.p99_bound, r.max_replicas_per_stage);
      if (!a) {
        const std::string what = nt.id + " " + std::string(sharing_mode_name(s.sharing)) +
                                 (s.mig_profile.empty() ? "" : " " + s.mig_profile) + " batch " +
                                 std::to_string(s.max_batch);
        out.skipped.push_back({what, a.errors().front().message});
        continue;
      }
      SizedDeployment d;
      d.node_type = nt.id;
      d.deployment = make_deployment(gpu, r.graph, s, r.exec, a->replicas);
      d.plan = std::move(a->plan);
      d.analytic = std::move(a->estimate);
      d.meets_slo = true;
      closest = std::min(closest, d.analytic.p99_latency);
      finish(d, nt, r, s);
      out.candidates.push_back(std::move(d));
    }
  }
  if (out.candidates.empty() && out.cancelled)
    return invalid("run", "the sizing was cancelled before any deployment met the bound");
  if (out.candidates.empty()) {
    std::string why = out.skipped.empty() ? "" : " (e.g. " + out.skipped.front().first + ": " + out.skipped.front().second + ")";
    return invalid("slo.p99", "no deployment meets a p99 of " + ms(r.p99_bound) + " at " + significant(peak) + " requests/s" + why);
  }
  std::stable_sort(out.candidates.begin(), out.candidates.end(), cheaper);
  if (out.cancelled) {
    out.recommendation = "the sizing was cancelled: the candidates cover part of the settings, none simulated";
    return out;
  }
  for (int i = 0; i < r.verify_top && i < static_cast<int>(out.candidates.size()); ++i) {
    SizedDeployment d = out.candidates[static_cast<std::size_t>(i)];
    verify(d, r);
    out.verified.push_back(std::move(d));
  }
  std::stable_sort(out.verified.begin(), out.verified.end(), cheaper);
  for (const auto& d : out.verified)
    if (d.meets_slo) {
      out.recommended = d;
      out.recommendation = "the cheapest deployment whose simulated p99 (" + ms(Seconds(d.simulated_latency->p99.mean)) +
                           ") meets the " + ms(r.p99_bound) + " bound at " + significant(peak) + " requests/s: " + d.summary;
      break;
    }
  if (!out.recommended) {
    // The plan still shows a deployment: the verified one nearest the bound, and how far.
    for (const auto& d : out.verified)
      if (d.simulated_latency && (!out.closest || d.simulated_latency->p99.mean < out.closest->simulated_latency->p99.mean))
        out.closest = d;
    out.recommendation = std::any_of(out.verified.begin(), out.verified.end(),
                                     [](const SizedDeployment& d) { return d.verified && !d.simulated_latency; })
                             ? "none of the verified candidates met the bound in simulation (some completed no request "
                               "in the simulated window: lengthen simulate.duration)"
                             : "none of the verified candidates met the bound in simulation";
    if (out.closest)
      out.recommendation += "; the closest: " + out.closest->summary + ", simulated p99 " +
                            ms(Seconds(out.closest->simulated_latency->p99.mean)) + " against " + ms(r.p99_bound) + " (" +
                            significant(out.closest->simulated_latency->p99.mean / r.p99_bound.value(), 3) +
                            " x the bound)";
  }
  return out;
}

// --- LLM ---------------------------------------------------------------------------------

std::optional<LlmTokenCost> llm_token_cost(MoneyPerSecond cost, const LlmEstimate& e, const LlmRequestMix& mix,
                                           double requests_per_second, double output_tokens_per_second,
                                           std::string basis) {
  if (!(requests_per_second > 0) || !std::isfinite(requests_per_second) || !std::isfinite(cost.value()) ||
      cost.value() < 0)
    return std::nullopt;
  LlmTokenCost c;
  // A request's GPU time on its replica: its prompt's share of the steps it rides in, and its
  // output's decode steps, shared by the batch (estimate_llm_serving's cycle).
  const double batch = std::max(1, e.max_concurrent_sequences);
  const double prefill = e.prefill_per_request.value();
  const double decode = mix.output_tokens * e.tpot_at_max.value() / batch;
  c.prefill_share = prefill + decode > 0 ? prefill / (prefill + decode) : 0.0;
  c.requests_per_second = requests_per_second;
  c.input_tokens_per_second = requests_per_second * mix.prompt_tokens;
  c.output_tokens_per_second =
      output_tokens_per_second > 0 ? output_tokens_per_second : requests_per_second * mix.output_tokens;
  const double per_hour = cost.value() * units::hour;
  const auto per_million = [&](double share, double tokens_per_second) {
    return tokens_per_second > 0 ? per_hour * share / (tokens_per_second * units::hour) * 1e6 : 0.0;
  };
  c.usd_per_million_input = per_million(c.prefill_share, c.input_tokens_per_second);
  c.usd_per_million_output = per_million(1 - c.prefill_share, c.output_tokens_per_second);
  c.usd_per_million_tokens = per_million(1, c.input_tokens_per_second + c.output_tokens_per_second);
  c.basis = std::move(basis);
  return c;
}

namespace {
std::string usd_text(double v) { return significant(v, v >= 100 ? 4 : 3) + " USD"; }
}  // namespace

std::string llm_token_cost_text(const LlmTokenCost& c) {
  return usd_text(c.usd_per_million_input) + " per million input tokens, " + usd_text(c.usd_per_million_output) +
         " per million output tokens (" + usd_text(c.usd_per_million_tokens) + " per million tokens of both)";
}

std::string llm_token_cost_formula(const LlmTokenCost& c, MoneyPerSecond cost) {
  const double per_hour = cost.value() * units::hour;
  return significant(per_hour, 4) + " USD/h x " + significant(c.prefill_share, 3) + " (prefill's share of GPU time) / (" +
         significant(c.input_tokens_per_second, 4) + " input tokens/s x 3600) x 1e6; x " +
         significant(1 - c.prefill_share, 3) + " / (" + significant(c.output_tokens_per_second, 4) +
         " output tokens/s x 3600) x 1e6 (" + c.basis + ")";
}

namespace {

// Nodes are paid whole: replicas of TP GPUs fill every node they occupy, so no paid GPU
// sits idle. The replicas beyond those the peak needs are headroom at no extra cost. A
// replica of pipeline stages across nodes takes whole nodes of its own.
void fill_nodes(SizedLlmDeployment& d, int gpus_per_node, int needed) {
  const int replica = llm_replica_gpus(d.spec);
  if (replica > gpus_per_node) {
    d.replicas = needed;
    d.nodes = needed * (replica / gpus_per_node);
  } else {
    const int per_node = std::max(1, gpus_per_node / replica);
    d.nodes = (needed + per_node - 1) / per_node;
    d.replicas = d.nodes * per_node;
  }
  d.gpus = d.replicas * replica;
  d.k8s.max_replicas = d.replicas;
}

// The layouts first tried on a node type: TP of powers of two up to the node, one stage.
// One line a person reads: the layout, its nodes, its batch and its latencies — the
// simulation's p99s once verified (what the plan shows), the analytic figures before.
std::string llm_summary(const SizedLlmDeployment& d, const NodeType& nt, const LlmRequestMix& mix) {
  const int tp = d.spec.tensor_parallel, pp = d.spec.pipeline_parallel;
  const int n = d.spec.max_concurrent;
  const double context = mix.prompt_tokens + mix.output_tokens / 2.0;
  std::string out = plural(d.replicas, "replica") + " x TP=" + std::to_string(tp) +
                    (pp > 1 ? " PP=" + std::to_string(pp) + " (stages on " +
                                  plural(tp * pp / nt.cluster.gpus_per_node, "node") + ")"
                            : std::string()) +
                    " on " + nt.id + " (" + plural(d.nodes, "node") +
                    (d.repairs > 0 ? ", the analytic capacity gave " + plural(d.needed_at_peak, "replica") +
                                         ", the simulation at peak needed more"
                     : d.replicas > d.needed_at_peak && d.needed_at_peak > 0
                         ? ", " + std::to_string(d.needed_at_peak) + " needed at peak, the rest fill the paid GPUs"
                         : std::string()) +
                    "), batch <= " + std::to_string(n) + (pp > 1 ? " in each of " + std::to_string(pp) : std::string());
  if (d.simulation && d.simulation->completed > 0)
    return out + ", simulated TTFT p99 " + ms(Seconds(d.simulation->ttft.p99.mean)) + ", TPOT p99 " +
           ms(Seconds(d.simulation->tpot.p99.mean));
  return out + ", analytic TPOT " + ms(llm_tpot(d.spec, n, context * n)) + ", TTFT " + ms(d.estimate.ttft_unloaded) +
         " unloaded";
}

// How far a verified deployment is from the bounds: the larger of its simulated TTFT and
// TPOT p99 over their bound (1 meets them exactly); infinity when nothing completed.
double llm_slo_ratio(const SizedLlmDeployment& d, const LlmSizingRequest& r) {
  if (!d.simulation || d.simulation->completed == 0) return std::numeric_limits<double>::infinity();
  return std::max(d.simulation->ttft.p99.mean / r.ttft_p99.value(), d.simulation->tpot.p99.mean / r.tpot_p99.value());
}

// The day's replicas and nodes hour by hour, for a per-replica capacity of `per_replica`
// requests/s (already at the target utilization); the peak's own count is the ceiling.
void set_hourly_replicas(SizedLlmDeployment& d, const std::vector<double>& rates, double per_replica,
                         const NodeType& nt) {
  d.replicas_by_hour.clear();
  d.nodes_by_hour.clear();
  d.autoscaled_cost.reset();
  if (rates.empty() || !(per_replica > 0)) return;
  double node_hours = 0;
  for (const double rate : rates) {
    SizedLlmDeployment hour = d;
    const int needed = std::max(1, static_cast<int>(std::ceil(rate / per_replica)));
    fill_nodes(hour, nt.cluster.gpus_per_node, needed);
    const int replicas = std::min(hour.replicas, d.replicas), nodes = std::min(hour.nodes, d.nodes);
    d.replicas_by_hour.push_back(replicas);
    d.nodes_by_hour.push_back(nodes);
    node_hours += nodes;
  }
  if (nt.price) d.autoscaled_cost = *nt.price * (node_hours / static_cast<double>(rates.size()));
}

std::vector<std::pair<int, int>> llm_layouts(int gpus_per_node) {
  std::vector<std::pair<int, int>> out;
  for (int tp = 1; tp <= gpus_per_node; tp *= 2) out.emplace_back(tp, 1);
  return out;
}

}  // namespace

Result<LlmSizingResult> size_llm_serving(const LlmSizingRequest& r) {
  std::vector<Diagnostic> errors;
  if (r.node_types.empty()) errors.push_back(invalid("node_types", "no node types to size for"));
  if (!(r.peak_rate > 0)) errors.push_back(invalid("peak_rate", "must be greater than zero"));
  if (!(r.ttft_p99.value() > 0) || !(r.tpot_p99.value() > 0))
    errors.push_back(invalid("slo", "TTFT and TPOT bounds must be greater than zero"));
  if (!errors.empty()) return errors;

  LlmSizingResult out;
  for (const auto& nt : r.node_types) {
    std::vector<std::pair<int, int>> layouts = llm_layouts(nt.cluster.gpus_per_node);
    bool fits_a_node = false;  // some layout within one node holds the model and a request
    for (std::size_t li = 0; li < layouts.size(); ++li) {
      const auto [tp, pp] = layouts[li];
      LlmServingSpec spec;
      spec.shape = r.shape;
      spec.cluster = nt.cluster;
      spec.tensor_parallel = tp;
      spec.pipeline_parallel = pp;
      spec.weights = r.weights;
      spec.kv_cache = r.kv_cache;
      spec.max_batched_tokens = r.max_batched_tokens;
      spec.max_concurrent = r.max_num_seqs;
      spec.speculation = r.speculation;
      spec.kv_admission = r.kv_admission;
      spec.batching = r.batching;
      spec.kv_budget = r.kv_budget;
      spec.memory_utilization = r.memory_utilization;
      spec.gqa_shared_kv = r.gqa_shared_kv;
      const std::string what = nt.id + " TP=" + std::to_string(tp) + (pp > 1 ? " PP=" + std::to_string(pp) : "");
      auto est = estimate_llm_serving(spec, r.mix);
      const bool last_in_node = pp == 1 && tp * 2 > nt.cluster.gpus_per_node;
      if (!est) {
        out.skipped.push_back({what, est.errors().front().message});
        // Nothing within the node holds the model: stages across nodes, the fewest that do.
        const bool memory = est.errors().front().key_path == "memory";
        if (memory && last_in_node && !fits_a_node && nt.cluster.inter_node_bandwidth.value() > 0 &&
            r.speculation.tokens == 0)
          for (int stages = 2; stages <= kMaxLlmPipelineNodes; stages *= 2) layouts.emplace_back(tp, stages);
        continue;
      }
      if (pp == 1) fits_a_node = true;
      if (pp > 1) layouts.resize(li + 1);  // the fewest stages that hold it
      if (est->ttft_unloaded > r.ttft_p99) {
        out.skipped.push_back({what, "unloaded TTFT " + ms(est->ttft_unloaded) + " exceeds the bound"});
        continue;
      }
      // The largest concurrency whose decode step meets the TPOT bound (per batch in flight:
      // each of a pipeline's p batches runs its own).
      const double context = r.mix.prompt_tokens + r.mix.output_tokens / 2.0;
      int n = est->max_concurrent_sequences / pp;  // within the engine's cap, when set
      while (n > 0 && llm_tpot(spec, n, context * n) > r.tpot_p99) n -= std::max(1, n / 16);
      if (n <= 0) {
        out.skipped.push_back({what, "even one sequence's decode step exceeds the TPOT bound"});
        continue;
      }
      spec.max_concurrent = n;
      auto capped = estimate_llm_serving(spec, r.mix);
      SizedLlmDeployment d;
      d.node_type = nt.id;
      d.spec = spec;
      d.estimate = *capped;
      const double per_replica = capped->requests_per_second * kLlmTargetUtilization;
      const int needed = static_cast<int>(std::ceil(r.peak_rate / per_replica));
      d.min_replicas = std::max(1, static_cast<int>(std::ceil(r.trough_rate / per_replica)));
      // A pod per node a replica spans.
      d.k8s = {r.shape.name, "nvidia.com/gpu", std::min(tp * pp, nt.cluster.gpus_per_node), d.min_replicas, needed};
      fill_nodes(d, nt.cluster.gpus_per_node, needed);
      d.min_replicas = std::min(d.min_replicas, d.replicas);
      set_hourly_replicas(d, r.hourly_rates, per_replica, nt);
      d.k8s.min_replicas = d.min_replicas;
      if (nt.price) d.cost = *nt.price * static_cast<double>(d.nodes);
      d.meets_slo = true;
      d.needed_at_peak = needed;
      if (d.cost)
        d.token_cost = llm_token_cost(*d.cost, d.estimate, r.mix, r.peak_rate, 0,
                                      "analytic: the offered peak of " + significant(r.peak_rate, 4) + " requests/s");
      d.summary = llm_summary(d, nt, r.mix);
      out.candidates.push_back(std::move(d));
    }
  }
  if (out.candidates.empty()) return invalid("slo", "no node type and parallelism meets the TTFT/TPOT bounds" +
                                                        (out.skipped.empty() ? std::string() : " (e.g. " + out.skipped.front().first + ": " + out.skipped.front().second + ")"));
  std::stable_sort(out.candidates.begin(), out.candidates.end(), [](const auto& a, const auto& b) {
    const double ca = a.cost ? a.cost->value() : std::numeric_limits<double>::infinity();
    const double cb = b.cost ? b.cost->value() : std::numeric_limits<double>::infinity();
    return ca != cb ? ca < cb : a.gpus < b.gpus;
  });
  auto node_type_of = [&](const SizedLlmDeployment& d) -> const NodeType& {
    for (const auto& nt : r.node_types)
      if (nt.id == d.node_type) return nt;
    return r.node_types.front();
  };
  for (int i = 0; i < r.verify_top && i < static_cast<int>(out.candidates.size()); ++i) {
    auto& d = out.candidates[static_cast<std::size_t>(i)];
    const NodeType& nt = node_type_of(d);
    for (int attempt = 0; attempt <= kMaxVerifyRepairs; ++attempt) {
      LlmSimulationOptions o;
      o.rate = r.peak_rate;
      o.replicas = d.replicas;
      o.duration = r.verify_duration;
      o.warmup = r.verify_warmup;
      o.seed = r.verify_seed;
      o.max_events = r.verify_max_events;
      auto sim = simulate_llm_serving(d.spec, r.mix, o);
      if (!sim) break;
      d.verified = true;
      d.simulation = *sim;
      // Percentiles of no completed request are not measured: they meet no bound, and more
      // replicas would not make the window longer.
      if (sim->completed == 0) {
        d.meets_slo = false;
        break;
      }
      d.meets_slo = sim->ttft.p99.mean <= r.ttft_p99.value() && sim->tpot.p99.mean <= r.tpot_p99.value();
      if (d.meets_slo || attempt == kMaxVerifyRepairs) break;
      fill_nodes(d, d.spec.cluster.gpus_per_node, d.replicas + 1);
      d.repairs += 1;
      if (nt.price) d.cost = *nt.price * static_cast<double>(d.nodes);
      // The hours scale as the peak did: each replica serves what the repaired peak showed.
      set_hourly_replicas(d, r.hourly_rates, r.peak_rate / d.replicas, nt);
    }
    // The line says what was verified: the replicas after repairs, at their simulated p99s.
    d.summary = llm_summary(d, nt, r.mix);
    if (d.cost && d.simulation && d.simulation->completed > 0)
      d.token_cost = llm_token_cost(*d.cost, d.estimate, r.mix, d.simulation->requests_per_second,
                                    d.simulation->output_tokens_per_second,
                                    "simulated: " + significant(d.simulation->requests_per_second, 4) +
                                        " requests/s served at the peak");
    if (d.meets_slo && !out.recommended) {
      out.recommended = d;
      out.recommendation = "the cheapest layout verified by simulation: " + d.summary;
    }
  }
  if (!out.recommended) {
    for (int i = 0; i < r.verify_top && i < static_cast<int>(out.candidates.size()); ++i) {
      const auto& d = out.candidates[static_cast<std::size_t>(i)];
      const double ratio = llm_slo_ratio(d, r);
      if (d.verified && std::isfinite(ratio) && (!out.closest || ratio < llm_slo_ratio(*out.closest, r))) out.closest = d;
    }
    out.recommendation = std::any_of(out.candidates.begin(), out.candidates.end(),
                                     [](const auto& d) { return d.simulation && d.simulation->completed == 0; })
                             ? "none of the verified candidates met the bounds in simulation (some completed no "
                               "request in the simulated window: lengthen simulate.duration)"
                             : "none of the verified candidates met the bounds in simulation";
    if (out.closest)
      out.recommendation += "; the closest: " + out.closest->summary + ", against bounds of TTFT p99 " +
                            ms(r.ttft_p99) + " and TPOT p99 " + ms(r.tpot_p99) + " (" +
                            significant(llm_slo_ratio(*out.closest, r), 3) + " x the bound it misses most)";
  }
  return out;
}

}  // namespace capsim::models
