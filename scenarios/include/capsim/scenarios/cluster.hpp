// A cluster scenario: a team's workloads on shared node pools (issue 17). Each workload is
// one of today's single-workload scenarios, sized by capsim as `capsim size` sizes it, or a
// demand stated by hand (a batch job, a notebook pool); each runs in its hours of the week.
// The packer (models/packing.hpp) then chooses the node pools and puts every pod on a GPU
// of a node, hour by hour, at the lowest cost over the week.
//
//   name: team-ml-estate
//   cluster:
//     node_types: [aws-g5-xlarge, aws-g5-12xlarge, aws-p4d-24xlarge]   # catalog instances
//     system_reserve: {cpu: 1, memory: 4 GiB}                         # per node
//     horizon: 12 months                                              # for the totals
//   workloads:
//     - name: weekly-finetune
//       scenario: workloads/lora-7b-one-node.yaml      # sized; a training run from the
//       hours: {days: sat, from: 0, to: 24}           # window's start, for its planned time
//       pod: {cpu: 4, memory: 32 GiB}                 # per GPU (training), per replica (service)
//     - name: notebooks
//       service: {gpu: a10g, replicas: 8, share: time-slicing 0.25, gpu_memory: 5 GiB}
//       hours: business                               # Mon-Fri 09-18
//
// A training workload (a scenario of type training, or `job:`) runs once per window
// occurrence (a contiguous run of its hours), for its planned time rounded up to whole
// hours; it must fit in the window. A service (a serving scenario, or `service:`) runs
// its replicas in its hours and `min_replicas` of them all week. The sub-scenario is sized
// on the cluster's node types only: its GPU candidates are cut to the GPUs those carry.
//
// Ownership: plain values. Thread-safety: functions are pure apart from reading the
// sub-scenario files.
#pragma once

#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "capsim/core/result.hpp"
#include "capsim/core/units.hpp"
#include "capsim/hardware/catalog.hpp"
#include "capsim/models/packing.hpp"
#include "capsim/scenarios/prices.hpp"
#include "capsim/scenarios/report.hpp"
#include "capsim/scenarios/scenario.hpp"

namespace capsim::scenarios {

// The schema name of `capsim plan --format json`.
inline constexpr const char* kClusterPlanSchema = "capsim-cluster-plan/1";

struct ClusterWorkloadSpec {
  SourceLocation where;  // of the workload's entry, for errors found while planning
  SourceLocation name_where;  // of its name: (the exports derive object names from it)
  std::string name;
  int priority = 0;
  models::WeekHours hours;
  std::string hours_text;  // "Sat 00-24", "Mon-Fri 09-18", "always"
  // One of:
  // Resolved against the cluster file's folder, and inside it (as a scenario's trace file is
  // inside the scenario's: no absolute path, no "../" out of it, no link out of it) unless
  // CAPSIM_ALLOW_TRACE_OUTSIDE=1.
  std::filesystem::path scenario;
  bool is_job = false;             // job: / a training scenario
  // job: or service: stated by hand
  std::string gpu;                 // catalog GPU id
  int gpus = 0;                    // job: GPUs of the gang; service: whole GPUs per replica
  Seconds run_time{0.0};           // job: hours per run
  int replicas = 0;                // service
  models::SharingMode sharing = models::SharingMode::exclusive;
  std::string mig_profile;         // sharing mig
  double fraction = 0;             // sharing mps / time-slicing
  std::optional<models::SharingMode> scenario_sharing;  // `sharing:` for a serving scenario
  Bytes gpu_memory{0.0};
  // Both:
  double pod_cpu = 0;
  Bytes pod_memory{0.0};
  int min_replicas = 0;
  models::Spread spread = models::Spread::none;
  bool may_borrow_serving = false;
};

// `cluster.owned:` an owned server (on-prem or in colocation) that could replace the pools
// whose GPU it carries; the keys of a `cost.options` entry with `server:` and `facility:`.
struct ClusterOwnedOption {
  CostOptionSetup option;
  SourceLocation where;
};

struct ClusterScenario {
  std::string name;
  std::string description;
  std::string file;
  SourceLocation name_where;  // of its name: (the exports derive the queue and cluster names from it)
  std::vector<std::string> node_types;  // catalog instance ids
  std::vector<SourceLocation> node_type_where;
  models::SystemReserve reserve;
  std::vector<std::string> zones;  // cluster.zones: where every node type may run (spread: zone)
  Seconds horizon = Seconds(12 * units::month);
  std::vector<ClusterOwnedOption> owned;
  std::vector<ClusterWorkloadSpec> workloads;
  SourceLocation workloads_where;  // of the workloads: key, for the packer's budget
};

// Errors (all at once, file:line:column, key path, "did you mean"): unknown keys, missing
// ones, bad hours, quantities of the wrong dimension, unknown node types or GPUs, a control
// character anywhere (as in a scenario: control_character_errors), a name of more than one
// line, a scenario: path outside the cluster file's folder (named_input_path), and more
// workloads or stated service replicas than the packer's budget (models::kMaxPackingPods:
// every workload is at least one pod). A file that is not a cluster scenario is said to be
// one without its content being shown.
Result<ClusterScenario> load_cluster(const std::string& file, const std::string& text, const hardware::Catalog& catalog);
Result<ClusterScenario> load_cluster_file(const std::filesystem::path& path, const hardware::Catalog& catalog);

// What each workload turned into before packing.
struct ClusterWorkloadPlan {
  std::string name;
  SourceLocation name_where;  // of its name: in the cluster file
  std::string source;        // "lora-7b-one-node.yaml: 1 x a10g, 3.2 h per run" or "stated"
  std::string kind;          // "training" or "service"
  std::string gpu;           // catalog GPU id
  std::string demand;        // "gang of 8 GPUs, 4 h per run" / "3 replicas x MIG 1g.10gb"
  std::string hours_text;
  int active_hours = 0;      // hours per week its pods run
};

// One node's week in the cloud: on demand for the hours it is up, or committed for a year
// (paid every hour of the week) when the catalog prices a commitment for its type.
struct ClusterNodeCost {
  std::string node_type;
  int up_hours = 0;                     // per week
  Money on_demand;                      // up_hours x the on-demand price
  std::optional<Money> committed;       // 168 h x the 1-year committed price
  std::optional<double> break_even_hours;  // a commitment pays off above this many hours a week
  bool commit = false;                  // committed is the cheaper
  // up_hours x the spot price, where the catalog prices spot; interruptions are not
  // modelled, so it suits a training node that checkpoints, not a service.
  std::optional<Money> spot;
  bool training = false;                // the node runs training pods only
};

// A pool against owned servers over the horizon: its peak GPUs bought, busy as the pool is
// (node-hours / peak nodes / 168 h), priced by the cost model of `capsim cost`.
struct ClusterOwnedComparison {
  std::string node_type;
  std::string gpu;
  int gpus = 0;                // at the pool's peak
  double busy = 0;             // the share of the week its nodes are up
  std::vector<std::string> options;  // "cloud on demand (aws-g5-xlarge)", then each owned option
  std::vector<Money> totals;   // over the horizon, per option
  std::vector<int> servers;    // servers (owned) or nodes (cloud) per option
  int cheapest = 0;
  // Per owned option against the cloud: the utilization above which owning is cheaper, and
  // the month its cumulative cash falls to the cloud's (none: never within 10 years).
  std::vector<std::optional<double>> break_even_utilization;
  std::vector<std::optional<int>> break_even_month;
};

// Where a node type comes from, for exports (cluster_export.hpp).
struct ClusterNodeTypeSource {
  std::string id;             // catalog instance id ("aws-g5-xlarge")
  std::string provider;       // "aws", "gcp", ...
  std::string instance_type;  // the provider's machine type ("g5.xlarge")
  std::string region;         // the catalog's region for it ("us-central1"), or ""
  int efa_interfaces = 0;     // AWS EFA interfaces per node (vpc.amazonaws.com/efa), 0: none known
};

struct ClusterPlan {
  std::string name;
  SourceLocation name_where;  // of its name: in the cluster file
  std::string currency_note;  // "USD"
  std::vector<ClusterWorkloadPlan> workloads;
  models::PackingProblem problem;
  std::vector<ClusterNodeTypeSource> node_type_sources;  // one per problem.node_types, in its order
  models::PackingPlan packing;
  std::vector<ClusterNodeCost> node_costs;  // per packed node, in packing order
  Money weekly_cost;                 // as packed, on demand: nodes up only in the hours their pods run
  Money best_weekly_cost;            // each node on demand or committed, whichever is cheaper
  Money always_on_weekly_cost;       // the same pools at their maximum, every hour of the week
  Money horizon_cost;                // weekly_cost over the horizon
  Money best_horizon_cost;
  Money spot_training_weekly_cost;   // best_weekly_cost with training nodes on spot where priced
  // GPUs each workload's pods hold in each hour (a share counts as its fraction), in
  // workload order.
  std::vector<std::array<double, models::kHoursPerWeek>> gpus_per_hour;
  Money always_on_horizon_cost;
  Seconds horizon{0.0};
  std::vector<ClusterOwnedComparison> owned;  // pools with an owned option of their GPU
  // Every price of the pools' node types (each price.* the plan may use), dated and marked
  // when it is the user's own quote; a stale one also has a line in `warnings`.
  std::vector<PriceUsed> prices;
  std::vector<std::string> warnings;
  // Issue 50: a pool whose GPUs are more than half idle, and the same plan packed again with
  // a smaller node type of the same GPU allowed (a priced catalog instance, in the plan's
  // currency, not among cluster.node_types), when that is cheaper per week on demand.
  struct SmallerNode {
    std::string pool;           // the mostly idle pool's node type
    std::string gpu;            // its GPU (and the smaller node type's)
    double idle_fraction = 0;   // of its GPU-hours
    std::string node_type;      // the smaller one tried; empty: the catalog has none
    int gpus_per_node = 0;
    std::string provider;
    Money weekly_cost;          // the plan packed with node_type allowed, on demand
  };
  std::vector<SmallerNode> smaller_nodes;
};

// Sizes every workload and packs them. Errors name the workload: a sub-scenario that does
// not load or size, a GPU no node type carries, a run longer than its window.
Result<ClusterPlan> plan_cluster(const ClusterScenario& s, const hardware::Catalog& catalog);

std::string cluster_plan_text(const ClusterPlan& p);
// The cluster report (capsim plan --report): the workloads, pools, packing picture,
// timeline and cost as tables and charts, for the same writers as a scenario's report.
ReportDocument cluster_report(const ClusterPlan& p);
std::string cluster_plan_json(const ClusterPlan& p);  // {"schema": kClusterPlanSchema, ...}

}  // namespace capsim::scenarios
