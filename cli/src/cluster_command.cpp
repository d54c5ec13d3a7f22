// `capsim plan`: size every workload of a cluster scenario, pack them onto node pools over a
// week, and print the pools, the packing per node, the timeline and the cost.
#include "cluster_command.hpp"

#include "capsim/scenarios/cluster.hpp"

namespace capsim::cli {
namespace {

struct ClusterOptions {
  std::string file;
  Format format = Format::table;
};

int run_cluster_command(const GlobalOptions& g, const ClusterOptions& o) {
  auto ws = open_workspace(g, hardware::Access::read_only);
  if (!ws) return report_errors(ws.errors());
  auto scenario = scenarios::load_cluster_file(o.file, *ws->catalog);
  if (!scenario) return report_errors(scenario.errors());
  auto plan = scenarios::plan_cluster(*scenario, *ws->catalog);
  if (!plan) return report_errors(plan.errors());
  std::cout << (o.format == Format::json ? scenarios::cluster_plan_json(*plan) : scenarios::cluster_plan_text(*plan));
  return kExitOk;
}

}  // namespace

void add_cluster_command(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto o = std::make_shared<ClusterOptions>();
  auto* cmd = app.add_subcommand("plan", "Pack a cluster scenario's workloads onto shared node pools: pools, packing, timeline, cost");
  cmd->add_option("cluster", o->file, "Cluster scenario (YAML with cluster: and workloads:)")->required()->option_text("FILE");
  add_format_option(*cmd, o->format, {"table", "json"});
  cmd->footer("Examples:\n  capsim plan scenarios/clusters/team-ml-estate.yaml\n"
              "  capsim plan --format json scenarios/clusters/team-ml-estate.yaml");
  cmd->callback([&global, &exit_code, o] { exit_code = run_cluster_command(global, *o); });
}

}  // namespace capsim::cli
