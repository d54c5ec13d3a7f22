#include "capsim/hardware/query.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <optional>

#include "capsim/core/suggest.hpp"

namespace capsim::hardware {
namespace {

std::string lower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

std::vector<std::string> field_names(EntityKind kind) {
  std::vector<std::string> out{"id"};
  for (const auto& f : fields_of(kind)) out.emplace_back(f.name);
  return out;
}

Diagnostic unknown_field(EntityKind kind, const std::string& name) {
  return Diagnostic{{}, "", "unknown " + std::string(kind_name(kind)) + " field '" + name + "'",
                    did_you_mean(name, field_names(kind))};
}

template <class T>
int compare(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

bool holds(CompareOp op, int c) {
  switch (op) {
    case CompareOp::eq: return c == 0;
    case CompareOp::ne: return c != 0;
    case CompareOp::lt: return c < 0;
    case CompareOp::le: return c <= 0;
    case CompareOp::gt: return c > 0;
    case CompareOp::ge: return c >= 0;
  }
  return false;
}

}  // namespace

Result<Filter> parse_filter(EntityKind kind, std::string_view expression) {
  static constexpr std::array<std::pair<std::string_view, CompareOp>, 7> ops = {{
      {">=", CompareOp::ge}, {"<=", CompareOp::le}, {"!=", CompareOp::ne}, {"==", CompareOp::eq},
      {"=", CompareOp::eq},  {">", CompareOp::gt},  {"<", CompareOp::lt},
  }};
  for (const auto& [symbol, op] : ops) {
    const std::size_t at = expression.find(symbol);
    if (at == std::string_view::npos) continue;
    auto trim = [](std::string_view s) {
      while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
      while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
      return std::string(s);
    };
    Filter f;
    f.field = trim(expression.substr(0, at));
    f.op = op;
    const std::string value = trim(expression.substr(at + symbol.size()));
    if (f.field == "id") {
      f.text = value;
      return f;
    }
    const FieldDef* def = find_field(kind, f.field);
    if (def == nullptr) return unknown_field(kind, f.field);
    if (def->type == FieldType::quantity) {
      auto q = parse_quantity(value);
      if (!q) return q.errors();
      if (!(q->dim == def->dim))
        return Diagnostic{{}, "", "'" + f.field + "' is " + describe_dimension(def->dim) + ", got '" + value + "'", ""};
      f.number = q->value_si;
      f.currency = q->currency;
      f.numeric = true;
    } else if (def->type == FieldType::integer) {
      double n = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (ec != std::errc{} || end != value.data() + value.size())
        return Diagnostic{{}, "", "'" + f.field + "' is a whole number, got '" + value + "'", ""};
      f.number = n;
      f.numeric = true;
    } else {
      f.text = value;
    }
    return f;
  }
  return Diagnostic{{}, "", "expected FIELD OP VALUE with OP one of = != < <= > >=, got '" +
                                std::string(expression) + "'",
                    "e.g. 'memory>=40 GB' or 'vendor=nvidia'"};
}

bool matches(const Entity& entity, const Filter& filter) {
  if (filter.field == "id") return holds(filter.op, compare(lower(entity.id), lower(filter.text)));
  const FieldValue* v = entity.find(filter.field);
  if (v == nullptr) return filter.op == CompareOp::ne;
  if (filter.numeric) return holds(filter.op, compare(v->number, filter.number));
  return holds(filter.op, compare(lower(v->text), lower(filter.text)));
}

std::optional<double> usd_per_unit(const Catalog& catalog, Currency currency) {
  if (currency == Currency::usd || currency == Currency::none) return 1.0;
  std::optional<double> best;
  std::string best_date;
  for (const Entity& rate : catalog.all(EntityKind::exchange_rate)) {
    const FieldValue* usd = rate.find("usd");
    if (usd == nullptr || rate.text("currency") != currency_code(currency)) continue;
    const std::string date = usd->provenance ? usd->provenance->as_of : std::string();
    if (!best || date > best_date) {
      best = usd->number;
      best_date = date;
    }
  }
  return best;
}

std::optional<double> comparable_number(const Catalog& catalog, const FieldValue& v) {
  if (v.type != FieldType::quantity || v.dim.money == 0) return v.number;
  const auto rate = usd_per_unit(catalog, v.currency);
  if (!rate) return std::nullopt;
  return v.number * *rate;
}

Result<std::vector<const Entity*>> run_query(const Catalog& catalog, EntityKind kind, const Query& query) {
  const FieldDef* sort_def = nullptr;
  if (!query.sort_by.empty() && query.sort_by != "id") {
    sort_def = find_field(kind, query.sort_by);
    if (sort_def == nullptr) return unknown_field(kind, query.sort_by);
  }
  // A price filter compares in US dollars, as the sort does: '<5 USD/h' against a rouble
  // price converts the rouble price first. A price with no rate for its currency matches no
  // price comparison.
  auto passes = [&](const Entity& e, const Filter& f) {
    const FieldValue* v = e.find(f.field);
    if (v == nullptr || !f.numeric || v->type != FieldType::quantity || v->dim.money == 0) return matches(e, f);
    const auto value = comparable_number(catalog, *v);
    const auto wanted = usd_per_unit(catalog, f.currency);
    if (!value || !wanted) return false;
    return holds(f.op, compare(*value, f.number * *wanted));
  };
  std::vector<const Entity*> out;
  for (const auto& e : catalog.all(kind))
    if (std::all_of(query.filters.begin(), query.filters.end(), [&](const Filter& f) { return passes(e, f); }))
      out.push_back(&e);
  if (query.sort_by.empty()) return out;
  const bool numeric = sort_def && (sort_def->type == FieldType::quantity || sort_def->type == FieldType::integer);
  // Prices sort in US dollars (the catalog's newest rate of each currency), so a rouble price
  // sits among the dollar prices by what it costs, not by its raw number; one in a currency
  // without a rate goes last, with the entries that have no price.
  auto key = [&](const Entity* e) -> std::optional<double> {
    const FieldValue* v = e->find(query.sort_by);
    if (v == nullptr) return std::nullopt;
    return comparable_number(catalog, *v);
  };
  std::stable_sort(out.begin(), out.end(), [&](const Entity* a, const Entity* b) {
    if (sort_def == nullptr) return query.descending ? a->id > b->id : a->id < b->id;
    const FieldValue* va = a->find(query.sort_by);
    const FieldValue* vb = b->find(query.sort_by);
    if (va == nullptr || vb == nullptr) return va != nullptr;  // missing values last
    if (numeric) {
      const auto ka = key(a), kb = key(b);
      if (!ka || !kb) return ka.has_value();
      const int c = compare(*ka, *kb);
      return query.descending ? c > 0 : c < 0;
    }
    const int c = compare(lower(va->text), lower(vb->text));
    return query.descending ? c > 0 : c < 0;
  });
  return out;
}

}  // namespace capsim::hardware
