// `capsim catalog import-calibration` and the side-by-side `catalog show`, run as a user
// would, each case with its own database.
#include <doctest/doctest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "support/test_support.hpp"
// After capsim's headers: <signal.h> (through <sys/wait.h>) defines a macro value_si that
// would rewrite capsim/core/units.hpp's member of that name.
#include <sys/wait.h>

namespace fs = std::filesystem;

namespace {

struct Run {
  int exit_code = -1;
  std::string out;
  std::string err;
};

Run run_capsim(const std::string& args, const std::string& db) {
  const auto dir = capsim::testing::scratch_dir("calibration-cli");
  const auto out = dir / "stdout";
  const auto err = dir / "stderr";
  const std::string cmd = "CAPSIM_DB='" + (dir / db).string() + "' '" CAPSIM_BINARY "' " + args + " > '" +
                          out.string() + "' 2> '" + err.string() + "' < /dev/null";
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, capsim::testing::read_file(out),
          capsim::testing::read_file(err)};
}

const std::string kH100 = "'" CAPSIM_TEST_DATA_DIR "/calibration/synthetic/h100-sxm-80gb-synthetic.json'";
const std::string kFixture = "--catalog '" CAPSIM_TEST_SOURCE_DIR "/cli/fixtures/catalog'";

void fresh(const std::string& db) {
  const auto dir = capsim::testing::scratch_dir("calibration-cli");
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(dir / (db + suffix));
}

}  // namespace

TEST_CASE("import-calibration matches the profile to its GPU and show puts both sides together") {
  fresh("import.db");
  auto show_before = run_capsim("catalog show h100-sxm-80gb", "import.db");
  REQUIRE(show_before.exit_code == 0);
  CHECK(show_before.out.find("datasheet and measured") == std::string::npos);

  auto imported = run_capsim("catalog import-calibration " + kH100, "import.db");
  INFO(imported.err);
  REQUIRE(imported.exit_code == 0);
  CHECK(imported.out.find("as calibration profile #1 of h100-sxm-80gb (NVIDIA H100 80GB HBM3, ") != std::string::npos);
  CHECK(imported.out.find("SYNTHETIC test data") != std::string::npos);

  auto show = run_capsim("catalog show h100-sxm-80gb", "import.db");
  REQUIRE(show.exit_code == 0);
  CHECK(show.out.find("datasheet and measured: calibrated (NVIDIA H100 80GB HBM3, measured 2025-01-01T00:00:00Z, "
                      "synthetic)") != std::string::npos);
  // Datasheet 989 TFLOP/s, best measured 800e12 (16384/16512)^3 = 782 TFLOP/s, ratio 0.79.
  CHECK(show.out.find("989 TFLOP/s") != std::string::npos);
  CHECK(show.out.find("782 TFLOP/s") != std::string::npos);
  CHECK(show.out.find("0.79") != std::string::npos);
  CHECK(show.out.find("800 TFLOP/s x prod d/(d+128)") != std::string::npos);
  CHECK(show.out.find("3.35 TB/s") != std::string::npos);  // memory datasheet next to 3 TB/s measured
  CHECK(show.out.find("all-reduce bus bandwidth (8 GPUs)") != std::string::npos);

  auto json_show = run_capsim("catalog show h100-sxm-80gb --format json", "import.db");
  REQUIRE(json_show.exit_code == 0);
  const auto j = nlohmann::json::parse(json_show.out);
  CHECK(j["id"] == "h100-sxm-80gb");
  CHECK(j["measured"]["synthetic"] == true);
  REQUIRE(j["measured"]["figures"].size() > 10);
  CHECK(j["measured"]["figures"][0]["figure"] == "gemm.fp32 best");
  CHECK(j["measured"]["figures"][0]["datasheet"] == 67e12);

  // Another GPU of the same database is untouched.
  auto other = run_capsim("catalog show a100-sxm-80gb", "import.db");
  CHECK(other.out.find("datasheet and measured") == std::string::npos);
}

TEST_CASE("import-calibration refuses a device it cannot match, and --gpu overrides") {
  fresh("nomatch.db");
  auto refused = run_capsim(kFixture + " catalog import-calibration " + kH100, "nomatch.db");
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find("cannot match device 'NVIDIA H100 80GB HBM3' (85 GB) to a catalog GPU; closest catalog "
                         "GPUs: test-gpu-80gb (Test GPU 80 GB, 80 GB), small-gpu (Small GPU, 16 GB)") !=
        std::string::npos);
  CHECK(refused.err.find("pass --gpu ID") != std::string::npos);

  auto unknown = run_capsim(kFixture + " catalog import-calibration --gpu test-gpu " + kH100, "nomatch.db");
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.find("--gpu") != std::string::npos);
  CHECK(unknown.err.find("unknown gpu 'test-gpu'") != std::string::npos);

  auto forced = run_capsim(kFixture + " catalog import-calibration --gpu test-gpu-80gb --format json " + kH100, "nomatch.db");
  REQUIRE(forced.exit_code == 0);
  const auto j = nlohmann::json::parse(forced.out);
  CHECK(j["gpu"] == "test-gpu-80gb");
  CHECK(j["synthetic"] == true);
  CHECK(j["gemm_curves"] == 6);
}

TEST_CASE("import-calibration reports every problem of a bad profile with its path, exit 2") {
  const auto bad = capsim::testing::scratch_dir("calibration-cli") / "bad-profile.json";
  std::ofstream(bad) << R"({"schema": "capsim-calibration/1", "device": {"name": "X"}, "measurements": []})";
  auto r = run_capsim("catalog import-calibration '" + bad.string() + "'", "bad.db");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("device.memory_bytes: missing") != std::string::npos);
  CHECK(r.err.find("measurements: the profile has no measurements") != std::string::npos);
  CHECK(r.err.find("driver_version: missing") != std::string::npos);
  auto missing = run_capsim("catalog import-calibration /nonexistent/profile.json", "bad.db");
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("cannot read the calibration profile") != std::string::npos);
}
