// Speed of the SimGrid fabric, and SimGrid against capsim's own DES kernel.
//
//   ./build/core/fabric/capsim_fabric_bench
//
// BM_AllReduce/<gpus>: wall time of one ring all-reduce query on <gpus> H100-like GPUs
//   (8 per node on NVSwitch, 8 x 400 Gb/s NICs, 16 nodes per leaf, 4:1 oversubscribed
//   spine), with a fresh cache each time: fork + platform build + one simulated ring step
//   (8 rings x <gpus> concurrent flows) + answer. Goals: < 1 s for 1024, < 10 s for 16384.
// BM_CapsimTandemQueue / BM_SimGridTandemQueue: the tandem queue of core/bench/des_bench.cpp
//   (Poisson source, 3 exponential single servers at rho = 0.8, sink), once on capsim's
//   kernel and once written directly on SimGrid actors and mailboxes. items_per_second is
//   events per second; an event is an arrival or a service completion, so an item is
//   1 + 3 events in both. SimGrid allows one engine per process, so every iteration of
//   BM_SimGridTandemQueue forks a child that builds a fresh engine, runs a fixed workload
//   (kSimGridItems items) and reports its events and the CPU time of Engine::run() alone;
//   the benchmark uses that as manual time, so fork and set-up are not charged to SimGrid.
//   The SimGrid run prints capsim_speedup = capsim events per CPU second / SimGrid events
//   per CPU second (CPU time, not wall, so that other load on the machine cancels out;
//   capsim's benchmark is registered first, so it has run by then).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <ctime>
#include <simgrid/s4u.hpp>
#include <sstream>
#include <iterator>
#include <string>
#include <vector>

#include "capsim/core/des/examples.hpp"
#include "capsim/core/des/random.hpp"
#include "capsim/core/des/simulator.hpp"
#include "capsim/fabric/fabric.hpp"
#include "child.hpp"

namespace {

namespace sg4 = simgrid::s4u;
using namespace capsim;

// The tandem queue of BM_TandemQueue: 3 stations, arrivals 0.8/s, service 1/s.
constexpr int kStations = 3;
constexpr double kArrivalRate = 0.8;
constexpr double kServiceRate = 1.0;
// capsim side: as in core/bench/des_bench.cpp.
constexpr double kCapsimWarmupSeconds = 1000.0;
constexpr double kCapsimDurationSeconds = 1'000'000.0;
// SimGrid side: items per forked run (each 1 + kStations events).
constexpr int kSimGridItems = 200'000;
constexpr double kChildTimeoutSeconds = 600.0;

double g_capsim_events_per_second = 0;

fabric::FabricTopology h100_cluster(int gpus) {
  fabric::FabricTopology t;
  t.gpus_per_node = 8;
  t.nodes = gpus / t.gpus_per_node;
  t.intra.gpu_link_bandwidth = gigabytes_per_second(450);  // NVLink 4, per direction
  t.intra.gpu_to_gpu_latency = Seconds(2e-6);
  t.network.nics_per_node = 8;
  t.network.nic_bandwidth = gigabits_per_second(400);
  t.network.nic_to_nic_latency = Seconds(5e-6);
  t.network.nodes_per_leaf = 16;
  t.network.oversubscription = 4.0;
  return t;
}

void BM_AllReduce(benchmark::State& state) {
  const fabric::FabricTopology topology = h100_cluster(static_cast<int>(state.range(0)));
  fabric::CollectiveRequest request;
  request.pattern = fabric::Pattern::ring_all_reduce;
  request.bytes = gigabytes(1);
  double simulated = 0;
  int flows = 0;
  for (auto _ : state) {
    fabric::FabricSimulator simulator;  // empty cache: every iteration simulates
    auto timing = simulator.time(topology, request);
    if (!timing) {
      state.SkipWithError(format_diagnostics(timing.errors()).c_str());
      return;
    }
    simulated = timing->total.value();
    flows = timing->flows_per_step;
  }
  state.counters["simulated_s"] = simulated;
  state.counters["flows_per_step"] = flows;
}
BENCHMARK(BM_AllReduce)->Arg(1024)->Arg(16384)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_CapsimTandemQueue(benchmark::State& state) {
  const des::Pipeline pipeline = des::make_tandem_pipeline(kStations, kArrivalRate, kServiceRate);
  des::RunOptions options;
  options.warmup = Seconds(kCapsimWarmupSeconds);
  options.duration = Seconds(kCapsimDurationSeconds);
  std::uint64_t events = 0;
  double cpu = 0;
  for (auto _ : state) {
    options.seed = state.iterations() + 1;
    const std::clock_t start = std::clock();
    auto result = des::simulate(pipeline, options);
    cpu += static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
    if (!result) {
      state.SkipWithError("simulation failed");
      return;
    }
    events += result->events;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(events));
  g_capsim_events_per_second = static_cast<double>(events) / cpu;
}
BENCHMARK(BM_CapsimTandemQueue)->Unit(benchmark::kMillisecond);

// One SimGrid run of the tandem queue, in this (child) process. Items are pointers to
// nothing; transfers are 0 bytes on a zero-latency loopback, so only the actors' sleeps
// take simulated time. Returns "<events> <CPU seconds of Engine::run()>".
std::string simgrid_tandem_run(std::uint64_t seed) {
  const char* args[] = {"tandem", "--cfg=network/model:CM02", "--cfg=network/loopback-lat:0",
                        "--cfg=contexts/factory:raw", "--log=root.thres:critical"};
  int argc = static_cast<int>(std::size(args));
  std::vector<char*> argv;
  for (const char* a : args) argv.push_back(const_cast<char*>(a));
  argv.push_back(nullptr);
  auto* engine = new sg4::Engine(&argc, argv.data());  // the child exits right after
  sg4::NetZone* zone = sg4::create_full_zone("tandem");
  sg4::Host* host = zone->create_host("cpu", 1e9);
  host->seal();
  zone->seal();

  static int item = 0;  // what travels: the address is the payload
  des::Rng rng(seed);
  std::uint64_t events = 0;
  std::vector<sg4::Mailbox*> queue;
  for (int s = 0; s <= kStations; ++s)
    queue.push_back(sg4::Mailbox::by_name("q" + std::to_string(s)));

  sg4::Actor::create("source", host, [&] {
    for (int i = 0; i < kSimGridItems; ++i) {
      sg4::this_actor::sleep_for(rng.exponential() / kArrivalRate);
      ++events;  // arrival
      queue[0]->put_init(&item, 0)->detach();
    }
  });
  for (int s = 0; s < kStations; ++s) {
    sg4::Actor::create("s" + std::to_string(s + 1), host, [&, s] {
      for (;;) {
        int* got = queue[s]->get<int>();
        sg4::this_actor::sleep_for(rng.exponential() / kServiceRate);
        ++events;  // service completion
        queue[s + 1]->put_init(got, 0)->detach();
      }
    })->daemonize();  // servers loop forever; the run ends when source and sink are done
  }
  sg4::Actor::create("sink", host, [&] {
    for (int i = 0; i < kSimGridItems; ++i) queue[kStations]->get<int>();
  });
  const std::clock_t start = std::clock();
  engine->run();
  const double cpu = static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
  return std::to_string(events) + " " + std::to_string(cpu);
}

void BM_SimGridTandemQueue(benchmark::State& state) {
  std::uint64_t events = 0;
  double cpu = 0;
  std::uint64_t seed = 1;
  for (auto _ : state) {
    auto answer = fabric::detail::run_in_child([seed] { return simgrid_tandem_run(seed); },
                                               Seconds(kChildTimeoutSeconds), "SimGrid tandem");
    ++seed;
    if (!answer) {
      state.SkipWithError(format_diagnostics(answer.errors()).c_str());
      return;
    }
    std::istringstream in(*answer);
    std::uint64_t run_events = 0;
    double run_cpu = 0;
    in >> run_events >> run_cpu;
    events += run_events;
    cpu += run_cpu;
    state.SetIterationTime(run_cpu);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(events));
  const double simgrid_rate = static_cast<double>(events) / cpu;
  if (g_capsim_events_per_second > 0)
    state.counters["capsim_speedup"] = g_capsim_events_per_second / simgrid_rate;
}
BENCHMARK(BM_SimGridTandemQueue)->Unit(benchmark::kMillisecond)->UseManualTime();

}  // namespace

BENCHMARK_MAIN();
