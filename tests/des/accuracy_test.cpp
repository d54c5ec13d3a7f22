// The simulator held to exact queueing results (issue 4): for each model the 95 % batch-
// means interval must contain the exact value and the relative error must be under 2 %.
// Run lengths: the relaxation time of M/M/1 at rho = 0.8 is about 1 / (mu (1 - sqrt rho)^2)
// ~ 90 service times, so batches of 1e5 service times are close to independent, and the
// standard error of L over 2e6 s is about 0.7 % (asymptotic variance 2 rho (1 + rho) /
// (1 - rho)^4, Whitt 1989); M/M/1 runs 5e6 s, which puts the 2 % bound for L near four
// standard errors (over 30 seeds at 2e6 s, 2 of 30 runs exceeded 2 % on Lq). Over 24 seeds
// at 5e6 s the error of L had mean 0.007 % (no bias), rms 0.46 %, and the 95 % interval
// missed once: an interval misses about one run in twenty by design, so each case pins a
// seed; a change that moves the numbers must still pass with the seeds here.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>

#include "capsim/core/des/examples.hpp"
#include "capsim/core/des/simulator.hpp"
#include "capsim/core/queueing.hpp"

using namespace capsim;
using namespace capsim::des;

namespace {

void expect_exact(const char* what, const Interval& simulated, double exact) {
  const double relative_error = std::abs(simulated.mean - exact) / exact;
  std::printf("  %-28s simulated %.5g  95%% CI [%.5g, %.5g]  exact %.5g  error %.2f %%\n", what,
              simulated.mean, simulated.low, simulated.high, exact, 100.0 * relative_error);
  CHECK_MESSAGE(simulated.contains(exact), what);
  CHECK_MESSAGE(relative_error < 0.02, what);
}

Pipeline single_station(Rate arrival, int servers, ServiceTime service) {
  Pipeline p;
  const NodeId source = p.add_source(SourceSpec::poisson("arrivals", arrival));
  StationSpec s;
  s.name = "server";
  s.servers = servers;
  s.service = service;
  const NodeId station = p.add_station(s);
  const NodeId sink = p.add_sink({"done"});
  p.connect(source, station);
  p.connect(station, sink);
  return p;
}

SimulationResult run(const Pipeline& p, double warmup, double duration, std::uint64_t seed) {
  RunOptions o;
  o.warmup = Seconds(warmup);
  o.duration = Seconds(duration);
  o.seed = seed;
  auto r = simulate(p, o);
  REQUIRE_MESSAGE(r, format_diagnostics(r.errors()));
  std::printf("  (%llu events)\n", static_cast<unsigned long long>(r->events));
  return std::move(r).value();
}

}  // namespace

TEST_CASE("simulated M/M/1 at rho 0.8 matches the exact values") {
  std::printf("M/M/1, lambda 0.8, mu 1\n");
  const auto r = run(single_station(queueing::Rate(0.8), 1, ServiceTime::exponential(Seconds(1.0))),
                     1e4, 5e6, 1);
  const auto exact = queueing::mm1(queueing::Rate(0.8), queueing::Rate(1.0));
  REQUIRE(exact);
  const StationMetrics& s = r.stations.at(0);
  expect_exact("utilization", s.utilization, exact->utilization);
  expect_exact("L (in station)", s.in_station, exact->in_system);
  expect_exact("Lq (queue length)", s.queue_length, exact->queue_length);
  expect_exact("W (sojourn, s)", s.sojourn_time, exact->sojourn_time.value());
  expect_exact("Wq (waiting, s)", s.waiting_time, exact->waiting_time.value());
  // The sojourn time of M/M/1 is exponential with rate mu - lambda: p95 = -ln(0.05) / 0.2.
  expect_exact("W p95 (s)", s.sojourn.p95, -std::log(0.05) / 0.2);
  expect_exact("throughput (1/s)", r.throughput, 0.8);
}

TEST_CASE("simulated M/M/4 matches Erlang C") {
  std::printf("M/M/4, lambda 3.2, mu 1\n");
  const auto r = run(single_station(queueing::Rate(3.2), 4, ServiceTime::exponential(Seconds(1.0))),
                     1e4, 1e6, 12);
  const auto exact = queueing::mmc(queueing::Rate(3.2), queueing::Rate(1.0), 4);
  REQUIRE(exact);
  const StationMetrics& s = r.stations.at(0);
  expect_exact("utilization", s.utilization, exact->utilization);
  expect_exact("Lq (queue length)", s.queue_length, exact->queue_length);
  expect_exact("L (in station)", s.in_station, exact->in_system);
  expect_exact("Wq (waiting, s)", s.waiting_time, exact->waiting_time.value());
  expect_exact("W (sojourn, s)", s.sojourn_time, exact->sojourn_time.value());
}

TEST_CASE("simulated M/D/1 matches Pollaczek-Khinchine") {
  std::printf("M/D/1, lambda 0.8, D 1 s\n");
  const auto r = run(single_station(queueing::Rate(0.8), 1, ServiceTime::deterministic(Seconds(1.0))),
                     1e4, 2e6, 13);
  const auto exact = queueing::md1(queueing::Rate(0.8), Seconds(1.0));
  REQUIRE(exact);
  const StationMetrics& s = r.stations.at(0);
  expect_exact("Lq (queue length)", s.queue_length, exact->queue_length);
  expect_exact("Wq (waiting, s)", s.waiting_time, exact->waiting_time.value());
  expect_exact("W (sojourn, s)", s.sojourn_time, exact->sojourn_time.value());
}

TEST_CASE("simulated tandem Jackson network matches the sum of M/M/1") {
  std::printf("tandem, lambda 0.8, mu 1, 1.25, 2\n");
  Pipeline p;
  NodeId previous = p.add_source(SourceSpec::poisson("arrivals", Rate(0.8)));
  const double mu[] = {1.0, 1.25, 2.0};
  for (int i = 0; i < 3; ++i) {
    StationSpec s;
    s.name = "stage" + std::to_string(i + 1);
    s.service = ServiceTime::exponential(Seconds(1.0 / mu[i]));
    const NodeId station = p.add_station(s);
    p.connect(previous, station);
    previous = station;
  }
  p.connect(previous, p.add_sink({"done"}));
  const auto r = run(p, 1e4, 4e6, 1);
  const auto exact = queueing::jackson_tandem(
      queueing::Rate(0.8), {queueing::Rate(1.0), queueing::Rate(1.25), queueing::Rate(2.0)});
  REQUIRE(exact);
  expect_exact("end-to-end W (s)", r.latency, exact->sojourn_time.value());
  for (int i = 0; i < 3; ++i)
    expect_exact(("L stage" + std::to_string(i + 1)).c_str(), r.stations[i].in_station,
                 exact->stations[i].in_system);
  CHECK(r.constraint == "stage1");
}

TEST_CASE("simulated closed three-station network matches MVA") {
  std::printf("closed network, N 5, think 2 s, demands 1, 0.8, 0.5 s\n");
  Pipeline p;
  NodeId previous = p.add_source(SourceSpec::closed("users", 5, Seconds(2.0)));
  const double demand[] = {1.0, 0.8, 0.5};
  for (int i = 0; i < 3; ++i) {
    StationSpec s;
    s.name = "tier" + std::to_string(i + 1);
    s.service = ServiceTime::exponential(Seconds(demand[i]));
    const NodeId station = p.add_station(s);
    p.connect(previous, station);
    previous = station;
  }
  p.connect(previous, p.add_sink({"done"}));
  const auto r = run(p, 1e4, 1e6, 15);
  Eigen::VectorXd d(3);
  d << 1.0, 0.8, 0.5;
  const auto exact = queueing::mva(d, 5, Seconds(2.0));
  REQUIRE(exact);
  expect_exact("throughput X (1/s)", r.throughput, exact->throughput.value());
  expect_exact("response time R (s)", r.latency, exact->response_time.value());
  for (int i = 0; i < 3; ++i)
    expect_exact(("Q tier" + std::to_string(i + 1)).c_str(), r.stations[i].in_station,
                 exact->queue_lengths[i]);
}
