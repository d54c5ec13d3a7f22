#include <doctest/doctest.h>

#include "capsim/models/serving_sizing.hpp"
#include "support/test_support.hpp"

using namespace capsim;
using namespace capsim::models;

namespace {
// An LLM sizing request: a model preset, one request class, the peak rate, the TTFT and TPOT
// bounds in seconds, catalog node types, and how many candidates to verify for how long.
struct Bounds {
  double ttft_s, tpot_s;
};
LlmSizingRequest llm_sizing(const char* model, LlmRequestMix mix, double peak_rate, Bounds bounds,
                            std::initializer_list<const char*> nodes, int verify_top, double verify_s) {
  LlmSizingRequest r;
  r.shape = find_transformer_preset(model)->shape;
  r.mix = std::move(mix);
  r.peak_rate = peak_rate;
  r.ttft_p99 = Seconds(bounds.ttft_s);
  r.tpot_p99 = Seconds(bounds.tpot_s);
  for (const char* n : nodes) r.node_types.push_back(*node_type_by_id(testing::shipped_catalog(), n));
  r.verify_top = verify_top;
  r.verify_duration = Seconds(verify_s);
  return r;
}
}  // namespace

TEST_CASE("serving sizing finds a verified cheapest deployment with autoscaling bounds") {
  const auto& cat = testing::shipped_catalog();
  ServingSizingRequest r;
  r.graph = {"food", {{"classify", *find_reference_served_model("resnet-50"), 1.0}}};
  r.arrivals.kind = ArrivalSpec::Kind::diurnal;
  r.arrivals.rate = des::Rate(100);
  r.arrivals.hourly.fill(1.0);
  r.arrivals.hourly[3] = 0.2;   // trough 20 requests/s
  r.arrivals.hourly[19] = 8.0;  // peak 800 requests/s
  r.p99_bound = Seconds(0.1);
  r.node_types = {*node_type_by_id(cat, "aws-g4dn-xlarge"), *node_type_by_id(cat, "gcp-a2-highgpu-1g")};
  r.max_batch = {1, 8, 16};
  r.max_queue_delay = {Seconds(0.0), Seconds(0.005)};
  r.verify_top = 2;
  r.verify_run = {Seconds(5), Seconds(30), 1, 20, 1'000'000'000};
  auto s = size_serving(r);
  REQUIRE_MESSAGE(s.ok(), format_diagnostics(s.errors()));
  REQUIRE(s->recommended);
  const auto& best = *s->recommended;
  MESSAGE(s->recommendation << "; nodes " << best.min_nodes << ".." << best.nodes << "; evaluated " << s->evaluated);
  CHECK(best.verified);
  CHECK(best.simulated_latency->p99.mean <= 0.1);
  CHECK(best.k8s.size() == 1);
  CHECK(best.k8s[0].min_replicas <= best.k8s[0].max_replicas);
  CHECK(best.min_nodes <= best.nodes);
  CHECK((best.k8s[0].resource == "nvidia.com/gpu" || best.k8s[0].resource.rfind("nvidia.com/mig-", 0) == 0));
}

TEST_CASE("serving sizing stops enumerating when its observer cancels, and simulates nothing") {
  // The GUI's Esc reaches the sizing through the progress observer: after `allowed` settings
  // the search stops; what it evaluated stays, marked cancelled, and no simulation runs.
  struct CancelAfter : ProgressObserver {
    explicit CancelAfter(int allowed) : left(allowed) {}
    void progress(double, std::string_view) override {}
    bool cancelled() const override { return left-- <= 0; }
    mutable int left;
  };
  const auto& cat = testing::shipped_catalog();
  ServingSizingRequest r;
  r.graph = {"food", {{"classify", *find_reference_served_model("resnet-50"), 1.0}}};
  r.arrivals.rate = des::Rate(100);
  r.p99_bound = Seconds(0.1);
  r.node_types = {*node_type_by_id(cat, "aws-g4dn-xlarge"), *node_type_by_id(cat, "gcp-a2-highgpu-1g")};
  r.max_batch = {1, 8, 16};
  r.max_queue_delay = {Seconds(0.0), Seconds(0.005)};
  const auto whole = size_serving(r);
  REQUIRE(whole.ok());
  CHECK_FALSE(whole->cancelled);

  CancelAfter after_four(4);
  r.progress = &after_four;
  const auto part = size_serving(r);
  REQUIRE_MESSAGE(part.ok(), format_diagnostics(part.errors()));
  CHECK(part->cancelled);
  CHECK(part->evaluated == 4);
  CHECK(part->evaluated < whole->evaluated);
  CHECK(part->verified.empty());
  CHECK_FALSE(part->recommended);
  CHECK(part->recommendation == "the sizing was cancelled: the candidates cover part of the settings, none simulated");

  CancelAfter at_once(0);
  r.progress = &at_once;
  const auto none = size_serving(r);
  REQUIRE_FALSE(none.ok());
  CHECK(none.errors()[0].message == "the sizing was cancelled before any deployment met the bound");
}

TEST_CASE("serving llm sizing meets TTFT and TPOT bounds") {
  auto r = llm_sizing("llama-2-7b", {512, 128}, 20, {1.0, 0.05}, {"lambda-1x-h100-sxm", "aws-g5-xlarge"}, 2, 120);
  r.trough_rate = 2;
  auto s = size_llm_serving(r);
  REQUIRE_MESSAGE(s.ok(), format_diagnostics(s.errors()));
  REQUIRE(s->recommended);
  MESSAGE(s->recommendation);
  CHECK(s->recommended->simulation->tpot.p99.mean <= 0.05);
  CHECK(s->recommended->k8s.resource == "nvidia.com/gpu");
  CHECK(s->recommended->min_replicas <= s->recommended->replicas);
}

TEST_CASE("serving llm sizing leaves no paid GPU idle: replicas fill the nodes they occupy") {
  // Llama-2-7B on 8-GPU H100 nodes at a rate a few TP=1 replicas serve: a whole node is
  // paid, so every candidate runs 8 / TP replicas per node, and says how many the peak needs.
  auto r = llm_sizing("llama-2-7b", {512, 128}, 30, {1.0, 0.05}, {"lambda-8x-h100-sxm"}, 1, 60);
  r.trough_rate = 2;
  auto s = size_llm_serving(r);
  REQUIRE_MESSAGE(s.ok(), format_diagnostics(s.errors()));
  REQUIRE_FALSE(s->candidates.empty());
  for (const auto& d : s->candidates) {
    MESSAGE(d.summary);
    CHECK(d.gpus == d.nodes * 8);
    CHECK(d.replicas * d.spec.tensor_parallel == d.gpus);
    CHECK(d.k8s.max_replicas == d.replicas);
    CHECK(d.min_replicas <= d.replicas);
  }
  // TP=1 needs fewer than 8 replicas at this rate: the summary says the rest fill the node.
  bool said = false;
  for (const auto& d : s->candidates)
    if (d.spec.tensor_parallel == 1) said = d.summary.find("needed at peak, the rest fill the paid GPUs") != std::string::npos;
  CHECK(said);
}

TEST_CASE("serving llm sizing spans nodes with pipeline stages where one node cannot hold the model") {
  // Llama 3.1 405B in BF16 (812 GB) on 8 x H100 nodes (640 GB): TP 8 over each node and the
  // fewest stages across nodes that hold it, each replica on whole nodes, a pod per node.
  const auto r = llm_sizing("llama-3.1-405b", {1024, 256}, 1, {5.0, 0.2}, {"aws-p5-48xlarge"}, 1, 120);
  auto s = size_llm_serving(r);
  REQUIRE_MESSAGE(s.ok(), format_diagnostics(s.errors()));
  REQUIRE(s->recommended);
  const auto& d = *s->recommended;
  MESSAGE(d.summary);
  CHECK(d.spec.tensor_parallel == 8);
  CHECK(d.spec.pipeline_parallel == 2);
  CHECK(d.nodes == 2 * d.replicas);
  CHECK(d.gpus == 16 * d.replicas);
  CHECK(d.k8s.count == 8);
  CHECK(d.summary.find("TP=8 PP=2 (stages on 2 nodes)") != std::string::npos);
  // TP 8 alone was tried first, and said why not.
  bool said = false;
  for (const auto& [what, why] : s->skipped)
    if (what == "aws-p5-48xlarge TP=8") said = why.find("does not fit") != std::string::npos;
  CHECK(said);
}
