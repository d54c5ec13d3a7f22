// What a scenario file holds: one workload's scenario (workload:, hardware:, ...) or a
// cluster scenario (cluster:, workloads:). `validate` and `run` read both kinds and accept
// exactly what `size`/`run` and `plan` accept.
#pragma once

#include <filesystem>
#include <string>
#include <variant>

#include "capsim/core/result.hpp"
#include "capsim/hardware/catalog.hpp"
#include "capsim/scenarios/cluster.hpp"
#include "capsim/scenarios/scenario.hpp"

namespace capsim::scenarios {

enum class ScenarioFileKind { scenario, cluster };

// A cluster scenario is a mapping whose top level has cluster: or workloads: and no
// workload:. Anything else, text that is not YAML included, reads as a scenario: its loader
// says what is wrong, with the line and column.
ScenarioFileKind scenario_file_kind(const std::string& text);

// The file loaded as the kind it holds (`path` "-": standard input, read once).
Result<std::variant<Scenario, ClusterScenario>> load_any_scenario_file(const std::filesystem::path& path,
                                                                       const hardware::Catalog& catalog);

}  // namespace capsim::scenarios
