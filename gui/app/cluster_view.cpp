#include "cluster_view.hpp"

#include <yaml-cpp/yaml.h>

#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QHeaderView>
#include <QLegend>
#include <QListWidget>
#include <QSpinBox>
#include <QTableWidget>
#include <chrono>
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

#include "capsim/core/files.hpp"
#include "capsim/scenarios/cluster_export.hpp"
#include "capsim/scenarios/table.hpp"
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
  cost_ = new QLabel;
  cost_->setObjectName("clusterWeeklyCost");
  cost_->setWordWrap(true);
  workloads_ = new QTableWidget(0, 5);
  workloads_->setObjectName("clusterWorkloads");
  workloads_->setHorizontalHeaderLabels({"workload", "kind", "hours", "replicas / GPUs", "GPU"});
  workloads_->verticalHeader()->setVisible(false);
  workloads_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  workloads_->horizontalHeader()->setStretchLastSection(true);
  node_types_ = new QListWidget;
  node_types_->setObjectName("clusterNodeTypes");
  connect(node_types_, &QListWidget::itemChanged, this, [this](QListWidgetItem* item) {
    if (!filling_) set_node_type_allowed(item->text(), item->checkState() == Qt::Checked);
  });
  auto* form = new QWidget;
  form->setObjectName("clusterForm");
  auto* fl = new QVBoxLayout(form);
  fl->setContentsMargins(0, 0, 0, 0);
  fl->addWidget(new QLabel("<b>Workloads</b> (what-if: hours, replicas or GPUs, GPU type)"));
  fl->addWidget(workloads_, 3);
  fl->addWidget(new QLabel("<b>Node types the pools may use</b>"));
  fl->addWidget(node_types_, 1);
  fl->addWidget(cost_);

  auto* right = new QSplitter(Qt::Vertical);
  right->addWidget(scroll);
  right->addWidget(timeline_);
  right->addWidget(text_);
  right->setStretchFactor(0, 3);
  right->setStretchFactor(1, 2);
  right->setStretchFactor(2, 2);
  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(form);
  split->addWidget(right);
  split->setStretchFactor(0, 2);
  split->setStretchFactor(1, 3);
  split->setSizes({560, 900});  // the form shows its five columns without scrolling
  auto* bar = new QHBoxLayout;
  bar->addWidget(title_, 1);
  bar->addWidget(open);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(bar);
  layout->addWidget(message_);
  layout->addWidget(split, 1);
}

std::optional<models::WeekHours> week_hours_named(const QString& name, QString* text) {
  auto say = [&](const char* t) {
    if (text != nullptr) *text = t;
  };
  if (name == "always") return say("always"), models::WeekHours::always();
  if (name == "business") return say("Mon-Fri 09-18"), models::WeekHours::business_days(9, 18);
  if (name == "extended") return say("Mon-Fri 08-20"), models::WeekHours::business_days(8, 20);
  if (name == "weekend") return say("Sat-Sun 00-24"), models::WeekHours::burst(5 * 24, 48);
  return std::nullopt;
}

bool ClusterView::load(const QString& path) {
  auto scenario = scenarios::load_cluster_file(path.toStdString(), *catalog_);
  if (!scenario) {
    message_->setText(QString::fromStdString(format_diagnostics(scenario.errors())));
    return false;
  }
  file_scenario_ = *scenario;
  scenario_ = std::move(scenario).value();
  plan_.reset();
  picture_->set_plan(nullptr);
  title_->setText(QString("<b>%1</b>: %2").arg(QString::fromStdString(scenario_->name), QFileInfo(path).fileName()));
  fill_form();
  return replan();
}

void ClusterView::fill_form() {
  filling_ = true;
  const auto& ws = scenario_->workloads;
  workloads_->setRowCount(static_cast<int>(ws.size()));
  QStringList gpus{"(as in the file)"};
  for (const auto& id : catalog_->ids(hardware::EntityKind::gpu)) gpus << QString::fromStdString(id);
  for (int i = 0; i < static_cast<int>(ws.size()); ++i) {
    const auto& w = ws[static_cast<std::size_t>(i)];
    const bool stated = w.scenario.empty();
    auto* name = new QTableWidgetItem(QString::fromStdString(w.name));
    name->setToolTip(QString::fromStdString(w.name + (stated ? " (stated)" : ": " + w.scenario.filename().string())));
    workloads_->setItem(i, 0, name);
    workloads_->setItem(i, 1, new QTableWidgetItem(w.is_job ? "job" : "service"));
    auto* hours = new QComboBox;
    hours->setObjectName(QString("clusterHours%1").arg(i));
    hours->addItem(QString::fromStdString(w.hours_text) + " (file)", QString());
    for (const char* h : {"always", "business", "extended", "weekend"}) {
      QString text;
      week_hours_named(h, &text);
      hours->addItem(QString("%1 (%2)").arg(h, text), QString(h));
    }
    connect(hours, &QComboBox::currentIndexChanged, this, [this, i, hours] {
      if (!filling_) set_workload_hours(i, hours->currentData().toString());
    });
    workloads_->setCellWidget(i, 2, hours);
    auto* count = new QSpinBox;
    count->setObjectName(QString("clusterCount%1").arg(i));
    count->setRange(1, 4096);
    count->setValue(w.is_job ? std::max(w.gpus, 1) : std::max(w.replicas, 1));
    count->setEnabled(stated);
    count->setToolTip(stated ? (w.is_job ? "GPUs of the gang" : "replicas") : "sized from its scenario");
    connect(count, &QSpinBox::valueChanged, this, [this, i](int v) {
      if (!filling_) set_workload_count(i, v);
    });
    workloads_->setCellWidget(i, 3, count);
    auto* gpu = new QComboBox;
    gpu->setObjectName(QString("clusterGpu%1").arg(i));
    gpu->addItems(gpus);
    gpu->setEnabled(stated);
    gpu->setToolTip(stated ? QString::fromStdString("as in the file: " + w.gpu) : "sized from its scenario");
    connect(gpu, &QComboBox::currentIndexChanged, this, [this, i, gpu] {
      if (!filling_) set_workload_gpu(i, gpu->currentIndex() == 0 ? QString() : gpu->currentText());
    });
    workloads_->setCellWidget(i, 4, gpu);
  }
  workloads_->resizeColumnsToContents();
  node_types_->clear();
  for (const auto& id : file_scenario_->node_types) {
    auto* item = new QListWidgetItem(QString::fromStdString(id), node_types_);
    item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
    item->setCheckState(Qt::Checked);
    item->setToolTip(QString::fromStdString(id));
  }
  filling_ = false;
}

bool ClusterView::set_workload_hours(int workload, const QString& hours) {
  if (!scenario_ || workload < 0 || workload >= static_cast<int>(scenario_->workloads.size())) return false;
  auto& w = scenario_->workloads[static_cast<std::size_t>(workload)];
  const auto& file = file_scenario_->workloads[static_cast<std::size_t>(workload)];
  if (hours.isEmpty()) {
    w.hours = file.hours;
    w.hours_text = file.hours_text;
  } else {
    QString text;
    auto h = week_hours_named(hours, &text);
    if (!h) {
      message_->setText("hours: expected always, business, extended or weekend, got '" + hours + "'");
      return false;
    }
    w.hours = *h;
    w.hours_text = text.toStdString();
  }
  return replan();
}

bool ClusterView::set_workload_count(int workload, int count) {
  if (!scenario_ || workload < 0 || workload >= static_cast<int>(scenario_->workloads.size())) return false;
  auto& w = scenario_->workloads[static_cast<std::size_t>(workload)];
  if (!w.scenario.empty() || count < 1) {
    message_->setText(QString::fromStdString(w.name) + (count < 1 ? ": the count must be at least 1"
                                                                   : ": sized from its scenario; change that scenario instead"));
    return false;
  }
  if (w.is_job) w.gpus = count;
  else w.replicas = count;
  return replan();
}

bool ClusterView::set_workload_gpu(int workload, const QString& gpu) {
  if (!scenario_ || workload < 0 || workload >= static_cast<int>(scenario_->workloads.size())) return false;
  auto& w = scenario_->workloads[static_cast<std::size_t>(workload)];
  if (!w.scenario.empty()) {
    message_->setText(QString::fromStdString(w.name) + ": sized from its scenario; change that scenario instead");
    return false;
  }
  if (gpu.isEmpty()) {
    w.gpu = file_scenario_->workloads[static_cast<std::size_t>(workload)].gpu;
  } else if (catalog_->find_gpu(gpu.toStdString()) == nullptr) {
    auto found = catalog_->get(hardware::EntityKind::gpu, gpu.toStdString());
    message_->setText(QString::fromStdString(format_diagnostics(found.errors())));
    return false;
  } else {
    w.gpu = gpu.toStdString();
  }
  return replan();
}

bool ClusterView::set_node_type_allowed(const QString& node_type, bool allowed) {
  if (!scenario_) return false;
  const std::string id = node_type.toStdString();
  auto& types = scenario_->node_types;
  auto& where = scenario_->node_type_where;
  const auto it = std::find(types.begin(), types.end(), id);
  if (allowed && it == types.end()) {
    const auto& all = file_scenario_->node_types;
    const auto f = std::find(all.begin(), all.end(), id);
    if (f == all.end()) return false;
    types.push_back(id);
    where.push_back(file_scenario_->node_type_where[static_cast<std::size_t>(f - all.begin())]);
  } else if (!allowed && it != types.end()) {
    const auto i = it - types.begin();
    types.erase(it);
    if (i < static_cast<std::ptrdiff_t>(where.size())) where.erase(where.begin() + i);
  }
  if (types.empty()) {
    message_->setText("at least one node type: the pools need somewhere to run");
    plan_.reset();
    picture_->set_plan(nullptr);
    emit replanned(false);
    return false;
  }
  return replan();
}

bool ClusterView::replan() {
  const auto start = std::chrono::steady_clock::now();
  auto plan = scenarios::plan_cluster(*scenario_, *catalog_);
  plan_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!plan) {
    message_->setText(QString::fromStdString(format_diagnostics(plan.errors())));
    plan_.reset();
    picture_->set_plan(nullptr);
    cost_->setText("<span style='color:#b00000'>No plan: see the problem above.</span>");
    emit replanned(false);
    return false;
  }
  message_->clear();
  plan_ = std::move(*plan);
  show_plan();
  emit replanned(true);
  return true;
}

void ClusterView::show_plan() {
  picture_->set_plan(&*plan_);
  text_->setPlainText(QString::fromStdString(scenarios::cluster_plan_text(*plan_)));
  cost_->setText(QString("<b>Weekly cost</b>: %1 as packed (on demand), %2 with commitments where cheaper; %3 over the "
                         "horizon. Re-planned in %4 ms.")
                     .arg(QString::fromStdString(scenarios::human_count(plan_->weekly_cost.value()) + " USD"),
                          QString::fromStdString(scenarios::human_count(plan_->best_weekly_cost.value()) + " USD"),
                          QString::fromStdString(scenarios::human_count(plan_->horizon_cost.value()) + " USD"))
                     .arg(plan_seconds_ * 1e3, 0, 'f', 1));
  QChart* chart = render::cluster_timeline_chart(*plan_);
  QChart* old = timeline_->chart();
  timeline_->setChart(chart);
  delete old;
}

Status ClusterView::export_plan(const QString& target, const QString& path) const {
  if (!plan_) return {Diagnostic{{path.toStdString()}, "", "no cluster plan to export: open a cluster scenario", ""}};
  auto text = scenarios::cluster_export(*plan_, target.toStdString());
  if (!text) return text.errors();
  return write_file_atomically(path.toStdString(), *text);
}

QString ClusterView::weekly_cost_text() const { return cost_->text(); }

QChart* ClusterView::timeline_chart() const { return timeline_->chart(); }
QString ClusterView::plan_text() const { return text_->toPlainText(); }
QString ClusterView::message() const { return message_->text(); }

}  // namespace capsim::gui
