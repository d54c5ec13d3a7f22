// The analytic queueing estimate and the request-level simulation of a deployment plan.
#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <utility>

#include "capsim/core/queueing.hpp"
#include "capsim/core/text.hpp"
#include "capsim/models/serving.hpp"

namespace capsim::models {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

Diagnostic invalid(const std::string& key, const std::string& message) {
  return Diagnostic{{}, key, message, ""};
}

// The time a server takes from taking one batch to taking the next while it is always
// busy: the batch's service, or the batching window when that is longer and the batch is
// not full (the dynamic batcher waits until the oldest request has waited max_queue_delay,
// and the oldest arrived as the previous batch started).
double cycle_time(const PlannedStage& s, double b) {
  const double service = s.request_curve.latency(b).value();
  return b < s.max_batch_requests ? std::max(service, s.max_queue_delay.value()) : service;
}

// The batch actually formed: the smallest b in [1, B] with rate cycle(b) / c <= b (a free
// server takes what arrived during its previous cycle). cycle(b)/b falls with b, so
// rate cycle(b) / (c b) - 1 changes sign once and bisection finds it; B when the stage is
// saturated.
double effective_batch(const PlannedStage& s, double rate) {
  const auto excess = [&](double b) { return rate * cycle_time(s, b) / s.servers - b; };
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

// Waiting of batches arriving at `batch_rate` with inter-arrival variability ca2 (the
// squared coefficient of variation: 1 for Poisson, 1/b for batches of b Poisson arrivals,
// whose gaps are Erlang-b) on c servers of deterministic service `service`: Allen-Cunneen's
// GI/G/c approximation Wq = C(c, a) / (c mu - lambda) x (ca2 + cs2) / 2 with cs2 = 0
// (Allen, "Probability, Statistics and Queueing Theory", 2nd ed., 1990; Erlang C from
// core/queueing.hpp). For c = 1 and ca2 = 1 it is Pollaczek-Khinchine's M/D/1, exact.
// Returns the mean wait and the probability of waiting.
std::pair<double, double> batch_wait(int servers, double batch_rate, double service, double ca2) {
  if (!(batch_rate > 0) || !(service > 0)) return {0.0, 0.0};
  auto c = queueing::erlang_c(servers, batch_rate * service);
  const double p = c ? *c : 1.0;
  return {p / (servers / service - batch_rate) * (ca2 + 0.0) / 2, p};
}

// p99 of a wait that is zero with probability 1 - C and exponential beyond (exact for M/M/c).
double wait_p99(double mean, double probability) {
  return probability > 0.01 && mean > 0 ? mean / probability * std::log(probability / 0.01) : 0.0;
}

StageEstimate estimate_stage(const PlannedStage& s, double rate) {
  StageEstimate e;
  e.name = s.name;
  const int big = s.max_batch_requests;
  const int c = s.servers;
  const double s_big = s.request_curve.latency(big).value();
  e.capacity = c * big / s_big;
  if (rate >= e.capacity) {
    e.stable = false;
    e.utilization = rate / e.capacity;
    e.effective_batch = big;
    e.service = Seconds(s_big);
    e.mean_wait = e.mean_latency = e.p99_latency = Seconds(kInfinity);
    return e;
  }
  if (big == 1) {
    // No batching: a queue of requests with deterministic service, M/D/c.
    const double service = s.request_curve.latency(1).value();
    const auto [wq, p] = batch_wait(c, rate, service, 1.0);
    e.effective_batch = 1;
    e.service = Seconds(service);
    e.utilization = rate * service / c;
    e.mean_wait = Seconds(wq);
    e.mean_latency = Seconds(wq + service);
    e.p99_latency = Seconds(wait_p99(wq, p) + service);
    return e;
  }
  // Dynamic batching: a free server takes what waits (up to B). The batch actually formed:
  // b from the cycle fixed point when servers are always busy; at light load, what arrives
  // in the window w = min(D, (B - 1) / rate) that a request finding a server free opens.
  const double delay = s.max_queue_delay.value();
  const double fixed = effective_batch(s, rate);
  const double w = std::min(delay, (big - 1) / rate);
  const double k = fixed > 1.0 ? fixed : std::min<double>(big, 1.0 + rate * w);
  const double service = s.request_curve.latency(k).value();
  const double cycle = cycle_time(s, k);
  e.effective_batch = k;
  e.service = Seconds(service);
  e.utilization = rate * service / (c * k);  // from the batch actually formed
  // A request finds every server busy with probability P (Erlang C at that utilization; 1 in
  // the busy regime): it waits for the first of the c staggered cycles to end, uniform over
  // cycle / c (cycle / (c + 1) on average, cycle (1 - (0.01 / P)^(1/c)) at p99), and is taken
  // with what else waits. Otherwise it opens the window: the first of a batch waits w, the
  // last none. Near capacity full batches queue: batches of B Poisson arrivals (Erlang gaps,
  // ca2 = 1 / B) on c servers of S(B).
  double busy = 1.0;
  if (fixed <= 1.0 && e.utilization < 1) {
    auto erlang = queueing::erlang_c(c, c * e.utilization);
    busy = erlang ? *erlang : 1.0;
  }
  const auto [wq, p] = batch_wait(c, rate / big, s_big, 1.0 / big);
  // Batches vary: a cycle collects a Poisson number of requests (mean k), and a long cycle
  // makes the next batch large, which makes that cycle long. The mean wait is length-biased,
  // E[T^2] / (2 E[T]) with Var T = S'(k)^2 k; the p99 request waits out and joins batches
  // at the Poisson p99, k + 2.33 sqrt(k) (at most B).
  const double slope = (s.request_curve.latency(std::min<double>(big, k + 1)).value() -
                        s.request_curve.latency(std::max(1.0, k - 1)).value()) /
                       std::max(1.0, std::min<double>(big, k + 1) - std::max(1.0, k - 1));
  const double variance = fixed > 1.0 ? slope * slope * k : 0.0;
  const double k99 = fixed > 1.0 ? std::min<double>(big, k + 2.33 * std::sqrt(k)) : k;
  const double cycle99 = cycle_time(s, k99);
  const double busy_mean = busy * (cycle + variance / cycle) / (c + 1);
  const double busy_p99 = busy > 0.01 ? cycle99 * (1 - std::pow(0.01 / busy, 1.0 / c)) : 0.0;
  const double window_mean = (1 - busy) * w / 2;
  const double window_p99 = 1 - busy > 0.01 ? w : 0.0;
  e.mean_wait = Seconds(busy_mean + window_mean + wq);
  e.mean_latency = e.mean_wait + Seconds(service);
  e.p99_latency = Seconds(std::max(busy_p99, window_p99) + wait_p99(wq, p) + s.request_curve.latency(k99).value());
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

// Why the analytic p99 and the simulated one disagree, when they do.
std::string analytic_note(const ServingReport& r, const ArrivalSpec& arrivals) {
  const double simulated = r.latency.p99.mean;
  const double analytic = r.analytic.p99_latency.value();
  if (!r.analytic.stable)
    return "the analytic estimate puts the peak rate at or above capacity (" + significant(r.analytic.capacity) +
           " requests/s): it has no finite p99";
  if (!(simulated > 0) || !std::isfinite(simulated) || !std::isfinite(analytic)) return "";
  const double off = analytic / simulated - 1;
  if (std::abs(off) <= kAnalyticAgreement) return "";
  std::string why;
  if (arrivals.kind == ArrivalSpec::Kind::diurnal)
    why = "the simulation follows the 24-hour profile, the estimate assumes Poisson arrivals at the peak hour's rate "
          "all day";
  else if (arrivals.kind == ArrivalSpec::Kind::trace)
    why = "the simulation replays the trace, the estimate assumes Poisson arrivals at its mean rate";
  if (why.empty()) {
    const StageEstimate* busiest = nullptr;
    for (const auto& e : r.analytic.stages)
      if (busiest == nullptr || r.analytic.arrival_rate / e.capacity > r.analytic.arrival_rate / busiest->capacity)
        busiest = &e;
    if (busiest != nullptr && r.analytic.arrival_rate / busiest->capacity > 0.9)
      why = "stage '" + busiest->name + "' runs at " + significant(100 * r.analytic.arrival_rate / busiest->capacity) +
            " % of its capacity, where queueing approximations are least accurate";
  }
  if (why.empty())
    why = "the batch-service approximation takes one batch size per load; the batches this deployment forms vary "
          "more than it assumes";
  return "the analytic p99 is " + significant(std::abs(off) * 100) + " % " + (off > 0 ? "above" : "below") +
         " the simulated one: " + why;
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
    out.stages.push_back(std::move(e));
  }
  // End to end: the stages' means add; their tails (p99 - mean) combine as independent
  // spreads, root-sum-square (one stage: its own p99).
  double spread = 0;
  for (const auto& e : out.stages) {
    const double tail = e.p99_latency.value() - e.mean_latency.value();
    spread += tail * tail;
  }
  out.p99_latency = out.stable ? out.mean_latency + Seconds(std::sqrt(spread)) : Seconds(kInfinity);
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
  r.analytic_note = analytic_note(r, arrivals);
  return r;
}

}  // namespace capsim::models
