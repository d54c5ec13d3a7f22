// Fuzzes the catalog loader on one YAML document: any text gives a catalog or diagnostics.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "capsim/hardware/loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto catalog = capsim::hardware::load_catalog({{"fuzz.yaml", std::move(text)}});
  if (!catalog.ok() && catalog.errors().empty()) std::abort();
  return 0;
}
