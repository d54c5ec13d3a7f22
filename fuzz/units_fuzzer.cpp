// Fuzzes the unit parser: parse_quantity and parse_count must return a value or a
// diagnostic for any text, never crash, and a parsed quantity must print and read back as
// the same dimension.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "capsim/core/units.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto q = capsim::parse_quantity(text)) {
    if (!std::isfinite(q->value_si)) std::abort();  // the contract: no NaN, no infinity
    // to_string must read back as the same dimension. Its 4 significant digits may round a
    // value within 0.05 % of the largest double up past it, so those are left out.
    const std::string printed = capsim::to_string(*q);
    auto again = capsim::parse_quantity(printed);
    if (std::fabs(q->value_si) < 1e300 && (!again || !(again->dim == q->dim))) std::abort();
    (void)capsim::to_string_in(*q, "GB");
  } else if (q.errors().empty()) {
    std::abort();
  }
  if (auto n = capsim::parse_count(text)) {
    if (!std::isfinite(*n)) std::abort();
  }
  return 0;
}
