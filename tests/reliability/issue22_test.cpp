// Issue 22: never a false pass, never a lost or poisoned file. One regression test per
// numbered defect, named after it; each reproduces the defect and pins the right behaviour.
#include <doctest/doctest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <chrono>
#include <thread>
#include <vector>

#include "capsim/core/files.hpp"
#include "capsim/core/result.hpp"
#include "capsim/core/text.hpp"
#include "capsim/scenarios/expectations.hpp"
#include "reliability/run_capsim.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using capsim::testing::read_file;
using capsim::testing::run_capsim;

namespace {

// A scratch directory removed when the test ends, pass or fail.
struct ScratchDir {
  explicit ScratchDir(const std::string& name) : path(capsim::testing::scratch_dir(name)) {}
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  fs::path path;
};

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  return names;
}

// Runs `body` in a child process whose files may not grow past `limit_bytes` (RLIMIT_FSIZE,
// with SIGXFSZ ignored so that the write fails with EFBIG like a full disk's ENOSPC).
// Returns the child's exit code.
template <class Body>
int with_file_size_limit(rlim_t limit_bytes, Body body) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    rlimit limit{limit_bytes, limit_bytes};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    ::_exit(body());
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

// ---- Defect 2: PDF and SVG writers ignored write errors; fixed temporary name; no fsync.

TEST_CASE("bug 22.2: a failed write kept neither a truncated file nor its temporary") {
  ScratchDir dir("i22-atomic");
  const fs::path target = dir.path / "r.pdf";
  write_text(target, "the valid old report");
  const std::string big(64 * 1024, 'x');
  // The child writes with a 4 KB file-size limit: the write fails part-way, like a full disk.
  const int code = with_file_size_limit(4096, [&] {
    const auto status = capsim::write_file_atomically(target, big);
    if (status.empty()) return 10;
    const auto& d = status.front();
    if (d.cause != capsim::Cause::environment) return 11;
    if (d.where.file != target.string()) return 12;
    if (d.message.find("cannot write the file: File too large") == std::string::npos) return 13;
    return 0;
  });
  CHECK(code == 0);
  CHECK(read_file(target) == "the valid old report");
  CHECK(names_in(dir.path) == std::vector<std::string>{"r.pdf"});  // no temporary left behind
}

TEST_CASE("bug 22.2: concurrent writers of one file each leave one whole version, no temporaries") {
  ScratchDir dir("i22-concurrent");
  const fs::path target = dir.path / "c.pdf";
  constexpr int kWriters = 8, kRounds = 20;
  std::vector<std::thread> writers;
  std::vector<int> failures(kWriters, 0);
  for (int w = 0; w < kWriters; ++w)
    writers.emplace_back([&, w] {
      // Each writer's content is its own letter, in a size of its own.
      const std::string content(static_cast<std::size_t>(10000 + 997 * w), static_cast<char>('a' + w));
      for (int r = 0; r < kRounds; ++r)
        if (!capsim::write_file_atomically(target, content).empty()) ++failures[w];
    });
  for (auto& t : writers) t.join();
  for (int w = 0; w < kWriters; ++w) CHECK(failures[w] == 0);
  const std::string result = read_file(target);
  REQUIRE(!result.empty());
  const int w = result.front() - 'a';
  CHECK(result == std::string(static_cast<std::size_t>(10000 + 997 * w), result.front()));
  CHECK(names_in(dir.path) == std::vector<std::string>{"c.pdf"});
}

TEST_CASE("bug 22.2: the temporary never follows a planted symlink") {
  ScratchDir dir("i22-symlink");
  const fs::path victim = dir.path / "victim";
  write_text(victim, "precious");
  // An attacker who guesses the old fixed name (<file>.tmp) or a pid-named one gains nothing:
  // mkstemp creates with O_EXCL and a random suffix.
  fs::create_symlink(victim, dir.path / "out.svg.tmp");
  fs::create_symlink(victim, dir.path / (".out.svg.tmp." + std::to_string(::getpid())));
  CHECK(capsim::write_file_atomically(dir.path / "out.svg", "<svg/>").empty());
  CHECK(read_file(victim) == "precious");
  CHECK(read_file(dir.path / "out.svg") == "<svg/>");
}

TEST_CASE("bug 22.2: a file in a missing directory is an environment failure naming the file") {
  ScratchDir dir("i22-missing-dir");
  const auto status = capsim::write_file_atomically(dir.path / "no" / "such" / "r.svg", "x");
  REQUIRE(status.size() == 1);
  CHECK(status.front().cause == capsim::Cause::environment);
  CHECK(status.front().message == "cannot create a temporary file beside it: No such file or directory");
}

namespace {

const fs::path kLora = capsim::testing::example_scenario("lora-7b-one-node");

// Runs a shell command line in `dir` (output to dir/.out and dir/.err); returns its exit code.
capsim::testing::CapsimRun run_shell(const fs::path& dir, const std::string& line) {
  const std::string cmd = "cd '" + dir.string() + "' && " + line + " > .out 2> .err < /dev/null";
  const int status = std::system(cmd.c_str());
  capsim::testing::CapsimRun r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(dir / ".out");
  r.err = read_file(dir / ".err");
  return r;
}

bool is_whole_pdf(const std::string& bytes) {
  return bytes.starts_with("%PDF-") && bytes.find("%%EOF", bytes.size() > 16 ? bytes.size() - 16 : 0) != std::string::npos;
}

}  // namespace

TEST_CASE("bug 22.2: report -o r.pdf and size --chart c.svg on a full disk exit 3 and keep the old file") {
  ScratchDir dir("i22-full-disk");
  REQUIRE(run_capsim(dir.path, "report '" + kLora.string() + "' -o r.pdf").exit_code == 0);
  REQUIRE(run_capsim(dir.path, "size '" + kLora.string() + "' --chart c.svg").exit_code == 0);
  const std::string pdf = read_file(dir.path / "r.pdf"), svg = read_file(dir.path / "c.svg");
  REQUIRE(is_whole_pdf(pdf));
  REQUIRE(svg.find("</svg>") != std::string::npos);
  // A file-size limit of 50 KB (dash counts 512-byte blocks) fails the 130 KB PDF part-way,
  // as a nearly full disk does; the read-only database needs no write.
  const std::string limited = "trap '' XFSZ; ulimit -f 100; CAPSIM_DB=capsim.db '" CAPSIM_BINARY "' ";
  auto r = run_shell(dir.path, "sh -c \"" + limited + "report '" + kLora.string() + "' -o r.pdf\"");
  CHECK(r.exit_code == 3);
  CHECK(r.err == "r.pdf: error: cannot write the file: File too large\n");
  CHECK(read_file(dir.path / "r.pdf") == pdf);
  // The SVG: 35 KB hold the database's 32 KB shared-memory index but not the 80 KB chart.
  const std::string tiny = "trap '' XFSZ; ulimit -f 70; CAPSIM_DB=capsim.db '" CAPSIM_BINARY "' ";
  r = run_shell(dir.path, "sh -c \"" + tiny + "size '" + kLora.string() + "' --chart c.svg\"");
  CHECK(r.exit_code == 3);
  CHECK(r.err == "c.svg: error: cannot write the file: File too large\n");
  CHECK(read_file(dir.path / "c.svg") == svg);
  for (const auto& name : names_in(dir.path)) {
    CHECK_MESSAGE(name.find(".tmp") == std::string::npos, name);
    // An I/O error while checking the database is reported, never taken for corruption.
    CHECK_MESSAGE(name.find(".corrupt-") == std::string::npos, name);
  }
}

TEST_CASE("bug 22.2: four concurrent report -o c.pdf leave one whole PDF") {
  ScratchDir dir("i22-concurrent-pdf");
  REQUIRE(run_capsim(dir.path, "report '" + kLora.string() + "' -o warm.pdf").exit_code == 0);
  std::string line;
  for (int i = 0; i < 4; ++i)
    line += "CAPSIM_DB=capsim.db '" CAPSIM_BINARY "' report '" + kLora.string() + "' -o c.pdf & ";
  auto r = run_shell(dir.path, "sh -c \"" + line + "wait\"");
  CHECK(r.exit_code == 0);
  CHECK(is_whole_pdf(read_file(dir.path / "c.pdf")));
  for (const auto& name : names_in(dir.path)) CHECK_MESSAGE(name.find(".tmp") == std::string::npos, name);
}

// ---- Defects 3, 4, 5: storage.

namespace {

// The test's own connection to a capsim database.
struct Sql {
  explicit Sql(const fs::path& path) {
    REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    sqlite3_busy_timeout(db, 10000);
  }
  ~Sql() { sqlite3_close(db); }
  Sql(const Sql&) = delete;
  Sql& operator=(const Sql&) = delete;
  void exec(const std::string& sql) {
    char* error = nullptr;
    const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
    const std::string message = error ? error : "";
    sqlite3_free(error);
    REQUIRE_MESSAGE(rc == SQLITE_OK, message);
  }
  std::string value(const std::string& sql) {
    sqlite3_stmt* s = nullptr;
    REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) == SQLITE_OK);
    std::string out;
    if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0) != nullptr)
      out = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
    return out;
  }
  sqlite3* db = nullptr;
};

// Overwrites page `page` (1-based) of the database file with zeros.
void zero_page(const fs::path& db, long page) {
  std::fstream f(db, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp((page - 1) * 4096);
  const std::string zeros(4096, '\0');
  f.write(zeros.data(), zeros.size());
}

// A database with the shipped catalog and 40 runs, checkpointed into the main file.
void make_history(const fs::path& dir) {
  REQUIRE(run_capsim(dir, "run '" + kLora.string() + "'").exit_code == 0);
  Sql sql(dir / "capsim.db");
  for (int i = 0; i < 39; ++i)
    sql.exec("INSERT INTO runs(started_at, scenario, scenario_resolved, catalog_hash, capsim_version, status, "
             "results_json, sweep) SELECT started_at, scenario, scenario_resolved, catalog_hash, capsim_version, "
             "status, results_json, sweep FROM runs WHERE id = 1;");
  sql.exec("PRAGMA wal_checkpoint(TRUNCATE);");
}

}  // namespace

TEST_CASE("bug 22.3: a zeroed page of the run history is an error naming the file, not 36 of 40 runs") {
  ScratchDir dir("i22-corrupt-history");
  make_history(dir.path);
  long page = 0;
  {
    Sql sql(dir.path / "capsim.db");
    REQUIRE(sql.value("SELECT COUNT(*) FROM runs;") == "40");
    page = std::stol(sql.value("SELECT rootpage FROM sqlite_master WHERE name = 'runs';"));
  }
  zero_page(dir.path / "capsim.db", page);
  const auto r = run_capsim(dir.path, "history list --limit 100");
  CHECK(r.exit_code == 3);
  CHECK(r.out.empty());
  CHECK(r.err.starts_with("capsim.db: error: the database is corrupt ("));
  CHECK(r.err.find("restore it from a backup") != std::string::npos);
  // The history cannot be rebuilt: the file is left as it is, for recovery.
  CHECK(fs::exists(dir.path / "capsim.db"));
}

TEST_CASE("bug 22.3: a zeroed page of the catalog cache is rebuilt from the YAML with a warning") {
  ScratchDir dir("i22-corrupt-catalog");
  REQUIRE(run_capsim(dir.path, "catalog list").exit_code == 0);
  const auto before = run_capsim(dir.path, "size '" + kLora.string() + "'");
  REQUIRE(before.exit_code == 0);
  long page = 0;
  {
    Sql sql(dir.path / "capsim.db");
    sql.exec("PRAGMA wal_checkpoint(TRUNCATE);");
    page = std::stol(sql.value("SELECT rootpage FROM sqlite_master WHERE name = 'entities';"));
  }
  zero_page(dir.path / "capsim.db", page);
  const auto r = run_capsim(dir.path, "size '" + kLora.string() + "'");
  CHECK(r.exit_code == 0);
  // Every node type is back, nothing blamed on the scenario (the search's wall time, the
  // one figure that differs between two runs, is left out of the comparison).
  const std::regex wall(" in [0-9.]+ s;");
  CHECK(std::regex_replace(r.out, wall, "") == std::regex_replace(before.out, wall, ""));
  CHECK(r.err.starts_with("capsim.db: warning: the database was corrupt ("));
  CHECK(r.err.find("; moved it to capsim.db.corrupt-") != std::string::npos);
  bool kept = false;
  for (const auto& name : names_in(dir.path)) kept = kept || name.starts_with("capsim.db.corrupt-");
  CHECK(kept);
}

TEST_CASE("bug 22.4: a database with a newer schema_version is refused and left untouched") {
  ScratchDir dir("i22-newer-schema");
  REQUIRE(run_capsim(dir.path, "catalog list").exit_code == 0);
  {
    Sql sql(dir.path / "capsim.db");
    sql.exec("UPDATE meta SET value = '99' WHERE key = 'schema_version';");
  }
  for (const std::string& command : {"size '" + kLora.string() + "'", "run '" + kLora.string() + "'", std::string("history list")}) {
    CAPTURE(command);
    const auto r = run_capsim(dir.path, command);
    CHECK(r.exit_code == 3);
    CHECK(r.err ==
          "capsim.db: error: the database has schema version 99, newer than this capsim understands (3); it was left "
          "untouched (use the capsim that wrote it, or another --db)\n");
  }
  Sql sql(dir.path / "capsim.db");
  CHECK(sql.value("SELECT value FROM meta WHERE key = 'schema_version';") == "99");
}

TEST_CASE("bug 22.5: the real SQLite message is reported (no ROLLBACK first) and exit code 3 means environment") {
  ScratchDir dir("i22-not-a-db");
  std::string text;
  for (int i = 0; i < 200; ++i) text += "this is not a database, it is a text file\n";
  write_text(dir.path / "capsim.db", text);
  const auto r = run_capsim(dir.path, "size '" + kLora.string() + "'");
  CHECK(r.exit_code == 3);
  CHECK(r.err == "capsim.db: error: cannot open the database: file is not a database\n");
  CHECK(read_file(dir.path / "capsim.db") == text);  // never moved aside or rewritten
}

TEST_CASE("bug 22.5: read-only commands open the database read-only: no write lock, no change to the file") {
  ScratchDir dir("i22-read-only");
  REQUIRE(run_capsim(dir.path, "run '" + kLora.string() + "'").exit_code == 0);
  {
    Sql sql(dir.path / "capsim.db");
    sql.exec("PRAGMA wal_checkpoint(TRUNCATE);");
  }
  const std::string before = read_file(dir.path / "capsim.db");
  Sql writer(dir.path / "capsim.db");
  writer.exec("BEGIN IMMEDIATE;");  // another process holds the write lock (or the disk is full)
  for (const std::string& command : {"size '" + kLora.string() + "'", "report '" + kLora.string() + "' -o r.md",
                                    std::string("history list"), std::string("catalog list gpus"),
                                    "validate '" + kLora.string() + "'"}) {
    CAPTURE(command);
    const auto r = run_capsim(dir.path, command, "capsim.db", 8);  // a write would wait 10 s for the lock
    CHECK(r.exit_code == 0);
    CHECK(r.err.empty());
  }
  writer.exec("ROLLBACK;");
  CHECK(read_file(dir.path / "capsim.db") == before);
}

// ---- Defect 1: a false pass on zero samples.

namespace {

// llama2-70b-chat-h100 with the arrival rate raised from 3 to 3000 req/s: 190 times its
// capacity, no request completes in the window.
std::string overloaded_llama() {
  std::string text = read_file(capsim::testing::example_scenario("llama2-70b-chat-h100"));
  const auto at = text.find("rate: 3}");
  REQUIRE(at != std::string::npos);
  return text.replace(at, 8, "rate: 3000}");
}

}  // namespace

TEST_CASE("bug 22.1: run --check at 190x capacity fails: TTFT/TPOT p99 of zero completed requests are not measured") {
  ScratchDir dir("i22-zero-samples");
  write_text(dir.path / "over.yaml", overloaded_llama());
  // Overloaded, the server still completes requests at its capacity (issue 15): the
  // latencies are measured, carry the queueing delay, and fail the bounds.
  const auto r = run_capsim(dir.path, "run --check --no-history over.yaml");
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("ok  ttft_p99") == std::string::npos);
  CHECK(r.out.find("FAIL  ttft_p99 = ") != std::string::npos);
  CHECK(r.out.find("FAIL  tpot_p99 = ") != std::string::npos);
  CHECK(r.out.find("SATURATED") != std::string::npos);
  CHECK(r.out.find(" 0 ms") == std::string::npos);
  // A window too short for any request to finish: nothing measured, nothing passes.
  std::string text = overloaded_llama();
  const auto sim = text.find("simulate: {duration: 300 s, warmup: 60 s, seed: 1}");
  REQUIRE(sim != std::string::npos);
  text.replace(sim, std::string("simulate: {duration: 300 s, warmup: 60 s, seed: 1}").size(),
               "simulate: {duration: 1 ms, warmup: 1 ms, seed: 1}");
  write_text(dir.path / "short.yaml", text);
  const auto shortrun = run_capsim(dir.path, "run --check --no-history short.yaml");
  CHECK(shortrun.exit_code == 1);
  CHECK(shortrun.out.find("ok  ttft_p99") == std::string::npos);
  CHECK(shortrun.out.find("FAIL  ttft_p99 was not measured by this run: no request completed in the simulated window "
                          "(0 samples) (ttft_p99 < 2 s)") != std::string::npos);
  CHECK(shortrun.out.find("time to first token p50 / p99    not measured (no request completed)") != std::string::npos);
  const auto json = run_capsim(dir.path, "run --check --no-history --format json short.yaml");
  CHECK(json.exit_code == 1);
  CHECK(json.out.find("\"ttft_p99\":{\"value\"") == std::string::npos);  // no measurement of nothing
}

TEST_CASE("bug 22.1: a training simulation that completes no sample is not measured, and its expectation fails") {
  ScratchDir dir("i22-zero-training");
  std::string text = read_file(capsim::testing::example_scenario("resnet50-1080ti-4vcpu"));
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"duration: 5 min", "duration: 2 ms"},
                                 {"warmup: 30 s", "warmup: 1 ms"}}) {
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
  }
  write_text(dir.path / "short.yaml", text);
  const auto r = run_capsim(dir.path, "run --check --no-history short.yaml");
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("ok  gpu_utilization") == std::string::npos);
  CHECK(r.out.find("FAIL  gpu_utilization was not measured by this run: no training sample completed in the "
                   "simulated window (0 samples)") != std::string::npos);
  const auto sim = run_capsim(dir.path, "simulate short.yaml");
  CHECK(sim.exit_code == 0);
  CHECK(sim.out.find("No training sample completed in the simulated window: lengthen simulate.duration.") !=
        std::string::npos);
  CHECK(sim.out.find("not measured (0 samples)") != std::string::npos);
  CHECK(sim.out.find("throughput (samples/s)  not measured (0 samples)") != std::string::npos);
  CHECK(sim.out.find("GPU utilization         not measured (0 samples)") != std::string::npos);
}

TEST_CASE("bug 22.1: an expectation on an unmeasured or non-finite metric fails, whatever its bound") {
  using namespace capsim::scenarios;
  auto e = parse_expectation("ttft_p99 < 2 s");
  REQUIRE(e.ok());
  CHECK_FALSE(statistic("ttft_p99", 0.0, capsim::dims::seconds, 0).has_value());
  CHECK(statistic("ttft_p99", 0.5, capsim::dims::seconds, 3).has_value());
  CHECK_FALSE(statistic("ttft_p99", std::nan(""), capsim::dims::seconds, 3).has_value());
  // Zero samples recorded as unmeasured: fails with the reason, even beside a stale 0 s value.
  const std::vector<Measurement> zero{{"ttft_p99", {0.0, capsim::dims::seconds, capsim::Currency::none}}};
  auto results = check_expectations({*e}, zero, {{"ttft_p99", "no request completed"}});
  REQUIRE(results.size() == 1);
  CHECK_FALSE(results[0].passed);
  CHECK(results[0].message == "ttft_p99 was not measured by this run: no request completed (ttft_p99 < 2 s)");
  // A NaN measurement never passes a comparison.
  const std::vector<Measurement> nan{{"ttft_p99", {std::nan(""), capsim::dims::seconds, capsim::Currency::none}}};
  CHECK_FALSE(check_expectations({*e}, nan)[0].passed);
}

// ---- Defect 6: temporary directories.

TEST_CASE("bug 22.6: run --sweep keeps its scratch files in a private directory it removes") {
  ScratchDir dir("i22-sweep-tmp");
  fs::create_directories(dir.path / "tmp");
  // A link where the old predictable name pointed would have sent O_TRUNC writes to the victim.
  write_text(dir.path / "victim", "precious");
  const auto with_tmpdir = run_shell(dir.path, "TMPDIR='" + (dir.path / "tmp").string() + "' CAPSIM_DB=capsim.db '" CAPSIM_BINARY
                                               "' run '" + kLora.string() + "' --sweep 'description=a,b' --jobs 2");
  CHECK(with_tmpdir.exit_code == 0);
  CHECK(with_tmpdir.out.find("Sweep description=a,b: 2 points") != std::string::npos);
  CHECK(names_in(dir.path / "tmp").empty());
  CHECK(read_file(dir.path / "victim") == "precious");
}

TEST_CASE("bug 22.6: a link planted at the old predictable sweep directory is neither followed nor reused") {
  ScratchDir dir("i22-sweep-link");
  fs::create_directories(dir.path / "tmp");
  write_text(dir.path / "victim", "precious");
  // The name the sweep used before (capsim-sweep-<pid>): $$ is capsim's pid after exec.
  const auto r = run_shell(dir.path, "ln -s ../victim tmp/capsim-sweep-$$ && ln -s ../victim tmp/capsim-sweep && "
                                     "TMPDIR='" + (dir.path / "tmp").string() + "' CAPSIM_DB=capsim.db exec '" CAPSIM_BINARY
                                     "' run '" + kLora.string() + "' --sweep 'description=a,b' --jobs 2");
  CHECK(r.exit_code == 0);
  CHECK(read_file(dir.path / "victim") == "precious");
  auto names = names_in(dir.path / "tmp");
  std::sort(names.begin(), names.end());
  REQUIRE(names.size() == 2);  // the two planted links, nothing of the sweep's left behind
  CHECK(names[0] == "capsim-sweep");
  CHECK(names[1].rfind("capsim-sweep-", 0) == 0);
  for (const auto& n : names) CHECK(fs::is_symlink(dir.path / "tmp" / n));
}

TEST_CASE("bug 22.6: create_private_file never follows a planted link or reuses a file, and temp dirs are unique and private") {
  ScratchDir dir("i22-private-file");
  write_text(dir.path / "victim", "precious");
  fs::create_symlink(dir.path / "victim", dir.path / "link");
  errno = 0;
  CHECK(capsim::create_private_file(dir.path / "link") == -1);
  CHECK(errno == EEXIST);
  CHECK(capsim::create_private_file(dir.path / "victim") == -1);
  CHECK(read_file(dir.path / "victim") == "precious");
  const int fd = capsim::create_private_file(dir.path / "new");
  REQUIRE(fd >= 0);
  ::close(fd);
  CHECK((fs::status(dir.path / "new").permissions() & fs::perms::all) == (fs::perms::owner_read | fs::perms::owner_write));

  const char* old_tmpdir = std::getenv("TMPDIR");
  const std::string saved = old_tmpdir ? old_tmpdir : "";
  ::setenv("TMPDIR", dir.path.c_str(), 1);
  {
    auto a = capsim::TemporaryDirectory::create("capsim-test");
    auto b = capsim::TemporaryDirectory::create("capsim-test");
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    CHECK(a->path() != b->path());
    CHECK(a->path().parent_path() == dir.path);
    CHECK((fs::status(a->path()).permissions() & fs::perms::all) == fs::perms::owner_all);
  }
  if (old_tmpdir) ::setenv("TMPDIR", saved.c_str(), 1);
  else ::unsetenv("TMPDIR");
  auto left = names_in(dir.path);
  std::sort(left.begin(), left.end());
  CHECK(left == std::vector<std::string>{"link", "new", "victim"});  // both directories removed
}

TEST_CASE("bug 22.6: a bad TMPDIR is a clear error (exit 3), not an uncaught filesystem_error (exit 134)") {
  ScratchDir dir("i22-bad-tmpdir");
  const auto r = run_shell(dir.path, "TMPDIR=/nonexistent/capsim CAPSIM_DB=capsim.db '" CAPSIM_BINARY "' run '" +
                                         kLora.string() + "' --sweep 'description=a,b'");
  CHECK(r.exit_code == 3);
  CHECK(r.err ==
        "/nonexistent/capsim: error: TMPDIR: is not an existing directory (set TMPDIR to a writable directory, or "
        "unset it to use /tmp)\n");
  const auto report = run_shell(dir.path, "TMPDIR=/nonexistent/capsim XDG_RUNTIME_DIR= CAPSIM_DB=capsim.db '" CAPSIM_BINARY
                                          "' report '" + kLora.string() + "' -o r.html");
  CHECK(report.exit_code == 0);
}

TEST_CASE("bug 22.6: SIGTERM during a sweep removes its temporary directory") {
  ScratchDir dir("i22-sweep-sigterm");
  fs::create_directories(dir.path / "tmp");
  REQUIRE(run_capsim(dir.path, "catalog list").exit_code == 0);  // the catalog cache is ready
  const std::string line = "(TMPDIR='" + (dir.path / "tmp").string() + "' CAPSIM_DB=capsim.db exec '" CAPSIM_BINARY
                           "' run '" + kLora.string() +
                           "' --sweep 'description=a,b,c,d,e,f,g,h,i,j,k,l' --jobs 1 > sweep.out 2>&1 & echo $! > pid; wait)";
  std::thread sweep([&] { run_shell(dir.path, line); });
  // Wait for the sweep's directory, then stop the sweep as a CI job's timeout would.
  bool seen = false;
  for (int i = 0; i < 400 && !seen; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    seen = !read_file(dir.path / "pid").empty() && !names_in(dir.path / "tmp").empty();
  }
  if (seen) ::kill(static_cast<pid_t>(std::stol(read_file(dir.path / "pid"))), SIGTERM);
  sweep.join();
  REQUIRE(seen);
  CHECK(names_in(dir.path / "tmp").empty());
}

// ---- Defect 10 (sweep manifest): shell arguments quoted, or better, no shell at all.

TEST_CASE("bug 22.10: the sweep manifest passes the command as argv - shell syntax and quotes stay literal") {
  ScratchDir dir("i22-manifest");
  // The scenario travels in the manifest (issue 21), so it must exist and load.
  fs::copy_file(kLora, dir.path / "s.yaml");
  const auto r = run_shell(dir.path, "CAPSIM_DB=capsim.db '" CAPSIM_BINARY "' sweep s.yaml --sweep \"description=a'\\$(touch /tmp/x)'b,c\" --shards 2");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("[sh, -c]") == std::string::npos);
  CHECK(r.out.find("command: [capsim]") != std::string::npos);
  // One argument, its '$' doubled so Kubernetes passes it literally; no shell ever sees it.
  CHECK(r.out.find("\n            - description=a'$$(touch /tmp/x)'b,c\n") != std::string::npos);
  CHECK(r.out.find("#   capsim history merge /results/shard-*.db --sweep 'description=a'\\''$(touch /tmp/x)'\\''b,c'") !=
        std::string::npos);
  const auto control = run_shell(dir.path, "CAPSIM_DB=capsim.db '" CAPSIM_BINARY "' sweep s.yaml --sweep \"$(printf 'description=a\\nb')\" --shards 2");
  CHECK(control.exit_code == 2);
  CHECK(control.err == "error: --sweep: must not contain control characters\n");
}

// ---- Defect 7: arrivals.trace reads any path and echoes it.

namespace {

std::string trace_scenario(const std::string& trace) {
  return "name: i\nworkload:\n  type: inference\n  precision: fp16\n  graph:\n"
         "    - {name: detector, model: horizontal-text-detection-0001}\n"
         "arrivals: {kind: trace, rate: 1, trace: " + trace + "}\nslo: {p99: 100 ms}\n"
         "deployment:\n  node: aws-g4dn-xlarge\n  stages:\n    - {replicas: 1, max_batch: 16, max_queue_delay: 2 ms}\n";
}

}  // namespace

TEST_CASE("bug 22.7: a trace path that leaves the scenario's directory through a symlink is refused, content not shown") {
  ScratchDir dir("i22-trace-link");
  fs::create_directories(dir.path / "outside");
  fs::create_directories(dir.path / "scenarios" / "traces");
  write_text(dir.path / "outside" / "secret.txt", "TOP-SECRET-LINE\n");
  fs::create_symlink(dir.path / "outside" / "secret.txt", dir.path / "scenarios" / "link.txt");
  write_text(dir.path / "scenarios" / "bad.yaml", trace_scenario("link.txt"));
  auto r = run_capsim(dir.path, "validate scenarios/bad.yaml");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("is outside the scenario's directory") != std::string::npos);
  CHECK(r.err.find("TOP-SECRET") == std::string::npos);
  // Beside the scenario, in a subdirectory, relative to the scenario (not the working
  // directory): read, and a bad line is named by number only.
  write_text(dir.path / "scenarios" / "traces" / "t.txt", "0.1\nTOP-SECRET-LINE\n");
  write_text(dir.path / "scenarios" / "ok.yaml", trace_scenario("traces/t.txt"));
  r = run_capsim(dir.path, "validate scenarios/ok.yaml");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("t.txt:2:1: error: arrivals.trace: line 2 is not a time in seconds") != std::string::npos);
  CHECK(r.err.find("TOP-SECRET") == std::string::npos);
  write_text(dir.path / "scenarios" / "traces" / "t.txt", "0.1\n0.2\n");
  CHECK(run_capsim(dir.path, "validate scenarios/ok.yaml").exit_code == 0);
  // The explicit opt-in reads a trusted outside file, but never a device such as /dev/zero.
  write_text(dir.path / "scenarios" / "zero.yaml", trace_scenario("/dev/zero"));
  r = run_shell(dir.path, "CAPSIM_ALLOW_TRACE_OUTSIDE=1 CAPSIM_DB=capsim.db '" CAPSIM_BINARY "' validate scenarios/zero.yaml");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("/dev/zero: is not a regular file") != std::string::npos);
}

// ---- Defect 10: control characters never reach XML raw.

TEST_CASE("bug 22.10: xml_escape writes control characters visibly, so JUnit XML stays well-formed") {
  CHECK(capsim::xml_escape(std::string("a\x1b[31mb\rc\0d<&>", 14)) == "a\\x1b[31mb&#13;c\\x00d&lt;&amp;&gt;");
  CHECK(capsim::xml_escape("line\ttab\nnext") == "line\ttab\nnext");
}

TEST_CASE("bug 22.10: a key with a newline or ESC cannot forge a line or colour the terminal in an error") {
  ScratchDir dir("i22-key-escape");
  std::string text = read_file(kLora);
  text += "\"k\\nci.yaml:1:1: ok everything passed\": 1\n\"bad\\e[31mkey\": 2\n";
  write_text(dir.path / "forge.yaml", text);
  const auto r = run_capsim(dir.path, "validate forge.yaml");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find('\x1b') == std::string::npos);
  CHECK(r.err.find("\nci.yaml:1:1: ok") == std::string::npos);  // no line starts with the forged text
  CHECK(r.err.find("unknown key 'k\\nci.yaml:1:1: ok everything passed' at the top level") != std::string::npos);
  CHECK(r.err.find("unknown key 'bad\\x1b[31mkey' at the top level") != std::string::npos);
  CHECK(capsim::printable(std::string("a\x1b[31mb\rc\0d\ne\tf\x7f", 16)) == "a\\x1b[31mb\\rc\\x00d\\ne\tf\\x7f");
  capsim::Diagnostic d{{"f\n.yaml", 1, 2}, "k\x1b", "m\r", "h\n"};
  CHECK(capsim::format_diagnostic(d) == "f\\n.yaml:1:2: error: k\\x1b: m\\r (h\\n)");
}

// ---- Defect 8: unbounded work.

TEST_CASE("bug 22.8: --set with a 60,000-part key is refused, not a stack overflow") {
  ScratchDir dir("i22-set-depth");
  std::string key = "a";
  for (int i = 1; i < 60000; ++i) key += ".a";
  write_text(dir.path / "key.txt", "--set " + key + "=1");
  const auto r = run_shell(dir.path, "CAPSIM_DB=capsim.db '" CAPSIM_BINARY "' run '" + kLora.string() + "' $(cat key.txt)");
  CHECK(r.exit_code == 2);
  CHECK(r.err == "error: --set: the key has 60000 parts, more than the limit of 32 (e.g. --set hardware.max_gpus=1024)\n");
}

TEST_CASE("bug 22.8: a sweep on a terminal shows its progress and an estimate of the time left, a log gets none") {
  ScratchDir dir("i22-sweep-progress");
  const std::string sweep = "CAPSIM_DB=capsim.db '" CAPSIM_BINARY "' run '" + kLora.string() +
                            "' --sweep 'description=a,b,c' --jobs 1";
  // `script` runs it on a pseudo-terminal, as a person at a shell would.
  const auto tty = run_shell(dir.path, "script -qec \"" + sweep + "\" typescript");
  CHECK(tty.exit_code == 0);
  const std::string screen = read_file(dir.path / "typescript");
  CHECK(screen.find("sweep: 1 of 3 points in ") != std::string::npos);
  CHECK(screen.find("sweep: 3 of 3 points in ") != std::string::npos);
  CHECK(screen.find(" s left") != std::string::npos);
  const auto log = run_shell(dir.path, sweep);
  CHECK(log.exit_code == 0);
  CHECK(log.err.empty());
  CHECK(log.out.find("Sweep description=a,b,c: 3 points") != std::string::npos);
}

TEST_CASE("bug 22.8: history diff of two 50,000-line scenarios answers in bounded memory") {
  ScratchDir dir("i22-history-diff");
  std::string comments;
  for (int i = 0; i < 50000; ++i) comments += "# line " + std::to_string(i) + "\n";
  const std::string base = read_file(kLora);
  write_text(dir.path / "a.yaml", base + comments);
  write_text(dir.path / "b.yaml", base + comments + "# one more\n");
  REQUIRE(run_capsim(dir.path, "run a.yaml").exit_code == 0);
  REQUIRE(run_capsim(dir.path, "run b.yaml").exit_code == 0);
  const auto r = run_capsim(dir.path, "history diff 1 2");  // under the 4 GB limit of run_capsim
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("lines: too long to compare line by line (the limit is 4000000 line pairs); they differ") !=
        std::string::npos);
}
