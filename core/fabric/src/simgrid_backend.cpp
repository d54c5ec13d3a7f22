#include "simgrid_backend.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

// clang-format off: version.h needs what s4u.hpp declares first.
#include <simgrid/Exception.hpp>
#include <simgrid/s4u.hpp>
#include <simgrid/version.h>
// clang-format on

#if SIMGRID_VERSION < 33200
#error \
    "capsim_fabric is written against the SimGrid 3.32 s4u API (NetZone::add_route with netpoints)"
#endif

namespace capsim::fabric::detail {
namespace {

namespace sg4 = simgrid::s4u;
using Direction = sg4::LinkInRoute::Direction;
using simgrid::kernel::routing::NetPoint;

// Hosts only send; SimGrid still needs a CPU speed for each (flop/s, never used).
constexpr double kHostSpeedFlops = 1e9;
// CM02 bounds a flow's rate by the TCP window, gamma / (2 * path latency) (default gamma
// 4 MiB: 420 GB/s at 5 us). GPU fabrics are not window-limited TCP; a gamma this large
// leaves the bound far above any link. (gamma = 0 would bound every flow to zero.)
constexpr double kTcpGammaUnbounded = 1e30;
// Background flows must outlive every step (1 PB); they are cancelled when the step ends.
constexpr double kBackgroundFlowBytes = 1e15;
// SimGrid's configuration, in command-line form:
//   network/model:CM02            plain max-min flow sharing (Casanova & Marchal 2002), not
//                                 the LV08 default that scales bandwidth by 0.97 and
//                                 latency by 13.01 (Velho & Legrand 2009);
//   network/crosstraffic:0        no reverse-direction ACK traffic on full-duplex links;
//   latency/bandwidth factors 1, weight-S 0: no RTT-unfairness, textbook alpha-beta;
//   contexts/factory:raw          the fast context switch (the default; "thread" is ~50x slower);
//   contexts/stack-size:32        KiB per actor (default 8 MiB): a step may need tens of
//                                 thousands of actors (see launch()), each with a shallow
//                                 stack, and SimGrid touches all of every stack;
//   contexts/guard-size:0         no guard page per stack: each is a memory mapping, and
//                                 Linux allows 65536 per process (vm.max_map_count);
//   log threshold critical        the child stays quiet unless SimGrid itself fails.
std::vector<std::string> simgrid_args() {
  return {
      "capsim-fabric",
      "--cfg=network/model:CM02",
      "--cfg=network/crosstraffic:0",
      "--cfg=network/latency-factor:1",
      "--cfg=network/bandwidth-factor:1",
      "--cfg=network/weight-S:0",
      "--cfg=network/TCP-gamma:" + std::to_string(kTcpGammaUnbounded),
      "--cfg=contexts/factory:raw",
      "--cfg=contexts/stack-size:32",
      "--cfg=contexts/guard-size:0",
      "--log=root.thres:critical",
  };
}

std::string node_name(int node) { return "n" + std::to_string(node); }
std::string gpu_name(int node, int gpu) { return node_name(node) + "-g" + std::to_string(gpu); }

sg4::Link* make_link(sg4::NetZone* zone, const std::string& name, double bandwidth,
                     double latency) {
  sg4::Link* link = zone->create_split_duplex_link(name, bandwidth);
  link->set_latency(latency);
  link->seal();
  return link;
}

// The platform: per GPU an "intra" host (in zone "intra", for traffic to GPUs of the
// same node) and a "net" host (in its NIC's leaf zone, for traffic to other nodes). Two
// SimGrid hosts per GPU keep every route a star-zone lookup: intra-node traffic never
// touches a NIC and inter-node traffic never crosses the NVSwitch, while links both kinds
// of traffic cross (a PCIe GPU link, a bridge uplink) are the same SimGrid link in both
// routes, so they are shared.
//
//   root star zone "fabric"
//   |- star zone "intra"  (nvswitch: GPU hosts, each with link "n<i>-g<j>-nvlink";
//   |    pcie_tree: bridge zones "n<i>-b<k>" with GPU hosts on "n<i>-g<j>-pcie", each
//   |    bridge reaching the root complex over "n<i>-b<k>-uplink")
//   |- leaf zone "leaf<l>"  (gateway router "leaf<l>-switch"; net hosts on NIC ports
//        "n<i>-nic<r>"; the zone reaches the spine over "leaf<l>-uplink")
class Platform {
 public:
  Platform(const FabricTopology& t, const Background& b) : t_(t), load_(b.network_load_fraction) {
    root_ = sg4::create_star_zone("fabric");  // SimGrid 3.32: the first zone is the root
    const auto gpus = static_cast<std::size_t>(t.gpu_count());
    intra_.resize(gpus);
    net_.resize(gpus);
    gpu_link_.resize(gpus);
    build_intra();
    if (t.nodes > 1) build_network();
    root_->seal();
  }

  // The hosts a flow between two GPUs runs between.
  sg4::Host* source(int src, int dst) const {
    return same_node(src, dst) ? intra_[src] : net_[src];
  }
  sg4::Host* destination(int src, int dst) const {
    return same_node(src, dst) ? intra_[dst] : net_[dst];
  }
  sg4::Host* any_host() const { return intra_.front(); }

 private:
  bool same_node(int a, int b) const { return a / t_.gpus_per_node == b / t_.gpus_per_node; }
  int bridges_per_node() const {
    return (t_.gpus_per_node + t_.intra.gpus_per_bridge - 1) / t_.intra.gpus_per_bridge;
  }
  int bridge_of_gpu(int gpu) const { return gpu / t_.intra.gpus_per_bridge; }
  int nic_of_gpu(int gpu) const { return gpu * t_.network.nics_per_node / t_.gpus_per_node; }
  int bridge_of_nic(int nic) const { return nic * bridges_per_node() / t_.network.nics_per_node; }
  int leaf_of(int node, int nic) const {
    const int group = node / t_.network.nodes_per_leaf;
    return t_.network.layout == NetworkLayout::rail_optimized
               ? group * t_.network.nics_per_node + nic
               : group;
  }

  // Every node's GPUs go into one zone, "intra": routes between intra hosts are only ever
  // asked for GPUs of the same node, and SimGrid 3.32 checks each new host and link name
  // against every zone in turn, so a zone per node would make building quadratic.
  void build_intra() {
    sg4::NetZone* zone = sg4::create_star_zone("intra");
    zone->set_parent(root_);
    for (int node = 0; node < t_.nodes; ++node) {
      if (t_.intra.kind == IntraNodeKind::nvswitch)
        build_nvswitch(zone, node);
      else
        build_pcie_tree(zone, node);
    }
    zone->seal();
  }

  void build_nvswitch(sg4::NetZone* zone, int node) {
    const int g = t_.gpus_per_node;
    for (int gpu = 0; gpu < g; ++gpu) {
      const int id = node * g + gpu;
      gpu_link_[id] =
          make_link(zone, gpu_name(node, gpu) + "-nvlink", t_.intra.gpu_link_bandwidth.value(),
                    t_.intra.gpu_to_gpu_latency.value() / 2);
      intra_[id] = add_host(zone, gpu_name(node, gpu), {{gpu_link_[id], Direction::UP}});
    }
  }

  // A bridge is a star zone under "intra" whose gateway reaches the root complex over
  // the bridge's uplink: GPUs under one bridge talk through their PCIe links only.
  void build_pcie_tree(sg4::NetZone* zone, int node) {
    const int g = t_.gpus_per_node;
    for (int b = 0; b < bridges_per_node(); ++b) {
      const std::string bridge = node_name(node) + "-b" + std::to_string(b);
      sg4::Link* uplink =
          make_link(zone, bridge + "-uplink", t_.intra.bridge_uplink_bandwidth.value(), 0.0);
      bridge_uplink_.push_back(uplink);
      sg4::NetZone* bz = sg4::create_star_zone(bridge);
      bz->set_parent(zone);
      NetPoint* router = bz->create_router(bridge + "-switch");
      for (int gpu = b * t_.intra.gpus_per_bridge;
           gpu < std::min(g, (b + 1) * t_.intra.gpus_per_bridge); ++gpu) {
        const int id = node * g + gpu;
        gpu_link_[id] =
            make_link(bz, gpu_name(node, gpu) + "-pcie", t_.intra.gpu_link_bandwidth.value(),
                      t_.intra.gpu_to_gpu_latency.value() / 2);
        intra_[id] = add_host(bz, gpu_name(node, gpu), {{gpu_link_[id], Direction::UP}});
      }
      bz->seal();
      zone->add_route(bz->get_netpoint(), nullptr, router, nullptr, {{uplink, Direction::UP}},
                      true);
    }
  }

  void build_network() {
    const Network& net = t_.network;
    const double capacity_left = 1.0 - load_;
    // A leaf's uplink capacity follows its design port count (nodes_per_leaf nodes), not
    // how many nodes happen to be attached to the last, partly filled leaf.
    const int ports_per_leaf = net.layout == NetworkLayout::rail_optimized
                                   ? net.nodes_per_leaf
                                   : net.nodes_per_leaf * net.nics_per_node;
    const double uplink_bw =
        ports_per_leaf * net.nic_bandwidth.value() / net.oversubscription * capacity_left;
    const int leaves = t_.leaf_count();
    std::vector<sg4::NetZone*> leaf_zone(static_cast<std::size_t>(leaves));
    std::vector<NetPoint*> leaf_router(static_cast<std::size_t>(leaves));
    std::vector<sg4::Link*> leaf_uplink(static_cast<std::size_t>(leaves));
    for (int l = 0; l < leaves; ++l) {
      const std::string name = "leaf" + std::to_string(l);
      leaf_zone[l] = sg4::create_star_zone(name);
      leaf_zone[l]->set_parent(root_);
      leaf_router[l] = leaf_zone[l]->create_router(name + "-switch");
      leaf_uplink[l] =
          make_link(leaf_zone[l], name + "-uplink", uplink_bw, net.spine_latency.value() / 2);
    }
    const int g = t_.gpus_per_node;
    for (int node = 0; node < t_.nodes; ++node) {
      std::vector<sg4::Link*> nic(static_cast<std::size_t>(net.nics_per_node));
      for (int r = 0; r < net.nics_per_node; ++r)
        nic[r] = make_link(
            leaf_zone[leaf_of(node, r)], node_name(node) + "-nic" + std::to_string(r),
            net.nic_bandwidth.value() * capacity_left, net.nic_to_nic_latency.value() / 2);
      for (int gpu = 0; gpu < g; ++gpu) {
        const int r = nic_of_gpu(gpu);
        std::vector<sg4::LinkInRoute> path;
        if (t_.intra.kind == IntraNodeKind::pcie_tree) {
          // GPUDirect RDMA: GPU -> its bridge -> (root complex, if the NIC hangs off
          // another bridge) -> NIC.
          path.emplace_back(gpu_link_[node * g + gpu], Direction::UP);
          const int bg = bridge_of_gpu(gpu), bn = bridge_of_nic(r);
          if (bg != bn) {
            path.emplace_back(bridge_uplink_[node * bridges_per_node() + bg], Direction::UP);
            path.emplace_back(bridge_uplink_[node * bridges_per_node() + bn], Direction::DOWN);
          }
        }
        // NVSwitch nodes: the NIC sits on its GPU's PCIe switch, off the NVLink path.
        path.emplace_back(nic[r], Direction::UP);
        net_[node * g + gpu] =
            add_host(leaf_zone[leaf_of(node, r)], gpu_name(node, gpu) + "-net", path);
      }
    }
    for (int l = 0; l < leaves; ++l) {
      leaf_zone[l]->seal();
      root_->add_route(leaf_zone[l]->get_netpoint(), nullptr, leaf_router[l], nullptr,
                       {{leaf_uplink[l], Direction::UP}}, true);
    }
  }

  static sg4::Host* add_host(sg4::NetZone* zone, const std::string& name,
                             const std::vector<sg4::LinkInRoute>& path_to_center) {
    sg4::Host* host = zone->create_host(name, kHostSpeedFlops);
    zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr, path_to_center, true);
    host->seal();
    return host;
  }

  const FabricTopology& t_;
  double load_;
  sg4::NetZone* root_ = nullptr;
  std::vector<sg4::Host*> intra_, net_;
  std::vector<sg4::Link*> gpu_link_, bridge_uplink_;
};

struct StepOutcome {
  double duration = 0;
  std::size_t slowest_flow = 0;
};

// What one host does in a step: the flows it sends and the flows it receives.
struct HostWork {
  sg4::Host* host = nullptr;
  std::vector<std::size_t> sends, receives;
};

std::vector<HostWork> work_by_host(const Platform& p, const std::vector<Flow>& flows) {
  std::unordered_map<const sg4::Host*, std::size_t> slot;
  std::vector<HostWork> work;
  const auto at = [&](sg4::Host* h) -> HostWork& {
    auto [it, added] = slot.emplace(h, work.size());
    if (added) work.push_back(HostWork{h, {}, {}});
    return work[it->second];
  };
  for (std::size_t i = 0; i < flows.size(); ++i) {
    const Flow& f = flows[i];
    at(p.source(f.src, f.dst)).sends.push_back(i);
    at(p.destination(f.src, f.dst)).receives.push_back(i);
  }
  return work;
}

// Starts `flows` as mailbox communications, one actor per host that sends or receives
// (a mailbox communication runs between the hosts of its two actors). Host-to-host
// Comm::sendto_async would need no actors, but SimGrid 3.32 files those under the maestro
// and removes each finished one by a linear search of that list: O(n^2) for n concurrent
// flows, minutes at 131 k. Per-host actors keep every list short. `finish[i]` receives the
// completion date of flow i; `actors` every actor started. Mailboxes are named by tag and
// receiving host.
void launch(const Platform& p, const std::vector<Flow>& flows, const std::string& tag,
            std::vector<double>& finish, std::vector<sg4::ActorPtr>& actors) {
  for (HostWork& w : work_by_host(p, flows)) {
    actors.push_back(
        sg4::Actor::create("flows", w.host, [&p, &flows, &finish, &tag, w = std::move(w)] {
          std::vector<sg4::CommPtr> comms;
          comms.reserve(w.sends.size() + w.receives.size());
          std::vector<Flow*> got(w.receives.size(), nullptr);
          sg4::Mailbox* inbox = sg4::Mailbox::by_name(tag + w.host->get_name());
          for (std::size_t j = 0; j < w.receives.size(); ++j)
            comms.push_back(inbox->get_async(&got[j]));
          for (const std::size_t i : w.sends) {
            const Flow& f = flows[i];
            sg4::Mailbox* to = sg4::Mailbox::by_name(tag + p.destination(f.src, f.dst)->get_name());
            comms.push_back(to->put_async(const_cast<Flow*>(&f),
                                          static_cast<std::uint64_t>(std::llround(f.bytes))));
          }
          try {
            sg4::Comm::wait_all(comms);
          } catch (const simgrid::Exception&) {
            // A peer was killed: only background flows end that way (run_step kills them).
            // A step flow left unfinished keeps finish = NaN and fails the run.
            return;
          }
          for (std::size_t j = 0; j < w.receives.size(); ++j)
            finish[static_cast<std::size_t>(got[j] - flows.data())] = comms[j]->get_finish_time();
        }));
  }
}

// Runs one step: background flows and the step's flows start together; the step ends when
// its last flow completes; the background actors are then killed, which cancels their
// flows. Called by the driver actor.
StepOutcome run_step(const Platform& p, const Step& step, const std::vector<Flow>& background) {
  static const std::string kStepTag = "step:", kBackgroundTag = "background:";
  const double start = sg4::Engine::get_clock();
  std::vector<double> noise_finish(background.size());
  std::vector<sg4::ActorPtr> noise_actors;
  launch(p, background, kBackgroundTag, noise_finish, noise_actors);
  std::vector<double> finish(step.flows.size(), std::numeric_limits<double>::quiet_NaN());
  std::vector<sg4::ActorPtr> actors;
  launch(p, step.flows, kStepTag, finish, actors);
  for (const auto& actor : actors) actor->join();
  for (const auto& actor : noise_actors) actor->kill();
  StepOutcome out;
  for (std::size_t i = 0; i < finish.size(); ++i) {
    if (std::isnan(finish[i]))
      throw std::runtime_error("flow " + std::to_string(i) + " of a step did not complete");
    if (finish[i] - start > out.duration) {
      out.duration = finish[i] - start;
      out.slowest_flow = i;
    }
  }
  return out;
}

double path_latency(const Platform& p, const Flow& f) {
  std::vector<sg4::Link*> links;
  double latency = 0;
  p.source(f.src, f.dst)->route_to(p.destination(f.src, f.dst), links, &latency);
  return latency;
}

// The link of `flow`'s path with the smallest equal share among the flows of the step
// crossing it (the first constraint max-min fairness saturates for that flow).
void find_bottleneck(const Platform& p, const std::vector<Flow>& flows, std::size_t flow,
                     RawTiming& out) {
  std::unordered_map<const sg4::Link*, int> crossing;
  std::vector<sg4::Link*> links;
  std::vector<sg4::Link*> slowest_path;
  for (std::size_t i = 0; i < flows.size(); ++i) {
    links.clear();
    double latency = 0;
    p.source(flows[i].src, flows[i].dst)
        ->route_to(p.destination(flows[i].src, flows[i].dst), links, &latency);
    for (const sg4::Link* l : links) ++crossing[l];
    if (i == flow) slowest_path = links;
  }
  out.bottleneck_share = std::numeric_limits<double>::infinity();
  for (const sg4::Link* l : slowest_path) {
    const double share = l->get_bandwidth() / crossing[l];
    if (share < out.bottleneck_share) {
      out.bottleneck_share = share;
      out.bottleneck_link = l->get_name();
    }
  }
}

}  // namespace

RawTiming run_plan(const FabricTopology& topology, const Background& background, const Plan& plan) {
  std::vector<std::string> args = simgrid_args();
  int argc = static_cast<int>(args.size());
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  // Deliberately never destroyed: the process (a forked child) ends right after, and
  // tearing down tens of thousands of hosts and links would only cost time.
  auto* engine = new sg4::Engine(&argc, argv.data());
  const Platform platform(topology, background);
  const int g = topology.gpus_per_node;
  std::vector<Flow> noise;
  for (const BackgroundFlow& f : background.flows)
    noise.push_back({f.src_node * g + f.src_gpu, f.dst_node * g + f.dst_gpu, kBackgroundFlowBytes});

  std::vector<StepOutcome> outcomes;
  std::string failure;
  sg4::Actor::create("driver", platform.any_host(), [&] {
    try {  // an exception must not escape an actor: SimGrid would abort
      for (const Step& step : plan.steps) outcomes.push_back(run_step(platform, step, noise));
    } catch (const std::exception& e) {
      failure = e.what();
    }
  });
  engine->run();
  if (!failure.empty()) throw std::runtime_error(failure);
  if (outcomes.size() != plan.steps.size())
    throw std::runtime_error("the SimGrid driver stopped after " + std::to_string(outcomes.size()) +
                             " of " + std::to_string(plan.steps.size()) + " steps");

  RawTiming out;
  std::size_t slowest = 0;
  for (std::size_t s = 0; s < plan.steps.size(); ++s) {
    const Step& step = plan.steps[s];
    double fill = 0;
    if (step.fill_paths > 0)
      for (const Flow& f : step.flows) fill = std::max(fill, path_latency(platform, f));
    out.total += step.weight * outcomes[s].duration + step.fill_paths * fill;
    out.mean_step += outcomes[s].duration / static_cast<double>(plan.steps.size());
    out.steps += step.weight;
    out.flows_per_step = std::max(out.flows_per_step, static_cast<int>(step.flows.size()));
    if (outcomes[s].duration > outcomes[slowest].duration) slowest = s;
  }
  out.simulated_steps = static_cast<int>(plan.steps.size());
  if (!plan.steps.empty() && !plan.steps[slowest].flows.empty()) {
    std::vector<Flow> all = plan.steps[slowest].flows;
    all.insert(all.end(), noise.begin(), noise.end());
    find_bottleneck(platform, all, outcomes[slowest].slowest_flow, out);
  }
  return out;
}

}  // namespace capsim::fabric::detail
