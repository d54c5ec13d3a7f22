// A cluster plan as Kueue, JobSet, Deployment, HPA and PDB objects (k8s) or Karpenter
// NodePools (karpenter). The objects are built with yaml-cpp's emitter, which quotes and
// escapes; the field names follow the published schemas that tests/exports/
// validate_cluster_exports.mjs checks them against.
#include "capsim/scenarios/cluster_export.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "capsim/core/suggest.hpp"
#include "capsim/core/text.hpp"
#include "capsim/scenarios/escape.hpp"
#include "capsim/scenarios/export.hpp"
#include "capsim/scenarios/pod_security.hpp"

namespace capsim::scenarios {
namespace {

using models::SharingMode;

constexpr const char* kGpuTaint = "nvidia.com/gpu";
constexpr const char* kInstanceTypeLabel = "node.kubernetes.io/instance-type";
constexpr const char* kQueueLabel = "kueue.x-k8s.io/queue-name";
constexpr const char* kKueueApi = "kueue.x-k8s.io/v1beta2";
constexpr double kMiB = 1024.0 * 1024.0;

// CPU as Kubernetes writes it: whole cores ("2") or millicores ("500m"), rounded up.
std::string cpu_quantity(double cores) {
  const auto milli = static_cast<long long>(std::ceil(cores * 1000 - 1e-6));
  return milli % 1000 == 0 ? std::to_string(milli / 1000) : std::to_string(milli) + "m";
}

// Memory in binary units ("8Gi", "1536Mi"), rounded up to a MiB.
std::string memory_quantity(Bytes b) {
  const auto mib = static_cast<long long>(std::ceil(b.value() / kMiB - 1e-9));
  return mib % 1024 == 0 ? std::to_string(mib / 1024) + "Gi" : std::to_string(mib) + "Mi";
}

// The Compute Engine machine type of a GCP instance the catalog names with its attached GPUs
// ("n1-standard-8 + 4 x nvidia-tesla-t4"): GKE labels the node with the machine type only.
std::string machine_type(const std::string& instance_type) {
  return instance_type.substr(0, instance_type.find(" + "));
}

struct Pool {
  std::string name;           // DNS-1123 label of the node type id
  std::string provider;
  std::string instance_type;  // the node label's value
  const models::PoolBounds* bounds = nullptr;
  const models::PoolNodeType* type = nullptr;
  std::string gpu_resource;   // its vendor's device-plugin resource and taint key (nvidia.com/gpu, amd.com/gpu)
  // GKE's MIG strategy: the profile GKE partitions every GPU of this pool into (a GCP pool whose
  // pods are all MIG slices of that one profile); pods then ask for nvidia.com/gpu.
  std::optional<std::string> gke_partition;
};

// One workload as the export sees it: its demand, the plan's words for it and where it runs.
struct Workload {
  std::string name;  // DNS-1123 label
  const models::PackingWorkload* demand = nullptr;
  const ClusterWorkloadPlan* plan = nullptr;
  std::vector<std::string> instance_types;  // of the pools its pods are on, sorted
  std::map<int, int> pods_by_gpus;          // training: gang pods by their GPU count
  std::string gpu_resource = kGpuTaint;     // whole GPUs: the vendor's resource (its pools')
  std::optional<std::string> gke_partition;  // MIG on GKE-partitioned pools: the partition size
  int gang_nodes = 0;                       // training: nodes of the gang (one pod each)
  int efa = 0;                              // training on several nodes: EFA interfaces per pod
};

struct Export {
  std::string queue;  // the ClusterQueue's, LocalQueue's and EC2NodeClass's name
  // The plan's one MIG strategy: "" (no MIG slices), "gke" (GKE partitions the pools' GPUs,
  // pods ask for nvidia.com/gpu on nodes labelled cloud.google.com/gke-gpu-partition-size) or
  // "mixed" (the NVIDIA GPU operator's mixed strategy, pods ask for nvidia.com/mig-<profile>).
  std::string mig_strategy;
  std::vector<Pool> pools;
  std::vector<Workload> workloads;
};

Diagnostic name_error(const std::string& what, const std::string& message, const SourceLocation& where = {}) {
  return Diagnostic{where, "export", what + ": " + message, ""};
}

const models::PackingWorkload* workload_named(const ClusterPlan& plan, const std::string& name) {
  for (const auto& w : plan.problem.workloads)
    if (w.name == name) return &w;
  return nullptr;
}

// The MIG profiles of the pods on a pool's nodes, and whether any pod there is not a MIG slice.
struct PoolMig {
  std::set<std::string> profiles;
  bool other = false;  // a pod of whole GPUs, a share, or training
};

PoolMig pool_mig(const ClusterPlan& plan, const std::string& node_type) {
  PoolMig m;
  for (const auto& node : plan.packing.nodes)
    if (node.node_type == node_type)
      for (const auto& pod : node.pods) {
        const auto* w = workload_named(plan, pod.workload);
        if (w != nullptr && !w->is_training && w->service.gpu.mode == SharingMode::mig) m.profiles.insert(w->service.gpu.mig_profile);
        else m.other = true;
      }
  return m;
}

// The pool's and workloads' names and placements; errors when a name does not survive.
// Object names are capsim's own derivation from the names in the cluster file (dns1123_label,
// deterministic); one that does not make a valid name is an error at that name: key.
Result<Export> gather(const ClusterPlan& plan, std::string_view target) {
  Export e;
  std::vector<Diagnostic> errors;
  e.queue = dns1123_label(plan.name);
  if (e.queue.empty() || e.queue.size() > 63)
    errors.push_back(name_error("cluster '" + plan.name + "'", "its name is no DNS-1123 label (1 to 63 letters, digits, '-')",
                                plan.name_where));
  else if (target != "k8s" && !is_gke_cluster_name(e.queue))
    errors.push_back(name_error("cluster '" + plan.name + "'",
                                "its name becomes '" + e.queue + "', which is no cluster name: a letter first and at most "
                                "40 letters, digits and '-' (GKE's rule; Karpenter's EC2NodeClass and node role take it too)",
                                plan.name_where));
  std::map<std::string, std::string> instance_of;  // node type id -> label value
  std::set<std::string> pool_names;
  for (const auto& bounds : plan.packing.pools) {
    Pool p;
    p.bounds = &bounds;
    for (std::size_t i = 0; i < plan.problem.node_types.size(); ++i) {
      if (plan.problem.node_types[i].id != bounds.node_type) continue;
      p.type = &plan.problem.node_types[i];
      if (i < plan.node_type_sources.size()) {
        p.provider = plan.node_type_sources[i].provider;
        p.instance_type = machine_type(plan.node_type_sources[i].instance_type);
      }
    }
    p.name = dns1123_label(bounds.node_type);
    if (p.name.empty() || p.name.size() > 63)
      errors.push_back(name_error("pool '" + bounds.node_type + "'", "its name is no DNS-1123 label (1 to 63 letters, digits, '-')"));
    if (p.type == nullptr || p.instance_type.empty()) {
      errors.push_back(name_error("pool '" + bounds.node_type + "'", "the plan names no instance type for it"));
      continue;
    }
    if (!valid_label_value(p.instance_type))
      errors.push_back(name_error("pool '" + bounds.node_type + "'", "instance type '" + p.instance_type + "' is no label value"));
    if (!pool_names.insert(p.name).second)
      errors.push_back(name_error("pool '" + bounds.node_type + "'", "its name '" + p.name + "' is another pool's too"));
    instance_of[bounds.node_type] = p.instance_type;
    p.gpu_resource = accelerator_resource(p.type->gpu.vendor).value_or(kGpuTaint);
    e.pools.push_back(std::move(p));
  }
  // One MIG strategy for the whole plan: GKE's own partitioning when every pool that holds MIG
  // slices is a GCP pool of one profile and nothing else (GKE partitions a pool's GPUs into one
  // size), else the NVIDIA GPU operator's mixed strategy. Every target writes the same one.
  bool any_mig = false, all_gke = true;
  for (auto& p : e.pools) {
    const PoolMig m = pool_mig(plan, p.bounds->node_type);
    if (m.profiles.empty()) continue;
    any_mig = true;
    if (p.provider == "gcp" && m.profiles.size() == 1 && !m.other) p.gke_partition = *m.profiles.begin();
    else all_gke = false;
  }
  if (any_mig) e.mig_strategy = all_gke ? "gke" : "mixed";
  if (e.mig_strategy != "gke")
    for (auto& p : e.pools) p.gke_partition.reset();
  std::map<std::string, const Pool*> pool_of;
  for (const auto& p : e.pools) pool_of[p.bounds->node_type] = &p;
  std::set<std::string> names;
  for (std::size_t i = 0; i < plan.problem.workloads.size() && i < plan.workloads.size(); ++i) {
    Workload w;
    w.demand = &plan.problem.workloads[i];
    w.plan = &plan.workloads[i];
    w.name = dns1123_label(w.demand->name);
    const std::string what = "workload '" + w.demand->name + "'";
    const SourceLocation& at = w.plan->name_where;
    if (w.name.empty()) errors.push_back(name_error(what, "its name has no letter or digit", at));
    else if (w.name.size() > 63) errors.push_back(name_error(what, "a name has at most 63 characters (a DNS-1123 label)", at));
    else if (!names.insert(w.name).second)
      errors.push_back(name_error(what, "its name '" + w.name + "' is another workload's too", at));
    // JobSet names its pods <jobset>-workers-<job>-<index>-<5 random characters>, which must
    // be DNS-1035 labels (jobset's webhook): a letter first and at most 63 characters.
    if (w.demand->is_training && !w.name.empty() &&
        (std::isalpha(static_cast<unsigned char>(w.name.front())) == 0 || w.name.size() > 45))
      errors.push_back(name_error(what, "a JobSet's name starts with a letter and has at most 45 characters (its pods are "
                                        "named <name>-workers-0-<index>-<5 characters>, a DNS-1035 label), '" + w.name + "' does not",
                                  at));
    std::set<std::string> types;
    std::optional<int> efa;  // the fewest EFA interfaces among the gang's node types
    for (const auto& node : plan.packing.nodes)
      for (const auto& pod : node.pods) {
        if (pod.workload != w.demand->name) continue;
        types.insert(instance_of[node.node_type]);
        if (const auto it = pool_of.find(node.node_type); it != pool_of.end()) {
          w.gpu_resource = it->second->gpu_resource;
          if (it->second->gke_partition && w.demand->service.gpu.mode == SharingMode::mig) w.gke_partition = it->second->gke_partition;
        }
        if (!w.demand->is_training) continue;
        ++w.pods_by_gpus[static_cast<int>(pod.gpus.size())];
        ++w.gang_nodes;
        for (const auto& src : plan.node_type_sources)
          if (src.id == node.node_type) efa = std::min(efa.value_or(src.efa_interfaces), src.efa_interfaces);
      }
    if (w.gang_nodes > 1) w.efa = efa.value_or(0);
    w.instance_types.assign(types.begin(), types.end());
    e.workloads.push_back(std::move(w));
  }
  if (!errors.empty()) return errors;
  return e;
}

void key_value(YAML::Emitter& y, const std::string& k, const std::string& v) { y << YAML::Key << k << YAML::Value << v; }

void metadata(YAML::Emitter& y, const std::string& name, const std::vector<std::pair<std::string, std::string>>& labels = {},
              const std::vector<std::pair<std::string, std::string>>& annotations = {}) {
  y << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap;
  key_value(y, "name", name);
  if (!labels.empty()) {
    y << YAML::Key << "labels" << YAML::Value << YAML::BeginMap;
    for (const auto& [k, v] : labels) key_value(y, k, v);
    y << YAML::EndMap;
  }
  if (!annotations.empty()) {
    y << YAML::Key << "annotations" << YAML::Value << YAML::BeginMap;
    for (const auto& [k, v] : annotations) y << YAML::Key << k << YAML::Value << YAML::DoubleQuoted << v;
    y << YAML::EndMap;
  }
  y << YAML::EndMap;
}

void begin_object(YAML::Emitter& y, const char* api_version, const char* kind) {
  y << YAML::BeginDoc << YAML::BeginMap;
  key_value(y, "apiVersion", api_version);
  key_value(y, "kind", kind);
}

// ---- k8s: Kueue's queue and flavors.

// The most of each GPU resource a pool has up in one hour: its whole (non-MIG) GPUs as
// nvidia.com/gpu, its MIG instances as nvidia.com/mig-<profile>.
std::map<std::string, int> gpu_maxima(const ClusterPlan& plan, const Pool& pool) {
  const std::string& node_type = pool.type->id;
  std::map<std::string, int> most;
  for (int h = 0; h < models::kHoursPerWeek; ++h) {
    std::map<std::string, int> up;
    for (const auto& node : plan.packing.nodes) {
      if (node.node_type != node_type || !node.up.hours.test(static_cast<std::size_t>(h))) continue;
      for (const auto& gpu : node.gpus) {
        if (gpu.mode != SharingMode::mig) ++up[pool.gpu_resource];
        // GKE advertises each partition of a partitioned GPU as one nvidia.com/gpu.
        for (const auto& instance : gpu.mig) ++up[pool.gke_partition ? kGpuTaint : "nvidia.com/mig-" + instance.profile];
      }
    }
    for (const auto& [resource, count] : up) most[resource] = std::max(most[resource], count);
  }
  return most;
}

void resource_flavor(YAML::Emitter& y, const Pool& p) {
  begin_object(y, kKueueApi, "ResourceFlavor");
  metadata(y, p.name);
  y << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "nodeLabels" << YAML::Value << YAML::BeginMap;
  key_value(y, kInstanceTypeLabel, p.instance_type);
  if (p.gke_partition) key_value(y, "cloud.google.com/gke-gpu-partition-size", *p.gke_partition);
  y << YAML::EndMap;
  y << YAML::Key << "nodeTaints" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  key_value(y, "key", p.gpu_resource);
  key_value(y, "effect", "NoSchedule");
  y << YAML::EndMap << YAML::EndSeq;
  y << YAML::EndMap << YAML::EndMap;
}

// Kueue requires every flavor of a resource group to list the group's covered resources, in
// their order; a pool without a resource has a quota of 0 for it.
void cluster_queue(YAML::Emitter& y, const ClusterPlan& plan, const Export& e) {
  std::vector<std::map<std::string, std::string>> quotas;
  std::set<std::string> gpu_resources;
  for (const auto& p : e.pools) gpu_resources.insert(p.gpu_resource);
  for (const auto& p : e.pools) {
    std::map<std::string, std::string> q;
    q["cpu"] = cpu_quantity(p.bounds->max_nodes * p.type->allocatable_cpu());
    q["memory"] = memory_quantity(Bytes(p.bounds->max_nodes * p.type->allocatable_memory().value()));
    for (const auto& [resource, count] : gpu_maxima(plan, p)) {
      q[resource] = std::to_string(count);
      gpu_resources.insert(resource);
    }
    // EFA interfaces, where a multi-node gang asks for them: Kueue admits only resources
    // its queue covers.
    for (const auto& w : e.workloads)
      if (w.efa > 0)
        for (const auto& src : plan.node_type_sources)
          if (src.id == p.type->id && src.efa_interfaces > 0) {
            q[kEfaResource] = std::to_string(p.bounds->max_nodes * src.efa_interfaces);
            gpu_resources.insert(kEfaResource);
          }
    quotas.push_back(std::move(q));
  }
  std::vector<std::string> covered{"cpu", "memory"};
  covered.insert(covered.end(), gpu_resources.begin(), gpu_resources.end());
  begin_object(y, kKueueApi, "ClusterQueue");
  std::vector<std::pair<std::string, std::string>> notes{{"capsim.dev/quotas", "each pool's most nodes in one hour of the plan"}};
  if (!e.mig_strategy.empty()) notes.emplace_back("capsim.dev/mig-strategy", e.mig_strategy);
  metadata(y, e.queue, {}, notes);
  y << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "namespaceSelector" << YAML::Value << YAML::BeginMap << YAML::EndMap;  // every namespace
  y << YAML::Key << "resourceGroups" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  y << YAML::Key << "coveredResources" << YAML::Value << YAML::BeginSeq;
  for (const auto& r : covered) y << r;
  y << YAML::EndSeq;
  y << YAML::Key << "flavors" << YAML::Value << YAML::BeginSeq;
  for (std::size_t i = 0; i < e.pools.size(); ++i) {
    y << YAML::BeginMap;
    key_value(y, "name", e.pools[i].name);
    y << YAML::Key << "resources" << YAML::Value << YAML::BeginSeq;
    for (const auto& r : covered) {
      const auto it = quotas[i].find(r);
      y << YAML::BeginMap;
      key_value(y, "name", r);
      y << YAML::Key << "nominalQuota" << YAML::Value << YAML::DoubleQuoted << (it == quotas[i].end() ? "0" : it->second);
      y << YAML::EndMap;
    }
    y << YAML::EndSeq << YAML::EndMap;
  }
  y << YAML::EndSeq;
  y << YAML::EndMap << YAML::EndSeq;
  y << YAML::EndMap << YAML::EndMap;
}

void local_queue(YAML::Emitter& y, const Export& e) {
  begin_object(y, kKueueApi, "LocalQueue");
  metadata(y, e.queue);
  y << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  key_value(y, "clusterQueue", e.queue);
  y << YAML::EndMap << YAML::EndMap;
}

// ---- k8s: pods.

// The GPU resource and count one pod asks for, and what the device plugin must do for it.
struct GpuAsk {
  std::string resource;
  int count = 1;
  std::string note;  // "" for whole GPUs and MIG slices
};

GpuAsk gpu_ask(const Workload& workload, int training_gpus) {
  const models::PackingWorkload& w = *workload.demand;
  if (w.is_training) return {workload.gpu_resource, training_gpus, ""};
  const models::GpuRequest& g = w.service.gpu;
  switch (g.mode) {
    case SharingMode::mig:
      // GKE's partitioned pools advertise each slice as nvidia.com/gpu (the partition size
      // is the node's label); the mixed strategy names the slice.
      if (workload.gke_partition) return {kGpuTaint, 1, ""};
      return {"nvidia.com/mig-" + g.mig_profile, 1, ""};
    case SharingMode::time_slicing:
      return {kGpuTaint, 1,
              "a time-sliced share of " + significant(g.fraction) +
                  " GPU: nvidia.com/gpu: 1 is one of the replicas the NVIDIA device plugin advertises per GPU with "
                  "sharing.timeSlicing (replicas: " + std::to_string(static_cast<int>(std::floor(1 / g.fraction + 1e-9))) + ")"};
    case SharingMode::mps:
      return {kGpuTaint, 1,
              "an MPS share of " + significant(g.fraction) +
                  " GPU: nvidia.com/gpu: 1 is one of the replicas the NVIDIA device plugin advertises per GPU with "
                  "sharing.mps (replicas: " + std::to_string(static_cast<int>(std::floor(1 / g.fraction + 1e-9))) + ")"};
    case SharingMode::exclusive: break;
  }
  return {workload.gpu_resource, g.gpus, ""};
}

void node_placement(YAML::Emitter& y, const Workload& w) {
  if (w.instance_types.size() == 1 || w.gke_partition) {
    y << YAML::Key << "nodeSelector" << YAML::Value << YAML::BeginMap;
    if (w.instance_types.size() == 1) key_value(y, kInstanceTypeLabel, w.instance_types.front());
    if (w.gke_partition) key_value(y, "cloud.google.com/gke-gpu-partition-size", *w.gke_partition);
    y << YAML::EndMap;
  }
  const bool several = w.instance_types.size() > 1;
  const bool apart = !w.demand->is_training && w.demand->service.spread == models::Spread::node;
  const bool gang = w.demand->is_training && w.gang_nodes > 1;
  if (several || apart || gang) {
    y << YAML::Key << "affinity" << YAML::Value << YAML::BeginMap;
    if (several) {  // the plan put the replicas on more than one pool
      y << YAML::Key << "nodeAffinity" << YAML::Value << YAML::BeginMap << YAML::Key
        << "requiredDuringSchedulingIgnoredDuringExecution" << YAML::Value << YAML::BeginMap << YAML::Key
        << "nodeSelectorTerms" << YAML::Value << YAML::BeginSeq << YAML::BeginMap << YAML::Key << "matchExpressions"
        << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
      key_value(y, "key", kInstanceTypeLabel);
      key_value(y, "operator", "In");
      y << YAML::Key << "values" << YAML::Value << YAML::BeginSeq;
      for (const auto& t : w.instance_types) y << t;
      y << YAML::EndSeq << YAML::EndMap << YAML::EndSeq << YAML::EndMap << YAML::EndSeq << YAML::EndMap << YAML::EndMap;
    }
    if (apart) {  // spread: node, no two replicas on one node
      y << YAML::Key << "podAntiAffinity" << YAML::Value << YAML::BeginMap << YAML::Key
        << "requiredDuringSchedulingIgnoredDuringExecution" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
      y << YAML::Key << "labelSelector" << YAML::Value << YAML::BeginMap << YAML::Key << "matchLabels" << YAML::Value
        << YAML::BeginMap;
      key_value(y, "app", w.name);
      y << YAML::EndMap << YAML::EndMap;
      key_value(y, "topologyKey", "kubernetes.io/hostname");
      y << YAML::EndMap << YAML::EndSeq << YAML::EndMap;
    }
    if (gang) {  // a gang on several nodes: one pod per node, all in one zone (its network)
      auto term = [&](const char* topology) {
        y << YAML::BeginMap << YAML::Key << "labelSelector" << YAML::Value << YAML::BeginMap << YAML::Key << "matchLabels"
          << YAML::Value << YAML::BeginMap;
        key_value(y, "app", w.name);
        y << YAML::EndMap << YAML::EndMap;
        key_value(y, "topologyKey", topology);
        y << YAML::EndMap;
      };
      y << YAML::Key << "podAffinity" << YAML::Value << YAML::BeginMap << YAML::Key
        << "requiredDuringSchedulingIgnoredDuringExecution" << YAML::Value << YAML::BeginSeq;
      term("topology.kubernetes.io/zone");
      y << YAML::EndSeq << YAML::EndMap;
      y << YAML::Key << "podAntiAffinity" << YAML::Value << YAML::BeginMap << YAML::Key
        << "requiredDuringSchedulingIgnoredDuringExecution" << YAML::Value << YAML::BeginSeq;
      term("kubernetes.io/hostname");
      y << YAML::EndSeq << YAML::EndMap;
    }
    y << YAML::EndMap;
  }
  if (!w.demand->is_training && w.demand->service.spread == models::Spread::zone) {
    y << YAML::Key << "topologySpreadConstraints" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
    y << YAML::Key << "maxSkew" << YAML::Value << 1;
    key_value(y, "topologyKey", "topology.kubernetes.io/zone");
    key_value(y, "whenUnsatisfiable", "DoNotSchedule");
    y << YAML::Key << "labelSelector" << YAML::Value << YAML::BeginMap << YAML::Key << "matchLabels" << YAML::Value
      << YAML::BeginMap;
    key_value(y, "app", w.name);
    y << YAML::EndMap << YAML::EndMap;
    y << YAML::EndMap << YAML::EndSeq;
  }
}

// A pod template: the workload's label, its pool's nodes, the GPU taint, and a container
// asking for the GPU resource, CPU and memory.
void pod_template(YAML::Emitter& y, const Workload& w, int training_gpus, const char* container = nullptr) {
  const models::PackingWorkload& d = *w.demand;
  y << YAML::Key << "template" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap << YAML::Key << "labels" << YAML::Value << YAML::BeginMap;
  key_value(y, "app", w.name);
  y << YAML::EndMap;
  if (d.is_training)  // Karpenter does not consolidate a node away under a running gang
    y << YAML::Key << "annotations" << YAML::Value << YAML::BeginMap << YAML::Key << "karpenter.sh/do-not-disrupt"
      << YAML::Value << YAML::DoubleQuoted << "true" << YAML::EndMap;
  y << YAML::EndMap;
  y << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  if (d.is_training) key_value(y, "restartPolicy", "Never");
  emit_pod_security_context(y);  // a numeric user, so runAsNonRoot holds whatever the image's USER
  node_placement(y, w);
  y << YAML::Key << "tolerations" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  key_value(y, "key", w.gpu_resource);
  key_value(y, "operator", "Exists");
  key_value(y, "effect", "NoSchedule");
  y << YAML::EndMap << YAML::EndSeq;
  const GpuAsk gpu = gpu_ask(w, training_gpus);
  const double cpu = d.is_training ? d.training.cpu_per_gpu * training_gpus : d.service.cpu_per_replica;
  const Bytes memory = d.is_training ? Bytes(d.training.memory_per_gpu.value() * training_gpus) : d.service.memory_per_replica;
  y << YAML::Key << "containers" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  key_value(y, "name", container != nullptr ? container : d.is_training ? "worker" : "server");
  key_value(y, "image", kPlaceholderImage);
  y << YAML::Key << "resources" << YAML::Value << YAML::BeginMap;
  if (cpu > 0 || memory.value() > 0) {
    y << YAML::Key << "requests" << YAML::Value << YAML::BeginMap;
    if (cpu > 0) y << YAML::Key << "cpu" << YAML::Value << YAML::DoubleQuoted << cpu_quantity(cpu);
    if (memory.value() > 0) key_value(y, "memory", memory_quantity(memory));
    y << YAML::EndMap;
  }
  y << YAML::Key << "limits" << YAML::Value << YAML::BeginMap << YAML::Key << gpu.resource << YAML::Value << gpu.count;
  if (w.efa > 0) y << YAML::Key << kEfaResource << YAML::Value << w.efa;  // the gang's collectives over EFA (RDMA)
  y << YAML::EndMap;
  y << YAML::EndMap;  // resources
  y << YAML::EndMap << YAML::EndSeq;
  y << YAML::EndMap;  // spec
  y << YAML::EndMap;  // template
}

std::vector<std::pair<std::string, std::string>> plan_notes(const Workload& w) {
  std::vector<std::pair<std::string, std::string>> notes{{"capsim.dev/plan", w.plan->demand},
                                                         {"capsim.dev/hours", w.plan->hours_text}};
  const GpuAsk gpu = gpu_ask(w, 1);
  if (!gpu.note.empty()) notes.emplace_back("capsim.dev/gpu-sharing", gpu.note);
  return notes;
}

// A training gang: one JobSet, admitted by Kueue as a whole, of one Indexed Job per distinct
// pod size (a gang on several nodes whose last node is partly used has two).
void jobset(YAML::Emitter& y, const Workload& w, const Export& e) {
  begin_object(y, "jobset.x-k8s.io/v1alpha2", "JobSet");
  metadata(y, w.name, {{kQueueLabel, e.queue}}, plan_notes(w));
  y << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "suspend" << YAML::Value << true;  // Kueue resumes it when the gang is admitted
  y << YAML::Key << "replicatedJobs" << YAML::Value << YAML::BeginSeq;
  bool first = true;
  for (auto it = w.pods_by_gpus.rbegin(); it != w.pods_by_gpus.rend(); ++it) {
    const auto [gpus, pods] = *it;
    y << YAML::BeginMap;
    key_value(y, "name", first ? "workers" : "workers-" + std::to_string(gpus) + "gpu");
    y << YAML::Key << "replicas" << YAML::Value << 1;
    y << YAML::Key << "template" << YAML::Value << YAML::BeginMap << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
    key_value(y, "completionMode", "Indexed");
    y << YAML::Key << "completions" << YAML::Value << pods;
    y << YAML::Key << "parallelism" << YAML::Value << pods;
    y << YAML::Key << "backoffLimit" << YAML::Value << 0;
    pod_template(y, w, gpus);
    y << YAML::EndMap << YAML::EndMap;  // template.spec, template
    y << YAML::EndMap;
    first = false;
  }
  y << YAML::EndSeq;
  y << YAML::EndMap << YAML::EndMap;
}

// A training gang as a Kubeflow PyTorchJob (kubeflow.org/v1, the training operator): one
// Master pod and the other pods as Workers, each one per node, in the operator's container
// name "pytorch"; created suspended with the LocalQueue's label, so Kueue admits the gang as
// one (Kueue's kubeflow.org/pytorchjob integration). nprocPerNode "gpu": torchrun starts one
// process per GPU the pod has, so a gang whose last node is partly used keeps its partial pod
// as the Master and its full ones as Workers. A gang of pods of more sizes than that (or two
// sizes of several pods each) cannot be written as Master and Workers and is refused.
Status pytorchjob(YAML::Emitter& y, const Workload& w, const Export& e) {
  std::vector<std::pair<const char*, std::pair<int, int>>> groups;  // replica type, (GPUs per pod, pods)
  if (w.pods_by_gpus.size() == 1) {
    const auto [gpus, pods] = *w.pods_by_gpus.begin();
    groups = {{"Master", {gpus, 1}}, {"Worker", {gpus, pods - 1}}};
  } else if (w.pods_by_gpus.size() == 2 && (w.pods_by_gpus.begin()->second == 1 || w.pods_by_gpus.rbegin()->second == 1)) {
    // The lone pod of one size is the Master (the smaller when both are alone).
    const auto lone = w.pods_by_gpus.begin()->second == 1 ? *w.pods_by_gpus.begin() : *w.pods_by_gpus.rbegin();
    const auto rest = w.pods_by_gpus.begin()->second == 1 ? *w.pods_by_gpus.rbegin() : *w.pods_by_gpus.begin();
    groups = {{"Master", {lone.first, 1}}, {"Worker", {rest.first, rest.second}}};
  } else {
    std::string sizes;
    for (auto it = w.pods_by_gpus.rbegin(); it != w.pods_by_gpus.rend(); ++it)
      sizes += (sizes.empty() ? "" : ", ") + std::to_string(it->second) + " x " + std::to_string(it->first);
    return {Diagnostic{w.plan->name_where, "export",
                       "a PyTorchJob is one Master and alike Workers; workload '" + w.demand->name + "' has pods of " + sizes +
                           " GPUs",
                       "export it with --export k8s (a JobSet of one Job per pod size)"}};
  }
  begin_object(y, "kubeflow.org/v1", "PyTorchJob");
  metadata(y, w.name, {{kQueueLabel, e.queue}}, plan_notes(w));
  y << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "runPolicy" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "suspend" << YAML::Value << true;  // Kueue resumes it when the gang is admitted
  y << YAML::Key << "backoffLimit" << YAML::Value << 0;
  y << YAML::EndMap;
  key_value(y, "nprocPerNode", "gpu");
  y << YAML::Key << "pytorchReplicaSpecs" << YAML::Value << YAML::BeginMap;
  for (const auto& [type, group] : groups) {
    const auto [gpus, replicas] = group;
    if (replicas == 0) continue;
    y << YAML::Key << type << YAML::Value << YAML::BeginMap;
    y << YAML::Key << "replicas" << YAML::Value << replicas;
    key_value(y, "restartPolicy", "Never");
    pod_template(y, w, gpus, "pytorch");
    y << YAML::EndMap;
  }
  y << YAML::EndMap;
  y << YAML::EndMap << YAML::EndMap;
  return {};
}

void selector(YAML::Emitter& y, const Workload& w) {
  y << YAML::Key << "selector" << YAML::Value << YAML::BeginMap << YAML::Key << "matchLabels" << YAML::Value
    << YAML::BeginMap;
  key_value(y, "app", w.name);
  y << YAML::EndMap << YAML::EndMap;
}

void service(YAML::Emitter& y, const Workload& w) {
  const models::ServiceDemand& s = w.demand->service;
  begin_object(y, "apps/v1", "Deployment");
  metadata(y, w.name, {}, plan_notes(w));
  y << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "replicas" << YAML::Value << s.replicas;
  selector(y, w);
  pod_template(y, w, 1);
  y << YAML::EndMap << YAML::EndMap;

  // The plan scales by the hour between min_replicas and the replicas; an HPA keeps the same
  // bounds and scales on load (CPU, when the pods request it).
  begin_object(y, "autoscaling/v2", "HorizontalPodAutoscaler");
  metadata(y, w.name);
  y << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "scaleTargetRef" << YAML::Value << YAML::BeginMap;
  key_value(y, "apiVersion", "apps/v1");
  key_value(y, "kind", "Deployment");
  key_value(y, "name", w.name);
  y << YAML::EndMap;
  y << YAML::Key << "minReplicas" << YAML::Value << std::max(1, s.min_replicas);
  y << YAML::Key << "maxReplicas" << YAML::Value << s.replicas;
  if (s.cpu_per_replica > 0) {
    y << YAML::Key << "metrics" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
    key_value(y, "type", "Resource");
    y << YAML::Key << "resource" << YAML::Value << YAML::BeginMap;
    key_value(y, "name", "cpu");
    y << YAML::Key << "target" << YAML::Value << YAML::BeginMap;
    key_value(y, "type", "Utilization");
    y << YAML::Key << "averageUtilization" << YAML::Value << 80;
    y << YAML::EndMap << YAML::EndMap << YAML::EndMap << YAML::EndSeq;
  }
  y << YAML::EndMap << YAML::EndMap;

  if (s.replicas <= 1) return;
  begin_object(y, "policy/v1", "PodDisruptionBudget");
  metadata(y, w.name);
  y << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "maxUnavailable" << YAML::Value << 1;
  selector(y, w);
  y << YAML::EndMap << YAML::EndMap;
}

// The plan's MIG strategy as one comment line (every target states it).
std::string mig_strategy_comment(const Export& e) {
  if (e.mig_strategy == "gke")
    return "# MIG strategy: gke (GKE partitions the pools' GPUs; pods request nvidia.com/gpu on nodes labelled "
           "cloud.google.com/gke-gpu-partition-size).\n";
  if (e.mig_strategy == "mixed")
    return "# MIG strategy: mixed (the NVIDIA GPU operator's mixed strategy; pods request nvidia.com/mig-<profile>).\n";
  return "";
}

// k8s (JobSets) or pytorchjob (the same objects, training workloads as PyTorchJobs).
Result<std::string> k8s(const ClusterPlan& plan, const Export& e, bool pytorch = false) {
  YAML::Emitter y;
  for (const auto& p : e.pools) resource_flavor(y, p);
  cluster_queue(y, plan, e);
  local_queue(y, e);
  std::vector<Diagnostic> errors;
  for (const auto& w : e.workloads) {
    if (!w.demand->is_training) service(y, w);
    else if (!pytorch) jobset(y, w, e);
    else if (auto status = pytorchjob(y, w, e); !status.empty()) errors.insert(errors.end(), status.begin(), status.end());
  }
  if (!errors.empty()) return errors;
  return "# Kubernetes objects for cluster plan " + shell_comment(plan.name) + " from capsim: Kueue queues and flavors, " +
         (pytorch ? "a Kubeflow PyTorchJob" : "a JobSet") + " per training workload, a Deployment,\n"
         "# HorizontalPodAutoscaler and PodDisruptionBudget per service. Replace the image and add the command.\n" +
         mig_strategy_comment(e) + std::string(y.c_str()) + "\n";
}

// ---- karpenter.

Result<std::string> karpenter(const Export& e) {
  std::vector<Diagnostic> errors;
  for (const auto& p : e.pools)
    if (p.provider != "aws")
      errors.push_back(Diagnostic{{}, "export",
                                  "Karpenter export needs aws node types; pool '" + p.name + "' is " + p.provider + " " +
                                      p.instance_type,
                                  "leave the pool's node type out of cluster.node_types, or export it with --export k8s"});
  if (!errors.empty()) return errors;
  YAML::Emitter y;
  for (const auto& p : e.pools) {
    const int nodes = p.bounds->max_nodes;
    begin_object(y, "karpenter.sh/v1", "NodePool");
    metadata(y, p.name, {}, {{"capsim.dev/nodes", std::to_string(p.bounds->min_nodes) + " to " + std::to_string(nodes)}});
    y << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
    y << YAML::Key << "template" << YAML::Value << YAML::BeginMap;
    y << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap << YAML::Key << "labels" << YAML::Value << YAML::BeginMap;
    key_value(y, "capsim.dev/pool", p.name);
    y << YAML::EndMap << YAML::EndMap;
    y << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
    y << YAML::Key << "nodeClassRef" << YAML::Value << YAML::BeginMap;
    key_value(y, "group", "karpenter.k8s.aws");
    key_value(y, "kind", "EC2NodeClass");
    key_value(y, "name", e.queue);
    y << YAML::EndMap;
    y << YAML::Key << "requirements" << YAML::Value << YAML::BeginSeq;
    for (const auto& [key, value] : {std::pair<std::string, std::string>{kInstanceTypeLabel, p.instance_type},
                                     {"karpenter.sh/capacity-type", "on-demand"}}) {
      y << YAML::BeginMap;
      key_value(y, "key", key);
      key_value(y, "operator", "In");
      y << YAML::Key << "values" << YAML::Value << YAML::Flow << YAML::BeginSeq << value << YAML::EndSeq;
      y << YAML::EndMap;
    }
    y << YAML::EndSeq;
    y << YAML::Key << "taints" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
    key_value(y, "key", p.gpu_resource);
    key_value(y, "effect", "NoSchedule");
    y << YAML::EndMap << YAML::EndSeq;
    y << YAML::EndMap << YAML::EndMap;  // template.spec, template
    // The pool's most nodes in one hour, in each resource a node brings.
    y << YAML::Key << "limits" << YAML::Value << YAML::BeginMap;
    y << YAML::Key << "cpu" << YAML::Value << YAML::DoubleQuoted << cpu_quantity(nodes * p.type->cpu_cores);
    key_value(y, "memory", memory_quantity(Bytes(nodes * p.type->memory.value())));
    y << YAML::Key << p.gpu_resource << YAML::Value << YAML::DoubleQuoted << std::to_string(nodes * p.type->gpus_per_node);
    y << YAML::EndMap;
    y << YAML::Key << "disruption" << YAML::Value << YAML::BeginMap;
    key_value(y, "consolidationPolicy", "WhenEmpty");
    key_value(y, "consolidateAfter", "5m");
    y << YAML::EndMap;
    y << YAML::EndMap << YAML::EndMap;
  }
  // As export.cpp's: the node role and discovery tags of Karpenter's getting-started set-up for
  // a cluster of this name; the al2023 alias picks the NVIDIA AMI variant for GPU instances.
  begin_object(y, "karpenter.k8s.aws/v1", "EC2NodeClass");
  metadata(y, e.queue);
  y << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  key_value(y, "role", "KarpenterNodeRole-" + e.queue);
  y << YAML::Key << "amiSelectorTerms" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  key_value(y, "alias", "al2023@latest");
  y << YAML::EndMap << YAML::EndSeq;
  for (const char* key : {"subnetSelectorTerms", "securityGroupSelectorTerms"}) {
    y << YAML::Key << key << YAML::Value << YAML::BeginSeq << YAML::BeginMap << YAML::Key << "tags" << YAML::Value
      << YAML::BeginMap;
    key_value(y, "karpenter.sh/discovery", e.queue);
    y << YAML::EndMap << YAML::EndMap << YAML::EndSeq;
  }
  y << YAML::EndMap << YAML::EndMap;
  return "# Karpenter NodePools (karpenter.sh/v1) for cluster plan " + e.queue +
         " from capsim, and the EC2NodeClass they use (karpenter.k8s.aws/v1).\n" + std::string(y.c_str()) + "\n";
}

}  // namespace

std::string dns1123_label(std::string_view name) {
  std::string out;
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    const char l = std::isalnum(u) != 0 && u < 128 ? static_cast<char>(std::tolower(u)) : '-';
    if (l == '-' && (out.empty() || out.back() == '-')) continue;
    out += l;
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

namespace {

// The pools as `capsim export gke|terraform` takes them: autoscaling between the fewest and
// the most nodes up in one hour, the GPU taint.
Result<std::string> node_pools(const ClusterPlan& plan, const Export& e, ExportFormat format, std::string location) {
  std::vector<NodePool> pools;
  std::vector<Diagnostic> errors;
  for (const auto& p : e.pools) {
    NodePool n;
    n.name = p.name;
    n.provider = p.provider;
    n.instance_type = p.instance_type;
    n.gpu_id = p.type->gpu.id;
    n.gpus_per_node = p.type->gpus_per_node;
    n.nodes = p.bounds->max_nodes;
    n.min_nodes = p.bounds->min_nodes;
    n.max_nodes = p.bounds->max_nodes;
    n.vendor = p.type->gpu.vendor;
    // The plan's MIG strategy (gather): a GKE-partitioned pool carries its partition size; a
    // GCP pool holding MIG slices under the mixed strategy cannot be made on GKE.
    n.mig_profile = p.gke_partition;
    if (p.provider == "gcp" && !p.gke_partition && !pool_mig(plan, p.bounds->node_type).profiles.empty()) {
      const PoolMig m = pool_mig(plan, p.bounds->node_type);
      errors.push_back(Diagnostic{{}, "export",
                                  "GKE partitions a node pool's GPUs into one MIG size for MIG pods only; pool '" + p.name +
                                      "' holds " + (m.profiles.size() > 1 ? "MIG slices of several profiles" : "MIG slices beside other pods"),
                                  "give each MIG profile a node type of its own in cluster.node_types, or export with --export k8s "
                                  "for a cluster with the NVIDIA GPU operator's mixed strategy"});
    }
    pools.push_back(std::move(n));
    if (location.empty())
      for (const auto& src : plan.node_type_sources)
        if (src.id == p.bounds->node_type && src.provider == "gcp") location = src.region;
  }
  if (!errors.empty()) return errors;
  ExportSettings settings;
  settings.cluster = e.queue;
  settings.location = location;
  settings.notes = {{"capsim.dev/cluster-plan", plan.name}};
  if (!e.mig_strategy.empty()) settings.notes.emplace_back("capsim.dev/mig-strategy", e.mig_strategy);
  auto text = export_node_pools(pools, format, settings);
  if (text) return text;
  errors = text.errors();
  for (auto& d : errors)  // a cluster chooses its node types in the scenario, not with --node-type
    if (d.hint.find("--node-type") != std::string::npos)
      d.hint = std::string("list ") + (format == ExportFormat::eks ? "aws" : "gcp") + " node types in cluster.node_types";
  return errors;
}

}  // namespace

Result<std::string> cluster_export(const ClusterPlan& plan, std::string_view target, const std::string& location) {
  static const std::vector<std::string> targets{"k8s", "pytorchjob", "karpenter", "gke", "terraform", "eks"};
  if (std::find(targets.begin(), targets.end(), target) == targets.end()) {
    const std::string near = did_you_mean(target, targets);
    return Diagnostic{{}, "--export", "unknown export target '" + std::string(target) + "'",
                      near.empty() ? "use k8s, pytorchjob, karpenter, gke, terraform or eks" : near};
  }
  if (plan.packing.pools.empty()) return Diagnostic{{}, "export", "the plan has no node pool to export", ""};
  auto e = gather(plan, target);
  if (!e) return e.errors();
  if (target == "karpenter") return karpenter(*e);
  if (target == "gke") return node_pools(plan, *e, ExportFormat::gke, location);
  if (target == "terraform") return node_pools(plan, *e, ExportFormat::terraform, location);
  if (target == "eks") return node_pools(plan, *e, ExportFormat::eks, location);
  return k8s(plan, *e, target == "pytorchjob");
}

}  // namespace capsim::scenarios
