#include "plan.hpp"

#include <algorithm>
#include <cmath>

namespace capsim::fabric::detail {
namespace {

// The visiting order of ring c (of `rings`) over all GPUs of all nodes. Inside a node the
// ring starts at offset o = c * g / rings; even nodes go up from o, odd nodes go down from
// o - 1, so the GPU that leaves a node and the one that enters the next sit on the same
// NIC index (rail): a rail-optimized network keeps the ring inside rails, and every NIC
// sends once and receives once per step.
std::vector<int> all_gpus_ring(const FabricTopology& t, int c, int rings) {
  const int g = t.gpus_per_node;
  const int offset = c * g / rings;
  std::vector<int> order;
  order.reserve(static_cast<std::size_t>(t.gpu_count()));
  for (int node = 0; node < t.nodes; ++node) {
    for (int i = 0; i < g; ++i) {
      const int local = node % 2 == 0 ? (offset + i) % g : ((offset - 1 - i) % g + g) % g;
      order.push_back(node * g + local);
    }
  }
  return order;
}

std::vector<std::vector<int>> ring_orders(const FabricTopology& t, const CollectiveRequest& r) {
  const int rings = ring_count(t, r);
  std::vector<std::vector<int>> orders;
  const bool spans_nodes = r.group.kind == GroupKind::all_gpus && t.nodes > 1;
  for (int c = 0; c < rings; ++c)
    orders.push_back(spans_nodes ? all_gpus_ring(t, c, rings) : group_ranks(t, r.group));
  return orders;
}

// One ring step: every rank of every ring sends `chunk` bytes to its successor.
Step ring_step(const FabricTopology& t, const CollectiveRequest& r, double chunk, double weight) {
  Step step;
  step.weight = weight;
  for (const auto& order : ring_orders(t, r)) {
    const std::size_t n = order.size();
    for (std::size_t i = 0; i < n; ++i) step.flows.push_back({order[i], order[(i + 1) % n], chunk});
  }
  return step;
}

// Both trees of the double binary tree at once, each child sending half the buffer to its
// parent: in steady state the pipelined reduce keeps every tree edge busy. The broadcast
// is the mirror image (same links, other direction, same contention on full-duplex links),
// hence weight 2. The pipeline fills over depth - 1 more hops in each phase.
Plan tree_plan(const std::vector<int>& ranks, double bytes) {
  const int n = static_cast<int>(ranks.size());
  Step step;
  for (int i = 0; i < n; ++i) {
    if (const int p = btree_parent(i, n); p >= 0)
      step.flows.push_back({ranks[i], ranks[p], bytes / 2});
    if (const int p = dtree_second_parent(i, n); p >= 0)
      step.flows.push_back({ranks[i], ranks[p], bytes / 2});
  }
  const double depth = std::ceil(std::log2(static_cast<double>(n)));
  step.weight = 2;
  step.fill_paths = 2 * (depth - 1);
  return Plan{{std::move(step)}};
}

// Pairwise exchange: phase k, every rank i sends bytes/n to rank i + k (mod n).
Step shift_step(const std::vector<int>& ranks, int k, double chunk, double weight) {
  const std::size_t n = ranks.size();
  Step step;
  step.weight = weight;
  for (std::size_t i = 0; i < n; ++i)
    step.flows.push_back({ranks[i], ranks[(i + static_cast<std::size_t>(k)) % n], chunk});
  return step;
}

Plan all_to_all_plan(const std::vector<int>& ranks, double bytes) {
  const int n = static_cast<int>(ranks.size());
  const double chunk = bytes / n;
  const int phases = n - 1;
  Plan plan;
  if (phases <= kAllToAllExactPhases) {
    for (int k = 1; k <= phases; ++k) plan.steps.push_back(shift_step(ranks, k, chunk, 1));
    return plan;
  }
  // Stratum j holds phases [first, last); its middle phase stands for all of them.
  for (int j = 0; j < kAllToAllSampledPhases; ++j) {
    const int first =
        1 + static_cast<int>(static_cast<long long>(j) * phases / kAllToAllSampledPhases);
    const int last =
        1 + static_cast<int>(static_cast<long long>(j + 1) * phases / kAllToAllSampledPhases);
    if (last <= first) continue;
    plan.steps.push_back(shift_step(ranks, (first + last - 1) / 2, chunk, last - first));
  }
  return plan;
}

}  // namespace

int btree_parent(int rank, int n) {
  if (rank <= 0 || rank >= n) return -1;
  int bit = 1;
  while ((rank & bit) == 0) bit <<= 1;  // lowest set bit
  const int up = (rank ^ bit) | (bit << 1);
  return up < n ? up : (rank ^ bit);
}

// NCCL: with an odd count the second tree is the first shifted by one rank, with an even
// count its mirror image, so that no rank is an interior node of both trees.
int dtree_second_parent(int rank, int n) {
  if (n % 2 == 1) {
    const int p = btree_parent((rank - 1 + n) % n, n);
    return p < 0 ? -1 : (p + 1) % n;
  }
  const int p = btree_parent(n - 1 - rank, n);
  return p < 0 ? -1 : n - 1 - p;
}

std::vector<int> group_ranks(const FabricTopology& t, const Group& group) {
  std::vector<int> ranks;
  const int g = t.gpus_per_node;
  switch (group.kind) {
    case GroupKind::all_gpus:
      for (int i = 0; i < t.gpu_count(); ++i) ranks.push_back(i);
      break;
    case GroupKind::one_per_node:
      for (int node = 0; node < t.nodes; ++node) ranks.push_back(node * g + group.index);
      break;
    case GroupKind::one_node:
      for (int gpu = 0; gpu < g; ++gpu) ranks.push_back(group.index * g + gpu);
      break;
  }
  return ranks;
}

int ring_count(const FabricTopology& t, const CollectiveRequest& r) {
  if (r.rings > 0) return r.rings;
  if (r.group.kind == GroupKind::all_gpus && t.nodes > 1)
    return std::max(1, std::min(t.gpus_per_node, t.network.nics_per_node));
  return 1;
}

Plan make_plan(const FabricTopology& t, const CollectiveRequest& r) {
  const std::vector<int> ranks = group_ranks(t, r.group);
  const double n = static_cast<double>(ranks.size());
  const double bytes = r.bytes.value();
  const double ring_chunk = bytes / (n * ring_count(t, r));
  switch (r.pattern) {
    case Pattern::ring_all_reduce:
      return Plan{{ring_step(t, r, ring_chunk, 2 * (n - 1))}};
    case Pattern::all_gather:
    case Pattern::reduce_scatter:
      return Plan{{ring_step(t, r, ring_chunk, n - 1)}};
    case Pattern::tree_all_reduce:
      return tree_plan(ranks, bytes);
    case Pattern::all_to_all:
      return all_to_all_plan(ranks, bytes);
    case Pattern::point_to_point: {
      const int g = t.gpus_per_node;
      Step step;
      step.flows.push_back(
          {r.source.node * g + r.source.gpu, r.destination.node * g + r.destination.gpu, bytes});
      return Plan{{std::move(step)}};
    }
    case Pattern::pipeline_send: {
      Step step;
      for (std::size_t i = 0; i + 1 < ranks.size(); ++i)
        step.flows.push_back({ranks[i], ranks[i + 1], bytes});
      return Plan{{std::move(step)}};
    }
  }
  return Plan{};
}

}  // namespace capsim::fabric::detail
