#include "capsim/scenarios/prices.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <set>

#include "capsim/core/text.hpp"
#include "capsim/scenarios/scenario.hpp"

namespace capsim::scenarios {
namespace {

using hardware::Entity;
using hardware::EntityKind;

// Days since 1970-01-01 of a civil date (Howard Hinnant's days_from_civil).
long long days_from_civil(int y, int m, int d) {
  y -= m <= 2;
  const long long era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<long long>(doe) - 719468;
}

// YYYY-MM (its first day) or YYYY-MM-DD -> days since the epoch.
std::optional<long long> parse_date(std::string_view s) {
  if (s.size() != 7 && s.size() != 10) return std::nullopt;
  auto number = [&](std::size_t at, std::size_t n) -> std::optional<int> {
    int v = 0;
    for (std::size_t i = at; i < at + n; ++i) {
      if (s[i] < '0' || s[i] > '9') return std::nullopt;
      v = v * 10 + (s[i] - '0');
    }
    return v;
  };
  const auto y = number(0, 4), m = number(5, 2);
  if (!y || !m || s[4] != '-' || *m < 1 || *m > 12) return std::nullopt;
  int d = 1;
  if (s.size() == 10) {
    const auto day = number(8, 2);
    if (!day || s[7] != '-' || *day < 1 || *day > 31) return std::nullopt;
    d = *day;
  }
  return days_from_civil(*y, *m, d);
}

constexpr double kDaysPerMonth = 365.25 / 12;

std::string trim(std::string s) {
  while (!s.empty() && s.front() == ' ') s.erase(s.begin());
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

bool is_price(const hardware::FieldValue& v) { return v.type == hardware::FieldType::quantity && v.dim.money != 0; }

}  // namespace

Result<double> parse_price_age(std::string_view text) {
  const std::string t = trim(std::string(text));
  std::size_t end = 0;
  while (end < t.size() && ((t[end] >= '0' && t[end] <= '9') || t[end] == '.')) ++end;
  std::string unit = trim(t.substr(end));
  const Diagnostic bad{{}, "--max-price-age", "expected an age like '12mo', got '" + std::string(text) + "'",
                       "a number and one of mo (months), y (years), w (weeks), d (days): 12mo, 18 months, 1y, 90d"};
  if (end == 0) return bad;
  double number = 0;
  try {
    number = std::stod(t.substr(0, end));
  } catch (...) {
    return bad;
  }
  double months = 0;
  if (unit == "mo" || unit == "month" || unit == "months") months = number;
  else if (unit == "y" || unit == "yr" || unit == "year" || unit == "years") months = number * 12;
  else if (unit == "w" || unit == "week" || unit == "weeks") months = number * 7 / kDaysPerMonth;
  else if (unit == "d" || unit == "day" || unit == "days") months = number / kDaysPerMonth;
  else return bad;
  if (!(months > 0) || !std::isfinite(months)) return bad;
  return months;
}

Result<PriceAgePolicy> price_age_policy(std::string_view max_age) {
  auto months = parse_price_age(max_age);
  if (!months) return months.errors();
  PriceAgePolicy p;
  p.max_months = *months;
  p.max_text = trim(std::string(max_age));
  return p;
}

std::string today_utc() {
  if (const char* fixed = std::getenv("CAPSIM_TODAY"); fixed && parse_date(fixed)) return fixed;
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

std::optional<double> age_in_months(std::string_view as_of, std::string_view today) {
  const auto from = parse_date(as_of), to = parse_date(today);
  if (!from || !to) return std::nullopt;
  // Calendar months (2024-12 to 2026-12-01 is 24), the days past the last whole month as a
  // fraction of one.
  auto ymd = [](std::string_view s) {
    const int y = std::stoi(std::string(s.substr(0, 4))), m = std::stoi(std::string(s.substr(5, 2)));
    const int d = s.size() == 10 ? std::stoi(std::string(s.substr(8, 2))) : 1;
    return std::array<int, 3>{y, m, d};
  };
  const auto a = ymd(as_of), b = ymd(today);
  int months = (b[0] - a[0]) * 12 + (b[1] - a[1]);
  if (b[2] < a[2]) --months;
  const long long anniversary = days_from_civil(a[0] + (a[1] - 1 + months) / 12 - ((a[1] - 1 + months) < 0 ? 1 : 0),
                                                ((a[1] - 1 + months) % 12 + 12) % 12 + 1, 1) +
                                (a[2] - 1);
  return months + static_cast<double>(*to - anniversary) / kDaysPerMonth;
}

std::string PriceUsed::origin_text() const {
  return "as of " + (as_of.empty() ? std::string("an unknown date") : as_of) +
         (user_quote() ? " (your quote)" : " (catalog)");
}

std::string PriceUsed::text() const { return entry + " " + field + " " + value + ", " + origin_text(); }

std::string PriceUsed::warning(const PriceAgePolicy& policy) const {
  if (!age_months) return entry + " " + field + " has no date: its age is unknown";
  return fmt::format("{} {} is {} months old (as of {}{}), past the {} limit (--max-price-age)", entry, field,
                     static_cast<long long>(std::floor(*age_months)), as_of, user_quote() ? ", your quote" : "",
                     policy.max_text);
}

std::optional<PriceUsed> price_used(const Entity& entry, std::string_view field, const PriceAgePolicy& policy) {
  const hardware::FieldValue* v = entry.find(field);
  if (v == nullptr) return std::nullopt;
  PriceUsed p;
  p.entry = entry.id;
  p.field = std::string(field);
  p.value = v->text;
  if (entry.kind == EntityKind::exchange_rate) p.value = "1 " + entry.text("currency") + " = " + v->text + " USD";
  if (v->provenance) {
    p.as_of = v->provenance->as_of;
    p.source = v->provenance->source;
    p.overlay = v->provenance->overlay;
  }
  p.age_months = age_in_months(p.as_of, policy.today.empty() ? today_utc() : policy.today);
  p.stale = !p.age_months || *p.age_months > policy.max_months;
  return p;
}

std::vector<PriceUsed> prices_used(const Scenario& s, const hardware::Catalog& catalog,
                                   const std::vector<std::string>& node_types, const PriceAgePolicy& given) {
  PriceAgePolicy policy = given;
  if (policy.today.empty()) policy.today = today_utc();
  std::set<std::pair<std::string, std::string>> wanted;  // (entry, field)
  auto add_node = [&](const std::string& id, const std::string& instance_field) {
    const Entity* e = catalog.find(id);
    if (e == nullptr) return;
    if (e->kind == EntityKind::instance) wanted.emplace(id, instance_field);
    if (e->kind == EntityKind::server) wanted.emplace(id, "purchase_price");
  };
  for (const auto& id : node_types) add_node(id, std::string(commitment_price_field(s.commitment)));
  if (s.cost)
    for (const auto& o : s.cost->options) {
      if (!o.instance.empty()) add_node(o.instance, "price." + o.pricing);
      if (!o.server.empty()) add_node(o.server, "purchase_price");
      // The facility's prices the cost model reads for this option (cost_report.cpp).
      if (const Entity* f = catalog.find(EntityKind::facility, o.facility)) {
        const bool colocation = f->text("kind") == "colocation";
        auto want = [&](const char* field, bool used) {
          if (used && f->has(field)) wanted.emplace(o.facility, field);
        };
        want("electricity_price", true);
        want("colocation_price", colocation);
        want("staff_cost", o.staff_fte > 0 && !o.staff_cost_per_fte);
        want("cross_connect_price", colocation && o.cross_connects > 0 && !o.cross_connect_price);
        want("remote_hands_price", colocation && o.remote_hands_per_month.value() > 0 && !o.remote_hands_price);
      }
    }
  std::vector<PriceUsed> out;
  std::set<std::string> currencies;
  for (const auto& [id, field] : wanted) {
    const Entity* e = catalog.find(id);
    if (e == nullptr) continue;
    if (auto p = price_used(*e, field, policy)) {
      const auto* v = e->find(field);
      if (v->currency != Currency::usd && v->currency != Currency::none) currencies.insert(std::string(currency_code(v->currency)));
      out.push_back(std::move(*p));
    }
  }
  // The catalog rate a non-dollar price is converted with: the newest of its currency (as the
  // cost model picks it), unless the scenario gives its own.
  for (const auto& code : currencies) {
    bool scenario_rate = false;
    if (s.cost)
      for (const auto& [cur, rate] : s.cost->usd_per_unit) scenario_rate = scenario_rate || currency_code(cur) == code;
    if (scenario_rate) continue;
    const Entity* best = nullptr;
    std::string best_date;
    for (const Entity& r : catalog.all(EntityKind::exchange_rate)) {
      const auto* usd = r.find("usd");
      if (r.text("currency") != code || usd == nullptr) continue;
      const std::string date = usd->provenance ? usd->provenance->as_of : std::string();
      if (best == nullptr || date > best_date) {
        best = &r;
        best_date = date;
      }
    }
    if (best != nullptr)
      if (auto p = price_used(*best, "usd", policy)) out.push_back(std::move(*p));
  }
  return out;
}

std::vector<PriceUsed> stale_prices(const hardware::Catalog& catalog, const PriceAgePolicy& given) {
  PriceAgePolicy policy = given;
  if (policy.today.empty()) policy.today = today_utc();
  std::vector<PriceUsed> out;
  // The prices plans use: what a node, a facility or a conversion costs. A GPU's or CPU's
  // list price is its launch price, a dated fact that does not go stale.
  for (auto kind : {EntityKind::instance, EntityKind::server, EntityKind::facility, EntityKind::exchange_rate})
    for (const Entity& e : catalog.all(kind))
      for (const auto& [name, v] : e.fields) {
        const bool rate = kind == EntityKind::exchange_rate && name == "usd";
        if (!is_price(v) && !rate) continue;
        if (auto p = price_used(e, name, policy); p && p->stale) out.push_back(std::move(*p));
      }
  std::sort(out.begin(), out.end(), [](const PriceUsed& a, const PriceUsed& b) {
    return std::tie(a.entry, a.field) < std::tie(b.entry, b.field);
  });
  return out;
}

}  // namespace capsim::scenarios
