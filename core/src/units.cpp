#include "capsim/core/units.hpp"
#include "capsim/core/text.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>
#include <vector>

#include "capsim/core/suggest.hpp"

namespace capsim {
namespace {

enum class Prefixes { none, data, up, down, power };

struct UnitSymbol {
  std::string_view symbol;
  double factor;  // SI value of one unit
  Dim dim;
  Prefixes prefixes;
  Currency currency = Currency::none;
};

constexpr Dim kRate = dims::ops / dims::seconds;
constexpr Dim kEnergy = dims::watts * dims::seconds;

// Longest symbols are tried as whole words before any prefix is split off, so "min"
// is minutes, not milli-"in", and "mo" is a month.
const std::array kSymbols = {
    UnitSymbol{"B", 1.0, dims::bytes, Prefixes::data},
    UnitSymbol{"bit", 0.125, dims::bytes, Prefixes::data},
    UnitSymbol{"b", 0.125, dims::bytes, Prefixes::data},
    UnitSymbol{"bps", 0.125, dims::bytes / dims::seconds, Prefixes::up},
    UnitSymbol{"s", 1.0, dims::seconds, Prefixes::down},
    UnitSymbol{"sec", 1.0, dims::seconds, Prefixes::none},
    UnitSymbol{"min", 60.0, dims::seconds, Prefixes::none},
    UnitSymbol{"h", units::hour, dims::seconds, Prefixes::none},
    UnitSymbol{"hr", units::hour, dims::seconds, Prefixes::none},
    UnitSymbol{"hour", units::hour, dims::seconds, Prefixes::none},
    UnitSymbol{"hours", units::hour, dims::seconds, Prefixes::none},
    UnitSymbol{"d", units::day, dims::seconds, Prefixes::none},
    UnitSymbol{"day", units::day, dims::seconds, Prefixes::none},
    UnitSymbol{"days", units::day, dims::seconds, Prefixes::none},
    UnitSymbol{"week", 7 * units::day, dims::seconds, Prefixes::none},
    UnitSymbol{"weeks", 7 * units::day, dims::seconds, Prefixes::none},
    UnitSymbol{"mo", units::month, dims::seconds, Prefixes::none},
    UnitSymbol{"month", units::month, dims::seconds, Prefixes::none},
    UnitSymbol{"months", units::month, dims::seconds, Prefixes::none},
    UnitSymbol{"y", units::year, dims::seconds, Prefixes::none},
    UnitSymbol{"yr", units::year, dims::seconds, Prefixes::none},
    UnitSymbol{"year", units::year, dims::seconds, Prefixes::none},
    UnitSymbol{"years", units::year, dims::seconds, Prefixes::none},
    UnitSymbol{"FLOPS", 1.0, kRate, Prefixes::up},
    UnitSymbol{"OPS", 1.0, kRate, Prefixes::up},
    UnitSymbol{"FLOP", 1.0, dims::ops, Prefixes::up},
    UnitSymbol{"Hz", 1.0, Dim{.seconds = -1}, Prefixes::up},
    UnitSymbol{"W", 1.0, dims::watts, Prefixes::power},
    UnitSymbol{"Wh", units::hour, kEnergy, Prefixes::power},
    UnitSymbol{"J", 1.0, kEnergy, Prefixes::power},
    UnitSymbol{"USD", 1.0, dims::money, Prefixes::none, Currency::usd},
    UnitSymbol{"EUR", 1.0, dims::money, Prefixes::none, Currency::eur},
    UnitSymbol{"GBP", 1.0, dims::money, Prefixes::none, Currency::gbp},
    UnitSymbol{"RUB", 1.0, dims::money, Prefixes::none, Currency::rub},
};

struct Prefix {
  std::string_view text;
  double factor;
  bool binary;
  bool down;
};

const std::array kPrefixes = {
    Prefix{"Ki", 1024.0, true, false},         Prefix{"Mi", units::mebi, true, false},
    Prefix{"Gi", units::gibi, true, false},    Prefix{"Ti", units::tebi, true, false},
    Prefix{"Pi", units::tebi * 1024, true, false},
    Prefix{"Ei", units::tebi * 1024 * 1024, true, false},
    Prefix{"k", 1e3, false, false},            Prefix{"K", 1e3, false, false},
    Prefix{"M", 1e6, false, false},            Prefix{"G", 1e9, false, false},
    Prefix{"T", 1e12, false, false},           Prefix{"P", 1e15, false, false},
    Prefix{"E", 1e18, false, false},           Prefix{"m", 1e-3, false, true},
    Prefix{"u", 1e-6, false, true},            Prefix{"\xC2\xB5", 1e-6, false, true},  // µ
    Prefix{"n", 1e-9, false, true},
};

bool prefix_allowed(const Prefix& p, Prefixes allowed) {
  switch (allowed) {
    case Prefixes::none: return false;
    case Prefixes::data: return !p.down;
    case Prefixes::up: return !p.down && !p.binary;
    case Prefixes::down: return p.down;
    case Prefixes::power: return !p.binary && (p.text == "k" || p.text == "M" || p.text == "G" || p.text == "m");
  }
  return false;
}

struct Term {
  double factor = 1.0;
  Dim dim;
  Currency currency = Currency::none;
};

std::optional<Term> match_term(std::string_view word) {
  for (const auto& s : kSymbols)
    if (word == s.symbol) return Term{s.factor, s.dim, s.currency};
  for (const auto& p : kPrefixes) {
    if (word.size() <= p.text.size() || word.substr(0, p.text.size()) != p.text) continue;
    const std::string_view rest = word.substr(p.text.size());
    for (const auto& s : kSymbols)
      if (rest == s.symbol && prefix_allowed(p, s.prefixes))
        return Term{p.factor * s.factor, s.dim, s.currency};
  }
  return std::nullopt;
}

const std::vector<std::string>& all_unit_words() {
  static const std::vector<std::string> words = [] {
    std::vector<std::string> out;
    for (const auto& s : kSymbols) {
      out.emplace_back(s.symbol);
      for (const auto& p : kPrefixes)
        if (prefix_allowed(p, s.prefixes)) out.push_back(std::string(p.text) + std::string(s.symbol));
    }
    out.emplace_back("%");
    return out;
  }();
  return words;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

std::string unknown_unit_hint(std::string_view word) {
  if (word.ends_with("FLOPs")) return "write FLOPS or FLOP/s for a rate, FLOP for a count";
  std::vector<std::string> same_letters;
  for (const auto& w : all_unit_words())
    if (lower(w) == lower(word)) same_letters.push_back(w);
  if (!same_letters.empty()) {
    std::string hint = same_letters.size() > 1 ? "units are case-sensitive (B is bytes, b is bits); did you mean "
                                               : "units are case-sensitive; did you mean ";
    for (std::size_t i = 0; i < same_letters.size(); ++i)
      hint += (i ? " or '" : "'") + same_letters[i] + "'";
    return hint + "?";
  }
  return did_you_mean(word, all_unit_words());
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

Diagnostic error(std::string message, std::string hint = {}) {
  return Diagnostic{{}, {}, std::move(message), std::move(hint)};
}

// Reads the leading number of `text`; on success `rest` is what follows it.
Result<double> read_number(std::string_view text, std::string_view& rest) {
  const std::string quoted = "'" + std::string(text) + "'";
  std::string_view s = text;
  bool negative = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s.empty() || !((s.front() >= '0' && s.front() <= '9') || s.front() == '.')) {
    const std::string l = lower(s.substr(0, 3));
    if (l == "nan" || l == "inf")
      return error("not a finite number: " + quoted, "give a finite value");
    return error(quoted + " does not start with a number", "write a number then a unit, e.g. '80 GB'");
  }
  double value = 0.0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec == std::errc::result_out_of_range) return error("number out of range in " + quoted);
  if (ec != std::errc{}) return error(quoted + " does not start with a number");
  if (!std::isfinite(value)) return error("not a finite number: " + quoted);
  rest = std::string_view(end, static_cast<std::size_t>(s.data() + s.size() - end));
  return negative ? -value : value;
}

}  // namespace

std::optional<Currency> parse_currency_code(std::string_view code) {
  for (Currency c : {Currency::usd, Currency::eur, Currency::gbp, Currency::rub})
    if (currency_code(c) == code) return c;
  return std::nullopt;
}

std::string_view currency_code(Currency c) {
  switch (c) {
    case Currency::usd: return "USD";
    case Currency::eur: return "EUR";
    case Currency::gbp: return "GBP";
    case Currency::rub: return "RUB";
    case Currency::none: break;
  }
  return "";
}

Result<ParsedQuantity> parse_quantity(std::string_view text) {
  text = trim(text);
  if (text.empty()) return error("empty quantity", "write a number then a unit, e.g. '80 GB'");
  std::string_view rest;
  auto number = read_number(text, rest);
  if (!number) return number.errors();
  rest = trim(rest);
  ParsedQuantity q{*number, Dim{}, Currency::none};
  // A count multiplier on its own, as capsim prints large figures: "41.05 M USD", "150.6 k".
  // Every unit capsim prints is accepted as input.
  for (const auto& [word, factor] : {std::pair{'k', 1e3}, {'M', 1e6}, {'G', 1e9}, {'T', 1e12}})
    if (!rest.empty() && rest.front() == word && (rest.size() == 1 || rest[1] == ' ')) {
      q.value_si *= factor;
      rest = trim(rest.substr(1));
      break;
    }
  if (rest.empty()) return q;
  if (rest == "%") {
    q.value_si *= 0.01;
    return q;
  }
  // Terms separated by '/': the first multiplies, the others divide.
  bool first = true;
  while (true) {
    const std::size_t slash = rest.find('/');
    const std::string_view word = trim(rest.substr(0, slash));
    if (word.empty())
      return error("malformed unit in '" + std::string(text) + "'", "e.g. '3.35 TB/s'");
    const auto term = match_term(word);
    if (!term)
      return error("unknown unit '" + std::string(word) + "' in '" + std::string(text) + "'",
                   unknown_unit_hint(word));
    if (term->currency != Currency::none) {
      if (q.currency != Currency::none || !first)
        return error("a currency may appear once, first: '" + std::string(text) + "'");
      q.currency = term->currency;
    }
    if (first) {
      q.value_si *= term->factor;
      q.dim = q.dim * term->dim;
    } else {
      q.value_si /= term->factor;
      q.dim = q.dim / term->dim;
    }
    first = false;
    if (slash == std::string_view::npos) break;
    rest = rest.substr(slash + 1);
  }
  if (!std::isfinite(q.value_si)) return error("number out of range in '" + std::string(text) + "'");
  return q;
}

std::string describe_dimension(Dim d) {
  struct Named {
    Dim dim;
    std::string_view name;
  };
  static const std::array names = {
      Named{dims::none, "a plain number or percentage (e.g. '0.5' or '50 %')"},
      Named{dims::bytes, "a data size (e.g. '80 GB')"},
      Named{dims::seconds, "a duration (e.g. '200 ms' or '14 d')"},
      Named{dims::ops, "an operation count (e.g. '6 PFLOP')"},
      Named{kRate, "a compute throughput (e.g. '989 TFLOPS')"},
      Named{dims::bytes / dims::seconds, "a bandwidth (e.g. '3.35 TB/s' or '400 Gb/s')"},
      Named{dims::watts, "a power (e.g. '700 W')"},
      Named{Dim{.seconds = -1}, "a frequency (e.g. '3.1 GHz')"},
      Named{kEnergy, "an energy (e.g. '1.5 kWh')"},
      Named{dims::money, "an amount of money (e.g. '30000 USD')"},
      Named{dims::money / dims::seconds, "a price per time (e.g. '2.5 USD/h')"},
      Named{dims::money / dims::watts / dims::seconds,
            "a price per power and time (e.g. '190 USD/kW/month' or '0.12 USD/kWh')"},
      Named{dims::money / dims::bytes, "a price per data size (e.g. '0.09 USD/GB')"},
      Named{dims::money / dims::bytes / dims::seconds,
            "a price per data size and time (e.g. '0.02 USD/GB/month')"},
  };
  for (const auto& n : names)
    if (n.dim == d) return std::string(n.name);
  return "a quantity of dimension B^" + std::to_string(d.bytes) + " s^" + std::to_string(d.seconds) +
         " FLOP^" + std::to_string(d.ops) + " W^" + std::to_string(d.watts) + " money^" +
         std::to_string(d.money);
}

Result<double> parse_count(std::string_view text) {
  text = trim(text);
  if (text.empty()) return error("empty count", "e.g. '7B' or '15T'");
  std::string_view rest;
  auto number = read_number(text, rest);
  if (!number) return number.errors();
  rest = trim(rest);
  struct Scale {
    std::string_view word;
    double factor;
  };
  static constexpr std::array scales = {
      Scale{"", 1.0},          Scale{"k", 1e3},       Scale{"K", 1e3},         Scale{"thousand", 1e3},
      Scale{"M", 1e6},         Scale{"million", 1e6}, Scale{"B", 1e9},         Scale{"G", 1e9},
      Scale{"billion", 1e9},   Scale{"T", 1e12},      Scale{"trillion", 1e12},
  };
  for (const auto& s : scales) {
    if (rest != s.word) continue;
    const double value = *number * s.factor;
    if (!std::isfinite(value)) return error("number out of range in '" + std::string(text) + "'");
    return value;
  }
  std::vector<std::string> words;
  for (const auto& s : scales)
    if (!s.word.empty()) words.emplace_back(s.word);
  return error("unknown count suffix '" + std::string(rest) + "' in '" + std::string(text) + "'",
               did_you_mean(rest, words).empty() ? "use k, M, B or T (e.g. '7B')"
                                                 : did_you_mean(rest, words));
}

namespace {

std::string number_text(double v) {
  char buf[64];
  if (std::fabs(v) >= 1e4 && std::fabs(v) < 1e15)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    return significant(v, 4);
  return buf;
}

// Chooses the largest decimal prefix, up to `largest`, that keeps the number >= 1.
std::string with_prefix(double v, std::string_view unit, double largest = 1e15) {
  static constexpr std::array<std::pair<double, std::string_view>, 5> steps = {
      {{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}}};
  for (const auto& [factor, prefix] : steps) {
    if (factor > largest) continue;
    if (std::fabs(v) >= factor) return number_text(v / factor) + " " + std::string(prefix) + std::string(unit);
  }
  return number_text(v) + " " + std::string(unit);
}

std::string duration_text(double s) {
  const double a = std::fabs(s);
  if (a == 0) return "0 s";
  if (a < 1e-6) return number_text(s * 1e9) + " ns";
  if (a < 1e-3) return number_text(s * 1e6) + " us";
  if (a < 1) return number_text(s * 1e3) + " ms";
  if (a < 120) return number_text(s) + " s";
  if (a < 2 * units::hour) return number_text(s / 60) + " min";
  if (a < 2 * units::day) return number_text(s / units::hour) + " h";
  return number_text(s / units::day) + " d";
}

// Any other dimension parse_quantity can produce ("USD/kW", "B/s/s"), in SI symbols that it
// reads back: one numerator, then divisors; a second power of seconds is "/Hz".
std::string si_unit_text(Dim d, const std::string& currency) {
  std::string unit;
  Dim rest = d;
  if (d.money > 0) unit = currency.empty() ? "USD" : currency, rest = rest / dims::money;
  else if (d.bytes > 0) unit = "B", rest = rest / dims::bytes;
  else if (d.ops > 0) unit = "FLOP", rest = rest / dims::ops;
  else if (d.watts > 0) unit = "W", rest = rest / dims::watts;
  else if (d.seconds > 0) unit = "s", rest = rest / dims::seconds;
  else unit = "Hz", rest = rest * dims::seconds;
  for (; rest.bytes < 0; ++rest.bytes) unit += "/B";
  for (; rest.ops < 0; ++rest.ops) unit += "/FLOP";
  for (; rest.watts < 0; ++rest.watts) unit += "/W";
  for (; rest.seconds < 0; ++rest.seconds) unit += "/s";
  for (; rest.seconds > 0; --rest.seconds) unit += "/Hz";
  return unit;
}

}  // namespace

std::string to_string(const ParsedQuantity& q) {
  const std::string cur(currency_code(q.currency));
  const Dim d = q.dim;
  if (d == dims::none) return number_text(q.value_si);
  if (d == dims::bytes) return with_prefix(q.value_si, "B");
  if (d == dims::bytes / dims::seconds) return with_prefix(q.value_si, "B/s");
  if (d == kRate) return with_prefix(q.value_si, "FLOPS");
  if (d == dims::ops) return with_prefix(q.value_si, "FLOP");
  if (d == dims::seconds) return duration_text(q.value_si);
  if (d == dims::watts)  // "700 W", "1000 W", "10.2 kW": kW only where W would be long
    return std::fabs(q.value_si) < 1e4 ? number_text(q.value_si) + " W" : with_prefix(q.value_si, "W", 1e9);  // k, M, G only
  if (d == Dim{.seconds = -1}) return with_prefix(q.value_si, "Hz", 1e12);
  if (d == kEnergy) return number_text(q.value_si / (1e3 * units::hour)) + " kWh";
  if (d == dims::money) return number_text(q.value_si) + " " + cur;
  if (d == dims::money / dims::seconds) return number_text(q.value_si * units::hour) + " " + cur + "/h";
  if (d == dims::money / dims::watts / dims::seconds)
    return number_text(q.value_si * 1e3 * units::hour) + " " + cur + "/kWh";
  if (d == dims::money / dims::bytes) return number_text(q.value_si * 1e9) + " " + cur + "/GB";
  if (d == dims::money / dims::bytes / dims::seconds)
    return number_text(q.value_si * 1e9 * units::month) + " " + cur + "/GB/month";
  return number_text(q.value_si) + " " + si_unit_text(d, cur);
}

std::string to_string_in(const ParsedQuantity& q, std::string_view unit) {
  auto one = parse_quantity("1 " + std::string(unit));
  if (!one || !(one->dim == q.dim) || one->value_si == 0) return to_string(q);
  std::string text(unit);
  if (q.currency != Currency::none && one->currency != q.currency) {
    const auto code = currency_code(one->currency);
    if (const auto at = text.find(code); at != std::string::npos)
      text.replace(at, code.size(), currency_code(q.currency));
  }
  return number_text(q.value_si / one->value_si) + " " + text;
}

std::string si_unit(Dim d, Currency currency) {
  std::string num, den;
  auto add = [](std::string& s, std::string_view sym, int exp) {
    for (int i = 0; i < (exp < 0 ? -exp : exp); ++i) s += (s.empty() ? "" : "*") + std::string(sym);
  };
  const std::string money = currency == Currency::none ? "money" : std::string(currency_code(currency));
  const std::pair<std::string_view, int> parts[] = {
      {money, d.money}, {"B", d.bytes}, {"FLOP", d.ops}, {"W", d.watts}, {"s", d.seconds}};
  for (const auto& [sym, exp] : parts) {
    if (exp > 0) add(num, sym, exp);
    if (exp < 0) add(den, sym, exp);
  }
  if (den.empty()) return num;
  if (num.empty()) num = "1";
  return num + "/" + den;
}

std::string to_string_binary(Bytes b) {
  static constexpr std::array<std::pair<double, std::string_view>, 4> steps = {
      {{units::tebi, "TiB"}, {units::gibi, "GiB"}, {units::mebi, "MiB"}, {units::kibi, "KiB"}}};
  for (const auto& [factor, unit] : steps)
    if (std::fabs(b.value()) >= factor) return number_text(b.value() / factor) + " " + std::string(unit);
  return number_text(b.value()) + " B";
}

}  // namespace capsim
