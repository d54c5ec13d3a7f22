// Issue 22: never a false pass, never a lost or poisoned file. One regression test per
// numbered defect, named after it; each reproduces the defect and pins the right behaviour.
#include <doctest/doctest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "capsim/core/files.hpp"
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
