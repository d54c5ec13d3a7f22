// capsim-calibrate's hand-written JSON writer: read back with nlohmann-json and with
// capsim's own importer.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
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

TEST_CASE("strings are escaped so any device name survives") {
  CHECK(json_string("a\"b\\c") == R"("a\"b\\c")");
  CHECK(json_string("x\ny\tz\r") == R"("x\ny\tz\r")");
  CHECK(json_string(std::string("\x01\x1f", 2)) == R"("\u0001\u001f")");
  CHECK(json_string("µs") == "\"µs\"");  // UTF-8 passes through
  for (const std::string s : {"plain", "q\"uote", "back\\slash", "ctl\x02", "nl\n", "µ"})
    CHECK(json::parse(json_string(s)).get<std::string>() == s);
}

TEST_CASE("numbers round-trip exactly and never become NaN or Infinity") {
  for (double v : {0.0, 1.0, 1.0 / 3.0, 1e-7, 6.02214076e23, 989e12, 2.5e-6})
    CHECK(json::parse(json_number(v)).get<double>() == v);
  CHECK(json_number(std::nan("")) == "null");
  CHECK(json_number(std::numeric_limits<double>::infinity()) == "null");
  CHECK(json_number(-std::numeric_limits<double>::infinity()) == "null");
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
