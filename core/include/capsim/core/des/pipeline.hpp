// Pipeline: the graph of a simulated system (sources -> stations -> sinks, with optional
// conveyors on the edges). Built mutable, checked with validate(), then handed to a
// Simulator, which copies what it needs: a Pipeline is never modified by a run.
//
// Edges are instantaneous unless they carry a conveyor. Out of a node with several edges,
// each item takes one edge at random with the edge's probability (they must sum to 1).
// Stored as a Boost.Graph adjacency_list behind a pointer, so this header stays light.
//
// Ownership: a value type (copy = deep copy). Thread-safety: const methods may be called
// from many threads at once; building (add_*, connect) needs exclusive access.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "capsim/core/des/specs.hpp"
#include "capsim/core/result.hpp"

namespace capsim::des {

enum class NodeKind : std::uint8_t { source, station, sink };

// A handle to a node of one Pipeline (its index in insertion order).
struct NodeId {
  std::uint32_t index = 0;
  friend bool operator==(NodeId, NodeId) = default;
};

// One edge as the caller gave it.
struct Connection {
  NodeId from;
  NodeId to;
  std::optional<ConveyorSpec> conveyor;  // none: the edge is instantaneous
  double probability = 1.0;              // share of the items leaving `from` that take it
};

class Pipeline {
 public:
  Pipeline();
  ~Pipeline();
  Pipeline(const Pipeline& other);
  Pipeline& operator=(const Pipeline& other);
  Pipeline(Pipeline&&) noexcept;
  Pipeline& operator=(Pipeline&&) noexcept;

  NodeId add_source(SourceSpec spec);
  NodeId add_station(StationSpec spec);
  NodeId add_sink(SinkSpec spec);

  // Adds an edge. A NodeId from another pipeline (out of range) is reported by validate().
  void connect(NodeId from, NodeId to, std::optional<ConveyorSpec> conveyor = std::nullopt,
               double probability = 1.0);

  // Every problem at once, each naming the node (or conveyor): invalid specs, duplicate
  // names, routing probabilities that do not sum to 1, stations unreachable from every
  // source or with no path to a sink, conveyors with an invalid spec, and cycles made only
  // of bounded queues that can fill up ("cycle without capacity"). Empty means valid.
  Status validate() const;

  // Reading the pipeline back (preconditions: id valid; kind matches the accessor).
  std::size_t node_count() const;
  NodeKind kind(NodeId id) const;
  const std::string& name(NodeId id) const;
  const SourceSpec& source(NodeId id) const;
  const StationSpec& station(NodeId id) const;
  const SinkSpec& sink(NodeId id) const;
  // The edges out of `id`, in the order they were connected.
  std::vector<Connection> connections_from(NodeId id) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace capsim::des
