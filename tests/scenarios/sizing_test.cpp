#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "capsim/hardware/loader.hpp"
#include "capsim/scenarios/scenario.hpp"
#include "capsim/scenarios/simulation.hpp"
#include "capsim/scenarios/overrides.hpp"
#include "capsim/scenarios/sizing.hpp"
#include "capsim/scenarios/estimate.hpp"
#include "support/test_support.hpp"

using namespace capsim;
using namespace capsim::scenarios;

namespace {

const hardware::Catalog& catalog() { return testing::shipped_catalog(); }

SizingReport size_example(const std::string& name) {
  auto s = load_scenario_file(testing::example_scenario(name), catalog());
  REQUIRE(s.ok());
  auto r = size_scenario(*s, catalog());
  if (!r.ok()) FAIL(format_diagnostics(r.errors()));
  return std::move(r).value();
}


}  // namespace

// Golden outputs: any change to a prediction shows up here. After an intended change,
// CAPSIM_UPDATE_GOLDEN=1 rewrites them; review the diff.
TEST_CASE("golden sizing results of the shipped training scenarios") {
  for (const char* name : {"llama-70b-pretrain", "gpt3-175b-megatron", "lora-7b-one-node", "resnet101-small-gpus"}) {
    CAPTURE(name);
    auto report = size_example(name);
    auto j = nlohmann::json::parse(sizing_json(report));
    j.erase("wall_seconds");  // the only value that differs between runs
    const std::string actual = j.dump(2) + "\n";
    const auto path = std::filesystem::path(CAPSIM_TEST_SOURCE_DIR) / "scenarios" / "golden" / (std::string(name) + ".json");
    if (std::getenv("CAPSIM_UPDATE_GOLDEN")) std::ofstream(path, std::ios::binary) << actual;
    CHECK(testing::read_file(path) == actual);
  }
}

TEST_CASE("golden simulation results of the shipped data-pipeline scenarios") {
  for (const char* name : {"resnet50-1080ti-4vcpu", "resnet50-1080ti-balanced"}) {
    CAPTURE(name);
    auto s = load_scenario_file(testing::example_scenario(name), catalog());
    REQUIRE(s.ok());
    auto r = simulate_scenario(*s, catalog());
    REQUIRE(r.ok());
    const std::string actual = simulation_json(*r);  // the seed fixes every event
    const auto path = std::filesystem::path(CAPSIM_TEST_SOURCE_DIR) / "scenarios" / "golden" / (std::string(name) + ".sim.json");
    if (std::getenv("CAPSIM_UPDATE_GOLDEN")) std::ofstream(path, std::ios::binary) << actual;
    CHECK(testing::read_file(path) == actual);
  }
}

TEST_CASE("the recommendation meets the deadline and is on or near the frontier") {
  auto r = size_example("llama-70b-pretrain");
  REQUIRE(r.search.recommended.has_value());
  const auto& c = *r.search.recommended;
  CHECK(c.total_time.value() <= r.scenario.deadline->value());
  REQUIRE(c.cost.has_value());
  // No configuration that meets the deadline is more than 1 % cheaper.
  for (const auto& f : r.search.frontier)
    if (f.total_time.value() <= r.scenario.deadline->value()) CHECK(f.cost->value() >= c.cost->value() * 0.99);
  // Frontier: faster means dearer, strictly.
  for (std::size_t i = 1; i < r.search.frontier.size(); ++i) {
    CHECK(r.search.frontier[i].total_time.value() >= r.search.frontier[i - 1].total_time.value());
    CHECK(r.search.frontier[i].cost->value() < r.search.frontier[i - 1].cost->value());
  }
  // Every frontier point fits in its GPU's memory.
  for (const auto& f : r.search.frontier)
    CHECK(f.memory_per_gpu.value() <= r.search.node_types[f.node_type].cluster.gpu.memory.value());
}

TEST_CASE("node count grid: powers of two and one and a half times them") {
  CHECK(models::node_count_grid(1, 20) == std::vector<int>{1, 2, 3, 4, 6, 8, 12, 16});
  CHECK(models::node_count_grid(5, 20) == std::vector<int>{5, 6, 8, 12, 16});
}

TEST_CASE("the SimGrid fabric re-times the recommended all-reduce and agrees with the formula on a non-blocking fabric") {
  // GPT-3 175B on A100 80 GB nodes with the tensor-parallel degree pinned: at t = 8 each
  // node holds one rank of a data-parallel group, and the fabric's ring and the formula's
  // agree; at t = 4 a node holds two, which the formula reduces hierarchically (NVLink,
  // then the two NICs) and the fabric over NCCL-style rings: within 10 % of each other.
  const auto text = testing::read_file(testing::example_scenario("gpt3-175b-megatron"));
  // The third case reduces fp32 gradients with the distributed optimizer: a reduce-scatter of
  // 4-byte gradients and an all-gather of 2-byte parameters, which the fabric times as an
  // all-reduce of their mean size.
  struct Case {
    int tp;
    double tolerance;
    bool fp32;
  };
  for (const auto& [tp, tolerance, fp32] : {Case{8, 0.01, false}, Case{4, 0.10, false}, Case{8, 0.01, true}}) {
    CAPTURE(tp);
    CAPTURE(fp32);
    std::vector<Override> set{*parse_override("search.tensor_parallel=[" + std::to_string(tp) + "]")};
    if (fp32) {
      set.push_back(*parse_override("workload.grad_reduce=fp32"));
      set.push_back(*parse_override("search.zero_stage=[1]"));
    }
    auto yaml = apply_overrides(text, set);
    REQUIRE(yaml.ok());
    auto s = load_scenario("gpt3.yaml", *yaml, catalog());
    REQUIRE_MESSAGE(s.ok(), format_diagnostics(s.errors()));
    auto r = size_scenario(*s, catalog(), nullptr, CollectiveTiming::simgrid);
    if (!r.ok()) FAIL(format_diagnostics(r.errors()));
    REQUIRE(r->fabric.has_value());
    REQUIRE(r->search.recommended);
    CHECK(r->search.recommended->par.tensor == tp);
    CHECK(r->fabric->fabric_all_reduce.value() > 0);
    CHECK(r->fabric->fabric_all_reduce.value() ==
          doctest::Approx(r->fabric->analytic_all_reduce.value()).epsilon(tolerance));
    CHECK(r->fabric->fabric_step.value() == doctest::Approx(r->fabric->analytic_step.value()).epsilon(tolerance));
    CHECK_FALSE(r->fabric->bottleneck_link.empty());
  }
}

// capsim estimate: the step of each shipped training example's layout, term by term.
// Every training example (a scenario without an inference workload whose sizing finds a
// recommendation) has a golden text; a new example without one fails here.
TEST_CASE("golden step estimates of every shipped training example") {
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(CAPSIM_TEST_SOURCE_DIR) /
                                                               ".." / "scenarios" / "examples")) {
    const std::string name = entry.path().stem().string();
    auto s = load_scenario_file(entry.path(), catalog());
    REQUIRE_MESSAGE(s.ok(), format_diagnostics(s.errors()));
    if (s->inference || s->training.tokens + s->training.samples <= 0) continue;
    CAPTURE(name);
    auto e = estimate_scenario(*s, catalog());
    REQUIRE_MESSAGE(e.ok(), format_diagnostics(e.errors()));
    // The parts add up to the step, and nothing is exposed beyond what it costs before overlap.
    double sum = 0;
    for (const auto& p : e->parts) {
      CAPTURE(p.part);
      sum += p.time.value();
      CHECK(p.time.value() <= p.total.value() * (1 + 1e-9) + 1e-12);
    }
    CHECK(sum == doctest::Approx(e->step.step_time.value()).epsilon(1e-9));
    const std::string actual = estimate_text(*e);
    const auto path = std::filesystem::path(CAPSIM_TEST_SOURCE_DIR) / "scenarios" / "golden" / (name + ".estimate.txt");
    if (std::getenv("CAPSIM_UPDATE_GOLDEN")) std::ofstream(path, std::ios::binary) << actual;
    CHECK(testing::read_file(path) == actual);
    ++checked;
  }
  CHECK(checked >= 5);
}

TEST_CASE("capsim estimate refuses a service or serving scenario with the reason, not 'no node types match'") {
  const auto examples = std::filesystem::path(CAPSIM_TEST_SOURCE_DIR) / ".." / "scenarios" / "examples";
  auto service = load_scenario_file(examples / "ml-services-24x7.yaml", catalog());
  REQUIRE(service.ok());
  auto e = estimate_scenario(*service, catalog());
  REQUIRE_FALSE(e.ok());
  CHECK(e.errors()[0].key_path == "workload.type");
  CHECK(e.errors()[0].message ==
        "capsim estimate takes a training scenario; a service states its GPUs and has no step to break down");
  CHECK(e.errors()[0].hint == "capsim cost for what it costs");
  auto serving = load_scenario_file(examples / "road-sign-ocr.yaml", catalog());
  REQUIRE(serving.ok());
  auto s = estimate_scenario(*serving, catalog());
  REQUIRE_FALSE(s.ok());
  CHECK(s.errors()[0].message == "capsim estimate takes a training scenario");
}

// Issue 46: a training scenario pins its node types with hardware.nodes (instances or
// servers, one or several), and estimate reads the step on the plan's node. Before, an
// owned server with a candidate GPU always competed and estimate read the sizing's cheapest
// node, whichever the plan chose.
TEST_CASE("hardware.nodes pins the node types, and estimate steps on the plan's node") {
  const auto& catalog = testing::shipped_catalog();
  auto load = [&](const std::string& nodes) {
    auto s = load_scenario("pin.yaml",
                           "name: pin\nworkload: {type: training, model: llama-2-13b, tokens: 100B, global_batch: 1024}\n"
                           "hardware: {nodes: " + nodes + ", max_gpus: 64}\n",
                           catalog);
    REQUIRE_MESSAGE(s.ok(), format_diagnostics(s.errors()));
    return *s;
  };
  SUBCASE("one server: only it, and the GPU comes from it") {
    const Scenario s = load("[dgx-a100]");
    CHECK(s.hardware.gpus == std::vector<std::string>{"a100-sxm-40gb"});
    auto e = estimate_scenario(s, catalog);
    REQUIRE(e.ok());
    CHECK(e->node_type == "dgx-a100");
    auto sized = size_scenario(s, catalog);
    REQUIRE(sized.ok());
    REQUIRE(sized->search.node_types.size() == 1);
    CHECK(sized->search.node_types[0].id == "dgx-a100");
  }
  SUBCASE("several: those and no other") {
    auto sized = size_scenario(load("[dgx-a100, aws-p4d-24xlarge]"), catalog);
    REQUIRE(sized.ok());
    std::vector<std::string> ids;
    for (const auto& t : sized->search.node_types) ids.push_back(t.id);
    std::sort(ids.begin(), ids.end());
    CHECK(ids == std::vector<std::string>{"aws-p4d-24xlarge", "dgx-a100"});
  }
  SUBCASE("a pinned node whose GPU hardware.gpus leaves out is refused at its entry") {
    auto s = load_scenario("pin.yaml",
                           "name: pin\nworkload: {type: training, model: llama-2-13b, tokens: 100B}\n"
                           "hardware: {gpus: [h100-sxm-80gb], nodes: [dgx-a10, aws-p4d-24xlarge]}\n",
                           catalog);
    REQUIRE_FALSE(s.ok());
    REQUIRE(s.errors().size() == 2);
    CHECK(format_diagnostic(s.errors()[0]) ==
          "pin.yaml:3:43: error: hardware.nodes[0]: no instance or server with id 'dgx-a10' (did you mean 'dgx-a100'?)");
    CHECK(s.errors()[1].message == "'aws-p4d-24xlarge' carries a100-sxm-40gb, not one of hardware.gpus");
  }
}

// Issue 46: a cluster built with other NICs than the catalog's node states them
// (hardware.scale_out), and a stack that checkpoints every other layer states it
// (search.recompute_fraction): keys a user has, which the accuracy rows use too.
TEST_CASE("hardware.scale_out replaces the nodes' NICs, and search.recompute_fraction recomputes part of the layers") {
  const auto& catalog = testing::shipped_catalog();
  auto load = [&](const std::string& hardware, const std::string& search = "{recompute: [full], zero_stage: [3]}") {
    return load_scenario("nics.yaml",
                         "name: nics\nworkload: {type: training, model: llama-2-13b, tokens: 100B, global_batch: 512}\n"
                         "hardware: " + hardware + "\nsearch: " + search + "\n",
                         catalog);
  };
  auto sized = [&](const std::string& hardware, const std::string& search = "{recompute: [full], zero_stage: [3]}") {
    auto s = load(hardware, search);
    REQUIRE_MESSAGE(s.ok(), format_diagnostics(s.errors()));
    auto r = size_scenario(*s, catalog);
    REQUIRE_MESSAGE(r.ok(), format_diagnostics(r.errors()));
    return std::move(r).value();
  };
  SUBCASE("half the NICs: half the bandwidth per GPU, and a slower sharded step") {
    const auto catalog_nics = sized("{nodes: [dgx-h100], min_gpus: 32, max_gpus: 32}");
    const auto four = sized("{nodes: [dgx-h100], scale_out: \"4 x ib-ndr-400\", min_gpus: 32, max_gpus: 32}");
    const auto& a = catalog_nics.search.node_types[0].cluster;
    const auto& b = four.search.node_types[0].cluster;
    CHECK(b.inter_node_bandwidth.value() == doctest::Approx(a.inter_node_bandwidth.value() / 2));
    CHECK(b.description.find("scale-out 4 x ib-ndr-400") != std::string::npos);
    CHECK(four.search.recommended->step_time.value() > catalog_nics.search.recommended->step_time.value());
  }
  SUBCASE("a network the catalog lacks, or text that is not 'N x id', is refused at the key") {
    auto unknown = load("{nodes: [dgx-h100], scale_out: \"8 x roce-40g\"}");
    REQUIRE_FALSE(unknown.ok());
    CHECK(format_diagnostic(unknown.errors()[0]) ==
          "nics.yaml:3:42: error: hardware.scale_out: no network with id 'roce-40g' (did you mean 'roce-400g'?)");
    auto malformed = load("{nodes: [dgx-h100], scale_out: eight}");
    REQUIRE_FALSE(malformed.ok());
    CHECK(malformed.errors()[0].key_path == "hardware.scale_out");
    CHECK(malformed.errors()[0].message == "expected 'N x network-id', got 'eight'");
  }
  SUBCASE("checkpointing half the layers recomputes less than all of them") {
    const std::string hw = "{nodes: [dgx-h100], min_gpus: 8, max_gpus: 8}";
    const auto all = sized(hw, "{recompute: [full], zero_stage: [3], micro_batch: [1], tensor_parallel: [1], pipeline_parallel: [1]}");
    const auto half = sized(hw, "{recompute: [full], recompute_fraction: [0.5], zero_stage: [3], micro_batch: [1], "
                                "tensor_parallel: [1], pipeline_parallel: [1]}");
    CHECK(half.search.recommended->par.recompute_fraction == 0.5);
    CHECK(models::describe_layout(half.search.recommended->par).find("recompute=full(0.5)") != std::string::npos);
    CHECK(half.search.recommended->step_time.value() < all.search.recommended->step_time.value());
    auto zero = load(hw, "{recompute: [full], recompute_fraction: [0]}");
    REQUIRE_FALSE(zero.ok());
    CHECK(zero.errors()[0].key_path.find("search.recompute_fraction") == 0);
  }
}
