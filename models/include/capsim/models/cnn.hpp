// Convolutional networks from their layers: training step and inference latency per GPU.
//
// A network is its list of convolutions (input channels, output channels, kernel, stride,
// output size, groups) and its classifier. Each convolution runs as an implicit GEMM
// (M = batch x output pixels, N = output channels / groups, K = input channels / groups x
// kernel area; Chetlur et al., "cuDNN", 2014) under the same size-dependent GEMM roofline
// as the transformer model (performance.hpp). Implicit means the im2col matrix is never
// written: a convolution moves its input feature map, its weights and its output through
// memory once, not the K-times-larger im2col view. Batch norm, biases, ReLU, residual adds
// and pooling are memory-bound passes over the activations; backward is the data and the weight gradient
// (two more GEMMs of the forward's shape) and the element-wise backward passes; the
// optimizer is SGD with momentum over fp32 master weights. The framework launches each
// kernel from the host: a step takes at least kernels x kCnnHostTimePerKernel, so small
// batches are launch-bound (eager PyTorch) until the GPU work outgrows it.
//
// The precision path is the frameworks': fp32 runs convolutions in TF32 on Ampere and
// newer (PyTorch's cudnn.allow_tf32 default) and in fp32 before; mixed precision uses the
// 16-bit tensor cores from Volta on and falls back to fp32 math where the GPU has none
// (Pascal). cuDNN's autotuner (cudnn.benchmark, TensorRT's tactic timing) times every
// algorithm per layer and keeps the fastest: where a GPU's fp32 CUDA cores with Winograd
// beat its TF32 tensor cores on a 3x3 convolution (GeForce Ampere/Ada, whose TF32 rate
// equals the fp32 one), that layer runs in fp32 with Winograd.
//
// Inference runs on an engine (hardware::EngineSpec, data/catalog/engines.yaml): eager
// PyTorch, a TensorFlow graph, ONNX Runtime or a TensorRT engine differ in which passes
// they remove (batch norm folded into the weights; activation and residual add in the
// convolution's epilogue), the layout their tensor-core kernels read (NHWC needs no
// transposes), the casts mixed precision adds, the host time per kernel and per call,
// and the GEMM tiles they pick per layer. In inference an activation lives only until its
// consumer has read it: where a kernel's input and output fit in the GPU's L2 cache
// (catalog `l2_cache`) they never cross DRAM; a training step keeps them for backward.
// All functions are pure and thread-safe.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "capsim/models/constants.hpp"
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
  int stride = 1;             // the input side is out_size x stride
  // Squeeze-and-excitation on this convolution's output (Hu et al., SENet, CVPR 2018):
  // global average pool, two fully connected layers through se_channels, a sigmoid, and the
  // output scaled channel by channel. 0: none.
  int se_channels = 0;
  // A bias added after the convolution (networks without batch norm, e.g. VGG): a separate
  // element-wise kernel in a framework (tf.nn.bias_add, PyTorch's add), its gradient a
  // reduction of the output gradient over the batch and pixels.
  bool bias = false;
};

// A pooling layer: a memory-bound pass that reads its input and writes its (smaller)
// output. Backward, a max pool reads the output gradient and where the maxima were (the
// forward's input and output in TensorFlow's MaxPoolGrad, the saved indices in PyTorch) and
// writes the input gradient; an average pool reads the output gradient and writes the
// input's.
struct PoolLayer {
  int channels = 0;
  int in_size = 0;   // input side in pixels (square)
  int out_size = 0;  // output side
  bool max = true;   // max pool; false: average pool
};

struct CnnNetwork {
  std::string name;
  int input_size = 224;
  std::vector<ConvLayer> convs;
  std::vector<std::pair<int, int>> fully_connected;  // (in, out) of each classifier layer
  std::vector<PoolLayer> pools;  // max pools, the global average pool
  std::string source;
};

// resnet50, resnet101, resnet152, resnext101-32x4d, se-resnext101-32x4d, vgg16; nullptr
// for another name.
const CnnNetwork* find_cnn(std::string_view name);
std::span<const CnnNetwork> cnn_networks();

double cnn_parameter_count(const CnnNetwork& n);
double cnn_forward_flops_per_sample(const CnnNetwork& n);  // 2 FLOPs per multiply-add
// Elements every convolution writes for one sample (the activations a forward streams).
double cnn_activation_elements_per_sample(const CnnNetwork& n);

// Host time of one operator in an eager framework (Python module call, dispatcher, CUDA
// launch) for training steps; the same figure as the `framework` engine's
// host_time_per_kernel (data/catalog/engines.yaml), chosen on the vision-inference row
// marked fit: true (ResNet-50, PyTorch, V100, batch 1: 10.37 ms over 159 operators).
// kCnnHostTimePerKernel: read from the registry, capsim/models/constants.hpp (value, unit, basis).
// A layout transpose (NCHW <-> NHWC around a tensor-core convolution) passes every element
// through an SM (a strided load, a shared-memory shuffle, a coalesced store): it takes the
// longer of its HBM traffic and its elements at this many per SM per clock. Chosen on an
// H100 80GB HBM3 (data/validation/measured-here/, rows marked fit: true): mixed-precision
// ResNet-50 at batch 256 takes 94.8 ms per step in NCHW and 54.2 ms channels-last, and
// the 40.6 ms between them is 1.67e10 transposed elements on 132 SMs at 1.83 GHz. The
// H200, the same SMs with 1.43x the HBM bandwidth, pays 41.1 ms: the SMs bound it.
// kTransposeElementsPerSmClock: read from the registry, capsim/models/constants.hpp (value, unit, basis).
// Share of the datasheet fp32 peak that CUDA-core convolutions reach on an SM whose second
// fp32 datapath is also its INT32 datapath (GA10x, Ada; cnn.cpp): the kernels' integer
// instructions take those lanes. CHOSEN on cnn_training row rn50-rtx-3090-fp32-1g-lambda-pt.
// kSharedDatapathFp32Share: read from the registry, capsim/models/constants.hpp (value, unit, basis).
// GPU time a kernel costs however small its work: the device-side launch and drain
// between dependent kernels, which a CUDA graph or a TensorRT engine does not remove.
// Chosen on the vision-inference row rn50-l4-trt-int8-b1-singlestream-mlperf-v30
// (fit: true: ResNet-50 INT8 at batch 1 on an L4, 0.362 ms over 57 kernels, with its
// activations in the L4's 48 MiB of L2 and its 25 MB of weights read from DRAM); NVIDIA's
// "Getting Started with CUDA Graphs" (developer.nvidia.com/blog/cuda-graphs, 2019)
// measures a few microseconds per short kernel, the same order.
// kKernelGpuFloorSeconds: read from the registry, capsim/models/constants.hpp (value, unit, basis).

struct CnnStep {
  Seconds time;          // the step (training) or the batch's latency (inference)
  Seconds gpu_time;      // GEMMs + element-wise + optimizer on the GPU
  Seconds host_time;     // kernel launches (and, for inference, the engine's call overhead)
  double images_per_second = 0;
  Precision math = Precision::fp32;  // the precision the convolutions ran at
  int kernels = 0;                   // kernels per step / per forward
  std::string note;                  // fallbacks, e.g. "fp16 on Pascal: fp32 math"
};

// One training step of `batch` images on one GPU. requested: fp32, tf32, fp16 (mixed
// precision) or bf16. channels_last: tensors in NHWC, the layout tensor-core convolutions
// read; in NCHW (PyTorch's default) cuDNN transposes each convolution's input and output
// on tensor-core paths (two more read-write passes each). Errors: batch < 1, a GPU with no
// usable peak.
Result<CnnStep> cnn_training_step(const CnnNetwork& n, int batch, const hardware::GpuSpec& gpu, Precision requested,
                                  bool channels_last = false);

// Forward of `batch` images on `engine`. requested: fp32 (TF32 on Ampere and newer when the
// engine runs tf32), tf32, fp16, bf16 (eager engines: autocast mixed precision) or int8.
// Per convolution: the GEMM, then the passes the engine does not remove (batch norm in
// eval mode reads and writes once, ReLU reads and writes, the residual add reads two and
// writes one; fused, only the residual is read in the epilogue), NCHW transposes on
// tensor-core paths unless the engine is channels-last. Traffic between a kernel and its
// neighbour stays in L2 when the pair of tensors fits (the residual, written a block
// earlier, comes from DRAM). GPU time adds
// kKernelGpuFloorSeconds per kernel; the call takes host_time_per_call plus the longer of
// GPU and host launch time (host_overlaps_gpu) or their sum. Errors: batch < 1, a
// precision the engine or the GPU does not run.
Result<CnnStep> cnn_inference(const CnnNetwork& n, int batch, const hardware::GpuSpec& gpu, Precision requested,
                              const hardware::EngineSpec& engine);

}  // namespace capsim::models
