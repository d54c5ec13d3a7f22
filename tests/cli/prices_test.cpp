// Issue 50: a team's own quotes flow into size, cost, plan and the report, marked as theirs;
// every plan lists the age of its prices; `catalog check` fails on stale ones; SkyPilot's
// catalog files import as an overlay; prices sort in one currency.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "capsim_process.hpp"

using cli_testing::capsim;
using cli_testing::read;
using cli_testing::scratch;
namespace fs = std::filesystem;

namespace {

const std::string kQuotes = CAPSIM_TEST_SOURCE_DIR "/cli/fixtures/quotes";
const std::string kOverlay = "--catalog-overlay '" + kQuotes + "/team-quotes.yaml' ";
const std::string kScenario = "'" + kQuotes + "/resnet-quotes.yaml'";

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("issue 50: a user price for a shipped instance and a new server flow into size, cost, plan and report") {
  // The scenario names its overlay (catalog.overlays, relative to the scenario file).
  auto size = capsim("size " + kScenario, "quotes.db");
  INFO(size.err);
  REQUIRE(size.exit_code == 0);
  CHECK(contains(size.out, "price           aws-g4dn-xlarge price.on_demand 0.401 USD/h, as of 2026-11 (your quote)"));

  auto cost = capsim("cost " + kScenario + " --format json", "quotes.db");
  INFO(cost.err);
  REQUIRE(cost.exit_code == 0);
  const auto j = nlohmann::json::parse(cost.out);
  bool instance_quoted = false, server_quoted = false;
  for (const auto& p : j["plan"]["prices"]) {
    if (p["entry"] == "aws-g4dn-xlarge" && p["field"] == "price.on_demand") {
      instance_quoted = p["your_quote"] == true && p["value"] == "0.401 USD/h" && p["as_of"] == "2026-11";
      CHECK(p["overlay"].get<std::string>().ends_with("team-quotes.yaml"));
    }
    if (p["entry"] == "team-t4-server" && p["field"] == "purchase_price")
      server_quoted = p["your_quote"] == true && p["value"] == "14000 USD" && p["as_of"] == "2026-10";
  }
  CHECK(instance_quoted);
  CHECK(server_quoted);
  // The cost table prices the options at the quotes and says so.
  auto cost_text = capsim("cost " + kScenario, "quotes.db");
  REQUIRE(cost_text.exit_code == 0);
  CHECK(contains(cost_text.out, "aws-g4dn-xlarge at 0.401 USD/h (your quote, as of 2026-11)"));
  CHECK(contains(cost_text.out, "team-t4-server at 14000 USD (your quote, as of 2026-10) in onprem-us-va"));

  // The cluster plan (no catalog: key there): the overlay from the command line.
  auto plan = capsim(kOverlay + "plan '" + kQuotes + "/cluster-quotes.yaml'", "quotes.db");
  INFO(plan.err);
  REQUIRE(plan.exit_code == 0);
  CHECK(contains(plan.out, "aws-g4dn-xlarge price.on_demand 0.401 USD/h, as of 2026-11 (your quote)"));
  auto plan_json = capsim(kOverlay + "plan '" + kQuotes + "/cluster-quotes.yaml' --format json", "quotes.db");
  REQUIRE(plan_json.exit_code == 0);
  bool pool_quoted = false;
  const auto cluster = nlohmann::json::parse(plan_json.out);
  for (const auto& p : cluster["prices"])
    pool_quoted = pool_quoted || (p["entry"] == "aws-g4dn-xlarge" && p["your_quote"] == true);
  CHECK(pool_quoted);
  // Without the overlay the same plan uses the shipped price, unmarked.
  auto shipped = capsim("plan '" + kQuotes + "/cluster-quotes.yaml'", "quotes.db");
  REQUIRE(shipped.exit_code == 0);
  CHECK(contains(shipped.out, "aws-g4dn-xlarge price.on_demand 0.526 USD/h, as of 2026-01 (catalog)"));

  // The report: the plan's price lines and the sources table name the quote.
  const auto report = scratch() / "quotes-report.md";
  auto rep = capsim("report " + kScenario + " -o '" + report.string() + "'", "quotes.db");
  INFO(rep.err);
  REQUIRE(rep.exit_code == 0);
  const std::string md = read(report);
  CHECK(contains(md, "aws-g4dn-xlarge price.on_demand 0.401 USD/h, as of 2026-11 (your quote)"));
  CHECK(contains(md, "your quote ("));
}

TEST_CASE("issue 50: the overlay's bad input is exit 2 with file:line:column, key path and a did-you-mean") {
  const auto dir = scratch() / "bad-overlay";
  fs::create_directories(dir);
  std::ofstream(dir / "quotes.yaml")
      << "instances:\n  - id: aws-g4dn-xlarge\n    price:\n      on_demnd: {value: 0.4 USD/h, source: q, as_of: 2026-11}\n";
  auto r = capsim("--catalog-overlay '" + dir.string() + "' catalog show aws-g4dn-xlarge", "bad-overlay.db");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, (dir / "quotes.yaml").string() +
                            ":4:7: error: instances[0].price.on_demnd: unknown key 'on_demnd' in instance entry (did you mean "
                            "'on_demand'?)"));
  auto missing = capsim("--catalog-overlay /nonexistent/quotes catalog list", "bad-overlay.db");
  CHECK(missing.exit_code == 2);
  CHECK(contains(missing.err, "/nonexistent/quotes: error: no such catalog overlay"));
}

TEST_CASE("issue 50: $CAPSIM_CATALOG_OVERLAY brings the quotes in, and the cache follows the overlay") {
  const auto dir = scratch() / "env-overlay";
  fs::create_directories(dir);
  fs::copy_file(kQuotes + "/team-quotes.yaml", dir / "team-quotes.yaml", fs::copy_options::overwrite_existing);
  auto shipped = capsim("catalog show aws-g4dn-xlarge --format json", "env.db");
  REQUIRE(shipped.exit_code == 0);
  CHECK(contains(shipped.out, "0.526 USD/h"));
  // ':'-separated, empty parts skipped; the capsim process inherits it from this one.
  setenv("CAPSIM_CATALOG_OVERLAY", (":" + dir.string() + ":").c_str(), 1);
  auto quoted = capsim("catalog show aws-g4dn-xlarge --format json", "env.db");
  // Edit the overlay: the same database gives the new price (the cache keyed on it rebuilt).
  {
    std::string text = read(dir / "team-quotes.yaml");
    text.replace(text.find("0.401"), 5, "0.377");
    std::ofstream(dir / "team-quotes.yaml", std::ios::binary) << text;
  }
  auto edited = capsim("catalog show aws-g4dn-xlarge --format json", "env.db");
  // The same overlay named by the environment and the flag is loaded once (no "changed twice").
  auto both = capsim("--catalog-overlay '" + dir.string() + "' catalog show aws-g4dn-xlarge --format json", "env.db");
  unsetenv("CAPSIM_CATALOG_OVERLAY");
  INFO(quoted.err);
  REQUIRE(quoted.exit_code == 0);
  CHECK(contains(quoted.out, "0.401 USD/h"));
  REQUIRE(edited.exit_code == 0);
  CHECK(contains(edited.out, "0.377 USD/h"));
  INFO(both.err);
  CHECK(both.exit_code == 0);
  CHECK(contains(both.out, "0.377 USD/h"));
}

TEST_CASE("issue 50: every plan and cost output lists the as_of of its prices, and warns past --max-price-age") {
  // resnet-training-cost-per-run prices a Hetzner server in EUR (converted with the scenario's
  // rate) and two AWS instances.
  const std::string scenario = "'" CAPSIM_TEST_SOURCE_DIR "/../scenarios/examples/resnet-training-cost-per-run.yaml'";
  auto cost = capsim("cost " + scenario + " --format json", "age.db");
  INFO(cost.err);
  REQUIRE(cost.exit_code == 0);
  const auto j = nlohmann::json::parse(cost.out);
  REQUIRE(j["plan"]["prices"].size() >= 3);
  for (const auto& p : j["plan"]["prices"]) {
    CAPTURE(p.dump());
    CHECK(p["as_of"].is_string());
    CHECK(p["your_quote"] == false);
  }
  // With a one-month limit (today is 2026-12-01 in the tests) every price is stale: each gets a warning.
  auto strict = capsim("--max-price-age 1mo cost " + scenario + " --format json", "age.db");
  REQUIRE(strict.exit_code == 0);
  const auto s = nlohmann::json::parse(strict.out);
  int stale = 0, warned = 0;
  for (const auto& p : s["plan"]["prices"]) stale += p["stale"] == true;
  for (const auto& w : s["plan"]["warnings"]) warned += contains(w.get<std::string>(), "past the 1mo limit (--max-price-age)");
  CHECK(stale == static_cast<int>(s["plan"]["prices"].size()));
  CHECK(warned == stale);
  // A generous limit: no price warning.
  auto lax = capsim("--max-price-age 20y cost " + scenario + " --format json", "age.db");
  REQUIRE(lax.exit_code == 0);
  const auto lax_json = nlohmann::json::parse(lax.out);
  for (const auto& w : lax_json["plan"]["warnings"]) CHECK_FALSE(contains(w.get<std::string>(), "stale price"));
  // The text output shows the same lines.
  auto text = capsim("--max-price-age 1mo cost " + scenario, "age.db");
  CHECK(contains(text.out, "price           aws-g4dn-xlarge price.on_demand 0.526 USD/h, as of 2026-01 (catalog)"));
  CHECK(contains(text.out, "warning         stale price: aws-g4dn-xlarge price.on_demand is 11 months old (as of 2026-01), past the 1mo limit"));
  // A bad age is bad input, named.
  auto bad = capsim("--max-price-age soon cost " + scenario, "age.db");
  CHECK(bad.exit_code == 2);
  CHECK(contains(bad.err, "--max-price-age: expected an age like '12mo', got 'soon'"));
}

TEST_CASE("issue 50: catalog check --max-age lists stale prices and exits non-zero") {
  const std::string fixture = "--catalog '" CAPSIM_TEST_SOURCE_DIR "/cli/fixtures/stale-catalog' ";
  auto r = capsim(fixture + "catalog check --max-age 12mo", "check.db");
  INFO(r.err);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.out, "stale-instance"));
  CHECK(contains(r.out, "24 months"));
  CHECK_FALSE(contains(r.out, "fresh-instance"));
  CHECK_FALSE(contains(r.out, "rouble-instance"));
  CHECK_FALSE(contains(r.out, "list_price"));  // a GPU's launch price is no stale quote
  CHECK(contains(r.out, "1 price older than 12mo (as of 2026-12-01)"));
  auto json = capsim(fixture + "catalog check --max-age 12mo --format json", "check.db");
  CHECK(json.exit_code == 1);
  const auto j = nlohmann::json::parse(json.out);
  REQUIRE(j["stale"].size() == 1);
  CHECK(j["stale"][0]["entry"] == "stale-instance");
  CHECK(j["stale"][0]["field"] == "price.on_demand");
  CHECK(j["stale"][0]["as_of"] == "2024-12");
  // Within 30 months nothing is stale: exit 0.
  auto ok = capsim(fixture + "catalog check --max-age 30mo", "check.db");
  CHECK(ok.exit_code == 0);
  CHECK(contains(ok.out, "every price is at most 30mo old"));
  // A quote in an overlay is checked too, and marked as the user's.
  const auto dir = scratch() / "stale-quote";
  fs::create_directories(dir);
  std::ofstream(dir / "q.yaml") << "instances:\n  - id: fresh-instance\n    price:\n      spot: {value: 1 USD/h, source: "
                                   "\"old quote\", as_of: 2023-01}\n";
  auto quoted = capsim(fixture + "--catalog-overlay '" + dir.string() + "' catalog check --format json", "check.db");
  CHECK(quoted.exit_code == 1);
  bool found = false;
  const auto listed = nlohmann::json::parse(quoted.out);
  for (const auto& p : listed["stale"])
    found = found || (p["entry"] == "fresh-instance" && p["your_quote"] == true);
  CHECK(found);
  auto bad = capsim(fixture + "catalog check --max-age twelve", "check.db");
  CHECK(bad.exit_code == 2);
  CHECK(contains(bad.err, "--max-age"));
}

TEST_CASE("issue 50: catalog list instances --sort price.on_demand sorts roubles by what they cost in dollars") {
  const std::string fixture = "--catalog '" CAPSIM_TEST_SOURCE_DIR "/cli/fixtures/stale-catalog' ";
  auto r = capsim(fixture + "catalog list instances --sort price.on_demand --format json", "sort.db");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::vector<std::string> ids;
  for (const auto& e : nlohmann::json::parse(r.out)) ids.push_back(e["id"]);
  // 200 RUB/h x 0.0125 = 2.5 USD/h: between 2 and 3 USD/h (as a raw number, 200 would be last).
  CHECK(ids == std::vector<std::string>{"fresh-instance", "rouble-instance", "stale-instance"});
}

TEST_CASE("issue 50: catalog import-skypilot writes an overlay that loads, and lists the refused rows") {
  const std::string dir = CAPSIM_TEST_SOURCE_DIR "/hardware/fixtures/skypilot";
  const auto out = scratch() / "sky" / "overlay.yaml";
  fs::create_directories(out.parent_path());
  auto r = capsim("catalog import-skypilot '" + dir + "' --commit abc123 --as-of 2026-12-01 -o '" + out.string() + "'",
                  "sky.db");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.err, "lambda/vms.csv:13: refused gpu_1x_gh200 (GH200): the catalog has no GPU for 'GH200'"));
  CHECK(contains(r.err, "lambda/vms.csv:14: refused gpu_1x_gh200 (GH200)"));
  CHECK(contains(r.err, "from aws, lambda, nebius, runpod"));
  const std::string yaml = read(out);
  CHECK(contains(yaml, "commit abc123"));
  CHECK_FALSE(contains(yaml, "gh200"));
  // Only the file: no temporary left beside it.
  int files = 0;
  for (const auto& e : fs::directory_iterator(out.parent_path())) files += e.is_regular_file();
  CHECK(files == 1);
  // It loads as an overlay: the p4d's spot price is SkyPilot's lowest zone.
  auto show = capsim("--catalog-overlay '" + out.string() + "' catalog show aws-p4d-24xlarge --format json", "sky.db");
  REQUIRE(show.exit_code == 0);
  CHECK(contains(show.out, "2.466 USD/h"));
  auto missing = capsim("catalog import-skypilot /nonexistent-dir", "sky.db");
  CHECK(missing.exit_code == 2);
  CHECK(contains(missing.err, "/nonexistent-dir: error: not a directory"));
}

TEST_CASE("issue 50: the team plan shows each pool's idle GPU-hours and their share of the weekly cost") {
  // aws-batch-and-serving: the OCR service holds MIG slices of one A100 of a p4d.24xlarge all
  // week, so at least 7 of its 8 GPUs (7 x 168 = 1176 GPU-hours) idle, paid for around the clock.
  const std::string cluster = "'" CAPSIM_TEST_SOURCE_DIR "/../scenarios/clusters/aws-batch-and-serving.yaml'";
  auto r = capsim("plan " + cluster + " --format json", "waste.db");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  bool found = false;
  double shares = 0;
  for (const auto& w : j["pool_waste"]) {
    shares += w["idle_share_of_weekly_cost"].get<double>();
    CHECK(w["idle_gpu_hours_per_week"].get<double>() <= w["gpu_hours_per_week"].get<double>());
    if (w["node_type"] != "aws-p4d-24xlarge") continue;
    found = true;
    CHECK(w["gpu_hours_per_week"].get<double>() == doctest::Approx(8 * 168));
    CHECK(w["idle_gpu_hours_per_week"].get<double>() >= 7 * 168);
    CHECK(w["idle_share_of_weekly_cost"].get<double>() > 0.5);
  }
  CHECK(found);
  CHECK(shares < 1.0);  // idle cost is part of the weekly cost
  auto text = capsim("plan " + cluster, "waste.db");
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("Idle GPUs (GPU-hours a pool's nodes are up and paid for with no pod on them") != std::string::npos);
  CHECK(text.out.find("aws-p4d-24xlarge       ") != std::string::npos);
}
