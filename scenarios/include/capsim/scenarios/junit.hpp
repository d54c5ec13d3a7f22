// JUnit XML for CI (`capsim run --junit FILE`): one test case per expectation, and on bad input
// (exit 2) one test case holding an <error>, so a CI report shows why nothing was checked.
// Every <testsuite> and <testcase> carries `time` in seconds, as JUnit consumers expect.
// The files validate against the Jenkins xUnit plugin's JUnit schema (tests/ship/junit), which
// allows no `file` or `line` on <testcase>: the scenario file is the <testsuite>'s `file`, and
// each expectation's test case text (<system-out> or <failure>) starts with its file:line:column.
#pragma once

#include <string>
#include <vector>

#include "capsim/core/result.hpp"
#include "capsim/scenarios/runner.hpp"

namespace capsim::scenarios {

// `seconds`: the run's wall time (the suite's time; each expectation's check takes none).
std::string junit_xml(const RunResult& r, double seconds);

// A suite named after the scenario file with one test case, "load and run the scenario",
// holding the errors that stopped it.
std::string junit_error_xml(const std::string& scenario_file, const std::vector<Diagnostic>& errors, double seconds);

}  // namespace capsim::scenarios
