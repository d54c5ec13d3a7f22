// A table of results and its renderings: aligned text for people, CSV and Markdown for
// files. Every tabular output of capsim goes through here so the formats stay alike.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace capsim::scenarios {

// One cell: the text people read and, where that text shows a number, the number itself,
// unrounded, so that a writer for machines (CSV) keeps every digit the JSON output has. Built
// from text alone (implicitly, so `{"name", "8"}` rows stay short), or from text, number and unit.
struct Cell {
  std::string text;  // as text, Markdown, HTML and PDF show it: rounded, with its unit
  // The number `text` shows, in `unit`, from the same double the JSON output writes. Absent
  // for text. A value that is not finite is written as an empty CSV cell, never as nan or inf.
  std::optional<double> value;
  std::string unit;  // what one of `value` is: "USD", "s", "B", "%", "tokens/s"; "" for a count

  Cell() = default;
  Cell(std::string display) : text(std::move(display)) {}  // NOLINT(google-explicit-constructor): rows of text
  Cell(const char* display) : text(display) {}             // NOLINT(google-explicit-constructor)
  Cell(std::string display, double number, std::string number_unit = {})
      : text(std::move(display)), value(number), unit(std::move(number_unit)) {}

  bool empty() const { return text.empty(); }
  friend bool operator==(const Cell& c, std::string_view display) { return c.text == display; }
};

struct Table {
  std::vector<std::string> columns;
  std::vector<std::vector<Cell>> rows;  // each row has columns.size() cells
  std::vector<bool> right_align;        // per column; numbers read better right-aligned
};

// Cells are text from anywhere, a user's file included; each format keeps it text (escape.hpp).
std::string render_text(const Table& t);      // aligned columns, header underlined; control characters shown
// CSV, RFC 4180 quoting, a formula neutralised (csv_cell). A column of numbers in one unit
// carries the unit in its header ("time (s)"); a column in several units (figure/value tables)
// gets a "unit" column beside it. A cell with a value is written at full precision (the
// shortest text that reads back as the same double); a cell without one is read back from its
// text ("41.05 M USD" -> 41050000) at six significant digits, or kept as text.
std::string render_csv(const Table& t);
std::string render_markdown(const Table& t);  // GitHub pipe table; no raw HTML or link (markdown_inline)

// A count for people, no exponent: 4060000 -> "4.06 M"; 12345 -> "12.3 k"; 512 -> "512".
std::string human_count(double v);

}  // namespace capsim::scenarios
