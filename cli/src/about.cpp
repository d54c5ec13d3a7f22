#include "about.hpp"

#include <fmt/format.h>

#include "capsim/git_commit.hpp"
#include "capsim/hardware/loader.hpp"
#include "capsim/scenarios/workspace.hpp"
#include "capsim/version.hpp"

namespace capsim::cli {

VersionReport version_report(const GlobalOptions& g) {
  VersionReport r;
  r.text = fmt::format("capsim {}\ncommit   {}\n", CAPSIM_VERSION, CAPSIM_GIT_COMMIT);
  auto data = scenarios::find_data_dir(g.data_dir);
  if (data) r.text += fmt::format("data     {} ({})\n", data->path.string(), data->found_by);
  std::filesystem::path catalog_dir = g.catalog_dir;
  if (catalog_dir.empty()) {
    auto dir = scenarios::default_catalog_dir(g.data_dir);
    if (!dir) {
      r.text += "data     not found: " + format_diagnostics(dir.errors());
      r.exit_code = kExitEnvironment;
      return r;
    }
    catalog_dir = *dir;
  }
  auto catalog = hardware::load_catalog_dir(catalog_dir);
  if (!catalog) {
    r.text += "catalog  " + catalog_dir.string() + ": cannot be loaded\n" + format_diagnostics(catalog.errors());
    r.exit_code = kExitEnvironment;
    return r;
  }
  // The newest as_of of any figure: how current the prices and specs are at best.
  std::string newest;
  for (auto kind : hardware::kAllKinds)
    for (const auto& e : catalog->all(kind))
      for (const auto& [name, field] : e.fields)
        if (field.provenance && field.provenance->as_of > newest) newest = field.provenance->as_of;
  r.text += fmt::format("catalog  {} ({} entries, newest figure as of {})\n", catalog_dir.string(), catalog->size(),
                        newest.empty() ? "unknown" : newest);
  return r;
}

}  // namespace capsim::cli
