// The cluster plan's pictures, shared by the desktop app's Cluster view and the report.
#include <QLegend>
#include <QLineSeries>
#include <QValueAxis>
#include <algorithm>
#include <array>
#include <map>

#include "chart_builders.hpp"

namespace capsim::render {
namespace {

constexpr int kRow = 34, kBox = 96, kGap = 6;

// The node label column: wide enough for the longest "node 12  aws-g5-12xlarge  168 h".
int label_width(const scenarios::ClusterPlan& plan) {
  std::size_t longest = 0;
  for (const auto& n : plan.packing.nodes) longest = std::max(longest, n.node_type.size());
  return std::max(210, static_cast<int>(longest) * 8 + 110);
}

QColor workload_colour(int index) {
  static const QColor colours[] = {QColor("#4e79a7"), QColor("#f28e2b"), QColor("#59a14f"), QColor("#e15759"),
                                   QColor("#76b7b2"), QColor("#edc948"), QColor("#b07aa1"), QColor("#ff9da7")};
  return colours[index % 8];
}

}  // namespace

QChart* cluster_timeline_chart(const scenarios::ClusterPlan& plan) {
  auto* chart = new QChart;
  chart->setTitle("Nodes up per hour, Monday 00:00 to Sunday 24:00");
  std::map<std::string, std::array<int, models::kHoursPerWeek>> up;
  for (const auto& n : plan.packing.nodes) {
    auto& hours = up.try_emplace(n.node_type).first->second;
    for (int h = 0; h < models::kHoursPerWeek; ++h)
      if (n.up.hours.test(static_cast<std::size_t>(h))) ++hours[static_cast<std::size_t>(h)];
  }
  auto* x = new QValueAxis;
  x->setRange(0, models::kHoursPerWeek);
  x->setTickCount(8);
  x->setLabelFormat("%d");
  x->setTitleText("hour of the week");
  auto* y = new QValueAxis;
  y->setTitleText("nodes");
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  int most = 1;
  for (const auto& [type, hours] : up) {
    auto* s = new QLineSeries;
    s->setName(QString::fromStdString(type));
    for (int h = 0; h < models::kHoursPerWeek; ++h) {
      const int n = hours[static_cast<std::size_t>(h)];
      most = std::max(most, n);
      s->append(h, n);
      s->append(h + 1, n);
    }
    chart->addSeries(s);
    s->attachAxis(x);
    s->attachAxis(y);
  }
  y->setRange(0, most + std::max(1, most / 8));
  y->setTickCount(std::min(most, 10) + 2);
  y->setLabelFormat("%d");
  // Every pool named in full: the legend below the plot, where the names have the chart's
  // width (beside it two "aws-g5-..." pools read the same); a tooltip if one is still cut.
  chart->legend()->setAlignment(Qt::AlignBottom);
  chart->legend()->setShowToolTips(true);
  for (auto* axis : chart->axes()) axis->setTruncateLabels(false);
  return chart;
}

QSize packing_size(const scenarios::ClusterPlan& plan) {
  int gpus = 1;
  for (const auto& n : plan.packing.nodes) gpus = std::max(gpus, static_cast<int>(n.gpus.size()));
  const int rows = static_cast<int>(plan.packing.nodes.size());
  return {std::max(label_width(plan) + gpus * (kBox + kGap) + 20, 640), 8 + rows * kRow + kRow / 2 + static_cast<int>(plan.workloads.size()) * 20 + 8};
}

void paint_packing(QPainter& p, const scenarios::ClusterPlan& plan, const QColor& text, const QColor& base) {
  p.fillRect(QRect(QPoint(0, 0), packing_size(plan)), base);
  const int kLabel = label_width(plan);
  std::map<std::string, int> colour;
  for (std::size_t i = 0; i < plan.workloads.size(); ++i) colour[plan.workloads[i].name] = static_cast<int>(i);
  int y = 8;
  for (std::size_t i = 0; i < plan.packing.nodes.size(); ++i, y += kRow) {
    const auto& n = plan.packing.nodes[i];
    p.setPen(text);
    p.drawText(QRect(8, y, kLabel - 12, kRow - 8), Qt::AlignVCenter | Qt::AlignLeft,
               QString("node %1  %2  %3 h").arg(i + 1).arg(QString::fromStdString(n.node_type)).arg(n.up.count()));
    for (std::size_t g = 0; g < n.gpus.size(); ++g) {
      const QRect box(kLabel + static_cast<int>(g) * (kBox + kGap), y, kBox, kRow - 8);
      double x = box.left();
      for (const auto& pod : n.pods) {
        if (std::find(pod.gpus.begin(), pod.gpus.end(), static_cast<int>(g)) == pod.gpus.end()) continue;
        const double w = std::min(1.0, pod.gpu_share) * box.width();
        p.fillRect(QRectF(x, box.top(), std::min(w, box.right() - x + 1), box.height()), workload_colour(colour[pod.workload]));
        p.setPen(Qt::white);
        p.drawLine(QPointF(x, box.top()), QPointF(x, box.bottom()));
        x += w;
      }
      p.setPen(text);
      p.drawRect(box);
    }
  }
  y += kRow / 2;
  for (std::size_t i = 0; i < plan.workloads.size(); ++i, y += 20) {
    p.fillRect(QRect(8, y + 3, 14, 14), workload_colour(static_cast<int>(i)));
    p.setPen(text);
    p.drawText(QPoint(28, y + 15), QString::fromStdString(plan.workloads[i].name + ": " + plan.workloads[i].demand + ", " +
                                                          plan.workloads[i].hours_text));
  }
}

QImage packing_image(const scenarios::ClusterPlan& plan) {
  ensure_application();
  QImage image(packing_size(plan), QImage::Format_ARGB32);
  image.fill(Qt::white);
  QPainter p(&image);
  p.setRenderHint(QPainter::Antialiasing);
  paint_packing(p, plan, Qt::black, Qt::white);
  return image;
}

}  // namespace capsim::render
