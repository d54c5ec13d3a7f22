#include "catalog_command.hpp"

#include <filesystem>
#include <memory>

#include "capsim/core/suggest.hpp"
#include "capsim/hardware/loader.hpp"
#include "capsim/hardware/query.hpp"
#include "capsim/scenarios/catalog_views.hpp"
#include "capsim/scenarios/workspace.hpp"

namespace capsim::cli {
namespace {

using hardware::EntityKind;

struct ListOptions {
  std::string kind;
  std::vector<std::string> where;
  std::string sort;
  bool descending = false;
  bool all_fields = false;
  Format format = Format::table;
};

struct ShowOptions {
  std::string id;
  Format format = Format::table;
};

struct ValidateOptions {
  std::string path;
  Format format = Format::table;
};

Result<scenarios::Workspace> open(const GlobalOptions& g) {
  return scenarios::open_workspace({g.catalog_dir, g.db_path});
}

Result<EntityKind> parse_kind(const std::string& text) {
  std::vector<std::string> names;
  for (auto k : hardware::kAllKinds) {
    names.emplace_back(hardware::section_name(k));
    if (text == hardware::section_name(k) || text == hardware::kind_name(k)) return k;
  }
  return Diagnostic{{}, "", "unknown catalog section '" + text + "'", did_you_mean(text, names)};
}

int run_summary(const scenarios::Workspace& ws, Format format) {
  scenarios::Table t{{"section", "entries"}, {}, {false, true}};
  for (auto k : hardware::kAllKinds)
    t.rows.push_back({std::string(hardware::section_name(k)), std::to_string(ws.catalog->all(k).size())});
  if (format == Format::json) {
    std::cout << "{";
    for (std::size_t i = 0; i < t.rows.size(); ++i)
      std::cout << (i ? ", " : "") << "\"" << t.rows[i][0] << "\": " << t.rows[i][1];
    std::cout << "}\n";
  } else {
    print_table(t, format);
  }
  return kExitOk;
}

int run_list(const GlobalOptions& g, const ListOptions& o) {
  auto ws = open(g);
  if (!ws) return report_errors(ws.errors());
  if (o.kind.empty()) return run_summary(*ws, o.format);
  auto kind = parse_kind(o.kind);
  if (!kind) return report_errors(kind.errors());
  hardware::Query query;
  std::vector<Diagnostic> errors;
  for (const auto& w : o.where) {
    auto f = hardware::parse_filter(*kind, w);
    if (f) query.filters.push_back(*f);
    else
      for (auto d : f.errors()) errors.push_back({{}, "--where", d.message, d.hint});
  }
  query.sort_by = o.sort;
  query.descending = o.descending;
  if (!errors.empty()) return report_errors(errors);
  auto rows = hardware::run_query(*ws->catalog, *kind, query);
  if (!rows) {
    for (auto d : rows.errors()) errors.push_back({{}, "--sort", d.message, d.hint});
    return report_errors(errors);
  }
  if (o.format == Format::json) {
    std::cout << scenarios::entities_json(*rows);
  } else {
    print_table(scenarios::entities_table(*kind, *rows, o.all_fields || o.format == Format::csv), o.format);
  }
  return kExitOk;
}

int run_show(const GlobalOptions& g, const ShowOptions& o) {
  auto ws = open(g);
  if (!ws) return report_errors(ws.errors());
  const hardware::Entity* e = ws->catalog->find(o.id);
  if (e == nullptr) {
    std::vector<std::string> ids;
    for (auto k : hardware::kAllKinds)
      for (auto& id : ws->catalog->ids(k)) ids.push_back(id);
    return report_errors({{{}, "", "no catalog entry with id '" + o.id + "'", did_you_mean(o.id, ids)}});
  }
  if (o.format == Format::json) std::cout << scenarios::entity_json(*e);
  else {
    print_table(scenarios::entity_table(*e), o.format);
    if (o.format == Format::table) {
      if (const auto notes = e->text("notes"); !notes.empty()) std::cout << "\nnotes: " << notes << "\n";
      std::cout << "defined at " << e->where.file << ":" << e->where.line << "\n";
    }
  }
  return kExitOk;
}

int run_validate(const GlobalOptions& g, const ValidateOptions& o) {
  const std::filesystem::path path = o.path.empty()
      ? (g.catalog_dir.empty() ? scenarios::default_catalog_dir() : std::filesystem::path(g.catalog_dir))
      : std::filesystem::path(o.path);
  Result<hardware::Catalog> catalog = [&]() -> Result<hardware::Catalog> {
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec)) {
      auto dir = hardware::read_catalog_dir(path.parent_path().empty() ? "." : path.parent_path());
      // A single file is validated on its own, except that its references may name
      // entries of the other files in its directory.
      if (!dir) return dir.errors();
      return hardware::load_catalog(*dir);
    }
    return hardware::load_catalog_dir(path);
  }();
  if (!catalog) return report_errors(catalog.errors());
  scenarios::Table t{{"section", "entries"}, {}, {false, true}};
  for (auto k : hardware::kAllKinds)
    t.rows.push_back({std::string(hardware::section_name(k)), std::to_string(catalog->all(k).size())});
  if (o.format == Format::json) {
    std::cout << "{\"valid\": true, \"entries\": " << catalog->size() << ", \"hash\": \"" << catalog->content_hash
              << "\"}\n";
  } else {
    std::cout << path.string() << ": valid, " << catalog->size() << " entries\n";
    print_table(t, o.format);
  }
  return kExitOk;
}

}  // namespace

void add_catalog_command(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto* catalog = app.add_subcommand("catalog", "Browse and check the hardware catalog");
  catalog->require_subcommand(1);

  auto list_options = std::make_shared<ListOptions>();
  auto* list = catalog->add_subcommand("list", "List catalog entries, filtered and sorted");
  list->add_option("section", list_options->kind,
                   "gpus, cpus, interconnects, networks, servers, instances or facilities "
                   "(omit for a count per section)");
  list->add_option("--where,-w", list_options->where,
                   "Filter FIELD OP VALUE, e.g. 'memory>=40 GB', 'vendor=nvidia' (repeatable)");
  list->add_option("--sort,-s", list_options->sort, "Sort by this field (e.g. memory_bandwidth)");
  list->add_flag("--desc", list_options->descending, "Sort in descending order");
  list->add_flag("--all-fields", list_options->all_fields, "Show every field as a column");
  add_format_option(*list, list_options->format, {"table", "json", "csv", "md"});
  list->callback([&global, &exit_code, list_options] { exit_code = run_list(global, *list_options); });

  auto show_options = std::make_shared<ShowOptions>();
  auto* show = catalog->add_subcommand("show", "Show one entry with the source of every number");
  show->add_option("id", show_options->id, "Entry id, e.g. h100-sxm-80gb")->required();
  add_format_option(*show, show_options->format, {"table", "json", "csv", "md"});
  show->callback([&global, &exit_code, show_options] { exit_code = run_show(global, *show_options); });

  auto validate_options = std::make_shared<ValidateOptions>();
  auto* validate = catalog->add_subcommand("validate", "Check a catalog directory (all errors at once)");
  validate->add_option("path", validate_options->path, "Catalog directory or file (default: the shipped catalog)");
  add_format_option(*validate, validate_options->format, {"table", "json"});
  validate->callback(
      [&global, &exit_code, validate_options] { exit_code = run_validate(global, *validate_options); });
}

}  // namespace capsim::cli
