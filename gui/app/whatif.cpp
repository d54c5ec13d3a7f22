#include "whatif.hpp"

#include "capsim/core/text.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "capsim/models/performance.hpp"
#include "capsim/models/search.hpp"
#include "capsim/models/serving.hpp"
#include "capsim/models/serving_llm.hpp"
#include "capsim/models/workload.hpp"
#include "capsim/scenarios/serving_report.hpp"
#include "capsim/scenarios/table.hpp"
#include "yaml_edit.hpp"

namespace capsim::gui {
namespace {

Diagnostic control_error(const scenarios::Scenario& s, std::string control, std::string message, std::string hint = {}) {
  return Diagnostic{{s.file}, std::move(control), std::move(message), std::move(hint)};
}

void apply_model(scenarios::Scenario& s, const std::string& name, std::vector<Diagnostic>& errors) {
  if (s.inference && s.inference->llm) {
    const auto* p = models::find_transformer_preset(name);
    if (p == nullptr) {
      errors.push_back(control_error(s, "workload.model", "'" + name + "' is not a transformer preset"));
      return;
    }
    const int seq_len = s.inference->shape.seq_len;
    s.inference->shape = p->shape;
    if (seq_len > 0) s.inference->shape.seq_len = seq_len;
    return;
  }
  if (s.inference || s.training.service) {
    errors.push_back(control_error(s, "workload.model", "this workload has no model to change"));
    return;
  }
  if (const auto* p = models::find_transformer_preset(name)) {
    int seq_len = 0;
    if (const auto* old = std::get_if<models::TransformerShape>(&s.training.model)) seq_len = old->seq_len;
    s.training.model = p->shape;
    if (seq_len > 0) std::get<models::TransformerShape>(s.training.model).seq_len = seq_len;
  } else if (const auto* m = models::find_sample_model_preset(name)) {
    s.training.model = *m;
    if (s.training.samples <= 0) s.training.samples = 1.28e6;  // an ImageNet epoch, as the examples
  } else {
    errors.push_back(control_error(s, "workload.model", "unknown model preset '" + name + "'"));
    return;
  }
  if (s.training.is_transformer() && s.training.tokens <= 0) s.training.tokens = 1e12;
  s.training.model_name = name;
}

// The LLM deployment's levers: lengths, tensor parallelism, and the GPU type (a deployment
// names a node, so a GPU type picks the catalog's node of that GPU with room for the replica,
// the same provider first).
void apply_serving(scenarios::Scenario& s, const WhatIf& w, const hardware::Catalog& catalog,
                   std::vector<Diagnostic>& errors) {
  const bool llm = s.inference && s.inference->llm;
  auto need_llm = [&](const char* key, const char* what) {
    if (!llm) errors.push_back(control_error(s, key, std::string("only llm-serving workloads have ") + what));
    return llm;
  };
  if (w.prompt_tokens && need_llm("workload.prompt_tokens", "a prompt length")) {
    if (*w.prompt_tokens < 1) errors.push_back(control_error(s, "workload.prompt_tokens", "the prompt must be at least 1 token"));
    else if (!s.inference->mix.requests.empty())
      errors.push_back(control_error(s, "workload.prompt_tokens", "the lengths come from workload.request_lengths"));
    else s.inference->mix.prompt_tokens = *w.prompt_tokens;
  }
  if (w.output_tokens && need_llm("workload.output_tokens", "an answer length")) {
    if (*w.output_tokens < 1) errors.push_back(control_error(s, "workload.output_tokens", "the answer must be at least 1 token"));
    else if (!s.inference->mix.requests.empty())
      errors.push_back(control_error(s, "workload.output_tokens", "the lengths come from workload.request_lengths"));
    else s.inference->mix.output_tokens = *w.output_tokens;
  }
  if (w.tensor_parallel && need_llm("deployment.tensor_parallel", "tensor parallelism")) {
    if (*w.tensor_parallel < 1)
      errors.push_back(control_error(s, "deployment.tensor_parallel", "tensor parallelism must be at least 1"));
    else s.inference->tensor_parallel = *w.tensor_parallel;
  }
  if (!w.gpu || !s.inference || s.inference->node.empty() || catalog.find_gpu(*w.gpu) == nullptr) return;
  auto& inf = *s.inference;
  models::NodeTypeQuery query;
  query.gpus = {*w.gpu};
  auto types = models::node_types_from_catalog(catalog, query);
  if (!types) {
    for (auto d : types.errors()) {
      d.key_path = "deployment.node";
      errors.push_back(d);
    }
    return;
  }
  const int replica_gpus = inf.llm ? inf.tensor_parallel * inf.pipeline_parallel : 1;
  const std::string provider = inf.node.substr(0, inf.node.find('-'));
  const models::NodeType* best = nullptr;
  auto better = [&](const models::NodeType& a, const models::NodeType& b) {
    const bool a_same = a.provider == provider, b_same = b.provider == provider;
    if (a_same != b_same) return a_same;
    return a.cluster.gpus_per_node < b.cluster.gpus_per_node;  // the smallest node that holds a replica
  };
  for (const auto& t : *types) {
    const int per_node = t.cluster.gpus_per_node;
    const bool holds = per_node >= replica_gpus || (inf.llm && inf.pipeline_parallel > 1 && replica_gpus % per_node == 0);
    if (t.source != "instance" || !holds) continue;
    if (best == nullptr || better(t, *best)) best = &t;
  }
  if (best == nullptr) {
    errors.push_back(control_error(s, "deployment.node", "no catalog instance carries " + *w.gpu + " with room for a replica of " +
                                                             plural(replica_gpus, "GPU")));
    return;
  }
  inf.node = best->id;
}

}  // namespace

std::vector<std::string> model_presets() {
  std::vector<std::string> names;
  for (const auto& p : models::transformer_presets()) names.push_back(p.shape.name);
  for (const auto& m : models::sample_model_presets()) names.push_back(m.name);
  return names;
}

Result<scenarios::Scenario> apply_what_if(const scenarios::Scenario& base, const WhatIf& w,
                                          const hardware::Catalog& catalog) {
  scenarios::Scenario s = base;
  std::vector<Diagnostic> errors;
  // An engine brings its scheduler settings (data/catalog/llm_engines.yaml) unless the file
  // states them: the scenario's text with workload.engine set, loaded again as the CLI would.
  if (w.engine) {
    if (!base.inference || !base.inference->llm) {
      errors.push_back(control_error(base, "workload.engine", "only llm-serving workloads have an LLM serving engine"));
    } else if (auto text = set_yaml_scalar(base.text, {"workload", "engine"}, *w.engine); !text) {
      errors.insert(errors.end(), text.errors().begin(), text.errors().end());
    } else if (auto reloaded = scenarios::load_scenario(base.file, *text, catalog); !reloaded) {
      errors.insert(errors.end(), reloaded.errors().begin(), reloaded.errors().end());
    } else {
      s = std::move(reloaded).value();
    }
  }
  if (w.model) apply_model(s, *w.model, errors);
  if (w.gpu) {
    if (catalog.find_gpu(*w.gpu) == nullptr) {
      auto found = catalog.get(hardware::EntityKind::gpu, *w.gpu);
      for (auto d : found.errors()) {
        d.key_path = "hardware.gpus";
        errors.push_back(d);
      }
    } else {
      s.hardware.gpus = {*w.gpu};
    }
  }
  if (w.gpus) {
    if (*w.gpus < 1) {
      errors.push_back(control_error(s, "hardware.max_gpus", "the GPU count must be at least 1"));
    } else if (s.inference) {
      s.inference->replicas = *w.gpus;
      for (auto& stage : s.inference->stages) stage.replicas = *w.gpus;
    } else if (s.training.service) {
      s.training.service_gpus = *w.gpus;
    } else {
      s.hardware.max_gpus = *w.gpus;
      s.hardware.min_gpus = std::min(s.hardware.min_gpus, *w.gpus);
    }
  }
  if (w.request_rate) {
    if (!s.inference) errors.push_back(control_error(s, "arrivals.rate", "only inference workloads have a request rate"));
    else if (!(*w.request_rate > 0)) errors.push_back(control_error(s, "arrivals.rate", "the request rate must be above 0"));
    else if (s.inference->arrivals.kind == models::ArrivalSpec::Kind::trace)
      errors.push_back(control_error(s, "arrivals.rate", "a trace sets its own rate"));
    else
      s.inference->arrivals.rate = des::Rate(*w.request_rate);
  }
  if (w.utilization || w.horizon_months) {
    if (!s.cost) {
      errors.push_back(control_error(s, "cost", "the scenario has no cost: section", "add one to compare where to run"));
    } else {
      if (w.utilization) {
        if (!(*w.utilization > 0) || *w.utilization > 1)
          errors.push_back(control_error(s, "cost.utilization", "utilization must be in (0 %, 100 %]"));
        s.cost->profile = "measured";
        s.cost->busy = *w.utilization;
      }
      if (w.horizon_months) {
        if (!(*w.horizon_months >= 1))
          errors.push_back(control_error(s, "cost.horizon", "the horizon must be at least one month"));
        s.cost->horizon = Seconds(*w.horizon_months * units::month);
      }
    }
  }
  if (w.deadline_days) {
    if (s.inference || s.training.service)
      errors.push_back(control_error(s, "deadline", "only training workloads have a deadline"));
    else if (!(*w.deadline_days > 0))
      errors.push_back(control_error(s, "deadline", "the deadline must be above 0 days"));
    else
      s.deadline = Seconds(*w.deadline_days * units::day);
  }
  if (w.tokens) {
    if (s.inference || s.training.service || !s.training.is_transformer())
      errors.push_back(control_error(s, "workload.tokens", "only transformer training has a token count"));
    else if (!(*w.tokens > 0))
      errors.push_back(control_error(s, "workload.tokens", "the token count must be above 0"));
    else
      s.training.tokens = *w.tokens;
  }
  apply_serving(s, w, catalog, errors);
  if (w.electricity_usd_per_kwh && !(*w.electricity_usd_per_kwh > 0))
    errors.push_back(control_error(s, "cost.electricity", "the electricity price must be above 0"));
  if (!errors.empty()) return errors;
  return s;
}

Status apply_cost_overrides(scenarios::CostReport& report, const WhatIf& w) {
  if (!w.electricity_usd_per_kwh) return {};
  // USD/kWh -> USD per joule: 1 kWh = 3.6e6 J.
  const MoneyPerJoule price(*w.electricity_usd_per_kwh / 3.6e6, Currency::usd);
  for (auto& o : report.inputs.options)
    if (o.kind == models::OptionKind::on_prem || o.kind == models::OptionKind::colocation) o.owned.electricity_price = price;
  auto comparison = models::compare_costs(report.inputs);
  if (!comparison) return comparison.errors();
  report.comparison = std::move(comparison).value();
  return {};
}

Result<ServingEstimate> estimate_serving_scenario(const scenarios::Scenario& s, const hardware::Catalog& catalog) {
  if (!s.inference || s.inference->node.empty())
    return Diagnostic{{s.file}, "deployment", "no deployment: to estimate", "add a deployment: section"};
  const auto& inf = *s.inference;
  auto node = models::node_type_by_id(catalog, inf.node, scenarios::commitment_price_field(s.commitment));
  if (!node) return node.errors();
  ServingEstimate e;
  e.node = inf.node;
  e.rate = inf.arrivals.peak_rate().value();
  e.replicas = inf.replicas;
  if (inf.llm) {
    const models::LlmServingSpec spec = scenarios::llm_serving_spec(inf, node->cluster);
    auto estimate = models::estimate_llm_serving(spec, inf.mix);
    if (!estimate) return estimate.errors();
    e.llm = *estimate;
    return e;
  }
  models::Deployment d;
  d.gpu = node->cluster.gpu;
  d.sharing = inf.sharing;
  d.stages = inf.stages;
  auto plan = models::plan_deployment(inf.graph, d);
  if (!plan) return plan.errors();
  e.graph = models::estimate_serving(*plan, e.rate);
  return e;
}

namespace {

void add_curve(Analysis& a, const hardware::Catalog& catalog, ServingCurveCache* cache) {
  const auto& s = a.run.scenario;
  if (!s.inference || s.inference->node.empty() || s.inference->offline_requests > 0) return;
  const std::string key = serving_curve_key(s);
  if (cache != nullptr && cache->curve && cache->key == key) {
    a.curve = cache->curve;
    return;
  }
  auto curve = serving_curve(s, catalog);
  if (!curve) {
    a.problems.insert(a.problems.end(), curve.errors().begin(), curve.errors().end());
    return;
  }
  a.curve = std::move(curve).value();
  if (cache != nullptr) *cache = {key, a.curve};
}

}  // namespace

Result<Analysis> recompute(const scenarios::Scenario& base, const WhatIf& what_if, const hardware::Catalog& catalog,
                           ServingCurveCache* cache) {
  const auto start = std::chrono::steady_clock::now();
  auto scenario = apply_what_if(base, what_if, catalog);
  if (!scenario) return scenario.errors();
  Analysis a;
  // The plan, as every command computes it: the key results are its figures.
  if (auto plan = scenarios::make_plan(*scenario, catalog)) {
    a.run = std::move(plan).value();
    a.planned = true;
    const auto& s = a.run.scenario;
    if (a.run.cost) {
      auto problems = apply_cost_overrides(*a.run.cost, what_if);
      a.problems.insert(a.problems.end(), problems.begin(), problems.end());
      const auto& c = a.run.cost->comparison;
      if (a.run.plan.basis == "service") a.run.plan.cost_per_month = c.options[c.cheapest].monthly_average(c.horizon);
    }
    if (s.inference && !s.inference->node.empty()) {
      auto serving = estimate_serving_scenario(s, catalog);
      if (serving) a.serving = std::move(serving).value();
      else a.problems.insert(a.problems.end(), serving.errors().begin(), serving.errors().end());
    }
    add_curve(a, catalog, cache);
    a.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return a;
  } else {
    a.problems = plan.errors();  // the parts that can be computed still are, below
  }
  a.run.scenario = std::move(scenario).value();
  a.run.catalog_hash = catalog.content_hash;
  const auto& s = a.run.scenario;
  auto keep = [&](const std::vector<Diagnostic>& ds) { a.problems.insert(a.problems.end(), ds.begin(), ds.end()); };
  if (!s.inference && !s.training.service) {
    auto sizing = scenarios::size_scenario(s, catalog);
    if (sizing) a.run.sizing = std::move(sizing).value();
    else keep(sizing.errors());
  }
  if (s.cost) {
    auto cost = scenarios::cost_scenario(s, catalog);
    if (cost) {
      a.run.cost = std::move(cost).value();
      keep(apply_cost_overrides(*a.run.cost, what_if));
    } else {
      keep(cost.errors());
    }
  }
  if (s.inference && !s.inference->node.empty()) {
    auto serving = estimate_serving_scenario(s, catalog);
    if (serving) a.serving = std::move(serving).value();
    else keep(serving.errors());
  }
  add_curve(a, catalog, cache);
  a.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return a;
}

std::vector<scenarios::UtilizationBar> serving_utilization_bars(const ServingEstimate& e) {
  std::vector<scenarios::UtilizationBar> bars;
  if (!e.graph) return bars;
  for (const auto& st : e.graph->stages)
    bars.push_back({st.name, std::min(st.utilization, 1.0), st.name == e.graph->constraint});
  return bars;
}

}  // namespace capsim::gui
