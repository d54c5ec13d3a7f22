#include "capsim/core/queueing.hpp"
#include "capsim/core/text.hpp"

#include <cmath>
#include <cstdio>
#include <string>

namespace capsim::queueing {

namespace {

std::string number(double v) {
  return capsim::significant(v, 6);
}

Diagnostic error(const std::string& key, const std::string& message, const std::string& hint = {}) {
  return Diagnostic{{}, key, message, hint};
}

bool positive(double x) { return x > 0.0 && std::isfinite(x); }

Diagnostic unstable(double rho) {
  return error("queueing", "the queue is unstable: utilization rho = " + number(rho) +
                               " >= 1, so it grows without bound and has no steady state",
               "lower the arrival rate or add service capacity");
}

}  // namespace

Result<double> erlang_c(int servers, double offered_load) {
  if (servers < 1) return error("queueing", "servers must be >= 1 (got " + std::to_string(servers) + ")");
  if (!positive(offered_load))
    return error("queueing", "offered load must be > 0 Erlang (got " + number(offered_load) + ")");
  if (offered_load >= servers) return unstable(offered_load / servers);
  double b = 1.0;  // Erlang B with 0 servers
  for (int k = 1; k <= servers; ++k) b = offered_load * b / (k + offered_load * b);
  return servers * b / (servers - offered_load * (1.0 - b));
}

Result<QueueMetrics> mmc(Rate arrival, Rate service, int servers) {
  const double lambda = arrival.value(), mu = service.value();
  if (!positive(lambda))
    return error("queueing", "arrival rate must be > 0 per second (got " + number(lambda) + ")");
  if (!positive(mu))
    return error("queueing", "service rate must be > 0 per second (got " + number(mu) + ")");
  auto c_wait = erlang_c(servers, lambda / mu);
  if (!c_wait) return c_wait.errors();
  QueueMetrics m;
  m.utilization = lambda / (servers * mu);
  m.wait_probability = *c_wait;
  m.queue_length = m.wait_probability * m.utilization / (1.0 - m.utilization);
  m.waiting_time = Seconds(m.queue_length / lambda);
  m.sojourn_time = Seconds(m.waiting_time.value() + 1.0 / mu);
  m.in_system = lambda * m.sojourn_time.value();
  return m;
}

Result<QueueMetrics> mm1(Rate arrival, Rate service) { return mmc(arrival, service, 1); }

Result<QueueMetrics> mg1(Rate arrival, Seconds mean_service, double service_cv) {
  const double lambda = arrival.value(), s = mean_service.value();
  if (!positive(lambda))
    return error("queueing", "arrival rate must be > 0 per second (got " + number(lambda) + ")");
  if (!positive(s))
    return error("queueing", "mean service time must be > 0 s (got " + number(s) + " s)");
  if (!(service_cv >= 0.0) || !std::isfinite(service_cv))
    return error("queueing", "service time coefficient of variation must be >= 0 (got " +
                                 number(service_cv) + ")");
  const double rho = lambda * s;
  if (rho >= 1.0) return unstable(rho);
  const double second_moment = s * s * (1.0 + service_cv * service_cv);
  QueueMetrics m;
  m.utilization = rho;
  m.wait_probability = rho;  // PASTA: an arrival waits when the server is busy
  m.waiting_time = Seconds(lambda * second_moment / (2.0 * (1.0 - rho)));
  m.queue_length = lambda * m.waiting_time.value();
  m.sojourn_time = Seconds(m.waiting_time.value() + s);
  m.in_system = lambda * m.sojourn_time.value();
  return m;
}

Result<QueueMetrics> md1(Rate arrival, Seconds service) { return mg1(arrival, service, 0.0); }

Result<TandemMetrics> jackson_tandem(Rate arrival, const std::vector<Rate>& service_rates) {
  if (service_rates.empty()) return error("queueing", "a tandem needs at least one station");
  TandemMetrics t;
  std::vector<Diagnostic> errors;
  for (std::size_t i = 0; i < service_rates.size(); ++i) {
    auto m = mm1(arrival, service_rates[i]);
    if (!m) {
      for (Diagnostic d : m.errors()) {
        d.message = "station " + std::to_string(i) + ": " + d.message;
        errors.push_back(std::move(d));
      }
      continue;
    }
    t.stations.push_back(*m);
    t.in_system += m->in_system;
    t.sojourn_time += m->sojourn_time;
  }
  if (!errors.empty()) return errors;
  return t;
}

Result<MvaResult> mva(const Eigen::VectorXd& demands_seconds, int population, Seconds think_time) {
  const Eigen::Index k = demands_seconds.size();
  if (k == 0) return error("queueing", "mean value analysis needs at least one station");
  for (Eigen::Index i = 0; i < k; ++i)
    if (!positive(demands_seconds[i]))
      return error("queueing", "the service demand of station " + std::to_string(i) +
                                   " must be > 0 s (got " + number(demands_seconds[i]) + " s)");
  if (population < 1)
    return error("queueing", "population must be >= 1 (got " + std::to_string(population) + ")");
  const double z = think_time.value();
  if (!(z >= 0.0) || !std::isfinite(z))
    return error("queueing", "think time must be >= 0 s (got " + number(z) + " s)");

  Eigen::VectorXd queue = Eigen::VectorXd::Zero(k);
  Eigen::VectorXd residence(k);
  double x = 0.0;
  for (int n = 1; n <= population; ++n) {
    residence = demands_seconds.array() * (1.0 + queue.array());
    x = n / (z + residence.sum());
    queue = x * residence;
  }
  MvaResult r;
  r.throughput = Rate(x);
  r.response_time = Seconds(residence.sum());
  r.residence_times = residence;
  r.queue_lengths = queue;
  r.utilizations = x * demands_seconds;
  return r;
}

}  // namespace capsim::queueing
