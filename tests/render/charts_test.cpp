#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "capsim/hardware/loader.hpp"
#include "capsim/render/charts.hpp"
#include "capsim/scenarios/cluster.hpp"
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

#include "capsim/render/report.hpp"
#include "capsim/scenarios/runner.hpp"

namespace {

scenarios::RunResult run_of(const char* name) {
  auto s = scenarios::load_scenario_file(testing::example_scenario(name), testing::shipped_catalog());
  REQUIRE(s.ok());
  auto r = scenarios::run_scenario(*s, testing::shipped_catalog());
  if (!r.ok()) FAIL(format_diagnostics(r.errors()));
  return std::move(r).value();
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("reports in every format for a training scenario with a simulation and for a cost scenario") {
  for (const char* name : {"resnet50-1080ti-4vcpu", "llama-70b-pretrain", "ml-services-24x7", "road-sign-ocr"}) {
    CAPTURE(name);
    const auto run = run_of(name);
    const auto dir = testing::scratch_dir("report");
    for (const char* ext : {".html", ".pdf", ".md", ".csv", ".json"}) {
      CAPTURE(ext);
      const auto path = dir / (std::string(name) + ext);
      REQUIRE(render::write_report(run, testing::shipped_catalog(), path).empty());
      // A .csv report is one file per table, the first one the question.
      const auto first = std::string(ext) == ".csv" ? dir / (std::string(name) + "-question.csv") : path;
      REQUIRE(std::filesystem::file_size(first) > (std::string(ext) == ".csv" ? 50u : 500u));
      CHECK_FALSE(std::filesystem::exists(path.string() + ".tmp"));
    }
    const std::string html = read_file(dir / (std::string(name) + ".html"));
    CHECK(html.find("<h2 id=\"question\">") != std::string::npos);
    CHECK(html.find("<h2 id=\"sources\">Assumptions and sources</h2>") != std::string::npos);
    CHECK(html.find("capsim 0.1.0, catalog ") != std::string::npos);
    const std::string pdf = read_file(dir / (std::string(name) + ".pdf"));
    CHECK(pdf.starts_with("%PDF-"));
    CHECK(count(pdf, "/Subtype /Image") >= 1);  // the charts are in the PDF
    const std::string md = read_file(dir / (std::string(name) + ".md"));
    CHECK(md.starts_with("# Sizing report: " + std::string(name)));
  }
  const auto dir = testing::scratch_dir("report");
  // The training run: recommendation, frontier, memory; the simulated pipeline with its chart.
  const std::string sim = read_file(dir / "resnet50-1080ti-4vcpu.html");
  CHECK(sim.find("<h2 id=\"simulation\">") != std::string::npos);
  CHECK(count(sim, "src=\"data:image/png;base64,") == 2);  // memory and utilization (no prices: no frontier)
  const std::string llama = read_file(dir / "llama-70b-pretrain.html");
  CHECK(count(llama, "src=\"data:image/png;base64,") == 2);  // frontier and memory
  CHECK(llama.find("<h2 id=\"recommendation\">") != std::string::npos);
  // The cost run: comparison with break-even, sensitivity, the cost chart.
  const std::string cost = read_file(dir / "ml-services-24x7.html");
  CHECK(cost.find("<h2 id=\"cost\">") != std::string::npos);
  CHECK(cost.find("<h2 id=\"sensitivity\">") != std::string::npos);
  CHECK(count(cost, "src=\"data:image/png;base64,") == 1);
  // The inference run: the sized deployment and the simulated one with its latency CDF.
  const std::string ocr = read_file(dir / "road-sign-ocr.html");
  CHECK(ocr.find("<h2 id=\"serving\">The simulated deployment</h2>") != std::string::npos);
  CHECK(ocr.find("<h2 id=\"recommendation\">") != std::string::npos);
  CHECK(count(ocr, "src=\"data:image/png;base64,") == 1);  // the latency CDF
  CHECK_FALSE(std::filesystem::exists(dir / "ml-services-24x7.csv"));
  const std::string csv = read_file(dir / "ml-services-24x7-cost.csv");
  CHECK(csv.starts_with("option,kind,nodes,capex (USD),per month (USD),"));
}

TEST_CASE("an unknown report format is refused") {
  const auto run = run_of("ml-services-24x7");
  auto status = render::write_report(run, testing::shipped_catalog(), testing::scratch_dir("report") / "r.docx");
  REQUIRE(status.size() == 1);
  CHECK(status[0].message == "unknown report format '.docx'");
}

TEST_CASE("a cluster plan's report: the packing picture and the timeline as images, the tables, in every format") {
  const auto& catalog = testing::shipped_catalog();
  auto s = scenarios::load_cluster_file(testing::cluster_scenario("team-ml-estate"), catalog);
  REQUIRE(s.ok());
  auto plan = scenarios::plan_cluster(*s, catalog);
  REQUIRE(plan.ok());
  const auto dir = testing::scratch_dir("cluster-report");
  for (const char* ext : {".html", ".pdf", ".md", ".csv", ".json"}) {
    CAPTURE(ext);
    const auto path = dir / (std::string("estate") + ext);
    REQUIRE(render::write_cluster_report(*plan, path).empty());
    if (std::string(ext) == ".csv") {  // one file per table
      CHECK_FALSE(std::filesystem::exists(path));
      for (const char* table : {"workloads", "pools", "cost", "cost-2", "cost-3"})
        CHECK(std::filesystem::exists(dir / ("estate-" + std::string(table) + ".csv")));
      continue;
    }
    REQUIRE(std::filesystem::file_size(path) > 500);
  }
  const std::string html = read_file(dir / "estate.html");
  CHECK(count(html, "src=\"data:image/png;base64,") == 2);  // the packing picture and the timeline
  for (const char* id : {"workloads", "pools", "timeline", "cost", "plan"})
    CHECK(html.find("<h2 id=\"" + std::string(id) + "\">") != std::string::npos);
  CHECK(html.find("gcp-a2-highgpu-1g") != std::string::npos);
  CHECK(read_file(dir / "estate.pdf").starts_with("%PDF-"));
  CHECK(count(read_file(dir / "estate.pdf"), "/Subtype /Image") >= 2);
  CHECK(read_file(dir / "estate.md").starts_with("# Cluster plan: team-ml-estate"));
  CHECK(read_file(dir / "estate.json") == scenarios::cluster_plan_json(*plan));
}
