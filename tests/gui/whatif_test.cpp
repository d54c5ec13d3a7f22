#include <doctest/doctest.h>

#include "capsim/scenarios/scenario.hpp"
#include "support/test_support.hpp"
#include "whatif.hpp"
#include "yaml_edit.hpp"

using namespace capsim;

namespace {

scenarios::Scenario example(const std::string& name) {
  auto s = scenarios::load_scenario_file(testing::example_scenario(name), testing::shipped_catalog());
  REQUIRE_MESSAGE(s.ok(), format_diagnostics(s.errors()));
  return std::move(s).value();
}

std::string value_of(const gui::Analysis& a, const std::string& key) {
  for (const auto& [k, v] : gui::key_results(a))
    if (k == key) return v;
  return {};
}

}  // namespace

TEST_CASE("what-if GPU count and GPU type change the 70B sizing") {
  const auto base = example("llama-70b-pretrain");
  const auto& catalog = testing::shipped_catalog();
  auto plain = gui::recompute(base, {}, catalog);
  REQUIRE(plain.ok());
  REQUIRE(plain->run.sizing);
  REQUIRE(plain->run.sizing->search.recommended);
  CHECK(plain->problems.empty());

  gui::WhatIf fewer;
  fewer.gpus = 1024;
  auto small = gui::recompute(base, fewer, catalog);
  REQUIRE(small.ok());
  CHECK(small->run.scenario.hardware.max_gpus == 1024);
  // At most 1024 GPUs: 6 M GPU-hours take longer than with the 4096 the file's search picks.
  const auto& fastest_small = small->run.sizing->search.frontier.front();
  const auto& fastest_plain = plain->run.sizing->search.frontier.front();
  CHECK(fastest_small.total_time.value() > fastest_plain.total_time.value());

  gui::WhatIf h200;
  h200.gpu = "h200-sxm-141gb";
  auto other = gui::recompute(base, h200, catalog);
  REQUIRE(other.ok());
  CHECK(other->run.scenario.hardware.gpus == std::vector<std::string>{"h200-sxm-141gb"});
  for (const auto& t : other->run.sizing->search.node_types) CHECK(t.cluster.gpu.id == "h200-sxm-141gb");
  CHECK(value_of(*other, "GPUs").find("h200-sxm-141gb") != std::string::npos);
}

TEST_CASE("what-if values out of range are errors naming the control, not clamped") {
  const auto base = example("llama-70b-pretrain");
  gui::WhatIf w;
  w.gpu = "h100-sxm-80";
  w.gpus = 0;
  w.request_rate = 10;
  auto r = gui::recompute(base, w, testing::shipped_catalog());
  REQUIRE_FALSE(r.ok());
  std::string all = format_diagnostics(r.errors());
  CHECK(all.find("hardware.gpus") != std::string::npos);
  CHECK(all.find("did you mean") != std::string::npos);
  CHECK(all.find("at least 1") != std::string::npos);
  CHECK(all.find("only inference workloads have a request rate") != std::string::npos);
}

TEST_CASE("what-if horizon, utilization and electricity change the cost comparison") {
  const auto base = example("ml-services-24x7");
  const auto& catalog = testing::shipped_catalog();
  auto plain = gui::recompute(base, {}, catalog);
  REQUIRE(plain.ok());
  REQUIRE(plain->run.cost);
  const auto totals = plain->run.cost->comparison.totals;

  gui::WhatIf longer;
  longer.horizon_months = 36;
  auto l = gui::recompute(base, longer, catalog);
  REQUIRE(l.ok());
  CHECK(scenarios::cost_lines(l->run).front().points.size() == 37);  // months 0..36
  CHECK(scenarios::cost_lines(plain->run).front().points.size() == 25);

  gui::WhatIf half;
  half.utilization = 0.5;
  auto h = gui::recompute(base, half, catalog);
  REQUIRE(h.ok());
  // Cloud option 0 (aws p4d on demand) bills only busy hours: half the hours, about half the cost.
  CHECK(h->run.cost->comparison.totals[0].value() < 0.6 * totals[0].value());

  gui::WhatIf power;
  power.electricity_usd_per_kwh = 0.40;
  auto p = gui::recompute(base, power, catalog);
  REQUIRE(p.ok());
  CHECK(p->run.cost->comparison.totals[0].value() == doctest::Approx(totals[0].value()));  // cloud: unchanged
  CHECK(p->run.cost->comparison.totals[3].value() > totals[3].value());                  // on-prem pays for power
}

TEST_CASE("what-if request rate changes the analytic serving estimate") {
  const auto base = example("road-sign-ocr");
  const auto& catalog = testing::shipped_catalog();
  auto plain = gui::recompute(base, {}, catalog);
  REQUIRE(plain.ok());
  REQUIRE(plain->serving);
  REQUIRE(plain->serving->graph);
  CHECK(plain->serving->rate == doctest::Approx(5000));
  gui::WhatIf w;
  w.request_rate = 2500;
  auto half = gui::recompute(base, w, catalog);
  REQUIRE(half.ok());
  const auto a = gui::serving_utilization_bars(*plain->serving);
  const auto b = gui::serving_utilization_bars(*half->serving);
  REQUIRE(a.size() == 2);
  REQUIRE(b.size() == 2);
  CHECK(b[0].utilization < a[0].utilization);
  CHECK(a[0].constraint);  // the text detector
  w.gpus = 2;              // two replicas per stage
  auto doubled = gui::recompute(base, w, catalog);
  REQUIRE(doubled.ok());
  CHECK(doubled->serving->graph->capacity > 1.9 * half->serving->graph->capacity);
}

TEST_CASE("a yaml scalar edit keeps the comments and layout around it") {
  const std::string yaml =
      "name: x   # the name\n"
      "hardware:\n"
      "  gpus: [t4]\n"
      "  max_gpus: 64     # at most\n"
      "deadline: \"90 d\"\n";
  auto edited = gui::set_yaml_scalar(yaml, {"hardware", "max_gpus"}, "128");
  REQUIRE(edited.ok());
  CHECK(*edited == "name: x   # the name\nhardware:\n  gpus: [t4]\n  max_gpus: 128     # at most\ndeadline: \"90 d\"\n");
  auto quoted = gui::set_yaml_scalar(yaml, {"deadline"}, "30 d");
  REQUIRE(quoted.ok());
  CHECK(quoted->find("deadline: 30 d\n") != std::string::npos);
  auto added = gui::set_yaml_scalar(yaml, {"hardware", "min_gpus"}, "8");
  REQUIRE(added.ok());
  CHECK(*added == "name: x   # the name\nhardware:\n  min_gpus: 8\n  gpus: [t4]\n  max_gpus: 64     # at most\ndeadline: \"90 d\"\n");
  auto nested = gui::set_yaml_scalar(yaml, {"pricing", "commitment"}, "spot");
  REQUIRE(nested.ok());
  CHECK(gui::yaml_scalar(*nested, {"pricing", "commitment"}) == std::optional<std::string>("spot"));
  CHECK(gui::yaml_flow(yaml, {"hardware", "gpus"}) == std::optional<std::string>("[t4]"));
  auto list = gui::set_yaml_scalar(yaml, {"hardware", "gpus"}, "l4");
  CHECK_FALSE(list.ok());
}
