#include "capsim/models/fabric_timing.hpp"

#include "capsim/fabric/fabric.hpp"
#include "capsim/models/collectives.hpp"

namespace capsim::models {

Result<FabricAllReduce> fabric_data_parallel_all_reduce(const TransformerShape& shape, const Parallelism& par,
                                                        const ClusterSpec& cluster, int nodes,
                                                        const TrainingOptions& options) {
  auto analytic = estimate_training_step(shape, par, cluster, options);
  if (!analytic) return analytic.errors();
  FabricAllReduce out{};
  out.analytic = analytic->data_parallel_all_reduce;
  if (par.data * par.context <= 1) return out;  // nothing to reduce
  if (par.zero_stage == 3)
    return Diagnostic{{}, "", "ZeRO-3 reduces per layer, inside the step; the fabric re-times only a gradient all-reduce", ""};
  if (!(cluster.inter_node_bandwidth.value() > 0) && nodes > 1)
    return Diagnostic{{}, "", "the node type has no network bandwidth in the catalog; the fabric cannot time it", ""};

  // NCCL reaches a share of a link's line rate as bus bandwidth (intra_node_link,
  // inter_node_link); the fabric simulates line rates, so it is given the same effective
  // rates the formula uses.
  fabric::FabricTopology topo;
  topo.nodes = nodes;
  topo.gpus_per_node = cluster.gpus_per_node;
  const bool nvlink = !cluster.intra_node_pcie && cluster.gpus_per_node > 1;  // NVLink/NVSwitch or xGMI
  const double intra_share = intra_node_collective_fraction(cluster);
  topo.intra.kind = nvlink ? fabric::IntraNodeKind::nvswitch : fabric::IntraNodeKind::pcie_tree;
  topo.intra.gpu_link_bandwidth = cluster.intra_node_bandwidth * intra_share;
  topo.intra.gpu_to_gpu_latency = cluster.intra_node_latency;
  if (!nvlink) topo.intra.bridge_uplink_bandwidth = cluster.pcie_bandwidth * intra_share;
  topo.network.nics_per_node = cluster.gpus_per_node;
  topo.network.nic_bandwidth = nodes > 1 ? cluster.inter_node_bandwidth * kCollectiveBandwidthFraction()
                                         : gigabytes_per_second(1);  // unused on one node
  topo.network.nic_to_nic_latency = cluster.inter_node_latency;

  fabric::CollectiveRequest request;
  request.pattern = fabric::Pattern::ring_all_reduce;
  // With the distributed optimizer the formula's figure is a reduce-scatter of the gradients
  // and an all-gather of the parameters (16-bit when the gradients are reduced in fp32): on a
  // ring that is an all-reduce of their mean size.
  const double gather = analytic->parameter_gather_bytes_per_gpu.value();
  request.bytes = gather > 0 ? Bytes((analytic->gradient_bytes_per_gpu.value() + gather) / 2)
                             : analytic->gradient_bytes_per_gpu;
  // The group as the formula places it (data_parallel_placement): its ranks t apart, so a
  // node holds gpus_per_node / t of them. The fabric times that group alone, on nodes of
  // that many GPUs, each with its own NIC share, as the formula does.
  const GroupPlacement where = data_parallel_placement(par.data * par.context, par.tensor, cluster.gpus_per_node);
  topo.nodes = where.nodes;
  if (where.in_node <= 1) {
    request.group = {fabric::GroupKind::one_per_node, 0};
  } else {
    request.group = {fabric::GroupKind::all_gpus, 0};
    topo.gpus_per_node = where.in_node;
    topo.network.nics_per_node = where.in_node;
  }
  auto timing = fabric::default_simulator().time(topo, request);
  if (!timing) return timing.errors();
  out.time = timing->total;
  out.bottleneck_link = timing->bottleneck_link;
  return out;
}

}  // namespace capsim::models
