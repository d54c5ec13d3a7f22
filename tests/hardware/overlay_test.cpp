// Issue 50: catalog overlays (a team's own quotes on top of the shipped catalog), the SQLite
// cache keyed on them, prices compared in one currency, and SkyPilot catalog files imported
// as an overlay.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "capsim/hardware/loader.hpp"
#include "capsim/hardware/query.hpp"
#include "capsim/hardware/skypilot.hpp"
#include "capsim/hardware/store.hpp"
#include "support/test_support.hpp"

using namespace capsim;
using namespace capsim::hardware;

namespace {

std::vector<CatalogSource> shipped_sources() {
  auto sources = read_catalog_dir(CAPSIM_TEST_DATA_DIR "/catalog");
  REQUIRE(sources.ok());
  return *sources;
}

std::vector<CatalogSource> with_overlay(std::string text, std::string name = "quotes.yaml") {
  auto sources = shipped_sources();
  sources.push_back({std::move(name), std::move(text), true});
  return sources;
}

const char* kQuotes = R"(instances:
  - id: aws-g4dn-xlarge
    price:
      on_demand: {value: 0.401 USD/h, source: "a negotiated rate", as_of: 2026-11}
servers:
  - id: team-t4-server
    name: Team 4x T4
    vendor: reseller
    gpu: t4
    gpu_count: 4
    purchase_price: 14000 USD
    power_max: 1.2 kW
    source: "a reseller's quote"
    as_of: 2026-10
)";

std::string errors_text(const std::vector<Diagnostic>& errors) { return format_diagnostics(errors); }

}  // namespace

TEST_CASE("an overlay changes a shipped instance's price and adds a server, each marked as the user's") {
  auto catalog = load_catalog(with_overlay(kQuotes));
  REQUIRE_MESSAGE(catalog.ok(), errors_text(catalog.errors()));
  const Entity* g4dn = catalog->find(EntityKind::instance, "aws-g4dn-xlarge");
  REQUIRE(g4dn != nullptr);
  const FieldValue* price = g4dn->find("price.on_demand");
  REQUIRE(price != nullptr);
  CHECK(price->number * 3600 == doctest::Approx(0.401));
  REQUIRE(price->provenance);
  CHECK(price->provenance->overlay == "quotes.yaml");
  CHECK(price->provenance->as_of == "2026-11");
  CHECK(price->provenance->source == "a negotiated rate");
  // The fields the overlay did not name stay the shipped ones, unmarked.
  CHECK(g4dn->integer("gpu_count") == 1);
  REQUIRE(g4dn->find("memory") != nullptr);
  CHECK_FALSE(g4dn->find("memory")->provenance->from_overlay());
  const Entity* server = catalog->find(EntityKind::server, "team-t4-server");
  REQUIRE(server != nullptr);
  CHECK(server->find("purchase_price")->provenance->overlay == "quotes.yaml");
  // The shipped catalog without the overlay keeps its own price.
  auto shipped = load_catalog(shipped_sources());
  REQUIRE(shipped.ok());
  CHECK(shipped->find("aws-g4dn-xlarge")->find("price.on_demand")->number * 3600 == doctest::Approx(0.526));
  CHECK(shipped->find("team-t4-server") == nullptr);
}

TEST_CASE("a later overlay wins over an earlier one, and one file changing an id twice is an error") {
  auto sources = with_overlay(kQuotes, "team.yaml");
  sources.push_back({"mine.yaml",
                     "instances:\n  - id: aws-g4dn-xlarge\n    price:\n      on_demand: {value: 0.3 USD/h, source: \"my "
                     "quote\", as_of: 2026-12}\n",
                     true});
  auto catalog = load_catalog(sources);
  REQUIRE_MESSAGE(catalog.ok(), errors_text(catalog.errors()));
  CHECK(catalog->find("aws-g4dn-xlarge")->find("price.on_demand")->provenance->overlay == "mine.yaml");
  CHECK(catalog->find("aws-g4dn-xlarge")->find("price.on_demand")->number * 3600 == doctest::Approx(0.3));

  auto twice = load_catalog(with_overlay(
      "instances:\n  - id: aws-g4dn-xlarge\n    price: {spot: {value: 0.2 USD/h, source: a, as_of: 2026-12}}\n"
      "  - id: aws-g4dn-xlarge\n    price: {spot: {value: 0.3 USD/h, source: b, as_of: 2026-12}}\n"));
  REQUIRE_FALSE(twice.ok());
  CHECK(errors_text(twice.errors()).find("quotes.yaml:4:9: error: instances[1].id: 'aws-g4dn-xlarge' is changed twice in this overlay") !=
        std::string::npos);
}

TEST_CASE("overlay errors name the file, line, column and key path, with a did-you-mean") {
  struct Case {
    const char* name;
    const char* yaml;
    const char* expected;
  };
  const Case cases[] = {
      {"a price without a source",
       "instances:\n  - id: aws-g4dn-xlarge\n    price:\n      on_demand: 0.4 USD/h\n",
       "quotes.yaml:4:18: error: instances[0].price.on_demand: a number without a source"},
      {"a typo in the key",
       "instances:\n  - id: aws-g4dn-xlarge\n    price:\n      on_demnd: {value: 0.4 USD/h, source: q, as_of: 2026-11}\n",
       "quotes.yaml:4:7: error: instances[0].price.on_demnd: unknown key 'on_demnd' in instance entry (did you mean 'on_demand'?)"},
      {"a typo in the id: a new entry then lacks its required fields",
       "instances:\n  - id: aws-g4dn-xlage\n    price:\n      on_demand: {value: 0.4 USD/h, source: q, as_of: 2026-11}\n",
       "quotes.yaml:2:5: error: instances[0]: missing required field 'provider' (did you mean 'aws-g4dn-xlarge'?)"},
      {"an id of another kind",
       "servers:\n  - id: aws-g4dn-xlarge\n    purchase_price: {value: 1 USD, source: q, as_of: 2026-11}\n",
       "quotes.yaml:2:9: error: servers[0].id: 'aws-g4dn-xlarge' is an instance in the catalog, not a server"},
      {"a bad date",
       "instances:\n  - id: aws-g4dn-xlarge\n    price:\n      on_demand: {value: 0.4 USD/h, source: q, as_of: 26-11}\n",
       "instances[0].price.on_demand.as_of: invalid date '26-11'"},
      {"an entry that changes nothing", "instances:\n  - id: aws-g4dn-xlarge\n",
       "quotes.yaml:2:5: error: instances[0]: overlay entry for 'aws-g4dn-xlarge' changes no field"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    auto catalog = load_catalog(with_overlay(c.yaml));
    REQUIRE_FALSE(catalog.ok());
    const std::string text = errors_text(catalog.errors());
    CAPTURE(text);
    CHECK(text.find(c.expected) != std::string::npos);
  }
}

TEST_CASE("the SQLite catalog cache keys on the overlay: it rebuilds when the overlay changes") {
  auto dir = std::filesystem::temp_directory_path() / ("capsim-overlay-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  capsim::testing::remove_at_exit(dir);
  auto opened = Store::open(dir / "cache.db");
  REQUIRE(opened.ok());
  Store store = std::move(opened).value();
  bool rebuilt = false;
  auto first = store.sync_catalog(with_overlay(kQuotes), &rebuilt);
  REQUIRE(first.ok());
  CHECK(rebuilt);
  auto again = store.sync_catalog(with_overlay(kQuotes), &rebuilt);
  REQUIRE(again.ok());
  CHECK_FALSE(rebuilt);  // same overlay: read from the database
  // Read back from SQLite, the price still says it is the user's.
  CHECK(again->find("aws-g4dn-xlarge")->find("price.on_demand")->provenance->overlay == "quotes.yaml");
  CHECK(*again == *first);
  std::string changed = kQuotes;
  changed.replace(changed.find("0.401"), 5, "0.399");
  auto third = store.sync_catalog(with_overlay(changed), &rebuilt);
  REQUIRE(third.ok());
  CHECK(rebuilt);
  CHECK(third->find("aws-g4dn-xlarge")->find("price.on_demand")->number * 3600 == doctest::Approx(0.399));
  // Dropping the overlay rebuilds too: the shipped price comes back, unmarked.
  auto plain = store.sync_catalog(shipped_sources(), &rebuilt);
  REQUIRE(plain.ok());
  CHECK(rebuilt);
  CHECK_FALSE(plain->find("aws-g4dn-xlarge")->find("price.on_demand")->provenance->from_overlay());
  CHECK(plain->find("team-t4-server") == nullptr);
}

TEST_CASE("catalog_hash differs when only the overlay mark or the overlay's text differs") {
  std::vector<CatalogSource> a{{"x.yaml", "gpus: []\n", false}};
  std::vector<CatalogSource> b{{"x.yaml", "gpus: []\n", true}};
  CHECK(catalog_hash(a) != catalog_hash(b));
}

TEST_CASE("issue 50: prices sort and filter in US dollars, not as raw numbers of their currency") {
  const std::string yaml = R"(providers:
  - {id: p, name: P, kind: gpu-cloud, currency: USD, source: s, as_of: 2026-01}
gpus:
  - {id: g, name: G, vendor: nvidia, architecture: hopper, form_factor: sxm, segment: datacenter, memory: 80 GB,
     memory_bandwidth: 3 TB/s, source: s, as_of: 2026-01}
instances:
  - {id: usd-3, provider: p, name: a, region: r, gpu: g, gpu_count: 1, price: {on_demand: 3 USD/h}, source: s, as_of: 2026-01}
  - {id: rub-200, provider: p, name: b, region: r, gpu: g, gpu_count: 1, price: {on_demand: 200 RUB/h}, source: s, as_of: 2026-01}
  - {id: usd-1, provider: p, name: c, region: r, gpu: g, gpu_count: 1, price: {on_demand: 1 USD/h}, source: s, as_of: 2026-01}
  - {id: eur-2, provider: p, name: d, region: r, gpu: g, gpu_count: 1, price: {on_demand: 2 EUR/h}, source: s, as_of: 2026-01}
  - {id: none, provider: p, name: e, region: r, gpu: g, gpu_count: 1, source: s, as_of: 2026-01}
exchange_rates:
  - {id: rub-old, currency: RUB, usd: 0.1, source: s, as_of: 2020-01-01}
  - {id: rub-new, currency: RUB, usd: 0.0125, source: s, as_of: 2026-11-01}
)";
  auto catalog = load_catalog({{"t.yaml", yaml}});
  REQUIRE_MESSAGE(catalog.ok(), errors_text(catalog.errors()));
  Query q;
  q.sort_by = "price.on_demand";
  auto rows = run_query(*catalog, EntityKind::instance, q);
  REQUIRE(rows.ok());
  std::vector<std::string> ids;
  for (const auto* e : *rows) ids.push_back(e->id);
  // 200 RUB/h at the newest rate (0.0125) is 2.5 USD/h: between 1 and 3, not last as "200".
  // No EUR rate: last among the priced, before the entry with no price.
  CHECK(ids == std::vector<std::string>{"usd-1", "rub-200", "usd-3", "eur-2", "none"});
  q.descending = true;
  rows = run_query(*catalog, EntityKind::instance, q);
  ids.clear();
  for (const auto* e : *rows) ids.push_back(e->id);
  CHECK(ids == std::vector<std::string>{"usd-3", "rub-200", "usd-1", "eur-2", "none"});
  // A filter in dollars compares the rouble price converted: 2.5 USD/h < 2.6 USD/h.
  Query cheap;
  auto f = parse_filter(EntityKind::instance, "price.on_demand<2.6 USD/h");
  REQUIRE(f.ok());
  cheap.filters.push_back(*f);
  rows = run_query(*catalog, EntityKind::instance, cheap);
  ids.clear();
  for (const auto* e : *rows) ids.push_back(e->id);
  CHECK(ids == std::vector<std::string>{"rub-200", "usd-1"});
  CHECK(usd_per_unit(*catalog, Currency::rub) == doctest::Approx(0.0125));
  CHECK_FALSE(usd_per_unit(*catalog, Currency::eur).has_value());
}

namespace {

const std::filesystem::path kSkyPilot = std::filesystem::path(CAPSIM_TEST_SOURCE_DIR) / "hardware" / "fixtures" / "skypilot";

struct CsvRow {
  std::string cloud, type, accelerator, region;
  std::string price, spot;
};

// The fixture's GPU rows, read with a plain split that knows the one quoted column (GpuInfo).
std::vector<CsvRow> fixture_rows() {
  std::vector<CsvRow> out;
  for (const char* cloud : {"aws", "lambda", "nebius", "runpod"}) {
    std::ifstream in(kSkyPilot / cloud / "vms.csv");
    std::string line;
    std::vector<std::string> header;
    while (std::getline(in, line)) {
      std::vector<std::string> fields;
      std::string f;
      bool quoted = false;
      for (char c : line) {
        if (c == '"') quoted = !quoted;
        else if (c == ',' && !quoted) {
          fields.push_back(f);
          f.clear();
        } else f += c;
      }
      fields.push_back(f);
      if (header.empty()) {
        header = fields;
        continue;
      }
      std::map<std::string, std::string> row;
      for (std::size_t i = 0; i < header.size() && i < fields.size(); ++i) row[header[i]] = fields[i];
      if (row["AcceleratorName"].empty()) continue;
      out.push_back({cloud, row["InstanceType"], row["AcceleratorName"], row["Region"], row["Price"], row["SpotPrice"]});
    }
  }
  return out;
}

}  // namespace

TEST_CASE("import-skypilot: >= 50 real rows of 4 clouds round-trip into an overlay with the CSV's prices") {
  const auto& shipped = capsim::testing::shipped_catalog();
  SkyPilotOptions options;
  options.commit = "fixture (see tests/hardware/fixtures/skypilot/README.md)";
  options.as_of = "2026-12-01";
  auto imported = import_skypilot(kSkyPilot, shipped, options);
  REQUIRE_MESSAGE(imported.ok(), errors_text(imported.errors()));
  const auto rows = fixture_rows();
  REQUIRE(rows.size() >= 50);
  CHECK(imported->clouds == std::vector<std::string>{"aws", "lambda", "nebius", "runpod"});
  CHECK(imported->cpu_rows == 5);
  // The catalog has no GH200: both rows refused, each named with its line.
  REQUIRE(imported->refused.size() == 2);
  CHECK(imported->refused[0].accelerator == "GH200");
  CHECK(imported->refused[0].where.file.ends_with("lambda/vms.csv"));
  CHECK(imported->refused[0].where.line == 13);
  CHECK(imported->refused[0].why == "the catalog has no GPU for 'GH200'");

  // The overlay loads on top of the shipped catalog ...
  auto sources = shipped_sources();
  sources.push_back({"skypilot.yaml", imported->overlay_yaml, true});
  auto catalog = load_catalog(sources);
  REQUIRE_MESSAGE(catalog.ok(), errors_text(catalog.errors()) << "\n" << imported->overlay_yaml);
  // ... and every accepted row's instance has the CSV's on-demand price, and the lowest spot
  // price of its zones.
  std::map<std::string, std::pair<double, double>> expected;  // provider|type|region -> (price, lowest spot)
  for (const auto& r : rows) {
    if (r.accelerator == "GH200") continue;
    auto& e = expected[r.cloud + "|" + r.type + "|" + r.region];
    if (e.first == 0) e.first = std::stod(r.price);
    if (!r.spot.empty() && std::stod(r.spot) > 0 && (e.second == 0 || std::stod(r.spot) < e.second)) e.second = std::stod(r.spot);
  }
  int checked = 0;
  for (const auto& [key, prices] : expected) {
    const auto bar1 = key.find('|'), bar2 = key.rfind('|');
    const std::string provider = key.substr(0, bar1), type = key.substr(bar1 + 1, bar2 - bar1 - 1),
                      region = key.substr(bar2 + 1);
    CAPTURE(key);
    const Entity* found = nullptr;
    for (const auto& e : catalog->all(EntityKind::instance))
      if (e.text("provider") == provider && e.text("name") == type && e.text("region") == region) found = &e;
    REQUIRE(found != nullptr);
    const FieldValue* on_demand = found->find("price.on_demand");
    REQUIRE(on_demand != nullptr);
    CHECK(on_demand->number * 3600 == doctest::Approx(prices.first).epsilon(1e-9));
    CHECK(on_demand->provenance->overlay == "skypilot.yaml");
    CHECK(on_demand->provenance->as_of == "2026-12-01");
    CHECK(on_demand->provenance->source.find("SkyPilot catalog " + provider + "/vms.csv") != std::string::npos);
    if (prices.second > 0) {
      REQUIRE(found->find("price.spot") != nullptr);
      CHECK(found->find("price.spot")->number * 3600 == doctest::Approx(prices.second).epsilon(1e-9));
    } else {
      CHECK(found->find("price.spot") == nullptr);
    }
    ++checked;
  }
  CHECK(checked == imported->new_instances + imported->updated_instances);
  // The shipped p4d.24xlarge in us-east-1 gets SkyPilot's prices under its own id, the rest
  // of it unchanged; its GPU and count as SkyPilot gives them match the catalog's.
  const Entity* p4d = catalog->find("aws-p4d-24xlarge");
  REQUIRE(p4d != nullptr);
  CHECK(p4d->find("price.spot")->number * 3600 == doctest::Approx(2.4655));
  CHECK(p4d->find("price.on_demand")->provenance->from_overlay());
  CHECK(p4d->text("gpu") == "a100-sxm-40gb");
  CHECK(imported->updated_instances >= 1);
  // GPU names: RunPod's A100-80GB is a PCIe card (GpuInfo says so), Lambda's H100 SXM5 an SXM module.
  const Entity* runpod = catalog->find("runpod-2x-a100-80gb-secure-us");
  REQUIRE(runpod != nullptr);
  CHECK(runpod->text("gpu") == "a100-pcie-80gb");
  CHECK(runpod->integer("gpu_count") == 2);
  CHECK(runpod->integer("vcpus") == 16);
  // The shipped RunPod 1x A100 80GB (US) is the same offer: its prices change, under its id.
  CHECK(catalog->find("runpod-1x-a100-pcie-80gb")->find("price.on_demand")->provenance->from_overlay());
  const Entity* h100 = catalog->find("lambda-gpu-8x-h100-sxm5-us-south-3");
  REQUIRE(h100 != nullptr);
  CHECK(h100->text("gpu") == "h100-sxm-80gb");
  CHECK(h100->integer("gpu_count") == 8);
}

TEST_CASE("import-skypilot: a header without a required column is an error with a did-you-mean") {
  auto dir = std::filesystem::temp_directory_path() / ("capsim-sky-test-" + std::to_string(::getpid())) / "aws";
  std::filesystem::create_directories(dir);
  capsim::testing::remove_at_exit(dir.parent_path());
  std::ofstream(dir / "vms.csv") << "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Prices,SpotPrice,Region\n";
  auto imported = import_skypilot(dir.parent_path(), capsim::testing::shipped_catalog());
  REQUIRE_FALSE(imported.ok());
  const std::string text = errors_text(imported.errors());
  CHECK(text.find("aws/vms.csv:1:1: error: header: no 'Price' column in the header (did you mean 'Prices'?)") != std::string::npos);
  std::ofstream(dir / "vms.csv") << "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,SpotPrice,Region\n"
                                    "p4d.24xlarge,A100,8.0,96.0,1152.0,lots,,us-east-1\n";
  imported = import_skypilot(dir.parent_path(), capsim::testing::shipped_catalog());
  REQUIRE_FALSE(imported.ok());
  CHECK(errors_text(imported.errors()).find("aws/vms.csv:2:35: error: Price: expected a price in USD per hour, got 'lots'") !=
        std::string::npos);
}
