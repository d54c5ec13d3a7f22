// The node pools of an inference sizing request the vendor's accelerator resource, as the
// exports of the same plan do (issue 53: `capsim size --format json` of an MI300X serving
// scenario said nvidia.com/gpu while `capsim export k8s` requests amd.com/gpu).
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "capsim/scenarios/runner.hpp"
#include "capsim/scenarios/serving_report.hpp"
#include "support/test_support.hpp"

using namespace capsim;
using namespace capsim::scenarios;

TEST_CASE("issue 53: an MI300X serving sizing's node pool requests amd.com/gpu, in JSON and text") {
  const auto dir = testing::scratch_dir("serving-pools");
  const auto file = dir / "amd-serve.yaml";
  std::ofstream(file) << "name: amd-serve\n"
                         "workload: {type: llm-serving, model: llama-2-70b, precision: bf16, prompt_tokens: 1024, "
                         "output_tokens: 256}\n"
                         "arrivals: {kind: poisson, rate: 3}\n"
                         "slo: {ttft_p99: 2 s, tpot_p99: 100 ms}\n"
                         "hardware: {gpus: [mi300x]}\n";
  auto scenario = load_scenario_file(file, testing::shipped_catalog());
  REQUIRE_MESSAGE(scenario.ok(), format_diagnostics(scenario.errors()));
  auto plan = make_plan(*scenario, testing::shipped_catalog());
  REQUIRE_MESSAGE(plan.ok(), format_diagnostics(plan.errors()));
  REQUIRE(plan->serving_sizing);
  const auto j = nlohmann::json::parse(serving_sizing_json(*plan->serving_sizing));
  REQUIRE(j["node_pools"].size() == 1);
  CHECK(j["node_pools"][0]["resource"] == "amd.com/gpu");
  const std::string text = serving_sizing_text(*plan->serving_sizing);
  CHECK(text.find("amd.com/gpu: ") != std::string::npos);
  CHECK(text.find("nvidia.com/gpu") == std::string::npos);
}
