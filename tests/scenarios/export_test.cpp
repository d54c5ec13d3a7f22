#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "capsim/scenarios/cost_report.hpp"
#include "capsim/scenarios/export.hpp"
#include "capsim/scenarios/pod_security.hpp"
#include "capsim/scenarios/runner.hpp"
#include "capsim/scenarios/scenario_file.hpp"
#include "support/test_support.hpp"

using namespace capsim;
using namespace capsim::scenarios;

namespace {

NodePool gcp_pool() {
  NodePool p;
  p.name = "train-h100-sxm-80gb";
  p.provider = "gcp";
  p.instance_type = "a3-highgpu-8g";
  p.gpu_id = "h100-sxm-80gb";
  p.gpus_per_node = 8;
  p.nodes = 64;
  p.min_nodes = 0;
  p.max_nodes = 64;
  p.gpus_per_pod = 8;
  return p;
}

ExportSettings in(std::string location = "us-central1-a") {
  ExportSettings s;
  s.cluster = "prod";
  s.location = std::move(location);
  return s;
}

NodePool aws_pool() {
  NodePool p = gcp_pool();
  p.provider = "aws";
  p.instance_type = "p5.48xlarge";
  p.spot = true;
  return p;
}

}  // namespace

TEST_CASE("karpenter NodePool parses back with the karpenter.sh v1 fields") {
  auto text = export_node_pools({aws_pool()}, ExportFormat::karpenter, {});
  REQUIRE(text.ok());
  const YAML::Node doc = YAML::Load(*text);
  CHECK(doc["apiVersion"].as<std::string>() == "karpenter.sh/v1");
  CHECK(doc["kind"].as<std::string>() == "NodePool");
  CHECK(doc["metadata"]["name"].as<std::string>() == "train-h100-sxm-80gb");
  const YAML::Node req = doc["spec"]["template"]["spec"]["requirements"];
  CHECK(req[0]["key"].as<std::string>() == "node.kubernetes.io/instance-type");
  CHECK(req[0]["values"][0].as<std::string>() == "p5.48xlarge");
  CHECK(req[1]["key"].as<std::string>() == "karpenter.sh/capacity-type");
  CHECK(req[1]["values"][0].as<std::string>() == "spot");
  CHECK(doc["spec"]["template"]["spec"]["nodeClassRef"]["kind"].as<std::string>() == "EC2NodeClass");
  CHECK(doc["spec"]["limits"]["nvidia.com/gpu"].as<int>() == 512);  // 64 nodes x 8 GPUs
}

TEST_CASE("terraform google_container_node_pool parses back as JSON") {
  auto text = export_node_pools({gcp_pool()}, ExportFormat::terraform, in());
  REQUIRE(text.ok());
  const auto j = nlohmann::json::parse(*text);
  const auto& pool = j["resource"]["google_container_node_pool"]["train_h100_sxm_80gb"];
  CHECK(pool["cluster"] == "prod");
  CHECK(pool["autoscaling"]["max_node_count"] == 64);
  CHECK(pool["node_config"]["machine_type"] == "a3-highgpu-8g");
  CHECK(pool["node_config"]["guest_accelerator"][0]["type"] == "nvidia-h100-80gb");
  CHECK(pool["node_config"]["guest_accelerator"][0]["count"] == 8);
}

TEST_CASE("gke commands carry the accelerator and autoscaling bounds") {
  NodePool mig = gcp_pool();
  mig.instance_type = "a2-highgpu-1g";
  mig.gpu_id = "a100-sxm-40gb";
  mig.gpus_per_node = 1;
  mig.mig_profile = "1g.5gb";
  auto text = export_node_pools({gcp_pool(), mig}, ExportFormat::gke, in());
  REQUIRE(text.ok());
  std::istringstream in(*text);
  std::vector<std::string> commands;
  std::string command;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#' || line.starts_with("set ")) continue;
    command += line.ends_with("\\") ? line.substr(0, line.size() - 1) : line + "\n";
    if (!line.ends_with("\\")) commands.push_back(std::exchange(command, {}));
  }
  REQUIRE(commands.size() == 2);
  CHECK(commands[0].starts_with("gcloud container node-pools create train-h100-sxm-80gb"));
  CHECK(commands[0].find("--cluster=prod") != std::string::npos);
  CHECK(commands[0].find("--accelerator=type=nvidia-h100-80gb,count=8") != std::string::npos);
  CHECK(commands[0].find("--min-nodes=0 --max-nodes=64") != std::string::npos);
  CHECK(commands[1].find("gpu-partition-size=1g.5gb") != std::string::npos);
}

TEST_CASE("the pod fragment asks for whole GPUs or MIG slices") {
  NodePool mig = gcp_pool();
  mig.mig_profile = "1g.10gb";
  mig.gpus_per_pod = 1;
  auto text = export_node_pools({gcp_pool(), mig}, ExportFormat::k8s, {});
  REQUIRE(text.ok());
  const auto docs = YAML::LoadAll(*text);
  REQUIRE(docs.size() == 2);
  const YAML::Node pod0 = docs[0]["spec"]["template"]["spec"];
  CHECK(pod0["containers"][0]["resources"]["limits"]["nvidia.com/gpu"].as<int>() == 8);
  CHECK(pod0["nodeSelector"]["cloud.google.com/gke-accelerator"].as<std::string>() == "nvidia-h100-80gb");
  // GKE: a MIG partition is requested as nvidia.com/gpu on nodes labelled with its size.
  const YAML::Node pod1 = docs[1]["spec"]["template"]["spec"];
  CHECK(pod1["containers"][0]["resources"]["limits"]["nvidia.com/gpu"].as<int>() == 1);
  CHECK(pod1["nodeSelector"]["cloud.google.com/gke-gpu-partition-size"].as<std::string>() == "1g.10gb");
  // Elsewhere (the GPU operator's mixed MIG strategy) the slice is the resource.
  mig.provider = "aws";
  mig.instance_type = "p4d.24xlarge";
  auto aws = export_node_pools({mig}, ExportFormat::k8s, {});
  REQUIRE(aws.ok());
  CHECK(YAML::Load(*aws)["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/mig-1g.10gb"]
            .as<int>() == 1);
}

TEST_CASE("bug 21: every exported pod has an image and label values the API server accepts") {
  NodePool owned = gcp_pool();
  owned.provider = "owned";
  owned.instance_type = "NVIDIA DGX A100 (320 GB)";
  owned.name = "train-a100-sxm-40gb";
  owned.training = true;
  owned.pods = 64;
  ExportSettings s;
  s.image = "nvcr.io/nvidia/pytorch:24.05-py3";
  auto text = export_node_pools({owned}, ExportFormat::k8s, s);
  REQUIRE(text.ok());
  const YAML::Node job = YAML::Load(*text);
  // A 64-node run is an Indexed Job of 64 pods started together, not one bare Pod.
  CHECK(job["kind"].as<std::string>() == "Job");
  CHECK(job["spec"]["completionMode"].as<std::string>() == "Indexed");
  CHECK(job["spec"]["parallelism"].as<int>() == 64);
  CHECK(job["spec"]["completions"].as<int>() == 64);
  const YAML::Node pod = job["spec"]["template"]["spec"];
  CHECK(pod["containers"][0]["image"].as<std::string>() == "nvcr.io/nvidia/pytorch:24.05-py3");
  CHECK(pod["restartPolicy"].as<std::string>() == "Never");
  // The server's model name is no label value; the pool label is.
  CHECK_FALSE(valid_label_value("NVIDIA DGX A100 (320 GB)"));
  CHECK_FALSE(pod["nodeSelector"]["node.kubernetes.io/instance-type"]);
  CHECK(pod["nodeSelector"]["capsim.dev/pool"].as<std::string>() == "train-a100-sxm-40gb");
  for (const auto& kv : pod["nodeSelector"]) CHECK(valid_label_value(kv.second.as<std::string>()));
  // The default image is a placeholder the API server accepts.
  auto placeholder = export_node_pools({owned}, ExportFormat::k8s, {});
  REQUIRE(placeholder.ok());
  CHECK(YAML::Load(*placeholder)["spec"]["template"]["spec"]["containers"][0]["image"].as<std::string>() ==
        kPlaceholderImage);
  CHECK(valid_label_value("p5.48xlarge"));
  CHECK_FALSE(valid_label_value("8x NVIDIA H100 SXM"));
  CHECK_FALSE(valid_label_value(std::string(64, 'a')));
  CHECK_FALSE(valid_label_value("-a"));
}

TEST_CASE("bug 21: Karpenter pools of a training run outlive it, are not disrupted, and come with their EC2NodeClass") {
  NodePool run = aws_pool();
  run.training = true;
  ExportSettings s;
  s.cluster = "ml";
  s.run_seconds = 61 * 86400.0;  // the README's 61-day run
  auto text = export_node_pools({run}, ExportFormat::karpenter, s);
  REQUIRE(text.ok());
  const auto docs = YAML::LoadAll(*text);
  REQUIRE(docs.size() == 2);
  const YAML::Node tmpl = docs[0]["spec"]["template"];
  CHECK(tmpl["spec"]["expireAfter"].as<std::string>() == "1488h");  // 61 days and one more
  CHECK(tmpl["metadata"]["annotations"]["karpenter.sh/do-not-disrupt"].as<std::string>() == "true");
  CHECK(tmpl["spec"]["nodeClassRef"]["name"].as<std::string>() == "ml");
  CHECK(docs[1]["apiVersion"].as<std::string>() == "karpenter.k8s.aws/v1");
  CHECK(docs[1]["kind"].as<std::string>() == "EC2NodeClass");
  CHECK(docs[1]["metadata"]["name"].as<std::string>() == "ml");
  CHECK(docs[1]["spec"]["role"].as<std::string>() == "KarpenterNodeRole-ml");
  CHECK(docs[1]["spec"]["amiSelectorTerms"][0]["alias"].as<std::string>() == "al2023@latest");
  CHECK(docs[1]["spec"]["subnetSelectorTerms"][0]["tags"]["karpenter.sh/discovery"].as<std::string>() == "ml");
  CHECK(docs[1]["spec"]["securityGroupSelectorTerms"][0]["tags"]["karpenter.sh/discovery"].as<std::string>() == "ml");
  // A service has no end: Karpenter's defaults, disruption allowed.
  auto serving = export_node_pools({aws_pool()}, ExportFormat::karpenter, s);
  REQUIRE(serving.ok());
  const YAML::Node pool = YAML::LoadAll(*serving)[0]["spec"]["template"];
  CHECK_FALSE(pool["spec"]["expireAfter"]);
  CHECK_FALSE(pool["metadata"]["annotations"]);
}

TEST_CASE("bug 21: GKE and Terraform pools have a location and count nodes in total") {
  CHECK(is_gke_zone("us-central1-a"));
  CHECK(is_gke_zone("europe-west4-b"));
  CHECK_FALSE(is_gke_zone("us-central1"));
  CHECK_FALSE(is_gke_zone("n/a"));
  // A region: per-zone counts would multiply by its zones, so the pool starts empty and the
  // total bounds carry the plan's.
  auto region = export_node_pools({gcp_pool()}, ExportFormat::gke, in("us-central1"));
  REQUIRE(region.ok());
  CHECK(region->find("--location=us-central1 ") != std::string::npos);
  CHECK(region->find("--num-nodes=0") != std::string::npos);
  CHECK(region->find("--total-min-nodes=0 --total-max-nodes=64") != std::string::npos);
  CHECK(region->find("--max-nodes") == std::string::npos);  // no per-zone bound
  auto tf = export_node_pools({gcp_pool()}, ExportFormat::terraform, in("us-central1"));
  REQUIRE(tf.ok());
  const auto j = nlohmann::json::parse(*tf)["resource"]["google_container_node_pool"]["train_h100_sxm_80gb"];
  CHECK(j["location"] == "us-central1");
  CHECK(j["autoscaling"]["total_max_node_count"] == 64);
  CHECK_FALSE(j["autoscaling"].contains("max_node_count"));
  // A zone: its counts are the totals.
  auto zone = export_node_pools({gcp_pool()}, ExportFormat::terraform, in("us-central1-a"));
  REQUIRE(zone.ok());
  CHECK(nlohmann::json::parse(*zone)["resource"]["google_container_node_pool"]["train_h100_sxm_80gb"]["autoscaling"]
                                    ["max_node_count"] == 64);
  // No location: refused with the flag to pass.
  auto none = export_node_pools({gcp_pool()}, ExportFormat::gke, {});
  REQUIRE_FALSE(none.ok());
  CHECK(none.errors()[0].message == "GKE export needs a location (a GCP region or zone)");
  CHECK(none.errors()[0].hint == "pass --location, e.g. us-central1 or us-central1-a");
}

TEST_CASE("a Cloud TPU node pool: the machine type names the TPU, pods ask for google.com/tpu") {
  NodePool tpu = gcp_pool();
  tpu.name = "train-tpu-v5e";
  tpu.instance_type = "ct5lp-hightpu-4t";
  tpu.gpu_id = "tpu-v5e";
  tpu.gpus_per_node = 4;
  tpu.gpus_per_pod = 4;
  tpu.max_nodes = 1;
  tpu.tpu = true;
  auto gke = export_node_pools({tpu}, ExportFormat::gke, in());
  REQUIRE(gke.ok());
  CHECK(gke->find("--machine-type=ct5lp-hightpu-4t") != std::string::npos);
  CHECK(gke->find("--accelerator") == std::string::npos);
  auto pod = export_node_pools({tpu}, ExportFormat::k8s, {});
  REQUIRE(pod.ok());
  const auto docs = YAML::LoadAll(*pod);
  REQUIRE(docs.size() == 1);
  CHECK(docs[0]["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["google.com/tpu"].as<int>() == 4);
  CHECK(docs[0]["spec"]["template"]["spec"]["tolerations"][0]["key"].as<std::string>() == "google.com/tpu");
  auto tf = export_node_pools({tpu}, ExportFormat::terraform, in());
  REQUIRE(tf.ok());
  const auto j = nlohmann::json::parse(*tf)["resource"]["google_container_node_pool"]["train_tpu_v5e"];
  CHECK(j["node_config"]["machine_type"] == "ct5lp-hightpu-4t");
  CHECK_FALSE(j["node_config"].contains("guest_accelerator"));
  // A TPU host known only by its TPU API type has no GKE machine type to export.
  tpu.instance_type = "v5p-8";
  CHECK_FALSE(export_node_pools({tpu}, ExportFormat::gke, in()).ok());
}

TEST_CASE("an export for the wrong cloud is refused with a way out") {
  auto r = export_node_pools({aws_pool()}, ExportFormat::gke, in());
  REQUIRE_FALSE(r.ok());
  CHECK(r.errors()[0].message == "GKE export needs gcp node types; pool 'train-h100-sxm-80gb' is aws p5.48xlarge");
  CHECK(r.errors()[0].hint == "choose a gcp node type with --node-type");
  auto bad = parse_export_format("karpentr");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.errors()[0].hint == "did you mean 'karpenter'?");
}

TEST_CASE("shipped cost scenarios: owned servers win 24/7, the cloud at business hours, the rented server per run") {
  auto cost = [](const char* name) {
    auto s = load_scenario_file(testing::example_scenario(name), testing::shipped_catalog());
    REQUIRE(s.ok());
    auto r = cost_scenario(*s, testing::shipped_catalog());
    if (!r.ok()) FAIL(format_diagnostics(r.errors()));
    return std::move(r).value();
  };
  auto always = cost("ml-services-24x7");
  // Owned servers win. Since colocation carries the same half administrator as on-prem
  // (issue 18), on-prem is the cheaper of the two: 388.1 k against 445.5 k USD.
  CHECK(always.comparison.options[always.comparison.cheapest].kind == models::OptionKind::on_prem);
  auto part = cost("ml-services-business-hours");
  CHECK(part.comparison.options[part.comparison.cheapest].kind == models::OptionKind::cloud);
  auto runs = cost("resnet-training-cost-per-run");
  CHECK(runs.comparison.options[runs.comparison.cheapest].name == "rented rtx pro 4000 server");
  // The users' "almost ten times cheaper per training run" than the cloud K80: with
  // ResNet-50 timed from its layers (Winograd fp32 on the K80, the RTX PRO 4000's
  // tensor cores) capsim now says about 6.7 times.
  CHECK(runs.comparison.per_unit[2].value() / runs.comparison.per_unit[0].value() > 6.0);
}

TEST_CASE("bug 21: GKE and Terraform take the machine type of an N1 machine with attached GPUs, not the catalog's name") {
  NodePool n1 = gcp_pool();
  n1.instance_type = "n1-standard-8 + 4 x nvidia-tesla-t4";  // the catalog's name of gcp-n1-standard-8-4x-t4
  n1.gpu_id = "t4";
  n1.gpus_per_node = 4;
  auto gke = export_node_pools({n1}, ExportFormat::gke, in());
  REQUIRE(gke.ok());
  CHECK(gke->find("--machine-type=n1-standard-8 \\\n") != std::string::npos);
  CHECK(gke->find("--accelerator=type=nvidia-tesla-t4,count=4") != std::string::npos);
  auto tf = export_node_pools({n1}, ExportFormat::terraform, in());
  REQUIRE(tf.ok());
  CHECK(nlohmann::json::parse(*tf)["resource"]["google_container_node_pool"]["train_h100_sxm_80gb"]["node_config"]
                                   ["machine_type"] == "n1-standard-8");
}

TEST_CASE("bug 21: the GKE script starts with its shebang, the plan's figures after it") {
  ExportSettings s = in();
  s.notes = {{"capsim.dev/plan-gpus", "512"}};
  auto gke = export_node_pools({gcp_pool()}, ExportFormat::gke, s);
  REQUIRE(gke.ok());
  CHECK(gke->starts_with("#!/bin/sh\n# capsim plan: capsim.dev/plan-gpus=512\n"));
}

TEST_CASE("bug 21: a pool of another cloud is refused for GKE and Terraform before a missing location") {
  NodePool owned = gcp_pool();
  owned.provider = "owned";
  owned.instance_type = "NVIDIA DGX A100 (320 GB)";
  for (auto format : {ExportFormat::gke, ExportFormat::terraform}) {
    auto r = export_node_pools({owned}, format, {});
    REQUIRE_FALSE(r.ok());
    CHECK(r.errors()[0].message.find("needs gcp node types; pool 'train-h100-sxm-80gb' is owned NVIDIA DGX A100") !=
          std::string::npos);
  }
}

TEST_CASE("an LLM replica whose pipeline stages span nodes exports as a LeaderWorkerSet group per replica") {
  // Three replicas of TP 8 x PP 2 on 8-GPU nodes: six pods of 8 GPUs, in three groups of two
  // that start, sit and restart together, not a Deployment of six independent pods.
  NodePool serve = aws_pool();
  serve.name = "serve-h100-sxm-80gb";
  serve.spot = false;
  serve.pods = 6;
  serve.pods_per_replica = 2;
  auto text = export_node_pools({serve}, ExportFormat::k8s, {});
  REQUIRE(text.ok());
  CHECK(text->find("install LeaderWorkerSet") != std::string::npos);
  const YAML::Node lws = YAML::Load(*text);
  CHECK(lws["apiVersion"].as<std::string>() == "leaderworkerset.x-k8s.io/v1");
  CHECK(lws["kind"].as<std::string>() == "LeaderWorkerSet");
  CHECK(lws["spec"]["replicas"].as<int>() == 3);
  CHECK(lws["spec"]["leaderWorkerTemplate"]["size"].as<int>() == 2);
  const YAML::Node pod = lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"];
  CHECK(pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"].as<int>() == 8);
  CHECK(pod["nodeSelector"]["node.kubernetes.io/instance-type"].as<std::string>() == "p5.48xlarge");
  // One pod per replica stays a Deployment.
  serve.pods_per_replica = 1;
  auto plain = export_node_pools({serve}, ExportFormat::k8s, {});
  REQUIRE(plain.ok());
  CHECK(YAML::Load(*plain)["kind"].as<std::string>() == "Deployment");
  CHECK(YAML::Load(*plain)["spec"]["replicas"].as<int>() == 6);
}

TEST_CASE("issue 53: every exported pod names its user and group by number, so runAsNonRoot holds") {
  // A training Job, a serving Deployment and a LeaderWorkerSet group: each pod template runs as
  // capsim's numeric user whatever the image's USER is (the kubelet cannot check a name).
  NodePool train = aws_pool();
  train.training = true;
  NodePool serve = aws_pool();
  serve.name = "serve";
  NodePool group = aws_pool();
  group.name = "group";
  group.pods = 4;
  group.pods_per_replica = 2;
  auto text = export_node_pools({train, serve, group}, ExportFormat::k8s, {});
  REQUIRE(text.ok());
  int pods = 0;
  for (const auto& doc : YAML::LoadAll(*text)) {
    const bool lws = doc["kind"].as<std::string>() == "LeaderWorkerSet";
    const YAML::Node pod =
        lws ? doc["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"] : doc["spec"]["template"]["spec"];
    CAPTURE(doc["kind"].as<std::string>());
    const YAML::Node sc = pod["securityContext"];
    REQUIRE(sc.IsMap());
    CHECK(sc["runAsNonRoot"].as<bool>());
    CHECK(sc["runAsUser"].as<int>() == kPodUserId);
    CHECK(sc["runAsGroup"].as<int>() == kPodGroupId);
    CHECK(sc["runAsUser"].as<int>() != 0);
    ++pods;
  }
  CHECK(pods == 3);
}

// ---- Issue 53: the accelerator resource per vendor, EFA for multi-node gangs, EKS node groups.

TEST_CASE("issue 53: the device-plugin resource comes from the catalog's vendor") {
  CHECK(accelerator_resource("nvidia") == "nvidia.com/gpu");
  CHECK(accelerator_resource("amd") == "amd.com/gpu");
  CHECK(accelerator_resource("google") == "google.com/tpu");
  CHECK_FALSE(accelerator_resource("intel"));
  // Every GPU vendor of the shipped catalog has one (an unknown one would be refused at export).
  for (const auto& gpu : testing::shipped_catalog().all(hardware::EntityKind::gpu)) {
    CAPTURE(gpu.id);
    CHECK(accelerator_resource(gpu.text("vendor")));
  }
}

TEST_CASE("issue 53: an AMD pool's pods ask for amd.com/gpu and tolerate amd.com/gpu, not NVIDIA's resource") {
  NodePool p = aws_pool();
  p.provider = "oci";
  p.instance_type = "BM.GPU.MI300X.8";
  p.gpu_id = "mi300x";
  p.vendor = "amd";
  p.spot = false;
  auto text = export_node_pools({p}, ExportFormat::k8s, {});
  REQUIRE_MESSAGE(text, format_diagnostics(text.errors()));
  const YAML::Node pod = YAML::Load(*text)["spec"]["template"]["spec"];
  CHECK(pod["containers"][0]["resources"]["limits"]["amd.com/gpu"].as<int>() == 8);
  CHECK_FALSE(pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"]);
  CHECK(pod["tolerations"][0]["key"].as<std::string>() == "amd.com/gpu");
  CHECK(text->find("nvidia") == std::string::npos);
  // A vendor without a known device plugin is refused, naming the pool and the GPU.
  p.vendor = "intel";
  auto refused = export_node_pools({p}, ExportFormat::k8s, {});
  REQUIRE_FALSE(refused);
  CHECK(refused.errors()[0].message ==
        "no Kubernetes device plugin resource is known for intel accelerators (pool 'train-h100-sxm-80gb', gpu 'mi300x')");
}

TEST_CASE("issue 53: the shipped MI300X example exports amd.com/gpu, its vendor read from the catalog") {
  const auto& catalog = testing::shipped_catalog();
  auto s = load_scenario_file(testing::example_scenario("llama2-13b-finetune-mi300x"), catalog);
  REQUIRE_MESSAGE(s, format_diagnostics(s.errors()));
  auto plan = make_plan(*s, catalog);
  REQUIRE_MESSAGE(plan, format_diagnostics(plan.errors()));
  REQUIRE(plan->plan.node_pools.size() == 1);
  CHECK(plan->plan.node_pools[0].vendor == "amd");
  auto text = export_node_pools(plan->plan.node_pools, ExportFormat::k8s, {});
  REQUIRE_MESSAGE(text, format_diagnostics(text.errors()));
  const YAML::Node job = YAML::Load(*text);
  CHECK(job["kind"].as<std::string>() == "Job");
  const YAML::Node limits = job["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"];
  CHECK(limits["amd.com/gpu"].as<int>() >= 1);
  CHECK_FALSE(limits["nvidia.com/gpu"]);
}

TEST_CASE("issue 53: a multi-node p5 training job requests the node's EFA interfaces, a one-node job none") {
  const auto& catalog = testing::shipped_catalog();
  auto load = [&](int gpus) {
    auto s = load_scenario("p5.yaml",
                           "name: p5\nworkload: {type: training, model: llama-2-13b, tokens: 100B, global_batch: 1024}\n"
                           "hardware: {nodes: [aws-p5-48xlarge], max_gpus: " + std::to_string(gpus) + ", min_gpus: " +
                               std::to_string(gpus) + "}\n",
                           catalog);
    REQUIRE_MESSAGE(s, format_diagnostics(s.errors()));
    auto plan = make_plan(*s, catalog);
    REQUIRE_MESSAGE(plan, format_diagnostics(plan.errors()));
    REQUIRE(plan->plan.node_pools.size() == 1);
    // The catalog's efa_interfaces of p5.48xlarge (32), whatever the plan.
    CHECK(plan->plan.node_pools[0].efa_interfaces == 32);
    auto text = export_node_pools(plan->plan.node_pools, ExportFormat::k8s, {});
    REQUIRE_MESSAGE(text, format_diagnostics(text.errors()));
    return YAML::Load(*text);
  };
  const YAML::Node two = load(16);
  REQUIRE(two["spec"]["parallelism"].as<int>() == 2);
  const YAML::Node limits = two["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"];
  CHECK(limits["vpc.amazonaws.com/efa"].as<int>() == 32);
  CHECK(limits["nvidia.com/gpu"].as<int>() == 8);
  const YAML::Node one = load(8);
  REQUIRE(one["spec"]["parallelism"].as<int>() == 1);
  CHECK_FALSE(one["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["vpc.amazonaws.com/efa"]);
}

TEST_CASE("issue 53: EKS managed node groups in Terraform's JSON syntax for AWS pools, other clouds refused") {
  NodePool p = aws_pool();
  p.min_nodes = 0;
  p.max_nodes = 4;
  p.nodes = 4;
  auto text = export_node_pools({p}, ExportFormat::eks, in());
  REQUIRE_MESSAGE(text, format_diagnostics(text.errors()));
  const auto j = nlohmann::json::parse(*text);
  const auto& g = j["resource"]["aws_eks_node_group"]["train_h100_sxm_80gb"];
  CHECK(g["cluster_name"] == "prod");
  CHECK(g["node_group_name"] == "train-h100-sxm-80gb");
  CHECK(g["instance_types"] == nlohmann::json::array({"p5.48xlarge"}));
  CHECK(g["capacity_type"] == "SPOT");
  CHECK(g["scaling_config"]["min_size"] == 0);
  CHECK(g["scaling_config"]["max_size"] == 4);
  CHECK(g["scaling_config"]["desired_size"] == 4);
  CHECK(g["taint"][0]["key"] == "nvidia.com/gpu");
  CHECK(g["taint"][0]["effect"] == "NO_SCHEDULE");
  CHECK(g["labels"]["capsim.dev/pool"] == "train-h100-sxm-80gb");
  CHECK(g["ami_type"] == "AL2023_x86_64_NVIDIA");
  // The account's role and subnets are variables the user sets.
  CHECK(g["node_role_arn"] == "${var.node_role_arn}");
  CHECK(j["variable"].contains("subnet_ids"));
  auto refused = export_node_pools({gcp_pool()}, ExportFormat::eks, in());
  REQUIRE_FALSE(refused);
  CHECK(refused.errors()[0].message == "EKS export needs aws node types; pool 'train-h100-sxm-80gb' is gcp a3-highgpu-8g");
  CHECK(parse_export_format("eks").value() == ExportFormat::eks);
}
