#include "capsim/core/suggest.hpp"

#include <algorithm>
#include <cctype>

namespace capsim {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment: insert, delete, substitute and swap two neighbours, each 1.
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

static std::string lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string needle = lowercase(word);
  const std::size_t limit = std::max<std::size_t>(1, needle.size() / 3);
  std::string best;
  std::size_t best_distance = limit + 1;
  for (const auto& candidate : candidates) {
    const std::size_t d = edit_distance(needle, lowercase(candidate));
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  if (!best.empty() || needle.size() < 3) return best;
  // No close spelling: a candidate the word begins ("h100-sxm" -> "h100-sxm-80gb"), the shortest.
  for (const auto& candidate : candidates)
    if (lowercase(candidate).starts_with(needle) && (best.empty() || candidate.size() < best.size())) best = candidate;
  return best;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string best = closest_match(word, candidates);
  return best.empty() ? std::string{} : "did you mean '" + best + "'?";
}

}  // namespace capsim
