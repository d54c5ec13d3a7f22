// Golden outputs of every shipped example (issue 22: 9 of 15 had none): the whole run as
// `capsim run --format json` gives it (sizing, simulations, cost, expectations), so any
// change to any prediction shows up in a diff. A new example without a golden fails too.
// After an intended change, CAPSIM_UPDATE_GOLDEN=1 rewrites them; review the diff.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "capsim/scenarios/runner.hpp"
#include "capsim/scenarios/scenario.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;

namespace {

// The run without what differs between runs and builds: the time it started, wall-clock
// seconds, capsim's version and the catalog's content hash (the catalog's numbers themselves
// do show, through every result that uses them).
std::string normalized(const std::string& run_json) {
  auto j = nlohmann::json::parse(run_json);
  j.erase("started_at");
  j.erase("capsim_version");
  j.erase("catalog_hash");
  auto flat = j.flatten();
  for (auto it = flat.begin(); it != flat.end();) {
    if (it.key().ends_with("wall_seconds")) {
      it = flat.erase(it);
      continue;
    }
    // Where the checkout lives is not part of the result: keep the file's name only.
    if (it.key().ends_with("/file") && it->is_string())
      *it = fs::path(it->get<std::string>()).filename().string();
    ++it;
  }
  return flat.unflatten().dump(2) + "\n";
}

// The summary text without where the checkout lives and the wall-clock times.
std::string normalized_text(std::string text, const fs::path& file) {
  for (const std::string& dir : {file.parent_path().string() + "/", file.parent_path().lexically_normal().string()})
    for (auto at = text.find(dir); !dir.empty() && at != std::string::npos; at = text.find(dir))
      text.erase(at, dir.size());
  static const std::regex wall(R"( in [0-9.]+ s([;.,)]))");
  return std::regex_replace(text, wall, " in (wall time) s$1");
}

}  // namespace

TEST_CASE("golden: every shipped example's whole run") {
  const fs::path examples = fs::path(CAPSIM_TEST_SOURCE_DIR) / ".." / "scenarios" / "examples";
  const fs::path goldens = fs::path(CAPSIM_TEST_SOURCE_DIR) / "reliability" / "golden";
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(examples))
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 15);
  for (const auto& file : files) {
    const std::string name = file.stem().string();
    CAPTURE(name);
    auto scenario = capsim::scenarios::load_scenario_file(file, capsim::testing::shipped_catalog());
    REQUIRE_MESSAGE(scenario.ok(), capsim::format_diagnostics(scenario.errors()));
    auto run = capsim::scenarios::run_scenario(*scenario, capsim::testing::shipped_catalog());
    REQUIRE_MESSAGE(run.ok(), capsim::format_diagnostics(run.errors()));
    const std::string actual = normalized(capsim::scenarios::run_json(*run));
    const fs::path path = goldens / (name + ".run.json");
    if (std::getenv("CAPSIM_UPDATE_GOLDEN")) std::ofstream(path, std::ios::binary) << actual;
    REQUIRE_MESSAGE(fs::exists(path), "no golden for " << name << " (CAPSIM_UPDATE_GOLDEN=1 writes it)");
    CHECK(capsim::testing::read_file(path) == actual);
    // And the text a person reads (capsim run's summary), so a wording or rounding change
    // that leaves the numbers alone shows up too.
    const std::string text = normalized_text(capsim::scenarios::run_summary_text(*run), file);
    const fs::path text_path = goldens / (name + ".run.txt");
    if (std::getenv("CAPSIM_UPDATE_GOLDEN")) std::ofstream(text_path, std::ios::binary) << text;
    REQUIRE_MESSAGE(fs::exists(text_path), "no text golden for " << name << " (CAPSIM_UPDATE_GOLDEN=1 writes it)");
    CHECK(capsim::testing::read_file(text_path) == text);
  }
}
