#include "capsim/scenarios/export.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "capsim/core/suggest.hpp"
#include "capsim/scenarios/escape.hpp"
#include "capsim/scenarios/pod_security.hpp"

namespace capsim::scenarios {
namespace {

constexpr const char* kGpuTaint = "nvidia.com/gpu";

// Terraform resource names: letters, digits, underscores.
std::string tf_name(const std::string& s) {
  std::string out;
  for (char c : s) out += (c == '-' || c == '.') ? '_' : c;
  return out;
}

// The Compute Engine machine type of a GCP pool: the catalog names an N1 machine with attached
// GPUs by both ("n1-standard-8 + 4 x nvidia-tesla-t4"); gcloud and Terraform take the machine
// type and the GPUs separately (--accelerator, guest_accelerator).
std::string gce_machine_type(const std::string& instance_type) {
  return instance_type.substr(0, instance_type.find(" + "));
}

// GKE schedules Cloud TPU chips as google.com/tpu and taints TPU nodes with that key.
constexpr const char* kTpuResource = "google.com/tpu";

// The taint key of a pool's nodes and its whole-accelerator resource: its vendor's device
// plugin's (nvidia.com/gpu, amd.com/gpu, google.com/tpu). Pools of a vendor with none known
// are refused before (unknown_vendor).
std::string gpu_key(const NodePool& p) {
  if (p.tpu) return kTpuResource;
  return accelerator_resource(p.vendor).value_or(kGpuTaint);
}

std::vector<Diagnostic> unknown_vendor(const std::vector<NodePool>& pools) {
  std::vector<Diagnostic> errors;
  for (const auto& p : pools)
    if (!p.tpu && !accelerator_resource(p.vendor))
      errors.push_back({{}, "export", "no Kubernetes device plugin resource is known for " + p.vendor + " accelerators (pool '" +
                                          p.name + "', gpu '" + p.gpu_id + "')",
                        "capsim exports NVIDIA (nvidia.com/gpu), AMD (amd.com/gpu) and Cloud TPU (google.com/tpu) nodes"});
  return errors;
}

// The plan's figures ride along with every export, so a reader of the YAML sees the same
// numbers as `capsim run` (and tests can check they agree).
void emit_annotations(YAML::Emitter& y, const ExportAnnotations& notes) {
  if (notes.empty()) return;
  y << YAML::Key << "annotations" << YAML::Value << YAML::BeginMap;
  for (const auto& [k, v] : notes) y << YAML::Key << k << YAML::Value << YAML::DoubleQuoted << v;
  y << YAML::EndMap;
}

// The head of a Kubernetes object every manifest here starts with: a new document, its
// apiVersion and kind, and metadata with its name and capsim's annotations. The caller
// writes the rest of the object's map (its spec) and ends it.
void begin_object(YAML::Emitter& y, const std::string& api_version, const std::string& kind, const std::string& name,
                  const ExportAnnotations& notes) {
  y << YAML::BeginDoc << YAML::BeginMap;
  y << YAML::Key << "apiVersion" << YAML::Value << api_version;
  y << YAML::Key << "kind" << YAML::Value << kind;
  y << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap << YAML::Key << "name" << YAML::Value << name;
  emit_annotations(y, notes);
  y << YAML::EndMap;
}

std::string comment_line(const ExportAnnotations& notes) {
  std::string out = "capsim plan:";
  for (const auto& [k, v] : notes) out += " " + k + "=" + v;
  return out;
}

// The resource a pod asks for. GKE schedules a MIG partition as nvidia.com/gpu on a node
// labelled with its partition size (cloud.google.com/gke-gpu-partition-size); the NVIDIA GPU
// operator's mixed strategy elsewhere names the slice in the resource (nvidia.com/mig-1g.10gb).
// Whole accelerators: the vendor's device-plugin resource (accelerator_resource).
std::string resource_name(const NodePool& p) {
  if (p.tpu) return kTpuResource;
  if (p.mig_profile && p.provider != "gcp") return "nvidia.com/mig-" + *p.mig_profile;
  return gpu_key(p);
}

// gcloud's and Terraform's node counts: in a zone they are that zone's and so the total; in a
// region --num-nodes and the autoscaling bounds count per zone, so the pool starts empty and
// the total bounds (--total-min-nodes, total_min_node_count) hold the plan's.
std::string gke_counts(const NodePool& p, const std::string& location) {
  if (is_gke_zone(location))
    return " \\\n  --num-nodes=" + std::to_string(p.min_nodes) + " \\\n  --enable-autoscaling --min-nodes=" +
           std::to_string(p.min_nodes) + " --max-nodes=" + std::to_string(p.max_nodes);
  return " \\\n  --num-nodes=0 \\\n  --enable-autoscaling --location-policy=ANY --total-min-nodes=" +
         std::to_string(p.min_nodes) + " --total-max-nodes=" + std::to_string(p.max_nodes);
}

Diagnostic no_location(const std::string& format) {
  return Diagnostic{{}, "--location", format + " export needs a location (a GCP region or zone)",
                    "pass --location, e.g. us-central1 or us-central1-a"};
}

// The start of a pool's command: the pool, its cluster, location and machine type, each
// value one shell word whatever it holds (checked before, quoted here all the same).
std::string gke_create(const NodePool& p, const ExportSettings& s) {
  return "gcloud container node-pools create " + shell_word(p.name) + " \\\n  --cluster=" + shell_word(s.cluster) +
         " \\\n  --location=" + shell_word(s.location) + " \\\n  --machine-type=" +
         shell_word(gce_machine_type(p.instance_type));
}

// A TPU node pool: the machine type (ct5lp-hightpu-4t, ...) names the TPU version and chip
// count, so GKE needs no --accelerator; a single-host slice needs no topology either.
std::string gke_tpu_pool(const NodePool& p, const ExportSettings& s) {
  return gke_create(p, s) + gke_counts(p, s.location) + (p.spot ? " \\\n  --spot" : "") + "\n";
}

Diagnostic wrong_provider(const NodePool& p, const std::string& format, const std::string& wanted) {
  return Diagnostic{{}, "export", format + " export needs " + wanted + " node types; pool '" + p.name + "' is " +
                                      p.provider + " " + p.instance_type,
                    std::string(wanted == "aws" ? "choose an " : "choose a ") + wanted + " node type with --node-type"};
}

// The first refusal that applies: a pool of another cloud before a missing location (an owned
// server has no region either, and the location is not what is wrong with it).
std::vector<Diagnostic> not_gcp(const std::vector<NodePool>& pools, const std::string& format) {
  std::vector<Diagnostic> errors;
  for (const auto& p : pools)
    if (p.provider != "gcp") errors.push_back(wrong_provider(p, format, "gcp"));
  return errors;
}

Result<std::string> gke(const std::vector<NodePool>& pools, const ExportSettings& s) {
  if (auto errors = not_gcp(pools, "GKE"); !errors.empty()) return errors;
  if (s.location.empty()) return no_location("GKE");
  // The shebang first; the plan's figures (export_node_pools) follow it as a comment.
  std::string out = "#!/bin/sh\n";
  if (!s.notes.empty()) out += "# " + shell_comment(comment_line(s.notes)) + "\n";
  out += "# GKE node pools from capsim (gcloud container node-pools create).\n";
  if (!is_gke_zone(s.location))
    out += "# " + shell_comment(s.location) + " is a region: each pool starts empty and the autoscaler keeps it between the\n"
           "# plan's bounds in total across the region's zones.\n";
  out += "set -e\n";
  std::vector<Diagnostic> errors;
  for (const auto& p : pools) {
    if (p.provider != "gcp") {
      errors.push_back(wrong_provider(p, "GKE", "gcp"));
      continue;
    }
    if (p.tpu) {
      // GKE's Cloud TPU machine types are the ct* family (ct5lp-hightpu-4t, ...); a host the
      // catalog names by its TPU API type (v5p-8) has no recorded GKE machine type.
      if (!p.instance_type.starts_with("ct")) {
        errors.push_back({{}, "export", "no GKE machine type is recorded for TPU host '" + p.instance_type + "'",
                          "the catalog names it by its TPU API type; choose a v5e host (ct5lp-hightpu-*)"});
        continue;
      }
      out += gke_tpu_pool(p, s);
      continue;
    }
    const auto accelerator = gke_accelerator(p.gpu_id);
    if (!accelerator) {
      errors.push_back({{}, "export", "GKE offers no accelerator for gpu '" + p.gpu_id + "'", ""});
      continue;
    }
    std::string acc = "type=" + *accelerator + ",count=" + std::to_string(p.gpus_per_node) + ",gpu-driver-version=default";
    if (p.mig_profile) acc += ",gpu-partition-size=" + *p.mig_profile;
    out += gke_create(p, s) + " \\\n  --accelerator=" + shell_word(acc) + gke_counts(p, s.location) +
           " \\\n  --node-taints=" + gpu_key(p) + "=present:NoSchedule" + (p.spot ? " \\\n  --spot" : "") + "\n";
  }
  if (!errors.empty()) return errors;
  return out;
}

// Karpenter's duration strings are Go durations; hours keep them readable.
std::string hours_text(double seconds) { return std::to_string(static_cast<long long>(std::ceil(seconds / 3600))) + "h"; }

Result<std::string> karpenter(const std::vector<NodePool>& pools, const ExportSettings& s) {
  YAML::Emitter y;
  std::vector<Diagnostic> errors;
  for (const auto& p : pools) {
    if (p.provider != "aws") {
      errors.push_back(wrong_provider(p, "Karpenter", "aws"));
      continue;
    }
    // A training run of known length: its nodes live at least a day past it (Karpenter v1
    // expires nodes after 720 h by default, half-way through a 61-day run) and are not
    // consolidated or drifted away while it runs.
    const bool run = p.training && s.run_seconds && *s.run_seconds > 0;
    begin_object(y, "karpenter.sh/v1", "NodePool", p.name, s.notes);
    y << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
    y << YAML::Key << "template" << YAML::Value << YAML::BeginMap;
    y << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap << YAML::Key << "labels" << YAML::Value
      << YAML::BeginMap << YAML::Key << "capsim.dev/pool" << YAML::Value << p.name << YAML::EndMap;
    if (p.training)
      y << YAML::Key << "annotations" << YAML::Value << YAML::BeginMap << YAML::Key << "karpenter.sh/do-not-disrupt"
        << YAML::Value << YAML::DoubleQuoted << "true" << YAML::EndMap;
    y << YAML::EndMap;
    y << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
    y << YAML::Key << "nodeClassRef" << YAML::Value << YAML::BeginMap << YAML::Key << "group" << YAML::Value
      << "karpenter.k8s.aws" << YAML::Key << "kind" << YAML::Value << "EC2NodeClass" << YAML::Key << "name"
      << YAML::Value << s.cluster << YAML::EndMap;
    if (run) y << YAML::Key << "expireAfter" << YAML::Value << hours_text(*s.run_seconds + 24 * 3600.0);
    y << YAML::Key << "requirements" << YAML::Value << YAML::BeginSeq;
    y << YAML::BeginMap << YAML::Key << "key" << YAML::Value << "node.kubernetes.io/instance-type" << YAML::Key
      << "operator" << YAML::Value << "In" << YAML::Key << "values" << YAML::Value << YAML::Flow << YAML::BeginSeq
      << p.instance_type << YAML::EndSeq << YAML::EndMap;
    y << YAML::BeginMap << YAML::Key << "key" << YAML::Value << "karpenter.sh/capacity-type" << YAML::Key << "operator"
      << YAML::Value << "In" << YAML::Key << "values" << YAML::Value << YAML::Flow << YAML::BeginSeq
      << (p.spot ? "spot" : "on-demand") << YAML::EndSeq << YAML::EndMap;
    y << YAML::EndSeq;
    y << YAML::Key << "taints" << YAML::Value << YAML::BeginSeq << YAML::BeginMap << YAML::Key << "key" << YAML::Value
      << gpu_key(p) << YAML::Key << "effect" << YAML::Value << "NoSchedule" << YAML::EndMap << YAML::EndSeq;
    y << YAML::EndMap;  // template.spec
    y << YAML::EndMap;  // template
    y << YAML::Key << "limits" << YAML::Value << YAML::BeginMap << YAML::Key << gpu_key(p) << YAML::Value
      << p.max_nodes * p.gpus_per_node << YAML::EndMap;
    y << YAML::Key << "disruption" << YAML::Value << YAML::BeginMap << YAML::Key << "consolidationPolicy"
      << YAML::Value << "WhenEmpty" << YAML::Key << "consolidateAfter" << YAML::Value << "5m" << YAML::EndMap;
    y << YAML::EndMap;  // spec
    y << YAML::EndMap;
  }
  if (!errors.empty()) return errors;
  // The EC2NodeClass the pools name (karpenter.k8s.aws/v1; its role, AMI and subnet/security
  // group selectors are required): the node role and discovery tags of Karpenter's getting-
  // started set-up for a cluster of this name; the al2023 alias picks the NVIDIA AMI variant
  // for GPU instance types.
  y << YAML::BeginDoc << YAML::BeginMap;
  y << YAML::Key << "apiVersion" << YAML::Value << "karpenter.k8s.aws/v1";
  y << YAML::Key << "kind" << YAML::Value << "EC2NodeClass";
  y << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap << YAML::Key << "name" << YAML::Value << s.cluster
    << YAML::EndMap;
  y << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "role" << YAML::Value << "KarpenterNodeRole-" + s.cluster;
  y << YAML::Key << "amiSelectorTerms" << YAML::Value << YAML::BeginSeq << YAML::BeginMap << YAML::Key << "alias"
    << YAML::Value << "al2023@latest" << YAML::EndMap << YAML::EndSeq;
  for (const char* key : {"subnetSelectorTerms", "securityGroupSelectorTerms"})
    y << YAML::Key << key << YAML::Value << YAML::BeginSeq << YAML::BeginMap << YAML::Key << "tags" << YAML::Value
      << YAML::BeginMap << YAML::Key << "karpenter.sh/discovery" << YAML::Value << s.cluster << YAML::EndMap
      << YAML::EndMap << YAML::EndSeq;
  y << YAML::EndMap << YAML::EndMap;
  return "# Karpenter NodePools from capsim (karpenter.sh/v1) and the EC2NodeClass they use (karpenter.k8s.aws/v1).\n" +
         std::string(y.c_str()) + "\n";
}

nlohmann::json tf_autoscaling(const NodePool& p, const std::string& location) {
  if (is_gke_zone(location)) return {{"min_node_count", p.min_nodes}, {"max_node_count", p.max_nodes}};
  return {{"total_min_node_count", p.min_nodes}, {"total_max_node_count", p.max_nodes}, {"location_policy", "ANY"}};
}

Result<std::string> terraform(const std::vector<NodePool>& pools, const ExportSettings& s) {
  if (auto errors = not_gcp(pools, "Terraform google_container_node_pool"); !errors.empty()) return errors;
  if (s.location.empty()) return no_location("Terraform");
  nlohmann::json pools_json = nlohmann::json::object();
  std::vector<Diagnostic> errors;
  const bool zone = is_gke_zone(s.location);
  for (const auto& p : pools) {
    if (p.provider != "gcp") {
      errors.push_back(wrong_provider(p, "Terraform google_container_node_pool", "gcp"));
      continue;
    }
    nlohmann::json pool = {{"name", p.name},
                           {"cluster", s.cluster},
                           {"location", s.location},
                           {"initial_node_count", zone ? p.min_nodes : 0},
                           {"autoscaling", tf_autoscaling(p, s.location)}};
    if (p.tpu) {  // the TPU machine type carries the accelerator
      pool["node_config"] = {{"machine_type", gce_machine_type(p.instance_type)}, {"spot", p.spot}};
      pools_json[tf_name(p.name)] = pool;
      continue;
    }
    const auto accelerator = gke_accelerator(p.gpu_id);
    if (!accelerator) {
      errors.push_back({{}, "export", "GKE offers no accelerator for gpu '" + p.gpu_id + "'", ""});
      continue;
    }
    nlohmann::json acc = {{"type", *accelerator},
                          {"count", p.gpus_per_node},
                          {"gpu_driver_installation_config", {{"gpu_driver_version", "DEFAULT"}}}};
    if (p.mig_profile) acc["gpu_partition_size"] = *p.mig_profile;
    pool["node_config"] = {
        {"machine_type", gce_machine_type(p.instance_type)},
        {"spot", p.spot},
        {"guest_accelerator", nlohmann::json::array({acc})},
        {"taint", nlohmann::json::array({{{"key", gpu_key(p)}, {"value", "present"}, {"effect", "NO_SCHEDULE"}}})}};
    pools_json[tf_name(p.name)] = pool;
  }
  if (!errors.empty()) return errors;
  nlohmann::json root = {{"resource", {{"google_container_node_pool", pools_json}}}};
  if (!s.notes.empty()) root["//"] = comment_line(s.notes);  // Terraform's JSON syntax: "//" is a comment
  return root.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

// EKS managed node groups (hashicorp/aws aws_eks_node_group, Terraform's JSON syntax): one per
// pool, its instance type, scaling between the plan's bounds, on demand or spot, the capsim.dev/pool
// label and the GPU taint. The node role and subnets are the account's: Terraform variables
// (node_role_arn, subnet_ids) the user sets. An AMI with the GPU driver for GPU pools: EKS's
// AL2023 NVIDIA variant for NVIDIA GPUs (AMD GPUs and others: EKS publishes none, left unset).
//
// A training gang across nodes of an instance with EFA gets a launch template (aws_launch_template)
// with one EFA per network card, as the EC2 User Guide recommends ("Maximize network bandwidth
// on Amazon EC2 instances with multiple network cards": the primary interface on network card 0
// at device index 0, each further one on the next network card at device index 1; interface
// type efa), in the security group the user gives (EFA needs one that admits all traffic from
// itself; a Terraform variable).
Result<std::string> eks(const std::vector<NodePool>& pools, const ExportSettings& s) {
  nlohmann::json groups = nlohmann::json::object();
  nlohmann::json templates = nlohmann::json::object();
  std::vector<Diagnostic> errors;
  for (const auto& p : pools) {
    if (p.provider != "aws") {
      errors.push_back(wrong_provider(p, "EKS", "aws"));
      continue;
    }
    const int desired = std::clamp(p.nodes, p.min_nodes, std::max(1, p.max_nodes));
    nlohmann::json g = {{"cluster_name", s.cluster},
                        {"node_group_name", p.name},
                        {"node_role_arn", "${var.node_role_arn}"},
                        {"subnet_ids", "${var.subnet_ids}"},
                        {"instance_types", nlohmann::json::array({p.instance_type})},
                        {"capacity_type", p.spot ? "SPOT" : "ON_DEMAND"},
                        {"scaling_config", {{"desired_size", desired}, {"min_size", p.min_nodes}, {"max_size", std::max(1, p.max_nodes)}}},
                        {"labels", {{"capsim.dev/pool", p.name}}},
                        {"taint", nlohmann::json::array({{{"key", gpu_key(p)}, {"value", "present"}, {"effect", "NO_SCHEDULE"}}})}};
    if (p.vendor == "nvidia") g["ami_type"] = "AL2023_x86_64_NVIDIA";
    const std::string key = tf_name(p.name);
    if (p.training && p.pods > 1 && p.efa_interfaces > 0) {
      nlohmann::json interfaces = nlohmann::json::array();
      for (int card = 0; card < p.efa_interfaces; ++card)
        interfaces.push_back({{"network_card_index", card},
                              {"device_index", card == 0 ? 0 : 1},
                              {"interface_type", "efa"},
                              {"delete_on_termination", true},
                              {"security_groups", "${var.efa_security_group_ids}"}});
      templates[key] = {{"name_prefix", p.name + "-efa-"},
                        {"description", "capsim: " + std::to_string(p.efa_interfaces) + " EFA interfaces, one per network card of " +
                                            p.instance_type},
                        {"network_interfaces", interfaces}};
      g["launch_template"] = {{"id", "${aws_launch_template." + key + ".id}"},
                              {"version", "${aws_launch_template." + key + ".latest_version}"}};
    }
    groups[key] = g;
  }
  if (!errors.empty()) return errors;
  nlohmann::json variables = {
      {"node_role_arn", {{"type", "string"}, {"description", "ARN of the IAM role of the node groups' nodes"}}},
      {"subnet_ids", {{"type", "list(string)"}, {"description", "subnets of the node groups (tagged kubernetes.io/cluster/" + s.cluster + ")"}}}};
  nlohmann::json resources = {{"aws_eks_node_group", groups}};
  std::string note = s.notes.empty() ? std::string() : comment_line(s.notes) + "; ";
  if (!templates.empty()) {
    variables["efa_security_group_ids"] = {
        {"type", "list(string)"},
        {"description", "security groups of the EFA interfaces: one that allows all inbound and outbound traffic to and from itself"}};
    resources["aws_launch_template"] = templates;
    note += "EFA pools: put their subnet_ids in one availability zone (EFA traffic does not cross zones); ";
  }
  nlohmann::json root = {{"variable", variables}, {"resource", resources}};
  if (!note.empty()) root["//"] = note.substr(0, note.size() - 2);
  return root.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

// The node selector of a pool's pods: GKE's accelerator (and MIG partition) labels, a cloud's
// instance-type label, or, for owned servers (whose model names are no label values), the
// capsim.dev/pool label the Karpenter pools set and an owned cluster's nodes are given.
void emit_node_selector(YAML::Emitter& y, const NodePool& p) {
  y << YAML::Key << "nodeSelector" << YAML::Value << YAML::BeginMap;
  if (p.provider == "gcp" && gke_accelerator(p.gpu_id)) {
    y << YAML::Key << "cloud.google.com/gke-accelerator" << YAML::Value << *gke_accelerator(p.gpu_id);
    if (p.mig_profile) y << YAML::Key << "cloud.google.com/gke-gpu-partition-size" << YAML::Value << *p.mig_profile;
  } else if (p.provider != "owned" && valid_label_value(p.instance_type)) {
    y << YAML::Key << "node.kubernetes.io/instance-type" << YAML::Value << p.instance_type;
  } else {
    y << YAML::Key << "capsim.dev/pool" << YAML::Value << p.name;
  }
  y << YAML::EndMap;
}

void emit_pod_spec(YAML::Emitter& y, const NodePool& p, const ExportSettings& s, bool job) {
  y << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  if (job) y << YAML::Key << "restartPolicy" << YAML::Value << "Never";
  emit_pod_security_context(y);  // a numeric user, so runAsNonRoot holds whatever the image's USER
  emit_node_selector(y, p);
  y << YAML::Key << "tolerations" << YAML::Value << YAML::BeginSeq << YAML::BeginMap << YAML::Key << "key"
    << YAML::Value << gpu_key(p) << YAML::Key << "operator" << YAML::Value << "Exists"
    << YAML::Key << "effect" << YAML::Value << "NoSchedule" << YAML::EndMap << YAML::EndSeq;
  y << YAML::Key << "containers" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
  y << YAML::Key << "name" << YAML::Value << "worker";
  y << YAML::Key << "image" << YAML::Value << s.image;
  y << YAML::Key << "resources" << YAML::Value << YAML::BeginMap << YAML::Key << "limits" << YAML::Value
    << YAML::BeginMap << YAML::Key << resource_name(p) << YAML::Value << p.gpus_per_pod;
  // A training gang across nodes runs its collectives over EFA (RDMA) where the node has it.
  if (p.training && p.pods > 1 && p.efa_interfaces > 0) y << YAML::Key << kEfaResource << YAML::Value << p.efa_interfaces;
  y << YAML::EndMap << YAML::EndMap;
  y << YAML::EndMap << YAML::EndSeq;
  y << YAML::EndMap;
}

// A serving replica that spans nodes (pipeline stages, a pod per node): a LeaderWorkerSet
// (leaderworkerset.x-k8s.io/v1, kubernetes-sigs/lws) of one group per replica, each group
// `size` pods started, placed and restarted together; the worker template serves the
// leader too.
void emit_leader_worker_set(YAML::Emitter& y, const NodePool& p, const ExportSettings& s) {
  begin_object(y, "leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", p.name, s.notes);
  y << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "replicas" << YAML::Value << p.pods / p.pods_per_replica;
  y << YAML::Key << "leaderWorkerTemplate" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "size" << YAML::Value << p.pods_per_replica;
  y << YAML::Key << "workerTemplate" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap << YAML::Key << "labels" << YAML::Value << YAML::BeginMap
    << YAML::Key << "app" << YAML::Value << p.name << YAML::EndMap << YAML::EndMap;
  emit_pod_spec(y, p, s, false);
  y << YAML::EndMap;  // workerTemplate
  y << YAML::EndMap;  // leaderWorkerTemplate
  y << YAML::EndMap;  // spec
  y << YAML::EndMap;
}

// A training run: an Indexed Job of one pod per worker, all started together (parallelism =
// completions), which a gang scheduler (Kueue, JobSet) can admit as one; serving: a
// Deployment of the replicas, or a LeaderWorkerSet when a replica spans nodes.
std::string workloads(const std::vector<NodePool>& pools, const ExportSettings& s) {
  YAML::Emitter y;
  bool groups = false;
  for (const auto& p : pools) {
    if (!p.training && p.pods_per_replica > 1) {
      emit_leader_worker_set(y, p, s);
      groups = true;
      continue;
    }
    const std::string name = p.name + (p.training ? "-workers" : "");
    begin_object(y, p.training ? "batch/v1" : "apps/v1", p.training ? "Job" : "Deployment", name, s.notes);
    y << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
    if (p.training) {
      y << YAML::Key << "completionMode" << YAML::Value << "Indexed";
      y << YAML::Key << "completions" << YAML::Value << p.pods;
      y << YAML::Key << "parallelism" << YAML::Value << p.pods;
      y << YAML::Key << "backoffLimit" << YAML::Value << 0;
    } else {
      y << YAML::Key << "replicas" << YAML::Value << p.pods;
      y << YAML::Key << "selector" << YAML::Value << YAML::BeginMap << YAML::Key << "matchLabels" << YAML::Value
        << YAML::BeginMap << YAML::Key << "app" << YAML::Value << name << YAML::EndMap << YAML::EndMap;
    }
    y << YAML::Key << "template" << YAML::Value << YAML::BeginMap;
    y << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap << YAML::Key << "labels" << YAML::Value
      << YAML::BeginMap << YAML::Key << "app" << YAML::Value << name << YAML::EndMap << YAML::EndMap;
    emit_pod_spec(y, p, s, p.training);
    y << YAML::EndMap;  // template
    y << YAML::EndMap;  // spec
    y << YAML::EndMap;
  }
  // The MIG strategy, stated as the cluster exports state it: GKE partitions a GCP pool's GPUs
  // (pods ask for nvidia.com/gpu), elsewhere the NVIDIA GPU operator's mixed strategy.
  std::string mig;
  for (const auto& p : pools)
    if (p.mig_profile)
      mig = p.provider == "gcp" ? "# MIG strategy: gke (GKE partitions the pool's GPUs; pods request nvidia.com/gpu on nodes "
                                  "labelled cloud.google.com/gke-gpu-partition-size).\n"
                                : "# MIG strategy: mixed (the NVIDIA GPU operator's mixed strategy; pods request "
                                  "nvidia.com/mig-<profile>).\n";
  return "# Kubernetes workloads from capsim: replace the image (--image) and add the command.\n" + mig +
         std::string(groups ? "# A replica spanning nodes is a LeaderWorkerSet group: install LeaderWorkerSet "
                              "(kubernetes-sigs/lws) in the cluster.\n"
                            : "") +
         std::string(y.c_str()) + "\n";
}

}  // namespace

Result<ExportFormat> parse_export_format(std::string_view name) {
  static const std::map<std::string, ExportFormat, std::less<>> formats = {
      {"gke", ExportFormat::gke}, {"karpenter", ExportFormat::karpenter}, {"terraform", ExportFormat::terraform},
      {"k8s", ExportFormat::k8s}, {"eks", ExportFormat::eks}};
  if (auto it = formats.find(name); it != formats.end()) return it->second;
  return Diagnostic{{}, "", "unknown export format '" + std::string(name) + "'",
                    did_you_mean(name, {"gke", "karpenter", "terraform", "k8s", "eks"}).empty()
                        ? "use gke, karpenter, terraform, eks or k8s"
                        : did_you_mean(name, {"gke", "karpenter", "terraform", "k8s", "eks"})};
}

std::optional<std::string> accelerator_resource(std::string_view vendor) {
  // NVIDIA's device plugin (NVIDIA/k8s-device-plugin) advertises nvidia.com/gpu; AMD's
  // (ROCm/k8s-device-plugin: "amd.com/gpu" in its README and DaemonSet) amd.com/gpu; GKE
  // advertises Cloud TPU chips as google.com/tpu (cloud.google.com/kubernetes-engine/docs/
  // how-to/tpus).
  if (vendor == "nvidia") return "nvidia.com/gpu";
  if (vendor == "amd") return "amd.com/gpu";
  if (vendor == "google") return "google.com/tpu";
  return std::nullopt;
}

void complete_node_pools(std::vector<NodePool>& pools, const hardware::Catalog& catalog) {
  for (auto& p : pools) {
    if (const auto* gpu = catalog.find(hardware::EntityKind::gpu, p.gpu_id))
      if (auto vendor = gpu->text("vendor"); !vendor.empty()) p.vendor = vendor;
    for (const auto& e : catalog.all(hardware::EntityKind::instance))
      if (e.text("provider") == p.provider && e.text("name") == p.instance_type)
        p.efa_interfaces = static_cast<int>(e.integer("efa_interfaces").value_or(0));
  }
}

std::optional<std::string> gke_accelerator(const std::string& gpu_id) {
  // Google Cloud, "GPU machine types" (cloud.google.com/compute/docs/gpus): accelerator type
  // names as gcloud and Terraform take them.
  static const std::map<std::string, std::string> types = {
      {"k80", "nvidia-tesla-k80"},           {"p4", "nvidia-tesla-p4"},
      {"p100-pcie-16gb", "nvidia-tesla-p100"}, {"v100-sxm2-16gb", "nvidia-tesla-v100"},
      {"t4", "nvidia-tesla-t4"},             {"l4", "nvidia-l4"},
      {"a100-sxm-40gb", "nvidia-tesla-a100"}, {"a100-sxm-80gb", "nvidia-a100-80gb"},
      {"h100-sxm-80gb", "nvidia-h100-80gb"}, {"h200-sxm-141gb", "nvidia-h200-141gb"},
      {"b200", "nvidia-b200"},
  };
  if (auto it = types.find(gpu_id); it != types.end()) return it->second;
  return std::nullopt;
}

bool valid_label_value(std::string_view v) {
  if (v.size() > 63) return false;
  if (v.empty()) return true;
  auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  if (!alnum(v.front()) || !alnum(v.back())) return false;
  return std::all_of(v.begin(), v.end(), [&](char c) { return alnum(c) || c == '-' || c == '_' || c == '.'; });
}

bool is_gke_zone(std::string_view location) {
  // Zones are the region and a letter: us-central1-a, europe-west4-b.
  const auto dash = location.rfind('-');
  if (dash == std::string_view::npos || dash + 2 != location.size()) return false;
  const char last = location.back();
  return last >= 'a' && last <= 'z' && dash > 0 && std::isdigit(static_cast<unsigned char>(location[dash - 1])) != 0;
}

Result<std::string> export_node_pools(const std::vector<NodePool>& pools, ExportFormat format,
                                      const ExportSettings& settings) {
  if (pools.empty()) return Diagnostic{{}, "export", "no node pools to export", ""};
  // A pool of another cloud first: the location is not what is wrong with it (its region in
  // the catalog, the default, may be no GCP name at all).
  if (format == ExportFormat::gke)
    if (auto errors = not_gcp(pools, "GKE"); !errors.empty()) return errors;
  if (format == ExportFormat::terraform)
    if (auto errors = not_gcp(pools, "Terraform google_container_node_pool"); !errors.empty()) return errors;
  if (auto errors = check_export_settings(settings, format); !errors.empty()) return errors;
  if (auto errors = unknown_vendor(pools); !errors.empty()) return errors;
  switch (format) {
    case ExportFormat::gke: return gke(pools, settings);
    case ExportFormat::karpenter: return karpenter(pools, settings);
    case ExportFormat::terraform: return terraform(pools, settings);
    case ExportFormat::k8s: return workloads(pools, settings);
    case ExportFormat::eks: return eks(pools, settings);
  }
  return Diagnostic{{}, "export", "unknown format", ""};
}

}  // namespace capsim::scenarios
