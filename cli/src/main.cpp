// capsim: capacity planning and cluster sizing for ML workloads.
#include <CLI/CLI.hpp>

#include <csignal>
#include <new>

#include "about.hpp"
#include "accuracy_command.hpp"
#include "capsim/core/suggest.hpp"
#include "capsim/version.hpp"
#include "catalog_command.hpp"
#include "cluster_command.hpp"
#include "completion.hpp"
#include "output.hpp"
#include "plan_commands.hpp"
#include "run_commands.hpp"
#include "scenario_commands.hpp"
#include "sweep.hpp"

namespace {

using namespace capsim;
using namespace capsim::cli;

// The deepest subcommand the parser entered: "capsim catalog list" -> the list App.
const CLI::App* deepest(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands())
    if (sub->parsed()) return deepest(*sub);
  return &app;
}

std::string command_path(const CLI::App* cmd) {
  std::string path;
  for (const CLI::App* a = cmd; a != nullptr && a->get_parent() != nullptr; a = a->get_parent())
    path = a->get_name() + (path.empty() ? "" : " " + path);
  return path;
}

// The first word after the command path that is no option (nor a global option's value):
// the word a user meant as a command or argument. "" when there is none.
std::string word_after(const std::string& path, int argc, char** argv) {
  std::vector<std::string> want;
  for (std::size_t at = 0; at < path.size();) {
    const auto space = path.find(' ', at);
    want.push_back(path.substr(at, space == std::string::npos ? std::string::npos : space - at));
    at = space == std::string::npos ? path.size() : space + 1;
  }
  std::size_t matched = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--db" || a == "--catalog" || a == "--data" || a == "--catalog-overlay" || a == "--max-price-age") {
      ++i;
      continue;
    }
    if (a.starts_with("-")) continue;
    if (matched < want.size() && a == want[matched]) {
      ++matched;
      continue;
    }
    if (matched == want.size()) return std::string(a);
  }
  return {};
}

// A parse error as capsim writes errors ("error: WHERE: WHAT (HINT)"), not CLI11's text.
std::string parse_error_text(const CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
  const CLI::App* cmd = deepest(app);
  const std::string path = command_path(cmd);
  const std::string help = "see 'capsim " + (path.empty() ? "" : path + " ") + "--help'";
  std::vector<std::string> commands, options;
  for (const CLI::App* sub : cmd->get_subcommands([](const CLI::App* s) { return s->get_group() != ""; }))
    commands.push_back(sub->get_name());
  for (const CLI::Option* o : cmd->get_options([](const CLI::Option* o) { return o->get_group() != ""; }))
    for (const auto& name : o->get_lnames()) options.push_back("--" + name);
  const std::string what = e.what();
  const std::string where = path.empty() ? "" : path + ": ";
  // By type: CLI11 names some errors after the subcommand that raised them.
  const bool extras = dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr;
  const bool required = dynamic_cast<const CLI::RequiredError*>(&e) != nullptr;
  // A command that takes subcommands, given a word that names none: "capsim sise", "history lst".
  if (!commands.empty() && (required || extras)) {
    const std::string word = word_after(path, argc, argv);
    if (word.empty()) {
      std::string list;
      for (const auto& c : commands) list += (list.empty() ? "" : ", ") + c;
      return "error: " + where + "missing command, one of: " + list + " (" + help + ")\n";
    }
    const std::string hint = did_you_mean(word, commands);
    return "error: " + where + "unknown command '" + word + "' (" +
           (hint.empty() ? (path.empty() ? std::string("the commands are listed by 'capsim --help'") : help) : hint) +
           ")\n";
  }
  if (extras) {
    // CLI11 lists the extra words; report the first of them as the user wrote them, options first.
    std::string first;
    for (int i = 1; i < argc && first.empty(); ++i)
      if (std::string_view(argv[i]).starts_with("-") && what.find(argv[i]) != std::string::npos) first = argv[i];
    for (int i = argc - 1; i > 0 && first.empty(); --i)
      if (what.find(argv[i]) != std::string::npos) first = argv[i];
    if (first.starts_with("-")) {
      const std::string hint = did_you_mean(first.substr(0, first.find('=')), options);
      return "error: " + where + "unknown option '" + first + "' (" + (hint.empty() ? help : hint) + ")\n";
    }
    return "error: " + where + "unexpected argument '" + first + "' (" + help + ")\n";
  }
  if (required && what.ends_with(" is required"))
    return "error: " + where + "missing " + what.substr(0, what.size() - 12) + " (" + help + ")\n";
  return "error: " + where + what + " (" + help + ")\n";
}

// Puts std::cout's own buffer back when main returns: the static destructors that run after
// it may still flush std::cout, and the StandardOutput is gone by then.
class CoutBufferSwap {
 public:
  explicit CoutBufferSwap(std::streambuf* buffer) : previous_(std::cout.rdbuf(buffer)) {}
  ~CoutBufferSwap() { std::cout.rdbuf(previous_); }
  CoutBufferSwap(const CoutBufferSwap&) = delete;
  CoutBufferSwap& operator=(const CoutBufferSwap&) = delete;

 private:
  std::streambuf* previous_;
};

// The command line parsed and the chosen command run; its exit code.
int run_command(CLI::App& app, int argc, char** argv, GlobalOptions& global, const int& exit_code) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion&) {
    // --data may come after --version, which stops the parse: read it here.
    for (int i = 1; i + 1 < argc; ++i)
      if (std::string_view(argv[i]) == "--data") global.data_dir = argv[i + 1];
    for (int i = 1; i < argc; ++i)
      if (std::string_view(argv[i]).starts_with("--data=")) global.data_dir = std::string(argv[i]).substr(7);
    const auto report = version_report(global);
    std::cout << report.text;
    return report.exit_code;
  } catch (const CLI::ParseError& e) {
    std::cerr << parse_error_text(app, e, argc, argv);
    return kExitBadInput;
  }
  return exit_code;
}

// Builds the command line, parses it and runs the chosen command; its exit code.
int capsim_main(int argc, char** argv) {
  CLI::App app{"capsim: capacity planning and cluster sizing for ML workloads", "capsim"};
  // The version text names the data directory, so --data given before or after it counts.
  app.set_version_flag("--version,-V", std::string("capsim " CAPSIM_VERSION),
                       "Print the version, git commit, data directory and the catalog's newest date");
  app.require_subcommand(1);
  GlobalOptions global;
  app.add_option("--db", global.db_path, "SQLite database (default: $CAPSIM_DB or the XDG data directory)")
      ->option_text("PATH");
  app.add_option("--catalog", global.catalog_dir,
                 "Catalog YAML directory (default: $CAPSIM_CATALOG, else DATA/catalog)")
      ->option_text("DIR");
  app.add_option("--catalog-overlay", global.catalog_overlays,
                 "Your own quotes and entries on top of the catalog: a directory of YAML files or one file, "
                 "same format, every figure with source and as_of (repeatable; also $CAPSIM_CATALOG_OVERLAY, "
                 "':'-separated, and a scenario's catalog.overlays)")
      ->option_text("DIR")
      ->allow_extra_args(false);
  app.add_option("--max-price-age", global.max_price_age,
                 "Warn about a price older than this in plans and cost outputs (default 12mo; e.g. 6mo, 1y, 90d)")
      ->option_text("AGE");
  app.add_option("--data", global.data_dir,
                 "Data directory with catalog/, validation/ and examples/ (default: $CAPSIM_DATA, else "
                 "../share/capsim beside the executable)")
      ->option_text("DIR");
  app.footer(
      "Examples:\n"
      "  capsim size scenarios/examples/llama-70b-pretrain.yaml\n"
      "  capsim run --check --junit report.xml scenarios/examples/lora-7b-one-node.yaml\n"
      "  capsim catalog list gpus --where 'memory>=80 GB' --sort memory_bandwidth --desc\n"
      "  capsim export k8s scenarios/examples/llama2-70b-chat-h100.yaml -o serving.yaml\n"
      "  source <(capsim completion bash)\n"
      "Output files (-o, --junit, --report, --chart) are replaced whole and atomically; a device, a FIFO or\n"
      "/dev/stdout is written in place, and a symbolic link to a file is refused (name the file itself).\n"
      "Exit codes: 0 ok, 1 an expect: failed (with --check), 2 bad input, 3 the environment failed (also a\n"
      "full disk or an I/O error on standard output, and running out of memory). A reader that closes the\n"
      "pipe early (capsim ... | head) is no failure: the command's own exit code, no message.");
  app.fallthrough();

  int exit_code = kExitOk;
  add_catalog_command(app, global, exit_code);
  add_scenario_commands(app, global, exit_code);
  add_plan_commands(app, global, exit_code);
  add_cluster_command(app, global, exit_code);
  add_run_commands(app, global, exit_code);
  add_sweep_command(app, global, exit_code);
  add_accuracy_command(app, global, exit_code);
  add_completion_command(app, global, exit_code);

  return run_command(app, argc, argv, global, exit_code);
}

}  // namespace

int main(int argc, char** argv) {
  // A reader that closes the pipe (`capsim ... | head -1`) makes writes fail with EPIPE, which
  // finish_standard_output takes quietly, instead of killing capsim with SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  StandardOutput standard_output;
  const CoutBufferSwap swap(&standard_output);
  int code = kExitOk;
  try {
    code = capsim_main(argc, argv);
  } catch (const std::bad_alloc&) {
    // Anywhere in any command: a scenario that needs more memory than the process may have
    // (a memory limit, `ulimit -v`) is the environment's failure, reported, never an abort.
    std::cout.flush();
    code = report_errors({environment_failure(
        Diagnostic{{}, "", "out of memory: the command needed more memory than this process may use",
                   "raise the memory limit (ulimit -v, the container's), or ask a smaller question"})});
  }
  return finish_standard_output(code);
}
