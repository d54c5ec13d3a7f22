// A cluster scenario in the window: its own form (each workload's hours, replicas and GPU
// type; the node types the pools may use) whose what-ifs re-plan live, the node pools'
// packing as a picture (each node a row, each GPU a box, each pod a coloured share of its
// GPU), the week's timeline (nodes up per hour, per node type), the weekly cost, and the
// plan's text, which is what `capsim plan` prints. The plan exports (k8s, Karpenter, GKE,
// Terraform) are the command line's.
#pragma once

#include <QWidget>
#include <memory>
#include <optional>

#include "capsim/hardware/catalog.hpp"
#include "capsim/scenarios/cluster.hpp"

class QChartView;
class QComboBox;
class QLabel;
class QListWidget;
class QPlainTextEdit;
class QSpinBox;
class QTableWidget;
QT_BEGIN_NAMESPACE
class QChart;
QT_END_NAMESPACE

namespace capsim::gui {

// The packing picture. Colours follow the plan's workload order.
class PackingPicture : public QWidget {
  Q_OBJECT

 public:
  explicit PackingPicture(QWidget* parent = nullptr);
  void set_plan(const scenarios::ClusterPlan* plan);
  QSize sizeHint() const override;
  // What a GPU box shows: "notebooks#0 0.25, notebooks#1 0.25" (for tests).
  QString gpu_label(int node, int gpu) const;

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  const scenarios::ClusterPlan* plan_ = nullptr;
};

class ClusterView : public QWidget {
  Q_OBJECT

 public:
  explicit ClusterView(std::shared_ptr<const hardware::Catalog> catalog, QWidget* parent = nullptr);

  // Loads and plans a cluster scenario; false, with the problems shown in the view, when it
  // does not load or plan.
  bool load(const QString& path);
  const std::optional<scenarios::ClusterPlan>& plan() const { return plan_; }
  QChart* timeline_chart() const;
  PackingPicture* picture() const { return picture_; }
  QString plan_text() const;
  QString message() const;
  QString weekly_cost_text() const;

  // The what-ifs, as the form sets them (tests drive these or the form's widgets). Each
  // re-plans; false, with the problem shown, when the changed cluster does not plan.
  // `hours`: "always", "business", "extended" (Mon-Fri 08-20), "weekend" or "" (as in the file).
  bool set_workload_hours(int workload, const QString& hours);
  bool set_workload_count(int workload, int count);  // service replicas, or a job's GPUs
  bool set_workload_gpu(int workload, const QString& gpu);  // "" = as in the file
  bool set_node_type_allowed(const QString& node_type, bool allowed);
  // Writes the plan's export (`target`: k8s, karpenter, gke, terraform) to `path`, atomically.
  Status export_plan(const QString& target, const QString& path) const;
  QTableWidget* workload_table() const { return workloads_; }
  QListWidget* node_type_list() const { return node_types_; }
  double last_plan_seconds() const { return plan_seconds_; }

 signals:
  void replanned(bool ok);

 private:
  bool replan();
  void fill_form();
  void show_plan();

  std::shared_ptr<const hardware::Catalog> catalog_;
  std::optional<scenarios::ClusterScenario> file_scenario_;  // as loaded
  std::optional<scenarios::ClusterScenario> scenario_;       // with the what-ifs
  std::optional<scenarios::ClusterPlan> plan_;
  bool filling_ = false;
  double plan_seconds_ = 0;
  QLabel* title_;
  QLabel* message_;
  QLabel* cost_;
  QTableWidget* workloads_;
  QListWidget* node_types_;
  PackingPicture* picture_;
  QChartView* timeline_;
  QPlainTextEdit* text_;
};

// The hours a what-if offers, by name ("always", "business", "extended", "weekend").
std::optional<models::WeekHours> week_hours_named(const QString& name, QString* text = nullptr);

// True when a YAML text is a cluster scenario (its top level has workloads:).
bool is_cluster_scenario(const QString& text);

}  // namespace capsim::gui
