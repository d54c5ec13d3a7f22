// The SimGrid fabric against the closed-form alpha-beta formulas of capsim::models.
// Each expected time is worked out next to its assertion.
#include <doctest/doctest.h>

#include <string>

#include "capsim/fabric/fabric.hpp"
#include "capsim/models/collectives.hpp"

using namespace capsim;
using namespace capsim::fabric;

namespace {

constexpr double kExactTolerance = 0.01;  // uncontended: simulation = formula within 1 %
constexpr double kContendedTolerance = 0.02;

const BytesPerSecond kNic = gigabytes_per_second(25);  // HDR-200-like port
const Seconds kNicLatency = Seconds(5e-6);

// n single-GPU nodes on one leaf switch: a star, every host with its own full-duplex link.
FabricTopology star(int n) {
  FabricTopology t;
  t.nodes = n;
  t.gpus_per_node = 1;
  t.network.nics_per_node = 1;
  t.network.nic_bandwidth = kNic;
  t.network.nic_to_nic_latency = kNicLatency;
  t.network.nodes_per_leaf = n;
  return t;
}

// nodes x 8 GPUs on NVSwitch (900 GB/s, H100-like: fast enough that the NICs limit), 8 NICs
// of 50 GB/s (400 Gb/s).
FabricTopology dgx_cluster(int nodes, int nodes_per_leaf, double oversubscription) {
  FabricTopology t;
  t.nodes = nodes;
  t.gpus_per_node = 8;
  t.intra.gpu_link_bandwidth = gigabytes_per_second(900);
  t.intra.gpu_to_gpu_latency = Seconds(2e-6);
  t.network.nics_per_node = 8;
  t.network.nic_bandwidth = gigabytes_per_second(50);
  t.network.nic_to_nic_latency = Seconds(5e-6);
  t.network.nodes_per_leaf = nodes_per_leaf;
  t.network.oversubscription = oversubscription;
  return t;
}

CollectiveRequest request(Pattern p, Bytes bytes) {
  CollectiveRequest r;
  r.pattern = p;
  r.bytes = bytes;
  return r;
}

double simulate(FabricSimulator& sim, const FabricTopology& t, const CollectiveRequest& r) {
  auto timing = sim.time(t, r);
  REQUIRE_MESSAGE(timing.ok(), format_diagnostics(timing.errors()));
  return timing->total.value();
}

}  // namespace

TEST_CASE("uncontended star matches the alpha-beta formulas within 1 percent") {
  FabricSimulator sim;
  const models::LinkModel link{kNic, kNicLatency};
  struct Case {
    Pattern pattern;
    int n;
    double bytes;
  };
  const Case cases[] = {
      {Pattern::ring_all_reduce, 2, 1e9},  {Pattern::ring_all_reduce, 8, 1e9},
      {Pattern::ring_all_reduce, 16, 1e6}, {Pattern::ring_all_reduce, 5, 64e6},
      {Pattern::all_gather, 8, 256e6},     {Pattern::reduce_scatter, 8, 256e6},
      {Pattern::all_to_all, 8, 256e6},     {Pattern::tree_all_reduce, 16, 1e9},
      {Pattern::point_to_point, 2, 100e6}, {Pattern::point_to_point, 2, 1e3},
  };
  for (const Case& c : cases) {
    CAPTURE(to_string(c.pattern));
    CAPTURE(c.n);
    CAPTURE(c.bytes);
    const Bytes size(c.bytes);
    double expected = 0;
    switch (c.pattern) {
      case Pattern::ring_all_reduce:
        expected = models::ring_all_reduce(size, c.n, link).value();
        break;
      case Pattern::all_gather:
        expected = models::all_gather(size, c.n, link).value();
        break;
      case Pattern::reduce_scatter:
        expected = models::reduce_scatter(size, c.n, link).value();
        break;
      case Pattern::all_to_all:
        expected = models::all_to_all(size, c.n, link).value();
        break;
      case Pattern::tree_all_reduce:
        expected = models::tree_all_reduce(size, c.n, link).value();
        break;
      default:
        expected = models::point_to_point(size, link).value();
        break;
    }
    CollectiveRequest r = request(c.pattern, size);
    r.source = {0, 0};
    r.destination = {c.n - 1, 0};
    const double simulated = simulate(sim, star(c.n), r);
    CAPTURE(simulated);
    CAPTURE(expected);
    CHECK(simulated == doctest::Approx(expected).epsilon(kExactTolerance));
  }
}

TEST_CASE("NVSwitch node ring all-reduce matches the formula") {
  FabricSimulator sim;
  FabricTopology t = dgx_cluster(1, 1, 1);
  t.intra.gpu_link_bandwidth = gigabytes_per_second(300);
  CollectiveRequest r = request(Pattern::ring_all_reduce, gigabytes(1));
  r.group = {GroupKind::one_node, 0};
  const double expected =
      models::ring_all_reduce(gigabytes(1), 8, {gigabytes_per_second(300), Seconds(2e-6)}).value();
  CHECK(simulate(sim, t, r) == doctest::Approx(expected).epsilon(kExactTolerance));
}

TEST_CASE("4 to 1 oversubscribed spine slows the all-reduce to the uplink share") {
  FabricSimulator sim;
  // 4 nodes x 8 GPUs, each node alone on its leaf, so every ring hop between nodes crosses
  // the spine. 8 parallel rings (one per NIC) each send one chunk c = S / (8 rings x 32
  // ranks) per step out of every node. Non-blocking: each chunk has its own 50 GB/s NIC.
  // 4:1: the leaf uplink carries 8 ports x 50 GB/s / 4 = 100 GB/s, shared by the 8 ring
  // flows leaving the node: 12.5 GB/s each, a quarter of the NIC. NVLink (8 c at 900 GB/s =
  // c / 112.5 GB/s) never limits. So
  //   step = 5 us + c / 12.5 GB/s, total = 2 (32 - 1) step
  //        = 2 (n-1)/n S / (8 x 12.5 GB/s) + 2 (n-1) 5 us = ring_all_reduce(S, 32, {100 GB/s, 5
  //        us}).
  const Bytes size = gibibytes(1);  // c = 4 MiB: step = 5 + 335.5 us, total = 21.1 ms
  const double blocking =
      simulate(sim, dgx_cluster(4, 1, 4.0), request(Pattern::ring_all_reduce, size));
  const double expected_blocking =
      models::ring_all_reduce(size, 32, {gigabytes_per_second(100), Seconds(5e-6)}).value();
  CHECK(blocking == doctest::Approx(expected_blocking).epsilon(kContendedTolerance));
  CHECK(blocking == doctest::Approx(0.02111).epsilon(kContendedTolerance));

  // Non-blocking: the 8 NICs give 8 x 50 = 400 GB/s per node.
  const double open =
      simulate(sim, dgx_cluster(4, 1, 1.0), request(Pattern::ring_all_reduce, size));
  const double expected_open =
      models::ring_all_reduce(size, 32, {gigabytes_per_second(400), Seconds(5e-6)}).value();
  CHECK(open == doctest::Approx(expected_open).epsilon(kContendedTolerance));

  auto detail = sim.time(dgx_cluster(4, 1, 4.0), request(Pattern::ring_all_reduce, size));
  REQUIRE(detail.ok());
  CHECK(detail->bottleneck_link.find("-uplink_") != std::string::npos);
  CHECK(detail->bottleneck_share.value() == doctest::Approx(12.5e9));
  CHECK(detail->steps == 62);
  CHECK(detail->flows_per_step == 8 * 32);
}

TEST_CASE("4 to 1 oversubscription slows an all-to-all phase by phase") {
  FabricSimulator sim;
  // 8 single-GPU nodes, 4 per leaf, uplink = 4 x 25 GB/s / 4 = 25 GB/s (one NIC's worth).
  // Phase k sends S/8 from i to i+k; the flows crossing a leaf boundary share its uplink:
  // k = 1..7 put 1, 2, 3, 4, 3, 2, 1 flows on each uplink direction, so phase k takes
  // 5 us + (S/8) x m_k / 25 GB/s and the total is 7 x 5 us + (S/8) x 16 / 25 GB/s
  // = 35 us + 2 S / B, against 35 us + 7/8 S / B without oversubscription.
  FabricTopology t = star(8);
  t.network.nodes_per_leaf = 4;
  t.network.oversubscription = 4.0;
  const double s = 256e6;
  const double expected = 7 * 5e-6 + 2 * s / 25e9;  // 20.515 ms
  CHECK(simulate(sim, t, request(Pattern::all_to_all, Bytes(s))) ==
        doctest::Approx(expected).epsilon(kContendedTolerance));
}

TEST_CASE("rail-optimized layout keeps rings on their rails") {
  FabricSimulator sim;
  // All 4 nodes on the rail leaves, oversubscribed 4:1: the alternating ring order enters
  // and leaves every node through the same NIC index, so no ring flow crosses the spine and
  // the time is the non-blocking one, 8 NICs x 50 GB/s per node.
  FabricTopology t = dgx_cluster(4, 4, 4.0);
  t.network.layout = NetworkLayout::rail_optimized;
  const Bytes size = gibibytes(1);
  const double expected =
      models::ring_all_reduce(size, 32, {gigabytes_per_second(400), Seconds(5e-6)}).value();
  CHECK(simulate(sim, t, request(Pattern::ring_all_reduce, size)) ==
        doctest::Approx(expected).epsilon(kContendedTolerance));
}

TEST_CASE("background traffic takes its share") {
  FabricSimulator sim;
  const double s = 100e6;
  CollectiveRequest r = request(Pattern::point_to_point, Bytes(s));
  r.source = {0, 0};
  r.destination = {1, 0};
  const double alone = 5e-6 + s / 25e9;     // 4.005 ms
  const double halved = 5e-6 + s / 12.5e9;  // 8.005 ms

  SUBCASE("a reserved fraction of every network link") {
    r.background.network_load_fraction = 0.5;
    CHECK(simulate(sim, star(4), r) == doctest::Approx(halved).epsilon(kExactTolerance));
  }
  SUBCASE("a competing flow on the same receiving port gets an equal share") {
    r.background.flows.push_back({2, 0, 1, 0});
    CHECK(simulate(sim, star(4), r) == doctest::Approx(halved).epsilon(kExactTolerance));
  }
  SUBCASE("a flow the other way does not compete on full-duplex links") {
    r.background.flows.push_back({1, 0, 0, 0});
    CHECK(simulate(sim, star(4), r) == doctest::Approx(alone).epsilon(kExactTolerance));
  }
}

TEST_CASE("PCIe tree GPUs share the bridge uplink, NVSwitch GPUs do not") {
  FabricSimulator sim;
  FabricTopology t;
  t.nodes = 1;
  t.gpus_per_node = 8;
  t.network.nics_per_node = 0;
  t.intra.kind = IntraNodeKind::pcie_tree;
  t.intra.gpus_per_bridge = 4;
  t.intra.gpu_link_bandwidth = gigabytes_per_second(32);
  t.intra.bridge_uplink_bandwidth = gigabytes_per_second(32);
  t.intra.gpu_to_gpu_latency = Seconds(1e-6);
  const double s = 64e6;
  CollectiveRequest r = request(Pattern::point_to_point, Bytes(s));
  r.source = {0, 0};
  r.destination = {0, 4};  // the other bridge
  r.background.flows.push_back({0, 1, 0, 5});
  // Both flows cross bridge 0's uplink: 16 GB/s each. 1 us + 64 MB / 16 GB/s = 4.001 ms.
  CHECK(simulate(sim, t, r) == doctest::Approx(1e-6 + s / 16e9).epsilon(kExactTolerance));
  auto detail = sim.time(t, r);
  REQUIRE(detail.ok());
  CHECK(detail->bottleneck_link == "n0-b0-uplink_UP");

  t.intra.kind = IntraNodeKind::nvswitch;
  CHECK(simulate(sim, t, r) == doctest::Approx(1e-6 + s / 32e9).epsilon(kExactTolerance));
}

TEST_CASE("1024 and 16384 GPU all-reduces match the formula") {
  // Correctness only; the wall time is measured by capsim_fabric_bench (BM_AllReduce).
  // Non-blocking fat-tree, 16 nodes per leaf: 8 rings, one per NIC, each ring's step sends
  // c = S / (8 n) per NIC at 50 GB/s: ring_all_reduce(S, n, {8 x 50 GB/s, 5 us}).
  FabricSimulator sim;
  const Bytes size = gigabytes(1);
  for (const int gpus : {1024, 16384}) {
    CAPTURE(gpus);
    const double expected =
        models::ring_all_reduce(size, gpus, {gigabytes_per_second(400), Seconds(5e-6)}).value();
    CHECK(simulate(sim, dgx_cluster(gpus / 8, 16, 1.0), request(Pattern::ring_all_reduce, size)) ==
          doctest::Approx(expected).epsilon(kExactTolerance));
  }
}

TEST_CASE("a cache hit returns the same timing without forking") {
  FabricSimulator sim;
  const FabricTopology t = dgx_cluster(4, 2, 2.0);
  const CollectiveRequest r = request(Pattern::tree_all_reduce, gigabytes(1));
  auto first = sim.time(t, r);
  REQUIRE(first.ok());
  CHECK(sim.simulations_run() == 1);
  CHECK(sim.cache_hits() == 0);
  auto second = sim.time(t, r);
  REQUIRE(second.ok());
  CHECK(sim.simulations_run() == 1);
  CHECK(sim.cache_hits() == 1);
  CHECK(second->total == first->total);
  CHECK(second->bottleneck_link == first->bottleneck_link);

  CollectiveRequest bigger = r;
  bigger.bytes = gigabytes(2);
  REQUIRE(sim.time(t, bigger).ok());
  CHECK(sim.simulations_run() == 2);
  sim.clear_cache();
  REQUIRE(sim.time(t, r).ok());
  CHECK(sim.simulations_run() == 3);
}

TEST_CASE("time collective uses the process-wide simulator") {
  auto total = time_collective(star(4), request(Pattern::ring_all_reduce, gigabytes(1)));
  REQUIRE(total.ok());
  const double expected = models::ring_all_reduce(gigabytes(1), 4, {kNic, kNicLatency}).value();
  CHECK(total->value() == doctest::Approx(expected).epsilon(kExactTolerance));
}

TEST_CASE("a single rank communicates nothing and forks nothing") {
  FabricSimulator sim;
  CollectiveRequest r = request(Pattern::ring_all_reduce, gigabytes(1));
  r.group = {GroupKind::one_per_node, 0};
  auto timing = sim.time(star(1), r);
  REQUIRE(timing.ok());
  CHECK(timing->total.value() == 0);
  CHECK(sim.simulations_run() == 0);
}

TEST_CASE("a simulation past its time limit is killed and reported") {
  FabricSimulator sim(SimulatorOptions{Seconds(1e-3)});
  auto timing =
      sim.time(dgx_cluster(512, 16, 1.0), request(Pattern::ring_all_reduce, gigabytes(1)));
  REQUIRE_FALSE(timing.ok());
  CHECK(format_diagnostics(timing.errors()).find("did not finish within") != std::string::npos);
  // The failure is not cached: a later query with a longer limit would simulate again.
  CHECK(sim.cache_hits() == 0);
}
