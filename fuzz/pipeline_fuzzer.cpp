// Fuzzes the whole pipeline, not only the loader (issue 22): a scenario that loads is run
// end to end (sizing, simulation, cost, expectations) and its outputs built. Aborts when a
// measurement is not finite, when the JSON result does not parse, when an expectation passes
// on a metric that was not measured, or when a control character reaches the text or XML.
// Each run is cut off after two seconds of work through the progress observer, so slow
// inputs are explored, not reported as timeouts.
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>

#include "capsim/core/progress.hpp"
#include "capsim/hardware/loader.hpp"
#include "capsim/scenarios/runner.hpp"
#include "capsim/scenarios/scenario.hpp"

namespace {

const capsim::hardware::Catalog& shipped_catalog() {
  static const capsim::hardware::Catalog catalog = [] {
    auto loaded = capsim::hardware::load_catalog_dir(CAPSIM_FUZZ_DATA_DIR "/catalog");
    if (!loaded) {
      std::cerr << capsim::format_diagnostics(loaded.errors());
      std::abort();
    }
    return std::move(loaded).value();
  }();
  return catalog;
}

class Deadline : public capsim::ProgressObserver {
 public:
  void progress(double, std::string_view) override {}
  bool cancelled() const override { return std::chrono::steady_clock::now() > end_; }

 private:
  std::chrono::steady_clock::time_point end_ = std::chrono::steady_clock::now() + std::chrono::seconds(2);
};

void fail(const char* what, const std::string& detail) {
  std::cerr << "pipeline invariant broken: " << what << ": " << detail << "\n";
  std::abort();
}

bool has_control_character(const std::string& text) {
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\n' && c != '\t') || u == 0x7f) return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 64 * 1024) return 0;  // real scenarios are a few KB
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto scenario = capsim::scenarios::load_scenario("fuzz.yaml", text, shipped_catalog());
  if (!scenario.ok()) {
    if (scenario.errors().empty()) std::abort();
    return 0;
  }
  Deadline deadline;
  auto run = capsim::scenarios::run_scenario(*scenario, shipped_catalog(), &deadline);
  if (!run.ok()) {
    if (run.errors().empty()) std::abort();
    return 0;
  }
  for (const auto& m : run->measurements)
    if (!std::isfinite(m.value.value_si)) fail("a measurement is not finite", m.metric);
  for (const auto& e : run->expectations)
    if (e.passed && !e.measured) fail("an expectation passed on an unmeasured metric", e.expectation.text);
  const std::string json = capsim::scenarios::run_json(*run);
  if (!nlohmann::json::accept(json)) fail("run_json is not JSON", json.substr(0, 200));
  const std::string summary = capsim::scenarios::run_summary_text(*run);
  if (has_control_character(summary)) fail("a control character in the summary", summary.substr(0, 200));
  const std::string xml = capsim::scenarios::junit_xml(*run);
  if (has_control_character(xml)) fail("a control character in the JUnit XML", xml.substr(0, 200));
  return 0;
}
