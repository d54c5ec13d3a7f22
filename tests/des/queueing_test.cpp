// The analytic companions, against hand-computed values.
#include <doctest/doctest.h>

#include "capsim/core/queueing.hpp"

using namespace capsim;
using namespace capsim::queueing;

TEST_CASE("M/M/1 at rho 0.8 matches the textbook") {
  auto m = mm1(Rate(0.8), Rate(1.0));
  REQUIRE(m);
  // L = rho / (1 - rho) = 4, W = 1 / (mu - lambda) = 5 s, Lq = rho^2 / (1 - rho) = 3.2.
  CHECK(m->utilization == doctest::Approx(0.8));
  CHECK(m->in_system == doctest::Approx(4.0));
  CHECK(m->sojourn_time.value() == doctest::Approx(5.0));
  CHECK(m->queue_length == doctest::Approx(3.2));
  CHECK(m->waiting_time.value() == doctest::Approx(4.0));
  CHECK(m->wait_probability == doctest::Approx(0.8));
}

TEST_CASE("Erlang C for four servers") {
  // a = 3.2 Erlang, c = 4: sum_{k<4} a^k/k! = 1 + 3.2 + 5.12 + 5.461333 = 14.781333;
  // a^4/4! * c/(c-a) = 4.369067 * 5 = 21.845333; C = 21.845333 / (14.781333 + 21.845333).
  auto c = erlang_c(4, 3.2);
  REQUIRE(c);
  CHECK(*c == doctest::Approx(21.845333 / 36.626667).epsilon(1e-6));
  auto m = mmc(Rate(3.2), Rate(1.0), 4);
  REQUIRE(m);
  // Lq = C rho / (1 - rho) with rho = 0.8.
  CHECK(m->queue_length == doctest::Approx(*c * 4.0));
  CHECK(m->sojourn_time.value() == doctest::Approx(*c * 4.0 / 3.2 + 1.0));
  // One server: Erlang C is rho.
  CHECK(*erlang_c(1, 0.5) == doctest::Approx(0.5));
}

TEST_CASE("Pollaczek-Khinchine and M/D/1") {
  // M/D/1, rho = 0.8, D = 1 s: Wq = rho D / (2 (1 - rho)) = 2 s, W = 3 s.
  auto d = md1(Rate(0.8), Seconds(1.0));
  REQUIRE(d);
  CHECK(d->waiting_time.value() == doctest::Approx(2.0));
  CHECK(d->sojourn_time.value() == doctest::Approx(3.0));
  CHECK(d->in_system == doctest::Approx(2.4));
  // M/G/1 with cv = 1 is M/M/1.
  auto g = mg1(Rate(0.8), Seconds(1.0), 1.0);
  REQUIRE(g);
  CHECK(g->sojourn_time.value() == doctest::Approx(5.0));
}

TEST_CASE("Jackson tandem adds the stations") {
  auto t = jackson_tandem(Rate(0.8), {Rate(1.0), Rate(1.25), Rate(2.0)});
  REQUIRE(t);
  // W = 1/0.2 + 1/0.45 + 1/1.2 = 5 + 2.2222 + 0.8333.
  CHECK(t->sojourn_time.value() == doctest::Approx(5.0 + 1 / 0.45 + 1 / 1.2));
  CHECK(t->in_system == doctest::Approx(0.8 * (5.0 + 1 / 0.45 + 1 / 1.2)));
}

TEST_CASE("MVA by hand for two customers") {
  Eigen::VectorXd d(2);
  d << 1.0, 0.5;
  auto r = mva(d, 2, Seconds(1.0));
  REQUIRE(r);
  // n = 1: R = (1, 0.5), X = 1 / (1 + 1.5) = 0.4, Q = (0.4, 0.2).
  // n = 2: R = (1.4, 0.6), X = 2 / (1 + 2.0) = 2/3, Q = (0.9333, 0.4).
  CHECK(r->throughput.value() == doctest::Approx(2.0 / 3.0));
  CHECK(r->response_time.value() == doctest::Approx(2.0));
  CHECK(r->queue_lengths[0] == doctest::Approx(1.4 * 2.0 / 3.0));
  CHECK(r->queue_lengths[1] == doctest::Approx(0.4));
  CHECK(r->utilizations[0] == doctest::Approx(2.0 / 3.0));
  // Large N: the bottleneck saturates, X -> 1 / max D.
  auto big = mva(d, 200, Seconds(0.0));
  REQUIRE(big);
  CHECK(big->throughput.value() == doctest::Approx(1.0).epsilon(1e-6));
}

TEST_CASE("queueing errors are clear") {
  auto unstable = mm1(Rate(1.0), Rate(1.0));
  REQUIRE_FALSE(unstable);
  CHECK(format_diagnostics(unstable.errors()) ==
        "error: queueing: the queue is unstable: utilization rho = 1 >= 1, so it grows without "
        "bound and has no steady state (lower the arrival rate or add service capacity)\n");
  auto no_servers = mmc(Rate(1.0), Rate(2.0), 0);
  REQUIRE_FALSE(no_servers);
  CHECK(no_servers.errors()[0].message == "servers must be >= 1 (got 0)");
  auto negative = mg1(Rate(-1.0), Seconds(1.0), 0.5);
  REQUIRE_FALSE(negative);
  CHECK(negative.errors()[0].message == "arrival rate must be > 0 per second (got -1)");
  auto tandem = jackson_tandem(Rate(1.5), {Rate(2.0), Rate(1.0)});
  REQUIRE_FALSE(tandem);
  CHECK(tandem.errors()[0].message.rfind("station 1: the queue is unstable", 0) == 0);
  Eigen::VectorXd d(1);
  d << 0.0;
  auto bad = mva(d, 3);
  REQUIRE_FALSE(bad);
  CHECK(bad.errors()[0].message == "the service demand of station 0 must be > 0 s (got 0 s)");
}
