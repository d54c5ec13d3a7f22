// What `capsim catalog list|show` and the GUI's catalog browser print: catalog entries as
// tables (text/CSV/Markdown) and JSON, every number with its source and date.
#pragma once

#include <string>
#include <vector>

#include "capsim/hardware/catalog.hpp"
#include "capsim/scenarios/table.hpp"

namespace capsim::scenarios {

// A field's value as people read it: "80 GB", "3.35 TB/s", "190 USD/kW/month".
std::string display_value(const hardware::FieldDef& def, const hardware::FieldValue& v);

// The main columns of a kind (all_fields = false) or every schema field (true).
Table entities_table(hardware::EntityKind kind, const std::vector<const hardware::Entity*>& entities,
                     bool all_fields);

// One entry: field, value, source, as_of (notes and where it is defined are left to the
// caller: they are prose and a path).
Table entity_table(const hardware::Entity& entity);

// JSON: an entry is {"id", "kind", "defined_at", "fields": {name: {"display", "value",
// "unit", "source", "as_of"} or text}}. Numbers are in SI units named by "unit".
std::string entities_json(const std::vector<const hardware::Entity*>& entities);
std::string entity_json(const hardware::Entity& entity);

}  // namespace capsim::scenarios
