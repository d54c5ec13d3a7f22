#include "capsim/scenarios/table.hpp"

#include "capsim/core/text.hpp"
#include "capsim/core/units.hpp"
#include "capsim/scenarios/escape.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstdio>

#include <algorithm>
#include <optional>
#include <string_view>

namespace capsim::scenarios {
namespace {

// Display width: count UTF-8 code points, not bytes.
std::size_t width(const std::string& s) {
  return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

std::string pad(const std::string& s, std::size_t w, bool right) {
  const std::string fill(w > width(s) ? w - width(s) : 0, ' ');
  return right ? fill + s : s + fill;
}

// A cell of a display table read back as a number in a unit: "5.53 USD" -> 5.53, "USD";
// "41.05 M USD" -> 41050000, "USD"; "118.6 k" -> 118600, ""; "46 %" -> 46, "%". Every unit
// capsim prints parses (the units tests hold it to that), so CSV can carry numbers only.
struct CsvNumber {
  ParsedQuantity quantity;
  std::string unit;    // as printed, without a count multiplier; "" for a plain number
  bool plain = false;  // nothing after the number: already a CSV number
};

std::optional<CsvNumber> csv_number(std::string_view cell) {
  std::size_t end = 0;
  if (end < cell.size() && (cell[end] == '-' || cell[end] == '+')) ++end;
  const std::size_t digits = end;
  while (end < cell.size() && (std::isdigit(static_cast<unsigned char>(cell[end])) || cell[end] == '.')) ++end;
  if (end == digits) return std::nullopt;
  auto parsed = parse_quantity(cell);
  if (!parsed) return std::nullopt;
  std::string_view unit = cell.substr(end);
  while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  const bool plain = unit.empty();
  for (std::string_view multiplier : {"k", "M", "G", "T"})
    if (unit == multiplier || unit.substr(0, 2) == std::string(multiplier) + " ") {
      unit.remove_prefix(std::min<std::size_t>(2, unit.size()));
      break;
    }
  return CsvNumber{*parsed, std::string(unit), plain};
}

// The value of `n` in `unit` (a unit n's own cells print), as a plain decimal: six
// significant digits, no exponent, no trailing zeros.
std::string csv_value(const CsvNumber& n, const std::string& unit) {
  double factor = 1.0;
  if (!unit.empty())
    if (auto one = parse_quantity("1 " + unit)) factor = one->value_si;
  const double v = n.quantity.value_si / factor;
  if (v == 0.0) return "0";
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(v))));
  std::string out = fmt::format("{:.{}f}", v, std::max(0, 5 - magnitude));
  if (out.find('.') != std::string::npos) {
    while (out.back() == '0') out.pop_back();
    if (out.back() == '.') out.pop_back();
  }
  return out == "-0" ? "0" : out;
}

// How a column goes to CSV: as printed (text), as numbers in the header's unit (every cell a
// number of one dimension), or as numbers with a unit column beside (cells in several units,
// as in figure/value tables).
enum class CsvColumn { text, uniform, with_unit_column };

}  // namespace

std::string render_text(const Table& t) {
  // Control characters shown, not acted on (a name from a user's file reaches a terminal).
  Table shown = t;
  for (auto& c : shown.columns) c = printable(c);
  for (auto& row : shown.rows)
    for (auto& cell : row) cell = printable(cell);
  std::vector<std::size_t> w(shown.columns.size());
  for (std::size_t c = 0; c < shown.columns.size(); ++c) {
    w[c] = width(shown.columns[c]);
    for (const auto& row : shown.rows) w[c] = std::max(w[c], width(row[c]));
  }
  auto right = [&](std::size_t c) { return c < t.right_align.size() && t.right_align[c]; };
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string l;
    for (std::size_t c = 0; c < cells.size(); ++c) l += (c ? "  " : "") + pad(cells[c], w[c], right(c));
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + '\n';
  };
  line(shown.columns);
  std::vector<std::string> rule;
  for (std::size_t c = 0; c < w.size(); ++c) rule.emplace_back(w[c], '-');
  line(rule);
  for (const auto& row : shown.rows) line(row);
  return out;
}

std::string render_csv(const Table& t) {
  const std::size_t columns = t.columns.size();
  std::vector<CsvColumn> kind(columns, CsvColumn::text);
  std::vector<std::string> unit(columns);
  for (std::size_t c = 0; c < columns; ++c) {
    bool all_numbers = true, any_unit = false, one_unit = true;
    std::optional<CsvNumber> first;
    for (const auto& row : t.rows) {
      if (row[c].empty()) continue;
      auto n = csv_number(row[c]);
      if (!n) {
        all_numbers = false;
        continue;
      }
      any_unit = any_unit || !n->plain;
      if (!first) first = n;
      else if (!(n->quantity.dim == first->quantity.dim) || n->quantity.currency != first->quantity.currency ||
               n->unit.empty() != first->unit.empty())
        one_unit = false;
    }
    if (!any_unit) continue;  // text, or plain numbers already
    if (all_numbers && one_unit) {
      kind[c] = CsvColumn::uniform;
      unit[c] = first->unit;
    } else {
      kind[c] = CsvColumn::with_unit_column;
    }
  }

  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    for (std::size_t c = 0; c < cells.size(); ++c) out += (c ? "," : "") + csv_cell(cells[c]);
    out += "\r\n";
  };
  std::vector<std::string> header;
  for (std::size_t c = 0; c < columns; ++c) {
    const std::string suffix = " (" + unit[c] + ")";
    const bool named = t.columns[c].size() >= suffix.size() &&
                       t.columns[c].compare(t.columns[c].size() - suffix.size(), suffix.size(), suffix) == 0;
    header.push_back(kind[c] == CsvColumn::uniform && !named && !unit[c].empty() ? t.columns[c] + suffix : t.columns[c]);
    if (kind[c] == CsvColumn::with_unit_column) header.push_back("unit");
  }
  line(header);
  for (const auto& row : t.rows) {
    std::vector<std::string> cells;
    for (std::size_t c = 0; c < columns; ++c) {
      const auto n = kind[c] == CsvColumn::text || row[c].empty() ? std::nullopt : csv_number(row[c]);
      if (kind[c] == CsvColumn::uniform) cells.push_back(n ? csv_value(*n, unit[c]) : row[c]);
      if (kind[c] == CsvColumn::text) cells.push_back(row[c]);
      if (kind[c] == CsvColumn::with_unit_column) {
        cells.push_back(n ? csv_value(*n, n->unit) : row[c]);
        cells.push_back(n ? n->unit : "");
      }
    }
    line(cells);
  }
  return out;
}

std::string render_markdown(const Table& t) {
  std::string out = "|";
  for (const auto& c : t.columns) out += " " + markdown_inline(c) + " |";
  out += "\n|";
  for (std::size_t c = 0; c < t.columns.size(); ++c)
    out += (c < t.right_align.size() && t.right_align[c]) ? " ---: |" : " --- |";
  out += "\n";
  for (const auto& row : t.rows) {
    out += "|";
    for (const auto& cell : row) out += " " + markdown_inline(cell) + " |";
    out += "\n";
  }
  return out;
}

std::string human_count(double v) {
  char buf[64];
  auto fixed = [&](double x, int decimals) {
    std::snprintf(buf, sizeof buf, "%.*f", decimals, x);
    return std::string(buf);
  };
  if (v >= 1e12) return fixed(v / 1e12, 2) + " T";
  if (v >= 1e9) return fixed(v / 1e9, 2) + " G";
  if (v >= 1e6) return fixed(v / 1e6, 2) + " M";
  if (v >= 1e4) return fixed(v / 1e3, 1) + " k";
  return fixed(v, v < 10 && v != std::floor(v) ? 2 : 0);
}

}  // namespace capsim::scenarios
