// JSON Schemas (draft 2020-12) of the JSON that capsim's commands print: `capsim schema
// --output NAME`, shipped as docs/output-schemas/NAME.schema.json.
//
// One source of truth: the schema of each writer's JSON lives beside the writers, in
// scenarios/schemas/ (an output's document in scenarios/schemas/NAME.json, the parts that
// several outputs share — the plan figures, a sizing, a simulation, a cost report — in
// scenarios/schemas/defs/PART.json). The build embeds those files; output_json_schema()
// composes one self-contained document per output, with the parts it names under "$defs".
// Stateless; safe to call from any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "capsim/core/result.hpp"

namespace capsim::scenarios {

// The outputs that have a schema, in the order `capsim schema --output list` prints them,
// each with the command whose `--format json` output it describes.
struct OutputSchemaName {
  std::string name;     // "run", "size", "plan", ...
  std::string command;  // "capsim run --format json SCENARIO"
};
const std::vector<OutputSchemaName>& output_schema_names();

// The schema of one output, printed as `capsim schema --output NAME` prints it (two-space
// indent, ending in a newline). An unknown name is an error on "--output" with a
// "did you mean" when one is close.
Result<std::string> output_json_schema(std::string_view name);

}  // namespace capsim::scenarios
