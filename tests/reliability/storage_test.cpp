// The database and report files under concurrency and crashes (issue 10): many `capsim run`
// processes writing into one database lose no run and leave it consistent, and a process
// killed (SIGKILL) in the middle of a write leaves the database valid, every earlier run
// readable and the previous report byte-identical.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "reliability/run_capsim.hpp"
#include "support/test_support.hpp"

extern char** environ;

namespace fs = std::filesystem;

namespace {

// The report with its ISO 8601 timestamps blanked, to compare two runs of one report.
std::string without_timestamps(const std::string& report) {
  static const std::regex timestamp(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z)");
  return std::regex_replace(report, timestamp, "TIME");
}

const std::string kScenario = "lora-7b-one-node";  // a training scenario that sizes in well under a second

// A read-only view of the database through the SQLite library.
class Db {
 public:
  explicit Db(const fs::path& path) {
    REQUIRE(sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
    sqlite3_busy_timeout(db_, 10000);
  }
  ~Db() { sqlite3_close(db_); }
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  std::string integrity_check() const {
    std::string out;
    for (const auto& row : query("PRAGMA integrity_check;")) out += row.at(0);
    return out;
  }
  long long count_runs() const { return std::stoll(query("SELECT COUNT(*) FROM runs;").at(0).at(0)); }
  // id -> results_json of every run.
  std::map<long long, std::string> runs() const {
    std::map<long long, std::string> out;
    for (const auto& row : query("SELECT id, results_json FROM runs;")) out[std::stoll(row.at(0))] = row.at(1);
    return out;
  }

 private:
  std::vector<std::vector<std::string>> query(const char* sql) const {
    sqlite3_stmt* s = nullptr;
    REQUIRE_MESSAGE(sqlite3_prepare_v2(db_, sql, -1, &s, nullptr) == SQLITE_OK, sqlite3_errmsg(db_));
    std::vector<std::vector<std::string>> rows;
    while (sqlite3_step(s) == SQLITE_ROW) {
      std::vector<std::string> row;
      for (int i = 0; i < sqlite3_column_count(s); ++i) {
        const auto* text = sqlite3_column_text(s, i);
        row.emplace_back(text ? reinterpret_cast<const char*>(text) : "");
      }
      rows.push_back(std::move(row));
    }
    sqlite3_finalize(s);
    return rows;
  }
  sqlite3* db_ = nullptr;
};

// Starts `capsim ARGS...` with CAPSIM_DB=db, output discarded (stderr to `stderr_file` when
// one is given, so a failure can say why); returns its pid.
pid_t spawn_capsim(const fs::path& db, const std::vector<std::string>& args, const fs::path& stderr_file = {}) {
  std::vector<std::string> env_text{"CAPSIM_DB=" + db.string()};
  for (char** e = environ; *e != nullptr; ++e)
    if (!std::string(*e).starts_with("CAPSIM_DB=")) env_text.emplace_back(*e);
  std::vector<char*> envp;
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_text{CAPSIM_BINARY};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  const std::string err = stderr_file.empty() ? std::string("/dev/null") : stderr_file.string();
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, CAPSIM_BINARY, &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  REQUIRE(rc == 0);
  return pid;
}

int wait_exit_code(pid_t pid, bool* killed = nullptr) {
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  if (killed) *killed = WIFSIGNALED(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string scenario_path() { return capsim::testing::example_scenario(kScenario).string(); }

}  // namespace

TEST_CASE("concurrent writers: 8 capsim run processes into one database lose no run") {
  const fs::path dir = capsim::testing::scratch_dir("concurrent-writers");
  const fs::path db = dir / "shared.db";
  fs::remove(db);
  constexpr int kProcesses = 8, kRunsEach = 3;
  // Every process starts on a fresh database, so they also race to build the catalog.
  std::vector<std::thread> writers;
  std::vector<std::string> failures(kProcesses);  // exit code and stderr of each failed run
  for (int p = 0; p < kProcesses; ++p)
    writers.emplace_back([&, p] {
      for (int r = 0; r < kRunsEach; ++r) {
        const fs::path err = dir / ("stderr-" + std::to_string(p) + "-" + std::to_string(r));
        if (const int code = wait_exit_code(spawn_capsim(db, {"run", scenario_path()}, err)); code != 0)
          failures[p] += "run " + std::to_string(r) + " exited " + std::to_string(code) + ": " +
                         capsim::testing::read_file(err) + "\n";
      }
    });
  for (auto& w : writers) w.join();
  for (int p = 0; p < kProcesses; ++p) CHECK_MESSAGE(failures[p].empty(), "process " << p << ": " << failures[p]);
  Db check(db);
  CHECK(check.count_runs() == kProcesses * kRunsEach);
  CHECK(check.integrity_check() == "ok");
  fs::remove_all(dir);
}

TEST_CASE("kill during write: SIGKILL at random moments leaves the database and the report intact") {
  const fs::path dir = capsim::testing::scratch_dir("kill-during-write");
  const fs::path db = dir / "history.db";
  const fs::path report = dir / "report.md";
  fs::remove(db);
  // A database with two runs and a report, and how long one full run takes.
  const auto t0 = std::chrono::steady_clock::now();
  REQUIRE(wait_exit_code(spawn_capsim(db, {"run", scenario_path()})) == 0);
  const double full_run = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  REQUIRE(wait_exit_code(spawn_capsim(db, {"run", scenario_path()})) == 0);
  REQUIRE(wait_exit_code(spawn_capsim(db, {"report", scenario_path(), "-o", report.string()})) == 0);
  std::string report_before = capsim::testing::read_file(report);
  REQUIRE(!report_before.empty());
  std::map<long long, std::string> runs_before;
  {
    Db check(db);
    runs_before = check.runs();
  }
  REQUIRE(runs_before.size() == 2);

  const unsigned seed = 20250610;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> delay(0.0, 1.2 * full_run);
  constexpr int kKills = 16;
  int killed_mid_way = 0;
  for (int i = 0; i < kKills; ++i) {
    const bool writes_report = i % 2 == 1;
    const double after = delay(rng);
    CAPTURE(i);
    CAPTURE(after);
    const pid_t pid = writes_report ? spawn_capsim(db, {"report", scenario_path(), "-o", report.string()})
                                    : spawn_capsim(db, {"run", scenario_path()});
    std::this_thread::sleep_for(std::chrono::duration<double>(after));
    ::kill(pid, SIGKILL);
    bool killed = false;
    const int code = wait_exit_code(pid, &killed);
    if (killed) ++killed_mid_way;
    else CHECK(code == 0);  // it finished before the signal

    Db check(db);
    CHECK(check.integrity_check() == "ok");
    const auto runs_now = check.runs();
    for (const auto& [id, json] : runs_before) {
      CAPTURE(id);
      REQUIRE(runs_now.contains(id));
      CHECK(runs_now.at(id) == json);
    }
    CHECK(runs_now.size() <= runs_before.size() + 1);
    runs_before = runs_now;  // a run that finished is now one to keep
    const std::string report_now = capsim::testing::read_file(report);
    // Killed before its rename: the old file, byte for byte. Killed after it (the process
    // may still be exiting, which takes long under the sanitizers): a whole new report,
    // the same but for its timestamps. Never anything in between.
    if (killed && report_now != report_before) CHECK(without_timestamps(report_now) == without_timestamps(report_before));
    report_before = report_now;
  }
  MESSAGE("seed " << seed << ": " << killed_mid_way << " of " << kKills << " processes killed mid-way");
  // The kills land at random moments; how many fall mid-write depends on the machine's
  // load (3 of 16 seen with the suite running on both cores). At least two must, or the
  // test did not test what it says.
  CHECK(killed_mid_way >= 2);
  // The next report that completes removes the temporary files the killed ones left.
  REQUIRE(wait_exit_code(spawn_capsim(db, {"report", scenario_path(), "-o", report.string()})) == 0);
  std::vector<std::string> leftovers;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().filename().string().starts_with(".report.md.tmp.")) leftovers.push_back(entry.path().string());
  CHECK(leftovers.empty());
  fs::remove_all(dir);
}
