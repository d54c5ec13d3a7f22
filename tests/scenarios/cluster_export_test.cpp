// cluster_export (issue 17, item 4): the shipped cluster example's plan as Kubernetes
// objects agrees with the plan; Karpenter refuses its GCP pool with the documented text.
// tests/exports/validate_cluster_exports.mjs validates the same output against the schemas.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "capsim/scenarios/cluster.hpp"
#include "capsim/scenarios/cluster_export.hpp"
#include "capsim/scenarios/pod_security.hpp"
#include "support/test_support.hpp"

using namespace capsim;
using namespace capsim::scenarios;

namespace {

// The plan of a shipped cluster scenario.
ClusterPlan plan_of(const std::string& name) {
  auto s = load_cluster_file(testing::cluster_scenario(name), testing::shipped_catalog());
  REQUIRE(s);
  auto p = plan_cluster(*s, testing::shipped_catalog());
  REQUIRE(p);
  return *p;
}

const ClusterPlan& estate_plan() {
  static const ClusterPlan plan = plan_of("team-ml-estate");
  return plan;
}

std::vector<YAML::Node> documents(const std::string& text) {
  std::vector<YAML::Node> out;
  for (const auto& d : YAML::LoadAll(text))
    if (d.IsMap()) out.push_back(d);
  return out;
}

std::map<std::string, YAML::Node> by_name(const std::vector<YAML::Node>& docs, const std::string& kind) {
  std::map<std::string, YAML::Node> out;
  for (const auto& d : docs)
    if (d["kind"].as<std::string>() == kind) out[d["metadata"]["name"].as<std::string>()] = d;
  return out;
}

// The instance types of the plan's pools ("g5.xlarge", "a2-highgpu-1g").
std::set<std::string> pool_instance_types(const ClusterPlan& p) {
  std::set<std::string> types;
  for (const auto& pool : p.packing.pools)
    for (const auto& s : p.node_type_sources)
      if (s.id == pool.node_type) types.insert(s.instance_type);
  return types;
}

}  // namespace

TEST_CASE("cluster export k8s: a JobSet per training workload with its gang's GPUs and the queue label") {
  const ClusterPlan& plan = estate_plan();
  auto text = cluster_export(plan, "k8s");
  REQUIRE(text);
  const auto docs = documents(*text);
  const auto jobsets = by_name(docs, "JobSet");
  const auto local_queues = by_name(docs, "LocalQueue");
  REQUIRE(local_queues.size() == 1);
  const std::string queue = local_queues.begin()->first;
  int training = 0;
  for (const auto& w : plan.problem.workloads) {
    if (!w.is_training) continue;
    ++training;
    CAPTURE(w.name);
    REQUIRE(jobsets.count(w.name) == 1);
    const YAML::Node js = jobsets.at(w.name);
    CHECK(js["apiVersion"].as<std::string>() == "jobset.x-k8s.io/v1alpha2");
    CHECK(js["metadata"]["labels"]["kueue.x-k8s.io/queue-name"].as<std::string>() == queue);
    // The gang's GPUs: pods (parallelism) x nvidia.com/gpu per pod, over its replicated jobs.
    int gpus = 0;
    for (const auto& rj : js["spec"]["replicatedJobs"])
      gpus += rj["template"]["spec"]["parallelism"].as<int>() *
              rj["template"]["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"].as<int>();
    CHECK(gpus == w.training.gpus);
  }
  CHECK(jobsets.size() == static_cast<std::size_t>(training));
  CHECK(training == 2);  // weekly-finetune (1 GPU) and nightly-scoring (4 GPUs)
}

TEST_CASE("cluster export k8s: a Deployment per service with the plan's replicas, an HPA and a PDB above one replica") {
  const ClusterPlan& plan = estate_plan();
  auto text = cluster_export(plan, "k8s");
  REQUIRE(text);
  const auto docs = documents(*text);
  const auto deployments = by_name(docs, "Deployment");
  const auto hpas = by_name(docs, "HorizontalPodAutoscaler");
  const auto pdbs = by_name(docs, "PodDisruptionBudget");
  int services = 0;
  for (const auto& w : plan.problem.workloads) {
    if (w.is_training) continue;
    ++services;
    CAPTURE(w.name);
    REQUIRE(deployments.count(w.name) == 1);
    CHECK(deployments.at(w.name)["spec"]["replicas"].as<int>() == w.service.replicas);
    REQUIRE(hpas.count(w.name) == 1);
    CHECK(hpas.at(w.name)["spec"]["maxReplicas"].as<int>() == w.service.replicas);
    CHECK(hpas.at(w.name)["spec"]["minReplicas"].as<int>() == std::max(1, w.service.min_replicas));
    CHECK(pdbs.count(w.name) == (w.service.replicas > 1 ? 1u : 0u));
  }
  CHECK(deployments.size() == static_cast<std::size_t>(services));
  CHECK(services == 3);
}

TEST_CASE("cluster export k8s: the MIG service on GKE's partitioned pool asks for nvidia.com/gpu, time-slicing for one nvidia.com/gpu") {
  auto text = cluster_export(estate_plan(), "k8s");
  REQUIRE(text);
  const auto deployments = by_name(documents(*text), "Deployment");
  // food-photos: 2 replicas x MIG 1g.5gb on the estate's GCP A100 pool, which GKE partitions
  // (issue 53: one MIG strategy per plan); notebooks: time-sliced 0.25.
  const YAML::Node food_pod = deployments.at("food-photos")["spec"]["template"]["spec"];
  const YAML::Node food = food_pod["containers"][0]["resources"]["limits"];
  CHECK(food["nvidia.com/gpu"].as<int>() == 1);
  CHECK(!food["nvidia.com/mig-1g.5gb"]);
  CHECK(food_pod["nodeSelector"]["cloud.google.com/gke-gpu-partition-size"].as<std::string>() == "1g.5gb");
  const YAML::Node notebooks = deployments.at("notebooks");
  CHECK(notebooks["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"].as<int>() == 1);
  CHECK(notebooks["metadata"]["annotations"]["capsim.dev/gpu-sharing"].as<std::string>().find("sharing.timeSlicing (replicas: 4)") !=
        std::string::npos);
}

TEST_CASE("cluster export k8s: every pod selects an instance type of the plan's pools and tolerates the GPU taint") {
  const ClusterPlan& plan = estate_plan();
  const auto types = pool_instance_types(plan);
  auto text = cluster_export(plan, "k8s");
  REQUIRE(text);
  const auto docs = documents(*text);
  std::vector<std::pair<std::string, YAML::Node>> pods;
  for (const auto& [name, d] : by_name(docs, "Deployment")) pods.emplace_back(name, d["spec"]["template"]["spec"]);
  for (const auto& [name, d] : by_name(docs, "JobSet"))
    for (const auto& rj : d["spec"]["replicatedJobs"]) pods.emplace_back(name, rj["template"]["spec"]["template"]["spec"]);
  CHECK(pods.size() == 5);
  for (const auto& [name, pod] : pods) {
    CAPTURE(name);
    REQUIRE(pod["nodeSelector"]["node.kubernetes.io/instance-type"]);
    CHECK(types.count(pod["nodeSelector"]["node.kubernetes.io/instance-type"].as<std::string>()) == 1);
    CHECK(pod["tolerations"][0]["key"].as<std::string>() == "nvidia.com/gpu");
  }
  // One ResourceFlavor per pool, labelled with its instance type.
  const auto flavors = by_name(docs, "ResourceFlavor");
  CHECK(flavors.size() == plan.packing.pools.size());
  for (const auto& [name, f] : flavors) CHECK(types.count(f["spec"]["nodeLabels"]["node.kubernetes.io/instance-type"].as<std::string>()) == 1);
}

TEST_CASE("cluster export karpenter: the estate's GCP pool is refused by name") {
  auto text = cluster_export(estate_plan(), "karpenter");
  REQUIRE(!text);
  REQUIRE(text.errors().size() == 1);
  CHECK(text.errors()[0].key_path == "export");
  CHECK(text.errors()[0].message == "Karpenter export needs aws node types; pool 'gcp-a2-highgpu-1g' is gcp a2-highgpu-1g");
}

TEST_CASE("cluster export: an unknown target names the closest") {
  auto text = cluster_export(estate_plan(), "karpentr");
  REQUIRE(!text);
  CHECK(text.errors()[0].message == "unknown export target 'karpentr'");
  CHECK(text.errors()[0].hint == "did you mean 'karpenter'?");
}

TEST_CASE("cluster export: dns1123_label") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"chat-7b", "chat-7b"}, {"Chat_7B", "chat-7b"}, {"  a..b  ", "a-b"}, {"__", ""}, {"aws-g5-xlarge", "aws-g5-xlarge"}};
  for (const auto& [in, want] : cases) {
    CAPTURE(in);
    CHECK(dns1123_label(in) == want);
  }
}

TEST_CASE("cluster export gke and terraform: one autoscaled node pool per pool, MIG pools partitioned, other providers refused") {
  const auto p = plan_of("gcp-inference-estate");
  auto gke = cluster_export(p, "gke");
  REQUIRE_MESSAGE(gke, format_diagnostics(gke.errors()));
  for (const auto& pool : p.packing.pools) {
    CAPTURE(pool.node_type);
    const auto at = gke->find("gcloud container node-pools create " + pool.node_type + " ");
    REQUIRE(at != std::string::npos);
    const std::string command = gke->substr(at, gke->find("gcloud container", at + 1) - at);
    CHECK(command.find("--cluster=gcp-inference-estate") != std::string::npos);
    CHECK(command.find("--location=us-central1 ") != std::string::npos);  // the catalog's region of the instances
    CHECK(command.find("--total-min-nodes=" + std::to_string(pool.min_nodes) + " --total-max-nodes=" +
                       std::to_string(pool.max_nodes)) != std::string::npos);
    // The A100 pool holds only the MIG service's 1g.5gb slices: GKE partitions its GPUs.
    CHECK((command.find("gpu-partition-size=1g.5gb") != std::string::npos) == (pool.node_type == "gcp-a2-highgpu-1g"));
  }
  auto tf = cluster_export(p, "terraform", "us-central1-a");
  REQUIRE(tf);
  const auto j = nlohmann::json::parse(*tf);
  CHECK(j["resource"]["google_container_node_pool"].size() == p.packing.pools.size());
  CHECK(j["resource"]["google_container_node_pool"]["gcp_g2_standard_4"]["location"] == "us-central1-a");

  auto refused = cluster_export(estate_plan(), "gke");
  REQUIRE(!refused);
  CHECK(refused.errors().size() == 3);  // the estate's three AWS pools
  CHECK(refused.errors()[0].message == "GKE export needs gcp node types; pool 'aws-g5-xlarge' is aws g5.xlarge");
  CHECK(refused.errors()[0].hint == "list gcp node types in cluster.node_types");
}

TEST_CASE("cluster export k8s: a gang on several nodes keeps one pod per node in one zone and asks for the nodes' EFA") {
  const auto p = plan_of("aws-batch-and-serving");
  auto text = cluster_export(p, "k8s");
  REQUIRE_MESSAGE(text, format_diagnostics(text.errors()));
  const auto jobsets = by_name(documents(*text), "JobSet");
  REQUIRE(jobsets.count("weekly-pretrain") == 1);
  const YAML::Node pod = jobsets.at("weekly-pretrain")["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"];
  // 16 H100s: two p5.48xlarge, each with 32 EFA interfaces (the catalog's efa_interfaces).
  CHECK(pod["containers"][0]["resources"]["limits"]["vpc.amazonaws.com/efa"].as<int>() == 32);
  CHECK(pod["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]["topologyKey"].as<std::string>() ==
        "topology.kubernetes.io/zone");
  CHECK(pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]["topologyKey"]
            .as<std::string>() == "kubernetes.io/hostname");
  // The A10G gang spans two g5.12xlarge, which have no EFA: placement, no EFA request.
  const YAML::Node batch = jobsets.at("weekly-batch")["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"];
  CHECK(batch["affinity"]["podAffinity"]);
  CHECK_FALSE(batch["containers"][0]["resources"]["limits"]["vpc.amazonaws.com/efa"]);
  // Kueue admits only covered resources: the queue covers EFA, quota 2 nodes x 32 on the p5 flavor.
  const YAML::Node queue = by_name(documents(*text), "ClusterQueue").begin()->second;
  bool covered = false;
  for (const auto& r : queue["spec"]["resourceGroups"][0]["coveredResources"]) covered |= r.as<std::string>() == "vpc.amazonaws.com/efa";
  CHECK(covered);
  for (const auto& f : queue["spec"]["resourceGroups"][0]["flavors"])
    if (f["name"].as<std::string>() == "aws-p5-48xlarge")
      for (const auto& r : f["resources"])
        if (r["name"].as<std::string>() == "vpc.amazonaws.com/efa") CHECK(r["nominalQuota"].as<std::string>() == "64");
}

TEST_CASE("issue 53: every pod of a cluster export names its user and group by number, so runAsNonRoot holds") {
  auto text = cluster_export(estate_plan(), "k8s");
  REQUIRE(text);
  const auto docs = documents(*text);
  std::vector<std::pair<std::string, YAML::Node>> pods;
  for (const auto& [name, d] : by_name(docs, "Deployment")) pods.emplace_back(name, d["spec"]["template"]["spec"]);
  for (const auto& [name, d] : by_name(docs, "JobSet"))
    for (const auto& rj : d["spec"]["replicatedJobs"]) pods.emplace_back(name, rj["template"]["spec"]["template"]["spec"]);
  REQUIRE_FALSE(pods.empty());
  for (const auto& [name, pod] : pods) {
    CAPTURE(name);
    CHECK(pod["securityContext"]["runAsNonRoot"].as<bool>());
    CHECK(pod["securityContext"]["runAsUser"].as<int>() == kPodUserId);
    CHECK(pod["securityContext"]["runAsGroup"].as<int>() == kPodGroupId);
  }
}

// ---- Issue 53: one MIG strategy per plan, PyTorchJob beside JobSet, EKS node groups.

namespace {

// Every GPU resource the pods of a k8s export ask for.
std::set<std::string> asked_resources(const std::vector<YAML::Node>& docs) {
  std::set<std::string> out;
  std::function<void(const YAML::Node&)> walk = [&](const YAML::Node& n) {
    if (n.IsMap()) {
      if (n["containers"])
        for (const auto& c : n["containers"])
          for (const auto& r : c["resources"]["limits"]) out.insert(r.first.as<std::string>());
      for (const auto& kv : n) walk(kv.second);
    } else if (n.IsSequence()) {
      for (const auto& x : n) walk(x);
    }
  };
  for (const auto& d : docs) walk(d);
  return out;
}

}  // namespace

TEST_CASE("issue 53: a GKE-partitioned plan asks for nvidia.com/gpu in every target, and each says its MIG strategy") {
  const auto p = plan_of("gcp-inference-estate");
  auto gke = cluster_export(p, "gke");
  REQUIRE_MESSAGE(gke, format_diagnostics(gke.errors()));
  CHECK(gke->find("gpu-partition-size=1g.5gb") != std::string::npos);
  CHECK(gke->find("capsim.dev/mig-strategy=gke") != std::string::npos);
  auto tf = cluster_export(p, "terraform");
  REQUIRE(tf);
  CHECK(nlohmann::json::parse(*tf)["//"].get<std::string>().find("capsim.dev/mig-strategy=gke") != std::string::npos);
  auto k8s = cluster_export(p, "k8s");
  REQUIRE_MESSAGE(k8s, format_diagnostics(k8s.errors()));
  CHECK(k8s->find("# MIG strategy: gke") != std::string::npos);
  const auto docs = documents(*k8s);
  CHECK(by_name(docs, "ClusterQueue").begin()->second["metadata"]["annotations"]["capsim.dev/mig-strategy"].as<std::string>() ==
        "gke");
  // No pod asks for a MIG resource GKE's nodes do not advertise; the MIG service's pods select
  // the partition size GKE gives the pool.
  for (const auto& r : asked_resources(docs)) CHECK_MESSAGE(!r.starts_with("nvidia.com/mig-"), r);
  int partitioned = 0;
  for (const auto& [name, d] : by_name(docs, "Deployment")) {
    const YAML::Node pod = d["spec"]["template"]["spec"];
    if (!pod["nodeSelector"]["cloud.google.com/gke-gpu-partition-size"]) continue;
    ++partitioned;
    CHECK(pod["nodeSelector"]["cloud.google.com/gke-gpu-partition-size"].as<std::string>() == "1g.5gb");
    CHECK(pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"].as<int>() == 1);
  }
  CHECK(partitioned == 1);
  // Kueue's quota is in the resource the pods ask for.
  const auto flavors = by_name(docs, "ResourceFlavor");
  CHECK(flavors.at("gcp-a2-highgpu-1g")["spec"]["nodeLabels"]["cloud.google.com/gke-gpu-partition-size"].as<std::string>() ==
        "1g.5gb");
}

TEST_CASE("issue 53: a plan with MIG slices off GKE keeps the mixed strategy and says so") {
  // aws-batch-and-serving's OCR service runs on MIG 1g.5gb slices of an AWS A100 pool.
  auto k8s = cluster_export(plan_of("aws-batch-and-serving"), "k8s");
  REQUIRE(k8s);
  CHECK(k8s->find("# MIG strategy: mixed") != std::string::npos);
  const auto docs = documents(*k8s);
  CHECK(asked_resources(docs).count("nvidia.com/mig-1g.5gb") == 1);
  CHECK(by_name(docs, "ClusterQueue").begin()->second["metadata"]["annotations"]["capsim.dev/mig-strategy"].as<std::string>() ==
        "mixed");
}

TEST_CASE("issue 53: pytorchjob writes a Kubeflow PyTorchJob per training gang, Kueue-suspended, one pod per node") {
  const auto p = plan_of("aws-batch-and-serving");
  auto text = cluster_export(p, "pytorchjob");
  REQUIRE_MESSAGE(text, format_diagnostics(text.errors()));
  const auto docs = documents(*text);
  CHECK(by_name(docs, "JobSet").empty());
  const auto jobs = by_name(docs, "PyTorchJob");
  REQUIRE(jobs.count("weekly-pretrain") == 1);
  const YAML::Node job = jobs.at("weekly-pretrain");
  CHECK(job["apiVersion"].as<std::string>() == "kubeflow.org/v1");
  CHECK(job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"].as<std::string>() == "aws-batch-and-serving");
  CHECK(job["spec"]["runPolicy"]["suspend"].as<bool>());
  // 16 H100s on two p5.48xlarge: a Master and a Worker of 8 GPUs and 32 EFA interfaces each.
  const YAML::Node specs = job["spec"]["pytorchReplicaSpecs"];
  CHECK(specs["Master"]["replicas"].as<int>() == 1);
  CHECK(specs["Worker"]["replicas"].as<int>() == 1);
  CHECK(job["spec"]["nprocPerNode"].as<std::string>() == "gpu");  // one process per GPU of the pod
  for (const char* type : {"Master", "Worker"}) {
    const YAML::Node c = specs[type]["template"]["spec"]["containers"][0];
    CHECK(c["name"].as<std::string>() == "pytorch");  // the training operator's container name
    CHECK(c["resources"]["limits"]["nvidia.com/gpu"].as<int>() == 8);
    CHECK(c["resources"]["limits"]["vpc.amazonaws.com/efa"].as<int>() == 32);
  }
  // The A10G gang's last node is partly used (a pod of 4 GPUs and one of 2): the partial pod is
  // the Master, the full ones Workers, as many GPUs in all as the JobSet's.
  const YAML::Node batch = jobs.at("weekly-batch")["spec"]["pytorchReplicaSpecs"];
  CHECK(batch["Master"]["replicas"].as<int>() == 1);
  CHECK(batch["Master"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"].as<int>() == 2);
  CHECK(batch["Worker"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"].as<int>() == 4);
  // The services are the k8s export's.
  auto k8s = cluster_export(p, "k8s");
  REQUIRE(k8s);
  CHECK(by_name(docs, "Deployment").size() == by_name(documents(*k8s), "Deployment").size());
  CHECK(by_name(documents(*k8s), "JobSet").size() == jobs.size());
}

TEST_CASE("issue 53: eks writes an aws_eks_node_group per pool of an AWS plan and refuses other clouds' pools") {
  const auto p = plan_of("aws-batch-and-serving");
  auto text = cluster_export(p, "eks");
  REQUIRE_MESSAGE(text, format_diagnostics(text.errors()));
  const auto j = nlohmann::json::parse(*text);
  const auto& groups = j["resource"]["aws_eks_node_group"];
  CHECK(groups.size() == p.packing.pools.size());
  for (const auto& pool : p.packing.pools) {
    CAPTURE(pool.node_type);
    std::string key = pool.node_type;
    std::replace(key.begin(), key.end(), '-', '_');
    REQUIRE(groups.contains(key));
    CHECK(groups[key]["scaling_config"]["min_size"] == pool.min_nodes);
    CHECK(groups[key]["scaling_config"]["max_size"] == std::max(1, pool.max_nodes));
    CHECK(groups[key]["cluster_name"] == "aws-batch-and-serving");
  }
  auto refused = cluster_export(estate_plan(), "eks");
  REQUIRE_FALSE(refused);
  CHECK(refused.errors()[0].hint == "list aws node types in cluster.node_types");
}
