// Shared pieces of the command line: output formats, exit codes, error printing.
#pragma once

#include <CLI/CLI.hpp>

#include <iostream>
#include <string>
#include <vector>

#include "capsim/core/result.hpp"
#include "capsim/scenarios/table.hpp"

namespace capsim::cli {

// Exit codes shared by every subcommand (see README "Exit codes").
inline constexpr int kExitOk = 0;
inline constexpr int kExitExpectationFailed = 1;
inline constexpr int kExitBadInput = 2;

enum class Format { table, json, csv, md };

// Adds --format with the given choices to a subcommand.
void add_format_option(CLI::App& cmd, Format& format, const std::vector<std::string>& choices);

// Prints a table in the chosen tabular format (table, csv, md).
void print_table(const scenarios::Table& t, Format format);

// Prints diagnostics to stderr and returns kExitBadInput.
int report_errors(const std::vector<Diagnostic>& errors);

// Global options every subcommand may use.
struct GlobalOptions {
  std::string db_path;
  std::string catalog_dir;
};

}  // namespace capsim::cli
