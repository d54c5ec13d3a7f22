// The flows a request puts on the fabric, one symmetric step at a time (no SimGrid here).
#pragma once

#include <vector>

#include "capsim/fabric/fabric.hpp"

namespace capsim::fabric::detail {

// One transfer between two GPUs, by global index node * gpus_per_node + gpu.
struct Flow {
  int src = 0;
  int dst = 0;
  double bytes = 0;
};

// Flows that run concurrently; the operation repeats this step `weight` times and adds
// `fill_paths` times the largest path latency among its flows (a pipeline filling up).
struct Step {
  std::vector<Flow> flows;
  double weight = 1;
  double fill_paths = 0;
};

struct Plan {
  std::vector<Step> steps;
};

// The ranks of a group as global GPU indices, node-major. Precondition: validated.
std::vector<int> group_ranks(const FabricTopology& topology, const Group& group);
// Rings actually used (resolves rings = 0). Precondition: validated.
int ring_count(const FabricTopology& topology, const CollectiveRequest& request);
// The steps of a request. Precondition: validate(request, topology) is empty and the group
// has at least two ranks.
Plan make_plan(const FabricTopology& topology, const CollectiveRequest& request);

// Parent of `rank` in the first / second tree of NCCL's double binary tree over n ranks
// (-1 for a root). Sanders, Speck & Traeff 2009; NCCL src/graph/trees.cc.
int btree_parent(int rank, int n);
int dtree_second_parent(int rank, int n);

}  // namespace capsim::fabric::detail
