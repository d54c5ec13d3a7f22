#include "capsim/core/des/specs.hpp"

#include <utility>

namespace capsim::des {

SourceSpec SourceSpec::poisson(std::string name, Rate rate, Bytes item_size) {
  SourceSpec s;
  s.name = std::move(name);
  s.kind = Kind::poisson;
  s.rate = rate;
  s.item_size = item_size;
  return s;
}

SourceSpec SourceSpec::trace(std::string name, std::vector<Seconds> arrivals, Bytes item_size) {
  SourceSpec s;
  s.name = std::move(name);
  s.kind = Kind::trace;
  s.arrivals = std::move(arrivals);
  s.item_size = item_size;
  return s;
}

SourceSpec SourceSpec::diurnal(std::string name, Rate base_rate, std::array<double, 24> hourly,
                               Bytes item_size) {
  SourceSpec s;
  s.name = std::move(name);
  s.kind = Kind::diurnal;
  s.rate = base_rate;
  s.hourly = hourly;
  s.item_size = item_size;
  return s;
}

SourceSpec SourceSpec::closed(std::string name, int population, Seconds think_time,
                              Bytes item_size) {
  SourceSpec s;
  s.name = std::move(name);
  s.kind = Kind::closed;
  s.population = population;
  s.think_time = think_time;
  s.item_size = item_size;
  return s;
}

}  // namespace capsim::des
