// The report's charts: memory per GPU, station utilization, cost over the horizon.
#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSet>
#include <QtCharts/QHorizontalBarSeries>
#include <QtCharts/QLineSeries>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QStackedBarSeries>
#include <QtCharts/QValueAxis>
#include <algorithm>

#include "chart_builders.hpp"

namespace capsim::render {
namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

QChart* new_chart(const std::string& title) {
  auto* chart = new QChart();
  chart->setTitle(q(title));
  chart->setAnimationOptions(QChart::NoAnimation);
  chart->legend()->setAlignment(Qt::AlignBottom);
  return chart;
}

}  // namespace

QChart* memory_chart(const std::vector<scenarios::MemoryBar>& bars) {
  QChart* chart = new_chart("Memory per GPU (GB), against the GPU's capacity");
  auto* stacked = new QStackedBarSeries();
  QStringList categories;
  for (const auto& b : bars) categories << q(b.label);
  const char* parts[] = {"weights", "gradients", "optimizer", "activations", "overhead"};
  for (const char* part : parts) {
    auto* set = new QBarSet(part);
    for (const auto& b : bars) {
      double bytes = 0;
      for (const auto& [name, v] : b.parts)
        if (name == part) bytes = v;
      *set << bytes / 1e9;
    }
    stacked->append(set);
  }
  chart->addSeries(stacked);
  // The capacity of each bar's GPU as a marker line across its category.
  auto* capacity = new QScatterSeries();
  capacity->setName("GPU capacity");
  capacity->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
  capacity->setMarkerSize(14);
  capacity->setColor(QColor(200, 30, 30));
  double top = 0;
  for (std::size_t i = 0; i < bars.size(); ++i) {
    capacity->append(static_cast<double>(i), bars[i].capacity / 1e9);
    double total = 0;
    for (const auto& [name, v] : bars[i].parts) total += v;
    top = std::max({top, total / 1e9, bars[i].capacity / 1e9});
  }
  chart->addSeries(capacity);
  auto* x = new QBarCategoryAxis();
  x->append(categories);
  x->setTruncateLabels(false);  // node type labels are the point of the chart
  auto* y = new QValueAxis();
  y->setTitleText("GB per GPU");
  y->setRange(0, top * 1.15);
  y->applyNiceNumbers();
  attach_axes(chart, x, y, {stacked});
  attach_index_axis(chart, capacity, y, static_cast<int>(bars.size()));
  return chart;
}

QChart* utilization_chart(const std::vector<scenarios::UtilizationBar>& bars) {
  QChart* chart = new_chart("Utilization per station and conveyor; the constraint in red");
  auto* series = new QHorizontalBarSeries();
  auto* normal = new QBarSet("utilization");
  auto* constraint = new QBarSet("constraint");
  constraint->setColor(QColor(200, 30, 30));
  QStringList names;
  for (const auto& b : bars) {
    names << q(b.name);
    *normal << (b.constraint ? 0.0 : 100 * b.utilization);
    *constraint << (b.constraint ? 100 * b.utilization : 0.0);
  }
  series->append(normal);
  series->append(constraint);
  series->setBarWidth(0.6);
  chart->addSeries(series);
  auto* y = new QBarCategoryAxis();
  y->append(names);
  y->setTruncateLabels(false);
  auto* x = new QValueAxis();
  x->setRange(0, 100);
  x->setTitleText("% busy");
  attach_axes(chart, x, y, {series});
  return chart;
}

QChart* cost_chart(const std::vector<scenarios::CostLine>& lines) {
  QChart* chart = new_chart("Cumulative cost (cash) per option; crossings are break-even months");
  double top = 0, months = 0;
  for (const auto& line : lines) {
    auto* s = new QLineSeries();
    s->setName(q(line.option));
    for (const auto& [m, usd] : line.points) {
      s->append(m, usd / 1e3);
      top = std::max(top, usd / 1e3);
      months = std::max(months, m);
    }
    chart->addSeries(s);
  }
  // Mark where two lines cross: the months in which one option overtakes another.
  auto* crossings = new QScatterSeries();
  crossings->setName("break-even");
  crossings->setMarkerSize(10);
  for (std::size_t a = 0; a < lines.size(); ++a)
    for (std::size_t b = a + 1; b < lines.size(); ++b)
      for (std::size_t k = 1; k < lines[a].points.size() && k < lines[b].points.size(); ++k) {
        const double d0 = lines[a].points[k - 1].second - lines[b].points[k - 1].second;
        const double d1 = lines[a].points[k].second - lines[b].points[k].second;
        if ((d0 < 0) != (d1 < 0) && d0 != d1) {
          const double f = d0 / (d0 - d1);
          const double m = lines[a].points[k - 1].first + f;
          const double v = lines[a].points[k - 1].second + f * (lines[a].points[k].second - lines[a].points[k - 1].second);
          crossings->append(m, v / 1e3);
        }
      }
  chart->addSeries(crossings);
  auto* x = new QValueAxis();
  x->setRange(0, months);
  x->setTitleText("month");
  x->setLabelFormat("%d");
  auto* y = new QValueAxis();
  y->setRange(0, top * 1.1);
  y->setTitleText("thousand USD");
  y->applyNiceNumbers();
  attach_axes(chart, x, y, chart->series());
  return chart;
}

QChart* latency_cdf_chart(const scenarios::LatencyCdf& cdf) {
  QChart* chart = new_chart("End-to-end latency distribution (simulated), against the p99 bound");
  auto* line = new QLineSeries();
  line->setName("requests at or below");
  line->setPointsVisible(true);
  double max_ms = 0;
  for (const auto& [seconds, fraction] : cdf.points) {
    line->append(seconds * 1e3, 100 * fraction);
    max_ms = std::max(max_ms, seconds * 1e3);
  }
  chart->addSeries(line);
  if (cdf.slo_seconds > 0) {
    auto* slo = new QLineSeries();
    slo->setName(QString("p99 bound %1 ms").arg(cdf.slo_seconds * 1e3));
    QPen pen(QColor(200, 30, 30));
    pen.setStyle(Qt::DashLine);
    pen.setWidth(2);
    slo->setPen(pen);
    slo->append(cdf.slo_seconds * 1e3, 0);
    slo->append(cdf.slo_seconds * 1e3, 100);
    chart->addSeries(slo);
    max_ms = std::max(max_ms, cdf.slo_seconds * 1e3);
  }
  auto* x = new QValueAxis();
  x->setRange(0, std::max(max_ms * 1.05, 1e-3));
  x->applyNiceNumbers();
  x->setTitleText("latency (ms)");
  auto* y = new QValueAxis();
  y->setRange(0, 100);
  y->setTitleText("% of requests");
  attach_axes(chart, x, y, chart->series());
  return chart;
}

}  // namespace capsim::render
