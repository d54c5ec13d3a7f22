// The workspace every front end (CLI, GUI, tests) opens first: the catalog directory, the
// SQLite database, and the catalog synced between them.
#pragma once

#include <filesystem>
#include <memory>
#include <vector>

#include "capsim/core/result.hpp"
#include "capsim/hardware/catalog.hpp"
#include "capsim/hardware/loader.hpp"
#include "capsim/hardware/store.hpp"

namespace capsim::scenarios {

struct WorkspaceOptions {
  // Catalog YAML directory. Empty: $CAPSIM_CATALOG, else <data directory>/catalog.
  std::filesystem::path catalog_dir;
  // Database file. Empty: hardware::default_db_path() ($CAPSIM_DB, XDG data dir).
  std::filesystem::path db_path;
  // read_only for commands that only read: the database is opened read-only (no write lock
  // taken), and the catalog stored only when its YAML changed and the file can be written;
  // a read-only file, folder or mount, or a full disk, is no error (see hardware::Access).
  hardware::Access access = hardware::Access::read_write;
  // The run history cannot be rebuilt, the catalog cache can: commands that read history
  // fail on a corrupt file, the others move it aside and rebuild (with a warning).
  hardware::OnCorrupt on_corrupt = hardware::OnCorrupt::rebuild;
  // The data directory (--data). Empty: find_data_dir's default.
  std::filesystem::path data_dir;
  // Catalog overlays (--catalog-overlay, a scenario's catalog.overlays): directories of YAML
  // files, or single files, loaded on top of the catalog in this order, after those named
  // by $CAPSIM_CATALOG_OVERLAY (':'-separated). See hardware::CatalogSource::overlay.
  std::vector<std::filesystem::path> overlays;
};

struct Workspace {
  std::filesystem::path catalog_dir;
  std::vector<std::filesystem::path> overlays;  // as loaded, $CAPSIM_CATALOG_OVERLAY's first
  hardware::Store store;
  std::shared_ptr<const hardware::Catalog> catalog;
  bool catalog_rebuilt = false;  // the YAML changed since the database last saw it
};

// capsim's data directory (catalog/, validation/, examples/): the one given (--data), else
// $CAPSIM_DATA, else the install layout beside the running executable, <bindir>/../share/capsim
// (in a build tree, build/share/capsim links to the source's data/). Never a path compiled in:
// an installed or moved copy finds its own data. Error: the directory has no catalog/.
struct DataDir {
  std::filesystem::path path;
  std::string found_by;  // "--data", "$CAPSIM_DATA" or "beside the executable"
};
Result<DataDir> find_data_dir(const std::filesystem::path& given = {});

// $CAPSIM_CATALOG, else <data directory>/catalog.
Result<std::filesystem::path> default_catalog_dir(const std::filesystem::path& data_dir = {});

// $CAPSIM_CATALOG_OVERLAY's paths (':'-separated, empty parts skipped), then `given`.
std::vector<std::filesystem::path> catalog_overlays(const std::vector<std::filesystem::path>& given = {});

// A scenario file's catalog.overlays, resolved against the file's folder; empty when it
// names none, or the file cannot be read or parsed (loading it reports that).
std::vector<std::filesystem::path> scenario_catalog_overlays(const std::filesystem::path& scenario_file);

// The catalog's YAML sources: the directory's files, then each overlay's (marked overlay).
Result<std::vector<hardware::CatalogSource>> catalog_sources(const std::filesystem::path& catalog_dir,
                                                             const std::vector<std::filesystem::path>& overlays);

// Opens the database and loads the catalog into it when its YAML (or an overlay) changed.
Result<Workspace> open_workspace(const WorkspaceOptions& options);

}  // namespace capsim::scenarios
