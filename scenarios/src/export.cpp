#include "capsim/scenarios/export.hpp"

#include <yaml-cpp/yaml.h>

#include <map>
#include <nlohmann/json.hpp>

#include "capsim/core/suggest.hpp"

namespace capsim::scenarios {
namespace {

constexpr const char* kGpuTaint = "nvidia.com/gpu";

// Terraform resource names: letters, digits, underscores.
std::string tf_name(const std::string& s) {
  std::string out;
  for (char c : s) out += (c == '-' || c == '.') ? '_' : c;
  return out;
}

// GKE schedules Cloud TPU chips as google.com/tpu and taints TPU nodes with that key.
constexpr const char* kTpuResource = "google.com/tpu";

// The plan's figures ride along with every export, so a reader of the YAML sees the same
// numbers as `capsim run` (and tests can check they agree).
void emit_annotations(YAML::Emitter& y, const ExportAnnotations& notes) {
  if (notes.empty()) return;
  y << YAML::Key << "annotations" << YAML::Value << YAML::BeginMap;
  for (const auto& [k, v] : notes) y << YAML::Key << k << YAML::Value << YAML::DoubleQuoted << v;
  y << YAML::EndMap;
}

std::string comment_line(const ExportAnnotations& notes) {
  std::string out = "capsim plan:";
  for (const auto& [k, v] : notes) out += " " + k + "=" + v;
  return out;
}

std::string resource_name(const NodePool& p) {
  if (p.tpu) return kTpuResource;
  return p.mig_profile ? "nvidia.com/mig-" + *p.mig_profile : std::string("nvidia.com/gpu");
}

// A TPU node pool: the machine type (ct5lp-hightpu-4t, ...) names the TPU version and chip
// count, so GKE needs no --accelerator; a single-host slice needs no topology either.
std::string gke_tpu_pool(const NodePool& p, const std::string& cluster) {
  return "gcloud container node-pools create " + p.name + " \\\n  --cluster=" + cluster + " \\\n  --machine-type=" +
         p.instance_type + " \\\n  --num-nodes=" + std::to_string(p.min_nodes) +
         " \\\n  --enable-autoscaling --min-nodes=" + std::to_string(p.min_nodes) +
         " --max-nodes=" + std::to_string(p.max_nodes) + (p.spot ? " \\\n  --spot" : "") + "\n";
}

Diagnostic wrong_provider(const NodePool& p, const std::string& format, const std::string& wanted) {
  return Diagnostic{{}, "export", format + " export needs " + wanted + " node types; pool '" + p.name + "' is " +
                                      p.provider + " " + p.instance_type,
                    std::string(wanted == "aws" ? "choose an " : "choose a ") + wanted + " node type with --node-type"};
}

Result<std::string> gke(const std::vector<NodePool>& pools, const std::string& cluster) {
  std::string out = "#!/bin/sh\n# GKE node pools from capsim (gcloud container node-pools create).\nset -e\n";
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
      out += gke_tpu_pool(p, cluster);
      continue;
    }
    const auto accelerator = gke_accelerator(p.gpu_id);
    if (!accelerator) {
      errors.push_back({{}, "export", "GKE offers no accelerator for gpu '" + p.gpu_id + "'", ""});
      continue;
    }
    std::string acc = "type=" + *accelerator + ",count=" + std::to_string(p.gpus_per_node) + ",gpu-driver-version=default";
    if (p.mig_profile) acc += ",gpu-partition-size=" + *p.mig_profile;
    out += "gcloud container node-pools create " + p.name + " \\\n  --cluster=" + cluster + " \\\n  --machine-type=" +
           p.instance_type + " \\\n  --accelerator=" + acc + " \\\n  --num-nodes=" + std::to_string(p.min_nodes) +
           " \\\n  --enable-autoscaling --min-nodes=" + std::to_string(p.min_nodes) +
           " --max-nodes=" + std::to_string(p.max_nodes) + " \\\n  --node-taints=" + kGpuTaint +
           "=present:NoSchedule" + (p.spot ? " \\\n  --spot" : "") + "\n";
  }
  if (!errors.empty()) return errors;
  return out;
}

Result<std::string> karpenter(const std::vector<NodePool>& pools, const ExportAnnotations& notes) {
  YAML::Emitter y;
  std::vector<Diagnostic> errors;
  for (const auto& p : pools) {
    if (p.provider != "aws") {
      errors.push_back(wrong_provider(p, "Karpenter", "aws"));
      continue;
    }
    y << YAML::BeginDoc << YAML::BeginMap;
    y << YAML::Key << "apiVersion" << YAML::Value << "karpenter.sh/v1";
    y << YAML::Key << "kind" << YAML::Value << "NodePool";
    y << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap << YAML::Key << "name" << YAML::Value << p.name;
    emit_annotations(y, notes);
    y << YAML::EndMap;
    y << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
    y << YAML::Key << "template" << YAML::Value << YAML::BeginMap;
    y << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap << YAML::Key << "labels" << YAML::Value
      << YAML::BeginMap << YAML::Key << "capsim.dev/pool" << YAML::Value << p.name << YAML::EndMap << YAML::EndMap;
    y << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
    y << YAML::Key << "nodeClassRef" << YAML::Value << YAML::BeginMap << YAML::Key << "group" << YAML::Value
      << "karpenter.k8s.aws" << YAML::Key << "kind" << YAML::Value << "EC2NodeClass" << YAML::Key << "name"
      << YAML::Value << "default" << YAML::EndMap;
    y << YAML::Key << "requirements" << YAML::Value << YAML::BeginSeq;
    y << YAML::BeginMap << YAML::Key << "key" << YAML::Value << "node.kubernetes.io/instance-type" << YAML::Key
      << "operator" << YAML::Value << "In" << YAML::Key << "values" << YAML::Value << YAML::Flow << YAML::BeginSeq
      << p.instance_type << YAML::EndSeq << YAML::EndMap;
    y << YAML::BeginMap << YAML::Key << "key" << YAML::Value << "karpenter.sh/capacity-type" << YAML::Key << "operator"
      << YAML::Value << "In" << YAML::Key << "values" << YAML::Value << YAML::Flow << YAML::BeginSeq
      << (p.spot ? "spot" : "on-demand") << YAML::EndSeq << YAML::EndMap;
    y << YAML::EndSeq;
    y << YAML::Key << "taints" << YAML::Value << YAML::BeginSeq << YAML::BeginMap << YAML::Key << "key" << YAML::Value
      << kGpuTaint << YAML::Key << "effect" << YAML::Value << "NoSchedule" << YAML::EndMap << YAML::EndSeq;
    y << YAML::EndMap;  // template.spec
    y << YAML::EndMap;  // template
    y << YAML::Key << "limits" << YAML::Value << YAML::BeginMap << YAML::Key << "nvidia.com/gpu" << YAML::Value
      << p.max_nodes * p.gpus_per_node << YAML::EndMap;
    y << YAML::Key << "disruption" << YAML::Value << YAML::BeginMap << YAML::Key << "consolidationPolicy"
      << YAML::Value << "WhenEmpty" << YAML::Key << "consolidateAfter" << YAML::Value << "5m" << YAML::EndMap;
    y << YAML::EndMap;  // spec
    y << YAML::EndMap;
  }
  if (!errors.empty()) return errors;
  return "# Karpenter NodePools from capsim (karpenter.sh/v1); the EC2NodeClass 'default' is yours.\n" +
         std::string(y.c_str()) + "\n";
}

Result<std::string> terraform(const std::vector<NodePool>& pools, const std::string& cluster,
                              const ExportAnnotations& notes) {
  nlohmann::json pools_json = nlohmann::json::object();
  std::vector<Diagnostic> errors;
  for (const auto& p : pools) {
    if (p.provider != "gcp") {
      errors.push_back(wrong_provider(p, "Terraform google_container_node_pool", "gcp"));
      continue;
    }
    if (p.tpu) {  // the TPU machine type carries the accelerator
      pools_json[tf_name(p.name)] = {
          {"name", p.name},
          {"cluster", cluster},
          {"initial_node_count", p.min_nodes},
          {"autoscaling", {{"min_node_count", p.min_nodes}, {"max_node_count", p.max_nodes}}},
          {"node_config", {{"machine_type", p.instance_type}, {"spot", p.spot}}}};
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
    pools_json[tf_name(p.name)] = {
        {"name", p.name},
        {"cluster", cluster},
        {"initial_node_count", p.min_nodes},
        {"autoscaling", {{"min_node_count", p.min_nodes}, {"max_node_count", p.max_nodes}}},
        {"node_config",
         {{"machine_type", p.instance_type},
          {"spot", p.spot},
          {"guest_accelerator", nlohmann::json::array({acc})},
          {"taint", nlohmann::json::array({{{"key", kGpuTaint}, {"value", "present"}, {"effect", "NO_SCHEDULE"}}})}}}};
  }
  if (!errors.empty()) return errors;
  nlohmann::json root = {{"resource", {{"google_container_node_pool", pools_json}}}};
  if (!notes.empty()) root["//"] = comment_line(notes);  // Terraform's JSON syntax: "//" is a comment
  return root.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string pod_fragment(const std::vector<NodePool>& pools, const ExportAnnotations& notes) {
  YAML::Emitter y;
  for (const auto& p : pools) {
    y << YAML::BeginDoc << YAML::BeginMap;
    y << YAML::Key << "apiVersion" << YAML::Value << "v1";
    y << YAML::Key << "kind" << YAML::Value << "Pod";
    y << YAML::Key << "metadata" << YAML::Value << YAML::BeginMap << YAML::Key << "name" << YAML::Value
      << p.name + "-worker";
    emit_annotations(y, notes);
    y << YAML::EndMap;
    y << YAML::Key << "spec" << YAML::Value << YAML::BeginMap;
    y << YAML::Key << "nodeSelector" << YAML::Value << YAML::BeginMap;
    if (p.provider == "gcp" && gke_accelerator(p.gpu_id))
      y << YAML::Key << "cloud.google.com/gke-accelerator" << YAML::Value << *gke_accelerator(p.gpu_id);
    else
      y << YAML::Key << "node.kubernetes.io/instance-type" << YAML::Value << p.instance_type;
    y << YAML::EndMap;
    y << YAML::Key << "tolerations" << YAML::Value << YAML::BeginSeq << YAML::BeginMap << YAML::Key << "key"
      << YAML::Value << (p.tpu ? kTpuResource : kGpuTaint) << YAML::Key << "operator" << YAML::Value << "Exists" << YAML::Key << "effect"
      << YAML::Value << "NoSchedule" << YAML::EndMap << YAML::EndSeq;
    y << YAML::Key << "containers" << YAML::Value << YAML::BeginSeq << YAML::BeginMap;
    y << YAML::Key << "name" << YAML::Value << "worker";
    y << YAML::Key << "resources" << YAML::Value << YAML::BeginMap << YAML::Key << "limits" << YAML::Value
      << YAML::BeginMap << YAML::Key << resource_name(p) << YAML::Value << p.gpus_per_pod << YAML::EndMap
      << YAML::EndMap;
    y << YAML::EndMap << YAML::EndSeq;
    y << YAML::EndMap << YAML::EndMap;
  }
  return "# Pod spec fragments from capsim: merge resources, nodeSelector and tolerations into your\n"
         "# workload (add its image and command).\n" +
         std::string(y.c_str()) + "\n";
}

}  // namespace

Result<ExportFormat> parse_export_format(std::string_view name) {
  static const std::map<std::string, ExportFormat, std::less<>> formats = {
      {"gke", ExportFormat::gke}, {"karpenter", ExportFormat::karpenter}, {"terraform", ExportFormat::terraform},
      {"k8s", ExportFormat::k8s}};
  if (auto it = formats.find(name); it != formats.end()) return it->second;
  return Diagnostic{{}, "", "unknown export format '" + std::string(name) + "'",
                    did_you_mean(name, {"gke", "karpenter", "terraform", "k8s"}).empty()
                        ? "use gke, karpenter, terraform or k8s"
                        : did_you_mean(name, {"gke", "karpenter", "terraform", "k8s"})};
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

Result<std::string> export_node_pools(const std::vector<NodePool>& pools, ExportFormat format,
                                      const std::string& cluster, const ExportAnnotations& notes) {
  if (pools.empty()) return Diagnostic{{}, "export", "no node pools to export", ""};
  switch (format) {
    case ExportFormat::gke: {
      auto text = gke(pools, cluster);
      if (!text || notes.empty()) return text;
      return "# " + comment_line(notes) + "\n" + *text;
    }
    case ExportFormat::karpenter: return karpenter(pools, notes);
    case ExportFormat::terraform: return terraform(pools, cluster, notes);
    case ExportFormat::k8s: return pod_fragment(pools, notes);
  }
  return Diagnostic{{}, "export", "unknown format", ""};
}

}  // namespace capsim::scenarios
