// Ready-made pipelines for tests and benchmarks (also used by the SimGrid comparison in
// the fabric component, so both time the same queue).
// Thread-safety: pure functions.
#pragma once

#include "capsim/core/des/pipeline.hpp"

namespace capsim::des {

// A Poisson source ("source", arrival_rate items/s) -> `stations` single-server stations
// "s1".."sN" with exponential service (service_rate items/s each, unbounded queues) ->
// a sink ("sink"). A tandem Jackson network: each station behaves as M/M/1 with
// rho = arrival_rate / service_rate. Preconditions: stations >= 1, rates > 0 (otherwise
// the pipeline does not validate).
Pipeline make_tandem_pipeline(int stations, double arrival_rate, double service_rate);

}  // namespace capsim::des
