#include "profile_json.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace capsim::calibration {
namespace {

void append_field(std::string& out, std::string_view key, const std::string& json_value, bool& first) {
  out += first ? "" : ", ";
  first = false;
  out += json_string(key);
  out += ": ";
  out += json_value;
}

std::string integer(std::int64_t v) { return std::to_string(v); }

std::string measurement_json(const Measurement& m) {
  std::string out = "{";
  bool first = true;
  append_field(out, "kind", json_string(m.kind), first);
  if (!m.precision.empty()) append_field(out, "precision", json_string(m.precision), first);
  if (m.m) append_field(out, "m", integer(*m.m), first);
  if (m.n) append_field(out, "n", integer(*m.n), first);
  if (m.k) append_field(out, "k", integer(*m.k), first);
  if (m.src) append_field(out, "src", integer(*m.src), first);
  if (m.dst) append_field(out, "dst", integer(*m.dst), first);
  if (m.ranks) append_field(out, "ranks", integer(*m.ranks), first);
  if (m.bytes) append_field(out, "bytes", integer(*m.bytes), first);
  if (m.pinned) append_field(out, "pinned", *m.pinned ? "true" : "false", first);
  if (!m.mode.empty()) append_field(out, "mode", json_string(m.mode), first);
  append_field(out, "median", json_number(m.stats.median), first);
  append_field(out, "min", json_number(m.stats.min), first);
  append_field(out, "max", json_number(m.stats.max), first);
  append_field(out, "q1", json_number(m.stats.q1), first);
  append_field(out, "q3", json_number(m.stats.q3), first);
  append_field(out, "unit", json_string(m.unit), first);
  append_field(out, "repeats", integer(m.stats.count), first);
  out += "}";
  return out;
}

}  // namespace

std::string json_string(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof buffer, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += buffer;
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

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
  int skipped = 0;
  std::string out = "{\n";
  out += "  \"schema\": " + json_string(kSchema) + ",\n";
  if (p.synthetic) out += "  \"synthetic\": true,\n";
  const DeviceInfo& d = p.device;
  std::string device = "{";
  bool first = true;
  append_field(device, "name", json_string(d.name), first);
  append_field(device, "memory_bytes", std::to_string(d.memory_bytes), first);
  append_field(device, "sm_count", integer(d.sm_count), first);
  append_field(device, "clock_mhz", integer(d.clock_mhz), first);
  append_field(device, "memory_clock_mhz", integer(d.memory_clock_mhz), first);
  append_field(device, "bus_width_bits", integer(d.bus_width_bits), first);
  append_field(device, "compute_capability", json_string(d.compute_capability), first);
  if (d.l2_cache_bytes > 0) append_field(device, "l2_cache_bytes", std::to_string(d.l2_cache_bytes), first);
  device += "}";
  out += "  \"device\": " + device + ",\n";
  out += "  \"gpu_count\": " + integer(p.gpu_count) + ",\n";
  out += "  \"driver_version\": " + json_string(p.driver_version) + ",\n";
  out += "  \"cuda_runtime_version\": " + json_string(p.cuda_runtime_version) + ",\n";
  out += "  \"measured_at\": " + json_string(p.measured_at) + ",\n";
  if (!p.host.empty()) {
    std::string host = "{";
    bool first_host = true;
    for (const auto& [key, value] : p.host) append_field(host, key, json_string(value), first_host);
    host += "}";
    out += "  \"host\": " + host + ",\n";
  }
  out += "  \"measurements\": [";
  bool first_measurement = true;
  for (const Measurement& m : p.measurements) {
    if (!is_writable(m)) {
      ++skipped;
      continue;
    }
    out += first_measurement ? "\n    " : ",\n    ";
    first_measurement = false;
    out += measurement_json(m);
  }
  out += first_measurement ? "]\n" : "\n  ]\n";
  out += "}\n";
  if (dropped) *dropped = skipped;
  return out;
}

}  // namespace capsim::calibration
