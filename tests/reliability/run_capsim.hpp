// Running the capsim binary as a user would, in a directory of its own, under a time and
// memory limit (`timeout`, `ulimit -v`, or the sanitizer's RSS limit), for the reliability tests.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "support/test_support.hpp"

namespace capsim::testing {

struct CapsimRun {
  int exit_code = -1;   // 124: killed by the time limit
  std::string out;
  std::string err;
  double seconds = 0;
};

inline constexpr int kTimeLimitSeconds = 20;
inline constexpr long kMemoryLimitKb = 4'000'000;

// The memory limit as a shell prefix. AddressSanitizer reserves terabytes of address space
// for its shadow memory, so under it (the sanitizer build compiles these tests and capsim
// alike) the limit is on resident memory through the sanitizer's own watchdog instead.
inline std::string memory_limit_prefix() {
#if defined(__SANITIZE_ADDRESS__)
  const char* existing = std::getenv("ASAN_OPTIONS");
  return "export ASAN_OPTIONS='" + std::string(existing != nullptr ? std::string(existing) + ":" : "") +
         "hard_rss_limit_mb=" + std::to_string(kMemoryLimitKb / 1000) + "' && ";
#else
  return "ulimit -v " + std::to_string(kMemoryLimitKb) + " && ";
#endif
}

// Runs `capsim ARGS` (shell text) with `dir` as the working directory and `db` as
// $CAPSIM_DB (relative to dir unless absolute).
inline CapsimRun run_capsim(const std::filesystem::path& dir, const std::string& args,
                            const std::string& db = "capsim.db", int time_limit = kTimeLimitSeconds) {
  const auto out = dir / ".stdout";
  const auto err = dir / ".stderr";
  const std::string cmd = "cd '" + dir.string() + "' && " + memory_limit_prefix() + "CAPSIM_DB='" + db + "' timeout -s KILL " + std::to_string(time_limit) + " '" CAPSIM_BINARY
                          "' " + args + " > '" + out.string() + "' 2> '" + err.string() + "' < /dev/null";
  const auto start = std::chrono::steady_clock::now();
  const int status = std::system(cmd.c_str());
  CapsimRun r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (r.exit_code == 137) r.exit_code = 124;  // timeout -s KILL reports 128 + 9
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

}  // namespace capsim::testing
