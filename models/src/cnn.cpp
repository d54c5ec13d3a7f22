// Convolutional networks from their layers (cnn.hpp).
#include "capsim/models/cnn.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include "capsim/models/performance.hpp"

namespace capsim::models {
namespace {

// ResNet bottleneck stages (He et al., "Deep Residual Learning", CVPR 2016, Table 1; v1.5:
// the stride on the 3x3 convolution). widths: bottleneck width per stage; ResNeXt 32x4d
// (Xie et al. 2017, Table 1) doubles the width and groups the 3x3 convolution by 32.
CnnNetwork resnet(std::string name, std::array<int, 4> blocks, int width_factor, int groups, std::string source,
                  int se_reduction = 0) {
  CnnNetwork n;
  n.name = std::move(name);
  n.source = std::move(source);
  n.convs.push_back({3, 64, 7, 112, 1, true, true, false, 2});  // stem, then 3x3 max pool to 56
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
      const int stride = (b == 0 && s > 0) ? 2 : 1;  // v1.5: the 3x3 and the shortcut downsample
      n.convs.push_back({in, mid, 1, in_size, 1, true, true, false, 1});
      n.convs.push_back({mid, mid, 3, size, groups, true, true, false, stride});
      n.convs.push_back({mid, out, 1, size, 1, true, false, true, 1, se_reduction > 0 ? out / se_reduction : 0});
      if (b == 0) n.convs.push_back({in, out, 1, size, 1, true, false, false, stride});  // projection shortcut
      in = out;
    }
  }
  n.fully_connected = {{2048, 1000}};
  n.pools = {{64, 112, 56, true}, {2048, 7, 1, false}};  // the stem's 3x3 max pool, the global average pool
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
      ConvLayer conv{in, c, 3, size, 1, false, true, false, 1};
      conv.bias = true;
      n.convs.push_back(conv);
      in = c;
    }
    n.pools.push_back({c, size, size / 2, true});  // 2x2 max pool, stride 2
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
        resnet("se-resnext101-32x4d", {3, 4, 23, 3}, 2, 32,
               "Hu et al., Squeeze-and-Excitation Networks, CVPR 2018, Table 1 (SE-ResNeXt-50 (32x4d) pattern, "
               "reduction ratio 16) on ResNeXt-101 32x4d, https://arxiv.org/abs/1709.01507",
               16),
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
  // A calibration profile's GEMM curve for this precision (peak then holds its ceiling):
  // efficiency ceiling 1 and the fitted half-saturation dimension, in place of the kernels'.
  bool measured = false;
  double measured_half = 0;
};

// Measured beats datasheet: where the GPU's calibration profile has a GEMM curve for the
// path's precision, the curve replaces peak x ceiling and the half-saturation dimension
// (the transformer model does the same in device_of, performance.cpp).
Path with_measured(Path p, const hardware::GpuSpec& gpu) {
  if (!gpu.measured) return p;
  const auto curve = gpu.measured->gemm_curve.find(precision_name(p.math));
  if (curve == gpu.measured->gemm_curve.end() || !(curve->second.ceiling.value() > 0)) return p;
  p.peak = curve->second.ceiling.value();
  p.measured = true;
  p.measured_half = curve->second.half_saturation_dim;
  return p;
}

// SM-clocks per second: SMs x boost clock from the catalog, else the 16-bit peak over the
// generation's FLOPs per clock per SM (tensor_rate_per_sm, performance.hpp).
double sm_clocks_per_second(const hardware::GpuSpec& gpu) {
  if (gpu.sm_count > 0 && gpu.boost_clock_hz > 0) return gpu.sm_count * gpu.boost_clock_hz;
  const auto peak = gpu.peak("fp16");
  return peak ? peak->value() / (tensor_rate_per_sm(gpu) * kReferenceFlopsPerClockPerSm) : 0.0;
}

bool ampere_or_newer(const hardware::GpuSpec& gpu) {
  return gpu.architecture != "kepler" && gpu.architecture != "maxwell" && gpu.architecture != "pascal" &&
         gpu.architecture != "volta" && gpu.architecture != "turing";
}

double peak_of(const hardware::GpuSpec& gpu, const char* p) { return gpu.peak(p) ? gpu.peak(p)->value() : 0.0; }

// The fp32 rate CUDA-core convolution kernels can reach. GA10x (Ampere other than GA100)
// and Ada doubled the SM's fp32 lanes to 128 by letting the INT32 datapath also run fp32
// (NVIDIA GA102 and Ada architecture whitepapers), so the datasheet's fp32 peak counts
// lanes that the kernels' own integer work (addresses, loop counters) also needs; Volta,
// Turing, GA100 and Hopper have separate INT32 units. Such an SM issues 256 fp32 FLOPs per
// clock where GA100's issues 128: with the catalog's SM count and clock that identifies it.
double cuda_core_fp32_peak(const hardware::GpuSpec& gpu) {
  const double peak = peak_of(gpu, "fp32");
  const auto per_sm = gpu.flops_per_clock_per_sm("fp32");
  const bool shared_int_datapath =
      (gpu.architecture == "ampere" || gpu.architecture == "ada-lovelace") && per_sm && *per_sm > 192;
  return shared_int_datapath ? peak * kSharedDatapathFp32Share() : peak;
}

// The precision a framework (or an engine running `tf32`) runs the convolutions at.
Result<Path> path_for(const hardware::GpuSpec& gpu, Precision requested, bool tf32_allowed = true,
                      const std::string& who = "PyTorch") {
  Path p;
  if (requested == Precision::fp32 || requested == Precision::tf32) {
    if (ampere_or_newer(gpu) && tf32_allowed && peak_of(gpu, "tf32") > 0) {
      p = {Precision::tf32, peak_of(gpu, "tf32"), 4,
           requested == Precision::fp32 ? "fp32 runs convolutions in TF32 on " + gpu.architecture + " (" + who + " default)"
                                        : ""};
    } else {
      p = {Precision::fp32, cuda_core_fp32_peak(gpu), 4, "", false};
    }
  } else {
    const char* want = requested == Precision::bf16 ? "bf16" : "fp16";
    if (has_16bit_tensor_cores(gpu) && peak_of(gpu, want) > 0) {
      p = {requested == Precision::bf16 ? Precision::bf16 : Precision::fp16, peak_of(gpu, want), 2, ""};
    } else {
      p = {Precision::fp32, peak_of(gpu, "fp32"), 2,
           "mixed precision on " + gpu.architecture + " (no 16-bit tensor cores): fp32 math, 16-bit activations", false};
    }
  }
  if (!(p.peak > 0))
    return Diagnostic{{}, "gpu", "GPU '" + gpu.id + "' has no dense " + std::string(precision_name(p.math)) + " peak", ""};
  return p;
}

// The precision an inference engine runs the convolutions at: int8 on an engine and GPU
// that have it, the framework paths otherwise.
Result<Path> inference_path(const hardware::GpuSpec& gpu, Precision requested, const hardware::EngineSpec& engine) {
  const std::string want(precision_name(requested));
  const std::string who = engine.name.empty() ? engine.id : engine.name;
  if (!engine.runs(want) && !(requested == Precision::fp32 && engine.runs("tf32")))
    return Diagnostic{{}, "precision", "engine '" + engine.id + "' does not run " + want + " convolutions", ""};
  if (requested == Precision::int8) {
    if (!(peak_of(gpu, "int8") > 0))
      return Diagnostic{{}, "precision", "GPU '" + gpu.id + "' has no dense int8 peak in the catalog", ""};
    return Path{Precision::int8, peak_of(gpu, "int8"), 1, "", true};
  }
  if (requested != Precision::fp32 && requested != Precision::tf32 && requested != Precision::fp16 &&
      requested != Precision::bf16)
    return Diagnostic{{}, "precision", "no " + want + " convolution path (fp32, tf32, fp16, bf16, int8)", ""};
  return path_for(gpu, requested, engine.runs("tf32"), who);
}

// The kernels' GEMM efficiency: the GPU generation's ceiling (or the engine's own, for an
// engine whose kernels reach more), and the half-saturation dimension of its tiles at the
// path's precision, which grows with the GPU's tensor FLOPs per clock per SM
// (gemm_half_saturation_dim, performance.hpp).
struct Kernels {
  double ceiling = kGemmMaxEfficiency();
  double half_saturation = kGemmHalfSaturationDim();
};

Kernels kernels_for(const hardware::GpuSpec& gpu, const hardware::EngineSpec* engine, Precision math) {
  Kernels k{generation_gemm_ceiling(gpu), gemm_half_saturation_dim(gpu, math)};
  if (engine != nullptr && engine->gemm_ceiling > 0) k.ceiling = engine->gemm_ceiling;
  k.ceiling = capped_gemm_ceiling(gpu, precision_name(math), k.ceiling);
  if (engine != nullptr && engine->gemm_half_saturation > 0) k.half_saturation = engine->gemm_half_saturation;
  return k;
}

// CUDA-core (SIMT) fp32 kernels do a quarter of a tensor-core tile's math per operand
// byte and reach their peak on smaller tiles: the half-saturation dimension shrinks by the
// same factor.
double shape_factor(double m, double n, double k, bool tensor_cores, double half) {
  const double d = tensor_cores ? half : half / 4;
  return (m / (m + d)) * (n / (n + d)) * (k / (k + d));
}

// One GEMM of an implicit convolution: FLOPs under the roofline, bytes the tensors it
// actually reads and writes (element counts; the im2col view is never materialised).
double gemm_time(double m, double n, double k, double groups, double elements_moved, const Path& path,
                 const Kernels& kern, double bandwidth, double flop_divisor) {
  const double flops = 2 * m * n * k * groups;
  const double efficiency = path.measured
                                ? shape_factor(m, n, k, true, path.measured_half)
                                : kern.ceiling * shape_factor(m, n, k, path.tensor_cores, kern.half_saturation);
  const double compute = flops / (efficiency * path.peak);
  return std::max(compute / flop_divisor, elements_moved * path.act_bytes / bandwidth);
}

struct ConvCost {
  double fwd = 0, bwd = 0;              // GEMMs
  double transpose_fwd = 0, transpose_bwd = 0;
  bool simt = false;                    // the autotuner kept the fp32 CUDA-core algorithm
};

// Kernels of one squeeze-and-excitation block in an eager framework: pool, the two fully
// connected layers, their activation, the sigmoid, the channel-wise scale.
constexpr int kSqueezeExcitationKernels = 6;

// Bytes an inference kernel moves through DRAM for activations whose working set (what it
// reads and writes) is `working_set`: none when the working set fits in the L2 cache (the
// producer's output is still there when the consumer reads it, and the engine's reused
// buffers are overwritten there), all of it otherwise (a stream larger than the cache
// evicts its own head before the consumer reaches it). `l2` is 0 for a training step,
// whose activations are kept for backward and go to DRAM.
double dram_share(double working_set, double l2) { return l2 > 0 && working_set <= l2 ? 0.0 : 1.0; }

// One convolution on one path: forward GEMM, data and weight gradients, NCHW transposes.
// l2: the GPU's L2 cache in bytes for an inference forward, 0 for a training step.
ConvCost conv_cost(const ConvLayer& c, double batch, const Path& path, const Kernels& kern, double bandwidth,
                   double sm_clocks, bool channels_last, double l2) {
  const double pixels = static_cast<double>(c.out_size) * c.out_size;
  const double m = batch * pixels;
  const double g = c.groups;
  const double nn = c.out_channels / g;
  const double k = c.in_channels / g * c.kernel * c.kernel;
  const double in_side = static_cast<double>(c.out_size) * c.stride;
  const double in_elems = batch * c.in_channels * in_side * in_side;
  const double out_elems = m * c.out_channels;
  const double weights = static_cast<double>(c.in_channels) / c.groups * c.out_channels * c.kernel * c.kernel;
  // cuDNN runs 3x3 stride-1 fp32 convolutions with Winograd F(2x2, 3x3): 16 multiplies per
  // 2x2 output tile instead of 36, 2.25x fewer (Lavin & Gray, "Fast Algorithms for
  // Convolutional Neural Networks", CVPR 2016); tensor-core paths use implicit GEMM.
  const double winograd = (!path.tensor_cores && c.kernel == 3 && c.groups == 1 && c.stride == 1) ? 2.25 : 1.0;
  const double activations = (in_elems + out_elems) * dram_share((in_elems + out_elems) * path.act_bytes, l2);
  ConvCost cost;
  cost.fwd = gemm_time(m, nn, k, g, activations + weights, path, kern, bandwidth, winograd);
  cost.bwd = gemm_time(m, k, nn, g, out_elems + weights + in_elems, path, kern, bandwidth, winograd) +  // data gradient
             gemm_time(k, nn, m, g, in_elems + out_elems + weights, path, kern, bandwidth, winograd);   // weight gradient
  if (path.tensor_cores && !channels_last) {
    // NCHW -> NHWC of the input and back for the output (each element read and written),
    // forward and twice in backward: HBM traffic or the SMs' shuffle, whichever is longer.
    const double elements = in_elems + out_elems;
    const double shuffle = sm_clocks > 0 ? elements / (kTransposeElementsPerSmClock() * sm_clocks) : 0.0;
    const double dram = dram_share(2 * elements * path.act_bytes, l2);  // each tensor and its transpose
    const double once = std::max(2 * elements * path.act_bytes * dram / bandwidth, shuffle);
    cost.transpose_fwd = once;
    cost.transpose_bwd = 2 * once;
  }
  return cost;
}

struct Work {
  double gemm = 0;       // seconds of GEMM on the GPU, forward
  double gemm_bwd = 0;   // data + weight gradient
  double ew_fwd = 0;     // element-wise, forward
  double ew_bwd = 0;
  double kernels_fwd = 0, kernels_bwd = 0;
  int simt_layers = 0;   // convolutions the autotuner ran on fp32 CUDA cores instead of TF32
};

// What an engine removes from the framework's forward (nullptr: a training step).
struct ForwardOptions {
  bool training = true;
  bool folds_batch_norm = false;
  bool fuses_epilogue = false;
  bool casts = false;  // one cast kernel per weighted layer (eager mixed precision)
};

Work network_work(const CnnNetwork& n, double batch, const hardware::GpuSpec& gpu, const Path& path,
                  bool channels_last, const Kernels& kern, const ForwardOptions& fo) {
  const double bw = streaming_bandwidth(gpu);
  const double sm_clocks = sm_clocks_per_second(gpu);
  const double l2 = fo.training ? 0.0 : gpu.l2_cache.value();
  // The autotuner's alternative for TF32 convolutions: fp32 on the CUDA cores (Winograd
  // for 3x3), 4-byte activations either way.
  std::optional<Path> simt;
  if (path.math == Precision::tf32 && peak_of(gpu, "fp32") > 0)
    simt = with_measured(Path{Precision::fp32, cuda_core_fp32_peak(gpu), 4, "", false}, gpu);
  Work w;
  for (const auto& c : n.convs) {
    ConvCost cost = conv_cost(c, batch, path, kern, bw, sm_clocks, channels_last, l2);
    if (simt) {
      const ConvCost alt = conv_cost(c, batch, *simt, kern, bw, sm_clocks, channels_last, l2);
      const auto total = [&](const ConvCost& x) {
        return x.fwd + x.transpose_fwd + (fo.training ? x.bwd + x.transpose_bwd : 0.0);
      };
      if (total(alt) < total(cost)) {
        cost = alt;
        cost.simt = true;
        ++w.simt_layers;
      }
    }
    w.gemm += cost.fwd;
    w.gemm_bwd += cost.bwd;
    w.ew_fwd += cost.transpose_fwd;
    w.ew_bwd += cost.transpose_bwd;
    const double elems = batch * static_cast<double>(c.out_size) * c.out_size * c.out_channels;
    if (fo.training) {
      // Element-wise passes over the output (bytes per element x passes): batch norm reads
      // the output twice (statistics, normalize) and writes once; ReLU reads and writes; the
      // residual add reads two and writes one. Backward: batch norm 5, ReLU 3, add 3.
      // A bias reads and writes; its gradient reads the output gradient once.
      const double fwd_passes =
          (c.batch_norm ? 3 : 0) + (c.bias ? 2 : 0) + (c.relu ? 2 : 0) + (c.residual_add ? 3 : 0);
      const double bwd_passes =
          (c.batch_norm ? 5 : 0) + (c.bias ? 1 : 0) + (c.relu ? 3 : 0) + (c.residual_add ? 3 : 0);
      const int passes = (c.batch_norm ? 1 : 0) + (c.bias ? 1 : 0) + (c.relu ? 1 : 0) + (c.residual_add ? 1 : 0);
      w.ew_fwd += elems * fwd_passes * path.act_bytes / bw;
      w.ew_bwd += elems * bwd_passes * path.act_bytes / bw;
      w.kernels_fwd += 1 + passes;
      w.kernels_bwd += 2 + passes;
      if (c.se_channels > 0) {
        // Squeeze-and-excitation: the pool reads the output, the scale reads and writes it;
        // backward reads the output and its gradient for both and writes the gradient.
        w.ew_fwd += elems * 3 * path.act_bytes / bw;
        w.ew_bwd += elems * 5 * path.act_bytes / bw;
        w.kernels_fwd += kSqueezeExcitationKernels;
        w.kernels_bwd += kSqueezeExcitationKernels + 1;
      }
    } else {
      // Inference: batch norm in eval mode normalizes with its running statistics (one read,
      // one write) unless folded into the weights; a bias and ReLU read and write; the add
      // reads two and writes one. Fused into the epilogue, the bias and ReLU are free and the
      // add reads the residual.
      const bool bn = c.batch_norm && !fo.folds_batch_norm;
      const bool bias = c.bias && !fo.fuses_epilogue;
      const bool relu = c.relu && !fo.fuses_epilogue;
      const bool add = c.residual_add && !fo.fuses_epilogue;
      // Passes next to their producer (batch norm, a bias, ReLU, the add's own input and output) work
      // on a tensor pair of the output's size, in L2 when it fits; the residual was written a
      // whole block earlier, with the block's other tensors in between, and comes from DRAM.
      const double near = (bn ? 2 : 0) + (bias ? 2 : 0) + (relu ? 2 : 0) + (add ? 2 : 0);
      const double residual = c.residual_add ? 1 : 0;
      const double dram = dram_share(2 * elems * path.act_bytes, l2);
      w.ew_fwd += elems * (near * dram + residual) * path.act_bytes / bw;
      w.kernels_fwd += 1 + (bn ? 1 : 0) + (bias ? 1 : 0) + (relu ? 1 : 0) + (add ? 1 : 0) + (fo.casts ? 1 : 0);
      if (c.se_channels > 0) {
        w.ew_fwd += elems * 3 * path.act_bytes * dram / bw;  // pool reads; the scale reads and writes
        w.kernels_fwd += kSqueezeExcitationKernels;
      }
    }
  }
  for (const auto& [in, out] : n.fully_connected) {
    const double b = batch, i = in, o = out;
    w.gemm += gemm_time(b, o, i, 1, b * i + i * o + b * o, path, kern, bw, 1.0);
    if (fo.training) {
      w.gemm_bwd += gemm_time(b, i, o, 1, b * o + i * o + b * i, path, kern, bw, 1.0) +
                    gemm_time(i, o, b, 1, b * i + b * o + i * o, path, kern, bw, 1.0);
      w.kernels_fwd += 2;
      w.kernels_bwd += 3;
    } else {
      w.kernels_fwd += (fo.fuses_epilogue ? 1 : 2) + (fo.casts ? 1 : 0);
    }
  }
  if (fo.casts) w.ew_fwd += cnn_parameter_count(n) * (4 + 2) / bw;  // fp32 weights read, 16-bit written
  for (const auto& p : n.pools) {
    const double in = batch * p.channels * static_cast<double>(p.in_size) * p.in_size;
    const double out = batch * p.channels * static_cast<double>(p.out_size) * p.out_size;
    const double dram = fo.training ? 1.0 : dram_share((in + out) * path.act_bytes, l2);
    w.ew_fwd += (in + out) * dram * path.act_bytes / bw;
    w.kernels_fwd += 1;
    if (fo.training) {
      w.ew_bwd += (p.max ? 2 : 1) * (in + out) * path.act_bytes / bw;
      w.kernels_bwd += 1;
    }
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
         (c.batch_norm ? 2.0 * c.out_channels : 0.0) + (c.bias ? static_cast<double>(c.out_channels) : 0.0) +
         (c.se_channels > 0 ? 2.0 * c.out_channels * c.se_channels + c.out_channels + c.se_channels : 0.0);
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

double cnn_activation_elements_per_sample(const CnnNetwork& n) {
  double e = 0;
  for (const auto& c : n.convs) e += static_cast<double>(c.out_size) * c.out_size * c.out_channels;
  return e;
}

Result<CnnStep> cnn_training_step(const CnnNetwork& n, int batch, const hardware::GpuSpec& gpu, Precision requested,
                                  bool channels_last) {
  if (batch < 1) return Diagnostic{{}, "batch", "must be at least 1, got " + std::to_string(batch), ""};
  auto path = path_for(gpu, requested, true, "framework");
  if (!path) return path.errors();
  const Work w = network_work(n, batch, gpu, with_measured(*path, gpu), channels_last,
                              kernels_for(gpu, nullptr, path->math), ForwardOptions{});
  const double bw = streaming_bandwidth(gpu);
  // SGD with momentum: fp32 weight, gradient and momentum read, weight and momentum written.
  const double optimizer = cnn_parameter_count(n) * 20.0 / bw;
  const double kernels = w.kernels_fwd + w.kernels_bwd + 4;
  CnnStep s;
  s.gpu_time = Seconds(w.gemm + w.gemm_bwd + w.ew_fwd + w.ew_bwd + optimizer + kernels * kKernelGpuFloorSeconds());
  s.host_time = Seconds(kernels * kCnnHostTimePerKernel());
  s.time = Seconds(std::max(s.gpu_time.value(), s.host_time.value()));
  s.images_per_second = batch / s.time.value();
  s.math = path->math;
  s.kernels = static_cast<int>(kernels);
  s.note = path->note;
  if (w.simt_layers > 0)
    s.note += std::string(s.note.empty() ? "" : "; ") + std::to_string(w.simt_layers) +
              (w.simt_layers == 1 ? " convolution" : " convolutions") + " faster in fp32 with Winograd (autotuner)";
  return s;
}

Result<CnnStep> cnn_inference(const CnnNetwork& n, int batch, const hardware::GpuSpec& gpu, Precision requested,
                              const hardware::EngineSpec& engine) {
  if (batch < 1) return Diagnostic{{}, "batch", "must be at least 1, got " + std::to_string(batch), ""};
  auto path = inference_path(gpu, requested, engine);
  if (!path) return path.errors();
  const bool sixteen_bit = requested == Precision::fp16 || requested == Precision::bf16;
  ForwardOptions fo{.training = false,
                    .folds_batch_norm = engine.folds_batch_norm,
                    .fuses_epilogue = engine.fuses_epilogue,
                    .casts = engine.casts_per_layer && sixteen_bit};
  const Work w =
      network_work(n, batch, gpu, with_measured(*path, gpu), engine.channels_last(sixteen_bit),
                   kernels_for(gpu, &engine, path->math), fo);
  CnnStep s;
  s.gpu_time = Seconds(w.gemm + w.ew_fwd + w.kernels_fwd * kKernelGpuFloorSeconds());
  const double launches = w.kernels_fwd * engine.host_time_per_kernel.value();
  const double body = engine.host_overlaps_gpu ? std::max(s.gpu_time.value(), launches) : s.gpu_time.value() + launches;
  s.host_time = Seconds(launches + engine.host_time_per_call.value());
  s.time = Seconds(engine.host_time_per_call.value() + body);
  s.images_per_second = batch / s.time.value();
  s.math = path->math;
  s.kernels = static_cast<int>(w.kernels_fwd);
  s.note = path->note;
  if (w.simt_layers > 0)
    s.note += std::string(s.note.empty() ? "" : "; ") + std::to_string(w.simt_layers) +
              (w.simt_layers == 1 ? " convolution" : " convolutions") + " faster in fp32 with Winograd (autotuner)";
  return s;
}

}  // namespace capsim::models
