// Packing workloads onto node pools over a week: the state both solvers share (nodes with
// hour-by-hour usage, placement and removal of pods), the first-fit-decreasing heuristic
// with its improvement pass, and the branch-and-bound exact solver. See packing.hpp.
#include "capsim/models/packing.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>

#include "capsim/core/text.hpp"

namespace capsim::models {

WeekHours WeekHours::always() {
  WeekHours w;
  w.hours.set();
  return w;
}

WeekHours WeekHours::business_days(int first_hour, int end_hour, int last_day) {
  WeekHours w;
  for (int d = 0; d <= last_day && d < 7; ++d)
    for (int h = std::max(0, first_hour); h < std::min(24, end_hour); ++h) w.hours.set(static_cast<std::size_t>(d * 24 + h));
  return w;
}

WeekHours WeekHours::burst(int start, int length) {
  WeekHours w;
  for (int i = 0; i < length && i < kHoursPerWeek; ++i)
    w.hours.set(static_cast<std::size_t>(((start + i) % kHoursPerWeek + kHoursPerWeek) % kHoursPerWeek));
  return w;
}

std::string_view spread_name(Spread s) {
  switch (s) {
    case Spread::none: return "none";
    case Spread::node: return "node";
    case Spread::zone: return "zone";
  }
  return "none";
}

namespace {

constexpr double kEpsilon = 1e-9;

Diagnostic invalid(const std::string& key, const std::string& message) { return Diagnostic{{}, key, message, ""}; }

std::string gb(double bytes) { return significant(bytes / 1e9, 3) + " GB"; }

int total_slices(const hardware::GpuSpec& gpu) {
  int s = 0;
  for (const auto& p : gpu.mig_profiles) s = std::max(s, p.compute_slices);
  return s;
}

int profile_index(const hardware::GpuSpec& gpu, std::string_view name) {
  for (std::size_t i = 0; i < gpu.mig_profiles.size(); ++i)
    if (gpu.mig_profiles[i].name == name) return static_cast<int>(i);
  return -1;
}

// --- What one pod needs ---------------------------------------------------------------

struct Shape {
  int workload = 0;
  int index = 0;              // replica, or the gang's node number
  bool training = false;
  bool borrows = false;       // training that may use idle serving nodes
  bool one_per_node = false;  // spread: node, and the parts of a gang
  SharingMode mode = SharingMode::exclusive;
  int gpus = 1;               // exclusive: GPUs; otherwise 1
  std::string profile;        // mig
  double fraction = 1;        // per GPU: 1 for exclusive
  double gpu_memory = 0;      // per GPU, or the MIG instance's need
  double cpu = 0;
  double memory = 0;
  std::bitset<kHoursPerWeek> hours;
  std::vector<int> hour_list;
  std::string zone;           // required zone, or ""
};

// A unit of placement: one service replica, or a whole training gang.
struct Unit {
  int workload = 0;
  bool gang = false;
  std::vector<int> types;  // feasible node types
  Shape pod;               // a service replica
  // A gang on node type t: parts[t] (empty when t is not feasible).
  std::vector<std::vector<Shape>> parts;
  double gpu_demand = 0;   // GPUs (or GPU fractions) it needs at once
  int priority = 0;
};

// --- Nodes and their usage hour by hour -------------------------------------------------

struct GpuState {
  bool configured = false;
  SharingMode mode = SharingMode::exclusive;
  int pods = 0;
  std::array<double, kHoursPerWeek> fraction{};
  std::array<double, kHoursPerWeek> memory{};
  int mig_slices = 0;
  double mig_memory = 0;
  std::vector<int> mig_count;  // per profile of the node type's GPU
};

struct PodOnNode {
  const Shape* shape = nullptr;
  std::vector<int> gpus;
  int profile = -1;
};

struct NodeState {
  int type = 0;
  std::string zone;
  std::vector<GpuState> gpus;
  std::array<double, kHoursPerWeek> cpu{};
  std::array<double, kHoursPerWeek> memory{};
  std::array<int, kHoursPerWeek> running{};  // pods running in each hour
  int services = 0;
  int strict_training = 0;  // training pods that do not borrow
  std::vector<PodOnNode> pods;
};

class Cluster {
 public:
  explicit Cluster(const std::vector<PoolNodeType>& types) : types_(&types) {}

  const PoolNodeType& type(int t) const { return (*types_)[static_cast<std::size_t>(t)]; }
  std::vector<NodeState>& nodes() { return nodes_; }
  const std::vector<NodeState>& nodes() const { return nodes_; }

  int open(int t, std::string zone) {
    NodeState n;
    n.type = t;
    n.zone = std::move(zone);
    n.gpus.resize(static_cast<std::size_t>(type(t).gpus_per_node));
    for (auto& g : n.gpus) g.mig_count.assign(type(t).gpu.mig_profiles.size(), 0);
    nodes_.push_back(std::move(n));
    return static_cast<int>(nodes_.size()) - 1;
  }
  // Removes the last node, which must hold no pod.
  void close_last() { nodes_.pop_back(); }

  double price(int t) const { return type(t).price_per_node.value() * units::hour; }  // per node-hour
  double cost(const NodeState& n) const {
    return price(n.type) * static_cast<double>(std::count_if(n.running.begin(), n.running.end(), [](int k) { return k > 0; }));
  }
  double total_cost() const {
    double c = 0;
    for (const auto& n : nodes_) c += cost(n);
    return c;
  }
  // The price of the hours the pod adds to the node.
  double marginal(const NodeState& n, const Shape& s) const {
    int added = 0;
    for (int h : s.hour_list) added += n.running[static_cast<std::size_t>(h)] == 0 ? 1 : 0;
    return price(n.type) * added;
  }

  // Where on node `n` the pod would go (GPUs, MIG profile), or nothing if it does not fit.
  std::optional<PodOnNode> fit(const NodeState& n, const Shape& s) const {
    if (!s.zone.empty() && s.zone != n.zone) return std::nullopt;
    if (s.training && !s.borrows && n.services > 0) return std::nullopt;
    if (!s.training && n.strict_training > 0) return std::nullopt;
    if (s.one_per_node)
      for (const auto& p : n.pods)
        if (p.shape->workload == s.workload) return std::nullopt;
    const PoolNodeType& t = type(n.type);
    const double cpu_cap = t.allocatable_cpu() + kEpsilon;
    const double mem_cap = t.allocatable_memory().value() * (1 + kEpsilon);
    for (int h : s.hour_list) {
      const auto i = static_cast<std::size_t>(h);
      if (n.cpu[i] + s.cpu > cpu_cap || n.memory[i] + s.memory > mem_cap) return std::nullopt;
    }
    PodOnNode placed;
    placed.shape = &s;
    if (s.mode == SharingMode::mig) {
      placed.profile = profile_index(t.gpu, s.profile);
      if (placed.profile < 0) return std::nullopt;
      const auto& p = t.gpu.mig_profiles[static_cast<std::size_t>(placed.profile)];
      const int slices = total_slices(t.gpu);
      // Configured MIG GPUs first, so that free GPUs stay whole for other pods.
      for (int pass = 0; pass < 2 && placed.gpus.empty(); ++pass)
        for (std::size_t g = 0; g < n.gpus.size(); ++g) {
          const auto& gs = n.gpus[g];
          if ((pass == 0) != (gs.configured && gs.mode == SharingMode::mig)) continue;
          if (pass == 1 && gs.configured) continue;
          if (gs.mig_slices + p.compute_slices > slices) continue;
          if (gs.mig_count[static_cast<std::size_t>(placed.profile)] + 1 > p.max_instances) continue;
          if (gs.mig_memory + p.memory_gb * 1e9 > t.gpu.memory.value() * (1 + kEpsilon)) continue;
          placed.gpus.push_back(static_cast<int>(g));
          break;
        }
      if (placed.gpus.empty()) return std::nullopt;
      return placed;
    }
    const double gpu_mem_cap = t.gpu.memory.value() * (1 + kEpsilon);
    for (int pass = 0; pass < 2; ++pass)
      for (std::size_t g = 0; g < n.gpus.size() && static_cast<int>(placed.gpus.size()) < s.gpus; ++g) {
        const auto& gs = n.gpus[g];
        if (pass == 0 && !(gs.configured && gs.mode == s.mode)) continue;
        if (pass == 1 && gs.configured) continue;
        bool free = true;
        for (int h : s.hour_list) {
          const auto i = static_cast<std::size_t>(h);
          if (gs.fraction[i] + s.fraction > 1 + kEpsilon || gs.memory[i] + s.gpu_memory > gpu_mem_cap) {
            free = false;
            break;
          }
        }
        if (free) placed.gpus.push_back(static_cast<int>(g));
      }
    if (static_cast<int>(placed.gpus.size()) < s.gpus) return std::nullopt;
    std::sort(placed.gpus.begin(), placed.gpus.end());
    return placed;
  }

  void add(int node, PodOnNode pod) {
    auto& n = nodes_[static_cast<std::size_t>(node)];
    apply(n, pod, +1);
    n.pods.push_back(std::move(pod));
  }
  // Removes the node's pod number `k` and returns it.
  PodOnNode remove(int node, std::size_t k) {
    auto& n = nodes_[static_cast<std::size_t>(node)];
    PodOnNode pod = std::move(n.pods[k]);
    n.pods.erase(n.pods.begin() + static_cast<std::ptrdiff_t>(k));
    apply(n, pod, -1);
    return pod;
  }

 private:
  void apply(NodeState& n, const PodOnNode& pod, int sign) {
    const Shape& s = *pod.shape;
    for (int h : s.hour_list) {
      const auto i = static_cast<std::size_t>(h);
      n.cpu[i] += sign * s.cpu;
      n.memory[i] += sign * s.memory;
      n.running[i] += sign;
    }
    if (s.training) n.strict_training += s.borrows ? 0 : sign;
    else n.services += sign;
    for (int g : pod.gpus) {
      auto& gs = n.gpus[static_cast<std::size_t>(g)];
      gs.pods += sign;
      gs.configured = gs.pods > 0;
      gs.mode = s.mode;
      if (s.mode == SharingMode::mig) {
        const auto& p = type(n.type).gpu.mig_profiles[static_cast<std::size_t>(pod.profile)];
        gs.mig_slices += sign * p.compute_slices;
        gs.mig_memory += sign * p.memory_gb * 1e9;
        gs.mig_count[static_cast<std::size_t>(pod.profile)] += sign;
        continue;
      }
      for (int h : s.hour_list) {
        const auto i = static_cast<std::size_t>(h);
        gs.fraction[i] += sign * s.fraction;
        gs.memory[i] += sign * s.gpu_memory;
      }
    }
  }

  const std::vector<PoolNodeType>* types_;
  std::vector<NodeState> nodes_;
};

// --- Inputs: validation, what fits where ------------------------------------------------

std::vector<Diagnostic> validate(const PackingProblem& p) {
  std::vector<Diagnostic> errors;
  if (p.node_types.empty()) errors.push_back(invalid("node_types", "no node type to pack onto"));
  if (p.workloads.empty()) errors.push_back(invalid("workloads", "no workload to pack"));
  std::set<std::string> ids;
  for (std::size_t i = 0; i < p.node_types.size(); ++i) {
    const auto& t = p.node_types[i];
    const std::string key = "node_types[" + std::to_string(i) + "]";
    if (t.id.empty()) errors.push_back(invalid(key + ".id", "a node type needs an id"));
    else if (!ids.insert(t.id).second) errors.push_back(invalid(key + ".id", "node type '" + t.id + "' is listed twice"));
    if (t.gpus_per_node < 1) errors.push_back(invalid(key + ".gpus_per_node", "node type '" + t.id + "' needs at least one GPU per node"));
    if (t.gpu.memory.value() <= 0) errors.push_back(invalid(key + ".gpu", "node type '" + t.id + "': GPU '" + t.gpu.id + "' has no memory size"));
    if (t.reserve.cpu_cores < 0 || t.reserve.memory.value() < 0)
      errors.push_back(invalid(key + ".reserve", "node type '" + t.id + "': the system reserve must not be negative"));
    if (t.allocatable_cpu() <= 0)
      errors.push_back(invalid(key + ".cpu_cores", "node type '" + t.id + "': the system reserve (" + significant(t.reserve.cpu_cores) +
                                                       " cores) leaves no CPU of its " + significant(t.cpu_cores)));
    if (t.allocatable_memory().value() <= 0)
      errors.push_back(invalid(key + ".memory", "node type '" + t.id + "': the system reserve (" + gb(t.reserve.memory.value()) +
                                                    ") leaves no memory of its " + gb(t.memory.value())));
    if (!(t.price_per_node.value() > 0)) errors.push_back(invalid(key + ".price_per_node", "node type '" + t.id + "' needs a price above zero"));
    if (t.price_per_node.currency() != p.node_types.front().price_per_node.currency())
      errors.push_back(invalid(key + ".price_per_node", "node type '" + t.id + "' is priced in " +
                                                            std::string(currency_code(t.price_per_node.currency())) + ", the first in " +
                                                            std::string(currency_code(p.node_types.front().price_per_node.currency()))));
  }
  std::set<std::string> names;
  for (std::size_t i = 0; i < p.workloads.size(); ++i) {
    const auto& w = p.workloads[i];
    const std::string key = "workloads[" + std::to_string(i) + "]";
    const std::string who = "workload '" + w.name + "'";
    if (w.name.empty()) errors.push_back(invalid(key + ".name", "a workload needs a name"));
    else if (!names.insert(w.name).second) errors.push_back(invalid(key + ".name", who + " is listed twice"));
    if (w.active.count() == 0) errors.push_back(invalid(key + ".active", who + " runs in no hour of the week"));
    if (w.is_training) {
      const auto& d = w.training;
      if (d.gpus < 1) errors.push_back(invalid(key + ".training.gpus", who + " needs at least one GPU"));
      if (d.cpu_per_gpu < 0 || d.memory_per_gpu.value() < 0 || d.gpu_memory_per_gpu.value() < 0)
        errors.push_back(invalid(key + ".training", who + ": CPU and memory needs must not be negative"));
      continue;
    }
    const auto& d = w.service;
    if (d.replicas < 1) errors.push_back(invalid(key + ".service.replicas", who + " needs at least one replica"));
    if (d.min_replicas < 0 || d.min_replicas > d.replicas)
      errors.push_back(invalid(key + ".service.min_replicas", who + ": min_replicas must be in 0.." + std::to_string(d.replicas) +
                                                                  ", got " + std::to_string(d.min_replicas)));
    if (d.cpu_per_replica < 0 || d.memory_per_replica.value() < 0 || d.gpu.memory.value() < 0)
      errors.push_back(invalid(key + ".service", who + ": CPU and memory needs must not be negative"));
    const bool shared = d.gpu.mode == SharingMode::mps || d.gpu.mode == SharingMode::time_slicing;
    if (d.gpu.mode == SharingMode::exclusive && d.gpu.gpus < 1)
      errors.push_back(invalid(key + ".service.gpu.gpus", who + " needs at least one whole GPU per replica"));
    if (d.gpu.mode == SharingMode::mig && d.gpu.mig_profile.empty())
      errors.push_back(invalid(key + ".service.gpu.mig_profile", who + " shares GPUs with MIG but names no profile"));
    if (shared && !(d.gpu.fraction > 0 && d.gpu.fraction <= 1))
      errors.push_back(invalid(key + ".service.gpu.fraction", who + ": the " + std::string(sharing_mode_name(d.gpu.mode)) +
                                                                  " fraction must be in (0, 1], got " + significant(d.gpu.fraction)));
  }
  return errors;
}

std::string cores(double c) { return significant(c) + (c == 1 ? " core" : " cores"); }

// Why shape `s` does not fit on an empty node of type `t`, or "".
std::string misfit(const PoolNodeType& t, const Shape& s, const std::string& what) {
  const std::string gpu = t.gpu.id.empty() ? "its GPU" : "the " + t.gpu.id;
  if (s.gpus > t.gpus_per_node)
    return what + " needs " + std::to_string(s.gpus) + " GPUs on one node, the node has " + std::to_string(t.gpus_per_node);
  if (s.mode == SharingMode::mig) {
    const int k = profile_index(t.gpu, s.profile);
    if (k < 0) return gpu + " has no MIG profile '" + s.profile + "'";
    const double slice = t.gpu.mig_profiles[static_cast<std::size_t>(k)].memory_gb * 1e9;
    if (s.gpu_memory > slice * (1 + kEpsilon))
      return what + " needs " + gb(s.gpu_memory) + " of GPU memory, MIG profile " + s.profile + " has " + gb(slice);
  } else if (s.gpu_memory > t.gpu.memory.value() * (1 + kEpsilon)) {
    return what + " needs " + gb(s.gpu_memory) + " of GPU memory, " + gpu + " has " + gb(t.gpu.memory.value());
  }
  if (s.cpu > t.allocatable_cpu() + kEpsilon)
    return what + " needs " + cores(s.cpu) + ", the node has " + cores(t.allocatable_cpu()) + " allocatable (" +
           significant(t.cpu_cores) + " minus a system reserve of " + significant(t.reserve.cpu_cores) + ")";
  if (s.memory > t.allocatable_memory().value() * (1 + kEpsilon))
    return what + " needs " + gb(s.memory) + " of memory, the node has " + gb(t.allocatable_memory().value()) + " allocatable (" +
           gb(t.memory.value()) + " minus a system reserve of " + gb(t.reserve.memory.value()) + ")";
  return "";
}

Shape service_shape(const PackingWorkload& w, int workload, int replica) {
  const auto& d = w.service;
  Shape s;
  s.workload = workload;
  s.index = replica;
  s.one_per_node = d.spread == Spread::node;
  s.mode = d.gpu.mode;
  s.gpus = d.gpu.mode == SharingMode::exclusive ? d.gpu.gpus : 1;
  s.profile = d.gpu.mig_profile;
  s.fraction = d.gpu.mode == SharingMode::exclusive ? 1.0 : d.gpu.fraction;
  s.gpu_memory = d.gpu.memory.value();
  s.cpu = d.cpu_per_replica;
  s.memory = d.memory_per_replica.value();
  s.hours = replica < d.min_replicas ? WeekHours::always().hours : w.active.hours;
  return s;
}

Shape training_part(const PackingWorkload& w, int workload, int part, int gpus) {
  const auto& d = w.training;
  Shape s;
  s.workload = workload;
  s.index = part;
  s.training = true;
  s.borrows = d.may_borrow_serving;
  s.one_per_node = true;
  s.gpus = gpus;
  s.gpu_memory = d.gpu_memory_per_gpu.value();
  s.cpu = d.cpu_per_gpu * gpus;
  s.memory = d.memory_per_gpu.value() * gpus;
  s.hours = w.active.hours;
  return s;
}

void list_hours(Shape& s) {
  s.hour_list.clear();
  for (int h = 0; h < kHoursPerWeek; ++h)
    if (s.hours.test(static_cast<std::size_t>(h))) s.hour_list.push_back(h);
}

// The units to place, or why a workload fits no node type.
Result<std::vector<Unit>> make_units(const PackingProblem& p) {
  std::vector<Unit> units;
  std::vector<Diagnostic> errors;
  const int type_count = static_cast<int>(p.node_types.size());
  for (std::size_t wi = 0; wi < p.workloads.size(); ++wi) {
    const auto& w = p.workloads[wi];
    const int workload = static_cast<int>(wi);
    std::vector<int> types;
    std::string reasons;
    // A workload sized for given GPUs runs only on node types that carry one of them.
    auto gpu_misfit = [&](int t) -> std::string {
      const auto& id = p.node_types[static_cast<std::size_t>(t)].gpu.id;
      if (w.gpus.empty() || std::find(w.gpus.begin(), w.gpus.end(), id) != w.gpus.end()) return "";
      std::string list;
      for (const auto& g : w.gpus) list += (list.empty() ? "" : ", ") + g;
      return "its GPU " + id + " is not the workload's (" + list + ")";
    };
    auto note = [&](int t, const std::string& why) {
      if (why.empty()) {
        types.push_back(t);
        return;
      }
      reasons += (reasons.empty() ? "" : "; ") + p.node_types[static_cast<std::size_t>(t)].id + ": " + why;
    };
    if (w.is_training) {
      Unit u;
      u.workload = workload;
      u.gang = true;
      u.priority = w.priority;
      u.gpu_demand = w.training.gpus;
      u.parts.resize(static_cast<std::size_t>(type_count));
      for (int t = 0; t < type_count; ++t) {
        const int per_node = p.node_types[static_cast<std::size_t>(t)].gpus_per_node;
        const int largest = std::min(per_node, w.training.gpus);
        std::string why = gpu_misfit(t);
        if (why.empty())
          why = misfit(p.node_types[static_cast<std::size_t>(t)], training_part(w, workload, 0, largest),
                       largest == per_node && w.training.gpus > per_node ? "a full node of the job" : "the job");
        note(t, why);
        if (!why.empty()) continue;
        for (int part = 0, left = w.training.gpus; left > 0; ++part, left -= per_node) {
          u.parts[static_cast<std::size_t>(t)].push_back(training_part(w, workload, part, std::min(left, per_node)));
          list_hours(u.parts[static_cast<std::size_t>(t)].back());
        }
      }
      // Topology: a gang that fits on one node of a feasible type runs on one node (its
      // all-reduce over NVLink or PCIe, not the network), even where smaller nodes cost less.
      int widest = 0;
      for (int t : types) widest = std::max(widest, p.node_types[static_cast<std::size_t>(t)].gpus_per_node);
      if (widest >= w.training.gpus)
        std::erase_if(types, [&](int t) { return p.node_types[static_cast<std::size_t>(t)].gpus_per_node < w.training.gpus; });
      u.types = types;
      if (types.empty()) errors.push_back(invalid("workloads[" + std::to_string(wi) + "]", "workload '" + w.name + "' fits no node type: " + reasons));
      else units.push_back(std::move(u));
      continue;
    }
    const Shape first = service_shape(w, workload, 0);
    for (int t = 0; t < type_count; ++t) {
      const auto& nt = p.node_types[static_cast<std::size_t>(t)];
      if (const std::string why = gpu_misfit(t); !why.empty()) {
        note(t, why);
        continue;
      }
      if (w.service.spread == Spread::zone && nt.zones.empty()) {
        note(t, "spread: zone needs a node type with zones, it lists none");
        continue;
      }
      note(t, misfit(nt, first, "a replica"));
    }
    if (types.empty()) {
      errors.push_back(invalid("workloads[" + std::to_string(wi) + "]", "workload '" + w.name + "' fits no node type: " + reasons));
      continue;
    }
    std::vector<std::string> zones;
    for (int t : types)
      for (const auto& z : p.node_types[static_cast<std::size_t>(t)].zones) zones.push_back(z);
    std::sort(zones.begin(), zones.end());
    zones.erase(std::unique(zones.begin(), zones.end()), zones.end());
    for (int r = 0; r < w.service.replicas; ++r) {
      Unit u;
      u.workload = workload;
      u.priority = w.priority;
      u.pod = service_shape(w, workload, r);
      if (w.service.spread == Spread::zone) u.pod.zone = zones[static_cast<std::size_t>(r) % zones.size()];
      list_hours(u.pod);
      for (int t : types) {
        const auto& z = p.node_types[static_cast<std::size_t>(t)].zones;
        if (u.pod.zone.empty() || std::find(z.begin(), z.end(), u.pod.zone) != z.end()) u.types.push_back(t);
      }
      // GPU demand: whole GPUs, the MIG slice's share of the compute, or the fraction.
      const auto& g = w.service.gpu;
      const auto& gpu = p.node_types[static_cast<std::size_t>(types.front())].gpu;
      if (g.mode == SharingMode::exclusive) u.gpu_demand = g.gpus;
      else if (g.mode != SharingMode::mig) u.gpu_demand = g.fraction;
      else if (const int k = profile_index(gpu, g.mig_profile); k >= 0)
        u.gpu_demand = static_cast<double>(gpu.mig_profiles[static_cast<std::size_t>(k)].compute_slices) / total_slices(gpu);
      units.push_back(std::move(u));
    }
  }
  if (!errors.empty()) return errors;
  return units;
}

// Zones a new node of type t may be opened in for pod s.
std::vector<std::string> zones_for(const PoolNodeType& t, const Shape& s, bool all_zones) {
  if (!s.zone.empty()) return {s.zone};
  if (t.zones.empty()) return {""};
  if (!all_zones) return {t.zones.front()};
  return t.zones;
}

// --- The plan a cluster state describes ----------------------------------------------

std::string share_text(const Shape& s) {
  switch (s.mode) {
    case SharingMode::exclusive: return s.gpus == 1 ? "whole GPU" : std::to_string(s.gpus) + " whole GPUs";
    case SharingMode::mig: return "MIG " + s.profile;
    case SharingMode::mps: return "MPS " + significant(s.fraction);
    case SharingMode::time_slicing: return "time-sliced " + significant(s.fraction);
  }
  return "";
}

Result<PackingPlan> make_plan(const PackingProblem& p, const Cluster& c, std::string solver) {
  PackingPlan plan;
  plan.solver = std::move(solver);
  const Currency currency = p.node_types.front().price_per_node.currency();
  for (auto& m : plan.hourly_cost) m = Money(0.0, currency);
  std::vector<std::array<int, kHoursPerWeek>> up_by_type(p.node_types.size(), std::array<int, kHoursPerWeek>{});
  for (const auto& n : c.nodes()) {
    if (n.pods.empty()) continue;
    const PoolNodeType& t = c.type(n.type);
    PackedNode out;
    out.node_type = t.id;
    out.zone = n.zone;
    for (int h = 0; h < kHoursPerWeek; ++h) out.up.hours.set(static_cast<std::size_t>(h), n.running[static_cast<std::size_t>(h)] > 0);
    for (const auto& pod : n.pods) {
      const Shape& sh = *pod.shape;
      double share = 1;
      if (sh.mode == SharingMode::mps || sh.mode == SharingMode::time_slicing) share = sh.fraction;
      else if (const int k = sh.mode == SharingMode::mig ? profile_index(t.gpu, sh.profile) : -1; k >= 0)
        share = static_cast<double>(t.gpu.mig_profiles[static_cast<std::size_t>(k)].compute_slices) / total_slices(t.gpu);
      out.pods.push_back({p.workloads[static_cast<std::size_t>(sh.workload)].name, sh.index, pod.gpus, share_text(sh), share,
                          WeekHours{sh.hours}});
    }
    for (std::size_t g = 0; g < n.gpus.size(); ++g) {
      const auto& gs = n.gpus[g];
      PackedGpu pg;
      pg.mode = gs.configured ? gs.mode : SharingMode::exclusive;
      if (gs.configured && gs.mode == SharingMode::mig) {
        std::vector<CoLocatedModel> instances;
        for (const auto& pod : n.pods)
          if (std::find(pod.gpus.begin(), pod.gpus.end(), static_cast<int>(g)) != pod.gpus.end())
            instances.push_back({p.workloads[static_cast<std::size_t>(pod.shape->workload)].name, Bytes(pod.shape->gpu_memory), 1,
                                 pod.shape->profile, 0.0});
        auto layout = plan_gpu_sharing(t.gpu, SharingMode::mig, instances);
        if (!layout) return layout.errors();  // the incremental rule and plan_gpu_sharing disagree
        pg.mig = layout->mig;
        pg.peak_memory = layout->memory_used;
      } else {
        pg.peak_memory = Bytes(*std::max_element(gs.memory.begin(), gs.memory.end()));
      }
      out.gpus.push_back(std::move(pg));
    }
    auto& up = up_by_type[static_cast<std::size_t>(n.type)];
    for (int h = 0; h < kHoursPerWeek; ++h)
      if (out.up.hours.test(static_cast<std::size_t>(h))) {
        up[static_cast<std::size_t>(h)] += 1;
        plan.nodes_up[static_cast<std::size_t>(h)] += 1;
        plan.hourly_cost[static_cast<std::size_t>(h)] += t.price_per_node * hours(1);
      }
    plan.nodes.push_back(std::move(out));
  }
  for (std::size_t t = 0; t < p.node_types.size(); ++t) {
    const auto& up = up_by_type[t];
    const int most = *std::max_element(up.begin(), up.end());
    if (most == 0) continue;
    plan.pools.push_back({p.node_types[t].id, *std::min_element(up.begin(), up.end()), most});
  }
  plan.weekly_cost = Money(0.0, currency);
  for (const auto& m : plan.hourly_cost) plan.weekly_cost += m;
  return plan;
}

// --- Exact ------------------------------------------------------------------------------

class BranchAndBound {
 public:
  BranchAndBound(const PackingProblem& p, const std::vector<Unit>& units, double upper_bound)
      : units_(units), cluster_(p.node_types), best_cost_(upper_bound) {
    for (const auto& u : units)
      if (!u.pod.zone.empty()) all_zones_ = true;
    // Largest first: big items decide the nodes, and the bound bites sooner.
    order_.resize(units.size());
    std::iota(order_.begin(), order_.end(), 0);
    std::stable_sort(order_.begin(), order_.end(), [&](std::size_t a, std::size_t b) { return units[a].gpu_demand > units[b].gpu_demand; });
  }

  // False when the search was cut at kExactMaxSearchNodes.
  bool run() {
    unit(0);
    return !cut_;
  }
  std::optional<Cluster>& best() { return best_; }
  long long searched() const { return searched_; }

 private:
  void unit(std::size_t k) {
    if (cut_) return;
    if (++searched_ > kExactMaxSearchNodes) {
      cut_ = true;
      return;
    }
    const double cost = cluster_.total_cost();
    if (cost >= best_cost_ - kEpsilon) return;
    if (k == order_.size()) {
      best_cost_ = cost;
      best_ = cluster_;
      return;
    }
    const Unit& u = units_[order_[k]];
    if (u.gang) {
      for (int t : u.types) part(k, t, 0);
      return;
    }
    for (const auto& target : targets(u.pod, u.types)) place_and_recurse(target, u.pod, [&] { unit(k + 1); });
  }

  void part(std::size_t k, int t, std::size_t j) {
    const auto& parts = units_[order_[k]].parts[static_cast<std::size_t>(t)];
    if (j == parts.size()) {
      unit(k + 1);
      return;
    }
    for (const auto& target : targets(parts[j], {t})) place_and_recurse(target, parts[j], [&] { part(k, t, j + 1); });
  }

  // Where a pod may go: every open node of an allowed type (as index), or a new node of a
  // type and zone (index -1 - option).
  struct Target {
    int node = -1;
    int type = -1;
    std::string zone;
  };
  std::vector<Target> targets(const Shape& s, const std::vector<int>& types) {
    std::vector<Target> out;
    for (std::size_t n = 0; n < cluster_.nodes().size(); ++n)
      if (std::find(types.begin(), types.end(), cluster_.nodes()[n].type) != types.end()) out.push_back({static_cast<int>(n), -1, ""});
    for (int t : types)
      for (auto& z : zones_for(cluster_.type(t), s, all_zones_)) out.push_back({-1, t, std::move(z)});
    return out;
  }

  template <class Next>
  void place_and_recurse(const Target& target, const Shape& s, Next next) {
    int node = target.node;
    if (node < 0) node = cluster_.open(target.type, target.zone);
    auto f = cluster_.fit(cluster_.nodes()[static_cast<std::size_t>(node)], s);
    if (f) {
      cluster_.add(node, std::move(*f));
      next();
      cluster_.remove(node, cluster_.nodes()[static_cast<std::size_t>(node)].pods.size() - 1);
    }
    if (target.node < 0) cluster_.close_last();
  }

  const std::vector<Unit>& units_;
  Cluster cluster_;
  double best_cost_;
  std::optional<Cluster> best_;
  std::vector<std::size_t> order_;
  bool all_zones_ = false;
  bool cut_ = false;
  long long searched_ = 0;
};

// --- Heuristic --------------------------------------------------------------------------

// How many pods like `s` an empty node of type t holds at once (hours ignored).
int capacity(const PoolNodeType& t, const Shape& s) {
  double k = t.gpus_per_node / s.gpus;
  if (s.mode == SharingMode::mig) {
    const int i = profile_index(t.gpu, s.profile);
    const auto& p = t.gpu.mig_profiles[static_cast<std::size_t>(i)];
    k = t.gpus_per_node * std::min<double>({static_cast<double>(p.max_instances), std::floor(total_slices(t.gpu) / p.compute_slices),
                                           std::floor(t.gpu.memory.value() / (p.memory_gb * 1e9) + kEpsilon)});
  } else if (s.mode != SharingMode::exclusive) {
    k = t.gpus_per_node * std::floor(1 / s.fraction + kEpsilon);
    if (s.gpu_memory > 0) k = std::min(k, t.gpus_per_node * std::floor(t.gpu.memory.value() / s.gpu_memory + kEpsilon));
  }
  if (s.cpu > 0) k = std::min(k, std::floor(t.allocatable_cpu() / s.cpu + kEpsilon));
  if (s.memory > 0) k = std::min(k, std::floor(t.allocatable_memory().value() / s.memory + kEpsilon));
  if (s.one_per_node) k = std::min(k, 1.0);
  return std::max(1, static_cast<int>(k));
}

// The pairwise re-packing runs on clusters of at most this many nodes, for pairs of at
// most this many pods (its cost grows with the square of the nodes).
constexpr std::size_t kPairRepackMaxNodes = 60;
constexpr std::size_t kPairRepackMaxPods = 8;

// The open node where pod `s` adds the least cost, among those `eligible(index, node)`
// accepts and it fits on: node -1 when none.
struct NodeChoice {
  double cost = std::numeric_limits<double>::infinity();
  int node = -1;
  std::optional<PodOnNode> fit;
};

template <class Eligible>
NodeChoice cheapest_open_node(const Cluster& c, const Shape& s, Eligible eligible) {
  NodeChoice best;
  for (std::size_t n = 0; n < c.nodes().size(); ++n) {
    const auto& node = c.nodes()[n];
    if (!eligible(n, node)) continue;
    const double cost = c.marginal(node, s);
    if (cost >= best.cost) continue;
    auto f = c.fit(node, s);
    if (!f) continue;
    best = {cost, static_cast<int>(n), std::move(f)};
  }
  return best;
}

struct Pass {
  std::string name;
  int preferred_type = -1;  // -1: the type with the lowest amortized cost per pod
  bool by_gpu_hours = false;
};

class Heuristic {
 public:
  Heuristic(const PackingProblem& p, const std::vector<Unit>& units)
      : p_(p), units_(units), workload_types_(p.workloads.size()) {
    for (const auto& u : units) {
      auto& types = workload_types_[static_cast<std::size_t>(u.workload)];
      types.insert(types.end(), u.types.begin(), u.types.end());
      std::sort(types.begin(), types.end());
      types.erase(std::unique(types.begin(), types.end()), types.end());
    }
  }

  Cluster run(const Pass& pass) {
    Cluster c(p_.node_types);
    std::vector<std::size_t> order(units_.size());
    std::iota(order.begin(), order.end(), 0);
    auto key = [&](const Unit& u) {
      const double hours = u.gang ? static_cast<double>(u.parts[static_cast<std::size_t>(u.types.front())].front().hours.count())
                                  : static_cast<double>(u.pod.hours.count());
      return pass.by_gpu_hours ? u.gpu_demand * hours : u.gpu_demand;
    };
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      const Unit& x = units_[a];
      const Unit& y = units_[b];
      if (key(x) != key(y)) return key(x) > key(y);
      return x.priority > y.priority;
    });
    std::vector<int> left(p_.workloads.size(), 0);  // pods of each workload not yet placed
    for (const auto& u : units_) left[static_cast<std::size_t>(u.workload)] += 1;
    for (std::size_t i : order) {
      const Unit& u = units_[i];
      if (u.gang) place_gang(c, u, pass);
      else place_pod(c, u, pass, left[static_cast<std::size_t>(u.workload)]);
      left[static_cast<std::size_t>(u.workload)] -= 1;
    }
    improve(c);
    return c;
  }

 private:
  bool allowed(const Unit& u, int t, const Pass& pass) const {
    const bool has_preferred = std::find(u.types.begin(), u.types.end(), pass.preferred_type) != u.types.end();
    return !has_preferred || t == pass.preferred_type;
  }

  void place_pod(Cluster& c, const Unit& u, const Pass& pass, int left) {
    const Shape& s = u.pod;
    NodeChoice open = cheapest_open_node(c, s, [&](std::size_t, const NodeState& node) {
      return std::find(u.types.begin(), u.types.end(), node.type) != u.types.end();
    });
    double best = open.cost;
    int best_node = open.node;
    std::optional<PodOnNode> best_fit = std::move(open.fit);
    int best_type = -1;
    for (int t : u.types) {
      if (!allowed(u, t, pass)) continue;
      const double amortized = c.price(t) * static_cast<double>(s.hour_list.size()) / std::min(left, capacity(c.type(t), s));
      if (amortized < best - kEpsilon) {
        best = amortized;
        best_type = t;
      }
    }
    if (best_type >= 0) {
      best_node = c.open(best_type, zones_for(c.type(best_type), s, false).front());
      best_fit = c.fit(c.nodes()[static_cast<std::size_t>(best_node)], s);
    }
    c.add(best_node, std::move(*best_fit));
  }

  // The parts of the gang on type t: each on the cheapest node of t that fits and holds no
  // other part, else on a new node. Returns the cost; places them when `commit`.
  double gang_on(Cluster& c, const Unit& u, int t, bool commit) {
    double total = 0;
    std::vector<int> used;
    for (const Shape& s : u.parts[static_cast<std::size_t>(t)]) {
      // An open node wins a tie with a new one: the pool stays smaller.
      double best = c.price(t) * static_cast<double>(s.hour_list.size());
      double best_existing = std::numeric_limits<double>::infinity();
      int best_node = -1;
      for (std::size_t n = 0; n < c.nodes().size(); ++n) {
        const auto& node = c.nodes()[n];
        if (node.type != t || std::find(used.begin(), used.end(), static_cast<int>(n)) != used.end()) continue;
        const double cost = c.marginal(node, s);
        if (cost <= best + kEpsilon && cost < best_existing && c.fit(node, s)) {
          best_existing = cost;
          best = cost;
          best_node = static_cast<int>(n);
        }
      }
      if (best_node < 0) best_node = commit ? c.open(t, zones_for(c.type(t), s, false).front()) : -2 - static_cast<int>(used.size());
      used.push_back(best_node);
      total += best;
      if (commit) c.add(best_node, std::move(*c.fit(c.nodes()[static_cast<std::size_t>(best_node)], s)));
    }
    return total;
  }

  void place_gang(Cluster& c, const Unit& u, const Pass& pass) {
    double best = std::numeric_limits<double>::infinity();
    int best_type = -1;
    for (int t : u.types) {
      if (!allowed(u, t, pass)) continue;
      const double cost = gang_on(c, u, t, false);
      if (cost < best - kEpsilon) {
        best = cost;
        best_type = t;
      }
    }
    gang_on(c, u, best_type, true);
  }

  // Moves every pod of node `from` to other open nodes (the cheapest fit each), or to a new
  // node of type `to` when to >= 0. Keeps the change if the week costs less, else undoes it.
  bool try_empty(Cluster& c, std::size_t from, int to) {
    const double before = c.total_cost();
    const int type = c.nodes()[from].type;
    std::vector<PodOnNode> taken;
    while (!c.nodes()[from].pods.empty()) taken.push_back(c.remove(static_cast<int>(from), c.nodes()[from].pods.size() - 1));
    std::vector<std::pair<int, std::size_t>> moved;  // node, pod index there
    bool ok = true;
    const bool opened = to >= 0;
    if (opened) {
      const auto& zones = c.type(to).zones;
      const std::string& zone = c.nodes()[from].zone;
      c.open(to, zones.empty() ? "" : std::find(zones.begin(), zones.end(), zone) != zones.end() ? zone : zones.front());
    }
    for (const auto& pod : taken) {
      const Shape& s = *pod.shape;
      // Gang parts stay on their type and on nodes without another part of the gang.
      NodeChoice to = cheapest_open_node(c, s, [&](std::size_t n, const NodeState& node) {
        if (n == from || (opened && n + 1 != c.nodes().size())) return false;
        return s.training ? node.type == type : type_allowed(s, node.type);
      });
      const int best_node = to.node;
      std::optional<PodOnNode>& best_fit = to.fit;
      if (best_node < 0) {
        ok = false;
        break;
      }
      c.add(best_node, std::move(*best_fit));
      moved.emplace_back(best_node, c.nodes()[static_cast<std::size_t>(best_node)].pods.size() - 1);
    }
    if (ok && c.total_cost() < before - kEpsilon) {
      if (opened) std::swap(c.nodes()[from], c.nodes().back());
      if (opened) c.close_last();
      return true;
    }
    for (auto it = moved.rbegin(); it != moved.rend(); ++it) c.remove(it->first, it->second);
    if (opened) c.close_last();
    for (auto& pod : taken) c.add(static_cast<int>(from), std::move(pod));
    return false;
  }

  // Zone-spread replicas have their own zone's types; the workload's list is their union,
  // and fit() checks the zone.
  bool type_allowed(const Shape& s, int t) const {
    const auto& types = workload_types_[static_cast<std::size_t>(s.workload)];
    return std::find(types.begin(), types.end(), t) != types.end();
  }

  // The service pods of nodes i and j re-packed by the exact solver onto new nodes; kept
  // when they cost less than the two nodes do. Nodes with training parts are left alone
  // (a gang's parts stay on one type).
  bool repack_pair(Cluster& c, std::size_t i, std::size_t j) {
    const auto& a = c.nodes()[i];
    const auto& b = c.nodes()[j];
    if (a.pods.empty() || b.pods.empty() || a.strict_training + b.strict_training > 0) return false;
    if (a.pods.size() + b.pods.size() > kPairRepackMaxPods) return false;
    std::vector<Unit> sub;
    std::vector<const Shape*> original;
    for (const auto* n : {&a, &b})
      for (const auto& pod : n->pods) {
        if (pod.shape->training) return false;
        Unit u;
        u.workload = pod.shape->workload;
        u.pod = *pod.shape;
        u.types = workload_types_[static_cast<std::size_t>(u.workload)];
        u.gpu_demand = pod.shape->fraction * pod.shape->gpus;
        sub.push_back(std::move(u));
        original.push_back(pod.shape);
      }
    const double now = c.cost(a) + c.cost(b);
    BranchAndBound search(p_, sub, now - 1e-6 * (1 + now));
    if (!search.run() || !search.best()) return false;
    // Rebuild the better packing with the original pods, in the order it added them.
    for (std::size_t n : {j, i})
      while (!c.nodes()[n].pods.empty()) c.remove(static_cast<int>(n), c.nodes()[n].pods.size() - 1);
    for (const auto& node : search.best()->nodes()) {
      if (node.pods.empty()) continue;
      const int to = c.open(node.type, node.zone);
      for (const auto& pod : node.pods) {
        std::size_t k = 0;
        while (&sub[k].pod != pod.shape) ++k;
        auto f = c.fit(c.nodes()[static_cast<std::size_t>(to)], *original[k]);
        c.add(to, std::move(*f));
      }
    }
    return true;
  }

  void improve(Cluster& c) {
    for (int round = 0; round < 4; ++round) {
      bool changed = false;
      // Close nodes, cheapest first: their pods are the easiest to move.
      std::vector<std::size_t> order(c.nodes().size());
      std::iota(order.begin(), order.end(), 0);
      std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return c.cost(c.nodes()[a]) < c.cost(c.nodes()[b]); });
      for (std::size_t n : order)
        if (!c.nodes()[n].pods.empty()) changed = try_empty(c, n, -1) || changed;
      // A cheaper type for a node of services (training gangs keep one type).
      for (std::size_t n = 0; n < c.nodes().size(); ++n) {
        if (c.nodes()[n].pods.empty() || c.nodes()[n].services == 0) continue;
        bool has_training = false;
        for (const auto& pod : c.nodes()[n].pods) has_training = has_training || pod.shape->training;
        if (has_training) continue;
        for (int t = 0; t < static_cast<int>(p_.node_types.size()); ++t)
          if (c.price(t) < c.price(c.nodes()[n].type) && try_empty(c, n, t)) {
            changed = true;
            break;
          }
      }
      std::erase_if(c.nodes(), [](const NodeState& node) { return node.pods.empty(); });
      if (c.nodes().size() <= kPairRepackMaxNodes)
        for (std::size_t i = 0; i < c.nodes().size(); ++i)
          for (std::size_t j = i + 1; j < c.nodes().size(); ++j) changed = repack_pair(c, i, j) || changed;
      std::erase_if(c.nodes(), [](const NodeState& node) { return node.pods.empty(); });
      if (!changed) break;
    }
  }

  const PackingProblem& p_;
  const std::vector<Unit>& units_;
  std::vector<std::vector<int>> workload_types_;
};

struct Solved {
  Cluster cluster;
  std::string name;
};

Result<Solved> solve_heuristic(const PackingProblem& p, const std::vector<Unit>& units) {
  Heuristic h(p, units);
  std::vector<Pass> passes;
  for (bool by_hours : {false, true}) {
    const std::string order = by_hours ? "GPU-hours" : "GPU demand";
    passes.push_back({"first fit by " + order + ", lowest cost per pod", -1, by_hours});
    for (int t = 0; t < static_cast<int>(p.node_types.size()); ++t)
      passes.push_back({"first fit by " + order + ", preferring " + p.node_types[static_cast<std::size_t>(t)].id, t, by_hours});
  }
  std::optional<Solved> best;
  for (const auto& pass : passes) {
    Cluster c = h.run(pass);
    if (!best || c.total_cost() < best->cluster.total_cost() - kEpsilon) best = Solved{std::move(c), pass.name};
  }
  return std::move(*best);
}

// Pods to place: a gang counts as its parts on the node type that splits it most.
int pod_count(const std::vector<Unit>& units) {
  int pods = 0;
  for (const auto& u : units) {
    std::size_t most = 1;
    for (const auto& parts : u.parts) most = std::max(most, parts.size());
    pods += static_cast<int>(most);
  }
  return pods;
}

// The units, or why there are too many for the heuristic's budget (kMaxPackingPods). The
// fewest pods the workloads can make (a gang on the widest node type) are counted before the
// units are made: a gang of a million GPUs would otherwise make a million parts per type.
Result<std::vector<Unit>> units_within_budget(const PackingProblem& p) {
  int widest = 1;
  for (const auto& t : p.node_types) widest = std::max(widest, t.gpus_per_node);
  long long replicas = 0;
  bool gangs = false;
  for (const auto& w : p.workloads) {
    gangs = gangs || w.is_training;
    replicas += w.is_training ? (std::max(1, w.training.gpus) + widest - 1) / widest : std::max(0, w.service.replicas);
  }
  auto over = [](long long pods, bool at_least) {
    return invalid("workloads", "the workloads have " + std::string(at_least ? "at least " : "") + std::to_string(pods) +
                                    " pods to pack (a gang counted as its parts on the node type that splits it "
                                    "most), more than the packer's limit of " +
                                    std::to_string(kMaxPackingPods) + " pods");
  };
  if (replicas > kMaxPackingPods) return over(replicas, gangs);
  auto units = make_units(p);
  if (!units) return units.errors();
  if (const int pods = pod_count(*units); pods > kMaxPackingPods) return over(pods, false);
  return units;
}

}  // namespace

Result<PackingPlan> pack_heuristic(const PackingProblem& problem) {
  if (auto errors = validate(problem); !errors.empty()) return errors;
  auto units = units_within_budget(problem);
  if (!units) return units.errors();
  auto solved = solve_heuristic(problem, *units);
  return make_plan(problem, solved->cluster, "heuristic: " + solved->name);
}

Result<PackingPlan> pack_exact(const PackingProblem& problem) {
  if (auto errors = validate(problem); !errors.empty()) return errors;
  auto units = units_within_budget(problem);
  if (!units) return units.errors();
  const int pods = pod_count(*units);
  if (pods > kExactMaxPods)
    return invalid("workloads", "the exact solver takes at most " + std::to_string(kExactMaxPods) + " pods, the instance has " +
                                    std::to_string(pods));
  // The heuristic's cost bounds the search: only strictly cheaper packings (or an equal
  // one, within rounding) are kept.
  auto start = solve_heuristic(problem, *units);
  BranchAndBound search(problem, *units, start->cluster.total_cost() * (1 + 1e-9) + kEpsilon);
  if (!search.run())
    return invalid("workloads", "the exact solver stopped after " + std::to_string(kExactMaxSearchNodes) + " search nodes");
  if (!search.best()) return make_plan(problem, start->cluster, "exact: the heuristic's packing is optimal, " + std::to_string(search.searched()) + " search nodes");
  return make_plan(problem, *search.best(), "exact: " + std::to_string(search.searched()) + " search nodes");
}

}  // namespace capsim::models
