#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "support/test_support.hpp"
#include "capsim/hardware/loader.hpp"
#include "capsim/hardware/store.hpp"

using namespace capsim;
using namespace capsim::hardware;

namespace {

std::filesystem::path temp_db(const char* name) {
  auto dir = std::filesystem::temp_directory_path() / ("capsim-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  capsim::testing::remove_at_exit(dir);
  auto path = dir / name;
  std::filesystem::remove(path);
  return path;
}

}  // namespace

TEST_CASE("the shipped catalog round-trips through SQLite unchanged") {
  auto sources = read_catalog_dir(CAPSIM_TEST_DATA_DIR "/catalog");
  REQUIRE(sources.ok());
  auto yaml = load_catalog(*sources);
  REQUIRE(yaml.ok());
  auto path = temp_db("roundtrip.db");
  {
    auto store = Store::open(path);
    REQUIRE(store.ok());
    CHECK(store->stored_catalog_hash().empty());
    auto status = store.value().save_catalog(*yaml);
    REQUIRE(status.empty());
  }
  auto reopened = Store::open(path);
  REQUIRE(reopened.ok());
  auto back = reopened->load_catalog();
  REQUIRE(back.ok());
  CHECK(back->content_hash == yaml->content_hash);
  CHECK(back->size() == yaml->size());
  CHECK(*back == *yaml);  // every field, unit, currency, source and date
  auto h100 = back->gpu("h100-sxm-80gb");
  REQUIRE(h100.ok());
  CHECK(h100->peak("bf16")->value() == 989e12);
}

TEST_CASE("sync rebuilds only when the YAML changes") {
  std::vector<CatalogSource> v1{{"n.yaml", "networks:\n  - {id: n1, name: N, kind: ethernet, port_bandwidth: 10 Gb/s, "
                                           "source: s, as_of: 2020-01}\n"}};
  auto path = temp_db("sync.db");
  auto store = Store::open(path);
  REQUIRE(store.ok());
  bool rebuilt = false;
  auto first = store.value().sync_catalog(v1, &rebuilt);
  REQUIRE(first.ok());
  CHECK(rebuilt);
  auto second = store.value().sync_catalog(v1, &rebuilt);
  REQUIRE(second.ok());
  CHECK_FALSE(rebuilt);
  auto v2 = v1;
  v2[0].text += "  - {id: n2, name: M, kind: ethernet, port_bandwidth: 25 Gb/s, source: s, as_of: 2020-01}\n";
  auto third = store.value().sync_catalog(v2, &rebuilt);
  REQUIRE(third.ok());
  CHECK(rebuilt);
  CHECK(third->size() == 2);
  // Invalid YAML is reported and leaves the stored catalog as it was.
  auto broken = v2;
  broken[0].text += "  - {id: n3}\n";
  auto fourth = store.value().sync_catalog(broken, &rebuilt);
  CHECK_FALSE(fourth.ok());
  CHECK(store->load_catalog()->size() == 2);
}

TEST_CASE("the database has the tables later features fill") {
  auto path = temp_db("tables.db");
  auto store = Store::open(path);
  REQUIRE(store.ok());
  auto load = store->load_catalog();
  REQUIRE_FALSE(load.ok());
  CHECK(load.errors()[0].message == "the database holds no catalog yet");
}

TEST_CASE("a path that cannot be a database gives an error and no crash") {
  auto dir = temp_db("a-directory");
  std::filesystem::create_directories(dir);
  auto store = Store::open(dir);
  REQUIRE_FALSE(store.ok());
  CHECK(store.errors()[0].message.starts_with("cannot open the database"));
}
