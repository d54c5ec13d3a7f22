// `capsim accuracy`: every published measurement in data/validation against the models.
#include "accuracy_command.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "capsim/scenarios/accuracy.hpp"
#include "capsim/scenarios/workspace.hpp"

namespace capsim::cli {
namespace {

struct AccuracyOptions {
  std::string group;
  std::string dir;
  std::string scenario;  // --scenario ROW: print that row's scenario instead
  Format format = Format::table;
};

std::string percent(double v) { return fmt::format("{:.1f} %", v); }
std::string signed_percent(double v) { return fmt::format("{:+.1f} %", v); }
// Published and predicted figures: three significant digits, no exponent.
std::string figure(double v) {
  if (v >= 1000) return fmt::format("{:.0f}", v);
  if (v >= 100) return fmt::format("{:.1f}", v);
  if (v >= 1) return fmt::format("{:.2f}", v);
  return fmt::format("{:.4f}", v);
}

scenarios::Table rows_table(const scenarios::AccuracyReport& r) {
  scenarios::Table t;
  t.columns = {"row", "group", "fit", "metric", "published", "predicted", "error", "layout, bottleneck"};
  t.right_align = {false, false, false, false, true, true, true, false};
  for (const auto& row : r.rows) {
    const std::string group = row.groups.size() > 1 ? row.groups[1] : row.groups[0];
    if (!row.not_predicted.empty()) {
      t.rows.push_back({row.id, group, row.fit ? "fit" : "", row.metric, "-", "-", "-",
                        "not predicted: " + row.not_predicted});
      continue;
    }
    t.rows.push_back({row.id, group, row.fit ? "fit" : "", row.metric, figure(row.published),
                      figure(row.predicted), signed_percent(row.error_percent), row.detail});
  }
  return t;
}

scenarios::Table summary_table(const scenarios::AccuracyReport& r, bool filtered) {
  scenarios::Table t;
  t.columns = {"group",          "rows",          "mean |error|",      "worst",
               "held-out rows",  "held-out mean", "held-out worst",    "fit rows",
               "fit mean",       "not predicted"};
  t.right_align = {false, true, true, true, true, true, true, true, true, true};
  auto add = [&](const scenarios::AccuracySummary& s) {
    t.rows.push_back({s.group, std::to_string(s.rows), percent(s.mean_abs), percent(s.max_abs),
                      std::to_string(s.held_out), s.held_out ? percent(s.held_out_mean_abs) : "-",
                      s.held_out ? percent(s.held_out_max_abs) : "-", std::to_string(s.fit),
                      s.fit ? percent(s.fit_mean_abs) : "-", std::to_string(s.not_predicted)});
  };
  for (const auto& g : r.groups) add(g);
  if (!filtered) add(r.overall);  // with --group, that group's own row is the total
  return t;
}

nlohmann::json summary_json(const scenarios::AccuracySummary& s) {
  return {{"group", s.group},
          {"rows", s.rows},
          {"mean_abs_error_percent", s.mean_abs},
          {"max_abs_error_percent", s.max_abs},
          {"held_out_rows", s.held_out},
          {"held_out_mean_abs_error_percent", s.held_out_mean_abs},
          {"held_out_max_abs_error_percent", s.held_out_max_abs},
          {"fit_rows", s.fit},
          {"fit_mean_abs_error_percent", s.fit_mean_abs},
          {"not_predicted", s.not_predicted}};
}

int run_accuracy_command(const GlobalOptions& g, const AccuracyOptions& o) {
  auto ws = open_workspace(g, hardware::Access::read_only);
  if (!ws) return report_errors(ws.errors());
  std::filesystem::path dir = o.dir;
  if (dir.empty()) {
    auto shipped = scenarios::default_validation_dir(g.data_dir);
    if (!shipped) return report_errors(shipped.errors());
    dir = *shipped;
  }
  // The published rows were measured on other sites' machines: calibration profiles
  // imported here describe this site's GPUs, so the rows are predicted from the datasheets.
  hardware::Catalog datasheet = *ws->catalog;
  const bool dropped_calibration = datasheet.has_measured();
  datasheet.clear_measured();
  if (!o.scenario.empty()) {
    auto row = scenarios::accuracy_row_scenario(datasheet, dir, o.scenario);
    if (!row) return report_errors(row.errors());
    std::cout << "# The scenario capsim accuracy plans for row " << row->id << " (its " << row->metric
              << "): `capsim " << row->command << "` of this file gives the row's predicted figure\n"
              << "# (from datasheet figures: with calibration profiles imported, use a database without them).\n"
              << row->text;
    return kExitOk;
  }
  auto report = scenarios::run_accuracy(datasheet, dir, o.group);
  if (!report) return report_errors(report.errors());
  if (o.format == Format::json) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& row : report->rows) {
      nlohmann::json j = {{"id", row.id},       {"file", row.file},     {"kind", row.kind},
                          {"groups", row.groups}, {"fit", row.fit},       {"metric", row.metric},
                          {"source", row.source}, {"where", row.where}};
      if (row.not_predicted.empty()) {
        j["published"] = row.published;
        j["predicted"] = row.predicted;
        j["error_percent"] = row.error_percent;
        j["detail"] = row.detail;
      } else {
        j["not_predicted"] = row.not_predicted;
      }
      rows.push_back(std::move(j));
    }
    nlohmann::json groups = nlohmann::json::array();
    for (const auto& s : report->groups) groups.push_back(summary_json(s));
    nlohmann::json out = {{"schema", "capsim.accuracy"}, {"version", 1},       {"rows", rows},
                          {"groups", groups},            {"figures", "datasheet"}, {"overall", summary_json(report->overall)}};
    std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return kExitOk;
  }
  if (o.format == Format::table) {
    std::cout << "Published measurements vs capsim (" << report->rows.size() << " rows from " << dir.string()
              << "; fit: the models' constants were chosen with the row in view)\n";
    if (dropped_calibration)
      std::cout << "Datasheet figures: the calibration profiles imported here describe this site's GPUs, not the "
                   "machines the rows were measured on\n";
    std::cout << "\n";
  }
  print_table(rows_table(*report), o.format);
  std::cout << "\n";
  print_table(summary_table(*report, !o.group.empty()), o.format);
  return kExitOk;
}

}  // namespace

void add_accuracy_command(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto o = std::make_shared<AccuracyOptions>();
  auto* cmd = app.add_subcommand("accuracy", "Predict every published measurement in data/validation and show the error");
  cmd->add_option("--group", o->group,
                  "Only rows of this group (training, megatron-3d, zero3-fsdp, interleaved, fp8, ge-1000-gpus, "
                  "cnn-training, vision-inference, llm-serving, ...)");
  cmd->add_option("--dir", o->dir, "Validation directory (default: the shipped data/validation)")->option_text("DIR");
  cmd->add_option("--scenario", o->scenario,
                  "Print the scenario the runner plans for this row (llm-serving rows): piped to the command its "
                  "first line names, it gives the row's predicted figure")
      ->option_text("ROW");
  add_format_option(*cmd, o->format, {"table", "json", "csv", "md"});
  cmd->footer("Examples:\n  capsim accuracy\n  capsim accuracy --group zero3-fsdp\n  capsim accuracy --format json\n"
              "  capsim accuracy --scenario trtllm014-llama-31-8b-h100-fp8-tp1-i128-o128 | capsim simulate -");
  cmd->callback([&global, &exit_code, o] { exit_code = run_accuracy_command(global, *o); });
}

}  // namespace capsim::cli
