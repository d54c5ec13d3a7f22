// The SimGrid side: builds the platform of a topology and runs a plan on it.
// SimGrid keeps one engine per process: call run_plan at most once per process (the
// simulator calls it in a forked child).
#pragma once

#include <string>

#include "capsim/fabric/topology.hpp"
#include "plan.hpp"

namespace capsim::fabric::detail {

struct RawTiming {
  double total = 0;      // seconds
  double mean_step = 0;  // seconds, unweighted mean over simulated steps
  double steps = 0;      // sum of step weights
  int flows_per_step = 0;
  int simulated_steps = 0;
  std::string bottleneck_link;
  double bottleneck_share = 0;  // bytes/s
};

// Throws std::runtime_error on a platform SimGrid refuses. Precondition: the topology and
// background are valid and the plan refers to GPUs of the topology.
RawTiming run_plan(const FabricTopology& topology, const Background& background, const Plan& plan);

}  // namespace capsim::fabric::detail
