// `capsim run`: a scenario end to end, for CI and people; `capsim history`: past runs.
#include "run_commands.hpp"

#include <algorithm>
#include <cstdlib>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "capsim/core/files.hpp"
#include "capsim/core/suggest.hpp"
#include "capsim/core/text.hpp"
#include "capsim/scenarios/history.hpp"
#include "capsim/scenarios/junit.hpp"
#include "capsim/scenarios/runner.hpp"
#include "capsim/scenarios/overrides.hpp"
#include "capsim/scenarios/report.hpp"
#include "capsim/scenarios/scenario_file.hpp"
#include "cluster_command.hpp"
#include "sweep.hpp"
#include "capsim/scenarios/workspace.hpp"
#include "completion.hpp"
#ifdef CAPSIM_HAVE_RENDER
#include "capsim/render/report.hpp"
#endif

namespace capsim::cli {
namespace {

// A CSV report is one table per file (scenarios::write_csv_report); each file written is named.
Status write_csv_report(const scenarios::RunResult& run, const hardware::Catalog& catalog, const std::string& path,
                        const std::string& table) {
  auto written = scenarios::write_csv_report(scenarios::build_report(run, catalog), path, table);
  if (!written) return written.errors();
  // On standard error: standard output carries the run (--format json included).
  if (table.empty())
    for (const auto& file : *written) std::cerr << "wrote " << file.string() << "\n";
  return {};
}

// `report -o -`: a text format (md, html, csv with --table, json) on standard output. PDF is
// binary and refused: a terminal or a text pipe is no place for it.
Status binary_to_standard_output() {
  return {Diagnostic{{}, "--format", "a PDF report is binary; capsim does not write it to standard output",
                     "write it to a file: -o report.pdf, or pick a text format: --format md, html, csv or json"}};
}

Status print_report(const scenarios::RunResult& run, const hardware::Catalog& catalog, const std::string& format,
                    const std::string& table) {
  if (format == "pdf") return binary_to_standard_output();
  if (!table.empty() && format != "csv")
    return {Diagnostic{{}, "--table", "--table picks one table of a csv report, not of --format " + format, ""}};
  if (format == "md") {
    std::cout << scenarios::report_markdown(scenarios::build_report(run, catalog));
    return {};
  }
  if (format == "json") {
    std::cout << scenarios::run_json(run);
    return {};
  }
  if (format == "csv") {
    // One table per CSV (as files get one each): standard output takes the one --table names.
    const auto doc = scenarios::build_report(run, catalog);
    std::string list;
    for (const auto& t : scenarios::report_tables(doc)) {
      if (t.name == table) {
        std::cout << scenarios::render_csv(*t.table);
        return {};
      }
      list += (list.empty() ? "" : ", ") + t.name;
    }
    return {Diagnostic{{}, "--table", table.empty() ? "a csv report on standard output is one table: name it with --table"
                                                    : "the report has no table '" + table + "'",
                       "its tables: " + list}};
  }
#ifdef CAPSIM_HAVE_RENDER
  // html: rendered to a private temporary file (charts embedded), then copied out.
  std::error_code ec;
  std::string name = (std::filesystem::temp_directory_path(ec) / "capsim-report-XXXXXX").string();
  if (::mkdtemp(name.data()) == nullptr)
    return {environment_failure(Diagnostic{{name}, "", "cannot create a temporary directory for the report", ""})};
  const std::filesystem::path dir(name);
  const auto file = dir / "report.html";
  Status status = render::write_report(run, catalog, file);
  if (status.empty()) {
    std::ifstream in(file, std::ios::binary);
    std::cout << in.rdbuf();
  }
  std::filesystem::remove_all(dir, ec);
  return status;
#else
  return {Diagnostic{{}, "--format", "an HTML report needs capsim built with the Qt render library", "use --format md"}};
#endif
}

// A report by extension; HTML and PDF need the Qt render library.
Status write_report(const scenarios::RunResult& run, const hardware::Catalog& catalog, const std::string& path,
                    const std::string& table = {}) {
  if (std::filesystem::path(path).extension() == ".csv") return write_csv_report(run, catalog, path, table);
  if (!table.empty())
    return {Diagnostic{{}, "--table", "--table picks one table of a .csv report, not of '" + path + "'", ""}};
#ifdef CAPSIM_HAVE_RENDER
  return render::write_report(run, catalog, path);
#else
  const std::string ext = std::filesystem::path(path).extension().string();
  const auto doc = scenarios::build_report(run, catalog);
  if (ext == ".md") return write_file_atomically(path, scenarios::report_markdown(doc));
  if (ext == ".json") return write_file_atomically(path, scenarios::run_json(run));
  return {Diagnostic{{path}, "", "this capsim was built without Qt (CAPSIM_BUILD_GUI=OFF): reports can be .md, .csv "
                                 "or .json, not '" + ext + "'", ""}};
#endif
}

struct RunOptions {
  std::string file;
  std::string report;
  std::vector<std::string> set;  // KEY=VALUE overrides
  std::string sweep;             // sweep spec: the points run in parallel processes
  std::string shard;             // "i/N": this process's share of the sweep
  int jobs = 0;                  // parallel processes for a sweep (0: the machine's cores)
  std::string sweep_label;       // internal: the point a sweep child runs
  bool check = false;
  std::string junit;
  bool no_history = false;
  Format format = Format::table;
};

// The scenario file with the --set overrides applied.
Result<scenarios::Scenario> load_with_overrides(const std::string& file, const std::vector<std::string>& set,
                                                const hardware::Catalog& catalog) {
  if (set.empty()) return scenarios::load_scenario_file(file, catalog);
  auto text = scenarios::read_scenario_text(file);
  if (!text) return text.errors();
  std::vector<scenarios::Override> overrides;
  std::vector<Diagnostic> errors;
  for (const auto& s : set) {
    auto o = scenarios::parse_override(s);
    if (o) overrides.push_back(*o);
    else errors.insert(errors.end(), o.errors().begin(), o.errors().end());
  }
  if (!errors.empty()) return errors;
  auto changed = scenarios::apply_overrides(*text, overrides);
  if (!changed) return changed.errors();
  return scenarios::load_scenario(file + " (with --set)", *changed, catalog);
}

// `capsim run CLUSTER.yaml`: the plan `capsim plan` prints (a cluster file has no expect:,
// and its workloads' own runs are recorded by running their scenarios).
int run_cluster_file(const hardware::Catalog& catalog, const RunOptions& o) {
  std::vector<Diagnostic> refused;
  auto refuse = [&](bool given, const char* flag, const char* why) {
    if (given) refused.push_back({{}, flag, std::string(why) + ", not a cluster file's", "capsim plan reads cluster files"});
  };
  refuse(!o.set.empty(), "--set", "it overrides a scenario's keys");
  refuse(!o.junit.empty(), "--junit", "it reports a scenario's expect: entries");
  if (!refused.empty()) return report_errors(refused);
  auto cluster = scenarios::load_cluster_file(o.file, catalog);
  if (!cluster) return report_errors(cluster.errors());
  return print_cluster_plan(*cluster, catalog, o.format, o.report);
}

bool all_environment(const std::vector<Diagnostic>& errors) {
  return std::all_of(errors.begin(), errors.end(), [](const Diagnostic& d) { return d.cause == Cause::environment; });
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int run_run(const GlobalOptions& g, const RunOptions& o) {
  if (!o.sweep.empty()) return run_sweep(g, o.file, o.sweep, o.shard, o.set, o.jobs, o.check, o.format);
  const auto start = std::chrono::steady_clock::now();
  // Bad input still leaves a JUnit file when one was asked for: CI then shows the error as a
  // test case instead of a missing report.
  auto fail = [&](const std::vector<Diagnostic>& errors) {
    if (!o.junit.empty() && o.junit != "-")
      (void)write_file_atomically(o.junit, scenarios::junit_error_xml(o.file, errors, seconds_since(start)));
    return report_errors(errors);
  };
  // A sweep's point must store its run: the history is how its shards' results come together.
  // A plain run's history is a record kept beside its output: where the database cannot be
  // written (a read-only mount, another user's folder, a full disk) the run goes on, read-only,
  // and a warning says it was not stored.
  const bool history_required = !o.sweep_label.empty();
  auto policy = price_age(g);
  if (!policy) return fail(policy.errors());
  const GlobalOptions gs = for_scenario(g, o.file);
  auto ws = open_workspace(gs, o.no_history ? hardware::Access::read_only : hardware::Access::read_write);
  std::vector<Diagnostic> not_stored;  // why the run cannot go into the history
  if (!ws && !o.no_history && !history_required && all_environment(ws.errors())) {
    not_stored = ws.errors();
    ws = open_workspace(gs, hardware::Access::read_only);
  }
  if (!ws) return fail(ws.errors());
  // Standard input is read once, by the loader below: peeking at it here left it empty.
  if (o.file != "-")
    if (auto text = scenarios::read_scenario_text(o.file);
        text && scenarios::scenario_file_kind(*text) == scenarios::ScenarioFileKind::cluster)
      return run_cluster_file(*ws->catalog, o);
  auto scenario = load_with_overrides(o.file, o.set, *ws->catalog);
  if (!scenario) return fail(scenario.errors());
  TerminalProgress progress;
  auto run = scenarios::run_scenario(*scenario, *ws->catalog, &progress, *policy);
  if (progress.cancelled() || (run && run->sizing && run->sizing->search.cancelled)) {
    std::cerr << "capsim: stopped by Ctrl-C; nothing was written\n";
    return kExitInterrupted;
  }
  if (!run) return fail(run.errors());
  // Outputs first, each written whole or not at all; then the history.
  if (!o.junit.empty()) {
    const std::string xml = scenarios::junit_xml(*run, seconds_since(start));
    if (o.junit == "-") {
      std::cout << xml;
    } else if (auto status = write_file_atomically(o.junit, xml); !status.empty()) {
      return report_errors(status);
    }
  }
  if (!o.report.empty())
    if (auto status = write_report(*run, *ws->catalog, o.report); !status.empty()) return report_errors(status);
  if (!o.no_history && not_stored.empty()) {
    auto id = scenarios::record_run(ws->store, *run, o.sweep_label);
    if (!id && history_required) return report_errors(id.errors());
    if (!id) not_stored = id.errors();
  }
  for (const auto& d : not_stored)
    std::cerr << (d.where.file.empty() ? "" : printable(d.where.file) + ": ")
              << "warning: the run is not stored in the history: " << printable(d.message)
              << " (--no-history leaves it out)\n";
  if (o.junit != "-")  // --junit - writes the JUnit XML on standard output instead of the summary
    std::cout << (o.format == Format::json ? scenarios::run_json(*run) : scenarios::run_summary_text(*run));
  return o.check && !run->passed() ? kExitExpectationFailed : kExitOk;
}

struct HistoryOptions {
  int limit = 20;
  std::string scenario;
  long long show_id = 0;
  long long diff_a = 0, diff_b = 0;
  Format format = Format::table;
};

int run_history_list(const GlobalOptions& g, const HistoryOptions& o) {
  auto ws = open_workspace(g, hardware::Access::read_only, hardware::OnCorrupt::fail);
  if (!ws) return report_errors(ws.errors());
  auto runs = scenarios::list_runs(ws->store, o.limit, o.scenario);
  if (!runs) return report_errors(runs.errors());
  if (o.format == Format::json) {
    nlohmann::json runs_json = nlohmann::json::array();
    for (const auto& r : *runs)
      runs_json.push_back({{"id", r.id}, {"started_at", r.started_at}, {"scenario", r.scenario}, {"status", r.status},
                           {"catalog_hash", r.catalog_hash}, {"capsim_version", r.capsim_version}, {"sweep", r.sweep}});
    std::cout << nlohmann::json{{"schema", "capsim-history/1"}, {"runs", runs_json}}.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return kExitOk;
  }
  scenarios::Table t{{"id", "started (UTC)", "scenario", "status", "catalog", "capsim"}, {}, {true}};
  for (const auto& r : *runs)
    t.rows.push_back({std::to_string(r.id), r.started_at, r.scenario, r.status, r.catalog_hash.substr(0, 8),
                      r.capsim_version});
  print_table(t, o.format);
  return kExitOk;
}

int run_history_show(const GlobalOptions& g, const HistoryOptions& o) {
  auto ws = open_workspace(g, hardware::Access::read_only, hardware::OnCorrupt::fail);
  if (!ws) return report_errors(ws.errors());
  auto run = scenarios::get_run(ws->store, o.show_id);
  if (!run) return report_errors(run.errors());
  if (o.format == Format::json) std::cout << run->results_json;
  else std::cout << "run " << run->id << " of " << run->scenario << " at " << run->started_at << ": " << run->status
                 << "\n\n" << run->scenario_text;
  return kExitOk;
}

int run_history_diff(const GlobalOptions& g, const HistoryOptions& o) {
  auto ws = open_workspace(g, hardware::Access::read_only, hardware::OnCorrupt::fail);
  if (!ws) return report_errors(ws.errors());
  auto a = scenarios::get_run(ws->store, o.diff_a);
  auto b = scenarios::get_run(ws->store, o.diff_b);
  std::vector<Diagnostic> errors;
  if (!a) errors.insert(errors.end(), a.errors().begin(), a.errors().end());
  if (!b) errors.insert(errors.end(), b.errors().begin(), b.errors().end());
  if (!errors.empty()) return report_errors(errors);
  std::cout << (o.format == Format::json ? scenarios::diff_runs_json(*a, *b) : scenarios::diff_runs(*a, *b));
  return kExitOk;
}

}  // namespace

void add_run_commands(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto o = std::make_shared<RunOptions>();
  auto* run = app.add_subcommand("run", "Run a scenario end to end: sizing, measurements, expectations, history");
  run->footer("Examples:\n  capsim run --check scenarios/examples/llama-70b-pretrain.yaml\n  capsim run --check --junit reports/lora.xml scenarios/examples/lora-7b-one-node.yaml\n  capsim run scenarios/examples/lora-7b-one-node.yaml --sweep 'hardware.max_gpus=1,8' --jobs 2\n  capsim run scenarios/examples/road-sign-ocr.yaml --format json > run.json");
  run->add_option("scenario", o->file, "Scenario YAML file")->required();
  run->add_flag("--check", o->check, "Exit 1 when an expect: entry fails (exit 2 stays for bad input)");
  run->add_option("--junit", o->junit,
                  "Write JUnit XML, one test case per expectation (on bad input, one <error> test case); - for "
                  "standard output")->option_text("FILE");
  run->add_flag("--no-history", o->no_history, "Do not store the run in the database");
  run->add_option("--report", o->report,
                  "Also write the sizing report: .html, .pdf, .md, .csv or .json; .csv writes one file per table, "
                  "FILE-NAME.csv (FILE-plan.csv, FILE-frontier.csv, ...)")
      ->option_text("FILE");
  run->add_option("--set", o->set, "Override a scenario key: KEY=VALUE, e.g. hardware.max_gpus=1024 (repeatable)");
  run->add_option("--sweep", o->sweep,
                  "Run every point of one or two keys in parallel processes: 'KEY=v1,v2' or 'KEY=v1,v2;KEY2=w1,w2'");
  run->add_option("--shard", o->shard, "With --sweep: run only shard I of N (I/N, 0-based), as an Indexed Job pod does");
  run->add_option("--jobs,-j", o->jobs, "With --sweep: parallel processes (default: the machine's cores)")
      ->check(CLI::Range(1, 4096));
  run->add_option("--sweep-label", o->sweep_label)->group("");  // internal: set by a sweep for its children
  add_format_option(*run, o->format, {"table", "json"});
  run->callback([&global, &exit_code, o] { exit_code = run_run(global, *o); });

  auto rep = std::make_shared<RunOptions>();
  auto* report = app.add_subcommand("report", "Write a scenario's sizing report (.html, .pdf, .md, .csv, .json)");
  report->footer("Examples:\n  capsim report scenarios/examples/llama-70b-pretrain.yaml -o report.html\n  capsim report scenarios/examples/ml-services-24x7.yaml -o cost.pdf");
  report->add_option("scenario", rep->file, "Scenario YAML file")->required();
  report->add_option("-o,--output", rep->report,
                     "Report file; the extension picks the format (.csv: one file per table, FILE-NAME.csv). '-': "
                     "standard output, in --format (default md)")
      ->required();
  auto report_format = std::make_shared<std::string>();
  complete_values(report->add_option("--format,-f", *report_format,
                                     "With -o -: md, html, csv (one --table) or json; pdf is binary and refused")
                      ->check(CLI::IsMember({"md", "html", "pdf", "csv", "json"})),
                  {"md", "html", "pdf", "csv", "json"});
  auto table = std::make_shared<std::string>();
  report->add_option("--table", *table,
                     "With a .csv report: write only this table (e.g. frontier); without it each table goes to "
                     "its own FILE-NAME.csv");
  report->callback([&global, &exit_code, rep, table, report_format] {
    // A --format beside a file names the file's format: they must agree.
    if (rep->report != "-" && !report_format->empty() &&
        std::filesystem::path(rep->report).extension().string() != "." + *report_format) {
      exit_code = report_errors({Diagnostic{{}, "--format", "--format " + *report_format + " and the report file '" +
                                                                rep->report + "' disagree",
                                            "the extension picks a file's format; --format is for -o -"}});
      return;
    }
    if (rep->report == "-" && *report_format == "pdf") {  // refused before any work
      exit_code = report_errors(binary_to_standard_output());
      return;
    }
    auto policy = price_age(global);
    if (!policy) {
      exit_code = report_errors(policy.errors());
      return;
    }
    auto ws = open_workspace(for_scenario(global, rep->file), hardware::Access::read_only);
    if (!ws) {
      exit_code = report_errors(ws.errors());
      return;
    }
    auto scenario = scenarios::load_scenario_file(rep->file, *ws->catalog);
    if (!scenario) {
      exit_code = report_errors(scenario.errors());
      return;
    }
    auto run = scenarios::run_scenario(*scenario, *ws->catalog, nullptr, *policy);
    if (!run) {
      exit_code = report_errors(run.errors());
      return;
    }
    auto status = rep->report == "-" ? print_report(*run, *ws->catalog, report_format->empty() ? "md" : *report_format, *table)
                                     : write_report(*run, *ws->catalog, rep->report, *table);
    exit_code = status.empty() ? kExitOk : report_errors(status);
  });

  auto h = std::make_shared<HistoryOptions>();
  auto* history = app.add_subcommand("history", "Past runs stored in the database");
  history->footer("Examples:\n  capsim history list\n  capsim history diff 3 4");
  history->require_subcommand(1);
  auto* list = history->add_subcommand("list", "List runs, newest first");
  list->footer("Examples:\n  capsim history list -n 5\n  capsim history list --scenario llama-70b-pretrain --format json");
  list->add_option("--limit,-n", h->limit, "How many")->check(CLI::Range(1, 100000));
  list->add_option("--scenario", h->scenario, "Only runs of this scenario name");
  add_format_option(*list, h->format, {"table", "json", "csv", "md"});
  list->callback([&global, &exit_code, h] { exit_code = run_history_list(global, *h); });
  auto* show = history->add_subcommand("show", "One run: its scenario, or its full result with --format json");
  show->footer("Examples:\n  capsim history show 3\n  capsim history show 3 --format json");
  show->add_option("id", h->show_id, "Run id")->required();
  add_format_option(*show, h->format, {"table", "json"});
  show->callback([&global, &exit_code, h] { exit_code = run_history_show(global, *h); });
  auto merge_dbs = std::make_shared<std::vector<std::string>>();
  auto merge_sweep = std::make_shared<std::string>();
  auto merge_format = std::make_shared<Format>(Format::table);
  auto* merge = history->add_subcommand("merge", "Bring sweep shards' databases into this one and show their table");
  merge->footer("Examples:\n  capsim history merge /results/shard-*.db --sweep 'hardware.max_gpus=8,64'");
  merge->add_option("shards", *merge_dbs, "Shard databases (capsim run --shard ... --db FILE)")->required();
  merge->add_option("--sweep", *merge_sweep, "The sweep spec whose points to tabulate (default: every sweep merged)");
  add_format_option(*merge, *merge_format, {"table", "json"});
  merge->callback([&global, &exit_code, merge_dbs, merge_sweep, merge_format] {
    exit_code = run_history_merge(global, *merge_dbs, *merge_sweep, *merge_format);
  });
  auto* diff = history->add_subcommand("diff", "What changed in inputs and outputs between two runs");
  diff->footer("Examples:\n  capsim history diff 3 4\n  capsim history diff 3 4 --format json");
  diff->add_option("a", h->diff_a, "Older run id")->required();
  diff->add_option("b", h->diff_b, "Newer run id")->required();
  add_format_option(*diff, h->format, {"table", "json"});
  diff->callback([&global, &exit_code, h] { exit_code = run_history_diff(global, *h); });
}

}  // namespace capsim::cli
