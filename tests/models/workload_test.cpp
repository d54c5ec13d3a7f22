#include "capsim/models/workload.hpp"

#include <doctest/doctest.h>

#include <cctype>
#include <cmath>
#include <set>
#include <string>

using namespace capsim::models;

namespace {

const TransformerShape& preset(const char* name) {
  const TransformerPreset* p = find_transformer_preset(name);
  REQUIRE_MESSAGE(p != nullptr, "missing preset " << name);
  return p->shape;
}

bool lowercase_hyphen(const std::string& name) {
  for (char c : name)
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '.'))
      return false;
  return !name.empty();
}

}  // namespace

TEST_CASE("precision names and sizes") {
  struct Case {
    Precision p;
    const char* name;
    double bytes;
  };
  const Case cases[] = {{Precision::fp32, "fp32", 4},  {Precision::tf32, "tf32", 4},
                        {Precision::fp16, "fp16", 2},  {Precision::bf16, "bf16", 2},
                        {Precision::fp8, "fp8", 1},    {Precision::int8, "int8", 1},
                        {Precision::int4, "int4", 0.5}};
  for (const auto& c : cases) {
    CAPTURE(c.name);
    CHECK(precision_name(c.p) == c.name);
    CHECK(precision_from_name(c.name) == c.p);
    CHECK(bytes_per_value(c.p) == c.bytes);
  }
  CHECK_FALSE(precision_from_name("fp64").has_value());
  CHECK_FALSE(precision_from_name("BF16").has_value());
}

TEST_CASE("every transformer preset counts within 3% of its published parameters") {
  std::set<std::string> names;
  for (const auto& p : transformer_presets()) {
    const double counted = parameter_count(p.shape);
    const double error = std::abs(counted / p.published_params - 1.0);
    INFO(p.shape.name << ": counted " << counted << ", published " << p.published_params
                      << ", off by " << error * 100 << "%");
    CHECK(error < 0.03);
    CHECK(lowercase_hyphen(p.shape.name));
    CHECK(names.insert(p.shape.name).second);  // unique
    CHECK(p.source.find("https://") != std::string::npos);
    CHECK_FALSE(p.as_of.empty());
    CHECK(p.shape.kv_heads >= 1);
    CHECK(p.shape.heads % p.shape.kv_heads == 0);
    // Serving refuses a request longer than the context (issue 47): every preset gives one,
    // at least its training length.
    CHECK(p.context_length >= p.shape.seq_len);
  }
  CHECK(names.size() == 20);
  // The release is longer than the training length where the source says so.
  CHECK(find_transformer_preset("llama-3.1-8b")->context_length == 131072);
  CHECK(find_transformer_preset("llama-3.1-8b")->shape.seq_len == 8192);
}

TEST_CASE("the presets users ask for by name exist") {
  for (const char* name :
       {"gpt3-125m",      "gpt3-350m",  "gpt3-760m",    "gpt3-1.3b",    "gpt3-2.7b",
        "gpt3-6.7b",      "gpt3-13b",   "gpt3-175b",    "llama-2-7b",   "llama-2-13b",
        "llama-2-70b",    "llama-3-8b", "llama-3-70b",  "llama-3.1-8b", "llama-3.1-70b",
        "llama-3.1-405b", "mistral-7b", "mixtral-8x7b", "bert-base",    "bert-large"}) {
    CAPTURE(name);
    CHECK(find_transformer_preset(name) != nullptr);
  }
  CHECK(find_transformer_preset("llama-2-7B") == nullptr);  // names are exact
  CHECK(find_transformer_preset("") == nullptr);
}

TEST_CASE("llama-2-7b parameter count is exact") {
  // Per layer: attention 4 x 4096^2 = 67,108,864; SwiGLU MLP 3 x 4096 x 11008 = 135,266,304;
  // two RMSNorms 2 x 4096 = 8,192 -> 202,383,360 x 32 layers = 6,476,267,520.
  // Untied embeddings 2 x 32000 x 4096 = 262,144,000; final norm 4,096.
  // Total 6,738,415,616, the released checkpoint's count.
  CHECK(parameter_count(preset("llama-2-7b")) == 6'738'415'616.0);
  CHECK(active_parameter_count(preset("llama-2-7b")) == 6'738'415'616.0);
  CHECK(embedding_parameter_count(preset("llama-2-7b")) == 262'144'000.0);
}

TEST_CASE("grouped-query attention shrinks k and v") {
  // llama-2-70b: q, o 2 x 8192^2 = 134,217,728; k, v with 8 of 64 heads: 2 x 8192 x 1024 =
  // 16,777,216 per layer. With full MHA k, v would be 134,217,728: 80 x 117,440,512 more.
  TransformerShape mha = preset("llama-2-70b");
  mha.kv_heads = mha.heads;
  CHECK(parameter_count(mha) - parameter_count(preset("llama-2-70b")) ==
        doctest::Approx(80.0 * 117'440'512.0));
}

TEST_CASE("mixtral counts all experts in total and two in active") {
  const TransformerShape& s = preset("mixtral-8x7b");
  // Published: 46.7B total, 12.9B active (Jiang et al. 2024).
  CHECK(parameter_count(s) == doctest::Approx(46.7e9).epsilon(0.03));
  CHECK(active_parameter_count(s) == doctest::Approx(12.9e9).epsilon(0.03));
  // The difference is 6 unused experts: 6 x 3 x 4096 x 14336 x 32 layers = 33,822,867,456.
  CHECK(parameter_count(s) - active_parameter_count(s) == doctest::Approx(33'822'867'456.0));
}

TEST_CASE("dense models have equal total and active parameters") {
  for (const auto& p : transformer_presets()) {
    if (p.shape.experts > 1) continue;
    CAPTURE(p.shape.name);
    CHECK(active_parameter_count(p.shape) == parameter_count(p.shape));
  }
}

TEST_CASE("forward FLOPs per token: 2 per weight, attention over the context, logits") {
  const TransformerShape& s = preset("llama-2-7b");
  // 2 x (6,738,415,616 - 262,144,000) = 12,952,543,232
  // + 4 x 32 layers x 4096 seq x 4096 hidden = 2,147,483,648
  // + 2 x 4096 x 32000 logits = 262,144,000  -> 15,362,170,880
  CHECK(forward_flops_per_token(s) == doctest::Approx(15'362'170'880.0));
  CHECK(training_flops_per_token(s) == doctest::Approx(3 * 15'362'170'880.0));
}

TEST_CASE("gpt3-175b training FLOPs are close to the 6N rule") {
  // N = 174.60e9, embeddings E = (50257 + 2048) x 12288 = 642.7e6.
  // 3 x [2(N - E) + 4 x 96 x 2048 x 12288 + 2 x 12288 x 50257] / 6N
  // = (347.91e9 + 9.664e9 + 1.235e9) / 349.20e9 = 1.0275: attention adds ~2.8% at 2048 tokens.
  const TransformerShape& s = preset("gpt3-175b");
  const double ratio = training_flops_per_token(s) / (6.0 * parameter_count(s));
  CHECK(ratio == doctest::Approx(1.0275).epsilon(0.0005).scale(0));
}

TEST_CASE("sample model presets carry published FLOPs, params and input sizes") {
  struct Case {
    const char* name;
    double params;
    double forward_flops;  // 2 x the published multiply-adds
    int resolution;
  };
  const Case cases[] = {{"resnet-34", 21.8e6, 2 * 3.6e9, 224},
                        {"resnet-50", 25.6e6, 2 * 3.8e9, 224},
                        {"resnet-101", 44.5e6, 2 * 7.6e9, 224},
                        {"efficientnet-b2", 9.2e6, 2 * 1.0e9, 260}};
  for (const auto& c : cases) {
    CAPTURE(c.name);
    const SampleModel* m = find_sample_model_preset(c.name);
    REQUIRE(m != nullptr);
    CHECK(m->params == c.params);
    CHECK(m->forward_flops_per_sample == doctest::Approx(c.forward_flops));
    CHECK(m->input_resolution == c.resolution);
    // 3 channels x res x res x 4 B (fp32): 602,112 B at 224.
    CHECK(m->input_bytes_per_sample == 3.0 * c.resolution * c.resolution * 4);
    CHECK(m->activation_bytes_per_sample > m->input_bytes_per_sample);
    CHECK(m->source.find("https://") != std::string::npos);
    CHECK_FALSE(m->as_of.empty());
  }
  CHECK(sample_model_presets().size() == 4);
  CHECK(find_sample_model_preset("resnet-152") == nullptr);
  // Deeper ResNets keep more activations.
  CHECK(find_sample_model_preset("resnet-101")->activation_bytes_per_sample >
        find_sample_model_preset("resnet-50")->activation_bytes_per_sample);
}
