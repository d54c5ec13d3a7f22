#include "capsim/hardware/precision_fallback.hpp"

namespace capsim::hardware {
namespace {

bool has(const GpuSpec& gpu, std::string_view precision) { return gpu.peak_dense.contains(precision); }

// Tensor cores with fp16 but no bf16: Volta (2017) and Turing (2018). bf16 arrived with Ampere.
bool fp16_tensor_without_bf16(std::string_view architecture) {
  return architecture == "volta" || architecture == "turing";
}

}  // namespace

PrecisionChoice training_precision(const GpuSpec& gpu, std::string_view requested, std::string_view architecture) {
  const std::string name(gpu.name.empty() ? gpu.id : gpu.name);
  if (has(gpu, requested)) return {std::string(requested), ""};
  if (requested == "tf32" && has(gpu, "fp32"))
    return {"fp32", name + " has no tf32 tensor math: fp32 (frameworks fall back to plain fp32 matmuls)"};
  if (requested == "bf16" || requested == "fp16") {
    if (requested == "bf16" && fp16_tensor_without_bf16(architecture) && has(gpu, "fp16"))
      return {"fp16", name + " (" + std::string(architecture) +
                          ") has no bf16: fp16 mixed precision with loss scaling, as torch.autocast(float16) + "
                          "GradScaler runs it"};
    if (has(gpu, "fp32"))
      return {"fp32", name + " (" + std::string(architecture) + ") has no " + std::string(requested) +
                          " tensor path: fp32 training, as frameworks fall back on GPUs without tensor cores"};
  }
  return {std::string(requested), ""};
}

}  // namespace capsim::hardware
