// Small text helpers shared by the models, reports and front ends.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace capsim {

// `v` with `digits` significant digits, like "%g" but never in exponent form (text output is
// read by people): 0.123, 41.2, 1500000000, 0.000012.
std::string significant(double v, int digits = 3);

// "1 node", "2 nodes", "1 replica": the count and the noun, plural when it is not one.
std::string plural(long long n, const std::string& noun);

// `s` with & < > " ' replaced by entities, for XML and HTML text and attributes; control
// characters (first_control_character, newline and tab kept) shown as printable() shows them.
std::string xml_escape(const std::string& s);

// `s` with control characters shown, not acted on: newline as \n, carriage return as \r,
// any other C0 character or DEL as \xHH (tab stays), and the characters of
// first_control_character below that are not ASCII as \uHHHH (a right-to-left override
// U+202E as \u202e). For text that came from a user's file and goes to a terminal, a CI log
// or a report, where a raw ESC or newline could forge a line and a bidirectional override
// could show a name backwards (CVE-2021-42574, "Trojan Source").
std::string printable(const std::string& s);

// A character that text from a user's file must not carry into an output, where it is.
struct ControlCharacter {
  std::size_t offset = 0;  // of its first byte in the text
  char32_t code = 0;       // its code point
};

// The first control character of UTF-8 text: C0 (U+0000 to U+001F, newline and tab allowed
// when `allow_newline_and_tab`), DEL, C1 (U+0080 to U+009F), and the invisible characters
// that reorder or break what a reader sees: the bidirectional marks, embeddings, overrides
// and isolates (U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069) and the line and
// paragraph separators (U+2028, U+2029). nullopt when there is none. Bytes that are not
// UTF-8 are not control characters here.
std::optional<ControlCharacter> first_control_character(std::string_view text, bool allow_newline_and_tab);

// "U+001B", "U+202E": a code point as Unicode writes it.
std::string code_point_name(char32_t code);

}  // namespace capsim
