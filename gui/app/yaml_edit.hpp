// Editing one value of a YAML document in place: the text around it (comments, key order,
// layout) stays as the user wrote it, which re-emitting the document would lose. Used by the
// scenario form; no Qt here.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "capsim/core/result.hpp"

namespace capsim::gui {

// A key path: map keys, or list indices written as numbers ("graph", "0", "fan_out").
using KeyPath = std::vector<std::string>;

// The scalar at `path`, as text; nullopt when absent, not a scalar, or the text does not parse.
std::optional<std::string> yaml_scalar(const std::string& yaml, const KeyPath& path);
// The node at `path` in flow style ("[t4, l4]"), for showing lists and maps on one line.
std::optional<std::string> yaml_flow(const std::string& yaml, const KeyPath& path);

// The text with the scalar at `path` set to `value` (YAML scalar text, quoted when it needs
// to be). A missing key is added under its nearest block-style parent mapping (creating the
// mappings in between). Errors: the text does not parse, the path goes through a list item
// that does not exist or a flow-style collection, or the present value is not a one-line
// scalar (edit those in the YAML text).
Result<std::string> set_yaml_scalar(const std::string& yaml, const KeyPath& path, const std::string& value);

}  // namespace capsim::gui
