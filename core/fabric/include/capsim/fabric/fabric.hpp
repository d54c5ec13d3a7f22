// Timing collectives and transfers on a FabricTopology with SimGrid's flow-level model.
//
// How a time is computed. The platform (hosts, split-duplex links, star zones per leaf and
// per node) is built from the topology and each flow is a SimGrid communication under the
// CM02 model with cross-traffic off: a flow of S bytes over a path of latency L whose
// max-min fair share of its most contended link is B takes L + S / B. (Velho & Legrand,
// "Accuracy study and improvement of network simulation in the SimGrid framework",
// SIMUTools 2009; CM02 = Casanova & Marchal 2002, the plain max-min flow model. Latency and
// bandwidth factors are 1 and the TCP window bound is disabled, so times are textbook
// alpha-beta.) Collectives are symmetric, so one step is simulated, not all of them:
//   - ring all-reduce / all-gather / reduce-scatter: one ring step = every rank sending
//     S/n to its successor at once (in each of `rings` parallel rings), times 2(n-1) or n-1;
//   - tree all-reduce: one pipelined phase of both trees of a double binary tree (every
//     child sending S/2 to its parent in each tree at once), times 2 (reduce + broadcast),
//     plus 2 (depth - 1) path latencies for the pipeline to fill;
//   - all-to-all: pairwise exchange, phase k = every rank sending S/n to rank + k; up to
//     kAllToAllExactPhases phases are all simulated, beyond that kAllToAllSampledPhases
//     strata of consecutive k, one phase each, weighted by the stratum's size;
//   - point-to-point: one flow; pipeline send: every rank but the last sends S to the next.
// Contention between the concurrent flows of a step (an oversubscribed spine, two rings on
// one NIC, a PCIe bridge uplink) is what SimGrid adds over the closed-form formulas of
// capsim::models (collectives.hpp).
//
// Process model. SimGrid allows one engine per process, so every simulation runs in a
// forked child that writes its result to a pipe; the parent waits with a timeout. Results
// are cached in memory by (topology, request), so a repeated query forks nothing.
//
// Thread-safety: FabricSimulator is safe to call from several threads (the cache is guarded
// by a mutex; simulations run outside the lock, so two threads asking the same new query
// may both simulate it and the first result stays). fork() from a multi-threaded process
// is safe here only because the child touches nothing but its own SimGrid engine, malloc
// (which glibc makes fork-safe) and the pipe.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "capsim/core/result.hpp"
#include "capsim/core/units.hpp"
#include "capsim/fabric/topology.hpp"

namespace capsim::fabric {

enum class Pattern {
  ring_all_reduce,
  tree_all_reduce,
  all_gather,
  reduce_scatter,
  all_to_all,
  point_to_point,
  pipeline_send,
};

// "ring_all_reduce", ... (the enumerator's name).
std::string_view to_string(Pattern p);
// The inverse of to_string; an unknown name is an error with a "did you mean".
Result<Pattern> parse_pattern(std::string_view name);

// Which GPUs take part, as ranks in node-major order (node 0's GPUs first).
enum class GroupKind {
  all_gpus,      // every GPU of every node
  one_per_node,  // GPU `index` of every node (a data-parallel group across nodes)
  one_node,      // the GPUs of node `index` (a tensor-parallel group)
};
struct Group {
  GroupKind kind = GroupKind::all_gpus;
  int index = 0;
};

struct GpuRef {
  int node = 0;
  int gpu = 0;
};

// All-to-all: up to this many phases (n - 1) are all simulated ...
inline constexpr int kAllToAllExactPhases = 64;
// ... beyond it, this many strata of consecutive phases, one simulated phase each.
inline constexpr int kAllToAllSampledPhases = 16;

struct CollectiveRequest {
  Pattern pattern = Pattern::ring_all_reduce;
  // The buffer as capsim::models counts it (> 0): all-reduce: what every rank holds;
  // all-gather: the gathered output; reduce-scatter: the input; all-to-all: what one rank
  // sends in total; point-to-point and pipeline send: one message.
  Bytes bytes;
  Group group;
  // point_to_point only: the two ends (distinct GPUs).
  GpuRef source;
  GpuRef destination;
  // Ring patterns only: parallel rings (NCCL channels), each carrying bytes / rings.
  // 0 = automatic: min(gpus_per_node, nics_per_node) for an all_gpus group that spans
  // nodes, so that every NIC sends and receives once per step; 1 otherwise.
  int rings = 0;
  Background background;
};

struct FabricTiming {
  Seconds total;            // the whole operation
  Seconds step_time;        // mean simulated duration of one step (phase)
  double steps = 0;         // steps the total stands for (total = steps * step_time + fill)
  int flows_per_step = 0;   // concurrent flows of the collective in one step
  int simulated_steps = 0;  // distinct steps simulated
  // The link that limits the slowest flow of the slowest step ("leaf0-uplink_UP",
  // "n3-nic1_DOWN", "n0-g2-nvlink_UP"), and that flow's share of it.
  std::string bottleneck_link;
  BytesPerSecond bottleneck_share;
};

struct SimulatorOptions {
  // Wall-clock limit for one simulation child; past it the child is killed and the query
  // is an error. Default: 120 s.
  Seconds child_timeout = Seconds(120);
};

class FabricSimulator {
 public:
  explicit FabricSimulator(SimulatorOptions options = {});
  ~FabricSimulator();
  FabricSimulator(const FabricSimulator&) = delete;
  FabricSimulator& operator=(const FabricSimulator&) = delete;

  // Times one request. Errors (as diagnostics, never a crash): an invalid topology or
  // request (with the key path), a child that failed, crashed or timed out. Only successes
  // are cached.
  Result<FabricTiming> time(const FabricTopology& topology, const CollectiveRequest& request);

  // Children forked so far (= simulations run); cache hits so far.
  std::size_t simulations_run() const;
  std::size_t cache_hits() const;
  void clear_cache();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Checks a request against a topology without simulating: every problem at once.
Status validate(const CollectiveRequest& request, const FabricTopology& topology);

// The process-wide simulator (default options), for callers that need no own cache.
FabricSimulator& default_simulator();
// default_simulator().time(...).total
Result<Seconds> time_collective(const FabricTopology& topology, const CollectiveRequest& request);

}  // namespace capsim::fabric
