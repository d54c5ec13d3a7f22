// `capsim plan`: a cluster scenario's workloads packed onto shared node pools.
#pragma once

#include "capsim/scenarios/cluster.hpp"
#include "output.hpp"

namespace capsim::cli {
void add_cluster_command(CLI::App& app, const GlobalOptions& global, int& exit_code);

// A loaded cluster scenario planned and printed as `capsim plan FILE` prints it (and its
// report written, when `report` is not empty: a .csv report is one file per table, or the one
// `table` names); `capsim run` of a cluster file comes here.
int print_cluster_plan(const scenarios::ClusterScenario& scenario, const hardware::Catalog& catalog, Format format,
                       const std::string& report, const std::string& table = {});
}
