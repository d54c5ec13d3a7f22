// Node pools from a recommendation, written for the tools that create them:
//   gke        `gcloud container node-pools create` commands (Google Kubernetes Engine)
//   karpenter  Karpenter NodePool manifests (karpenter.sh/v1) for AWS
//   terraform  `google_container_node_pool` resources in Terraform's JSON syntax (*.tf.json)
//   eks        `aws_eks_node_group` resources (EKS managed node groups) in Terraform's JSON
//              syntax, with the node role and subnets as Terraform variables
//   k8s        the workload's Kubernetes objects: an Indexed Job of one pod per node for
//              training, a Deployment of the replicas for serving, each with the image, the
//              GPU (or MIG) resource the platform schedules and a node selector that is a
//              valid label
// Field names follow the published API versions; tests parse each output back.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "capsim/core/result.hpp"
#include "capsim/hardware/catalog.hpp"

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
  bool training = false;                   // a gang of pods for one run (Job), not replicas (Deployment)
  int pods = 1;                            // pods the plan runs in this pool (workers or replicas)
  // Serving: the pods one replica spans (an LLM replica of pipeline stages across nodes, a
  // pod per node); more than 1 exports the replicas as a LeaderWorkerSet of groups this size.
  int pods_per_replica = 1;
  // The accelerator's vendor as the catalog records it (gpus.yaml `vendor`): it names the
  // extended resource pods request and the taint key GPU nodes carry (accelerator_resource).
  std::string vendor = "nvidia";
  // AWS Elastic Fabric Adapter interfaces per node (the catalog's efa_interfaces; 0: none
  // known). A training gang on more than one node requests them (vpc.amazonaws.com/efa).
  int efa_interfaces = 0;
};

// Key/value notes written into the export (Kubernetes annotations, a Terraform "//" comment,
// a comment line for gcloud): the plan's figures, "capsim.dev/plan-gpus" -> "8".
using ExportAnnotations = std::vector<std::pair<std::string, std::string>>;

// The image exports put in a workload's container when the user names none: a placeholder
// that the API server accepts and no registry serves, so nothing runs by accident.
inline constexpr const char* kPlaceholderImage = "registry.example.com/your-team/your-workload:latest";

struct ExportSettings {
  std::string cluster = "capsim";  // GKE and Terraform: the cluster the pools join; Karpenter: discovery tag
  // GKE and Terraform: a zone ("us-central1-a": node counts are that zone's, which is the
  // total) or a region ("us-central1": the pool starts empty and autoscales between the
  // plan's bounds in total across the region's zones). Empty: refused for those formats.
  std::string location;
  std::string image = kPlaceholderImage;  // k8s: the workload's container image
  // Karpenter: one run of a training job; its nodes expire no sooner than a day after it and
  // are not disrupted while it runs. Empty: Karpenter's defaults.
  std::optional<double> run_seconds;
  ExportAnnotations notes;  // the plan's figures
};

// A Kubernetes label value (at most 63 characters, alphanumerics with '-', '_', '.' inside).
bool valid_label_value(std::string_view v);
// Whether a GKE location names a zone ("us-central1-a") rather than a region ("us-central1").
bool is_gke_zone(std::string_view location);

enum class ExportFormat { gke, karpenter, terraform, k8s, eks };
Result<ExportFormat> parse_export_format(std::string_view name);

// The Kubernetes extended resource a vendor's device plugin advertises its accelerators as,
// which is also the taint key capsim gives those nodes: nvidia.com/gpu (NVIDIA device plugin),
// amd.com/gpu (ROCm/k8s-device-plugin), google.com/tpu (GKE's Cloud TPU). nullopt for a
// vendor whose device plugin capsim does not know (intel), which exports refuse.
std::optional<std::string> accelerator_resource(std::string_view vendor);
// The AWS EFA device plugin's resource (aws-efa-k8s-device-plugin): one per EFA interface.
inline constexpr const char* kEfaResource = "vpc.amazonaws.com/efa";

// Fills in what a plan's pools take from the catalog: each pool's vendor (its GPU's
// `vendor`) and EFA interfaces (its instance's `efa_interfaces`, matched by provider and name).
void complete_node_pools(std::vector<NodePool>& pools, const hardware::Catalog& catalog);

// The GKE accelerator type of a catalog GPU ("nvidia-h100-80gb"); nullopt when GKE has none.
std::optional<std::string> gke_accelerator(const std::string& gpu_id);


// ---- What the receiving tools accept (issue 47): every value an export writes that does not
// come from the catalog is checked against these before it is written.

// A DNS-1123 label (a Kubernetes object name): 1 to 63 lowercase letters, digits and '-',
// starting and ending with a letter or digit.
bool is_dns1123_label(std::string_view s);
// A DNS-1123 subdomain: at most 253 characters, DNS-1123 labels joined by '.'.
bool is_dns1123_subdomain(std::string_view s);
// A GKE cluster name: a lowercase letter, then at most 39 lowercase letters, digits and '-',
// not ending in '-' (GKE refuses others: "Must be a match of regex
// '(?:[a-z](?:[-a-z0-9]{0,38}[a-z0-9])?)'"). Also a DNS-1123 label, and short enough for
// the IAM role "KarpenterNodeRole-<cluster>" (at most 64 characters).
bool is_gke_cluster_name(std::string_view s);
// An OCI image reference as Kubernetes and containerd parse it (distribution/reference):
// [registry[:port]/]repository[:tag][@digest], e.g. nvcr.io/nvidia/pytorch:24.05-py3.
bool is_image_reference(std::string_view s);

// The settings an export writes, checked as a scenario's keys are, each error naming its
// flag and the rule: --cluster a GKE cluster name (every target: GKE and Terraform join it,
// Karpenter names its EC2NodeClass and node role after it); --location (gke, terraform) a
// lowercase region or zone name; --image (k8s) an image reference. Empty: all hold.
std::vector<Diagnostic> check_export_settings(const ExportSettings& s, ExportFormat format);

// The GCP regions the catalog knows: those the gcp provider lists (providers.yaml
// `regions`) and those its instances are priced in, sorted.
std::vector<std::string> gcp_regions(const hardware::Catalog& catalog);
// A --location for gke and terraform: one of gcp_regions, or a zone of one (the region and a
// letter, "us-central1-a"). The error lists the regions and has a "did you mean".
Status check_gcp_location(std::string_view location, const hardware::Catalog& catalog);

// Errors: settings check_export_settings refuses, a GKE/Terraform export of a pool that is
// not a GCP machine or without a location, a Karpenter export of one that is not AWS, a GPU
// GKE does not offer. Every value in the gke script is one shell word (shell_word), every
// comment one line (shell_comment); YAML and JSON are built with yaml-cpp and nlohmann::json.
Result<std::string> export_node_pools(const std::vector<NodePool>& pools, ExportFormat format,
                                      const ExportSettings& settings);

}  // namespace capsim::scenarios
