#include "serving_charts.hpp"

#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSeries>
#include <QtCharts/QBarSet>
#include <QtCharts/QHorizontalBarSeries>
#include <QtCharts/QLegend>
#include <QtCharts/QLineSeries>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QValueAxis>
#include <algorithm>
#include <cmath>

#include "chart_builders.hpp"

namespace capsim::gui {
namespace {

using render::attach_axes;
using render::attach_index_axis;

const QColor kRed(200, 30, 30);
const QColor kGreen(40, 140, 60);

QString q(const std::string& s) { return QString::fromStdString(s); }

QChart* new_chart(const QString& title) {
  auto* chart = new QChart;
  chart->setTitle(title);
  chart->setAnimationOptions(QChart::NoAnimation);
  chart->legend()->setAlignment(Qt::AlignBottom);
  chart->legend()->setShowToolTips(true);  // a legend entry cut for room shows in full on hover
  QFont f = chart->legend()->font();
  f.setPointSizeF(f.pointSizeF() * 0.9);
  chart->legend()->setFont(f);
  return chart;
}

QLineSeries* dashed(const QString& name, const QColor& colour) {
  auto* s = new QLineSeries;
  s->setName(name);
  QPen pen(colour);
  pen.setStyle(Qt::DashLine);
  pen.setWidth(2);
  s->setPen(pen);
  return s;
}

bool plan_fails(const Analysis& a) {
  for (const auto& e : a.run.expectations)
    if (!e.passed) return true;
  return false;
}

}  // namespace

QChart* llm_latency_chart(const Analysis& a) {
  const auto& sim = a.run.serving_simulation;
  if (!sim || !sim->llm || !a.run.scenario.inference) return nullptr;
  const auto& inf = *a.run.scenario.inference;
  const auto& llm = *sim->llm;
  if (llm.completed == 0) return nullptr;
  struct Metric {
    QString name;
    const des::Percentiles* p;
    std::optional<Seconds> slo;
  };
  const Metric metrics[] = {{"TTFT", &llm.ttft, inf.ttft_p99}, {"TPOT", &llm.tpot, inf.tpot_p99}};
  const bool against_slo = inf.ttft_p99 || inf.tpot_p99;
  auto* chart = new_chart(against_slo ? QString("TTFT and TPOT, simulated at %1 req/s, % of the SLO (red: over)")
                                            .arg(sim->rate, 0, 'g', 4)
                                      : QString("TTFT and TPOT, simulated at %1 req/s, ms").arg(sim->rate, 0, 'g', 4));
  auto* series = new QBarSeries;
  double top = against_slo ? 100.0 : 0.0;
  for (const auto& m : metrics) {
    if (against_slo && !m.slo) continue;
    auto* set = new QBarSet(against_slo ? QString("%1 (SLO %2)").arg(m.name, q(to_string(*m.slo))) : m.name + " (ms)");
    set->setSelectedColor(kRed);
    const double values[] = {m.p->p50.mean, m.p->p95.mean, m.p->p99.mean};
    for (int i = 0; i < 3; ++i) {
      const double v = against_slo ? 100 * values[i] / m.slo->value() : 1e3 * values[i];
      *set << (std::isfinite(v) ? v : 0.0);
      if (against_slo && v > 100) set->selectBar(i);
      top = std::max(top, std::isfinite(v) ? v : 0.0);
    }
    series->append(set);
  }
  chart->addSeries(series);
  auto* x = new QBarCategoryAxis;
  x->append({"p50", "p95", "p99"});
  x->setTruncateLabels(false);
  auto* y = new QValueAxis;
  y->setTitleText(against_slo ? "% of the SLO" : "ms");
  y->setRange(0, top * 1.15);
  y->applyNiceNumbers();
  attach_axes(chart, x, y, {series});
  if (against_slo) {
    auto* slo = dashed("SLO (100 %)", kRed);
    slo->append(-0.5, 100);
    slo->append(2.5, 100);
    chart->addSeries(slo);
    attach_index_axis(chart, slo, y, 3);
  }
  return chart;
}

QChart* throughput_curve_chart(const Analysis& a) {
  if (!a.curve || a.curve->points.empty() || !a.serving) return nullptr;
  const auto& c = *a.curve;
  auto* chart = new_chart(QString("Throughput against the offered request rate (%1)").arg(q(c.basis)));
  auto* line = new QLineSeries;
  line->setName("throughput");
  auto* meets = new QScatterSeries;
  meets->setName("meets SLO");
  meets->setColor(kGreen);
  meets->setMarkerSize(9);
  auto* misses = new QScatterSeries;
  misses->setName("misses SLO");
  misses->setColor(kRed);
  misses->setMarkerSize(9);
  double top = 0, right = 0;
  for (const auto& p : c.points) {
    line->append(p.rate, p.throughput);
    (p.meets_slo ? meets : misses)->append(p.rate, p.throughput);
    top = std::max(top, std::max(p.throughput, p.rate));
    right = std::max(right, p.rate);
  }
  const double rate = a.serving->rate;
  right = std::max(right, rate);
  double current_throughput = rate;
  if (a.run.plan.throughput) current_throughput = *a.run.plan.throughput;
  top = std::max(top, current_throughput);
  for (auto* s : {static_cast<QXYSeries*>(line), static_cast<QXYSeries*>(meets), static_cast<QXYSeries*>(misses)})
    chart->addSeries(s);
  if (c.knee) {
    auto* knee = dashed(QString("SLO knee %1 req/s").arg(*c.knee, 0, 'g', 4), QColor(90, 90, 90));
    knee->append(*c.knee, 0);
    knee->append(*c.knee, top * 1.1);
    chart->addSeries(knee);
  }
  const bool fails = plan_fails(a);
  auto* here = new QScatterSeries;
  here->setName(QString("plan at %1 req/s%2").arg(rate, 0, 'g', 4).arg(fails ? ", SLO broken" : ""));
  here->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
  here->setMarkerSize(16);
  here->setColor(fails ? kRed : kGreen);
  here->append(rate, current_throughput);
  chart->addSeries(here);
  auto* x = new QValueAxis;
  x->setTitleText("offered request rate (requests/s)");
  x->setRange(0, right * 1.05);
  x->applyNiceNumbers();
  auto* y = new QValueAxis;
  y->setTitleText("throughput (requests/s)");
  y->setRange(0, top * 1.1);
  y->applyNiceNumbers();
  attach_axes(chart, x, y, chart->series());
  return chart;
}

QChart* llm_load_chart(const Analysis& a) {
  if (!a.serving || !a.serving->llm) return nullptr;
  const auto& e = *a.serving;
  const bool fails = plan_fails(a);
  auto* chart = new_chart(QString("Load, KV cache, running sequences (red: SLO broken)"));
  auto* series = new QHorizontalBarSeries;
  auto* ok = new QBarSet("within the SLO");
  auto* bad = new QBarSet("SLO broken");
  bad->setColor(kRed);
  QStringList names;
  auto add = [&](const QString& name, double percent, bool red) {
    names << name;
    *ok << (red ? 0.0 : percent);
    *bad << (red ? percent : 0.0);
  };
  const double capacity = e.llm->requests_per_second * e.replicas;
  const double load = capacity > 0 ? 100 * e.rate / capacity : 0;
  add(QString("load %1 %").arg(load, 0, 'f', 1), std::isfinite(load) ? load : 0, fails);
  const auto& sim = a.run.serving_simulation;
  if (sim && sim->llm && sim->llm->completed > 0) {
    add(QString("KV cache %1 %").arg(100 * sim->llm->kv_utilization, 0, 'f', 1), 100 * sim->llm->kv_utilization, false);
    const int most = std::max(1, e.llm->max_concurrent_sequences);
    const double running = 100 * sim->llm->mean_running / most;
    add(QString("running %1/%2").arg(sim->llm->mean_running, 0, 'f', 0).arg(most), running, false);
  }
  series->append(ok);
  series->append(bad);
  series->setBarWidth(0.6);
  chart->addSeries(series);
  auto* y = new QBarCategoryAxis;
  y->append(names);
  y->setTruncateLabels(false);
  auto* x = new QValueAxis;
  double top = 100;
  for (int i = 0; i < ok->count(); ++i) top = std::max({top, ok->at(i), bad->at(i)});
  x->setRange(0, top);
  x->setTitleText("%");
  attach_axes(chart, x, y, {series});
  return chart;
}

QChart* llm_timeline_chart(const Analysis& a) {
  const auto& sim = a.run.serving_simulation;
  if (!sim || !sim->llm || sim->llm->timeline.size() < 2) return nullptr;
  const auto& timeline = sim->llm->timeline;
  auto* chart = new_chart("Running sequences and KV cache over the run (simulated, one engine)");
  auto* running = new QLineSeries;
  running->setName("running sequences");
  auto* kv = new QLineSeries;
  kv->setName("KV cache in use (%)");
  kv->setColor(kGreen);
  double most = 1, last = 0;
  for (const auto& point : timeline) {
    running->append(point.t, point.running);
    kv->append(point.t, 100 * point.kv_used);
    most = std::max(most, static_cast<double>(point.running));
    last = std::max(last, point.t);
  }
  chart->addSeries(running);
  chart->addSeries(kv);
  auto* x = new QValueAxis;
  x->setTitleText("time (s)");
  x->setRange(timeline.front().t, std::max(last, timeline.front().t + 1e-9));
  x->applyNiceNumbers();
  auto* y = new QValueAxis;
  y->setTitleText("sequences");
  y->setRange(0, most * 1.1);
  y->applyNiceNumbers();
  y->setLabelFormat("%.0f");  // whole sequences: labels short enough never to be cut
  x->setLabelFormat("%.0f");
  attach_axes(chart, x, y, {running});
  auto* percent = new QValueAxis;
  percent->setTitleText("% of the KV cache");
  percent->setRange(0, 100);
  percent->setLabelFormat("%.0f");
  chart->addAxis(percent, Qt::AlignRight);
  kv->attachAxis(x);
  kv->attachAxis(percent);
  return chart;
}

}  // namespace capsim::gui
