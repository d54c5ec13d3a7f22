#include "capsim/scenarios/output_schema.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

#include "capsim/core/suggest.hpp"

namespace capsim::scenarios {

// The files under scenarios/schemas/, embedded by the build (scenarios/CMakeLists.txt):
// {"run", text of schemas/run.json}, {"defs/plan-figures", ...}.
namespace embedded {
struct SchemaFile {
  const char* path;
  const char* text;
};
extern const SchemaFile kSchemaFiles[];
extern const std::size_t kSchemaFileCount;
}  // namespace embedded

namespace {

using Json = nlohmann::ordered_json;  // keys in the order the files give them

constexpr std::string_view kDefsRef = "#/$defs/";

const char* file_text(std::string_view path) {
  for (std::size_t i = 0; i < embedded::kSchemaFileCount; ++i)
    if (path == embedded::kSchemaFiles[i].path) return embedded::kSchemaFiles[i].text;
  return nullptr;
}

// The parts a schema names with {"$ref": "#/$defs/PART"}, anywhere in it.
void collect_refs(const Json& j, std::set<std::string>& refs) {
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      if (key == "$ref" && value.is_string() && value.get<std::string>().starts_with(kDefsRef))
        refs.insert(value.get<std::string>().substr(kDefsRef.size()));
      collect_refs(value, refs);
    }
  } else if (j.is_array()) {
    for (const auto& value : j) collect_refs(value, refs);
  }
}

Result<Json> parse_file(const std::string& path) {
  const char* text = file_text(path);
  Json j = text == nullptr ? Json(nullptr) : Json::parse(text, nullptr, false);
  if (text == nullptr || j.is_discarded() || !j.is_object())
    return environment_failure({{},
                                "schema",
                                "the embedded output schema " + path + ".json is missing or not a JSON object",
                                "rebuild capsim (scenarios/schemas/ is embedded at build time)"});
  return j;
}

}  // namespace

const std::vector<OutputSchemaName>& output_schema_names() {
  static const std::vector<OutputSchemaName> names = {
      {"run", "capsim run --format json SCENARIO"},
      {"size", "capsim size --format json SCENARIO"},
      {"simulate", "capsim simulate --format json SCENARIO"},
      {"cost", "capsim cost --format json SCENARIO"},
      {"plan", "capsim plan --format json CLUSTER"},
      {"accuracy", "capsim accuracy --format json"},
      {"compare", "capsim compare --format json SCENARIO"},
      {"estimate", "capsim estimate --format json SCENARIO"},
      {"memory", "capsim memory --format json ..."},
      {"models", "capsim models --format json"},
      {"validate", "capsim validate --format json FILE..."},
      {"history-list", "capsim history list --format json (history show ID --format json: run)"},
      {"history-diff", "capsim history diff --format json A B"},
      {"catalog-list", "capsim catalog list [SECTION] --format json"},
      {"catalog-show", "capsim catalog show --format json ID"},
      {"catalog-check", "capsim catalog check --format json"},
      {"catalog-validate", "capsim catalog validate --format json [DIR]"},
      {"catalog-import-calibration", "capsim catalog import-calibration --format json PROFILE"},
      {"catalog-import-skypilot", "capsim catalog import-skypilot --format json -o FILE DIR (without -o: on stderr)"},
      {"sweep", "capsim run --sweep SPEC --format json SCENARIO; capsim history merge --format json"},
  };
  return names;
}

Result<std::string> output_json_schema(std::string_view name) {
  std::vector<std::string> known;
  for (const auto& n : output_schema_names()) known.push_back(n.name);
  if (std::find(known.begin(), known.end(), name) == known.end()) {
    const std::string hint = did_you_mean(name, known);
    return Diagnostic{{}, "--output", "no output schema named '" + std::string(name) + "'",
                      hint.empty() ? "'capsim schema --output list' lists them" : hint};
  }
  auto body = parse_file(std::string(name));
  if (!body) return body.errors();
  Json out;
  out["$schema"] = "https://json-schema.org/draft/2020-12/schema";
  out["$id"] = "https://capsim.dev/output-schemas/" + std::string(name) + ".schema.json";
  for (const auto& [key, value] : body->items()) out[key] = value;
  // The shared parts this output names, and the parts they name in turn.
  std::set<std::string> pending, done;
  collect_refs(*body, pending);
  Json defs = Json::object();
  while (!pending.empty()) {
    const std::string part = *pending.begin();
    pending.erase(pending.begin());
    if (!done.insert(part).second) continue;
    auto def = parse_file("defs/" + part);
    if (!def) return def.errors();
    collect_refs(*def, pending);
    defs[part] = *def;
  }
  if (!defs.empty()) {
    Json sorted = Json::object();  // the same order whichever output names a part first
    for (const auto& part : done) sorted[part] = defs[part];
    out["$defs"] = sorted;
  }
  return out.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace capsim::scenarios
