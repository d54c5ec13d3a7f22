// Importing calibration profiles: validation errors that name the JSON path, matching the
// device to a catalog GPU, the GEMM-curve fit, and storing/reading back through SQLite.
#include <doctest/doctest.h>
#include <sqlite3.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "capsim/hardware/calibration.hpp"
#include "capsim/hardware/store.hpp"
#include "support/test_support.hpp"

using namespace capsim;
using namespace capsim::hardware;
using nlohmann::json;

namespace {

const std::string kSynthetic = CAPSIM_TEST_DATA_DIR "/calibration/synthetic/";

std::string h100_text() { return testing::read_file(kSynthetic + "h100-sxm-80gb-synthetic.json"); }

// A small valid profile; each bad-profile case mutates one thing.
json small_profile() {
  return json::parse(R"({
    "schema": "capsim-calibration/1", "synthetic": true,
    "device": {"name": "NVIDIA H100 80GB HBM3", "memory_bytes": 85049802752, "sm_count": 132,
               "clock_mhz": 1980, "memory_clock_mhz": 2619, "bus_width_bits": 5120,
               "compute_capability": "9.0"},
    "driver_version": "13.0", "cuda_runtime_version": "13.0", "measured_at": "2025-01-01T00:00:00Z",
    "measurements": [
      {"kind": "gemm", "precision": "bf16", "m": 4096, "n": 4096, "k": 4096,
       "median": 7e14, "min": 6.9e14, "max": 7.1e14, "unit": "FLOP/s", "repeats": 20},
      {"kind": "triad", "bytes": 3221225472, "median": 3e12, "min": 2.9e12, "max": 3.1e12,
       "unit": "B/s", "repeats": 20}
    ]})");
}

std::vector<Diagnostic> errors_of(const std::string& text) {
  auto r = parse_calibration_profile(text, "bad.json");
  return r.ok() ? std::vector<Diagnostic>{} : r.errors();
}

}  // namespace

TEST_CASE("the synthetic profiles are valid and say they are synthetic") {
  for (const char* name : {"h100-sxm-80gb-synthetic.json", "a100-sxm-80gb-synthetic.json"}) {
    CAPTURE(name);
    auto p = read_calibration_profile(kSynthetic + name);
    REQUIRE_MESSAGE(p.ok(), format_diagnostics(p.errors()));
    CHECK(p->synthetic);
    CHECK(measured_figures(*p).describe().ends_with(", synthetic)"));
  }
}

TEST_CASE("bad profiles are refused with errors that name the JSON path") {
  const struct {
    const char* name;
    std::function<void(json&)> mutate;
    std::string path;
    std::string message;
  } cases[] = {
      {"wrong schema", [](json& j) { j["schema"] = "capsim-calibration/2"; }, "schema",
       "unsupported schema 'capsim-calibration/2'; this capsim reads capsim-calibration/1"},
      {"missing schema", [](json& j) { j.erase("schema"); }, "schema", "missing"},
      {"null median (NaN written as null)", [](json& j) { j["measurements"][0]["median"] = nullptr; },
       "measurements[0].median", "must be a finite positive number, got null"},
      {"negative median", [](json& j) { j["measurements"][1]["median"] = -3e12; }, "measurements[1].median",
       "must be a finite positive number, got -3e+12"},
      {"zero bytes", [](json& j) { j["measurements"][1]["bytes"] = 0; }, "measurements[1].bytes",
       "must be a finite positive number, got 0"},
      {"string number", [](json& j) { j["measurements"][0]["max"] = "7.1e14"; }, "measurements[0].max",
       "must be a finite positive number, got the string \"7.1e14\""},
      {"missing device name", [](json& j) { j["device"].erase("name"); }, "device.name", "missing"},
      {"missing device", [](json& j) { j.erase("device"); }, "device", "missing"},
      {"missing measurements", [](json& j) { j.erase("measurements"); }, "measurements", "missing"},
      {"empty measurements", [](json& j) { j["measurements"] = json::array(); }, "measurements",
       "the profile has no measurements"},
      {"missing gemm dimension", [](json& j) { j["measurements"][0].erase("k"); }, "measurements[0].k", "missing"},
      {"fractional dimension", [](json& j) { j["measurements"][0]["m"] = 4096.5; }, "measurements[0].m",
       "must be an integer, got 4096.5"},
      {"unknown kind", [](json& j) { j["measurements"][1]["kind"] = "triads"; }, "measurements[1].kind",
       "unknown measurement kind 'triads'"},
      {"unknown precision", [](json& j) { j["measurements"][0]["precision"] = "bf15"; },
       "measurements[0].precision", "unknown precision 'bf15'"},
      {"wrong unit", [](json& j) { j["measurements"][0]["unit"] = "B/s"; }, "measurements[0].unit",
       "unit 'B/s' does not fit a gemm measurement"},
      {"median outside min..max", [](json& j) { j["measurements"][0]["min"] = 8e14; }, "measurements[0].median",
       "min <= median <= max does not hold (8e+14, 7e+14, 7.1e+14)"},
      {"unknown key", [](json& j) { j["measurements"][1]["colour"] = "red"; }, "measurements[1].colour",
       "unknown key"},
      {"bad time", [](json& j) { j["measured_at"] = "yesterday"; }, "measured_at",
       "must be a UTC time like \"2025-06-01T12:00:00Z\", got \"yesterday\""},
      {"bad compute capability", [](json& j) { j["device"]["compute_capability"] = 9; },
       "device.compute_capability", "must be a string, got 9"},
      {"measurement not an object", [](json& j) { j["measurements"][0] = 5; }, "measurements[0]",
       "must be an object, got 5"},
      {"p2p to itself", [](json& j) {
         j["measurements"][1] = json::parse(R"({"kind": "p2p", "src": 1, "dst": 1, "bytes": 4, "median": 2e-6,
                                               "min": 1e-6, "max": 3e-6, "unit": "s", "repeats": 5})");
       },
       "measurements[1].dst", "must differ from src"},
      {"h2d without pinned", [](json& j) {
         j["measurements"][1] = json::parse(R"({"kind": "h2d", "bytes": 4096, "median": 2e9,
                                               "min": 1e9, "max": 3e9, "unit": "B/s", "repeats": 5})");
       },
       "measurements[1].pinned", "missing"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    json j = small_profile();
    c.mutate(j);
    const auto errors = errors_of(j.dump());
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].key_path == c.path);
    CHECK(errors[0].message == c.message);
    CHECK(errors[0].where.file == "bad.json");
  }
}

TEST_CASE("every problem of a profile is reported at once") {
  json j = small_profile();
  j["measurements"][0]["median"] = -1;
  j["measurements"][1]["kind"] = "tirad";
  j["device"].erase("sm_count");
  const auto errors = errors_of(j.dump());
  REQUIRE(errors.size() == 3);
  CHECK(errors[0].key_path == "device.sm_count");
  CHECK(errors[1].key_path == "measurements[0].median");
  CHECK(errors[2].key_path == "measurements[1].kind");
  CHECK(errors[2].hint == "did you mean 'triad'?");
}

TEST_CASE("text that is not JSON (NaN, Infinity, truncation) is refused with its line and column") {
  std::string text = small_profile().dump(1);
  const auto at = text.find("7e+14");  // nlohmann writes 700000000000000.0; find the median either way
  const auto median = text.find("\"median\"");
  REQUIRE(median != std::string::npos);
  (void)at;
  const auto value_start = text.find(':', median) + 2;
  const auto value_end = text.find_first_of(",\n", value_start);
  const std::string with_nan = text.substr(0, value_start) + "NaN" + text.substr(value_end);
  for (const std::string& bad : {with_nan, text.substr(0, text.size() / 2), std::string("[1, 2")}) {
    const auto errors = errors_of(bad);
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].message.starts_with("not valid JSON: "));
    CHECK(errors[0].where.line >= 1);
    CHECK(errors[0].where.column >= 1);
  }
  const auto nan_errors = errors_of(with_nan);
  CHECK(nan_errors[0].where.line > 1);  // points into the file, at the measurement
  CHECK(errors_of("[]")[0].message == "a calibration profile must be a JSON object, got an array");
  CHECK(errors_of(R"({"schema": "capsim-calibration/1", "x": 1e999})")[0].message.starts_with("not valid JSON"));
}

TEST_CASE("devices are matched to catalog GPUs by driver name and memory") {
  const Catalog& catalog = testing::shipped_catalog();
  const struct {
    const char* name;
    double memory;
    const char* gpu;
  } cases[] = {
      {"NVIDIA H100 80GB HBM3", 85049802752, "h100-sxm-80gb"},
      {"NVIDIA H100 PCIe", 85520809984, "h100-pcie-80gb"},
      {"NVIDIA H100 NVL", 100485038080, "h100-nvl"},
      {"NVIDIA H200", 150754820096, "h200-sxm-141gb"},
      {"NVIDIA A100-SXM4-80GB", 85198045184, "a100-sxm-80gb"},
      {"NVIDIA A100-SXM4-40GB", 42505273344, "a100-sxm-40gb"},
      {"NVIDIA A100 80GB PCIe", 85198045184, "a100-pcie-80gb"},
      {"NVIDIA A100-PCIE-40GB", 42505273344, "a100-pcie-40gb"},
      {"Tesla V100-SXM2-32GB", 34089730048, "v100-sxm2-32gb"},
      {"Tesla V100-SXM2-16GB", 16945709056, "v100-sxm2-16gb"},
      {"Tesla T4", 15843721216, "t4"},
      {"NVIDIA A10G", 23836098560, "a10g"},
      {"NVIDIA L4", 23661248512, "l4"},
      {"NVIDIA L40S", 47697362944, "l40s"},
      {"NVIDIA GeForce RTX 4090", 25386352640, "rtx-4090"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    CalibrationDevice d;
    d.name = c.name;
    d.memory_bytes = c.memory;
    auto id = match_calibration_gpu(catalog, d);
    REQUIRE_MESSAGE(id.ok(), format_diagnostics(id.errors()));
    CHECK(*id == c.gpu);
  }
}

TEST_CASE("an unmatched device is refused with the closest catalog GPUs named") {
  const Catalog& catalog = testing::shipped_catalog();
  CalibrationDevice unknown;
  unknown.name = "NVIDIA Hypothetical X9 48GB";
  unknown.memory_bytes = 51e9;
  auto r = match_calibration_gpu(catalog, unknown);
  REQUIRE_FALSE(r.ok());
  CHECK(r.errors()[0].key_path == "device.name");
  CHECK(r.errors()[0].message ==
        "cannot match device 'NVIDIA Hypothetical X9 48GB' (51 GB) to a catalog GPU; closest catalog GPUs: "
        "quadro-rtx-8000 (NVIDIA Quadro RTX 8000, 48 GB), a40 (NVIDIA A40, 48 GB), rtx-a6000 (NVIDIA RTX A6000, 48 GB)");
  CHECK(r.errors()[0].hint == "pass --gpu ID to choose the catalog GPU yourself");

  CalibrationDevice wrong_memory;
  wrong_memory.name = "NVIDIA H100 80GB HBM3";
  wrong_memory.memory_bytes = 50e9;
  auto w = match_calibration_gpu(catalog, wrong_memory);
  REQUIRE_FALSE(w.ok());
  CHECK(w.errors()[0].message.starts_with(
      "cannot match device 'NVIDIA H100 80GB HBM3' (50 GB) to a catalog GPU: its name fits h100-sxm-80gb but the "
      "catalog gives that GPU 80 GB; closest catalog GPUs: "));
}

TEST_CASE("the GEMM curve fit recovers the parameters the points were made from") {
  // Points on flops = 800e12 * prod d/(d+128), as in the synthetic H100 profile.
  std::vector<GemmPoint> points;
  for (double d : {128.0, 512.0, 2048.0, 8192.0}) points.push_back({d, d, d, 800e12 * std::pow(d / (d + 128), 3)});
  points.push_back({16, 8192, 8192, 800e12 * (16.0 / 144) * std::pow(8192.0 / 8320, 2)});
  auto curve = fit_gemm_curve(points);
  REQUIRE(curve);
  CHECK(curve->ceiling.value() == doctest::Approx(800e12).epsilon(1e-9));
  CHECK(curve->half_saturation_dim == doctest::Approx(128).epsilon(1e-9));
  CHECK(curve->points == 5);
  CHECK(curve->rms_relative_error < 1e-9);

  // 10 % noise on alternate points still lands near the truth.
  for (std::size_t i = 0; i < points.size(); i += 2) points[i].flops_per_second *= 1.1;
  auto noisy = fit_gemm_curve(points);
  REQUIRE(noisy);
  CHECK(noisy->ceiling.value() == doctest::Approx(800e12).epsilon(0.15));
  CHECK(noisy->rms_relative_error > 0.01);

  CHECK_FALSE(fit_gemm_curve({points[0], points[1]}));  // fewer than 3 points
  CHECK_FALSE(fit_gemm_curve({points[0], points[0], points[0]}));  // one shape cannot separate the parameters
  CHECK_FALSE(fit_gemm_curve({{1, 1, 1, 1}, {2, 2, 2, -1}, {3, 3, 3, 1}}));  // non-positive throughput
}

TEST_CASE("the real H100 profile: the curve is fitted to the GEMMs the tensor cores bound") {
  // Measured on an H100 80GB HBM3 (data/calibration/README.md). Its GEMMs up to 1024^3 take
  // 6-7 us whatever their FLOPs, and the 16- and 64-row shapes stream their weights: fitted
  // with them, the bf16 "ceiling" came out at 2.04 PFLOP/s, twice the datasheet, at 68 % rms.
  auto p = read_calibration_profile(CAPSIM_TEST_DATA_DIR "/calibration/h100-sxm-80gb-2026-11-26.json");
  REQUIRE(p.ok());
  CHECK_FALSE(p->synthetic);
  const MeasuredFigures f = measured_figures(*p);
  REQUIRE(f.launch_latency);
  REQUIRE(f.memory_bandwidth);
  CHECK(f.memory_bandwidth->value() == doctest::Approx(2.888e12).epsilon(0.001));
  for (const char* precision : {"bf16", "fp16", "fp8"}) {
    CAPTURE(precision);
    REQUIRE(f.gemm_curve.count(precision) == 1);
    const GemmCurve& c = f.gemm_curve.at(precision);
    // The curve's ceiling stays within the best measured GEMM's reach (the datasheet's dense
    // bf16/fp16 peak is 989 TFLOP/s, fp8 1,979) and describes the points it kept.
    CHECK(c.ceiling.value() <= 1.05 * f.gemm_best.at(precision).value());
    CHECK(c.ceiling.value() >= 0.9 * f.gemm_best.at(precision).value());
    CHECK(c.rms_relative_error < 0.15);
    // 10 shapes of 20 shape the curve; fp8's 2048^3 would take under four launches at its
    // best rate, so it is left out too.
    CHECK(c.points == (std::string_view(precision) == "fp8" ? 9 : 10));
  }
  CHECK(f.gemm_curve.at("bf16").ceiling.value() == doctest::Approx(759e12).epsilon(0.01));
  CHECK(f.gemm_curve.at("bf16").half_saturation_dim == doctest::Approx(106).epsilon(0.02));

  // Which GEMMs were left out, and why.
  auto gemm = [&](const char* precision, double m, double n, double k) {
    for (const auto& x : p->measurements)
      if (x.kind == "gemm" && x.precision == precision && x.m == m && x.n == n && x.k == k) return x;
    FAIL("no such GEMM in the profile");
    return CalibrationMeasurement{};
  };
  CHECK_FALSE(shapes_the_curve(gemm("bf16", 1024, 1024, 1024), f));  // 6.9 us: launch-bound
  CHECK_FALSE(shapes_the_curve(gemm("bf16", 64, 8192, 8192), f));    // streams 136 MB: memory-bound
  CHECK(shapes_the_curve(gemm("bf16", 2048, 2048, 2048), f));
  CHECK(shapes_the_curve(gemm("bf16", 8192, 3072, 12288), f));
}

TEST_CASE("the real H100 profile at the sustained clock: a lower ceiling, and slow small GEMMs stay out") {
  // capsim-calibrate --sustain 1 (data/calibration/README.md): each GEMM ran back to back for
  // a second before its samples, at the clock the 700 W limit holds.
  auto burst = read_calibration_profile(CAPSIM_TEST_DATA_DIR "/calibration/h100-sxm-80gb-2026-11-26.json");
  auto sustained = read_calibration_profile(CAPSIM_TEST_DATA_DIR "/calibration/h100-sxm-80gb-2026-11-26-sustained.json");
  REQUIRE(burst.ok());
  REQUIRE(sustained.ok());
  const MeasuredFigures b = measured_figures(*burst);
  const MeasuredFigures f = measured_figures(*sustained);
  REQUIRE(f.gemm_curve.count("bf16") == 1);
  const GemmCurve& c = f.gemm_curve.at("bf16");
  CHECK(c.ceiling.value() == doctest::Approx(717e12).epsilon(0.01));
  CHECK(c.rms_relative_error < 0.05);
  CHECK(c.ceiling.value() < 0.95 * b.gemm_curve.at("bf16").ceiling.value());
  CHECK(f.gemm_best.at("bf16").value() < 0.95 * b.gemm_best.at("bf16").value());
  // Two small GEMMs were caught slow (tf32 128^3 in 17.8 us, fp16 512^3 in 33 us): over four
  // launch latencies, but their work is launch-sized, so they stay out of the curve.
  auto gemm = [&](const char* precision, double n) {
    for (const auto& x : sustained->measurements)
      if (x.kind == "gemm" && x.precision == precision && x.m == n && x.n == n && x.k == n) return x;
    FAIL("no such GEMM in the profile");
    return CalibrationMeasurement{};
  };
  CHECK(2.0 * 128 * 128 * 128 / gemm("tf32", 128).median > 4 * f.launch_latency->value());
  CHECK_FALSE(shapes_the_curve(gemm("tf32", 128), f));
  CHECK_FALSE(shapes_the_curve(gemm("fp16", 512), f));
  for (const char* precision : {"tf32", "fp16", "bf16", "fp8"}) {
    CAPTURE(precision);
    CHECK(f.gemm_curve.at(precision).rms_relative_error < 0.06);
  }
}

TEST_CASE("measured figures from the synthetic H100 profile") {
  auto p = read_calibration_profile(kSynthetic + "h100-sxm-80gb-synthetic.json");
  REQUIRE(p.ok());
  const MeasuredFigures f = measured_figures(*p);
  CHECK(f.device_name == "NVIDIA H100 80GB HBM3");
  CHECK(f.synthetic);
  REQUIRE(f.gemm_curve.count("bf16") == 1);
  CHECK(f.gemm_curve.at("bf16").ceiling.value() == doctest::Approx(800e12).epsilon(1e-9));
  CHECK(f.gemm_curve.at("bf16").half_saturation_dim == doctest::Approx(128).epsilon(1e-9));
  CHECK(f.gemm_curve.at("fp8").half_saturation_dim == doctest::Approx(160).epsilon(1e-9));
  // Best measured bf16: 16384^3 -> 800e12 (16384/16512)^3.
  CHECK(f.gemm_best.at("bf16").value() == doctest::Approx(800e12 * std::pow(16384.0 / 16512, 3)));
  CHECK(f.memory_bandwidth->value() == 3.0e12);  // triad at the largest working set
  const double gib = 1 << 30;
  CHECK(f.h2d_pinned->value() == doctest::Approx(50e9 * gib / (gib + 200e3)));
  CHECK(f.h2d_pageable->value() == doctest::Approx(20e9 * gib / (gib + 200e3)));
  CHECK(f.p2p_bandwidth->value() == doctest::Approx(370e9 * 268435456 / (268435456 + 1e6)));
  CHECK(f.p2p_latency->value() == 2.5e-6);
  CHECK(f.collective_ranks == 8);
  CHECK(f.allreduce_bus_bandwidth->value() == doctest::Approx(360e9 * gib / (gib + 8e6)));
  CHECK(f.launch_latency->value() == 2.5e-6);
}

TEST_CASE("an imported profile is stored, read back, and attached to the catalog's GPU") {
  const auto path = testing::scratch_dir("calibration") / "import.db";
  std::filesystem::remove(path);
  auto store = Store::open(path);
  REQUIRE(store.ok());
  REQUIRE(store.value().save_catalog(testing::shipped_catalog()).empty());
  CHECK_FALSE(store->calibration_for("h100-sxm-80gb"));

  const std::string text = h100_text();
  auto profile = parse_calibration_profile(text);
  REQUIRE(profile.ok());
  auto id = store.value().import_calibration(*profile, text, "h100-sxm-80gb");
  REQUIRE_MESSAGE(id.ok(), format_diagnostics(id.errors()));
  CHECK(*id == 1);

  auto figures = store->calibration_for("h100-sxm-80gb");
  REQUIRE(figures);
  CHECK(figures->memory_bandwidth->value() == 3.0e12);
  CHECK_FALSE(store->calibration_for("a100-sxm-80gb"));

  // One row per measurement in calibration_measurements.
  sqlite3_stmt* q = nullptr;
  sqlite3_prepare_v2(store->handle(), "SELECT COUNT(*) FROM calibration_measurements WHERE profile_id = 1;", -1, &q,
                     nullptr);
  REQUIRE(sqlite3_step(q) == SQLITE_ROW);
  CHECK(static_cast<std::size_t>(sqlite3_column_int(q, 0)) == profile->measurements.size());
  sqlite3_finalize(q);

  auto catalog = store->load_catalog();
  REQUIRE(catalog.ok());
  auto h100 = catalog->gpu("h100-sxm-80gb");
  REQUIRE(h100.ok());
  REQUIRE(h100->measured);
  CHECK(h100->figures_source == "calibrated (NVIDIA H100 80GB HBM3, measured 2025-01-01T00:00:00Z, synthetic)");
  CHECK(h100->peak("bf16")->value() == 989e12);  // the datasheet stays as it was
  auto a100 = catalog->gpu("a100-sxm-80gb");
  REQUIRE(a100.ok());
  CHECK_FALSE(a100->measured);
  CHECK(a100->figures_source == "datasheet");

  // The newest measurement wins, whatever the import order.
  json newer = json::parse(text);
  newer["measured_at"] = "2025-03-01T00:00:00Z";
  for (auto& m : newer["measurements"])
    if (m["kind"] == "triad")  // 3.0 -> 3.1 TB/s at every size
      for (const char* stat : {"median", "min", "max", "q1", "q3"}) m[stat] = m[stat].get<double>() * 31 / 30;
  json older = json::parse(text);
  older["measured_at"] = "2024-06-01T00:00:00Z";
  for (const json* j : {&newer, &older}) {
    auto p = parse_calibration_profile(j->dump());
    REQUIRE(p.ok());
    REQUIRE(store.value().import_calibration(*p, j->dump(), "h100-sxm-80gb").ok());
  }
  CHECK(store->calibration_for("h100-sxm-80gb")->memory_bandwidth->value() == doctest::Approx(3.1e12));
  CHECK(store->calibration_for("h100-sxm-80gb")->measured_at == "2025-03-01T00:00:00Z");
}
