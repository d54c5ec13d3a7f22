#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "capsim/hardware/loader.hpp"
#include "capsim/scenarios/scenario.hpp"
#include "capsim/scenarios/schema.hpp"
#include "capsim/scenarios/sizing.hpp"
#include "support/test_support.hpp"

using namespace capsim;
using namespace capsim::scenarios;

namespace {

const hardware::Catalog& catalog() { return testing::shipped_catalog(); }
using testing::read_file;

const char* kValid = R"(name: t
workload:
  type: training
  model: llama-2-7b
  tokens: 1B
hardware:
  gpus: [a100-sxm-80gb]
)";

std::string errors_of(const std::string& yaml) {
  auto s = load_scenario("s.yaml", yaml, catalog());
  return s.ok() ? std::string("(valid)") : format_diagnostics(s.errors());
}

}  // namespace

TEST_CASE("a minimal scenario loads with its defaults") {
  auto s = load_scenario("s.yaml", kValid, catalog());
  REQUIRE(s.ok());
  CHECK(s->name == "t");
  CHECK(s->training.tokens == 1e9);
  CHECK(s->training.global_batch == 1024);
  CHECK(s->training.options.compute == models::Precision::bf16);
  CHECK(s->hardware.max_gpus == 4096);
  CHECK(s->commitment == Commitment::on_demand);
  CHECK_FALSE(s->deadline.has_value());
}

// Negative tests pin the exact text users see.
TEST_CASE("scenario errors name the place and suggest a fix") {
  struct Case {
    const char* name;
    std::string yaml;
    std::string expected;
  };
  const Case cases[] = {
      {"typo in a key", std::string(kValid) + "deadlin: 14 d\n",
       "s.yaml:8:1: error: deadlin: unknown key 'deadlin' at the top level (did you mean 'deadline'?)\n"},
      {"typo in a nested key",
       "name: t\nworkload:\n  type: training\n  model: llama-2-7b\n  tokns: 1B\nhardware:\n  gpus: [a100-sxm-80gb]\n",
       "s.yaml:5:3: error: workload.tokns: unknown key 'tokns' in 'workload' (did you mean 'tokens'?)\n"},
      {"wrong unit", std::string(kValid) + "deadline: 14 GB\n",
       "s.yaml:8:11: error: deadline: expected a duration (e.g. '200 ms' or '14 d'), got a data size (e.g. '80 GB') "
       "('14 GB')\n"},
      {"unknown GPU id", "name: t\nworkload: {type: training, model: llama-2-7b, tokens: 1B}\nhardware:\n  gpus: [h100-sxm]\n",
       "s.yaml:4:10: error: hardware.gpus[0]: unknown gpu 'h100-sxm' (did you mean 'h100-sxm-80gb'?)\n"},
      {"unknown preset", "name: t\nworkload: {type: training, model: lama-2-7b, tokens: 1B}\nhardware: {gpus: [t4]}\n",
       "s.yaml:2:35: error: workload.model: unknown model preset 'lama-2-7b' (did you mean 'llama-2-7b'?)\n"},
      {"missing sections", "name: t\n",
       "s.yaml:1:1: error: missing required key 'workload' (What runs)\n"},
      {"training without hardware", "name: t\nworkload: {type: training, model: llama-2-7b, tokens: 1B}\n",
       "s.yaml:1:1: error: missing required key 'hardware' for training (the GPU types to consider, e.g. hardware: "
       "{gpus: [h100-sxm-80gb]}, or the node types: {nodes: [dgx-h100]})\n"},
      {"out of range and bad choice",
       std::string(kValid) + "search:\n  zero_stage: [4]\npricing: {commitment: reserved}\n",
       "s.yaml:9:16: error: search.zero_stage[0]: must be between 0 and 3, got 4\n"
       "s.yaml:10:23: error: pricing.commitment: expected one of on_demand, spot, reserved_1yr, reserved_3yr, got "
       "'reserved' (did you mean 'reserved_1yr'?)\n"},
      {"tokens for a CNN", "name: t\nworkload: {type: training, model: resnet-50, tokens: 1B}\nhardware: {gpus: [t4]}\n",
       "s.yaml:2:11: error: workload: missing required key 'samples' for 'resnet-50' (e.g. samples: 1.28M)\n"
       "s.yaml:2:54: error: workload.tokens: tokens applies to transformers; give samples\n"},
      {"negative quantity", std::string(kValid) + "deadline: -3 d\n",
       "s.yaml:8:11: error: deadline: must be greater than zero, got '-3 d'\n"},
      {"a typo does not hide a cross-field error", std::string(kValid) + "  max_gpus: 8\n  min_gpus: 16\ndeadlin: 14 d\n",
       "s.yaml:10:1: error: deadlin: unknown key 'deadlin' at the top level (did you mean 'deadline'?)\n"
       "s.yaml:9:13: error: hardware.min_gpus: min_gpus is larger than max_gpus\n"},
      {"a bad value keeps the cross-field errors out (they would blame its default)",
       std::string(kValid) + "  max_gpus: lots\n  min_gpus: 8192\n",
       "s.yaml:8:13: error: hardware.max_gpus: expected a whole number, got 'lots'\n"},
      {"a bad value of a required key skips the cross-field checks",
       "name: t\nworkload: {type: trainin, model: llama-2-7b, tokens: 1B}\nhardware:\n  gpus: [a100-sxm-80gb]\n  max_gpus: 8\n  "
       "min_gpus: 16\n",
       "s.yaml:2:18: error: workload.type: expected one of training, service, inference, llm-serving, got 'trainin' (did "
       "you mean 'training'?)\n"},
      {"a stray key does not hide a cross-field error elsewhere",
       "name: t\nworkload: {type: training, model: llama-2-7b, tokens: 1B, colour: blue}\nhardware:\n  gpus: [a100-sxm-80gb]\n"
       "  max_gpus: 8\n  min_gpus: 16\n",
       "s.yaml:2:59: error: workload.colour: unknown key 'colour' in 'workload'\n"
       "s.yaml:6:13: error: hardware.min_gpus: min_gpus is larger than max_gpus\n"},
      {"not YAML", "name: [\n", "s.yaml:2:1: error: invalid YAML: end of sequence flow not found\n"},
      {"empty file", "", "s.yaml:1:1: error: expected a scenario (a mapping with name:, workload:, hardware:), got nothing\n"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    CHECK(errors_of(c.yaml) == c.expected);
  }
}

TEST_CASE("a model that cannot fit on any candidate is rejected with the closest miss") {
  const std::string yaml = R"(name: too-big
workload: {type: training, model: llama-3.1-405b, tokens: 1T}
hardware: {gpus: [t4], max_gpus: 4}
)";
  auto s = load_scenario("big.yaml", yaml, catalog());
  REQUIRE(s.ok());
  auto r = size_scenario(*s, catalog());
  REQUIRE_FALSE(r.ok());
  const std::string text = format_diagnostics(r.errors());
  CHECK(text.starts_with("big.yaml:2:28: error: workload.model: 'llama-3.1-405b' does not fit in memory on any candidate: "
                         "the closest, 1 x gcp-n1-standard-8-4x-t4 "));  // 4 GPUs: max_gpus holds (not g4dn.metal's 8)
  CHECK(text.find(" (t=") != std::string::npos);
  CHECK(text.find("per GPU of 16 GB (allow more GPUs (hardware.max_gpus), GPUs with more memory, or LoRA/QLoRA)") !=
        std::string::npos);
}

TEST_CASE("a tensor-parallel list that leaves nothing to try says why, not 'check the search lists'") {
  auto error_of = [](const std::string& tensor_parallel, const std::string& model = "llama-2-7b") {
    const std::string yaml = "name: tp\nworkload: {type: training, model: " + model + ", tokens: 1B}\n"
                             "hardware: {gpus: [h100-sxm-80gb], max_gpus: 64}\nsearch:\n  tensor_parallel: " +
                             tensor_parallel + "\n";
    auto s = load_scenario("tp.yaml", yaml, catalog());
    REQUIRE(s.ok());
    auto r = size_scenario(*s, catalog());
    REQUIRE_FALSE(r.ok());
    return format_diagnostics(r.errors());
  };
  CHECK(error_of("[16]") ==
        "tp.yaml:5:3: error: search.tensor_parallel: no degree of [16] divides the GPUs per node of any candidate (8 at "
        "most; tensor parallelism stays within a node) (use degrees that divide the GPUs per node, e.g. "
        "tensor_parallel: [8], and pipeline_parallel to span nodes)\n");
  CHECK(error_of("[16, 3]").starts_with("tp.yaml:5:3: error: search.tensor_parallel: no degree of [16, 3] divides"));
  // 8 divides an 8-GPU node but not a model's 12 heads.
  CHECK(error_of("[8]", "{layers: 2, hidden: 768, heads: 12, vocab: 1000, seq_len: 128}") ==
        "tp.yaml:5:3: error: search.tensor_parallel: no degree of [8] divides the 12 attention heads and 12 key/value "
        "heads of 'custom' (use a degree that divides both)\n");
}

TEST_CASE("errors found after loading are placed at their key, else at the nearest enclosing key the file has") {
  const std::string yaml = "name: p\nworkload:\n  type: training\n  model: llama-2-7b\n  tokens: 1B\n"
                           "hardware: {gpus: [h100-sxm-80gb]}\nsearch:\n  recompute: [full]\n  micro_batch: [1, 2]\n";
  auto s = load_scenario("p.yaml", yaml, catalog());
  REQUIRE(s.ok());
  auto at = [&](Diagnostic d) { return format_diagnostics(placed(*s, {std::move(d)})); };
  CHECK(at({{}, "search.micro_batch", "m", ""}) == "p.yaml:9:3: error: search.micro_batch: m\n");
  CHECK(at({{}, "hardware.gpus", "m", ""}) == "p.yaml:6:12: error: hardware.gpus: m\n");
  // A list entry, then a key the file leaves to its default: the enclosing key.
  CHECK(at({{}, "search.micro_batch[1]", "m", ""}) == "p.yaml:9:20: error: search.micro_batch[1]: m\n");
  CHECK(at({{}, "workload.global_batch", "m", ""}) == "p.yaml:2:1: error: workload.global_batch: m\n");
  CHECK(at({{}, "deadline", "m", ""}) == "p.yaml: error: deadline: m\n");
  // A diagnostic that has its place keeps it; one about another file is left alone.
  CHECK(at({{"p.yaml", 3, 9}, "search.micro_batch", "m", ""}) == "p.yaml:3:9: error: search.micro_batch: m\n");
  CHECK(at({{"other.csv"}, "search.micro_batch", "m", ""}) == "other.csv: error: search.micro_batch: m\n");
}

TEST_CASE("a layout rule that refuses every layout of the grid is named, not 'check the search lists'") {
  auto error_of = [](const std::string& batch, const std::string& gpus, const std::string& search,
                     const std::string& max_gpus = "") {
    const std::string yaml = "name: r\nworkload: {type: training, model: llama-3.1-8b, tokens: 1B, global_batch: " +
                             batch + "}\nhardware: {gpus: [h100-sxm-80gb], min_gpus: " + gpus +
                             ", max_gpus: " + (max_gpus.empty() ? gpus : max_gpus) + "}\nsearch:\n" + search;
    auto s = load_scenario("r.yaml", yaml, catalog());
    REQUIRE(s.ok());
    auto r = size_scenario(*s, catalog());
    REQUIRE_FALSE(r.ok());
    return format_diagnostics(r.errors());
  };
  CHECK(error_of("8", "8", "  virtual_stages: [2]\n  pipeline_parallel: [1]\n") ==
        "r.yaml:5:3: error: search.virtual_stages: virtual stages [2] need pipeline parallelism: p >= 2 stages and p x v "
        "<= the 32 layers (add pipeline_parallel degrees of 2 or more, or allow virtual_stages: [1])\n");
  CHECK(error_of("8", "8", "  expert_parallel: [8]\n") ==
        "r.yaml:5:3: error: search.expert_parallel: expert parallelism [8] needs a mixture-of-experts model; "
        "'llama-3.1-8b' is dense (use expert_parallel: [1])\n");
  // A 32-sequence batch on 64 GPUs has too few sequences for every data-parallel width.
  CHECK(error_of("32", "64", "  tensor_parallel: [1]\n  pipeline_parallel: [1]\n") ==
        "r.yaml:2:61: error: workload.global_batch: a global batch of 32 sequences does not split into micro-batches of "
        "[1, 2, 4, 8] over the data-parallel replicas of any layout (64 at the fewest) (make global_batch a multiple "
        "of micro_batch x d, or take GPUs out of d with pipeline_parallel or context_parallel)\n");
  // One sequence on 8 GPUs: only d = 1 layouts split it, and ZeRO has nothing to shard over.
  CHECK(error_of("1", "8", "  zero_stage: [1, 3]\n") ==
        "r.yaml:5:3: error: search.zero_stage: ZeRO stages [1, 3] shard over the data- and context-parallel ranks, and "
        "every layout has one (d x cp = 1) (allow zero_stage 0, or more GPUs)\n");
  CHECK(error_of("64", "8", "  context_parallel: [2]\n  micro_batch: [1]\n  tensor_parallel: [1]\n"
                             "  pipeline_parallel: [1]\n  zero_stage: [0]\n  fsdp_hybrid: [true]\n") ==
        "r.yaml:10:3: error: search.fsdp_hybrid: hybrid sharding needs ZeRO-3 and more data-parallel replicas than a node "
        "holds, in whole nodes; no layout has them (allow fsdp_hybrid: [false], or zero_stage 3 on more nodes)\n");
  // A context-parallel degree no cluster size of 8 or 16 GPUs divides; a pipeline degree on one node.
  CHECK(error_of("48", "8", "  context_parallel: [3]\n", "16") ==
        "r.yaml:5:3: error: search.context_parallel: no tensor x pipeline x context-parallel split of the search "
        "lists divides the GPUs of a cluster tried: the smallest, t x p x cp = 3, against 8 to 16 GPUs (use degrees "
        "whose product divides the cluster's GPUs, or let hardware.min_gpus/max_gpus reach a multiple of it)\n");
  CHECK(error_of("48", "8", "  pipeline_parallel: [3]\n  tensor_parallel: [1]\n").starts_with(
      "r.yaml:5:3: error: search.pipeline_parallel: no tensor x pipeline x context-parallel split of the search "
      "lists divides the GPUs of a cluster tried: the smallest, t x p x cp = 3, against 8 GPUs ("));
  // 24 GPUs take cp = 3, but an 8,192-token sequence does not split into 6 equal chunks.
  CHECK(error_of("48", "8", "  context_parallel: [3]\n", "24") ==
        "r.yaml:5:3: error: search.context_parallel: no degree of [3] splits the 8192-token sequence into 2 x cp "
        "equal chunks (ring attention balances the causal mask over them) (use degrees whose double divides the "
        "sequence length (workload.seq_len))\n");
  // The first rule that refuses every layout is named alone: no layout reaches the batch split
  // after it, so that rule refused nothing.
  const std::string first_only = error_of("32", "64", "  tensor_parallel: [1]\n  pipeline_parallel: [1]\n"
                                                       "  virtual_stages: [2]\n");
  CHECK(first_only.find("search.virtual_stages: virtual stages [2] need pipeline parallelism") != std::string::npos);
  CHECK(first_only.find("workload.global_batch: a global batch of 32 sequences") == std::string::npos);
}

TEST_CASE("the shipped JSON Schema and reference are what the schema generates") {
  CHECK(read_file(CAPSIM_TEST_SOURCE_DIR "/../docs/scenario.schema.json") == scenario_json_schema());
  CHECK(read_file(CAPSIM_TEST_SOURCE_DIR "/../docs/scenario-reference.md") == scenario_reference_markdown());
}

TEST_CASE("every key of every shipped scenario is in the schema and every example loads") {
  for (const auto& entry : std::filesystem::directory_iterator(CAPSIM_TEST_SOURCE_DIR "/../scenarios/examples")) {
    CAPTURE(entry.path().string());
    auto s = load_scenario_file(entry.path(), catalog());
    if (!s.ok()) FAIL(format_diagnostics(s.errors()));
  }
}

namespace {
// A GPT-3 training scenario with `keys` added to its workload (", key: value, ...").
Result<Scenario> training_with(const std::string& keys) {
  return load_scenario("x.yaml",
                       "name: x\nworkload: {type: training, model: gpt3-175b, tokens: 1B" + keys +
                           "}\nhardware: {gpus: [h100-sxm-80gb]}\n",
                       catalog());
}
}  // namespace

TEST_CASE("the gradient-reduction keys take only their documented values") {
  auto s = training_with(", grad_reduce: bf16, grad_reduce_overlap: sometimes");
  REQUIRE_FALSE(s.ok());
  const std::string text = format_diagnostics(s.errors());
  CHECK(text.find("workload.grad_reduce: expected one of compute, fp32, got 'bf16'") != std::string::npos);
  CHECK(text.find("workload.grad_reduce_overlap:") != std::string::npos);
}

TEST_CASE("fp8_weight_cast takes only its documented values, and reaches the training options") {
  auto s = training_with(", precision: fp8, fp8_weight_cast: sometimes");
  REQUIRE_FALSE(s.ok());
  CHECK(format_diagnostics(s.errors()).find(
            "x.yaml:2:91: error: workload.fp8_weight_cast: expected one of once_per_step, every_microbatch, got "
            "'sometimes'") != std::string::npos);
  auto every = training_with(", precision: fp8, fp8_weight_cast: every_microbatch");
  REQUIRE(every.ok());
  CHECK_FALSE(every->training.options.fp8_weights_cast_once_per_step);
  auto plain = training_with("");
  REQUIRE(plain.ok());
  CHECK(plain->training.options.fp8_weights_cast_once_per_step);
  CHECK(plain->training.options.overlap_p2p);
}

TEST_CASE("fp8_scaling takes only its documented values, and reaches the training options") {
  auto s = training_with(", precision: fp8, fp8_scaling: blockwise");
  REQUIRE_FALSE(s.ok());
  CHECK(format_diagnostics(s.errors()).find(
            "x.yaml:2:87: error: workload.fp8_scaling: expected one of tensorwise, rowwise, got 'blockwise'") !=
        std::string::npos);
  auto rowwise = training_with(", precision: fp8, fp8_scaling: rowwise");
  REQUIRE(rowwise.ok());
  CHECK(rowwise->training.options.fp8_rowwise_scaling);
  auto plain = training_with(", precision: fp8");
  REQUIRE(plain.ok());
  CHECK_FALSE(plain->training.options.fp8_rowwise_scaling);
}

TEST_CASE("tp_comm_overlap_backward is a boolean that reaches the training options") {
  auto bad = training_with(", tp_comm_overlap: true, tp_comm_overlap_backward: half");
  REQUIRE_FALSE(bad.ok());
  CHECK(format_diagnostics(bad.errors()).find(
            "x.yaml:2:107: error: workload.tp_comm_overlap_backward: expected true or false, got 'half'") !=
        std::string::npos);
  auto forward = training_with(", tp_comm_overlap: true, tp_comm_overlap_backward: false");
  REQUIRE(forward.ok());
  CHECK(forward->training.options.tp_comm_overlap);
  CHECK_FALSE(forward->training.options.tp_comm_overlap_backward);
  auto plain = training_with(", tp_comm_overlap: true");
  REQUIRE(plain.ok());
  CHECK(plain->training.options.tp_comm_overlap_backward);
}

TEST_CASE("moe_dispatch takes only its documented values, and reaches the training options") {
  auto bad = training_with(", moe_dispatch: deepep");
  REQUIRE_FALSE(bad.ok());
  CHECK(format_diagnostics(bad.errors()).find(
            "x.yaml:2:72: error: workload.moe_dispatch: expected one of per-expert, per-node, got 'deepep'") !=
        std::string::npos);
  auto per_node = training_with(", moe_dispatch: per-node");
  REQUIRE(per_node.ok());
  CHECK(per_node->training.options.moe_dispatch_per_node);
  auto plain = training_with("");
  REQUIRE(plain.ok());
  CHECK_FALSE(plain->training.options.moe_dispatch_per_node);
}

TEST_CASE("p2p_overlap is a boolean that reaches the training options") {
  auto bad = training_with(", p2p_overlap: maybe");
  REQUIRE_FALSE(bad.ok());
  CHECK(format_diagnostics(bad.errors()).find("workload.p2p_overlap:") != std::string::npos);
  auto off = training_with(", p2p_overlap: false");
  REQUIRE(off.ok());
  CHECK_FALSE(off->training.options.overlap_p2p);
}
