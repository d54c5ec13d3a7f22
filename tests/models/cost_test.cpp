#include <doctest/doctest.h>

#include "capsim/models/cost.hpp"

using namespace capsim;
using namespace capsim::models;

namespace {

// 24 months of 730 h = 17,520 h.
const Seconds kTwoYears = Seconds(24 * units::month);

Demand sixteen_gpus(UtilizationProfile p = always_on()) { return {16, std::move(p), "month", 1}; }

CostOption cloud(double price_per_hour, CloudPricing pricing = CloudPricing::on_demand) {
  CostOption o;
  o.name = "cloud";
  o.kind = OptionKind::cloud;
  o.rented.price_per_node = usd_per_hour(price_per_hour);
  o.rented.gpus_per_node = 8;
  o.rented.pricing = pricing;
  return o;
}

CostOption on_prem() {
  CostOption o;
  o.name = "on-prem";
  o.kind = OptionKind::on_prem;
  OwnedTerms& w = o.owned;
  w.server_price = usd(200000);
  w.network_per_server = usd(20000);
  w.gpus_per_server = 8;
  w.depreciation = Seconds(36 * units::month);
  w.max_power = watts(6500);
  w.idle_power = watts(1500);
  w.pue = 1.5;
  w.electricity_price = *parse_as<MoneyPerJoule>("0.10 USD/kWh");
  w.maintenance_per_year = 0.10;
  w.licences_per_gpu_per_year = usd(1000);
  w.staff_fte = 0.5;
  w.staff_cost_per_fte = *parse_as<MoneyPerSecond>("120000 USD/year");
  w.space_per_server = *parse_as<MoneyPerSecond>("500 USD/month");
  return o;
}

double total(const CostOption& o, const Demand& d) { return cost_option(o, d)->over(kTwoYears).value(); }

}  // namespace

TEST_CASE("cloud on-demand pays the busy hours of whole nodes") {
  // 16 GPUs / 8 per node = 2 nodes x 32.77 USD/h x 17,520 h = 1,148,260.8 USD.
  CHECK(total(cloud(32.77), sixteen_gpus()) == doctest::Approx(1148260.8));
  // Business hours, 10 h x 5 d = 50/168 of the time: 1,148,260.8 x 50/168 = 341,744.29 USD.
  CHECK(total(cloud(32.77), sixteen_gpus(business_hours())) == doctest::Approx(341744.29).epsilon(1e-6));
  // 12 GPUs still need 2 whole nodes.
  CHECK(cost_option(cloud(32.77), {12, always_on(), "month", 1})->nodes == 2);
}

TEST_CASE("reserved capacity is paid every hour whatever the utilization") {
  // 2 nodes x 20 USD/h x 17,520 h = 700,800 USD at 24/7 and at business hours alike.
  CHECK(total(cloud(20, CloudPricing::reserved_1yr), sixteen_gpus()) == doctest::Approx(700800));
  CHECK(total(cloud(20, CloudPricing::reserved_1yr), sixteen_gpus(business_hours())) == doctest::Approx(700800));
}

TEST_CASE("spot adds the rework of interruptions") {
  CostOption spot = cloud(15, CloudPricing::spot);
  spot.rented.interruptions_per_hour = 0.1;
  spot.rented.checkpoint_interval = hours(1);
  spot.rented.restart_time = Seconds(900);
  // Overhead = 0.1/h x (1 h / 2 + 0.25 h) = 0.075; 2 x 15 x 1.075 x 17,520 = 565,020 USD.
  auto c = cost_option(spot, sixteen_gpus());
  REQUIRE(c.ok());
  CHECK(c->spot_overhead == doctest::Approx(0.075));
  CHECK(c->over(kTwoYears).value() == doctest::Approx(565020));
}

TEST_CASE("on-prem: depreciation, power at utilization, maintenance, licences, staff, space") {
  auto c = cost_option(on_prem(), sixteen_gpus());
  REQUIRE(c.ok());
  // capex = 2 x (200,000 + 20,000) = 440,000 USD, used up over 24 of 36 months: 293,333.33.
  CHECK(c->capex.value() == doctest::Approx(440000));
  // Power at 100 %: 2 x 6,500 W x PUE 1.5 = 19.5 kW x 0.10 USD/kWh = 1.95 USD/h -> 34,164 USD.
  CHECK((c->power * kTwoYears).value() == doctest::Approx(34164));
  // Maintenance 10 %/yr of 440,000 -> 88,000; licences 16 x 1,000/yr -> 32,000;
  // staff 0.5 x 120,000/yr -> 120,000; space 2 x 500/month -> 24,000.
  CHECK((c->maintenance * kTwoYears).value() == doctest::Approx(88000));
  CHECK((c->licences * kTwoYears).value() == doctest::Approx(32000));
  CHECK((c->staff * kTwoYears).value() == doctest::Approx(120000));
  CHECK((c->space * kTwoYears).value() == doctest::Approx(24000));
  // Total: 293,333.33 + 34,164 + 88,000 + 32,000 + 120,000 + 24,000 = 591,497.33 USD.
  CHECK(c->over(kTwoYears).value() == doctest::Approx(591497.33).epsilon(1e-6));
  // Idle servers still draw: at 10 % utilization power is 2 x (1,500 + 5,000 x 0.1) W x 1.5
  // = 6 kW x 0.10 = 0.60 USD/h -> 10,512 USD.
  auto idle = cost_option(on_prem(), sixteen_gpus(measured(0.1)));
  CHECK((idle->power * kTwoYears).value() == doctest::Approx(10512));
}

TEST_CASE("colocation: contracted kW, cross-connects, remote hands, metered energy") {
  CostOption colo = on_prem();
  colo.name = "colocation";
  colo.kind = OptionKind::colocation;
  colo.owned.space_per_server = MoneyPerSecond(0);
  colo.owned.pue = 1.4;
  colo.owned.electricity_price = *parse_as<MoneyPerJoule>("0.08 USD/kWh");
  colo.owned.staff_fte = 0.25;
  colo.owned.colocation_price = *parse_as<MoneyPerJoule>("190 USD/kW/month");
  colo.owned.cross_connects = 2;
  colo.owned.cross_connect_price = *parse_as<MoneyPerSecond>("300 USD/month");
  colo.owned.remote_hands_per_month = hours(4);
  colo.owned.remote_hands_price = usd_per_hour(150);
  auto c = cost_option(colo, sixteen_gpus());
  REQUIRE(c.ok());
  // Space: 13 kW x 190 USD/kW/month = 2,470 + 2 x 300 + 4 h x 150 = 3,670 USD/month -> 88,080.
  CHECK((c->space * kTwoYears).value() == doctest::Approx(88080));
  // Energy: 13 kW x 1.4 = 18.2 kW x 0.08 = 1.456 USD/h -> 25,509.12 USD.
  CHECK((c->power * kTwoYears).value() == doctest::Approx(25509.12));
  // 293,333.33 + 25,509.12 + 88,080 + 60,000 staff + 88,000 + 32,000 = 586,922.45 USD.
  CHECK(c->over(kTwoYears).value() == doctest::Approx(586922.45).epsilon(1e-6));
}

TEST_CASE("a MIG slice or MPS share is charged as its fraction") {
  CostOption shared = cloud(32.77);
  shared.gpu_share = 1.0 / 7;  // a 1g slice of seven
  // 16 slices of 1/7 GPU = 16/7 GPUs = 2/7 of an 8-GPU node: 32.77 x 2/7 x 17,520 = 164,037.26.
  CHECK(total(shared, sixteen_gpus()) == doctest::Approx(164037.26).epsilon(1e-6));
}

TEST_CASE("break-even utilization and month between cloud and owned servers") {
  CostInputs in{{cloud(32.77), on_prem()}, sixteen_gpus(), kTwoYears};
  auto r = compare_costs(in);
  REQUIRE(r.ok());
  REQUIRE(r->break_even.size() == 1);
  const auto& be = r->break_even[0];
  // Cloud(u) = 1,148,260.8 u. On-prem(u) = 557,333.33 (power aside) + (0.45 + 1.5 u) USD/h x 17,520
  //          = 565,217.33 + 26,280 u.  Equal at u = 565,217.33 / 1,121,980.8 = 0.50377.
  REQUIRE(be.utilization.has_value());
  CHECK(*be.utilization == doctest::Approx(0.50377).epsilon(1e-4));
  // Cash: on-prem 440,000 + 12,423.50/month (1,423.50 power + 3,666.67 maintenance + 1,333.33
  // licences + 5,000 staff + 1,000 space) against cloud 47,844.20/month: crosses when
  // m >= 440,000 / 35,420.70 = 12.42, in month 13.
  REQUIRE(be.month.has_value());
  CHECK(be.a == "on-prem");
  CHECK(*be.month == 13);
  // 24/7 over two years the servers win; at business hours the cloud does.
  CHECK(r->options[r->cheapest].name == "on-prem");
  CostInputs part = in;
  part.demand.profile = business_hours();
  CHECK(compare_costs(part)->options[compare_costs(part)->cheapest].name == "cloud");
}

TEST_CASE("sensitivity ranks the inputs that move the answer most") {
  CostInputs in{{cloud(32.77), on_prem()}, sixteen_gpus(), kTwoYears};
  auto r = compare_costs(in);
  REQUIRE(r.ok());
  // The cheapest option is on-prem (591,497.33). By hand, its cost at -25 % / +25 %:
  //   server price: capex used 293,333 and maintenance 88,000 scale with it; network does
  //     not: (200/220 of 293,333 + 88,000 x 200/220) x 0.5 = 173,333 swing -> 29.3 %;
  //   staff cost: 120,000 x 0.5 = 60,000 -> 10.1 %;
  //   electricity: 34,164 x 0.5 = 17,082 -> 2.9 %.
  // So server price ranks above staff, staff above electricity.
  auto rank = [&](const std::string& name) {
    for (std::size_t i = 0; i < r->sensitivity.size(); ++i)
      if (r->sensitivity[i].input == name) return static_cast<int>(i);
    return -1;
  };
  CHECK(rank("server price") < rank("staff cost"));
  CHECK(rank("staff cost") < rank("electricity price"));
  for (const auto& row : r->sensitivity)
    if (row.input == "staff cost") CHECK(row.swing == doctest::Approx(60000.0 / 591497.33).epsilon(1e-4));
}

TEST_CASE("zero prices and utilizations are clear errors") {
  CHECK(cost_option(cloud(0), sixteen_gpus()).errors()[0].message ==
        "cloud: the price per node must be greater than zero");
  CHECK(cost_option(cloud(10), sixteen_gpus(measured(0))).errors()[0].message ==
        "utilization must be greater than 0 and at most 100 %");
  CostOption no_power = on_prem();
  no_power.owned.electricity_price = MoneyPerJoule(0);
  CHECK(cost_option(no_power, sixteen_gpus()).errors()[0].message ==
        "on-prem: on-prem needs an electricity price greater than zero");
}

TEST_CASE("per-run work: each option's own run time, cost per run and break-even runs per month") {
  // A run takes 100 h on a cloud GPU at 0.50 USD/h and 20 h on a rented server at
  // 300 USD/month (730 h): the cloud costs 50 USD a run, the server 300 USD a month.
  CostOption cloud_gpu;
  cloud_gpu.name = "cloud";
  cloud_gpu.rented.price_per_node = usd_per_hour(0.5);
  cloud_gpu.gpus = 1;
  cloud_gpu.busy_per_unit = 100.0 / 730.0;
  CostOption server;
  server.name = "rented server";
  server.kind = OptionKind::bare_metal;
  server.rented.price_per_node = *parse_as<MoneyPerSecond>("300 USD/month");
  server.gpus = 1;
  server.busy_per_unit = 20.0 / 730.0;
  CostInputs in{{cloud_gpu, server}, {1, always_on(), "training run", 4}, Seconds(12 * units::month)};
  auto r = compare_costs(in);
  REQUIRE(r.ok());
  // 4 runs a month for 12 months = 48 runs: cloud 48 x 50 = 2,400 USD (50 per run);
  // server 12 x 300 = 3,600 USD (75 per run).
  CHECK(r->totals[0].value() == doctest::Approx(2400));
  CHECK(r->per_unit[0].value() == doctest::Approx(50));
  CHECK(r->per_unit[1].value() == doctest::Approx(75));
  // Equal when 50 r = 300, at 6 runs a month.
  REQUIRE(r->break_even[0].units_per_month.has_value());
  CHECK(*r->break_even[0].units_per_month == doctest::Approx(6.0).epsilon(1e-4));
  // 50 runs a month keep the server busy 50 x 20 / 730 = 137 %: two servers.
  in.demand.units_per_month = 50;
  CHECK(compare_costs(in)->options[1].nodes == 2);
}

namespace {

// One 8-GPU server bought for 100,000 USD with a 36-month life, drawing a flat 1 kW at
// 0.10 USD/kWh (PUE 1): power = 0.10 USD/h x 730 h = 73 USD/month. Nothing else.
CostOption refreshed_server() {
  CostOption o;
  o.name = "owned";
  o.kind = OptionKind::on_prem;
  OwnedTerms& w = o.owned;
  w.server_price = usd(100000);
  w.gpus_per_server = 8;
  w.depreciation = Seconds(36 * units::month);
  w.max_power = watts(1000);
  w.idle_power = watts(1000);
  w.electricity_price = *parse_as<MoneyPerJoule>("0.10 USD/kWh");
  return o;
}

const Seconds kFiveYears = Seconds(60 * units::month);

}  // namespace

TEST_CASE("owned hardware is bought again when its life ends inside a 5-year horizon") {
  auto c = cost_option(refreshed_server(), {8, always_on(), "month", 1});
  REQUIRE(c.ok());
  // Purchases at month 0 and month 36 (36 < 60); none at 72.
  CHECK(c->purchases(kFiveYears) == 2);
  CHECK(c->purchases(Seconds(36 * units::month)) == 1);  // a life ending exactly at t is not replaced
  // Cash by month 60: 2 x 100,000 + 60 x 73 = 204,380 USD.
  CHECK(c->cumulative(kFiveYears).value() == doctest::Approx(204380));
  // The second server has 12 of its 36 months left: residual 100,000 x 12 / 36 = 33,333.33.
  CHECK(c->residual_value(kFiveYears).value() == doctest::Approx(33333.33).epsilon(1e-6));
  // Cost of the horizon: 204,380 - 33,333.33 = 171,046.67 = (100,000 / 36 + 73) x 60.
  CHECK(c->over(kFiveYears).value() == doctest::Approx(171046.67).epsilon(1e-6));
  // Before the fix the hardware stopped costing anything after month 36: 100,000 + 4,380.
  CHECK(c->over(kFiveYears).value() > 104380 + 1);
}

TEST_CASE("per month is the horizon average, and the first year's cash rate and the steady state are shown too") {
  auto c = cost_option(refreshed_server(), {8, always_on(), "month", 1});
  REQUIRE(c.ok());
  const double month = units::month;
  // Average: 171,046.67 / 60 = 2,850.78 USD/month.
  CHECK(c->monthly_average(kFiveYears).value() * month == doctest::Approx(2850.78).epsilon(1e-5));
  // First year: (100,000 + 12 x 73) / 12 = 8,406.33 USD/month, the purchase included.
  CHECK(c->monthly_first_year(kFiveYears).value() * month == doctest::Approx(8406.33).epsilon(1e-5));
  // Steady state: 100,000 / 36 + 73 = 2,850.78 USD/month (the same as the average: refreshes
  // keep the hardware cost linear in time).
  CHECK(c->monthly_amortized().value() * month == doctest::Approx(2850.78).epsilon(1e-5));
  // A horizon shorter than a year: the first-year rate is over that horizon, 6 months:
  // (100,000 + 6 x 73) / 6 = 16,739.67 USD/month.
  CHECK(c->monthly_first_year(Seconds(6 * units::month)).value() * month ==
        doctest::Approx(16739.67).epsilon(1e-5));
  // compare_costs totals are the average times the horizon.
  CostInputs in{{refreshed_server()}, {8, always_on(), "month", 1}, kFiveYears};
  auto cmp = compare_costs(in);
  REQUIRE(cmp.ok());
  CHECK(cmp->totals[0].value() == doctest::Approx(cmp->options[0].monthly_average(kFiveYears).value() * 60 * month));
}

TEST_CASE("staff costs are carried by colocation as by on-prem") {
  CostOption colo = refreshed_server();
  colo.kind = OptionKind::colocation;
  colo.owned.colocation_price = *parse_as<MoneyPerJoule>("200 USD/kW/month");
  auto without = cost_option(colo, {8, always_on(), "month", 1});
  colo.owned.staff_fte = 0.5;
  colo.owned.staff_cost_per_fte = *parse_as<MoneyPerSecond>("120000 USD/year");
  auto with = cost_option(colo, {8, always_on(), "month", 1});
  REQUIRE(without.ok());
  REQUIRE(with.ok());
  // 0.5 FTE x 120,000 USD/year = 60,000 USD/year = 5,000 USD/month; 24 months: 120,000 USD.
  CHECK((with->staff * kTwoYears).value() == doctest::Approx(120000));
  CHECK(with->over(kTwoYears).value() - without->over(kTwoYears).value() == doctest::Approx(120000));
  // Colocation space: 1 kW contracted x 200 USD/kW/month = 200 USD/month.
  CHECK((with->space * Seconds(units::month)).value() == doctest::Approx(200));
}

TEST_CASE("break-even with no crossing says which option is cheaper at every utilization") {
  CostOption cheap = cloud(10), dear = cloud(20);
  cheap.name = "cheap";
  dear.name = "dear";
  for (bool cheap_first : {true, false}) {
    CAPTURE(cheap_first);
    CostInputs in{cheap_first ? std::vector{cheap, dear} : std::vector{dear, cheap}, sixteen_gpus(), kTwoYears};
    auto cmp = compare_costs(in);
    REQUIRE(cmp.ok());
    const BreakEven& be = cmp->break_even.at(0);
    CHECK_FALSE(be.utilization.has_value());
    CHECK((be.a_cheaper_below ? be.a : be.b) == "cheap");
  }
  // Cloud at 1,000,000 USD/node-hour against owned servers: even at 0.1 % utilization the
  // cloud costs 2 x 1e6 x 0.001 x 17,520 h = 35 M USD, far above the owned servers, so owned
  // is cheaper at every utilization and repays its purchase in month 1; the pair is then
  // reported owned-first, and the flag must follow the swap.
  CostOption pricey = cloud(1e6);
  CostInputs in{{pricey, on_prem()}, sixteen_gpus(), kTwoYears};
  auto cmp = compare_costs(in);
  REQUIRE(cmp.ok());
  const BreakEven& be = cmp->break_even.at(0);
  CHECK(be.a == "on-prem");
  CHECK_FALSE(be.utilization.has_value());
  CHECK((be.a_cheaper_below ? be.a : be.b) == "on-prem");
}
