// Physical quantities as types.
//
// A Quantity<D> holds one double in SI base units (bytes, seconds, floating-point or
// integer operations, watts, currency units) and its dimension D in the type, so a
// bandwidth cannot be passed where a latency is expected and Bytes / Seconds is a
// BytesPerSecond. Quantities that involve money also carry their currency; adding
// amounts in two currencies is a logic error (std::logic_error), so loaders check the
// currency of input first.
//
// Parsing from text ("80 GiB", "3.35 TB/s", "400 Gb/s", "2.5 USD/h", "190 USD/kW/month")
// is exact about decimal vs binary prefixes and bits vs bytes:
//   1 GB = 1e9 B, 1 GiB = 2^30 B, 1 Gb = 1e9 bit = 1.25e8 B.
// Calendar units: 1 month = 730 h (one twelfth of a 365-day year, the convention cloud
// price lists use), 1 year = 365 d.
//
// Thread-safety: all functions are pure; quantities are plain values.
#pragma once

#include <compare>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <optional>
#include <string_view>

#include "capsim/core/result.hpp"

namespace capsim {

// Exponents of the base dimensions.
struct Dim {
  int bytes = 0;
  int seconds = 0;
  int ops = 0;
  int watts = 0;
  int money = 0;
  friend constexpr bool operator==(const Dim&, const Dim&) = default;
};

constexpr Dim operator*(Dim a, Dim b) {
  return {a.bytes + b.bytes, a.seconds + b.seconds, a.ops + b.ops, a.watts + b.watts,
          a.money + b.money};
}
constexpr Dim operator/(Dim a, Dim b) {
  return {a.bytes - b.bytes, a.seconds - b.seconds, a.ops - b.ops, a.watts - b.watts,
          a.money - b.money};
}

enum class Currency : std::uint8_t { none, usd, eur, gbp, rub };
std::string_view currency_code(Currency c);  // "USD", "" for none
std::optional<Currency> parse_currency_code(std::string_view code);  // "EUR" -> eur; nullopt otherwise

template <Dim D>
class Quantity {
 public:
  static constexpr Dim dim = D;

  constexpr Quantity() = default;
  // si: the amount in SI base units. currency: only meaningful when D has money.
  constexpr explicit Quantity(double si, Currency currency = default_currency())
      : value_(si), currency_(currency) {}

  constexpr double value() const { return value_; }
  constexpr Currency currency() const { return currency_; }

  constexpr Quantity operator+(Quantity o) const { return Quantity(value_ + o.value_, same(o)); }
  constexpr Quantity operator-(Quantity o) const { return Quantity(value_ - o.value_, same(o)); }
  constexpr Quantity operator-() const { return Quantity(-value_, currency_); }
  constexpr Quantity& operator+=(Quantity o) { return *this = *this + o; }
  constexpr Quantity& operator-=(Quantity o) { return *this = *this - o; }
  constexpr Quantity operator*(double k) const { return Quantity(value_ * k, currency_); }
  constexpr Quantity operator/(double k) const { return Quantity(value_ / k, currency_); }
  friend constexpr Quantity operator*(double k, Quantity q) { return q * k; }

  template <Dim E>
  constexpr auto operator*(Quantity<E> o) const {
    return Quantity<D * E>(value_ * o.value(), merged(o.currency()));
  }
  template <Dim E>
  constexpr auto operator/(Quantity<E> o) const {
    return Quantity<D / E>(value_ / o.value(), merged(o.currency()));
  }

  constexpr auto operator<=>(const Quantity& o) const { return value_ <=> o.value_; }
  constexpr bool operator==(const Quantity& o) const { return value_ == o.value_; }

 private:
  static constexpr Currency default_currency() {
    return D.money != 0 ? Currency::usd : Currency::none;
  }
  constexpr Currency same(Quantity o) const {
    if (D.money != 0 && currency_ != o.currency_)
      throw std::logic_error("capsim: arithmetic on amounts in two currencies");
    return currency_;
  }
  constexpr Currency merged(Currency other) const {
    if (currency_ != Currency::none && other != Currency::none && currency_ != other)
      throw std::logic_error("capsim: arithmetic on amounts in two currencies");
    return currency_ != Currency::none ? currency_ : other;
  }

  double value_ = 0.0;
  Currency currency_ = default_currency();
};

namespace dims {
inline constexpr Dim none{};
inline constexpr Dim bytes{.bytes = 1};
inline constexpr Dim seconds{.seconds = 1};
inline constexpr Dim ops{.ops = 1};
inline constexpr Dim watts{.watts = 1};
inline constexpr Dim money{.money = 1};
}  // namespace dims

using Ratio = Quantity<dims::none>;
using Bytes = Quantity<dims::bytes>;
using Seconds = Quantity<dims::seconds>;
using Flops = Quantity<dims::ops>;  // a count of operations
using FlopsPerSecond = Quantity<dims::ops / dims::seconds>;
using BytesPerSecond = Quantity<dims::bytes / dims::seconds>;
using Watts = Quantity<dims::watts>;
using Joules = Quantity<dims::watts * dims::seconds>;
using Money = Quantity<dims::money>;
using MoneyPerSecond = Quantity<dims::money / dims::seconds>;            // USD/h
using MoneyPerJoule = Quantity<dims::money / dims::watts / dims::seconds>;  // USD/kWh, USD/kW/month

// Conversions used across the code base (exact where the unit is exact).
namespace units {
inline constexpr double kilo = 1e3, mega = 1e6, giga = 1e9, tera = 1e12, peta = 1e15;
inline constexpr double kibi = 1024.0, mebi = kibi * 1024, gibi = mebi * 1024, tebi = gibi * 1024;
inline constexpr double hour = 3600.0, day = 86400.0, year = 365.0 * day, month = year / 12.0;
}  // namespace units

constexpr Bytes gigabytes(double v) { return Bytes(v * units::giga); }
constexpr Bytes gibibytes(double v) { return Bytes(v * units::gibi); }
constexpr Seconds seconds(double v) { return Seconds(v); }
constexpr Seconds hours(double v) { return Seconds(v * units::hour); }
constexpr Seconds days(double v) { return Seconds(v * units::day); }
constexpr BytesPerSecond gigabytes_per_second(double v) { return BytesPerSecond(v * units::giga); }
constexpr BytesPerSecond gigabits_per_second(double v) {
  return BytesPerSecond(v * units::giga / 8.0);
}
constexpr FlopsPerSecond teraflops(double v) { return FlopsPerSecond(v * units::tera); }
constexpr Watts watts(double v) { return Watts(v); }
constexpr Money usd(double v) { return Money(v, Currency::usd); }
constexpr MoneyPerSecond usd_per_hour(double v) {
  return MoneyPerSecond(v / units::hour, Currency::usd);
}

// A quantity read from text whose dimension is known only at run time.
struct ParsedQuantity {
  double value_si = 0.0;
  Dim dim;
  Currency currency = Currency::none;
};

// Parses "<number> <unit>" (the space is optional). Rejects NaN, infinity, and numbers
// that overflow a double. Diagnostics carry a message and hint but no location: the
// caller knows where the text came from and fills SourceLocation in.
Result<ParsedQuantity> parse_quantity(std::string_view text);

// A person's name for a dimension with an example: "a bandwidth (e.g. '3.35 TB/s')".
std::string describe_dimension(Dim d);

template <class Q>
Result<Q> parse_as(std::string_view text) {
  auto parsed = parse_quantity(text);
  if (!parsed) return parsed.errors();
  if (!(parsed->dim == Q::dim)) {
    return Diagnostic{{}, {},
                      "expected " + describe_dimension(Q::dim) + ", got " +
                          describe_dimension(parsed->dim) + " ('" + std::string(text) + "')",
                      {}};
  }
  return Q(parsed->value_si, parsed->currency);
}

// Parses a count with an optional scale suffix: "7B" / "7 billion" = 7e9, "1.5T", "350M",
// "125k", "175e9", "4096". Used for parameter and token counts.
Result<double> parse_count(std::string_view text);

// Human-readable text that parse_as reads back to the same dimension, with a sensible
// prefix: "80 GB", "3.35 TB/s", "989 TFLOPS", "2.5 USD/h". 4 significant digits.
std::string to_string(const ParsedQuantity& q);
template <Dim D>
std::string to_string(Quantity<D> q) {
  return to_string(ParsedQuantity{q.value(), D, q.currency()});
}
// The value expressed in `unit` ("USD/kW/month"): "190 USD/kW/month". Falls back to
// to_string when `unit` does not parse or has another dimension.
std::string to_string_in(const ParsedQuantity& q, std::string_view unit);
// The SI unit of a dimension as text: "B/s", "FLOP/s", "USD/W/s", "" for none.
std::string si_unit(Dim d, Currency currency = Currency::none);
// Same as to_string but with binary prefixes for data sizes ("80 GiB").
std::string to_string_binary(Bytes b);

}  // namespace capsim
