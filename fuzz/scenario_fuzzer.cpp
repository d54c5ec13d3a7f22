// Fuzzes the scenario loaders (single-workload and cluster scenarios read the same YAML
// text) against the shipped catalog (loaded once).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>

#include "capsim/hardware/loader.hpp"
#include "capsim/scenarios/cluster.hpp"
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto scenario = capsim::scenarios::load_scenario("fuzz.yaml", text, shipped_catalog());
  if (!scenario.ok() && scenario.errors().empty()) std::abort();
  auto cluster = capsim::scenarios::load_cluster("fuzz.yaml", text, shipped_catalog());
  if (!cluster.ok() && cluster.errors().empty()) std::abort();
  return 0;
}
