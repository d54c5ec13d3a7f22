#include "capsim/fabric/topology.hpp"

#include <cmath>
#include <cstdio>

namespace capsim::fabric {
namespace {

Diagnostic error(std::string key_path, std::string message, std::string hint = {}) {
  return Diagnostic{{}, std::move(key_path), std::move(message), std::move(hint)};
}

bool finite_positive(double v) { return std::isfinite(v) && v > 0.0; }
bool finite_non_negative(double v) { return std::isfinite(v) && v >= 0.0; }

// %.17g round-trips a double, so equal keys mean equal values.
std::string exact(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

void check_intra(const IntraNodeFabric& intra, Status& out) {
  if (!finite_positive(intra.gpu_link_bandwidth.value()))
    out.push_back(error(
        "intra.gpu_link_bandwidth",
        "must be a finite bandwidth > 0, got " + exact(intra.gpu_link_bandwidth.value()) + " B/s"));
  if (!finite_non_negative(intra.gpu_to_gpu_latency.value()))
    out.push_back(error("intra.gpu_to_gpu_latency", "must be a finite latency >= 0"));
  if (intra.kind == IntraNodeKind::pcie_tree) {
    if (intra.gpus_per_bridge < 1)
      out.push_back(error("intra.gpus_per_bridge",
                          "must be >= 1, got " + std::to_string(intra.gpus_per_bridge)));
    if (!finite_positive(intra.bridge_uplink_bandwidth.value()))
      out.push_back(
          error("intra.bridge_uplink_bandwidth", "must be a finite bandwidth > 0 for a PCIe tree"));
  } else if (intra.kind != IntraNodeKind::nvswitch) {
    out.push_back(
        error("intra.kind", "unknown intra-node fabric", "use 'nvswitch' or 'pcie_tree'"));
  }
}

void check_network(const FabricTopology& t, Status& out) {
  const Network& net = t.network;
  if (net.nics_per_node < 0 || (t.nodes > 1 && net.nics_per_node < 1))
    out.push_back(error(
        "network.nics_per_node",
        "must be >= 1 when there is more than one node, got " + std::to_string(net.nics_per_node)));
  if (net.nics_per_node > t.gpus_per_node && t.gpus_per_node >= 1)
    out.push_back(error("network.nics_per_node",
                        std::to_string(net.nics_per_node) + " NICs for " +
                            std::to_string(t.gpus_per_node) +
                            " GPUs per node: a GPU with several NICs is not modelled",
                        "aggregate a GPU's ports into one NIC of their summed bandwidth"));
  if (net.nics_per_node == 0) return;
  if (!finite_positive(net.nic_bandwidth.value()))
    out.push_back(error("network.nic_bandwidth", "must be a finite bandwidth > 0, got " +
                                                     exact(net.nic_bandwidth.value()) + " B/s"));
  if (!finite_non_negative(net.nic_to_nic_latency.value()))
    out.push_back(error("network.nic_to_nic_latency", "must be a finite latency >= 0"));
  if (net.layout != NetworkLayout::fat_tree && net.layout != NetworkLayout::rail_optimized)
    out.push_back(error("network.layout", "unknown layout", "use 'fat_tree' or 'rail_optimized'"));
  if (net.nodes_per_leaf < 1)
    out.push_back(
        error("network.nodes_per_leaf", "must be >= 1, got " + std::to_string(net.nodes_per_leaf)));
  if (!(std::isfinite(net.oversubscription) && net.oversubscription >= 1.0))
    out.push_back(error("network.oversubscription",
                        "must be a finite ratio >= 1 (1 = non-blocking, 4 = 4:1), got " +
                            exact(net.oversubscription)));
  if (!finite_non_negative(net.spine_latency.value()))
    out.push_back(error("network.spine_latency", "must be a finite latency >= 0"));
}

}  // namespace

int FabricTopology::leaf_count() const {
  if (network.nics_per_node < 1 || network.nodes_per_leaf < 1) return 0;
  const int node_groups = (nodes + network.nodes_per_leaf - 1) / network.nodes_per_leaf;
  return network.layout == NetworkLayout::rail_optimized ? node_groups * network.nics_per_node
                                                         : node_groups;
}

Status validate(const FabricTopology& t) {
  Status out;
  if (t.nodes < 1) out.push_back(error("nodes", "must be >= 1, got " + std::to_string(t.nodes)));
  if (t.gpus_per_node < 1)
    out.push_back(error("gpus_per_node", "must be >= 1, got " + std::to_string(t.gpus_per_node)));
  // SimGrid names and our flow counts are ints: keep the platform well inside that range.
  constexpr long long kMaxGpus = 1 << 20;
  if (static_cast<long long>(t.nodes) * t.gpus_per_node > kMaxGpus)
    out.push_back(error("nodes", "more than " + std::to_string(kMaxGpus) + " GPUs in total"));
  check_intra(t.intra, out);
  check_network(t, out);
  return out;
}

Status validate(const Background& b, const FabricTopology& t) {
  Status out;
  if (!(std::isfinite(b.network_load_fraction) && b.network_load_fraction >= 0.0 &&
        b.network_load_fraction < 1.0))
    out.push_back(error("background.network_load_fraction",
                        "must be in [0, 1), got " + exact(b.network_load_fraction)));
  for (std::size_t i = 0; i < b.flows.size(); ++i) {
    const BackgroundFlow& f = b.flows[i];
    const std::string key = "background.flows[" + std::to_string(i) + "]";
    const auto in_range = [&](int node, int gpu) {
      return node >= 0 && node < t.nodes && gpu >= 0 && gpu < t.gpus_per_node;
    };
    if (!in_range(f.src_node, f.src_gpu) || !in_range(f.dst_node, f.dst_gpu))
      out.push_back(error(key, "endpoint outside the topology (" + std::to_string(t.nodes) +
                                   " nodes x " + std::to_string(t.gpus_per_node) + " GPUs)"));
    else if (f.src_node == f.dst_node && f.src_gpu == f.dst_gpu)
      out.push_back(error(key, "a flow from a GPU to itself crosses no link"));
  }
  return out;
}

std::string canonical_key(const FabricTopology& t) {
  const IntraNodeFabric& i = t.intra;
  const Network& n = t.network;
  std::string key = "n=" + std::to_string(t.nodes) + ";g=" + std::to_string(t.gpus_per_node);
  key += ";intra=" + std::to_string(static_cast<int>(i.kind)) + "," +
         exact(i.gpu_link_bandwidth.value()) + "," + exact(i.gpu_to_gpu_latency.value());
  if (i.kind == IntraNodeKind::pcie_tree)
    key += "," + std::to_string(i.gpus_per_bridge) + "," + exact(i.bridge_uplink_bandwidth.value());
  key += ";net=" + std::to_string(n.nics_per_node);
  if (n.nics_per_node > 0)
    key += "," + exact(n.nic_bandwidth.value()) + "," + exact(n.nic_to_nic_latency.value()) + "," +
           std::to_string(static_cast<int>(n.layout)) + "," + std::to_string(n.nodes_per_leaf) +
           "," + exact(n.oversubscription) + "," + exact(n.spine_latency.value());
  return key;
}

std::string canonical_key(const Background& b) {
  std::string key = "load=" + exact(b.network_load_fraction) + ";flows=";
  for (const BackgroundFlow& f : b.flows)
    key += std::to_string(f.src_node) + "." + std::to_string(f.src_gpu) + ">" +
           std::to_string(f.dst_node) + "." + std::to_string(f.dst_gpu) + ",";
  return key;
}

}  // namespace capsim::fabric
