// The doctest main of every test binary, with one addition: a run that selects no test case
// fails. CTest runs each case by name; a name that the filter cannot match (doctest reads
// commas and some punctuation as filter syntax) would otherwise pass without running.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "support/listener.hpp"

namespace {

std::atomic<int> g_cases_started{0};

struct CountingListener : capsim::testing::QuietListener {
  using QuietListener::QuietListener;
  void test_case_start(const doctest::TestCaseData&) override { ++g_cases_started; }
};

}  // namespace

DOCTEST_REGISTER_LISTENER("counting", 1, CountingListener);

int main(int argc, char** argv) {
  // Price ages (issue 50) are measured from today: a fixed today keeps the goldens and the
  // stale-price warnings the same from one month to the next (the capsim processes the tests
  // start inherit it). Set CAPSIM_TODAY to test another date.
  setenv("CAPSIM_TODAY", "2026-12-01", 0);
  doctest::Context context(argc, argv);
  const int result = context.run();
  if (context.shouldExit()) return result;  // --help, --list-test-cases, ...
  if (g_cases_started == 0) {
    std::fprintf(stderr, "error: the filter selected no test case\n");
    return 1;
  }
  return result;
}
