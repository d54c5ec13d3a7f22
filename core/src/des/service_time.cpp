#include "capsim/core/des/service_time.hpp"
#include "capsim/core/text.hpp"

#include <cmath>
#include <cstdio>
#include <utility>

namespace capsim::des {

ServiceTime ServiceTime::deterministic(Seconds mean) {
  ServiceTime s;
  s.kind_ = Kind::deterministic;
  s.mean_ = mean.value();
  return s;
}

ServiceTime ServiceTime::exponential(Seconds mean) {
  ServiceTime s;
  s.kind_ = Kind::exponential;
  s.mean_ = mean.value();
  return s;
}

ServiceTime ServiceTime::lognormal(Seconds mean, double cv) {
  ServiceTime s;
  s.kind_ = Kind::lognormal;
  s.mean_ = mean.value();
  s.cv_ = cv;
  // If X = exp(N(mu, sigma^2)): E[X] = exp(mu + sigma^2/2), cv^2 = exp(sigma^2) - 1.
  if (s.mean_ > 0.0 && cv > 0.0) {
    const double sigma2 = std::log1p(cv * cv);
    s.sigma_ = std::sqrt(sigma2);
    s.mu_ = std::log(s.mean_) - sigma2 / 2.0;
  }
  return s;
}

ServiceTime ServiceTime::empirical(std::vector<Row> table) {
  ServiceTime s;
  s.kind_ = Kind::empirical;
  s.table_ = std::move(table);
  if (!s.table_.empty()) s.mean_ = s.table_.front().time.value();
  return s;
}

Seconds ServiceTime::mean(int batch) const {
  if (kind_ != Kind::empirical || table_.size() < 2) return Seconds(mean_);
  const auto& t = table_;
  if (batch <= t.front().batch) return t.front().time;
  // The segment [i-1, i] holding `batch`, or the last segment past the end.
  std::size_t i = 1;
  while (i + 1 < t.size() && t[i].batch < batch) ++i;
  const double x0 = t[i - 1].batch, x1 = t[i].batch;
  const double y0 = t[i - 1].time.value(), y1 = t[i].time.value();
  return Seconds(y0 + (y1 - y0) * (batch - x0) / (x1 - x0));
}

namespace {
std::string seconds_text(double s) {
  return capsim::significant(s, 6) + " s";
}
}  // namespace

std::string ServiceTime::check() const {
  if (kind_ == Kind::empirical) {
    if (table_.empty()) return "empirical service time table is empty";
    for (std::size_t i = 0; i < table_.size(); ++i) {
      const Row& r = table_[i];
      if (r.batch < 1)
        return "empirical service time row " + std::to_string(i) + " has batch size " +
               std::to_string(r.batch) + " (must be >= 1)";
      if (!(r.time.value() > 0.0) || !std::isfinite(r.time.value()))
        return "empirical service time for batch " + std::to_string(r.batch) +
               " must be > 0 s (got " + seconds_text(r.time.value()) + ")";
      if (i > 0 && r.batch <= table_[i - 1].batch)
        return "empirical service time rows must have strictly increasing batch sizes (" +
               std::to_string(table_[i - 1].batch) + " then " + std::to_string(r.batch) + ")";
    }
    return {};
  }
  if (!(mean_ > 0.0) || !std::isfinite(mean_))
    return "service time mean must be > 0 s (got " + seconds_text(mean_) + ")";
  if (kind_ == Kind::lognormal && (!(cv_ > 0.0) || !std::isfinite(cv_)))
    return "lognormal service time needs a coefficient of variation > 0 (got " +
           std::to_string(cv_) + ")";
  return {};
}

}  // namespace capsim::des
