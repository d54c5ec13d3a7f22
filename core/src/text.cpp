#include "capsim/core/text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace capsim {

std::string significant(double v, int digits) {
  char buf[400];
  if (!std::isfinite(v)) {
    std::snprintf(buf, sizeof buf, "%g", v);  // callers keep these out of outputs; never an exponent
    return buf;
  }
  if (v == 0) return "0";
  digits = std::max(1, digits);
  // Round to `digits` significant digits first ("%.*e"), then print that value in plain
  // decimals: 1.5e+09 -> "1500000000", 1.2e-05 -> "0.000012".
  std::snprintf(buf, sizeof buf, "%.*e", digits - 1, v);
  const double rounded = std::strtod(buf, nullptr);
  const int exponent = static_cast<int>(std::floor(std::log10(std::fabs(rounded))));
  const int decimals = std::clamp(digits - 1 - exponent, 0, 30);
  std::snprintf(buf, sizeof buf, "%.*f", decimals, rounded);
  std::string out = buf;
  if (decimals > 0) {  // as %g: no trailing zeros, no bare point
    while (out.back() == '0') out.pop_back();
    if (out.back() == '.') out.pop_back();
  }
  return out;
}

std::string plural(long long n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

namespace {

// A control character as the four visible characters \xHH.
void append_hex_escape(std::string& out, unsigned char u) {
  static const char* hex = "0123456789abcdef";
  out += "\\x";
  out += hex[u >> 4];
  out += hex[u & 15];
}

bool is_hidden_format_character(char32_t c) {
  return c == 0x061C || c == 0x200E || c == 0x200F || (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069) ||
         c == 0x2028 || c == 0x2029;
}

// The code point of the UTF-8 sequence at text[i] and its length; {0, 0} when the bytes there
// are no well-formed sequence of two or three bytes (longer ones hold no control character).
std::pair<char32_t, std::size_t> decode(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const auto continuation = [&](std::size_t k) { return k < text.size() && (byte(k) & 0xC0) == 0x80; };
  const unsigned char lead = byte(i);
  if ((lead & 0xE0) == 0xC0 && continuation(i + 1))
    return {static_cast<char32_t>(((lead & 0x1F) << 6) | (byte(i + 1) & 0x3F)), 2};
  if ((lead & 0xF0) == 0xE0 && continuation(i + 1) && continuation(i + 2))
    return {static_cast<char32_t>(((lead & 0x0F) << 12) | ((byte(i + 1) & 0x3F) << 6) | (byte(i + 2) & 0x3F)), 3};
  return {0, 0};
}

bool is_control(char32_t c, bool allow_newline_and_tab) {
  if (allow_newline_and_tab && (c == '\n' || c == '\t')) return false;
  return c < 0x20 || c == 0x7F || (c >= 0x80 && c <= 0x9F) || is_hidden_format_character(c);
}

}  // namespace

std::optional<ControlCharacter> first_control_character(std::string_view text, bool allow_newline_and_tab) {
  for (std::size_t i = 0; i < text.size();) {
    const auto u = static_cast<unsigned char>(text[i]);
    if (u < 0x80) {
      if (is_control(u, allow_newline_and_tab)) return ControlCharacter{i, u};
      ++i;
      continue;
    }
    const auto [code, length] = decode(text, i);
    if (length == 0) {
      ++i;
      continue;
    }
    if (is_control(code, allow_newline_and_tab)) return ControlCharacter{i, code};
    i += length;
  }
  return std::nullopt;
}

std::string code_point_name(char32_t code) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "U+%04X", static_cast<unsigned>(code));
  return buf;
}

std::string printable(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const char c = s[i];
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x80) {
      const auto [code, length] = decode(s, i);
      if (length > 0 && is_control(code, true)) {
        char buf[16];
        std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(code));
        out += buf;
        i += length;
        continue;
      }
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if ((u < 0x20 && c != '\t') || u == 0x7f) {
      append_hex_escape(out, u);
    } else {
      out += c;
    }
    ++i;
  }
  return out;
}

std::string xml_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\n':
      case '\t': out += c; break;
      case '\r': out += "&#13;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          // XML 1.0 allows no other control character, not even as &#N;: show it as \xHH.
          append_hex_escape(out, static_cast<unsigned char>(c));
        } else if (static_cast<unsigned char>(c) >= 0x80) {
          // A C1 control or a bidirectional override is shown as printable() shows it.
          const auto [code, length] = decode(s, i);
          if (length > 0 && is_control(code, true)) {
            out += printable(s.substr(i, length));
            i += length - 1;
          } else {
            out += c;
          }
        } else {
          out += c;
        }
    }
  }
  return out;
}

}  // namespace capsim
