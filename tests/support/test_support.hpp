// Helpers shared by the test binaries: the shipped catalog, files, scratch directories.
#pragma once

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "capsim/hardware/loader.hpp"

namespace capsim::testing {

// The catalog shipped in data/catalog, loaded once per test binary.
inline const hardware::Catalog& shipped_catalog() {
  static const hardware::Catalog catalog = [] {
    auto loaded = hardware::load_catalog_dir(CAPSIM_TEST_DATA_DIR "/catalog");
    if (!loaded.ok()) FAIL(format_diagnostics(loaded.errors()));
    return std::move(loaded).value();
  }();
  return catalog;
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Removes, when the test process exits (pass or fail), the directories handed to it:
// a test run leaves nothing under /tmp (issue 22: each run used to leave ~33 capsim-*).
inline void remove_at_exit(const std::filesystem::path& dir) {
  struct Registry {
    std::vector<std::filesystem::path> dirs;
    ~Registry() {
      for (const auto& d : dirs) {
        std::error_code ec;
        std::filesystem::remove_all(d, ec);
      }
    }
  };
  static Registry registry;
  for (const auto& d : registry.dirs)
    if (d == dir) return;
  registry.dirs.push_back(dir);
}

// A directory of this test process under the system temp directory, removed at exit.
inline std::filesystem::path scratch_dir(const std::string& suite) {
  const auto dir = std::filesystem::temp_directory_path() / ("capsim-" + suite + "-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  remove_at_exit(dir);
  return dir;
}

// The path of a shipped example scenario.
inline std::filesystem::path example_scenario(const std::string& name) {
  return std::filesystem::path(CAPSIM_TEST_SOURCE_DIR) / ".." / "scenarios" / "examples" / (name + ".yaml");
}

// The path of a shipped cluster scenario (scenarios/clusters).
inline std::filesystem::path cluster_scenario(const std::string& name) {
  return std::filesystem::path(CAPSIM_TEST_SOURCE_DIR) / ".." / "scenarios" / "clusters" / (name + ".yaml");
}

}  // namespace capsim::testing
