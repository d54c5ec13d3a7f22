#include "capsim/hardware/store.hpp"

#include "capsim/hardware/sqlite.hpp"

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <optional>
#include <sstream>

namespace capsim::hardware {
namespace {

constexpr int kSchemaVersion = 3;

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entities(
  id TEXT PRIMARY KEY, kind TEXT NOT NULL, ord INTEGER NOT NULL,
  file TEXT, line INTEGER, col INTEGER);
CREATE TABLE IF NOT EXISTS field_values(
  entity_id TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
  field TEXT NOT NULL, type INTEGER NOT NULL, text TEXT, number REAL,
  dim TEXT, currency INTEGER, items TEXT, source TEXT, as_of TEXT, line INTEGER, col INTEGER,
  overlay TEXT,
  PRIMARY KEY(entity_id, field));
CREATE TABLE IF NOT EXISTS calibration_profiles(
  id INTEGER PRIMARY KEY, gpu_id TEXT NOT NULL, device_name TEXT NOT NULL,
  measured_at TEXT NOT NULL, imported_at TEXT NOT NULL, profile_json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS calibration_measurements(
  profile_id INTEGER NOT NULL REFERENCES calibration_profiles(id) ON DELETE CASCADE,
  kind TEXT NOT NULL, parameters TEXT NOT NULL, median REAL NOT NULL, spread REAL, unit TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs(
  id INTEGER PRIMARY KEY, started_at TEXT NOT NULL, scenario TEXT NOT NULL,
  scenario_resolved TEXT NOT NULL, catalog_hash TEXT NOT NULL, capsim_version TEXT NOT NULL,
  status TEXT NOT NULL, results_json TEXT NOT NULL);
)sql";

// An error of the database, with SQLite's own message: read it before anything else (a
// ROLLBACK) replaces it.
Diagnostic db_error(sqlite3* db, const std::filesystem::path& path, const std::string& what) {
  return environment_failure(
      Diagnostic{{path.string()}, "", what + ": " + sqlite::errmsg(db), ""});
}

using sqlite::Statement;
using sqlite::Step;
using sqlite::exec;

std::string dim_text(Dim d) {
  std::ostringstream out;
  out << d.bytes << ',' << d.seconds << ',' << d.ops << ',' << d.watts << ',' << d.money;
  return out.str();
}

Dim dim_from_text(const std::string& s) {
  Dim d;
  char comma;
  std::istringstream in(s);
  in >> d.bytes >> comma >> d.seconds >> comma >> d.ops >> comma >> d.watts >> comma >> d.money;
  return d;
}

std::string join_lines(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += i + '\n';
  return out;
}

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Runs a query whose rows are one text column each; nullopt (SQLite's message left in the
// connection) when a step fails: a corrupt page is an error, never the end of the data.
std::optional<std::vector<std::string>> text_rows(sqlite3* db, const char* sql) {
  Statement q(db, sql);
  if (!q.ok()) return std::nullopt;
  std::vector<std::string> rows;
  Step rc;
  while ((rc = q.step()) == Step::row) rows.push_back(q.text(0));
  if (rc != Step::done) return std::nullopt;
  return rows;
}

// "ok", or what PRAGMA quick_check found (its first lines). `cannot_check` is set when the
// check itself could not run for another reason than corruption (not a database at all, an
// I/O error, a full disk): that file is never moved aside, the error is reported instead.
std::string quick_check(sqlite3* db, bool* cannot_check) {
  auto rows = text_rows(db, "PRAGMA quick_check(3);");
  *cannot_check = !rows && sqlite::primary_errcode(db) != SQLITE_CORRUPT;
  if (!rows) return sqlite::errmsg(db);
  std::string out;
  for (const auto& r : *rows) out += (out.empty() ? "" : "; ") + r;
  return out;
}

// The schema_version stored in meta; 0 when the file has no meta table yet (new file);
// nullopt with SQLite's message on a read error.
std::optional<int> stored_schema_version(sqlite3* db) {
  auto tables = text_rows(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'meta';");
  if (!tables) return std::nullopt;
  if (tables->empty()) return 0;
  auto version = text_rows(db, "SELECT value FROM meta WHERE key = 'schema_version';");
  if (!version) return std::nullopt;
  if (version->empty()) return 0;
  try {
    return std::stoi(version->front());
  } catch (const std::exception&) {
    return 0;
  }
}

std::string utc_stamp() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y%m%dT%H%M%SZ", &tm);
  return buffer;
}

// Moves a corrupt database (and its WAL files) aside; returns the new name.
std::filesystem::path move_aside(const std::filesystem::path& path) {
  const std::filesystem::path aside = path.string() + ".corrupt-" + utc_stamp();
  std::error_code ec;
  std::filesystem::rename(path, aside, ec);
  for (const char* suffix : {"-wal", "-shm"}) {
    std::error_code ignored;
    std::filesystem::rename(path.string() + suffix, aside.string() + suffix, ignored);
  }
  return ec ? std::filesystem::path() : aside;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

// The parameters of a measurement as a small JSON object, for the measurements table.
// Sizes are whole numbers stored as doubles; they are written as integers.
std::string parameters_json(const CalibrationMeasurement& m) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  auto size = [&](const char* key, double value) {
    if (value > 0) out[key] = static_cast<std::int64_t>(std::llround(value));
  };
  if (!m.precision.empty()) out["precision"] = m.precision;
  size("m", m.m);
  size("n", m.n);
  size("k", m.k);
  size("bytes", m.bytes);
  if (m.pinned) out["pinned"] = *m.pinned;
  if (m.src >= 0) out["src"] = m.src;
  if (m.dst >= 0) out["dst"] = m.dst;
  if (m.ranks > 0) out["ranks"] = m.ranks;
  if (!m.mode.empty()) out["mode"] = m.mode;
  return out.dump();
}

// errno of the reason the database at `path` cannot be written here, 0 when it can: the file
// itself, and its folder (the nearest that exists when it must be made), where SQLite creates
// its -wal and -shm files unless both are there and writable already.
int write_blocker(const std::filesystem::path& path) {
  auto writable = [](const std::filesystem::path& p) {
    return ::faccessat(AT_FDCWD, p.c_str(), W_OK, AT_EACCESS) == 0;
  };
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    if (!writable(path)) return errno;
    const std::filesystem::path wal = path.string() + "-wal", shm = path.string() + "-shm";
    if (std::filesystem::exists(wal, ec) && std::filesystem::exists(shm, ec) && writable(wal) && writable(shm))
      return 0;
  }
  std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  while (!std::filesystem::exists(dir, ec) && dir.has_parent_path() && dir != dir.parent_path())
    dir = dir.parent_path();
  return writable(dir) ? 0 : errno;
}

// The URI that opens `path` immutable (no -wal or -shm files, no locks), for SQLITE_OPEN_URI.
// Characters URIs reserve are %-escaped.
std::string immutable_uri(const std::filesystem::path& path) {
  const std::string absolute = std::filesystem::absolute(path).string();
  std::string uri = "file:";
  for (unsigned char c : absolute) {
    if (std::isalnum(c) || std::strchr("/-._~", c) != nullptr) {
      uri += static_cast<char>(c);
    } else {
      char escaped[4];
      std::snprintf(escaped, sizeof escaped, "%%%02X", c);
      uri += escaped;
    }
  }
  return uri + "?mode=ro&immutable=1";
}

// Whether the last error on `db` is one of a reader that could not create or map the WAL
// index beside the database (read-only folder or mount, full disk), as opposed to a damaged
// or foreign file.
bool needs_side_files(sqlite3* db) {
  const int primary = sqlite::primary_errcode(db);
  return primary == SQLITE_CANTOPEN || primary == SQLITE_READONLY || primary == SQLITE_IOERR;
}

// The error for a database written by a newer capsim.
Diagnostic newer_schema(const std::filesystem::path& path, int version) {
  return environment_failure(Diagnostic{
      {path.string()}, "",
      "the database has schema version " + std::to_string(version) + ", newer than this capsim understands (" +
          std::to_string(kSchemaVersion) + "); it was left untouched",
      "use the capsim that wrote it, or another --db"});
}

// Creates the tables and brings a database of schema `version` (0: new) to the current one,
// in one transaction.
Status migrate(sqlite3* db, const std::filesystem::path& path, int version) {
  if (version == kSchemaVersion) return {};
  // The error is read before the transaction's ROLLBACK (on return) can replace it.
  sqlite::Transaction transaction(db);
  if (!transaction.active()) return {db_error(db, path, "cannot start a transaction")};
  auto fail = [&](const std::string& what) { return Status{db_error(db, path, what)}; };
  if (!exec(db, kSchema)) return fail("cannot create the tables (is this a capsim database?)");
  // Version 2: runs carry the sweep point they belong to.
  bool has_sweep = false;
  {
    Statement columns(db, "PRAGMA table_info(runs);");
    if (!columns.ok()) return fail("cannot read the run history's columns");
    Step rc;
    while ((rc = columns.step()) == Step::row) has_sweep = has_sweep || columns.text(1) == "sweep";
    if (rc != Step::done) return fail("cannot read the run history's columns");
  }
  if (!has_sweep && !exec(db, "ALTER TABLE runs ADD COLUMN sweep TEXT NOT NULL DEFAULT '';"))
    return fail("cannot migrate the run history");
  // Version 3: a catalog figure names the overlay it came from (a user's quote). The cached
  // catalog is dropped; the next command stores it again from the YAML.
  bool has_overlay = false;
  {
    Statement columns(db, "PRAGMA table_info(field_values);");
    if (!columns.ok()) return fail("cannot read the catalog's columns");
    Step rc;
    while ((rc = columns.step()) == Step::row) has_overlay = has_overlay || columns.text(1) == "overlay";
    if (rc != Step::done) return fail("cannot read the catalog's columns");
  }
  if (!has_overlay && !exec(db,
                            "ALTER TABLE field_values ADD COLUMN overlay TEXT; "
                            "DELETE FROM meta WHERE key = 'catalog_hash';"))
    return fail("cannot migrate the catalog cache");
  Statement write_version(db, "INSERT OR REPLACE INTO meta(key, value) VALUES('schema_version', ?1);");
  if (!write_version.ok()) return fail("cannot write the schema version");
  write_version.bind(1, std::to_string(kSchemaVersion));
  if (write_version.step() != Step::done) return fail("cannot write the schema version");
  if (!transaction.commit()) return fail("cannot commit the schema");
  return {};
}

}  // namespace

std::filesystem::path default_db_path() {
  if (const char* db = std::getenv("CAPSIM_DB"); db && *db) return db;
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg)
    return std::filesystem::path(xdg) / "capsim" / "capsim.db";
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home && *home ? home : ".") / ".local" / "share" / "capsim" / "capsim.db";
}

int Store::schema_version() { return kSchemaVersion; }

Result<Store> Store::open(const std::filesystem::path& path, Access access, OnCorrupt on_corrupt) {
  std::error_code ec;
  const bool exists = std::filesystem::exists(path, ec);
  if (access == Access::read_only) {
    if (exists) return open_read_only(path, on_corrupt);
    // Nothing to read and nowhere to create it (a read-only mount, another user's folder, a
    // full disk): an empty database in memory answers as a new file would.
    if (write_blocker(path) != 0) return open_in_memory(path);
    auto created = open(path, Access::read_write, on_corrupt);
    return created ? std::move(created) : open_in_memory(path);
  }
  if (const int error = write_blocker(path); error != 0)
    return environment_failure(Diagnostic{{path.string()}, "", std::string("cannot write the database here: ") +
                                                                   std::strerror(error),
                                          "use a writable --db or $CAPSIM_DB"});
  if (!exists && path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  if (ec)
    return environment_failure(
        Diagnostic{{path.string()}, "", "cannot create the database directory: " + ec.message(), ""});
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.string().c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
    auto d = db_error(db, path, "cannot open the database");
    sqlite3_close(db);
    return d;
  }
  Store store(db, path);
  // Concurrent runs (a sweep's processes, CI jobs on one database) wait for each other's
  // writes; 10 s was too short for eight writers on a loaded 2-core machine.
  sqlite3_busy_timeout(db, 60000);
  if (!exec(db, "PRAGMA journal_mode=WAL;") || !exec(db, "PRAGMA foreign_keys=ON;") ||
      !exec(db, "PRAGMA synchronous=NORMAL;"))
    return db_error(db, path, "cannot configure the database (is this a capsim database?)");
  // A damaged page must not read as missing rows: check the file before trusting it.
  if (exists) {
    bool cannot_check = false;
    const std::string check = quick_check(db, &cannot_check);
    if (cannot_check) return db_error(db, path, "cannot open the database");
    if (check != "ok") return when_corrupt(std::move(store), check, on_corrupt);
  }
  const auto version = stored_schema_version(db);
  if (!version) return db_error(db, path, "cannot read the schema version");
  if (*version > kSchemaVersion) return newer_schema(path, *version);
  if (auto status = migrate(db, path, *version); !status.empty()) return status;
  return store;
}

// An existing file, opened read-only and never written: the lock other processes take to
// write is not needed, and a read-only file or folder is no obstacle. SQLite's WAL mode
// keeps its index in a -shm file beside the database that even a reader creates; where that
// cannot be (a read-only mount, another user's folder, a full disk) the file is opened
// immutable, without side files or locks (the database then cannot change under it there).
Result<Store> Store::open_read_only(const std::filesystem::path& path, OnCorrupt on_corrupt) {
  auto connect = [&](bool immutable) -> Result<Store> {
    sqlite3* db = nullptr;
    const std::string name = immutable ? immutable_uri(path) : path.string();
    const int flags = SQLITE_OPEN_READONLY | (immutable ? SQLITE_OPEN_URI : 0);
    if (sqlite3_open_v2(name.c_str(), &db, flags, nullptr) != SQLITE_OK) {
      auto d = db_error(db, path, "cannot open the database");
      sqlite3_close(db);
      return d;
    }
    Store store(db, path);
    store.read_only_ = true;
    sqlite3_busy_timeout(db, 60000);
    return store;
  };
  auto opened = connect(false);
  if (!opened) return opened;
  Store store = std::move(opened).value();
  bool cannot_check = false;
  std::string check = quick_check(store.db_, &cannot_check);
  if (cannot_check && needs_side_files(store.db_)) {
    auto immutable = connect(true);
    if (!immutable) return immutable;
    store = std::move(immutable).value();
    check = quick_check(store.db_, &cannot_check);
    // The log of a writer that stopped before folding it in is invisible to an immutable read.
    std::error_code ec;
    const std::filesystem::path wal = path.string() + "-wal";
    if (!cannot_check && std::filesystem::file_size(wal, ec) > 0 && !ec)
      store.warnings_.push_back(path.string() + ": warning: the database's write-ahead log (" + wal.string() +
                                ") cannot be read without writing beside it; the runs in it are not shown");
  }
  if (cannot_check) return db_error(store.db_, path, "cannot open the database");
  if (check != "ok") return when_corrupt(std::move(store), check, on_corrupt);
  const auto version = stored_schema_version(store.db_);
  if (!version) return db_error(store.db_, path, "cannot read the schema version");
  if (*version > kSchemaVersion) return newer_schema(path, *version);
  // An older schema: migrate it read-write (the one write a read-only command makes). A file
  // with no schema at all (created, then the disk was full) holds nothing to read.
  if (*version < kSchemaVersion) {
    auto migrated = open(path, Access::read_write, on_corrupt);
    return migrated || *version > 0 ? std::move(migrated) : open_in_memory(path);
  }
  return store;
}

// A new, empty database in memory, with the current schema, standing in for a file that does
// not exist and cannot be created. Read-only: what is stored in it would be lost.
Result<Store> Store::open_in_memory(const std::filesystem::path& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
    auto d = db_error(db, path, "cannot open the database");
    sqlite3_close(db);
    return d;
  }
  Store store(db, path);
  exec(db, "PRAGMA foreign_keys=ON;");
  if (auto status = migrate(db, path, 0); !status.empty()) return status;
  store.read_only_ = true;
  return store;
}

Result<Store> Store::when_corrupt(Store store, const std::string& check, OnCorrupt on_corrupt) {
  const std::filesystem::path path = store.path_;
  Diagnostic corrupt = environment_failure(Diagnostic{{path.string()}, "", "the database is corrupt (" + check + ")",
                                                      "restore it from a backup, or move it away to start a new one"});
  if (on_corrupt == OnCorrupt::fail) return corrupt;
  sqlite3_close(store.db_);
  store.db_ = nullptr;
  const auto aside = move_aside(path);
  if (aside.empty()) return corrupt;
  auto fresh = open(path, Access::read_write, OnCorrupt::fail);
  if (!fresh) return fresh;
  fresh.value().warnings_.push_back(path.string() + ": warning: the database was corrupt (" + check +
                                    "); moved it to " + aside.string() +
                                    " and rebuilt the catalog from the YAML; its run history and calibrations stay in "
                                    "the moved file");
  return fresh;
}

Store::Store(Store&& other) noexcept
    : db_(other.db_), path_(std::move(other.path_)), read_only_(other.read_only_), warnings_(std::move(other.warnings_)) {
  other.db_ = nullptr;
}

Store& Store::operator=(Store&& other) noexcept {
  if (this != &other) {
    sqlite3_close(db_);
    db_ = other.db_;
    path_ = std::move(other.path_);
    read_only_ = other.read_only_;
    warnings_ = std::move(other.warnings_);
    other.db_ = nullptr;
  }
  return *this;
}

Store::~Store() { sqlite3_close(db_); }

Result<std::string> Store::read_catalog_hash() const {
  auto rows = text_rows(db_, "SELECT value FROM meta WHERE key = 'catalog_hash';");
  if (!rows) return db_error(db_, path_, "cannot read the catalog hash");
  return rows->empty() ? std::string() : rows->front();
}

std::string Store::stored_catalog_hash() const {
  auto hash = read_catalog_hash();
  return hash ? *hash : std::string();
}

Status Store::save_catalog(const Catalog& catalog) {
  sqlite::Transaction transaction(db_);
  if (!transaction.active()) return {db_error(db_, path_, "cannot start a transaction")};
  auto fail = [&](const std::string& what) { return Status{db_error(db_, path_, what)}; };
  if (!exec(db_, "DELETE FROM field_values; DELETE FROM entities;")) return fail("cannot clear the catalog");
  Statement entity(db_, "INSERT INTO entities(id, kind, ord, file, line, col) VALUES(?1, ?2, ?3, ?4, ?5, ?6);");
  Statement field(db_,
                  "INSERT INTO field_values(entity_id, field, type, text, number, dim, currency, items, "
                  "source, as_of, line, col, overlay) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13);");
  if (!entity.ok() || !field.ok()) return fail("cannot prepare the catalog insert");
  for (auto kind : kAllKinds) {
    int ord = 0;
    for (const auto& e : catalog.all(kind)) {
      entity.reset();
      entity.bind(1, e.id);
      entity.bind(2, std::string(kind_name(kind)));
      entity.bind(3, ord++);
      entity.bind(4, e.where.file);
      entity.bind(5, e.where.line);
      entity.bind(6, e.where.column);
      if (entity.step() != Step::done) return fail("cannot store entity '" + e.id + "'");
      for (const auto& [name, v] : e.fields) {
        field.reset();
        field.bind(1, e.id);
        field.bind(2, name);
        field.bind(3, static_cast<int>(v.type));
        field.bind(4, v.text);
        field.bind(5, v.number);
        field.bind(6, dim_text(v.dim));
        field.bind(7, static_cast<int>(v.currency));
        field.bind(8, join_lines(v.items));
        if (v.provenance) {
          field.bind(9, v.provenance->source);
          field.bind(10, v.provenance->as_of);
        } else {
          field.bind_null(9);
          field.bind_null(10);
        }
        field.bind(11, v.where.line);
        field.bind(12, v.where.column);
        if (v.provenance && v.provenance->from_overlay()) field.bind(13, v.provenance->overlay);
        else field.bind_null(13);
        if (field.step() != Step::done) return fail("cannot store " + e.id + "." + name);
      }
    }
  }
  Statement hash(db_, "INSERT OR REPLACE INTO meta(key, value) VALUES('catalog_hash', ?1);");
  hash.bind(1, catalog.content_hash);
  if (!hash.ok() || hash.step() != Step::done) return fail("cannot store the catalog hash");
  if (!transaction.commit()) return fail("cannot commit the catalog");
  return {};
}

Result<Catalog> Store::load_catalog() const {
  auto stored = read_catalog_hash();
  if (!stored) return stored.errors();
  const std::string hash = *stored;
  if (hash.empty()) return Diagnostic{{path_.string()}, "", "the database holds no catalog yet", ""};
  Statement entities(db_, "SELECT id, kind, file, line, col FROM entities ORDER BY kind, ord;");
  Statement fields(db_,
                   "SELECT field, type, text, number, dim, currency, items, source, as_of, line, col, overlay "
                   "FROM field_values WHERE entity_id = ?1;");
  if (!entities.ok() || !fields.ok()) return db_error(db_, path_, "cannot read the catalog");
  std::map<EntityKind, std::vector<Entity>> by_kind;
  Step entity_rc;
  while ((entity_rc = entities.step()) == Step::row) {
    Entity e;
    e.id = entities.text(0);
    const std::string kind = entities.text(1);
    for (auto k : kAllKinds)
      if (kind_name(k) == kind) e.kind = k;
    e.where = {entities.text(2), entities.integer(3), entities.integer(4)};
    fields.reset();
    fields.bind(1, e.id);
    Step field_rc;
    while ((field_rc = fields.step()) == Step::row) {
      FieldValue v;
      v.type = static_cast<FieldType>(fields.integer(1));
      v.text = fields.text(2);
      v.number = fields.real(3);
      v.dim = dim_from_text(fields.text(4));
      v.currency = static_cast<Currency>(fields.integer(5));
      v.items = split_lines(fields.text(6));
      if (!fields.is_null(7))
        v.provenance = Provenance{fields.text(7), fields.text(8), fields.is_null(11) ? std::string() : fields.text(11)};
      v.where = {fields.is_null(11) ? e.where.file : fields.text(11), fields.integer(9), fields.integer(10)};
      e.fields.emplace(fields.text(0), std::move(v));
    }
    if (field_rc != Step::done) return db_error(db_, path_, "cannot read the catalog entry '" + e.id + "'");
    by_kind[e.kind].push_back(std::move(e));
  }
  if (entity_rc != Step::done) return db_error(db_, path_, "cannot read the catalog");
  Catalog catalog;
  for (auto k : kAllKinds)
    for (auto& e : by_kind[k]) catalog.add(std::move(e));
  catalog.content_hash = hash;
  if (auto status = attach_calibrations(catalog); !status.empty()) return status;
  return catalog;
}

Result<long long> Store::import_calibration(const CalibrationProfile& profile, const std::string& profile_json,
                                            const std::string& gpu_id) {
  sqlite::Transaction transaction(db_);
  if (!transaction.active()) return db_error(db_, path_, "cannot start a transaction");
  auto fail = [&](const std::string& what) -> Result<long long> { return db_error(db_, path_, what); };
  Statement insert(db_,
                   "INSERT INTO calibration_profiles(gpu_id, device_name, measured_at, imported_at, profile_json) "
                   "VALUES(?1, ?2, ?3, ?4, ?5);");
  if (!insert.ok()) return fail("cannot prepare the calibration insert");
  insert.bind(1, gpu_id);
  insert.bind(2, profile.device.name);
  insert.bind(3, profile.measured_at);
  insert.bind(4, utc_now());
  insert.bind(5, profile_json);
  if (insert.step() != Step::done) return fail("cannot store the calibration profile");
  const long long id = sqlite::last_insert_rowid(db_);
  Statement row(db_,
                "INSERT INTO calibration_measurements(profile_id, kind, parameters, median, spread, unit) "
                "VALUES(?1, ?2, ?3, ?4, ?5, ?6);");
  if (!row.ok()) return fail("cannot prepare the measurement insert");
  for (const auto& m : profile.measurements) {
    row.reset();
    row.bind(1, static_cast<std::int64_t>(id));
    row.bind(2, m.kind);
    row.bind(3, parameters_json(m));
    row.bind(4, m.median);
    row.bind(5, m.max - m.min);
    row.bind(6, m.unit);
    if (row.step() != Step::done) return fail("cannot store a calibration measurement");
  }
  if (!transaction.commit()) return fail("cannot commit the calibration profile");
  return id;
}

std::optional<MeasuredFigures> Store::calibration_for(std::string_view gpu_id) const {
  Statement q(db_,
              "SELECT profile_json FROM calibration_profiles WHERE gpu_id = ?1 "
              "ORDER BY measured_at DESC, id DESC LIMIT 1;");
  if (!q.ok()) return std::nullopt;
  q.bind(1, std::string(gpu_id));
  if (q.step() != Step::row) return std::nullopt;  // read errors: attach_calibrations checks first
  auto profile = parse_calibration_profile(q.text(0));
  if (!profile) return std::nullopt;  // validated on import; only a hand-edited database fails here
  return measured_figures(*profile);
}

std::vector<std::string> Store::calibrated_gpus() const {
  auto ids = text_rows(db_, "SELECT DISTINCT gpu_id FROM calibration_profiles ORDER BY gpu_id;");
  return ids ? *ids : std::vector<std::string>{};
}

Status Store::attach_calibrations(Catalog& catalog) const {
  auto ids = text_rows(db_, "SELECT DISTINCT gpu_id FROM calibration_profiles ORDER BY gpu_id;");
  if (!ids) return {db_error(db_, path_, "cannot read the calibrations")};
  // Every stored profile must read back; a corrupt row is an error, not "no calibration".
  if (!text_rows(db_, "SELECT length(profile_json) FROM calibration_profiles;"))
    return {db_error(db_, path_, "cannot read the calibrations")};
  for (const auto& id : *ids)
    if (catalog.find_gpu(id) != nullptr)
      if (auto figures = calibration_for(id)) catalog.set_measured(id, std::move(*figures));
  return {};
}

Result<Catalog> Store::sync_catalog(const std::vector<CatalogSource>& sources, bool* rebuilt) {
  const std::string wanted = catalog_hash(sources);
  if (rebuilt) *rebuilt = false;
  auto stored = read_catalog_hash();
  if (!stored) return stored.errors();
  if (*stored == wanted) return load_catalog();
  auto catalog = hardware::load_catalog(sources);
  if (!catalog) return catalog.errors();
  // Read-only: the database stays as it is (the YAML is checked again next time).
  if (!read_only_)
    if (auto status = save_catalog(*catalog); !status.empty()) return status;
  if (rebuilt) *rebuilt = true;
  if (auto status = attach_calibrations(catalog.value()); !status.empty()) return status;
  return catalog;
}

}  // namespace capsim::hardware
