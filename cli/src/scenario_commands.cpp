#include "scenario_commands.hpp"

#include <algorithm>
#include <memory>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "capsim/core/units.hpp"
#include "capsim/models/serving.hpp"
#include "capsim/models/workload.hpp"
#include "capsim/core/text.hpp"
#include "capsim/scenarios/runner.hpp"
#include "capsim/scenarios/scenario.hpp"
#include "capsim/scenarios/scenario_file.hpp"
#include "capsim/scenarios/output_schema.hpp"
#include "capsim/scenarios/schema.hpp"
#include "capsim/scenarios/workspace.hpp"
#include "completion.hpp"

namespace capsim::cli {
namespace {

struct ValidateOptions {
  std::vector<std::string> files;
  Format format = Format::table;
};

// A file is valid when the command that runs it accepts it: a scenario loads and plans
// (run, size), a cluster scenario loads and packs (plan). Planning finds what loading cannot
// (a model that fits no GPU, a cluster workload no node type carries), so validate plans too.
Result<std::string> validated_name(const std::string& file, const hardware::Catalog& catalog) {
  auto loaded = scenarios::load_any_scenario_file(file, catalog);
  if (!loaded) return loaded.errors();
  if (const auto* cluster = std::get_if<scenarios::ClusterScenario>(&*loaded)) {
    auto plan = scenarios::plan_cluster(*cluster, catalog);
    if (!plan) return plan.errors();
    return cluster->name + ", a cluster of " + plural(static_cast<long long>(cluster->workloads.size()), "workload");
  }
  const auto& scenario = std::get<scenarios::Scenario>(*loaded);
  auto plan = scenarios::make_plan(scenario, catalog);
  if (!plan) return plan.errors();
  return scenario.name;
}

int run_validate(const GlobalOptions& g, const ValidateOptions& o) {
  auto ws = open_workspace(g, hardware::Access::read_only);
  if (!ws) return report_errors(ws.errors());
  std::vector<Diagnostic> errors;
  for (const auto& file : o.files) {
    auto name = validated_name(file, *ws->catalog);
    if (!name) {
      errors.insert(errors.end(), name.errors().begin(), name.errors().end());
    } else if (o.format != Format::json) {
      std::cout << file << ": valid (" << *name << ")\n";
    }
  }
  if (o.format == Format::json) {
    std::cout << nlohmann::ordered_json{{"valid", errors.empty()}, {"errors", errors.size()}}.dump() << "\n";
  }
  return errors.empty() ? kExitOk : report_errors(errors);
}

int run_models(Format format) {
  // Every preset a scenario may name: transformers (training, llm-serving), CNNs (training)
  // and the served models an inference graph may name, with parameters and forward FLOPs.
  scenarios::Table t{{"preset", "kind", "used by", "params", "forward FLOPs", "layers", "hidden", "heads", "kv_heads",
                      "seq_len", "source"},
                     {},
                     {false, false, false, true, true, true, true, true, true, true, false}};
  auto count = [](double n) {
    return n >= 1e9 ? to_string(ParsedQuantity{n / 1e9, {}, {}}) + "B" : to_string(ParsedQuantity{n / 1e6, {}, {}}) + "M";
  };
  auto flops = [](double f, const char* per) { return to_string(ParsedQuantity{f, dims::ops, {}}) + per; };
  for (const auto& p : models::transformer_presets()) {
    const auto& s = p.shape;
    t.rows.push_back({s.name, s.experts > 1 ? "moe transformer" : (s.encoder_only ? "encoder" : "transformer"),
                      s.encoder_only ? "training" : "training, llm-serving", count(models::parameter_count(s)),
                      flops(models::forward_flops_per_token(s), " /token"), std::to_string(s.layers),
                      std::to_string(s.hidden), std::to_string(s.heads), std::to_string(s.kv_heads),
                      std::to_string(s.seq_len), p.source});
  }
  const auto served = models::reference_served_models();
  auto is_served = [&](const std::string& name) {
    return std::any_of(served.begin(), served.end(), [&](const models::ServedModel& m) { return m.model.name == name; });
  };
  std::vector<std::string> listed;
  for (const auto& m : models::sample_model_presets()) {
    t.rows.push_back({m.name, "cnn", is_served(m.name) ? "training, inference graph" : "training", count(m.params),
                      flops(m.forward_flops_per_sample, " /sample"), "-", "-", "-", "-", "-", m.source});
    listed.push_back(m.name);
  }
  for (const auto& m : served) {
    if (std::find(listed.begin(), listed.end(), m.model.name) != listed.end()) continue;
    t.rows.push_back({m.model.name, m.network.empty() ? "vision model" : "cnn", "inference graph",
                      count(m.model.params), flops(m.model.forward_flops_per_sample, " /sample"),
                      m.kernels_per_forward > 0 ? std::to_string(m.kernels_per_forward) : "-", "-", "-", "-", "-",
                      m.model.source});
  }
  if (format == Format::json) {
    nlohmann::json names = nlohmann::json::array();
    for (const auto& row : t.rows) names.push_back(row[0].text);
    std::cout << names.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    print_table(t, format);
  }
  return kExitOk;
}

// `capsim schema`: the scenario schema or reference, or with --output an output's schema
// (scenarios/output_schema.hpp) or the list of them.
int run_schema(Format format, const std::string& output) {
  if (output.empty()) {
    std::cout << (format == Format::md ? scenarios::scenario_reference_markdown() : scenarios::scenario_json_schema());
    return kExitOk;
  }
  if (format == Format::md)
    return report_errors({{{}, "--format", "the output schemas are JSON only", "leave --format out with --output"}});
  if (output == "list") {
    for (const auto& n : scenarios::output_schema_names()) std::cout << fmt::format("{:<28}{}\n", n.name, n.command);
    return kExitOk;
  }
  auto schema = scenarios::output_json_schema(output);
  if (!schema) return report_errors(schema.errors());
  std::cout << *schema;
  return kExitOk;
}

}  // namespace

void add_scenario_commands(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto validate_options = std::make_shared<ValidateOptions>();
  auto* validate = app.add_subcommand("validate", "Check scenario and cluster files as run, size and plan read them: load and plan each (all errors at once; exit 2 if any)");
  validate->footer("Examples:\n  capsim validate scenarios/examples/*.yaml\n  capsim validate - < my-scenario.yaml");
  validate->add_option("scenario", validate_options->files, "Scenario YAML files")->required();
  add_format_option(*validate, validate_options->format, {"table", "json"});
  validate->callback([&global, &exit_code, validate_options] { exit_code = run_validate(global, *validate_options); });

  auto schema_format = std::make_shared<Format>(Format::json);
  auto schema_output = std::make_shared<std::string>();
  auto* schema = app.add_subcommand("schema",
                                    "Print the scenario JSON Schema (for editors) or the Markdown reference, or with "
                                    "--output the JSON Schema of a command's JSON output");
  std::string output_names;
  std::vector<std::string> output_choices{"list"};
  for (const auto& n : scenarios::output_schema_names()) {
    output_names += (output_names.empty() ? "" : ", ") + n.name;  // ", ": a man page can break the line
    output_choices.push_back(n.name);
  }
  complete_values(schema->add_option("--output", *schema_output,
                                     "The JSON Schema (draft 2020-12) of a command's --format json output: " +
                                         output_names + ", or list (each with its command)")
                      ->option_text("NAME"),
                  output_choices);
  schema->footer("Examples:\n  capsim schema > scenario.schema.json\n"
                 "  capsim schema --format md > scenario-reference.md\n"
                 "  capsim schema --output run > run.schema.json\n  capsim schema --output list\n"
                 "The output schemas are shipped as docs/output-schemas/NAME.schema.json.");
  add_format_option(*schema, *schema_format, {"json", "md"});
  schema->callback(
      [&exit_code, schema_format, schema_output] { exit_code = run_schema(*schema_format, *schema_output); });

  auto models_format = std::make_shared<Format>(Format::table);
  auto* models_cmd = app.add_subcommand("models", "List the model presets a scenario may name");
  models_cmd->footer("Examples:\n  capsim models\n  capsim models --format json");
  add_format_option(*models_cmd, *models_format, {"table", "json", "csv", "md"});
  models_cmd->callback([&exit_code, models_format] { exit_code = run_models(*models_format); });
}

}  // namespace capsim::cli
