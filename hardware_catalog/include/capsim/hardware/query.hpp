// Filtering and sorting catalog entries, as `capsim catalog list` and the GUI's catalog
// browser do: `memory>=40 GB`, `vendor=nvidia`, `price.on_demand<5 USD/h`.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "capsim/core/result.hpp"
#include "capsim/hardware/catalog.hpp"

namespace capsim::hardware {

enum class CompareOp { eq, ne, lt, le, gt, ge };

struct Filter {
  std::string field;
  CompareOp op = CompareOp::eq;
  std::string text;    // for text fields (compared case-insensitively)
  double number = 0;   // for quantity and integer fields, in SI units
  Currency currency = Currency::none;  // a price's currency ("5 USD/h")
  bool numeric = false;
};

// Parses "FIELD OP VALUE" against the schema of `kind`. The value of a quantity field is
// read with its unit ("40 GB"); an unknown field gets a "did you mean".
Result<Filter> parse_filter(EntityKind kind, std::string_view expression);

// True when the entity has the field and the comparison holds.
bool matches(const Entity& entity, const Filter& filter);

struct Query {
  std::vector<Filter> filters;
  std::string sort_by;  // field name; "" keeps catalog order
  bool descending = false;
};

// US dollars per unit of `currency`: 1 for USD (and none), else the catalog's exchange rate
// with the newest as_of; nullopt when the catalog has none.
std::optional<double> usd_per_unit(const Catalog& catalog, Currency currency);

// Entries of `kind` that pass every filter, sorted; entries without the sort field last.
// Prices (money-valued fields) are compared and sorted in US dollars (usd_per_unit); a price
// in a currency without a rate sorts last and matches no price filter.
Result<std::vector<const Entity*>> run_query(const Catalog& catalog, EntityKind kind, const Query& query);

}  // namespace capsim::hardware
