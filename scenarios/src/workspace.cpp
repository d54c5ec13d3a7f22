#include "capsim/scenarios/workspace.hpp"

#include <cstdlib>

#include "capsim/hardware/loader.hpp"

namespace capsim::scenarios {

namespace fs = std::filesystem;

Result<DataDir> find_data_dir(const fs::path& given) {
  auto checked = [](fs::path dir, std::string found_by) -> Result<DataDir> {
    std::error_code ec;
    if (fs::is_directory(dir / "catalog", ec)) return DataDir{std::move(dir), std::move(found_by)};
    return environment_failure(
        {{}, found_by,
         "no capsim data directory at '" + dir.string() + "' (it holds catalog/, validation/ and examples/)",
         "pass --data DIR or set CAPSIM_DATA to the installed share/capsim"});
  };
  if (!given.empty()) return checked(given, "--data");
  if (const char* dir = std::getenv("CAPSIM_DATA"); dir && *dir) return checked(dir, "$CAPSIM_DATA");
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec)
    return environment_failure({{}, "", "cannot find the running executable to locate capsim's data: " + ec.message(),
                                "pass --data DIR or set CAPSIM_DATA"});
  // CAPSIM_DATA_RELATIVE: the install's data directory relative to its bin directory.
  return checked((exe.parent_path() / CAPSIM_DATA_RELATIVE).lexically_normal(), "beside the executable");
}

Result<fs::path> default_catalog_dir(const fs::path& data_dir) {
  if (const char* dir = std::getenv("CAPSIM_CATALOG"); dir && *dir) return fs::path(dir);
  auto data = find_data_dir(data_dir);
  if (!data) return data.errors();
  return data->path / "catalog";
}

Result<Workspace> open_workspace(const WorkspaceOptions& options) {
  fs::path catalog_dir = options.catalog_dir;
  if (catalog_dir.empty()) {
    auto dir = default_catalog_dir(options.data_dir);
    if (!dir) return dir.errors();
    catalog_dir = *dir;
  }
  const auto db_path = options.db_path.empty() ? hardware::default_db_path() : options.db_path;
  auto sources = hardware::read_catalog_dir(catalog_dir);
  if (!sources) return sources.errors();
  auto store = hardware::Store::open(db_path, options.access, options.on_corrupt);
  if (!store) return store.errors();
  if (store.value().read_only() && store.value().stored_catalog_hash() != hardware::catalog_hash(*sources)) {
    // The catalog YAML changed: store it, the one write a read-only command makes, where the
    // database can be written. Where it cannot (a read-only mount, another user's folder, a
    // full disk), the read-only store gives the YAML's catalog without storing it.
    if (auto writable = hardware::Store::open(db_path, hardware::Access::read_write, options.on_corrupt)) {
      bool rebuilt = false;
      if (auto catalog = writable.value().sync_catalog(*sources, &rebuilt))
        return Workspace{catalog_dir, std::move(writable).value(),
                         std::make_shared<const hardware::Catalog>(std::move(catalog).value()), rebuilt};
    }
  }
  bool rebuilt = false;
  auto catalog = store.value().sync_catalog(*sources, &rebuilt);
  if (!catalog) return catalog.errors();
  return Workspace{catalog_dir, std::move(store).value(),
                   std::make_shared<const hardware::Catalog>(std::move(catalog).value()), rebuilt};
}

}  // namespace capsim::scenarios
