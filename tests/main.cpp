// The doctest main of every test binary, with one addition: a run that selects no test case
// fails. CTest runs each case by name; a name that the filter cannot match (doctest reads
// commas and some punctuation as filter syntax) would otherwise pass without running.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace {

std::atomic<int> g_cases_started{0};

struct CountingListener : doctest::IReporter {
  explicit CountingListener(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData&) override { ++g_cases_started; }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
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
