#include "capsim/models/cluster.hpp"

#include "capsim/models/collectives.hpp"

#include <algorithm>
#include <optional>
#include <vector>

namespace capsim::models {
namespace {

using hardware::EntityKind;

Diagnostic error(std::string key, std::string message, std::string hint = {}) {
  return Diagnostic{{}, std::move(key), std::move(message), std::move(hint)};
}

struct Link {
  BytesPerSecond bandwidth;
  Seconds latency;
};

// Looks up `id` of kind `kind` and reads its bandwidth field and optional latency.
Result<Link> read_link(const hardware::Catalog& catalog, EntityKind kind, std::string_view id,
                       std::string_view bandwidth_field, double default_latency,
                       const std::string& key) {
  auto entity = catalog.get(kind, id);
  if (!entity) {
    std::vector<Diagnostic> errors = entity.errors();
    for (auto& e : errors)
      if (e.key_path.empty()) e.key_path = key;
    return errors;
  }
  const auto bandwidth = (*entity)->quantity<BytesPerSecond>(bandwidth_field);
  if (!bandwidth || bandwidth->value() <= 0)
    return error(key, "'" + std::string(id) + "' has no positive " + std::string(bandwidth_field));
  const auto latency = (*entity)->quantity<Seconds>("latency");
  return Link{*bandwidth, latency ? *latency : Seconds(default_latency)};
}

BytesPerSecond pcie_bandwidth_of(const hardware::Catalog& catalog, const hardware::GpuSpec& gpu) {
  if (!gpu.pcie_generation) return BytesPerSecond{};
  const std::string id = "pcie-gen" + std::to_string(*gpu.pcie_generation) + "-x16";
  const hardware::Entity* e = catalog.find(EntityKind::interconnect, id);
  if (e == nullptr) return BytesPerSecond{};
  return e->quantity<BytesPerSecond>("bandwidth_per_direction").value_or(BytesPerSecond{});
}

// Replaces link figures by the GPU's measured ones where the profile has them (see
// cluster.hpp) and records what was replaced in figures_source.
void apply_measured_links(ClusterSpec& c, bool has_intra_node) {
  if (!c.gpu.measured) return;
  const hardware::MeasuredFigures& m = *c.gpu.measured;
  std::string links;
  if (m.h2d_pinned && m.h2d_pinned->value() > 0) {
    c.pcie_bandwidth = *m.h2d_pinned;
    links = "pcie";
  }
  if (has_intra_node && c.gpus_per_node > 1) {
    // A figure beyond what this fabric carries was taken on a faster one: a bus bandwidth
    // above 1.1 x the share NCCL reaches on the best links (kCollectiveBandwidthFraction) of
    // its line rate, a copy rate above 1.1 x the line rate. A PCIe node may beat its
    // assumed share; its measured bus bandwidth then stands.
    const double line = c.intra_node_bandwidth.value();
    std::optional<BytesPerSecond> intra;
    if (m.allreduce_bus_bandwidth && m.collective_ranks >= 2) {
      if (m.allreduce_bus_bandwidth->value() <= 1.1 * kCollectiveBandwidthFraction() * line)
        intra = *m.allreduce_bus_bandwidth / intra_node_collective_fraction(c);
    } else if (m.p2p_bandwidth && m.p2p_bandwidth->value() <= 1.1 * line) {
      intra = *m.p2p_bandwidth;
    }
    if (intra && intra->value() > 0) {
      c.intra_node_bandwidth = *intra;
      if (m.p2p_latency) c.intra_node_latency = *m.p2p_latency;
      links += links.empty() ? "intra-node" : ", intra-node";
    }
  }
  c.calibrated = !links.empty();
  c.figures_source = "gpu: " + c.gpu.figures_source + "; links: " + (links.empty() ? "datasheet" : "measured " + links);
}

}  // namespace

Result<ClusterSpec> cluster_from_catalog(const hardware::Catalog& catalog, std::string_view gpu_id,
                                         int gpus_per_node, std::string_view intra_node_id,
                                         std::string_view network_id, int nics_per_node) {
  std::vector<Diagnostic> errors;
  ClusterSpec c;
  c.gpus_per_node = gpus_per_node;

  auto gpu = catalog.gpu(gpu_id);
  if (!gpu) {
    for (auto e : gpu.errors()) {
      if (e.key_path.empty()) e.key_path = "gpu";
      errors.push_back(std::move(e));
    }
  } else {
    c.gpu = *gpu;
    c.pcie_bandwidth = pcie_bandwidth_of(catalog, c.gpu);
  }

  if (gpus_per_node < 1)
    errors.push_back(error("gpus_per_node", "must be at least 1, got " + std::to_string(gpus_per_node)));

  if (intra_node_id.empty()) {
    if (gpus_per_node > 1)
      errors.push_back(error("intra_node", "a node with " + std::to_string(gpus_per_node) +
                                               " GPUs needs an intra-node interconnect id",
                             "e.g. 'nvswitch-a100' or 'pcie-gen4-x16'"));
  } else {
    const hardware::Entity* fabric = catalog.find(EntityKind::interconnect, intra_node_id);
    const bool is_pcie = fabric != nullptr && fabric->text("kind") == "pcie";
    auto link = read_link(catalog, EntityKind::interconnect, intra_node_id, "bandwidth_per_direction",
                          is_pcie ? kDefaultPcieLatencySeconds() : kDefaultIntraNodeLatencySeconds(),
                          "intra_node");
    if (!link) errors.insert(errors.end(), link.errors().begin(), link.errors().end());
    else {
      c.intra_node_bandwidth = link->bandwidth;
      c.intra_node_pcie = is_pcie;
      c.intra_node_latency = link->latency;
      const int domain = static_cast<int>(fabric->integer("domain_gpus").value_or(0));
      if (domain > 0 && domain < gpus_per_node) {
        if (!(c.pcie_bandwidth.value() > 0))
          errors.push_back(error("intra_node", "'" + std::string(intra_node_id) + "' joins " + std::to_string(domain) +
                                                   " of the node's " + std::to_string(gpus_per_node) +
                                                   " GPUs; the rest talk over PCIe, and the GPU has no PCIe generation"));
        c.intra_node_domain = domain;
      }
    }
  }

  if (network_id.empty()) {
    if (nics_per_node != 0)
      errors.push_back(error("network", std::to_string(nics_per_node) + " NICs per node given without a network id"));
  } else if (nics_per_node < 1) {
    errors.push_back(error("nics_per_node", "must be at least 1 with network '" + std::string(network_id) +
                                                "', got " + std::to_string(nics_per_node)));
  } else {
    auto link = read_link(catalog, EntityKind::network, network_id, "port_bandwidth",
                          kDefaultInterNodeLatencySeconds(), "network");
    if (!link) errors.insert(errors.end(), link.errors().begin(), link.errors().end());
    else if (gpus_per_node >= 1) {
      // Each GPU gets an equal share of the node's NICs (rail-optimized DGX layout).
      c.inter_node_bandwidth = link->bandwidth * (static_cast<double>(nics_per_node) / gpus_per_node);
      c.inter_node_latency = link->latency;
    }
  }

  if (!errors.empty()) return errors;
  apply_measured_links(c, !intra_node_id.empty());
  c.description = std::to_string(gpus_per_node) + " x " + std::string(gpu_id) + " per node";
  if (!intra_node_id.empty()) c.description += ", " + std::string(intra_node_id);
  if (!network_id.empty())
    c.description += ", " + std::to_string(nics_per_node) + " x " + std::string(network_id);
  return c;
}

Result<ClusterSpec> with_scale_out(const hardware::Catalog& catalog, ClusterSpec c, std::string_view network_id,
                                   int nics_per_node) {
  if (nics_per_node < 1)
    return error("hardware.scale_out", "needs at least one NIC per node, got " + std::to_string(nics_per_node));
  auto link = read_link(catalog, EntityKind::network, network_id, "port_bandwidth", kDefaultInterNodeLatencySeconds(),
                        "hardware.scale_out");
  if (!link) return link.errors();
  c.inter_node_bandwidth = link->bandwidth * (static_cast<double>(nics_per_node) / c.gpus_per_node);
  c.inter_node_latency = link->latency;
  c.description += ", scale-out " + std::to_string(nics_per_node) + " x " + std::string(network_id);
  return c;
}

double intra_node_collective_fraction(const ClusterSpec& c) {
  return c.intra_node_pcie ? kPcieCollectiveBandwidthFraction() : kCollectiveBandwidthFraction();
}

LinkModel intra_node_link(const ClusterSpec& c, int group) {
  const LinkModel fabric{c.intra_node_bandwidth * intra_node_collective_fraction(c), c.intra_node_latency};
  if (c.intra_node_domain <= 0 || group <= c.intra_node_domain || c.intra_node_pcie) return fabric;
  // A ring through several NVLink domains crosses PCIe between them: its pace is the slower hop's.
  const LinkModel pcie{c.pcie_bandwidth * kPcieCollectiveBandwidthFraction(), Seconds(kDefaultPcieLatencySeconds())};
  return pcie.bandwidth < fabric.bandwidth ? LinkModel{pcie.bandwidth, Seconds(std::max(pcie.latency.value(), fabric.latency.value()))}
                                           : fabric;
}

std::string node_intra_node_id(const hardware::Catalog& catalog, const hardware::Entity& node) {
  if (std::string id = node.text("intra_node"); !id.empty()) return id;
  auto gpu = catalog.gpu(node.text("gpu"));
  if (!gpu || !gpu->pcie_generation) return "";
  return "pcie-gen" + std::to_string(*gpu->pcie_generation) + "-x16";
}

LinkModel inter_node_link(const ClusterSpec& c) {
  return {c.inter_node_bandwidth * kCollectiveBandwidthFraction(), c.inter_node_latency};
}

std::string catalog_node_for_gpu(const hardware::Catalog& catalog, std::string_view gpu_id, int gpus_per_node) {
  for (const bool stated : {true, false})
    for (EntityKind kind : {EntityKind::server, EntityKind::instance})
      for (const auto& node : catalog.all(kind))
        if (node.text("gpu") == gpu_id && node.integer("gpu_count").value_or(1) >= gpus_per_node &&
            (!stated || node.has("intra_node") || gpus_per_node <= 1))
          return node.id;
  return "";
}

std::string catalog_intra_node_for_gpu(const hardware::Catalog& catalog, std::string_view gpu_id, int gpus_per_node) {
  for (EntityKind kind : {EntityKind::server, EntityKind::instance})
    for (const auto& node : catalog.all(kind))
      if (node.text("gpu") == gpu_id && node.integer("gpu_count").value_or(1) >= gpus_per_node && node.has("intra_node"))
        return node.text("intra_node");
  auto gpu = catalog.gpu(gpu_id);
  if (!gpu || !gpu->pcie_generation) return "";
  return "pcie-gen" + std::to_string(*gpu->pcie_generation) + "-x16";
}

}  // namespace capsim::models
