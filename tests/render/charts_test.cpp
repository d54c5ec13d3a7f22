#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "capsim/hardware/loader.hpp"
#include "capsim/render/charts.hpp"
#include "capsim/scenarios/scenario.hpp"
#include "capsim/scenarios/sizing.hpp"

using namespace capsim;

namespace {

scenarios::SizingReport llama_report() {
  auto catalog = hardware::load_catalog_dir(CAPSIM_TEST_DATA_DIR "/catalog");
  REQUIRE(catalog.ok());
  auto s = scenarios::load_scenario_file(CAPSIM_TEST_SOURCE_DIR "/../scenarios/examples/llama-70b-pretrain.yaml", *catalog);
  REQUIRE(s.ok());
  auto r = scenarios::size_scenario(*s, *catalog);
  REQUIRE(r.ok());
  return std::move(r).value();
}

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::filesystem::path scratch(const char* name) {
  auto dir = std::filesystem::temp_directory_path() / ("capsim-render-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir / name;
}

}  // namespace

TEST_CASE("the frontier chart renders headless to PNG and SVG") {
  const auto report = llama_report();
  const auto png = scratch("frontier.png");
  REQUIRE(render::render_frontier_chart(report, png).empty());
  const std::string bytes = read(png);
  CHECK(bytes.substr(1, 3) == "PNG");
  CHECK(bytes.size() > 10000);  // a drawn chart, not an empty image
  CHECK_FALSE(std::filesystem::exists(png.string() + ".tmp"));

  const auto svg = scratch("frontier.svg");
  REQUIRE(render::render_frontier_chart(report, svg).empty());
  const std::string text = read(svg);
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
