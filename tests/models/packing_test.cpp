#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>

#include "capsim/models/packing.hpp"
#include "support/test_support.hpp"

using namespace capsim;
using namespace capsim::models;

namespace {

hardware::GpuSpec gpu(const char* id) { return testing::shipped_catalog().gpu(id).value(); }

PoolNodeType node_type(const char* id, const char* gpu_id, int gpus, double price_per_hour, double cpu = 96, double reserve_cpu = 0) {
  PoolNodeType t;
  t.id = id;
  t.gpu = gpu(gpu_id);
  t.gpus_per_node = gpus;
  t.cpu_cores = cpu;
  t.memory = Bytes(1000e9);
  t.reserve = {reserve_cpu, Bytes(0.0)};
  t.price_per_node = usd_per_hour(price_per_hour);
  return t;
}

PackingWorkload training(const char* name, int gpus, WeekHours when, bool borrow = false) {
  PackingWorkload w;
  w.name = name;
  w.is_training = true;
  w.training.gpus = gpus;
  w.training.gpu_memory_per_gpu = Bytes(60e9);
  w.training.may_borrow_serving = borrow;
  w.active = when;
  return w;
}

PackingWorkload service(const char* name, int replicas, GpuRequest g, WeekHours when, Spread spread = Spread::none) {
  PackingWorkload w;
  w.name = name;
  w.service.replicas = replicas;
  w.service.gpu = std::move(g);
  w.service.spread = spread;
  w.active = when;
  return w;
}

GpuRequest whole(double gb = 20) { return {SharingMode::exclusive, 1, "", 0, Bytes(gb * 1e9)}; }
GpuRequest mig(const char* profile, double gb) { return {SharingMode::mig, 1, profile, 0, Bytes(gb * 1e9)}; }
GpuRequest sliced(double fraction, double gb) { return {SharingMode::time_slicing, 1, "", fraction, Bytes(gb * 1e9)}; }

WeekHours nights_and_weekends() { return WeekHours{~WeekHours::business_days().hours}; }

double usd_of(Money m) { return m.value(); }

PackingPlan solved(const Result<PackingPlan>& r) {
  REQUIRE_MESSAGE(r.ok(), format_diagnostics(r.errors()));
  return *r;
}

// An independent check of a plan against the problem: every pod of every workload placed
// once, every hour's CPU, memory, GPU fraction and GPU memory within the node's, nodes up
// whenever their pods run, and the week's cost the sum of the nodes' up hours x price.
void check_plan(const PackingProblem& p, const PackingPlan& plan) {
  std::map<std::string, const PackingWorkload*> by_name;
  for (const auto& w : p.workloads) by_name[w.name] = &w;
  std::map<std::string, const PoolNodeType*> types;
  for (const auto& t : p.node_types) types[t.id] = &t;
  std::map<std::string, int> gpus_placed;
  double cost = 0;
  for (const auto& n : plan.nodes) {
    const PoolNodeType& t = *types.at(n.node_type);
    cost += n.up.count() * t.price_per_node.value() * 3600;
    for (int h = 0; h < kHoursPerWeek; ++h) {
      double cpu = 0;
      std::vector<double> fraction(static_cast<std::size_t>(t.gpus_per_node), 0.0), memory(fraction);
      for (const auto& pod : n.pods) {
        const auto& w = *by_name.at(pod.workload);
        if (!pod.active.hours.test(static_cast<std::size_t>(h))) continue;
        CHECK(n.up.hours.test(static_cast<std::size_t>(h)));
        const auto gpus = static_cast<double>(pod.gpus.size());
        cpu += w.is_training ? w.training.cpu_per_gpu * gpus : w.service.cpu_per_replica;
        for (int g : pod.gpus) {
          const bool is_mig = !w.is_training && w.service.gpu.mode == SharingMode::mig;
          if (is_mig) continue;  // checked by the MIG layout below
          const bool shared = !w.is_training && w.service.gpu.mode != SharingMode::exclusive;
          fraction[static_cast<std::size_t>(g)] += shared ? w.service.gpu.fraction : 1.0;
          memory[static_cast<std::size_t>(g)] += w.is_training ? w.training.gpu_memory_per_gpu.value() : w.service.gpu.memory.value();
        }
      }
      CHECK(cpu <= t.allocatable_cpu() + 1e-9);
      for (std::size_t g = 0; g < fraction.size(); ++g) {
        CHECK(fraction[g] <= 1 + 1e-9);
        CHECK(memory[g] <= t.gpu.memory.value() * (1 + 1e-9));
      }
    }
    for (const auto& pod : n.pods) {
      const auto& w = *by_name.at(pod.workload);
      gpus_placed[pod.workload] += static_cast<int>(pod.gpus.size());
      if (!w.is_training && w.service.spread == Spread::node)
        CHECK(std::count_if(n.pods.begin(), n.pods.end(), [&](const PlacedPod& q) { return q.workload == pod.workload; }) == 1);
    }
    for (const auto& g : n.gpus) {
      int slices = 0;
      for (const auto& m : g.mig) slices += m.slices;
      CHECK(slices <= 7);
    }
  }
  for (const auto& w : p.workloads) {
    const int want = w.is_training ? w.training.gpus
                                   : w.service.replicas * (w.service.gpu.mode == SharingMode::exclusive ? w.service.gpu.gpus : 1);
    CHECK_MESSAGE(gpus_placed[w.name] == want, w.name);
  }
  CHECK(usd_of(plan.weekly_cost) == doctest::Approx(cost).epsilon(1e-9));
}

PackingPlan both_agree(const PackingProblem& p) {
  const PackingPlan h = solved(pack_heuristic(p));
  const PackingPlan e = solved(pack_exact(p));
  check_plan(p, h);
  check_plan(p, e);
  CHECK(usd_of(h.weekly_cost) == doctest::Approx(usd_of(e.weekly_cost)).epsilon(1e-9));
  return h;
}

}  // namespace

TEST_CASE("packing: two 4-GPU training jobs in different hours share one 4-GPU node") {
  PackingProblem p;
  p.node_types = {node_type("a100x4", "a100-sxm-80gb", 4, 10), node_type("a100x8", "a100-sxm-80gb", 8, 18)};
  p.workloads = {training("day-job", 4, WeekHours::business_days(9, 18)), training("weekend-job", 4, WeekHours::burst(5 * 24, 24))};
  const PackingPlan plan = both_agree(p);
  // One a100x4 node, up 45 h (Mon-Fri 9-18) + 24 h (Saturday) = 69 h x $10 = $690.
  // (Two nodes would cost the same hours but need a pool of 2; the a100x8 at $18/h: $1,242.)
  CHECK(plan.nodes.size() == 1);
  CHECK(plan.nodes[0].node_type == "a100x4");
  CHECK(plan.nodes[0].up.count() == 69);
  CHECK(usd_of(plan.weekly_cost) == doctest::Approx(690));
  REQUIRE(plan.pools.size() == 1);
  CHECK(plan.pools[0].min_nodes == 0);
  CHECK(plan.pools[0].max_nodes == 1);
  // Monday 10:00 is hour 10: one node at $10; Monday 3:00 nothing runs.
  CHECK(usd_of(plan.hourly_cost[10]) == doctest::Approx(10));
  CHECK(plan.nodes_up[3] == 0);
}

TEST_CASE("packing: two 4-GPU jobs at the same time take one 8-GPU node when it costs less than two 4-GPU nodes") {
  PackingProblem p;
  p.node_types = {node_type("a100x4", "a100-sxm-80gb", 4, 10), node_type("a100x8", "a100-sxm-80gb", 8, 18)};
  p.workloads = {training("a", 4, WeekHours::always()), training("b", 4, WeekHours::always())};
  const PackingPlan plan = both_agree(p);
  // 2 x a100x4 = $20/h x 168 = $3,360; 1 x a100x8 = $18/h x 168 = $3,024.
  REQUIRE(plan.nodes.size() == 1);
  CHECK(plan.nodes[0].node_type == "a100x8");
  CHECK(usd_of(plan.weekly_cost) == doctest::Approx(3024));
}

TEST_CASE("packing: seven 1g.10gb MIG services fill one A100 80GB, and time-slicing fits six 12 GB services per GPU") {
  PackingProblem p;
  p.node_types = {node_type("a100x1", "a100-sxm-80gb", 1, 4)};
  for (const char* name : {"s0", "s1", "s2", "s3", "s4", "s5", "s6"})
    p.workloads.push_back(service(name, 1, mig("1g.10gb", 8), WeekHours::always()));
  PackingPlan plan = both_agree(p);
  // 7 instances x 1 slice = the 7 compute slices; 7 x 10 GB = 70 GB of 80: one node,
  // $4 x 168 = $672.
  REQUIRE(plan.nodes.size() == 1);
  CHECK(plan.nodes[0].gpus[0].mode == SharingMode::mig);
  REQUIRE(plan.nodes[0].gpus[0].mig.size() == 7);
  CHECK(plan.nodes[0].gpus[0].mig[6].first_slice == 6);
  CHECK(usd_of(plan.weekly_cost) == doctest::Approx(672));

  // An eighth: "1g.10gb x7" allows 7 instances, so a second node: $8 x 168 = $1,344.
  p.workloads.push_back(service("s7", 1, mig("1g.10gb", 8), WeekHours::always()));
  plan = both_agree(p);
  CHECK(plan.nodes.size() == 2);
  CHECK(usd_of(plan.weekly_cost) == doctest::Approx(1344));

  // Time-slicing seven services of 12 GB (1/7 of the GPU each): 6 x 12 = 72 GB fit in 80,
  // 7 x 12 = 84 do not, so 6 on one GPU and 1 on another: 2 nodes, $1,344.
  p.workloads.pop_back();
  for (auto& w : p.workloads) w.service.gpu = sliced(1.0 / 7, 12);
  plan = both_agree(p);
  REQUIRE(plan.nodes.size() == 2);
  CHECK(plan.nodes[0].pods.size() + plan.nodes[1].pods.size() == 7);
  CHECK(std::max(plan.nodes[0].pods.size(), plan.nodes[1].pods.size()) == 6);
  CHECK(usd_of(plan.weekly_cost) == doctest::Approx(1344));
}

TEST_CASE("packing: spread node puts two replicas on two nodes") {
  PackingProblem p;
  p.node_types = {node_type("a100x8", "a100-sxm-80gb", 8, 20)};
  p.workloads = {service("api", 2, whole(), WeekHours::always(), Spread::node)};
  PackingPlan plan = both_agree(p);
  // 2 nodes x $20 x 168 h = $6,720; without the spread both fit on one: $3,360.
  CHECK(plan.nodes.size() == 2);
  CHECK(usd_of(plan.weekly_cost) == doctest::Approx(6720));
  p.workloads[0].service.spread = Spread::none;
  plan = both_agree(p);
  CHECK(plan.nodes.size() == 1);
  CHECK(usd_of(plan.weekly_cost) == doctest::Approx(3360));
}

TEST_CASE("packing: spread zone puts replica i in zone i mod 2") {
  PackingProblem p;
  p.node_types = {node_type("a100x4", "a100-sxm-80gb", 4, 10)};
  p.node_types[0].zones = {"us-east-1b", "us-east-1a"};
  p.workloads = {service("api", 3, whole(), WeekHours::always(), Spread::zone)};
  const PackingPlan plan = both_agree(p);
  // Zones sorted: 1a, 1b. Replicas 0 and 2 in us-east-1a (one node, 2 of its 4 GPUs),
  // replica 1 in us-east-1b: 2 nodes x $10 x 168 = $3,360 (one node would hold all three).
  REQUIRE(plan.nodes.size() == 2);
  for (const auto& n : plan.nodes) {
    for (const auto& pod : n.pods) CHECK(n.zone == (pod.index % 2 == 0 ? "us-east-1a" : "us-east-1b"));
    CHECK(n.pods.size() == (n.zone == "us-east-1a" ? 2u : 1u));
  }
  CHECK(usd_of(plan.weekly_cost) == doctest::Approx(3360));
  p.node_types[0].zones.clear();
  const auto r = pack_heuristic(p);
  REQUIRE_FALSE(r.ok());
  CHECK(r.errors()[0].message == "workload 'api' fits no node type: a100x4: spread: zone needs a node type with zones, it lists none");
}

TEST_CASE("packing: the system reserve pushes a replica to a second node") {
  PackingProblem p;
  p.node_types = {node_type("a100x4", "a100-sxm-80gb", 4, 10, 32, 4)};
  p.workloads = {service("etl", 2, whole(), WeekHours::always())};
  p.workloads[0].service.cpu_per_replica = 16;
  PackingPlan plan = both_agree(p);
  // 32 cores - 4 reserved = 28 allocatable < 2 x 16 = 32: two nodes, $20 x 168 = $3,360.
  CHECK(plan.nodes.size() == 2);
  CHECK(usd_of(plan.weekly_cost) == doctest::Approx(3360));
  p.node_types[0].reserve.cpu_cores = 0;  // 32 >= 32: one node, $1,680
  plan = both_agree(p);
  CHECK(plan.nodes.size() == 1);
  CHECK(usd_of(plan.weekly_cost) == doctest::Approx(1680));
}

TEST_CASE("packing: training borrows the GPUs a service leaves idle at night only when allowed") {
  PackingProblem p;
  p.node_types = {node_type("a100x4", "a100-sxm-80gb", 4, 10)};
  p.workloads = {service("chat", 4, whole(), WeekHours::business_days()), training("nightly", 3, nights_and_weekends())};
  p.workloads[0].service.min_replicas = 1;
  // Not allowed: the serving node runs all week for replica 0 (168 h) and the job has a
  // node of its own for the 168 - 45 = 123 other hours: $10 x (168 + 123) = $2,910.
  PackingPlan plan = both_agree(p);
  CHECK(plan.nodes.size() == 2);
  CHECK(usd_of(plan.weekly_cost) == doctest::Approx(2910));
  // Allowed: the job runs on GPUs 1-3 of the serving node when replicas 1-3 are down:
  // one node, $10 x 168 = $1,680.
  p.workloads[1].training.may_borrow_serving = true;
  plan = both_agree(p);
  CHECK(plan.nodes.size() == 1);
  CHECK(usd_of(plan.weekly_cost) == doctest::Approx(1680));
  REQUIRE(plan.pools.size() == 1);
  CHECK(plan.pools[0].min_nodes == 1);
}

TEST_CASE("packing: a workload that fits no node type is named with each type's reason") {
  PackingProblem p;
  p.node_types = {node_type("a100x1", "a100-sxm-80gb", 1, 4), node_type("t4x1", "t4", 1, 1)};
  p.workloads = {service("ocr", 1, mig("1g.10gb", 12), WeekHours::always())};
  auto r = pack_heuristic(p);
  REQUIRE_FALSE(r.ok());
  REQUIRE(r.errors().size() == 1);
  CHECK(r.errors()[0].key_path == "workloads[0]");
  CHECK(r.errors()[0].message ==
        "workload 'ocr' fits no node type: a100x1: a replica needs 12 GB of GPU memory, MIG profile 1g.10gb has 10 GB; "
        "t4x1: the t4 has no MIG profile '1g.10gb'");

  p.node_types = {node_type("a100x8", "a100-sxm-80gb", 8, 30, 96, 4)};
  p.workloads = {training("llm", 16, WeekHours::always())};
  p.workloads[0].training.cpu_per_gpu = 12;
  r = pack_exact(p);
  REQUIRE_FALSE(r.ok());
  CHECK(r.errors()[0].message ==
        "workload 'llm' fits no node type: a100x8: a full node of the job needs 96 cores, the node has 92 cores allocatable "
        "(96 minus a system reserve of 4)");

  p.workloads = {service("api", 3, whole(), WeekHours::always())};
  p.workloads[0].service.min_replicas = 4;
  r = pack_heuristic(p);
  REQUIRE_FALSE(r.ok());
  CHECK(r.errors()[0].key_path == "workloads[0].service.min_replicas");
  CHECK(r.errors()[0].message == "workload 'api': min_replicas must be in 0..3, got 4");

  p.workloads = {service("big", 20, whole(), WeekHours::always())};
  r = pack_exact(p);
  REQUIRE_FALSE(r.ok());
  CHECK(r.errors()[0].message == "the exact solver takes at most 14 pods, the instance has 20");
}

namespace {

// A small random instance: 2-3 A100 node types and 3-5 workloads of at most 8 pods.
// std::mt19937's output is fixed by the standard (distributions are not), so the instances
// are the same on every platform.
PackingProblem generated(std::mt19937& rng) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  PackingProblem p;
  p.node_types = {node_type("a100x1", "a100-sxm-80gb", 1, 3.5 + pick(10) * 0.1, 12, 2),
                  node_type("a100x4", "a100-sxm-80gb", 4, 13 + pick(10) * 0.2, 48, 4)};
  if (pick(2) == 1) p.node_types.push_back(node_type("a100x8", "a100-sxm-80gb", 8, 24 + pick(10) * 0.5, 96, 4));
  const WeekHours windows[] = {WeekHours::always(), WeekHours::business_days(), WeekHours::burst(5 * 24, 24), nights_and_weekends()};
  const int workloads = 3 + pick(3);
  int pods = 0;
  for (int i = 0; i < workloads && pods < 8; ++i) {
    const std::string name = "w" + std::to_string(i);
    const WeekHours when = windows[pick(4)];
    PackingWorkload w;
    if (pick(3) == 0) {
      w = training(name.c_str(), 1 + pick(std::min(4, 8 - pods)), when, pick(2) == 1);
      w.training.cpu_per_gpu = pick(3) * 2.0;
      pods += w.training.gpus;  // one part per GPU on a100x1
    } else {
      const int replicas = 1 + pick(std::min(3, 8 - pods));
      const GpuRequest kinds[] = {whole(), mig("1g.10gb", 9), mig("3g.40gb", 30), sliced(0.5, 30), sliced(0.25, 15)};
      w = service(name.c_str(), replicas, kinds[pick(5)], when, pick(3) == 0 ? Spread::node : Spread::none);
      w.service.cpu_per_replica = 1 + pick(4);
      w.service.min_replicas = pick(2) * 1;
      pods += replicas;
    }
    p.workloads.push_back(w);
  }
  return p;
}

}  // namespace

TEST_CASE("packing: the heuristic is within 5 % of the exact optimum on 20 generated instances") {
  std::mt19937 rng(17);
  double sum_gap = 0, worst_gap = 0;
  for (int i = 0; i < 20; ++i) {
    const PackingProblem p = generated(rng);
    CAPTURE(i);
    const PackingPlan h = solved(pack_heuristic(p));
    const PackingPlan e = solved(pack_exact(p));
    check_plan(p, h);
    check_plan(p, e);
    const double gap = usd_of(h.weekly_cost) / usd_of(e.weekly_cost) - 1;
    CHECK(gap >= -1e-9);  // nothing beats the optimum
    CHECK(gap <= 0.05);
    sum_gap += gap;
    worst_gap = std::max(worst_gap, gap);
    MESSAGE("instance " << i << ": " << p.workloads.size() << " workloads, heuristic $" << usd_of(h.weekly_cost) << ", exact $"
                        << usd_of(e.weekly_cost) << " (" << e.solver << "), gap " << gap * 100 << " %");
  }
  MESSAGE("optimality gap over 20 instances: mean " << sum_gap / 20 * 100 << " %, worst " << worst_gap * 100 << " %");
}

TEST_CASE("packing: a workload sized for a GPU runs only on node types that carry it") {
  // The service was sized on T4s: the cheaper A10G node must not take it, although its
  // replica would fit there. 2 replicas x 168 h x 0.526 USD/h = 176.736 USD.
  PackingProblem p;
  p.node_types = {node_type("a10gx1", "a10g", 1, 0.40), node_type("t4x1", "t4", 1, 0.526)};
  p.workloads = {service("ocr", 2, whole(8), WeekHours::always(), Spread::node)};
  p.workloads[0].gpus = {"t4"};
  const PackingPlan plan = both_agree(p);
  REQUIRE(plan.pools.size() == 1);
  CHECK(plan.pools[0].node_type == "t4x1");
  CHECK(usd_of(plan.weekly_cost) == doctest::Approx(2 * 168 * 0.526));

  p.workloads[0].gpus = {"l4"};
  auto r = pack_heuristic(p);
  REQUIRE_FALSE(r.ok());
  CHECK(r.errors()[0].message ==
        "workload 'ocr' fits no node type: a10gx1: its GPU a10g is not the workload's (l4); t4x1: its GPU t4 is not the "
        "workload's (l4)");
}

TEST_CASE("packing: the system reserve's memory pushes a replica to a second node (issue 47)") {
  // 256 GB nodes keeping 16 GB for the system: 240 GB allocatable < 2 x 125 GB = 250 GB, so
  // the two replicas take two nodes, 2 x $10 x 168 = $3,360; without the reserve one node
  // holds both, $1,680.
  PackingProblem p;
  p.node_types = {node_type("a100x4", "a100-sxm-80gb", 4, 10)};
  p.node_types[0].memory = Bytes(256e9);
  p.node_types[0].reserve.memory = Bytes(16e9);
  p.workloads = {service("embed", 2, whole(), WeekHours::always())};
  p.workloads[0].service.memory_per_replica = Bytes(125e9);
  PackingPlan plan = both_agree(p);
  CHECK(plan.nodes.size() == 2);
  CHECK(usd_of(plan.weekly_cost) == doctest::Approx(3360));
  p.node_types[0].reserve.memory = Bytes(0.0);
  plan = both_agree(p);
  CHECK(plan.nodes.size() == 1);
  CHECK(usd_of(plan.weekly_cost) == doctest::Approx(1680));
}

TEST_CASE("packing: more pods than kMaxPackingPods are refused, naming the limit (issue 47)") {
  // 4 services x 10,000 replicas took 21 s to pack, 10,000 workloads 237 s.
  PackingProblem p;
  p.node_types = {node_type("l4x1", "l4", 1, 0.8), node_type("l4x8", "l4", 8, 6.4)};
  p.workloads = {service("a", kMaxPackingPods, whole(8), WeekHours::business_days())};
  auto at_limit = pack_heuristic(p);
  REQUIRE_MESSAGE(at_limit.ok(), format_diagnostics(at_limit.errors()));
  p.workloads.push_back(service("b", 1, whole(8), nights_and_weekends()));
  auto over = pack_heuristic(p);
  REQUIRE_FALSE(over.ok());
  CHECK(over.errors()[0].key_path == "workloads");
  CHECK(over.errors()[0].message ==
        "the workloads have 1001 pods to pack (a gang counted as its parts on the node type that splits it most), more "
        "than the packer's limit of 1000 pods");
  // A gang of 16,000 GPUs is at least 2,000 parts on 8-GPU nodes: refused before its parts are made.
  p.workloads = {training("huge", 16000, WeekHours::always())};
  auto gang = pack_exact(p);
  REQUIRE_FALSE(gang.ok());
  CHECK(gang.errors()[0].message.starts_with("the workloads have at least 2000 pods to pack"));
}
