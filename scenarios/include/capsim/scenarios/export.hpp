// Node pools from a recommendation, written for the tools that create them:
//   gke        `gcloud container node-pools create` commands (Google Kubernetes Engine)
//   karpenter  Karpenter NodePool manifests (karpenter.sh/v1) for AWS
//   terraform  `google_container_node_pool` resources in Terraform's JSON syntax (*.tf.json)
//   k8s        a Pod spec fragment with the GPU (or MIG) resource limits
// Field names follow the published API versions; tests parse each output back.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "capsim/core/result.hpp"

namespace capsim::scenarios {

struct NodePool {
  std::string name;           // Kubernetes-friendly: lowercase, digits, hyphens
  std::string provider;       // aws, gcp, ...
  std::string instance_type;  // the provider's machine type ("a3-highgpu-8g", "p5.48xlarge")
  std::string gpu_id;         // catalog GPU id
  int gpus_per_node = 1;
  int nodes = 1;              // what the plan needs
  int min_nodes = 0;          // autoscaling bounds
  int max_nodes = 1;
  bool spot = false;
  std::optional<std::string> mig_profile;  // "1g.10gb": request MIG slices instead of GPUs
  int gpus_per_pod = 1;                    // GPUs (or slices) each pod asks for
  bool tpu = false;                        // Cloud TPU chips (google.com/tpu), not NVIDIA GPUs
};

enum class ExportFormat { gke, karpenter, terraform, k8s };
Result<ExportFormat> parse_export_format(std::string_view name);

// The GKE accelerator type of a catalog GPU ("nvidia-h100-80gb"); nullopt when GKE has none.
std::optional<std::string> gke_accelerator(const std::string& gpu_id);

// Errors: a GKE/Terraform export of a pool that is not a GCP machine, a Karpenter export of
// one that is not AWS, a GPU GKE does not offer.
// Key/value notes written into the export (Kubernetes annotations, a Terraform "//" comment,
// a comment line for gcloud): the plan's figures, "capsim.dev/plan-gpus" -> "8".
using ExportAnnotations = std::vector<std::pair<std::string, std::string>>;

Result<std::string> export_node_pools(const std::vector<NodePool>& pools, ExportFormat format,
                                      const std::string& cluster = "capsim", const ExportAnnotations& notes = {});

}  // namespace capsim::scenarios
