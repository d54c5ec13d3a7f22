#include "cluster_view.hpp"

#include <yaml-cpp/yaml.h>

#include <QChart>
#include <QChartView>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineSeries>
#include <QPainter>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QValueAxis>
#include <QVBoxLayout>
#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>

namespace capsim::gui {
namespace {

constexpr int kRow = 34, kBox = 96, kLabel = 210, kGap = 6;

QColor workload_colour(int index) {
  static const QColor colours[] = {QColor("#4e79a7"), QColor("#f28e2b"), QColor("#59a14f"), QColor("#e15759"),
                                   QColor("#76b7b2"), QColor("#edc948"), QColor("#b07aa1"), QColor("#ff9da7")};
  return colours[index % 8];
}

// A pod's share of one GPU: 1 for a whole GPU, the MIG slice's part (1g = 1/7), or the fraction.
double share_of_gpu(const std::string& share) {
  if (share.rfind("MIG ", 0) == 0) return std::max(1, std::atoi(share.c_str() + 4)) / 7.0;
  const auto space = share.rfind(' ');
  if ((share.rfind("MPS", 0) == 0 || share.rfind("time-sliced", 0) == 0) && space != std::string::npos)
    return std::atof(share.c_str() + space + 1);
  return 1.0;
}

}  // namespace

bool is_cluster_scenario(const QString& text) {
  try {
    const YAML::Node root = YAML::Load(text.toStdString());
    return root.IsMap() && root["workloads"] && !root["workload"];
  } catch (const YAML::Exception&) {
    return false;
  }
}

PackingPicture::PackingPicture(QWidget* parent) : QWidget(parent) { setObjectName("packingPicture"); }

void PackingPicture::set_plan(const scenarios::ClusterPlan* plan) {
  plan_ = plan;
  updateGeometry();
  update();
}

QSize PackingPicture::sizeHint() const {
  if (!plan_) return {400, 200};
  int gpus = 1;
  for (const auto& n : plan_->packing.nodes) gpus = std::max(gpus, static_cast<int>(n.gpus.size()));
  const int workloads = static_cast<int>(plan_->workloads.size());
  return {kLabel + gpus * (kBox + kGap) + 20, (static_cast<int>(plan_->packing.nodes.size()) + 2) * kRow + workloads * 20};
}

QString PackingPicture::gpu_label(int node, int gpu) const {
  if (!plan_ || node < 0 || node >= static_cast<int>(plan_->packing.nodes.size())) return {};
  QStringList parts;
  for (const auto& pod : plan_->packing.nodes[static_cast<std::size_t>(node)].pods)
    if (std::find(pod.gpus.begin(), pod.gpus.end(), gpu) != pod.gpus.end())
      parts << QString::fromStdString(pod.workload + "#" + std::to_string(pod.index)) + " " +
                   QString::number(share_of_gpu(pod.share), 'g', 3);
  return parts.join(", ");
}

void PackingPicture::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  if (!plan_) {
    p.drawText(rect(), Qt::AlignCenter, "Open a cluster scenario to see its packing");
    return;
  }
  std::map<std::string, int> colour;
  for (std::size_t i = 0; i < plan_->workloads.size(); ++i) colour[plan_->workloads[i].name] = static_cast<int>(i);
  int y = 8;
  for (std::size_t i = 0; i < plan_->packing.nodes.size(); ++i, y += kRow) {
    const auto& n = plan_->packing.nodes[i];
    p.setPen(palette().text().color());
    p.drawText(QRect(8, y, kLabel - 12, kRow - 8), Qt::AlignVCenter | Qt::AlignLeft,
               QString("node %1  %2  %3 h").arg(i + 1).arg(QString::fromStdString(n.node_type)).arg(n.up.count()));
    for (std::size_t g = 0; g < n.gpus.size(); ++g) {
      const QRect box(kLabel + static_cast<int>(g) * (kBox + kGap), y, kBox, kRow - 8);
      double x = box.left();
      for (const auto& pod : n.pods) {
        if (std::find(pod.gpus.begin(), pod.gpus.end(), static_cast<int>(g)) == pod.gpus.end()) continue;
        const double w = std::min(1.0, share_of_gpu(pod.share)) * box.width();
        p.fillRect(QRectF(x, box.top(), std::min(w, box.right() - x + 1), box.height()), workload_colour(colour[pod.workload]));
        p.setPen(Qt::white);
        p.drawLine(QPointF(x, box.top()), QPointF(x, box.bottom()));
        x += w;
      }
      p.setPen(palette().text().color());
      p.drawRect(box);
    }
  }
  y += kRow / 2;
  for (std::size_t i = 0; i < plan_->workloads.size(); ++i, y += 20) {
    p.fillRect(QRect(8, y + 3, 14, 14), workload_colour(static_cast<int>(i)));
    p.setPen(palette().text().color());
    p.drawText(QPoint(28, y + 15), QString::fromStdString(plan_->workloads[i].name + ": " + plan_->workloads[i].demand + ", " +
                                                          plan_->workloads[i].hours_text));
  }
}

ClusterView::ClusterView(std::shared_ptr<const hardware::Catalog> catalog, QWidget* parent)
    : QWidget(parent), catalog_(std::move(catalog)) {
  title_ = new QLabel("No cluster scenario yet: open one (scenarios/clusters/*.yaml)");
  message_ = new QLabel;
  message_->setObjectName("clusterMessage");
  message_->setStyleSheet("color: #b00000;");
  message_->setWordWrap(true);
  auto* open = new QPushButton("Open cluster...");
  open->setObjectName("clusterOpen");
  connect(open, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, "Open a cluster scenario", QString(), "Cluster scenarios (*.yaml *.yml)");
    if (!path.isEmpty()) load(path);
  });
  picture_ = new PackingPicture;
  auto* scroll = new QScrollArea;
  scroll->setWidget(picture_);
  scroll->setWidgetResizable(true);
  timeline_ = new QChartView;
  timeline_->setObjectName("clusterTimeline");
  timeline_->setRenderHint(QPainter::Antialiasing);
  text_ = new QPlainTextEdit;
  text_->setObjectName("clusterText");
  text_->setReadOnly(true);
  text_->setLineWrapMode(QPlainTextEdit::NoWrap);
  text_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  auto* top = new QSplitter(Qt::Horizontal);
  top->addWidget(scroll);
  top->addWidget(timeline_);
  top->setStretchFactor(0, 3);
  top->setStretchFactor(1, 2);
  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(top);
  split->addWidget(text_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  auto* bar = new QHBoxLayout;
  bar->addWidget(title_, 1);
  bar->addWidget(open);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(bar);
  layout->addWidget(message_);
  layout->addWidget(split, 1);
}

bool ClusterView::load(const QString& path) {
  auto scenario = scenarios::load_cluster_file(path.toStdString(), *catalog_);
  auto plan = scenario ? scenarios::plan_cluster(*scenario, *catalog_) : Result<scenarios::ClusterPlan>(scenario.errors());
  if (!plan) {
    message_->setText(QString::fromStdString(format_diagnostics(plan.errors())));
    return false;
  }
  message_->clear();
  plan_ = std::move(*plan);
  title_->setText(QString("<b>%1</b>: %2").arg(QString::fromStdString(plan_->name), QFileInfo(path).fileName()));
  picture_->set_plan(&*plan_);
  text_->setPlainText(QString::fromStdString(scenarios::cluster_plan_text(*plan_)));

  // Nodes up per hour for each node type, as steps over the week.
  auto* chart = new QChart;
  chart->setTitle("Nodes up per hour, Monday 00:00 to Sunday 24:00");
  std::map<std::string, std::array<int, models::kHoursPerWeek>> up;
  for (const auto& n : plan_->packing.nodes) {
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
  int most = 1;
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
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
  y->setRange(0, most + 1);
  y->setTickCount(most + 2);
  y->setLabelFormat("%d");
  QChart* old = timeline_->chart();
  timeline_->setChart(chart);
  delete old;
  return true;
}

QChart* ClusterView::timeline_chart() const { return timeline_->chart(); }
QString ClusterView::plan_text() const { return text_->toPlainText(); }
QString ClusterView::message() const { return message_->text(); }

}  // namespace capsim::gui
