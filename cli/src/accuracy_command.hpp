// `capsim accuracy`: published measurements vs the models' predictions.
#pragma once

#include "output.hpp"

namespace capsim::cli {
void add_accuracy_command(CLI::App& app, const GlobalOptions& global, int& exit_code);
}
