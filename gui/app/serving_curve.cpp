#include "serving_curve.hpp"

#include <algorithm>
#include <cmath>

#include "capsim/models/search.hpp"
#include "capsim/models/serving.hpp"
#include "capsim/models/serving_llm.hpp"
#include "capsim/scenarios/serving_report.hpp"
#include "capsim/scenarios/sizing.hpp"

namespace capsim::gui {
namespace {

// The offered rates, as shares of the analytic capacity: dense around the knee, past it to
// show the plateau.
constexpr double kShares[] = {0.1, 0.25, 0.4, 0.55, 0.7, 0.8, 0.9, 1.0, 1.1, 1.25};

// Each LLM point simulates the scenario's own window (simulate: warmup and duration), as the
// plan does, so the point at the plan's rate reads as the plan; without simulate: this much.
constexpr double kPointSeconds = 60;
constexpr double kPointWarmup = 20;

bool within(std::optional<double> value, const std::optional<Seconds>& bound) {
  if (!bound) return true;
  return value && *value <= bound->value();
}

void finish(ServingCurve& c) {
  for (const auto& p : c.points)
    if (p.meets_slo) c.knee = p.rate;
}

Result<ServingCurve> llm_curve(const scenarios::Scenario& s, const scenarios::InferenceSetup& inf,
                               const models::NodeType& node) {
  const models::LlmServingSpec spec = scenarios::llm_serving_spec(inf, node.cluster);
  auto estimate = models::estimate_llm_serving(spec, inf.mix);
  if (!estimate) return estimate.errors();
  ServingCurve c;
  c.capacity = estimate->requests_per_second * inf.replicas;
  const Seconds warmup = s.simulate ? s.simulate->warmup : Seconds(kPointWarmup);
  const Seconds duration = s.simulate ? s.simulate->duration : Seconds(kPointSeconds);
  c.basis = "simulated, " + to_string(duration) + " per point after " + to_string(warmup) + " warm-up";
  for (double share : kShares) {
    models::LlmSimulationOptions o;
    o.rate = share * c.capacity;
    o.replicas = inf.replicas;
    o.warmup = warmup;
    o.duration = duration;
    o.seed = s.simulate ? s.simulate->seed : 1;
    if (s.simulate) o.max_events = s.simulate->max_events;
    auto sim = models::simulate_llm_serving(spec, inf.mix, o);
    if (!sim) return sim.errors();
    RatePoint p;
    p.rate = o.rate;
    p.throughput = sim->requests_per_second;
    if (sim->completed > 0) {
      p.ttft_p99 = sim->ttft.p99.mean;
      p.tpot_p99 = sim->tpot.p99.mean;
    }
    p.meets_slo = sim->completed > 0 && !sim->saturated && within(p.ttft_p99, inf.ttft_p99) && within(p.tpot_p99, inf.tpot_p99);
    c.points.push_back(p);
  }
  finish(c);
  return c;
}

Result<ServingCurve> graph_curve(const scenarios::InferenceSetup& inf, const models::NodeType& node) {
  models::Deployment d;
  d.gpu = node.cluster.gpu;
  d.sharing = inf.sharing;
  d.stages = inf.stages;
  auto plan = models::plan_deployment(inf.graph, d);
  if (!plan) return plan.errors();
  ServingCurve c;
  c.capacity = models::estimate_serving(*plan, 1.0).capacity;
  c.basis = "analytic";
  for (double share : kShares) {
    const double rate = share * c.capacity;
    const auto e = models::estimate_serving(*plan, rate);
    RatePoint p;
    p.rate = rate;
    p.throughput = std::min(rate, e.capacity);
    if (e.stable && std::isfinite(e.p99_latency.value())) p.p99 = e.p99_latency.value();
    p.meets_slo = e.stable && within(p.p99, inf.p99);
    c.points.push_back(p);
  }
  finish(c);
  return c;
}

}  // namespace

Result<ServingCurve> serving_curve(const scenarios::Scenario& s, const hardware::Catalog& catalog) {
  if (!s.inference || s.inference->node.empty())
    return Diagnostic{{s.file}, "deployment", "no deployment: to sweep", "add a deployment: section"};
  const auto& inf = *s.inference;
  if (inf.offline_requests > 0)
    return Diagnostic{{s.file}, "workload.offline_requests", "an offline run has no request rate to sweep", ""};
  auto node = models::node_type_by_id(catalog, inf.node, scenarios::commitment_price_field(s.commitment));
  if (!node) return node.errors();
  auto curve = inf.llm ? llm_curve(s, inf, *node) : graph_curve(inf, *node);
  if (curve && !(curve->capacity > 0))
    return Diagnostic{{s.file}, "deployment", "the deployment has no capacity to sweep", ""};
  return curve;
}

std::string serving_curve_key(const scenarios::Scenario& s) {
  if (!s.inference) return {};
  const auto& inf = *s.inference;
  std::string key = s.file + "|" + s.name + "|" + inf.node + "|" + inf.shape.name + "|" + std::to_string(inf.tensor_parallel) +
                    "|" + std::to_string(inf.pipeline_parallel) + "|" + std::to_string(inf.replicas) + "|" +
                    std::to_string(inf.mix.prompt_tokens) + "|" + std::to_string(inf.mix.output_tokens) + "|" +
                    std::to_string(inf.mix.requests.size()) + "|" + inf.llm_engine;
  for (const auto& st : inf.stages) key += "|" + std::to_string(st.replicas);
  for (const auto& b : {inf.p99, inf.ttft_p99, inf.tpot_p99}) key += "|" + (b ? std::to_string(b->value()) : "-");
  return key;
}

}  // namespace capsim::gui
