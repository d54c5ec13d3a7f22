#include "yaml_edit.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>

namespace capsim::gui {
namespace {

bool is_index(const std::string& key) {
  return !key.empty() && std::all_of(key.begin(), key.end(), [](unsigned char c) { return std::isdigit(c); });
}

// Walks `path`; returns the node, or an invalid/zombie node when a step is missing.
// yaml-cpp nodes are handles: assignment rebinds, so walk with reset().
bool walk(const YAML::Node& root, const KeyPath& path, std::size_t depth, YAML::Node& out) {
  YAML::Node node;
  node.reset(root);
  for (std::size_t i = 0; i < depth; ++i) {
    YAML::Node next;
    if (node.IsMap()) {
      bool found = false;
      for (auto it = node.begin(); it != node.end(); ++it)
        if (it->first.IsScalar() && it->first.Scalar() == path[i]) {
          next.reset(it->second);
          found = true;
          break;
        }
      if (!found) return false;
    } else if (node.IsSequence() && is_index(path[i])) {
      const std::size_t k = std::stoul(path[i]);
      if (k >= node.size()) return false;
      next.reset(node[k]);
    } else {
      return false;
    }
    node.reset(next);
  }
  out.reset(node);
  return true;
}

std::optional<YAML::Node> parse(const std::string& yaml) {
  try {
    return YAML::Load(yaml);
  } catch (const YAML::Exception&) {
    return std::nullopt;
  }
}

bool needs_quotes(const std::string& v) {
  if (v.empty()) return true;
  if (v.find(": ") != std::string::npos || v.find(" #") != std::string::npos) return true;
  const char first = v.front();
  return std::string_view("{}[],&*#?|<>=!%@`'\"").find(first) != std::string_view::npos ||
         v.back() == ':' || v.front() == ' ' || v.back() == ' ';
}

std::string quoted(const std::string& v) {
  if (!needs_quotes(v)) return v;
  std::string out = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// Offset of the start of line `line` (0-based) in `text`.
std::size_t line_start(const std::string& text, int line) {
  std::size_t pos = 0;
  for (int i = 0; i < line && pos != std::string::npos; ++i) {
    pos = text.find('\n', pos);
    if (pos != std::string::npos) ++pos;
  }
  return pos == std::string::npos ? text.size() : pos;
}

}  // namespace

std::optional<std::string> yaml_scalar(const std::string& yaml, const KeyPath& path) {
  auto root = parse(yaml);
  if (!root) return std::nullopt;
  YAML::Node node;
  if (!walk(*root, path, path.size(), node) || !node.IsScalar()) return std::nullopt;
  return node.Scalar();
}

std::optional<std::string> yaml_flow(const std::string& yaml, const KeyPath& path) {
  auto root = parse(yaml);
  if (!root) return std::nullopt;
  YAML::Node node;
  if (!walk(*root, path, path.size(), node) || !node.IsDefined() || node.IsNull()) return std::nullopt;
  if (node.IsScalar()) return node.Scalar();
  YAML::Emitter out;
  out.SetMapFormat(YAML::Flow);
  out.SetSeqFormat(YAML::Flow);
  out << node;
  return std::string(out.c_str());
}

Result<std::string> set_yaml_scalar(const std::string& yaml, const KeyPath& path, const std::string& value) {
  auto fail = [&](std::string message) {
    std::string dotted;
    for (const auto& k : path) dotted += (dotted.empty() ? "" : ".") + k;
    return Diagnostic{{}, dotted, std::move(message), "edit it in the YAML text"};
  };
  if (path.empty()) return fail("no key given");
  auto root = parse(yaml);
  if (!root) return fail("the YAML does not parse");
  YAML::Node node;
  if (walk(*root, path, path.size(), node) && node.IsDefined() && !node.IsNull()) {
    if (!node.IsScalar()) return fail("the value is a list or mapping, not one value");
    const YAML::Mark mark = node.Mark();
    if (mark.pos < 0 || static_cast<std::size_t>(mark.pos) >= yaml.size()) return fail("cannot locate the value");
    const std::size_t pos = static_cast<std::size_t>(mark.pos);
    std::size_t end = pos;
    const char open = yaml[pos];
    if (open == '"' || open == '\'') {
      end = pos + 1;
      while (end < yaml.size() && yaml[end] != open && yaml[end] != '\n') end += (yaml[end] == '\\' && open == '"') ? 2 : 1;
      if (end >= yaml.size() || yaml[end] != open) return fail("cannot locate the end of the quoted value");
      ++end;
    } else if (yaml.compare(pos, node.Scalar().size(), node.Scalar()) == 0) {
      end = pos + node.Scalar().size();
    } else {
      return fail("the value spans several lines");
    }
    return yaml.substr(0, pos) + quoted(value) + yaml.substr(end);
  }
  // Missing: find the deepest existing block mapping on the path and add the rest under it.
  std::size_t depth = path.size() - 1;
  YAML::Node parent;
  while (true) {
    if (walk(*root, path, depth, parent) && (parent.IsMap() || parent.IsNull() || !parent.IsDefined())) {
      if (parent.IsMap() || depth == 0) break;
    }
    if (depth == 0) break;
    --depth;
  }
  if (depth > 0 && !parent.IsMap()) return fail("no mapping to add the key to");
  if (depth > 0 && parent.Style() == YAML::EmitterStyle::Flow) return fail("the mapping is written inline ({...})");
  std::string insert;
  std::size_t at = yaml.size();
  int indent = 0;
  if (depth > 0 && parent.IsMap() && parent.size() > 0) {
    const YAML::Mark first = parent.begin()->first.Mark();
    indent = first.column;
    at = line_start(yaml, first.line);
  } else if (depth > 0) {
    return fail("the mapping is empty");
  }
  for (std::size_t i = depth; i < path.size(); ++i) {
    if (is_index(path[i])) return fail("cannot add a list item from the form");
    insert += std::string(static_cast<std::size_t>(indent), ' ') + path[i] + ":";
    insert += i + 1 == path.size() ? " " + quoted(value) + "\n" : "\n";
    indent += 2;
  }
  std::string out = yaml;
  if (at == yaml.size() && !yaml.empty() && yaml.back() != '\n') insert = "\n" + insert;
  out.insert(at, insert);
  return out;
}

}  // namespace capsim::gui
