#pragma once

#include <CLI/CLI.hpp>

#include "output.hpp"

namespace capsim::cli {

// `capsim memory` and `capsim size`.
void add_plan_commands(CLI::App& app, const GlobalOptions& global, int& exit_code);

}  // namespace capsim::cli
