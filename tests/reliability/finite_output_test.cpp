// No NaN or infinity in any output (issue 10): every shipped scenario through `capsim run`,
// `size`, `simulate` and `cost` (where the scenario has what the command needs) with
// --format json; every number must be finite and no string may spell NaN or infinity
// ("nan", "inf GB", "-Infinity"). nlohmann::json refuses NaN/Infinity tokens when parsing,
// so a writer that let one through fails the parse.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "capsim/scenarios/scenario.hpp"
#include "reliability/run_capsim.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;

namespace {

// Paths of the values that are not finite numbers or that spell NaN/infinity in text.
void find_non_finite(const nlohmann::json& j, const std::string& path, std::vector<std::string>& bad) {
  static const std::regex spelled(R"((^|[^A-Za-z])(nan|inf|infinity)([^A-Za-z]|$))", std::regex::icase);
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) find_non_finite(value, path + "." + key, bad);
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) find_non_finite(j[i], path + "[" + std::to_string(i) + "]", bad);
  } else if (j.is_number_float()) {
    if (!std::isfinite(j.get<double>())) bad.push_back(path);
  } else if (j.is_string()) {
    if (std::regex_search(j.get<std::string>(), spelled)) bad.push_back(path + " = " + j.get<std::string>());
  }
}

// The commands a scenario supports, from what it holds.
std::vector<std::string> commands_for(const capsim::scenarios::Scenario& s) {
  std::vector<std::string> out{"run --no-history"};
  const bool serving = s.inference.has_value();
  if ((serving && !s.hardware.gpus.empty()) || (!serving && !s.training.service)) out.emplace_back("size");
  if ((serving && !s.inference->node.empty()) || (!serving && s.simulate)) out.emplace_back("simulate");
  if (s.cost) out.emplace_back("cost");
  return out;
}

}  // namespace

TEST_CASE("no NaN or infinity in the JSON of any shipped scenario, through every command") {
  const fs::path dir = capsim::testing::scratch_dir("finite-output");
  const fs::path examples = capsim::testing::example_scenario("x").parent_path();
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(examples)) {
    if (entry.path().extension() != ".yaml") continue;
    auto scenario = capsim::scenarios::load_scenario_file(entry.path(), capsim::testing::shipped_catalog());
    REQUIRE_MESSAGE(scenario.ok(), capsim::format_diagnostics(scenario.errors()));
    for (const auto& command : commands_for(*scenario)) {
      CAPTURE(entry.path().filename().string());
      CAPTURE(command);
      const auto run = capsim::testing::run_capsim(dir, command + " --format json '" + entry.path().string() + "'",
                                                   "finite.db");
      CAPTURE(run.err);
      REQUIRE(run.exit_code == 0);
      nlohmann::json j;
      REQUIRE_NOTHROW(j = nlohmann::json::parse(run.out));
      std::vector<std::string> bad;
      find_non_finite(j, "$", bad);
      CHECK_MESSAGE(bad.empty(), "not finite: " << (bad.empty() ? "" : bad.front()) << " (" << bad.size() << " in all)");
      ++checked;
    }
  }
  CHECK(checked >= 30);
  fs::remove_all(dir);
}
