#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <string>

#include "capsim/models/memory.hpp"

using namespace capsim;
using namespace capsim::models;

namespace {

const TransformerShape& preset(const char* name) {
  const TransformerPreset* p = find_transformer_preset(name);
  REQUIRE_MESSAGE(p != nullptr, "missing preset " << name);
  return p->shape;
}

double gb(Bytes b) { return b.value() / 1e9; }

// Korthikanti et al.'s formulas are for eager attention (the s x s scores kept); the
// activation tests below check them as published.
TrainingOptions no_overhead() {
  TrainingOptions opt;
  opt.overhead_fraction = 0;
  opt.attention = Attention::eager;
  return opt;
}

}  // namespace

// ---- the validation file, read as data -----------------------------------------------------

TEST_CASE("memory_rules.yaml: simple rule cases") {
  const YAML::Node doc = YAML::LoadFile(CAPSIM_TEST_DATA_DIR "/validation/memory_rules.yaml");
  const YAML::Node cases = doc["simple_rule"]["cases"];
  REQUIRE(cases.size() == 4);
  for (const auto& c : cases) {
    const double params = c["params"].as<double>();
    const std::string mode = c["mode"].as<std::string>();
    const double expected = c["total_gb"].as<double>();
    INFO("params " << params << ", mode " << mode << ", expected " << expected << " GB");
    REQUIRE((mode == "inference_fp32" || mode == "training"));
    const MemoryBreakdown m =
        mode == "training" ? simple_rule(params, SimpleMode::training)
                           : simple_rule(params, SimpleMode::inference, Precision::fp32);
    CHECK(gb(m.total()) == doctest::Approx(expected).epsilon(1e-12));
    CHECK(m.rule == "simple");
  }
  const YAML::Node per_param = doc["simple_rule"]["bytes_per_param"];
  CHECK(simple_rule(1, SimpleMode::inference).total().value() ==
        per_param["inference_fp32"].as<double>());
  CHECK(simple_rule(1, SimpleMode::training).total().value() == per_param["training"].as<double>());
}

TEST_CASE("memory_rules.yaml: ZeRO paper Figure 1") {
  const YAML::Node doc = YAML::LoadFile(CAPSIM_TEST_DATA_DIR "/validation/memory_rules.yaml");
  const YAML::Node zero = doc["zero_paper_example"];
  const double params = zero["params"].as<double>();
  const int nd = zero["data_parallel"].as<int>();
  const double tolerance = zero["tolerance_gb"].as<double>();
  REQUIRE(zero["cases"].size() == 4);
  for (const auto& c : zero["cases"]) {
    const int stage = c["zero_stage"].as<int>();
    const double expected = c["per_gpu_gb"].as<double>();
    const MemoryBreakdown m = zero_model_states(params, nd, stage);
    INFO("stage " << stage << ": got " << gb(m.total()) << " GB, paper " << expected << " GB");
    CHECK(std::abs(gb(m.total()) - expected) <= tolerance);
    CHECK(m.activations.value() == 0);
  }
}

// ---- simple rule ----------------------------------------------------------------------------

TEST_CASE("simple rule: inference bytes per parameter by precision") {
  struct Case {
    Precision p;
    double bytes_per_param;
  };
  const Case cases[] = {{Precision::fp32, 4}, {Precision::fp16, 2}, {Precision::bf16, 2},
                        {Precision::int8, 1}, {Precision::fp8, 1},  {Precision::int4, 0.5}};
  for (const auto& c : cases) {
    CAPTURE(precision_name(c.p));
    CHECK(simple_rule(7e9, SimpleMode::inference, c.p).total().value() ==
          doctest::Approx(7e9 * c.bytes_per_param));
  }
}

TEST_CASE("simple rule: training splits 24 B/param into 4 + 8 + 4 + 8 and ignores precision") {
  const MemoryBreakdown m = simple_rule(1e9, SimpleMode::training, Precision::int4);
  CHECK(gb(m.weights) == 4);
  CHECK(gb(m.optimizer) == 8);
  CHECK(gb(m.gradients) == 4);
  CHECK(gb(m.activations) == 8);
  CHECK(m.formulas.size() == 4);
  CHECK(m.formulas[0] == "weights = 4 B/param (fp32) x 1.00e9 params = 4 GB");
}

// ---- ZeRO -----------------------------------------------------------------------------------

TEST_CASE("ZeRO stages shard optimizer, then gradients, then weights") {
  // Ψ = 1e9, Nd = 4, K = 12: stage 0: 2 + 2 + 12 = 16 GB; 1: 2 + 2 + 3 = 7;
  // 2: 2 + 0.5 + 3 = 5.5; 3: 0.5 + 0.5 + 3 = 4.
  const double expected[] = {16, 7, 5.5, 4};
  for (int stage = 0; stage <= 3; ++stage) {
    CAPTURE(stage);
    CHECK(gb(zero_model_states(1e9, 4, stage).total()) == doctest::Approx(expected[stage]));
  }
  // K = 8 (fp32 Adam without a master copy): stage 0 = 2 + 2 + 8 = 12 GB.
  CHECK(gb(zero_model_states(1e9, 4, 0, 8).total()) == doctest::Approx(12));
}

// ---- training: model states -----------------------------------------------------------------

TEST_CASE("training: mixed-precision model states are 16 B/param, fp32 16 B/param as 4+4+8") {
  const TransformerShape& s = preset("llama-2-7b");
  const double params = parameter_count(s);  // 6,738,415,616
  TrainingOptions opt = no_overhead();
  MemoryBreakdown m = training_memory_per_gpu(s, Parallelism{}, opt);
  CHECK(m.weights.value() == doctest::Approx(2 * params));     // bf16
  CHECK(m.gradients.value() == doctest::Approx(2 * params));   // bf16
  CHECK(m.optimizer.value() == doctest::Approx(12 * params));  // fp32 master + m + v
  CHECK(m.rule == "detailed");
  CHECK(m.formulas[0] ==
        "weights = 2 B/param (bf16) x 6.74e9 params / (t=1 x p=1) = 13.48 GB");

  opt.compute = Precision::fp32;
  opt.mixed_precision = false;
  m = training_memory_per_gpu(s, Parallelism{}, opt);
  CHECK(m.weights.value() == doctest::Approx(4 * params));
  CHECK(m.gradients.value() == doctest::Approx(4 * params));
  CHECK(m.optimizer.value() == doctest::Approx(8 * params));
}

TEST_CASE("training: FP8 keeps 16-bit weights and gradients beside the FP8 copies it casts") {
  // Transformer Engine holds "both higher precision and FP8 copies" of its parameters; the
  // copies cast once per step (and their transposes) stay until the optimizer step.
  const TransformerShape& s = preset("llama-2-7b");
  const double params = parameter_count(s);
  TrainingOptions opt = no_overhead();
  opt.compute = Precision::fp8;
  MemoryBreakdown m = training_memory_per_gpu(s, Parallelism{}, opt);
  CHECK(m.weights.value() == doctest::Approx(4 * params));     // bf16 2 + fp8 copy and transpose 2
  CHECK(m.gradients.value() == doctest::Approx(2 * params));   // bf16
  CHECK(m.optimizer.value() == doctest::Approx(12 * params));  // fp32 master + m + v
  CHECK(m.formulas[0] ==
        "weights = 4 B/param (bf16 2 + fp8 copy and transpose 2, kept for the step) x 6.74e9 params / (t=1 x p=1) "
        "= 26.95 GB");
  CHECK(m.formulas[1] == "gradients = 2 B/param (bf16) x 6.74e9 params / (t=1 x p=1) = 13.48 GB");
  TrainingOptions bf16 = no_overhead();
  CHECK(training_memory_total_per_gpu(s, Parallelism{}, opt).value() >
        training_memory_total_per_gpu(s, Parallelism{}, bf16).value());

  // Cast again for every micro-batch (torchao's float8 linears): one layer's copy at a time.
  opt.fp8_weights_cast_once_per_step = false;
  m = training_memory_per_gpu(s, Parallelism{}, opt);
  CHECK(m.weights.value() == doctest::Approx(2 * params));
  CHECK(m.formulas[0] == "weights = 2 B/param (bf16; the fp8 copies are cast per micro-batch) x 6.74e9 params / "
                         "(t=1 x p=1) = 13.48 GB");
  CHECK(training_memory_total_per_gpu(s, Parallelism{}, opt).value() ==
        doctest::Approx(training_memory_total_per_gpu(s, Parallelism{}, bf16).value()));
}

TEST_CASE("training: tensor and pipeline parallelism divide the model states") {
  const TransformerShape& s = preset("gpt3-175b");
  const TrainingOptions opt = no_overhead();
  const MemoryBreakdown one = training_memory_per_gpu(s, Parallelism{}, opt);
  Parallelism par;
  par.tensor = 8;
  par.pipeline = 4;
  const MemoryBreakdown split = training_memory_per_gpu(s, par, opt);
  CHECK(split.weights.value() == doctest::Approx(one.weights.value() / 32));
  CHECK(split.gradients.value() == doctest::Approx(one.gradients.value() / 32));
  CHECK(split.optimizer.value() == doctest::Approx(one.optimizer.value() / 32));
}

TEST_CASE("training: ZeRO stage in the parallel layout shards over data parallel") {
  const TransformerShape& s = preset("llama-2-13b");
  const TrainingOptions opt = no_overhead();
  Parallelism par;
  par.data = 8;
  par.global_batch = 8;
  const MemoryBreakdown z0 = training_memory_per_gpu(s, par, opt);
  par.zero_stage = 1;
  const MemoryBreakdown z1 = training_memory_per_gpu(s, par, opt);
  par.zero_stage = 3;
  const MemoryBreakdown z3 = training_memory_per_gpu(s, par, opt);
  CHECK(z1.optimizer.value() == doctest::Approx(z0.optimizer.value() / 8));
  CHECK(z1.weights.value() == z0.weights.value());
  CHECK(z3.weights.value() == doctest::Approx(z0.weights.value() / 8));
  CHECK(z3.gradients.value() == doctest::Approx(z0.gradients.value() / 8));
  CHECK(z3.activations.value() == z0.activations.value());  // ZeRO does not touch activations
}

// ---- training: activations (Korthikanti et al. 2022) ----------------------------------------

TEST_CASE("activations: GPT-3 175B, t=8, sequence parallel + selective recompute") {
  // Table 2, last row: sbh x 34/t per layer. s = 2048, b = 1, h = 12288, t = 8:
  // sbh/t = 2048 x 12288 / 8 = 3,145,728; x 34 = 106,954,752 B per layer; x 96 layers
  // (p = 1) = 10,267,656,192. Plus Sec. 4.4 with p = 1: embedding dropout sbh/t = 3,145,728,
  // final norm + output inputs 4 sbh/t = 12,582,912, fp32 logits 4 s b v / t =
  // 4 x 2048 x 50257 / 8 = 51,463,168. Total 10,334,848,000 B.
  const TransformerShape& s = preset("gpt3-175b");
  Parallelism par;
  par.tensor = 8;
  par.sequence_parallel = true;
  par.recompute = Recompute::selective;
  const MemoryBreakdown m = training_memory_per_gpu(s, par, no_overhead());
  CHECK(m.activations.value() == doctest::Approx(10'334'848'000.0));
}

TEST_CASE("activations: tensor parallel without sequence parallel, no recompute") {
  // sbh(10 + 24/t + 5as/(ht)) with a = 96, s = 2048, h = 12288, t = 8:
  // 5 x 96 x 2048 / (12288 x 8) = 10; 10 + 3 + 10 = 23 sbh = 23 x 25,165,824 =
  // 578,813,952 B per layer, 5.4x the 106,954,752 of SP + selective (the paper's "5x").
  const TransformerShape& s = preset("gpt3-175b");
  Parallelism par;
  par.tensor = 8;
  par.pipeline = 96;  // one layer per stage, so activations = in-flight layers + dropout mask
  par.global_batch = 96;
  const MemoryBreakdown m = training_memory_per_gpu(s, par, no_overhead());
  // 1F1B: 96 microbatches in flight x 1 layer; embedding dropout mask sbh x 96 (no SP).
  CHECK(m.activations.value() == doctest::Approx(96 * 578'813'952.0 + 96 * 25'165'824.0));
}

TEST_CASE("activations: recompute reduces them, full recompute keeps 2sbh per layer") {
  const TransformerShape& s = preset("llama-2-7b");
  Parallelism par;
  par.pipeline = 2;  // drops the output-layer terms; leaves sbh per microbatch in flight
  par.global_batch = 2;
  const TrainingOptions opt = no_overhead();
  par.recompute = Recompute::none;
  const double none = training_memory_per_gpu(s, par, opt).activations.value();
  par.recompute = Recompute::selective;
  const double selective = training_memory_per_gpu(s, par, opt).activations.value();
  par.recompute = Recompute::full;
  const double full = training_memory_per_gpu(s, par, opt).activations.value();
  CHECK(none > selective);
  CHECK(selective > full);
  // Full: 2sbh x 32 layers' worth (16 layers x 2 microbatches) + dropout sbh x 2;
  // sbh = 4096 x 4096 = 16,777,216 -> (64 + 2) x 16,777,216 = 1,107,296,256.
  CHECK(full == doctest::Approx(66.0 * 16'777'216));
  // Selective, Llama's shape (SwiGLU, no dropout): norms 4 + attention and MLP inputs 4 +
  // Q 2 + K, V 4 + output projection 2 + SwiGLU 6 x 11008/4096 = 32.125 sbh per layer
  // (GPT's 34 has 2 dropout masks and a 4h GeLU MLP) -> (32.125 x 32 + 2) x sbh.
  CHECK(selective == doctest::Approx((32.125 * 32 + 2) * 16'777'216));
  // None adds the eager scores, 2as/h without dropout = 2 x 32 x 4096 / 4096 = 64 sbh.
  CHECK(none == doctest::Approx(((32.125 + 64) * 32 + 2) * 16'777'216));
}

TEST_CASE("activations: interleaved 1F1B holds (1 + (p-1)/(pm)) times more") {
  const TransformerShape& s = preset("gpt3-13b");
  Parallelism par;
  par.pipeline = 4;
  par.global_batch = 16;
  const TrainingOptions opt = no_overhead();
  const double dropout = 4.0 * s.seq_len * s.hidden;  // sbh x 4 microbatches in flight
  const double plain = training_memory_per_gpu(s, par, opt).activations.value() - dropout;
  par.interleave = 2;
  const double interleaved = training_memory_per_gpu(s, par, opt).activations.value() - dropout;
  // 1 + 3/(4 x 2) = 1.375
  CHECK(interleaved / plain == doctest::Approx(1.375));
}

TEST_CASE("activations: context parallelism splits every term over cp, the output layer's logits too") {
  // One stage (p = 1), so the output layer's terms are on this GPU: its input and the fp32
  // logits (4sbv) are per token like the layers', and each rank holds s/cp tokens of them.
  const TransformerShape& s = preset("llama-3.1-8b");
  Parallelism par;
  par.global_batch = 1;
  TrainingOptions opt = no_overhead();
  opt.attention = Attention::flash;  // ring attention runs fused kernels
  for (Recompute rc : {Recompute::none, Recompute::full}) {
    CAPTURE(static_cast<int>(rc));
    par.recompute = rc;
    par.context = 1;
    const double whole = training_memory_per_gpu(s, par, opt).activations.value();
    par.context = 8;
    CHECK(training_memory_per_gpu(s, par, opt).activations.value() == doctest::Approx(whole / 8.0));
  }
}

TEST_CASE("the formulas say ZeRO shards over d x cp and the layers hold s/cp tokens per GPU") {
  const TransformerShape& s = preset("llama-3.1-8b");
  Parallelism par;
  par.global_batch = 1;
  par.context = 8;
  par.zero_stage = 3;
  par.recompute = Recompute::full;
  std::string text;
  for (const auto& f : training_memory_per_gpu(s, par, no_overhead()).formulas) text += f + "\n";
  CHECK(text.find("/ d x cp=8 (ZeRO-3)") != std::string::npos);
  CHECK(text.find("s=8192/cp=1024 per GPU") != std::string::npos);
  par.context = 1;
  par.data = 8;
  par.global_batch = 8;
  text.clear();
  for (const auto& f : training_memory_per_gpu(s, par, no_overhead()).formulas) text += f + "\n";
  CHECK(text.find("/ d=8 (ZeRO-3)") != std::string::npos);
  CHECK(text.find("/cp=") == std::string::npos);
}

TEST_CASE("activations: fewer microbatches than stages are fewer in flight") {
  const TransformerShape& s = preset("gpt3-13b");
  Parallelism par;
  par.pipeline = 8;
  par.global_batch = 2;  // 2 microbatches of 1
  const TrainingOptions opt = no_overhead();
  const double two = training_memory_per_gpu(s, par, opt).activations.value();
  par.global_batch = 64;
  const double eight = training_memory_per_gpu(s, par, opt).activations.value();
  CHECK(eight / two == doctest::Approx(4.0));
}

// ---- LoRA / QLoRA ---------------------------------------------------------------------------

TEST_CASE("LoRA adapter count: r x (d_in + d_out) on q, k, v, o and the MLP") {
  // llama-2-7b, r = 16: attention 4 x 16 x (4096 + 4096) = 524,288; MLP 3 x 16 x
  // (4096 + 11008) = 724,992; x 32 layers = 39,976,960.
  CHECK(lora_adapter_parameter_count(preset("llama-2-7b"), 16) == 39'976'960.0);
  // GQA: k and v project to 8 x 128 = 1024 on llama-2-70b.
  // per layer: 2 x 16 x (8192 + 8192) + 2 x 16 x (8192 + 1024) + 3 x 16 x (8192 + 28672)
  // = 524,288 + 294,912 + 1,769,472 = 2,588,672; x 80 = 207,093,760.
  CHECK(lora_adapter_parameter_count(preset("llama-2-70b"), 16) == 207'093'760.0);
}

TEST_CASE("LoRA is smaller than full fine-tuning, QLoRA smaller than LoRA") {
  const TransformerShape& s = preset("llama-2-70b");
  Parallelism par;
  par.recompute = Recompute::full;
  TrainingOptions opt;
  const MemoryBreakdown full = training_memory_per_gpu(s, par, opt);
  opt.fine_tuning = FineTuning::lora;
  const MemoryBreakdown lora = training_memory_per_gpu(s, par, opt);
  opt.fine_tuning = FineTuning::qlora;
  const MemoryBreakdown qlora = training_memory_per_gpu(s, par, opt);
  CHECK(lora.total() < full.total());
  CHECK(qlora.total() < lora.total());
  CHECK(qlora.activations == lora.activations);

  // LoRA: frozen bf16 base 2 x params + adapters 2 B each; adapter gradients 2 B,
  // optimizer 12 B per adapter param only.
  const double params = parameter_count(s);
  const double adapters = lora_adapter_parameter_count(s, 16);
  CHECK(lora.weights.value() == doctest::Approx(2 * params + 2 * adapters));
  CHECK(lora.gradients.value() == doctest::Approx(2 * adapters));
  CHECK(lora.optimizer.value() == doctest::Approx(12 * adapters));
  // QLoRA: NF4 with double quantization, 4.127 bits = 0.51587 B per linear-layer param;
  // the 2 x 32000 x 8192 = 524,288,000 embedding params stay bf16.
  const double embeddings = 524'288'000;
  const double nf4 = (4 + 8.0 / 64 + 32.0 / (64 * 256)) / 8;
  CHECK(qlora.weights.value() ==
        doctest::Approx(2 * embeddings + nf4 * (params - embeddings) + 2 * adapters));
  // About 36 GB of weights for a 70B model, the figure QLoRA's 48 GB GPU claim rests on.
  CHECK(gb(qlora.weights) == doctest::Approx(36.9).epsilon(0.02));
}

// ---- the search's total agrees with the breakdown -------------------------------------------

TEST_CASE("training_memory_total_per_gpu equals training_memory_per_gpu().total()") {
  struct Case {
    const char* model;
    Parallelism par;
    TrainingOptions opt;
  };
  TrainingOptions qlora;
  qlora.fine_tuning = FineTuning::qlora;
  TrainingOptions fp32;
  fp32.compute = Precision::fp32;
  fp32.mixed_precision = false;
  const Case cases[] = {
      {"gpt3-175b", {.tensor = 8, .pipeline = 16, .data = 8, .sequence_parallel = true,
                     .interleave = 3, .micro_batch = 1, .global_batch = 1536, .zero_stage = 1,
                     .recompute = Recompute::selective}, {}},
      {"llama-3.1-405b", {.tensor = 8, .pipeline = 16, .data = 4, .micro_batch = 2,
                          .global_batch = 512, .zero_stage = 3, .recompute = Recompute::full}, {}},
      {"mixtral-8x7b", {.tensor = 2, .data = 4, .global_batch = 32}, qlora},
      {"bert-large", {.data = 8, .micro_batch = 32, .global_batch = 256}, fp32},
  };
  for (const auto& c : cases) {
    CAPTURE(c.model);
    const TransformerShape& s = preset(c.model);
    const MemoryBreakdown m = training_memory_per_gpu(s, c.par, c.opt);
    CHECK(training_memory_total_per_gpu(s, c.par, c.opt) == m.total());
    // Overhead is the stated fraction of the rest.
    CHECK(m.overhead.value() ==
          doctest::Approx(c.opt.overhead_fraction * (m.total() - m.overhead).value()));
    // One formula line per non-zero component.
    int nonzero = 0;
    for (Bytes b : {m.weights, m.gradients, m.optimizer, m.activations, m.kv_cache, m.overhead})
      nonzero += b.value() > 0;
    CHECK(static_cast<int>(m.formulas.size()) == nonzero);
  }
}

// ---- inference ------------------------------------------------------------------------------

TEST_CASE("KV cache bytes per token") {
  // llama-2-70b, bf16: 2 (K, V) x 80 layers x 8 KV heads x 128 dims x 2 B = 327,680 B.
  CHECK(kv_cache_bytes_per_token(preset("llama-2-70b"), Precision::bf16).value() == 327'680);
  // llama-2-7b (MHA): 2 x 32 x 32 x 128 x 2 = 524,288 B; fp8 halves it.
  CHECK(kv_cache_bytes_per_token(preset("llama-2-7b"), Precision::bf16).value() == 524'288);
  CHECK(kv_cache_bytes_per_token(preset("llama-2-7b"), Precision::fp8).value() == 262'144);
  // BERT keeps no KV cache.
  CHECK(kv_cache_bytes_per_token(preset("bert-large"), Precision::bf16).value() == 0);
}

TEST_CASE("inference: llama-2-7b bf16 weights and a full-context KV cache") {
  InferenceOptions opt;
  opt.overhead_fraction = 0;
  const MemoryBreakdown m = inference_memory_per_gpu(preset("llama-2-7b"), opt);
  // 2 x 6,738,415,616 = 13,476,831,232 B = 13.5 GB.
  CHECK(m.weights.value() == 13'476'831'232.0);
  // 524,288 B/token x 4096 tokens (context 0 = seq_len) x 1 sequence = 2,147,483,648 B.
  CHECK(m.kv_cache.value() == 2'147'483'648.0);
  CHECK(m.activations.value() == 0);
  CHECK(m.formulas.size() == 2);
}

TEST_CASE("inference: tensor parallel divides weights and KV heads") {
  const TransformerShape& s = preset("llama-2-70b");
  InferenceOptions opt;
  opt.batch = 16;
  opt.context = 2048;
  const MemoryBreakdown one = inference_memory_per_gpu(s, opt);
  opt.tensor = 8;
  const MemoryBreakdown eight = inference_memory_per_gpu(s, opt);
  CHECK(eight.weights.value() == doctest::Approx(one.weights.value() / 8));
  // 327,680 B/token x 2048 x 16 = 10,737,418,240 B on one GPU; 1 KV head of 8 per GPU at t=8.
  CHECK(one.kv_cache.value() == 10'737'418'240.0);
  CHECK(eight.kv_cache.value() == doctest::Approx(10'737'418'240.0 / 8));
  // 16 GPUs cannot split 8 KV heads further: each still holds one.
  opt.tensor = 16;
  CHECK(inference_memory_per_gpu(s, opt).kv_cache == eight.kv_cache);
  // Overhead 10% of weights + KV.
  CHECK(eight.overhead.value() == doctest::Approx(0.1 * (eight.weights + eight.kv_cache).value()));
}

TEST_CASE("inference: int4 weights are a quarter of bf16") {
  InferenceOptions opt;
  const double bf16 = inference_memory_per_gpu(preset("mistral-7b"), opt).weights.value();
  opt.weights = Precision::int4;
  CHECK(inference_memory_per_gpu(preset("mistral-7b"), opt).weights.value() ==
        doctest::Approx(bf16 / 4));
}

// ---- sample models --------------------------------------------------------------------------

TEST_CASE("sample model training memory: resnet-50, batch 32, bf16 mixed precision") {
  const SampleModel* m = find_sample_model_preset("resnet-50");
  REQUIRE(m != nullptr);
  TrainingOptions opt;
  const MemoryBreakdown b = sample_model_training_memory(*m, 32, opt);
  // 25.6e6 params x (2 + 2 + 12) = 409.6 MB of model states.
  CHECK((b.weights + b.gradients + b.optimizer).value() == doctest::Approx(409.6e6));
  CHECK(b.activations.value() == doctest::Approx(32 * m->activation_bytes_per_sample));
  CHECK(b.overhead.value() == doctest::Approx(0.1 * (409.6e6 + b.activations.value())));
  CHECK(b.formulas.size() == 5);
}
