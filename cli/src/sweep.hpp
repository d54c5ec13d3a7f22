// Sweeps: every point of one or two scenario keys, run by this machine's cores or, beyond
// one machine, by a Kubernetes Indexed Job whose pods each run one shard.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "output.hpp"

namespace capsim::cli {

// `capsim run --sweep SPEC [--shard I/N]`: the points (or this shard's) in parallel child
// processes, each stored in the run history with its point; prints one table, or with
// Format::json one capsim-sweep/1 document holding each point's run JSON.
int run_sweep(const GlobalOptions& g, const std::string& file, const std::string& spec, const std::string& shard,
              const std::vector<std::string>& set, int jobs, bool check, Format format = Format::table);

// `capsim history merge SHARD_DB...`: the shards' runs into this database, then the table
// (or the capsim-sweep/1 document).
int run_history_merge(const GlobalOptions& g, const std::vector<std::string>& shards, const std::string& spec,
                      Format format = Format::table);

// `capsim sweep SCENARIO --sweep SPEC --shards N`: the Indexed Job manifest.
void add_sweep_command(CLI::App& app, const GlobalOptions& global, int& exit_code);

}  // namespace capsim::cli
