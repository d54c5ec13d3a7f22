// How a training job is laid out over GPUs, and the training options that change memory
// and time. Shared by the memory rules, the performance model and the sizing search.
#pragma once

#include <string_view>

#include "capsim/models/workload.hpp"

namespace capsim::models {

enum class Recompute { none, selective, full };  // Korthikanti et al. 2022
std::string_view recompute_name(Recompute r);

enum class FineTuning { full, lora, qlora };

struct Parallelism {
  int tensor = 1;            // t: tensor-parallel degree (inside a node)
  int pipeline = 1;          // p: pipeline stages
  int data = 1;              // d: data-parallel replicas
  bool sequence_parallel = false;  // Megatron sequence parallelism (with t > 1)
  int interleave = 1;        // virtual pipeline stages per GPU (interleaved 1F1B when > 1)
  int micro_batch = 1;       // b: sequences per micro-batch
  int global_batch = 1;      // B: sequences per optimizer step (B = b * d * microbatches)
  int zero_stage = 0;        // 0-3 (ZeRO-DP, Rajbhandari et al. 2020)
  Recompute recompute = Recompute::none;

  int gpus() const { return tensor * pipeline * data; }
  int microbatches() const { return global_batch / (micro_batch * data); }
};

struct TrainingOptions {
  Precision compute = Precision::bf16;     // precision of matrix math and weights copy
  bool mixed_precision = true;             // fp32 master weights + Adam states (16 B/param)
  FineTuning fine_tuning = FineTuning::full;
  int lora_rank = 16;                      // LoRA/QLoRA adapter rank
  double overhead_fraction = 0.10;         // framework + fragmentation, stated and adjustable
};

}  // namespace capsim::models
