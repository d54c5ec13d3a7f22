// capsim-calibrate's profile writer (nlohmann-json, compiled here without CUDA): read back
// with nlohmann-json and with capsim's own importer, keys and layout pinned.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>
#include <nlohmann/json.hpp>

#include "capsim/hardware/calibration.hpp"
#include "profile_json.hpp"

using namespace capsim::calibration;
using nlohmann::json;

namespace {

Measurement gemm(std::int64_t d, double median) {
  Measurement m;
  m.kind = "gemm";
  m.precision = "bf16";
  m.m = m.n = m.k = d;
  m.stats = {median, median * 0.9, median * 1.05, median * 0.95, median * 1.01, 20};
  m.unit = "FLOP/s";
  return m;
}

Profile sample_profile() {
  Profile p;
  p.device = {"NVIDIA \"Quoted\" \\ GPU\n\t\x01 µ", 85049802752ULL, 132, 1980, 2619, 5120, "9.0", 52428800};
  p.gpu_count = 2;
  p.driver_version = "13.0";
  p.cuda_runtime_version = "13.0";
  p.measured_at = utc_iso8601(1735689600);  // 2025-01-01T00:00:00Z
  p.host = {{"cpu", "Some CPU @ 2.00GHz"}, {"os", "Linux 6.1"}};
  p.measurements.push_back(gemm(4096, 1.0 / 3.0 * 1e15));
  Measurement h2d;
  h2d.kind = "h2d";
  h2d.bytes = 1 << 30;
  h2d.pinned = true;
  h2d.stats = {5.0e10, 4.9e10, 5.1e10, 4.95e10, 5.05e10, 20};
  h2d.unit = "B/s";
  p.measurements.push_back(h2d);
  Measurement p2p;
  p2p.kind = "p2p";
  p2p.src = 0;
  p2p.dst = 1;
  p2p.bytes = 4;
  p2p.stats = {2.5e-6, 2.4e-6, 3.1e-6, 2.45e-6, 2.6e-6, 20};
  p2p.unit = "s";
  p.measurements.push_back(p2p);
  Measurement allreduce;
  allreduce.kind = "allreduce";
  allreduce.ranks = 2;
  allreduce.bytes = 1 << 30;
  allreduce.stats = {3.6e11, 3.5e11, 3.7e11, 3.55e11, 3.65e11, 20};
  allreduce.unit = "B/s";
  p.measurements.push_back(allreduce);
  Measurement launch;
  launch.kind = "launch_latency";
  launch.mode = "queued";
  launch.stats = {2.5e-6, 2.0e-6, 4.0e-6, 2.2e-6, 2.9e-6, 20};
  launch.unit = "s";
  p.measurements.push_back(launch);
  return p;
}

}  // namespace

TEST_CASE("strings are escaped so any device or host text survives") {
  Profile p = sample_profile();
  const std::vector<std::string> texts = {"plain", "q\"uote", "back\\slash", "ctl\x02\x1f", "nl\n\r\t", "µs", "{\"a\": [1]}"};
  p.host.clear();
  for (std::size_t i = 0; i < texts.size(); ++i) p.host.emplace_back("k" + std::to_string(i), texts[i]);
  const json j = json::parse(write_profile(p));
  for (std::size_t i = 0; i < texts.size(); ++i) CHECK(j["host"]["k" + std::to_string(i)] == texts[i]);
  CHECK(j["device"]["name"] == p.device.name);  // quotes, backslash, newline, tab, \x01, µ
}

TEST_CASE("a byte that is not UTF-8 becomes U+FFFD, never invalid JSON or an exception") {
  Profile p = sample_profile();
  p.device.name = "GPU \xff\xfe name";
  std::string text;
  REQUIRE_NOTHROW(text = write_profile(p));
  CHECK(json::parse(text)["device"]["name"] == "GPU \ufffd\ufffd name");
  auto parsed = capsim::hardware::parse_calibration_profile(text, "written.json");
  REQUIRE_MESSAGE(parsed.ok(), capsim::format_diagnostics(parsed.errors()));
}

TEST_CASE("numbers round-trip exactly") {
  Profile p = sample_profile();
  p.measurements.resize(1);
  const std::vector<double> values = {1.0, 1.0 / 3.0, 1e-7, 6.02214076e23, 989e12, 2.5e-6, 8.541475000000001e-06};
  for (double v : values) {
    p.measurements[0].stats = {v, v, v, v, v, 20};
    const json m = json::parse(write_profile(p))["measurements"][0];
    for (const char* key : {"median", "min", "max", "q1", "q3"}) CHECK(m[key].get<double>() == v);
  }
}

TEST_CASE("the keys are the schema's, in its order, as the hand-written writer wrote them") {
  Profile p = sample_profile();
  p.synthetic = true;
  const std::string text = write_profile(p);
  // nlohmann::ordered_json keeps the insertion order; parse into one too so it is seen.
  const auto j = nlohmann::ordered_json::parse(text);
  const auto keys = [](const nlohmann::ordered_json& o) {
    std::vector<std::string> out;
    for (const auto& item : o.items()) out.push_back(item.key());
    return out;
  };
  using Keys = std::vector<std::string>;
  CHECK(keys(j) == Keys{"schema", "synthetic", "device", "gpu_count", "driver_version", "cuda_runtime_version",
                        "measured_at", "host", "measurements"});
  CHECK(keys(j["device"]) == Keys{"name", "memory_bytes", "sm_count", "clock_mhz", "memory_clock_mhz",
                                  "bus_width_bits", "compute_capability", "l2_cache_bytes"});
  CHECK(keys(j["host"]) == Keys{"cpu", "os"});
  const Keys stats = {"median", "min", "max", "q1", "q3", "unit", "repeats"};
  const auto with_stats = [&](Keys head) {
    head.insert(head.end(), stats.begin(), stats.end());
    return head;
  };
  const auto& m = j["measurements"];
  REQUIRE(m.size() == 5);
  CHECK(keys(m[0]) == with_stats({"kind", "precision", "m", "n", "k"}));
  CHECK(keys(m[1]) == with_stats({"kind", "bytes", "pinned"}));
  CHECK(keys(m[2]) == with_stats({"kind", "src", "dst", "bytes"}));
  CHECK(keys(m[3]) == with_stats({"kind", "ranks", "bytes"}));
  CHECK(keys(m[4]) == with_stats({"kind", "mode"}));
  // Integers stay integers (a reader that wants an int gets one), and the file ends in a newline.
  CHECK(m[0]["m"].is_number_integer());
  CHECK(m[0]["repeats"].is_number_integer());
  CHECK(j["device"]["memory_bytes"].is_number_unsigned());
  CHECK(text.back() == '\n');
  CHECK(text.starts_with("{\n  \"schema\": \"capsim-calibration/1\",\n"));
  p.device.l2_cache_bytes = 0;  // unknown: left out
  CHECK_FALSE(json::parse(write_profile(p))["device"].contains("l2_cache_bytes"));
}

TEST_CASE("time and version texts") {
  CHECK(utc_iso8601(0) == "1970-01-01T00:00:00Z");
  CHECK(utc_iso8601(1735689600) == "2025-01-01T00:00:00Z");
  CHECK(cuda_version_text(12040) == "12.4");
  CHECK(cuda_version_text(13000) == "13.0");
}

TEST_CASE("a written profile reads back with nlohmann-json, field by field") {
  const Profile p = sample_profile();
  int dropped = -1;
  const std::string text = write_profile(p, &dropped);
  CHECK(dropped == 0);
  const json j = json::parse(text);
  CHECK(j["schema"] == "capsim-calibration/1");
  CHECK_FALSE(j.contains("synthetic"));  // only invented profiles carry the flag
  CHECK(j["device"]["name"] == p.device.name);
  CHECK(j["device"]["memory_bytes"] == 85049802752ULL);
  CHECK(j["device"]["compute_capability"] == "9.0");
  CHECK(j["device"]["l2_cache_bytes"] == 52428800);
  CHECK(j["gpu_count"] == 2);
  CHECK(j["measured_at"] == "2025-01-01T00:00:00Z");
  CHECK(j["host"]["cpu"] == "Some CPU @ 2.00GHz");
  REQUIRE(j["measurements"].size() == 5);
  const json& g = j["measurements"][0];
  CHECK(g["kind"] == "gemm");
  CHECK(g["precision"] == "bf16");
  CHECK(g["m"] == 4096);
  CHECK(g["median"].get<double>() == 1.0 / 3.0 * 1e15);
  CHECK(g["min"].get<double>() == 1.0 / 3.0 * 1e15 * 0.9);
  CHECK(g["q3"].get<double>() == 1.0 / 3.0 * 1e15 * 1.01);
  CHECK(g["unit"] == "FLOP/s");
  CHECK(g["repeats"] == 20);
  CHECK(j["measurements"][1]["pinned"] == true);
  CHECK(j["measurements"][1]["bytes"] == 1 << 30);
  CHECK(j["measurements"][2]["src"] == 0);
  CHECK(j["measurements"][2]["dst"] == 1);
  CHECK(j["measurements"][3]["ranks"] == 2);
  CHECK(j["measurements"][4]["mode"] == "queued");
  CHECK(text.find("uuid") == std::string::npos);
  CHECK(text.find("UUID") == std::string::npos);
}

TEST_CASE("capsim's importer accepts what the writer writes") {
  const std::string text = write_profile(sample_profile());
  auto parsed = capsim::hardware::parse_calibration_profile(text, "written.json");
  REQUIRE_MESSAGE(parsed.ok(), capsim::format_diagnostics(parsed.errors()));
  CHECK(parsed->device.name == sample_profile().device.name);
  CHECK(parsed->measurements.size() == 5);
  CHECK(parsed->measurements[2].src == 0);
  CHECK(parsed->measurements[2].unit == "s");
  // Every figure the importer keeps is the one written, to the last bit.
  const Profile p = sample_profile();
  CHECK(parsed->gpu_count == p.gpu_count);
  CHECK(parsed->measured_at == p.measured_at);
  CHECK(parsed->device.memory_bytes == static_cast<double>(p.device.memory_bytes));
  CHECK(parsed->device.compute_capability == "9.0");
  for (std::size_t i = 0; i < p.measurements.size(); ++i) {
    CAPTURE(i);
    CHECK(parsed->measurements[i].kind == p.measurements[i].kind);
    CHECK(parsed->measurements[i].median == p.measurements[i].stats.median);
    CHECK(parsed->measurements[i].min == p.measurements[i].stats.min);
    CHECK(parsed->measurements[i].max == p.measurements[i].stats.max);
    CHECK(parsed->measurements[i].repeats == p.measurements[i].stats.count);
  }
  CHECK(parsed->measurements[0].m == 4096);
  CHECK(parsed->measurements[1].pinned == true);
  CHECK(parsed->measurements[3].ranks == 2);
  CHECK(parsed->measurements[4].mode == "queued");
}

TEST_CASE("non-finite or non-positive measurements are left out, and counted") {
  Profile p = sample_profile();
  p.measurements.push_back(gemm(512, std::nan("")));
  p.measurements.push_back(gemm(1024, std::numeric_limits<double>::infinity()));
  p.measurements.push_back(gemm(2048, 0.0));
  p.measurements.push_back(gemm(8192, -1.0));
  int dropped = 0;
  const std::string text = write_profile(p, &dropped);
  CHECK(dropped == 4);
  for (const char* bad : {"nan", "NaN", "inf", "Infinity", "null"}) CHECK(text.find(bad) == std::string::npos);
  CHECK(json::parse(text)["measurements"].size() == 5);
}

TEST_CASE("a profile without measurements is still valid JSON") {
  Profile p = sample_profile();
  p.measurements.clear();
  p.host.clear();
  const json j = json::parse(write_profile(p));
  CHECK(j["measurements"].empty());
  CHECK_FALSE(j.contains("host"));
}
