#include "capsim/core/text.hpp"

#include <cstdio>

namespace capsim {

std::string significant(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
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
          static const char* hex = "0123456789abcdef";
          const auto u = static_cast<unsigned char>(c);
          out += "\\x";
          out += hex[u >> 4];
          out += hex[u & 15];
        } else {
          out += c;
        }
    }
  }
  return out;
}

}  // namespace capsim
