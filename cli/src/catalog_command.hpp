#pragma once

#include <CLI/CLI.hpp>

#include "output.hpp"

namespace capsim::cli {

// `capsim catalog list|show|validate`. Sets `exit_code` when the subcommand runs.
void add_catalog_command(CLI::App& app, const GlobalOptions& global, int& exit_code);

}  // namespace capsim::cli
