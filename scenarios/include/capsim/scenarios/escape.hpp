// How text that came from a user's file (a scenario or cluster name, a cost option, a
// workload) is written into each kind of file capsim emits, so that it stays text there
// (issue 47). One function per target; every exporter and renderer calls these and none
// quotes by hand:
//   shell_word      one word of a POSIX sh command line (the `capsim export gke` script)
//   shell_comment   the text of a '#' comment line of a script or a YAML stream
//   csv_cell        one RFC 4180 cell, a formula neutralised (OWASP "CSV injection")
//   markdown_inline text in a Markdown table cell or a heading: no raw HTML, no link
//   markdown_block  a Markdown paragraph: as markdown_inline, and no line opens a block
//   markdown_fence  the fence of a code block that `text` cannot close
// YAML and JSON are not here: they are built as documents by yaml-cpp's emitter and by
// nlohmann::json, which quote and escape whatever a value holds. Control characters are
// core's printable() (capsim/core/text.hpp); the loaders refuse them in input already.
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace capsim::scenarios {

// `s` as one word of sh: as it is when it holds only characters no shell treats specially
// (letters, digits and _ @ % + = : , . / -), else in single quotes, each ' written '\''.
// The empty string is ''. The result is one word whatever `s` holds (a newline stays inside
// the quotes). A word that starts with '-' is still an option to the command it is given to:
// check names before they become arguments.
std::string shell_word(std::string_view s);

// `s` for the rest of a '#' line: control characters shown as printable() shows them, so a
// newline cannot end the comment and start a command.
std::string shell_comment(std::string_view s);

// One CSV cell (RFC 4180): quoted when it holds a comma, a quote, CR or LF. A cell that a
// spreadsheet would read as a formula (its first character one of = + - @, a tab or CR) is
// written as text instead: a single quote before it, and the cell quoted (OWASP, "CSV
// Injection"). Numbers stay numbers: "-3.5", "+2", "1e-3" are written as they are, and so is
// "-" alone (the tables' "none").
std::string csv_cell(std::string_view s);

// Whether `s` is a plain decimal number, as a spreadsheet reads one: an optional sign,
// digits with at most one point, an optional exponent ("-3.5", "1e-3", ".5").
bool is_plain_number(std::string_view s);

// `s` as literal text inside a Markdown line (GitHub Flavored Markdown): & < > written as
// entities (no raw HTML, no autolink, no character reference), and \ ` * [ ] | and an
// underscore at the edge of a word backslash-escaped (no code span, emphasis, link or image,
// no table cell boundary); newlines become spaces. An underscore inside a word
// ("memory_bandwidth") stays: GFM never reads it as emphasis.
std::string markdown_inline(std::string_view s);

// `s` as a Markdown paragraph: each line as markdown_inline (the newlines kept), its
// leading spaces dropped and a first character that would open a block (# > - + = ~, or
// the "1." of a list) backslash-escaped, so no line becomes a heading, quote, list, rule or
// code block.
std::string markdown_block(std::string_view s);

// A fence of backticks longer than any run of backticks in `text` (at least three), so a
// code block of `text` ends only where capsim ends it.
std::string markdown_fence(std::string_view text);

}  // namespace capsim::scenarios
