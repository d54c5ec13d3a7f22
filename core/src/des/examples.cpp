#include "capsim/core/des/examples.hpp"

#include <string>

namespace capsim::des {

Pipeline make_tandem_pipeline(int stations, double arrival_rate, double service_rate) {
  Pipeline p;
  NodeId previous = p.add_source(SourceSpec::poisson("source", Rate(arrival_rate)));
  for (int i = 1; i <= stations; ++i) {
    StationSpec s;
    s.name = "s" + std::to_string(i);
    s.service = ServiceTime::exponential(Seconds(1.0 / service_rate));
    const NodeId station = p.add_station(std::move(s));
    p.connect(previous, station);
    previous = station;
  }
  p.connect(previous, p.add_sink({"sink"}));
  return p;
}

}  // namespace capsim::des
