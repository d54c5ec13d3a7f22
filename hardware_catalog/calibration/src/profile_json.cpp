#include "profile_json.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

namespace capsim::calibration {
namespace {

// Keys in the order the schema (profile_json.hpp) lists them, so a profile reads top-down.
using ordered_json = nlohmann::ordered_json;

ordered_json measurement_json(const Measurement& m) {
  ordered_json j;
  j["kind"] = m.kind;
  if (!m.precision.empty()) j["precision"] = m.precision;
  if (m.m) j["m"] = *m.m;
  if (m.n) j["n"] = *m.n;
  if (m.k) j["k"] = *m.k;
  if (m.src) j["src"] = *m.src;
  if (m.dst) j["dst"] = *m.dst;
  if (m.ranks) j["ranks"] = *m.ranks;
  if (m.bytes) j["bytes"] = *m.bytes;
  if (m.pinned) j["pinned"] = *m.pinned;
  if (!m.mode.empty()) j["mode"] = m.mode;
  j["median"] = m.stats.median;
  j["min"] = m.stats.min;
  j["max"] = m.stats.max;
  j["q1"] = m.stats.q1;
  j["q3"] = m.stats.q3;
  j["unit"] = m.unit;
  j["repeats"] = m.stats.count;
  return j;
}

ordered_json device_json(const DeviceInfo& d) {
  ordered_json j;
  j["name"] = d.name;
  j["memory_bytes"] = d.memory_bytes;
  j["sm_count"] = d.sm_count;
  j["clock_mhz"] = d.clock_mhz;
  j["memory_clock_mhz"] = d.memory_clock_mhz;
  j["bus_width_bits"] = d.bus_width_bits;
  j["compute_capability"] = d.compute_capability;
  if (d.l2_cache_bytes > 0) j["l2_cache_bytes"] = d.l2_cache_bytes;
  return j;
}

}  // namespace

std::string utc_iso8601(std::time_t t) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

bool is_writable(const Measurement& m) {
  const Summary& s = m.stats;
  for (double v : {s.median, s.min, s.max, s.q1, s.q3})
    if (!std::isfinite(v) || !(v > 0)) return false;
  return !m.kind.empty() && !m.unit.empty() && s.count > 0;
}

std::string write_profile(const Profile& p, int* dropped) {
  ordered_json j;
  j["schema"] = std::string(kSchema);
  if (p.synthetic) j["synthetic"] = true;
  j["device"] = device_json(p.device);
  j["gpu_count"] = p.gpu_count;
  j["driver_version"] = p.driver_version;
  j["cuda_runtime_version"] = p.cuda_runtime_version;
  j["measured_at"] = p.measured_at;
  if (!p.host.empty()) {
    ordered_json host = ordered_json::object();
    for (const auto& [key, value] : p.host) host[key] = value;
    j["host"] = host;
  }
  j["measurements"] = ordered_json::array();
  int skipped = 0;
  for (const Measurement& m : p.measurements) {
    if (is_writable(m))
      j["measurements"].push_back(measurement_json(m));
    else
      ++skipped;
  }
  if (dropped) *dropped = skipped;
  // A byte that is not UTF-8 (a device or host string is whatever the driver or /proc says)
  // becomes U+FFFD rather than an exception or a file no JSON reader accepts.
  return j.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace capsim::calibration
