// Changing a scenario from the command line: `--set hardware.max_gpus=1024` and sweeps over
// one or two keys, `--sweep "workload.model=llama-2-7b,llama-2-13b,llama-2-70b"`.
// Overrides edit the YAML text (the loader then checks the result as usual), so every key a
// scenario file may have can be set or swept.
#pragma once

#include <cstddef>

#include <string>
#include <vector>

#include "capsim/core/result.hpp"

namespace capsim::scenarios {

// Budgets: a --set key of more parts than this is refused (the walk is recursive), and so
// is a sweep of more points than this (each point is a process; split bigger ones).
inline constexpr std::size_t kMaxOverrideDepth = 32;
inline constexpr std::size_t kMaxSweepPoints = 10000;

struct Override {
  std::string path;   // dotted key path, "hardware.max_gpus"; list items as "graph.0.fan_out"
  std::string value;  // YAML scalar text, "1024", "90 d"
};

// "KEY=VALUE" -> Override; an error names what is missing.
Result<Override> parse_override(std::string_view text);

// The scenario text with every override applied (creating missing mappings).
Result<std::string> apply_overrides(const std::string& yaml, const std::vector<Override>& overrides);

// A sweep over one or two keys: "KEY=v1,v2,v3" or "KEY=v1,v2;KEY2=w1,w2" -> the points of
// their Cartesian product, each a list of overrides, in a stable order.
struct SweepPoint {
  std::vector<Override> overrides;
  std::string label() const;  // "workload.model=llama-2-7b, hardware.max_gpus=64"
};
Result<std::vector<SweepPoint>> expand_sweep(std::string_view spec);

// Shard i of n (0-based): the points p with p % n == i.
std::vector<SweepPoint> shard_of(const std::vector<SweepPoint>& points, int index, int count);

}  // namespace capsim::scenarios
