// Bad input to the fabric gives clear errors (key path + message), never a crash.
#include <doctest/doctest.h>

#include <string>

#include "capsim/fabric/fabric.hpp"

using namespace capsim;
using namespace capsim::fabric;

namespace {

FabricTopology two_nodes() {
  FabricTopology t;
  t.nodes = 2;
  t.gpus_per_node = 8;
  t.network.nics_per_node = 8;
  return t;
}

CollectiveRequest all_reduce() {
  CollectiveRequest r;
  r.bytes = gigabytes(1);
  return r;
}

// All diagnostics as one text, for "contains" checks that print the whole list on failure.
std::string errors_of(const FabricTopology& t, const CollectiveRequest& r) {
  FabricSimulator sim;
  auto timing = sim.time(t, r);
  REQUIRE_FALSE(timing.ok());
  CHECK(sim.simulations_run() == 0);
  return format_diagnostics(timing.errors());
}

}  // namespace

TEST_CASE("a valid topology has no diagnostics") {
  CHECK(validate(two_nodes()).empty());
  CHECK(validate(all_reduce(), two_nodes()).empty());
  CHECK(two_nodes().leaf_count() == 1);
  FabricTopology rails = two_nodes();
  rails.network.layout = NetworkLayout::rail_optimized;
  CHECK(rails.leaf_count() == 8);
}

TEST_CASE("bad topologies are rejected with the key path") {
  struct Case {
    const char* name;
    void (*mutate)(FabricTopology&);
    const char* expected;
  };
  const Case cases[] = {
      {"zero nodes", [](FabricTopology& t) { t.nodes = 0; }, "error: nodes: must be >= 1, got 0"},
      {"zero GPUs", [](FabricTopology& t) { t.gpus_per_node = 0; },
       "error: gpus_per_node: must be >= 1, got 0"},
      {"zero NIC bandwidth", [](FabricTopology& t) { t.network.nic_bandwidth = BytesPerSecond(0); },
       "error: network.nic_bandwidth: must be a finite bandwidth > 0, got 0 B/s"},
      {"zero GPU link bandwidth",
       [](FabricTopology& t) { t.intra.gpu_link_bandwidth = BytesPerSecond(0); },
       "error: intra.gpu_link_bandwidth: must be a finite bandwidth > 0, got 0 B/s"},
      {"no NIC on a multi-node cluster", [](FabricTopology& t) { t.network.nics_per_node = 0; },
       "error: network.nics_per_node: must be >= 1 when there is more than one node, got 0"},
      {"more NICs than GPUs", [](FabricTopology& t) { t.network.nics_per_node = 16; },
       "a GPU with several NICs is not modelled"},
      {"oversubscription below one", [](FabricTopology& t) { t.network.oversubscription = 0.5; },
       "error: network.oversubscription: must be a finite ratio >= 1"},
      {"negative latency", [](FabricTopology& t) { t.network.nic_to_nic_latency = Seconds(-1); },
       "error: network.nic_to_nic_latency: must be a finite latency >= 0"},
      {"zero bridge uplink",
       [](FabricTopology& t) {
         t.intra.kind = IntraNodeKind::pcie_tree;
         t.intra.bridge_uplink_bandwidth = BytesPerSecond(0);
       },
       "error: intra.bridge_uplink_bandwidth"},
      {"unknown intra kind",
       [](FabricTopology& t) { t.intra.kind = static_cast<IntraNodeKind>(7); },
       "error: intra.kind: unknown intra-node fabric"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    FabricTopology t = two_nodes();
    c.mutate(t);
    const std::string text = errors_of(t, all_reduce());
    CAPTURE(text);
    CHECK(text.find(c.expected) != std::string::npos);
  }
}

TEST_CASE("every problem is reported at once") {
  FabricTopology t = two_nodes();
  t.network.nic_bandwidth = BytesPerSecond(0);
  t.intra.gpu_link_bandwidth = BytesPerSecond(-5);
  CHECK(validate(t).size() == 2);
}

TEST_CASE("bad requests are rejected with the key path") {
  struct Case {
    const char* name;
    void (*mutate)(CollectiveRequest&);
    const char* expected;
  };
  const Case cases[] = {
      {"unknown pattern value", [](CollectiveRequest& r) { r.pattern = static_cast<Pattern>(99); },
       "error: request.pattern: unknown collective pattern 99"},
      {"negative size", [](CollectiveRequest& r) { r.bytes = Bytes(-1); },
       "error: request.bytes: must be a finite size >= 0, got -1"},
      {"group GPU out of range",
       [](CollectiveRequest& r) {
         r.group = {GroupKind::one_per_node, 8};
       },
       "error: request.group.index: GPU index 8 outside 0..7"},
      {"group node out of range",
       [](CollectiveRequest& r) {
         r.group = {GroupKind::one_node, -1};
       },
       "error: request.group.index: node index -1 outside 0..1"},
      {"point-to-point to itself",
       [](CollectiveRequest& r) {
         r.pattern = Pattern::point_to_point;
         r.source = r.destination = {1, 3};
       },
       "error: request.destination: same GPU as the source"},
      {"point-to-point outside",
       [](CollectiveRequest& r) {
         r.pattern = Pattern::point_to_point;
         r.destination = {2, 0};
       },
       "error: request.destination: GPU (node 2, gpu 0) outside the topology (2 nodes x 8 GPUs)"},
      {"too many rings", [](CollectiveRequest& r) { r.rings = 65; },
       "error: request.rings: must be in 0..64"},
      {"background fraction of one",
       [](CollectiveRequest& r) { r.background.network_load_fraction = 1.0; },
       "error: request.background.network_load_fraction: must be in [0, 1), got 1"},
      {"background flow outside",
       [](CollectiveRequest& r) {
         r.background.flows.push_back({0, 0, 5, 0});
       },
       "error: request.background.flows[0]: endpoint outside the topology"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CollectiveRequest r = all_reduce();
    c.mutate(r);
    const std::string text = errors_of(two_nodes(), r);
    CAPTURE(text);
    CHECK(text.find(c.expected) != std::string::npos);
  }
}

TEST_CASE("pattern names round-trip and a typo gets a suggestion") {
  for (const Pattern p : {Pattern::ring_all_reduce, Pattern::tree_all_reduce, Pattern::all_gather,
                          Pattern::reduce_scatter, Pattern::all_to_all, Pattern::point_to_point,
                          Pattern::pipeline_send}) {
    auto parsed = parse_pattern(to_string(p));
    REQUIRE(parsed.ok());
    CHECK(*parsed == p);
  }
  auto typo = parse_pattern("ring_allreduce");
  REQUIRE_FALSE(typo.ok());
  CHECK(format_diagnostic(typo.errors().front()) ==
        "error: pattern: unknown collective pattern 'ring_allreduce' (did you mean "
        "'ring_all_reduce'?)");
  auto nonsense = parse_pattern("broadcast");
  REQUIRE_FALSE(nonsense.ok());
  CHECK(nonsense.errors().front().hint.find("one of: ring_all_reduce") == 0);
}
