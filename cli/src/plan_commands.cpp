// `capsim memory` and `capsim size`: will it fit, and which configuration to buy.
#include "plan_commands.hpp"

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>

#include "capsim/core/units.hpp"
#include "capsim/models/memory.hpp"
#include "capsim/scenarios/estimate.hpp"
#include "capsim/models/workload.hpp"
#include "capsim/core/files.hpp"
#include "capsim/core/suggest.hpp"
#include "capsim/scenarios/runner.hpp"
#include "capsim/scenarios/cost_report.hpp"
#include "capsim/scenarios/serving_report.hpp"
#include "capsim/scenarios/simulation.hpp"
#include "capsim/scenarios/sizing.hpp"
#include "capsim/scenarios/workspace.hpp"
#include "completion.hpp"
#ifdef CAPSIM_HAVE_RENDER
#include "capsim/render/charts.hpp"
#endif

namespace capsim::cli {
namespace {

struct SizeOptions {
  std::string file;
  std::string fabric = "analytic";
  std::string chart;  // .png or .svg of the time/cost frontier
  Format format = Format::table;
};

int run_estimate(const GlobalOptions& g, const SizeOptions& o) {
  auto ws = open_workspace(g, hardware::Access::read_only);
  if (!ws) return report_errors(ws.errors());
  auto scenario = scenarios::load_scenario_file(o.file, *ws->catalog);
  if (!scenario) return report_errors(scenario.errors());
  auto e = scenarios::estimate_scenario(*scenario, *ws->catalog);
  if (!e) return report_errors(e.errors());
  // estimate_json names its own schema ("capsim.estimate").
  std::cout << (o.format == Format::json ? scenarios::estimate_json(*e) : scenarios::estimate_text(*e));
  return kExitOk;
}

// Every command below renders the scenario's Plan (scenarios/runner.hpp, make_plan), or a part
// of it: the figures they share are computed once, so no two commands disagree.
Result<scenarios::Plan> load_plan(const GlobalOptions& g, const std::string& file, TerminalProgress* progress,
                                  scenarios::CollectiveTiming collectives = scenarios::CollectiveTiming::analytic) {
  auto policy = price_age(g);
  if (!policy) return policy.errors();
  auto ws = open_workspace(for_scenario(g, file), hardware::Access::read_only);
  if (!ws) return ws.errors();
  auto scenario = scenarios::load_scenario_file(file, *ws->catalog);
  if (!scenario) return scenario.errors();
  return scenarios::make_plan(*scenario, *ws->catalog, progress, collectives, *policy);
}

int run_size(const GlobalOptions& g, const SizeOptions& o) {
  TerminalProgress progress;
  auto plan = load_plan(g, o.file, &progress,
                        o.fabric == "simgrid" ? scenarios::CollectiveTiming::simgrid : scenarios::CollectiveTiming::analytic);
  if (progress.cancelled() || (plan && plan->sizing && plan->sizing->search.cancelled)) {
    std::cerr << "capsim: stopped by Ctrl-C; nothing was written\n";
    return kExitInterrupted;
  }
  if (!plan) return report_errors(plan.errors());
  if (plan->serving_sizing) {
    std::cout << (o.format == Format::json
                      ? with_schema(scenarios::with_plan(scenarios::serving_sizing_json(*plan->serving_sizing), *plan),
                                    "capsim-size/1")
                      : scenarios::plan_figures_text(plan->plan) + "\n" + scenarios::serving_sizing_text(*plan->serving_sizing));
    return kExitOk;
  }
  if (!plan->sizing) {
    const std::string why = plan->scenario.inference
                                ? "an inference scenario is sized over hardware.gpus, and this one names none"
                                : "a service states its GPUs (workload.gpus); there is nothing to size";
    if (o.format == Format::json) {
      std::cout << with_schema(
          scenarios::with_plan(nlohmann::json{{"sizing", nullptr}, {"why", why}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), *plan), "capsim-size/1");
    } else {
      std::cout << scenarios::plan_figures_text(plan->plan) << "\nNo sizing: " << why << ".\n";
    }
    return kExitOk;
  }
  if (o.format == Format::json)
    std::cout << with_schema(scenarios::with_plan(scenarios::sizing_json(*plan->sizing), *plan), "capsim-size/1");
  else std::cout << scenarios::plan_figures_text(plan->plan) << "\n" << scenarios::sizing_text(*plan->sizing);
#ifdef CAPSIM_HAVE_RENDER
  if (!o.chart.empty())
    if (auto status = render::render_frontier_chart(*plan->sizing, o.chart); !status.empty()) return report_errors(status);
#endif
  return kExitOk;
}

int run_simulate(const GlobalOptions& g, const SizeOptions& o) {
  auto plan = load_plan(g, o.file, nullptr);
  if (!plan) return report_errors(plan.errors());
  const bool json = o.format == Format::json;
  if (plan->serving_simulation) {
    const std::string note = plan->simulated_recommendation
                                 ? "The scenario states no deployment: simulating the plan's recommended one, " +
                                       plan->plan.configuration + ".\n\n"
                                 : std::string();
    std::cout << (json ? with_schema(scenarios::with_plan(scenarios::serving_simulation_json(*plan->serving_simulation),
                                                          *plan),
                                     "capsim-simulate/1")
                       : note + scenarios::serving_simulation_text(*plan->serving_simulation));
    return kExitOk;
  }
  if (!plan->simulation) {
    if (plan->scenario.inference)
      return report_errors({{{plan->scenario.file}, "deployment",
                             "nothing to simulate: the scenario states no deployment and names no hardware.gpus to size one",
                             "add hardware: {gpus: [...]} or a deployment:"}});
    return report_errors({{{plan->scenario.file}, "simulate", "the scenario has no simulate: section to run",
                           "see docs/scenario-reference.md (simulate:)"}});
  }
  std::cout << (json ? with_schema(scenarios::with_plan(scenarios::simulation_json(*plan->simulation), *plan),
                                   "capsim-simulate/1")
                     : scenarios::simulation_text(*plan->simulation));
  return kExitOk;
}

int run_cost(const GlobalOptions& g, const SizeOptions& o) {
  auto plan = load_plan(g, o.file, nullptr);
  if (!plan) return report_errors(plan.errors());
  if (!plan->cost)
    return report_errors({{{plan->scenario.file}, "cost", "the scenario has no cost: section", "see docs/scenario-reference.md"}});
  std::cout << (o.format == Format::json ? with_schema(scenarios::with_plan(scenarios::cost_json(*plan->cost), *plan),
                                                       "capsim-cost/1")
                                         : scenarios::plan_figures_text(plan->plan) + "\n" + scenarios::cost_text(*plan->cost));
  return kExitOk;
}

struct ExportOptions {
  std::string format;
  std::string file;
  std::string output;
  std::string node_type;
  std::string cluster = "capsim";
  std::string location;
  std::string image = scenarios::kPlaceholderImage;
};

// --node-type: a catalog instance or server id, or a provider's instance name ("g6e.xlarge").
Result<std::string> resolve_node_type(const hardware::Catalog& catalog, const std::string& wanted) {
  std::vector<std::string> ids;
  for (auto kind : {hardware::EntityKind::instance, hardware::EntityKind::server})
    for (const auto& e : catalog.all(kind)) {
      if (e.id == wanted || (kind == hardware::EntityKind::instance && e.text("name") == wanted)) return e.id;
      ids.push_back(e.id);
    }
  const std::string hint = did_you_mean(wanted, ids);
  return Diagnostic{{}, "--node-type", "unknown node type '" + wanted + "'",
                    hint.empty() ? "'capsim catalog list instances' shows them" : hint};
}

int run_export(const GlobalOptions& g, const ExportOptions& o) {
  auto format = scenarios::parse_export_format(o.format);
  if (!format) return report_errors(format.errors());
  auto policy = price_age(g);
  if (!policy) return report_errors(policy.errors());
  auto ws = open_workspace(for_scenario(g, o.file), hardware::Access::read_only);
  if (!ws) return report_errors(ws.errors());
  // The flags first, as a scenario's keys are checked (the plan takes a while).
  scenarios::ExportSettings settings;
  settings.cluster = o.cluster;
  settings.image = o.image;
  settings.location = o.location;
  std::vector<Diagnostic> flag_errors = scenarios::check_export_settings(settings, *format);
  const bool gcp = *format == scenarios::ExportFormat::gke || *format == scenarios::ExportFormat::terraform;
  if (gcp && !o.location.empty() && flag_errors.empty())
    for (auto& d : scenarios::check_gcp_location(o.location, *ws->catalog)) flag_errors.push_back(std::move(d));
  if (!flag_errors.empty()) return report_errors(flag_errors);
  auto scenario = scenarios::load_scenario_file(o.file, *ws->catalog);
  if (!scenario) return report_errors(scenario.errors());
  if (scenario->training.service)
    return report_errors({{{scenario->file}, "workload", "a service scenario has no sizing recommendation to export", ""}});
  std::string node_type;
  if (!o.node_type.empty()) {
    auto id = resolve_node_type(*ws->catalog, o.node_type);
    if (!id) return report_errors(id.errors());
    node_type = *id;
  }
  // Another node type than the plan's: the plan of the same scenario restricted to that node
  // type, so its export follows the same rules (the recommendation there, not the fastest).
  scenarios::Scenario asked = *scenario;
  if (!node_type.empty()) {
    const hardware::Entity* e = ws->catalog->find(hardware::EntityKind::instance, node_type);
    const bool server = e == nullptr;
    if (server) e = ws->catalog->find(hardware::EntityKind::server, node_type);
    const std::string gpu = e->text("gpu");
    asked.hardware.gpus = {gpu};
    asked.hardware.providers.clear();
    asked.hardware.instances = server ? std::vector<std::string>{} : std::vector<std::string>{node_type};
    asked.hardware.servers = server ? std::vector<std::string>{node_type} : std::vector<std::string>{};
    if (asked.inference) asked.inference->node.clear();  // size on that node type, not the stated deployment
  }
  auto plan = scenarios::make_plan(asked, *ws->catalog, nullptr, scenarios::CollectiveTiming::analytic, *policy);
  if (!plan) return report_errors(plan.errors());
  if (plan->plan.node_pools.empty())
    return report_errors({{{scenario->file}, "", "the plan has no node pool to export",
                           "the scenario names no hardware.gpus to size and states no deployment"}});
  if (!node_type.empty() && plan->plan.node_type != node_type)
    return report_errors({{{scenario->file}, "--node-type",
                           "the plan on " + node_type + " runs on " + plan->plan.node_type + " instead", ""}});
  if (settings.location.empty())  // the region the catalog prices the node type in
    if (const auto* e = ws->catalog->find(hardware::EntityKind::instance, plan->plan.node_type))
      if (const std::string region = e->text("region"); !region.empty() && region != "n/a") settings.location = region;
  if (plan->plan.time) settings.run_seconds = plan->plan.time->value();
  settings.notes = scenarios::plan_annotations(plan->plan);
  auto text = scenarios::export_node_pools(plan->plan.node_pools, *format, settings);
  if (!text) return report_errors(text.errors());
  return write_output(o.output, *text);
}

struct MemoryOptions {
  std::string params;
  std::string model;
  std::string mode = "train";
  std::string rule;
  std::string precision;
  int tensor = 1, pipeline = 1, data = 1, zero = 0, micro_batch = 1, seq_len = 0, batch = 1, context = 0;
  int lora_rank = 16;
  std::string recompute = "none";
  std::string fine_tuning = "full";
  std::string overhead = "10 %";
  bool sequence_parallel = false;
  std::string attention = "flash";
  int context_parallel = 1, expert_parallel = 1;
  // A shape instead of a preset (detailed rule): 0 = not given.
  int layers = 0, hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, ffn_hidden = 0, vocab = 0;
  int experts = 1, experts_per_token = 1;
  bool gated_mlp = false;
  std::vector<std::string> given;  // the flags on the command line, e.g. "--dp"
  Format format = Format::table;
};

bool given(const MemoryOptions& o, std::string_view flag) {
  return std::find(o.given.begin(), o.given.end(), flag) != o.given.end();
}

// Flags a rule or mode cannot honour are refused, never ignored: a planner that drops
// --dp silently answers another question than the one asked.
void refuse_unused(const MemoryOptions& o, const std::vector<std::string>& flags, const std::string& why,
                   std::vector<Diagnostic>& errors) {
  for (const auto& f : flags)
    if (given(o, f)) errors.push_back({{}, f, "cannot be honoured: " + why, {}});
}

const std::vector<std::string> kShapeFlags = {"--layers", "--hidden",   "--heads",   "--kv-heads",
                                              "--head-dim", "--ffn-hidden", "--vocab", "--gated-mlp",
                                              "--experts", "--experts-per-token"};
const std::vector<std::string> kLayoutFlags = {"--tp", "--pp", "--dp", "--zero", "--sp", "--recompute",
                                               "--micro-batch", "--cp", "--ep", "--attention",
                                               "--fine-tuning", "--lora-rank"};

Result<models::MemoryBreakdown> compute_memory(const MemoryOptions& o) {
  std::vector<Diagnostic> errors;
  auto bad = [&](std::string flag, std::string message, std::string hint = {}) {
    errors.push_back({{}, std::move(flag), std::move(message), std::move(hint)});
  };
  const bool train = o.mode == "train";
  auto precision = models::precision_from_name(o.precision.empty() ? (train || o.model.empty() ? "fp32" : "bf16")
                                                                    : o.precision);
  if (!precision) bad("--precision", "unknown precision '" + o.precision + "'", "fp32, tf32, fp16, bf16, fp8, int8 or int4");
  auto overhead = parse_as<Ratio>(o.overhead);
  if (!overhead) bad("--overhead", overhead.errors()[0].message, overhead.errors()[0].hint);
  const bool has_shape = given(o, "--layers") || given(o, "--hidden");
  const std::string rule = o.rule.empty() ? (o.model.empty() && !has_shape ? "simple" : "detailed") : o.rule;

  if (rule == "simple") {
    std::vector<std::string> unused = kLayoutFlags;
    unused.insert(unused.end(), kShapeFlags.begin(), kShapeFlags.end());
    for (const char* f : {"--seq-len", "--batch", "--context"}) unused.push_back(f);
    refuse_unused(o, unused,
                  "the simple rule counts bytes per parameter only (4 to hold fp32 weights, 24 to train); "
                  "give --model or a shape (--layers --hidden --heads --vocab --seq-len) for the detailed rule",
                  errors);
    double params = 0;
    if (!o.params.empty()) {
      auto p = parse_count(o.params);
      if (!p) bad("--params", p.errors()[0].message, p.errors()[0].hint);
      else if (!(*p > 0)) bad("--params", "must be greater than zero, got '" + o.params + "'", "e.g. 7B");
      else params = *p;
    } else if (const auto* preset = models::find_transformer_preset(o.model)) {
      params = models::parameter_count(preset->shape);
    } else {
      bad(o.model.empty() ? "--params" : "--model",
          o.model.empty() ? "give --params (e.g. 7B) or --model" : "unknown transformer preset '" + o.model + "'",
          "run 'capsim models' for the presets");
    }
    if (!errors.empty()) return errors;
    return models::simple_rule(params, train ? models::SimpleMode::training : models::SimpleMode::inference, *precision);
  }

  if (given(o, "--params"))
    bad("--params", "cannot be honoured: the detailed rule counts parameters from the shape",
        "drop --params, or use --rule simple");
  models::TransformerShape shape;
  if (!o.model.empty()) {
    const auto* preset = models::find_transformer_preset(o.model);
    if (preset == nullptr) {
      bad("--model", "unknown transformer preset '" + o.model + "'", "run 'capsim models' for the presets");
      return errors;
    }
    shape = preset->shape;
    refuse_unused(o, kShapeFlags, "--model gives the shape; give either a preset or a shape", errors);
  } else if (has_shape) {
    shape.name = "custom";
    shape.layers = o.layers;
    shape.hidden = o.hidden;
    shape.heads = o.heads;
    shape.kv_heads = o.kv_heads > 0 ? o.kv_heads : o.heads;
    shape.head_dim_override = o.head_dim;
    shape.ffn_hidden = o.ffn_hidden > 0 ? o.ffn_hidden : 4 * o.hidden;
    shape.vocab = o.vocab;
    shape.seq_len = o.seq_len;
    shape.gated_mlp = o.gated_mlp;
    shape.experts = o.experts;
    shape.experts_per_token = o.experts_per_token;
    for (const auto& [flag, value] : {std::pair{"--layers", o.layers}, {"--hidden", o.hidden}, {"--heads", o.heads},
                                      {"--vocab", o.vocab}, {"--seq-len", o.seq_len}})
      if (value <= 0) bad(flag, "a shape needs " + std::string(flag) + " (with --layers --hidden --heads --vocab --seq-len)");
    if (o.heads > 0 && o.head_dim == 0 && o.hidden % o.heads != 0)
      bad("--hidden", "hidden " + std::to_string(o.hidden) + " is not divisible by heads " + std::to_string(o.heads),
          "give --head-dim when the heads are not hidden / heads wide");
    if (o.heads > 0 && shape.kv_heads > 0 && o.heads % shape.kv_heads != 0)
      bad("--kv-heads", "heads must be a multiple of kv_heads");
    if (o.experts_per_token > o.experts) bad("--experts-per-token", "cannot exceed --experts");
  } else {
    bad("--model", "the detailed rule needs a transformer: give --model or a shape (--layers --hidden --heads --vocab --seq-len)",
        "run 'capsim models' for the presets");
  }
  if (train) {
    refuse_unused(o, {"--batch", "--context"}, "they size the KV cache of inference (--mode infer)", errors);
  } else {
    refuse_unused(o, {"--pp", "--dp", "--zero", "--sp", "--recompute", "--micro-batch", "--cp", "--ep", "--attention",
                      "--fine-tuning", "--lora-rank"},
                  "inference memory is weights and KV cache, split over --tp only", errors);
  }
  if (!errors.empty()) return errors;
  if (o.seq_len > 0) shape.seq_len = o.seq_len;
  if (!train) {
    models::InferenceOptions inf;
    inf.weights = *precision;
    inf.kv_cache = *precision == models::Precision::int4 ? models::Precision::fp8 : *precision;
    inf.batch = o.batch;
    inf.context = o.context;
    inf.tensor = o.tensor;
    inf.overhead_fraction = overhead->value();
    return models::inference_memory_per_gpu(shape, inf);
  }
  models::Parallelism par;
  par.tensor = o.tensor;
  par.pipeline = o.pipeline;
  par.data = o.data;
  par.zero_stage = o.zero;
  par.micro_batch = o.micro_batch;
  par.global_batch = o.micro_batch * o.data * std::max(1, o.pipeline);
  par.sequence_parallel = o.sequence_parallel;
  par.context = o.context_parallel;
  par.expert = o.expert_parallel;
  if (par.expert > 1 && (shape.experts <= 1 || shape.experts % par.expert != 0))
    return Diagnostic{{}, "--ep", "expert parallelism " + std::to_string(par.expert) + " needs a mixture-of-experts model "
                                  "whose experts it divides", ""};
  par.recompute = o.recompute == "full" ? models::Recompute::full
                  : o.recompute == "selective" ? models::Recompute::selective
                                               : models::Recompute::none;
  // QLoRA's recipe trains with gradient checkpointing (Dettmers et al., "QLoRA", 2023,
  // sec. 4: "we use gradient checkpointing"); it is the default here unless --recompute says otherwise.
  if (o.fine_tuning == "qlora" && !given(o, "--recompute")) par.recompute = models::Recompute::full;
  models::TrainingOptions opt;
  opt.compute = o.precision.empty() ? models::Precision::bf16 : *precision;
  opt.mixed_precision = opt.compute != models::Precision::fp32;
  opt.fine_tuning = o.fine_tuning == "lora" ? models::FineTuning::lora
                    : o.fine_tuning == "qlora" ? models::FineTuning::qlora
                                               : models::FineTuning::full;
  opt.lora_rank = o.lora_rank;
  opt.overhead_fraction = overhead->value();
  opt.attention = o.attention == "eager" ? models::Attention::eager : models::Attention::flash;  // flash1-3: same memory
  return models::training_memory_per_gpu(shape, par, opt);
}

int run_memory(const MemoryOptions& o) {
  auto m = compute_memory(o);
  if (!m) return report_errors(m.errors());
  const std::pair<const char*, Bytes> parts[] = {{"weights", m->weights},       {"gradients", m->gradients},
                                                 {"optimizer", m->optimizer},   {"activations", m->activations},
                                                 {"kv_cache", m->kv_cache},     {"overhead", m->overhead}};
  if (o.format == Format::json) {
    nlohmann::json j;
    j["schema"] = "capsim-memory/1";
    j["rule"] = m->rule;
    j["model"] = o.model.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.model);
    j["mode"] = o.mode;
    for (const auto& [name, bytes] : parts) j["components"][name] = bytes.value();
    j["total_bytes"] = m->total().value();
    j["formulas"] = m->formulas;
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return kExitOk;
  }
  scenarios::Table t{{"component", "per GPU"}, {}, {false, true}};
  for (const auto& [name, bytes] : parts)
    if (bytes.value() > 0) t.rows.push_back({name, scenarios::Cell(to_string(bytes), bytes.value(), "B")});
  t.rows.push_back({"total", scenarios::Cell(to_string(m->total()), m->total().value(), "B")});
  if (o.format == Format::table) {
    std::cout << "Memory per GPU (" << m->rule << " rule" << (o.model.empty() ? "" : ", " + o.model) << ", "
              << (o.mode == "train" ? "training" : "inference") << ")\n\n";
  }
  print_table(t, o.format);
  if (o.format == Format::table) {
    std::cout << "\nHow:\n";
    for (const auto& f : m->formulas) std::cout << "  " << f << "\n";
  }
  return kExitOk;
}

struct CompareOptions {
  std::string file;
  std::vector<std::string> gpus;
  Format format = Format::table;
};

// `capsim compare`: the scenario sized on each GPU type alone, side by side for its SLO.
int run_compare(const GlobalOptions& g, const CompareOptions& o) {
  auto ws = open_workspace(g, hardware::Access::read_only);
  if (!ws) return report_errors(ws.errors());
  auto scenario = scenarios::load_scenario_file(o.file, *ws->catalog);
  if (!scenario) return report_errors(scenario.errors());
  auto c = scenarios::compare_serving_gpus(*scenario, *ws->catalog, o.gpus);
  if (!c) return report_errors(c.errors());
  std::cout << (o.format == Format::json ? with_schema(scenarios::serving_comparison_json(*c), "capsim-compare/1")
                                         : scenarios::serving_comparison_text(*c));
  return kExitOk;
}

}  // namespace

void add_plan_commands(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto compare_options = std::make_shared<CompareOptions>();
  auto* compare = app.add_subcommand(
      "compare", "Size an LLM serving scenario on each GPU type: count, cost a month and per million tokens, headroom");
  compare->footer("Examples:\n  capsim compare scenarios/examples/llama31-8b-compare-gpus.yaml\n"
                  "  capsim compare scenarios/examples/llama2-70b-chat-h100.yaml --gpus h100-sxm-80gb,h200-sxm-141gb "
                  "--format json");
  compare->add_option("scenario", compare_options->file, "LLM serving scenario YAML file with slo: ttft_p99, tpot_p99")
      ->required();
  complete_from_catalog(compare->add_option("--gpus", compare_options->gpus,
                                            "GPU ids to compare, comma-separated (default: the scenario's hardware.gpus)")
                            ->delimiter(','),
                        CatalogValues::gpus);
  add_format_option(*compare, compare_options->format, {"table", "json"});
  compare->callback([&global, &exit_code, compare_options] { exit_code = run_compare(global, *compare_options); });

  auto size_options = std::make_shared<SizeOptions>();
  auto* size = app.add_subcommand("size", "Search GPU types, node counts and parallel layouts for a scenario");
  size->footer("Examples:\n  capsim size scenarios/examples/llama-70b-pretrain.yaml\n  capsim size scenarios/examples/llama-70b-pretrain.yaml --chart frontier.png\n  capsim size scenarios/examples/food-photo-classifier.yaml --format json");
  size->add_option("scenario", size_options->file, "Scenario YAML file")->required();
  add_format_option(*size, size_options->format, {"table", "json"});
  size->add_option("--fabric", size_options->fabric,
                   "Collective timing: analytic (alpha-beta, the search) or simgrid (re-time the recommendation's "
                   "data-parallel all-reduce on the SimGrid fabric; a ZeRO-3 recommendation, which reduces layer "
                   "by layer, is not re-timed)")
      ->check(CLI::IsMember({"analytic", "simgrid"}));
#ifdef CAPSIM_HAVE_RENDER
  size->add_option("--chart", size_options->chart, "Also write the time/cost frontier chart (.png or .svg)")
      ->option_text("FILE");
#endif
  size->callback([&global, &exit_code, size_options] { exit_code = run_size(global, *size_options); });

  auto estimate_options = std::make_shared<SizeOptions>();
  auto* estimate = app.add_subcommand(
      "estimate", "One training step of the scenario's pinned (or recommended) layout, term by term, with memory");
  estimate->add_option("scenario", estimate_options->file, "Training scenario YAML file")->required();
  add_format_option(*estimate, estimate_options->format, {"table", "json"});
  estimate->footer("Examples:\n  capsim estimate scenarios/examples/gpt3-175b-megatron.yaml\n"
                   "  capsim estimate scenarios/examples/llama-70b-pretrain.yaml --format json");
  estimate->callback([&global, &exit_code, estimate_options] { exit_code = run_estimate(global, *estimate_options); });

  auto sim_options = std::make_shared<SizeOptions>();
  auto* simulate = app.add_subcommand("simulate", "Simulate a scenario's training pipeline: utilization, queues, constraint");
  simulate->footer("Examples:\n  capsim simulate scenarios/examples/resnet50-1080ti-4vcpu.yaml\n  capsim simulate scenarios/examples/llama2-70b-chat-h100.yaml --format json");
  simulate->add_option("scenario", sim_options->file, "Scenario YAML file with a simulate: section")->required();
  add_format_option(*simulate, sim_options->format, {"table", "json"});
  simulate->callback([&global, &exit_code, sim_options] { exit_code = run_simulate(global, *sim_options); });

  auto cost_options = std::make_shared<SizeOptions>();
  auto* cost = app.add_subcommand("cost", "Compare cloud, bare metal, on-prem and colocation: totals, break-even, sensitivity");
  cost->footer("Examples:\n  capsim cost scenarios/examples/ml-services-24x7.yaml\n  capsim cost scenarios/examples/resnet-training-cost-per-run.yaml --format json");
  cost->add_option("scenario", cost_options->file, "Scenario YAML file with a cost: section")->required();
  add_format_option(*cost, cost_options->format, {"table", "json"});
  cost->callback([&global, &exit_code, cost_options] { exit_code = run_cost(global, *cost_options); });

  auto e = std::make_shared<ExportOptions>();
  auto* exp = app.add_subcommand("export", "Node pools of the recommendation for GKE, Karpenter, Terraform or a Pod spec");
  complete_values(exp->add_option("format", e->format,
                                   "gke, karpenter, terraform (google_container_node_pool, JSON syntax), eks "
                                   "(aws_eks_node_group, JSON syntax) or k8s")
                      ->required(),
                  {"gke", "karpenter", "terraform", "eks", "k8s"});
  exp->add_option("scenario", e->file, "Scenario YAML file (- for standard input)")->required();
  exp->add_option("-o,--output", e->output, "Write to FILE (default, or -: standard output)")->option_text("FILE");
  exp->footer("Examples:\n"
              "  capsim export k8s scenarios/examples/llama-70b-pretrain.yaml --image nvcr.io/nvidia/pytorch:24.05-py3\n"
              "  capsim export karpenter scenarios/examples/llama2-70b-chat-h100.yaml -o nodepools.yaml\n"
              "  capsim export gke scenarios/examples/gke-tpu-v5e-lora.yaml --location us-central1-a\n"
              "  capsim export terraform scenarios/examples/resnet101-small-gpus.yaml > pools.tf.json\n"
              "The scenario may be - (standard input). Refusals and validation: docs/exports.md.");
  complete_from_catalog(exp->add_option("--node-type", e->node_type,
                                        "Export the plan on this node type instead of the recommended one: a catalog "
                                        "id or the provider's name (e.g. gcp-a3-highgpu-8g, g6e.xlarge)"),
                        CatalogValues::node_types);
  exp->add_option("--cluster", e->cluster,
                  "Cluster name for GKE and Terraform; Karpenter's EC2NodeClass and discovery tag (GKE's rule: a "
                  "lowercase letter, then at most 39 lowercase letters, digits and '-')");
  exp->add_option("--location", e->location,
                  "GKE and Terraform: a region of the catalog (node counts are totals over its zones) or a zone of one "
                  "(default: the node type's region in the catalog)");
  exp->add_option("--image", e->image, "k8s: the workload's container image (an image reference: "
                  "[registry/]repository[:tag][@digest])")->capture_default_str();
  exp->callback([&global, &exit_code, e] { exit_code = run_export(global, *e); });

  auto m = std::make_shared<MemoryOptions>();
  auto* memory = app.add_subcommand("memory", "Memory per GPU to train or serve a model, with the formula");
  memory->add_option("--params", m->params, "Parameter count, e.g. 7B, 175B (simple rule)");
  std::vector<std::string> presets;
  for (const auto& p : models::transformer_presets()) presets.push_back(p.shape.name);
  complete_values(memory->add_option("--model", m->model, "Transformer preset, e.g. llama-2-70b (see 'capsim models')"),
                  presets);
  memory->add_option("--mode", m->mode, "train or infer")->check(CLI::IsMember({"train", "infer"}));
  memory->add_option("--rule", m->rule, "simple (4 / 24 B per param) or detailed (default with --model)")
      ->check(CLI::IsMember({"simple", "detailed"}));
  complete_values(memory->add_option("--precision", m->precision, "fp32, tf32, fp16, bf16, fp8, int8, int4"),
                  {"fp32", "tf32", "fp16", "bf16", "fp8", "int8", "int4"});
  memory->add_option("--tp", m->tensor, "Tensor-parallel degree")->check(CLI::Range(1, 1024));
  memory->add_option("--pp", m->pipeline, "Pipeline-parallel degree")->check(CLI::Range(1, 4096));
  memory->add_option("--dp", m->data, "Data-parallel degree")->check(CLI::Range(1, 1 << 20));
  memory->add_option("--zero", m->zero, "ZeRO stage 0-3")->check(CLI::Range(0, 3));
  memory->add_flag("--sp", m->sequence_parallel, "Sequence parallelism (with --tp > 1)");
  memory->add_option("--recompute", m->recompute, "none, selective or full")
      ->check(CLI::IsMember({"none", "selective", "full"}));
  memory->add_option("--micro-batch", m->micro_batch, "Sequences per micro-batch")->check(CLI::Range(1, 1 << 16));
  memory->add_option("--seq-len", m->seq_len, "Sequence length (default: the preset's)")->check(CLI::Range(1, 1 << 24));
  memory->add_option("--fine-tuning", m->fine_tuning, "full, lora or qlora")
      ->check(CLI::IsMember({"full", "lora", "qlora"}));
  memory->add_option("--lora-rank", m->lora_rank, "LoRA rank")->check(CLI::Range(1, 4096));
  memory->add_option("--batch", m->batch, "Concurrent sequences (inference)")->check(CLI::Range(1, 1 << 20));
  memory->add_option("--context", m->context, "Tokens per sequence in the KV cache (inference)")
      ->check(CLI::Range(1, 1 << 24));
  memory->add_option("--overhead", m->overhead, "Framework and fragmentation overhead, e.g. '10 %'");
  memory->add_option("--attention", m->attention, "flash (default) or eager attention (eager keeps the s x s scores)")
      ->check(CLI::IsMember({"flash", "eager"}));
  memory->add_option("--cp", m->context_parallel, "Context-parallel degree (the sequence split over ranks)")
      ->check(CLI::Range(1, 1024));
  memory->add_option("--ep", m->expert_parallel, "Expert-parallel degree (MoE)")->check(CLI::Range(1, 4096));
  memory->add_option("--layers", m->layers, "Shape instead of --model: transformer layers")->check(CLI::Range(1, 1000));
  memory->add_option("--hidden", m->hidden, "Shape: model width")->check(CLI::Range(1, 1 << 20));
  memory->add_option("--heads", m->heads, "Shape: attention heads")->check(CLI::Range(1, 4096));
  memory->add_option("--kv-heads", m->kv_heads, "Shape: key/value heads (default: --heads)")->check(CLI::Range(1, 4096));
  memory->add_option("--head-dim", m->head_dim, "Shape: width of one head (default: hidden / heads)")
      ->check(CLI::Range(1, 1 << 16));
  memory->add_option("--ffn-hidden", m->ffn_hidden, "Shape: MLP inner width (default: 4 x hidden)")
      ->check(CLI::Range(1, 1 << 22));
  memory->add_option("--vocab", m->vocab, "Shape: vocabulary size")->check(CLI::Range(1, 1 << 24));
  memory->add_flag("--gated-mlp", m->gated_mlp, "Shape: SwiGLU-style MLP (three matrices)");
  memory->add_option("--experts", m->experts, "Shape: experts per MoE layer")->check(CLI::Range(1, 4096));
  memory->add_option("--experts-per-token", m->experts_per_token, "Shape: experts each token visits")
      ->check(CLI::Range(1, 4096));
  add_format_option(*memory, m->format, {"table", "json", "csv", "md"});
  memory->footer(
      "Examples:\n"
      "  capsim memory --params 7B --mode train            # simple rule: 24 B/param\n"
      "  capsim memory --model llama-3.1-405b --tp 8 --pp 16 --dp 64 --sp --seq-len 8192 --zero 1\n"
      "  capsim memory --layers 32 --hidden 4096 --heads 32 --vocab 32000 --seq-len 4096 --attention eager");
  memory->callback([&exit_code, m, memory] {
    m->given.clear();
    for (const CLI::Option* opt : memory->get_options())
      if (opt->count() > 0) m->given.push_back(opt->get_name());
    exit_code = run_memory(*m);
  });
}

}  // namespace capsim::cli
