// `capsim plan`: size every workload of a cluster scenario, pack them onto node pools over a
// week, and print the pools, the packing per node, the timeline and the cost, or (--export)
// the plan as Kubernetes or Karpenter objects.
#include "cluster_command.hpp"

#include <filesystem>
#include <iostream>

#include "capsim/core/files.hpp"
#include "capsim/scenarios/cluster.hpp"
#include "capsim/scenarios/cluster_export.hpp"
#include "capsim/scenarios/export.hpp"
#include "capsim/scenarios/report.hpp"
#include "completion.hpp"
#ifdef CAPSIM_HAVE_RENDER
#include "capsim/render/report.hpp"
#endif

namespace capsim::cli {
namespace {

struct ClusterOptions {
  std::string file;
  Format format = Format::table;
  std::string export_target;  // "", k8s, karpenter, gke or terraform
  std::string output;         // "" or "-": standard output
  std::string location;       // gke, terraform
  std::string report;         // --report FILE
  std::string table;          // --table NAME: with a .csv report, that table only
};

int write_export(const scenarios::ClusterPlan& plan, const ClusterOptions& o) {
  auto text = scenarios::cluster_export(plan, o.export_target, o.location);
  if (!text) return report_errors(text.errors());
  return write_output(o.output, *text);
}

Status write_cluster_report(const scenarios::ClusterPlan& plan, const std::string& report, const std::string& table) {
  if (report.empty() && !table.empty())
    return {Diagnostic{{}, "--table", "--table picks one table of a .csv report", "give --report FILE.csv"}};
  if (report.empty()) return {};
  // CSV, one file per table as `run --report` writes them; needs no renderer.
  if (std::filesystem::path(report).extension() == ".csv") {
    auto written = scenarios::write_csv_report(scenarios::cluster_report(plan), report, table);
    if (!written) return written.errors();
    // On standard error: standard output carries the plan (--format json included).
    if (table.empty())
      for (const auto& file : *written) std::cerr << "wrote " << file.string() << "\n";
    return {};
  }
  if (!table.empty())
    return {Diagnostic{{}, "--table", "--table picks one table of a .csv report, not of '" + report + "'", ""}};
#ifdef CAPSIM_HAVE_RENDER
  return render::write_cluster_report(plan, report);
#else
  return {Diagnostic{{}, "--report", "this capsim was built without the report renderer (Qt)", ""}};
#endif
}

int run_cluster_command(const GlobalOptions& g, const ClusterOptions& o) {
  auto ws = open_workspace(g, hardware::Access::read_only);
  if (!ws) return report_errors(ws.errors());
  // --location as `capsim export` checks it, before the plan is made.
  if (!o.location.empty() && (o.export_target == "gke" || o.export_target == "terraform")) {
    scenarios::ExportSettings settings;
    settings.location = o.location;
    auto errors = scenarios::check_export_settings(settings, scenarios::ExportFormat::gke);
    if (errors.empty()) errors = scenarios::check_gcp_location(o.location, *ws->catalog);
    if (!errors.empty()) return report_errors(errors);
  }
  auto scenario = scenarios::load_cluster_file(o.file, *ws->catalog);
  if (!scenario) return report_errors(scenario.errors());
  if (o.export_target.empty()) return print_cluster_plan(*scenario, *ws->catalog, o.format, o.report, o.table);
  auto plan = scenarios::plan_cluster(*scenario, *ws->catalog);
  if (!plan) return report_errors(plan.errors());
  if (auto status = write_cluster_report(*plan, o.report, o.table); !status.empty()) return report_errors(status);
  return write_export(*plan, o);
}

}  // namespace

int print_cluster_plan(const scenarios::ClusterScenario& scenario, const hardware::Catalog& catalog, Format format,
                       const std::string& report, const std::string& table) {
  auto plan = scenarios::plan_cluster(scenario, catalog);
  if (!plan) return report_errors(plan.errors());
  if (auto status = write_cluster_report(*plan, report, table); !status.empty()) return report_errors(status);
  std::cout << (format == Format::json ? scenarios::cluster_plan_json(*plan) : scenarios::cluster_plan_text(*plan));
  return kExitOk;
}

void add_cluster_command(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto o = std::make_shared<ClusterOptions>();
  auto* cmd = app.add_subcommand("plan", "Pack a cluster scenario's workloads onto shared node pools: pools, packing, timeline, cost");
  cmd->add_option("cluster", o->file, "Cluster scenario (YAML with cluster: and workloads:)")->required()->option_text("FILE");
  add_format_option(*cmd, o->format, {"table", "json"});
  cmd->add_option("--export", o->export_target,
                  "Write the plan as objects instead: k8s (Kueue queues and flavors, JobSets, Deployments, HPAs, PDBs), "
                  "pytorchjob (the same with Kubeflow PyTorchJobs for training), karpenter (NodePools and EC2NodeClass, "
                  "AWS pools only), eks (aws_eks_node_group Terraform, AWS pools only), gke or terraform (node pools, GCP "
                  "pools only)")
      ->option_text("TARGET");
  complete_values(cmd->get_option("--export"), {"k8s", "pytorchjob", "karpenter", "gke", "terraform", "eks"});
  cmd->add_option("--location", o->location,
                  "gke, terraform: a GCP region or zone (default: the catalog's region of the pools' instances)");
  cmd->add_option("--report", o->report,
                  "Also write the plan's report: .html, .pdf, .md, .csv or .json (pools, packing picture, timeline, "
                  "cost); .csv writes one file per table, FILE-NAME.csv (FILE-workloads.csv, FILE-cost.csv, ...)")
      ->option_text("FILE");
  cmd->add_option("--table", o->table,
                  "With a .csv report: write only this table (e.g. cost) to FILE; without it each table goes to "
                  "its own FILE-NAME.csv")
      ->option_text("NAME");
  cmd->add_option("-o,--output", o->output, "With --export: write to FILE (default, or -: standard output)")->option_text("FILE");
  cmd->footer("Examples:\n  capsim plan scenarios/clusters/team-ml-estate.yaml\n"
              "  capsim plan --format json scenarios/clusters/team-ml-estate.yaml\n"
              "  capsim plan --export k8s -o estate.yaml scenarios/clusters/team-ml-estate.yaml\n"
              "  capsim plan --report estate.html scenarios/clusters/team-ml-estate.yaml\n"
              "  capsim plan --report estate.csv scenarios/clusters/team-ml-estate.yaml\n"
              "Exports, what validates them and refusals: docs/exports.md.");
  cmd->callback([&global, &exit_code, o] {
    if (!o->output.empty() && o->export_target.empty()) {
      exit_code = report_errors({Diagnostic{{}, "--output", "-o/--output writes an export: give --export k8s, pytorchjob, karpenter, eks, gke or terraform", ""}});
      return;
    }
    exit_code = run_cluster_command(global, *o);
  });
}

}  // namespace capsim::cli
