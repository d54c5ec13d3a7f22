// Small text helpers shared by the models, reports and front ends.
#pragma once

#include <string>

namespace capsim {

// `v` with `digits` significant digits ("%g"): 0.123, 41.2, 1.5e+09.
std::string significant(double v, int digits = 3);

// `s` with & < > " ' replaced by entities, for XML and HTML text and attributes.
std::string xml_escape(const std::string& s);

}  // namespace capsim
