// capsim-calibrate's statistics, on samples whose order statistics are known by hand.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "stats.hpp"

using namespace capsim::calibration;

TEST_CASE("median, extremes and quartiles of an odd sample") {
  // Sorted: 1 2 3 4 5. Definition 7: rank p (n-1) -> q1 at rank 1 = 2, q3 at rank 3 = 4.
  const auto s = summarize({5, 1, 4, 2, 3});
  REQUIRE(s);
  CHECK(s->median == 3);
  CHECK(s->min == 1);
  CHECK(s->max == 5);
  CHECK(s->q1 == 2);
  CHECK(s->q3 == 4);
  CHECK(s->count == 5);
}

TEST_CASE("an even sample interpolates between the middle ranks") {
  // Sorted 1 2 3 4: median at rank 1.5 = 2.5; q1 at rank 0.75 = 1.75; q3 at rank 2.25 = 3.25.
  const auto s = summarize({4, 3, 2, 1});
  REQUIRE(s);
  CHECK(s->median == 2.5);
  CHECK(s->q1 == 1.75);
  CHECK(s->q3 == 3.25);
  const auto one = summarize({7});
  REQUIRE(one);
  CHECK(one->median == 7);
  CHECK(one->q1 == 7);
  CHECK(one->q3 == 7);
}

TEST_CASE("no samples or a non-finite one give no summary") {
  CHECK_FALSE(summarize({}));
  CHECK_FALSE(summarize({1, std::nan(""), 3}));
  CHECK_FALSE(summarize({1, std::numeric_limits<double>::infinity()}));
}

TEST_CASE("rates are summarized per sample: the slowest run gives the minimum rate") {
  // 100 units of work in 1, 2, 4 s: rates 100, 50, 25.
  const auto s = summarize_rates(100, {2, 1, 4});
  REQUIRE(s);
  CHECK(s->median == 50);
  CHECK(s->min == 25);
  CHECK(s->max == 100);
  CHECK_FALSE(summarize_rates(100, {1, 0}));   // a zero time would be an infinite rate
  CHECK_FALSE(summarize_rates(100, {1, -1}));
  CHECK_FALSE(summarize_rates(0, {1, 2}));
  CHECK_FALSE(summarize_rates(std::nan(""), {1}));
}
