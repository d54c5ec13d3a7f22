#include "capsim/core/result.hpp"

#include "capsim/core/text.hpp"

namespace capsim {

// Every part may carry text from the user's file (a key, a value, a path): control
// characters are shown escaped, so one diagnostic is one line.
std::string format_location(const SourceLocation& where) {
  if (where.file.empty()) return {};
  std::string out = where.file;
  if (where.line > 0) {
    out += ':' + std::to_string(where.line);
    if (where.column > 0) out += ':' + std::to_string(where.column);
  }
  return out;
}

std::string format_diagnostic(const Diagnostic& d) {
  std::string out;
  if (!d.where.file.empty()) out += printable(format_location(d.where)) + ": ";
  out += "error: ";
  if (!d.key_path.empty()) out += printable(d.key_path) + ": ";
  out += printable(d.message);
  if (!d.hint.empty()) out += " (" + printable(d.hint) + ")";
  return out;
}

std::string format_diagnostics(const std::vector<Diagnostic>& ds) {
  std::string out;
  for (const auto& d : ds) out += format_diagnostic(d) + '\n';
  return out;
}

}  // namespace capsim
