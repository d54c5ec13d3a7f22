#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "capsim/core/queueing.hpp"
#include "capsim/models/cnn.hpp"
#include "capsim/models/serving.hpp"
#include "support/test_support.hpp"

using namespace capsim;
using namespace capsim::models;

namespace {

hardware::GpuSpec gpu(const char* id) { return testing::shipped_catalog().gpu(id).value(); }

// One stage serving `model` on whole GPUs.
DeploymentPlan single_stage(const char* model, const char* gpu_id, Precision p, int replicas, int max_batch,
                            Seconds delay = Seconds(0.0)) {
  InferenceGraph g{"classifier", {{"classify", *find_reference_served_model(model), 1.0}}};
  Deployment d;
  d.gpu = gpu(gpu_id);
  StageDeployment s;
  s.replicas = replicas;
  s.batching = {max_batch, delay};
  s.exec.precision = p;
  d.stages = {s};
  auto plan = plan_deployment(g, d);
  REQUIRE_MESSAGE(plan.ok(), format_diagnostics(plan.errors()));
  return *plan;
}

des::RunOptions run_for(double seconds, std::uint64_t seed = 1) {
  des::RunOptions r;
  r.warmup = Seconds(seconds / 10);
  r.duration = Seconds(seconds);
  r.seed = seed;
  return r;
}

ArrivalSpec poisson(double rate) {
  ArrivalSpec a;
  a.rate = des::Rate(rate);
  return a;
}

}  // namespace

TEST_CASE("serving roofline curve is monotone and its throughput does not fall") {
  const auto* m = find_reference_served_model("resnet-50");
  REQUIRE(m != nullptr);
  auto c = roofline_latency_curve(*m, gpu("t4"), {Precision::fp32, std::nullopt, std::nullopt}, 64);
  REQUIRE(c.ok());
  for (int b = 2; b <= 64; ++b) {
    CHECK(c->latency(b) >= c->latency(b - 1));
    CHECK(c->throughput(b) >= c->throughput(b - 1) * (1 - 1e-12));
  }
  // Batch 1 on T4 fp32, by hand: rows r = (224/32)^2 = 49, e = 0.72 x 49 / (49 + 96) = 0.2433;
  // compute 7.6e9 / (8.1e12 x 0.2433) = 3.856 ms; memory (25.6e6 x 4 + 602,112 + 20.87e6 x 4)
  // / (300e9 x 0.8) = 0.777 ms; + 54 kernels x 5 us = 0.27 ms -> 4.126 ms (242 inferences/s).
  CHECK(c->latency(1).value() == doctest::Approx(4.126e-3).epsilon(0.002));
}

TEST_CASE("serving fan-out past the curve's largest batch runs more passes, never free items (issue 22.9)") {
  using capsim::des::ServiceTime;
  // A curve that stops at batch 1 (no batching): a request of 3 items is three passes.
  auto one = LatencyCurve::measured({{1, Seconds(0.002)}});
  REQUIRE(one.ok());
  CHECK(one->per_request(3).latency(1).value() == doctest::Approx(0.006));
  CHECK(one->per_request(1e6).latency(1).value() == doctest::Approx(2000.0));
  // A batched curve: within it, interpolation; past it, the largest batch's throughput.
  auto curve = LatencyCurve::measured({{1, Seconds(0.002)}, {4, Seconds(0.004)}});
  REQUIRE(curve.ok());
  CHECK(curve->latency(2.5).value() == doctest::Approx(0.003));
  CHECK(curve->latency(8).value() == doctest::Approx(0.008));
  // A request's capacity never rises with its fan-out.
  double last = 1e300;
  for (double f : {1.0, 2.0, 3.0, 4.0, 5.0, 8.0, 30.0}) {
    const auto per = curve->per_request(f);
    const double capacity = per.max_batch() / per.latency(per.max_batch()).value();
    CHECK(capacity <= last * (1 + 1e-12));
    last = capacity;
  }
}

TEST_CASE("serving measured table rejects a latency that falls with the batch") {
  auto c = LatencyCurve::measured({{1, Seconds(0.004)}, {8, Seconds(0.003)}});
  REQUIRE_FALSE(c.ok());
  CHECK(c.errors()[0].message == "latency must not decrease with the batch size (batch 1: 4 ms, batch 8: 3 ms)");
}

TEST_CASE("serving engine_speedup is an override without a cap, and non-positive or non-finite factors are refused") {
  const auto* m = find_reference_served_model("resnet-50");
  auto plain = roofline_latency_curve(*m, gpu("t4"), {Precision::fp16, std::nullopt, std::nullopt}, 8);
  REQUIRE(plain.ok());
  // 8x is above NVIDIA's "up to 5x": a user's own measurement, accepted as given.
  auto fast = roofline_latency_curve(*m, gpu("t4"), {Precision::fp16, std::nullopt, 8.0}, 8);
  REQUIRE(fast.ok());
  CHECK(fast->latency(4).value() == doctest::Approx(plain->latency(4).value() / 8));
  // A factor below 1 (a slower runtime) is a measurement too.
  auto slow = roofline_latency_curve(*m, gpu("t4"), {Precision::fp16, std::nullopt, 0.5}, 8);
  REQUIRE(slow.ok());
  CHECK(slow->latency(4).value() == doctest::Approx(plain->latency(4).value() * 2));
  for (double bad : {0.0, -2.0, std::nan(""), std::numeric_limits<double>::infinity()}) {
    auto c = roofline_latency_curve(*m, gpu("t4"), {Precision::fp16, std::nullopt, bad}, 8);
    REQUIRE_FALSE(c.ok());
    CHECK(c.errors()[0].key_path == "engine_speedup");
    CHECK(c.errors()[0].message.starts_with("must be a positive finite factor"));
  }
}

TEST_CASE("serving saturated station delivers the batch-curve maximum") {
  // 2 replicas of ResNet-50 on T4 fp16, max batch 16: capacity = 2 x 16 / latency(16).
  const auto plan = single_stage("resnet-50", "t4", Precision::fp16, 2, 16);
  const double capacity = 2 * 16 / plan.stages[0].request_curve.latency(16).value();
  CHECK(estimate_serving(plan, 1.0).capacity == doctest::Approx(capacity));
  // Offered 1.5 x capacity: the queue never empties, every batch is full.
  auto r = simulate_serving(plan, poisson(1.5 * capacity), run_for(30));
  REQUIRE_MESSAGE(r.ok(), format_diagnostics(r.errors()));
  MESSAGE("capacity " << capacity << "/s, simulated " << r->simulated_throughput << "/s");
  CHECK(r->simulated_throughput == doctest::Approx(capacity).epsilon(0.005));
  CHECK(r->simulation.constraint == "classify");
}

TEST_CASE("serving without batching matches M/D/1 Pollaczek-Khinchine within 2 percent") {
  const auto plan = single_stage("resnet-50", "t4", Precision::fp32, 1, 1);
  const double s = plan.stages[0].request_curve.latency(1).value();  // 4.126 ms
  const double rate = 0.7 / s;                                       // rho = 0.7
  // P-K: W = S + lambda S^2 / (2 (1 - rho)) = S (1 + 0.7 / 0.6) = 2.1667 S = 8.94 ms.
  const double expected = s * (1 + 0.7 / (2 * 0.3));
  auto pk = queueing::md1(queueing::Rate(rate), Seconds(s));
  CHECK(pk->sojourn_time.value() == doctest::Approx(expected));
  CHECK(estimate_serving(plan, rate).mean_latency.value() == doctest::Approx(expected));
  auto r = simulate_serving(plan, poisson(rate), run_for(2000, 7));
  REQUIRE(r.ok());
  MESSAGE("P-K " << expected * 1e3 << " ms, simulated " << r->simulation.latency.mean * 1e3 << " ms");
  CHECK(std::abs(r->simulation.latency.mean / expected - 1) < 0.02);
}

TEST_CASE("serving MIG partitions never share memory or compute slices") {
  const auto a100 = gpu("a100-sxm-80gb");
  std::vector<CoLocatedModel> models{{"detector", gigabytes(15), 1, "3g.40gb", 0},
                                     {"recognizer", gigabytes(5), 2, "1g.10gb", 0},
                                     {"classifier", gigabytes(8), 1, "2g.20gb", 0}};
  auto layout = plan_gpu_sharing(a100, SharingMode::mig, models);
  REQUIRE_MESSAGE(layout.ok(), format_diagnostics(layout.errors()));
  REQUIRE(layout->mig.size() == 4);
  int slices = 0;
  for (std::size_t i = 0; i < layout->mig.size(); ++i) {
    const auto& a = layout->mig[i];
    slices += a.slices;
    CHECK(a.memory_offset + a.memory <= a100.memory);
    for (std::size_t j = i + 1; j < layout->mig.size(); ++j) {
      const auto& b = layout->mig[j];
      const bool memory_disjoint = a.memory_offset + a.memory <= b.memory_offset || b.memory_offset + b.memory <= a.memory_offset;
      const bool slices_disjoint = a.first_slice + a.slices <= b.first_slice || b.first_slice + b.slices <= a.first_slice;
      CHECK_MESSAGE(memory_disjoint, a.model << " and " << b.model << " overlap in memory");
      CHECK(slices_disjoint);
    }
  }
  CHECK(slices == 3 + 1 + 1 + 2);  // <= 7
  // Each instance gets exactly its slice: 3g.40gb = 3/7 of the compute and 40 GB.
  CHECK(layout->shares[0].compute_fraction == doctest::Approx(3.0 / 7));
  CHECK(layout->shares[0].memory == gigabytes(40));
  CHECK(layout->k8s_resources[1] == "nvidia.com/mig-1g.10gb");
  // Eight 1g slices exceed both the profile's 7 instances and the 7 compute slices.
  auto too_many = plan_gpu_sharing(a100, SharingMode::mig, {{"tiny", gigabytes(1), 8, "1g.10gb", 0}});
  CHECK_FALSE(too_many.ok());
}

TEST_CASE("serving rejects models that do not fit and names the model and the GPU") {
  auto shared = plan_gpu_sharing(gpu("t4"), SharingMode::time_slicing,
                                 {{"text-detector", gigabytes(10), 1, "", 0}, {"crnn", gigabytes(8), 1, "", 0}});
  REQUIRE_FALSE(shared.ok());
  CHECK(shared.errors()[1].message ==
        "model 'crnn' does not fit on t4 with time-slicing: the co-located models need 18 GB of its 16 GB");
  auto mig = plan_gpu_sharing(gpu("a100-sxm-80gb"), SharingMode::mig, {{"east", gigabytes(12.1), 1, "1g.10gb", 0}});
  REQUIRE_FALSE(mig.ok());
  CHECK(mig.errors()[0].message ==
        "model 'east' does not fit in MIG profile 1g.10gb of a100-sxm-80gb: it needs 12.1 GB, the slice has 10 GB");
  auto mps = plan_gpu_sharing(gpu("t4"), SharingMode::mps,
                              {{"a", gigabytes(2), 1, "", 0.6}, {"b", gigabytes(2), 1, "", 0.6}});
  REQUIRE_FALSE(mps.ok());
  CHECK(mps.errors()[0].message == "the MPS shares on t4 add up to 1.2 (at most 1)");
}

TEST_CASE("serving time-slicing pays a context switch and MPS shares add") {
  auto ts = plan_gpu_sharing(gpu("t4"), SharingMode::time_slicing,
                             {{"a", gigabytes(2), 1, "", 0}, {"b", gigabytes(2), 1, "", 0}});
  REQUIRE(ts.ok());
  // 1/2 x 2 ms / (2 ms + 25 us) = 0.4938
  CHECK(ts->shares[0].compute_fraction == doctest::Approx(0.5 * 2e-3 / 2.025e-3));
  auto mps = plan_gpu_sharing(gpu("t4"), SharingMode::mps, {{"a", gigabytes(2), 1, "", 0.3}, {"b", gigabytes(2), 1, "", 0}});
  REQUIRE(mps.ok());
  CHECK(mps->shares[0].compute_fraction + mps->shares[1].compute_fraction == doctest::Approx(1.0));
}

TEST_CASE("serving dynamic batching raises throughput at the same p99 bound on a T4") {
  // ResNet-50 fp32 in a framework on one T4: 242 inferences/s at batch 1 (users saw 216);
  // with max batch 8 and a 5 ms queue delay the GPU runs larger, more efficient batches.
  const Seconds bound(0.050);
  auto best_rate = [&](int max_batch, Seconds delay) {
    const auto plan = single_stage("resnet-50", "t4", Precision::fp32, 1, max_batch, delay);
    const double capacity = estimate_serving(plan, 1.0).capacity;
    double best = 0;
    for (double f : {0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95}) {
      auto r = simulate_serving(plan, poisson(f * capacity), run_for(120, 3));
      REQUIRE(r.ok());
      if (r->latency.p99.mean <= bound.value()) best = f * capacity;
    }
    return best;
  };
  const double off = best_rate(1, Seconds(0.0));
  const double on = best_rate(8, Seconds(0.005));
  MESSAGE("p99 <= 50 ms: batching off " << off << "/s, on " << on << "/s, gain " << on / off << "x");
  CHECK(off > 150);
  CHECK(on / off > 1.2);
}

TEST_CASE("serving OCR graph with fan-out runs end to end and agrees with the estimate") {
  InferenceGraph g{"road-signs",
                   {{"text-detector", *find_reference_served_model("horizontal-text-detection-0001"), 1.0},
                    {"text-recognizer", *find_reference_served_model("text-recognition-0012"), 3.0}}};
  Deployment d;
  d.gpu = gpu("a100-sxm-80gb");
  d.sharing = SharingMode::mig;
  StageDeployment det{.replicas = 2, .instances_per_replica = 1, .batching = {8, Seconds(0.002)},
                      .exec = {}, .mig_profile = "3g.40gb", .mps_share = 0};
  StageDeployment rec{.replicas = 1, .instances_per_replica = 1, .batching = {32, Seconds(0.002)},
                      .exec = {}, .mig_profile = "1g.10gb", .mps_share = 0};
  d.stages = {det, rec};
  auto plan = plan_deployment(g, d);
  REQUIRE_MESSAGE(plan.ok(), format_diagnostics(plan.errors()));
  // 3g + 3g + 1g is 7 slices, but 40 + 40 + 10 = 90 GB > 80 GB: the 1g.10gb goes to a second GPU.
  CHECK(plan->gpus == 2);
  CHECK(plan->stages[1].max_batch_requests == 10);  // floor(32 crops / 3 per request)
  CHECK(plan->stages[1].k8s_resource == "nvidia.com/mig-1g.10gb");
  const double rate = 0.6 * estimate_serving(*plan, 1.0).capacity;
  auto r = simulate_serving(*plan, poisson(rate), run_for(60));
  REQUIRE(r.ok());
  CHECK(r->simulated_throughput == doctest::Approx(rate).epsilon(0.03));
  CHECK(r->analytic.stable);
  MESSAGE("analytic mean " << r->analytic.mean_latency.value() * 1e3 << " ms, p99 " << r->analytic.p99_latency.value() * 1e3
                           << " ms; simulated mean " << r->simulation.latency.mean * 1e3 << " ms, p99 "
                           << r->latency.p99.mean * 1e3 << " ms");
}

TEST_CASE("serving a batch of more requests than kMaxRequestsPerBatch is refused at the stage's fan_out (issue 47)") {
  // fan_out 0.000001 with max_batch 64 made a curve of 64 million request batches (24 GB).
  InferenceGraph g{"rare", {{"fallback", *find_reference_served_model("text-recognition-0012"), 0.001}}};
  Deployment d;
  d.gpu = gpu("t4");
  StageDeployment s;
  s.batching = {64, Seconds(0.0)};
  d.stages = {s};
  // 64 inputs / 0.001 = 64,000 requests: within the 65,536.
  auto within = plan_deployment(g, d);
  REQUIRE_MESSAGE(within.ok(), format_diagnostics(within.errors()));
  CHECK(within->stages[0].max_batch_requests == 64000);
  // 128 / 0.001 = 128,000 requests.
  d.stages[0].batching.max_batch = 128;
  auto over = plan_deployment(g, d);
  REQUIRE_FALSE(over.ok());
  CHECK(over.errors()[0].key_path == "stages[0].fan_out");
  CHECK(over.errors()[0].message ==
        "stage 'fallback': a batch of 128 model inputs at fan-out 0.001 holds 128000 requests, more than the "
        "requests-per-batch limit of 65536");
  CHECK(requests_per_batch(1, 1e-6) == 1e6);
  CHECK(requests_per_batch(8, 3) == 2);
  CHECK(requests_per_batch(2, 3) == 1);  // a request's crops run together even past the batch
}

TEST_CASE("serving a MIG slice or an MPS share streams memory at its share of the bandwidth, not the whole GPU's (issue 47)") {
  const auto a100 = gpu("a100-sxm-80gb");
  auto mig = plan_gpu_sharing(a100, SharingMode::mig, {{"m", gigabytes(5), 1, "1g.10gb", 0}});
  REQUIRE(mig.ok());
  // 1g.10gb: 1/7 of the compute slices, 10 of the 80 GB, and the bandwidth of its memory slices.
  CHECK(mig->shares[0].compute_fraction == doctest::Approx(1.0 / 7));
  CHECK(mig->shares[0].bandwidth_fraction == doctest::Approx(10.0 / 80));
  auto mps = plan_gpu_sharing(a100, SharingMode::mps, {{"m", gigabytes(5), 1, "", 0.25}});
  REQUIRE(mps.ok());
  CHECK(mps->shares[0].bandwidth_fraction == doctest::Approx(0.25));

  // The per-sample roofline: a model of 1e9 fp16 weights and 1 MFLOP per sample is memory
  // bound, so a batch of 1 takes 2 GB / (bandwidth x share x 0.8): 8 x the whole GPU's on
  // the 1g.10gb slice, 4 x on an MPS quarter.
  ServedModel weights_only;
  weights_only.model.name = "weights-only";
  weights_only.model.params = 1e9;
  weights_only.model.forward_flops_per_sample = 1e6;
  const ExecutionOptions bare{Precision::fp16, std::nullopt, std::nullopt};
  auto whole = roofline_latency_curve(weights_only, a100, bare, 1);
  auto on_slice = roofline_latency_curve(weights_only, a100, bare, 1, mig->shares[0]);
  auto on_quarter = roofline_latency_curve(weights_only, a100, bare, 1, mps->shares[0]);
  REQUIRE((whole.ok() && on_slice.ok() && on_quarter.ok()));
  CHECK(whole->latency(1).value() == doctest::Approx(2e9 / (a100.memory_bandwidth.value() * 0.8)));
  CHECK(on_slice->latency(1).value() == doctest::Approx(8 * whole->latency(1).value()));
  CHECK(on_quarter->latency(1).value() == doctest::Approx(4 * whole->latency(1).value()));

  // Layer by layer (ResNet-50 on TensorRT): the curve on a share is the layer model on a GPU
  // whose peaks are the compute fraction of the A100's and whose bandwidth and L2 cache are
  // the bandwidth fraction of its own.
  const auto engine = testing::shipped_catalog().engine("tensorrt");
  REQUIRE(engine.ok());
  const ExecutionOptions trt{Precision::fp16, *engine, std::nullopt};
  for (const GpuShare& share : {mig->shares[0], mps->shares[0]}) {
    hardware::GpuSpec seen = a100;
    for (auto& [precision, peak] : seen.peak_dense) peak = peak * share.compute_fraction;
    seen.memory_bandwidth = a100.memory_bandwidth * share.bandwidth_fraction;
    seen.l2_cache = a100.l2_cache * share.bandwidth_fraction;
    auto curve = roofline_latency_curve(*find_reference_served_model("resnet-50"), a100, trt, 8, share);
    REQUIRE(curve.ok());
    for (int b : {1, 8}) {
      auto step = cnn_inference(*find_cnn("resnet50"), b, seen, Precision::fp16, *engine);
      REQUIRE(step.ok());
      CHECK(curve->latency(b).value() == doctest::Approx(step->time.value()));
    }
  }
}
