// A cluster scenario in the window: the node pools' packing as a picture (each node a row,
// each GPU a box, each pod a coloured share of its GPU), the week's timeline (nodes up per
// hour, per node type) and the plan's text, which is what `capsim plan` prints.
#pragma once

#include <QWidget>
#include <memory>
#include <optional>

#include "capsim/hardware/catalog.hpp"
#include "capsim/scenarios/cluster.hpp"

class QChartView;
class QLabel;
class QPlainTextEdit;
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

 private:
  std::shared_ptr<const hardware::Catalog> catalog_;
  std::optional<scenarios::ClusterPlan> plan_;
  QLabel* title_;
  QLabel* message_;
  PackingPicture* picture_;
  QChartView* timeline_;
  QPlainTextEdit* text_;
};

// True when a YAML text is a cluster scenario (its top level has workloads:).
bool is_cluster_scenario(const QString& text);

}  // namespace capsim::gui
