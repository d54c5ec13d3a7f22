// "Did you mean ...?" for misspelled keys, ids and units.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace capsim {

// Edit distance with transpositions (optimal string alignment), case-sensitive:
// "tpd" is one edit from "tdp".
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word`, if it is close enough to be a plausible typo:
// distance <= max(1, len/3), compared case-insensitively; failing that, the shortest candidate
// that starts with `word` (3 letters or more). Empty string when none is.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

// "did you mean 'x'?" or "" when closest_match finds nothing.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace capsim
