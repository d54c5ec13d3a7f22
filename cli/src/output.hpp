// Shared pieces of the command line: output formats, exit codes, error printing.
#pragma once

#include <CLI/CLI.hpp>

#include <iostream>
#include <streambuf>
#include <string>
#include <vector>

#include "capsim/core/progress.hpp"
#include "capsim/core/result.hpp"
#include "capsim/scenarios/prices.hpp"
#include "capsim/scenarios/table.hpp"
#include "capsim/scenarios/workspace.hpp"

namespace capsim::cli {

// Exit codes shared by every subcommand (see README "Exit codes").
inline constexpr int kExitOk = 0;
inline constexpr int kExitExpectationFailed = 1;
inline constexpr int kExitBadInput = 2;
// The environment failed, not the input: a full disk, an unwritable file, a corrupt,
// unreadable or newer database, a bad TMPDIR. Retrying elsewhere may work; editing the
// scenario will not.
inline constexpr int kExitEnvironment = 3;

enum class Format { table, json, csv, md };

// Adds --format with the given choices to a subcommand.
void add_format_option(CLI::App& cmd, Format& format, const std::vector<std::string>& choices);

// A JSON object's text with "schema": NAME (e.g. "capsim-size/1") as its first member, so a
// program reading it knows which document and version it holds; the rest unchanged.
std::string with_schema(const std::string& json, std::string_view name);

// Prints a table in the chosen tabular format (table, csv, md).
void print_table(const scenarios::Table& t, Format format);

// Prints diagnostics to stderr and returns kExitEnvironment when any of them is an
// environment failure (Cause::environment), else kExitBadInput.
int report_errors(const std::vector<Diagnostic>& errors);

// Writes an export's text to standard output (`path` empty or "-") or to the file
// (write_file_atomically: replaced atomically, or a device or FIFO written in place); kExitOk,
// or the write's errors reported.
int write_output(const std::string& path, const std::string& text);

// Standard output as capsim writes it: main installs one over std::cout's buffer for the whole
// run. Bytes go to file descriptor 1 through a buffer of its own (flushed at each line on a
// terminal, as stdio does), every write checked; the first failure's errno is kept (std::cout
// turns bad and later text is dropped), so that the end of main can tell a full disk from a
// reader that went away. Not thread-safe, like std::cout; it does not flush on destruction
// (finish_standard_output does).
class StandardOutput : public std::streambuf {
 public:
  StandardOutput();
  // errno of the first write that failed; 0 while every write succeeded.
  int error() const { return error_; }

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* text, std::streamsize count) override;
  int sync() override;

 private:
  bool drain();
  char buffer_[65536];
  bool line_buffered_;
  int error_ = 0;
};

// Flushes std::cout and settles the exit code of a command that returned `exit_code`:
//   - the output was all written: `exit_code`;
//   - the reader went away (EPIPE, `capsim ... | head -1`): `exit_code`, with no message, since
//     whoever closed the pipe had read what they wanted;
//   - any other failure (a full disk, an I/O error): "standard output: error: ..." on stderr and
//     kExitEnvironment, since what was printed is incomplete.
// SIGPIPE must be ignored (main does), or the first write to a closed pipe kills the process.
int finish_standard_output(int exit_code);

// A progress bar on stderr when it is a terminal and the work has run for half a second;
// silent otherwise (pipes, CI logs). Ctrl-C (SIGINT) while it exists cancels the work:
// cancelled() turns true and the command writes nothing.
class TerminalProgress : public ProgressObserver {
 public:
  TerminalProgress();
  ~TerminalProgress() override;
  void progress(double fraction, std::string_view what) override;
  bool cancelled() const override;

 private:
  bool enabled_;
  bool drawn_ = false;
  double start_;
};

// Exit code of a command stopped by Ctrl-C (128 + SIGINT, as shells report it).
inline constexpr int kExitInterrupted = 130;

// Global options every subcommand may use.
struct GlobalOptions {
  std::string db_path;
  std::string catalog_dir;
  std::string data_dir;  // --data: the directory holding catalog/, validation/ and examples/
  // --catalog-overlay (repeatable): a user's own quotes and entries on top of the catalog,
  // after those of $CAPSIM_CATALOG_OVERLAY.
  std::vector<std::string> catalog_overlays;
  // A scenario's catalog.overlays, resolved against its file: set by the command that read it.
  std::vector<std::string> scenario_overlays;
  // --max-price-age: a plan warns about a price older than this many months.
  std::string max_price_age = "12mo";
};

// `g` with the scenario file's catalog.overlays (scenarios::scenario_catalog_overlays) added:
// for the commands that open the workspace to run one scenario.
GlobalOptions for_scenario(const GlobalOptions& g, const std::string& scenario_file);

// --max-price-age as the plans' price-age policy; an error naming the option when it does not parse.
Result<scenarios::PriceAgePolicy> price_age(const GlobalOptions& g);

// Opens the workspace for a command and prints the store's warnings (a corrupt database
// moved aside) to stderr. Commands that only read pass Access::read_only; those that show
// the run history pass OnCorrupt::fail, since history cannot be rebuilt.
Result<scenarios::Workspace> open_workspace(const GlobalOptions& g, hardware::Access access,
                                            hardware::OnCorrupt on_corrupt = hardware::OnCorrupt::rebuild);

}  // namespace capsim::cli
