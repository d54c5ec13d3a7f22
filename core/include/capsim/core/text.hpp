// Small text helpers shared by the models, reports and front ends.
#pragma once

#include <string>

namespace capsim {

// `v` with `digits` significant digits, like "%g" but never in exponent form (text output is
// read by people): 0.123, 41.2, 1500000000, 0.000012.
std::string significant(double v, int digits = 3);

// "1 node", "2 nodes", "1 replica": the count and the noun, plural when it is not one.
std::string plural(long long n, const std::string& noun);

// `s` with & < > " ' replaced by entities, for XML and HTML text and attributes.
std::string xml_escape(const std::string& s);

// `s` with control characters shown, not acted on: newline as \n, carriage return as \r,
// any other C0 character or DEL as \xHH (tab stays). For text that came from a user's file
// and goes to a terminal or a CI log, where a raw ESC or newline could forge a line.
std::string printable(const std::string& s);

}  // namespace capsim
