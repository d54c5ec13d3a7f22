#include "capsim/scenarios/catalog_views.hpp"

#include <nlohmann/json.hpp>

namespace capsim::scenarios {
namespace {

using hardware::EntityKind;
using hardware::FieldDef;
using hardware::FieldType;
using hardware::FieldValue;

std::vector<std::string_view> main_columns(EntityKind kind) {
  switch (kind) {
    case EntityKind::gpu:
      return {"name", "memory", "memory_bandwidth", "peak_dense.bf16", "peak_dense.fp32", "tdp", "list_price"};
    case EntityKind::cpu: return {"name", "cores", "threads", "boost_clock", "memory_bandwidth", "tdp"};
    case EntityKind::interconnect: return {"name", "kind", "generation", "bandwidth_per_direction"};
    case EntityKind::network: return {"name", "kind", "port_bandwidth", "latency"};
    case EntityKind::server: return {"name", "gpu", "gpu_count", "cpu", "memory", "power_max", "purchase_price"};
    case EntityKind::instance:
      return {"provider", "name", "region", "gpu", "gpu_count", "price.on_demand", "price.spot"};
    case EntityKind::facility: return {"name", "kind", "region", "colocation_price", "pue", "electricity_price"};
    case EntityKind::provider: return {"name", "kind", "currency", "billing_granularity", "regions"};
    case EntityKind::exchange_rate: return {"currency", "usd"};
    case EntityKind::engine: return {"name", "kind", "layout", "fuses_epilogue", "host_time_per_kernel", "gemm_ceiling"};
  }
  return {};
}

nlohmann::json field_json(const FieldDef& def, const FieldValue& v) {
  nlohmann::json j;
  switch (v.type) {
    case FieldType::quantity:
      j["display"] = display_value(def, v);
      j["value"] = v.number;
      j["unit"] = si_unit(v.dim, v.currency);
      break;
    case FieldType::integer: j["value"] = static_cast<long long>(v.number); break;
    case FieldType::boolean: return nlohmann::json(v.number != 0);
    case FieldType::text_list:
    case FieldType::ref_list: j["value"] = v.items; break;
    default: return nlohmann::json(v.text);
  }
  if (v.provenance) {
    j["source"] = v.provenance->source;
    j["as_of"] = v.provenance->as_of;
  }
  return j;
}

nlohmann::json to_json(const hardware::Entity& e) {
  nlohmann::json fields = nlohmann::json::object();
  for (const auto& def : hardware::fields_of(e.kind))
    if (const FieldValue* v = e.find(def.name)) fields[std::string(def.name)] = field_json(def, *v);
  return {{"id", e.id},
          {"kind", std::string(hardware::kind_name(e.kind))},
          {"defined_at", e.where.file + ":" + std::to_string(e.where.line)},
          {"fields", fields}};
}

}  // namespace

std::string display_value(const FieldDef& def, const FieldValue& v) {
  switch (v.type) {
    case FieldType::quantity: {
      const ParsedQuantity q{v.number, v.dim, v.currency};
      return def.display_unit.empty() ? to_string(q) : to_string_in(q, def.display_unit);
    }
    case FieldType::text_list:
    case FieldType::ref_list: {
      std::string out;
      for (const auto& item : v.items) out += (out.empty() ? "" : ", ") + item;
      return out;
    }
    default: return v.text;
  }
}

Table entities_table(EntityKind kind, const std::vector<const hardware::Entity*>& entities, bool all_fields) {
  std::vector<const FieldDef*> defs;
  if (all_fields) {
    for (const auto& def : hardware::fields_of(kind)) defs.push_back(&def);
  } else {
    for (auto name : main_columns(kind)) defs.push_back(hardware::find_field(kind, name));
  }
  Table t;
  t.columns.emplace_back("id");
  t.right_align.push_back(false);
  for (const auto* def : defs) {
    t.columns.emplace_back(def->name);
    t.right_align.push_back(def->is_number());
  }
  for (const auto* e : entities) {
    std::vector<Cell> row{e->id};
    for (const auto* def : defs) {
      const FieldValue* v = e->find(def->name);
      row.push_back(v ? display_value(*def, *v) : (all_fields ? "" : "-"));
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table entity_table(const hardware::Entity& e) {
  Table t;
  t.columns = {"field", "value", "source", "as_of"};
  t.rows.push_back({"id", e.id, "", ""});
  for (const auto& def : hardware::fields_of(e.kind)) {
    const FieldValue* v = e.find(def.name);
    if (v == nullptr || def.name == "notes") continue;  // notes are prose, printed below the table
    t.rows.push_back({std::string(def.name), display_value(def, *v), v->provenance ? v->provenance->source : "",
                      v->provenance ? v->provenance->as_of : ""});
  }
  return t;
}

std::string entities_json(const std::vector<const hardware::Entity*>& entities) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto* e : entities) out.push_back(to_json(*e));
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string entity_json(const hardware::Entity& entity) { return to_json(entity).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"; }

}  // namespace capsim::scenarios
