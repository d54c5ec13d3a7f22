#include "capsim/scenarios/overrides.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <functional>
#include <sstream>

namespace capsim::scenarios {
namespace {

std::string trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return std::string(s);
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) {
      out.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  return out;
}

bool index_of(const std::string& s, std::size_t& out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && end == s.data() + s.size();
}

}  // namespace

std::string SweepPoint::label() const {
  std::string out;
  for (const auto& o : overrides) out += (out.empty() ? "" : ", ") + o.path + "=" + o.value;
  return out;
}

Result<Override> parse_override(std::string_view text) {
  const std::size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0)
    return Diagnostic{{}, "--set", "expected KEY=VALUE, got '" + std::string(text.substr(0, 200)) + "'",
                      "e.g. --set hardware.max_gpus=1024"};
  Override o{trim(text.substr(0, eq)), trim(text.substr(eq + 1))};
  // The key is walked recursively, one level per part; no scenario key is deeper than 6.
  const auto parts = static_cast<std::size_t>(std::count(o.path.begin(), o.path.end(), '.')) + 1;
  if (parts > kMaxOverrideDepth)
    return Diagnostic{{}, "--set", "the key has " + std::to_string(parts) + " parts, more than the limit of " +
                                       std::to_string(kMaxOverrideDepth), "e.g. --set hardware.max_gpus=1024"};
  return o;
}

Result<std::string> apply_overrides(const std::string& yaml, const std::vector<Override>& overrides) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml);
  } catch (const YAML::Exception& e) {
    return Diagnostic{{"", e.mark.line + 1, e.mark.column + 1}, "", "invalid YAML: " + e.msg, ""};
  }
  for (const auto& o : overrides) {
    const auto keys = split(o.path, '.');
    // Walk (and create) mappings; a number selects a list item that must exist.
    std::function<bool(YAML::Node, std::size_t)> set = [&](YAML::Node node, std::size_t i) -> bool {
      const std::string& key = keys[i];
      std::size_t index = 0;
      if (node.IsSequence() && index_of(key, index)) {
        if (index >= node.size()) return false;
        if (i + 1 == keys.size()) {
          node[index] = YAML::Load(o.value);
          return true;
        }
        return set(node[index], i + 1);
      }
      if (!node.IsMap() && !node.IsNull()) return false;
      if (i + 1 == keys.size()) {
        node[key] = YAML::Load(o.value);
        return true;
      }
      YAML::Node child = node[key];
      if (!child) node[key] = YAML::Node(YAML::NodeType::Map);
      return set(node[key], i + 1);
    };
    bool ok = false;
    try {
      ok = !keys.empty() && set(root, 0);
    } catch (const YAML::Exception& e) {
      return Diagnostic{{}, "--set " + o.path, "cannot set '" + o.path + "': " + e.msg, ""};
    }
    if (!ok)
      return Diagnostic{{}, "--set " + o.path,
                        "cannot set '" + o.path + "': a part of the path is not a mapping or a list item", ""};
  }
  YAML::Emitter out;
  out << root;
  return std::string(out.c_str()) + "\n";
}

Result<std::vector<SweepPoint>> expand_sweep(std::string_view spec) {
  const auto axes = split(spec, ';');
  if (axes.empty() || axes.size() > 2)
    return Diagnostic{{}, "--sweep", "a sweep varies one or two keys: 'KEY=v1,v2' or 'KEY=v1,v2;KEY2=w1,w2'", ""};
  std::vector<std::pair<std::string, std::vector<std::string>>> values;
  for (const auto& axis : axes) {
    auto o = parse_override(axis);
    if (!o) return Diagnostic{{}, "--sweep", o.errors()[0].message, "e.g. --sweep \"workload.tokens=1T,2T,4T\""};
    auto list = split(o->value, ',');
    for (const auto& v : list)
      if (v.empty()) return Diagnostic{{}, "--sweep", "an empty value in '" + std::string(axis) + "'", ""};
    values.emplace_back(o->path, list);
  }
  std::size_t count = 1;
  for (const auto& [key, list] : values) count *= list.size();
  if (count > kMaxSweepPoints)
    return Diagnostic{{}, "--sweep", "the sweep has " + std::to_string(count) + " points, more than the limit of " +
                                         std::to_string(kMaxSweepPoints),
                      "split it into several sweeps, or shard it with 'capsim sweep'"};
  std::vector<SweepPoint> points;
  for (const auto& a : values[0].second) {
    if (values.size() == 1) {
      points.push_back({{{values[0].first, a}}});
      continue;
    }
    for (const auto& b : values[1].second) points.push_back({{{values[0].first, a}, {values[1].first, b}}});
  }
  return points;
}

std::vector<SweepPoint> shard_of(const std::vector<SweepPoint>& points, int index, int count) {
  std::vector<SweepPoint> out;
  for (std::size_t p = 0; p < points.size(); ++p)
    if (static_cast<int>(p % static_cast<std::size_t>(count)) == index) out.push_back(points[p]);
  return out;
}

}  // namespace capsim::scenarios
