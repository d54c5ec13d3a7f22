// The training model's collectives timed on the SimGrid fabric instead of the alpha-beta
// formula (`capsim size --fabric simgrid`): the cluster of a candidate becomes a fabric
// topology, its data-parallel gradient all-reduce a collective request.
//
// A data-parallel group (d x cp ranks) sits where the formula places it
// (data_parallel_placement): its ranks t apart, so a node holds gpus_per_node / t of them,
// or one when t fills the node. The fabric times that group alone, on nodes of that many
// GPUs, each with its own NIC at the cluster's per-GPU network bandwidth, off a non-blocking
// leaf/spine fat-tree. ZeRO-3 layouts, which reduce layer by layer inside the step, are
// not re-timed (an error says so).
#pragma once

#include <string>

#include "capsim/core/result.hpp"
#include "capsim/models/cluster.hpp"
#include "capsim/models/parallelism.hpp"
#include "capsim/models/performance.hpp"

namespace capsim::models {

struct FabricAllReduce {
  Seconds time;                 // one gradient all-reduce
  Seconds analytic;             // the alpha-beta formula's time for the same all-reduce
  std::string bottleneck_link;  // as SimGrid names it
};

// Times the data-parallel gradient all-reduce of a transformer layout on `nodes` nodes.
Result<FabricAllReduce> fabric_data_parallel_all_reduce(const TransformerShape& shape, const Parallelism& par,
                                                        const ClusterSpec& cluster, int nodes,
                                                        const TrainingOptions& options);

}  // namespace capsim::models
