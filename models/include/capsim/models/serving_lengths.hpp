// Request length distributions for LLM serving: a prompt or output length given as one
// number, a parametric distribution with bounds, or a histogram, and the sample of requests
// the simulation runs.
//
// Sampling (sample_llm_request_mix) draws `count` (prompt, output) pairs from the scenario's
// seed with des::Rng (xoshiro256**, the same numbers on every platform); the simulation's
// requests take them in order, cycling (LlmRequestMix::requests). Each length is rounded to
// a whole token and truncated to [min, max] by drawing again (a truncated distribution, not
// a pile-up at the bound); a pair longer than the model's context is drawn again too. The
// analytic estimate uses the sample's rounded means (llm_request_mix), so both see the same
// requests.
//
// Plain values; pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "capsim/core/des/random.hpp"
#include "capsim/core/result.hpp"
#include "capsim/models/serving_llm.hpp"

namespace capsim::models {

// Requests drawn for a distribution: enough that the sample's mean and tail are those of the
// distribution (the standard error of an exponential's mean is 0.7 % at 20,000), small enough
// to keep in memory and to check against the KV cache.
inline constexpr int kLlmLengthSamples = 20000;
// Draws one length may take before the bounds are judged to hold almost none of the
// distribution (the loader refuses such bounds up front where it can).
inline constexpr int kLlmLengthMaxDraws = 1000;

enum class LlmLengthKind { fixed, uniform, normal, lognormal, exponential, histogram };

struct LlmLengthDistribution {
  LlmLengthKind kind = LlmLengthKind::fixed;
  // fixed: the length; normal, lognormal, exponential: the mean in tokens (before
  // truncation); uniform: (min + max) / 2.
  double mean = 0;
  // normal: standard deviation in tokens; lognormal: standard deviation of ln(tokens).
  double sigma = 0;
  int min = 1;  // tokens, >= 1
  int max = 1;  // tokens, >= min
  std::vector<std::pair<int, double>> histogram;  // (tokens, weight > 0)

  bool is_fixed() const { return kind == LlmLengthKind::fixed; }
};

std::string_view llm_length_kind_name(LlmLengthKind k);

// One length: rounded to a token, within [min, max] (drawn again when outside, at most
// kLlmLengthMaxDraws times, then the nearest bound).
int sample_llm_length(const LlmLengthDistribution& d, des::Rng& rng);

// "exponential, mean 256 tokens, 1 to 4096", "uniform 1 to 511", "histogram of 3 lengths
// (128: 0.5, 512: 0.3, 2048: 0.2)", "512": what was assumed, for reports.
std::string llm_length_text(const LlmLengthDistribution& d);

// count pairs from `seed`; a pair whose prompt + output exceeds `context` (> 0) is drawn
// again. Errors: count < 1; bounds that leave no pair within the context.
Result<LlmRequestMix> sample_llm_request_mix(const LlmLengthDistribution& prompt, const LlmLengthDistribution& output,
                                             int context, int count, std::uint64_t seed);

}  // namespace capsim::models
