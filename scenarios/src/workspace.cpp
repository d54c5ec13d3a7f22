#include "capsim/scenarios/workspace.hpp"

#include <algorithm>
#include <cstdlib>

#include <yaml-cpp/yaml.h>

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

std::vector<fs::path> catalog_overlays(const std::vector<fs::path>& given) {
  std::vector<fs::path> out;
  if (const char* env = std::getenv("CAPSIM_CATALOG_OVERLAY"); env && *env) {
    const std::string list = env;
    for (std::size_t at = 0; at <= list.size();) {
      const std::size_t colon = std::min(list.find(':', at), list.size());
      if (colon > at) out.emplace_back(list.substr(at, colon - at));
      at = colon + 1;
    }
  }
  out.insert(out.end(), given.begin(), given.end());
  // One overlay named twice (the environment and a flag, a sweep's child) is loaded once.
  std::vector<fs::path> unique;
  std::vector<fs::path> seen;
  for (const auto& p : out) {
    std::error_code ec;
    fs::path key = fs::weakly_canonical(p, ec);
    if (ec) key = p.lexically_normal();
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
    seen.push_back(key);
    unique.push_back(p);
  }
  return unique;
}

std::vector<fs::path> scenario_catalog_overlays(const fs::path& scenario_file) {
  std::vector<fs::path> out;
  if (scenario_file.empty() || scenario_file == "-") return out;
  try {
    const YAML::Node root = YAML::LoadFile(scenario_file.string());
    const YAML::Node overlays = root.IsMap() && root["catalog"] && root["catalog"].IsMap() ? root["catalog"]["overlays"]
                                                                                          : YAML::Node();
    if (!overlays || !overlays.IsSequence()) return out;
    for (const auto& item : overlays)
      if (item.IsScalar() && !item.Scalar().empty()) {
        const fs::path p = item.Scalar();
        out.push_back(p.is_absolute() ? p : (scenario_file.parent_path() / p).lexically_normal());
      }
  } catch (const YAML::Exception&) {
    return {};  // the scenario loader reports it with its place
  }
  return out;
}

Result<std::vector<hardware::CatalogSource>> catalog_sources(const fs::path& catalog_dir,
                                                             const std::vector<fs::path>& overlays) {
  auto dir = hardware::read_catalog_dir(catalog_dir);
  if (!dir) return dir.errors();
  std::vector<hardware::CatalogSource> sources = std::move(dir).value();
  std::vector<Diagnostic> errors;
  for (const auto& overlay : overlays) {
    auto files = hardware::read_overlay(overlay);
    if (!files) {
      errors.insert(errors.end(), files.errors().begin(), files.errors().end());
      continue;
    }
    sources.insert(sources.end(), files->begin(), files->end());
  }
  if (!errors.empty()) return errors;
  return sources;
}

Result<Workspace> open_workspace(const WorkspaceOptions& options) {
  fs::path catalog_dir = options.catalog_dir;
  if (catalog_dir.empty()) {
    auto dir = default_catalog_dir(options.data_dir);
    if (!dir) return dir.errors();
    catalog_dir = *dir;
  }
  const auto db_path = options.db_path.empty() ? hardware::default_db_path() : options.db_path;
  const auto overlays = catalog_overlays(options.overlays);
  auto sources = catalog_sources(catalog_dir, overlays);
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
        return Workspace{catalog_dir, overlays, std::move(writable).value(),
                         std::make_shared<const hardware::Catalog>(std::move(catalog).value()), rebuilt};
    }
  }
  bool rebuilt = false;
  auto catalog = store.value().sync_catalog(*sources, &rebuilt);
  if (!catalog) return catalog.errors();
  return Workspace{catalog_dir, overlays, std::move(store).value(),
                   std::make_shared<const hardware::Catalog>(std::move(catalog).value()), rebuilt};
}

}  // namespace capsim::scenarios
