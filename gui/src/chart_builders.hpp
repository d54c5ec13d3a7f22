// Qt chart builders shared by the headless renderers (reports, capsim size --chart) and the
// desktop app. Qt types stay inside gui/: this header is not installed for other components.
#pragma once

#include <QImage>
#include <QtCharts/QChart>

#include "capsim/scenarios/report.hpp"
#include "capsim/scenarios/sizing.hpp"

namespace capsim::render {

// Creates a QApplication on the "offscreen" platform once, when none exists and no display
// is set. Safe to call repeatedly; call from the thread that owns Qt.
void ensure_application();

// Each returns a chart the caller owns (or gives to a QChartView / QGraphicsScene).
QChart* frontier_chart(const scenarios::SizingReport& report);
QChart* memory_chart(const std::vector<scenarios::MemoryBar>& bars);
QChart* utilization_chart(const std::vector<scenarios::UtilizationBar>& bars);
QChart* cost_chart(const std::vector<scenarios::CostLine>& lines);
QChart* latency_cdf_chart(const scenarios::LatencyCdf& cdf);

// Draws a chart (taking ownership) into an image of the given size, white background.
QImage chart_image(QChart* chart, int width, int height);

}  // namespace capsim::render
