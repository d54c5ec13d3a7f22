// A table of results and its renderings: aligned text for people, CSV and Markdown for
// files. Every tabular output of capsim goes through here so the formats stay alike.
#pragma once

#include <string>
#include <vector>

namespace capsim::scenarios {

struct Table {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;  // each row has columns.size() cells
  std::vector<bool> right_align;              // per column; numbers read better right-aligned
};

// Cells are text from anywhere, a user's file included; each format keeps it text (escape.hpp).
std::string render_text(const Table& t);      // aligned columns, header underlined; control characters shown
std::string render_csv(const Table& t);       // RFC 4180 quoting; a formula neutralised (csv_cell)
std::string render_markdown(const Table& t);  // GitHub pipe table; no raw HTML or link (markdown_inline)

// A count for people, no exponent: 4060000 -> "4.06 M"; 12345 -> "12.3 k"; 512 -> "512".
std::string human_count(double v);

}  // namespace capsim::scenarios
