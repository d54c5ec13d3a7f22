// `capsim accuracy`: every published measurement in data/validation against the models.
#include "accuracy_command.hpp"

#include <ctime>

#include "capsim/git_commit.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "capsim/scenarios/accuracy.hpp"
#include "capsim/scenarios/model_constants.hpp"
#include "capsim/scenarios/workspace.hpp"

namespace capsim::cli {
namespace {

struct AccuracyOptions {
  std::string group;
  std::string dir;
  std::string scenario;  // --scenario ROW: print that row's scenario instead
  std::string record;    // --record-first-look FILE
  bool constants = false;  // --constants: docs/model-constants.md with each constant's sensitivity
  unsigned jobs = 0;       // --jobs N: threads for --constants (0: one per core)
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

// "fit", "dev", or the row's recorded first-look error ("first look +4.2 %").
std::string protocol_of(const scenarios::AccuracyRow& row) {
  if (row.fit) return "fit";
  if (row.first_look_error) return "first look " + signed_percent(*row.first_look_error);
  return row.first_look_row ? "first look pending" : "dev";
}

scenarios::Table rows_table(const scenarios::AccuracyReport& r) {
  scenarios::Table t;
  t.columns = {"row", "group", "protocol", "metric", "published", "predicted", "error", "layout, bottleneck"};
  t.right_align = {false, false, false, false, true, true, true, false};
  for (const auto& row : r.rows) {
    const std::string group = row.groups.size() > 1 ? row.groups[1] : row.groups[0];
    if (!row.not_predicted.empty()) {
      t.rows.push_back({row.id, group, protocol_of(row), row.metric, "-", "-", "-",
                        "not predicted: " + row.not_predicted});
      continue;
    }
    if (row.first_look_pending()) {  // nobody sees its error before it is recorded
      t.rows.push_back({row.id, group, protocol_of(row), row.metric, figure(row.published), "-", "-",
                        "withheld until its first look is recorded (--record-first-look)"});
      continue;
    }
    t.rows.push_back({row.id, group, protocol_of(row), row.metric, figure(row.published),
                      figure(row.predicted), signed_percent(row.error_percent), row.detail});
  }
  return t;
}

scenarios::Table summary_table(const scenarios::AccuracyReport& r, bool filtered) {
  scenarios::Table t;
  t.columns = {"group",           "rows",     "first-look rows", "first-look mean", "first-look worst",
               "dev rows",        "dev mean", "dev worst",       "fit rows",        "fit mean",
               "not predicted"};
  t.right_align = {false, true, true, true, true, true, true, true, true, true, true};
  auto add = [&](const scenarios::AccuracySummary& s) {
    t.rows.push_back({s.group, std::to_string(s.rows), std::to_string(s.first_look),
                      s.first_look ? percent(s.first_look_mean_abs) : "-",
                      s.first_look ? percent(s.first_look_max_abs) : "-", std::to_string(s.dev),
                      s.dev ? percent(s.dev_mean_abs) : "-", s.dev ? percent(s.dev_max_abs) : "-", std::to_string(s.fit),
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
          {"dev_rows", s.dev},
          {"dev_mean_abs_error_percent", s.dev_mean_abs},
          {"dev_max_abs_error_percent", s.dev_max_abs},
          {"first_look_rows", s.first_look},
          {"first_look_mean_abs_error_percent", s.first_look_mean_abs},
          {"first_look_max_abs_error_percent", s.first_look_max_abs},
          {"not_predicted", s.not_predicted},
          {"first_look_pending", s.first_look_pending}};
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
  if (o.constants) {
    auto sensitivities = scenarios::constant_sensitivities(datasheet, dir, [](const std::string& name) {
      std::cerr << "sensitivity of " << name << "\n";
    }, o.jobs);
    if (!sensitivities) return report_errors(sensitivities.errors());
    std::cout << scenarios::model_constants_markdown(*sensitivities);
    return kExitOk;
  }
  if (!o.record.empty()) {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char date[16];
    std::strftime(date, sizeof date, "%Y-%m-%d", &tm);
    auto added = scenarios::record_first_looks(datasheet, dir, o.record, CAPSIM_GIT_COMMIT, date);
    if (!added) return report_errors(added.errors());
    std::cout << "recorded " << added->size() << " first look" << (added->size() == 1 ? "" : "s") << " in " << o.record
              << " (capsim " << CAPSIM_GIT_COMMIT << ", " << date << ")\n";
    for (const auto& id : *added) std::cout << "  " << id << "\n";
    return kExitOk;
  }
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
      j["protocol"] = row.fit ? "fit" : row.first_look_error ? "first-look" : row.first_look_row ? "first-look pending" : "dev";
      if (row.first_look_error) j["first_look_error_percent"] = *row.first_look_error;
      if (row.not_predicted.empty() && row.first_look_pending()) {
        j["published"] = row.published;  // prediction withheld until the first look is recorded
      } else if (row.not_predicted.empty()) {
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
              << ")\n"
              << "  first-look: the error recorded the day the row was added, before any model change: the error to "
                 "expect on a new configuration\n"
              << "  dev: rows whose error was looked at while changing the models (current error)\n"
              << "  fit: rows the models' constants were chosen on\n";
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
  cmd->add_option("--record-first-look", o->record,
                  "Predict every row marked first_look: that FILE does not hold yet and record its error there, with "
                  "this capsim's commit and today's date (never rewrites an entry): the error to expect on a new "
                  "configuration")
      ->option_text("FILE");
  cmd->add_flag("--constants", o->constants,
               "Print docs/model-constants.md: the models' empirical constants (value, unit, basis) and the change "
               "of the dev mean error when each alone moves -10 % and +10 % (predicts the corpus twice per "
               "constant: minutes)");
  cmd->add_option("--jobs", o->jobs, "Threads that --constants predicts the corpus on (default: one per core)")
      ->option_text("N");
  cmd->add_option("--scenario", o->scenario,
                  "Print the scenario the runner plans for this row (llm-serving and training rows): piped to the "
                  "command its first line names, it gives the row's predicted figure")
      ->option_text("ROW");
  add_format_option(*cmd, o->format, {"table", "json", "csv", "md"});
  cmd->footer("Examples:\n  capsim accuracy\n  capsim accuracy --group zero3-fsdp\n  capsim accuracy --format json\n"
              "  capsim accuracy --scenario trtllm014-llama-31-8b-h100-fp8-tp1-i128-o128 | capsim simulate -\n"
              "  capsim accuracy --constants > docs/model-constants.md");
  cmd->callback([&global, &exit_code, o] { exit_code = run_accuracy_command(global, *o); });
}

}  // namespace capsim::cli
