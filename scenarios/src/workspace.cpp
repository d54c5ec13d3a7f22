#include "capsim/scenarios/workspace.hpp"

#include <cstdlib>

#include "capsim/hardware/loader.hpp"

namespace capsim::scenarios {

std::filesystem::path default_catalog_dir() {
  if (const char* dir = std::getenv("CAPSIM_CATALOG"); dir && *dir) return dir;
  return std::filesystem::path(CAPSIM_DATA_DIR) / "catalog";
}

Result<Workspace> open_workspace(const WorkspaceOptions& options) {
  const auto catalog_dir = options.catalog_dir.empty() ? default_catalog_dir() : options.catalog_dir;
  const auto db_path = options.db_path.empty() ? hardware::default_db_path() : options.db_path;
  auto sources = hardware::read_catalog_dir(catalog_dir);
  if (!sources) return sources.errors();
  auto store = hardware::Store::open(db_path, options.access, options.on_corrupt);
  if (!store) return store.errors();
  if (store.value().read_only() && store.value().stored_catalog_hash() != hardware::catalog_hash(*sources)) {
    // The catalog YAML changed: store it, the one write a read-only command makes.
    store = hardware::Store::open(db_path, hardware::Access::read_write, options.on_corrupt);
    if (!store) return store.errors();
  }
  bool rebuilt = false;
  auto catalog = store.value().sync_catalog(*sources, &rebuilt);
  if (!catalog) return catalog.errors();
  return Workspace{catalog_dir, std::move(store).value(),
                   std::make_shared<const hardware::Catalog>(std::move(catalog).value()), rebuilt};
}

}  // namespace capsim::scenarios
