#include "capsim/scenarios/cost_report.hpp"
#include "capsim/scenarios/sizing.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>

#include "capsim/core/text.hpp"

#include "capsim/models/search.hpp"
#include "capsim/scenarios/sizing.hpp"

namespace capsim::scenarios {

std::string money_short(double amount) {
  char buf[64];
  const double a = std::fabs(amount);
  if (a >= 1e6) std::snprintf(buf, sizeof buf, "%.2f M", amount / 1e6);
  else if (a >= 1e4) std::snprintf(buf, sizeof buf, "%.1f k", amount / 1e3);
  else std::snprintf(buf, sizeof buf, "%.0f", amount);
  return buf;
}
namespace {

using hardware::Entity;
using hardware::EntityKind;

// " (your quote, as of 2026-12)" for a figure from the user's overlay; "" for the catalog's.
std::string quote_mark(const Entity& e, std::string_view field) {
  const hardware::FieldValue* v = e.find(field);
  if (v == nullptr || !v->provenance || !v->provenance->from_overlay()) return {};
  return " (your quote, as of " + v->provenance->as_of + ")";
}
using models::CostOption;
using models::OptionKind;

class Builder {
 public:
  Builder(const Scenario& s, const hardware::Catalog& c, const std::vector<RunTimeOverride>& overrides)
      : s_(s), c_(c), setup_(*s.cost), overrides_(overrides) {}

  Result<CostReport> build() {
    CostReport r;
    r.scenario = s_.name;
    r.inputs.horizon = setup_.horizon;
    r.inputs.demand = demand();
    r.work_unit = r.inputs.demand.work_unit;
    for (std::size_t i = 0; i < setup_.options.size(); ++i) {
      run_node_.reset();
      run_.reset();
      auto o = option(setup_.options[i], i);
      if (o) {
        r.inputs.options.push_back(o->first);
        r.option_notes.push_back(o->second);
        r.option_node_types.push_back(run_node_);
        r.option_runs.push_back(run_);
      }
    }
    if (!errors_.empty()) return errors_;
    auto comparison = models::compare_costs(r.inputs);
    if (!comparison) return with_file(comparison.errors());
    r.comparison = std::move(comparison).value();
    return r;
  }

 private:
  std::vector<Diagnostic> with_file(std::vector<Diagnostic> ds) const {
    for (auto& d : ds)
      if (d.where.file.empty()) d.where.file = s_.file;
    return ds;
  }

  void error(const CostOptionSetup& o, std::size_t i, const std::string& message, const std::string& hint = {}) {
    errors_.push_back({o.where, "cost.options[" + std::to_string(i) + "]", o.name + ": " + message, hint});
  }

  models::Demand demand() const {
    models::Demand d;
    if (setup_.profile == "business-hours") d.profile = models::business_hours(setup_.hours_per_day, setup_.days_per_week);
    else if (setup_.profile == "campaigns") d.profile = models::campaigns(setup_.weeks_on, setup_.period_weeks);
    else if (setup_.profile == "measured") d.profile = models::measured(setup_.busy);
    else d.profile = models::always_on();
    if (s_.training.service) {
      d.gpus = s_.training.service_gpus;
      d.work_unit = "month";
      d.units_per_month = 1;
    } else {
      d.gpus = 1;  // each option brings its own cluster
      d.work_unit = "training run";
      d.units_per_month = setup_.runs_per_month;
    }
    return d;
  }

  // Converts an amount in any currency to US dollars: the scenario's rate when it gives one,
  // else the newest dated rate in the catalog (exchange_rates.yaml).
  std::optional<double> to_usd(double value, Currency currency, const CostOptionSetup& o, std::size_t i,
                               const std::string& what) {
    if (currency == Currency::usd || currency == Currency::none) return value;
    for (const auto& [cur, rate] : setup_.usd_per_unit)
      if (cur == currency) return value * rate;
    if (auto rate = catalog_rate(currency)) return value * *rate;
    error(o, i, what + " is in " + std::string(currency_code(currency)) + " and neither the scenario nor the catalog gives an exchange rate",
          "add cost.exchange_rates: [{currency: " + std::string(currency_code(currency)) + ", usd: ..., source: ...}]");
    return std::nullopt;
  }

  // The catalog's rate for a currency with the latest as_of; nullopt when it has none.
  std::optional<double> catalog_rate(Currency currency) const {
    std::optional<double> best;
    std::string best_date;
    for (const Entity& e : c_.all(EntityKind::exchange_rate)) {
      const hardware::FieldValue* usd = e.find("usd");
      if (e.text("currency") != currency_code(currency) || usd == nullptr) continue;
      const std::string date = usd->provenance ? usd->provenance->as_of : std::string();
      if (!best || date > best_date) {
        best = usd->number;
        best_date = date;
      }
    }
    return best;
  }

  template <class Q>
  std::optional<Q> usd_quantity(std::optional<Q> q, const CostOptionSetup& o, std::size_t i, const std::string& what) {
    if (!q) return std::nullopt;
    auto v = to_usd(q->value(), q->currency(), o, i, what);
    if (!v) return std::nullopt;
    return Q(*v, Currency::usd);
  }

  // Training: the option's run time and cluster from the performance model on its node type.
  bool attach_run(CostOption& option, const std::string& node_id, const CostOptionSetup& o, std::size_t i,
                  std::string& note) {
    auto node = models::node_type_by_id(c_, node_id);
    if (!node) {
      error(o, i, node.errors()[0].message);
      return false;
    }
    models::SearchRequest req;
    req.model = s_.training.model;
    req.options = s_.training.options;
    req.tokens = s_.training.tokens;
    req.samples = s_.training.samples * s_.training.epochs;
    req.global_batch = s_.training.global_batch;
    req.grid = scenarios::search_grid(s_);
    req.node_types = {*node};
    for (const auto& fallback : apply_precision_fallback(req.node_types, c_, req.options.compute))
      note += " [" + fallback + "]";
    auto result = models::run_search(req);
    if (!result || !result->recommended) {
      error(o, i, "the workload cannot run on " + node_id +
                      (result ? "" : ": " + result.errors()[0].message));
      return false;
    }
    const auto& c = *result->recommended;
    option.gpus = c.par.gpus();
    Seconds time = c.total_time;
    std::string why;
    for (const auto& o : overrides_)
      if (o.node_id == node_id) time = o.time, why = " (" + o.why + ")";
    option.busy_per_unit = time.value() / units::month;
    note += ", a run takes " + to_string(time) + why + " on " + plural(option.gpus, "GPU");
    run_node_ = result->node_types[c.node_type];
    run_ = c;
    run_->total_time = time;
    return true;
  }

  std::optional<std::pair<CostOption, std::string>> option(const CostOptionSetup& o, std::size_t i) {
    CostOption out;
    out.name = o.name;
    out.gpu_share = o.gpu_share;
    const MoneyPerSecond none(0, Currency::usd);
    out.storage = usd_quantity<MoneyPerSecond>(setup_.storage, o, i, "storage").value_or(none);
    out.egress = usd_quantity<MoneyPerSecond>(setup_.egress, o, i, "egress").value_or(none);
    std::string note;
    const std::size_t errors_before = errors_.size();
    if (!o.instance.empty()) {
      const Entity* e = c_.find(EntityKind::instance, o.instance);
      const bool bare = e->find("bare_metal") && e->find("bare_metal")->number != 0;
      out.kind = bare ? OptionKind::bare_metal : OptionKind::cloud;
      out.rented.pricing = o.pricing == "spot"           ? models::CloudPricing::spot
                           : o.pricing == "reserved_1yr" ? models::CloudPricing::reserved_1yr
                           : o.pricing == "reserved_3yr" ? models::CloudPricing::reserved_3yr
                           : o.pricing == "capacity_block" ? models::CloudPricing::capacity_block
                                                           : models::CloudPricing::on_demand;
      auto price = e->quantity<MoneyPerSecond>("price." + o.pricing);
      if (!price) {
        error(o, i, o.instance + " has no " + o.pricing + " price in the catalog");
      } else if (auto usd_price = usd_quantity<MoneyPerSecond>(price, o, i, o.instance + "'s price")) {
        out.rented.price_per_node = *usd_price;
        note = o.instance + " at " + to_string(*price) + (price->currency() != Currency::usd ? " (" + to_string(*usd_price) + ")" : "") +
               quote_mark(*e, "price." + o.pricing);
      }
      out.rented.gpus_per_node = static_cast<int>(e->integer("gpu_count").value_or(1));
      out.rented.interruptions_per_hour = o.interruptions_per_hour;
      out.rented.checkpoint_interval = o.checkpoint_interval;
      out.rented.restart_time = o.restart_time;
      if (!s_.training.service && errors_.size() == errors_before) attach_run(out, o.instance, o, i, note);
    } else {
      const Entity* server = c_.find(EntityKind::server, o.server);
      const Entity* facility = c_.find(EntityKind::facility, o.facility);
      if (server == nullptr || facility == nullptr) return std::nullopt;  // reported by the loader
      out.kind = facility->text("kind") == "colocation" ? OptionKind::colocation : OptionKind::on_prem;
      auto& w = out.owned;
      w.gpus_per_server = static_cast<int>(server->integer("gpu_count").value_or(1));
      if (auto price = usd_quantity<Money>(server->quantity<Money>("purchase_price"), o, i, "the server price"))
        w.server_price = *price;
      else
        error(o, i, o.server + " has no purchase price in the catalog", "no price was published for it");
      if (auto power = server->quantity<Watts>("power_max")) {
        w.max_power = *power;
        w.idle_power = *power * o.idle_power.value_or(0);
      } else {
        error(o, i, o.server + " has no maximum power in the catalog");
      }
      w.depreciation = o.depreciation;
      if (auto v = usd_quantity<Money>(o.network_per_server, o, i, "network_per_server")) w.network_per_server = *v;
      w.maintenance_per_year = o.maintenance_per_year;
      if (auto v = usd_quantity<Money>(o.licences_per_gpu_per_year, o, i, "licences")) w.licences_per_gpu_per_year = *v;
      w.staff_fte = o.staff_fte;
      if (auto v = usd_quantity<MoneyPerSecond>(o.space_per_server, o, i, "space")) w.space_per_server = *v;
      w.pue = facility->quantity<Ratio>("pue").value_or(Ratio(1.0)).value();
      if (auto e = usd_quantity<MoneyPerJoule>(facility->quantity<MoneyPerJoule>("electricity_price"), o, i, "electricity"))
        w.electricity_price = *e;
      else if (out.kind == OptionKind::on_prem)
        error(o, i, o.facility + " has no electricity price in the catalog");
      if (o.staff_fte > 0) {
        // The option's own cost per FTE first, else the facility's (on-prem and colocation alike).
        auto staff = o.staff_cost_per_fte ? o.staff_cost_per_fte : facility->quantity<MoneyPerSecond>("staff_cost");
        if (auto s = usd_quantity<MoneyPerSecond>(staff, o, i, "staff cost"))
          w.staff_cost_per_fte = *s;
        else if (!staff)
          error(o, i, o.facility + " has no staff cost in the catalog, but staff_fte is " + to_string(ParsedQuantity{o.staff_fte, {}, {}}),
                "give staff_cost_per_fte, e.g. '90520 USD/year'");
      }
      if (out.kind == OptionKind::colocation) {
        if (auto p = usd_quantity<MoneyPerJoule>(facility->quantity<MoneyPerJoule>("colocation_price"), o, i, "colocation"))
          w.colocation_price = *p;
        else
          error(o, i, o.facility + " has no colocation price in the catalog");
        w.cross_connects = o.cross_connects;
        auto cross = o.cross_connect_price ? o.cross_connect_price : facility->quantity<MoneyPerSecond>("cross_connect_price");
        if (o.cross_connects > 0 && !cross)
          error(o, i, "cross-connects need a price: give cross_connect_price (" + o.facility + " has none in the catalog)");
        if (auto v = usd_quantity<MoneyPerSecond>(cross, o, i, "cross-connect price")) w.cross_connect_price = *v;
        w.remote_hands_per_month = o.remote_hands_per_month;
        auto hands = o.remote_hands_price ? o.remote_hands_price : facility->quantity<MoneyPerSecond>("remote_hands_price");
        if (o.remote_hands_per_month.value() > 0 && !hands)
          error(o, i, "remote hands need a price: give remote_hands_price (" + o.facility + " has none in the catalog)");
        if (auto v = usd_quantity<MoneyPerSecond>(hands, o, i, "remote hands price")) w.remote_hands_price = *v;
      }
      note = o.server + " at " + (server->quantity<Money>("purchase_price") ? to_string(*server->quantity<Money>("purchase_price")) : "?") +
             quote_mark(*server, "purchase_price") + " in " + o.facility;
      if (!s_.training.service && errors_.size() == errors_before) attach_run(out, o.server, o, i, note);
    }
    if (errors_.size() != errors_before) return std::nullopt;
    return std::make_pair(out, note);
  }

  const Scenario& s_;
  const hardware::Catalog& c_;
  const CostSetup& setup_;
  const std::vector<RunTimeOverride>& overrides_;
  std::vector<Diagnostic> errors_;
  std::optional<models::NodeType> run_node_;  // the option being built: where it runs
  std::optional<models::Candidate> run_;
};

double months(Seconds s) { return s.value() / units::month; }

}  // namespace

Result<CostReport> cost_scenario(const Scenario& scenario, const hardware::Catalog& catalog,
                                 const std::vector<RunTimeOverride>& overrides) {
  if (!scenario.cost)
    return Diagnostic{{scenario.file}, "cost", "the scenario has no cost: section", "see docs/scenario-reference.md"};
  return Builder(scenario, catalog, overrides).build();
}

std::string horizon_text(Seconds horizon) {
  const double m = horizon.value() / units::month;
  if (m >= 1 && std::fabs(m - std::round(m)) < 1e-6) return plural(std::llround(m), "month");
  const double d = horizon.value() / units::day;
  if (std::fabs(d - std::round(d)) < 1e-6) return plural(std::llround(d), "day");
  return to_string(horizon);
}

Table cost_table(const CostReport& r) {
  const auto& c = r.comparison;
  const bool per_unit = r.work_unit != "month";  // a service's unit is the month itself
  Table t{{"option", "kind", "nodes", "capex", "per month", "first year", "steady state", "total"},
          {},
          {false, false, true, true, true, true, true, true}};
  if (per_unit) {
    t.columns.push_back("per " + r.work_unit);
    t.right_align.push_back(true);
  }
  t.columns.push_back("source");
  for (std::size_t i = 0; i < c.options.size(); ++i) {
    const auto& o = c.options[i];
    // Each amount as cost_json writes it, in USD (CSV keeps it whole).
    auto usd = [](double amount) { return Cell(money_short(amount), amount, "USD"); };
    std::vector<Cell> row{o.name + (static_cast<int>(i) == c.cheapest ? " *" : ""),
                          std::string(models::option_kind_name(o.kind)), Cell(std::to_string(o.nodes), o.nodes),
                          o.capex.value() > 0 ? usd(o.capex.value()) : Cell("-", 0.0, "USD"),
                          usd(o.monthly_average(c.horizon).value() * units::month),
                          usd(o.monthly_first_year(c.horizon).value() * units::month),
                          usd(o.monthly_amortized().value() * units::month), usd(c.totals[i].value())};
    if (per_unit) row.push_back(usd(c.per_unit[i].value()));
    row.push_back(r.option_notes[i]);
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table break_even_table(const CostReport& r) {
  Table t{{"between", "break-even", "cash break-even"}, {}, {false, false, false}};
  for (const auto& be : r.comparison.break_even) {
    std::string at = "-";
    if (be.utilization)
      at = (be.a_cheaper_below ? be.a : be.b) + " cheaper below " + to_string(ParsedQuantity{100 * *be.utilization, {}, {}}) +
           " % utilization";
    else if (be.units_per_month)
      at = (be.a_cheaper_below ? be.a : be.b) + " cheaper below " + to_string(ParsedQuantity{*be.units_per_month, {}, {}}) +
           " " + r.work_unit + "s a month";
    else
      at = "none: " + (be.a_cheaper_below ? be.a : be.b) + " is cheaper at every " +
           (r.work_unit == "month" ? std::string("utilization") : "number of " + r.work_unit + "s a month");
    const std::string month = be.month ? be.a + " pays off in month " + std::to_string(*be.month) : "-";
    t.rows.push_back({be.a + " / " + be.b, at, month});
  }
  return t;
}

Table sensitivity_table(const CostReport& r) {
  // The cheapest option and its total apart, so CSV keeps the total as a number.
  Table t{{"input", "cheapest at -25 %", "total at -25 %", "cheapest at +25 %", "total at +25 %", "swing"},
          {},
          {false, false, true, false, true, true}};
  for (const auto& row : r.comparison.sensitivity)
    t.rows.push_back({row.input, row.low_best, Cell(money_short(row.low_total.value()), row.low_total.value(), "USD"),
                      row.high_best, Cell(money_short(row.high_total.value()), row.high_total.value(), "USD"),
                      Cell(to_string(ParsedQuantity{100 * row.swing, {}, {}}) + " %", 100 * row.swing, "%")});
  return t;
}

std::string cost_text(const CostReport& r) {
  const auto& c = r.comparison;
  std::string out = "Cost: " + r.scenario + ", over " + to_string(ParsedQuantity{months(c.horizon), {}, {}}) +
                    " months, in USD";
  out += r.work_unit == "month" ? " (" + std::to_string(r.inputs.demand.gpus) + " GPUs, " + r.inputs.demand.profile.name +
                                      ")\n\n"
                                : " (" + to_string(ParsedQuantity{r.inputs.demand.units_per_month, {}, {}}) +
                                      " training runs a month)\n\n";
  out += render_text(cost_table(r));
  out += "\n* cheapest: " + c.options[c.cheapest].name + ", " + money_short(c.totals[c.cheapest].value()) +
         " USD over the horizon. Owned hardware is depreciated over its life and bought again when a life ends"
         " inside the horizon; total counts the part used up.\n"
         "per month: the horizon average (total / months); first year: the cash paid in the first 12 months"
         " (purchase included) a month; steady state: operating costs plus depreciation a month.\n";
  out += "\nBreak-even:\n" + render_text(break_even_table(r));
  out += "\nSensitivity (each input -25 % and +25 %; the cheapest option then and its total):\n" +
         render_text(sensitivity_table(r));
  return out;
}

std::string cost_json(const CostReport& r) {
  using nlohmann::json;
  const auto& c = r.comparison;
  json j;
  j["scenario"] = r.scenario;
  j["currency"] = "USD";
  j["horizon_months"] = months(c.horizon);
  j["work_unit"] = r.work_unit;
  j["cheapest"] = c.options[c.cheapest].name;
  j["options"] = json::array();
  for (std::size_t i = 0; i < c.options.size(); ++i) {
    const auto& o = c.options[i];
    auto monthly = [](MoneyPerSecond m) { return m.value() * units::month; };
    j["options"].push_back({{"name", o.name},
                            {"kind", std::string(models::option_kind_name(o.kind))},
                            {"nodes", o.nodes},
                            {"capex", o.capex.value()},
                            {"monthly", {{"compute", monthly(o.compute)},
                                         {"power", monthly(o.power)},
                                         {"maintenance", monthly(o.maintenance)},
                                         {"licences", monthly(o.licences)},
                                         {"staff", monthly(o.staff)},
                                         {"space", monthly(o.space)},
                                         {"storage_egress", monthly(o.storage_egress)},
                                         {"depreciation", monthly(o.depreciation)},
                                         {"total", monthly(o.monthly_amortized())}}},
                            {"monthly_average", monthly(o.monthly_average(c.horizon))},
                            {"monthly_first_year", monthly(o.monthly_first_year(c.horizon))},
                            {"monthly_steady_state", monthly(o.monthly_amortized())},
                            {"purchases", o.purchases(c.horizon)},
                            {"total", c.totals[i].value()},
                            {"per_unit", c.per_unit[i].value()},
                            {"residual_value", o.residual_value(c.horizon).value()},
                            {"spot_overhead", o.spot_overhead},
                            {"source", r.option_notes[i]}});
  }
  j["break_even"] = json::array();
  for (const auto& be : c.break_even)
    j["break_even"].push_back({{"a", be.a},
                               {"b", be.b},
                               {"utilization", be.utilization ? json(*be.utilization) : json(nullptr)},
                               {"units_per_month", be.units_per_month ? json(*be.units_per_month) : json(nullptr)},
                               {"a_cheaper_below", be.a_cheaper_below},
                               {"month", be.month ? json(*be.month) : json(nullptr)}});
  j["sensitivity"] = json::array();
  for (const auto& row : c.sensitivity)
    j["sensitivity"].push_back({{"input", row.input},
                                {"low_cheapest", row.low_best},
                                {"low_total", row.low_total.value()},
                                {"high_cheapest", row.high_best},
                                {"high_total", row.high_total.value()},
                                {"swing", row.swing}});
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace capsim::scenarios
