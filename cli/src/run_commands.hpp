#pragma once

#include <CLI/CLI.hpp>

#include "output.hpp"

namespace capsim::cli {

// `capsim run` and `capsim history list|show|diff`.
void add_run_commands(CLI::App& app, const GlobalOptions& global, int& exit_code);

}  // namespace capsim::cli
