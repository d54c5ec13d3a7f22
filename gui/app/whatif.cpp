#include "whatif.hpp"

#include "capsim/core/text.hpp"

#include <algorithm>
#include <chrono>
#include <regex>
#include <cmath>
#include <cstdio>

#include "capsim/models/performance.hpp"
#include "capsim/models/search.hpp"
#include "capsim/models/serving.hpp"
#include "capsim/models/serving_llm.hpp"
#include "capsim/models/workload.hpp"
#include "capsim/scenarios/serving_report.hpp"
#include "capsim/scenarios/table.hpp"

namespace capsim::gui {
namespace {

Diagnostic control_error(const scenarios::Scenario& s, std::string control, std::string message, std::string hint = {}) {
  return Diagnostic{{s.file}, std::move(control), std::move(message), std::move(hint)};
}

std::string fmt_number(double v, const char* format = "%.4g") {
  if (!std::isfinite(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string percent(double fraction) { return fmt_number(100 * fraction, "%.1f") + " %"; }

std::string ms(Seconds s) { return std::isfinite(s.value()) ? fmt_number(s.value() * 1e3, "%.3g") + " ms" : "unbounded"; }

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

std::string money_in_text(const std::string& text) {
  // The expectation messages come from the shared writer ("total_cost = 388061 USD"); the
  // window writes every amount one way.
  static const std::regex raw(R"((\d{5,}(?:\.\d+)?) USD)");
  std::string out;
  auto begin = std::sregex_iterator(text.begin(), text.end(), raw);
  std::size_t last = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    out += text.substr(last, static_cast<std::size_t>(it->position()) - last);
    out += money_text(std::stod((*it)[1].str()));
    last = static_cast<std::size_t>(it->position() + it->length());
  }
  return out + text.substr(last);
}

std::string money_text(double usd) {
  if (!std::isfinite(usd)) return "n/a";
  return scenarios::human_count(usd) + " USD";
}

std::optional<double> cost_per_million_tokens(const Analysis& a) {
  const auto& p = a.run.plan;
  const auto& s = a.run.scenario;
  const auto& sim = a.run.serving_simulation;
  if (!p.cost_per_month || !s.inference || !sim || !sim->llm || !p.measured("throughput")) return std::nullopt;
  // The simulated output tokens/s of the whole deployment; USD/s over tokens/s = USD per token.
  const double tokens_per_second = sim->llm->output_tokens_per_second;
  if (!(tokens_per_second > 0)) return std::nullopt;
  const double usd = p.cost_per_month->value() / tokens_per_second * 1e6;
  if (!std::isfinite(usd)) return std::nullopt;
  return usd;
}

std::vector<std::string> failing_metrics(const Analysis& a) {
  std::vector<std::string> out;
  for (const auto& e : a.run.expectations)
    if (!e.passed) out.push_back(e.expectation.metric);
  return out;
}

bool key_result_violated(const Analysis& a, const std::string& row) {
  const auto failing = failing_metrics(a);
  auto fails = [&](std::string_view metric) { return std::find(failing.begin(), failing.end(), metric) != failing.end(); };
  auto latency_fails = [&] {
    for (const auto& m : failing)
      if (m.find("p99") != std::string::npos || m.find("latency") != std::string::npos || m.find("ttft") != std::string::npos ||
          m.find("tpot") != std::string::npos)
        return true;
    return false;
  };
  if (row.rfind("expect ", 0) == 0) {
    for (const auto& e : a.run.expectations)
      if (row == "expect " + e.expectation.text) return !e.passed;
    return false;
  }
  if (row == "TTFT p99") return fails("ttft_p99");
  if (row == "TPOT p99") return fails("tpot_p99");
  if (row == "p99 latency" || row == "p99 latency (analytic)") return latency_fails();
  if (row == "load" || row == "capacity") return latency_fails();
  if (row == "time per run") return fails("training_time");
  if (row == "memory per GPU") return fails("memory_headroom");
  if (row == "cost per run") return fails("cost_per_run");
  if (row == "cost per month") return fails("monthly_cost");
  return false;
}

std::string plan_check_text(const Analysis& a) {
  if (!a.planned) {
    const std::string why = a.problems.empty() ? std::string("the plan failed")
                                               : a.problems.front().key_path + ": " + a.problems.front().message;
    return "Plan check: not computed - " + why;
  }
  const auto& ex = a.run.expectations;
  if (ex.empty()) return "Plan check: no expectations";
  std::size_t failed = 0;
  const scenarios::ExpectationResult* first = nullptr;
  for (const auto& e : ex)
    if (!e.passed) {
      ++failed;
      if (first == nullptr) first = &e;
    }
  if (first == nullptr) return "Plan check: passed (" + plural(static_cast<int>(ex.size()), "expectation") + " hold)";
  return "Plan check: FAILED - " + money_in_text(first->message) + " (expected " + first->expectation.text + "; " + std::to_string(failed) +
         " of " + std::to_string(ex.size()) + " fail)";
}

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

std::vector<std::pair<std::string, std::string>> key_results(const Analysis& a) {
  std::vector<std::pair<std::string, std::string>> rows;
  const auto& s = a.run.scenario;
  rows.emplace_back("scenario", s.name);
  const auto& p = a.run.plan;
  if (!p.configuration.empty()) {
    rows.emplace_back("plan (" + p.basis + ")", p.configuration);
    if (!p.reason.empty()) rows.emplace_back("why", p.reason);
    rows.emplace_back("GPUs", plural(p.gpus, "GPU") + (p.gpu.empty() ? "" : " x " + p.gpu) + " on " + plural(p.nodes, "node"));
    if (p.time) rows.emplace_back("time per run", to_string(*p.time) + " (" + p.time_basis + ")");
    if (p.p99) rows.emplace_back("p99 latency", to_string(*p.p99) + " (" + p.latency_basis + ")");
    if (p.ttft_p99) rows.emplace_back("TTFT p99", to_string(*p.ttft_p99) + " (" + p.latency_basis + ")");
    if (p.tpot_p99) rows.emplace_back("TPOT p99", to_string(*p.tpot_p99) + " (" + p.latency_basis + ")");
    if (p.cost_per_run) rows.emplace_back("cost per run", money_text(p.cost_per_run->value()));
    if (p.cost_per_month) rows.emplace_back("cost per month", money_text(p.cost_per_month->value() * units::month));
    if (const auto per_million = cost_per_million_tokens(a)) rows.emplace_back("cost per million tokens", money_text(*per_million));
    for (const auto& w : p.warnings) rows.emplace_back("warning", w);
  }
  if (a.run.sizing) {
    const auto& res = a.run.sizing->search;
    rows.emplace_back("configurations searched", std::to_string(res.evaluated) + " (" + std::to_string(res.fitting) + " fit)");
    if (res.recommended) {
      const auto& c = *res.recommended;
      const auto& type = res.node_types[c.node_type];
      if (p.configuration.empty()) {  // no plan (a part failed): the search's own figures
        rows.emplace_back("recommendation", scenarios::describe_candidate(*a.run.sizing, c));
        rows.emplace_back("GPUs", std::to_string(c.gpus(res.node_types)) + " x " + type.cluster.gpu.id);
        rows.emplace_back("time per run", to_string(c.total_time));
      }
      rows.emplace_back("MFU", percent(c.mfu));
      rows.emplace_back("memory per GPU", to_string(c.memory_per_gpu) + " of " + to_string(type.cluster.gpu.memory));
      rows.emplace_back("constraint", std::string(models::bottleneck_name(static_cast<models::Bottleneck>(c.bottleneck))));
    } else {
      rows.emplace_back("recommendation", res.recommendation.empty() ? "none" : res.recommendation);
    }
  }
  if (a.serving) {
    const auto& e = *a.serving;
    rows.emplace_back("serving node", e.node);
    rows.emplace_back("request rate", fmt_number(e.rate) + " requests/s");
    if (e.graph) {
      rows.emplace_back("capacity", fmt_number(e.graph->capacity) + " requests/s (" + e.graph->constraint + ")");
      // The analytic bound only when no simulation gave the plan its p99: two p99s side by side
      // read as a contradiction.
      if (!p.p99) {
        rows.emplace_back("p99 latency (analytic)", e.graph->stable ? ms(e.graph->p99_latency) : "unbounded (overloaded)");
        rows.emplace_back("mean latency (analytic)", e.graph->stable ? ms(e.graph->mean_latency) : "unbounded (overloaded)");
      }
      rows.emplace_back("constraint", e.graph->constraint);
    }
    if (e.llm) {
      rows.emplace_back("TTFT unloaded", ms(e.llm->ttft_unloaded));
      rows.emplace_back("TPOT at max concurrency", ms(e.llm->tpot_at_max));
      rows.emplace_back("capacity", fmt_number(e.llm->requests_per_second * e.replicas) + " requests/s (" +
                                        std::to_string(e.replicas) + " replicas)");
      rows.emplace_back("load", percent(e.rate / (e.llm->requests_per_second * e.replicas)));
    }
  }
  if (a.run.cost) {
    const auto& c = a.run.cost->comparison;
    rows.emplace_back("horizon", fmt_number(c.horizon.value() / units::month, "%.3g") + " months");
    rows.emplace_back("utilization", a.run.cost->inputs.demand.profile.name + " (" +
                                         percent(a.run.cost->inputs.demand.profile.busy_fraction) + ")");
    rows.emplace_back("cheapest option", c.options[c.cheapest].name);
    rows.emplace_back("total cost (cheapest)", money_text(c.totals[c.cheapest].value()));
    for (std::size_t i = 0; i < c.options.size(); ++i)
      rows.emplace_back("total: " + c.options[i].name, money_text(c.totals[i].value()));
  }
  // Every expectation with its state, as `capsim run --check` lists them.
  for (const auto& e : a.run.expectations)
    rows.emplace_back("expect " + e.expectation.text, std::string(e.passed ? "ok: " : "FAILED: ") + money_in_text(e.message));
  for (const auto& d : a.problems) rows.emplace_back("problem", d.key_path + ": " + d.message);
  return rows;
}

}  // namespace capsim::gui
