#pragma once

#include <optional>
#include <string>
#include <vector>

#include "capsim/hardware/catalog.hpp"
#include "capsim/models/search.hpp"
#include "capsim/scenarios/scenario.hpp"

namespace capsim::scenarios {

// A plan speaks one currency, the US dollar: every price in another currency is converted
// once, at a stated rate, before anything is ranked or added up.
struct UsdRate {
  double usd_per_unit = 1;
  std::string source;  // where the rate comes from, for the plan's conversions note
};

// The scenario's cost.exchange_rates first, else the catalog's newest dated rate.
std::optional<UsdRate> usd_rate(const hardware::Catalog& catalog, const Scenario& s, Currency currency);

// Converts every node type's price to USD in place. Returns each node type's note, in the
// same order: "1 EUR = 1.0411 USD (<source>)", or that a currency has no rate and its price
// was dropped; empty for a USD price or none. A plan keeps the notes of the node types its
// comparison used (add_conversion).
std::vector<std::string> prices_in_usd(std::vector<models::NodeType>& types, const hardware::Catalog& catalog,
                                       const Scenario& s);
// Appends a node type's note to a plan's conversions unless it is empty or already there.
void add_conversion(std::vector<std::string>& conversions, const std::string& note);

}  // namespace capsim::scenarios
