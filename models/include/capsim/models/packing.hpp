// Packing a team's workloads onto shared Kubernetes node pools over a week (issue 17):
// which node types, how many nodes each hour (the autoscaling bounds), which replica on
// which GPU of which node, and what the week costs.
//
// The model:
//   - Time is a week of 168 hourly slots, hour 0 = Monday 00:00-01:00. A workload runs in
//     its WeekHours; a node is up (and paid for) in every hour one of its pods runs.
//   - A training job is a gang: `gpus` whole GPUs at once, all on one node type, on the
//     fewest nodes (topology-aware: ceil(gpus / gpus_per_node) nodes, every node full but
//     the last), and on one node whenever a feasible type has that many GPUs per node,
//     even where several smaller nodes would cost less. A service is `replicas` independent pods; the first `min_replicas` run all
//     week, the others only in the service's hours (scheduled scaling).
//   - Pods share a node hour by hour: in every hour, the CPU and memory of the pods running
//     then must fit the node's allocatable amounts (capacity minus the system reserve), and
//     on every GPU the compute fractions of the pods running then add up to at most 1 and
//     their memory to at most the GPU's. A whole GPU is fraction 1, so two training jobs
//     share a GPU only in different hours.
//   - A GPU's sharing mode (exclusive, MIG, MPS, time-slicing) is fixed for the week: the
//     device plugin's configuration belongs to the node. MIG partitions are fixed too
//     (repartitioning drains the GPU), so MIG instances never time-share: all instances of
//     a GPU must fit together, by the rule of plan_gpu_sharing (serving.hpp): the sum of
//     compute slices at most the GPU's, at most max_instances of a profile, and the sum of
//     slice memories at most the GPU's memory, with the slices of the catalog's
//     mig_profiles ("1g.10gb x7"). The rule is applied here incrementally for speed, and
//     every packed MIG GPU is then laid out by plan_gpu_sharing itself, which must agree.
//   - Training does not share a node with services (serving nodes are tainted), unless the
//     job may borrow serving capacity (`may_borrow_serving`): it may then use, in its own
//     hours, the whole GPUs of serving nodes whose services are idle then.
//   - spread: node: no two replicas of the service on one node; zone: replica i runs in
//     zone i mod Z of the sorted zones its node types are offered in (maxSkew 1), so a
//     zone-spread service needs node types that list zones.
//
// Two solvers over the same model, both returning a PackingPlan:
//   - pack_heuristic: a portfolio of first-fit-decreasing passes (items sorted by GPU
//     demand, then by hours; one pass per "preferred node type" and one that opens the
//     type with the lowest amortized cost per item), each followed by a local improvement
//     pass that closes a node when its pods fit elsewhere and swaps a node for a cheaper
//     type when all its pods fit there, and (on clusters of at most 60 nodes) re-packs
//     the service pods of every pair of nodes with the exact solver below; the cheapest
//     result wins. Each pod goes where its marginal cost (the node's price x the hours it
//     adds to the node) is least; a new node is charged its price x the pod's hours over
//     the number of the workload's remaining pods it could hold. Measured: within 5 % of
//     the optimum on 20 generated instances, 0.9 s for 200 workloads (docs/packing.md).
//   - pack_exact: depth-first branch-and-bound over every assignment of pods to nodes (a
//     new node of each type and zone is one branch, so identical empty nodes are not
//     enumerated twice), pruned when the partial cost reaches the best complete one. The
//     cost only grows as pods are added, so the pruning is exact. The heuristic's cost is
//     the first bound. For small instances: at most kExactMaxPods pods and
//     kExactMaxSearchNodes explored nodes, else an error.
//   Both choose the GPUs inside a node first-fit (GPUs already in the pod's mode first),
//   so "exact" means exact over the assignment of pods to nodes.
//
// Units: CPU in cores, memory in Bytes, prices as MoneyPerSecond (shown per hour), all
// node types in one currency. Ownership: plain values. Thread-safety: functions are pure.
#pragma once

#include <array>
#include <bitset>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "capsim/core/result.hpp"
#include "capsim/core/units.hpp"
#include "capsim/hardware/catalog.hpp"
#include "capsim/models/serving.hpp"

namespace capsim::models {

inline constexpr int kHoursPerWeek = 168;

// The hours of a week a workload runs, hour 0 = Monday 00:00.
struct WeekHours {
  std::bitset<kHoursPerWeek> hours;

  static WeekHours always();  // 24/7
  // Monday..`last_day` (0 = Monday, 4 = Friday) from `first_hour` to `end_hour` (exclusive),
  // e.g. business_days(9, 18) = Mon-Fri 9:00-18:00, 45 hours.
  static WeekHours business_days(int first_hour = 9, int end_hour = 18, int last_day = 4);
  // `length` hours from `start` (hour of the week), wrapping past Sunday night:
  // burst(5 * 24, 24) = Saturday.
  static WeekHours burst(int start, int length);
  int count() const { return static_cast<int>(hours.count()); }
};

// What a node keeps for itself before pods are scheduled (kubelet, container runtime,
// daemonsets: GPU device plugin, DCGM exporter, CNI, log shipper). No default: the user
// states it, because it decides how many replicas a node takes.
struct SystemReserve {
  double cpu_cores = 0;  // >= 0
  Bytes memory{0.0};     // >= 0
};

// A node type a pool may use (a cloud instance type).
struct PoolNodeType {
  std::string id;             // unique, non-empty ("p4d.24xlarge")
  hardware::GpuSpec gpu;      // its GPU: id, memory and MIG profiles are used
  int gpus_per_node = 1;      // >= 1
  double cpu_cores = 0;       // > reserve.cpu_cores: the node's vCPUs
  Bytes memory{0.0};          // > reserve.memory: the node's RAM
  SystemReserve reserve;      // allocatable = capacity - reserve
  MoneyPerSecond price_per_node;  // > 0, per node-hour (usd_per_hour(32.77))
  std::vector<std::string> zones;  // where it is offered; empty: zones not modelled

  double allocatable_cpu() const { return cpu_cores - reserve.cpu_cores; }
  Bytes allocatable_memory() const { return memory - reserve.memory; }
};

// The GPU part one service replica needs.
struct GpuRequest {
  SharingMode mode = SharingMode::exclusive;
  int gpus = 1;             // exclusive: whole GPUs (>= 1); others: one GPU (ignored)
  std::string mig_profile;  // mig: "1g.10gb", a profile of the node type's GPU
  double fraction = 0;      // mps, time_slicing: the share of the GPU, (0, 1]
  Bytes memory{0.0};        // GPU memory the replica needs: per GPU (exclusive), in the
                            // slice (mig), on the shared GPU (mps, time_slicing)
};

enum class Spread { none, node, zone };
std::string_view spread_name(Spread s);  // "none", "node", "zone"

struct TrainingDemand {
  int gpus = 1;                   // >= 1, whole GPUs, all at once (a gang)
  Bytes gpu_memory_per_gpu{0.0};  // what each rank needs on its GPU
  double cpu_per_gpu = 0;         // >= 0, cores per GPU (data loaders)
  Bytes memory_per_gpu{0.0};      // >= 0, host memory per GPU
  bool may_borrow_serving = false;
};

struct ServiceDemand {
  int replicas = 1;      // >= 1, in the service's hours
  int min_replicas = 0;  // 0..replicas, all week
  GpuRequest gpu;
  double cpu_per_replica = 0;  // >= 0
  Bytes memory_per_replica{0.0};  // >= 0, host memory
  Spread spread = Spread::none;
};

struct PackingWorkload {
  std::string name;  // unique, non-empty
  int priority = 0;  // higher is placed first among equal GPU demands
  bool is_training = false;  // then `training`, else `service`
  TrainingDemand training;
  ServiceDemand service;
  WeekHours active;  // at least one hour
  std::vector<std::string> gpus;  // catalog GPU ids it may run on (it was sized for); empty: any
};

struct PackingProblem {
  std::vector<PoolNodeType> node_types;  // at least one
  std::vector<PackingWorkload> workloads;  // at least one
};

// One pod on a node: a service replica, or one node's part of a training gang.
struct PlacedPod {
  std::string workload;
  int index = 0;               // replica number, or the gang's node number
  std::vector<int> gpus;       // indices of the node's GPUs it uses
  std::string share;           // "whole GPU", "MIG 1g.10gb", "MPS 0.25", "time-sliced 0.5"
  double gpu_share = 1;        // of each of its GPUs: 1 whole, a MIG slice's compute slices /
                               // the GPU's, or the MPS / time-sliced fraction
  WeekHours active;
};

struct PackedGpu {
  SharingMode mode = SharingMode::exclusive;
  std::vector<MigInstance> mig;  // mig: the layout plan_gpu_sharing made
  Bytes peak_memory{0.0};        // the most memory its pods use in one hour
};

struct PackedNode {
  std::string node_type;
  std::string zone;             // "" when zones are not modelled
  std::vector<PackedGpu> gpus;  // gpus_per_node of them
  std::vector<PlacedPod> pods;
  WeekHours up;                 // hours it runs (and is paid for)
};

// A pool's autoscaling bounds: the fewest and most nodes up in one hour of the week.
struct PoolBounds {
  std::string node_type;
  int min_nodes = 0;
  int max_nodes = 0;
};

struct PackingPlan {
  std::vector<PoolBounds> pools;  // node types that are used, in input order
  std::vector<PackedNode> nodes;
  std::array<int, kHoursPerWeek> nodes_up{};  // nodes running in each hour
  std::array<Money, kHoursPerWeek> hourly_cost{};  // their price for that hour
  Money weekly_cost;            // sum of hourly_cost
  std::string solver;           // "heuristic: <best pass>", "exact: <n> search nodes"
};

// Size limits of pack_exact.
inline constexpr int kExactMaxPods = 14;
inline constexpr long long kExactMaxSearchNodes = 20'000'000;

// The heuristic's budget: pods to place (service replicas, and a gang's parts on the node
// type that splits it most). Its passes each try every pod on every open node, and the
// improvement pass tries every node's pods on every other node: the work grows with pods x
// nodes. Measured on 2 cores with one pod per node, all week: 1,000 pods 5.5 s, 2,000 pods
// 21 s; 4 services x 1,000 replicas took 62 s, 10,000 one-replica workloads 237 s. Past the
// limit both solvers refuse ("workloads": "... more than the packer's limit of 1000 pods").
inline constexpr int kMaxPackingPods = 1000;

// Errors (all at once): invalid inputs (key path "node_types[i].field" or
// "workloads[i].field"), more pods than kMaxPackingPods ("workloads"), and a workload that
// fits no node type, naming each type's reason:
//   "workload 'ocr' fits no node type: a100x1: a replica needs 12 GB of GPU memory, MIG
//    profile 1g.10gb has 10 GB; t4x1: the t4 has no MIG profile '1g.10gb'"
Result<PackingPlan> pack_heuristic(const PackingProblem& problem);
// As pack_heuristic, plus "the exact solver takes at most 14 pods, the instance has 20"
// and "the exact solver stopped after 20000000 search nodes".
Result<PackingPlan> pack_exact(const PackingProblem& problem);

}  // namespace capsim::models
