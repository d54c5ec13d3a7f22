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

// A cell of a table as CSV sees it: a number in a unit. Either the producer's own value
// (`exact`: written at full precision) or one read back from the display text: "5.53 USD" ->
// 5.53, "USD"; "41.05 M USD" -> 41050000, "USD"; "118.6 k" -> 118600, ""; "46 %" -> 46, "%".
// Every unit capsim prints parses (the units tests hold it to that).
struct CsvNumber {
  double value = 0.0;  // in `unit`
  std::string unit;    // without a count multiplier; "" for a plain number
  bool exact = false;  // the producer's value, not a reading of rounded text
  bool plain = false;  // read from text with nothing after the number: already a CSV number
};

// The SI size of one `unit` ("min" -> 60 s), or nothing for a unit that is no quantity
// ("GPUs") or a plain number.
std::optional<ParsedQuantity> one(const std::string& unit) {
  if (unit.empty()) return std::nullopt;
  auto parsed = parse_quantity("1 " + unit);
  if (!parsed) return std::nullopt;
  return *parsed;
}

std::optional<CsvNumber> read_back(std::string_view cell) {
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
  const auto size = one(std::string(unit));
  return CsvNumber{parsed->value_si / (size ? size->value_si : 1.0), std::string(unit), false, plain};
}

std::optional<CsvNumber> csv_number(const Cell& cell) {
  if (cell.value) return CsvNumber{*cell.value, cell.unit, true, false};
  return read_back(cell.text);
}

// Whether numbers in units `a` and `b` can share a column: the same unit, or units of one
// dimension and currency (a count only with a count).
bool same_kind(const std::string& a, const std::string& b) {
  if (a == b) return true;
  if (a.empty() || b.empty()) return false;
  const auto x = one(a), y = one(b);
  return x && y && x->dim == y->dim && x->currency == y->currency;
}

// `v` as the shortest text that reads back as the same double (fmt's default), with any
// exponent spelled out as digits ("1.5e-06" -> "0.0000015"), as a spreadsheet shows it.
std::string exact_decimal(double v) {
  if (v == 0.0) return "0";  // and -0
  std::string s = fmt::format("{}", v);
  const auto e = s.find('e');
  if (e == std::string::npos) return s;
  const int exponent = std::stoi(s.substr(e + 1));
  std::string mantissa = s.substr(0, e);
  const bool negative = mantissa.front() == '-';
  if (negative) mantissa.erase(0, 1);
  const auto point = mantissa.find('.');
  int integer_digits = static_cast<int>(point == std::string::npos ? mantissa.size() : point);
  std::string digits = mantissa;
  if (point != std::string::npos) digits.erase(point, 1);
  integer_digits += exponent;
  std::string out;
  if (integer_digits <= 0) {
    out = "0." + std::string(static_cast<std::size_t>(-integer_digits), '0') + digits;
  } else if (static_cast<std::size_t>(integer_digits) >= digits.size()) {
    out = digits + std::string(static_cast<std::size_t>(integer_digits) - digits.size(), '0');
  } else {
    out = digits.substr(0, static_cast<std::size_t>(integer_digits)) + "." +
          digits.substr(static_cast<std::size_t>(integer_digits));
  }
  return negative ? "-" + out : out;
}

// A number read back from rounded text, as a plain decimal: six significant digits, no
// exponent, no trailing zeros.
std::string six_digits(double v) {
  if (v == 0.0) return "0";
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(v))));
  std::string out = fmt::format("{:.{}f}", v, std::max(0, 5 - magnitude));
  if (out.find('.') != std::string::npos) {
    while (out.back() == '0') out.pop_back();
    if (out.back() == '.') out.pop_back();
  }
  return out == "-0" ? "0" : out;
}

// `n` in `unit` (a unit of the same kind) as CSV text: the producer's value at full
// precision, a read-back one at six digits; nothing for a value that is not finite.
std::string csv_value(const CsvNumber& n, const std::string& unit) {
  double v = n.value;
  if (unit != n.unit) {
    const auto from = one(n.unit), to = one(unit);
    if (from && to) v = v * from->value_si / to->value_si;
  }
  if (!std::isfinite(v)) return "";
  return n.exact ? exact_decimal(v) : six_digits(v);
}

// Whether a column's header already says its unit: "cost (USD)", "on demand USD", "tokens/s".
bool names_unit(const std::string& header, const std::string& unit) {
  auto ends_with = [&](const std::string& tail) {
    return header.size() >= tail.size() && header.compare(header.size() - tail.size(), tail.size(), tail) == 0;
  };
  return header == unit || ends_with(" (" + unit + ")") || ends_with(" " + unit);
}

// How a column goes to CSV: as printed (text, and plain numbers), as numbers in the header's
// unit (every cell a number of one kind), or as numbers with a unit column beside (cells in
// several units, as in figure/value tables).
enum class CsvColumn { text, uniform, with_unit_column };

}  // namespace

std::string render_text(const Table& t) {
  // Control characters shown, not acted on (a name from a user's file reaches a terminal).
  std::vector<std::string> columns;
  for (const auto& c : t.columns) columns.push_back(printable(c));
  std::vector<std::vector<std::string>> rows;
  for (const auto& row : t.rows) {
    rows.emplace_back();
    for (const auto& cell : row) rows.back().push_back(printable(cell.text));
  }
  std::vector<std::size_t> w(columns.size());
  for (std::size_t c = 0; c < columns.size(); ++c) {
    w[c] = width(columns[c]);
    for (const auto& row : rows) w[c] = std::max(w[c], width(row[c]));
  }
  auto right = [&](std::size_t c) { return c < t.right_align.size() && t.right_align[c]; };
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string l;
    for (std::size_t c = 0; c < cells.size(); ++c) l += (c ? "  " : "") + pad(cells[c], w[c], right(c));
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + '\n';
  };
  line(columns);
  std::vector<std::string> rule;
  for (std::size_t c = 0; c < w.size(); ++c) rule.emplace_back(w[c], '-');
  line(rule);
  for (const auto& row : rows) line(row);
  return out;
}

std::string render_csv(const Table& t) {
  const std::size_t columns = t.columns.size();
  std::vector<std::vector<std::optional<CsvNumber>>> numbers;
  for (const auto& row : t.rows) {
    numbers.emplace_back();
    for (const auto& cell : row) numbers.back().push_back(cell.empty() && !cell.value ? std::nullopt : csv_number(cell));
  }
  std::vector<CsvColumn> kind(columns, CsvColumn::text);
  std::vector<std::string> unit(columns);
  for (std::size_t c = 0; c < columns; ++c) {
    bool all_numbers = true, any_unit = false, one_unit = true;
    const CsvNumber* first = nullptr;
    for (std::size_t r = 0; r < t.rows.size(); ++r) {
      if (t.rows[r][c].empty() && !t.rows[r][c].value) continue;
      const auto& n = numbers[r][c];
      if (!n) {
        all_numbers = false;
        continue;
      }
      any_unit = any_unit || !n->unit.empty() || (!n->exact && !n->plain);
      if (!first) first = &*n;
      else if (!same_kind(n->unit, first->unit)) one_unit = false;
    }
    if (!any_unit) continue;  // text, or plain numbers
    if (all_numbers && one_unit) {
      kind[c] = CsvColumn::uniform;
      // The producer's unit where there is one, so its values need no conversion.
      unit[c] = first->unit;
      for (std::size_t r = 0; r < t.rows.size(); ++r)
        if (numbers[r][c] && numbers[r][c]->exact) {
          unit[c] = numbers[r][c]->unit;
          break;
        }
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
    const bool suffix = kind[c] == CsvColumn::uniform && !unit[c].empty() && !names_unit(t.columns[c], unit[c]);
    header.push_back(suffix ? t.columns[c] + " (" + unit[c] + ")" : t.columns[c]);
    if (kind[c] == CsvColumn::with_unit_column) header.push_back("unit");
  }
  line(header);
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    const auto& row = t.rows[r];
    std::vector<std::string> cells;
    for (std::size_t c = 0; c < columns; ++c) {
      const auto& n = numbers[r][c];
      switch (kind[c]) {
        case CsvColumn::text: cells.push_back(n && n->exact ? csv_value(*n, n->unit) : row[c].text); break;
        case CsvColumn::uniform: cells.push_back(n ? csv_value(*n, unit[c]) : row[c].text); break;
        case CsvColumn::with_unit_column:
          cells.push_back(n ? csv_value(*n, n->unit) : row[c].text);
          cells.push_back(n ? n->unit : "");
          break;
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
    for (const auto& cell : row) out += " " + markdown_inline(cell.text) + " |";
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
