// The workspace every front end (CLI, GUI, tests) opens first: the catalog directory, the
// SQLite database, and the catalog synced between them.
#pragma once

#include <filesystem>
#include <memory>

#include "capsim/core/result.hpp"
#include "capsim/hardware/catalog.hpp"
#include "capsim/hardware/store.hpp"

namespace capsim::scenarios {

struct WorkspaceOptions {
  // Catalog YAML directory. Empty: $CAPSIM_CATALOG, else the data directory capsim was
  // built with (<source>/data/catalog).
  std::filesystem::path catalog_dir;
  // Database file. Empty: hardware::default_db_path() ($CAPSIM_DB, XDG data dir).
  std::filesystem::path db_path;
  // read_only for commands that only read: the database is opened read-only when its
  // catalog is current (no write lock taken, works on a read-only file).
  hardware::Access access = hardware::Access::read_write;
  // The run history cannot be rebuilt, the catalog cache can: commands that read history
  // fail on a corrupt file, the others move it aside and rebuild (with a warning).
  hardware::OnCorrupt on_corrupt = hardware::OnCorrupt::rebuild;
};

struct Workspace {
  std::filesystem::path catalog_dir;
  hardware::Store store;
  std::shared_ptr<const hardware::Catalog> catalog;
  bool catalog_rebuilt = false;  // the YAML changed since the database last saw it
};

std::filesystem::path default_catalog_dir();

// Opens the database and loads the catalog into it when its YAML changed.
Result<Workspace> open_workspace(const WorkspaceOptions& options);

}  // namespace capsim::scenarios
