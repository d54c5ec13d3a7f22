// `expect:` in a scenario: what must hold for the plan to pass, checked by `capsim run
// --check` (exit 1 when one fails). Each expectation is "METRIC OP VALUE" with a unit:
//
//   expect:
//     - training_time < 90 d
//     - cost_per_run < 50000000 USD
//     - memory_headroom > 10 %
//
// The metrics a run measures are listed by `known_metrics()` with their dimension; the
// loader rejects unknown metrics (with a suggestion) and values in the wrong unit.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "capsim/core/result.hpp"
#include "capsim/core/units.hpp"

namespace capsim::scenarios {

enum class ExpectOp { lt, le, gt, ge };

struct Expectation {
  std::string text;    // as written
  std::string metric;  // "training_time"
  ExpectOp op = ExpectOp::lt;
  ParsedQuantity bound;
  SourceLocation where;
};

struct MetricInfo {
  std::string name;
  Dim dim;
  std::string help;
  bool fraction = false;  // a share of 1, shown as a percentage
};
// How a measured value of `metric` reads: "35.31 %", "60.7 d", "41050956 USD".
std::string display_measurement(const std::string& metric, const ParsedQuantity& value);
const std::vector<MetricInfo>& known_metrics();

// Parses "METRIC OP VALUE"; errors name the metric or the unit problem.
Result<Expectation> parse_expectation(std::string_view text);

// A measured value for every metric the run produced. A statistic of observations (a
// percentile of request latencies) exists only when there was at least one observation:
// build those with `statistic()`, which gives none for zero samples.
struct Measurement {
  std::string metric;
  ParsedQuantity value;
};

// A metric the run would have produced but could not, and why ("no request completed").
struct Unmeasured {
  std::string metric;
  std::string reason;
};

// `value` as a measurement of `metric` when it is a statistic of `samples` >= 1 finite
// observations; otherwise none, and the caller records an Unmeasured. A p99 of nothing is
// not 0 s.
std::optional<Measurement> statistic(const std::string& metric, double value, Dim dim, std::uint64_t samples);

struct ExpectationResult {
  Expectation expectation;
  std::optional<ParsedQuantity> measured;  // none: the run does not measure that metric
  bool passed = false;
  std::string message;  // "training_time = 61 d < 90 d" or why it failed
};

// An expectation on a metric that was not measured (absent, in `unmeasured`, or not a finite
// number) fails with the reason: never a pass on a value nobody observed.
std::vector<ExpectationResult> check_expectations(const std::vector<Expectation>& expectations,
                                                  const std::vector<Measurement>& measured,
                                                  const std::vector<Unmeasured>& unmeasured = {});

}  // namespace capsim::scenarios
