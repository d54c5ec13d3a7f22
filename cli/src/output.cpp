#include "output.hpp"

#include <map>

namespace capsim::cli {

void add_format_option(CLI::App& cmd, Format& format, const std::vector<std::string>& choices) {
  static const std::map<std::string, Format> all = {
      {"table", Format::table}, {"text", Format::table}, {"json", Format::json},
      {"csv", Format::csv},     {"md", Format::md}};
  std::map<std::string, Format> allowed;
  for (const auto& c : choices) allowed.emplace(c, all.at(c));
  std::string names;
  for (const auto& c : choices) names += (names.empty() ? "" : "|") + c;
  cmd.add_option("--format,-f", format, "Output format: " + names)
      ->transform(CLI::CheckedTransformer(allowed, CLI::ignore_case))
      ->option_text("FORMAT");
}

void print_table(const scenarios::Table& t, Format format) {
  switch (format) {
    case Format::csv: std::cout << scenarios::render_csv(t); break;
    case Format::md: std::cout << scenarios::render_markdown(t); break;
    default: std::cout << scenarios::render_text(t); break;
  }
}

int report_errors(const std::vector<Diagnostic>& errors) {
  std::cerr << format_diagnostics(errors);
  if (errors.size() > 1) std::cerr << errors.size() << " errors\n";
  return kExitBadInput;
}

}  // namespace capsim::cli
