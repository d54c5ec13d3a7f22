// Throughput against the offered request rate for a serving scenario's deployment, and the
// SLO knee: the highest rate at which the deployment still meets its latency SLO. LLM
// serving: each point is a short request-level simulation (models::simulate_llm_serving,
// the simulation the plan itself runs, over a shorter window); an inference graph: the
// analytic queueing estimate (models::estimate_serving) at each rate.
//
// No Qt here. The curve depends on everything but the request rate, so the window keeps it
// across request-rate what-ifs (ServingCurveCache) and only moves the marker.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "capsim/core/result.hpp"
#include "capsim/hardware/catalog.hpp"
#include "capsim/scenarios/scenario.hpp"

namespace capsim::gui {

struct RatePoint {
  double rate = 0;        // offered, requests/s (whole deployment)
  double throughput = 0;  // completed, requests/s
  // The latencies the SLO bounds, seconds; none: not measured (no request completed, or
  // unbounded in the analytic estimate).
  std::optional<double> ttft_p99, tpot_p99, p99;
  bool meets_slo = false;
};

struct ServingCurve {
  std::vector<RatePoint> points;  // by rate, ascending
  double capacity = 0;            // requests/s, the analytic estimate's (whole deployment)
  std::optional<double> knee;     // the highest rate of the sweep that meets the SLO
  std::string basis;              // "simulated, 120 s per point" or "analytic"
};

// Errors: a scenario that is not an inference deployment, or whose estimate fails.
Result<ServingCurve> serving_curve(const scenarios::Scenario& s, const hardware::Catalog& catalog);

// The scenario with the request rate taken out: two scenarios with the same key have the
// same curve.
std::string serving_curve_key(const scenarios::Scenario& s);

}  // namespace capsim::gui
