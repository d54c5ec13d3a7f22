#include "cluster_view.hpp"

#include <yaml-cpp/yaml.h>

#include <QChart>
#include <QChartView>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QVBoxLayout>
#include <algorithm>
#include <map>

#include "chart_builders.hpp"

namespace capsim::gui {

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

QSize PackingPicture::sizeHint() const { return plan_ ? render::packing_size(*plan_) : QSize(400, 200); }

QString PackingPicture::gpu_label(int node, int gpu) const {
  if (!plan_ || node < 0 || node >= static_cast<int>(plan_->packing.nodes.size())) return {};
  QStringList parts;
  for (const auto& pod : plan_->packing.nodes[static_cast<std::size_t>(node)].pods)
    if (std::find(pod.gpus.begin(), pod.gpus.end(), gpu) != pod.gpus.end())
      parts << QString::fromStdString(pod.workload + "#" + std::to_string(pod.index)) + " " +
                   QString::number(pod.gpu_share, 'g', 3);
  return parts.join(", ");
}

void PackingPicture::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  if (!plan_) {
    p.drawText(rect(), Qt::AlignCenter, "Open a cluster scenario to see its packing");
    return;
  }
  render::paint_packing(p, *plan_, palette().text().color(), palette().base().color());
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

  QChart* chart = render::cluster_timeline_chart(*plan_);
  QChart* old = timeline_->chart();
  timeline_->setChart(chart);
  delete old;
  return true;
}

QChart* ClusterView::timeline_chart() const { return timeline_->chart(); }
QString ClusterView::plan_text() const { return text_->toPlainText(); }
QString ClusterView::message() const { return message_->text(); }

}  // namespace capsim::gui
