#include "sweep.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iostream>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "capsim/core/files.hpp"
#include "capsim/core/text.hpp"
#include "capsim/scenarios/escape.hpp"
#include "capsim/scenarios/export.hpp"
#include "capsim/scenarios/history.hpp"
#include "capsim/scenarios/scenario.hpp"
#include "capsim/version.hpp"
#include "capsim/scenarios/overrides.hpp"
#include "capsim/scenarios/pod_security.hpp"
#include "capsim/scenarios/table.hpp"
#include "capsim/scenarios/workspace.hpp"

extern char** environ;

namespace capsim::cli {
namespace {

namespace fs = std::filesystem;

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Result<std::pair<int, int>> parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  int i = -1, n = 0;
  if (slash != std::string::npos) {
    std::from_chars(text.data(), text.data() + slash, i);
    std::from_chars(text.data() + slash + 1, text.data() + text.size(), n);
  }
  if (n < 1 || i < 0 || i >= n)
    return Diagnostic{{}, "--shard", "expected I/N with 0 <= I < N, got '" + text + "'", "e.g. --shard 0/4"};
  return std::make_pair(i, n);
}

// One sweep point's outcome, from a child's JSON result or from its error output.
struct PointResult {
  std::string label;
  int exit_code = 0;
  std::string json;
  std::string error;
};

// The table of a sweep: one row per point, the plan's figures as columns (units in the
// headers, one currency), then the other measurements.
scenarios::Table sweep_table(const std::vector<PointResult>& results) {
  using nlohmann::json;
  struct PlanColumn {
    const char* header;
    const char* field;
    std::string (*show)(const json&);
    const char* unit;  // of the JSON's number, which CSV writes whole
  };
  static const PlanColumn plan_columns[] = {
      {"GPUs", "gpus", [](const json& v) { return std::to_string(v.get<long long>()); }, ""},
      {"nodes", "nodes", [](const json& v) { return std::to_string(v.get<long long>()); }, ""},
      {"time", "time_seconds", [](const json& v) { return to_string(Seconds(v.get<double>())); }, "s"},
      {"cost per run (USD)", "cost_per_run", [](const json& v) { return scenarios::human_count(v.get<double>()); }, "USD"},
      {"cost per month (USD)", "cost_per_month", [](const json& v) { return scenarios::human_count(v.get<double>()); }, "USD"},
      {"p99", "p99_seconds", [](const json& v) { return to_string(Seconds(v.get<double>())); }, "s"},
  };
  // Measurements the plan columns already show.
  static const std::vector<std::string> in_plan = {"gpus", "training_time", "cost_per_run", "monthly_cost", "p99_latency"};
  std::vector<std::string> metrics;
  std::vector<json> parsed;
  std::vector<const PlanColumn*> shown;
  for (const auto& r : results) {
    parsed.push_back(json::parse(r.json, nullptr, false));
    const auto& j = parsed.back();
    if (!j.is_object()) continue;
    if (j.contains("plan"))
      for (const auto& c : plan_columns)
        if (j["plan"].contains(c.field) && !j["plan"][c.field].is_null() &&
            std::find(shown.begin(), shown.end(), &c) == shown.end())
          shown.push_back(&c);
    if (j.contains("measurements"))
      for (auto it = j["measurements"].begin(); it != j["measurements"].end(); ++it)
        if (std::find(metrics.begin(), metrics.end(), it.key()) == metrics.end() &&
            std::find(in_plan.begin(), in_plan.end(), it.key()) == in_plan.end())
          metrics.push_back(it.key());
  }
  std::sort(shown.begin(), shown.end());  // the order of plan_columns
  scenarios::Table t{{"point", "status"}, {}, {false, false}};
  for (const auto* c : shown) {
    t.columns.push_back(c->header);
    t.right_align.push_back(true);
  }
  for (const auto& m : metrics) {
    t.columns.push_back(m);
    t.right_align.push_back(true);
  }
  for (std::size_t i = 0; i < results.size(); ++i) {
    std::vector<scenarios::Cell> row{results[i].label};
    const auto& j = parsed[i];
    if (!j.is_object() || results[i].exit_code != kExitOk) {
      row.push_back("error: " + results[i].error.substr(0, results[i].error.find('\n')));
      row.resize(t.columns.size());
    } else {
      row.push_back(j.value("status", ""));
      for (const auto* c : shown) {
        const bool has = j.contains("plan") && j["plan"].contains(c->field) && !j["plan"][c->field].is_null();
        const json* v = has ? &j["plan"][c->field] : nullptr;
        row.push_back(v ? scenarios::Cell(c->show(*v), v->get<double>(), c->unit) : scenarios::Cell("-"));
      }
      for (const auto& m : metrics)
        row.push_back(j["measurements"].contains(m) ? j["measurements"][m].value("display", "") : "-");
    }
    t.rows.push_back(row);
  }
  return t;
}

// A sweep as JSON (schema capsim-sweep/1): the spec, `extra` fields, and each point's label,
// exit code, the run's own JSON (capsim-run) and any error text.
std::string sweep_json(const std::string& spec, const std::vector<PointResult>& results, const nlohmann::json& extra) {
  nlohmann::json points = nlohmann::json::array();
  for (const auto& r : results) {
    auto run = nlohmann::json::parse(r.json, nullptr, false);
    points.push_back({{"point", r.label},
                      {"exit_code", r.exit_code},
                      {"run", run.is_discarded() ? nlohmann::json() : run},
                      {"error", r.error.empty() ? nlohmann::json() : nlohmann::json(r.error)}});
  }
  nlohmann::json out{{"schema", "capsim-sweep/1"}, {"sweep", spec.empty() ? nlohmann::json() : nlohmann::json(spec)}};
  out.update(extra);
  out["points"] = std::move(points);
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

// A point's outcome from its process's wait status and the files its output went to. A point
// that failed always says why: a child killed by a signal, or one whose own error output was
// lost (a full TMPDIR), gets a message here; one that exited 0 without a whole JSON result
// lost its output, and fails too (the children run without --check: their expectations are
// read from the result).
void settle_point(PointResult& r, int status, const fs::path& out, const fs::path& err) {
  r.json = read_all(out);
  r.error = read_all(err);
  if (WIFSIGNALED(status)) {
    r.exit_code = kExitEnvironment;
    r.error += "killed by signal " + std::to_string(WTERMSIG(status)) + " (" + ::strsignal(WTERMSIG(status)) + ")\n";
    return;
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : kExitEnvironment;
  if (r.exit_code == kExitOk && !nlohmann::json::parse(r.json, nullptr, false).is_object()) {
    r.exit_code = kExitEnvironment;
    r.error += "its result was lost: capsim exited 0 without writing the whole JSON result (is TMPDIR full?)\n";
  }
  if (r.exit_code != kExitOk && r.error.find_first_not_of(" \t\n") == std::string::npos)
    r.error = "capsim exited " + std::to_string(r.exit_code) +
              " and its error message was lost (it could not be written: is TMPDIR full?)\n";
}

// The sweep's exit code: the worst of its points', with each failed point's error on stderr.
// A point that did not run says more than one that ran and missed: an environment failure (3)
// ranks above bad input (2), which ranks above an expectation that failed under --check (1).
int sweep_exit_code(const std::vector<PointResult>& results, bool check) {
  auto rank = [](int code) {
    return code == kExitEnvironment ? 3 : code == kExitBadInput ? 2 : code == kExitExpectationFailed ? 1 : 0;
  };
  int worst = kExitOk;
  for (const auto& r : results) {
    int code = r.exit_code;
    if (code == kExitOk) {
      const auto j = nlohmann::json::parse(r.json, nullptr, false);
      if (check && j.is_object() && j.value("status", "") == "failed") code = kExitExpectationFailed;
    } else {
      std::cerr << r.label << ": " << r.error;
      if (code != kExitBadInput) code = kExitEnvironment;  // any other code: the process failed
    }
    if (rank(code) > rank(worst)) worst = code;
  }
  return worst;
}

// Runs `capsim ARGS` as a child process with stdout and stderr in files.
pid_t spawn_capsim(const std::vector<std::string>& args, const fs::path& out, const fs::path& err) {
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  // New files only, never through a link: the directory is private, but be strict anyway.
  constexpr int kCreate = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW;
  posix_spawn_file_actions_addopen(&files, STDOUT_FILENO, out.c_str(), kCreate, 0600);
  posix_spawn_file_actions_addopen(&files, STDERR_FILENO, err.c_str(), kCreate, 0600);
  posix_spawn_file_actions_addopen(&files, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, "/proc/self/exe", &files, nullptr, argv.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&files);
  return pid;
}

}  // namespace

int run_sweep(const GlobalOptions& g, const std::string& file, const std::string& spec, const std::string& shard,
              const std::vector<std::string>& set, int jobs, bool check, Format format) {
  auto points = scenarios::expand_sweep(spec);
  if (!points) return report_errors(points.errors());
  std::vector<scenarios::SweepPoint> mine = *points;
  if (!shard.empty()) {
    auto s = parse_shard(shard);
    if (!s) return report_errors(s.errors());
    mine = scenarios::shard_of(*points, s->first, s->second);
  }
  // The catalog and database are opened once here, so the children find them ready.
  auto ws = open_workspace(for_scenario(g, file), hardware::Access::read_write);
  if (!ws) return report_errors(ws.errors());
  // A private directory (mkdtemp, 0700) for the children's output, removed on return and
  // on SIGTERM/SIGINT; never a predictable name another user could plant.
  // The handler first: a signal that comes once the directory exists must find it.
  remove_temporary_directories_on_signal();
  auto scratch = TemporaryDirectory::create("capsim-sweep");
  if (!scratch) return report_errors(scratch.errors());
  const fs::path tmp = scratch->path();
  const int parallel = jobs > 0 ? jobs : std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN));
  std::vector<PointResult> results(mine.size());
  std::map<pid_t, std::size_t> running;
  std::size_t next = 0;
  // On a terminal, progress and an estimate of the time left from the points done so far
  // (a CI log gets only the result).
  const bool show_progress = ::isatty(STDERR_FILENO) == 1 && mine.size() > 1;
  const auto started = std::chrono::steady_clock::now();
  std::size_t done = 0;
  auto report_progress = [&] {
    if (!show_progress) return;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const double left = elapsed / static_cast<double>(done) * static_cast<double>(mine.size() - done);
    std::cerr << "\r\033[Ksweep: " << done << " of " << mine.size() << " points in " << std::llround(elapsed)
              << " s, about " << std::llround(left) << " s left" << std::flush;
  };
  auto wait_one = [&] {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid <= 0 || !running.count(pid)) return;
    const std::size_t i = running[pid];
    running.erase(pid);
    settle_point(results[i], status, tmp / (std::to_string(i) + ".out"), tmp / (std::to_string(i) + ".err"));
    ++done;
    report_progress();
  };
  while (next < mine.size() || !running.empty()) {
    if (next < mine.size() && static_cast<int>(running.size()) < parallel) {
      const auto& point = mine[next];
      std::vector<std::string> args{"capsim", "--db", ws->store.path().string(), "--catalog", ws->catalog_dir.string(),
                                    "run", file, "--format", "json", "--sweep-label", spec + " | " + point.label()};
      for (const auto& overlay : ws->overlays) args.insert(args.end(), {"--catalog-overlay", overlay.string()});
      args.insert(args.end(), {"--max-price-age", g.max_price_age});
      for (const auto& s : set) args.insert(args.end(), {"--set", s});
      for (const auto& o : point.overrides) args.insert(args.end(), {"--set", o.path + "=" + o.value});
      results[next].label = point.label();
      const pid_t pid = spawn_capsim(args, tmp / (std::to_string(next) + ".out"), tmp / (std::to_string(next) + ".err"));
      if (pid < 0) {
        results[next].exit_code = kExitEnvironment;
        results[next].error = std::string("cannot start a capsim process: ") + std::strerror(errno) + "\n";
      } else {
        running[pid] = next;
      }
      ++next;
      continue;
    }
    wait_one();
  }
  if (show_progress) std::cerr << "\r\033[K" << std::flush;
  if (format == Format::json) {
    std::cout << sweep_json(spec, results, {{"shard", shard.empty() ? nlohmann::json() : nlohmann::json(shard)}});
  } else {
    std::cout << "Sweep " << spec << (shard.empty() ? "" : " (shard " + shard + ")") << ": " << mine.size()
              << " points\n\n";
    print_table(sweep_table(results), Format::table);
  }
  return sweep_exit_code(results, check);
}

int run_history_merge(const GlobalOptions& g, const std::vector<std::string>& shards, const std::string& spec,
                      Format format) {
  auto ws = open_workspace(g, hardware::Access::read_write, hardware::OnCorrupt::fail);
  if (!ws) return report_errors(ws.errors());
  std::vector<Diagnostic> errors;
  int copied = 0;
  for (const auto& shard : shards) {
    auto n = scenarios::merge_runs(ws->store, shard);
    if (n) copied += *n;
    else errors.insert(errors.end(), n.errors().begin(), n.errors().end());
  }
  if (!errors.empty()) return report_errors(errors);
  auto runs = spec.empty() ? scenarios::list_runs(ws->store, 1000000) : scenarios::list_sweep_runs(ws->store, spec);
  if (!runs) return report_errors(runs.errors());
  // The newest run of each point; with a spec, in the sweep's order and labelled by point.
  std::map<std::string, PointResult> latest;
  for (const auto& r : *runs) {
    if (r.sweep.empty() || latest.count(r.sweep)) continue;
    const auto bar = r.sweep.find(" | ");
    latest[r.sweep] = {spec.empty() || bar == std::string::npos ? r.sweep : r.sweep.substr(bar + 3), 0,
                       r.results_json, ""};
  }
  std::vector<PointResult> rows;
  if (auto points = scenarios::expand_sweep(spec); points && !spec.empty()) {
    for (const auto& p : *points)
      if (auto it = latest.find(spec + " | " + p.label()); it != latest.end()) rows.push_back(it->second);
  } else {
    for (auto& [label, p] : latest) rows.push_back(p);
  }
  if (format == Format::json) {
    std::cout << sweep_json(spec, rows, {{"merged_runs", copied}, {"shard_databases", shards.size()}});
    return kExitOk;
  }
  std::cout << "Merged " << copied << " runs from " << shards.size() << " shard databases.\n\n";
  print_table(sweep_table(rows), Format::table);
  return kExitOk;
}

namespace {

struct SweepJobOptions {
  std::string file;
  std::string spec;
  int shards = 1;
  std::string output;
  // The image the Dockerfile at the repository's root builds (README "Container image").
  std::string image = std::string("capsim:") + CAPSIM_VERSION;
  std::string name = "capsim-sweep";
  std::string storage_class;
  std::string storage = "1Gi";
};

// `text` as a literal in a container's args: Kubernetes reads $(VAR) there, $$ is a '$'.
std::string kubernetes_literal(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '$' ? std::string("$$") : std::string(1, c);
  return out;
}

void emit_labels(YAML::Emitter& y, const std::string& name) {
  y << YAML::Key << "labels" << YAML::Value << YAML::BeginMap << YAML::Key << "app.kubernetes.io/name" << YAML::Value
    << "capsim" << YAML::Key << "capsim.dev/sweep" << YAML::Value << name << YAML::EndMap;
}

// The sweep as Kubernetes objects, applied together (kubectl apply -f):
//   a ConfigMap holding the scenario, mounted read-only at /scenario in every pod;
//   a PersistentVolumeClaim (ReadWriteMany: the pods of several nodes write to it at once)
//     where pod i writes its own database, /results/shard-i.db;
//   an Indexed Job (batch/v1) whose pod i runs shard i of N with the capsim image.
// `capsim history merge` joins the shards afterwards.
std::string indexed_job(const SweepJobOptions& o, const std::string& scenario_text) {
  const std::string base = o.file == "-" ? std::string("scenario.yaml") : std::filesystem::path(o.file).filename().string();
  YAML::Emitter y;
  y << YAML::BeginDoc << YAML::BeginMap;
  y << YAML::Key << "apiVersion" << YAML::Value << "v1";
  y << YAML::Key << "kind" << YAML::Value << "ConfigMap";
  y << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap << YAML::Key << "name" << YAML::Value
    << o.name + "-scenario";
  emit_labels(y, o.name);
  y << YAML::EndMap;
  y << YAML::Key << "data" << YAML::Value << YAML::BeginMap << YAML::Key << "scenario.yaml" << YAML::Value
    << YAML::Literal << scenario_text << YAML::EndMap;
  y << YAML::EndMap;

  y << YAML::BeginDoc << YAML::BeginMap;
  y << YAML::Key << "apiVersion" << YAML::Value << "v1";
  y << YAML::Key << "kind" << YAML::Value << "PersistentVolumeClaim";
  y << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap << YAML::Key << "name" << YAML::Value
    << o.name + "-results";
  emit_labels(y, o.name);
  y << YAML::EndMap;
  y << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "accessModes" << YAML::Value << YAML::Flow << YAML::BeginSeq << "ReadWriteMany" << YAML::EndSeq;
  if (!o.storage_class.empty()) y << YAML::Key << "storageClassName" << YAML::Value << o.storage_class;
  y << YAML::Key << "resources" << YAML::Value << YAML::BeginMap << YAML::Key << "requests" << YAML::Value
    << YAML::BeginMap << YAML::Key << "storage" << YAML::Value << o.storage << YAML::EndMap << YAML::EndMap;
  y << YAML::EndMap << YAML::EndMap;

  y << YAML::BeginDoc << YAML::BeginMap;
  y << YAML::Key << "apiVersion" << YAML::Value << "batch/v1";
  y << YAML::Key << "kind" << YAML::Value << "Job";
  y << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap << YAML::Key << "name" << YAML::Value << o.name;
  emit_labels(y, o.name);
  y << YAML::EndMap;
  y << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "completionMode" << YAML::Value << "Indexed";
  y << YAML::Key << "completions" << YAML::Value << o.shards;
  y << YAML::Key << "parallelism" << YAML::Value << o.shards;
  y << YAML::Key << "backoffLimitPerIndex" << YAML::Value << 1;
  y << YAML::Key << "template" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap;
  emit_labels(y, o.name);
  y << YAML::EndMap;
  y << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "restartPolicy" << YAML::Value << "Never";
  // The image's user by number (the kubelet refuses runAsNonRoot with a named USER); the
  // results volume is made writable for its group.
  scenarios::emit_pod_security_context(y);
  y << YAML::Key << "containers" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  y << YAML::Key << "name" << YAML::Value << "capsim";
  y << YAML::Key << "image" << YAML::Value << o.image;
  // The command as an argument vector, no shell: a scenario path or sweep value can hold
  // quotes and $(...) and stays one argument. Kubernetes expands $(VAR) in args, so a
  // user's '$' is written '$$' (a literal dollar); only the completion index is expanded.
  y << YAML::Key << "command" << YAML::Value << YAML::Flow << YAML::BeginSeq << "capsim" << YAML::EndSeq;
  y << YAML::Key << "args" << YAML::Value << YAML::BeginSeq << "--db" << "/results/shard-$(JOB_COMPLETION_INDEX).db"
    << "run" << kubernetes_literal("/scenario/" + base) << "--sweep" << kubernetes_literal(o.spec) << "--shard"
    << "$(JOB_COMPLETION_INDEX)/" + std::to_string(o.shards) << YAML::EndSeq;
  y << YAML::Key << "volumeMounts" << YAML::Value << YAML::BeginSeq;
  y << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "scenario" << YAML::Key << "mountPath" << YAML::Value
    << "/scenario" << YAML::Key << "readOnly" << YAML::Value << true << YAML::EndMap;
  y << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "results" << YAML::Key << "mountPath" << YAML::Value
    << "/results" << YAML::EndMap;
  y << YAML::EndSeq;
  y << YAML::EndMap << YAML::EndSeq;
  y << YAML::Key << "volumes" << YAML::Value << YAML::BeginSeq;
  // The scenario under its own file name, so messages name the file the user wrote.
  y << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "scenario" << YAML::Key << "configMap" << YAML::Value
    << YAML::BeginMap << YAML::Key << "name" << YAML::Value << o.name + "-scenario" << YAML::Key << "items"
    << YAML::Value << YAML::BeginSeq << YAML::BeginMap << YAML::Key << "key" << YAML::Value << "scenario.yaml"
    << YAML::Key << "path" << YAML::Value << base << YAML::EndMap << YAML::EndSeq << YAML::EndMap << YAML::EndMap;
  y << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "results" << YAML::Key << "persistentVolumeClaim"
    << YAML::Value << YAML::BeginMap << YAML::Key << "claimName" << YAML::Value << o.name + "-results" << YAML::EndMap
    << YAML::EndMap;
  y << YAML::EndSeq;
  y << YAML::EndMap << YAML::EndMap << YAML::EndMap << YAML::EndMap;
  return "# capsim sweep as Kubernetes objects: the scenario (ConfigMap), a results volume (PVC) and an\n"
         "# Indexed Job whose pod i runs shard i (image: the Dockerfile of capsim's repository). Afterwards,\n"
         "# in a pod that mounts " + o.name + "-results at /results, run\n"
         "#   capsim history merge /results/shard-*.db --sweep " + scenarios::shell_word(o.spec) + "\n" + std::string(y.c_str()) +
         "\n";
}

// A Kubernetes object name (RFC 1123 subdomain, kept to 52 characters so "-scenario" and
// "-results" still fit the 63 of a label value).
bool valid_object_name(const std::string& name) {
  if (name.empty() || name.size() > 52) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(name.front()) || !alnum(name.back())) return false;
  return std::all_of(name.begin(), name.end(), [&](char c) { return alnum(c) || c == '-'; });
}

}  // namespace

void add_sweep_command(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto o = std::make_shared<SweepJobOptions>();
  auto* sweep = app.add_subcommand(
      "sweep", "Write the Kubernetes objects (ConfigMap, PVC, Indexed Job) that run a sweep in N shards");
  sweep->add_option("scenario", o->file, "Scenario YAML file; it travels in the manifest's ConfigMap")->required();
  sweep->add_option("--sweep", o->spec, "'KEY=v1,v2' or 'KEY=v1,v2;KEY2=w1,w2'")->required();
  sweep->add_option("--shards", o->shards, "Pods, each running one shard")->required()->check(CLI::Range(1, 100000));
  sweep->add_option("-o,--output", o->output, "Write the manifest to FILE (default: standard output)");
  sweep->add_option("--image", o->image, "Container image with capsim (built from the repository's Dockerfile)")
      ->capture_default_str();
  sweep->add_option("--name", o->name, "Job name; the ConfigMap and PVC are NAME-scenario and NAME-results")
      ->capture_default_str();
  sweep->add_option("--storage-class", o->storage_class,
                    "Storage class of the results volume; it must offer ReadWriteMany (default: the cluster's)");
  sweep->add_option("--storage", o->storage, "Size of the results volume")->capture_default_str();
  sweep->footer("Examples:\n"
                "  capsim sweep scenarios/examples/llama-70b-pretrain.yaml --sweep 'hardware.max_gpus=2048,4096,8192' "
                "--shards 3 -o sweep.yaml\n"
                "  kubectl apply -f sweep.yaml");
  sweep->callback([&global, &exit_code, o] {
    // Control characters would end the manifest's comment line or hide text in it.
    for (const auto& [option, value] : {std::pair<const char*, const std::string*>{"--sweep", &o->spec},
                                        {"scenario", &o->file}, {"--image", &o->image}, {"--name", &o->name}})
      if (first_control_character(*value, false)) {
        exit_code = report_errors({Diagnostic{{}, option, "must not contain control characters", ""}});
        return;
      }
    // The image as `capsim export k8s --image` takes it (issue 47).
    if (!scenarios::is_image_reference(o->image)) {
      exit_code = report_errors({Diagnostic{{}, "--image", "'" + o->image + "' is no image reference",
                                            "[registry/]repository[:tag][@digest], e.g. capsim:" CAPSIM_VERSION}});
      return;
    }
    if (!valid_object_name(o->name)) {
      exit_code = report_errors({Diagnostic{{}, "--name", "'" + o->name + "' is not a Kubernetes object name",
                                            "lowercase letters, digits and '-', at most 52 characters"}});
      return;
    }
    auto points = scenarios::expand_sweep(o->spec);
    if (!points) {
      exit_code = report_errors(points.errors());
      return;
    }
    // The scenario travels in the manifest: it must be valid here, or every pod fails alike.
    auto text = scenarios::read_scenario_text(o->file);
    if (!text) {
      exit_code = report_errors(text.errors());
      return;
    }
    auto ws = open_workspace(global, hardware::Access::read_only);
    if (!ws) {
      exit_code = report_errors(ws.errors());
      return;
    }
    auto scenario = scenarios::load_scenario(o->file == "-" ? std::string("<stdin>") : o->file, *text, *ws->catalog);
    if (!scenario) {
      exit_code = report_errors(scenario.errors());
      return;
    }
    // The ConfigMap carries the scenario file only: every file it names would be left behind.
    std::vector<Diagnostic> left_behind;
    auto refuse = [&](const std::string& key, const std::string& what, const std::string& instead) {
      left_behind.push_back({{o->file}, key, "the sweep's ConfigMap carries the scenario file only, not its " + what,
                             "run the sweep on one machine (capsim run --sweep) or " + instead});
    };
    if (const auto& inf = scenario->inference) {
      if (inf->arrivals.kind == models::ArrivalSpec::Kind::trace) refuse("arrivals.trace", "trace file", "use Poisson arrivals");
      if (!inf->request_lengths_file.empty())
        refuse("workload.request_lengths", "request lengths file", "give prompt_tokens and output_tokens");
      for (const auto& file : inf->latency_files)
        refuse("workload.graph", "latency file " + file, "give the table inline (model.latency)");
    }
    if (!left_behind.empty()) {
      exit_code = report_errors(left_behind);
      return;
    }
    constexpr std::size_t kConfigMapLimit = 1024 * 1024;  // the API server's limit for a ConfigMap
    if (text->size() > kConfigMapLimit - 4096) {
      exit_code = report_errors({Diagnostic{{o->file}, "", "the scenario is too large for a ConfigMap (1 MiB)", ""}});
      return;
    }
    const std::string manifest = indexed_job(*o, *text);
    if (o->output.empty() || o->output == "-") {
      std::cout << manifest;
      exit_code = kExitOk;
      return;
    }
    auto status = write_file_atomically(o->output, manifest);
    exit_code = status.empty() ? kExitOk : report_errors(status);
  });
}

}  // namespace capsim::cli
