#include "capsim/scenarios/pod_security.hpp"

#include <yaml-cpp/yaml.h>

namespace capsim::scenarios {

void emit_pod_security_context(YAML::Emitter& y) {
  y << YAML::Key << "securityContext" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "runAsNonRoot" << YAML::Value << true;
  y << YAML::Key << "runAsUser" << YAML::Value << kPodUserId;
  y << YAML::Key << "runAsGroup" << YAML::Value << kPodGroupId;
  y << YAML::Key << "fsGroup" << YAML::Value << kPodGroupId;
  y << YAML::EndMap;
}

}  // namespace capsim::scenarios
