// `capsim plan`: size every workload of a cluster scenario, pack them onto node pools over a
// week, and print the pools, the packing per node, the timeline and the cost, or (--export)
// the plan as Kubernetes or Karpenter objects.
#include "cluster_command.hpp"

#include "capsim/core/files.hpp"
#include "capsim/scenarios/cluster.hpp"
#include "capsim/scenarios/cluster_export.hpp"

namespace capsim::cli {
namespace {

struct ClusterOptions {
  std::string file;
  Format format = Format::table;
  std::string export_target;  // "", k8s or karpenter
  std::string output;         // "" or "-": standard output
};

int write_export(const scenarios::ClusterPlan& plan, const ClusterOptions& o) {
  auto text = scenarios::cluster_export(plan, o.export_target);
  if (!text) return report_errors(text.errors());
  if (o.output.empty() || o.output == "-") {
    std::cout << *text;
    return kExitOk;
  }
  if (auto status = write_file_atomically(o.output, *text); !status.empty()) return report_errors(status);
  return kExitOk;
}

int run_cluster_command(const GlobalOptions& g, const ClusterOptions& o) {
  auto ws = open_workspace(g, hardware::Access::read_only);
  if (!ws) return report_errors(ws.errors());
  auto scenario = scenarios::load_cluster_file(o.file, *ws->catalog);
  if (!scenario) return report_errors(scenario.errors());
  auto plan = scenarios::plan_cluster(*scenario, *ws->catalog);
  if (!plan) return report_errors(plan.errors());
  if (!o.export_target.empty()) return write_export(*plan, o);
  std::cout << (o.format == Format::json ? scenarios::cluster_plan_json(*plan) : scenarios::cluster_plan_text(*plan));
  return kExitOk;
}

}  // namespace

void add_cluster_command(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto o = std::make_shared<ClusterOptions>();
  auto* cmd = app.add_subcommand("plan", "Pack a cluster scenario's workloads onto shared node pools: pools, packing, timeline, cost");
  cmd->add_option("cluster", o->file, "Cluster scenario (YAML with cluster: and workloads:)")->required()->option_text("FILE");
  add_format_option(*cmd, o->format, {"table", "json"});
  cmd->add_option("--export", o->export_target,
                  "Write the plan as objects instead: k8s (Kueue queues and flavors, JobSets, Deployments, HPAs, PDBs) "
                  "or karpenter (NodePools and EC2NodeClass, AWS pools only)")
      ->option_text("TARGET");
  cmd->add_option("-o,--output", o->output, "With --export: write to FILE (default, or -: standard output)")->option_text("FILE");
  cmd->footer("Examples:\n  capsim plan scenarios/clusters/team-ml-estate.yaml\n"
              "  capsim plan --format json scenarios/clusters/team-ml-estate.yaml\n"
              "  capsim plan --export k8s -o estate.yaml scenarios/clusters/team-ml-estate.yaml\n"
              "Exports, what validates them and refusals: docs/exports.md.");
  cmd->callback([&global, &exit_code, o] {
    if (!o->output.empty() && o->export_target.empty()) {
      exit_code = report_errors({Diagnostic{{}, "--output", "-o/--output writes an export: give --export k8s or karpenter", ""}});
      return;
    }
    exit_code = run_cluster_command(global, *o);
  });
}

}  // namespace capsim::cli
