#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "capsim/hardware/loader.hpp"
#include "capsim/render/charts.hpp"
#include "capsim/scenarios/scenario.hpp"
#include "capsim/scenarios/sizing.hpp"
#include "support/test_support.hpp"

using namespace capsim;

namespace {

scenarios::SizingReport llama_report() {
  const auto& catalog = testing::shipped_catalog();
  auto s = scenarios::load_scenario_file(testing::example_scenario("llama-70b-pretrain"), catalog);
  REQUIRE(s.ok());
  auto r = scenarios::size_scenario(*s, catalog);
  REQUIRE(r.ok());
  return std::move(r).value();
}

using testing::read_file;

std::filesystem::path scratch(const char* name) { return testing::scratch_dir("render") / name; }

}  // namespace

TEST_CASE("the frontier chart renders headless to PNG and SVG") {
  const auto report = llama_report();
  const auto png = scratch("frontier.png");
  REQUIRE(render::render_frontier_chart(report, png).empty());
  const std::string bytes = read_file(png);
  CHECK(bytes.substr(1, 3) == "PNG");
  CHECK(bytes.size() > 10000);  // a drawn chart, not an empty image
  CHECK_FALSE(std::filesystem::exists(png.string() + ".tmp"));

  const auto svg = scratch("frontier.svg");
  REQUIRE(render::render_frontier_chart(report, svg).empty());
  const std::string text = read_file(svg);
  CHECK(text.find("<svg") != std::string::npos);
  CHECK(text.find("llama-70b-pretrain") != std::string::npos);  // the title
  CHECK(text.find("deadline 90 d") != std::string::npos);       // the deadline in the legend
}

TEST_CASE("an unknown chart format is an error and writes nothing") {
  const auto report = llama_report();
  const auto bad = scratch("frontier.bmp");
  auto status = render::render_frontier_chart(report, bad);
  REQUIRE(status.size() == 1);
  CHECK(status[0].message == "unknown chart format '.bmp'");
  CHECK_FALSE(std::filesystem::exists(bad));
}
