#include "capsim/scenarios/escape.hpp"

#include <algorithm>
#include <cctype>

#include "capsim/core/text.hpp"

namespace capsim::scenarios {
namespace {

bool is_alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// Control characters shown (printable()), newlines kept as they are.
std::string visible_keeping_newlines(std::string_view s) {
  std::string out;
  std::size_t start = 0;
  while (true) {
    const auto end = s.find('\n', start);
    out += printable(std::string(s.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start)));
    if (end == std::string_view::npos) return out;
    out += '\n';
    start = end + 1;
  }
}

}  // namespace

std::string shell_word(std::string_view s) {
  const bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return is_alnum(c) || std::string_view("_@%+=:,./-").find(c) != std::string_view::npos;
  });
  if (plain) return std::string(s);
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string shell_comment(std::string_view s) { return printable(std::string(s)); }

bool is_plain_number(std::string_view s) {
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  std::size_t digits = 0;
  while (i < s.size() && is_digit(s[i])) ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && is_digit(s[i])) ++i, ++digits;
  }
  if (digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    std::size_t exponent = 0;
    while (i < s.size() && is_digit(s[i])) ++i, ++exponent;
    if (exponent == 0) return false;
  }
  return i == s.size();
}

std::string csv_cell(std::string_view s) {
  std::string text = visible_keeping_newlines(s);
  // OWASP: a cell starting with = + - @ (or a tab or CR, which printable() has shown
  // already) is a formula to Excel, LibreOffice and Google Sheets.
  const bool formula = !text.empty() && std::string_view("=+-@\t\r").find(text.front()) != std::string_view::npos &&
                       !is_plain_number(text) && text != "-";
  if (formula) text.insert(text.begin(), '\'');
  if (!formula && text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string markdown_inline(std::string_view s) {
  std::string raw(s);
  std::replace(raw.begin(), raw.end(), '\n', ' ');  // a Markdown line shows a newline as a space
  const std::string text = printable(raw);
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '\\':
      case '`':
      case '*':
      case '[':
      case ']':
      case '|':
        out += '\\';
        out += c;
        break;
      case '_': {
        const bool inside_word = i > 0 && i + 1 < text.size() && is_alnum(text[i - 1]) && is_alnum(text[i + 1]);
        if (!inside_word) out += '\\';
        out += c;
        break;
      }
      default: out += c;
    }
  }
  return out;
}

std::string markdown_block(std::string_view s) {
  std::string out;
  std::size_t start = 0;
  while (true) {
    const auto end = s.find('\n', start);
    std::string_view line = s.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    std::string escaped = markdown_inline(line);
    if (!escaped.empty() && std::string_view("#>-+=~").find(escaped.front()) != std::string_view::npos)
      escaped.insert(escaped.begin(), '\\');
    // "1. " or "1) " opens an ordered list.
    std::size_t digits = 0;
    while (digits < escaped.size() && is_digit(escaped[digits])) ++digits;
    if (digits > 0 && digits < escaped.size() && (escaped[digits] == '.' || escaped[digits] == ')'))
      escaped.insert(escaped.begin() + static_cast<std::ptrdiff_t>(digits), '\\');
    out += escaped;
    if (end == std::string_view::npos) return out;
    out += '\n';
    start = end + 1;
  }
}

std::string markdown_fence(std::string_view text) {
  std::size_t longest = 0, run = 0;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return std::string(std::max<std::size_t>(3, longest + 1), '`');
}

}  // namespace capsim::scenarios
