// The training model's collectives timed on the SimGrid fabric instead of the alpha-beta
// formula (`capsim size --fabric simgrid`): the cluster of a candidate becomes a fabric
// topology, its data-parallel gradient all-reduce a collective request.
//
// Data-parallel groups map onto the fabric's groups: when tensor x pipeline fills whole
// nodes, each data-parallel rank sits on its own node (group: one GPU per node); otherwise
// the t x p concurrent rings span every GPU, which the fabric times as one all-GPU ring of
// the same bytes per GPU (exact for pure data parallelism). Nodes hang off a non-blocking
// leaf/spine fat-tree with one NIC per GPU at the cluster's per-GPU network bandwidth.
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
