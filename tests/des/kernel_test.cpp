// The kernel's mechanics: determinism, batching, back-pressure, conveyors, budgets.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <thread>

#include "capsim/core/des/examples.hpp"
#include "capsim/core/des/simulator.hpp"

using namespace capsim;
using namespace capsim::des;

namespace {

RunOptions options(double warmup, double duration, std::uint64_t seed = 1, int batches = 20) {
  RunOptions o;
  o.warmup = Seconds(warmup);
  o.duration = Seconds(duration);
  o.seed = seed;
  o.batches = batches;
  return o;
}

SimulationResult must(Result<SimulationResult> r) {
  REQUIRE_MESSAGE(r, format_diagnostics(r.errors()));
  return std::move(r).value();
}

StationSpec station(std::string name, ServiceTime service, int servers = 1) {
  StationSpec s;
  s.name = std::move(name);
  s.service = service;
  s.servers = servers;
  return s;
}

}  // namespace

TEST_CASE("the same seed gives the same run to the event") {
  const Pipeline p = make_tandem_pipeline(3, 0.8, 1.0);
  const auto a = must(simulate(p, options(100, 2e4, 7)));
  const auto b = must(simulate(p, options(100, 2e4, 7)));
  CHECK(a.events == b.events);
  CHECK(a.latency.mean == b.latency.mean);
  CHECK(a.latency_percentiles.p99.high == b.latency_percentiles.p99.high);
  for (std::size_t i = 0; i < a.stations.size(); ++i) {
    CHECK(a.stations[i].queue_length.mean == b.stations[i].queue_length.mean);
    CHECK(a.stations[i].sojourn.p95.low == b.stations[i].sojourn.p95.low);
  }
  const auto c = must(simulate(p, options(100, 2e4, 8)));
  CHECK(c.latency.mean != a.latency.mean);
  CHECK(c.events != a.events);
}

TEST_CASE("simulators run in parallel threads without sharing state") {
  const Pipeline p = make_tandem_pipeline(2, 0.5, 1.0);
  SimulationResult results[4];
  std::thread threads[4];
  for (int i = 0; i < 4; ++i)
    threads[i] = std::thread([&, i] {
      auto r = simulate(p, options(10, 5e3, static_cast<std::uint64_t>(i % 2)));
      if (r) results[i] = std::move(r).value();
    });
  for (auto& t : threads) t.join();
  CHECK(results[0].events > 0);
  CHECK(results[0].events == results[2].events);
  CHECK(results[1].events == results[3].events);
  CHECK(results[0].latency.mean == results[2].latency.mean);
  CHECK(results[0].latency.mean != results[1].latency.mean);
}

TEST_CASE("run_until advances the clock and run finishes the window") {
  auto sim = Simulator::create(make_tandem_pipeline(1, 0.5, 1.0), options(0, 100, 3));
  REQUIRE(sim);
  Simulator s = std::move(sim).value();
  CHECK(s.clock().value() == 0.0);
  CHECK(s.run_until(Seconds(40.0)).empty());
  CHECK(s.clock().value() == 40.0);
  const auto early = s.events();
  CHECK(early > 0);
  CHECK(s.run().empty());
  CHECK(s.clock().value() == 100.0);
  CHECK(s.events() > early);
  CHECK(s.result());
}

TEST_CASE("a saturated batching station delivers max_batch per batch time") {
  // 64 items circulate with no think time, so the station always has a full batch waiting.
  // Table: batch 1 -> 1 ms, batch 4 -> 2.5 ms, batch 8 -> 4 ms; throughput = 8 / 4 ms.
  Pipeline p;
  const NodeId src = p.add_source(SourceSpec::closed("clients", 64));
  StationSpec gpu = station("gpu", ServiceTime::empirical({{1, Seconds(0.001)},
                                                           {4, Seconds(0.0025)},
                                                           {8, Seconds(0.004)}}));
  gpu.max_batch = 8;
  gpu.max_queue_delay = Seconds(0.002);
  const NodeId st = p.add_station(gpu);
  p.connect(src, st);
  p.connect(st, p.add_sink({"out"}));
  const auto r = must(simulate(p, options(1, 20)));
  std::printf("batching: throughput %.2f /s (exact %.2f), utilization %.4f\n",
              r.stations[0].throughput.mean, 8 / 0.004, r.stations[0].utilization.mean);
  CHECK(r.stations[0].throughput.mean == doctest::Approx(8 / 0.004).epsilon(1e-3));
  CHECK(r.stations[0].utilization.mean == doctest::Approx(1.0));
  CHECK(r.constraint == "gpu");
  CHECK_FALSE(r.elevation_gain.has_value());  // nothing else to bind
}

TEST_CASE("empirical service time interpolates and extrapolates") {
  const auto t = ServiceTime::empirical({{1, Seconds(1.0)}, {4, Seconds(2.5)}, {8, Seconds(4.0)}});
  CHECK(t.check().empty());
  CHECK(t.mean(1).value() == doctest::Approx(1.0));
  CHECK(t.mean(2).value() == doctest::Approx(1.5));    // between rows 1 and 4
  CHECK(t.mean(6).value() == doctest::Approx(3.25));   // between rows 4 and 8
  CHECK(t.mean(12).value() == doctest::Approx(5.5));   // past the last row, slope 0.375
  CHECK(ServiceTime::empirical({{4, Seconds(1.0)}, {2, Seconds(2.0)}}).check() ==
        "empirical service time rows must have strictly increasing batch sizes (4 then 2)");
  CHECK(ServiceTime::exponential(Seconds(0.0)).check() ==
        "service time mean must be > 0 s (got 0 s)");
}

TEST_CASE("lognormal service time has the requested mean and cv") {
  const auto t = ServiceTime::lognormal(Seconds(2.0), 0.5);
  Rng rng(5);
  double sum = 0, squares = 0;
  const int n = 400000;
  for (int i = 0; i < n; ++i) {
    const double x = t.sample(1, rng).value();
    sum += x;
    squares += x * x;
  }
  const double mean = sum / n, sd = std::sqrt(squares / n - mean * mean);
  CHECK(mean == doctest::Approx(2.0).epsilon(0.01));
  CHECK(sd / mean == doctest::Approx(0.5).epsilon(0.02));
}

TEST_CASE("the dynamic batcher waits max_queue_delay for a lone item") {
  // One item per second; batch of 8 never fills, so each waits 10 ms then takes 1 ms.
  Pipeline p;
  std::vector<Seconds> arrivals;
  for (int i = 0; i < 100; ++i) arrivals.push_back(Seconds(i + 0.5));
  const NodeId src = p.add_source(SourceSpec::trace("trace", arrivals));
  StationSpec s = station("batcher", ServiceTime::deterministic(Seconds(0.001)));
  s.max_batch = 8;
  s.max_queue_delay = Seconds(0.010);
  const NodeId st = p.add_station(s);
  p.connect(src, st);
  p.connect(st, p.add_sink({"out"}));
  const auto r = must(simulate(p, options(0, 100, 1, 10)));
  CHECK(r.stations[0].waiting_time.mean == doctest::Approx(0.010));
  CHECK(r.latency.mean == doctest::Approx(0.011));
  CHECK(r.stations[0].throughput.mean == doctest::Approx(1.0));
}

TEST_CASE("a slow station behind a bounded queue blocks its upstream") {
  // 10 items circulate: fast (exponential, 0.5 s) -> slow (1 s, queue of 1) -> sink.
  Pipeline p;
  const NodeId src = p.add_source(SourceSpec::closed("users", 10));
  const NodeId fast = p.add_station(station("fast", ServiceTime::exponential(Seconds(0.5))));
  StationSpec slow_spec = station("slow", ServiceTime::deterministic(Seconds(1.0)));
  slow_spec.queue_capacity = 1;
  const NodeId slow = p.add_station(slow_spec);
  p.connect(src, fast);
  p.connect(fast, slow);
  p.connect(slow, p.add_sink({"out"}));
  const auto r = must(simulate(p, options(100, 5000)));
  const StationMetrics& f = r.stations[0];
  const StationMetrics& s = r.stations[1];
  std::printf("back-pressure: fast util %.3f blocked %.3f starved %.3f; slow util %.3f; "
              "constraint %s, elevation gain %.3f\n",
              f.utilization.mean, f.blocked_fraction.mean, f.starved_fraction.mean,
              s.utilization.mean, r.constraint.c_str(), r.elevation_gain.value_or(-1));
  CHECK(f.blocked_fraction.mean > 0.3);
  // slow starves only when fast takes over 2 s twice in a row (queue of 1): rarely.
  CHECK(s.utilization.mean > 0.97);
  CHECK(s.queue_length.mean <= 1.0);
  CHECK(r.throughput.mean == doctest::Approx(s.utilization.mean).epsilon(1e-3));
  CHECK(r.constraint == "slow");
  REQUIRE(r.elevation_gain.has_value());
  // fast carries 1 item/s at utilization ~0.5: elevating slow gives ~ 1/0.5 - 1 = +100 %.
  CHECK(*r.elevation_gain == doctest::Approx(1.0 / f.utilization.mean - 1.0));
  CHECK(r.next_constraint == "fast");
}

namespace {
// Items of the given sizes at the given times over a 1 MB/s conveyor into a sink.
SimulationResult transfer(std::vector<Seconds> at, double bytes, double latency = 0.0) {
  Pipeline p;
  const NodeId src = p.add_source(SourceSpec::trace("files", std::move(at), Bytes(bytes)));
  ConveyorSpec link;
  link.name = "link";
  link.bandwidth = BytesPerSecond(1e6);
  link.latency = Seconds(latency);
  p.connect(src, p.add_sink({"disk"}), link);
  return must(simulate(p, options(0, 20, 1, 2)));
}
}  // namespace

TEST_CASE("concurrent transfers share the conveyor bandwidth fairly") {
  // 1 MB alone over 1 MB/s: 1 s. Two at once each get 0.5 MB/s: both take 2 s.
  CHECK(transfer({Seconds(0.0)}, 1e6).latency.mean == doctest::Approx(1.0));
  const auto two = transfer({Seconds(0.0), Seconds(0.0)}, 1e6);
  CHECK(two.latency.mean == doctest::Approx(2.0));
  CHECK(two.latency_percentiles.p50.mean == doctest::Approx(2.0));
  CHECK(two.conveyors.at(0).name == "link");
  // Latency adds to each transfer.
  CHECK(transfer({Seconds(0.0), Seconds(0.0)}, 1e6, 0.25).latency.mean == doctest::Approx(2.25));
  // Staggered: A (1 MB) starts at 0, B (1 MB) at 0.5 s. A alone sends 0.5 MB by 0.5 s, then
  // each gets 0.5 MB/s: A ends at 1.5 s (latency 1.5), B has 0.5 MB left, alone again, ends
  // at 2.0 s (latency 1.5).
  const auto staggered = transfer({Seconds(0.0), Seconds(0.5)}, 1e6);
  CHECK(staggered.latency.mean == doctest::Approx(1.5));
  CHECK(staggered.latency_percentiles.p99.mean == doctest::Approx(1.5));
}

TEST_CASE("a conveyor with capacity one serializes transfers") {
  Pipeline p;
  const NodeId src =
      p.add_source(SourceSpec::trace("files", {Seconds(0.0), Seconds(0.0)}, Bytes(1e6)));
  ConveyorSpec link{"link", BytesPerSecond(1e6), Seconds(0.0), 1};
  p.connect(src, p.add_sink({"disk"}), link);
  const auto r = must(simulate(p, options(0, 20, 1, 2)));
  // First item 1 s; the second waits at the source until 1 s, then 1 s: latency 2 s.
  CHECK(r.latency.mean == doctest::Approx(1.5));
  // 2 item-seconds in the first batch of 10 s, none in the second.
  CHECK(r.conveyors[0].in_transit.mean == doctest::Approx(0.1));
  CHECK(r.conveyors[0].utilization.mean == doctest::Approx(0.1));
}

TEST_CASE("routing probabilities split the flow") {
  Pipeline p;
  const NodeId src = p.add_source(SourceSpec::poisson("in", Rate(10.0)));
  const NodeId a = p.add_station(station("a", ServiceTime::exponential(Seconds(0.01))));
  const NodeId b = p.add_station(station("b", ServiceTime::exponential(Seconds(0.01))));
  const NodeId out = p.add_sink({"out"});
  p.connect(src, a, std::nullopt, 0.25);
  p.connect(src, b, std::nullopt, 0.75);
  p.connect(a, out);
  p.connect(b, out);
  const auto r = must(simulate(p, options(10, 2e4)));
  CHECK(r.stations[0].throughput.mean == doctest::Approx(2.5).epsilon(0.02));
  CHECK(r.stations[1].throughput.mean == doctest::Approx(7.5).epsilon(0.02));
}

TEST_CASE("a diurnal source follows its hourly profile") {
  std::array<double, 24> hourly{};
  for (int h = 0; h < 24; ++h) hourly[h] = h < 12 ? 0.5 : 1.5;  // mean 1
  Pipeline p;
  const NodeId src = p.add_source(SourceSpec::diurnal("users", Rate(2.0), hourly));
  p.connect(src, p.add_sink({"out"}));
  // Two batches of two days each: whole days, so each batch averages to the base rate.
  const auto r = must(simulate(p, options(0, 4 * 86400.0, 1, 2)));
  CHECK(r.throughput.mean == doctest::Approx(2.0).epsilon(0.01));
}

TEST_CASE("the event budget stops a run with a clear message") {
  RunOptions o = options(0, 1e6, 1);
  o.max_events = 1000;
  const auto r = simulate(make_tandem_pipeline(3, 0.8, 1.0), o);
  REQUIRE_FALSE(r);
  CHECK(format_diagnostics(r.errors()) ==
        "error: run.max_events: simulation stopped: the event budget of 1000 events ran out at "
        "simulated time 358.431 s of 1000000 s (shorten the duration or raise max_events)\n");
}

TEST_CASE("a run whose pace shows it needs far more than its budget is refused early") {
  // 0.8 arrivals/s, four events each (arrival, three services): 3.2e9 events against 1e8.
  RunOptions o = options(0, 1e9, 1);
  o.max_events = 100'000'000;
  auto created = Simulator::create(make_tandem_pipeline(3, 0.8, 1.0), o);
  REQUIRE(created);
  Simulator sim = std::move(created).value();
  const Status st = sim.run();
  REQUIRE_FALSE(st.empty());
  // Refused at the first check, after 2^20 events, not after spending the budget.
  CHECK(sim.events() == 1u << 20);
  CHECK(st[0].key_path == "run.max_events");
  CHECK(st[0].message.find("the run needs about 3200000000 events") != std::string::npos);
  CHECK(st[0].message.find("over the event budget of 100000000") != std::string::npos);
}

TEST_CASE("invalid run options are rejected") {
  RunOptions o = options(-1, 0, 1, 1);
  o.max_events = 0;
  const auto r = simulate(make_tandem_pipeline(1, 0.5, 1.0), o);
  REQUIRE_FALSE(r);
  CHECK(format_diagnostics(r.errors()) ==
        "error: run.warmup: warmup must be >= 0 s (got -1 s)\n"
        "error: run.duration: duration must be > 0 s (got 0 s)\n"
        "error: run.batches: batches must be >= 2 for confidence intervals (got 1)\n"
        "error: run.max_events: max_events must be >= 1 (got 0)\n");
}

namespace {
struct CancelAfterFirstReport : ProgressObserver {
  int reports = 0;
  void progress(double, std::string_view) override { ++reports; }
  bool cancelled() const override { return reports > 0; }
};
}  // namespace

TEST_CASE("a cancelled run returns what it has") {
  CancelAfterFirstReport observer;
  auto sim = Simulator::create(make_tandem_pipeline(3, 0.8, 1.0), options(0, 1e6, 1));
  REQUIRE(sim);
  Simulator s = std::move(sim).value();
  CHECK(s.run(&observer).empty());
  CHECK(observer.reports == 1);
  CHECK(s.events() == 65536);
  CHECK(s.clock().value() < 1e6);
  // Fewer than two batches of 50 000 s have completed.
  CHECK_FALSE(s.result());
}

// Issue 21: the confidence intervals' t quantile comes from Boost.Math; these are the
// two-sided 95 % values of Student's t as printed tables give them.
#include "../../core/src/des/statistics.hpp"

TEST_CASE("student t 97.5 % quantile matches the printed tables, beyond 30 degrees of freedom too") {
  using capsim::des::detail::student_t_975;
  CHECK(student_t_975(1) == doctest::Approx(12.706205).epsilon(1e-6));
  CHECK(student_t_975(10) == doctest::Approx(2.228139).epsilon(1e-6));
  CHECK(student_t_975(30) == doctest::Approx(2.042272).epsilon(1e-6));
  CHECK(student_t_975(60) == doctest::Approx(2.000298).epsilon(1e-6));
  CHECK(student_t_975(120) == doctest::Approx(1.979930).epsilon(1e-6));
  CHECK(std::isnan(student_t_975(0)));
}
