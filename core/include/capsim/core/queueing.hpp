// Exact results of queueing theory: the analytic companions of the DES kernel, used to
// check it and to rank configurations without simulating.
//
// Every function returns a Result: invalid input (non-positive rates, c < 1, ...) and
// unstable queues (utilization >= 1, where no steady state exists) are errors with a
// message saying which, never a NaN or an infinity.
// Notation (Kleinrock, "Queueing Systems", vol. 1, 1975): lambda arrival rate, mu service
// rate per server, c servers, rho = lambda / (c mu); Lq and L the mean numbers waiting and
// in the system, Wq and W the mean waiting and sojourn times (Little: L = lambda W).
// Thread-safety: pure functions.
#pragma once

#include <vector>

#include <Eigen/Core>

#include "capsim/core/result.hpp"
#include "capsim/core/units.hpp"

namespace capsim::queueing {

// Events (arrivals, completions) per second.
using Rate = Quantity<dims::none / dims::seconds>;

struct QueueMetrics {
  double utilization = 0.0;       // rho
  double wait_probability = 0.0;  // P(an arrival waits)
  double queue_length = 0.0;      // Lq
  double in_system = 0.0;         // L
  Seconds waiting_time{0.0};      // Wq
  Seconds sojourn_time{0.0};      // W
};

// Erlang C: the probability that an arrival waits in an M/M/c queue with offered load
// a = lambda / mu Erlangs. Computed through the Erlang B recursion
// B(k) = a B(k-1) / (k + a B(k-1)), C = c B / (c - a (1 - B)), which is stable for large c.
// Errors: servers < 1, a <= 0, a >= servers (unstable).
Result<double> erlang_c(int servers, double offered_load);

// M/M/c: Lq = C rho / (1 - rho), Wq = Lq / lambda, W = Wq + 1/mu, L = lambda W.
Result<QueueMetrics> mmc(Rate arrival, Rate service, int servers);
// M/M/1: L = rho / (1 - rho), W = 1 / (mu - lambda).
Result<QueueMetrics> mm1(Rate arrival, Rate service);
// M/G/1 by Pollaczek–Khinchine: Wq = lambda E[S^2] / (2 (1 - rho)), E[S^2] = E[S]^2 (1 + cv^2)
// with cv the coefficient of variation of the service time (0 deterministic, 1 exponential).
Result<QueueMetrics> mg1(Rate arrival, Seconds mean_service, double service_cv);
// M/D/1: M/G/1 with cv = 0, Wq = rho / (2 mu (1 - rho)).
Result<QueueMetrics> md1(Rate arrival, Seconds service);

// A tandem of M/M/1 stations fed by Poisson arrivals (a Jackson network, Jackson 1957):
// each station is an independent M/M/1 at the same arrival rate; W and L add up.
struct TandemMetrics {
  std::vector<QueueMetrics> stations;
  double in_system = 0.0;       // L of the whole line
  Seconds sojourn_time{0.0};    // W of the whole line
};
Result<TandemMetrics> jackson_tandem(Rate arrival, const std::vector<Rate>& service_rates);

// Exact mean value analysis of a closed, single-class, product-form network of
// load-independent single-server stations plus a delay (think) station
// (Reiser & Lavenberg, J. ACM 27(2), 1980):
//   R_k(n) = D_k (1 + Q_k(n-1)),  X(n) = n / (Z + sum_k R_k(n)),  Q_k(n) = X(n) R_k(n).
// demands: D_k = visits_k * mean service time_k in seconds (> 0), population N >= 1,
// think_time Z >= 0.
struct MvaResult {
  Rate throughput{0.0};                // X(N), items per second
  Seconds response_time{0.0};          // sum_k R_k(N), excluding the think time
  Eigen::VectorXd residence_times;     // R_k(N), seconds
  Eigen::VectorXd queue_lengths;       // Q_k(N): mean items at station k (waiting + served)
  Eigen::VectorXd utilizations;        // U_k = X D_k
};
Result<MvaResult> mva(const Eigen::VectorXd& demands_seconds, int population,
                      Seconds think_time = Seconds(0.0));

}  // namespace capsim::queueing
