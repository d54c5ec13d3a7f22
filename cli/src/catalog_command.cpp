#include "catalog_command.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>

#include "capsim/core/files.hpp"
#include "capsim/core/suggest.hpp"
#include "capsim/core/text.hpp"
#include "capsim/hardware/calibration.hpp"
#include "capsim/hardware/loader.hpp"
#include "capsim/hardware/query.hpp"
#include "capsim/hardware/skypilot.hpp"
#include "capsim/scenarios/prices.hpp"
#include "capsim/scenarios/catalog_views.hpp"
#include "capsim/scenarios/workspace.hpp"
#include "completion.hpp"

namespace capsim::cli {
namespace {

// JSON as documents, never by concatenation (issue 47): a profile's device name is the user's
// text. Invalid UTF-8 is replaced, as every JSON output of capsim does.
std::string dump(const nlohmann::ordered_json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

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

struct ImportOptions {
  std::string path;
  std::string gpu;  // forced catalog GPU id; empty: match by device name and memory
  Format format = Format::table;
};

struct ValidateOptions {
  std::string path;
  Format format = Format::table;
};

struct CheckOptions {
  std::string max_age = "12mo";
  Format format = Format::table;
};

struct SkyPilotOptions {
  std::string dir;
  std::string output;
  std::string commit;
  std::string as_of;
  std::vector<std::string> regions;
  Format format = Format::table;
};

Result<scenarios::Workspace> open(const GlobalOptions& g, hardware::Access access) {
  return open_workspace(g, access);
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
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    for (auto k : hardware::kAllKinds) j[std::string(hardware::section_name(k))] = ws.catalog->all(k).size();
    std::cout << dump(j) << "\n";
  } else {
    print_table(t, format);
  }
  return kExitOk;
}

int run_list(const GlobalOptions& g, const ListOptions& o) {
  auto ws = open(g, hardware::Access::read_only);
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

// "989 TFLOP/s", "3.35 TB/s", "2.1 us": three significant digits with an SI prefix.
std::string si(double value, const char* unit) {
  static const struct {
    double scale;
    const char* prefix;
  } prefixes[] = {{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}, {1, ""}, {1e-3, "m"}, {1e-6, "u"}, {1e-9, "n"}};
  for (const auto& p : prefixes)
    if (std::abs(value) >= p.scale) return fmt::format("{:.3g} {}{}", value / p.scale, p.prefix, unit);
  return fmt::format("{:.3g} {}", value, unit);
}

// One row of the datasheet-vs-measured comparison; the datasheet side may be missing.
struct Comparison {
  std::string figure;
  std::optional<double> datasheet, measured;
  const char* unit;
  std::string measured_note;  // replaces the measured cell's text when set
  const hardware::GemmCurve* curve = nullptr;
};

std::vector<Comparison> comparisons(const hardware::Catalog& catalog, const hardware::Entity& e,
                                    const hardware::MeasuredFigures& m) {
  const hardware::GpuSpec spec = hardware::to_gpu_spec(e);
  std::vector<Comparison> rows;
  auto value = [](const auto& q) -> std::optional<double> {
    if (!q) return std::nullopt;
    return q->value();
  };
  for (auto p : hardware::kPrecisions) {
    const auto best = m.gemm_best.find(p);
    if (best == m.gemm_best.end()) continue;
    rows.push_back({"gemm." + std::string(p) + " best", value(spec.peak(p)), best->second.value(), "FLOP/s", ""});
    if (auto curve = m.gemm_curve.find(p); curve != m.gemm_curve.end()) {
      const auto& c = curve->second;
      rows.push_back({"gemm." + std::string(p) + " curve", std::nullopt, c.ceiling.value(), "FLOP/s",
                      fmt::format("{} x prod d/(d+{:.0f}) ({} points, rms {:.1f} %)", si(c.ceiling.value(), "FLOP/s"),
                                  c.half_saturation_dim, c.points, 100 * c.rms_relative_error),
                      &c});
    }
  }
  rows.push_back({"memory bandwidth (triad)",
                  spec.memory_bandwidth.value() > 0 ? std::optional(spec.memory_bandwidth.value()) : std::nullopt,
                  value(m.memory_bandwidth), "B/s", ""});
  std::optional<double> pcie;
  if (spec.pcie_generation)
    if (const auto* link =
            catalog.find(EntityKind::interconnect, fmt::format("pcie-gen{}-x16", *spec.pcie_generation)))
      pcie = value(link->quantity<BytesPerSecond>("bandwidth_per_direction"));
  rows.push_back({"pcie h2d pinned", pcie, value(m.h2d_pinned), "B/s", ""});
  rows.push_back({"pcie d2h pinned", pcie, value(m.d2h_pinned), "B/s", ""});
  rows.push_back({"pcie h2d pageable", pcie, value(m.h2d_pageable), "B/s", ""});
  rows.push_back({"pcie d2h pageable", pcie, value(m.d2h_pageable), "B/s", ""});
  std::optional<double> nvlink_per_direction;
  if (spec.nvlink_bandwidth) nvlink_per_direction = spec.nvlink_bandwidth->value() / 2;
  rows.push_back({"p2p per direction", nvlink_per_direction, value(m.p2p_bandwidth), "B/s", ""});
  rows.push_back({"p2p latency", std::nullopt, value(m.p2p_latency), "s", ""});
  rows.push_back({fmt::format("all-reduce bus bandwidth ({} GPUs)", m.collective_ranks), std::nullopt,
                  value(m.allreduce_bus_bandwidth), "B/s", ""});
  rows.push_back({fmt::format("all-gather bus bandwidth ({} GPUs)", m.collective_ranks), std::nullopt,
                  value(m.allgather_bus_bandwidth), "B/s", ""});
  rows.push_back({"kernel launch latency", std::nullopt, value(m.launch_latency), "s", ""});
  std::erase_if(rows, [](const Comparison& r) { return !r.measured; });
  return rows;
}

scenarios::Table side_by_side(const hardware::Catalog& catalog, const hardware::Entity& e,
                              const hardware::MeasuredFigures& m) {
  scenarios::Table t{{"figure", "datasheet", "measured", "measured/datasheet"}, {}, {false, true, true, true}};
  for (const auto& r : comparisons(catalog, e, m)) {
    const std::string ratio = r.datasheet && *r.datasheet > 0 && r.measured_note.empty()
                                  ? fmt::format("{:.2f}", *r.measured / *r.datasheet)
                                  : "-";
    t.rows.push_back({r.figure, r.datasheet ? si(*r.datasheet, r.unit) : "-",
                      r.measured_note.empty() ? si(*r.measured, r.unit) : r.measured_note, ratio});
  }
  return t;
}

nlohmann::ordered_json measured_json(const hardware::Catalog& catalog, const hardware::Entity& e,
                                     const hardware::MeasuredFigures& m) {
  nlohmann::ordered_json out = {{"source", m.describe()}, {"synthetic", m.synthetic}, {"figures", nlohmann::ordered_json::array()}};
  for (const auto& r : comparisons(catalog, e, m)) {
    nlohmann::ordered_json row = {{"figure", r.figure},
                                  {"unit", r.unit},
                                  {"datasheet", r.datasheet ? nlohmann::ordered_json(*r.datasheet) : nlohmann::ordered_json()},
                                  {"measured", *r.measured}};
    if (r.curve != nullptr) {
      row["half_saturation_dim"] = r.curve->half_saturation_dim;
      row["points"] = r.curve->points;
      row["rms_relative_error"] = r.curve->rms_relative_error;
    }
    out["figures"].push_back(std::move(row));
  }
  return out;
}

int run_show(const GlobalOptions& g, const ShowOptions& o) {
  auto ws = open(g, hardware::Access::read_only);
  if (!ws) return report_errors(ws.errors());
  const hardware::Entity* e = ws->catalog->find(o.id);
  if (e == nullptr) {
    std::vector<std::string> ids;
    for (auto k : hardware::kAllKinds)
      for (auto& id : ws->catalog->ids(k)) ids.push_back(id);
    return report_errors({{{}, "", "no catalog entry with id '" + o.id + "'", did_you_mean(o.id, ids)}});
  }
  const hardware::MeasuredFigures* measured =
      e->kind == EntityKind::gpu ? ws->catalog->find_measured(e->id) : nullptr;
  if (o.format == Format::json) {
    // With a calibration, one more key: "measured", the side-by-side rows.
    if (measured != nullptr) {
      auto json = nlohmann::ordered_json::parse(scenarios::entity_json(*e));
      json["measured"] = measured_json(*ws->catalog, *e, *measured);
      std::cout << dump(json, 2) << "\n";
    } else {
      std::cout << scenarios::entity_json(*e);
    }
  } else {
    print_table(scenarios::entity_table(*e), o.format);
    if (o.format == Format::table) {
      if (const auto notes = e->text("notes"); !notes.empty()) std::cout << "\nnotes: " << notes << "\n";
      std::cout << "defined at " << e->where.file << ":" << e->where.line << "\n";
    }
    if (measured != nullptr && o.format != Format::csv) {
      std::cout << "\n" << (o.format == Format::md ? "**datasheet and measured**: " : "datasheet and measured: ")
                << printable(measured->describe()) << "\n\n";
      print_table(side_by_side(*ws->catalog, *e, *measured), o.format);
    }
  }
  return kExitOk;
}

int run_import(const GlobalOptions& g, const ImportOptions& o) {
  // Profiles are tens of KB; 16 MiB is far beyond any, and /dev/zero is refused.
  auto text = read_input_file(o.path, 16ull * 1024 * 1024, "calibration profile");
  if (!text) return report_errors(text.errors());
  auto profile = hardware::parse_calibration_profile(*text, o.path);
  if (!profile) return report_errors(profile.errors());
  auto ws = open(g, hardware::Access::read_write);
  if (!ws) return report_errors(ws.errors());
  std::string gpu_id = o.gpu;
  if (gpu_id.empty()) {
    auto match = hardware::match_calibration_gpu(*ws->catalog, profile->device);
    if (!match) {
      auto errors = match.errors();
      for (auto& d : errors) d.where.file = o.path;
      return report_errors(errors);
    }
    gpu_id = *match;
  } else if (auto gpu = ws->catalog->gpu(gpu_id); !gpu) {
    auto errors = gpu.errors();
    for (auto& d : errors) d.key_path = "--gpu";
    return report_errors(errors);
  }
  auto id = ws.value().store.import_calibration(*profile, *text, gpu_id);
  if (!id) return report_errors(id.errors());
  const auto figures = hardware::measured_figures(*profile);
  if (o.format == Format::json) {
    std::cout << dump({{"profile_id", *id},
                       {"gpu", gpu_id},
                       {"device", profile->device.name},
                       {"measurements", profile->measurements.size()},
                       {"synthetic", profile->synthetic},
                       {"gemm_curves", figures.gemm_curve.size()}})
              << "\n";
  } else {
    std::cout << fmt::format("imported {} as calibration profile #{} of {} ({}, {} measurements, measured {}{})\n",
                             printable(o.path), *id, gpu_id, printable(profile->device.name), profile->measurements.size(),
                             printable(profile->measured_at), profile->synthetic ? ", SYNTHETIC test data" : "");
    std::cout << fmt::format("the models now use its measured figures for {}; see 'capsim catalog show {}'\n",
                             gpu_id, gpu_id);
  }
  return kExitOk;
}


int run_validate(const GlobalOptions& g, const ValidateOptions& o) {
  std::filesystem::path path = o.path.empty() ? std::filesystem::path(g.catalog_dir) : std::filesystem::path(o.path);
  if (path.empty()) {
    auto shipped = scenarios::default_catalog_dir(g.data_dir);
    if (!shipped) return report_errors(shipped.errors());
    path = *shipped;
  }
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
    std::cout << dump({{"valid", true}, {"entries", catalog->size()}, {"hash", catalog->content_hash}}) << "\n";
  } else {
    std::cout << path.string() << ": valid, " << catalog->size() << " entries\n";
    print_table(t, o.format);
  }
  return kExitOk;
}

// `catalog check`: the catalog's prices older than --max-age (and the overlays' with them);
// exit 1 when there is any, so CI fails on a stale price.
int run_check(const GlobalOptions& g, const CheckOptions& o) {
  auto parsed = scenarios::price_age_policy(o.max_age);
  if (!parsed) {
    auto errors = parsed.errors();
    for (auto& d : errors) d.key_path = "--max-age";
    return report_errors(errors);
  }
  auto ws = open(g, hardware::Access::read_only);
  if (!ws) return report_errors(ws.errors());
  scenarios::PriceAgePolicy age = *parsed;
  const scenarios::PriceAgePolicy* policy = &age;
  age.today = scenarios::today_utc();
  const auto stale = scenarios::stale_prices(*ws->catalog, age);
  if (o.format == Format::json) {
    nlohmann::ordered_json j = {{"max_age", policy->max_text}, {"today", policy->today}, {"stale", nlohmann::ordered_json::array()}};
    for (const auto& p : stale)
      j["stale"].push_back({{"entry", p.entry},
                            {"field", p.field},
                            {"value", p.value},
                            {"as_of", p.as_of},
                            {"age_months", p.age_months ? nlohmann::ordered_json(std::floor(*p.age_months)) : nlohmann::ordered_json()},
                            {"your_quote", p.user_quote()},
                            {"source", p.source}});
    std::cout << dump(j, 2) << "\n";
  } else {
    if (stale.empty()) {
      std::cout << "every price is at most " << policy->max_text << " old (as of " << policy->today << ")\n";
      return kExitOk;
    }
    scenarios::Table t{{"entry", "field", "value", "as of", "age", "origin"}, {}, {false, false, true, false, true, false}};
    for (const auto& p : stale)
      t.rows.push_back({p.entry, p.field, p.value, p.as_of.empty() ? "-" : p.as_of,
                        p.age_months ? fmt::format("{} months", static_cast<long long>(std::floor(*p.age_months))) : "unknown",
                        p.user_quote() ? "your quote" : "catalog"});
    print_table(t, o.format);
    if (o.format == Format::table)
      std::cout << fmt::format("{} older than {} (as of {}): refresh them from a newer source, or raise --max-age\n",
                               plural(static_cast<long long>(stale.size()), "price"), policy->max_text, policy->today);
  }
  return stale.empty() ? kExitOk : kExitExpectationFailed;
}

// `catalog import-skypilot DIR`: SkyPilot's vms.csv files as a catalog overlay.
int run_import_skypilot(const GlobalOptions& g, const SkyPilotOptions& o) {
  auto ws = open(g, hardware::Access::read_only);
  if (!ws) return report_errors(ws.errors());
  hardware::SkyPilotOptions options{o.commit, o.as_of, o.regions};
  if (!o.as_of.empty() && !scenarios::age_in_months(o.as_of, "2000-01-01"))
    return report_errors({{{}, "--as-of", "expected a date YYYY-MM-DD or YYYY-MM, got '" + o.as_of + "'", ""}});
  auto imported = hardware::import_skypilot(o.dir, *ws->catalog, options);
  if (!imported) return report_errors(imported.errors());
  // The overlay must load on top of this catalog before it is written: what is written works.
  auto base = scenarios::catalog_sources(ws->catalog_dir, ws->overlays);
  if (!base) return report_errors(base.errors());
  std::vector<hardware::CatalogSource> sources = std::move(base).value();
  sources.push_back({o.output.empty() || o.output == "-" ? std::string("skypilot-overlay.yaml") : o.output,
                     imported->overlay_yaml, true});
  if (auto check = hardware::load_catalog(sources); !check) return report_errors(check.errors());
  for (const auto& r : imported->refused)
    std::cerr << fmt::format("{}:{}: refused {} ({}): {}\n", r.where.file, r.where.line, printable(r.instance_type),
                             printable(r.accelerator), r.why);
  if (auto code = write_output(o.output, imported->overlay_yaml); code != kExitOk) return code;
  const std::string summary =
      fmt::format("{} rows from {}: {} new instances, {} catalog instances with new prices, {} CPU rows skipped, {} refused",
                  imported->rows, fmt::join(imported->clouds, ", "), imported->new_instances, imported->updated_instances,
                  imported->cpu_rows, imported->refused.size());
  if (o.format == Format::json) {
    nlohmann::ordered_json j = {{"rows", imported->rows},
                                {"clouds", imported->clouds},
                                {"new_instances", imported->new_instances},
                                {"updated_instances", imported->updated_instances},
                                {"cpu_rows", imported->cpu_rows},
                                {"refused", nlohmann::ordered_json::array()}};
    for (const auto& r : imported->refused)
      j["refused"].push_back({{"file", r.where.file}, {"line", r.where.line}, {"instance_type", r.instance_type},
                              {"accelerator", r.accelerator}, {"why", r.why}});
    (o.output.empty() || o.output == "-" ? std::cerr : std::cout) << dump(j, 2) << "\n";
  } else {
    std::cerr << summary << (o.output.empty() || o.output == "-" ? "" : "; wrote " + o.output) << "\n";
  }
  return kExitOk;
}

}  // namespace

void add_catalog_command(CLI::App& app, const GlobalOptions& global, int& exit_code) {
  auto* catalog = app.add_subcommand("catalog", "Browse and check the hardware catalog");
  catalog->footer("Examples:\n  capsim catalog list gpus --where 'memory>=40 GB' --sort memory_bandwidth --desc\n  capsim catalog show h100-sxm-80gb --format json\n  capsim catalog validate data/catalog");
  catalog->require_subcommand(1);

  auto list_options = std::make_shared<ListOptions>();
  auto* list = catalog->add_subcommand("list", "List catalog entries, filtered and sorted");
  list->footer("Examples:\n  capsim catalog list\n  capsim catalog list instances --where 'gpu=h100-sxm-80gb' --sort price.on_demand\n  capsim catalog list gpus --format csv > gpus.csv");
  std::vector<std::string> sections;
  for (const auto k : hardware::kAllKinds) sections.emplace_back(hardware::section_name(k));
  complete_values(list->add_option("section", list_options->kind,
                                   "gpus, cpus, interconnects, networks, servers, instances or facilities "
                                   "(omit for a count per section)"),
                  sections);
  list->add_option("--where,-w", list_options->where,
                   "Filter FIELD OP VALUE, e.g. 'memory>=40 GB', 'vendor=nvidia' (repeatable)");
  list->add_option("--sort,-s", list_options->sort, "Sort by this field (e.g. memory_bandwidth)");
  list->add_flag("--desc", list_options->descending, "Sort in descending order");
  list->add_flag("--all-fields", list_options->all_fields, "Show every field as a column");
  add_format_option(*list, list_options->format, {"table", "json", "csv", "md"});
  list->callback([&global, &exit_code, list_options] { exit_code = run_list(global, *list_options); });

  auto show_options = std::make_shared<ShowOptions>();
  auto* show = catalog->add_subcommand("show", "Show one entry with the source of every number");
  show->footer("Examples:\n  capsim catalog show h100-sxm-80gb\n  capsim catalog show aws-p5-48xlarge --format json");
  complete_from_catalog(show->add_option("id", show_options->id, "Entry id, e.g. h100-sxm-80gb")->required(),
                        CatalogValues::ids);
  add_format_option(*show, show_options->format, {"table", "json", "csv", "md"});
  show->callback([&global, &exit_code, show_options] { exit_code = run_show(global, *show_options); });

  auto import_options = std::make_shared<ImportOptions>();
  auto* import = catalog->add_subcommand(
      "import-calibration", "Store a capsim-calibrate profile; the models then prefer its measured figures");
  import->footer("Examples:\n  capsim catalog import-calibration h100.json\n  capsim catalog import-calibration h100.json --gpu h100-sxm-80gb");
  import->add_option("profile", import_options->path, "Profile JSON written by capsim-calibrate")->required();
  complete_from_catalog(import->add_option("--gpu", import_options->gpu,
                                           "Catalog GPU id the profile belongs to (default: matched by device name "
                                           "and memory)"),
                        CatalogValues::gpus);
  add_format_option(*import, import_options->format, {"table", "json"});
  import->callback([&global, &exit_code, import_options] { exit_code = run_import(global, *import_options); });

  auto validate_options = std::make_shared<ValidateOptions>();
  auto* validate = catalog->add_subcommand("validate", "Check a catalog directory (all errors at once)");
  validate->footer("Examples:\n  capsim catalog validate\n  capsim catalog validate my-catalog/\n  capsim catalog validate my-catalog/gpus.yaml");
  validate->add_option("path", validate_options->path, "Catalog directory or file (default: the shipped catalog)");
  add_format_option(*validate, validate_options->format, {"table", "json"});
  validate->callback(
      [&global, &exit_code, validate_options] { exit_code = run_validate(global, *validate_options); });

  auto check_options = std::make_shared<CheckOptions>();
  auto* check = catalog->add_subcommand("check", "List prices older than --max-age; exit 1 when any is (for CI)");
  check->footer("Examples:\n  capsim catalog check\n  capsim catalog check --max-age 6mo --format json\n"
                "  capsim --catalog-overlay quotes/ catalog check --max-age 90d");
  check->add_option("--max-age", check_options->max_age, "Oldest price allowed: 12mo (default), 18 months, 1y, 90d")
      ->option_text("AGE");
  add_format_option(*check, check_options->format, {"table", "json", "csv", "md"});
  check->callback([&global, &exit_code, check_options] { exit_code = run_check(global, *check_options); });

  auto sky = std::make_shared<SkyPilotOptions>();
  auto* import_sky = catalog->add_subcommand(
      "import-skypilot", "Turn SkyPilot catalog files (<cloud>/vms.csv) into a catalog overlay of instances and prices");
  import_sky->footer(
      "Examples:\n  capsim catalog import-skypilot skypilot-catalog/catalogs/v8 --commit $(git -C skypilot-catalog rev-parse HEAD) -o sky.yaml\n"
      "  capsim catalog import-skypilot catalogs/v8/aws --region us-east-1 -o aws.yaml\n"
      "  capsim --catalog-overlay sky.yaml catalog list instances --sort price.on_demand\n"
      "Rows whose GPU the catalog does not know are refused and listed on standard error.");
  import_sky->add_option("dir", sky->dir, "A SkyPilot catalog folder (one folder per cloud with vms.csv), or one cloud's folder")
      ->required()
      ->option_text("DIR");
  import_sky->add_option("-o,--output", sky->output, "Write the overlay to FILE (default, or -: standard output)")
      ->option_text("FILE");
  import_sky->add_option("--commit", sky->commit, "The skypilot-catalog commit the files come from (named in every source)")
      ->option_text("SHA");
  import_sky->add_option("--as-of", sky->as_of, "Date of the prices (default: each file's modification date)")
      ->option_text("DATE");
  import_sky->add_option("--region", sky->regions, "Only this region (repeatable)")->option_text("REGION");
  add_format_option(*import_sky, sky->format, {"table", "json"});
  import_sky->callback([&global, &exit_code, sky] { exit_code = run_import_skypilot(global, *sky); });
}

}  // namespace capsim::cli
