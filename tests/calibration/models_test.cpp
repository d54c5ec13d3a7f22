// The models switch from datasheet to measured figures when a GPU carries a calibration,
// and say so. Step times are predicted by hand from the synthetic profile's numbers.
#include <doctest/doctest.h>

#include <cmath>

#include "capsim/hardware/calibration.hpp"
#include "capsim/models/cluster.hpp"
#include "capsim/models/collectives.hpp"
#include "capsim/models/performance.hpp"
#include "support/test_support.hpp"

using namespace capsim;
using namespace capsim::models;

namespace {

hardware::MeasuredFigures synthetic_h100() {
  auto p = hardware::read_calibration_profile(CAPSIM_TEST_DATA_DIR
                                              "/calibration/synthetic/h100-sxm-80gb-synthetic.json");
  REQUIRE_MESSAGE(p.ok(), format_diagnostics(p.errors()));
  return hardware::measured_figures(*p);
}

// The shipped catalog with the synthetic H100 profile attached, as the store would.
const hardware::Catalog& calibrated_catalog() {
  static const hardware::Catalog catalog = [] {
    hardware::Catalog c = testing::shipped_catalog();
    c.set_measured("h100-sxm-80gb", synthetic_h100());
    return c;
  }();
  return catalog;
}

// A CNN-like per-sample model whose input transfer hides under compute.
SampleModel test_cnn() {
  SampleModel m;
  m.name = "test-cnn";
  m.params = 25e6;
  m.forward_flops_per_sample = 8e9;
  m.activation_bytes_per_sample = 100e6;
  m.input_bytes_per_sample = 600e3;
  return m;
}

TransformerShape gpt_like() {
  TransformerShape s;
  s.name = "gpt-like";
  s.layers = 24;
  s.hidden = 2048;
  s.heads = 16;
  s.kv_heads = 16;
  s.ffn_hidden = 8192;
  s.vocab = 51200;
  s.seq_len = 2048;
  return s;
}

}  // namespace

TEST_CASE("a one-GPU step moves from the datasheet figure to the calibrated one, as predicted by hand") {
  auto datasheet = cluster_from_catalog(testing::shipped_catalog(), "h100-sxm-80gb", 1, "", "", 0);
  auto calibrated = cluster_from_catalog(calibrated_catalog(), "h100-sxm-80gb", 1, "", "", 0);
  REQUIRE(datasheet.ok());
  REQUIRE(calibrated.ok());
  const TrainingOptions options;  // bf16, mixed precision: Adam 30 B/param
  auto before = estimate_sample_model_step(test_cnn(), 256, 1, *datasheet, options);
  auto after = estimate_sample_model_step(test_cnn(), 256, 1, *calibrated, options);
  REQUIRE(before.ok());
  REQUIRE(after.ok());

  // Datasheet: 3 forwards at 0.57 x 989 TFLOP/s (Hopper's GEMM ceiling,
  // kGemmMaxEfficiencyHopper), 3 activation passes and the optimizer at
  // 0.8 x 3.35 TB/s. One GPU: no gradient sync; input (600 kB x 256 over PCIe) hides.
  const double flops = 3 * 8e9 * 256, activations = 3 * 100e6 * 256, adam = 25e6 * 30;
  const double datasheet_step = flops / (0.57 * 989e12) + activations / (0.8 * 3.35e12) + adam / (0.8 * 3.35e12);
  CHECK(before->step_time.value() == doctest::Approx(datasheet_step).epsilon(1e-12));
  CHECK_FALSE(before->calibrated);
  // Calibrated: the fitted bf16 ceiling (800 TFLOP/s) for a large convolution, the measured
  // triad (3.0 TB/s) for activations and optimizer.
  const double calibrated_step = flops / 800e12 + activations / 3.0e12 + adam / 3.0e12;
  CHECK(after->step_time.value() == doctest::Approx(calibrated_step).epsilon(1e-9));
  CHECK(after->calibrated);
  CHECK(after->step_time.value() < before->step_time.value());
  // MFU stays relative to the datasheet peak, so measured and datasheet runs compare.
  CHECK(after->mfu == doctest::Approx(flops / (after->step_time.value() * 989e12)));
}

TEST_CASE("a fitted curve with the model's own half-saturation dimension equals the datasheet model rescaled") {
  // A measured ceiling C and bandwidth M with the H100's d_half (about 2 x 96: its 16-bit
  // FLOPs per clock per SM over GA100's) must predict what the
  // datasheet model predicts for a GPU with peak C / 0.57 (Hopper's ceiling) and bandwidth
  // M / 0.8: same formula. Attention runs eager here (GEMMs): fused flash kernels run at a
  // fraction of the datasheet peak, which a measured GEMM curve does not change.
  hardware::MeasuredFigures m;
  m.device_name = "hand-made";
  m.measured_at = "2025-01-01T00:00:00Z";
  hardware::Catalog catalog = testing::shipped_catalog();
  const auto h100 = catalog.gpu("h100-sxm-80gb");
  REQUIRE(h100.ok());
  m.gemm_curve["bf16"] = {FlopsPerSecond(650e12), gemm_half_saturation_dim(*h100, Precision::bf16), 10, 0.0};
  m.memory_bandwidth = BytesPerSecond(2.9e12);
  catalog.set_measured("h100-sxm-80gb", m);
  auto measured = cluster_from_catalog(catalog, "h100-sxm-80gb", 8, "nvswitch-h100", "", 0);
  REQUIRE(measured.ok());
  ClusterSpec rescaled = *measured;
  rescaled.gpu.measured.reset();
  rescaled.gpu.peak_dense.insert_or_assign("bf16", FlopsPerSecond(650e12 / kGemmMaxEfficiencyHopper()));
  rescaled.gpu.memory_bandwidth = BytesPerSecond(2.9e12 / kMemoryBandwidthEfficiency());

  Parallelism par;
  par.tensor = 2;
  par.data = 4;
  par.micro_batch = 2;
  par.global_batch = 64;
  TrainingOptions eager;
  eager.attention = Attention::eager;
  auto a = estimate_training_step(gpt_like(), par, *measured, eager);
  auto b = estimate_training_step(gpt_like(), par, rescaled, eager);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->calibrated);
  CHECK_FALSE(b->calibrated);
  CHECK(a->step_time.value() == doctest::Approx(b->step_time.value()).epsilon(1e-12));
  CHECK(a->breakdown.compute.value() == doctest::Approx(b->breakdown.compute.value()).epsilon(1e-12));
}

TEST_CASE("an 8-GPU H100 node uses the measured links and the training step changes") {
  auto datasheet = cluster_from_catalog(testing::shipped_catalog(), "h100-sxm-80gb", 8, "nvswitch-h100", "", 0);
  auto calibrated = cluster_from_catalog(calibrated_catalog(), "h100-sxm-80gb", 8, "nvswitch-h100", "", 0);
  REQUIRE(datasheet.ok());
  REQUIRE(calibrated.ok());
  CHECK_FALSE(datasheet->calibrated);
  CHECK(datasheet->figures_source == "datasheet");
  CHECK(datasheet->gpu.figures_source == "datasheet");
  CHECK(calibrated->calibrated);
  CHECK(calibrated->figures_source ==
        "gpu: calibrated (NVIDIA H100 80GB HBM3, measured 2025-01-01T00:00:00Z, synthetic); "
        "links: measured pcie, intra-node");
  // Intra-node: NCCL bus bandwidth / kCollectiveBandwidthFraction, so the ring model's
  // effective bandwidth equals the measured bus bandwidth; latency from p2p.
  const double gib = 1 << 30;
  const double bus = 360e9 * gib / (gib + 8e6);
  CHECK(calibrated->intra_node_bandwidth.value() == doctest::Approx(bus / kCollectiveBandwidthFraction()));
  CHECK(calibrated->intra_node_latency.value() == 2.5e-6);
  CHECK(calibrated->pcie_bandwidth.value() == doctest::Approx(50e9 * gib / (gib + 200e3)));
  CHECK(datasheet->intra_node_bandwidth.value() == 450e9);

  Parallelism par;
  par.tensor = 2;
  par.data = 4;
  par.micro_batch = 2;
  par.global_batch = 64;
  auto before = estimate_training_step(gpt_like(), par, *datasheet, {});
  auto after = estimate_training_step(gpt_like(), par, *calibrated, {});
  REQUIRE(before.ok());
  REQUIRE(after.ok());
  CHECK_FALSE(before->calibrated);
  CHECK(after->calibrated);
  CHECK(after->step_time.value() != doctest::Approx(before->step_time.value()).epsilon(1e-3));
  // TP all-reduces see the measured bus bandwidth (about 360 GB/s effective instead of
  // 0.8 x 450 = 360 GB/s: the synthetic profile happens to agree within 1 %).
  CHECK(after->breakdown.tensor_parallel_comm.value() ==
        doctest::Approx(before->breakdown.tensor_parallel_comm.value()).epsilon(0.02));
}

TEST_CASE("measured intra-node figures from a faster fabric are not applied to a PCIe node") {
  auto pcie_node = cluster_from_catalog(calibrated_catalog(), "h100-sxm-80gb", 8, "pcie-gen5-x16", "", 0);
  REQUIRE(pcie_node.ok());
  CHECK(pcie_node->intra_node_bandwidth.value() == 63e9);  // datasheet line rate kept
  CHECK(pcie_node->figures_source.ends_with("links: measured pcie"));
}

TEST_CASE("a PCIe node's measured bus bandwidth stands even where it beats the assumed PCIe share") {
  // 8 x L40S on PCIe Gen4 (31.5 GB/s): NCCL measured at 20 GB/s bus bandwidth, above the
  // 0.53 x 31.5 = 16.7 GB/s the model assumes. The ring model must then run at 20 GB/s,
  // even though 20 / 0.53 is above the line rate.
  hardware::MeasuredFigures m = synthetic_h100();
  m.allreduce_bus_bandwidth = BytesPerSecond(20e9);
  hardware::Catalog catalog = testing::shipped_catalog();
  catalog.set_measured("l40s", m);
  auto node = cluster_from_catalog(catalog, "l40s", 8, "pcie-gen4-x16", "", 0);
  REQUIRE(node.ok());
  CHECK(node->intra_node_pcie);
  CHECK(node->figures_source.ends_with("links: measured pcie, intra-node"));
  CHECK(intra_node_link(*node).bandwidth.value() == doctest::Approx(20e9));
  // 30 GB/s of bus bandwidth is more than PCIe Gen4 carries at NCCL's best share
  // (1.1 x 0.8 x 31.5 = 27.7 GB/s): measured elsewhere, the datasheet stays.
  m.allreduce_bus_bandwidth = BytesPerSecond(30e9);
  catalog.set_measured("l40s", m);
  auto faster = cluster_from_catalog(catalog, "l40s", 8, "pcie-gen4-x16", "", 0);
  REQUIRE(faster.ok());
  CHECK(faster->intra_node_bandwidth.value() == doctest::Approx(31.5e9));
  CHECK(faster->figures_source.ends_with("links: measured pcie"));
}

TEST_CASE("a precision without a fitted curve keeps the datasheet GEMM figures") {
  // The synthetic H100 profile has no fp64 GEMMs; the catalog lists an fp64 peak. Only the
  // measured memory bandwidth applies, and the estimate still says calibrated.
  hardware::MeasuredFigures only_gemm;
  only_gemm.device_name = "gemm only";
  only_gemm.measured_at = "2025-01-01T00:00:00Z";
  only_gemm.gemm_curve["fp8"] = {FlopsPerSecond(1.5e15), 160, 10, 0};
  hardware::Catalog catalog = testing::shipped_catalog();
  catalog.set_measured("h100-sxm-80gb", only_gemm);
  auto c = cluster_from_catalog(catalog, "h100-sxm-80gb", 1, "", "", 0);
  REQUIRE(c.ok());
  auto bf16 = estimate_sample_model_step(test_cnn(), 256, 1, *c, {});
  REQUIRE(bf16.ok());
  CHECK_FALSE(bf16->calibrated);  // no bf16 curve, no memory figure, no link figure
  auto datasheet = cluster_from_catalog(testing::shipped_catalog(), "h100-sxm-80gb", 1, "", "", 0);
  auto same = estimate_sample_model_step(test_cnn(), 256, 1, *datasheet, {});
  CHECK(bf16->step_time.value() == same->step_time.value());
}
