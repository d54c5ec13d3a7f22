// The sizing report a manager reads: one document built from a run, written as Markdown,
// CSV (its tables) or JSON here, and as HTML or PDF with charts by the render library
// (gui/, Qt), which draws the charts named in each section.
//
// Sections, in order: the question (the scenario as resolved, with units), the
// recommendation and node pools, the time/cost frontier, memory per GPU, the simulated
// pipeline, the cost comparison with break-even and sensitivity, and the assumptions with
// the source and date of every catalog figure used; the footer names the capsim version and
// the catalog hash.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "capsim/hardware/catalog.hpp"
#include "capsim/scenarios/runner.hpp"
#include "capsim/scenarios/table.hpp"

namespace capsim::scenarios {

enum class ChartKind {
  frontier,
  memory_breakdown,
  station_utilization,
  cost_over_horizon,
  latency_cdf,
  cluster_packing,   // a cluster plan's nodes and what runs on each GPU
  cluster_timeline,  // a cluster plan's nodes up per hour of the week
};

struct ReportSection {
  std::string id;      // "recommendation", ... (HTML anchors, CSV section names)
  std::string title;
  std::vector<std::string> paragraphs;
  std::vector<Table> tables;
  std::vector<ChartKind> charts;
  std::string preformatted;  // shown as is (the scenario YAML)
};

struct ReportDocument {
  std::string title;
  std::string subtitle;
  std::vector<ReportSection> sections;
  std::string footer;  // capsim version, catalog hash, time
};

ReportDocument build_report(const RunResult& run, const hardware::Catalog& catalog);

std::string report_markdown(const ReportDocument& doc);

// A report's tables by the names CSV files and `--table` give them: the section id, then
// "-2", "-3" for a section's further tables ("frontier", "frontier-2"). Pointers into `doc`.
struct NamedTable {
  std::string name;
  const Table* table = nullptr;
};
std::vector<NamedTable> report_tables(const ReportDocument& doc);

// A CSV report is one table per file, as spreadsheet and dataframe tools read CSV: with
// `table` (a name of report_tables) that table in `path`; without, each table in path's stem
// + "-NAME.csv" beside it ("r.csv" -> "r-plan.csv", "r-frontier.csv", ...). Each file is
// written to a temporary name and renamed. Returns the files written, in table order; an
// unknown `table` is an error (key "--table", the names, a "did you mean") and writes nothing.
Result<std::vector<std::filesystem::path>> write_csv_report(const ReportDocument& doc, const std::filesystem::path& path,
                                                            const std::string& table = {});

// Data of the charts, shared by the writers and the Qt charts.
struct MemoryBar {
  std::string label;  // "h100-sxm-80gb (t=4 p=1 ...)"
  std::vector<std::pair<std::string, double>> parts;  // component, bytes
  double capacity = 0;                                 // bytes
};
std::vector<MemoryBar> memory_bars(const RunResult& run);
struct UtilizationBar {
  std::string name;
  double utilization = 0;
  bool constraint = false;
};
std::vector<UtilizationBar> utilization_bars(const RunResult& run);
struct CostLine {
  std::string option;
  std::vector<std::pair<double, double>> points;  // month, cumulative cash in USD
};
std::vector<CostLine> cost_lines(const RunResult& run);
struct LatencyCdf {
  std::vector<std::pair<double, double>> points;  // seconds, fraction of requests
  double slo_seconds = 0;                         // the p99 bound, 0 when none
};
LatencyCdf latency_cdf(const RunResult& run);

}  // namespace capsim::scenarios
