// Regression tests for the bugs that fuzzing (fuzz/) and the bad-input catalogue found, each
// named after its bug. The crashing inputs are kept here verbatim.
#include <doctest/doctest.h>

#include <string>

#include "capsim/core/units.hpp"
#include "capsim/hardware/calibration.hpp"
#include "capsim/hardware/loader.hpp"
#include "capsim/scenarios/cluster.hpp"
#include "capsim/scenarios/runner.hpp"
#include "capsim/scenarios/scenario.hpp"
#include "support/test_support.hpp"

using namespace capsim;

// fuzz_units crash-1493a85d: "9190 USD/kW" parsed as money per power, but to_string printed
// "9190 (a ..., SI units)", which does not parse: the round trip the header promises failed
// for every dimension outside the named ones.
TEST_CASE("bug: to_string of an unnamed dimension (USD/kW) did not read back") {
  const struct {
    const char* text;
    const char* printed;
  } cases[] = {
      {"9190 USD/kW", "9.19 USD/W"},
      {"3 B/s/s", "3 B/s/s"},
      {"2 Hz/B", "2 Hz/B"},
      {"5 s/Hz", "5 s/Hz"},
      {"1 W/FLOP", "1 W/FLOP"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    auto q = parse_quantity(c.text);
    REQUIRE(q.ok());
    const std::string printed = to_string(*q);
    CHECK(printed == c.printed);
    auto again = parse_quantity(printed);
    REQUIRE(again.ok());
    CHECK(again->dim == q->dim);
    CHECK(again->value_si == doctest::Approx(q->value_si));
  }
}

// fuzz_units crash-f058c4a3: "11111111113115311kW" (1.1e19 W) printed as "11111111 TW", but
// power takes only the k, M and G prefixes, so the text did not read back.
TEST_CASE("bug: to_string of a large power used a prefix (TW) that power does not take") {
  auto q = parse_quantity("11111111113115311kW");
  REQUIRE(q.ok());
  const std::string printed = to_string(*q);
  CHECK(printed == "11111111113 GW");
  auto again = parse_quantity(printed);
  REQUIRE(again.ok());
  CHECK(again->dim == dims::watts);
  CHECK(to_string(ParsedQuantity{3.1e15, Dim{.seconds = -1}, Currency::none}) == "3100 THz");
}

// Bad-input catalogue: every inference scenario with a deployment: but no hardware: failed
// validation with "missing required key 'hardware' for training" at 1:1, because the check
// read Scenario::inference before it was filled in.
TEST_CASE("bug: an inference scenario without hardware: was refused as a training one") {
  const std::string text = R"(name: i
workload:
  type: inference
  precision: fp16
  graph:
    - {name: detector, model: horizontal-text-detection-0001}
arrivals: {kind: poisson, rate: 50}
slo: {p99: 100 ms}
deployment:
  node: aws-g4dn-xlarge
  stages:
    - {replicas: 1, max_batch: 16, max_queue_delay: 2 ms}
)";
  auto s = scenarios::load_scenario("i.yaml", text, testing::shipped_catalog());
  CHECK_MESSAGE(s.ok(), format_diagnostics(s.errors()));
}

// fuzz_scenario crash-9561003875 and crash-c306e0c493: a simulate: section without node: or
// host: read the missing node (yaml-cpp throws InvalidNode, which ended the process). Training simulations now say that
// node and host are required, and a service workload, which has no pipeline, refuses simulate:.
TEST_CASE("bug: simulate: without node: crashed the scenario loader") {
  const std::string training = R"(name: t
workload: {type: training, model: resnet-50, samples: 1M, epochs: 1}
hardware: {gpus: [t4]}
simulate: {duration: 120 s}
)";
  auto t = scenarios::load_scenario("t.yaml", training, testing::shipped_catalog());
  REQUIRE_FALSE(t.ok());
  CHECK(format_diagnostics(t.errors()) ==
        "t.yaml:4:11: error: simulate: missing required key 'node' for a training pipeline simulation "
        "(the instance or server the job runs on, e.g. node: aws-g5-xlarge)\n");

  const std::string no_host = R"(name: t
workload: {type: training, model: resnet-50, samples: 1M, epochs: 1}
hardware: {gpus: [t4]}
simulate: {node: aws-g4dn-xlarge}
)";
  auto h = scenarios::load_scenario("t.yaml", no_host, testing::shipped_catalog());
  REQUIRE_FALSE(h.ok());
  CHECK(format_diagnostics(h.errors()) ==
        "t.yaml:4:11: error: simulate: missing required key 'host' for a training pipeline simulation "
        "(host: {cpu_cores, decode_time, sample_size, storage_bandwidth})\n");

  const std::string service = R"(name: s
workload: {type: service, gpus: 16}
cost:
  options:
    - {name: aws, instance: aws-p4d-24xlarge}
simulate: {duration: 120 s, warmup: 10 s, seed: 1}
)";
  auto s = scenarios::load_scenario("s.yaml", service, testing::shipped_catalog());
  REQUIRE_FALSE(s.ok());
  CHECK(format_diagnostics(s.errors()) ==
        "s.yaml:6:11: error: simulate: a service workload (fixed GPUs, costed) has no pipeline to simulate "
        "(remove simulate:, or describe the workload as training or inference)\n");
}

TEST_CASE("bug: a malformed stream made yaml-cpp's LoadAll loop forever in the scenario loader") {
  // Found by fuzz_scenario (timeout): the loader called YAML::LoadAll to refuse a second
  // document; yaml-cpp 0.7 never returned on this input. The loader now walks at most two
  // documents itself. The input, byte for byte (\003 is a control byte in it):
  const std::string text =
      ",anullme: resnet101-small-gpus\ndescription:>   \n-Train 0 image classifi\003er on ImageNet-1k (1.28M "
      "images, 90 4:\n  ba 11, 128]\ndeadline: 30 ipD\n";
  auto s = scenarios::load_scenario("hang.yaml", text, testing::shipped_catalog());
  CHECK_FALSE(s.ok());
  CHECK_FALSE(s.errors().empty());
}

TEST_CASE("bug: invalid UTF-8 in a scenario's description aborted the JSON writer") {
  // Found by fuzz_pipeline: nlohmann::json::dump throws on invalid UTF-8 and nothing caught
  // it (std::terminate). Every JSON writer now replaces such bytes with U+FFFD.
  std::string text = capsim::testing::read_file(capsim::testing::example_scenario("ml-services-24x7"));
  const auto at = text.find("A mid-size company");
  REQUIRE(at != std::string::npos);
  text.replace(at + 9, 2, "\xdf\x9c\x98");  // a stray continuation byte after a 2-byte sequence
  auto s = scenarios::load_scenario("utf.yaml", text, testing::shipped_catalog());
  REQUIRE_MESSAGE(s.ok(), format_diagnostics(s.errors()));
  auto r = scenarios::run_scenario(*s, testing::shipped_catalog());
  REQUIRE(r.ok());
  const std::string json = scenarios::run_json(*r);
  CHECK(json.find("\xef\xbf\xbd") != std::string::npos);  // U+FFFD in place of the bad byte
}

// fuzz_scenario crash-6e4aa5a7: a mapping key that is itself a list ("? - tpot_p99 < 100 ms")
// threw YAML::TypedBadConversion out of the cluster loader's unknown-key check, killing the
// process instead of reporting bad input.
TEST_CASE("bug: a list used as a key crashed the cluster loader") {
  auto s = scenarios::load_cluster("c.yaml",
                                   "name: x\n"
                                   "expect:\n"
                                   "  - ttft_p99 < 2 s\n"
                                   "? - tpot_p99 < 100 ms\n",
                                   testing::shipped_catalog());
  REQUIRE_FALSE(s.ok());
  bool named = false;
  for (const auto& e : s.errors()) named |= e.message == "expected a key (text), got a list" && e.where.line == 4;
  CHECK(named);
}
