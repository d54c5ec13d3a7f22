// Issue 53: the SQLite wrapper (capsim/hardware/sqlite.hpp) and that it is the only code that
// prepares, steps and finalizes statements.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "support/test_support.hpp"
#include "capsim/hardware/sqlite.hpp"
#include "capsim/hardware/store.hpp"

using namespace capsim;
using namespace capsim::hardware;
namespace fs = std::filesystem;

namespace {

fs::path temp_db(const char* name) {
  auto dir = fs::temp_directory_path() / ("capsim-sqlite-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  capsim::testing::remove_at_exit(dir);
  auto path = dir / name;
  fs::remove(path);
  return path;
}

Store open_store(const char* name) {
  auto store = Store::open(temp_db(name));
  REQUIRE(store.ok());
  REQUIRE(sqlite::exec(store->handle(), "CREATE TABLE t(k TEXT UNIQUE, i INTEGER, r REAL, b BLOB);"));
  return std::move(store).value();
}

long long count_rows(sqlite3* db) {
  sqlite::Statement q(db, "SELECT COUNT(*) FROM t;");
  REQUIRE(q.ok());
  REQUIRE(q.step() == sqlite::Step::row);
  return q.int64(0);
}

}  // namespace

TEST_CASE("a statement binds text, integers, reals, nulls and blobs and reads them back") {
  Store store = open_store("bind.db");
  sqlite3* db = store.handle();
  sqlite::Statement insert(db, "INSERT INTO t(k, i, r, b) VALUES(?1, ?2, ?3, ?4);");
  REQUIRE(insert.ok());
  CHECK(insert.error().empty());
  const std::string with_nul("a\0b", 3);  // the length is bound, not cut at the NUL
  const unsigned char bytes[] = {0, 1, 255};
  insert.bind(1, with_nul);
  insert.bind(2, std::int64_t{1} << 40);
  insert.bind(3, 2.5);
  insert.bind_blob(4, bytes, sizeof bytes);
  CHECK(insert.step() == sqlite::Step::done);
  CHECK(sqlite::changes(db) == 1);
  CHECK(sqlite::last_insert_rowid(db) == 1);
  // reset clears the bindings: the second row is all nulls but its key.
  insert.reset();
  insert.bind(1, "second");
  CHECK(insert.step() == sqlite::Step::done);
  insert.reset();
  insert.bind(1, "third");
  insert.bind_null(2);
  CHECK(insert.step() == sqlite::Step::done);

  sqlite::Statement select(db, "SELECT k, i, r, b FROM t ORDER BY rowid;");
  REQUIRE(select.ok());
  REQUIRE(select.step() == sqlite::Step::row);
  CHECK(select.text(0) == with_nul);
  CHECK(select.int64(1) == (std::int64_t{1} << 40));
  CHECK(select.real(2) == 2.5);
  CHECK(select.blob(3) == std::vector<unsigned char>{0, 1, 255});
  CHECK_FALSE(select.is_null(1));
  REQUIRE(select.step() == sqlite::Step::row);
  CHECK(select.text(0) == "second");
  CHECK(select.is_null(1));
  CHECK(select.is_null(2));
  CHECK(select.int64(1) == 0);
  CHECK(select.text(3).empty());
  CHECK(select.blob(3).empty());
  REQUIRE(select.step() == sqlite::Step::row);
  CHECK(select.is_null(1));
  CHECK(select.step() == sqlite::Step::done);
}

TEST_CASE("a statement that does not prepare says why, binds nothing and steps to an error") {
  Store store = open_store("prepare.db");
  sqlite::Statement bad(store.handle(), "SELECT x FROM no_such_table;");
  CHECK_FALSE(bad.ok());
  CHECK(bad.error() == "no such table: no_such_table");
  CHECK(sqlite::errmsg(store.handle()) == "no such table: no_such_table");
  bad.bind(1, "ignored");
  bad.reset();
  CHECK(bad.step() == sqlite::Step::error);
  CHECK(bad.text(0).empty());
  sqlite::Statement empty(store.handle(), "");
  CHECK_FALSE(empty.ok());
  CHECK_FALSE(empty.error().empty());
  CHECK(sqlite::errmsg(nullptr) == "out of memory");
}

TEST_CASE("a step that fails is an error with SQLite's message, not the end of the rows") {
  Store store = open_store("step.db");
  sqlite3* db = store.handle();
  sqlite::Statement insert(db, "INSERT INTO t(k) VALUES('same');");
  REQUIRE(insert.ok());
  CHECK(insert.step() == sqlite::Step::done);
  insert.reset();
  CHECK(insert.step() == sqlite::Step::error);
  CHECK(sqlite::errmsg(db) == "UNIQUE constraint failed: t.k");
  CHECK(sqlite::primary_errcode(db) == 19);  // SQLITE_CONSTRAINT
}

TEST_CASE("a statement moves, and the moved-from one is empty") {
  Store store = open_store("move.db");
  sqlite3* db = store.handle();
  sqlite::Statement a(db, "SELECT 7;");
  REQUIRE(a.ok());
  sqlite::Statement b(std::move(a));
  CHECK_FALSE(a.ok());  // NOLINT(bugprone-use-after-move): the state after a move is the point
  CHECK(a.step() == sqlite::Step::error);
  REQUIRE(b.ok());
  sqlite::Statement c(db, "SELECT 8;");
  c = std::move(b);  // finalizes c's own statement
  REQUIRE(c.step() == sqlite::Step::row);
  CHECK(c.integer(0) == 7);
}

TEST_CASE("a transaction rolls back unless committed") {
  Store store = open_store("transaction.db");
  sqlite3* db = store.handle();
  {
    sqlite::Transaction t(db);
    REQUIRE(t.active());
    REQUIRE(sqlite::exec(db, "INSERT INTO t(k) VALUES('rolled back');"));
    CHECK(count_rows(db) == 1);
    // One at a time: a second BEGIN inside the first fails and rolls nothing back itself.
    sqlite::Transaction nested(db);
    CHECK_FALSE(nested.active());
    CHECK_FALSE(nested.commit());
  }
  CHECK(count_rows(db) == 0);
  {
    sqlite::Transaction t(db);
    REQUIRE(t.active());
    REQUIRE(sqlite::exec(db, "INSERT INTO t(k) VALUES('kept');"));
    CHECK(t.commit());
    CHECK_FALSE(t.active());
  }
  CHECK(count_rows(db) == 1);
}

TEST_CASE("only the wrapper prepares, steps and finalizes SQLite statements") {
  // Source folders of the project (tests may call SQLite directly to damage a database).
  const fs::path root = fs::canonical(fs::path(CAPSIM_TEST_SOURCE_DIR) / "..");
  const std::regex call(R"(\bsqlite3_(prepare\w*|step|finalize)\s*\()");
  const std::regex include_sqlite(R"(#\s*include\s*[<"]sqlite3\.h[>"])");
  const fs::path wrapper = fs::path("hardware_catalog") / "src" / "sqlite.cpp";
  std::string callers, public_includes;  // the files, one per line (doctest prints strings)
  int scanned = 0;
  bool wrapper_calls = false;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    const fs::path rel = fs::relative(it->path(), root);
    const std::string top = rel.begin()->string();
    if (it->is_directory()) {
      const std::string name = it->path().filename().string();
      if (top == "tests" || name.starts_with(".") || name.starts_with("build") || name == "node_modules")
        it.disable_recursion_pending();
      continue;
    }
    const std::string ext = it->path().extension().string();
    if (ext != ".cpp" && ext != ".hpp" && ext != ".h" && ext != ".cc" && ext != ".c" && ext != ".cu") continue;
    std::ifstream in(it->path());
    std::stringstream text;
    text << in.rdbuf();
    const std::string source = text.str();
    ++scanned;
    const bool calls = std::regex_search(source, call);
    if (rel == wrapper) wrapper_calls = calls;
    else if (calls) callers += rel.string() + "\n";
    // Public headers (include/ folders) keep sqlite3.h to themselves: the wrapper's header
    // only declares SQLite's handle types.
    if (rel.string().find("/include/") != std::string::npos && std::regex_search(source, include_sqlite))
      public_includes += rel.string() + "\n";
  }
  CHECK(scanned > 50);       // the walk found the sources (a wrong root would pass vacuously)
  CHECK(wrapper_calls);      // and recognises the calls where they are
  CHECK(callers == "");
  CHECK(public_includes == "");
}
