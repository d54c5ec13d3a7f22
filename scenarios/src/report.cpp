#include "capsim/scenarios/report.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "capsim/core/files.hpp"
#include "capsim/core/suggest.hpp"
#include "capsim/core/text.hpp"
#include "capsim/core/units.hpp"
#include "capsim/models/memory.hpp"
#include "capsim/models/performance.hpp"
#include "capsim/scenarios/catalog_views.hpp"
#include "capsim/scenarios/escape.hpp"
#include "capsim/scenarios/serving_report.hpp"
#include "capsim/version.hpp"

namespace capsim::scenarios {
namespace {

using hardware::Entity;
using hardware::EntityKind;

std::string pct(double v) { return to_string(ParsedQuantity{100 * v, {}, {}}) + " %"; }

ReportSection question(const RunResult& run) {
  const auto& s = run.scenario;
  ReportSection sec{"question", "The question", {}, {}, {}, s.text};
  if (!s.description.empty()) sec.paragraphs.push_back(s.description);
  Table t{{"input", "value"}, {}, {false, false}};
  auto gpu_list = [&] {
    std::string gpus;
    for (const auto& g : s.hardware.gpus) gpus += (gpus.empty() ? "" : ", ") + g;
    return gpus;
  };
  if (s.inference) {
    const auto& inf = *s.inference;
    if (inf.llm) {
      t.rows.push_back({"model", inf.shape.name});
      t.rows.push_back({"request", inf.mix.requests.empty()
                                       ? std::to_string(inf.mix.prompt_tokens) + " prompt tokens, " +
                                             std::to_string(inf.mix.output_tokens) + " output tokens"
                                       : std::to_string(inf.mix.requests.size()) + " lengths " +
                                             (inf.request_lengths_file.empty()
                                                  ? "drawn from prompt " + models::llm_length_text(inf.prompt_lengths) +
                                                        "; output " + models::llm_length_text(inf.output_lengths)
                                                  : "from " + inf.request_lengths_file) +
                                             ", mean " +
                                             std::to_string(inf.mix.prompt_tokens) + " prompt tokens, " +
                                             std::to_string(inf.mix.output_tokens) + " output tokens"});
      if (inf.speculation.tokens > 0)
        t.rows.push_back({"speculative decoding",
                          std::to_string(inf.speculation.tokens) + " proposals per step at acceptance " +
                              significant(inf.speculation.acceptance_rate, 3) + " (" +
                              significant(models::llm_tokens_per_step(inf.speculation), 3) + " tokens per step), draft " +
                              (inf.speculation.has_draft ? inf.speculation.draft.name : std::string("none"))});
    } else {
      std::string models;
      for (const auto& st : inf.graph.stages) models += (models.empty() ? "" : ", ") + st.name;
      t.rows.push_back({"graph", models});
    }
    t.rows.push_back({"precision", std::string(models::precision_name(inf.exec.precision))});
    t.rows.push_back({"arrivals (peak)", to_string(ParsedQuantity{inf.arrivals.peak_rate().value(), {}, {}}) + " requests/s"});
    if (inf.p99) t.rows.push_back({"SLO", "p99 < " + to_string(*inf.p99)});
    if (inf.ttft_p99) t.rows.push_back({"SLO", "TTFT p99 < " + to_string(*inf.ttft_p99)});
    if (inf.tpot_p99) t.rows.push_back({"SLO", "TPOT p99 < " + to_string(*inf.tpot_p99)});
    if (!s.hardware.gpus.empty()) t.rows.push_back({"candidate GPUs", gpu_list()});
    if (!inf.node.empty()) t.rows.push_back({"deployment", inf.node});
  } else if (s.training.service) {
    t.rows.push_back({"workload", plural(s.training.service_gpus, "GPU") + " of services"});
  } else {
    t.rows.push_back({"model", s.training.model_name});
    if (s.training.is_transformer())
      t.rows.push_back({"tokens", to_string(ParsedQuantity{s.training.tokens, {}, {}})});
    else
      t.rows.push_back({"samples", to_string(ParsedQuantity{s.training.samples * s.training.epochs, {}, {}}) +
                                       " (" + to_string(ParsedQuantity{s.training.epochs, {}, {}}) + " epochs)"});
    t.rows.push_back({"precision", std::string(models::precision_name(s.training.options.compute))});
    t.rows.push_back({"candidate GPUs", gpu_list()});
    t.rows.push_back({"GPUs", std::to_string(s.hardware.min_gpus) + " to " + std::to_string(s.hardware.max_gpus)});
  }
  if (s.deadline) t.rows.push_back({"deadline", to_string(*s.deadline)});
  if (s.budget) t.rows.push_back({"budget", to_string(*s.budget)});
  for (const auto& e : s.expect) t.rows.push_back({"expect", e.text});
  sec.tables.push_back(t);
  return sec;
}

// The plan's figures, as every other view shows them.
ReportSection plan_section(const RunResult& run) {
  const auto& p = run.plan;
  ReportSection sec{"plan", "The plan", {}, {}, {}, {}};
  sec.paragraphs.push_back(p.configuration.empty() ? "No configuration: " + p.reason
                                                   : p.configuration + (p.reason.empty() ? "" : ": " + p.reason) + ".");
  // Each figure with its number (as the plan's JSON has it) for CSV; how it was obtained beside.
  Table t{{"figure", "value", "basis"}, {}, {false, false, false}};
  t.rows.push_back({"GPUs", Cell(std::to_string(p.gpus), p.gpus), ""});
  t.rows.push_back({"nodes", Cell(std::to_string(p.nodes), p.nodes), ""});
  if (p.time) t.rows.push_back({"time per run", Cell(to_string(*p.time), p.time->value(), "s"), p.time_basis});
  const std::string not_measured = "not measured (" + p.not_measured_reason + ")";
  if (p.throughput)
    t.rows.push_back({"throughput", Cell(human_count(*p.throughput) + " " + p.throughput_unit, *p.throughput, p.throughput_unit), ""});
  else if (!p.measured("throughput")) t.rows.push_back({"throughput", not_measured, ""});
  auto latency = [&](const char* figure, const std::optional<Seconds>& v, const char* json_name) {
    if (v) t.rows.push_back({figure, Cell(to_string(*v), v->value(), "s"), p.latency_basis});
    else if (!p.measured(json_name)) t.rows.push_back({figure, not_measured, ""});
  };
  latency("p99 latency", p.p99, "p99_seconds");
  latency("TTFT p99", p.ttft_p99, "ttft_p99_seconds");
  latency("TPOT p99", p.tpot_p99, "tpot_p99_seconds");
  if (p.cost_per_run)
    t.rows.push_back({"cost per run", Cell(human_count(p.cost_per_run->value()) + " USD", p.cost_per_run->value(), "USD"),
                      p.cost_basis});
  if (p.cost_per_month) {
    const double monthly = p.cost_per_month->value() * units::month;
    t.rows.push_back({"cost per month", Cell(human_count(monthly) + " USD", monthly, "USD"), p.cost_basis});
  }
  if (!p.cost_per_run && !p.cost_per_month && !p.cost_basis.empty()) t.rows.push_back({"cost basis", p.cost_basis, ""});
  if (p.usd_per_million_input_tokens && p.usd_per_million_output_tokens && p.usd_per_million_tokens) {
    auto usd = [](double v) { return Cell(significant(v, 3) + " USD", v, "USD"); };
    t.rows.push_back({"cost per million input tokens", usd(*p.usd_per_million_input_tokens), p.token_cost_basis});
    t.rows.push_back({"cost per million output tokens", usd(*p.usd_per_million_output_tokens), p.token_cost_basis});
    t.rows.push_back({"cost per million tokens, both", usd(*p.usd_per_million_tokens), p.token_cost_basis});
  }
  for (const auto& price : p.prices) t.rows.push_back({"price", price.text(), ""});
  for (const auto& c : p.conversions) t.rows.push_back({"currency", c, ""});
  for (const auto& w : p.warnings) t.rows.push_back({"warning", w, ""});
  sec.tables.push_back(t);
  return sec;
}

ReportSection recommendation(const RunResult& run) {
  ReportSection sec{"recommendation", "Recommendation", {}, {}, {}, {}};
  const auto& r = *run.sizing;
  if (!r.search.recommended) {
    sec.paragraphs.push_back("The search found no configuration to recommend.");
    return sec;
  }
  const auto& c = *r.search.recommended;
  sec.paragraphs.push_back(describe_candidate(r, c) + ": " + r.search.recommendation + ".");
  Table t{{"figure", "value"}, {}, {false, false}};
  t.rows.push_back({"time to train", Cell(to_string(c.total_time), c.total_time.value(), "s")});
  t.rows.push_back({"cost per run", run.plan.cost_per_run ? Cell(human_count(run.plan.cost_per_run->value()) + " USD",
                                                                 run.plan.cost_per_run->value(), "USD")
                                                          : Cell("no catalog price")});
  t.rows.push_back({"GPU-hours", Cell(to_string(ParsedQuantity{c.gpu_hours, {}, {}}), c.gpu_hours)});
  t.rows.push_back({"model FLOPs utilization", Cell(pct(c.mfu), 100 * c.mfu, "%")});
  t.rows.push_back({"memory per GPU", Cell(to_string(c.memory_per_gpu), c.memory_per_gpu.value(), "B")});
  t.rows.push_back({"GPU memory", Cell(to_string(r.search.node_types[c.node_type].cluster.gpu.memory),
                                       r.search.node_types[c.node_type].cluster.gpu.memory.value(), "B")});
  t.rows.push_back({"constraint", std::string(models::bottleneck_name(static_cast<models::Bottleneck>(c.bottleneck)))});
  sec.tables.push_back(t);
  sec.tables.push_back(node_pools_table(r, c));
  return sec;
}

ReportSection frontier(const RunResult& run) {
  ReportSection sec{"frontier", "Time against cost", {}, {}, {}, {}};
  bool priced = false;
  for (const auto& c : run.sizing->search.fastest) priced = priced || c.cost.has_value();
  if (priced) sec.charts.push_back(ChartKind::frontier);
  sec.paragraphs.push_back("Every configuration that fits in memory was ranked; the frontier keeps those for which no "
                           "other is both faster and cheaper. Searched " +
                           std::to_string(run.sizing->search.evaluated) + " configurations, " +
                           std::to_string(run.sizing->search.fitting) + " fit.");
  if (!run.sizing->search.frontier.empty()) sec.tables.push_back(frontier_table(*run.sizing));
  sec.tables.push_back(fastest_table(*run.sizing));
  return sec;
}

ReportSection memory(const RunResult& run) {
  ReportSection sec{"memory", "Memory per GPU", {}, {}, {ChartKind::memory_breakdown}, {}};
  Table t{{"configuration", "weights", "gradients", "optimizer", "activations", "overhead", "total", "capacity"},
          {},
          {false, true, true, true, true, true, true, true}};
  for (const auto& bar : memory_bars(run)) {
    std::vector<Cell> row{bar.label};
    double total = 0;
    for (const auto& [name, bytes] : bar.parts) {
      if (name == "kv_cache") continue;
      row.emplace_back(to_string(Bytes(bytes)), bytes, "B");
      total += bytes;
    }
    row.emplace_back(to_string(Bytes(total)), total, "B");
    row.emplace_back(to_string(Bytes(bar.capacity)), bar.capacity, "B");
    t.rows.push_back(row);
  }
  sec.tables.push_back(t);
  return sec;
}

ReportSection simulation(const RunResult& run) {
  const auto& p = run.simulation->pipeline;
  ReportSection sec{"simulation", "The simulated pipeline", {}, {}, {ChartKind::station_utilization}, {}};
  sec.paragraphs.push_back("A discrete-event simulation of " + run.simulation->node + ": " +
                           to_string(ParsedQuantity{p.simulated_samples_per_second, {}, {}}) +
                           " samples/s, the GPU " + pct(p.gpu_utilization) + " busy. The constraint is " +
                           p.simulation.constraint + (p.simulation.constraint == "cpu decode"
                                                          ? "; " + std::to_string(p.cores_to_feed_gpus) +
                                                                " cores would keep the GPUs fed."
                                                          : "."));
  Table t{{"station or conveyor", "utilization", "constraint"}, {}, {false, true, false}};
  for (const auto& b : utilization_bars(run)) t.rows.push_back({b.name, Cell(pct(b.utilization), 100 * b.utilization, "%"), b.constraint ? "yes" : ""});
  sec.tables.push_back(t);
  return sec;
}

ReportSection cost(const RunResult& run) {
  ReportSection sec{"cost", "Where to run it: cost", {}, {}, {ChartKind::cost_over_horizon}, {}};
  const auto& c = run.cost->comparison;
  sec.paragraphs.push_back("Cheapest over the horizon: " + c.options[c.cheapest].name + ", " +
                           to_string(c.totals[c.cheapest]) + ". Owned hardware counts the part of its price used up "
                           "over the horizon; the chart shows cumulative cash, purchases in month 0.");
  sec.tables.push_back(cost_table(*run.cost));
  sec.tables.push_back(break_even_table(*run.cost));
  return sec;
}

ReportSection serving_simulation(const RunResult& run) {
  const auto& s = *run.serving_simulation;
  ReportSection sec{"serving", "The simulated deployment", {}, {}, {}, {}};
  Table t{{"figure", "simulated", "analytic"}, {}, {false, false, false}};
  auto ms = [](double v) { return std::isfinite(v) ? to_string(Seconds(v)) : std::string("n/a"); };
  if (s.llm) {
    sec.paragraphs.push_back("Request by request, with continuous batching and the KV cache as the limit on concurrent "
                             "sequences, at " + to_string(ParsedQuantity{s.rate, {}, {}}) + " requests/s on " + s.node + ".");
    // A percentile of no completed request is not 0 ms: say it was not measured.
    auto observed = [&](double v, bool seconds = true) {
      if (s.llm->completed == 0) return Cell("not measured (no request completed)");
      return seconds ? Cell(ms(v), v, "s") : Cell(to_string(ParsedQuantity{v, {}, {}}), v);
    };
    t.rows.push_back({"time to first token p99", observed(s.llm->ttft.p99.mean), ms(s.llm_estimate->ttft_unloaded.value()) + " unloaded"});
    t.rows.push_back({"time per output token p99", observed(s.llm->tpot.p99.mean), ms(s.llm_estimate->tpot_single.value()) + " at one sequence"});
    t.rows.push_back({"output tokens/s", observed(s.llm->output_tokens_per_second, false),
                      to_string(ParsedQuantity{s.llm_estimate->output_tokens_per_second * s.replicas, {}, {}}) + " capacity"});
    t.rows.push_back({"concurrent sequences (peak)", std::to_string(s.llm->peak_running),
                      std::to_string(s.llm_estimate->max_concurrent_sequences) + " fit"});
    sec.charts.push_back(ChartKind::station_utilization);
  } else {
    const auto& g = *s.graph;
    sec.charts.push_back(ChartKind::latency_cdf);
    sec.paragraphs.push_back("Request by request at " + to_string(ParsedQuantity{s.rate, {}, {}}) + " requests/s on " +
                             s.node + ": the constraint is " + g.simulation.constraint + ".");
    // No request reached the end of the graph: its rate and latencies were not measured.
    const bool measured = !g.simulation.latency_cdf.empty();
    auto observed = [&](Cell cell) { return measured ? cell : Cell("not measured (no request completed)"); };
    t.rows.push_back({"throughput (requests/s)",
                      observed(Cell(to_string(ParsedQuantity{g.simulated_throughput, {}, {}}), g.simulated_throughput)),
                      to_string(ParsedQuantity{g.analytic.capacity, {}, {}}) + " capacity"});
    t.rows.push_back({"latency p50", observed(Cell(ms(g.latency.p50.mean), g.latency.p50.mean, "s")), ""});
    t.rows.push_back({"latency p99", observed(Cell(ms(g.latency.p99.mean), g.latency.p99.mean, "s")),
                      ms(g.analytic.p99_latency.value()) + " (estimate)"});
    if (!g.analytic_note.empty()) sec.paragraphs.push_back("Note: " + g.analytic_note + ".");
    Table stages{{"stage", "servers", "batch", "utilization"}, {}, {false, true, true, true}};
    for (std::size_t i = 0; i < g.plan.stages.size(); ++i)
      stages.rows.push_back({g.plan.stages[i].name, std::to_string(g.plan.stages[i].servers),
                             std::to_string(g.plan.stages[i].max_batch_requests),
                             Cell(pct(g.stage_utilization[i]), 100 * g.stage_utilization[i], "%")});
    sec.tables.push_back(t);
    sec.tables.push_back(stages);
    return sec;
  }
  sec.tables.push_back(t);
  return sec;
}

ReportSection serving_sizing(const RunResult& run) {
  const auto& z = *run.serving_sizing;
  ReportSection sec{"recommendation", "Recommendation", {}, {}, {}, {}};
  const std::string summary = z.llm ? (z.llm->recommended ? z.llm->recommended->summary + ": " + z.llm->recommendation
                                                          : "no deployment meets the SLO: " + z.llm->recommendation)
                                    : (z.graph->recommended ? z.graph->recommended->summary + ": " + z.graph->recommendation
                                                            : "no deployment meets the SLO: " + z.graph->recommendation);
  sec.paragraphs.push_back(summary);
  if (auto pools = serving_node_pools(z)) sec.tables.push_back(serving_node_pool_table(*pools));
  return sec;
}

// Every catalog figure the run relied on, with its source and date.
ReportSection sources(const RunResult& run, const hardware::Catalog& catalog) {
  ReportSection sec{"sources", "Assumptions and sources", {}, {}, {}, {}};
  sec.paragraphs.push_back(
      "Models: memory rules after Korthikanti et al. 2022 and Rajbhandari et al. 2020 (ZeRO); step time from "
      "per-operation rooflines and alpha-beta collectives, validated against Narayanan et al. 2021 (Megatron-LM, "
      "SC'21); costs over the horizon depreciate owned hardware straight-line.");
  std::set<std::string> ids;
  if (run.sizing && run.sizing->search.recommended) {
    const auto& type = run.sizing->search.node_types[run.sizing->search.recommended->node_type];
    ids.insert(type.id);
    ids.insert(type.cluster.gpu.id);
  }
  if (run.serving_simulation) {
    ids.insert(run.serving_simulation->node);
    if (const Entity* n = catalog.find(run.serving_simulation->node)) ids.insert(n->text("gpu"));
  }
  if (run.simulation) {
    ids.insert(run.simulation->node);
    if (const Entity* n = catalog.find(run.simulation->node)) ids.insert(n->text("gpu"));
  }
  if (run.cost)
    for (const auto& o : run.scenario.cost->options)
      for (const auto* id : {&o.instance, &o.server, &o.facility})
        if (!id->empty()) ids.insert(*id);
  Table t{{"figure", "value", "source", "as of"}, {}, {false, true, false, false}};
  for (const auto& id : ids) {
    const Entity* e = catalog.find(id);
    if (e == nullptr) continue;
    for (const auto& def : hardware::fields_of(e->kind)) {
      const auto* v = e->find(def.name);
      if (v == nullptr || !v->provenance) continue;
      // The figure as the catalog holds it (SI units, as `capsim catalog show --format json`
      // writes it) beside its display, so CSV keeps every digit.
      Cell value = display_value(def, *v);
      if (v->type == hardware::FieldType::quantity) value = Cell(value.text, v->number, si_unit(v->dim, v->currency));
      else if (v->type == hardware::FieldType::integer) value = Cell(value.text, v->number);
      t.rows.push_back({id + " " + std::string(def.name), value,
                        (v->provenance->from_overlay() ? "your quote (" + v->provenance->overlay + "): " : std::string()) +
                            v->provenance->source,
                        v->provenance->as_of});
    }
  }
  sec.tables.push_back(t);
  return sec;
}

}  // namespace

std::vector<MemoryBar> memory_bars(const RunResult& run) {
  std::vector<MemoryBar> bars;
  if (!run.sizing || !run.sizing->search.recommended) return bars;
  const auto& s = run.scenario;
  auto add = [&](const models::Candidate& c) {
    const auto& type = run.sizing->search.node_types[c.node_type];
    models::MemoryBreakdown m;
    if (const auto* shape = std::get_if<models::TransformerShape>(&s.training.model))
      m = models::training_memory_per_gpu(*shape, c.par, s.training.options);
    else
      m = models::sample_model_training_memory(std::get<models::SampleModel>(s.training.model), c.batch_per_gpu,
                                               s.training.options);
    bars.push_back({type.id + " (" + plural(c.par.gpus(), "GPU") + ")",
                    {{"weights", m.weights.value()},
                     {"gradients", m.gradients.value()},
                     {"optimizer", m.optimizer.value()},
                     {"activations", m.activations.value()},
                     {"overhead", m.overhead.value()}},
                    type.cluster.gpu.memory.value()});
  };
  add(*run.sizing->search.recommended);
  for (const auto& c : run.sizing->search.fastest) {
    if (bars.size() >= 4) break;
    if (c.node_type != run.sizing->search.recommended->node_type) add(c);
  }
  return bars;
}

std::vector<UtilizationBar> utilization_bars(const RunResult& run) {
  std::vector<UtilizationBar> bars;
  // LLM serving: how full the replica runs, by the resources that bound it.
  if (run.serving_simulation && run.serving_simulation->llm && run.serving_simulation->llm_estimate) {
    const auto& m = *run.serving_simulation->llm;
    const auto& e = *run.serving_simulation->llm_estimate;
    const double capacity = e.requests_per_second * run.serving_simulation->replicas;
    const double load = capacity > 0 ? std::min(1.0, run.serving_simulation->rate / capacity) : 0.0;
    const double batch = e.max_concurrent_sequences > 0 ? m.mean_running / e.max_concurrent_sequences : 0.0;
    bars.push_back({"KV cache", m.kv_utilization, m.kv_utilization >= std::max(load, batch)});
    bars.push_back({"running batch / sequences that fit", std::min(1.0, batch), batch > std::max(load, m.kv_utilization)});
    bars.push_back({"offered load / capacity", load, load > std::max(batch, m.kv_utilization)});
    return bars;
  }
  if (!run.simulation) return bars;
  const auto& sim = run.simulation->pipeline.simulation;
  for (const auto& c : sim.conveyors) bars.push_back({c.name, c.utilization.mean, c.name == sim.constraint});
  for (const auto& s : sim.stations) bars.push_back({s.name, s.utilization.mean, s.name == sim.constraint});
  return bars;
}

LatencyCdf latency_cdf(const RunResult& run) {
  LatencyCdf out;
  if (!run.serving_simulation || !run.serving_simulation->graph) return out;
  out.points = run.serving_simulation->graph->simulation.latency_cdf;
  if (run.scenario.inference && run.scenario.inference->p99) out.slo_seconds = run.scenario.inference->p99->value();
  return out;
}

std::vector<CostLine> cost_lines(const RunResult& run) {
  std::vector<CostLine> lines;
  if (!run.cost) return lines;
  const auto& c = run.cost->comparison;
  const int months = static_cast<int>(std::ceil(c.horizon.value() / units::month));
  for (const auto& o : c.options) {
    CostLine line{o.name, {}};
    for (int m = 0; m <= months; ++m) line.points.emplace_back(m, o.cumulative(Seconds(m * units::month)).value());
    lines.push_back(std::move(line));
  }
  return lines;
}

ReportDocument build_report(const RunResult& run, const hardware::Catalog& catalog) {
  ReportDocument doc;
  doc.title = "Sizing report: " + run.scenario.name;
  doc.subtitle = "Status " + run.status() + ", " + run.started_at;
  doc.sections.push_back(question(run));
  doc.sections.push_back(plan_section(run));
  if (run.sizing) {
    doc.sections.push_back(recommendation(run));
    doc.sections.push_back(frontier(run));
    doc.sections.push_back(memory(run));
  }
  if (run.simulation) doc.sections.push_back(simulation(run));
  if (run.serving_sizing) doc.sections.push_back(serving_sizing(run));
  if (run.serving_simulation) doc.sections.push_back(serving_simulation(run));
  if (run.cost) {
    doc.sections.push_back(cost(run));
    doc.sections.push_back({"sensitivity", "Sensitivity",
                            {"Each input varied by -25 % and +25 %: the cheapest option then, its total, and the swing "
                             "relative to the base case, largest first."},
                            {sensitivity_table(*run.cost)},
                            {},
                            {}});
  }
  if (!run.expectations.empty()) {
    Table t{{"expectation", "result", "measured"}, {}, {false, false, false}};
    for (const auto& e : run.expectations)
      t.rows.push_back({e.expectation.text, e.passed ? "passed" : "FAILED", e.message});
    doc.sections.push_back({"expectations", "Expectations", {}, {t}, {}, {}});
  }
  doc.sections.push_back(sources(run, catalog));
  doc.footer = "capsim " + std::string(CAPSIM_VERSION) + ", catalog " + run.catalog_hash + ", run " + run.started_at;
  return doc;
}

// Every text of the document is plain text (the HTML writer escapes it all), names from the
// user's files among it: Markdown gets it escaped, never as markup (escape.hpp).
std::string report_markdown(const ReportDocument& doc) {
  std::string out = "# " + markdown_inline(doc.title) + "\n\n" + markdown_block(doc.subtitle) + "\n";
  for (const auto& s : doc.sections) {
    out += "\n## " + markdown_inline(s.title) + "\n\n";
    for (const auto& p : s.paragraphs) out += markdown_block(p) + "\n\n";
    if (!s.preformatted.empty()) {
      const std::string fence = markdown_fence(s.preformatted);
      out += fence + "yaml\n" + s.preformatted + (s.preformatted.ends_with("\n") ? "" : "\n") + fence + "\n\n";
    }
    for (const auto& t : s.tables) out += render_markdown(t) + "\n";
  }
  return out + "---\n" + markdown_block(doc.footer) + "\n";
}

std::vector<NamedTable> report_tables(const ReportDocument& doc) {
  std::vector<NamedTable> out;
  for (const auto& s : doc.sections)
    for (std::size_t i = 0; i < s.tables.size(); ++i)
      out.push_back({s.id + (i == 0 ? "" : "-" + std::to_string(i + 1)), &s.tables[i]});
  return out;
}

Result<std::vector<std::filesystem::path>> write_csv_report(const ReportDocument& doc, const std::filesystem::path& path,
                                                            const std::string& table) {
  const auto tables = report_tables(doc);
  std::vector<std::filesystem::path> written;
  if (!table.empty()) {
    std::vector<std::string> names;
    for (const auto& t : tables) {
      if (t.name == table) {
        if (auto status = write_file_atomically(path, render_csv(*t.table)); !status.empty()) return status;
        return std::vector<std::filesystem::path>{path};
      }
      names.push_back(t.name);
    }
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    const std::string hint = did_you_mean(table, names);
    return Diagnostic{{}, "--table", "this report has no table '" + table + "'", hint.empty() ? "its tables: " + list : hint};
  }
  const auto stem = (path.parent_path() / path.stem()).string();
  for (const auto& t : tables) {
    const std::filesystem::path file = stem + "-" + t.name + ".csv";
    if (auto status = write_file_atomically(file, render_csv(*t.table)); !status.empty()) return status;
    written.push_back(file);
  }
  return written;
}

}  // namespace capsim::scenarios
