// Issue 53 item 3: CSV carries every number of the JSON exactly. For every shipped example and
// cluster, the report's CSV tables are read back and each key figure (GPUs, nodes, times,
// throughputs, costs, bytes) must be the very double the JSON output holds: the CSV once
// rounded to six significant digits (32,570,000 against 32,571,871.40), which these fail.
// And a CSV report is one file per table.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "capsim/scenarios/cluster.hpp"
#include "capsim/scenarios/report.hpp"
#include "capsim/scenarios/runner.hpp"
#include "capsim/scenarios/scenario.hpp"
#include "capsim/scenarios/table.hpp"
#include "support/test_support.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace capsim;
using namespace capsim::scenarios;

namespace {

using Csv = std::vector<std::vector<std::string>>;

// RFC 4180 as render_csv writes it: CRLF rows, quoted fields with "" for a quote.
Csv parse_csv(const std::string& text) {
  Csv rows(1);
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (quoted) {
      if (ch == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (ch == '"') {
        quoted = false;
      } else {
        field += ch;
      }
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      rows.back().push_back(std::move(field));
      field.clear();
    } else if (ch == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      rows.back().push_back(std::move(field));
      field.clear();
      rows.emplace_back();
      ++i;
    } else {
      field += ch;
    }
  }
  if (rows.back().empty()) rows.pop_back();
  return rows;
}

// A CSV table by its header names.
struct CsvTable {
  std::vector<std::string> header;
  std::vector<std::map<std::string, std::string>> rows;
};

CsvTable csv_table(const Table& t) {
  const Csv csv = parse_csv(render_csv(t));
  REQUIRE_FALSE(csv.empty());
  CsvTable out{csv[0], {}};
  for (std::size_t r = 1; r < csv.size(); ++r) {
    REQUIRE(csv[r].size() == csv[0].size());
    std::map<std::string, std::string> row;
    for (std::size_t c = 0; c < csv[r].size(); ++c) row[csv[0][c]] = csv[r][c];
    out.rows.push_back(std::move(row));
  }
  return out;
}

// The number a CSV field holds; it must be one, whole (no unit, no thousands separator).
double number(const std::string& field) {
  INFO("CSV field '" << field << "'");
  REQUIRE_FALSE(field.empty());
  char* end = nullptr;
  const double v = std::strtod(field.c_str(), &end);
  REQUIRE(end == field.c_str() + field.size());
  CHECK(field.find('e') == std::string::npos);  // spelled out, as a spreadsheet shows it
  return v;
}

// Exactly equal: the CSV's text reads back as the JSON's double (no rounding anywhere).
int checked = 0;
void same(const std::string& what, const std::string& field, const json& j) {
  INFO(what << ": CSV '" << field << "', JSON " << j.dump());
  REQUIRE(j.is_number());
  CHECK(number(field) == j.get<double>());
  ++checked;
}

const Table& table_named(const std::vector<NamedTable>& tables, const std::string& name) {
  for (const auto& t : tables)
    if (t.name == name) return *t.table;
  FAIL("no table " << name);
  throw std::logic_error("unreachable");
}

// The plan table (figure, value, unit, basis) against the JSON's "plan".
void check_plan(const CsvTable& t, const json& plan) {
  std::map<std::string, std::pair<std::string, std::string>> figures;  // figure -> value, unit
  for (const auto& row : t.rows) figures[row.at("figure")] = {row.at("value"), row.at("unit")};
  same("GPUs", figures.at("GPUs").first, plan.at("gpus"));
  same("nodes", figures.at("nodes").first, plan.at("nodes"));
  const std::pair<const char*, const char*> seconds[] = {
      {"time per run", "time_seconds"}, {"p99 latency", "p99_seconds"}, {"TTFT p99", "ttft_p99_seconds"}, {"TPOT p99", "tpot_p99_seconds"}};
  for (const auto& [figure, field] : seconds) {
    if (plan.at(field).is_null()) continue;
    same(figure, figures.at(figure).first, plan.at(field));
    CHECK(figures.at(figure).second == "s");
  }
  if (!plan.at("throughput").is_null()) {
    same("throughput", figures.at("throughput").first, plan.at("throughput"));
    CHECK(figures.at("throughput").second == plan.at("throughput_unit").get<std::string>());
  }
  const std::pair<const char*, const char*> usd[] = {
      {"cost per run", "cost_per_run"},
      {"cost per month", "cost_per_month"},
      {"cost per million input tokens", "cost_per_million_input_tokens"},
      {"cost per million output tokens", "cost_per_million_output_tokens"},
      {"cost per million tokens, both", "cost_per_million_tokens"}};
  for (const auto& [figure, field] : usd) {
    if (plan.at(field).is_null()) continue;
    same(figure, figures.at(figure).first, plan.at(field));
    CHECK(figures.at(figure).second == "USD");
  }
}

// A frontier or fastest table's row against one candidate of sizing_json.
void check_candidate(const std::map<std::string, std::string>& row, const json& c, const std::string& per_s) {
  same("time", row.at("time (s)"), c.at("total_time_s"));
  if (c.at("cost").is_null()) CHECK(row.at("cost (USD)").empty());
  else same("cost", row.at("cost (USD)"), c.at("cost"));
  same("GPUs", row.at("GPUs"), c.at("gpus"));
  same(per_s, row.at(per_s), c.at(per_s == "tokens/s" ? "tokens_per_s" : "samples_per_s"));
  same("memory/GPU", row.at("memory/GPU (B)"), c.at("memory_per_gpu_bytes"));
}

void check_sizing(const std::vector<NamedTable>& tables, const json& sizing) {
  const bool transformer = sizing.at("fastest_per_node_type").empty() ||
                           sizing.at("fastest_per_node_type")[0].contains("tokens_per_s");
  const std::string per_s = transformer ? "tokens/s" : "samples/s";
  // The frontier section: the frontier (when there is one), then the fastest per node type.
  const bool has_frontier = !sizing.at("frontier").empty();
  if (has_frontier) {
    const auto frontier = csv_table(table_named(tables, "frontier"));
    REQUIRE_FALSE(frontier.rows.empty());
    for (const auto& row : frontier.rows) {
      // The table shows up to a dozen of the frontier, evenly spread: each is one of the JSON's.
      const auto& all = sizing.at("frontier");
      const auto match = std::find_if(all.begin(), all.end(), [&](const json& c) {
        return number(row.at("time (s)")) == c.at("total_time_s").get<double>();
      });
      REQUIRE_MESSAGE(match != all.end(), "no frontier candidate takes " << row.at("time (s)") << " s");
      check_candidate(row, *match, per_s);
    }
  }
  const auto fastest = csv_table(table_named(tables, has_frontier ? "frontier-2" : "frontier"));
  REQUIRE(fastest.rows.size() == sizing.at("fastest_per_node_type").size());
  for (std::size_t i = 0; i < fastest.rows.size(); ++i)
    check_candidate(fastest.rows[i], sizing.at("fastest_per_node_type")[i], per_s);
  if (sizing.contains("recommended")) {
    const auto rec = csv_table(table_named(tables, "recommendation"));
    std::map<std::string, std::string> figures;
    for (const auto& row : rec.rows) figures[row.at("figure")] = row.at("value");
    const auto& r = sizing.at("recommended");
    same("time to train", figures.at("time to train"), r.at("total_time_s"));
    same("GPU-hours", figures.at("GPU-hours"), r.at("gpu_hours"));
    same("memory per GPU", figures.at("memory per GPU"), r.at("memory_per_gpu_bytes"));
  }
}

void check_cost(const std::vector<NamedTable>& tables, const json& cost) {
  const auto t = csv_table(table_named(tables, "cost"));
  const auto& options = cost.at("options");
  REQUIRE(t.rows.size() == options.size());
  const bool per_unit = cost.at("work_unit") != "month";
  for (std::size_t i = 0; i < options.size(); ++i) {
    const auto& row = t.rows[i];
    const auto& o = options[i];
    INFO("cost option " << o.at("name"));
    same("nodes", row.at("nodes"), o.at("nodes"));
    same("capex", row.at("capex (USD)"), o.at("capex"));
    same("per month", row.at("per month (USD)"), o.at("monthly_average"));
    same("first year", row.at("first year (USD)"), o.at("monthly_first_year"));
    same("steady state", row.at("steady state (USD)"), o.at("monthly_steady_state"));
    same("total", row.at("total (USD)"), o.at("total"));
    if (per_unit) same("per unit", row.at("per " + cost.at("work_unit").get<std::string>() + " (USD)"), o.at("per_unit"));
  }
  // Sensitivity: each input's cheapest total at -25 % and +25 %.
  const auto sensitivity = csv_table(table_named(tables, "sensitivity"));
  REQUIRE(sensitivity.rows.size() == cost.at("sensitivity").size());
  for (std::size_t i = 0; i < sensitivity.rows.size(); ++i) {
    const auto& s = cost.at("sensitivity")[i];
    CHECK(sensitivity.rows[i].at("cheapest at -25 %") == s.at("low_cheapest").get<std::string>());
    same("-25 % total", sensitivity.rows[i].at("total at -25 % (USD)"), s.at("low_total"));
    same("+25 % total", sensitivity.rows[i].at("total at +25 % (USD)"), s.at("high_total"));
  }
}

// The sources table: each catalog figure the run relied on, as `capsim catalog show --format
// json` writes it (the catalog's number, in SI units), whole.
void check_sources(const std::vector<NamedTable>& tables, const hardware::Catalog& catalog) {
  const auto sources = csv_table(table_named(tables, "sources"));
  int numbers = 0;
  for (const auto& row : sources.rows) {
    const std::string& figure = row.at("figure");
    const auto space = figure.find(' ');
    REQUIRE(space != std::string::npos);
    const hardware::Entity* e = catalog.find(figure.substr(0, space));
    REQUIRE(e != nullptr);
    const hardware::FieldValue* v = e->find(figure.substr(space + 1));
    REQUIRE(v != nullptr);
    if (v->type != hardware::FieldType::quantity && v->type != hardware::FieldType::integer) continue;
    INFO(figure);
    CHECK(number(row.at("value")) == v->number);
    ++numbers;
    ++checked;
  }
  CHECK(numbers > 0);
}

std::vector<fs::path> yaml_files(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

// Writes `doc` as a CSV report and checks it is one file per table, each the table's CSV.
void check_one_file_per_table(const ReportDocument& doc, const fs::path& dir) {
  const auto tables = report_tables(doc);
  REQUIRE(tables.size() >= 2);  // a multi-table report
  auto written = write_csv_report(doc, dir / "r.csv");
  REQUIRE(written.ok());
  REQUIRE(written->size() == tables.size());
  CHECK_FALSE(fs::exists(dir / "r.csv"));
  for (std::size_t i = 0; i < tables.size(); ++i) {
    CHECK((*written)[i] == dir / ("r-" + tables[i].name + ".csv"));
    CHECK(testing::read_file((*written)[i]) == render_csv(*tables[i].table));
  }
  // --table: that one table in the file named, nothing else.
  const fs::path one = dir / "one.csv";
  REQUIRE(write_csv_report(doc, one, tables.back().name).ok());
  CHECK(testing::read_file(one) == render_csv(*tables.back().table));
  auto unknown = write_csv_report(doc, dir / "x.csv", tables.back().name + "x");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.errors()[0].key_path == "--table");
  CHECK_FALSE(fs::exists(dir / "x.csv"));
}

}  // namespace

TEST_CASE("CSV round-trips every key figure of the JSON exactly, for every shipped example") {
  const auto& catalog = testing::shipped_catalog();
  const auto files = yaml_files(fs::path(CAPSIM_TEST_SOURCE_DIR) / ".." / "scenarios" / "examples");
  REQUIRE(files.size() >= 15);
  checked = 0;
  int costs = 0, sizings = 0;
  for (const auto& file : files) {
    const std::string name = file.stem().string();
    CAPTURE(name);
    auto scenario = load_scenario_file(file, catalog);
    REQUIRE_MESSAGE(scenario.ok(), format_diagnostics(scenario.errors()));
    auto run = run_scenario(*scenario, catalog);
    REQUIRE_MESSAGE(run.ok(), format_diagnostics(run.errors()));
    const json j = json::parse(run_json(*run));
    const auto doc = build_report(*run, catalog);
    const auto tables = report_tables(doc);
    check_plan(csv_table(table_named(tables, "plan")), j.at("plan"));
    check_sources(tables, catalog);
    if (j.contains("sizing")) {
      check_sizing(tables, j.at("sizing"));
      ++sizings;
    }
    if (j.contains("cost")) {
      check_cost(tables, j.at("cost"));
      ++costs;
    }
    // No table of any example writes nan or inf.
    for (const auto& t : tables)
      for (const auto& row : parse_csv(render_csv(*t.table)))
        for (const auto& field : row)
          for (const char* bad : {"nan", "-nan", "inf", "-inf", "NaN", "Infinity"}) CHECK_MESSAGE(field != bad, t.name);
  }
  MESSAGE(checked << " figures checked over " << files.size() << " examples");
  CHECK(sizings >= 5);
  CHECK(costs >= 3);
  CHECK(checked >= 300);
}

TEST_CASE("CSV round-trips a cluster plan's costs, nodes and hours exactly, for every shipped cluster") {
  const auto& catalog = testing::shipped_catalog();
  const auto files = yaml_files(fs::path(CAPSIM_TEST_SOURCE_DIR) / ".." / "scenarios" / "clusters");
  REQUIRE(files.size() >= 3);
  checked = 0;
  for (const auto& file : files) {
    CAPTURE(file.filename().string());
    auto scenario = load_cluster_file(file, catalog);
    REQUIRE_MESSAGE(scenario.ok(), format_diagnostics(scenario.errors()));
    auto plan = plan_cluster(*scenario, catalog);
    REQUIRE_MESSAGE(plan.ok(), format_diagnostics(plan.errors()));
    const json j = json::parse(cluster_plan_json(*plan));
    const auto doc = cluster_report(*plan);
    const auto tables = report_tables(doc);
    const std::string cur = j.at("currency");
    // Workloads: hours a week.
    const auto workloads = csv_table(table_named(tables, "workloads"));
    REQUIRE(workloads.rows.size() == j.at("workloads").size());
    for (std::size_t i = 0; i < workloads.rows.size(); ++i)
      same("hours/week", workloads.rows[i].at("hours/week"), j.at("workloads")[i].at("active_hours_per_week"));
    // Pools: autoscaling bounds.
    const auto pools = csv_table(table_named(tables, "pools"));
    REQUIRE(pools.rows.size() == j.at("pools").size());
    for (std::size_t i = 0; i < pools.rows.size(); ++i) {
      same("min nodes", pools.rows[i].at("min nodes"), j.at("pools")[i].at("min_nodes"));
      same("max nodes", pools.rows[i].at("max nodes"), j.at("pools")[i].at("max_nodes"));
    }
    // Each node's cost.
    const auto nodes = csv_table(table_named(tables, "cost"));
    REQUIRE(nodes.rows.size() == j.at("node_costs").size());
    for (std::size_t i = 0; i < nodes.rows.size(); ++i) {
      const auto& c = j.at("node_costs")[i];
      same("up hours/week", nodes.rows[i].at("up hours/week"), c.at("up_hours_per_week"));
      same("on demand", nodes.rows[i].at("on demand " + cur), c.at("on_demand"));
      if (c.at("committed_1yr").is_null()) CHECK(nodes.rows[i].at("committed 1 yr " + cur).empty());
      else same("committed", nodes.rows[i].at("committed 1 yr " + cur), c.at("committed_1yr"));
      if (!c.at("break_even_hours_per_week").is_null())
        same("break-even", nodes.rows[i].at("break-even hours/week"), c.at("break_even_hours_per_week"));
    }
    // The estate: per week and over the horizon.
    const Table& estate_table = table_named(tables, "cost-2");
    const auto estate = csv_table(estate_table);
    REQUIRE(estate.rows.size() == 3);
    const std::string per_week = estate.header.at(1), horizon = estate.header.at(2);
    const std::pair<const char*, const char*> figures[] = {
        {"best_weekly_cost", "best_horizon_cost"}, {"weekly_cost", "horizon_cost"}, {"always_on_weekly_cost", "always_on_horizon_cost"}};
    for (std::size_t i = 0; i < 3; ++i) {
      same(figures[i].first, estate.rows[i].at(per_week), j.at(figures[i].first));
      same(figures[i].second, estate.rows[i].at(horizon), j.at(figures[i].second));
    }
    // Owned hardware, where the plan compares it: each option's cost over the horizon.
    for (std::size_t k = 0; k < j.at("owned").size(); ++k) {
      const auto& owned = j.at("owned")[k];
      for (const auto& t : tables) {
        if (t.table->columns.empty() || !t.table->columns[0].starts_with(owned.at("node_type").get<std::string>() + " ("))
          continue;
        const auto o = csv_table(*t.table);
        REQUIRE(o.rows.size() == owned.at("options").size());
        for (std::size_t i = 0; i < o.rows.size(); ++i) {
          same("servers", o.rows[i].at("servers or nodes"), owned.at("options")[i].at("servers_or_nodes"));
          same("horizon cost", o.rows[i].at("over the horizon " + cur), owned.at("options")[i].at("horizon_cost"));
        }
      }
    }
  }
  MESSAGE(checked << " figures checked over " << files.size() << " clusters");
  CHECK(checked >= 40);
}

TEST_CASE("a CSV report is one file per table, named FILE-NAME.csv, for a run and for a cluster plan") {
  const auto& catalog = testing::shipped_catalog();
  auto scenario = load_scenario_file(testing::example_scenario("lora-7b-one-node"), catalog);
  REQUIRE(scenario.ok());
  auto run = run_scenario(*scenario, catalog);
  REQUIRE(run.ok());
  check_one_file_per_table(build_report(*run, catalog), testing::scratch_dir("csv-run"));
  auto cluster = load_cluster_file(testing::cluster_scenario("team-ml-estate"), catalog);
  REQUIRE(cluster.ok());
  auto plan = plan_cluster(*cluster, catalog);
  REQUIRE(plan.ok());
  const auto dir = testing::scratch_dir("csv-cluster");
  check_one_file_per_table(cluster_report(*plan), dir);
  for (const char* name : {"r-workloads.csv", "r-pools.csv", "r-cost.csv", "r-cost-2.csv"})
    CHECK_MESSAGE(fs::exists(dir / name), name);
}
