// The SQLite database: the catalog as loaded from YAML (rebuilt when the YAML changes),
// and the tables that calibration measurements and run history fill.
//
// A Store owns one connection; it is movable, not copyable, and not thread-safe (open one
// per thread). Several processes may use the same file: the database runs in WAL mode,
// every write is one transaction, and a writer waits up to 60 s for another's lock.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "capsim/core/result.hpp"
#include "capsim/hardware/calibration.hpp"
#include "capsim/hardware/catalog.hpp"
#include "capsim/hardware/loader.hpp"

struct sqlite3;

namespace capsim::hardware {

// $CAPSIM_DB if set, else $XDG_DATA_HOME/capsim/capsim.db, else ~/.local/share/capsim/capsim.db.
std::filesystem::path default_db_path();

// How a command uses the database.
enum class Access {
  // Reads only, and never fails for want of a place to write: an existing file with the
  // current schema is opened SQLITE_OPEN_READONLY, immutable (no -wal/-shm files, no locks)
  // where its folder cannot take SQLite's side files (a read-only mount, another user's
  // folder, a full disk); a missing file that cannot be created is an empty database in
  // memory. Store::read_only() is true for all of these.
  read_only,
  read_write,  // creates, migrates and writes; an error where the file or its folder is not writable
};

// What to do when `PRAGMA quick_check` finds the file corrupt.
enum class OnCorrupt {
  fail,     // an error naming the file (for commands that read what cannot be rebuilt: history)
  rebuild,  // move the file aside to <file>.corrupt-<time> and start a new one (a warning says so)
};

class Store {
 public:
  // Opens (creating if needed, with parent directories) and migrates the schema. Every
  // failure is a diagnostic with Cause::environment naming the file and SQLite's own
  // message: cannot write here (read_write), cannot open, not a database, corrupt
  // (quick_check), or a schema_version newer than this capsim knows (refused, the file
  // untouched). With Access::read_only an existing file with the current schema is opened
  // read-only and never written (see Access); an older one is migrated read-write first, and
  // a missing one created where it can be.
  static Result<Store> open(const std::filesystem::path& path, Access access = Access::read_write,
                            OnCorrupt on_corrupt = OnCorrupt::fail);
  // The schema version this capsim writes and understands.
  static int schema_version();

  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;
  ~Store();

  // Returns the catalog for `sources`: read from the database when it was stored from the
  // same content, otherwise validated from the YAML and stored (rebuilt) first; a read-only
  // store keeps the database as it is and returns the YAML's catalog with the stored
  // calibrations attached. `rebuilt` (optional) is true when the catalog came from the YAML.
  // YAML errors come back as diagnostics.
  Result<Catalog> sync_catalog(const std::vector<CatalogSource>& sources, bool* rebuilt = nullptr);

  // Replaces the stored catalog in one transaction.
  Status save_catalog(const Catalog& catalog);
  // Reads the stored catalog back, with the newest calibration of each GPU attached
  // (Catalog::set_measured); an error if none was stored. sync_catalog attaches them too.
  Result<Catalog> load_catalog() const;
  // The content hash of the stored catalog, "" if none.
  std::string stored_catalog_hash() const;

  // Stores a validated profile for catalog GPU `gpu_id` (the caller matched it, see
  // match_calibration_gpu), with one row per measurement, in one transaction. Returns the
  // profile's row id. `profile_json` is the file's text, kept as imported.
  Result<long long> import_calibration(const CalibrationProfile& profile, const std::string& profile_json,
                                       const std::string& gpu_id);
  // The figures of the newest profile (latest measured_at, then latest import) stored for
  // the GPU; nullopt when there is none or it no longer parses.
  std::optional<MeasuredFigures> calibration_for(std::string_view gpu_id) const;
  // GPU ids that have at least one stored profile.
  std::vector<std::string> calibrated_gpus() const;

  const std::filesystem::path& path() const { return path_; }
  // Opened with Access::read_only (and not migrated): nothing is written to the file.
  bool read_only() const { return read_only_; }
  // Things the user should know that did not stop the open (a corrupt file moved aside).
  const std::vector<std::string>& warnings() const { return warnings_; }
  sqlite3* handle() const { return db_; }  // for the other tables' owners (history, calibration)

 private:
  static Result<Store> open_read_only(const std::filesystem::path& path, OnCorrupt on_corrupt);
  static Result<Store> open_in_memory(const std::filesystem::path& path);
  // A file quick_check found damaged: an error, or moved aside and a new one opened.
  static Result<Store> when_corrupt(Store store, const std::string& check, OnCorrupt on_corrupt);
  Status attach_calibrations(Catalog& catalog) const;
  Result<std::string> read_catalog_hash() const;
  Store(sqlite3* db, std::filesystem::path path) : db_(db), path_(std::move(path)) {}
  sqlite3* db_ = nullptr;
  std::filesystem::path path_;
  bool read_only_ = false;
  std::vector<std::string> warnings_;
};

}  // namespace capsim::hardware
