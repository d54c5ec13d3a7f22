// The published output schemas (docs/output-schemas/) are what `capsim schema --output NAME`
// prints, and each is one self-contained JSON Schema document (issue 53, item 4). Validation
// of the commands' JSON against them is in tests/ship/output_schemas_test.py.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "capsim/scenarios/output_schema.hpp"
#include "support/test_support.hpp"

using namespace capsim::scenarios;
using capsim::testing::read_file;

namespace {

// Every "$ref" in a schema, so a test can check that each resolves inside the document.
void collect_refs(const nlohmann::json& j, std::vector<std::string>& refs) {
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      if (key == "$ref" && value.is_string()) refs.push_back(value.get<std::string>());
      collect_refs(value, refs);
    }
  } else if (j.is_array()) {
    for (const auto& value : j) collect_refs(value, refs);
  }
}

}  // namespace

TEST_CASE("the shipped output schemas are what capsim schema --output prints") {
  const std::filesystem::path dir = CAPSIM_TEST_SOURCE_DIR "/../docs/output-schemas";
  std::size_t shipped = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) shipped += entry.path().extension() == ".json";
  CHECK(shipped == output_schema_names().size());  // no stale file for an output that is gone
  for (const auto& n : output_schema_names()) {
    CAPTURE(n.name);
    auto schema = output_json_schema(n.name);
    REQUIRE(schema.ok());
    CHECK(read_file(dir / (n.name + ".schema.json")) == *schema);
    const auto j = nlohmann::json::parse(*schema);
    CHECK(j["$schema"] == "https://json-schema.org/draft/2020-12/schema");
    CHECK(j["$id"] == "https://capsim.dev/output-schemas/" + n.name + ".schema.json");
    // Self-contained: every reference names a part under $defs of the same document.
    std::vector<std::string> refs;
    collect_refs(j, refs);
    for (const auto& ref : refs) {
      CAPTURE(ref);
      REQUIRE(ref.starts_with("#/$defs/"));
      CHECK(j["$defs"].contains(ref.substr(8)));
    }
  }
}

TEST_CASE("an unknown output schema name is an error with a did-you-mean") {
  auto typo = output_json_schema("sise");
  REQUIRE_FALSE(typo.ok());
  CHECK(capsim::format_diagnostics(typo.errors()) ==
        "error: --output: no output schema named 'sise' (did you mean 'size'?)\n");
  auto unknown = output_json_schema("xyzzy");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.errors().front().hint == "'capsim schema --output list' lists them");
}
