// What the window says about a plan: the key results (the plan's figures, its why-line and
// every expectation with its state), the status bar's check, which figures a failing
// expectation is about, and money written one way. Declared in whatif.hpp.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <regex>

#include "capsim/core/text.hpp"
#include "capsim/models/performance.hpp"
#include "capsim/scenarios/table.hpp"
#include "whatif.hpp"

namespace capsim::gui {
namespace {

std::string fmt_number(double v, const char* format = "%.4g") {
  if (!std::isfinite(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string percent(double fraction) { return fmt_number(100 * fraction, "%.1f") + " %"; }

std::string ms(Seconds s) { return std::isfinite(s.value()) ? fmt_number(s.value() * 1e3, "%.3g") + " ms" : "unbounded"; }

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
