#include <doctest/doctest.h>

#include <tuple>

#include <nlohmann/json.hpp>
#include <pugixml.hpp>
#include <thread>

#include "capsim/core/text.hpp"
#include "capsim/scenarios/history.hpp"
#include "capsim/scenarios/junit.hpp"
#include "capsim/scenarios/report.hpp"
#include "capsim/scenarios/runner.hpp"
#include "capsim/scenarios/workspace.hpp"
#include "support/test_support.hpp"

using namespace capsim;
using namespace capsim::scenarios;

namespace {

Scenario llama(const std::string& extra_expect = {}) {
  std::string text = testing::read_file(testing::example_scenario("llama-70b-pretrain"));
  text += extra_expect;
  auto s = load_scenario("llama.yaml", text, testing::shipped_catalog());
  if (!s.ok()) FAIL(format_diagnostics(s.errors()));
  return std::move(s).value();
}

}  // namespace

TEST_CASE("expectations parse with units and reject unknown metrics") {
  auto e = parse_expectation("training_time < 90 d");
  REQUIRE(e.ok());
  CHECK(e->metric == "training_time");
  CHECK(e->bound.value_si == 90 * 86400.0);
  auto typo = parse_expectation("trainig_time < 90 d");
  REQUIRE_FALSE(typo.ok());
  CHECK(typo.errors()[0].message == "unknown metric 'trainig_time'");
  CHECK(typo.errors()[0].hint == "did you mean 'training_time'?");
  auto unit = parse_expectation("training_time < 90 GB");
  REQUIRE_FALSE(unit.ok());
  CHECK(unit.errors()[0].message ==
        "'training_time' is a duration (e.g. '200 ms' or '14 d'), got a data size (e.g. '80 GB')");
}

TEST_CASE("issue 53: expectations take the units capsim prints beside counts and rates") {
  for (const auto& [text, metric, value] :
       {std::tuple<const char*, const char*, double>{"throughput > 12.5 requests/s", "throughput", 12.5},
        {"throughput >= 3000 tokens/s", "throughput", 3000},
        {"throughput > 40 samples/s", "throughput", 40},
        {"samples_per_second > 900 samples/s", "samples_per_second", 900},
        {"gpus <= 64 GPUs", "gpus", 64},
        {"gpus >= 1 GPU", "gpus", 1},
        {"gpus <= 64", "gpus", 64}}) {
    CAPTURE(text);
    auto e = parse_expectation(text);
    REQUIRE_MESSAGE(e.ok(), format_diagnostics(e.errors()));
    CHECK(e->metric == metric);
    CHECK(e->bound.value_si == value);
    CHECK(e->bound.dim == dims::none);
  }
  // A unit that is another metric's stays an error, and says which units this one takes.
  auto wrong = parse_expectation("samples_per_second > 900 requests/s");
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.errors()[0].hint == "'samples_per_second' is a count: write a plain number or one in samples/s");
  // The result reads in the unit written.
  auto e = parse_expectation("gpus <= 64 GPUs");
  REQUIRE(e.ok());
  const auto results = check_expectations({*e}, {Measurement{"gpus", {16, dims::none, Currency::none}}}, {});
  REQUIRE(results.size() == 1);
  CHECK(results[0].passed);
  CHECK(results[0].message == "gpus = 16 GPUs, meets <= 64 GPUs");
}

TEST_CASE("every shipped expectation passes and a tightened one fails with its measured value") {
  auto passing = run_scenario(llama(), testing::shipped_catalog());
  REQUIRE(passing.ok());
  REQUIRE_FALSE(passing->expectations.empty());
  CHECK(passing->passed());
  CHECK(passing->status() == "passed");

  auto failing = run_scenario(llama("  - training_time < 30 d\n"), testing::shipped_catalog());
  REQUIRE(failing.ok());
  CHECK_FALSE(failing->passed());
  const auto& last = failing->expectations.back();
  CHECK_FALSE(last.passed);
  CHECK(last.message.starts_with("training_time = "));
  CHECK(last.message.ends_with(", fails < 30 d"));
  const std::string junit = junit_xml(*failing);
  CHECK(junit.find("failures=\"1\"") != std::string::npos);
  CHECK(junit.find("<failure message=\"training_time = ") != std::string::npos);
  CHECK(junit.find("name=\"training_time &lt; 30 d\" time=\"0.000\">") != std::string::npos);
  // The Jenkins xUnit schema allows file on the test suite but neither file nor line on a test
  // case: the failure text starts with the expectation's file:line:column instead.
  CHECK(junit.find(" file=\"llama.yaml\">") != std::string::npos);
  CHECK(junit.find("type=\"expectation\">llama.yaml:") != std::string::npos);
  CHECK(junit.find(" line=\"") == std::string::npos);
}

TEST_CASE("issue 53: JUnit XML is written by pugixml: every text escaped, control characters shown, well-formed") {
  // Names, messages and files with markup, quotes and characters XML 1.0 cannot carry (ESC,
  // NUL, a right-to-left override): they come from a user's scenario file.
  RunResult r;
  r.scenario.name = "a<b>&\"c'";
  r.scenario.file = "dir/\"odd\" <name>.yaml";
  r.started_at = "2026-12-07T00:00:00Z";
  ExpectationResult pass;
  pass.expectation.text = "mfu > 30 %";
  pass.expectation.where = SourceLocation{r.scenario.file, 12, 5};
  pass.passed = true;
  pass.message = "mfu = 42 %, meets > 30 %";
  ExpectationResult fail;
  fail.expectation.text = std::string("x\x1b[31m < 1 d\0z", 14);
  fail.passed = false;
  fail.message = "line one\nline \u202e two & <three>";
  r.expectations = {pass, fail};
  const std::string xml = junit_xml(r, 1.25);
  CHECK(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"capsim\" tests=\"2\" "
                        "failures=\"1\" errors=\"0\" time=\"1.250\">\n"));
  // No character reference to a C0 control (XML 1.0 forbids even &#27;), no raw ESC or NUL,
  // no raw override: each is shown as text.
  CHECK(xml.find("&#27;") == std::string::npos);
  CHECK(xml.find('\x1b') == std::string::npos);
  CHECK(xml.find(std::string(1, '\0')) == std::string::npos);
  CHECK(xml.find("\u202e") == std::string::npos);
  CHECK(xml.find("x\\x1b[31m &lt; 1 d\\x00z") != std::string::npos);
  CHECK(xml.find("line \\u202e two &amp; &lt;three&gt;") != std::string::npos);
  // Read back, every value is the one given (control characters as shown).
  pugi::xml_document doc;
  REQUIRE(doc.load_string(xml.c_str()));
  const pugi::xml_node suite = doc.child("testsuites").child("testsuite");
  CHECK(std::string(suite.attribute("name").value()) == r.scenario.name);
  CHECK(std::string(suite.attribute("file").value()) == r.scenario.file);
  CHECK(std::string(suite.attribute("timestamp").value()) == r.started_at);
  CHECK(std::string(suite.attribute("time").value()) == "1.250");
  const pugi::xml_node first = suite.child("testcase");
  CHECK(std::string(first.attribute("name").value()) == "mfu > 30 %");
  CHECK(std::string(first.attribute("classname").value()) == r.scenario.name);
  CHECK(std::string(first.attribute("time").value()) == "0.000");
  CHECK(std::string(first.child_value("system-out")) == r.scenario.file + ":12:5: mfu = 42 %, meets > 30 %");
  const pugi::xml_node failure = first.next_sibling("testcase").child("failure");
  CHECK(std::string(failure.attribute("type").value()) == "expectation");
  CHECK(std::string(failure.attribute("message").value()) == "line one\nline \\u202e two & <three>");
  CHECK(std::string(failure.child_value()) == "line one\nline \\u202e two & <three>");

  const std::string bad = junit_error_xml("in<put>.yaml", {Diagnostic{{"in<put>.yaml", 2, 3}, "workload.modle",
                                                                      "unknown key 'modle'", "did you mean 'model'?"}},
                                          0.5);
  pugi::xml_document error_doc;
  REQUIRE(error_doc.load_string(bad.c_str()));
  const pugi::xml_node error_suite = error_doc.child("testsuites").child("testsuite");
  CHECK(std::string(error_suite.attribute("errors").value()) == "1");
  CHECK(std::string(error_suite.attribute("file").value()) == "in<put>.yaml");
  CHECK_FALSE(error_suite.attribute("timestamp"));
  const pugi::xml_node error = error_suite.child("testcase").child("error");
  CHECK(std::string(error_suite.child("testcase").attribute("name").value()) == "load and run the scenario");
  CHECK(std::string(error.attribute("type").value()) == "bad input");
  CHECK(std::string(error.attribute("message").value()).starts_with("in<put>.yaml:2:3: "));
  CHECK(std::string(error.child_value()).find("unknown key 'modle'") != std::string::npos);
}

TEST_CASE("the run result JSON carries its schema version and measurements") {
  auto run = run_scenario(llama(), testing::shipped_catalog());
  REQUIRE(run.ok());
  auto j = nlohmann::json::parse(run_json(*run));
  CHECK(j["schema"] == "capsim-run/1");
  CHECK(j["status"] == "passed");
  CHECK(j["measurements"]["training_time"]["unit"] == "s");
  CHECK(j["measurements"]["cost_per_run"]["unit"] == "USD");
  CHECK(j["sizing"]["recommended"]["node_type"].is_string());
  CHECK(j["expectations"].size() == run->expectations.size());
}

TEST_CASE("run history stores runs and explains what changed between two") {
  const auto db = testing::scratch_dir("history") / "history.db";
  std::filesystem::remove(db);
  auto store = hardware::Store::open(db);
  REQUIRE(store.ok());
  auto first = run_scenario(llama(), testing::shipped_catalog());
  auto second = run_scenario(llama("  - training_time < 30 d\n"), testing::shipped_catalog());
  REQUIRE((first.ok() && second.ok()));
  auto id1 = record_run(*store, *first);
  auto id2 = record_run(*store, *second);
  REQUIRE((id1.ok() && id2.ok()));
  auto runs = list_runs(*store, 10);
  REQUIRE(runs.ok());
  REQUIRE(runs->size() == 2);
  CHECK(runs->front().id == *id2);  // newest first
  CHECK(runs->front().status == "failed");
  const std::string diff = diff_runs(*get_run(*store, *id1), *get_run(*store, *id2));
  CHECK(diff.find("+   - training_time < 30 d") != std::string::npos);
  CHECK(diff.find("/status: \"passed\" -> \"failed\"") != std::string::npos);
  auto missing = get_run(*store, 999);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.errors()[0].message == "no run with id 999");
}

TEST_CASE("concurrent writers lose no run") {
  const auto db = testing::scratch_dir("history") / "concurrent.db";
  std::filesystem::remove(db);
  REQUIRE(hardware::Store::open(db).ok());
  auto run = run_scenario(llama(), testing::shipped_catalog());
  REQUIRE(run.ok());
  constexpr int kWriters = 8, kRunsEach = 25;
  std::vector<std::thread> writers;
  std::atomic<int> failures{0};
  for (int w = 0; w < kWriters; ++w)
    writers.emplace_back([&] {
      auto store = hardware::Store::open(db);  // one connection per writer, as separate processes have
      if (!store.ok()) {
        ++failures;
        return;
      }
      for (int i = 0; i < kRunsEach; ++i)
        if (!record_run(*store, *run).ok()) ++failures;
    });
  for (auto& t : writers) t.join();
  CHECK(failures == 0);
  auto store = hardware::Store::open(db);
  CHECK(list_runs(*store, 100000)->size() == kWriters * kRunsEach);
}

TEST_CASE("every shipped scenario runs and meets its expectations") {
  for (const auto& entry : std::filesystem::directory_iterator(CAPSIM_TEST_SOURCE_DIR "/../scenarios/examples")) {
    CAPTURE(entry.path().filename().string());
    auto s = load_scenario_file(entry.path(), testing::shipped_catalog());
    REQUIRE(s.ok());
    CHECK_FALSE(s->expect.empty());
    auto r = run_scenario(*s, testing::shipped_catalog());
    if (!r.ok()) FAIL(format_diagnostics(r.errors()));
    for (const auto& e : r->expectations) {
      CAPTURE(e.message);
      CHECK(e.passed);
    }
  }
}

// Issue 46: a sized serving plan is one deployment. Its header, its why-line and its
// simulated figures describe the same replicas and the same simulation (the sizing's
// verification is the plan's simulation, run with the scenario's simulate: keys), and a
// plan none of whose verified layouts meets the SLO shows the closest one, says it misses,
// and fails its SLO as an expectation.
TEST_CASE("a serving plan that misses its SLO shows the closest deployment and fails its SLO") {
  const std::string text = R"(name: long-prompts
workload: {type: llm-serving, model: llama-3.1-70b, precision: bf16, prompt_tokens: 8192, output_tokens: 256}
arrivals: {kind: poisson, rate: 20}
slo: {ttft_p99: 5 s, tpot_p99: 100 ms}
hardware: {gpus: [h100-sxm-80gb]}
simulate: {duration: 300 s, warmup: 60 s, seed: 1}
)";
  auto s = load_scenario("long.yaml", text, testing::shipped_catalog());
  REQUIRE(s.ok());
  auto plan = make_plan(*s, testing::shipped_catalog());
  REQUIRE(plan.ok());
  const auto& p = plan->plan;
  REQUIRE(plan->serving_sizing);
  REQUIRE(plan->serving_sizing->llm);
  const auto& z = *plan->serving_sizing->llm;
  CHECK_FALSE(z.recommended);
  REQUIRE(z.closest);
  CHECK(p.basis == "closest");
  CHECK(p.gpus == z.closest->gpus);  // the header is the closest layout
  CHECK(p.configuration.starts_with(plural(z.closest->replicas, "replica") + " of 4 GPUs"));
  CHECK(p.reason.find("the closest: " + plural(z.closest->replicas, "replica") + " x TP=") != std::string::npos);
  REQUIRE(p.ttft_p99);
  REQUIRE(p.tpot_p99);
  // The why-line's simulated p99s are the plan's: one simulation, printed once.
  CHECK(p.reason.find("simulated TTFT p99 " + to_string(*p.ttft_p99) + ", TPOT p99 " + to_string(*p.tpot_p99)) !=
        std::string::npos);
  REQUIRE(plan->serving_simulation);
  CHECK(plan->serving_simulation->replicas == z.closest->replicas);
  CHECK(p.tpot_p99->value() > 0.1);  // it misses the TPOT bound
  CHECK(std::find(p.warnings.begin(), p.warnings.end(),
                  "no layout capsim verified meets the SLO: this plan is the closest, and it misses") != p.warnings.end());
  // No expect: in the file: the SLO is checked as one, at its key's line.
  REQUIRE(plan->expectations.size() == 2);
  CHECK(plan->expectations[0].expectation.text == "ttft_p99 <= 5 s");
  CHECK(plan->expectations[1].expectation.text == "tpot_p99 <= 100 ms");
  CHECK(plan->expectations[1].expectation.where.line == 4);
  CHECK_FALSE(plan->expectations[1].passed);
  CHECK(plan->status() == "failed");
}

TEST_CASE("a sized serving plan's header, why-line and simulation describe one deployment") {
  auto s = load_scenario_file(testing::example_scenario("llama2-70b-chat-h100"), testing::shipped_catalog());
  REQUIRE(s.ok());
  // The example states its deployment; drop it so the plan is the sizing's recommendation.
  Scenario sized = *s;
  sized.inference->node.clear();
  auto plan = make_plan(sized, testing::shipped_catalog());
  REQUIRE(plan.ok());
  const auto& p = plan->plan;
  REQUIRE(plan->serving_sizing->llm->recommended);
  const auto& rec = *plan->serving_sizing->llm->recommended;
  CHECK(p.basis == "recommendation");
  CHECK(p.gpus == rec.gpus);
  CHECK(plan->serving_simulation->replicas == rec.replicas);
  CHECK(p.reason == "the cheapest layout verified by simulation: " + rec.summary);
  CHECK(rec.summary.find("simulated TTFT p99 " + to_string(*p.ttft_p99) + ", TPOT p99 " + to_string(*p.tpot_p99)) !=
        std::string::npos);
  CHECK(rec.simulation->ttft.p99.mean == p.ttft_p99->value());
}

// Issue 46: Llama 3 70B at TP 8 on an 8 x MI300X instance ran its all-reduces over PCIe (the
// catalog's instance named no fabric and the model took PCIe for a GPU without NVLink): 0.15
// requests/s. On the node's xGMI mesh, as a user's scenario runs it, one TP-8 replica serves
// within 2x of eight TP-1 replicas on the same node.
TEST_CASE("Llama 3 70B at TP 8 on 8 x MI300X serves within 2x of eight TP 1 replicas") {
  auto completed = [](int tp) {
    const std::string text = "name: mi300x\n"
                             "workload: {type: llm-serving, model: llama-3-70b, precision: bf16, prompt_tokens: 1024, "
                             "output_tokens: 256}\n"
                             "arrivals: {kind: poisson, rate: 40}\n"  // more than either serves
                             "deployment: {node: oci-bm-gpu-mi300x-8, tensor_parallel: " +
                             std::to_string(tp) + ", replicas: " + std::to_string(8 / tp) +
                             "}\nsimulate: {duration: 300 s, warmup: 60 s, seed: 1}\n";
    auto s = load_scenario("mi300x.yaml", text, testing::shipped_catalog());
    REQUIRE(s.ok());
    auto plan = make_plan(*s, testing::shipped_catalog());
    REQUIRE(plan.ok());
    return *plan->plan.throughput;
  };
  const double tp8 = completed(8), tp1 = completed(1);
  CHECK(tp8 > 0.5 * tp1);
  CHECK(tp8 < 2.0 * tp1);
}

namespace {

// A shipped serving example whose simulated window is too short for any request to finish.
Scenario completing_nothing(const char* example, const std::string& window) {
  std::string text = testing::read_file(testing::example_scenario(example));
  const auto at = text.find(window);
  REQUIRE(at != std::string::npos);
  text.replace(at, window.size(), "simulate: {duration: 1 ms, warmup: 1 ms, seed: 1}");
  text += "  - throughput < 1000000\n";
  auto s = load_scenario(std::string(example) + ".yaml", text, testing::shipped_catalog());
  if (!s.ok()) FAIL(format_diagnostics(s.errors()));
  return std::move(s).value();
}

}  // namespace

TEST_CASE("a serving run that completes no request measures no throughput: every bound on it fails, no view shows 0 (issue 47)") {
  // The shipped 'throughput < 3380' passed on a run of no requests ("ok throughput = 0").
  for (const auto& [example, window] :
       {std::pair<const char*, const char*>{"resnet50-t4-tensorrt-fp16", "simulate: {duration: 30 s, warmup: 5 s, seed: 1}"},
        {"llama2-70b-chat-h100", "simulate: {duration: 300 s, warmup: 60 s, seed: 1}"}}) {
    CAPTURE(example);
    auto r = run_scenario(completing_nothing(example, window), testing::shipped_catalog());
    REQUIRE_MESSAGE(r.ok(), format_diagnostics(r.errors()));
    CHECK_FALSE(r->plan.throughput.has_value());
    int on_throughput = 0;
    for (const auto& e : r->expectations) {
      CAPTURE(e.message);
      CHECK_FALSE(e.passed);  // the upper bounds too: nothing observed meets no bound
      if (e.expectation.metric == "throughput") {
        ++on_throughput;
        CHECK(e.message.starts_with("throughput was not measured by this run: no request completed"));
      }
    }
    CHECK(on_throughput >= 1);
    // Text: "not measured", never a rate of 0.
    const std::string text = run_summary_text(*r);
    CHECK(text.find("  throughput      not measured (no request completed in the simulated window)") != std::string::npos);
    for (const char* zero : {"throughput      0", "requests/s                                                         0",
                             "throughput (requests/s)                    0", "output tokens/s                    0"})
      CHECK_MESSAGE(text.find(zero) == std::string::npos, zero);
    // JSON: the figures are null, the plan and the run say why.
    const auto j = nlohmann::json::parse(run_json(*r));
    CHECK(j.at("plan").at("throughput").is_null());
    CHECK(j.at("plan").at("not_measured").at("throughput") == "no request completed in the simulated window");
    CHECK_FALSE(j.at("measurements").contains("throughput"));
    CHECK(j.at("not_measured").contains("throughput"));
    const auto& sim = j.at("serving_simulation");
    if (sim.contains("llm")) {
      CHECK(sim.at("llm").at("requests_per_second").is_null());
      CHECK(sim.at("llm").at("output_tokens_per_second").is_null());
    } else {
      CHECK(sim.at("throughput").is_null());
      CHECK(sim.at("latency_s").is_null());
    }
    // CSV (the report's plan table) and JUnit.
    const auto doc = build_report(*r, testing::shipped_catalog());
    const auto tables = report_tables(doc);
    REQUIRE(tables.at(1).name == "plan");
    const std::string csv = render_csv(*tables.at(1).table);
    CHECK(csv.find("throughput,not measured (no request completed in the simulated window),") != std::string::npos);
    const std::string junit = junit_xml(*r, 0.0);
    CHECK(junit.find("failures=\"" + std::to_string(r->expectations.size()) + "\"") != std::string::npos);
    CHECK(junit.find("throughput was not measured by this run") != std::string::npos);
    // The sizing verifies its candidates in the same window: a simulation that completed no
    // request verifies nothing (it recommended a layout whose TTFT and TPOT were not measured).
    if (r->serving_sizing && r->serving_sizing->llm) {
      CHECK_FALSE(r->serving_sizing->llm->recommended.has_value());
      CHECK(r->serving_sizing->llm->recommendation.find("completed no request in the simulated window") !=
            std::string::npos);
    }
  }
}
