#include "capsim/hardware/loader.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "capsim/core/suggest.hpp"

namespace capsim::hardware {
namespace {

// Where an id was first declared, even if its entry turned out invalid.
struct Declared {
  SourceLocation where;
  EntityKind kind;
};

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// YYYY-MM or YYYY-MM-DD, year 1900-2099.
bool valid_date(const std::string& date) {
  if (date.size() != 7 && date.size() != 10) return false;
  if (date[4] != '-' || !all_digits(date.substr(0, 4)) || !all_digits(date.substr(5, 2))) return false;
  const int year = std::stoi(date.substr(0, 4)), month = std::stoi(date.substr(5, 2));
  if (year < 1900 || year > 2099 || month < 1 || month > 12) return false;
  if (date.size() == 7) return true;
  if (date[7] != '-' || !all_digits(date.substr(8, 2))) return false;
  const int day = std::stoi(date.substr(8, 2));
  return day >= 1 && day <= 31;
}

std::string node_kind(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Scalar: return "'" + n.Scalar() + "'";
    case YAML::NodeType::Null: return "nothing";
    case YAML::NodeType::Undefined: break;
  }
  return "nothing";
}

// Validates one file's entries and collects diagnostics; cross-file checks (ids,
// references) run after all files are read.
class FileLoader {
 public:
  FileLoader(std::string file, std::vector<Diagnostic>& errors, Catalog& catalog,
             std::map<std::string, Declared>& first_seen)
      : file_(std::move(file)), errors_(errors), catalog_(catalog), first_seen_(first_seen) {}

  // An overlay file: entries may change fields of the catalog's entries (by id); every
  // figure read is marked with the file's name. `overridden` is shared by all overlay files
  // (file and id of each change), so one file changing an id twice is reported.
  void as_overlay(std::map<std::string, SourceLocation>* overridden) {
    overlay_ = true;
    overridden_ = overridden;
  }

  void load(const YAML::Node& root) {
    if (root.IsNull()) return;  // an empty file adds nothing
    if (!root.IsMap()) {
      error(root, "", "expected a mapping of sections (gpus:, cpus:, ...), got " + node_kind(root));
      return;
    }
    std::vector<std::string> sections;
    for (auto k : kAllKinds) sections.emplace_back(section_name(k));
    for_each_unique_key(root, "", [&](const std::string& key, const YAML::Node& key_node,
                                      const YAML::Node& value) {
      auto kind = kind_from_section(key);
      if (!kind) {
        error(key_node, key, "unknown section '" + key + "'", did_you_mean(key, sections));
        return;
      }
      load_section(*kind, key, value);
    });
  }

 private:
  template <class F>
  void for_each_unique_key(const YAML::Node& map, const std::string& path, F&& f) {
    std::set<std::string> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      if (!it->first.IsScalar()) {
        error(it->first, path, "a key must be a plain word");
        continue;
      }
      const std::string key = it->first.Scalar();
      if (!seen.insert(key).second) {
        error(it->first, join(path, key), "duplicate key '" + key + "'");
        continue;
      }
      f(key, it->first, it->second);
    }
  }

  static std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

  void error(const YAML::Node& at, std::string key_path, std::string message, std::string hint = {}) {
    const YAML::Mark m = at.Mark();
    SourceLocation where{file_, m.line >= 0 ? m.line + 1 : 0, m.column >= 0 ? m.column + 1 : 0};
    errors_.push_back({where, std::move(key_path), std::move(message), std::move(hint)});
  }

  SourceLocation location(const YAML::Node& n) const {
    const YAML::Mark m = n.Mark();
    return {file_, m.line + 1, m.column + 1};
  }

  void load_section(EntityKind kind, const std::string& section, const YAML::Node& list) {
    if (list.IsNull()) return;
    if (!list.IsSequence()) {
      error(list, section, "expected a list of entries, got " + node_kind(list));
      return;
    }
    for (std::size_t i = 0; i < list.size(); ++i)
      load_entry(kind, section + "[" + std::to_string(i) + "]", list[i]);
  }

  struct EntryContext {
    EntityKind kind;
    std::string path;
    std::optional<Provenance> defaults;
  };

  void load_entry(EntityKind kind, const std::string& path, const YAML::Node& node) {
    if (!node.IsMap()) {
      error(node, path, "expected an entry (a mapping with id:, name:, ...), got " + node_kind(node));
      return;
    }
    Entity entity;
    present_.clear();
    entity.kind = kind;
    entity.where = location(node);
    EntryContext ctx{kind, path, std::nullopt};
    // An overlay entry naming an id the catalog has changes that entry: only its fields.
    const Entity* base = nullptr;
    if (overlay_)
      if (const YAML::Node id = node["id"]; id && id.IsScalar()) base = catalog_.find(id.Scalar());
    if (base != nullptr && base->kind != kind) {
      auto a = [](EntityKind k) {
        const std::string name(kind_name(k));
        return (std::string("aeiou").find(name.front()) != std::string::npos ? "an " : "a ") + name;
      };
      error(node["id"], path + ".id", "'" + base->id + "' is " + a(base->kind) + " in the catalog, not " + a(kind),
            "change it under " + std::string(section_name(base->kind)) + ":, or give the new entry another id");
      return;
    }
    if (base != nullptr) {
      merge_entry(ctx, entity, node, *base);
      return;
    }

    // Entry-level provenance first: it applies to every number below.
    const YAML::Node source = node["source"];
    const YAML::Node as_of = node["as_of"];
    if (source || as_of) ctx.defaults = read_provenance(node, path);

    const std::size_t errors_before = errors_.size();
    load_fields(ctx, entity, node, "");

    if (const YAML::Node id = node["id"]; !id) {
      error(node, path, "missing required field 'id'");
    } else if (!id.IsScalar() || !is_valid_id(id.Scalar())) {
      error(id, path + ".id", "invalid id " + node_kind(id),
            "ids are lowercase letters, digits and single hyphens, e.g. 'h100-sxm-80gb'");
    } else {
      entity.id = id.Scalar();
    }
    for (const auto& f : fields_of(kind))
      if (f.required && !present_.contains(std::string(f.name)))
        error(node, path, "missing required field '" + std::string(f.name) + "'",
              overlay_ && !entity.id.empty() ? did_you_mean(entity.id, catalog_.ids(kind)) : std::string());
    // What one SM does per clock is peak / (SMs x clock): one figure without the other
    // would leave the models on the generation's rate without saying so.
    if (kind == EntityKind::gpu && present_.contains("sm_count") != present_.contains("boost_clock")) {
      const bool has_sms = present_.contains("sm_count");
      error(node[has_sms ? "sm_count" : "boost_clock"], path + (has_sms ? ".sm_count" : ".boost_clock"),
            has_sms ? "an SM count needs 'boost_clock' beside it" : "a boost clock needs 'sm_count' beside it",
            "the models divide the peaks by SMs x clock: give both or neither");
    }

    if (kind == EntityKind::exchange_rate)
      if (const FieldValue* usd = entity.find("usd"); usd && (usd->number < kMinUsdPerUnit || usd->number > kMaxUsdPerUnit))
        errors_.push_back({usd->where, path + ".usd",
                           "must be between 0.000001 and 1000000 US dollars per unit, got '" + usd->text + "'",
                           "US dollars per one unit of the currency, e.g. 0.011833 for RUB"});

    if (entity.id.empty()) return;
    // An id counts as taken even when its entry has errors, so a later duplicate is still found.
    if (auto [it, inserted] = first_seen_.emplace(entity.id, Declared{entity.where, kind}); !inserted) {
      const SourceLocation& first = it->second.where;
      error(node["id"], path + ".id", "duplicate id '" + entity.id + "'",
            "first defined at " + first.file + ":" + std::to_string(first.line) + ":" +
                std::to_string(first.column));
      return;
    }
    if (errors_.size() == errors_before) catalog_.add(std::move(entity));
  }

  // An overlay's entry for an id the catalog has: its fields replace the catalog's.
  void merge_entry(EntryContext& ctx, Entity& entity, const YAML::Node& node, const Entity& base) {
    entity.id = base.id;
    if (node["source"] || node["as_of"]) ctx.defaults = read_provenance(node, ctx.path);
    const std::size_t errors_before = errors_.size();
    load_fields(ctx, entity, node, "");
    if (entity.fields.empty() && errors_.size() == errors_before)
      error(node, ctx.path, "overlay entry for '" + base.id + "' changes no field",
            "name the fields to change beside id:, e.g. price: {on_demand: ...}");
    // A later overlay may change what an earlier one set; one file changing an id twice is a slip.
    if (const auto [first, inserted] = overridden_->emplace(file_ + "\n" + base.id, location(node)); !inserted) {
      error(node["id"], ctx.path + ".id", "'" + base.id + "' is changed twice in this overlay",
            "first at " + first->second.file + ":" + std::to_string(first->second.line) + ":" +
                std::to_string(first->second.column) + "; keep one");
      return;
    }
    if (errors_.size() == errors_before) catalog_.merge(entity);
  }

  std::optional<Provenance> read_provenance(const YAML::Node& map, const std::string& path) {
    const YAML::Node source = map["source"];
    const YAML::Node as_of = map["as_of"];
    bool ok = true;
    if (!source || !source.IsScalar() || source.Scalar().empty()) {
      error(source ? source : map, path + ".source", "expected the source of the numbers (a document title and URL)");
      ok = false;
    }
    if (!as_of || !as_of.IsScalar() || !valid_date(as_of.Scalar())) {
      error(as_of ? as_of : map, path + ".as_of",
            as_of ? "invalid date " + node_kind(as_of) : std::string("missing 'as_of' next to 'source'"),
            "write the date the source gave the figure as YYYY-MM or YYYY-MM-DD");
      ok = false;
    }
    if (!ok) return std::nullopt;
    return Provenance{source.Scalar(), as_of.Scalar(), overlay_ ? file_ : std::string()};
  }

  // The keys allowed directly under `prefix` ("" for the entry, "peak_dense." for a group).
  std::vector<std::string> keys_at(EntityKind kind, const std::string& prefix) const {
    std::set<std::string> out;
    if (prefix.empty()) out.insert({"id", "source", "as_of"});
    for (const auto& f : fields_of(kind)) {
      const std::string name(f.name);
      if (!name.starts_with(prefix)) continue;
      const std::string rest = name.substr(prefix.size());
      out.insert(rest.substr(0, rest.find('.')));
    }
    return {out.begin(), out.end()};
  }

  bool is_group(EntityKind kind, const std::string& name) const {
    for (const auto& f : fields_of(kind))
      if (std::string_view(f.name).starts_with(name + ".")) return true;
    return false;
  }

  void load_fields(const EntryContext& ctx, Entity& entity, const YAML::Node& map,
                   const std::string& prefix) {
    const std::vector<std::string> allowed = keys_at(ctx.kind, prefix);
    for_each_unique_key(map, ctx.path + (prefix.empty() ? "" : "." + prefix.substr(0, prefix.size() - 1)),
                        [&](const std::string& key, const YAML::Node& key_node, const YAML::Node& value) {
                          if (prefix.empty() && (key == "id" || key == "source" || key == "as_of")) return;
                          const std::string name = prefix + key;
                          const std::string key_path = ctx.path + "." + name;
                          if (const FieldDef* def = find_field(ctx.kind, name)) {
                            load_field(ctx, entity, *def, key_path, value);
                          } else if (is_group(ctx.kind, name)) {
                            if (!value.IsMap())
                              error(value, key_path, "expected a mapping, got " + node_kind(value),
                                    "e.g. " + name + ": {" + keys_at(ctx.kind, name + ".").front() + ": ...}");
                            else
                              load_fields(ctx, entity, value, name + ".");
                          } else {
                            error(key_node, key_path,
                                  "unknown key '" + key + "' in " + std::string(kind_name(ctx.kind)) + " entry",
                                  did_you_mean(key, allowed));
                          }
                        });
  }

  void load_field(const EntryContext& ctx, Entity& entity, const FieldDef& def,
                  const std::string& key_path, const YAML::Node& node) {
    present_.insert(std::string(def.name));  // written, even if invalid: not "missing"
    YAML::Node value = node;
    std::optional<Provenance> provenance = ctx.defaults;
    if (node.IsMap()) {
      // {value: ..., source: ..., as_of: ...} overrides the entry's provenance.
      for_each_unique_key(node, key_path, [&](const std::string& key, const YAML::Node& key_node,
                                              const YAML::Node&) {
        if (key != "value" && key != "source" && key != "as_of")
          error(key_node, key_path + "." + key, "unknown key '" + key + "' in a sourced value",
                did_you_mean(key, {"value", "source", "as_of"}));
      });
      if (!node["value"]) {
        error(node, key_path, "a sourced value needs 'value', 'source' and 'as_of'");
        return;
      }
      value.reset(node["value"]);  // rebind; operator= would overwrite the tree
      provenance = read_provenance(node, key_path);
      if (!provenance) return;
    }
    FieldValue out;
    out.type = def.type;
    out.where = location(value);
    if (!parse_value(def, key_path, value, out)) return;
    if (def.is_number() || def.type == FieldType::text_list) {
      if (!provenance && def.type != FieldType::text_list) {
        error(value, key_path, "a number without a source",
              "give the entry 'source' and 'as_of', or write {value: ..., source: ..., as_of: ...}");
        return;
      }
      out.provenance = provenance;
    } else if (node.IsMap()) {
      out.provenance = provenance;  // a fact with a source of its own (an instance's intra_node)
    }
    entity.fields.emplace(std::string(def.name), std::move(out));
  }

  bool scalar(const YAML::Node& value, const std::string& key_path, const std::string& what) {
    if (value.IsScalar()) return true;
    error(value, key_path, "expected " + what + ", got " + node_kind(value));
    return false;
  }

  bool parse_value(const FieldDef& def, const std::string& key_path, const YAML::Node& value,
                   FieldValue& out) {
    switch (def.type) {
      case FieldType::text:
        if (!scalar(value, key_path, "text")) return false;
        out.text = value.Scalar();
        return true;
      case FieldType::choice: {
        if (!scalar(value, key_path, "one of " + choices_text(def))) return false;
        out.text = value.Scalar();
        if (std::find(def.choices.begin(), def.choices.end(), out.text) != def.choices.end()) return true;
        std::vector<std::string> options(def.choices.begin(), def.choices.end());
        error(value, key_path, "expected one of " + choices_text(def) + ", got '" + out.text + "'",
              did_you_mean(out.text, options));
        return false;
      }
      case FieldType::reference:
        if (!scalar(value, key_path, "the id of a " + std::string(kind_name(def.ref_kind)))) return false;
        out.text = value.Scalar();
        return true;
      case FieldType::boolean:
        if (!scalar(value, key_path, "true or false")) return false;
        if (value.Scalar() != "true" && value.Scalar() != "false") {
          error(value, key_path, "expected true or false, got '" + value.Scalar() + "'");
          return false;
        }
        out.number = value.Scalar() == "true" ? 1 : 0;
        out.text = value.Scalar();
        return true;
      case FieldType::integer: return parse_integer(key_path, value, out);
      case FieldType::quantity: return parse_quantity_field(def, key_path, value, out);
      case FieldType::text_list:
      case FieldType::ref_list: return parse_list(def, key_path, value, out);
    }
    return false;
  }

  static std::string choices_text(const FieldDef& def) {
    std::string out;
    for (std::size_t i = 0; i < def.choices.size(); ++i)
      out += (i ? (i + 1 == def.choices.size() ? " or " : ", ") : "") + std::string(def.choices[i]);
    return out;
  }

  bool parse_integer(const std::string& key_path, const YAML::Node& value, FieldValue& out) {
    if (!scalar(value, key_path, "a whole number")) return false;
    const std::string& s = value.Scalar();
    if (s.size() > 9 || !all_digits(s) || std::stoll(s) <= 0) {
      error(value, key_path, "expected a whole number greater than zero, got '" + s + "'");
      return false;
    }
    out.number = static_cast<double>(std::stoll(s));
    out.text = s;
    return true;
  }

  bool parse_quantity_field(const FieldDef& def, const std::string& key_path, const YAML::Node& value,
                            FieldValue& out) {
    if (!scalar(value, key_path, describe_dimension(def.dim))) return false;
    auto q = parse_quantity(value.Scalar());
    if (!q) {
      for (const auto& d : q.errors()) error(value, key_path, d.message, d.hint);
      return false;
    }
    if (!(q->dim == def.dim)) {
      error(value, key_path,
            "expected " + describe_dimension(def.dim) + ", got " + describe_dimension(q->dim) + " ('" +
                value.Scalar() + "')");
      return false;
    }
    if (!(q->value_si > 0)) {
      error(value, key_path, "must be greater than zero, got '" + value.Scalar() + "'");
      return false;
    }
    out.number = q->value_si;
    out.dim = q->dim;
    out.currency = q->currency;
    out.text = value.Scalar();
    return true;
  }

  bool parse_list(const FieldDef& def, const std::string& key_path, const YAML::Node& value,
                  FieldValue& out) {
    if (!value.IsSequence()) {
      error(value, key_path, "expected a list, got " + node_kind(value));
      return false;
    }
    bool ok = true;
    for (std::size_t i = 0; i < value.size(); ++i) {
      const YAML::Node item = value[i];
      const std::string item_path = key_path + "[" + std::to_string(i) + "]";
      if (!scalar(item, item_path, "text")) {
        ok = false;
        continue;
      }
      const std::string& s = item.Scalar();
      if (def.type == FieldType::ref_list && !parse_counted_ref(s)) {
        error(item, item_path, "expected 'COUNT x ID', got '" + s + "'", "e.g. '8 x ib-ndr-400'");
        ok = false;
      } else if (def.name == "mig_profiles" && !parse_mig_profile(s)) {
        error(item, item_path, "expected a MIG profile 'NAME xMAX', got '" + s + "'", "e.g. '1g.10gb x7'");
        ok = false;
      }
      out.items.push_back(s);
    }
    return ok;
  }

  std::string file_;
  std::vector<Diagnostic>& errors_;
  Catalog& catalog_;
  std::map<std::string, Declared>& first_seen_;
  std::set<std::string> present_;  // field names written in the current entry
  bool overlay_ = false;
  std::map<std::string, SourceLocation>* overridden_ = nullptr;  // overlay only
};

// References to ids that do not exist. An id whose own entry was invalid has been reported
// already and is not reported again at every place that names it.
void check_references(const Catalog& catalog, const std::map<std::string, Declared>& declared,
                      std::vector<Diagnostic>& errors) {
  for (auto kind : kAllKinds) {
    for (const auto& entity : catalog.all(kind)) {
      for (const auto& def : fields_of(kind)) {
        const FieldValue* v = entity.find(def.name);
        if (v == nullptr) continue;
        auto check = [&](const std::string& id, const std::string& key_path) {
          if (auto d = declared.find(id); d != declared.end() && d->second.kind == def.ref_kind &&
                                          catalog.find(id) == nullptr)
            return;
          auto found = catalog.get(def.ref_kind, id);
          if (!found)
            errors.push_back({v->where, key_path, found.errors().front().message, found.errors().front().hint});
        };
        const std::string path = std::string(section_name(kind)) + "[" + entity.id + "]." + std::string(def.name);
        if (def.type == FieldType::reference) check(v->text, path);
        if (def.type == FieldType::ref_list)
          for (const auto& item : v->items)
            if (auto ref = parse_counted_ref(item)) check(ref->id, path);
      }
    }
  }
}

// Two rates of one currency on one date: which converts would depend on the order of the
// files (the cost model takes the latest as_of). The second is refused, naming the first.
void check_exchange_rates(const Catalog& catalog, std::vector<Diagnostic>& errors) {
  std::map<std::pair<std::string, std::string>, const Entity*> seen;  // (currency, as_of) -> first
  for (const auto& rate : catalog.all(EntityKind::exchange_rate)) {
    const FieldValue* usd = rate.find("usd");
    if (usd == nullptr) continue;
    const std::string as_of = usd->provenance ? usd->provenance->as_of : std::string();
    const auto [first, inserted] = seen.emplace(std::pair{rate.text("currency"), as_of}, &rate);
    if (inserted) continue;
    const FieldValue* other = first->second->find("usd");
    errors.push_back({rate.where, "exchange_rates[" + rate.id + "]",
                      "a second " + rate.text("currency") + " rate as of " + as_of + " ('" + first->second->id +
                          "' gives one): which converts would be ambiguous",
                      "keep one of them, or date each by the day it was published (first at " + other->where.file + ":" +
                          std::to_string(other->where.line) + ")"});
  }
}

}  // namespace

Result<Catalog> load_catalog(const std::vector<CatalogSource>& sources) {
  Catalog catalog;
  std::vector<Diagnostic> errors;
  std::map<std::string, Declared> first_seen;
  std::map<std::string, SourceLocation> overridden;
  // The catalog first, then the overlays on top of it, each group in the order given.
  for (const bool overlays : {false, true}) {
    for (const auto& source : sources) {
      if (source.overlay != overlays) continue;
      YAML::Node root;
      try {
        root = YAML::Load(source.text);
      } catch (const YAML::Exception& e) {
        errors.push_back({{source.name, e.mark.line + 1, e.mark.column + 1}, "", "invalid YAML: " + e.msg, ""});
        continue;
      }
      FileLoader loader(source.name, errors, catalog, first_seen);
      if (overlays) loader.as_overlay(&overridden);
      loader.load(root);
    }
  }
  check_references(catalog, first_seen, errors);
  check_exchange_rates(catalog, errors);
  if (!errors.empty()) return errors;
  catalog.content_hash = catalog_hash(sources);
  return catalog;
}

Result<std::vector<CatalogSource>> read_catalog_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return Diagnostic{{dir.string()}, "", "not a catalog directory (no such directory)", ""};
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const auto ext = entry.path().extension();
    if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml")) files.push_back(entry.path());
  }
  if (ec) return Diagnostic{{dir.string()}, "", "cannot read directory: " + ec.message(), ""};
  if (files.empty())
    return Diagnostic{{dir.string()}, "", "no *.yaml files in the catalog directory", ""};
  std::sort(files.begin(), files.end());
  std::vector<CatalogSource> sources;
  for (const auto& path : files) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in) return Diagnostic{{path.string()}, "", "cannot read file", ""};
    sources.push_back({path.string(), text.str()});
  }
  return sources;
}

Result<std::vector<CatalogSource>> read_overlay(const std::filesystem::path& dir_or_file) {
  std::error_code ec;
  std::vector<CatalogSource> sources;
  if (std::filesystem::is_regular_file(dir_or_file, ec)) {
    std::ifstream in(dir_or_file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in) return Diagnostic{{dir_or_file.string()}, "", "cannot read the catalog overlay", ""};
    sources.push_back({dir_or_file.string(), text.str()});
  } else if (std::filesystem::is_directory(dir_or_file, ec)) {
    auto dir = read_catalog_dir(dir_or_file);
    if (!dir) return dir.errors();
    sources = std::move(dir).value();
  } else {
    return Diagnostic{{dir_or_file.string()}, "", "no such catalog overlay (a directory of *.yaml files, or one file)",
                      "check the path given to --catalog-overlay, $CAPSIM_CATALOG_OVERLAY or catalog.overlays"};
  }
  for (auto& s : sources) s.overlay = true;
  return sources;
}

Result<Catalog> load_catalog_dir(const std::filesystem::path& dir) {
  auto sources = read_catalog_dir(dir);
  if (!sources) return sources.errors();
  return load_catalog(*sources);
}

std::string catalog_hash(const std::vector<CatalogSource>& sources) {
  std::uint64_t h = 1469598103934665603ULL;
  auto mix = [&h](std::string_view bytes) {
    for (unsigned char c : bytes) {
      h ^= c;
      h *= 1099511628211ULL;
    }
    h ^= 0xff;  // separator, so ("ab","c") and ("a","bc") differ
    h *= 1099511628211ULL;
  };
  for (const auto& s : sources) {
    // An overlay's full name: its figures carry it (Provenance::overlay), so the cached
    // catalog must too.
    mix(s.overlay ? "overlay:" + s.name : std::filesystem::path(s.name).filename().string());
    mix(s.text);
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace capsim::hardware
