// capsim accuracy over the shipped data/validation: the bounds each group holds today.
// Megatron-LM's Table 1 holds the issue's bound (its rows are the ones the Ampere GEMM
// constants were chosen on). The other training rows are held out; the bounds below are the
// levels the model reaches now, guards against regressions, not the targets (mean <= 8 %):
// see the README's "Validation: capsim accuracy" for where the model is still wrong and why.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <yaml-cpp/yaml.h>

#include "capsim/hardware/loader.hpp"
#include "capsim/models/cluster.hpp"
#include "capsim/models/serving.hpp"
#include "capsim/models/serving_llm.hpp"
#include "capsim/hardware/calibration.hpp"
#include "capsim/scenarios/accuracy.hpp"
#include "capsim/scenarios/runner.hpp"
#include "capsim/scenarios/serving_report.hpp"

using namespace capsim;

namespace {
const scenarios::AccuracySummary* group(const scenarios::AccuracyReport& r, const std::string& name) {
  for (const auto& g : r.groups)
    if (g.group == name) return &g;
  return nullptr;
}

// Mean |error| and mean signed error of the report's rows whose id `keep` accepts.
struct RowMeans {
  int rows = 0;
  double abs = 0;
  double signed_error = 0;
};
template <class Keep>
RowMeans means_of(const scenarios::AccuracyReport& r, Keep keep) {
  RowMeans m;
  for (const auto& row : r.rows)
    if (keep(row.id)) {
      m.abs += std::abs(row.error_percent);
      m.signed_error += row.error_percent;
      ++m.rows;
    }
  if (m.rows > 0) {
    m.abs /= m.rows;
    m.signed_error /= m.rows;
  }
  return m;
}
bool has(const std::string& id, const char* part) { return id.find(part) != std::string::npos; }
bool starts(const std::string& id, const char* prefix) { return id.rfind(prefix, 0) == 0; }

// capsim accuracy over one fixture file, written to a fresh temporary directory and removed.
Result<scenarios::AccuracyReport> accuracy_of_fixture(const hardware::Catalog& catalog, const std::string& tag,
                                                      const std::string& yaml, const std::string& group) {
  const auto dir = std::filesystem::temp_directory_path() / ("capsim-accuracy-" + tag + "-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / (tag + ".yaml")) << yaml;
  auto report = scenarios::run_accuracy(catalog, dir, group);
  std::filesystem::remove_all(dir);
  return report;
}
}  // namespace

TEST_CASE("accuracy: training rows against the shipped validation corpus") {
  auto catalog = hardware::load_catalog_dir(CAPSIM_TEST_DATA_DIR "/catalog");
  REQUIRE_MESSAGE(catalog.ok(), format_diagnostics(catalog.errors()));
  auto report = scenarios::run_accuracy(*catalog, CAPSIM_TEST_DATA_DIR "/validation", "training");
  REQUIRE_MESSAGE(report.ok(), format_diagnostics(report.errors()));
  const auto* megatron = group(*report, "megatron-3d");
  REQUIRE(megatron != nullptr);
  CHECK(megatron->rows == 10);
  CHECK(megatron->mean_abs <= 5.0);
  CHECK(megatron->max_abs <= 10.0);
  const auto& all = report->overall;
  MESSAGE("training: " << all.rows << " rows, dev " << all.dev << " mean " << all.dev_mean_abs << " % worst "
                       << all.dev_max_abs << " %; fit " << all.fit << " mean " << all.fit_mean_abs);
  // Not predicted (152 rows, each with its reason): 29 MLPerf Training rows on GPUs the catalog
  // lacks (GB200, GB300, B300: 21) or trained in NVFP4, a precision capsim lacks (8 on B200);
  // since issue 46 the rows are planned as scenarios under the memory check `capsim size`
  // applies, so 30 torchtitan rows on Meta's 96 GB 500 W H100s and 22 KempnerForge rows on
  // 4-GPU H200 nodes (no such catalog node) and the published layouts the memory model puts
  // over the GPU's memory (issue 48 item 3, open) are not predicted.
  CHECK(all.not_predicted <= 152);
  CHECK(all.dev >= 180);
  // Issue 48: bounds on the dev rows (neither fit nor first-look), with every annotation the
  // sources do not state removed (the MPT rows' attention: flash1 went: 8.1 % -> 12.8 % mean)
  // and every row planned as a user's scenario (issue 46: 12.8 -> 14.4 %; Llama 3 405B at the
  // virtual stages that fit in memory, -5 / -11 / +5 % became -28 / -43 / -33 %). The bounds are
  // the honest values and hold the worst row as well as the mean; they are not lowered when a
  // change improves the rows. The issue's target (mean <= 10 %, worst <= 35 %) is not met: the
  // worst row is bridge-2511-qwen3-30b-a3b-h100-16g-fp8 (MoE) at +140 %.
  CHECK(all.dev_mean_abs <= 15.0);
  CHECK(all.dev_max_abs <= 141.0);
  // Per group: {mean bound, worst-row bound}.
  struct Bound {
    const char* group;
    double mean, worst;
  };
  for (const auto& [name, mean, worst] : {Bound{"zero3-fsdp", 16.0, 61.0}, Bound{"long-seq", 22.0, 61.0},
                                         Bound{"interleaved", 13.5, 141.0}, Bound{"fp8-h100", 22.0, 61.0},
                                         Bound{"ge-1000-gpus", 11.5, 44.0}, Bound{"megatron-3d-h100", 12.0, 44.0},
                                         Bound{"moe", 22.0, 141.0}}) {
    const auto* g = group(*report, name);
    REQUIRE_MESSAGE(g != nullptr, name);
    INFO(name);
    CHECK(g->dev_mean_abs <= mean);
    CHECK(g->dev_max_abs <= worst);
  }
  CHECK(all.fit_mean_abs <= 8.0);
  // Every row carries its source; the runner refuses a row without one.
  for (const auto& row : report->rows) CHECK_FALSE(row.source.empty());
}

TEST_CASE("accuracy: an unknown group is refused with a suggestion") {
  auto catalog = hardware::load_catalog_dir(CAPSIM_TEST_DATA_DIR "/catalog");
  REQUIRE(catalog.ok());
  auto report = scenarios::run_accuracy(*catalog, CAPSIM_TEST_DATA_DIR "/validation", "zero3-fsd");
  REQUIRE_FALSE(report.ok());
  CHECK(report.errors()[0].message == "no validation row is in group 'zero3-fsd'");
  CHECK(report.errors()[0].hint == "did you mean 'zero3-fsdp'?");
}

TEST_CASE("accuracy: CNN training and vision inference from the networks' layers") {
  // Issue 14's bounds for both groups: held-out mean at most 15 %, no row beyond 35 %.
  // Reached: held-out CNN training 9.7 % over 94 rows, worst 27.4 % (ResNet-152 fp16 in
  // TensorFlow on an RTX 2080 Ti); held-out vision inference 13.0 %, worst 30.9 %.
  auto catalog = hardware::load_catalog_dir(CAPSIM_TEST_DATA_DIR "/catalog");
  REQUIRE(catalog.ok());
  auto cnn = scenarios::run_accuracy(*catalog, CAPSIM_TEST_DATA_DIR "/validation", "cnn-training");
  REQUIRE_MESSAGE(cnn.ok(), format_diagnostics(cnn.errors()));
  MESSAGE("cnn-training: " << cnn->overall.rows << " rows, held-out mean " << cnn->overall.held_out_mean_abs
                           << " % worst " << cnn->overall.held_out_max_abs << " %");
  CHECK(cnn->overall.rows >= 95);
  CHECK(cnn->overall.held_out_mean_abs <= 10.0);
  CHECK(cnn->overall.max_abs <= 35.0);
  const auto* hopper = group(*cnn, "hopper");
  REQUIRE(hopper != nullptr);
  CHECK(hopper->mean_abs <= 12.0);
  const auto* volta = group(*cnn, "volta");
  REQUIRE(volta != nullptr);
  CHECK(volta->mean_abs <= 10.5);
  const auto* pascal = group(*cnn, "pascal");
  REQUIRE(pascal != nullptr);
  CHECK(pascal->mean_abs <= 12.0);

  auto vision = scenarios::run_accuracy(*catalog, CAPSIM_TEST_DATA_DIR "/validation", "vision-inference");
  REQUIRE_MESSAGE(vision.ok(), format_diagnostics(vision.errors()));
  const auto& v = vision->overall;
  MESSAGE("vision-inference: " << v.rows << " rows, held-out " << v.held_out << " mean " << v.held_out_mean_abs
                               << " % worst " << v.held_out_max_abs << " %; fit " << v.fit << " mean " << v.fit_mean_abs);
  // TensorRT and ONNX Runtime rows are predicted (engine profiles); the four left are a GPU
  // the source does not name exactly and networks without a layer list. The first-look rows
  // of vision_inference_2026.yaml add 154 not predicted (issue 48 item 6; its header names
  // them): torch.compile (36), PaddlePaddle framework inference (18), TensorFlow XLA (84) and
  // GPUs the catalog lacks (RTX 5090, RTX PRO 6000 Max-Q, GH200, RTX 2000E Ada: 16).
  CHECK(v.rows >= 39);
  CHECK(v.not_predicted <= 158);
  CHECK(v.held_out >= 32);
  CHECK(v.held_out_mean_abs <= 15.0);
  CHECK(v.max_abs <= 35.0);
  CHECK(v.fit_mean_abs <= 1.0);  // the constants reproduce the rows they were chosen on
  const auto* tensorrt = group(*vision, "tensorrt");
  REQUIRE(tensorrt != nullptr);
  CHECK(tensorrt->held_out_mean_abs <= 8.0);
  const auto* tensorflow = group(*vision, "tensorflow");
  REQUIRE(tensorflow != nullptr);
  CHECK(tensorflow->held_out_mean_abs <= 15.5);
  const auto* framework = group(*vision, "framework");
  REQUIRE(framework != nullptr);
  CHECK(framework->held_out_mean_abs <= 15.0);
}

TEST_CASE("accuracy: the checks measured on a real H100 (data/validation/measured-here)") {
  auto catalog = hardware::load_catalog_dir(CAPSIM_TEST_DATA_DIR "/catalog");
  REQUIRE(catalog.ok());
  auto report = scenarios::run_accuracy(*catalog, CAPSIM_TEST_DATA_DIR "/validation/measured-here", "");
  REQUIRE_MESSAGE(report.ok(), format_diagnostics(report.errors()));
  CHECK(report->rows.size() == 22);
  auto row = [&](std::string_view id) -> const scenarios::AccuracyRow& {
    for (const auto& r : report->rows)
      if (r.id == id) return r;
    FAIL("no row " << id);
    return report->rows.front();
  };
  // Issue 46: a training row is the scenario a user would write, on a catalog node with
  // exactly its GPUs. The four Llama-style steps on one H200 are not predicted: the catalog
  // has no single-H200 node (a training plan takes its nodes whole), and they say so.
  for (const auto& r : report->rows) {
    CAPTURE(r.id);
    if (r.id.starts_with("llama3-8b-4-layers-h200-sxm-141gb-1g-"))
      CHECK(r.not_predicted == "hardware: no catalog server or instance carries 1 x h200-sxm-141gb per node on nvswitch-h100");
    else
      CHECK(r.not_predicted.empty());
  }
  // What NCHW costs mixed-precision ResNet-50 per 256-image step, predicted and measured:
  // kTransposeElementsPerSmClock was chosen on the H100 pair (40.6 ms, fit: true); the H200
  // pair (41.1 ms: the same SMs, 1.43x the bandwidth) is held out. Bound by HBM traffic
  // instead, the H200 would pay 28 ms.
  auto nchw_cost = [&](std::string_view nchw, std::string_view nhwc, bool predicted) {
    const auto& a = row(nchw);
    const auto& b = row(nhwc);
    return predicted ? 256 / a.predicted - 256 / b.predicted : 256 / a.published - 256 / b.published;
  };
  const char* h100[] = {"rn50-h100-sxm-80gb-amp-fp16-nchw-b256-here", "rn50-h100-sxm-80gb-amp-fp16-nhwc-b256-here"};
  const char* h200[] = {"rn50-h200-sxm-141gb-amp-fp16-nchw-b256-here", "rn50-h200-sxm-141gb-amp-fp16-nhwc-b256-here"};
  CHECK(row(h100[0]).fit);
  CHECK(nchw_cost(h100[0], h100[1], true) == doctest::Approx(nchw_cost(h100[0], h100[1], false)).epsilon(0.02));
  CHECK(nchw_cost(h200[0], h200[1], true) == doctest::Approx(nchw_cost(h200[0], h200[1], false)).epsilon(0.05));
  // The levels: the Hopper GEMM ceiling and half-saturation dimension (performance.hpp)
  // leave the channels-last step 15 % slow and TF32 20 % slow on the H100.
  CHECK(std::abs(row(h100[1]).error_percent) <= 16.0);
  CHECK(std::abs(row("rn50-h100-sxm-80gb-fp32-nchw-b256-here").error_percent) <= 21.0);
  // A Llama-style step on one H100 with PyTorch 2.11: capsim is 16 % slow (README.md there).
  CHECK(std::abs(row("llama3-8b-4-layers-h100-sxm-80gb-1g-eager-here").error_percent) <= 20.0);
  // (Full activation checkpointing on the H200 was 17 % slow: capsim charges a whole forward
  // per block, where PyTorch's non-reentrant checkpoint stops before the block's last linear.
  // Those rows wait for a single-H200 catalog node.)
}

TEST_CASE("accuracy: measured beats datasheet: the sustained H100 profile predicts the measured step") {
  // The Llama-style step measured on an H100 (torch.compile, 53.0k tokens/s) is 16 % faster
  // than the datasheet model says; with the GEMM curve and bandwidth of the profile measured
  // at the sustained clock on the same GPU model, capsim comes within 5 %.
  auto catalog = hardware::load_catalog_dir(CAPSIM_TEST_DATA_DIR "/catalog");
  REQUIRE(catalog.ok());
  const auto dir = CAPSIM_TEST_DATA_DIR "/validation/measured-here";
  const std::string id = "llama3-8b-4-layers-h100-sxm-80gb-1g-compile-here";
  auto error_of = [&](const hardware::Catalog& c) {
    auto report = scenarios::run_accuracy(c, dir, "training");
    REQUIRE_MESSAGE(report.ok(), format_diagnostics(report.errors()));
    for (const auto& r : report->rows)
      if (r.id == id) return r.error_percent;
    FAIL("no row " << id);
    return 0.0;
  };
  const double datasheet = error_of(*catalog);
  auto profile = hardware::read_calibration_profile(CAPSIM_TEST_DATA_DIR
                                                    "/calibration/h100-sxm-80gb-2026-11-26-sustained.json");
  REQUIRE(profile.ok());
  hardware::Catalog calibrated = *catalog;
  calibrated.set_measured("h100-sxm-80gb", hardware::measured_figures(*profile));
  const double measured = error_of(calibrated);
  MESSAGE("datasheet " << datasheet << " %, calibrated " << measured << " %");
  CHECK(datasheet < -12.0);
  CHECK(std::abs(measured) <= 6.0);

  // ResNet-50 keeps its layer model on a calibrated GPU. Before, a calibrated GPU fell back
  // to a per-sample formula that put ResNet-50 at 13,100 images/s on this H100, 3.3x the
  // 3,943 measured in bf16 channels-last; with the measured GEMM curve and triad bandwidth in
  // the layer model it is within 50 % (convolutions reach less of the curve than cuBLAS's
  // GEMMs do: the curve is optimistic for them).
  auto report = scenarios::run_accuracy(calibrated, dir, "cnn-training");
  REQUIRE_MESSAGE(report.ok(), format_diagnostics(report.errors()));
  for (const auto& r : report->rows)
    if (r.id.find("h100") != std::string::npos) {
      CAPTURE(r.id);
      MESSAGE(r.id << ": calibrated " << r.error_percent << " %");
      CHECK(std::abs(r.error_percent) <= 50.0);
    }
}

TEST_CASE("accuracy: a value of the wrong type in a row is an error at its line and column, every one at once") {
  // Found by hand: `vp: fast` ended capsim accuracy with an uncaught YAML::TypedBadConversion.
  auto catalog = hardware::load_catalog_dir(CAPSIM_TEST_DATA_DIR "/catalog");
  REQUIRE(catalog.ok());
  const auto dir = std::filesystem::temp_directory_path() / ("capsim-accuracy-bad-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "training.yaml") << R"(kind: training
rows:
  - id: bad-vp
    source: "test fixture"
    model: {layers: 4, hidden: 4096, heads: 32, ffn_hidden: 14336, vocab: 32000}
    seq_len: 4096
    global_batch: 8
    hardware: {gpu: h100-sxm-80gb, gpus: 8}
    layout: {tp: 1, pp: 1, dp: 8, vp: fast}
    measured: {metric: tokens_per_s_per_gpu, value: 1000}
)";
  std::ofstream(dir / "vision.yaml") << R"(kind: vision-inference
rows:
  - id: bad-batch
    source: "test fixture"
    model: resnet50
    gpu: t4
    precision: fp16
    batch: many
    measured: {images_per_s: 100}
)";
  auto report = scenarios::run_accuracy(*catalog, dir, "");
  std::filesystem::remove_all(dir);
  REQUIRE_FALSE(report.ok());
  REQUIRE(report.errors().size() == 2);
  const std::string text = format_diagnostics(report.errors());
  CHECK(text.find("training.yaml:9:39: error: rows[bad-vp]: a value of the wrong type (yaml-cpp: bad conversion)") !=
        std::string::npos);
  CHECK(text.find("vision.yaml:8:12: error: rows[bad-batch].batch: batch must be a whole number from 1 to 65536, got "
                  "'many'") != std::string::npos);
}

TEST_CASE("accuracy: a row's batch beyond 65536 is refused at its line, not predicted (issue 47)") {
  // batch: 1000000000 was predicted (a latency of 900 million ms, +8.7e9 %).
  auto catalog = hardware::load_catalog_dir(CAPSIM_TEST_DATA_DIR "/catalog");
  REQUIRE(catalog.ok());
  const auto dir = std::filesystem::temp_directory_path() / ("capsim-accuracy-batch-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "vision.yaml") << R"(kind: vision-inference
rows:
  - id: huge-batch
    source: "test fixture"
    model: resnet50
    gpu: t4
    precision: fp16
    batch: 1000000000
    measured: {images_per_s: 100}
)";
  std::ofstream(dir / "cnn.yaml") << R"(kind: cnn-training
rows:
  - id: zero-batch
    source: "test fixture"
    model: resnet50
    gpu: t4
    batch_per_gpu: 0
    measured: {images_per_s: 100}
)";
  auto report = scenarios::run_accuracy(*catalog, dir, "");
  std::filesystem::remove_all(dir);
  REQUIRE_FALSE(report.ok());
  CHECK(format_diagnostics(report.errors()) ==
        dir.string() + "/cnn.yaml:7:20: error: rows[zero-batch].batch_per_gpu: batch_per_gpu must be a whole number from "
                       "1 to 65536, got '0'\n" +
            dir.string() + "/vision.yaml:8:12: error: rows[huge-batch].batch: batch must be a whole number from 1 to 65536, "
                           "got '1000000000'\n");
}

TEST_CASE("accuracy: a vision row fed by a host input pipeline waits for it when the GPU is faster") {
  // Fixtures, not measurements. TensorRT INT8 at batch 64 on an A100 needs about a
  // millisecond; one decode thread needs 64 x kTfInputSecondsPerImage. With 1000 threads the
  // GPU binds again.
  auto catalog = hardware::load_catalog_dir(CAPSIM_TEST_DATA_DIR "/catalog");
  REQUIRE(catalog.ok());
  std::string yaml = "kind: vision-inference\nrows:\n";
  for (const auto& [id, threads] : {std::pair{"one-thread", 1}, {"many-threads", 1000}, {"no-threads", 0}})
    yaml += std::string("  - {id: ") + id + ", source: test fixture, model: resnet50, gpu: a100-sxm-80gb, engine: tensorrt,\n" +
            "     precision: int8, batch: 64, input_threads: " + std::to_string(threads) + ", measured: {latency_ms: 100}}\n";
  auto report = accuracy_of_fixture(*catalog, "input", yaml, "vision-inference");
  REQUIRE_MESSAGE(report.ok(), format_diagnostics(report.errors()));
  REQUIRE(report->rows.size() == 3);
  const auto& slow = report->rows[0];
  const auto& fast = report->rows[1];
  CHECK(slow.predicted == doctest::Approx(64 * models::kTfInputSecondsPerImage() * 1e3));
  CHECK(slow.detail.find("input-bound (input_threads 1)") != std::string::npos);
  CHECK(fast.predicted < 5.0);
  CHECK(fast.detail.find("input-bound") == std::string::npos);
  CHECK(report->rows[2].not_predicted == "input_threads: expected a whole number of threads, at least 1");
}

TEST_CASE("accuracy: a training row runs on the catalog's node for its GPUs, with the NICs it names") {
  // Four copies of a 70B FSDP row on 32 H100s, 8 per node: network unknown, 4 and 8 NDR NICs
  // per node, and a 4-GPU-per-node H200 cluster. The unknown one runs on the catalog's node
  // (dgx-h100, 8 x NDR): the same as the 8-NIC row, which that node matches, so its scenario
  // needs no scale_out; the 4-NIC row states hardware.scale_out. No catalog node carries 4
  // H200s: that row is not predicted, and says why.
  auto catalog = hardware::load_catalog_dir(CAPSIM_TEST_DATA_DIR "/catalog");
  REQUIRE(catalog.ok());
  std::string rows = "kind: training\nrows:\n";
  for (const auto& [id, hardware] :
       {std::pair{"unknown", "{gpu: h100-sxm-80gb, gpus: 32, gpus_per_node: 8, intra_node: nvswitch-h100, inter_node: unknown}"},
        {"four", "{gpu: h100-sxm-80gb, gpus: 32, gpus_per_node: 8, intra_node: nvswitch-h100, inter_node: \"4 x ib-ndr-400\"}"},
        {"eight", "{gpu: h100-sxm-80gb, gpus: 32, gpus_per_node: 8, intra_node: nvswitch-h100, inter_node: \"8 x ib-ndr-400\"}"},
        {"h200-by-four", "{gpu: h200-sxm-141gb, gpus: 32, gpus_per_node: 4, intra_node: nvlink-4, inter_node: unknown}"}})
    rows += std::string("  - id: fixture-") + id + R"(
    source: "test fixture"
    as_of: "2026-11"
    fit: false
    model: {name: fixture-70b, layers: 80, hidden: 8192, heads: 64, kv_heads: 8, ffn_hidden: 28672, gated_mlp: true, vocab: 128256}
    seq_len: 2048
    global_batch: 32
    micro_batch: 1
    precision: bf16
    hardware: )" + hardware + R"(
    layout: {tp: 1, pp: 1, dp: 32, sharding: fsdp, recompute: full}
    measured: {metric: tokens_per_s, value: 1000}
)";
  const auto dir = std::filesystem::temp_directory_path() / ("capsim-accuracy-nic-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "nic.yaml") << rows;
  auto report = scenarios::run_accuracy(*catalog, dir, "training");
  auto four = scenarios::accuracy_row_scenario(*catalog, dir, "fixture-four");
  auto eight = scenarios::accuracy_row_scenario(*catalog, dir, "fixture-eight");
  auto h200 = scenarios::accuracy_row_scenario(*catalog, dir, "fixture-h200-by-four");
  std::filesystem::remove_all(dir);
  REQUIRE_MESSAGE(report.ok(), format_diagnostics(report.errors()));
  REQUIRE(report->rows.size() == 4);
  for (int i = 0; i < 3; ++i) REQUIRE_MESSAGE(report->rows[i].not_predicted.empty(), report->rows[i].not_predicted);
  const auto& r = report->rows;
  CHECK(r[0].predicted == doctest::Approx(r[2].predicted));
  CHECK(r[2].predicted > r[1].predicted * 1.05);  // the FSDP gathers cross nodes: twice the NICs is visibly faster
  CHECK(has(r[0].detail, "on dgx-h100"));
  CHECK(std::find(r[0].groups.begin(), r[0].groups.end(), "network-assumed") != r[0].groups.end());
  REQUIRE(four.ok());
  REQUIRE(eight.ok());
  CHECK(four->command == "run");
  CHECK(has(four->text, "scale_out: 4 x ib-ndr-400"));
  CHECK(has(four->text, "nodes: [dgx-h100]"));
  CHECK_FALSE(has(eight->text, "scale_out"));
  CHECK(r[3].not_predicted == "hardware: no catalog server or instance carries 4 x h200-sxm-141gb per node on nvlink-4");
  REQUIRE_FALSE(h200.ok());
  CHECK(h200.errors()[0].message == "no catalog server or instance carries 4 x h200-sxm-141gb per node on nvlink-4");
}

TEST_CASE("accuracy: an llm-serving row is predicted by the continuous-batching simulation") {
  // A fixture, not a measurement: the published value is a placeholder; the test checks
  // that the row reaches the simulation with its model, parallelism and lengths.
  auto catalog = hardware::load_catalog_dir(CAPSIM_TEST_DATA_DIR "/catalog");
  REQUIRE(catalog.ok());
  auto report = accuracy_of_fixture(*catalog, "llm", R"(kind: llm-serving
rows:
  - id: fixture-70b-offline
    source: "test fixture"
    fit: false
    model: llama-2-70b
    gpu: h100-sxm-80gb
    gpus: 8
    tp: 8
    weights: bf16
    mode: offline
    input_len: 512
    output_len: 256
    num_requests: 200
    measured: {metric: output_tokens_per_s, value: 1000}
)",
                                    "llm-serving");
  REQUIRE_MESSAGE(report.ok(), format_diagnostics(report.errors()));
  REQUIRE(report->rows.size() == 1);
  const auto& row = report->rows[0];
  REQUIRE_MESSAGE(row.not_predicted.empty(), row.not_predicted);
  models::LlmServingSpec spec;
  spec.shape = models::find_transformer_preset("llama-2-70b")->shape;
  spec.cluster = *models::cluster_from_catalog(*catalog, "h100-sxm-80gb", 8, "nvswitch-h100", "", 0);
  spec.tensor_parallel = 8;
  models::LlmSimulationOptions o;
  o.offline_requests = 200;
  auto sim = models::simulate_llm_serving(spec, {512, 256}, o);
  REQUIRE(sim.ok());
  CHECK(row.predicted == doctest::Approx(sim->output_tokens_per_second));
  CHECK(row.error_percent == doctest::Approx((row.predicted - 1000) / 10));
}

TEST_CASE("accuracy: llm-serving rows against the shipped validation corpus") {
  // 467 published rows (TensorRT-LLM perf tables v0.5-v0.17 and v1.0, vLLM on MI300X), each
  // read as its source ran it. Today's level, held as a guard: mean |error| within the
  // issue's 15 %, the worst row not yet (the issue asks 35 %; 8 rows are 35-61 % off, 4 of
  // them the 202/214 Triton runs).
  auto catalog = hardware::load_catalog_dir(CAPSIM_TEST_DATA_DIR "/catalog");
  REQUIRE(catalog.ok());
  auto report = scenarios::run_accuracy(*catalog, CAPSIM_TEST_DATA_DIR "/validation", "llm-serving");
  REQUIRE_MESSAGE(report.ok(), format_diagnostics(report.errors()));
  const auto& all = report->overall;
  MESSAGE("llm-serving: " << all.rows << " rows, mean " << all.mean_abs << " %, worst " << all.max_abs
                          << " %; held-out " << all.held_out << " mean " << all.held_out_mean_abs << " % worst "
                          << all.held_out_max_abs << " %; fit " << all.fit << " mean " << all.fit_mean_abs << " %");
  // Each row is the scenario a user would write, on a catalog node: no node in the catalog
  // carries 4 x A100 PCIe 80 GB, so that row is not predicted (it was, on an assumed PCIe
  // node the runner made up).
  CHECK(all.not_predicted == 1);
  for (const auto& row : report->rows)
    if (!row.not_predicted.empty())
      CHECK(row.not_predicted == "gpu: no catalog server or instance carries 4 x a100-pcie-80gb");
  CHECK(all.rows == 466);
  CHECK(all.fit == 3);
  CHECK(all.fit_mean_abs <= 5.0);
  CHECK(all.mean_abs <= 15.0);
  CHECK(all.held_out_mean_abs <= 10.0);
  CHECK(all.held_out_max_abs <= 65.0);

  // The current engine (TensorRT-LLM v1.0, 60 rows) at the GEMM rates cuBLAS measures for
  // decode-shaped GEMMs on H100/H200 (kHopperTokenRowsHalfSaturationDim): 8 % mean. With the
  // n/k half-saturation on the token rows too, the model was 15 % slow on them.
  const RowMeans v1 = means_of(*report, [](const std::string& id) { return starts(id, "trtllm1v0-"); });
  REQUIRE(v1.rows == 60);
  CHECK(v1.abs <= 10.0);
  CHECK(v1.signed_error >= -10.0);

  // MI300X at AMD's measured maximum GEMM rate (max_achievable), not 72 % of its datasheet.
  const auto* mi300x = group(*report, "mi300x");
  REQUIRE(mi300x != nullptr);
  CHECK(mi300x->mean_abs <= 18.0);

  // L40S FP8 GEMMs at the measured ~370 TFLOP/s (max_achievable), not 72 % of 733: the
  // single-GPU rows, where no PCIe all-reduce is involved.
  const RowMeans l40s_one = means_of(*report, [](const std::string& id) { return has(id, "-l40s-") && has(id, "-tp1-"); });
  REQUIRE(l40s_one.rows >= 20);
  CHECK(l40s_one.abs <= 13.0);

  // L40S at TP 4 and TP 8: the all-reduces run over PCIe at NCCL's PCIe share of the line
  // rate (kPcieCollectiveBandwidthFraction, chosen on one of these rows). At the NVLink
  // share (0.8) these rows were 16-37 % high, the more so the higher the TP degree.
  const RowMeans l40s_tp = means_of(*report, [](const std::string& id) {
    return has(id, "-l40s-") && (has(id, "-tp4-") || has(id, "-tp8-"));
  });
  REQUIRE(l40s_tp.rows == 38);
  CHECK(l40s_tp.abs <= 6.0);
  CHECK(std::abs(l40s_tp.signed_error) <= 3.0);

  // Mixtral 8x7B at TP 4-8 over NVLink (v0.17): the hidden-wide element-wise kernels and the
  // expert permutation run whole on every GPU (llm_elementwise); without them, 20 % high.
  const RowMeans moe = means_of(*report, [](const std::string& id) {
    return starts(id, "trtllm017-mixtral-8x7b-") && !has(id, "-l40s-") && (has(id, "-tp4-") || has(id, "-tp8-"));
  });
  REQUIRE(moe.rows == 54);
  CHECK(moe.abs <= 17.0);

  // Weights that nearly fill the GPU (Llama 3.1 70B FP8 on one H100, FP16 on two A100s):
  // the KV cache is what the engine leaves of the device memory CUDA reports
  // (llm_device_memory, LlmKvBudget); at 0.9 of a decimal 80 GB these rows were 57-88 % low.
  const RowMeans tight = means_of(*report, [](const std::string& id) {
    return starts(id, "trtllm017-llama-31-70b-h100-fp8-tp1-") || starts(id, "trtllm017-llama-31-70b-a100-fp16-tp2-");
  });
  REQUIRE(tight.rows == 14);
  CHECK(tight.abs <= 20.0);
  CHECK(tight.signed_error >= -15.0);

  // Every group of rows on NVIDIA GPUs is within 25 % on average.
  for (const char* gpu : {"h100-sxm-80gb", "h200-sxm-141gb", "a100-sxm-80gb", "a100-pcie-80gb", "l40s"}) {
    const auto* g = group(*report, gpu);
    REQUIRE(g != nullptr);
    CHECK_MESSAGE(g->mean_abs <= 25.0, gpu << ": " << g->mean_abs << " %");
  }
}

TEST_CASE("accuracy: an llm-serving row's engine fields reach the simulation, and bad ones are refused") {
  auto catalog = hardware::load_catalog_dir(CAPSIM_TEST_DATA_DIR "/catalog");
  REQUIRE(catalog.ok());
  const auto dir = std::filesystem::temp_directory_path() / ("capsim-accuracy-llm2-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string row = R"(kind: llm-serving
rows:
  - id: fixture-static
    source: "test fixture"
    model: llama-2-7b
    gpu: h100-sxm-80gb
    gpus: 1
    weights: fp8
    kv_cache: fp8
    mode: offline
    batching: BATCHING
    max_num_seqs: 64
    num_requests: 64
    input_len: 512
    output_len: 128
    measured: {metric: ttft_ms, stat: mean, value: 100}
)";
  auto write = [&](const std::string& batching) {
    std::string text = row;
    text.replace(text.find("BATCHING"), 8, batching);
    std::ofstream(dir / "llm.yaml") << text;
  };
  write("static");
  auto report = scenarios::run_accuracy(*catalog, dir, "llm-serving");
  REQUIRE_MESSAGE(report.ok(), format_diagnostics(report.errors()));
  REQUIRE(report->rows.size() == 1);
  REQUIRE_MESSAGE(report->rows[0].not_predicted.empty(), report->rows[0].not_predicted);
  models::LlmServingSpec spec;
  spec.shape = models::find_transformer_preset("llama-2-7b")->shape;
  spec.cluster = *models::cluster_from_catalog(*catalog, "h100-sxm-80gb", 1, "", "", 0);
  spec.weights = spec.kv_cache = models::Precision::fp8;
  // A static batch of 64 prompts is prefilled in one step: every request's first token
  // comes with it.
  CHECK(report->rows[0].predicted == doctest::Approx(models::llm_prefill(spec, 64, 512).value() * 1e3));
  write("continuous");
  report = scenarios::run_accuracy(*catalog, dir, "llm-serving");
  REQUIRE(report.ok());
  // Continuous batching prefills in 8192-token chunks: the first prompts get their token
  // after a quarter of the work, so the mean comes well before the whole batch's prefill.
  CHECK(report->rows[0].predicted < 0.8 * models::llm_prefill(spec, 64, 512).value() * 1e3);
  write("dynamic");
  report = scenarios::run_accuracy(*catalog, dir, "llm-serving");
  REQUIRE(report.ok());
  // The row's fields are the scenario's keys: a bad value is refused as a scenario's is.
  CHECK(report->rows[0].not_predicted == "workload.batching: expected one of continuous, static, got 'dynamic'");
  // The engine decides how the KV cache is sized (LlmKvBudget): an engine the predictor does
  // not know is refused, not read as vLLM.
  // (SGLang is an entry of data/catalog/llm_engines.yaml since issue 49; LMDeploy is not.)
  write("continuous\n    engine: lmdeploy");
  report = scenarios::run_accuracy(*catalog, dir, "llm-serving");
  std::filesystem::remove_all(dir);
  REQUIRE(report.ok());
  CHECK(report->rows[0].not_predicted ==
        "workload.engine: expected one of framework, tensorflow, onnxruntime, tensorrt, vllm, sglang, tensorrt-llm, "
        "trtllm-serve, tgi, got 'lmdeploy'");
}

TEST_CASE("accuracy: micro_batch: tuned predicts the fastest micro-batch that fits, as the source's tuning found it") {
  // A 32B GPT (Megatron-LM's README table) at TP 8 on 16 H100s, 4 sequences per replica:
  // micro-batches 1, 2 and 4 written out, and the same row with micro_batch: tuned. With one
  // micro-batch per step the gradient reduce-scatter hides under the whole backward, not a
  // quarter of it, so 4 is fastest, and it fits. The candidates pass the memory check `capsim
  // size` applies (issue 46: the runner used to skip it for micro-batch 1).
  auto catalog = hardware::load_catalog_dir(CAPSIM_TEST_DATA_DIR "/catalog");
  REQUIRE(catalog.ok());
  auto rows_for = [](int seq) {
    std::string rows = "kind: training\nrows:\n";
    for (const char* mb : {"1", "2", "4", "tuned"})
      rows += std::string("  - id: fixture-mb-") + mb + R"(
    source: "test fixture"
    as_of: "2026-11"
    fit: false
    model: {name: fixture-32b, layers: 48, hidden: 7168, heads: 56, ffn_hidden: 28672, gated_mlp: false, vocab: 131072}
    seq_len: )" + std::to_string(seq) + R"(
    global_batch: 8
    micro_batch: )" + mb + R"(
    precision: bf16
    hardware: {gpu: h100-sxm-80gb, gpus: 16, gpus_per_node: 8, intra_node: nvswitch-h100, inter_node: "8 x ib-ndr-400"}
    layout: {tp: 8, pp: 1, dp: 2, sharding: zero1, grad_reduce: fp32, tp_comm_overlap: true}
    measured: {metric: tokens_per_s, value: 1000}
)";
    return rows;
  };
  auto short_seq = accuracy_of_fixture(*catalog, "mb", rows_for(4096), "training");
  REQUIRE_MESSAGE(short_seq.ok(), format_diagnostics(short_seq.errors()));
  REQUIRE(short_seq->rows.size() == 4);
  const auto& r = short_seq->rows;
  CHECK(r[2].predicted > r[0].predicted * 1.05);
  CHECK(r[3].predicted == doctest::Approx(std::max({r[0].predicted, r[1].predicted, r[2].predicted})));
  CHECK(has(r[3].detail, "mb=4"));

  // At 16K tokens a sequence only 1 fits: the tuned row is predicted at it, and a published
  // micro-batch of 2 is refused by the memory check `capsim size` applies, not scored.
  auto long_seq = accuracy_of_fixture(*catalog, "mb-long", rows_for(16384), "training");
  REQUIRE_MESSAGE(long_seq.ok(), format_diagnostics(long_seq.errors()));
  REQUIRE(long_seq->rows.size() == 4);
  const auto& l = long_seq->rows;
  REQUIRE_MESSAGE(l[0].not_predicted.empty(), l[0].not_predicted);
  CHECK(has(l[1].not_predicted, "does not fit in memory on any candidate"));
  CHECK(has(l[3].detail, "mb=1"));
  CHECK(l[3].predicted == doctest::Approx(l[0].predicted));
  // At 32K not even one sequence fits (the layout capsim size refuses): not predicted, saying so.
  auto longer = accuracy_of_fixture(*catalog, "mb-longer", rows_for(32768), "training");
  REQUIRE(longer.ok());
  CHECK(has(longer->rows[3].not_predicted, "workload.model: 'custom' does not fit in memory on any candidate"));
}

// Issue 46: every llm-serving row is the scenario a user would write, planned by the plan
// function every command uses. The scenario `capsim accuracy --scenario ROW` prints, planned
// and written as `capsim simulate --format json` writes it, carries the row's predicted
// figure exactly (the metric's field named below); the CLI test pipes a few through the
// real commands.
TEST_CASE("accuracy: every llm-serving row's scenario, as simulate writes it, carries the row's prediction") {
  auto catalog = hardware::load_catalog_dir(CAPSIM_TEST_DATA_DIR "/catalog");
  REQUIRE(catalog.ok());
  auto report = scenarios::run_accuracy(*catalog, CAPSIM_TEST_DATA_DIR "/validation", "llm-serving");
  REQUIRE(report.ok());
  std::map<std::string, std::string> stat_of;  // a latency row's statistic (p50 unless it says)
  for (const auto& r : YAML::LoadFile(CAPSIM_TEST_DATA_DIR "/validation/llm_serving.yaml")["rows"])
    stat_of[r["id"].as<std::string>()] = r["measured"]["stat"] ? r["measured"]["stat"].as<std::string>() : "p50";
  auto scenarios_of = scenarios::accuracy_row_scenarios(*catalog, CAPSIM_TEST_DATA_DIR "/validation");
  REQUIRE(scenarios_of.ok());
  std::map<std::string, const scenarios::AccuracyRowScenario*> by_id;
  for (const auto& s : *scenarios_of) by_id[s.id] = &s;
  int checked = 0;
  for (const auto& row : report->rows) {
    if (!row.not_predicted.empty()) continue;
    INFO(row.id);
    REQUIRE(by_id.count(row.id) == 1);
    const auto* printed = by_id.at(row.id);
    CHECK(printed->command == "simulate");
    auto scenario = scenarios::load_scenario(row.id + ".yaml", printed->text, *catalog);
    REQUIRE_MESSAGE(scenario.ok(), format_diagnostics(scenario.errors()));
    auto plan = scenarios::make_plan(*scenario, *catalog);
    REQUIRE(plan.ok());
    const auto j = nlohmann::json::parse(scenarios::serving_simulation_json(*plan->serving_simulation)).at("llm");
    const auto& inf = *scenario->inference;
    const double out = j.at("output_tokens_per_second").get<double>();
    double value = 0;
    if (row.metric == "output_tokens_per_s") value = out;
    else if (row.metric == "output_tokens_per_s_per_gpu") value = out / (inf.tensor_parallel * inf.pipeline_parallel);
    else if (row.metric == "total_tokens_per_s")
      value = out * (inf.mix.prompt_tokens + inf.mix.output_tokens) / inf.mix.output_tokens;
    else if (row.metric == "requests_per_s") value = j.at("requests_per_second").get<double>();
    else {
      // Latencies: the row's statistic of the JSON's latency of that name.
      const std::string field = row.metric == "ttft_ms" ? "ttft" : row.metric == "tpot_ms" ? "tpot" : "end_to_end";
      const double scale = row.metric == "e2e_latency_s" ? 1.0 : 1e3;
      const std::string stat = stat_of.at(row.id);
      value = scale * (stat == "mean" ? j.at(field + "_mean_s").get<double>()
                                      : j.at(field + "_s").at(stat).at("mean").get<double>());
    }
    CHECK(value == doctest::Approx(row.predicted).epsilon(1e-12));
    ++checked;
  }
  CHECK(checked == 466);
}

// Issue 46: the llm-serving predictor holds no model constant and no code path of its own:
// what it sets is a scenario key. It may contain only the row-to-scenario mapping: this
// lists the numbers it may write (1: one replica; 1e3: seconds to milliseconds; 3: the
// significant digits of its detail text) and no models:: constant.
TEST_CASE("accuracy: the llm-serving predictor holds no model constant") {
  std::ifstream in(CAPSIM_TEST_SOURCE_DIR "/../scenarios/src/accuracy/llm.cpp");
  REQUIRE(in.good());
  std::string line;
  int n = 0;
  const std::regex constant(R"(\bk[A-Z][A-Za-z0-9]+\b)");
  const std::regex number(R"((^|[^A-Za-z0-9_.])([0-9]+(\.[0-9]+)?(e[0-9]+)?)\b)");
  while (std::getline(in, line)) {
    ++n;
    const auto code = line.substr(0, line.find("//"));
    INFO("llm.cpp:" << n << ": " << line);
    CHECK_FALSE(std::regex_search(code, constant));
    std::string quoted_free;  // numbers inside string literals are text, not constants
    bool in_string = false;
    for (char c : code) {
      if (c == '"') in_string = !in_string;
      else if (!in_string) quoted_free += c;
    }
    for (std::sregex_iterator it(quoted_free.begin(), quoted_free.end(), number), end; it != end; ++it) {
      const std::string literal = (*it)[2];
      CHECK_MESSAGE((literal == "1" || literal == "0" || literal == "1e3" || literal == "3"), "the literal " << literal);
    }
  }
  CHECK(n > 50);
}

// Issue 46: every training row is the scenario a user would write, planned by the plan
// function every command uses. The scenario `capsim accuracy --scenario ROW` prints, planned
// and written as `capsim run --format json` writes it, holds the step time the row's figure
// was read from, and the tokens-based metrics follow from it exactly; the CLI test pipes a
// few rows through the real commands.
TEST_CASE("accuracy: every training row's scenario, as run writes it, carries the row's prediction") {
  auto catalog = hardware::load_catalog_dir(CAPSIM_TEST_DATA_DIR "/catalog");
  REQUIRE(catalog.ok());
  auto report = scenarios::run_accuracy(*catalog, CAPSIM_TEST_DATA_DIR "/validation", "training");
  REQUIRE(report.ok());
  auto scenarios_of = scenarios::accuracy_row_scenarios(*catalog, CAPSIM_TEST_DATA_DIR "/validation");
  REQUIRE(scenarios_of.ok());
  std::map<std::string, const scenarios::AccuracyRowScenario*> by_id;
  for (const auto& s : *scenarios_of) by_id[s.id] = &s;
  std::map<std::string, double> published_batch;
  for (const char* file : {"training_fsdp_family.yaml", "training_megatron_family.yaml"})
    for (const auto& r : YAML::LoadFile(std::string(CAPSIM_TEST_DATA_DIR "/validation/") + file)["rows"])
      published_batch[r["id"].as<std::string>()] = r["global_batch"].as<double>();
  REQUIRE(published_batch.size() > 200);
  int checked = 0, not_predicted = 0;
  for (const auto& row : report->rows) {
    INFO(row.id);
    if (!row.not_predicted.empty()) {
      ++not_predicted;
      continue;
    }
    REQUIRE(by_id.count(row.id) == 1);
    const auto* printed = by_id.at(row.id);
    CHECK(printed->command == "run");
    auto scenario = scenarios::load_scenario(row.id + ".yaml", printed->text, *catalog);
    REQUIRE_MESSAGE(scenario.ok(), format_diagnostics(scenario.errors()));
    auto plan = scenarios::make_plan(*scenario, *catalog);
    REQUIRE(plan.ok());
    const auto j = nlohmann::json::parse(scenarios::run_json(*plan)).at("sizing").at("recommended");
    const double step = j.at("step_time_s").get<double>();
    CHECK(step == doctest::Approx(row.step_time_s).epsilon(1e-12));
    const YAML::Node doc = YAML::Load(printed->text);
    const int gpus = doc["hardware"]["max_gpus"].as<int>();
    CHECK(j.at("gpus").get<int>() == gpus);
    // The published batch (the scenario's may be rounded up to whole micro-batches).
    if (row.metric == "step_time_s") CHECK(step == doctest::Approx(row.predicted).epsilon(1e-12));
    if (const auto b = published_batch.find(row.id); b != published_batch.end()) {
      const double tokens = b->second * doc["workload"]["model"]["seq_len"].as<double>();
      if (row.metric == "tokens_per_s") CHECK(tokens / step == doctest::Approx(row.predicted).epsilon(1e-12));
      if (row.metric == "tokens_per_s_per_gpu")
        CHECK(tokens / step / gpus == doctest::Approx(row.predicted).epsilon(1e-12));
    }
    ++checked;
  }
  MESSAGE("training rows planned through their scenarios: " << checked << ", not predicted: " << not_predicted);
  CHECK(checked + not_predicted == static_cast<int>(report->rows.size()));
  CHECK(checked >= 200);
}

// Issue 46: the training predictor holds no model constant and no code path of its own: it
// writes the row's scenario and reads the plan. No call to the step model, no models::
// constant, and only the numbers of the row-to-scenario mapping and the metrics' units: 0,
// 1, 2 (the tuned lists start past 1), 3 (ZeRO stage 3 = FSDP), 8 (a row's default GPUs per
// node), 1000 (the scenario's steps; the ge-1000-gpus group), 8192 (the long-seq group),
// 1e12 (TFLOP/s), 100.0 (percent), and the FLOP conventions' factors as the sources count
// them (2.0, 3.0, 4.0, 6.0, 1.0).
TEST_CASE("accuracy: the training predictor holds no model constant") {
  std::ifstream in(CAPSIM_TEST_SOURCE_DIR "/../scenarios/src/accuracy/training.cpp");
  REQUIRE(in.good());
  std::string line;
  int n = 0;
  const std::regex constant(R"(\bk[A-Z][A-Za-z0-9]+\b)");
  const std::regex number(R"((^|[^A-Za-z0-9_.])([0-9]+(\.[0-9]+)?(e[0-9]+)?)\b)");
  const std::set<std::string> allowed{"0",   "1",    "2",     "3",   "8",   "1000", "8192",
                                      "1e12", "100.0", "1.0", "2.0", "3.0", "4.0",  "6.0"};
  while (std::getline(in, line)) {
    ++n;
    const auto code = line.substr(0, line.find("//"));
    INFO("training.cpp:" << n << ": " << line);
    CHECK_FALSE(std::regex_search(code, constant));
    CHECK(code.find("estimate_training_step") == std::string::npos);
    CHECK(code.find("training_memory") == std::string::npos);
    std::string quoted_free;
    bool in_string = false;
    for (char c : code) {
      if (c == '"') in_string = !in_string;
      else if (!in_string) quoted_free += c;
    }
    for (std::sregex_iterator it(quoted_free.begin(), quoted_free.end(), number), end; it != end; ++it)
      CHECK_MESSAGE(allowed.count((*it)[2]) == 1, "the literal " << (*it)[2]);
  }
  CHECK(n > 100);
}

// Issue 48: the first-look protocol. A row marked first_look: gets its error recorded once,
// by capsim accuracy --record-first-look, before any model change it could motivate; the
// record is never rewritten, and the report shows that recorded error apart from the dev
// rows' current one.
TEST_CASE("accuracy: first looks are recorded once, reported apart, and never rewritten") {
  auto catalog = hardware::load_catalog_dir(CAPSIM_TEST_DATA_DIR "/catalog");
  REQUIRE(catalog.ok());
  const auto dir = std::filesystem::temp_directory_path() / ("capsim-first-look-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string row = R"(  - id: ID
    source: "test fixture"
    fit: false
    FIRST
    model: llama-2-7b
    gpu: h100-sxm-80gb
    gpus: 1
    weights: bf16
    mode: offline
    input_len: 512
    output_len: 128
    num_requests: 200
    measured: {metric: output_tokens_per_s, value: 1000}
)";
  auto make = [&](const std::string& id, const std::string& first) {
    std::string r = row;
    r.replace(r.find("ID"), 2, id);
    r.replace(r.find("FIRST"), 5, first);
    return r;
  };
  std::ofstream(dir / "llm.yaml") << "kind: llm-serving\nrows:\n" << make("dev-row", "group: x") << make("new-row", "first_look: true");
  const auto file = dir / scenarios::kFirstLooksFile;
  // Before its first look is recorded, a marked row counts in no figure: its error must not
  // be seen, in a mean either.
  auto before = scenarios::run_accuracy(*catalog, dir, "llm-serving");
  REQUIRE(before.ok());
  CHECK(before->overall.first_look_pending == 1);
  CHECK(before->overall.rows == 1);  // the dev row only
  CHECK(before->overall.dev == 1);
  CHECK(before->overall.first_look == 0);
  REQUIRE(before->rows.size() == 2);
  CHECK(before->rows[1].first_look_pending());
  CHECK(before->overall.mean_abs == doctest::Approx(std::abs(before->rows[0].error_percent)));
  auto added = scenarios::record_first_looks(*catalog, dir, file, "abc1234", "2026-12-07");
  REQUIRE_MESSAGE(added.ok(), format_diagnostics(added.errors()));
  CHECK(*added == std::vector<std::string>{"new-row"});  // only the marked row
  auto again = scenarios::record_first_looks(*catalog, dir, file, "def5678", "2026-12-08");
  REQUIRE(again.ok());
  CHECK(again->empty());  // recorded once
  auto looks = scenarios::read_first_looks(file);
  REQUIRE(looks.ok());
  REQUIRE(looks->size() == 1);
  const auto& f = looks->front();
  CHECK(f.commit == "abc1234");
  CHECK(f.digest == scenarios::first_look_digest(f));
  auto report = scenarios::run_accuracy(*catalog, dir, "llm-serving");
  REQUIRE(report.ok());
  CHECK(report->overall.first_look == 1);
  CHECK(report->overall.dev == 1);
  CHECK(report->overall.first_look_mean_abs == doctest::Approx(std::abs(f.error_percent)));
  // A figure edited by hand no longer matches its digest.
  scenarios::FirstLook edited = f;
  edited.predicted *= 0.9;
  CHECK(scenarios::first_look_digest(edited) != f.digest);
  std::filesystem::remove_all(dir);
}

// Issue 48: the shipped record. Every entry's figures still match its digest (nobody edited
// a first look after the fact), every row marked first_look: has been recorded, and each
// entry is of a row that still measures what was recorded.
TEST_CASE("accuracy: the shipped first looks are all recorded and unchanged") {
  const std::filesystem::path dir = CAPSIM_TEST_DATA_DIR "/validation";
  auto looks = scenarios::read_first_looks(dir / scenarios::kFirstLooksFile);
  REQUIRE(looks.ok());
  std::map<std::string, scenarios::FirstLook> by_id;
  for (const auto& f : *looks) {
    INFO(f.id);
    CHECK(f.digest == scenarios::first_look_digest(f));
    CHECK(by_id.emplace(f.id, f).second);  // one entry per row
  }
  // A marked row capsim cannot predict yet (its GPU or precision is not in the catalog) has no
  // error to record: --record-first-look skips it, and it gets its first look the day it becomes
  // predictable. Every other marked row must be recorded.
  auto catalog = hardware::load_catalog_dir(CAPSIM_TEST_DATA_DIR "/catalog");
  REQUIRE_MESSAGE(catalog.ok(), format_diagnostics(catalog.errors()));
  auto report = scenarios::run_accuracy(*catalog, dir, "");
  REQUIRE_MESSAGE(report.ok(), format_diagnostics(report.errors()));
  std::set<std::string> not_predicted;
  for (const auto& row : report->rows)
    if (!row.not_predicted.empty()) not_predicted.insert(row.id);
  int marked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml" || entry.path().filename() == scenarios::kFirstLooksFile) continue;
    const YAML::Node doc = YAML::LoadFile(entry.path().string());
    if (!doc.IsMap() || !doc["rows"]) continue;
    for (const auto& r : doc["rows"]) {
      if (!r["first_look"]) continue;
      const std::string id = r["id"].as<std::string>();
      if (not_predicted.count(id) && !by_id.count(id)) continue;
      ++marked;
      INFO(id);
      REQUIRE(by_id.count(id) == 1);
      const YAML::Node m = r["measured"];
      const double published = m["value"] ? m["value"].as<double>() : m["images_per_s"] ? m["images_per_s"].as<double>()
                                                                                            : m["latency_ms"].as<double>();
      CHECK(by_id.at(id).published == published);
    }
  }
  CHECK(marked == static_cast<int>(looks->size()));
}
