// Qt chart builders shared by the headless renderers (reports, capsim size --chart) and the
// desktop app. Qt types stay inside gui/: this header is not installed for other components.
#pragma once

#include <QImage>
#include <QPainter>
#include <QtCharts/QAbstractAxis>
#include <QtCharts/QAbstractSeries>
#include <QtCharts/QChart>

#include "capsim/scenarios/cluster.hpp"

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

// A cluster plan's nodes up per hour of the week, one step line per node type.
QChart* cluster_timeline_chart(const scenarios::ClusterPlan& plan);
// The packing picture: each node a row, each GPU a box filled by its pods' shares (colour
// per workload, in the plan's order), and a legend. paint_packing draws it with `text`
// for labels on `base`; packing_size is what it needs; packing_image draws it on white.
QSize packing_size(const scenarios::ClusterPlan& plan);
void paint_packing(QPainter& p, const scenarios::ClusterPlan& plan, const QColor& text, const QColor& base);
QImage packing_image(const scenarios::ClusterPlan& plan);

// Adds x at the bottom and y on the left of `chart` and attaches each of `series` to both.
void attach_axes(QChart* chart, QAbstractAxis* x, QAbstractAxis* y, const QList<QAbstractSeries*>& series);
// A series placed by category index (a scatter or line over bars) needs a value axis over
// the categories' span: a hidden one from -0.5 to count - 0.5 on top, with `series` on it
// and on `y`.
void attach_index_axis(QChart* chart, QAbstractSeries* series, QAbstractAxis* y, int count);

// Draws a chart (taking ownership) into an image of the given size, white background.
QImage chart_image(QChart* chart, int width, int height);

}  // namespace capsim::render
