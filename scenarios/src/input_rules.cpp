// The rules for what a scenario or cluster file names and holds (scenario.hpp): one
// function each, which both loaders call.
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <sstream>

#include "capsim/core/text.hpp"
#include "capsim/scenarios/scenario.hpp"

namespace capsim::scenarios {
namespace {

// Every scalar of one document, as the parser decodes it, with its place; aliases are events
// of their own, so a "billion laughs" document is walked in the time it takes to read.
class ControlCharacterScan : public YAML::EventHandler {
 public:
  explicit ControlCharacterScan(std::string file) : file_(std::move(file)) {}
  std::vector<Diagnostic> errors;

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark& m, const std::string& tag, YAML::anchor_t, const std::string& value) override {
    check(m, value);
    check(m, tag);
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string& tag, YAML::anchor_t, YAML::EmitterStyle::value) override {
    check(m, tag);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& m, const std::string& tag, YAML::anchor_t, YAML::EmitterStyle::value) override {
    check(m, tag);
  }
  void OnMapEnd() override {}

 private:
  void check(const YAML::Mark& m, const std::string& text) {
    constexpr std::size_t kMostErrors = 20;  // a binary file would give one per value
    if (errors.size() >= kMostErrors) return;
    if (const auto bad = first_control_character(text, true))
      errors.push_back({{file_, m.line + 1, m.column + 1},
                        "",
                        "contains the control character " + code_point_name(bad->code),
                        "remove it; text from this file is printed to terminals and written to reports and exports"});
  }
  std::string file_;
};

}  // namespace

Result<std::filesystem::path> named_input_path(const std::string& referring_file, const std::string& written,
                                               const std::string& what, const std::string& referrer) {
  const std::filesystem::path as_written = written;
  const std::filesystem::path base = std::filesystem::path(referring_file).parent_path();
  const std::filesystem::path path = as_written.is_relative() ? base / as_written : as_written;
  const char* allow = std::getenv("CAPSIM_ALLOW_TRACE_OUTSIDE");
  if (allow != nullptr && std::string(allow) == "1") return path;
  std::error_code ec;
  // Absolute first: weakly_canonical leaves a relative path of a missing file relative. Links
  // are resolved, so one beside the file that leads out of its folder is outside too.
  const auto root = std::filesystem::weakly_canonical(std::filesystem::absolute(base.empty() ? "." : base, ec), ec);
  const auto target = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
  const auto rel = target.lexically_relative(root);
  if (as_written.is_absolute() || ec || rel.empty() || *rel.begin() == "..")
    return Diagnostic{{},
                      "",
                      "the " + what + " '" + written + "' is outside the " + referrer + "'s directory",
                      "put it beside the " + referrer + " or in a folder below it, or set CAPSIM_ALLOW_TRACE_OUTSIDE=1 for a " +
                          referrer + " you trust"};
  return path;
}

std::vector<Diagnostic> control_character_errors(const std::string& file, const std::string& text) {
  std::istringstream stream(text);
  YAML::Parser parser(stream);
  ControlCharacterScan scan(file);
  parser.HandleNextDocument(scan);
  return std::move(scan.errors);
}

}  // namespace capsim::scenarios
