// Convolutional networks from their layers (cnn.hpp).
#include "capsim/models/cnn.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "capsim/models/performance.hpp"

namespace capsim::models {
namespace {

// ResNet bottleneck stages (He et al., "Deep Residual Learning", CVPR 2016, Table 1; v1.5:
// the stride on the 3x3 convolution). widths: bottleneck width per stage; ResNeXt 32x4d
// (Xie et al. 2017, Table 1) doubles the width and groups the 3x3 convolution by 32.
CnnNetwork resnet(std::string name, std::array<int, 4> blocks, int width_factor, int groups, std::string source) {
  CnnNetwork n;
  n.name = std::move(name);
  n.source = std::move(source);
  n.convs.push_back({3, 64, 7, 112, 1, true, true, false});  // stem, then 3x3 max pool to 56
  int in = 64;
  const std::array<int, 4> widths{64, 128, 256, 512};
  const std::array<int, 4> sizes{56, 28, 14, 7};
  for (int s = 0; s < 4; ++s) {
    const int mid = widths[static_cast<std::size_t>(s)] * width_factor;
    const int out = widths[static_cast<std::size_t>(s)] * 4;
    const int size = sizes[static_cast<std::size_t>(s)];
    for (int b = 0; b < blocks[static_cast<std::size_t>(s)]; ++b) {
      // The first block of a stage reads the previous stage's size (the 1x1 before the strided 3x3).
      const int in_size = (b == 0 && s > 0) ? size * 2 : size;
      n.convs.push_back({in, mid, 1, in_size, 1, true, true, false});
      n.convs.push_back({mid, mid, 3, size, groups, true, true, false});
      n.convs.push_back({mid, out, 1, size, 1, true, false, true});
      if (b == 0) n.convs.push_back({in, out, 1, size, 1, true, false, false});  // projection shortcut
      in = out;
    }
  }
  n.fully_connected = {{2048, 1000}};
  return n;
}

// VGG-16 (Simonyan & Zisserman 2015, Table 1, configuration D): 13 3x3 convolutions, no
// batch norm, three fully connected layers.
CnnNetwork vgg16() {
  CnnNetwork n;
  n.name = "vgg16";
  n.source = "Simonyan & Zisserman, Very Deep Convolutional Networks, ICLR 2015, Table 1 (D), https://arxiv.org/abs/1409.1556";
  const std::array<std::pair<int, int>, 5> stages{{{64, 2}, {128, 2}, {256, 3}, {512, 3}, {512, 3}}};
  int in = 3, size = 224;
  for (const auto& [c, count] : stages) {
    for (int k = 0; k < count; ++k) {
      n.convs.push_back({in, c, 3, size, 1, false, true, false});
      in = c;
    }
    size /= 2;
  }
  n.fully_connected = {{512 * 7 * 7, 4096}, {4096, 4096}, {4096, 1000}};
  return n;
}

const std::vector<CnnNetwork>& networks() {
  static const std::vector<CnnNetwork> all = [] {
    const std::string he = "He et al., Deep Residual Learning for Image Recognition, CVPR 2016, Table 1, "
                           "https://arxiv.org/abs/1512.03385";
    return std::vector<CnnNetwork>{
        resnet("resnet50", {3, 4, 6, 3}, 1, 1, he),
        resnet("resnet101", {3, 4, 23, 3}, 1, 1, he),
        resnet("resnet152", {3, 8, 36, 3}, 1, 1, he),
        resnet("resnext101-32x4d", {3, 4, 23, 3}, 2, 32,
               "Xie et al., Aggregated Residual Transformations (ResNeXt), CVPR 2017, Table 1, "
               "https://arxiv.org/abs/1611.05431"),
        vgg16(),
    };
  }();
  return all;
}

struct Path {
  Precision math;
  double peak = 0;
  double act_bytes = 4;
  std::string note;
  bool tensor_cores = true;
};

// The precision a framework runs the convolutions at on this GPU.
Result<Path> path_for(const hardware::GpuSpec& gpu, Precision requested) {
  auto peak = [&](const char* p) { return gpu.peak(p) ? gpu.peak(p)->value() : 0.0; };
  const bool ampere_or_newer = gpu.architecture != "kepler" && gpu.architecture != "maxwell" &&
                               gpu.architecture != "pascal" && gpu.architecture != "volta" &&
                               gpu.architecture != "turing";
  const bool tensor_cores_16 = gpu.architecture != "kepler" && gpu.architecture != "maxwell" && gpu.architecture != "pascal";
  Path p;
  if (requested == Precision::fp32 || requested == Precision::tf32) {
    if (ampere_or_newer && peak("tf32") > 0) {
      p = {Precision::tf32, peak("tf32"), 4, requested == Precision::fp32 ? "fp32 runs convolutions in TF32 on " +
                                                                              gpu.architecture + " (PyTorch default)"
                                                                        : ""};
    } else {
      p = {Precision::fp32, peak("fp32"), 4, "", false};
    }
  } else {
    const char* want = requested == Precision::bf16 ? "bf16" : "fp16";
    if (tensor_cores_16 && peak(want) > 0) {
      p = {requested == Precision::bf16 ? Precision::bf16 : Precision::fp16, peak(want), 2, ""};
    } else {
      p = {Precision::fp32, peak("fp32"), 2,
           "mixed precision on " + gpu.architecture + " (no 16-bit tensor cores): fp32 math, 16-bit activations", false};
    }
  }
  if (!(p.peak > 0))
    return Diagnostic{{}, "gpu", "GPU '" + gpu.id + "' has no dense " + std::string(precision_name(p.math)) + " peak", ""};
  return p;
}

double gemm_ceiling(const hardware::GpuSpec& gpu) {
  return gpu.architecture == "hopper" ? kGemmMaxEfficiencyHopper : kGemmMaxEfficiency;
}

// CUDA-core (SIMT) fp32 kernels do a quarter of a tensor-core tile's math per operand
// byte and reach their peak on smaller tiles: the half-saturation dimension shrinks by the
// same factor.
double shape_factor(double m, double n, double k, bool tensor_cores) {
  const double d = tensor_cores ? kGemmHalfSaturationDim : kGemmHalfSaturationDim / 4;
  return (m / (m + d)) * (n / (n + d)) * (k / (k + d));
}

struct Work {
  double gemm = 0;       // seconds of GEMM on the GPU, forward
  double gemm_bwd = 0;   // data + weight gradient
  double ew_fwd = 0;     // element-wise, forward
  double ew_bwd = 0;
  double kernels_fwd = 0, kernels_bwd = 0;
};

Work network_work(const CnnNetwork& n, double batch, const hardware::GpuSpec& gpu, const Path& path,
                  bool channels_last) {
  const double bw = gpu.memory_bandwidth.value() * kMemoryBandwidthEfficiency;
  const double ceiling = gemm_ceiling(gpu);
  const double operand = path.act_bytes;
  Work w;
  auto gemm = [&](double m, double nn, double k, double count) {
    const double flops = 2 * m * nn * k * count;
    const double bytes = operand * (m * k + k * nn + m * nn) * count;
    return std::max(flops / (ceiling * shape_factor(m, nn, k, path.tensor_cores) * path.peak), bytes / bw);
  };
  for (const auto& c : n.convs) {
    const double pixels = static_cast<double>(c.out_size) * c.out_size;
    const double m = batch * pixels;
    const double g = c.groups;
    const double nn = c.out_channels / g;
    const double k = c.in_channels / g * c.kernel * c.kernel;
    // cuDNN runs 3x3 stride-1 fp32 convolutions with Winograd F(2x2, 3x3): 16 multiplies
    // per 2x2 output tile instead of 36, 2.25x fewer (Lavin & Gray, "Fast Algorithms for
    // Convolutional Neural Networks", CVPR 2016); tensor-core paths use implicit GEMM.
    const double winograd = (!path.tensor_cores && c.kernel == 3 && c.groups == 1) ? 2.25 : 1.0;
    w.gemm += gemm(m, nn, k, g) / winograd;
    w.gemm_bwd += (gemm(m, k, nn, g) + gemm(k, nn, m, g)) / winograd;  // data gradient, weight gradient
    // Element-wise passes over the output (bytes per element x passes): batch norm reads
    // the output twice (statistics, normalize) and writes once; ReLU reads and writes; the
    // residual add reads two and writes one. Backward: batch norm 5, ReLU 3, add 3.
    const double elems = m * c.out_channels;
    const double fwd_passes = (c.batch_norm ? 3 : 0) + (c.relu ? 2 : 0) + (c.residual_add ? 3 : 0);
    const double bwd_passes = (c.batch_norm ? 5 : 0) + (c.relu ? 3 : 0) + (c.residual_add ? 3 : 0);
    w.ew_fwd += elems * fwd_passes * path.act_bytes / bw;
    w.ew_bwd += elems * bwd_passes * path.act_bytes / bw;
    if (path.tensor_cores && !channels_last) {
      // NCHW -> NHWC of the input and back for the output, forward and backward.
      const double in_elems = batch * c.in_channels * static_cast<double>(c.out_size) * c.out_size;
      w.ew_fwd += 2 * (in_elems + elems) * path.act_bytes / bw;
      w.ew_bwd += 2 * 2 * (in_elems + elems) * path.act_bytes / bw;
    }
    w.kernels_fwd += 1 + (c.batch_norm ? 1 : 0) + (c.relu ? 1 : 0) + (c.residual_add ? 1 : 0);
    w.kernels_bwd += 2 + (c.batch_norm ? 1 : 0) + (c.relu ? 1 : 0) + (c.residual_add ? 1 : 0);
  }
  for (const auto& [in, out] : n.fully_connected) {
    w.gemm += gemm(batch, out, in, 1);
    w.gemm_bwd += gemm(batch, in, out, 1) + gemm(in, out, batch, 1);
    w.kernels_fwd += 2;
    w.kernels_bwd += 3;
  }
  return w;
}

}  // namespace

std::span<const CnnNetwork> cnn_networks() { return networks(); }

const CnnNetwork* find_cnn(std::string_view name) {
  for (const auto& n : networks())
    if (n.name == name) return &n;
  return nullptr;
}

double cnn_parameter_count(const CnnNetwork& n) {
  double p = 0;
  for (const auto& c : n.convs)
    p += static_cast<double>(c.in_channels) / c.groups * c.out_channels * c.kernel * c.kernel +
         (c.batch_norm ? 2.0 * c.out_channels : 0.0);
  for (const auto& [in, out] : n.fully_connected) p += static_cast<double>(in) * out + out;
  return p;
}

double cnn_forward_flops_per_sample(const CnnNetwork& n) {
  double f = 0;
  for (const auto& c : n.convs)
    f += 2.0 * c.out_size * c.out_size * c.out_channels * (static_cast<double>(c.in_channels) / c.groups) * c.kernel *
         c.kernel;
  for (const auto& [in, out] : n.fully_connected) f += 2.0 * in * out;
  return f;
}

Result<CnnStep> cnn_training_step(const CnnNetwork& n, int batch, const hardware::GpuSpec& gpu, Precision requested,
                                  bool channels_last) {
  if (batch < 1) return Diagnostic{{}, "batch", "must be at least 1, got " + std::to_string(batch), ""};
  auto path = path_for(gpu, requested);
  if (!path) return path.errors();
  const Work w = network_work(n, batch, gpu, *path, channels_last);
  const double bw = gpu.memory_bandwidth.value() * kMemoryBandwidthEfficiency;
  // SGD with momentum: fp32 weight, gradient and momentum read, weight and momentum written.
  const double optimizer = cnn_parameter_count(n) * 20.0 / bw;
  CnnStep s;
  s.gpu_time = Seconds(w.gemm + w.gemm_bwd + w.ew_fwd + w.ew_bwd + optimizer);
  s.host_time = Seconds((w.kernels_fwd + w.kernels_bwd + 4) * kCnnHostTimePerKernel);
  s.time = Seconds(std::max(s.gpu_time.value(), s.host_time.value()));
  s.images_per_second = batch / s.time.value();
  s.math = path->math;
  s.note = path->note;
  return s;
}

Result<CnnStep> cnn_inference(const CnnNetwork& n, int batch, const hardware::GpuSpec& gpu, Precision requested) {
  if (batch < 1) return Diagnostic{{}, "batch", "must be at least 1, got " + std::to_string(batch), ""};
  auto path = path_for(gpu, requested);
  if (!path) return path.errors();
  const Work w = network_work(n, batch, gpu, *path, true);
  CnnStep s;
  s.gpu_time = Seconds(w.gemm + w.ew_fwd);
  s.host_time = Seconds(w.kernels_fwd * kCnnHostTimePerKernel);
  s.time = Seconds(std::max(s.gpu_time.value(), s.host_time.value()));
  s.images_per_second = batch / s.time.value();
  s.math = path->math;
  s.note = path->note;
  return s;
}

}  // namespace capsim::models
