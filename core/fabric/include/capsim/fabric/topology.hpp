// FabricTopology: the network a set of GPU nodes talks over, as the SimGrid fabric sees it.
//
// Three layers, each reduced to links with a bandwidth per direction and a latency:
//   1. inside a node: an NVSwitch crossbar (every GPU has its own port to a non-blocking
//      switch) or a PCIe tree (GPUs under host bridges; GPU-to-GPU traffic across bridges
//      shares each bridge's uplink to the root complex);
//   2. NICs: nics_per_node ports per node, GPU g using NIC g * nics_per_node / gpus_per_node
//      (adjacent GPUs share a NIC, as under a PCIe switch);
//   3. between nodes: a two-level leaf/spine fat-tree. Each leaf switch serves the NIC ports
//      of nodes_per_leaf nodes (fat_tree layout) or NIC r of nodes_per_leaf nodes (rail
//      layout: NIC r of every node sits on rail r). A leaf's uplinks to the spine are one
//      aggregate link of  (NIC ports under the leaf) x port bandwidth / oversubscription,
//      i.e. ECMP spreading flows perfectly over the spines; the spine layer itself is
//      non-blocking.
// All links are full duplex (a flow each way does not share capacity).
//
// Latencies are the alpha of the alpha-beta model, split over the links of a path so that
// a path's latency sums to what the field documents (see each field).
//
// A plain value type: build it, validate() it, then share it read-only between threads.
#pragma once

#include <string>
#include <vector>

#include "capsim/core/result.hpp"
#include "capsim/core/units.hpp"

namespace capsim::fabric {

enum class IntraNodeKind {
  nvswitch,   // full crossbar: each GPU has a port of gpu_link_bandwidth to the switch
  pcie_tree,  // GPUs under host bridges; bridges share uplinks to the root complex
};

struct IntraNodeFabric {
  IntraNodeKind kind = IntraNodeKind::nvswitch;
  // Per GPU per direction: the NVLink port into the NVSwitch, or the GPU's PCIe link to
  // its bridge. Must be > 0.
  BytesPerSecond gpu_link_bandwidth = gigabytes_per_second(300);
  // GPU-to-GPU one-way latency inside a node (>= 0), half on each GPU link of the path.
  Seconds gpu_to_gpu_latency = Seconds(2e-6);
  // pcie_tree only: GPUs per host bridge (>= 1) and each bridge's uplink bandwidth per
  // direction (> 0). A crossing of the root complex adds no latency of its own.
  int gpus_per_bridge = 4;
  BytesPerSecond bridge_uplink_bandwidth = gigabytes_per_second(32);
};

enum class NetworkLayout {
  fat_tree,        // all NICs of a node on the node's leaf
  rail_optimized,  // NIC r of every node on a rail-r leaf
};

struct Network {
  // NIC ports per node (>= 1 when nodes > 1; may be 0 for a single node). At most
  // gpus_per_node: a GPU with several NICs is not modelled (aggregate them into one port).
  int nics_per_node = 1;
  // Per port per direction (> 0 when there are NICs). 400 Gb/s = 50 GB/s.
  BytesPerSecond nic_bandwidth = gigabits_per_second(400);
  // One-way latency NIC to NIC through one leaf switch (>= 0), half on each port.
  Seconds nic_to_nic_latency = Seconds(5e-6);
  NetworkLayout layout = NetworkLayout::fat_tree;
  // Nodes whose NICs share a leaf (>= 1). For rail_optimized, nodes per rail leaf.
  int nodes_per_leaf = 32;
  // Downlink / uplink capacity of a leaf (>= 1; 1 = non-blocking, 4 = 4:1).
  double oversubscription = 1.0;
  // Extra one-way latency of a path that crosses the spine (>= 0), half on each leaf uplink.
  Seconds spine_latency = Seconds(0);
};

// Traffic of other tenants that competes with the timed operation.
struct BackgroundFlow {
  int src_node = 0, src_gpu = 0;
  int dst_node = 0, dst_gpu = 0;
};
struct Background {
  // Fraction of every network link (NIC ports and leaf uplinks) already consumed, in
  // [0, 1): the capacity left to the timed operation is (1 - fraction). A fixed reservation,
  // not a competing flow.
  double network_load_fraction = 0.0;
  // Long-lived bulk flows that run for the whole operation and share bandwidth with its
  // flows under max-min fairness (SimGrid's flow model), node/gpu indices within range.
  std::vector<BackgroundFlow> flows;
};

struct FabricTopology {
  int nodes = 1;          // >= 1
  int gpus_per_node = 8;  // >= 1
  IntraNodeFabric intra;
  Network network;

  int gpu_count() const { return nodes * gpus_per_node; }
  // Leaves the network has (0 for a single node without NICs).
  int leaf_count() const;
};

// Every problem with the topology, each with the key path ("network.nic_bandwidth") and
// what a valid value is. Empty when the topology can be simulated.
Status validate(const FabricTopology& topology);
Status validate(const Background& background, const FabricTopology& topology);

// A canonical text form of every field: equal topologies give equal keys (cache key).
std::string canonical_key(const FabricTopology& topology);
std::string canonical_key(const Background& background);

}  // namespace capsim::fabric
