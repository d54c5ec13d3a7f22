// Loading the catalog from YAML (data/catalog/*.yaml; format in docs/catalog-format.md).
//
// The loader checks everything and reports every problem at once: unknown keys (with a
// "did you mean"), duplicate keys, wrong types and units, missing required fields, numbers
// without source/as_of, duplicate ids and references to ids that do not exist. Each
// diagnostic names file:line:column and the key path.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "capsim/core/result.hpp"
#include "capsim/hardware/catalog.hpp"

namespace capsim::hardware {

// One YAML document to load: `name` is what diagnostics print as the file.
struct CatalogSource {
  std::string name;
  std::string text;
};

// Loads and validates the given documents as one catalog.
Result<Catalog> load_catalog(const std::vector<CatalogSource>& sources);

// Reads every *.yaml / *.yml file directly in `dir` (sorted by name) and loads them.
Result<Catalog> load_catalog_dir(const std::filesystem::path& dir);

// The *.yaml files of a catalog directory, sorted; an error if there are none.
Result<std::vector<CatalogSource>> read_catalog_dir(const std::filesystem::path& dir);

// A stable content hash (FNV-1a 64, hex) of the sources, names included.
std::string catalog_hash(const std::vector<CatalogSource>& sources);

}  // namespace capsim::hardware
