#include "capsim/scenarios/table.hpp"

#include <cmath>
#include <cstdio>

#include <algorithm>

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

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string render_text(const Table& t) {
  std::vector<std::size_t> w(t.columns.size());
  for (std::size_t c = 0; c < t.columns.size(); ++c) {
    w[c] = width(t.columns[c]);
    for (const auto& row : t.rows) w[c] = std::max(w[c], width(row[c]));
  }
  auto right = [&](std::size_t c) { return c < t.right_align.size() && t.right_align[c]; };
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string l;
    for (std::size_t c = 0; c < cells.size(); ++c) l += (c ? "  " : "") + pad(cells[c], w[c], right(c));
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + '\n';
  };
  line(t.columns);
  std::vector<std::string> rule;
  for (std::size_t c = 0; c < w.size(); ++c) rule.emplace_back(w[c], '-');
  line(rule);
  for (const auto& row : t.rows) line(row);
  return out;
}

std::string render_csv(const Table& t) {
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    for (std::size_t c = 0; c < cells.size(); ++c) out += (c ? "," : "") + csv_cell(cells[c]);
    out += "\r\n";
  };
  line(t.columns);
  for (const auto& row : t.rows) line(row);
  return out;
}

std::string render_markdown(const Table& t) {
  auto escape = [](std::string s) {
    std::string out;
    for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c == '\n' ? ' ' : c);
    return out;
  };
  std::string out = "|";
  for (const auto& c : t.columns) out += " " + escape(c) + " |";
  out += "\n|";
  for (std::size_t c = 0; c < t.columns.size(); ++c)
    out += (c < t.right_align.size() && t.right_align[c]) ? " ---: |" : " --- |";
  out += "\n";
  for (const auto& row : t.rows) {
    out += "|";
    for (const auto& cell : row) out += " " + escape(cell) + " |";
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
