#include "capsim/scenarios/expectations.hpp"

#include <cctype>
#include <cmath>

#include <array>

#include "capsim/core/suggest.hpp"

namespace capsim::scenarios {

const std::vector<MetricInfo>& known_metrics() {
  static const std::vector<MetricInfo> metrics = {
      {"training_time", dims::seconds, "time to train on the recommended configuration"},
      {"cost_per_run", dims::money, "cost of one training run on the recommended configuration"},
      {"gpus", dims::none, "GPUs of the recommended configuration"},
      {"memory_per_gpu", dims::bytes, "memory the recommended configuration needs per GPU"},
      {"memory_headroom", dims::none, "free share of GPU memory: 1 - needed / capacity", true},
      {"mfu", dims::none, "model FLOPs utilization of the recommended configuration", true},
      {"step_time", dims::seconds, "time of one optimizer step"},
      {"gpu_utilization", dims::none, "simulated GPU busy fraction (simulate:)", true},
      {"p99_latency", dims::seconds, "simulated end-to-end p99 latency at the peak rate (inference)"},
      {"ttft_p99", dims::seconds, "simulated p99 time to first token (llm-serving)"},
      {"tpot_p99", dims::seconds, "simulated p99 time per output token (llm-serving)"},
      {"throughput", dims::none, "simulated requests per second (inference, llm-serving)"},
      {"monthly_cost", dims::money / dims::seconds, "the cheapest cost option per month, e.g. '50000 USD/month' (cost:)"},
      {"total_cost", dims::money, "the cheapest cost option over the horizon (cost:)"},
      {"samples_per_second", dims::none, "simulated training throughput (simulate:)"},
  };
  return metrics;
}

namespace {

// The units capsim prints beside these counts ("throughput 12.3 requests/s", "gpus 16 GPUs"):
// a bound may carry them and means the plain count.
const std::vector<std::string>& count_units(std::string_view metric) {
  static const std::vector<std::string> none;
  static const std::vector<std::pair<std::string, std::vector<std::string>>> units = {
      {"gpus", {"GPUs", "GPU", "gpus", "gpu"}},
      // capsim plan prints a serving plan's throughput in requests/s, a training plan's in
      // tokens/s (transformers) or samples/s.
      {"throughput", {"requests/s", "tokens/s", "samples/s"}},
      {"samples_per_second", {"samples/s"}},
  };
  for (const auto& [name, list] : units)
    if (name == metric) return list;
  return none;
}

// The bound without a count unit of the metric's, and the unit ("" when none was written).
std::pair<std::string_view, std::string> without_count_unit(std::string_view metric, std::string_view bound) {
  while (!bound.empty() && bound.back() == ' ') bound.remove_suffix(1);
  for (const auto& unit : count_units(metric))
    if (bound.size() > unit.size() && bound.ends_with(unit)) {
      const std::string_view number = bound.substr(0, bound.size() - unit.size());
      if (number.back() == ' ' || std::isdigit(static_cast<unsigned char>(number.back())) != 0) return {number, unit};
    }
  return {bound, ""};
}

std::string_view op_text(ExpectOp op) {
  switch (op) {
    case ExpectOp::lt: return "<";
    case ExpectOp::le: return "<=";
    case ExpectOp::gt: return ">";
    case ExpectOp::ge: return ">=";
  }
  return "";
}

bool holds(ExpectOp op, double a, double b) {
  switch (op) {
    case ExpectOp::lt: return a < b;
    case ExpectOp::le: return a <= b;
    case ExpectOp::gt: return a > b;
    case ExpectOp::ge: return a >= b;
  }
  return false;
}

std::string trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return std::string(s);
}

// Percentages read better as percentages.
// Money per month reads as money per month, not the rate's USD/h.
std::string monthly_text(const ParsedQuantity& q) {
  return to_string_in(q, std::string(currency_code(q.currency == Currency::none ? Currency::usd : q.currency)) + "/month");
}


// The unit the user wrote after the number of the bound: "90 d" -> "d", "41.05 M USD" ->
// "M USD", "0.3" -> "".
std::string written_unit(std::string_view bound) {
  std::size_t i = 0;
  while (i < bound.size() && bound[i] == ' ') ++i;
  while (i < bound.size() && (std::isdigit(static_cast<unsigned char>(bound[i])) || bound[i] == '.' || bound[i] == '+' ||
                              bound[i] == '-' || bound[i] == 'e' || bound[i] == 'E' || bound[i] == '_' || bound[i] == ','))
    ++i;
  return trim(bound.substr(i));
}

// A value in the unit the user wrote, so that "monthly_cost < 5000 USD/month" reads
// "6849 USD/month", not "9.383 USD/h"; with no unit written, as display_measurement shows it
// (shares of 1 as percentages, counts as the numbers they are).
std::string value_in(const std::string& metric, const ParsedQuantity& q, const std::string& unit) {
  if (unit.empty()) return display_measurement(metric, q);
  for (const auto& u : count_units(metric))
    if (u == unit) return display_measurement(metric, q) + " " + unit;
  if (unit == "%") return to_string(ParsedQuantity{q.value_si * 100, {}, {}}) + " %";
  auto one = parse_quantity("1 " + unit);
  if (!one || !(one->dim == q.dim)) return display_measurement(metric, q);
  // Money and rates always in the user's unit (USD/month stays per month, "M USD" in millions);
  // other quantities too while that reads as a number a person reads (not 0.009761 d for 14 min).
  const double v = std::abs(q.value_si / one->value_si);
  if (q.dim.money != 0 || q.dim.seconds < 0 || v == 0 || (v >= 0.1 && v < 1e5)) return to_string_in(q, unit);
  return display_measurement(metric, q);
}

}  // namespace

std::string display_measurement(const std::string& metric, const ParsedQuantity& value) {
  // Money per month reads as money per month, not the rate's USD/h.
  if (value.dim == dims::money / dims::seconds) return monthly_text(value);
  for (const auto& m : known_metrics())
    if (m.name == metric && m.fraction) return to_string(ParsedQuantity{100 * value.value_si, {}, {}}) + " %";
  return to_string(value);
}

Result<Expectation> parse_expectation(std::string_view text) {
  static constexpr std::array<std::pair<std::string_view, ExpectOp>, 4> ops = {
      {{"<=", ExpectOp::le}, {">=", ExpectOp::ge}, {"<", ExpectOp::lt}, {">", ExpectOp::gt}}};
  for (const auto& [symbol, op] : ops) {
    const std::size_t at = text.find(symbol);
    if (at == std::string_view::npos) continue;
    Expectation e;
    e.text = trim(text);
    e.metric = trim(text.substr(0, at));
    e.op = op;
    const MetricInfo* info = nullptr;
    std::vector<std::string> names;
    for (const auto& m : known_metrics()) {
      names.push_back(m.name);
      if (m.name == e.metric) info = &m;
    }
    if (info == nullptr)
      return Diagnostic{{}, "", "unknown metric '" + e.metric + "'",
                        did_you_mean(e.metric, names).empty() ? "known metrics: training_time, cost_per_run, ..."
                                                              : did_you_mean(e.metric, names)};
    const auto [number, count_unit] = without_count_unit(e.metric, text.substr(at + symbol.size()));
    auto value = parse_quantity(number);
    if (!value) {
      // A unit capsim prints for another metric ("gpus < 8 requests/s") says which it takes.
      std::vector<Diagnostic> errors = value.errors();
      if (!count_units(e.metric).empty() && errors.size() == 1) {
        std::string list;
        for (const auto& u : count_units(e.metric)) list += (list.empty() ? "" : ", ") + u;
        errors.front().hint = "'" + e.metric + "' is a count: write a plain number or one in " + list;
      }
      return errors;
    }
    if (!(value->dim == info->dim))
      return Diagnostic{{}, "", "'" + e.metric + "' is " + describe_dimension(info->dim) + ", got " +
                                    describe_dimension(value->dim),
                        ""};
    e.bound = *value;
    return e;
  }
  return Diagnostic{{}, "", "expected METRIC OP VALUE with OP one of < <= > >=, got '" + std::string(text) + "'",
                    "e.g. 'training_time < 90 d'"};
}

std::optional<Measurement> statistic(const std::string& metric, double value, Dim dim, std::uint64_t samples) {
  if (samples == 0 || !std::isfinite(value)) return std::nullopt;
  return Measurement{metric, {value, dim, Currency::none}};
}

std::vector<ExpectationResult> check_expectations(const std::vector<Expectation>& expectations,
                                                  const std::vector<Measurement>& measured,
                                                  const std::vector<Unmeasured>& unmeasured) {
  std::vector<ExpectationResult> out;
  for (const auto& e : expectations) {
    ExpectationResult r{e, std::nullopt, false, ""};
    for (const auto& m : measured)
      if (m.metric == e.metric && std::isfinite(m.value.value_si)) r.measured = m.value;
    std::string reason;
    for (const auto& u : unmeasured)
      if (u.metric == e.metric) reason = u.reason;
    if (!reason.empty()) r.measured.reset();
    if (!r.measured) {
      r.message = e.metric + " was not measured by this run" + (reason.empty() ? "" : ": " + reason) + " (" +
                  e.text + ")";
    } else {
      r.passed = holds(e.op, r.measured->value_si, e.bound.value_si);
      const std::size_t op_at = e.text.find(op_text(e.op));
      const std::string unit =
          op_at == std::string::npos ? std::string() : written_unit(std::string_view(e.text).substr(op_at + op_text(e.op).size()));
      r.message = e.metric + " = " + value_in(e.metric, *r.measured, unit) + (r.passed ? ", meets " : ", fails ") +
                  std::string(op_text(e.op)) + " " + value_in(e.metric, e.bound, unit);
    }
    out.push_back(r);
  }
  return out;
}

}  // namespace capsim::scenarios
