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

Seconds node_deduplicated_all_to_all(double tokens, double token_bytes, int k, int experts, int n, int in_node,
                                     LinkModel intra, LinkModel inter) {
  if (n <= 1) return Seconds{};
  in_node = std::clamp(in_node, 1, n);
  const int nodes = n / in_node;
  const double copies = tokens * std::max(1, k) * token_bytes;  // what the experts receive
  const double on = in_node - 1;
  // Everything but the own GPU's share crosses NVLink once: direct, or forwarded.
  const double intra_time = on > 0 ? copies * (n - 1.0) / n / intra.bandwidth.value() : 0.0;
  if (nodes <= 1) return Seconds(intra_time + on * intra.latency.value());
  // Probability that a node holds none of a token's k experts (drawn without replacement
  // from `experts`, experts / nodes on each node).
  const double per_node = static_cast<double>(experts) / nodes;
  double miss = 1.0;
  for (int j = 0; j < k; ++j) miss *= std::max(0.0, (experts - per_node - j) / (experts - j));
  const double inter_bytes = tokens * token_bytes * (nodes - 1) * (1.0 - miss);
  const double inter_time = inter_bytes / inter.bandwidth.value();
  return Seconds(std::max(inter_time, intra_time) + (nodes - 1) * inter.latency.value() +
                 (on > 0 ? on * intra.latency.value() : 0.0));
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
