#include "capsim/core/result.hpp"

namespace capsim {

std::string format_diagnostic(const Diagnostic& d) {
  std::string out;
  if (!d.where.file.empty()) {
    out += d.where.file;
    if (d.where.line > 0) {
      out += ':' + std::to_string(d.where.line);
      if (d.where.column > 0) out += ':' + std::to_string(d.where.column);
    }
    out += ": ";
  }
  out += "error: ";
  if (!d.key_path.empty()) out += d.key_path + ": ";
  out += d.message;
  if (!d.hint.empty()) out += " (" + d.hint + ")";
  return out;
}

std::string format_diagnostics(const std::vector<Diagnostic>& ds) {
  std::string out;
  for (const auto& d : ds) out += format_diagnostic(d) + '\n';
  return out;
}

}  // namespace capsim
