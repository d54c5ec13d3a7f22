#include "capsim/scenarios/currency.hpp"

#include <algorithm>

#include "capsim/core/text.hpp"

namespace capsim::scenarios {

std::optional<UsdRate> usd_rate(const hardware::Catalog& catalog, const Scenario& s, Currency currency) {
  if (currency == Currency::usd || currency == Currency::none) return UsdRate{1, ""};
  if (s.cost)
    for (const auto& [cur, rate] : s.cost->usd_per_unit)
      if (cur == currency) return UsdRate{rate, "the scenario's cost.exchange_rates"};
  std::optional<UsdRate> best;
  std::string best_date;
  for (const hardware::Entity& e : catalog.all(hardware::EntityKind::exchange_rate)) {
    const hardware::FieldValue* usd = e.find("usd");
    if (e.text("currency") != currency_code(currency) || usd == nullptr) continue;
    const std::string date = usd->provenance ? usd->provenance->as_of : std::string();
    if (!best || date > best_date) {
      best = UsdRate{usd->number, "catalog exchange rate " + e.id + (date.empty() ? "" : " (as of " + date + ")")};
      best_date = date;
    }
  }
  return best;
}

std::vector<std::string> prices_in_usd(std::vector<models::NodeType>& types, const hardware::Catalog& catalog,
                                       const Scenario& s) {
  std::vector<std::string> notes(types.size());
  for (std::size_t i = 0; i < types.size(); ++i) {
    auto& t = types[i];
    if (!t.price || t.price->currency() == Currency::usd || t.price->currency() == Currency::none) continue;
    const std::string code(currency_code(t.price->currency()));
    const auto rate = usd_rate(catalog, s, t.price->currency());
    notes[i] = rate ? "1 " + code + " = " + significant(rate->usd_per_unit, 5) + " USD (" + rate->source + ")"
                    : "no exchange rate from " + code + " to USD: prices in " + code + " are left out";
    if (rate) t.price = MoneyPerSecond(t.price->value() * rate->usd_per_unit, Currency::usd);
    else t.price.reset();
  }
  return notes;
}

void add_conversion(std::vector<std::string>& conversions, const std::string& note) {
  if (!note.empty() && std::find(conversions.begin(), conversions.end(), note) == conversions.end())
    conversions.push_back(note);
}

}  // namespace capsim::scenarios
