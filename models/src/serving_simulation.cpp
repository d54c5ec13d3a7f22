// The analytic queueing estimate and the request-level simulation of a deployment plan.
#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <utility>

#include "capsim/core/queueing.hpp"
#include "capsim/models/serving.hpp"

namespace capsim::models {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

Diagnostic invalid(const std::string& key, const std::string& message) {
  return Diagnostic{{}, key, message, ""};
}

// The effective batch: the smallest b in [1, B] with rate S(b) / c <= b (a free server takes
// what arrived during the previous service). S(b)/b falls with b, so rate S(b) / (c b) - 1
// changes sign once and bisection finds it; B when the stage is saturated.
double effective_batch(const PlannedStage& s, double rate) {
  const auto excess = [&](double b) { return rate * s.request_curve.latency(b).value() / s.servers - b; };
  const double big = s.max_batch_requests;
  if (excess(1.0) <= 0) return 1.0;
  if (excess(big) > 0) return big;
  double lo = 1.0, hi = big;
  for (int i = 0; i < 60; ++i) {
    const double mid = 0.5 * (lo + hi);
    (excess(mid) > 0 ? lo : hi) = mid;
  }
  return hi;
}

// Waiting of batches arriving at `batch_rate` with deterministic service `service` on c
// servers: the mean and the waiting probability. M/D/1 by Pollaczek-Khinchine (exact) for
// one server; Allen-Cunneen otherwise.
std::pair<double, double> batch_wait(int servers, double batch_rate, double service) {
  if (servers == 1) {
    auto md1 = queueing::mg1(queueing::Rate(batch_rate), Seconds(service), 0.0);
    return {md1->waiting_time.value(), md1->utilization};
  }
  // Allen-Cunneen: the M/M/c wait scaled by (ca^2 + cs^2) / 2 with ca^2 = 1, cs^2 = 0.
  auto c = queueing::erlang_c(servers, batch_rate * service);
  const double p = c ? *c : 1.0;
  return {p / (servers / service - batch_rate) * 0.5, p};
}

StageEstimate estimate_stage(const PlannedStage& s, double rate) {
  StageEstimate e;
  e.name = s.name;
  const int big = s.max_batch_requests;
  const double s_big = s.request_curve.latency(big).value();
  e.capacity = s.servers * big / s_big;
  if (rate >= e.capacity) {
    e.stable = false;
    e.utilization = rate / e.capacity;
    e.effective_batch = big;
    e.service = Seconds(s_big);
    e.mean_wait = e.mean_latency = e.p99_latency = Seconds(kInfinity);
    return e;
  }
  // Batches held open for up to max_queue_delay (or until B requests are there): the first
  // request waits the whole window, the last none.
  const double window = std::min(s.max_queue_delay.value(), big > 1 ? (big - 1) / rate : 0.0);
  const double b = effective_batch(s, rate);
  const double service = s.request_curve.latency(b).value();
  e.effective_batch = b;
  e.service = Seconds(service);
  double wq = 0, wait_probability = 0, extra = 0, extra99 = 0;
  if (b <= 1.0) {
    // Servers keep up with single requests: a queue of requests.
    e.utilization = rate * service / s.servers;
    std::tie(wq, wait_probability) = batch_wait(s.servers, rate, service);
  } else {
    // Servers are always busy and the batch grows with the load: a request waits for the
    // batch in service to end (half a batch time on average, a whole one at worst), plus the
    // queueing of full batches, which grows without bound as the load nears capacity.
    e.utilization = rate / e.capacity;
    std::tie(wq, wait_probability) = batch_wait(s.servers, rate / big, s_big);
    extra = service / 2;
    extra99 = service;
  }
  const double wq99 = wait_probability > 0.01 ? wq / wait_probability * std::log(wait_probability / 0.01) : 0.0;
  e.mean_wait = Seconds(wq + extra + window / 2);
  e.mean_latency = Seconds(wq + extra + window / 2 + service);
  e.p99_latency = Seconds(wq99 + extra99 + window + service);
  return e;
}

Status check_arrivals(const ArrivalSpec& a) {
  Status e;
  switch (a.kind) {
    case ArrivalSpec::Kind::poisson:
      if (!(a.rate.value() > 0)) e.push_back(invalid("arrivals.rate", "must be greater than zero"));
      break;
    case ArrivalSpec::Kind::diurnal:
      if (!(a.rate.value() > 0)) e.push_back(invalid("arrivals.rate", "must be greater than zero"));
      if (*std::max_element(a.hourly.begin(), a.hourly.end()) <= 0)
        e.push_back(invalid("arrivals.hourly", "at least one hour needs a multiplier above zero"));
      break;
    case ArrivalSpec::Kind::trace:
      if (a.trace.size() < 2) e.push_back(invalid("arrivals.trace", "a trace needs at least two arrivals"));
      break;
  }
  return e;
}

}  // namespace

des::Rate ArrivalSpec::peak_rate() const {
  switch (kind) {
    case Kind::poisson: return rate;
    case Kind::diurnal: return rate * *std::max_element(hourly.begin(), hourly.end());
    case Kind::trace: {
      if (trace.size() < 2) return des::Rate(0.0);
      const double span = trace.back().value() - trace.front().value();
      return des::Rate(span > 0 ? (trace.size() - 1) / span : 0.0);
    }
  }
  return rate;
}

ServingEstimate estimate_serving(const DeploymentPlan& plan, double rate) {
  ServingEstimate out;
  out.arrival_rate = rate;
  out.capacity = kInfinity;
  for (const auto& s : plan.stages) {
    auto e = estimate_stage(s, rate);
    if (e.capacity < out.capacity) {
      out.capacity = e.capacity;
      out.constraint = s.name;
    }
    out.stable = out.stable && e.stable;
    out.mean_latency += e.mean_latency;
    out.p99_latency += e.p99_latency;
    out.stages.push_back(std::move(e));
  }
  return out;
}

Result<des::Pipeline> build_serving_pipeline(const DeploymentPlan& plan, const ArrivalSpec& arrivals) {
  auto errors = check_arrivals(arrivals);
  if (plan.stages.empty()) errors.push_back(invalid("plan", "the deployment plan has no stages"));
  if (!errors.empty()) return errors;
  des::Pipeline p;
  des::NodeId prev;
  switch (arrivals.kind) {
    case ArrivalSpec::Kind::poisson: prev = p.add_source(des::SourceSpec::poisson("requests", arrivals.rate)); break;
    case ArrivalSpec::Kind::diurnal:
      prev = p.add_source(des::SourceSpec::diurnal("requests", arrivals.rate, arrivals.hourly));
      break;
    case ArrivalSpec::Kind::trace: prev = p.add_source(des::SourceSpec::trace("requests", arrivals.trace)); break;
  }
  for (const auto& s : plan.stages) {
    des::StationSpec st;
    st.name = s.name;
    st.servers = s.servers;
    st.service = s.request_curve.service_time();
    st.max_batch = s.max_batch_requests;
    st.max_queue_delay = s.max_queue_delay;
    const auto id = p.add_station(std::move(st));
    p.connect(prev, id);
    prev = id;
  }
  p.connect(prev, p.add_sink({"done"}));
  if (auto v = p.validate(); !v.empty()) return v;
  return p;
}

Result<ServingReport> simulate_serving(const DeploymentPlan& plan, const ArrivalSpec& arrivals,
                                       const des::RunOptions& run, ProgressObserver* progress) {
  auto pipeline = build_serving_pipeline(plan, arrivals);
  if (!pipeline) return pipeline.errors();
  auto sim = des::simulate(*pipeline, run, progress);
  if (!sim) return sim.errors();
  ServingReport r;
  r.plan = plan;
  r.analytic = estimate_serving(plan, arrivals.peak_rate().value());
  r.simulation = std::move(sim).value();
  r.simulated_throughput = r.simulation.throughput.mean;
  r.latency = r.simulation.latency_percentiles;
  for (const auto& st : r.simulation.stations) r.stage_utilization.push_back(st.utilization.mean);
  return r;
}

}  // namespace capsim::models
