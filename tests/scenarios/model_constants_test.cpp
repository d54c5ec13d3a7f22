// Issue 48: the registry of the models' empirical constants and docs/model-constants.md.
#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "capsim/hardware/loader.hpp"
#include "capsim/models/constants.hpp"
#include "capsim/models/performance.hpp"
#include "capsim/scenarios/accuracy.hpp"
#include "capsim/scenarios/model_constants.hpp"

using namespace capsim;

namespace {
std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> split_cells(const std::string& line) {
  std::vector<std::string> cells;
  std::string cur;
  for (std::size_t i = 1; i < line.size(); ++i) {  // skip the leading '|'
    if (line[i] == '|') {
      cells.push_back(cur.substr(cur.find_first_not_of(' ') == std::string::npos ? 0 : cur.find_first_not_of(' ')));
      while (!cells.back().empty() && cells.back().back() == ' ') cells.back().pop_back();
      cur.clear();
    } else {
      cur += line[i];
    }
  }
  return cells;
}

// The sensitivities as docs/model-constants.md states them.
scenarios::ConstantSensitivities parse_doc(const std::string& md) {
  scenarios::ConstantSensitivities s;
  const auto at = md.find("validation corpus (");
  REQUIRE(at != std::string::npos);
  std::istringstream head(md.substr(at + 19));
  head >> s.dev_rows;
  const auto semi = md.find("first-look; ", at);
  REQUIRE(semi != std::string::npos);
  s.baseline_dev_mean = std::stod(md.substr(semi + 12));
  std::istringstream lines(md);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("| `", 0) != 0) continue;
    const auto cells = split_cells(line);
    REQUIRE(cells.size() == 7);
    const std::string name = cells[0].substr(1, cells[0].size() - 2);
    if (cells[5] == "not computed") continue;
    scenarios::ConstantSensitivity one;
    one.minus10 = std::stod(cells[5]);
    one.plus10 = std::stod(cells[5].substr(cells[5].find('/') + 1));
    s.by_name.emplace(name, one);
  }
  return s;
}

// Every row id of the shipped corpus with its fit flag (Megatron's Table 1 rows are all fit).
std::map<std::string, bool> corpus_fit_flags() {
  std::map<std::string, bool> fit;
  const std::filesystem::path dir = CAPSIM_TEST_DATA_DIR "/validation";
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml" || entry.path().filename() == scenarios::kFirstLooksFile) continue;
    const YAML::Node doc = YAML::LoadFile(entry.path().string());
    if (!doc.IsMap() || !doc["rows"]) continue;
    const bool sc21 = entry.path().filename() == "megatron_sc21_table1.yaml";
    for (const auto& r : doc["rows"]) {
      if (sc21) {
        fit["megatron-sc21-t1-" + r["params_b"].as<std::string>() + "b"] = true;
      } else if (r["id"]) {
        fit[r["id"].as<std::string>()] = r["fit"] && r["fit"].as<bool>();
      }
    }
  }
  return fit;
}
}  // namespace

TEST_CASE("model constants: the models read the registry, and a scaled constant is restored") {
  using models::ConstantId;
  CHECK(models::model_constants().size() == models::kModelConstantCount);
  CHECK(models::kOverlapComputeSlowdown() == 0.2);
  CHECK(models::flash_hopper_fa2().forward == 0.35);
  {
    const models::ScopedConstantScale up(ConstantId::overlap_compute_slowdown, 1.1);
    CHECK(models::kOverlapComputeSlowdown() == doctest::Approx(0.22));  // the name the model reads moved
    CHECK(models::constant(ConstantId::overlap_compute_slowdown) == doctest::Approx(0.22));
    const models::ScopedConstantScale fa(ConstantId::flash_hopper_fa2_forward, 0.9);
    CHECK(models::flash_hopper_fa2().forward == doctest::Approx(0.315));
  }
  CHECK(models::kOverlapComputeSlowdown() == 0.2);
  CHECK(models::flash_hopper_fa2().forward == 0.35);
}

TEST_CASE("model constants: every fit basis names rows that exist and are marked fit: true") {
  const auto fit = corpus_fit_flags();
  REQUIRE(fit.size() > 700);
  int fit_constants = 0;
  for (const auto& c : models::model_constants()) {
    INFO(c.name);
    CHECK_FALSE(c.unit.empty());
    CHECK_FALSE(c.basis_text.empty());
    if (c.basis != models::ConstantBasis::fit) {
      CHECK(c.fit_rows.empty());
      if (c.basis == models::ConstantBasis::undeclared) CHECK(c.basis_text.rfind("undeclared: no fit rows", 0) == 0);
      continue;
    }
    ++fit_constants;
    std::istringstream ids{std::string(c.fit_rows)};
    int named = 0;
    for (std::string id; ids >> id; ++named) {
      INFO(id);
      REQUIRE(fit.count(id) == 1);
      CHECK(fit.at(id));
    }
    CHECK(named >= 1);
  }
  CHECK(fit_constants >= 10);
}

TEST_CASE("model constants: docs/model-constants.md is current") {
  const std::filesystem::path doc = CAPSIM_TEST_SOURCE_DIR "/../docs/model-constants.md";
  const std::string md = read_text(doc);
  REQUIRE_MESSAGE(!md.empty(), "regenerate: ./build/cli/capsim accuracy --constants > docs/model-constants.md");
  const auto stated = parse_doc(md);
  // Value, unit, basis and every constant listed: the table regenerated from the registry
  // with the doc's own sensitivities is the doc.
  CHECK_MESSAGE(scenarios::model_constants_markdown(stated) == md,
                "regenerate: ./build/cli/capsim accuracy --constants > docs/model-constants.md");
  CHECK(stated.by_name.size() == models::kModelConstantCount);  // every sensitivity computed
  // The sensitivities were computed at today's models: the corpus's dev mean is the one stated.
  auto catalog = hardware::load_catalog_dir(CAPSIM_TEST_DATA_DIR "/catalog");
  REQUIRE(catalog.ok());
  auto report = scenarios::run_accuracy(*catalog, CAPSIM_TEST_DATA_DIR "/validation");
  REQUIRE(report.ok());
  CHECK(report->overall.dev == stated.dev_rows);
  CHECK(report->overall.dev_mean_abs == doctest::Approx(stated.baseline_dev_mean).epsilon(0.0001).scale(100));
}

TEST_CASE("model constants: the markdown names every constant with its value and basis") {
  scenarios::ConstantSensitivities s;
  s.dev_rows = 3;
  s.baseline_dev_mean = 7.5;
  s.by_name["kOverlapComputeSlowdown"] = {-0.125, 0.25};
  const std::string md = scenarios::model_constants_markdown(s);
  CHECK(md.find("(3 dev rows") != std::string::npos);
  CHECK(md.find("| `kOverlapComputeSlowdown` | 0.2 | fraction of the hidden collective's time | undeclared | "
                "undeclared: no fit rows.") != std::string::npos);
  CHECK(md.find("| -0.12 / +0.25 |") != std::string::npos);
  CHECK(md.find("| `kGemmMaxEfficiencyHopper` | 0.57 |") != std::string::npos);
  CHECK(md.find("not computed") != std::string::npos);  // the others
  for (const auto& c : models::model_constants()) CHECK(md.find("| `" + std::string(c.name) + "` |") != std::string::npos);
}
