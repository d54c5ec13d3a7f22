// Fuzzes the calibration-profile importer: parse and validate any text, and reduce a
// profile that validates to the figures the models use.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "capsim/hardware/calibration.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto profile = capsim::hardware::parse_calibration_profile(text, "fuzz.json");
  if (profile) {
    (void)capsim::hardware::measured_figures(*profile);
  } else if (profile.errors().empty()) {
    std::abort();
  }
  return 0;
}
