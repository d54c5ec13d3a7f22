#include "capsim/core/des/pipeline.hpp"
#include "capsim/core/text.hpp"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/strong_components.hpp>

#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <utility>

namespace capsim::des {

namespace {

struct NodeProps {
  NodeKind kind = NodeKind::station;
  std::uint32_t spec = 0;  // index into the vector of that kind's specs
};

struct EdgeProps {
  std::optional<ConveyorSpec> conveyor;
  double probability = 1.0;
};

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, NodeProps,
                                    EdgeProps>;
using Vertex = Graph::vertex_descriptor;

std::string number(double v) {
  return capsim::significant(v, 6);
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

}  // namespace

struct Pipeline::Impl {
  Graph graph;
  std::vector<SourceSpec> sources;
  std::vector<StationSpec> stations;
  std::vector<SinkSpec> sinks;
  std::vector<Diagnostic> build_errors;  // from connect() with unknown nodes

  NodeId add(NodeKind kind, std::uint32_t spec) {
    return NodeId{static_cast<std::uint32_t>(boost::add_vertex(NodeProps{kind, spec}, graph))};
  }
  const std::string& name(Vertex v) const {
    const NodeProps& p = graph[v];
    switch (p.kind) {
      case NodeKind::source: return sources[p.spec].name;
      case NodeKind::station: return stations[p.spec].name;
      case NodeKind::sink: break;
    }
    return sinks[p.spec].name;
  }
  // "stations.decode": the key path used in diagnostics.
  std::string key(Vertex v) const {
    static const char* const plural[] = {"sources", "stations", "sinks"};
    return std::string(plural[static_cast<int>(graph[v].kind)]) + "." + name(v);
  }
  std::string describe(Vertex v) const {
    static const char* const singular[] = {"source", "station", "sink"};
    return std::string(singular[static_cast<int>(graph[v].kind)]) + " " + quoted(name(v));
  }

  void check_specs(Status& out) const;
  void check_edges(Status& out) const;
  void check_reachability(Status& out) const;
  void check_cycles(Status& out) const;
};

Pipeline::Pipeline() : impl_(std::make_unique<Impl>()) {}
Pipeline::~Pipeline() = default;
Pipeline::Pipeline(const Pipeline& other) : impl_(std::make_unique<Impl>(*other.impl_)) {}
Pipeline& Pipeline::operator=(const Pipeline& other) {
  if (this != &other) impl_ = std::make_unique<Impl>(*other.impl_);
  return *this;
}
Pipeline::Pipeline(Pipeline&&) noexcept = default;
Pipeline& Pipeline::operator=(Pipeline&&) noexcept = default;

NodeId Pipeline::add_source(SourceSpec spec) {
  impl_->sources.push_back(std::move(spec));
  return impl_->add(NodeKind::source, static_cast<std::uint32_t>(impl_->sources.size() - 1));
}
NodeId Pipeline::add_station(StationSpec spec) {
  impl_->stations.push_back(std::move(spec));
  return impl_->add(NodeKind::station, static_cast<std::uint32_t>(impl_->stations.size() - 1));
}
NodeId Pipeline::add_sink(SinkSpec spec) {
  impl_->sinks.push_back(std::move(spec));
  return impl_->add(NodeKind::sink, static_cast<std::uint32_t>(impl_->sinks.size() - 1));
}

void Pipeline::connect(NodeId from, NodeId to, std::optional<ConveyorSpec> conveyor,
                       double probability) {
  const auto n = boost::num_vertices(impl_->graph);
  if (from.index >= n || to.index >= n) {
    impl_->build_errors.push_back(
        {{}, "pipeline", "connect(" + std::to_string(from.index) + ", " +
                             std::to_string(to.index) + ") names a node this pipeline does not have",
         "use the NodeId returned by add_source, add_station or add_sink of the same pipeline"});
    return;
  }
  boost::add_edge(from.index, to.index, EdgeProps{std::move(conveyor), probability},
                  impl_->graph);
}

std::size_t Pipeline::node_count() const { return boost::num_vertices(impl_->graph); }
NodeKind Pipeline::kind(NodeId id) const { return impl_->graph[id.index].kind; }
const std::string& Pipeline::name(NodeId id) const { return impl_->name(id.index); }
const SourceSpec& Pipeline::source(NodeId id) const {
  return impl_->sources[impl_->graph[id.index].spec];
}
const StationSpec& Pipeline::station(NodeId id) const {
  return impl_->stations[impl_->graph[id.index].spec];
}
const SinkSpec& Pipeline::sink(NodeId id) const { return impl_->sinks[impl_->graph[id.index].spec]; }

std::vector<Connection> Pipeline::connections_from(NodeId id) const {
  std::vector<Connection> out;
  for (auto [e, end] = boost::out_edges(id.index, impl_->graph); e != end; ++e) {
    const EdgeProps& p = impl_->graph[*e];
    out.push_back({id, NodeId{static_cast<std::uint32_t>(boost::target(*e, impl_->graph))},
                   p.conveyor, p.probability});
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Validation

void Pipeline::Impl::check_specs(Status& out) const {
  std::map<std::string, int> seen;
  auto add = [&](const std::string& key, std::string message) {
    out.push_back({{}, key, std::move(message), {}});
  };
  for (Vertex v = 0; v < boost::num_vertices(graph); ++v) {
    const std::string& nm = name(v);
    if (nm.empty()) {
      add("pipeline", "node " + std::to_string(v) + " has no name");
      continue;
    }
    if (++seen[nm] == 2) add(key(v), "the name " + quoted(nm) + " is used more than once");
  }
  for (const StationSpec& s : stations) {
    const std::string k = "stations." + s.name, who = "station " + quoted(s.name) + ": ";
    if (s.servers < 1) add(k, who + "servers must be >= 1 (got " + std::to_string(s.servers) + ")");
    if (std::string problem = s.service.check(); !problem.empty()) add(k, who + problem);
    if (s.max_batch < 1)
      add(k, who + "max_batch must be >= 1 (got " + std::to_string(s.max_batch) + ")");
    if (!(s.max_queue_delay.value() >= 0.0) || !std::isfinite(s.max_queue_delay.value()))
      add(k, who + "max_queue_delay must be >= 0 s (got " + number(s.max_queue_delay.value()) +
                 " s)");
    if (s.queue_capacity < 0)
      add(k, who + "queue_capacity must be >= 0, 0 meaning unbounded (got " +
                 std::to_string(s.queue_capacity) + ")");
  }
  for (const SourceSpec& s : sources) {
    const std::string k = "sources." + s.name, who = "source " + quoted(s.name) + ": ";
    using K = SourceSpec::Kind;
    if ((s.kind == K::poisson || s.kind == K::diurnal) &&
        (!(s.rate.value() > 0.0) || !std::isfinite(s.rate.value())))
      add(k, who + "rate must be > 0 per second (got " + number(s.rate.value()) + ")");
    if (s.kind == K::trace) {
      if (s.arrivals.empty()) add(k, who + "the trace has no arrivals");
      for (std::size_t i = 0; i < s.arrivals.size(); ++i) {
        const double t = s.arrivals[i].value();
        if (!(t >= 0.0) || !std::isfinite(t) || (i > 0 && t < s.arrivals[i - 1].value())) {
          add(k, who + "trace arrival " + std::to_string(i) + " at " + number(t) +
                     " s is negative or earlier than the one before");
          break;
        }
      }
    }
    if (s.kind == K::diurnal) {
      double max_multiplier = 0.0;
      bool negative = false;
      for (double m : s.hourly) {
        negative = negative || !(m >= 0.0) || !std::isfinite(m);
        if (m > max_multiplier) max_multiplier = m;
      }
      if (negative || max_multiplier <= 0.0)
        add(k, who + "hourly multipliers must be >= 0 with at least one > 0");
    }
    if (s.kind == K::closed) {
      if (s.population < 1)
        add(k, who + "population must be >= 1 (got " + std::to_string(s.population) + ")");
      if (!(s.think_time.value() >= 0.0) || !std::isfinite(s.think_time.value()))
        add(k, who + "think_time must be >= 0 s (got " + number(s.think_time.value()) + " s)");
    }
    if (!(s.item_size.value() >= 0.0) || !std::isfinite(s.item_size.value()))
      add(k, who + "item_size must be >= 0 B (got " + number(s.item_size.value()) + " B)");
  }
}

void Pipeline::Impl::check_edges(Status& out) const {
  auto add = [&](const std::string& key, std::string message, std::string hint = {}) {
    out.push_back({{}, key, std::move(message), std::move(hint)});
  };
  bool any_source = false, any_sink = false;
  for (Vertex v = 0; v < boost::num_vertices(graph); ++v) {
    const NodeKind kind = graph[v].kind;
    any_source = any_source || kind == NodeKind::source;
    any_sink = any_sink || kind == NodeKind::sink;
    if (kind == NodeKind::source && boost::in_degree(v, graph) > 0)
      add(key(v), describe(v) + " cannot have incoming connections");
    if (kind == NodeKind::source && boost::out_degree(v, graph) == 0)
      add(key(v), describe(v) + " is connected to nothing");
    if (kind == NodeKind::sink && boost::out_degree(v, graph) > 0)
      add(key(v), describe(v) + " cannot have outgoing connections");
    double sum = 0.0;
    bool each_ok = true;
    for (auto [e, end] = boost::out_edges(v, graph); e != end; ++e) {
      const EdgeProps& p = graph[*e];
      const std::string edge = name(v) + " -> " + name(boost::target(*e, graph));
      if (!(p.probability > 0.0 && p.probability <= 1.0)) {
        add(key(v), "connection " + edge + ": probability must be in (0, 1] (got " +
                        number(p.probability) + ")");
        each_ok = false;
      }
      sum += p.probability;
      if (!p.conveyor) continue;
      const ConveyorSpec& c = *p.conveyor;
      const std::string ck = "conveyors." + c.name, who = "conveyor " + quoted(c.name) + " (" + edge + "): ";
      if (c.name.empty()) add(key(v), "the conveyor on " + edge + " has no name");
      if (!(c.bandwidth.value() > 0.0) || !std::isfinite(c.bandwidth.value()))
        add(ck, who + "bandwidth must be > 0 B/s (got " + number(c.bandwidth.value()) + " B/s)",
            "leave the conveyor out for an instantaneous edge");
      if (!(c.latency.value() >= 0.0) || !std::isfinite(c.latency.value()))
        add(ck, who + "latency must be >= 0 s (got " + number(c.latency.value()) + " s)");
      if (c.capacity < 0)
        add(ck, who + "capacity must be >= 0, 0 meaning unbounded (got " +
                    std::to_string(c.capacity) + ")");
    }
    if (each_ok && boost::out_degree(v, graph) > 0 && std::abs(sum - 1.0) > 1e-9)
      add(key(v), "the routing probabilities out of " + quoted(name(v)) + " sum to " +
                      number(sum) + ", not 1");
  }
  if (!any_source) add("pipeline", "the pipeline has no source");
  if (!any_sink) add("pipeline", "the pipeline has no sink");
}

namespace {
// Vertices reachable from `starts` following out-edges (forward) or in-edges (backward).
std::vector<bool> reach(const Graph& g, std::vector<Vertex> stack, bool forward) {
  std::vector<bool> seen(boost::num_vertices(g), false);
  for (Vertex v : stack) seen[v] = true;
  while (!stack.empty()) {
    const Vertex v = stack.back();
    stack.pop_back();
    auto visit = [&](Vertex w) {
      if (!seen[w]) {
        seen[w] = true;
        stack.push_back(w);
      }
    };
    if (forward) {
      for (auto [e, end] = boost::out_edges(v, g); e != end; ++e) visit(boost::target(*e, g));
    } else {
      for (auto [e, end] = boost::in_edges(v, g); e != end; ++e) visit(boost::source(*e, g));
    }
  }
  return seen;
}
}  // namespace

void Pipeline::Impl::check_reachability(Status& out) const {
  std::vector<Vertex> sources_v, sinks_v;
  for (Vertex v = 0; v < boost::num_vertices(graph); ++v) {
    if (graph[v].kind == NodeKind::source) sources_v.push_back(v);
    if (graph[v].kind == NodeKind::sink) sinks_v.push_back(v);
  }
  const auto from_source = reach(graph, sources_v, true);
  const auto to_sink = reach(graph, sinks_v, false);
  for (Vertex v = 0; v < boost::num_vertices(graph); ++v) {
    if (graph[v].kind == NodeKind::source) continue;
    if (!from_source[v])
      out.push_back({{}, key(v), describe(v) + " is unreachable from every source", {}});
    if (graph[v].kind == NodeKind::station && !to_sink[v])
      out.push_back({{}, key(v), describe(v) + " has no path to a sink", {}});
  }
}

// A cycle whose stations all have bounded queues can fill up: every server then holds a
// finished item for a full queue and nothing moves (a deadlock). It is safe only when fewer
// items can enter the cycle than it holds: queue_capacity + servers * max_batch per station,
// plus the capacity of conveyors inside it.
void Pipeline::Impl::check_cycles(Status& out) const {
  const auto n = boost::num_vertices(graph);
  std::vector<int> component(n);
  const int count = boost::strong_components(
      graph, boost::make_iterator_property_map(component.begin(),
                                               boost::get(boost::vertex_index, graph)));
  for (int c = 0; c < count; ++c) {
    std::vector<Vertex> members;
    bool cyclic = false, unbounded = false;
    long long holds = 0;
    for (Vertex v = 0; v < n; ++v) {
      if (component[v] != c) continue;
      members.push_back(v);
      if (graph[v].kind != NodeKind::station) continue;
      const StationSpec& s = stations[graph[v].spec];
      if (s.queue_capacity == 0) unbounded = true;
      holds += s.queue_capacity + static_cast<long long>(s.servers) * s.max_batch;
      for (auto [e, end] = boost::out_edges(v, graph); e != end; ++e) {
        const Vertex w = boost::target(*e, graph);
        if (component[w] != c) continue;
        cyclic = true;
        const auto& conv = graph[*e].conveyor;
        if (conv && conv->capacity == 0) unbounded = true;
        if (conv) holds += conv->capacity;
      }
    }
    if (!cyclic || unbounded) continue;
    // What can enter: an open source reaching the cycle sends without bound; closed ones
    // bring their population.
    const auto upstream = reach(graph, {members.front()}, false);
    bool open = false;
    long long population = 0;
    for (Vertex v = 0; v < n; ++v) {
      if (!upstream[v] || graph[v].kind != NodeKind::source) continue;
      const SourceSpec& s = sources[graph[v].spec];
      if (s.kind == SourceSpec::Kind::closed) {
        population += s.population;
      } else {
        open = true;
      }
    }
    if (!open && population < holds) continue;
    std::string names;
    for (Vertex v : members) names += (names.empty() ? "" : ", ") + quoted(name(v));
    const std::string more = open ? "an open source can send more"
                                  : std::to_string(population) + " items circulate";
    out.push_back({{}, key(members.front()),
                   "cycle without capacity: stations " + names + " hold at most " +
                       std::to_string(holds) + " items but " + more + ", so the cycle can deadlock",
                   "give one station of the cycle an unbounded queue (queue_capacity 0)"});
  }
}

Status Pipeline::validate() const {
  Status out = impl_->build_errors;
  impl_->check_specs(out);
  impl_->check_edges(out);
  impl_->check_reachability(out);
  impl_->check_cycles(out);
  return out;
}

}  // namespace capsim::des
