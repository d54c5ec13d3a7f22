#include <doctest/doctest.h>

#include "capsim/core/result.hpp"
#include "capsim/core/suggest.hpp"

using namespace capsim;

TEST_CASE("a diagnostic prints file line column and key path and message and hint") {
  const Diagnostic d{{"gpus.yaml", 12, 5}, "gpus[3].memroy", "unknown key 'memroy'", "did you mean 'memory'?"};
  CHECK(format_diagnostic(d) == "gpus.yaml:12:5: error: gpus[3].memroy: unknown key 'memroy' (did you mean 'memory'?)");
  CHECK(format_diagnostic({{}, "", "no catalog", ""}) == "error: no catalog");
}

TEST_CASE("Result holds a value or all of its diagnostics") {
  Result<int> good = 42;
  CHECK(good.ok());
  CHECK(*good == 42);
  Result<int> bad = std::vector<Diagnostic>{{{}, "a", "first", ""}, {{}, "b", "second", ""}};
  CHECK_FALSE(bad.ok());
  CHECK(bad.errors().size() == 2);
}

TEST_CASE("did_you_mean suggests only plausible typos") {
  const std::vector<std::string> keys{"memory", "memory_bandwidth", "tdp", "name"};
  CHECK(did_you_mean("memroy", keys) == "did you mean 'memory'?");
  CHECK(did_you_mean("Memory", keys) == "did you mean 'memory'?");
  CHECK(did_you_mean("tpd", keys) == "did you mean 'tdp'?");
  CHECK(did_you_mean("completely_unrelated", keys).empty());
  CHECK(did_you_mean("memory_band", keys) == "did you mean 'memory_bandwidth'?");  // a prefix
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("tpd", "tdp") == 1);
}
