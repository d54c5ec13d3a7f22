#include <doctest/doctest.h>

#include "capsim/models/search.hpp"
#include "capsim/models/training_pipeline.hpp"
#include "support/test_support.hpp"

using namespace capsim;
using namespace capsim::models;

namespace {

TrainingPipelineSpec resnet_on_1080ti(int cores) {
  TrainingPipelineSpec spec;
  spec.model = *find_sample_model_preset("resnet-50");
  spec.batch_per_gpu = 64;
  spec.cluster = node_type_by_id(testing::shipped_catalog(), "supermicro-sys-4028gr-tr2-10x-gtx-1080-ti")->cluster;
  spec.options.compute = Precision::fp32;
  spec.options.mixed_precision = false;
  spec.host = {cores, Seconds(0.025), 0.3, Bytes(108e3), BytesPerSecond(500e6), Seconds(0.0)};
  return spec;
}

des::RunOptions short_run() {
  des::RunOptions run;
  run.warmup = Seconds(30);
  run.duration = Seconds(240);
  run.seed = 1;
  return run;
}

}  // namespace

TEST_CASE("a 4-core host starves the GPU and the CPU is named the constraint") {
  auto r = simulate_training_pipeline(resnet_on_1080ti(4), short_run());
  REQUIRE(r.ok());
  CHECK(r->simulation.constraint == "cpu decode");
  // 4 cores / 25 ms = 160 samples/s, less than the GPU could train (~235 samples/s from
  // ResNet-50's layers on a 1080 Ti): the GPU idles the rest.
  CHECK(r->cpu_capacity == doctest::Approx(160));
  CHECK(r->simulated_samples_per_second == doctest::Approx(160).epsilon(0.02));
  CHECK(r->gpu_utilization == doctest::Approx(160 / r->gpu_capacity).epsilon(0.05));
  CHECK(r->gpu_utilization < 0.75);
  CHECK(r->simulation.throughput.contains(r->cpu_capacity));
  // Cores to feed the GPU: gpu capacity x 25 ms x 1.1, rounded up.
  CHECK(r->cores_to_feed_gpus == static_cast<int>(std::ceil(r->gpu_capacity * 0.025 * 1.1)));
  CHECK(r->analytic_constraint == "cpu decode");
}

TEST_CASE("with enough cores the GPU is the constraint and the simulation matches the analytic step") {
  auto r = simulate_training_pipeline(resnet_on_1080ti(16), short_run());
  REQUIRE(r.ok());
  CHECK(r->simulation.constraint == "gpu step");
  CHECK(r->gpu_utilization > 0.99);
  // Saturated, the GPU trains a batch per analytic step: throughput = 64 / step.
  CHECK(r->simulated_samples_per_second == doctest::Approx(r->gpu_capacity).epsilon(0.01));
  CHECK(r->simulated_step_time.value() == doctest::Approx(r->analytic_step.step_time.value()).epsilon(0.01));
}

TEST_CASE("checkpoints lengthen the step by their amortized time") {
  TrainingPipelineSpec spec = resnet_on_1080ti(16);
  auto plain = simulate_training_pipeline(spec, short_run());
  spec.checkpoint_every_steps = 100;
  spec.checkpoint_bandwidth = BytesPerSecond(100e6);
  auto with_ckpt = simulate_training_pipeline(spec, short_run());
  REQUIRE((plain.ok() && with_ckpt.ok()));
  // ResNet-50 fp32 states: 25.6 M params x (4 weights + 8 Adam) = 307 MB at 100 MB/s every 100 steps.
  CHECK(with_ckpt->checkpoint_time_per_step.value() == doctest::Approx(25.6e6 * 12 / 100e6 / 100).epsilon(0.05));
  CHECK(with_ckpt->simulated_step_time > plain->simulated_step_time);
}

TEST_CASE("bad pipeline inputs name the key") {
  TrainingPipelineSpec spec = resnet_on_1080ti(0);
  spec.host.decode_time = Seconds(0.0);
  auto r = build_training_pipeline(spec);
  REQUIRE_FALSE(r.ok());
  CHECK(format_diagnostics(r.errors()) ==
        "error: simulate.host.cpu_cores: must be at least 1\n"
        "error: simulate.host.decode_time: must be greater than zero\n");
}
