#include "capsim/core/text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

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

}  // namespace

std::string printable(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if ((u < 0x20 && c != '\t') || u == 0x7f) {
      append_hex_escape(out, u);
    } else {
      out += c;
    }
  }
  return out;
}

std::string xml_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
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
        // XML 1.0 allows no other control character, not even as &#N;: show it as \xHH.
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          append_hex_escape(out, static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
  return out;
}

}  // namespace capsim
