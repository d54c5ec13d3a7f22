// A whole cluster plan (cluster.hpp, `capsim plan --export`) written as the objects the tools
// that run it accept (issue 17):
//   k8s        a multi-document YAML stream, in this order:
//                - Kueue (kueue.x-k8s.io/v1beta2): one ResourceFlavor per node pool (its
//                  instance-type label and GPU taint), one ClusterQueue whose nominal quotas
//                  are the pools' maxima (the most nodes up in one hour x each node's
//                  allocatable CPU and memory, its whole GPUs as nvidia.com/gpu and its MIG
//                  slices as nvidia.com/mig-<profile>), and one LocalQueue pointing at it;
//                - per training workload a JobSet (jobset.x-k8s.io/v1alpha2) labelled with
//                  the LocalQueue (kueue.x-k8s.io/queue-name), so Kueue admits the gang as
//                  one: one Indexed Job of one pod per node of the gang;
//                - per service a Deployment (apps/v1) of the plan's replicas, a
//                  HorizontalPodAutoscaler (autoscaling/v2) from min_replicas (at least 1) to
//                  the replicas and, when there is more than one replica, a
//                  PodDisruptionBudget (policy/v1) of at most one unavailable.
//              Pods ask for nvidia.com/gpu (whole GPUs; also one time-sliced or MPS share,
//              which the NVIDIA device plugin's sharing configuration advertises as several
//              nvidia.com/gpu per GPU, said in an annotation) or nvidia.com/mig-<profile>
//              (the GPU operator's mixed MIG strategy), CPU and memory from the pod specs;
//              they select their pool's nodes by node.kubernetes.io/instance-type and
//              tolerate the nvidia.com/gpu NoSchedule taint. spread: node is a required
//              podAntiAffinity on kubernetes.io/hostname, spread: zone a
//              topologySpreadConstraint on topology.kubernetes.io/zone. A gang on several
//              nodes keeps one pod per node (podAntiAffinity on kubernetes.io/hostname) and
//              all in one zone (podAffinity on topology.kubernetes.io/zone), and asks for the
//              node's EFA interfaces (vpc.amazonaws.com/efa, the AWS EFA device plugin's
//              resource) where the catalog gives efa_interfaces for its node type.
//   pytorchjob the k8s stream with each training gang as a Kubeflow PyTorchJob (kubeflow.org/v1:
//              a Master and Workers of one pod per node, container "pytorch", suspended with
//              the queue label for Kueue) in place of its JobSet; a partly used last node is the
//              Master; a gang of pods of more sizes than that is refused.
//   eks        the node pools as aws_eks_node_group Terraform (export.hpp); AWS pools only.
//   gke, terraform
//              the node pools only, as `capsim export gke|terraform` writes them (export.hpp):
//              one gcloud container node-pools create command, or one
//              google_container_node_pool resource, per pool, autoscaling between the pool's
//              fewest and most nodes up in one hour; GCP pools only.
//   karpenter  one karpenter.sh/v1 NodePool per pool (its instance type, on demand, the GPU
//              taint, limits of max nodes x the node's GPUs, vCPUs and memory) and the
//              karpenter.k8s.aws/v1 EC2NodeClass they name: AWS pools only.
// Accelerators: pods ask for their GPU vendor's device-plugin resource (accelerator_resource:
// nvidia.com/gpu, amd.com/gpu) and tolerate it as a taint. MIG: one strategy per plan, stated
// by every target ("# MIG strategy:", the ClusterQueue's capsim.dev/mig-strategy annotation,
// the gke/terraform comment): "gke" when every pool with MIG slices is a GCP pool of one profile
// and nothing else (GKE partitions it; pods ask for nvidia.com/gpu on nodes labelled
// cloud.google.com/gke-gpu-partition-size), else "mixed" (nvidia.com/mig-<profile>); gke and
// terraform refuse a GCP pool with MIG slices under "mixed".
// Not exported: the hours of the week (a JobSet is one run, a Deployment has no schedule;
// both carry them in the capsim.dev/hours annotation), priorities, borrowing of serving
// nodes by training and the taint that keeps training off serving nodes.
//
// Names: workloads and pools become DNS-1123 labels (lowercase; other characters become
// '-'); one longer than 63 characters, or two that become the same name, are an error. Ownership:
// plain values. Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "capsim/core/result.hpp"
#include "capsim/scenarios/cluster.hpp"

namespace capsim::scenarios {

// `target` is "k8s", "pytorchjob", "karpenter", "eks", "gke" or "terraform". Errors (all at once): an unknown target (with a "did you
// mean"); for karpenter, every pool that is not an AWS instance:
//   "Karpenter export needs aws node types; pool '<pool>' is <provider> <instance type>"
// for both, names that collide once made DNS-1123 labels, an instance type that is no label
// value.
// `location`: gke and terraform, a GCP zone or region (default: the catalog's region of the
// pools' instances).
Result<std::string> cluster_export(const ClusterPlan& plan, std::string_view target, const std::string& location = "");

// A name made a DNS-1123 label but for its length: "Chat_7B" -> "chat-7b", runs of other
// characters one '-', none at either end; "" when nothing is left. Not shortened.
std::string dns1123_label(std::string_view name);

}  // namespace capsim::scenarios
