// `capsim plan`: a cluster scenario's workloads packed onto shared node pools.
#pragma once

#include "output.hpp"

namespace capsim::cli {
void add_cluster_command(CLI::App& app, const GlobalOptions& global, int& exit_code);
}
