// Who the pods capsim writes run as: every workload it exports (k8s Jobs, Deployments,
// LeaderWorkerSets, JobSets) and the sweep's Indexed Job. Thread-safe: constants and a writer.
//
// The kubelet enforces `runAsNonRoot: true` before it starts a container: with a numeric
// `runAsUser` it checks that number is not 0; without one it reads the image's USER, and a
// name there (`USER capsim`) is refused because the kubelet cannot tell whether it is root
// (CreateContainerConfigError, kubelet's verifyRunAsNonRoot). So every pod names its user and
// group by number, and the capsim image's Dockerfile creates exactly this user and group
// (`USER 10001:10001`; tests/cli checks the two agree).
#pragma once

namespace YAML {
class Emitter;
}

namespace capsim::scenarios {

// The user and group id of the capsim image's `capsim` user (Dockerfile), above the range
// Debian gives to system and login accounts (below 10000), so they name no host account.
inline constexpr int kPodUserId = 10001;
inline constexpr int kPodGroupId = 10001;

// Writes a pod spec's `securityContext` key and map: runAsNonRoot, runAsUser and runAsGroup
// (kPodUserId, kPodGroupId), and fsGroup (the same group) so volumes the pod mounts are
// writable by that user. Call it inside the pod spec's map.
void emit_pod_security_context(YAML::Emitter& y);

}  // namespace capsim::scenarios
