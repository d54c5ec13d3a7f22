#include "capsim/scenarios/history.hpp"

#include "capsim/core/text.hpp"
#include "capsim/hardware/sqlite.hpp"

#include <nlohmann/json.hpp>
#include <cstdint>
#include <filesystem>
#include <sstream>

#include "capsim/version.hpp"

namespace capsim::scenarios {
namespace {

using hardware::sqlite::Statement;
using hardware::sqlite::Step;

// SQLite's own message, read before anything (a ROLLBACK, a finalize) can replace it.
Diagnostic db_error(const hardware::Store& store, const std::string& what) {
  return environment_failure(
      Diagnostic{{store.path().string()}, "", what + ": " + hardware::sqlite::errmsg(store.handle()), ""});
}


RunRecord read_row(const Statement& s) {
  return {s.int64(0), s.text(1), s.text(2), s.text(3), s.text(4), s.text(5), s.text(6), s.text(7), s.text(8)};
}

// Steps through every row; a step that fails (a corrupt page) is an error, never the end.
Result<std::vector<RunRecord>> read_rows(const hardware::Store& store, Statement& s) {
  std::vector<RunRecord> out;
  Step rc;
  while ((rc = s.step()) == Step::row) out.push_back(read_row(s));
  if (rc != Step::done) return db_error(store, "cannot read the run history");
  return out;
}

constexpr const char* kColumns =
    "id, started_at, scenario, status, catalog_hash, capsim_version, scenario_resolved, results_json, sweep";

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// Line diff by longest common subsequence (scenario files are small).
std::string line_diff(const std::string& a_text, const std::string& b_text) {
  const auto a = lines_of(a_text), b = lines_of(b_text);
  // The table is a.size() x b.size() ints: two 50,000-line scenarios needed 7.7 GB. Past the
  // budget, say so instead of comparing line by line.
  constexpr std::size_t kMaxCells = 4'000'000;
  if ((a.size() + 1) * (b.size() + 1) > kMaxCells)
    return "  " + std::to_string(a.size()) + " and " + std::to_string(b.size()) +
           " lines: too long to compare line by line (the limit is " + std::to_string(kMaxCells) +
           " line pairs); " + (a_text == b_text ? "identical" : "they differ") + "\n";
  std::vector<std::vector<int>> lcs(a.size() + 1, std::vector<int>(b.size() + 1));
  for (std::size_t i = a.size(); i-- > 0;)
    for (std::size_t j = b.size(); j-- > 0;)
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  std::string out;
  std::size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (i < a.size() && j < b.size() && a[i] == b[j]) {
      ++i, ++j;
    } else if (j < b.size() && (i == a.size() || lcs[i][j + 1] >= lcs[i + 1][j])) {
      out += "+ " + b[j++] + "\n";
    } else {
      out += "- " + a[i++] + "\n";
    }
  }
  return out;
}

}  // namespace

Result<long long> record_run(const hardware::Store& store, const RunResult& run, const std::string& sweep) {
  const char* sql =
      "INSERT INTO runs(started_at, scenario, scenario_resolved, catalog_hash, capsim_version, status, results_json, "
      "sweep) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8);";
  Statement s(store.handle(), sql);
  if (!s.ok()) return db_error(store, "cannot record the run");
  const std::string json = run_json(run);
  const std::string status = run.status();
  const std::string fields[] = {run.started_at, run.scenario.name, run.scenario.text, run.catalog_hash,
                                CAPSIM_VERSION,  status,            json,                sweep};
  for (int i = 0; i < 8; ++i) s.bind(i + 1, fields[i]);
  // One statement is one transaction; with WAL and the store's busy timeout, concurrent
  // writers queue instead of failing.
  if (s.step() != Step::done) return db_error(store, "cannot record the run");
  return static_cast<long long>(hardware::sqlite::last_insert_rowid(store.handle()));
}

Result<std::vector<RunRecord>> list_runs(const hardware::Store& store, int limit, const std::string& scenario) {
  const std::string sql = std::string("SELECT ") + kColumns + " FROM runs" +
                          (scenario.empty() ? "" : " WHERE scenario = ?2") + " ORDER BY id DESC LIMIT ?1;";
  Statement s(store.handle(), sql);
  if (!s.ok()) return db_error(store, "cannot read the run history");
  s.bind(1, limit);
  if (!scenario.empty()) s.bind(2, scenario);
  return read_rows(store, s);
}

Result<RunRecord> get_run(const hardware::Store& store, long long id) {
  const std::string sql = std::string("SELECT ") + kColumns + " FROM runs WHERE id = ?1;";
  Statement s(store.handle(), sql);
  if (!s.ok()) return db_error(store, "cannot read the run history");
  s.bind(1, static_cast<std::int64_t>(id));
  auto rows = read_rows(store, s);
  if (!rows) return rows.errors();
  std::optional<RunRecord> found;
  if (!rows->empty()) found = rows->front();
  if (!found) return Diagnostic{{store.path().string()}, "", "no run with id " + std::to_string(id), "see 'capsim history'"};
  return *found;
}

Result<std::vector<RunRecord>> list_sweep_runs(const hardware::Store& store, const std::string& spec) {
  const std::string sql = std::string("SELECT ") + kColumns + " FROM runs WHERE sweep LIKE ?1 ORDER BY id DESC;";
  Statement s(store.handle(), sql);
  if (!s.ok()) return db_error(store, "cannot read the run history");
  s.bind(1, spec + " | %");
  return read_rows(store, s);
}

Result<int> merge_runs(const hardware::Store& store, const std::filesystem::path& shard) {
  if (!std::filesystem::is_regular_file(shard))
    return Diagnostic{{shard.string()}, "", "no such shard database", ""};
  sqlite3* db = store.handle();
  {
    Statement attach(db, "ATTACH DATABASE ?1 AS shard;");
    if (!attach.ok()) return db_error(store, "cannot open the shard " + shard.string());
    attach.bind(1, shard.string());
    if (attach.step() != Step::done) return db_error(store, "cannot open the shard " + shard.string());
  }
  auto detach = [&] { hardware::sqlite::exec(db, "DETACH DATABASE shard;"); };
  const char* copy =
      "BEGIN IMMEDIATE;"
      "INSERT INTO main.runs(started_at, scenario, scenario_resolved, catalog_hash, capsim_version, status, "
      "results_json, sweep) SELECT started_at, scenario, scenario_resolved, catalog_hash, capsim_version, status, "
      "results_json, sweep FROM shard.runs;"
      "COMMIT;";
  if (!hardware::sqlite::exec(db, copy)) {
    auto error = db_error(store, "cannot merge the shard " + shard.string());
    hardware::sqlite::exec(db, "ROLLBACK;");
    detach();
    return error;
  }
  const int copied = hardware::sqlite::changes(db);
  detach();
  return copied;
}

namespace {

// A result value that differs between two runs; `before` or `after` is null when the value is
// new or gone.
struct OutputChange {
  std::string path;
  nlohmann::json before, after;
};

std::vector<OutputChange> output_changes(const RunRecord& a, const RunRecord& b) {
  const auto ja = nlohmann::json::parse(a.results_json, nullptr, false).flatten();
  const auto jb = nlohmann::json::parse(b.results_json, nullptr, false).flatten();
  auto skip = [](const std::string& key) { return key == "/started_at" || key.ends_with("/wall_seconds"); };
  std::vector<OutputChange> changes;
  for (auto it = ja.begin(); it != ja.end(); ++it) {
    if (skip(it.key())) continue;
    auto other = jb.find(it.key());
    if (other == jb.end()) changes.push_back({it.key(), it.value(), nullptr});
    else if (*other != it.value()) changes.push_back({it.key(), it.value(), *other});
  }
  for (auto it = jb.begin(); it != jb.end(); ++it)
    if (!skip(it.key()) && !ja.contains(it.key())) changes.push_back({it.key(), nullptr, it.value()});
  return changes;
}

// A value as people read it: numbers to 6 significant digits and never in exponent form
// (the exact values stay in `history diff --format json`).
std::string dump(const nlohmann::json& j) {
  if (j.is_number_float()) return significant(j.get<double>(), 6);
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::string diff_runs(const RunRecord& a, const RunRecord& b) {
  std::string out = "run " + std::to_string(a.id) + " (" + a.started_at + ", " + a.status + ") -> run " +
                    std::to_string(b.id) + " (" + b.started_at + ", " + b.status + ")\n";
  if (a.catalog_hash != b.catalog_hash) out += "catalog: " + a.catalog_hash + " -> " + b.catalog_hash + "\n";
  if (a.capsim_version != b.capsim_version) out += "capsim: " + a.capsim_version + " -> " + b.capsim_version + "\n";
  const std::string inputs = line_diff(a.scenario_text, b.scenario_text);
  out += "\ninputs (scenario):\n" + (inputs.empty() ? std::string("  unchanged\n") : inputs);
  out += "\noutputs:\n";
  const auto changes = output_changes(a, b);
  for (const auto& c : changes) {
    if (c.after.is_null()) out += "  " + c.path + ": " + dump(c.before) + " -> (gone)\n";
    else if (c.before.is_null()) out += "  " + c.path + ": (new) " + dump(c.after) + "\n";
    else out += "  " + c.path + ": " + dump(c.before) + " -> " + dump(c.after) + "\n";
  }
  if (changes.empty()) out += "  unchanged\n";
  return out;
}

std::string diff_runs_json(const RunRecord& a, const RunRecord& b) {
  auto run = [](const RunRecord& r) {
    return nlohmann::json{{"id", r.id},         {"started_at", r.started_at},         {"scenario", r.scenario},
                          {"status", r.status}, {"catalog_hash", r.catalog_hash}, {"capsim_version", r.capsim_version}};
  };
  nlohmann::json inputs = nlohmann::json::array();
  std::istringstream lines(line_diff(a.scenario_text, b.scenario_text));
  for (std::string line; std::getline(lines, line);) inputs.push_back(line);
  nlohmann::json outputs = nlohmann::json::array();
  for (const auto& c : output_changes(a, b)) outputs.push_back({{"path", c.path}, {"before", c.before}, {"after", c.after}});
  const nlohmann::json out{{"schema", "capsim-history-diff/1"}, {"a", run(a)}, {"b", run(b)},
                           {"inputs", inputs},                   {"outputs", outputs}};
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace capsim::scenarios
