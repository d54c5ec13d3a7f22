#pragma once

#include <CLI/CLI.hpp>

#include "output.hpp"

namespace capsim::cli {

// `capsim validate`, `capsim schema`, `capsim models`.
void add_scenario_commands(CLI::App& app, const GlobalOptions& global, int& exit_code);

}  // namespace capsim::cli
