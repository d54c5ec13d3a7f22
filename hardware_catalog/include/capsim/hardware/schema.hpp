// The catalog schema: every field each kind of entry may have, with its type, unit and
// meaning. The YAML loader, the SQLite store, `capsim catalog show` and the docs all read
// this one table, so a field is declared once. See docs/catalog-format.md.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "capsim/core/units.hpp"

namespace capsim::hardware {

// provider: a cloud or hosting company (regions, billing currency and granularity);
// exchange_rate: a dated rate to US dollars for prices in another currency;
// engine: an inference runtime's efficiency profile (what it fuses, its host time per
// kernel, the precisions it runs), read by the CNN and serving models.
enum class EntityKind { gpu, cpu, interconnect, network, server, instance, facility, provider, exchange_rate, engine };

inline constexpr EntityKind kAllKinds[] = {EntityKind::gpu,      EntityKind::cpu,
                                           EntityKind::interconnect, EntityKind::network,
                                           EntityKind::server,   EntityKind::instance,
                                           EntityKind::facility, EntityKind::provider,
                                           EntityKind::exchange_rate, EntityKind::engine};

// An exchange rate's US dollars per unit of its currency (the catalog's exchange_rates and a
// scenario's cost.exchange_rates): the weakest currencies in circulation trade near 1e-5 USD,
// the strongest near 3.3 USD, so a rate outside [1e-6, 1e6] is a typo; at 1e-300 a price
// printed as "1 RUB = 0 USD", and at 1e300 prices overflow.
inline constexpr double kMinUsdPerUnit = 1e-6;
inline constexpr double kMaxUsdPerUnit = 1e6;

std::string_view kind_name(EntityKind k);     // "gpu"
std::string_view section_name(EntityKind k);  // "gpus" (the YAML top-level key)
std::optional<EntityKind> kind_from_section(std::string_view section);  // "gpus" -> gpu

enum class FieldType {
  text,       // free text
  choice,     // one of FieldDef::choices
  quantity,   // number with a unit of FieldDef::dim
  integer,    // whole number >= 0
  boolean,    // true / false
  reference,  // id of an entry of FieldDef::ref_kind
  text_list,  // list of strings (e.g. MIG profiles "1g.10gb x7")
  ref_list,   // list of "COUNT x ID" naming entries of FieldDef::ref_kind
};

struct FieldDef {
  std::string_view name;  // dotted for nested keys: "peak_dense.bf16"
  FieldType type = FieldType::text;
  bool required = false;
  std::string_view help;
  Dim dim{};                                  // for quantity
  EntityKind ref_kind = EntityKind::gpu;      // for reference / ref_list
  std::vector<std::string_view> choices = {};  // for choice
  std::string_view display_unit = {};          // for quantity: show in this unit, e.g. "USD/kW/month"
  // Numbers (quantity, integer) are facts that need source and as_of; text does not.
  bool is_number() const { return type == FieldType::quantity || type == FieldType::integer; }
};

// All fields of a kind, in display order. id is implicit (always required) and not listed.
std::span<const FieldDef> fields_of(EntityKind k);
const FieldDef* find_field(EntityKind k, std::string_view name);

// The precisions a GPU may list under peak_dense / peak_sparse.
inline constexpr std::string_view kPrecisions[] = {"fp64", "fp32", "tf32", "fp16",
                                                   "bf16", "fp8",  "int8", "fp4"};

}  // namespace capsim::hardware
