// BM_WhatIfRecompute: the recompute the desktop window runs on every what-if change
// (capsim::gui::recompute: apply the values, size, cost, serving estimate), on the shipped
// examples. The goal is 50 ms per change for a typical scenario.
//   ./build/gui/capsim_gui_bench --benchmark_filter=WhatIf
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

#include "capsim/hardware/loader.hpp"
#include "capsim/scenarios/scenario.hpp"
#include "whatif.hpp"

namespace {

using namespace capsim;

const hardware::Catalog& catalog() {
  static const hardware::Catalog c = [] {
    auto loaded = hardware::load_catalog_dir(CAPSIM_SOURCE_DIR "/data/catalog");
    if (!loaded) {
      std::fprintf(stderr, "%s\n", format_diagnostics(loaded.errors()).c_str());
      std::abort();
    }
    return std::move(loaded).value();
  }();
  return c;
}

scenarios::Scenario example(const std::string& name) {
  auto s = scenarios::load_scenario_file(CAPSIM_SOURCE_DIR "/scenarios/examples/" + name + ".yaml", catalog());
  if (!s) {
    std::fprintf(stderr, "%s\n", format_diagnostics(s.errors()).c_str());
    std::abort();
  }
  return std::move(s).value();
}

// Alternates between two values of a control, as a user dragging it does.
void run(benchmark::State& state, const std::string& name, gui::WhatIf a, gui::WhatIf b) {
  const auto base = example(name);
  bool flip = false;
  for (auto _ : state) {
    auto r = gui::recompute(base, flip ? a : b, catalog());
    if (!r || !r->problems.empty()) state.SkipWithError("recompute failed");
    benchmark::DoNotOptimize(r);
    flip = !flip;
  }
}

void BM_WhatIfRecompute_llama70b(benchmark::State& state) {
  gui::WhatIf a, b;
  a.gpus = 4096;
  b.gpus = 8192;
  run(state, "llama-70b-pretrain", a, b);
}

void BM_WhatIfRecompute_llama70b_gpu(benchmark::State& state) {
  gui::WhatIf a, b;
  a.gpu = "h100-sxm-80gb";
  b.gpu = "h200-sxm-141gb";
  run(state, "llama-70b-pretrain", a, b);
}

void BM_WhatIfRecompute_services(benchmark::State& state) {
  gui::WhatIf a, b;
  a.utilization = 0.5;
  b.electricity_usd_per_kwh = 0.2;
  b.horizon_months = 36;
  run(state, "ml-services-24x7", a, b);
}

void BM_WhatIfRecompute_road_sign_ocr(benchmark::State& state) {
  gui::WhatIf a, b;
  a.request_rate = 3000;
  b.request_rate = 5000;
  run(state, "road-sign-ocr", a, b);
}

}  // namespace

BENCHMARK(BM_WhatIfRecompute_llama70b)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_WhatIfRecompute_llama70b_gpu)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_WhatIfRecompute_services)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_WhatIfRecompute_road_sign_ocr)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
