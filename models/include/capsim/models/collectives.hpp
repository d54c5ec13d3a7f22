// Analytic times of collective operations in the alpha-beta (latency-bandwidth) model:
// a message of S bytes over a link costs alpha + S / beta. Formulas follow Thakur,
// Rabenseifner & Gropp, "Optimization of Collective Communication Operations in MPICH",
// IJHPCA 2005, and for trees Sanders, Speck & Traeff, "Two-tree algorithms for full
// bandwidth broadcast, reduction and scan", Parallel Computing 2009 (NCCL's double
// binary tree).
//
// Sizes are the full buffer as the caller sees it: for all-reduce the buffer every rank
// holds, for all-gather the gathered output, for reduce-scatter the input, for all-to-all
// what one rank sends in total. Every function is pure, thread-safe, allocation-free and
// returns zero time for n <= 1 (nothing to communicate). Precondition: n >= 1, size >= 0,
// bandwidth > 0 when n > 1.
#pragma once

#include "capsim/models/constants.hpp"
#include "capsim/core/units.hpp"

namespace capsim::models {

// One rank's view of the fabric it uses for a collective: achievable bandwidth per
// direction and the per-message latency alpha.
struct LinkModel {
  BytesPerSecond bandwidth;
  Seconds latency;
};

// Fraction of a link's line rate that NCCL collectives reach as "bus bandwidth" for large
// messages. nccl-tests on DGX A100 report ~230-240 GB/s all-reduce bus bandwidth on
// 300 GB/s NVSwitch ports (NVIDIA, "nccl-tests PERFORMANCE.md" and DGX A100 user guide
// figures), and ~20-23 GB/s over 25 GB/s HDR ports: about 0.8 in both cases.
// kCollectiveBandwidthFraction: read from the registry, capsim/models/constants.hpp (value, unit, basis).
// The same share when a node's GPUs talk over PCIe (no NVLink). Ring traffic between PCIe
// GPUs crosses the host's root complexes and, on two-socket servers, the socket link, so it
// reaches less of the line rate. NCCL's own topology model brackets it
// (src/graph/topo.h, paths.cc): a PCIe Gen4 x16 link counts as 24 GB/s (0.76 of the
// 31.5 GB/s line rate), peer-to-peer through an Intel root complex costs 6/5 of that
// (20 GB/s, 0.63), and a ring across AMD sockets is held to 16 GB/s (0.51). No nccl-tests
// figure of the L40S servers behind TensorRT-LLM's tables is published, so the share was
// chosen on one of their rows (data/validation/llm_serving.yaml, fit: true: Llama 3.1 70B
// FP8 at TP 8 on L40S, 1000/1000): 0.53, 16.7 GB/s on Gen4 x16, inside NCCL's bracket.
// The other L40S rows at TP 4 and TP 8, dense and MoE, are held out.
// kPcieCollectiveBandwidthFraction: read from the registry, capsim/models/constants.hpp (value, unit, basis).

// Ring all-reduce: reduce-scatter then all-gather, each n-1 steps of S/n bytes:
//   2 (n-1)/n * S / B + 2 (n-1) alpha.
Seconds ring_all_reduce(Bytes size, int n, LinkModel link);
// Double binary tree all-reduce (reduce up, broadcast down, pipelined; two trees each
// carry half the data so every rank sends and receives about S per phase):
//   2 S / B + 2 ceil(log2 n) alpha.
Seconds tree_all_reduce(Bytes size, int n, LinkModel link);
// Ring all-gather of an S-byte result (each rank contributes S/n): (n-1)/n S/B + (n-1) alpha.
Seconds all_gather(Bytes size, int n, LinkModel link);
// Ring reduce-scatter of an S-byte input (each rank keeps S/n): same cost as all_gather.
Seconds reduce_scatter(Bytes size, int n, LinkModel link);
// Pairwise all-to-all, a rank sending S in total (S/n to each peer, its own share stays):
//   (n-1)/n S/B + (n-1) alpha.
Seconds all_to_all(Bytes size, int n, LinkModel link);
// The same all-to-all over n ranks placed in_node to a node (n / in_node nodes): the S/n
// shares for peers in other nodes cross the NIC, those for peers in the node NVLink, both
// at once (NCCL sends to every peer concurrently), so the slower of the two sets the time:
//   max((n - in_node)/n S/B_inter, (in_node - 1)/n S/B_intra)
//   + (n - in_node) alpha_inter + (in_node - 1) alpha_intra.
// in_node = 1 is the flat all_to_all over the inter-node link.
Seconds all_to_all(Bytes size, int n, int in_node, LinkModel intra, LinkModel inter);
// A mixture-of-experts dispatch that crosses the network once per destination node: each
// of `tokens` tokens of `token_bytes` goes to the GPU of the same local rank on every other
// node that holds one of its k experts (of `experts`, spread evenly over the n / in_node
// nodes), and everything but the GPU's own share crosses NVLink once (sent directly, or
// forwarded from the peer that received it). Without other nodes this is all_to_all's
// in-node case.
Seconds node_deduplicated_all_to_all(double tokens, double token_bytes, int k, int experts, int n, int in_node,
                                     LinkModel intra, LinkModel inter);
// One message between two ranks: alpha + S/B.
Seconds point_to_point(Bytes size, LinkModel link);
// Hierarchical all-reduce over nodes x gpus_per_node ranks (NCCL-style for data
// parallelism): reduce-scatter inside each node, ring all-reduce of the S/g shard across
// nodes (each GPU on its own NIC share), all-gather inside the node:
//   2 RS_intra(S, g) + AR_inter(S/g, nodes)   (RS and AG cost the same).
Seconds hierarchical_all_reduce(Bytes size, int gpus_per_node, int nodes, LinkModel intra,
                                LinkModel inter);

}  // namespace capsim::models
