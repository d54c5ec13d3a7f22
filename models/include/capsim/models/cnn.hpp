// Convolutional networks from their layers: training step and inference latency per GPU.
//
// A network is its list of convolutions (input channels, output channels, kernel, stride,
// output size, groups) and its classifier. Each convolution runs as an implicit GEMM
// (M = batch x output pixels, N = output channels / groups, K = input channels / groups x
// kernel area; Chetlur et al., "cuDNN", 2014) under the same size-dependent GEMM roofline
// as the transformer model (performance.hpp); batch norm, ReLU and residual adds are
// memory-bound passes over the activations; backward is the data and the weight gradient
// (two more GEMMs of the forward's shape) and the element-wise backward passes; the
// optimizer is SGD with momentum over fp32 master weights. The framework launches each
// kernel from the host: a step takes at least kernels x kCnnHostTimePerKernel, so small
// batches are launch-bound (eager PyTorch) until the GPU work outgrows it.
//
// The precision path is the frameworks': fp32 runs convolutions in TF32 on Ampere and
// newer (PyTorch's cudnn.allow_tf32 default) and in fp32 before; mixed precision uses the
// 16-bit tensor cores from Volta on and falls back to fp32 math where the GPU has none
// (Pascal). All functions are pure and thread-safe.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "capsim/core/result.hpp"
#include "capsim/core/units.hpp"
#include "capsim/hardware/catalog.hpp"
#include "capsim/models/workload.hpp"

namespace capsim::models {

struct ConvLayer {
  int in_channels = 0;
  int out_channels = 0;
  int kernel = 1;      // square kernel side
  int out_size = 0;    // output side in pixels (square)
  int groups = 1;      // grouped convolution (ResNeXt)
  bool batch_norm = true;
  bool relu = true;
  bool residual_add = false;  // the block's add follows this convolution
};

struct CnnNetwork {
  std::string name;
  int input_size = 224;
  std::vector<ConvLayer> convs;
  std::vector<std::pair<int, int>> fully_connected;  // (in, out) of each classifier layer
  std::string source;
};

// resnet50, resnet101, resnet152, resnext101-32x4d, vgg16; nullptr for another name.
const CnnNetwork* find_cnn(std::string_view name);
std::span<const CnnNetwork> cnn_networks();

double cnn_parameter_count(const CnnNetwork& n);
double cnn_forward_flops_per_sample(const CnnNetwork& n);  // 2 FLOPs per multiply-add

// Host time of one operator in an eager framework (Python module call, dispatcher, CUDA
// launch). Chosen on the one vision-inference row marked fit: true (ResNet-50, PyTorch,
// V100, batch 1: 10.37 ms over ~175 operators); it sets the floor of small batches.
inline constexpr double kCnnHostTimePerKernel = 60e-6;

struct CnnStep {
  Seconds time;          // the step (training) or the batch's latency (inference)
  Seconds gpu_time;      // GEMMs + element-wise + optimizer on the GPU
  Seconds host_time;     // kernel launches
  double images_per_second = 0;
  Precision math = Precision::fp32;  // the precision the convolutions ran at
  std::string note;                  // fallbacks, e.g. "fp16 on Pascal: fp32 math"
};

// One training step of `batch` images on one GPU. requested: fp32, tf32, fp16 (mixed
// precision) or bf16. channels_last: tensors in NHWC, the layout tensor-core convolutions
// read; in NCHW (PyTorch's default) cuDNN transposes each convolution's input and output
// on tensor-core paths (two more read-write passes each). Errors: batch < 1, a GPU with no
// usable peak.
Result<CnnStep> cnn_training_step(const CnnNetwork& n, int batch, const hardware::GpuSpec& gpu, Precision requested,
                                  bool channels_last = false);
// Forward of `batch` images in an eager framework (batch norm runs as its own operator).
Result<CnnStep> cnn_inference(const CnnNetwork& n, int batch, const hardware::GpuSpec& gpu, Precision requested);

}  // namespace capsim::models
