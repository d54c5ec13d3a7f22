#include "capsim/models/collectives.hpp"

#include <algorithm>
#include <cmath>

namespace capsim::models {
namespace {

// (n-1)/n of the buffer crosses each rank's link in n-1 latency-bound steps.
Seconds ring_pass(Bytes size, int n, LinkModel link) {
  if (n <= 1) return Seconds{};
  const double steps = n - 1;
  return Seconds(steps / n * size.value() / link.bandwidth.value() + steps * link.latency.value());
}

}  // namespace

Seconds ring_all_reduce(Bytes size, int n, LinkModel link) { return 2.0 * ring_pass(size, n, link); }

Seconds tree_all_reduce(Bytes size, int n, LinkModel link) {
  if (n <= 1) return Seconds{};
  const double depth = std::ceil(std::log2(static_cast<double>(n)));
  return Seconds(2.0 * size.value() / link.bandwidth.value() + 2.0 * depth * link.latency.value());
}

Seconds all_gather(Bytes size, int n, LinkModel link) { return ring_pass(size, n, link); }

Seconds reduce_scatter(Bytes size, int n, LinkModel link) { return ring_pass(size, n, link); }

Seconds all_to_all(Bytes size, int n, LinkModel link) { return ring_pass(size, n, link); }

Seconds all_to_all(Bytes size, int n, int in_node, LinkModel intra, LinkModel inter) {
  if (n <= 1) return Seconds{};
  in_node = std::clamp(in_node, 1, n);
  const double share = size.value() / n;
  const double off = n - in_node, on = in_node - 1;
  // A side with no peers costs nothing (a single node may have no inter-node link at all).
  const double inter_time = off > 0 ? off * share / inter.bandwidth.value() : 0.0;
  const double intra_time = on > 0 ? on * share / intra.bandwidth.value() : 0.0;
  const double latency = (off > 0 ? off * inter.latency.value() : 0.0) + (on > 0 ? on * intra.latency.value() : 0.0);
  return Seconds(std::max(inter_time, intra_time) + latency);
}

Seconds point_to_point(Bytes size, LinkModel link) {
  return Seconds(link.latency.value() + size.value() / link.bandwidth.value());
}

Seconds hierarchical_all_reduce(Bytes size, int gpus_per_node, int nodes, LinkModel intra,
                                LinkModel inter) {
  const Seconds inside = 2.0 * reduce_scatter(size, gpus_per_node, intra);
  const Bytes shard = size / static_cast<double>(gpus_per_node < 1 ? 1 : gpus_per_node);
  return inside + ring_all_reduce(shard, nodes, inter);
}

}  // namespace capsim::models
