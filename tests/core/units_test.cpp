#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "capsim/core/units.hpp"

using namespace capsim;

namespace {

struct Case {
  const char* text;
  double si;  // expected value in SI base units
  Dim dim;
};

constexpr Dim kBandwidth = dims::bytes / dims::seconds;
constexpr Dim kRate = dims::ops / dims::seconds;
constexpr Dim kPerHour = dims::money / dims::seconds;
constexpr Dim kPerPowerTime = dims::money / dims::watts / dims::seconds;

// Each expected value is written as the arithmetic that defines the unit.
const Case kGood[] = {
    {"80 GB", 80e9, dims::bytes},
    {"80 GiB", 80.0 * 1024 * 1024 * 1024, dims::bytes},
    {"80GB", 80e9, dims::bytes},
    {"  80 GB  ", 80e9, dims::bytes},
    {"1 kB", 1e3, dims::bytes},
    {"1 KB", 1e3, dims::bytes},
    {"1 KiB", 1024, dims::bytes},
    {"1.5 TiB", 1.5 * 1099511627776.0, dims::bytes},
    {"8 bit", 1, dims::bytes},
    {"1 Gb", 1e9 / 8, dims::bytes},
    {"3.35 TB/s", 3.35e12, kBandwidth},
    {"900 GB/s", 900e9, kBandwidth},
    {"400 Gb/s", 400e9 / 8, kBandwidth},  // bits: 50 GB/s
    {"400 Gbps", 400e9 / 8, kBandwidth},
    {"25 Gbit/s", 25e9 / 8, kBandwidth},
    {"64 GiB/s", 64.0 * 1073741824.0, kBandwidth},
    {"989 TFLOPS", 989e12, kRate},
    {"989 TFLOP/s", 989e12, kRate},
    {"1979 TOPS", 1979e12, kRate},
    {"6 PFLOP", 6e15, dims::ops},
    {"700 W", 700, dims::watts},
    {"10.2 kW", 10200, dims::watts},
    {"1.5 kWh", 1.5 * 1000 * 3600, dims::watts * dims::seconds},
    {"2.5 USD/h", 2.5 / 3600, kPerHour},
    {"98.32 USD/hour", 98.32 / 3600, kPerHour},
    {"1200 USD/month", 1200 / (365.0 * 86400 / 12), kPerHour},
    {"90000 USD/year", 90000 / (365.0 * 86400), kPerHour},
    {"190 USD/kW/month", 190 / 1000.0 / (365.0 * 86400 / 12), kPerPowerTime},
    {"0.12 USD/kWh", 0.12 / (1000.0 * 3600), kPerPowerTime},
    {"30000 USD", 30000, dims::money},
    {"14 d", 14 * 86400.0, dims::seconds},
    {"200 ms", 0.2, dims::seconds},
    {"1.3 us", 1.3e-6, dims::seconds},
    {"15 min", 900, dims::seconds},
    {"2 h", 7200, dims::seconds},
    {"3 weeks", 21 * 86400.0, dims::seconds},
    {"1 month", 730 * 3600.0, dims::seconds},  // 1/12 of a 365-day year
    {"1 year", 8760 * 3600.0, dims::seconds},
    {"3.1 GHz", 3.1e9, Dim{.seconds = -1}},
    {"0.5", 0.5, dims::none},
    {"50 %", 0.5, dims::none},
    {"1e3 GB", 1e12, dims::bytes},
    {"-5 W", -5, dims::watts},  // the parser reads signs; loaders reject negatives
};

struct BadCase {
  const char* text;
  const char* message;
  const char* hint;
};

const BadCase kBad[] = {
    {"", "empty quantity", "write a number then a unit, e.g. '80 GB'"},
    {"GB", "'GB' does not start with a number", "write a number then a unit, e.g. '80 GB'"},
    {"nan GB", "not a finite number: 'nan GB'", "give a finite value"},
    {"inf", "not a finite number: 'inf'", "give a finite value"},
    {"1e400 GB", "number out of range in '1e400 GB'", ""},
    {"80 GBs", "unknown unit 'GBs' in '80 GBs'", "did you mean 'GB'?"},
    {"80 gb", "unknown unit 'gb' in '80 gb'",
     "units are case-sensitive (B is bytes, b is bits); did you mean 'GB' or 'Gb'?"},
    {"989 TFLOPs", "unknown unit 'TFLOPs' in '989 TFLOPs'", "write FLOPS or FLOP/s for a rate, FLOP for a count"},
    {"3 TB/", "malformed unit in '3 TB/'", "e.g. '3.35 TB/s'"},
    {"5 h/USD", "a currency may appear once, first: '5 h/USD'", ""},
    {"1 mB", "unknown unit 'mB' in '1 mB'",
     "units are case-sensitive (B is bytes, b is bits); did you mean 'MB' or 'Mb'?"},
    {"1 tflops", "unknown unit 'tflops' in '1 tflops'", "units are case-sensitive; did you mean 'TFLOPS'?"},
    {"2 Kis", "unknown unit 'Kis' in '2 Kis'", ""},
};

}  // namespace

TEST_CASE("parse_quantity reads every unit form exactly") {
  for (const auto& c : kGood) {
    CAPTURE(c.text);
    auto q = parse_quantity(c.text);
    REQUIRE(q.ok());
    CHECK(q->dim == c.dim);
    CHECK(q->value_si == doctest::Approx(c.si).epsilon(1e-12));
  }
}

TEST_CASE("binary and decimal prefixes are exact") {
  CHECK(parse_quantity("80 GiB")->value_si == 85899345920.0);
  CHECK(parse_quantity("80 GB")->value_si == 80000000000.0);
  CHECK(parse_quantity("400 Gb/s")->value_si == 50000000000.0);
}

TEST_CASE("parse_quantity rejects bad text with a clear message") {
  for (const auto& c : kBad) {
    CAPTURE(c.text);
    auto q = parse_quantity(c.text);
    REQUIRE_FALSE(q.ok());
    REQUIRE(q.errors().size() == 1);
    CHECK(q.errors()[0].message == c.message);
    if (*c.hint) CHECK(q.errors()[0].hint == c.hint);
  }
}

TEST_CASE("parse_as names the expected dimension when the unit is of another kind") {
  auto b = parse_as<Bytes>("3.35 TB/s");
  REQUIRE_FALSE(b.ok());
  CHECK(b.errors()[0].message ==
        "expected a data size (e.g. '80 GB'), got a bandwidth (e.g. '3.35 TB/s' or '400 Gb/s') ('3.35 TB/s')");
  auto bw = parse_as<BytesPerSecond>("80 GB");
  REQUIRE_FALSE(bw.ok());
  CHECK(bw.errors()[0].message ==
        "expected a bandwidth (e.g. '3.35 TB/s' or '400 Gb/s'), got a data size (e.g. '80 GB') ('80 GB')");
  auto s = parse_as<Seconds>("700 W");
  REQUIRE_FALSE(s.ok());
  CHECK(s.errors()[0].message.starts_with("expected a duration"));
  auto ok = parse_as<Seconds>("14 d");
  REQUIRE(ok.ok());
  CHECK(ok->value() == 14 * 86400.0);
}

TEST_CASE("currencies are carried and mixing them is refused") {
  auto eur = parse_as<Money>("100 EUR");
  REQUIRE(eur.ok());
  CHECK(eur->currency() == Currency::eur);
  CHECK_THROWS_AS(static_cast<void>(*eur + usd(5)), std::logic_error);
  CHECK((usd(2) + usd(3)).value() == 5);
  // USD/h times hours is USD, with the currency kept.
  const Money cost = usd_per_hour(2.5) * hours(4);
  CHECK(cost.value() == doctest::Approx(10.0));
  CHECK(cost.currency() == Currency::usd);
}

TEST_CASE("typed arithmetic gives the derived dimension") {
  const Bytes size = gigabytes(80);
  const BytesPerSecond bw = gigabytes_per_second(3350);
  const Seconds t = size / bw;  // would not compile if the dimension were wrong
  CHECK(t.value() == doctest::Approx(80.0 / 3350.0));
  const Ratio r = gigabytes(40) / gigabytes(80);
  CHECK(r.value() == 0.5);
}

TEST_CASE("to_string reads back to the same value") {
  const char* texts[] = {"80 GB", "3.35 TB/s", "989 TFLOPS", "700 W", "2.5 USD/h", "200 ms", "14 d"};
  for (const char* text : texts) {
    CAPTURE(text);
    auto q = parse_quantity(text);
    REQUIRE(q.ok());
    CHECK(to_string(*q) == text);
  }
  CHECK(to_string_binary(gibibytes(80)) == "80 GiB");
  CHECK(to_string_in(*parse_quantity("190 USD/kW/month"), "USD/kW/month") == "190 USD/kW/month");
  CHECK(si_unit(dims::bytes / dims::seconds) == "B/s");
  CHECK(si_unit(dims::money / dims::seconds, Currency::usd) == "USD/s");
}

TEST_CASE("parse_count reads parameter and token counts") {
  CHECK(*parse_count("7B") == 7e9);
  CHECK(*parse_count("1.5T") == 1.5e12);
  CHECK(*parse_count("350M") == 350e6);
  CHECK(*parse_count("175e9") == 175e9);
  CHECK(*parse_count("70 billion") == 70e9);
  auto bad = parse_count("7 bn");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.errors()[0].message == "unknown count suffix 'bn' in '7 bn'");
}

TEST_CASE("issue 21: every unit capsim prints is read back: a count multiplier on its own") {
  // capsim prints large money as "41.05 M USD" and counts as "150.6 k" (human_count).
  auto money = parse_quantity("41.05 M USD");
  REQUIRE(money.ok());
  CHECK(money->value_si == doctest::Approx(41.05e6));
  CHECK(money->currency == Currency::usd);
  CHECK(money->dim == dims::money);
  CHECK(parse_quantity("16.2 k USD/month")->value_si == doctest::Approx(16200.0 / (730 * 3600)));
  CHECK(parse_quantity("150.6 k")->value_si == doctest::Approx(150600));
  CHECK(parse_quantity("1.2 G")->value_si == doctest::Approx(1.2e9));
  // The prefixed units are what they were.
  CHECK(parse_quantity("5 MB")->value_si == 5e6);
  CHECK(parse_quantity("3 ms")->value_si == doctest::Approx(0.003));
  CHECK_FALSE(parse_quantity("5 M M USD").ok());
}
