// Request length distributions (serving_lengths.hpp).
#include "capsim/models/serving_lengths.hpp"

#include <algorithm>
#include <cmath>

#include "capsim/core/text.hpp"

namespace capsim::models {

std::string_view llm_length_kind_name(LlmLengthKind k) {
  switch (k) {
    case LlmLengthKind::fixed: return "fixed";
    case LlmLengthKind::uniform: return "uniform";
    case LlmLengthKind::normal: return "normal";
    case LlmLengthKind::lognormal: return "lognormal";
    case LlmLengthKind::exponential: return "exponential";
    case LlmLengthKind::histogram: return "histogram";
  }
  return "";
}

namespace {

// One draw in tokens before rounding and truncation.
double draw(const LlmLengthDistribution& d, des::Rng& rng) {
  switch (d.kind) {
    case LlmLengthKind::fixed: return d.mean;
    // Whole tokens min..max, each equally likely.
    case LlmLengthKind::uniform: return d.min + std::floor(rng.uniform() * (d.max - d.min + 1));
    case LlmLengthKind::normal: return d.mean + d.sigma * rng.normal();
    // ln(tokens) ~ N(mu, sigma) with mu = ln(mean) - sigma^2 / 2, so E[tokens] = mean.
    case LlmLengthKind::lognormal:
      return std::exp(std::log(d.mean) - d.sigma * d.sigma / 2 + d.sigma * rng.normal());
    case LlmLengthKind::exponential: return d.mean * rng.exponential();
    case LlmLengthKind::histogram: {
      double total = 0;
      for (const auto& [tokens, weight] : d.histogram) total += weight;
      double u = rng.uniform() * total;
      for (const auto& [tokens, weight] : d.histogram) {
        if (u < weight) return tokens;
        u -= weight;
      }
      return d.histogram.empty() ? d.mean : d.histogram.back().first;
    }
  }
  return d.mean;
}

}  // namespace

int sample_llm_length(const LlmLengthDistribution& d, des::Rng& rng) {
  double tokens = 0;
  for (int i = 0; i < kLlmLengthMaxDraws; ++i) {
    tokens = std::round(draw(d, rng));
    if (tokens >= d.min && tokens <= d.max) return static_cast<int>(tokens);
  }
  return static_cast<int>(std::clamp(tokens, static_cast<double>(d.min), static_cast<double>(d.max)));
}

std::string llm_length_text(const LlmLengthDistribution& d) {
  const std::string bounds = ", " + std::to_string(d.min) + " to " + std::to_string(d.max);
  switch (d.kind) {
    case LlmLengthKind::fixed: return significant(d.mean, 7);
    case LlmLengthKind::uniform: return "uniform" + bounds;
    case LlmLengthKind::normal:
      return "normal, mean " + significant(d.mean, 4) + ", sigma " + significant(d.sigma, 4) + bounds;
    case LlmLengthKind::lognormal:
      return "lognormal, mean " + significant(d.mean, 4) + ", sigma of ln " + significant(d.sigma, 3) + bounds;
    case LlmLengthKind::exponential: return "exponential, mean " + significant(d.mean, 4) + bounds;
    case LlmLengthKind::histogram: {
      std::string out = "histogram (";
      double total = 0;
      for (const auto& h : d.histogram) total += h.second;
      for (std::size_t i = 0; i < d.histogram.size(); ++i)
        out += (i ? ", " : "") + std::to_string(d.histogram[i].first) + ": " +
               significant(d.histogram[i].second / total, 3);
      return out + ")";
    }
  }
  return "";
}

Result<LlmRequestMix> sample_llm_request_mix(const LlmLengthDistribution& prompt, const LlmLengthDistribution& output,
                                             int context, int count, std::uint64_t seed) {
  if (count < 1) return Diagnostic{{}, "count", "must be at least 1", ""};
  // Salted so that the lengths are not the arrivals' stream of the same seed.
  des::Rng rng(seed ^ 0x6c656e67746873ULL);  // "lengths"
  std::vector<LlmRequestLength> requests;
  requests.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    LlmRequestLength r{sample_llm_length(prompt, rng), sample_llm_length(output, rng)};
    for (int draw = 1; context > 0 && r.prompt_tokens + r.output_tokens > context; ++draw) {
      if (draw == kLlmLengthMaxDraws)
        return Diagnostic{{}, "workload.prompt_tokens",
                          "the prompt and output lengths leave almost no request within the model's context of " +
                              std::to_string(context) + " tokens (" + llm_length_text(prompt) + " and " +
                              llm_length_text(output) + ")",
                          "lower max or the means"};
      r = {sample_llm_length(prompt, rng), sample_llm_length(output, rng)};
    }
    requests.push_back(r);
  }
  return llm_request_mix(std::move(requests));
}

}  // namespace capsim::models
