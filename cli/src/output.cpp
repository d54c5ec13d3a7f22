#include "output.hpp"

#include "capsim/core/files.hpp"
#include "completion.hpp"

#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
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
  // A transform of our own rather than CLI11's CheckedTransformer, whose refusal reads
  // "Check md value in {json->1,table->0} OR {1,0} FAILED".
  auto* option = cmd.add_option("--format,-f", format, "Output format: " + names);
  complete_values(option, choices);
  option->transform(CLI::Validator(
          [allowed, names](std::string& value) -> std::string {
            std::string lower;
            for (char c : value) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            const auto it = allowed.find(lower);
            if (it == allowed.end()) return "'" + value + "' is not a format of this command (expected " + names + ")";
            value = std::to_string(static_cast<int>(it->second));
            return "";
          },
          "FORMAT"))
      ->option_text("FORMAT");
}

std::string with_schema(const std::string& json, std::string_view name) {
  const auto brace = json.find('{');
  if (brace == std::string::npos) return json;
  const bool multiline = brace + 1 < json.size() && json[brace + 1] == '\n';
  const std::string member = "\"schema\": \"" + std::string(name) + "\"";
  const bool empty = json.find_first_not_of(" \n", brace + 1) == json.find('}', brace + 1);
  if (multiline) return json.substr(0, brace + 1) + "\n  " + member + (empty ? "" : ",") + json.substr(brace + 1);
  return json.substr(0, brace + 1) + member + (empty ? "" : ", ") + json.substr(brace + 1);
}

void print_table(const scenarios::Table& t, Format format) {
  switch (format) {
    case Format::csv: std::cout << scenarios::render_csv(t); break;
    case Format::md: std::cout << scenarios::render_markdown(t); break;
    default: std::cout << scenarios::render_text(t); break;
  }
}

namespace {

std::atomic<bool> g_interrupted{false};

extern "C" void on_interrupt(int) { g_interrupted = true; }

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

TerminalProgress::TerminalProgress() : enabled_(::isatty(STDERR_FILENO) == 1), start_(now_seconds()) {
  g_interrupted = false;
  std::signal(SIGINT, on_interrupt);
}

TerminalProgress::~TerminalProgress() {
  std::signal(SIGINT, SIG_DFL);
  if (drawn_) std::cerr << "\r\033[K" << std::flush;
}

void TerminalProgress::progress(double fraction, std::string_view what) {
  if (!enabled_ || now_seconds() - start_ < 0.5) return;
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(fraction * kWidth);
  std::cerr << "\r" << what << " [" << std::string(filled, '#') << std::string(kWidth - filled, ' ') << "] "
            << static_cast<int>(fraction * 100) << " %" << std::flush;
  drawn_ = true;
}

bool TerminalProgress::cancelled() const { return g_interrupted; }

GlobalOptions for_scenario(const GlobalOptions& g, const std::string& scenario_file) {
  GlobalOptions out = g;
  for (const auto& p : scenarios::scenario_catalog_overlays(scenario_file)) out.scenario_overlays.push_back(p.string());
  return out;
}

Result<scenarios::PriceAgePolicy> price_age(const GlobalOptions& g) { return scenarios::price_age_policy(g.max_price_age); }

Result<scenarios::Workspace> open_workspace(const GlobalOptions& g, hardware::Access access,
                                            hardware::OnCorrupt on_corrupt) {
  std::vector<std::filesystem::path> overlays(g.scenario_overlays.begin(), g.scenario_overlays.end());
  overlays.insert(overlays.end(), g.catalog_overlays.begin(), g.catalog_overlays.end());
  auto ws = scenarios::open_workspace({g.catalog_dir, g.db_path, access, on_corrupt, g.data_dir, overlays});
  if (ws)
    for (const auto& w : ws->store.warnings()) std::cerr << w << "\n";
  return ws;
}

int write_output(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    std::cout << text;
    return kExitOk;
  }
  if (auto status = write_file_atomically(path, text); !status.empty()) return report_errors(status);
  return kExitOk;
}

StandardOutput::StandardOutput() : line_buffered_(::isatty(STDOUT_FILENO) == 1) {
  setp(buffer_, buffer_ + sizeof buffer_);
}

bool StandardOutput::drain() {
  const char* p = pbase();
  while (p < pptr() && error_ == 0) {
    const ssize_t n = ::write(STDOUT_FILENO, p, static_cast<std::size_t>(pptr() - p));
    if (n < 0 && errno == EINTR) continue;
    if (n > 0) {
      p += n;
    } else {
      error_ = n == 0 ? EIO : errno;
    }
  }
  // After a failure the rest is dropped: nothing more can reach the reader in order.
  setp(buffer_, buffer_ + sizeof buffer_);
  return error_ == 0;
}

StandardOutput::int_type StandardOutput::overflow(int_type c) {
  if (error_ != 0 || !drain()) return traits_type::eof();
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  *pptr() = traits_type::to_char_type(c);
  pbump(1);
  return c;
}

std::streamsize StandardOutput::xsputn(const char* text, std::streamsize count) {
  const std::streamsize written = std::streambuf::xsputn(text, count);
  if (line_buffered_ && std::memchr(text, '\n', static_cast<std::size_t>(written)) != nullptr) sync();
  return written;
}

int StandardOutput::sync() { return error_ == 0 && drain() ? 0 : -1; }

int finish_standard_output(int exit_code) {
  std::cout.flush();
  const auto* out = dynamic_cast<const StandardOutput*>(std::cout.rdbuf());
  const int error = out != nullptr ? out->error() : (std::cout ? 0 : EIO);
  if (error == 0 || error == EPIPE) return exit_code;
  Diagnostic d{{"standard output"}, "", std::string("cannot write the command's output: ") + std::strerror(error),
               "what was printed is incomplete"};
  return report_errors({environment_failure(std::move(d))});
}

int report_errors(const std::vector<Diagnostic>& errors) {
  std::cerr << format_diagnostics(errors);
  if (errors.size() > 1) std::cerr << errors.size() << " errors\n";
  for (const auto& e : errors)
    if (e.cause == Cause::environment) return kExitEnvironment;
  return kExitBadInput;
}

}  // namespace capsim::cli
