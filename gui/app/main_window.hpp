// The capsim desktop window: the scenario editor (left dock), the what-if controls and key
// results (right dock), and the views in the middle: sizing (frontier, memory), cost,
// serving (utilization, latency against the SLO), simulation, catalog browser, comparison.
// The analytic results are recomputed on every change in the window's thread (fast: see
// gui/bench); the full run (simulations) goes to a background thread.
#pragma once

#include <QMainWindow>
#include <memory>
#include <optional>

#include "capsim/scenarios/workspace.hpp"
#include "whatif.hpp"

class QChartView;
class QDockWidget;
class QLabel;
class QMenu;
class QProgressBar;
class QPushButton;
class QTabWidget;
class QTableWidget;
class QPlainTextEdit;
QT_BEGIN_NAMESPACE
class QChart;
QT_END_NAMESPACE

namespace capsim::gui {

class CatalogBrowser;
class ClusterView;
class CompareView;
class ScenarioEditor;
class SimulationRunner;
class WhatIfPanel;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  // The workspace's catalog is shared with the background runs; the store stays here.
  MainWindow(scenarios::Workspace workspace, QWidget* parent = nullptr);
  ~MainWindow() override;

  // Opens a scenario file; problems are shown in the editor, not in a dialog. With
  // `run_simulation` the full run starts in the background. A cluster scenario (top-level
  // workloads:) opens in the cluster view instead, its problems shown there.
  bool open_file(const QString& path, bool run_simulation = true);
  // Saves (atomically) to the current file, or to `path`.
  bool save_file(const QString& path = {});
  bool export_report(const QString& path);
  void run_simulation();
  void cancel_simulation();
  // Shows the tab whose name starts with `name` (case-insensitive): sizing, cost, serving,
  // simulation, catalog, compare, cluster.
  bool show_tab(const QString& name);
  QString current_tab() const;  // the tab the window shows

  // For tests and screenshots.
  ScenarioEditor* editor() const { return editor_; }
  WhatIfPanel* what_if_panel() const { return what_if_; }
  CatalogBrowser* catalog_browser() const { return catalog_browser_; }
  CompareView* compare_view() const { return compare_; }
  ClusterView* cluster_view() const { return cluster_; }
  SimulationRunner* runner() const { return runner_; }
  const std::optional<Analysis>& analysis() const { return analysis_; }
  const std::shared_ptr<const scenarios::RunResult>& full_run() const { return full_run_; }
  QChart* frontier_chart() const;
  QChart* memory_chart() const;
  QChart* cost_chart() const;
  QChart* serving_chart() const;
  QChart* latency_chart() const;
  QChart* throughput_chart() const;
  QChart* timeline_chart() const;  // serving: running sequences and KV cache over the run
  QChart* simulation_chart() const;
  QString status_text() const;
  // True when the Simulation view shows a run of other values than the current ones
  // (greyed, "stale: Ctrl+R").
  bool simulation_stale() const { return full_run_stale_; }
  // Writes the cluster plan's export (k8s, karpenter, gke, terraform); File > Export plan.
  bool export_cluster_plan(const QString& target, const QString& path);
  QString current_file() const { return file_; }

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  void build_actions();
  void recompute_now();
  void show_analysis();
  void show_full_run();
  void set_chart(QChartView* view, QChart* chart);
  void add_recent(const QString& path);
  void rebuild_recent_menu();
  void update_title();
  void hook_frontier_hover();
  void show_placeholder(QChartView* view, const QString& text);
  void show_serving();
  void show_plan_status(const QString& prefix = {});
  void set_cluster_mode(bool cluster);

  scenarios::Workspace workspace_;
  std::shared_ptr<const hardware::Catalog> catalog_;
  ScenarioEditor* editor_;
  WhatIfPanel* what_if_;
  QTableWidget* results_;
  QTabWidget* tabs_;
  int wanted_tab_ = 0;          // the view the user chose last; a plan it does not apply to moves away only for now
  bool placing_tabs_ = false;   // the window, not the user, is changing the shown tab
  QChartView* frontier_view_;
  QChartView* memory_view_;
  QTableWidget* fastest_table_;
  QChartView* cost_view_;
  QTableWidget* cost_table_;
  QChartView* serving_view_;
  QChartView* latency_view_;
  QChartView* throughput_view_;
  QChartView* timeline_view_;
  QPlainTextEdit* serving_text_;
  QChartView* simulation_view_;
  QPlainTextEdit* run_summary_;
  CatalogBrowser* catalog_browser_;
  CompareView* compare_;
  ClusterView* cluster_;
  SimulationRunner* runner_;
  QProgressBar* progress_;
  QPushButton* cancel_button_;
  QLabel* status_;
  QMenu* recent_menu_;
  QMenu* export_plan_menu_;
  QDockWidget* editor_dock_;
  QDockWidget* whatif_dock_;
  ServingCurveCache curve_cache_;
  WhatIf run_what_if_;       // the values the background run started with
  QString run_text_;         // and the scenario text
  QString file_;
  bool dirty_ = false;
  std::optional<Analysis> analysis_;
  std::shared_ptr<const scenarios::RunResult> full_run_;
  bool full_run_stale_ = true;
  bool pending_run_ = false;
};

}  // namespace capsim::gui
