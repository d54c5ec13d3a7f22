#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "capsim/scenarios/cluster.hpp"
#include "support/test_support.hpp"

using namespace capsim;
using namespace capsim::scenarios;

namespace {

const hardware::Catalog& catalog() { return testing::shipped_catalog(); }

double on_demand(const std::string& instance) {
  const auto* e = catalog().find(hardware::EntityKind::instance, instance);
  REQUIRE(e != nullptr);
  return e->quantity<MoneyPerSecond>("price.on_demand")->value() * units::hour;
}

double committed(const std::string& instance) {
  return catalog().find(hardware::EntityKind::instance, instance)->quantity<MoneyPerSecond>("price.reserved_1yr")->value() *
         units::hour;
}

// A cluster scenario written to a scratch file (errors point into it).
std::filesystem::path write_cluster(const std::string& name, const std::string& text) {
  const auto path = testing::scratch_dir("cluster") / (name + ".yaml");
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

const char* kHead =
    "name: t\n"
    "cluster:\n"
    "  node_types: [aws-g5-xlarge, aws-g5-12xlarge]\n"
    "  system_reserve: {cpu: 0.5, memory: 2 GiB}\n"
    "workloads:\n";

}  // namespace

TEST_CASE("cluster: the shipped team estate is packed as worked out by hand") {
  auto s = load_cluster_file(testing::cluster_scenario("team-ml-estate"), catalog());
  REQUIRE_MESSAGE(s.ok(), format_diagnostics(s.errors()));
  auto p = plan_cluster(*s, catalog());
  REQUIRE_MESSAGE(p.ok(), format_diagnostics(p.errors()));
  std::map<std::string, int> node_hours, nodes;
  for (const auto& n : p->packing.nodes) {
    node_hours[n.node_type] += n.up.count();
    ++nodes[n.node_type];
  }
  // nightly-scoring: a gang of 4 A10Gs, 3 h from 01:00 every day = 21 h/week on the one
  // type with 4 A10Gs (g5.12xlarge); four g5.xlarge would not do, the gang is one node.
  CHECK(nodes["aws-g5-12xlarge"] == 1);
  CHECK(node_hours["aws-g5-12xlarge"] == 21);
  // notebooks: 6 pods of 1 CPU, 6 GiB, a quarter of an A10G and 5 GiB of it, Mon-Fri 8-20
  // (60 h). A g5.xlarge allocates 4 - 0.5 = 3.5 CPUs and 16 - 2 = 14 GiB: two pods by memory
  // (3 x 6 GiB = 18 > 14), so three nodes, 60 h each = 180 h; 2 x 0.25 GPU and 2 x 5 GiB of
  // the GPU's 24 GB fit. (The g5.12xlarge would hold all six but costs more than three.)
  CHECK(nodes["aws-g5-xlarge"] == 3);
  CHECK(node_hours["aws-g5-xlarge"] == 180);
  // food-photos on MIG slices of the one A100 type, all week (min_replicas 1): 168 h.
  CHECK(node_hours["gcp-a2-highgpu-1g"] == 168);
  // chat-7b in business hours (Mon-Fri 9-18 = 45 h) and the weekly fine-tune (its planned
  // run rounded up to whole hours) on L4 nodes; they run at different hours.
  const auto& finetune = p->workloads[0];
  CHECK(finetune.name == "weekly-finetune");
  CHECK(finetune.gpu == "l4");
  CHECK(node_hours["aws-g6-xlarge"] == 45 + finetune.active_hours);
  // The week on demand: node-hours x the catalog's prices, summed by hand.
  const double week = 21 * on_demand("aws-g5-12xlarge") + 180 * on_demand("aws-g5-xlarge") +
                      168 * on_demand("gcp-a2-highgpu-1g") + (45 + finetune.active_hours) * on_demand("aws-g6-xlarge");
  CHECK(p->weekly_cost.value() == doctest::Approx(week));
  // Every type has a 1-year committed price (GCP's committed use, AWS's reserved instances).
  // Only the A100 node, up 168 h, is cheaper committed (168 x 2.314207 < 168 x 3.673385; it
  // breaks even at 168 x 2.314207 / 3.673385 = 105.8 h); the AWS nodes are up fewer hours than
  // their break-even (g5.xlarge: 168 x 0.63378 / 1.006 = 105.8 h, against 60 h).
  int commits = 0;
  for (const auto& c : p->node_costs) {
    REQUIRE(c.committed.has_value());
    CHECK(*c.break_even_hours == doctest::Approx(168 * committed(c.node_type) / on_demand(c.node_type)));
    CHECK(c.commit == (c.up_hours > *c.break_even_hours));
    if (c.commit) ++commits;
    if (c.node_type == "gcp-a2-highgpu-1g") CHECK(c.commit);
  }
  CHECK(commits == 1);
  CHECK(p->best_weekly_cost.value() ==
        doctest::Approx(week - 168 * on_demand("gcp-a2-highgpu-1g") + 168 * committed("gcp-a2-highgpu-1g")));
  // Spot: only the A100 type is priced, and its node serves (no training on it), so the
  // spot line equals the best one; the node's own spot cost is 168 h x its spot price.
  CHECK(p->spot_training_weekly_cost.value() == doctest::Approx(p->best_weekly_cost.value()));
  for (const auto& c : p->node_costs)
    if (c.node_type == "gcp-a2-highgpu-1g") {
      REQUIRE(c.spot.has_value());
      CHECK(c.spot->value() == doctest::Approx(168 * catalog().find(hardware::EntityKind::instance, "gcp-a2-highgpu-1g")
                                                         ->quantity<MoneyPerSecond>("price.spot")->value() * units::hour));
      CHECK_FALSE(c.training);
    }
  // GPUs per workload per hour: Monday 01:00 the scoring gang holds 4; Monday 10:00 the six
  // notebooks hold a quarter each, 1.5.
  CHECK(p->gpus_per_hour[1][1] == doctest::Approx(4));
  CHECK(p->gpus_per_hour[4][10] == doctest::Approx(1.5));
  CHECK(p->gpus_per_hour[4][22] == doctest::Approx(0));
  // Every pool at its maximum all week costs more than scaling with the hours.
  CHECK(p->always_on_weekly_cost.value() > p->weekly_cost.value());
  // The horizon: 12 months = 365 days = 52.14 weeks.
  CHECK(p->horizon_cost.value() == doctest::Approx(p->weekly_cost.value() * 365.0 / 7));
}

TEST_CASE("cluster: golden plan of the shipped team estate") {
  auto s = load_cluster_file(testing::cluster_scenario("team-ml-estate"), catalog());
  REQUIRE(s.ok());
  auto p = plan_cluster(*s, catalog());
  REQUIRE(p.ok());
  const std::string actual = cluster_plan_text(*p);
  const auto path = std::filesystem::path(CAPSIM_TEST_SOURCE_DIR) / "scenarios" / "golden" / "team-ml-estate.plan.txt";
  if (std::getenv("CAPSIM_UPDATE_GOLDEN")) std::ofstream(path, std::ios::binary) << actual;
  CHECK(testing::read_file(path) == actual);
  const auto j = nlohmann::json::parse(cluster_plan_json(*p));
  CHECK(j["schema"] == kClusterPlanSchema);
  CHECK(j["nodes_up_per_hour"].size() == 168);
  CHECK(j["weekly_cost"].get<double>() == doctest::Approx(p->weekly_cost.value()));
}

TEST_CASE("cluster: hours of the week") {
  auto hours_of = [](const std::string& hours) {
    auto s = load_cluster("c.yaml",
                          std::string(kHead) + "  - {name: a, service: {gpu: a10g, replicas: 1}, hours: " + hours + "}\n",
                          catalog());
    REQUIRE_MESSAGE(s.ok(), format_diagnostics(s.errors()));
    return s->workloads[0];
  };
  CHECK(hours_of("always").hours.count() == 168);
  CHECK(hours_of("business").hours.count() == 45);
  CHECK(hours_of("business").hours_text == "Mon-Fri 09-18");
  const auto sat = hours_of("{days: sat, from: 0, to: 24}");
  CHECK(sat.hours.count() == 24);
  CHECK(sat.hours.hours.test(5 * 24));
  CHECK_FALSE(sat.hours.hours.test(5 * 24 - 1));
  CHECK(hours_of("{days: daily, from: 1, to: 6}").hours.count() == 35);
  CHECK(hours_of("{days: 'mon,wed', from: 22, to: 24}").hours_text == "Mon,Wed 22-24");
}

TEST_CASE("cluster: a training run is placed at the start of each window, for its run time") {
  auto s = load_cluster("c.yaml",
                        std::string(kHead) +
                            "  - {name: batch, job: {gpu: a10g, gpus: 4, run_time: 2.5 h}, hours: {days: 'tue,thu', from: 20, to: 24}}\n",
                        catalog());
  REQUIRE(s.ok());
  auto p = plan_cluster(*s, catalog());
  REQUIRE_MESSAGE(p.ok(), format_diagnostics(p.errors()));
  // 2.5 h rounds up to 3 whole hours: 20-23 on Tuesday and Thursday, 6 h a week, one node.
  CHECK(p->workloads[0].active_hours == 6);
  REQUIRE(p->packing.nodes.size() == 1);
  const auto& up = p->packing.nodes[0].up.hours;
  CHECK(up.test(24 + 20));
  CHECK(up.test(24 + 22));
  CHECK_FALSE(up.test(24 + 23));
  CHECK(up.test(3 * 24 + 20));
  CHECK(p->weekly_cost.value() == doctest::Approx(6 * on_demand("aws-g5-12xlarge")));
}

TEST_CASE("cluster: bad input gets every error at once, with file, line, column and key") {
  const auto path = write_cluster("bad",
                                  "name: t\n"
                                  "cluster:\n"
                                  "  node_types: [aws-g5-xlargee]\n"
                                  "  system_reserve: {cpu: 0.5, memroy: 2 GiB}\n"
                                  "workloads:\n"
                                  "  - name: a\n"
                                  "    service: {gpu: a10g, replicas: 2, share: mig}\n"
                                  "    hours: {days: monday, from: 9, to: 8}\n"
                                  "  - name: a\n"
                                  "    job: {gpu: a10x, gpus: 2, run_time: 2 GB}\n"
                                  "    hours: always\n");
  auto s = load_cluster_file(path, catalog());
  REQUIRE_FALSE(s.ok());
  std::vector<std::string> got;
  for (const auto& e : s.errors())
    got.push_back(std::to_string(e.where.line) + ":" + std::to_string(e.where.column) + " " + e.key_path + ": " + e.message +
                  (e.hint.empty() ? "" : " (" + e.hint + ")"));
  const std::vector<std::string> expected = {
      "3:16 cluster.node_types[0]: unknown instance 'aws-g5-xlargee' (did you mean 'aws-g5-xlarge'?)",
      "4:30 cluster.system_reserve.memroy: unknown key 'memroy' (did you mean 'memory'?)",
      "4:19 cluster.system_reserve.memory: missing key 'memory'",
      "8:19 workloads[0].hours.days: expected days such as mon-fri, sat, mon,wed,fri or daily, got 'monday'",
      "8:40 workloads[0].hours.to: must be after from (9)",
      "7:46 workloads[0].service.share: expected whole, mig <profile>, time-slicing <fraction> or mps <fraction> (a fraction "
      "in (0, 1]), got 'mig'",
      "10:16 workloads[1].job.gpu: unknown GPU 'a10x' (did you mean 'a10'?)",
      "10:41 workloads[1].job.run_time: expected a duration (e.g. '200 ms' or '14 d'), got a data size (e.g. '80 GB') ('2 GB')",
      "9:11 workloads[1].name: workload 'a' is named twice",
  };
  CHECK(got == expected);
  if (got != expected)
    for (const auto& g : got) MESSAGE(g);
  CHECK(s.errors()[0].where.file == path.string());
}

TEST_CASE("cluster: a run longer than its window and a GPU no node type carries are named") {
  auto s = load_cluster("c.yaml",
                        std::string(kHead) +
                            "  - {name: long, job: {gpu: a10g, gpus: 1, run_time: 30 h}, hours: {days: sat, from: 0, to: 24}}\n"
                            "  - {name: l4-svc, service: {gpu: l4, replicas: 1}, hours: always}\n",
                        catalog());
  REQUIRE(s.ok());
  auto p = plan_cluster(*s, catalog());
  REQUIRE_FALSE(p.ok());
  REQUIRE(p.errors().size() == 2);
  CHECK(p.errors()[0].key_path == "workloads[0]");
  CHECK(p.errors()[0].where.line == 6);  // the workload's entry, after the 5 lines of kHead
  CHECK(p.errors()[0].where.column == 5);
  CHECK(p.errors()[0].message == "workload 'long': a run takes 30 h, its window (Sat 00-24) is 24 h");
  CHECK(p.errors()[1].key_path == "workloads[1]");
  CHECK(p.errors()[1].message == "workload 'l4-svc': no node type carries its GPU l4 (the cluster's carry a10g)");
  CHECK(p.errors()[1].hint == "add a node type with a l4 to cluster.node_types");
}

TEST_CASE("cluster: a second YAML document is an error, not ignored") {
  auto s = load_cluster("c.yaml", std::string(kHead) + "  - {name: a, service: {gpu: a10g, replicas: 1}, hours: always}\n---\nname: b\n",
                        catalog());
  REQUIRE_FALSE(s.ok());
  CHECK(s.errors()[0].where.line == 8);  // the second document's first key, after the --- on line 7
  CHECK(s.errors()[0].message == "a scenario file holds one YAML document; a second one starts here");
}

TEST_CASE("cluster: owned servers against the pools of their GPU, through the cost model") {
  auto s = load_cluster_file(testing::cluster_scenario("team-ml-estate"), catalog());
  REQUIRE(s.ok());
  REQUIRE(s->owned.size() == 2);
  auto p = plan_cluster(*s, catalog());
  REQUIRE(p.ok());
  // Only the A100 pool has an owned option with its GPU (the DGX A100 carries A100 40 GB).
  REQUIRE(p->owned.size() == 1);
  const auto& c = p->owned[0];
  CHECK(c.node_type == "gcp-a2-highgpu-1g");
  CHECK(c.gpus == 1);
  CHECK(c.busy == doctest::Approx(1.0));
  REQUIRE(c.options.size() == 3);
  // The cloud over 12 months, up every hour: 365 d x 24 h x the on-demand price.
  CHECK(c.totals[0].value() == doctest::Approx(365 * 24 * on_demand("gcp-a2-highgpu-1g")));
  // One DGX A100 (8 GPUs) bought for the pool's one GPU costs more than renting it.
  CHECK(c.servers[1] == 1);
  CHECK(c.cheapest == 0);
  CHECK(c.totals[1].value() > c.totals[0].value());
  CHECK_FALSE(c.break_even_month[0].has_value());
}

TEST_CASE("cluster: owned entries are read with the scenario's cost keys and their errors point at the entry") {
  auto s = load_cluster("c.yaml",
                        "name: x\n"
                        "cluster:\n"
                        "  node_types: [gcp-a2-highgpu-1g]\n"
                        "  system_reserve: {cpu: 1, memory: 1 GiB}\n"
                        "  owned:\n"
                        "    - {name: colo, server: dgx-a100, facility: colo-us-primary-markets, idle_powr: 30 %}\n"
                        "    - {name: cloud, instance: aws-p4d-24xlarge}\n"
                        "workloads:\n"
                        "  - {name: a, hours: always, service: {gpu: a100-sxm-40gb, replicas: 1}}\n",
                        catalog());
  REQUIRE_FALSE(s.ok());
  REQUIRE(s.errors().size() == 2);
  CHECK(s.errors()[0].where.line == 6);
  CHECK(s.errors()[0].key_path == "cluster.owned[0].idle_powr");
  CHECK(s.errors()[0].message == "unknown key 'idle_powr' in 'cluster.owned[0]'");
  CHECK(s.errors()[0].hint == "did you mean 'idle_power'?");
  CHECK(s.errors()[1].where.line == 7);
  CHECK(s.errors()[1].message == "an owned option names a server: and a facility:");
}

TEST_CASE("cluster: spread zone places the replicas over cluster.zones, and without zones it is named") {
  const std::string head =
      "name: t\n"
      "cluster:\n"
      "  node_types: [aws-g5-xlarge]\n"
      "  system_reserve: {cpu: 0.5, memory: 2 GiB}\n";
  const std::string workload = "workloads:\n  - {name: api, service: {gpu: a10g, replicas: 3}, hours: always, spread: zone}\n";
  auto s = load_cluster("c.yaml", head + "  zones: [us-east-1a, us-east-1b]\n" + workload, catalog());
  REQUIRE_MESSAGE(s.ok(), format_diagnostics(s.errors()));
  auto p = plan_cluster(*s, catalog());
  REQUIRE_MESSAGE(p.ok(), format_diagnostics(p.errors()));
  // Replicas 0 and 2 in us-east-1a, replica 1 in us-east-1b: three one-GPU nodes, two zones.
  std::map<std::string, int> per_zone;
  for (const auto& n : p->packing.nodes) per_zone[n.zone] += static_cast<int>(n.pods.size());
  CHECK(per_zone["us-east-1a"] == 2);
  CHECK(per_zone["us-east-1b"] == 1);

  auto bare = load_cluster("c.yaml", head + workload, catalog());
  REQUIRE(bare.ok());
  auto refused = plan_cluster(*bare, catalog());
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.errors()[0].message ==
        "workload 'api' fits no node type: aws-g5-xlarge: spread: zone needs a node type with zones, it lists none");
  CHECK(refused.errors()[0].hint == "list the zones in cluster.zones");
}

// Issue 47: a cluster file reads scenarios from its own folder only, so the shipped clusters
// keep the examples they use in scenarios/clusters/workloads/; they are the examples, byte
// for byte (copy scenarios/examples/NAME.yaml over the one there when an example changes).
TEST_CASE("cluster: the shipped clusters' workload scenarios are the shipped examples") {
  const auto folder = testing::cluster_scenario("team-ml-estate").parent_path() / "workloads";
  int copies = 0;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    CAPTURE(entry.path());
    const auto example = testing::example_scenario(entry.path().stem().string());
    REQUIRE(std::filesystem::exists(example));
    CHECK(testing::read_file(entry.path()) == testing::read_file(example));
    ++copies;
  }
  CHECK(copies == 3);
}

// Issue 50: a pool mostly idle tries the smaller node types of its GPU. aws-batch-and-serving
// keeps a p4d (8 x A100 40 GB) up all week for four MIG slices: the catalog's 1 x A100 40 GB
// instance packs the whole plan again for less, and the plan says so with the repacked cost.
TEST_CASE("cluster: a mostly idle p4d pool is repacked with the smaller A100 node type, which costs less") {
  auto s = load_cluster_file(testing::cluster_scenario("aws-batch-and-serving"), catalog());
  REQUIRE_MESSAGE(s.ok(), format_diagnostics(s.errors()));
  auto p = plan_cluster(*s, catalog());
  REQUIRE_MESSAGE(p.ok(), format_diagnostics(p.errors()));
  REQUIRE(p->smaller_nodes.size() == 1);
  const auto& n = p->smaller_nodes[0];
  CHECK(n.pool == "aws-p4d-24xlarge");
  CHECK(n.gpu == "a100-sxm-40gb");
  CHECK(n.idle_fraction > 0.9);
  CHECK(n.node_type == "gcp-a2-highgpu-1g");
  CHECK(n.gpus_per_node == 1);
  CHECK(n.weekly_cost.value() < p->weekly_cost.value());
  // The same plan with that node type allowed costs what the proposal says.
  auto wider = *s;
  wider.node_types.push_back(n.node_type);
  auto again = plan_cluster(wider, catalog());
  REQUIRE(again.ok());
  CHECK(again->weekly_cost.value() == doctest::Approx(n.weekly_cost.value()));
  CHECK(cluster_plan_text(*p).find("aws-p4d-24xlarge is 92.9 % idle; with gcp-a2-highgpu-1g") != std::string::npos);
}
