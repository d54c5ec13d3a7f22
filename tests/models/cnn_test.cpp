// The CNN model's mechanisms (cnn.hpp): implicit-GEMM traffic, the autotuner's choice, and
// what each inference engine of data/catalog/engines.yaml removes or adds.
#include <doctest/doctest.h>

#include "capsim/models/cnn.hpp"
#include "capsim/models/performance.hpp"
#include "support/test_support.hpp"

using namespace capsim;
using namespace capsim::models;

namespace {

hardware::GpuSpec gpu(const char* id) { return testing::shipped_catalog().gpu(id).value(); }
hardware::EngineSpec engine(const char* id) { return testing::shipped_catalog().engine(id).value(); }

// One convolution, nothing else: 3x3, 64 -> 64 channels at 56 x 56, no norm, no activation.
CnnNetwork one_conv(int channels) {
  CnnNetwork n;
  n.name = "one-conv";
  n.convs.push_back({channels, channels, 3, 56, 1, false, false, false, 1});
  return n;
}

}  // namespace

TEST_CASE("cnn: an implicit-GEMM convolution moves its input once, not the 9x im2col view") {
  // A 3x3 convolution with 4 channels is memory-bound on a T4: its time is the input, the
  // weights and the output over the bandwidth, once each. Counting the im2col matrix
  // (M x K = 9 x the input) would make it about 5x slower.
  const auto t4 = gpu("t4");
  auto trt = engine("tensorrt");
  const int batch = 256;
  auto step = cnn_inference(one_conv(4), batch, t4, Precision::fp16, trt);
  REQUIRE_MESSAGE(step.ok(), format_diagnostics(step.errors()));
  const double elements = 2.0 * batch * 4 * 56 * 56 + 4 * 4 * 9;  // input + output + weights
  const double expected = elements * 2 / (t4.memory_bandwidth.value() * kMemoryBandwidthEfficiency()) +
                          step->kernels * kKernelGpuFloorSeconds();
  CHECK(step->gpu_time.value() == doctest::Approx(expected).scale(0).epsilon(1e-6));
}

TEST_CASE("cnn: an inference activation that fits in L2 beside its consumer's output skips DRAM, a training step's does not") {
  // A weight-bound 3x3 convolution (512 -> 512 channels at 7 x 7, batch 1: 4.7 MB of fp16
  // weights against 0.1 MB of activations and 0.2 GFLOP) on an L4 (48 MiB of L2) and on a
  // copy of it with no L2 in the catalog: with L2 only the weights cross DRAM, so the two
  // differ by exactly the activations' bytes over the bandwidth.
  const auto l4 = gpu("l4");
  REQUIRE(l4.l2_cache.value() == doctest::Approx(48.0 * 1024 * 1024).scale(0));
  auto no_l2 = l4;
  no_l2.l2_cache = Bytes{};
  CnnNetwork deep;
  deep.name = "deep-conv";
  deep.convs.push_back({512, 512, 3, 7, 1, false, false, false, 1});
  auto trt = engine("tensorrt");
  const auto fits = cnn_inference(deep, 1, l4, Precision::fp16, trt);
  const auto streams = cnn_inference(deep, 1, no_l2, Precision::fp16, trt);
  REQUIRE(fits.ok());
  REQUIRE(streams.ok());
  const double bw = l4.memory_bandwidth.value() * kMemoryBandwidthEfficiency();
  const double weights = 512.0 * 512 * 9 * 2;
  const double activations = 2.0 * 512 * 7 * 7 * 2;  // input + output, fp16
  CHECK(fits->gpu_time.value() ==
        doctest::Approx(weights / bw + fits->kernels * kKernelGpuFloorSeconds()).scale(0).epsilon(1e-9));
  CHECK(streams->gpu_time.value() - fits->gpu_time.value() ==
        doctest::Approx(activations / bw).scale(0).epsilon(1e-6));
  // At batch 4096 the 4-channel convolution's input and output (206 MB) do not fit: both
  // GPUs stream them.
  const auto big = cnn_inference(one_conv(4), 4096, l4, Precision::fp16, trt);
  const auto big_no_l2 = cnn_inference(one_conv(4), 4096, no_l2, Precision::fp16, trt);
  REQUIRE(big.ok());
  REQUIRE(big_no_l2.ok());
  CHECK(big->gpu_time.value() == doctest::Approx(big_no_l2->gpu_time.value()).scale(0).epsilon(1e-12));
  // A training step keeps its activations for backward: the L2 changes nothing.
  const auto train = cnn_training_step(deep, 1, l4, Precision::fp16, true);
  const auto train_no_l2 = cnn_training_step(deep, 1, no_l2, Precision::fp16, true);
  REQUIRE(train.ok());
  REQUIRE(train_no_l2.ok());
  CHECK(train->gpu_time.value() == doctest::Approx(train_no_l2->gpu_time.value()).scale(0).epsilon(1e-12));
}

TEST_CASE("cnn: engines differ by mechanism: fused epilogues, folded batch norm, casts, host time") {
  const auto* rn50 = find_cnn("resnet50");
  REQUIRE(rn50 != nullptr);
  const auto v100 = gpu("v100-sxm2-16gb");
  auto framework = cnn_inference(*rn50, 1, v100, Precision::fp32, engine("framework"));
  auto amp = cnn_inference(*rn50, 1, v100, Precision::fp16, engine("framework"));
  auto ort = cnn_inference(*rn50, 1, v100, Precision::fp32, engine("onnxruntime"));
  auto trt = cnn_inference(*rn50, 1, v100, Precision::fp16, engine("tensorrt"));
  REQUIRE(framework.ok());
  REQUIRE(amp.ok());
  REQUIRE(ort.ok());
  REQUIRE(trt.ok());
  // Eager: convolution, batch norm, ReLU and add are kernels of their own: 53 convolutions +
  // 53 batch norms + 33 ReLUs + 16 adds + the classifier's 2 + 2 pools = 159.
  CHECK(framework->kernels == 159);
  // Autocast adds a cast of each convolution's and the classifier's weights: + 54.
  CHECK(amp->kernels == 159 + 54);
  // ONNX Runtime folds batch norm into the weights: - 53.
  CHECK(ort->kernels == 159 - 53);
  // TensorRT fuses everything into the convolutions: 53 + 1 + 2 pools.
  CHECK(trt->kernels == 56);
  // At batch 1 eager PyTorch is host-bound: its latency is kernels x its host time per kernel.
  CHECK(framework->time.value() ==
        doctest::Approx(159 * engine("framework").host_time_per_kernel.value()).epsilon(1e-9));
  CHECK(framework->host_time > framework->gpu_time);
  // A compiled engine has no per-kernel host time: GPU-bound, many times faster.
  CHECK(trt->time.value() < framework->time.value() / 10);
  // The same engine without fusion moves more bytes: ReLU and add passes come back.
  auto unfused = engine("tensorrt");
  unfused.fuses_epilogue = false;
  auto slower = cnn_inference(*rn50, 64, v100, Precision::fp16, unfused);
  auto fused = cnn_inference(*rn50, 64, v100, Precision::fp16, engine("tensorrt"));
  REQUIRE(slower.ok());
  REQUIRE(fused.ok());
  CHECK(slower->gpu_time > fused->gpu_time);
  CHECK(slower->kernels == 53 + 33 + 16 + 2 + 2);
}

TEST_CASE("cnn: precisions an engine or a GPU does not run are refused, naming them") {
  const auto* rn50 = find_cnn("resnet50");
  auto no_int8 = cnn_inference(*rn50, 8, gpu("t4"), Precision::int8, engine("onnxruntime"));
  REQUIRE_FALSE(no_int8.ok());
  CHECK(no_int8.errors()[0].message == "engine 'onnxruntime' does not run int8 convolutions");
  auto pascal = cnn_inference(*rn50, 8, gpu("gtx-1080-ti"), Precision::int8, engine("tensorrt"));
  REQUIRE_FALSE(pascal.ok());
  CHECK(pascal.errors()[0].message == "GPU 'gtx-1080-ti' has no dense int8 peak in the catalog");
  CHECK_FALSE(cnn_inference(*rn50, 0, gpu("t4"), Precision::fp16, engine("tensorrt")).ok());
}

TEST_CASE("cnn: the autotuner runs 3x3 convolutions in fp32 Winograd where TF32 is no faster") {
  // GeForce Ampere: TF32 tensor cores at the fp32 CUDA-core rate, so Winograd's 2.25x fewer
  // multiplies win; on an A100 (TF32 8x its fp32 rate) the tensor cores keep every 3x3.
  const auto* rn50 = find_cnn("resnet50");
  auto geforce = cnn_training_step(*rn50, 128, gpu("rtx-3090"), Precision::fp32);
  auto a100 = cnn_training_step(*rn50, 128, gpu("a100-sxm-80gb"), Precision::fp32);
  REQUIRE(geforce.ok());
  REQUIRE(a100.ok());
  // At least ResNet-50's sixteen 3x3 convolutions on the RTX 3090 (its CUDA cores at
  // kSharedDatapathFp32Share of the datasheet fp32 rate); on the A100 at most the 7x7 stem.
  const auto at = geforce->note.find(" convolutions faster in fp32 with Winograd");
  REQUIRE(at != std::string::npos);
  const auto from = geforce->note.rfind(' ', at - 1) + 1;
  const int simt = std::stoi(geforce->note.substr(from, at - from));
  CHECK(simt >= 16);
  CHECK(simt <= 53);
  CHECK(a100->math == Precision::tf32);
  CHECK(a100->note.find("convolutions faster") == std::string::npos);
}

TEST_CASE("cnn: squeeze-and-excitation adds its two small layers and three passes over each block's output") {
  const auto* plain = find_cnn("resnext101-32x4d");
  const auto* se = find_cnn("se-resnext101-32x4d");
  REQUIRE(plain != nullptr);
  REQUIRE(se != nullptr);
  // ResNeXt-101 32x4d has 44.2 M parameters (Xie et al. 2017); the SE blocks (reduction 16
  // on every bottleneck's output: 3 x 256, 4 x 512, 23 x 1024, 3 x 2048 channels) add
  // 2 C^2 / 16 + C + C / 16 each, 4.8 M in all: 49.0 M, as SE-ResNeXt-101 is published.
  CHECK(cnn_parameter_count(*plain) == doctest::Approx(44.2e6).epsilon(0.01));
  CHECK(cnn_parameter_count(*se) - cnn_parameter_count(*plain) == doctest::Approx(4.80e6).epsilon(0.01));
  // The same FLOPs (the SE layers' are negligible and not counted), a slower step: the pool
  // and the scale stream every block output.
  CHECK(cnn_forward_flops_per_sample(*se) == cnn_forward_flops_per_sample(*plain));
  auto a = cnn_training_step(*plain, 128, gpu("a100-sxm-80gb"), Precision::fp16, true);
  auto b = cnn_training_step(*se, 128, gpu("a100-sxm-80gb"), Precision::fp16, true);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(b->time.value() > a->time.value() * 1.05);
  CHECK(b->kernels == a->kernels + 33 * (6 + 7));
}

TEST_CASE("cnn: a convolution's bias and a pooling layer are memory passes of their own in a training step") {
  // VGG-16 has biases instead of batch norm and a 2 x 2 max pool after each stage: with
  // the biases it has the 138,357,544 parameters Simonyan & Zisserman's network has.
  const auto* vgg = find_cnn("vgg16");
  REQUIRE(vgg != nullptr);
  CHECK(cnn_parameter_count(*vgg) == 138357544.0);
  CHECK(vgg->pools.size() == 5);
  // One 64-channel convolution at 56 x 56 in mixed precision on an A100, then the same with
  // a bias: forward reads and writes the output, backward reads its gradient once; two
  // kernels more, and the optimizer updates 64 more parameters (20 bytes each).
  const auto a100 = gpu("a100-sxm-80gb");
  const double bw = streaming_bandwidth(a100);
  const int batch = 64;
  const double out = 64.0 * batch * 56 * 56;
  auto biased = one_conv(64);
  biased.convs[0].bias = true;
  const auto plain_step = cnn_training_step(one_conv(64), batch, a100, Precision::fp16, true);
  const auto biased_step = cnn_training_step(biased, batch, a100, Precision::fp16, true);
  REQUIRE(plain_step.ok());
  REQUIRE(biased_step.ok());
  CHECK(biased_step->kernels == plain_step->kernels + 2);
  CHECK(biased_step->gpu_time.value() - plain_step->gpu_time.value() ==
        doctest::Approx(3 * out * 2 / bw + 64 * 20 / bw + 2 * kKernelGpuFloorSeconds()).scale(0).epsilon(1e-9));
  // A max pool to 28 x 28: forward reads its input and writes its output; backward reads
  // the output gradient and where the maxima were and writes the input gradient (2 x both).
  // An average pool's backward reads the output gradient and writes the input's (1 x both).
  auto pooled = one_conv(64);
  pooled.pools.push_back({64, 56, 28, true});
  auto averaged = one_conv(64);
  averaged.pools.push_back({64, 56, 28, false});
  const double pool_elements = out + out / 4;
  const auto max_step = cnn_training_step(pooled, batch, a100, Precision::fp16, true);
  const auto avg_step = cnn_training_step(averaged, batch, a100, Precision::fp16, true);
  REQUIRE(max_step.ok());
  REQUIRE(avg_step.ok());
  CHECK(max_step->gpu_time.value() - plain_step->gpu_time.value() ==
        doctest::Approx(3 * pool_elements * 2 / bw + 2 * kKernelGpuFloorSeconds()).scale(0).epsilon(1e-9));
  CHECK(avg_step->gpu_time.value() - plain_step->gpu_time.value() ==
        doctest::Approx(2 * pool_elements * 2 / bw + 2 * kKernelGpuFloorSeconds()).scale(0).epsilon(1e-9));
}
