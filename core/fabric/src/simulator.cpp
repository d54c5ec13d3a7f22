#include "capsim/fabric/fabric.hpp"

#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "capsim/core/suggest.hpp"
#include "child.hpp"
#include "plan.hpp"
#include "simgrid_backend.hpp"

namespace capsim::fabric {
namespace {

// More parallel rings than this is a mistake, not a configuration (NCCL uses up to 32
// channels).
constexpr int kMaxRings = 64;

constexpr std::array<std::pair<Pattern, std::string_view>, 7> kPatternNames{{
    {Pattern::ring_all_reduce, "ring_all_reduce"},
    {Pattern::tree_all_reduce, "tree_all_reduce"},
    {Pattern::all_gather, "all_gather"},
    {Pattern::reduce_scatter, "reduce_scatter"},
    {Pattern::all_to_all, "all_to_all"},
    {Pattern::point_to_point, "point_to_point"},
    {Pattern::pipeline_send, "pipeline_send"},
}};

Diagnostic error(std::string key_path, std::string message, std::string hint = {}) {
  return Diagnostic{{}, std::move(key_path), std::move(message), std::move(hint)};
}

bool known(Pattern p) {
  for (const auto& [value, name] : kPatternNames)
    if (value == p) return true;
  return false;
}

int group_size(const FabricTopology& t, const CollectiveRequest& r) {
  if (r.pattern == Pattern::point_to_point) return 2;
  switch (r.group.kind) {
    case GroupKind::all_gpus:
      return t.gpu_count();
    case GroupKind::one_per_node:
      return t.nodes;
    case GroupKind::one_node:
      return t.gpus_per_node;
  }
  return 0;
}

void check_group(const Group& group, const FabricTopology& t, Status& out) {
  switch (group.kind) {
    case GroupKind::all_gpus:
      return;
    case GroupKind::one_per_node:
      if (group.index < 0 || group.index >= t.gpus_per_node)
        out.push_back(error("request.group.index", "GPU index " + std::to_string(group.index) +
                                                       " outside 0.." +
                                                       std::to_string(t.gpus_per_node - 1)));
      return;
    case GroupKind::one_node:
      if (group.index < 0 || group.index >= t.nodes)
        out.push_back(error("request.group.index", "node index " + std::to_string(group.index) +
                                                       " outside 0.." +
                                                       std::to_string(t.nodes - 1)));
      return;
  }
  out.push_back(error("request.group.kind",
                      "unknown group kind " + std::to_string(static_cast<int>(group.kind)),
                      "use all_gpus, one_per_node or one_node"));
}

void check_endpoint(const GpuRef& ref, const FabricTopology& t, const std::string& key,
                    Status& out) {
  if (ref.node < 0 || ref.node >= t.nodes || ref.gpu < 0 || ref.gpu >= t.gpus_per_node)
    out.push_back(error(key, "GPU (node " + std::to_string(ref.node) + ", gpu " +
                                 std::to_string(ref.gpu) + ") outside the topology (" +
                                 std::to_string(t.nodes) + " nodes x " +
                                 std::to_string(t.gpus_per_node) + " GPUs)"));
}

std::string exact(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

std::string request_key(const FabricTopology& t, const CollectiveRequest& r) {
  std::string key =
      canonical_key(t) + "|p=" + std::string(to_string(r.pattern)) + ";b=" + exact(r.bytes.value());
  if (r.pattern == Pattern::point_to_point) {
    key += ";src=" + std::to_string(r.source.node) + "." + std::to_string(r.source.gpu) +
           ";dst=" + std::to_string(r.destination.node) + "." + std::to_string(r.destination.gpu);
  } else {
    key += ";grp=" + std::to_string(static_cast<int>(r.group.kind)) + "." +
           std::to_string(r.group.index) + ";rings=" + std::to_string(detail::ring_count(t, r));
  }
  return key + "|" + canonical_key(r.background);
}

std::string serialize(const detail::RawTiming& raw) {
  return exact(raw.total) + ' ' + exact(raw.mean_step) + ' ' + exact(raw.steps) + ' ' +
         std::to_string(raw.flows_per_step) + ' ' + std::to_string(raw.simulated_steps) + ' ' +
         exact(raw.bottleneck_share) + '\n' + raw.bottleneck_link;
}

Result<FabricTiming> deserialize(const std::string& text) {
  std::istringstream in(text);
  double total = 0, step = 0, steps = 0, share = 0;
  FabricTiming t;
  if (!(in >> total >> step >> steps >> t.flows_per_step >> t.simulated_steps >> share))
    return error("fabric", "unreadable answer from the simulation child: '" + text + "'");
  in.ignore(1);
  std::getline(in, t.bottleneck_link);
  t.total = Seconds(total);
  t.step_time = Seconds(step);
  t.steps = steps;
  t.bottleneck_share = BytesPerSecond(share);
  return t;
}

}  // namespace

std::string_view to_string(Pattern p) {
  for (const auto& [value, name] : kPatternNames)
    if (value == p) return name;
  return "unknown";
}

Result<Pattern> parse_pattern(std::string_view name) {
  std::vector<std::string> names;
  for (const auto& [value, text] : kPatternNames) {
    if (text == name) return value;
    names.emplace_back(text);
  }
  std::string hint = did_you_mean(name, names);
  if (hint.empty()) {
    hint = "one of:";
    for (const auto& n : names) hint += " " + n;
  }
  return error("pattern", "unknown collective pattern '" + std::string(name) + "'", hint);
}

Status validate(const CollectiveRequest& r, const FabricTopology& t) {
  Status out = validate(t);
  if (!out.empty()) return out;  // the request cannot be checked against a broken topology
  if (!known(r.pattern))
    out.push_back(error("request.pattern",
                        "unknown collective pattern " + std::to_string(static_cast<int>(r.pattern)),
                        "use parse_pattern() to read a pattern from text"));
  if (!(std::isfinite(r.bytes.value()) && r.bytes.value() >= 0))
    out.push_back(
        error("request.bytes", "must be a finite size >= 0, got " + exact(r.bytes.value())));
  if (r.pattern == Pattern::point_to_point) {
    check_endpoint(r.source, t, "request.source", out);
    check_endpoint(r.destination, t, "request.destination", out);
    if (r.source.node == r.destination.node && r.source.gpu == r.destination.gpu)
      out.push_back(error("request.destination", "same GPU as the source: nothing crosses a link"));
  } else {
    check_group(r.group, t, out);
  }
  if (r.rings < 0 || r.rings > kMaxRings)
    out.push_back(error("request.rings", "must be in 0.." + std::to_string(kMaxRings) +
                                             " (0 = automatic), got " + std::to_string(r.rings)));
  for (Diagnostic& d : validate(r.background, t)) {
    d.key_path = "request." + d.key_path;
    out.push_back(std::move(d));
  }
  return out;
}

struct FabricSimulator::State {
  SimulatorOptions options;
  std::mutex mutex;
  std::unordered_map<std::string, FabricTiming> cache;
  std::atomic<std::size_t> simulations{0};
  std::atomic<std::size_t> hits{0};
};

FabricSimulator::FabricSimulator(SimulatorOptions options) : state_(std::make_unique<State>()) {
  state_->options = options;
}
FabricSimulator::~FabricSimulator() = default;

std::size_t FabricSimulator::simulations_run() const { return state_->simulations; }
std::size_t FabricSimulator::cache_hits() const { return state_->hits; }
void FabricSimulator::clear_cache() {
  const std::lock_guard lock(state_->mutex);
  state_->cache.clear();
}

Result<FabricTiming> FabricSimulator::time(const FabricTopology& topology,
                                           const CollectiveRequest& request) {
  if (Status errors = validate(request, topology); !errors.empty()) return errors;
  if (group_size(topology, request) < 2) return FabricTiming{};  // nothing to communicate

  const std::string key = request_key(topology, request);
  {
    const std::lock_guard lock(state_->mutex);
    if (auto it = state_->cache.find(key); it != state_->cache.end()) {
      ++state_->hits;
      return it->second;
    }
  }
  const detail::Plan plan = detail::make_plan(topology, request);
  ++state_->simulations;
  auto answer = detail::run_in_child(
      [&] { return serialize(detail::run_plan(topology, request.background, plan)); },
      state_->options.child_timeout,
      std::string(to_string(request.pattern)) + " on " + std::to_string(topology.gpu_count()) +
          " GPUs");
  if (!answer) return answer.errors();
  auto timing = deserialize(*answer);
  if (!timing) return timing.errors();
  const std::lock_guard lock(state_->mutex);
  return state_->cache.emplace(key, *timing).first->second;
}

FabricSimulator& default_simulator() {
  static FabricSimulator simulator;
  return simulator;
}

Result<Seconds> time_collective(const FabricTopology& topology, const CollectiveRequest& request) {
  auto timing = default_simulator().time(topology, request);
  if (!timing) return timing.errors();
  return timing->total;
}

}  // namespace capsim::fabric
