// Which precision a GPU actually trains in when the requested one has no hardware path,
// as PyTorch/JAX users end up doing it: bf16 on a Volta or Turing GPU (tensor cores, no
// bf16) runs as fp16 mixed precision with loss scaling (torch.autocast(dtype=float16) +
// GradScaler); bf16 or fp16 on a GPU without tensor cores (Pascal, Kepler) runs in fp32;
// tf32 on a GPU without it runs as plain fp32. Pure and thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "capsim/hardware/catalog.hpp"

namespace capsim::hardware {

struct PrecisionChoice {
  std::string precision;  // the precision the GPU trains in: "bf16", "fp16", "fp32", ...
  std::string reason;     // empty when it is the requested one; else why it fell back
  bool fell_back() const { return !reason.empty(); }
};

// The requested precision when the GPU has a dense peak for it, else the fallback above.
// A requested precision with no fallback (fp8, int8 on a GPU without it) is returned as is;
// the performance model then reports that the GPU has no peak for it.
PrecisionChoice training_precision(const GpuSpec& gpu, std::string_view requested, std::string_view architecture);

}  // namespace capsim::hardware
