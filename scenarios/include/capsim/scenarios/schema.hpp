// The scenario schema: every key a scenario file may have, with its type, unit, default,
// range and help text, declared once. The loader validates against it, `capsim schema`
// prints the JSON Schema for editors (docs/scenario.schema.json) and the Markdown
// reference (docs/scenario-reference.md); tests keep the shipped files equal to the output.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "capsim/core/units.hpp"

namespace capsim::scenarios {

enum class ValueKind {
  map,       // a mapping with the keys in `children`
  list,      // a list of `children[0]`
  text,      // free text
  choice,    // one of `choices`
  quantity,  // number with a unit of dimension `dim`
  count,     // a count with an optional scale suffix ("15T", "7B")
  integer,   // whole number within [minimum, maximum]
  number,    // plain number within [minimum, maximum]
  boolean,
  catalog_id,  // the id of a catalog entry (checked against the catalog by the loader)
  model,       // a preset name (text) or a shape (mapping with `children`)
  length,      // a whole number within [minimum, maximum], or a distribution (mapping with `children`)
};

struct SchemaNode {
  std::string name;
  ValueKind kind = ValueKind::text;
  std::string help;
  bool required = false;
  std::string default_text;  // as a user would write it; "" when there is no default
  Dim dim{};                 // quantity
  std::vector<std::string> choices;
  double minimum = 0, maximum = 0;  // integer/number/quantity (SI); both 0: unbounded
  std::vector<SchemaNode> children;

  const SchemaNode* child(std::string_view key) const;
  std::vector<std::string> child_names() const;
};

// The root of a scenario file.
// A measured latency of one batch (workload.graph[].model.latency, latency_file): at least
// 1 us, as no GPU runs a model's batch faster than a kernel launches (about 5 us; a value
// below is a unit slip, and 1e-300 s printed a p99 of 0 s), at most an hour (longer is not
// serving, and 1e300 s overflows the queueing formulas).
inline constexpr double kMinBatchLatencySeconds = 1e-6;
inline constexpr double kMaxBatchLatencySeconds = 3600;

const SchemaNode& scenario_schema();

// Whether a key path ("workload.lora_rank", "arrivals") means anything for a workload type
// ("training", "service", "inference", "llm-serving"): the GUI's form shows only those.
bool key_applies(std::string_view path, std::string_view workload_type);

// JSON Schema (draft 2020-12) for editors.
std::string scenario_json_schema();
// Markdown reference: one table per section.
std::string scenario_reference_markdown();

}  // namespace capsim::scenarios
