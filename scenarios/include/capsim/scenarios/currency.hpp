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

// Converts every node type's price to USD in place. Returns one note per currency converted
// ("1 EUR = 1.0411 USD: <source>"); a price whose currency has no rate is dropped, with a note.
// per_type, when given, receives each node type's note (empty for a USD price or none).
std::vector<std::string> prices_in_usd(std::vector<models::NodeType>& types, const hardware::Catalog& catalog,
                                       const Scenario& s, std::vector<std::string>* per_type = nullptr);

}  // namespace capsim::scenarios
