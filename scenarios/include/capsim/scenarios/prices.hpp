// The prices a plan used, each with its date, where it came from (the shipped catalog or the
// user's own quote in an overlay), and whether it is older than the plan's price-age limit.
// Every plan, cost and report output lists them (PlanFigures::prices); `capsim catalog check`
// lists the catalog's prices past the limit.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "capsim/core/result.hpp"
#include "capsim/hardware/catalog.hpp"

namespace capsim::scenarios {

struct Scenario;

// How old a price may be before a plan warns about it.
struct PriceAgePolicy {
  double max_months = 12;     // --max-price-age; a price older than this is stale
  std::string max_text = "12mo";  // as the user wrote it, for the warning
  // The date ages are measured from, YYYY-MM-DD. Empty: $CAPSIM_TODAY when set (reproducible
  // outputs: the tests set it), else today's UTC date.
  std::string today;
};

// "12mo", "18 months", "1y", "2 years", "90d", "26w" -> months (a month is 1/12 year,
// a day 12/365.25 of one). An error (with the forms it takes) for anything else or <= 0.
Result<double> parse_price_age(std::string_view text);

// The policy for --max-price-age TEXT (today left to the default).
Result<PriceAgePolicy> price_age_policy(std::string_view max_age);

// $CAPSIM_TODAY when set, else today's date in UTC, as YYYY-MM-DD.
std::string today_utc();

// Whole-and-fractional months from `as_of` (YYYY-MM, read as its first day, or YYYY-MM-DD)
// to `today` (YYYY-MM-DD); nullopt when either date does not parse.
std::optional<double> age_in_months(std::string_view as_of, std::string_view today);

struct PriceUsed {
  std::string entry;   // catalog id: "aws-p5-48xlarge"
  std::string field;   // "price.on_demand", "purchase_price", "usd" (an exchange rate)
  std::string value;   // as written: "55.04 USD/h"
  std::string as_of;
  std::string source;
  std::string overlay;  // the overlay file of a user's own quote; empty for the catalog's
  std::optional<double> age_months;
  bool stale = false;   // older than the policy's max_months

  bool user_quote() const { return !overlay.empty(); }
  // "as of 2026-01 (catalog)" / "as of 2026-12 (your quote)".
  std::string origin_text() const;
  // "aws-p5-48xlarge price.on_demand 55.04 USD/h, as of 2026-01 (catalog)".
  std::string text() const;
  // "aws-p5-48xlarge price.capacity_block is 24 months old (as of 2024-12), past the 12mo limit".
  std::string warning(const PriceAgePolicy& policy) const;
};

// One price field of an entry as a PriceUsed; nullopt when the entry lacks it.
std::optional<PriceUsed> price_used(const hardware::Entity& entry, std::string_view field,
                                    const PriceAgePolicy& policy);

// The prices a plan of `scenario` on `node_type` used: the node type's price for the
// scenario's commitment (an instance) or purchase price (a server), each cost option's
// instance, server and facility prices, and the catalog exchange rate of every other currency
// among them. Sorted by entry and field, each once.
std::vector<PriceUsed> prices_used(const Scenario& scenario, const hardware::Catalog& catalog,
                                   const std::vector<std::string>& node_types, const PriceAgePolicy& policy);

// Every price (money-valued figure) of the catalog's instances, servers and facilities, and
// every exchange rate, older than the policy's limit or without a date; sorted by entry and
// field. (A GPU's or CPU's list price is its launch price: a dated fact, never stale.)
std::vector<PriceUsed> stale_prices(const hardware::Catalog& catalog, const PriceAgePolicy& policy);

}  // namespace capsim::scenarios
