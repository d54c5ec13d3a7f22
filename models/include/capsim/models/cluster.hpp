// A homogeneous GPU cluster as the analytic performance model sees it: one GPU type,
// identical nodes, one intra-node fabric and one inter-node network, each reduced to
// per-GPU, per-direction line rates and a per-message latency.
//
// Plain value; build it with cluster_from_catalog or by hand (tests, what-if studies).
#pragma once

#include <string>
#include <string_view>

#include "capsim/models/constants.hpp"
#include "capsim/core/result.hpp"
#include "capsim/core/units.hpp"
#include "capsim/hardware/catalog.hpp"
#include "capsim/models/collectives.hpp"

namespace capsim::models {

struct ClusterSpec {
  hardware::GpuSpec gpu;
  int gpus_per_node = 1;                // >= 1
  BytesPerSecond intra_node_bandwidth;  // per GPU per direction (NVLink/NVSwitch/PCIe line rate)
  bool intra_node_pcie = false;         // the GPUs of a node talk over PCIe, not NVLink/xGMI
  Seconds intra_node_latency;           // per message
  // GPUs the intra-node fabric joins when it joins fewer than the node's (NVLink bridges
  // pair GPUs: 2); 0: every GPU of the node. A group larger than a domain talks over PCIe
  // between the domains (intra_node_link(c, group)).
  int intra_node_domain = 0;
  BytesPerSecond inter_node_bandwidth;  // per GPU per direction = nics * port / gpus_per_node;
                                        // zero: a single node, no network
  Seconds inter_node_latency;           // per message
  BytesPerSecond pcie_bandwidth;        // host <-> GPU per direction; zero when unknown
  // The GPUs' configured power limit when it is below the catalog's TDP (Meta's Grand
  // Teton hosts run H100s at 500 W); zero: the TDP. The performance model lowers the
  // sustained clock, and with it every compute peak, as (limit / TDP)^(1/3) -- dynamic
  // power ~ C V^2 f with the voltage scaling with the clock in the DVFS range.
  Watts power_limit;
  std::string description;              // "8 x a100-sxm-80gb per node, nvswitch-a100, 8 x ib-hdr-200"
  // True when a link figure above came from the GPU's calibration profile (PCIe from
  // measured pinned host-to-device copies, intra-node from NCCL all-reduce bus bandwidth or
  // peer-to-peer copies); the GPU's own figures say so in gpu.figures_source.
  bool calibrated = false;
  // "datasheet", or which figures were measured:
  // "gpu: calibrated (NVIDIA H100 80GB HBM3, measured ...); links: measured pcie, intra-node".
  std::string figures_source = "datasheet";
};

// Latencies used when the catalog entry has none (the catalog leaves them out when no
// source was found). Per message, as seen by NCCL, not the bare wire:
// - NVLink / NVSwitch: ~2 us. Li et al., "Evaluating Modern GPU Interconnect: PCIe,
//   NVLink, NV-SLI, NVSwitch and GPUDirect", IEEE TPDS 2020, measure GPU-to-GPU latencies
//   of a few microseconds through NVSwitch on DGX-2.
// kDefaultIntraNodeLatencySeconds: read from the registry, capsim/models/constants.hpp (value, unit, basis).
// - InfiniBand / RoCE: ~5 us. The HDR switch (~130 ns) and ConnectX-6 adapter (~0.6 us)
//   add under 1 us on the wire (NVIDIA QM8700 / ConnectX-6 product briefs); NCCL's proxy
//   thread and GPUDirect RDMA handshakes bring one network step to several microseconds
//   (NCCL small-message all-reduce latency over IB, nccl-tests).
// kDefaultInterNodeLatencySeconds: read from the registry, capsim/models/constants.hpp (value, unit, basis).
// - PCIe host link, used when the intra-node fabric itself is PCIe: ~1 us round trip of a
//   DMA descriptor (Neugebauer et al., "Understanding PCIe performance for end host
//   networking", SIGCOMM 2018: ~0.5-1 us).
// kDefaultPcieLatencySeconds: read from the registry, capsim/models/constants.hpp (value, unit, basis).

// Builds a ClusterSpec from catalog ids.
//   gpu_id:        a GPU entity ("a100-sxm-80gb").
//   gpus_per_node: >= 1.
//   intra_node_id: an interconnect entity ("nvswitch-a100"); may be empty only when
//                  gpus_per_node == 1.
//   network_id:    a network entity ("ib-hdr-200"); empty for a single node (then
//                  nics_per_node must be 0 and inter_node_bandwidth is zero).
//   nics_per_node: >= 1 when network_id is given.
// Errors: unknown ids (with the catalog's "did you mean"), non-positive counts, an
// entity without the bandwidth field. PCIe bandwidth comes from the catalog entry
// "pcie-gen<N>-x16" for the GPU's PCIe generation, zero when either is unknown.
// Calibrated GPUs (gpu.measured) replace, where measured: the PCIe bandwidth by the pinned
// host-to-device copy rate; the intra-node bandwidth by the NCCL all-reduce bus bandwidth
// / intra_node_collective_fraction (so the ring model reproduces the measured bus
// bandwidth), else by the slowest pair's peer-to-peer copy rate, and its latency by the p2p
// latency. A bus bandwidth above 1.1 x kCollectiveBandwidthFraction of the chosen
// interconnect's line rate, or a copy rate above 1.1 x that line rate, was taken on a
// faster fabric than this cluster has and is not used.
Result<ClusterSpec> cluster_from_catalog(const hardware::Catalog& catalog, std::string_view gpu_id,
                                         int gpus_per_node, std::string_view intra_node_id,
                                         std::string_view network_id, int nics_per_node);

// `c` with its nodes' scale-out network replaced by `nics_per_node` NICs of the catalog's
// network `network_id`, each GPU an equal share (a scenario's hardware.scale_out: a cluster
// built with other NICs than the catalog's node). Errors: an unknown network (with "did you
// mean"), fewer than one NIC.
Result<ClusterSpec> with_scale_out(const hardware::Catalog& catalog, ClusterSpec c, std::string_view network_id,
                                   int nics_per_node);

// NCCL's bus-bandwidth share of the intra-node line rate: kPcieCollectiveBandwidthFraction
// when the node's GPUs talk over PCIe, kCollectiveBandwidthFraction otherwise.
double intra_node_collective_fraction(const ClusterSpec& c);

// The links the models' collectives run on: the cluster's line rate at NCCL's bus-bandwidth
// share (intra_node_collective_fraction inside a node, kCollectiveBandwidthFraction across
// nodes) and its per-message latency.
// `group`: the GPUs of one node the collective spans (0: the whole node's fabric). A group
// larger than the fabric's domain (intra_node_domain) crosses PCIe between domains: a ring
// over it runs at the slower of the two links, the PCIe at its NCCL share.
LinkModel intra_node_link(const ClusterSpec& c, int group = 0);
LinkModel inter_node_link(const ClusterSpec& c);

// The intra-node interconnect a catalog node (server or instance) states; "" when it states
// none (its GPUs then share PCIe: the GPU's PCIe generation, or "" when that is unknown too).
std::string node_intra_node_id(const hardware::Catalog& catalog, const hardware::Entity& node);

// The catalog node (server or instance id) a measurement that names its GPUs but not its
// server ran on: the first server, else the first instance, that carries `gpu_id` in groups
// of at least `gpus_per_node` and states its fabric (any such node for one GPU); "" when
// the catalog has none.
std::string catalog_node_for_gpu(const hardware::Catalog& catalog, std::string_view gpu_id, int gpus_per_node);

// The fabric of the catalog's nodes that carry `gpu_id` in groups of at least
// `gpus_per_node`, for a measurement that names its GPUs but not its server: a server's
// first (the vendor's own board), else an instance's, each only where the catalog states
// one; else the GPU's PCIe (node_intra_node_id's rule). "" when nothing is known.
std::string catalog_intra_node_for_gpu(const hardware::Catalog& catalog, std::string_view gpu_id, int gpus_per_node);

}  // namespace capsim::models
