// `capsim completion bash|zsh|fish`: a shell completion script made from the command tree
// itself, so it always knows every command and option this capsim has, and the values its
// options take.
//
// Values are completed two ways:
//   - words fixed in capsim itself (output formats, export targets, catalog sections, model
//     presets, CLI11 IsMember choices such as --mode train|infer) are written into the script
//     when it is generated;
//   - ids that live in the catalog (GPUs, node types, any entry) are looked up each time the
//     user completes, by the hidden command `capsim __complete gpus|node-types|ids`, in the
//     catalog the command line names then (--data, --catalog, else $CAPSIM_DATA/$CAPSIM_CATALOG,
//     else the shipped one): an edited or imported catalog is completed without regenerating
//     the script, and the script installed by the Debian package stays valid after an upgrade.
// Not thread-safe: it annotates and reads CLI11 options, which are built on one thread.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "output.hpp"

namespace capsim::cli {

// What a catalog lookup completes: `capsim __complete KIND` prints these ids, one a line.
enum class CatalogValues {
  gpus,        // GPU and TPU ids (h100-sxm-80gb)
  node_types,  // instance and server ids: what --node-type takes (aws-p5-48xlarge, dgx-a100)
  ids,         // every entry's id: what `catalog show` takes
};

// Marks an option (or positional) as completing these fixed words. Returns the option.
CLI::Option* complete_values(CLI::Option* option, const std::vector<std::string>& words);
// Marks an option (or positional) as completing catalog ids, looked up at completion time.
CLI::Option* complete_from_catalog(CLI::Option* option, CatalogValues values);

// Adds `completion SHELL` and the hidden `__complete KIND` it calls.
void add_completion_command(CLI::App& app, const GlobalOptions& global, int& exit_code);

}  // namespace capsim::cli
