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
  // An overlay (a user's own quotes, --catalog-overlay): loaded after every non-overlay
  // source, in the given order. An entry whose id the catalog already has (same kind) names
  // only the fields it changes, which replace the catalog's; an entry with a new id is a whole
  // entry like any other. Its figures need `source` and `as_of` as everywhere, and each keeps
  // the overlay's name in Provenance::overlay so outputs can mark it as the user's.
  bool overlay = false;
};

// Loads and validates the given documents as one catalog (the catalog's sources, then the
// overlays among them).
Result<Catalog> load_catalog(const std::vector<CatalogSource>& sources);

// Reads every *.yaml / *.yml file directly in `dir` (sorted by name) and loads them.
Result<Catalog> load_catalog_dir(const std::filesystem::path& dir);

// The *.yaml files of a catalog directory, sorted; an error if there are none.
Result<std::vector<CatalogSource>> read_catalog_dir(const std::filesystem::path& dir);

// The YAML files of an overlay: a directory's *.yaml files (sorted), or one YAML file; each
// marked as an overlay. An error when there are none or one cannot be read.
Result<std::vector<CatalogSource>> read_overlay(const std::filesystem::path& dir_or_file);

// A stable content hash (FNV-1a 64, hex) of the sources, names and overlay marks included:
// the SQLite cache rebuilds when an overlay's text changes.
std::string catalog_hash(const std::vector<CatalogSource>& sources);

}  // namespace capsim::hardware
