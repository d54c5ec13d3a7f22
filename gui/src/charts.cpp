#include "capsim/render/charts.hpp"

#include <QApplication>
#include <QBuffer>
#include <QGraphicsScene>
#include <QImage>
#include <QPainter>
#include <QSvgGenerator>
#include <QtCharts/QChart>
#include <QtCharts/QLegendMarker>
#include <QtCharts/QLineSeries>
#include <QtCharts/QLogValueAxis>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QValueAxis>
#include <unistd.h>

#include <cstdlib>
#include <memory>

#include "capsim/core/files.hpp"
#include "capsim/core/units.hpp"
#include "chart_builders.hpp"

namespace capsim::render {

// Qt needs an application object before any widget; make one once, offscreen when there
// is no display, and keep it for the life of the process.
void ensure_application() {
  if (QCoreApplication::instance() != nullptr) return;
  if (std::getenv("QT_QPA_PLATFORM") == nullptr && std::getenv("DISPLAY") == nullptr &&
      std::getenv("WAYLAND_DISPLAY") == nullptr)
    setenv("QT_QPA_PLATFORM", "offscreen", 0);
  // Qt wants a private runtime directory; without one it warns on every start.
  if (std::getenv("XDG_RUNTIME_DIR") == nullptr) {
    // The error_code overloads: a bad TMPDIR must not throw out of here (it aborted capsim).
    std::error_code ec;
    const auto dir = std::filesystem::temp_directory_path(ec) / ("capsim-runtime-" + std::to_string(::getuid()));
    if (!ec) std::filesystem::create_directories(dir, ec);
    std::filesystem::permissions(dir, std::filesystem::perms::owner_all, ec);
    if (!ec) setenv("XDG_RUNTIME_DIR", dir.c_str(), 0);
  }
  static int argc = 1;
  static char name[] = "capsim";
  static char* argv[] = {name, nullptr};
  static QApplication app(argc, argv);
}

namespace {

double days(Seconds s) { return s.value() / units::day; }

// Renders the scene into memory and hands the bytes to the one atomic writer, so a full
// disk leaves the previous chart in place and is reported (Qt's own file writers are not
// checked: QSvgGenerator ignores write errors).
Status save(QGraphicsScene& scene, const QSize& size, const std::filesystem::path& file) {
  const auto ext = file.extension().string();
  QByteArray bytes;
  QBuffer buffer(&bytes);
  buffer.open(QIODevice::WriteOnly);
  bool ok = false;
  if (ext == ".svg") {
    QSvgGenerator svg;
    svg.setOutputDevice(&buffer);
    svg.setSize(size);
    svg.setViewBox(QRect(QPoint(0, 0), size));
    svg.setTitle("capsim");
    QPainter painter(&svg);
    scene.render(&painter);
    ok = painter.end();
  } else if (ext == ".png") {
    QImage image(size, QImage::Format_ARGB32);
    image.fill(Qt::white);
    QPainter painter(&image);
    painter.setRenderHint(QPainter::Antialiasing);
    scene.render(&painter);
    painter.end();
    ok = image.save(&buffer, "PNG");
  } else {
    return {Diagnostic{{file.string()}, "", "unknown chart format '" + ext + "'", "use .png or .svg"}};
  }
  buffer.close();
  if (!ok || bytes.isEmpty())
    return {environment_failure(Diagnostic{{file.string()}, "", "cannot render the chart", ""})};
  return write_file_atomically(file, std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())));
}

}  // namespace

QChart* frontier_chart(const scenarios::SizingReport& report) {
  const auto& res = report.search;
  auto* chart = new QChart();
  chart->setTitle(QString::fromStdString("Time vs cost per run: " + report.scenario.name));
  chart->setAnimationOptions(QChart::NoAnimation);
  // Costs in millions when they are large, so the axis reads "41" not "4.1e+07".
  double max_cost = 0;
  for (const auto& c : res.fastest)
    if (c.cost) max_cost = std::max(max_cost, c.cost->value());
  const double scale = max_cost >= 1e6 ? 1e6 : (max_cost >= 1e4 ? 1e3 : 1.0);
  const std::string scale_name = scale == 1e6 ? "million " : (scale == 1e3 ? "thousand " : "");

  auto* frontier = new QLineSeries();
  frontier->setName("Pareto frontier");
  frontier->setPointsVisible(true);
  for (const auto& c : res.frontier)
    if (c.cost) frontier->append(days(c.total_time), c.cost->value() / scale);
  auto* fastest = new QScatterSeries();
  fastest->setName("fastest per node type");
  fastest->setMarkerSize(9);
  for (const auto& c : res.fastest)
    if (c.cost) fastest->append(days(c.total_time), c.cost->value() / scale);
  auto* recommended = new QScatterSeries();
  recommended->setName("recommended");
  recommended->setMarkerSize(16);
  recommended->setColor(QColor(200, 30, 30));
  if (res.recommended && res.recommended->cost)
    recommended->append(days(res.recommended->total_time), res.recommended->cost->value() / scale);

  double min_x = HUGE_VAL, max_x = 0, min_y = HUGE_VAL, max_y = 0;
  for (auto* s : {static_cast<QXYSeries*>(frontier), static_cast<QXYSeries*>(fastest)})
    for (const auto& p : s->points()) {
      min_x = std::min(min_x, p.x());
      max_x = std::max(max_x, p.x());
      min_y = std::min(min_y, p.y());
      max_y = std::max(max_y, p.y());
    }
  if (!(max_x > 0)) {
    chart->setTitle(chart->title() + " (no configuration has a price)");
    min_x = 1;
    max_x = 10;
    max_y = 1;
  }

  for (auto* s : {static_cast<QXYSeries*>(frontier), static_cast<QXYSeries*>(fastest),
                  static_cast<QXYSeries*>(recommended)})
    chart->addSeries(s);
  if (report.scenario.deadline) {
    auto* deadline = new QLineSeries();
    deadline->setName(QString::fromStdString("deadline " + to_string(*report.scenario.deadline)));
    QPen pen(QColor(120, 120, 120));
    pen.setStyle(Qt::DashLine);
    pen.setWidth(2);
    deadline->setPen(pen);
    const double d = days(*report.scenario.deadline);
    deadline->append(d, 0);
    deadline->append(d, max_y * 100);  // clipped at the top of the axis
    min_x = std::min(min_x, d);
    max_x = std::max(max_x, d);
    chart->addSeries(deadline);
  }
  auto* x = new QLogValueAxis();
  x->setTitleText("time to train (days, log scale)");
  x->setLabelFormat("%.3g");
  x->setRange(min_x / 1.3, max_x * 1.3);
  x->setBase(log_axis_base(min_x / 1.3, max_x * 1.3));
  x->setMinorTickCount(-1);
  auto* y = new QValueAxis();
  y->setTitleText(QString::fromStdString("cost per run (" + scale_name + std::string(currency_code(Currency::usd)) + ")"));
  y->setLabelFormat("%.4g");
  y->setRange(0, max_y * 1.1);
  y->applyNiceNumbers();
  attach_axes(chart, x, y, chart->series());
  chart->legend()->setAlignment(Qt::AlignBottom);

  return chart;
}

double log_axis_base(double min, double max) {
  // A log axis ticks at the powers of its base: base 10 over 30..300 days gives the single
  // tick "100". The largest of these bases with at least three powers in the range does.
  for (double base : {10.0, 2.0, std::sqrt(2.0), 1.1}) {
    if (!(min > 0) || !(max > min)) return 10.0;
    const double first = std::ceil(std::log(min) / std::log(base) - 1e-9);
    const double last = std::floor(std::log(max) / std::log(base) + 1e-9);
    if (last - first + 1 >= 3) return base;
  }
  return 1.1;
}

QImage chart_image(QChart* chart, int width, int height) {
  QGraphicsScene scene;
  scene.addItem(chart);  // the scene owns and deletes the chart
  chart->setGeometry(0, 0, width, height);
  scene.setSceneRect(0, 0, width, height);
  QImage image(QSize(width, height), QImage::Format_ARGB32);
  image.fill(Qt::white);
  QPainter painter(&image);
  painter.setRenderHint(QPainter::Antialiasing);
  scene.render(&painter);
  painter.end();
  return image;
}

Status render_frontier_chart(const scenarios::SizingReport& report, const std::filesystem::path& file,
                             ChartSize size) {
  ensure_application();
  bool priced = false;
  for (const auto& c : report.search.fastest) priced = priced || c.cost.has_value();
  if (!priced) return {Diagnostic{{file.string()}, "", "nothing to chart: no configuration has a price", ""}};
  QChart* chart = frontier_chart(report);
  QGraphicsScene scene;
  scene.addItem(chart);
  chart->setGeometry(0, 0, size.width, size.height);
  scene.setSceneRect(0, 0, size.width, size.height);
  return save(scene, QSize(size.width, size.height), file);
}

void attach_axes(QChart* chart, QAbstractAxis* x, QAbstractAxis* y, const QList<QAbstractSeries*>& series) {
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  for (auto* s : series) {
    s->attachAxis(x);
    s->attachAxis(y);
  }
}

void attach_index_axis(QChart* chart, QAbstractSeries* series, QAbstractAxis* y, int count) {
  auto* index_axis = new QValueAxis();
  index_axis->setRange(-0.5, count - 0.5);
  index_axis->setVisible(false);
  chart->addAxis(index_axis, Qt::AlignTop);
  series->attachAxis(index_axis);
  series->attachAxis(y);
}

}  // namespace capsim::render
