#include "capsim/models/cost.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

namespace capsim::models {

UtilizationProfile always_on() { return {"24/7", 1.0}; }

UtilizationProfile business_hours(double hours_per_day, double days_per_week) {
  return {"business hours (" + to_string(ParsedQuantity{hours_per_day, {}, {}}) + " h x " +
              to_string(ParsedQuantity{days_per_week, {}, {}}) + " d a week)",
          hours_per_day * days_per_week / (24.0 * 7.0)};
}

UtilizationProfile campaigns(double weeks_on, double period_weeks) {
  return {"campaigns (" + to_string(ParsedQuantity{weeks_on, {}, {}}) + " of every " +
              to_string(ParsedQuantity{period_weeks, {}, {}}) + " weeks)",
          weeks_on / period_weeks};
}

UtilizationProfile measured(double busy_fraction) { return {"measured", busy_fraction}; }

std::string_view option_kind_name(OptionKind k) {
  switch (k) {
    case OptionKind::cloud: return "cloud";
    case OptionKind::bare_metal: return "bare-metal";
    case OptionKind::on_prem: return "on-prem";
    case OptionKind::colocation: return "colocation";
  }
  return "";
}

std::string_view cloud_pricing_name(CloudPricing p) {
  switch (p) {
    case CloudPricing::on_demand: return "on_demand";
    case CloudPricing::spot: return "spot";
    case CloudPricing::reserved_1yr: return "reserved_1yr";
    case CloudPricing::reserved_3yr: return "reserved_3yr";
    case CloudPricing::capacity_block: return "capacity_block";
  }
  return "";
}

MoneyPerSecond CostBreakdown::operating() const {
  return compute + power + maintenance + licences + staff + space + storage_egress;
}

int CostBreakdown::purchases(Seconds t) const {
  if (!(capex.value() > 0) || !(life.value() > 0)) return 0;
  // Bought at 0, life, 2 life, ... while that is before t; a life ending exactly at t is
  // not replaced (1e-9 absorbs rounding in t / life).
  return std::max(1, static_cast<int>(std::ceil(t.value() / life.value() - 1e-9)));
}

Money CostBreakdown::cumulative(Seconds t) const { return capex * purchases(t) + operating() * t; }

Money CostBreakdown::over(Seconds t) const { return operating() * t + depreciation * t; }

MoneyPerSecond CostBreakdown::monthly_amortized() const { return operating() + depreciation; }

MoneyPerSecond CostBreakdown::monthly_average(Seconds t) const { return over(t) / t; }

MoneyPerSecond CostBreakdown::monthly_first_year(Seconds t) const {
  const Seconds year(std::min(t.value(), units::year));
  return cumulative(year) / year;
}

Money CostBreakdown::residual_value(Seconds t) const {
  if (purchases(t) == 0) return Money(0, capex.currency());
  return capex * purchases(t) - depreciation * t;
}

namespace {

Diagnostic invalid(const std::string& option, const std::string& what) {
  return Diagnostic{{}, "cost.options", option + ": " + what, ""};
}

// Nodes paid for: whole nodes, unless the workload pays only its share of GPUs that
// other work uses too (MIG slice, MPS share), which is charged as that fraction.
double charged_nodes(double gpus, double share, int gpus_per_node) {
  const double equivalents = gpus * share / gpus_per_node;
  return share < 1.0 ? equivalents : std::ceil(equivalents - 1e-9);
}

Result<CostBreakdown> rented(const CostOption& o, const Demand& d) {
  const RentedTerms& r = o.rented;
  std::vector<Diagnostic> errors;
  if (!(r.price_per_node.value() > 0)) errors.push_back(invalid(o.name, "the price per node must be greater than zero"));
  if (r.gpus_per_node < 1) errors.push_back(invalid(o.name, "gpus_per_node must be at least 1"));
  if (r.pricing == CloudPricing::spot && r.interruptions_per_hour > 0 && !(r.checkpoint_interval.value() > 0))
    errors.push_back(invalid(o.name, "spot with interruptions needs a checkpoint interval greater than zero"));
  if (!errors.empty()) return errors;
  CostBreakdown c;
  c.name = o.name;
  c.kind = o.kind;
  const double nodes = charged_nodes(d.gpus, o.gpu_share, r.gpus_per_node);
  c.nodes = static_cast<int>(std::ceil(nodes - 1e-9));
  // Reserved and bare-metal capacity is paid for every hour; on-demand, spot and capacity
  // blocks only for the hours the work runs.
  const bool pay_all_hours = o.kind == OptionKind::bare_metal || r.pricing == CloudPricing::reserved_1yr ||
                             r.pricing == CloudPricing::reserved_3yr;
  const double hours_share = pay_all_hours ? 1.0 : d.profile.busy_fraction;
  if (r.pricing == CloudPricing::spot) {
    // Young/Daly first order: each interruption loses half a checkpoint interval of work
    // on average, plus the restart.
    c.spot_overhead = r.interruptions_per_hour / units::hour *
                      (r.checkpoint_interval.value() / 2 + r.restart_time.value());
  }
  c.compute = r.price_per_node * (nodes * hours_share * (1 + c.spot_overhead));
  c.capex = Money(0, r.price_per_node.currency());
  return c;
}

Result<CostBreakdown> owned(const CostOption& o, const Demand& d) {
  const OwnedTerms& w = o.owned;
  std::vector<Diagnostic> errors;
  if (!(w.server_price.value() > 0)) errors.push_back(invalid(o.name, "the server price must be greater than zero"));
  if (w.gpus_per_server < 1) errors.push_back(invalid(o.name, "gpus_per_server must be at least 1"));
  if (!(w.depreciation.value() > 0)) errors.push_back(invalid(o.name, "the depreciation period must be greater than zero"));
  if (!(w.max_power.value() > 0)) errors.push_back(invalid(o.name, "the server's maximum power must be greater than zero"));
  if (w.idle_power > w.max_power) errors.push_back(invalid(o.name, "idle power exceeds maximum power"));
  if (w.pue < 1.0) errors.push_back(invalid(o.name, "PUE must be at least 1"));
  if (o.kind == OptionKind::on_prem && !(w.electricity_price.value() > 0))
    errors.push_back(invalid(o.name, "on-prem needs an electricity price greater than zero"));
  if (o.kind == OptionKind::colocation && !(w.colocation_price.value() > 0))
    errors.push_back(invalid(o.name, "colocation needs a price per kW per month greater than zero"));
  if (!errors.empty()) return errors;

  CostBreakdown c;
  c.name = o.name;
  c.kind = o.kind;
  const double servers = charged_nodes(d.gpus, o.gpu_share, w.gpus_per_server);
  c.nodes = static_cast<int>(std::ceil(servers - 1e-9));
  c.capex = (w.server_price + w.network_per_server) * servers;
  c.depreciation = c.capex / w.depreciation;
  c.life = w.depreciation;
  // Average wall power at the modelled utilization (the servers stay on all the time).
  const Watts draw = (w.idle_power + (w.max_power - w.idle_power) * d.profile.busy_fraction) * servers;
  c.power = w.electricity_price * (draw * w.pue);
  c.maintenance = c.capex * (w.maintenance_per_year / units::year) / Seconds(1.0);
  c.licences = w.licences_per_gpu_per_year * (d.gpus * o.gpu_share / units::year) / Seconds(1.0);
  c.staff = w.staff_cost_per_fte * w.staff_fte;
  if (o.kind == OptionKind::on_prem) {
    c.space = w.space_per_server * servers;
  } else {
    // Colocation: contracted IT power (the servers' maximum) at the price per kW, plus
    // cross-connects and remote hands; metered energy (when priced) on top at the PUE.
    c.space = w.colocation_price * (w.max_power * servers) + w.cross_connect_price * w.cross_connects +
              w.remote_hands_price * (w.remote_hands_per_month.value() / units::month);
  }
  return c;
}

// Total cash of each option over the horizon for a demand; error if any option fails.
Result<std::vector<CostBreakdown>> cost_all(const std::vector<CostOption>& options, const Demand& d) {
  std::vector<CostBreakdown> out;
  std::vector<Diagnostic> errors;
  for (const auto& o : options) {
    auto c = cost_option(o, d);
    if (c) out.push_back(*c);
    else errors.insert(errors.end(), c.errors().begin(), c.errors().end());
  }
  if (!errors.empty()) return errors;
  return out;
}

std::optional<double> break_even_utilization(const CostOption& a, const CostOption& b, Demand d, Seconds horizon,
                                             bool& a_cheaper_below) {
  auto diff = [&](double u) {
    d.profile.busy_fraction = u;
    d.units_per_month = u;  // for per-unit options: the sweep runs over units per month
    auto ca = cost_option(a, d), cb = cost_option(b, d);
    return ca->over(horizon).value() - cb->over(horizon).value();
  };
  // Costs are linear in utilization for every option, so one sign change at most.
  constexpr double lo0 = 0.001, hi0 = 1.0;
  double lo = lo0, hi = hi0;
  const double f_lo = diff(lo), f_hi = diff(hi);
  a_cheaper_below = f_lo < 0;
  if (f_lo == 0) return lo;
  if ((f_lo < 0) == (f_hi < 0)) return std::nullopt;
  for (int i = 0; i < 60; ++i) {
    const double mid = (lo + hi) / 2;
    if ((diff(mid) < 0) == (f_lo < 0)) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

std::optional<int> break_even_month(const CostBreakdown& a, const CostBreakdown& b) {
  // The first month in which a, dearer at the start, has cost no more than b in total.
  constexpr int kMonths = 120;
  const auto cum = [](const CostBreakdown& c, int m) { return c.cumulative(Seconds(m * units::month)).value(); };
  if (cum(a, 0) <= cum(b, 0)) return std::nullopt;
  for (int m = 1; m <= kMonths; ++m)
    if (cum(a, m) <= cum(b, m)) return m;
  return std::nullopt;
}

struct Input {
  const char* name;
  std::function<void(CostInputs&, double)> scale;
};

std::vector<Input> sensitivity_inputs() {
  auto each = [](CostInputs& in, auto f) {
    for (auto& o : in.options) f(o);
  };
  return {
      {"cloud and rental prices", [each](CostInputs& in, double k) { each(in, [k](CostOption& o) { o.rented.price_per_node = o.rented.price_per_node * k; }); }},
      {"server price", [each](CostInputs& in, double k) { each(in, [k](CostOption& o) { o.owned.server_price = o.owned.server_price * k; }); }},
      {"electricity price", [each](CostInputs& in, double k) { each(in, [k](CostOption& o) { o.owned.electricity_price = o.owned.electricity_price * k; }); }},
      {"PUE", [each](CostInputs& in, double k) { each(in, [k](CostOption& o) { o.owned.pue = std::max(1.0, o.owned.pue * k); }); }},
      {"colocation price per kW", [each](CostInputs& in, double k) { each(in, [k](CostOption& o) { o.owned.colocation_price = o.owned.colocation_price * k; }); }},
      {"staff cost", [each](CostInputs& in, double k) { each(in, [k](CostOption& o) { o.owned.staff_cost_per_fte = o.owned.staff_cost_per_fte * k; }); }},
      {"maintenance rate", [each](CostInputs& in, double k) { each(in, [k](CostOption& o) { o.owned.maintenance_per_year *= k; }); }},
      {"depreciation period", [each](CostInputs& in, double k) { each(in, [k](CostOption& o) { o.owned.depreciation = o.owned.depreciation * k; }); }},
      {"utilization and work per month", [](CostInputs& in, double k) {
         in.demand.profile.busy_fraction = std::min(1.0, in.demand.profile.busy_fraction * k);
         in.demand.units_per_month *= k;
       }},
      {"horizon", [](CostInputs& in, double k) { in.horizon = in.horizon * k; }},
  };
}

}  // namespace

// The demand as one option sees it: its own cluster size and busy time per unit of work.
Demand effective_demand(const CostOption& o, const Demand& d) {
  Demand e = d;
  if (o.gpus > 0) e.gpus = o.gpus;
  if (o.busy_per_unit > 0) {
    const double busy = d.units_per_month * o.busy_per_unit;
    const double clusters = std::max(1.0, std::ceil(busy - 1e-9));
    e.gpus *= static_cast<int>(clusters);
    e.profile = measured(busy / clusters);
  }
  return e;
}

Result<CostBreakdown> cost_option(const CostOption& option, const Demand& requested) {
  const Demand demand = effective_demand(option, requested);
  if (demand.gpus < 1) return Diagnostic{{}, "cost.demand.gpus", "the demand must be at least one GPU", ""};
  if (!(demand.profile.busy_fraction > 0) || demand.profile.busy_fraction > 1)
    return Diagnostic{{}, "cost.utilization", "utilization must be greater than 0 and at most 100 %", ""};
  if (!(option.gpu_share > 0) || option.gpu_share > 1)
    return Diagnostic{{}, "cost.options", option.name + ": gpu_share must be in (0, 1]", ""};
  auto c = (option.kind == OptionKind::cloud || option.kind == OptionKind::bare_metal) ? rented(option, demand)
                                                                                       : owned(option, demand);
  if (!c) return c;
  c.value().storage_egress = option.storage + option.egress;
  return c;
}

Result<CostComparison> compare_costs(const CostInputs& in) {
  if (in.options.empty()) return Diagnostic{{}, "cost.options", "no options to compare", ""};
  if (!(in.horizon.value() > 0)) return Diagnostic{{}, "cost.horizon", "the horizon must be greater than zero", ""};
  if (!(in.demand.units_per_month > 0))
    return Diagnostic{{}, "cost", "the work per month must be greater than zero", ""};
  auto options = cost_all(in.options, in.demand);
  if (!options) return options.errors();

  CostComparison out;
  out.options = std::move(options).value();
  out.horizon = in.horizon;
  const double units = in.demand.units_per_month * in.horizon.value() / units::month;
  for (std::size_t i = 0; i < out.options.size(); ++i) {
    out.totals.push_back(out.options[i].over(in.horizon));
    out.per_unit.push_back(out.totals.back() / units);
    if (out.totals[i] < out.totals[out.cheapest]) out.cheapest = static_cast<int>(i);
  }
  for (std::size_t i = 0; i < out.options.size(); ++i)
    for (std::size_t j = i + 1; j < out.options.size(); ++j) {
      BreakEven be{out.options[i].name, out.options[j].name, std::nullopt, std::nullopt, false, std::nullopt};
      if (in.options[i].busy_per_unit > 0 || in.options[j].busy_per_unit > 0) {
        // Sweep units of work per month up to where the slower option is busy all month.
        const double full = 1.0 / std::max(in.options[i].busy_per_unit, in.options[j].busy_per_unit);
        Demand scaled = in.demand;
        CostOption a = in.options[i], b = in.options[j];
        a.busy_per_unit *= full;  // so u in (0, 1] spans 0 .. `full` units per month
        b.busy_per_unit *= full;
        auto u = break_even_utilization(a, b, scaled, in.horizon, be.a_cheaper_below);
        if (u) be.units_per_month = *u * full;
      } else {
        be.utilization = break_even_utilization(in.options[i], in.options[j], in.demand, in.horizon, be.a_cheaper_below);
      }
      be.month = break_even_month(out.options[i], out.options[j]);
      if (!be.month) {
        // Perhaps b is the one with the capital cost; report its crossover instead.
        if (auto m = break_even_month(out.options[j], out.options[i])) {
          std::swap(be.a, be.b);
          be.month = m;
          be.a_cheaper_below = !be.a_cheaper_below;
        }
      }
      out.break_even.push_back(be);
    }
  // Sensitivity: each input at -25 % and +25 %, the cheapest option and its total.
  const double base = out.totals[out.cheapest].value();
  for (const auto& input : sensitivity_inputs()) {
    SensitivityRow row;
    row.input = input.name;
    for (double k : {0.75, 1.25}) {
      CostInputs varied = in;
      input.scale(varied, k);
      auto costs = cost_all(varied.options, varied.demand);
      if (!costs) continue;
      std::size_t best = 0;
      for (std::size_t i = 1; i < costs->size(); ++i)
        if ((*costs)[i].over(varied.horizon) < (*costs)[best].over(varied.horizon)) best = i;
      (k < 1 ? row.low_best : row.high_best) = (*costs)[best].name;
      (k < 1 ? row.low_total : row.high_total) = (*costs)[best].over(varied.horizon);
    }
    row.swing = base > 0 ? std::fabs(row.high_total.value() - row.low_total.value()) / base : 0;
    out.sensitivity.push_back(row);
  }
  std::stable_sort(out.sensitivity.begin(), out.sensitivity.end(),
                   [](const SensitivityRow& a, const SensitivityRow& b) { return a.swing > b.swing; });
  return out;
}

}  // namespace capsim::models
