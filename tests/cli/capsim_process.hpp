// Runs the capsim binary as a user would: a shell command with its own database, stdout and
// stderr captured. Shared by the CLI test files.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace cli_testing {

struct Run {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// A directory for this test process, removed at exit, pass or fail.
inline std::filesystem::path scratch() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("capsim-cli-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    static const struct Remove {
      std::filesystem::path dir;
      ~Remove() {
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
      }
    } remove{d};
    return d;
  }();
  return dir;
}

inline std::string read(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs `capsim ARGS` with its own database; `args` is shell text.
inline Run capsim(const std::string& args, const std::string& db = "cli.db") {
  const auto out = scratch() / "stdout";
  const auto err = scratch() / "stderr";
  const std::string cmd = "CAPSIM_DB='" + (scratch() / db).string() + "' '" CAPSIM_BINARY "' " + args + " > '" +
                          out.string() + "' 2> '" + err.string() + "' < /dev/null";
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read(out), read(err)};
}

}  // namespace cli_testing
