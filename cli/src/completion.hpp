// `capsim completion bash|zsh|fish`: a shell completion script made from the command tree
// itself, so it always knows every command and option this capsim has.
#pragma once

#include <CLI/CLI.hpp>

namespace capsim::cli {

void add_completion_command(CLI::App& app, int& exit_code);

}  // namespace capsim::cli
