// Charts rendered headless with Qt Charts, to PNG or SVG: the same chart code the desktop
// app shows, so a report can be produced on a CI machine with no display.
//
// Qt stays inside this library: callers pass capsim types and a file name. The first call
// creates a QApplication on the "offscreen" platform when none exists (and no display is
// set). Not thread-safe: Qt widgets live on one thread; call from one thread.
#pragma once

#include <filesystem>

#include "capsim/core/result.hpp"
#include "capsim/scenarios/sizing.hpp"

namespace capsim::render {

struct ChartSize {
  int width = 1000;
  int height = 600;
};

// The base of a log axis over [min, max] that puts at least three ticks (powers of the base)
// in it: 10 where the range spans two decades, else 2, sqrt(2) or 1.1 (base 10 over 30..300
// days ticks only "100").
double log_axis_base(double min, double max);

// Time vs cost per run: the Pareto frontier as a line, the fastest configuration of each
// node type as points, the recommendation highlighted. Format by extension (.png, .svg).
// Written to a temporary file and renamed, so a reader never sees half a chart.
Status render_frontier_chart(const scenarios::SizingReport& report, const std::filesystem::path& file,
                             ChartSize size = {});

}  // namespace capsim::render
