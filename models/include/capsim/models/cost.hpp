// Cost of running GPU work in the cloud (on-demand, spot, 1- and 3-year commitments,
// capacity blocks), on rented bare metal, on owned servers on-prem, or on owned servers in a
// colocation rack; break-even utilization and month between options; sensitivity.
//
// One currency throughout. Owned hardware is bought in month 0, depreciated straight-line
// over its stated life and bought again (refreshed) at the end of each life that ends inside
// the horizon. Two views of the same costs:
//   - the cost over a horizon: operating costs plus the part of the hardware used up
//     (depreciation x horizon: every purchase minus what is left of the last one, its residual
//     value), the basis of totals, cost per unit of work, break-even utilization and sensitivity;
//   - cash: each purchase when it is made plus operating costs, the basis of the break-even
//     month and of the first year's monthly rate.
// All functions are pure and thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "capsim/core/result.hpp"
#include "capsim/core/units.hpp"

namespace capsim::models {

// How much of the calendar the GPUs are busy.
struct UtilizationProfile {
  std::string name;
  double busy_fraction = 1.0;  // (0, 1]: the share of hours the work runs
};
UtilizationProfile always_on();  // 24/7: 1.0
// hours_per_day x days_per_week / 168 (10 h x 5 d = 29.8 %).
UtilizationProfile business_hours(double hours_per_day = 10, double days_per_week = 5);
// Experiment campaigns: busy `weeks_on` weeks out of every `period_weeks`.
UtilizationProfile campaigns(double weeks_on, double period_weeks);
UtilizationProfile measured(double busy_fraction);

enum class OptionKind { cloud, bare_metal, on_prem, colocation };
std::string_view option_kind_name(OptionKind k);

enum class CloudPricing { on_demand, spot, reserved_1yr, reserved_3yr, capacity_block };
std::string_view cloud_pricing_name(CloudPricing p);

// A cloud instance (or rented bare-metal server) and how it is paid for.
struct RentedTerms {
  MoneyPerSecond price_per_node;  // per node-hour, for the chosen pricing
  int gpus_per_node = 1;
  CloudPricing pricing = CloudPricing::on_demand;
  // Spot: interruptions cost the work since the last checkpoint plus the restart
  // (first order, Young 1974 / Daly 2006): overhead = rate x (checkpoint_interval / 2 + restart).
  double interruptions_per_hour = 0;
  Seconds checkpoint_interval{};
  Seconds restart_time{};
};

// Owned servers, on-prem or in a colocation rack.
struct OwnedTerms {
  Money server_price;
  int gpus_per_server = 1;
  Money network_per_server;  // switches, NICs, cables per server
  Seconds depreciation = Seconds(3 * units::year);
  // Power: the server draws idle_power + (max_power - idle_power) x utilization, at the wall.
  Watts max_power;
  Watts idle_power;
  double pue = 1.0;  // facility overhead (cooling, distribution); colocation bills IT power
  MoneyPerJoule electricity_price;
  double maintenance_per_year = 0;     // support contracts, a fraction of the purchase price per year
  Money licences_per_gpu_per_year;     // software (e.g. NVIDIA AI Enterprise)
  double staff_fte = 0;                // people to run it
  MoneyPerSecond staff_cost_per_fte;   // per FTE-year, as a rate
  MoneyPerSecond space_per_server;     // on-prem floor space and racks, per server
  // Colocation only:
  MoneyPerJoule colocation_price;      // per kW of contracted IT power per month, as a rate
  int cross_connects = 0;
  MoneyPerSecond cross_connect_price;  // each, per month as a rate
  Seconds remote_hands_per_month{};
  MoneyPerSecond remote_hands_price;   // per hour
};

struct CostOption {
  std::string name;
  OptionKind kind = OptionKind::cloud;
  RentedTerms rented;  // cloud, bare_metal
  OwnedTerms owned;    // on_prem, colocation
  // Costs outside the compute, as stated inputs (the same for every option unless set).
  MoneyPerSecond storage;  // per month, as a rate
  MoneyPerSecond egress;   // per month, as a rate
  // Share of a GPU the workload pays for (MIG slice, MPS share): 1 = whole GPUs.
  double gpu_share = 1.0;
  // Work whose duration depends on the option (a training run is faster on a faster GPU):
  // `gpus` the option's own cluster size (0: the demand's), `busy_per_unit` the fraction of
  // a month one unit of work keeps it busy (0: the demand's utilization profile applies).
  // The option is then busy units_per_month x busy_per_unit of the time; past 100 % it
  // needs that many clusters side by side.
  int gpus = 0;
  double busy_per_unit = 0;
};

struct Demand {
  int gpus = 1;  // GPUs needed while the work runs
  UtilizationProfile profile;
  // What a unit of work is and how many of them a month brings (for cost per unit):
  // "training run" with runs_per_month, or "million requests".
  std::string work_unit = "month";
  double units_per_month = 1;
};

// One option's cost over the horizon.
struct CostBreakdown {
  std::string name;
  OptionKind kind = OptionKind::cloud;
  int nodes = 0;               // instances or servers needed
  Money capex;                 // paid in month 0 (owned)
  // Monthly operating costs (rates; multiply by a duration for money):
  MoneyPerSecond compute;      // cloud/bare-metal rent incl. spot rework
  MoneyPerSecond power;        // electricity incl. PUE (on-prem), or IT power (colocation, inside space)
  MoneyPerSecond maintenance;
  MoneyPerSecond licences;
  MoneyPerSecond staff;
  MoneyPerSecond space;        // on-prem space, or colocation kW + cross-connects + remote hands
  MoneyPerSecond storage_egress;
  MoneyPerSecond depreciation; // capex / depreciation period
  Seconds life{};              // owned: the depreciation period, after which it is refreshed
  double spot_overhead = 0;    // extra work from interruptions, a fraction

  MoneyPerSecond operating() const;  // everything but depreciation
  // Purchases made by `t`: one in month 0, another at each multiple of `life` before t
  // (0 for rented options).
  int purchases(Seconds t) const;
  // Cash paid by the end of `t` (capex x purchases(t) + operating x t).
  Money cumulative(Seconds t) const;
  // Cost of the horizon `t`: operating x t + the hardware used up, depreciation x t
  // (= capex x purchases(t) - residual_value(t)).
  Money over(Seconds t) const;
  // Steady-state monthly cost, owned hardware depreciated: operating + depreciation.
  MoneyPerSecond monthly_amortized() const;
  // The horizon average: over(t) / t.
  MoneyPerSecond monthly_average(Seconds t) const;
  // The first year's cash rate: cumulative(min(t, 1 year)) / min(t, 1 year), purchase included.
  MoneyPerSecond monthly_first_year(Seconds t) const;
  Money residual_value(Seconds t) const;  // owned: undepreciated part of the last purchase at t
};

struct CostInputs {
  std::vector<CostOption> options;
  Demand demand;
  Seconds horizon = Seconds(24 * units::month);
};

// Costs of one option for a demand (errors: a zero price, bandwidth or utilization, a
// negative input, an option that cannot carry the demand).
Result<CostBreakdown> cost_option(const CostOption& option, const Demand& demand);

struct BreakEven {
  std::string a, b;
  // With per-unit work (busy_per_unit), the units of work per month at which a and b cost
  // the same, instead of a utilization.
  std::optional<double> units_per_month;
  // Utilization at which a and b cost the same over the horizon (a is cheaper below it
  // when `a_cheaper_below`); none when one is cheaper at every utilization, and then
  // `a_cheaper_below` says whether that one is a.
  // `month`: a is the option that costs more cash at the start (it buys hardware); the
  // first month in which its cumulative cash is no more than b's, within 10 years.
  std::optional<double> utilization;
  bool a_cheaper_below = false;
  std::optional<int> month;
};

struct SensitivityRow {
  std::string input;    // "electricity price", "cloud price", ...
  std::string low_best, high_best;  // the cheapest option at -25 % and +25 %
  Money low_total, high_total;      // its total over the horizon
  double swing = 0;     // |high - low| of the cheapest total, over the base total
};

struct CostComparison {
  std::vector<CostBreakdown> options;  // in input order
  Seconds horizon;
  std::vector<Money> totals;           // cost over the horizon (CostBreakdown::over), per option
  std::vector<Money> per_unit;         // per unit of work, per option
  int cheapest = 0;                    // index into options
  std::vector<BreakEven> break_even;   // every pair
  std::vector<SensitivityRow> sensitivity;  // largest swing first
};

Result<CostComparison> compare_costs(const CostInputs& inputs);

}  // namespace capsim::models
