// Pipeline::validate: every error names the station, and the texts are pinned.
#include <doctest/doctest.h>

#include "capsim/core/des/examples.hpp"
#include "capsim/core/des/pipeline.hpp"

using namespace capsim;
using namespace capsim::des;

namespace {
StationSpec station(std::string name, int queue_capacity = 0) {
  StationSpec s;
  s.name = std::move(name);
  s.service = ServiceTime::exponential(Seconds(1.0));
  s.queue_capacity = queue_capacity;
  return s;
}
}  // namespace

TEST_CASE("a well formed pipeline validates") {
  CHECK(make_tandem_pipeline(3, 0.8, 1.0).validate().empty());
}

TEST_CASE("unreachable stations and stations with no way out are named") {
  Pipeline p;
  const NodeId src = p.add_source(SourceSpec::poisson("in", Rate(1.0)));
  const NodeId a = p.add_station(station("decode"));
  const NodeId orphan = p.add_station(station("orphan"));
  const NodeId dead_end = p.add_station(station("dead_end"));
  const NodeId out = p.add_sink({"out"});
  p.connect(src, a);
  p.connect(a, out, std::nullopt, 0.5);
  p.connect(a, dead_end, std::nullopt, 0.5);
  p.connect(orphan, out);
  CHECK(format_diagnostics(p.validate()) ==
        "error: stations.orphan: station 'orphan' is unreachable from every source\n"
        "error: stations.dead_end: station 'dead_end' has no path to a sink\n");
}

TEST_CASE("conveyor specs and routing probabilities are checked") {
  Pipeline p;
  const NodeId src = p.add_source(SourceSpec::poisson("in", Rate(1.0)));
  const NodeId a = p.add_station(station("a"));
  const NodeId b = p.add_station(station("b"));
  const NodeId out = p.add_sink({"out"});
  p.connect(src, a, ConveyorSpec{"pcie", BytesPerSecond(0.0), Seconds(0.0), 0});
  p.connect(a, b, std::nullopt, 0.5);
  p.connect(a, out, std::nullopt, 0.4);
  p.connect(b, out, std::nullopt, 1.5);
  CHECK(format_diagnostics(p.validate()) ==
        "error: conveyors.pcie: conveyor 'pcie' (in -> a): bandwidth must be > 0 B/s (got 0 B/s) "
        "(leave the conveyor out for an instantaneous edge)\n"
        "error: stations.a: the routing probabilities out of 'a' sum to 0.9, not 1\n"
        "error: stations.b: connection b -> out: probability must be in (0, 1] (got 1.5)\n");
}

TEST_CASE("a cycle of bounded queues is a cycle without capacity") {
  Pipeline p;
  const NodeId src = p.add_source(SourceSpec::poisson("in", Rate(1.0)));
  const NodeId a = p.add_station(station("a", 2));
  const NodeId b = p.add_station(station("b", 3));
  const NodeId out = p.add_sink({"out"});
  p.connect(src, a);
  p.connect(a, b);
  p.connect(b, a, std::nullopt, 0.5);
  p.connect(b, out, std::nullopt, 0.5);
  CHECK(format_diagnostics(p.validate()) ==
        "error: stations.a: cycle without capacity: stations 'a', 'b' hold at most 7 items but "
        "an open source can send more, so the cycle can deadlock (give one station of the cycle "
        "an unbounded queue (queue_capacity 0))\n");

  // With one unbounded queue in the cycle it is fine.
  Pipeline q;
  const NodeId qs = q.add_source(SourceSpec::poisson("in", Rate(1.0)));
  const NodeId qa = q.add_station(station("a", 0));
  const NodeId qb = q.add_station(station("b", 3));
  const NodeId qo = q.add_sink({"out"});
  q.connect(qs, qa);
  q.connect(qa, qb);
  q.connect(qb, qa, std::nullopt, 0.5);
  q.connect(qb, qo, std::nullopt, 0.5);
  CHECK(q.validate().empty());
}

TEST_CASE("a closed population smaller than the cycle is fine") {
  auto build = [](int population) {
    Pipeline p;
    const NodeId src = p.add_source(SourceSpec::closed("users", population));
    const NodeId a = p.add_station(station("a", 2));
    const NodeId b = p.add_station(station("b", 2));
    p.connect(src, a);
    p.connect(a, b);
    p.connect(b, a, std::nullopt, 0.5);
    p.connect(b, p.add_sink({"out"}), std::nullopt, 0.5);
    return p;
  };
  CHECK(build(5).validate().empty());  // holds 2 + 1 + 2 + 1 = 6
  CHECK(format_diagnostics(build(6).validate()) ==
        "error: stations.a: cycle without capacity: stations 'a', 'b' hold at most 6 items but 6 "
        "items circulate, so the cycle can deadlock (give one station of the cycle an unbounded "
        "queue (queue_capacity 0))\n");
}

TEST_CASE("bad specs and structure are all reported at once") {
  Pipeline p;
  const NodeId src = p.add_source(SourceSpec::poisson("in", Rate(0.0)));
  StationSpec s = station("gpu");
  s.servers = 0;
  s.max_batch = 0;
  s.service = ServiceTime::deterministic(Seconds(-1.0));
  const NodeId st = p.add_station(s);
  const NodeId dup = p.add_station(station("gpu"));
  p.connect(src, st);
  p.connect(st, dup);
  p.connect(dup, src);
  p.connect(st, NodeId{42});
  CHECK(format_diagnostics(p.validate()) ==
        "error: pipeline: connect(1, 42) names a node this pipeline does not have (use the "
        "NodeId returned by add_source, add_station or add_sink of the same pipeline)\n"
        "error: stations.gpu: the name 'gpu' is used more than once\n"
        "error: stations.gpu: station 'gpu': servers must be >= 1 (got 0)\n"
        "error: stations.gpu: station 'gpu': service time mean must be > 0 s (got -1 s)\n"
        "error: stations.gpu: station 'gpu': max_batch must be >= 1 (got 0)\n"
        "error: sources.in: source 'in': rate must be > 0 per second (got 0)\n"
        "error: sources.in: source 'in' cannot have incoming connections\n"
        "error: pipeline: the pipeline has no sink\n"
        "error: stations.gpu: station 'gpu' has no path to a sink\n"
        "error: stations.gpu: station 'gpu' has no path to a sink\n");
}
