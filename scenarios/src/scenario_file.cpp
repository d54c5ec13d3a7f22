#include "capsim/scenarios/scenario_file.hpp"

#include <yaml-cpp/yaml.h>

namespace capsim::scenarios {

ScenarioFileKind scenario_file_kind(const std::string& text) {
  try {
    const YAML::Node root = YAML::Load(text);
    if (!root.IsMap() || root["workload"]) return ScenarioFileKind::scenario;
    return root["cluster"] || root["workloads"] ? ScenarioFileKind::cluster : ScenarioFileKind::scenario;
  } catch (const YAML::Exception&) {
    return ScenarioFileKind::scenario;
  }
}

Result<std::variant<Scenario, ClusterScenario>> load_any_scenario_file(const std::filesystem::path& path,
                                                                       const hardware::Catalog& catalog) {
  auto text = read_scenario_text(path);
  if (!text) return text.errors();
  const std::string name = path == "-" ? std::string("<stdin>") : path.string();
  if (scenario_file_kind(*text) == ScenarioFileKind::cluster) {
    auto cluster = load_cluster(name, *text, catalog);
    if (!cluster) return cluster.errors();
    return std::variant<Scenario, ClusterScenario>(std::move(cluster).value());
  }
  auto scenario = load_scenario(name, *text, catalog);
  if (!scenario) return scenario.errors();
  return std::variant<Scenario, ClusterScenario>(std::move(scenario).value());
}

}  // namespace capsim::scenarios
