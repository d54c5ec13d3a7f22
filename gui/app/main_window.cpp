#include "main_window.hpp"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QCursor>
#include <QDateTime>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QMenuBar>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QRegularExpression>
#include <QPushButton>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableWidget>
#include <QToolTip>
#include <QtCharts/QBarCategoryAxis>
#include <QtCharts/QBarSet>
#include <QtCharts/QStackedBarSeries>
#include <QVBoxLayout>
#include <QtCharts/QChartView>
#include <QtCharts/QAbstractAxis>
#include <QtCharts/QXYSeries>
#include <cmath>

#include "capsim/core/files.hpp"
#include "capsim/render/report.hpp"
#include "capsim/scenarios/cost_report.hpp"
#include "capsim/scenarios/report.hpp"
#include "capsim/scenarios/serving_report.hpp"
#include "capsim/scenarios/simulation.hpp"
#include "capsim/scenarios/sizing.hpp"
#include "catalog_browser.hpp"
#include "chart_builders.hpp"
#include "cluster_view.hpp"
#include "compare_view.hpp"
#include "scenario_editor.hpp"
#include "serving_charts.hpp"
#include "simulation_runner.hpp"
#include "whatif_panel.hpp"

namespace capsim::gui {
namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

QChartView* new_chart_view(const char* name) {
  auto* view = new QChartView;
  view->setObjectName(name);
  view->setRenderHint(QPainter::Antialiasing);
  view->setMinimumSize(320, 220);
  return view;
}

QPlainTextEdit* new_text_view() {
  auto* t = new QPlainTextEdit;
  t->setReadOnly(true);
  t->setLineWrapMode(QPlainTextEdit::NoWrap);
  QFont mono("Monospace");
  mono.setStyleHint(QFont::TypeWriter);
  t->setFont(mono);
  return t;
}

void fill_table(QTableWidget* w, const std::vector<scenarios::Table>& tables) {
  w->clear();
  int rows = 0;
  std::size_t cols = 0;
  for (const auto& t : tables) {
    rows += static_cast<int>(t.rows.size()) + 1;
    cols = std::max(cols, t.columns.size());
  }
  w->setRowCount(std::max(rows - 1, 0));
  w->setColumnCount(static_cast<int>(cols));
  w->horizontalHeader()->setVisible(false);
  int r = 0;
  for (const auto& t : tables) {
    if (r > 0 || &t != &tables.front()) {
      if (r >= w->rowCount()) w->setRowCount(r + 1);
    }
    // The header row of each table, in bold.
    if (r >= w->rowCount()) w->setRowCount(r + 1);
    for (std::size_t c = 0; c < t.columns.size(); ++c) {
      auto* item = new QTableWidgetItem(q(t.columns[c]));
      QFont f = item->font();
      f.setBold(true);
      item->setFont(f);
      item->setBackground(QColor(235, 238, 245));
      w->setItem(r, static_cast<int>(c), item);
    }
    ++r;
    for (const auto& row : t.rows) {
      if (r >= w->rowCount()) w->setRowCount(r + 1);
      for (std::size_t c = 0; c < row.size(); ++c) {
        auto* item = new QTableWidgetItem(q(row[c].text));
        item->setToolTip(q(row[c].text));
        if (c < t.right_align.size() && t.right_align[c]) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        w->setItem(r, static_cast<int>(c), item);
      }
      ++r;
    }
  }
  w->setRowCount(r);
  w->resizeColumnsToContents();
  for (int c = 0; c < w->columnCount(); ++c) w->setColumnWidth(c, std::min(w->columnWidth(c), 240));
}

QTableWidget* new_table(const char* name) {
  auto* t = new QTableWidget;
  t->setObjectName(name);
  t->setEditTriggers(QAbstractItemView::NoEditTriggers);
  t->verticalHeader()->setVisible(false);
  t->setAlternatingRowColors(true);
  return t;
}

}  // namespace

MainWindow::MainWindow(scenarios::Workspace workspace, QWidget* parent)
    : QMainWindow(parent), workspace_(std::move(workspace)), catalog_(workspace_.catalog) {
  setObjectName("capsimMainWindow");
  resize(1560, 960);
  editor_ = new ScenarioEditor(catalog_);
  what_if_ = new WhatIfPanel(*catalog_);
  results_ = new_table("keyResults");
  results_->setColumnCount(2);
  results_->setWordWrap(true);

  // Sizing: the frontier and memory charts side by side, the fastest per node type below.
  frontier_view_ = new_chart_view("frontierChart");
  memory_view_ = new_chart_view("memoryChart");
  fastest_table_ = new_table("fastestTable");
  // Full width for each chart: their legends and category labels need it.
  auto* sizing = new QSplitter(Qt::Vertical);
  sizing->addWidget(frontier_view_);
  sizing->addWidget(memory_view_);
  sizing->addWidget(fastest_table_);
  sizing->setStretchFactor(0, 5);
  sizing->setStretchFactor(1, 4);
  sizing->setStretchFactor(2, 2);

  cost_view_ = new_chart_view("costChart");
  cost_table_ = new_table("costTable");
  auto* cost = new QSplitter(Qt::Vertical);
  cost->addWidget(cost_view_);
  cost->addWidget(cost_table_);
  cost->setStretchFactor(0, 3);
  cost->setStretchFactor(1, 2);

  // Serving, all from the current plan: throughput against the request rate full width (its
  // legend names the knee and the plan's rate); below it latency against the SLO and the
  // deployment's load (utilization per stage, or LLM load and KV cache); the plan's text last.
  serving_view_ = new_chart_view("servingChart");
  latency_view_ = new_chart_view("latencyChart");
  throughput_view_ = new_chart_view("throughputChart");
  timeline_view_ = new_chart_view("servingTimelineChart");
  serving_text_ = new_text_view();
  auto* serving_lower = new QSplitter(Qt::Horizontal);
  serving_lower->addWidget(latency_view_);
  serving_lower->addWidget(serving_view_);
  serving_lower->addWidget(timeline_view_);
  auto* serving = new QSplitter(Qt::Vertical);
  serving->addWidget(throughput_view_);
  serving->addWidget(serving_lower);
  serving->addWidget(serving_text_);
  serving->setStretchFactor(0, 4);
  serving->setStretchFactor(1, 4);
  serving->setStretchFactor(2, 1);

  simulation_view_ = new_chart_view("simulationChart");
  run_summary_ = new_text_view();
  auto* simulation = new QSplitter(Qt::Vertical);
  simulation->addWidget(simulation_view_);
  simulation->addWidget(run_summary_);

  catalog_browser_ = new CatalogBrowser(catalog_, q(workspace_.store.path().string()));
  compare_ = new CompareView(catalog_);
  cluster_ = new ClusterView(catalog_);
  tabs_ = new QTabWidget;
  connect(tabs_, &QTabWidget::currentChanged, this, [this](int i) {
    if (!placing_tabs_) wanted_tab_ = i;
  });
  tabs_->setObjectName("views");
  tabs_->addTab(sizing, "Sizing");
  tabs_->addTab(cost, "Cost");
  tabs_->addTab(serving, "Serving");
  tabs_->addTab(simulation, "Simulation");
  tabs_->addTab(catalog_browser_, "Catalog");
  tabs_->addTab(compare_, "Compare");
  tabs_->addTab(cluster_, "Cluster");
  setCentralWidget(tabs_);

  editor_dock_ = new QDockWidget("Scenario", this);
  auto* editor_dock = editor_dock_;
  editor_dock->setObjectName("scenarioDock");
  editor_dock->setWidget(editor_);
  addDockWidget(Qt::LeftDockWidgetArea, editor_dock);
  auto* right = new QWidget;
  auto* rl = new QVBoxLayout(right);
  rl->setContentsMargins(0, 0, 0, 0);
  rl->addWidget(what_if_);
  rl->addWidget(new QLabel("<b>Key results</b> (the plan, as every command shows it)"));
  rl->addWidget(results_, 1);
  whatif_dock_ = new QDockWidget("What-if", this);
  auto* whatif_dock = whatif_dock_;
  whatif_dock->setObjectName("whatIfDock");
  whatif_dock->setWidget(right);
  addDockWidget(Qt::RightDockWidgetArea, whatif_dock);
  resizeDocks({editor_dock, whatif_dock}, {340, 320}, Qt::Horizontal);

  runner_ = new SimulationRunner(catalog_, this);
  progress_ = new QProgressBar;
  progress_->setMaximumWidth(220);
  progress_->setVisible(false);
  cancel_button_ = new QPushButton("Cancel");
  cancel_button_->setVisible(false);
  status_ = new QLabel;
  statusBar()->addWidget(status_, 1);
  statusBar()->addPermanentWidget(progress_);
  statusBar()->addPermanentWidget(cancel_button_);

  build_actions();
  connect(editor_, &ScenarioEditor::scenario_changed, this, [this] {
    curve_cache_ = {};  // the text changed: the serving curve may have
    if (what_if_->what_if().empty()) what_if_->load(*editor_->scenario());
    recompute_now();
  });
  connect(editor_, &ScenarioEditor::modified, this, [this] {
    if (!dirty_) {
      dirty_ = true;
      update_title();
    }
  });
  connect(what_if_, &WhatIfPanel::changed, this, &MainWindow::recompute_now);
  connect(cluster_, &ClusterView::replanned, this, [this](bool ok) {
    export_plan_menu_->setEnabled(ok);
    status_->setStyleSheet(ok ? "" : "color: #b00000;");
    status_->setText(ok ? "Cluster plan: " + cluster_->weekly_cost_text().remove(QRegularExpression("<[^>]*>"))
                        : "Cluster plan: none - " + cluster_->message().split('\n').first());
  });
  connect(cancel_button_, &QPushButton::clicked, this, &MainWindow::cancel_simulation);
  connect(runner_, &SimulationRunner::progress, this, [this](double f, const QString& what) {
    if (f > 0 && f < 1) {
      progress_->setRange(0, 1000);
      progress_->setValue(static_cast<int>(f * 1000));
    } else {
      progress_->setRange(0, 0);  // busy: a simulation reports no fraction
    }
    status_->setText("Running the scenario: " + what + "...");
  });
  connect(runner_, &SimulationRunner::finished, this,
          [this](std::shared_ptr<const scenarios::RunResult> result, const QString& errors, double seconds) {
            progress_->setVisible(false);
            cancel_button_->setVisible(false);
            if (!result) {
              show_plan_status("The run failed: " + errors.split('\n').first() + ". ");
              run_summary_->setPlainText(errors);
            } else {
              full_run_ = std::move(result);
              // Only a run of the values on screen is current; one that started before a
              // what-if or an edit stays greyed ("stale: Ctrl+R").
              full_run_stale_ = !(run_what_if_ == what_if_->what_if() && run_text_ == editor_->text());
              show_plan_status(QString("Run finished in %1 s%2. ")
                                   .arg(seconds, 0, 'f', 2)
                                   .arg(full_run_stale_ ? " with earlier values (stale: Ctrl+R)" : ""));
              show_full_run();
            }
            if (pending_run_) {
              pending_run_ = false;
              run_simulation();
            }
          });
  connect(runner_, &SimulationRunner::cancelled, this, [this] {
    progress_->setVisible(false);
    cancel_button_->setVisible(false);
    show_plan_status("Run cancelled. ");
    pending_run_ = false;
  });

  show_placeholder(frontier_view_, "Open a training scenario (Ctrl+O) to see the time/cost frontier.");
  show_placeholder(memory_view_, "Memory per GPU appears with a training scenario.");
  show_placeholder(cost_view_, "The scenario has no cost: section.");
  show_placeholder(serving_view_, "Serving utilization appears with an inference deployment.");
  show_placeholder(latency_view_, "Latency against the SLO appears with an inference deployment.");
  show_placeholder(throughput_view_, "Throughput against the request rate appears with an inference deployment.");
  show_placeholder(timeline_view_, "The running batch and KV cache over time appear with an LLM serving plan.");
  show_placeholder(simulation_view_, "Station utilization appears after a run of a scenario with simulate:.");
  QSettings settings;
  restoreState(settings.value("window/state").toByteArray());
  update_title();
}

MainWindow::~MainWindow() = default;

void MainWindow::build_actions() {
  auto* file = menuBar()->addMenu("&File");
  auto* open = file->addAction("&Open...", this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, "Open scenario", QFileInfo(file_).path(), "Scenarios (*.yaml *.yml)");
    if (!path.isEmpty()) open_file(path);
  });
  open->setShortcut(QKeySequence::Open);
  recent_menu_ = file->addMenu("Open &recent");
  rebuild_recent_menu();
  auto* save = file->addAction("&Save", this, [this] { save_file(); });
  save->setShortcut(QKeySequence::Save);
  auto* save_as = file->addAction("Save &as...", this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, "Save scenario", file_, "Scenarios (*.yaml *.yml)");
    if (!path.isEmpty()) save_file(path);
  });
  save_as->setShortcut(QKeySequence("Ctrl+Shift+S"));
  auto* exp = file->addAction("&Export report...", this, [this] {
    const QString base = QFileInfo(file_).completeBaseName();
    const QString path = QFileDialog::getSaveFileName(this, "Export report", base + "-report.html",
                                                      "HTML (*.html);;PDF (*.pdf);;Markdown (*.md);;JSON (*.json)");
    if (!path.isEmpty()) export_report(path);
  });
  exp->setShortcut(QKeySequence("Ctrl+E"));
  // The cluster plan's exports, the same as `capsim plan --export TARGET`.
  export_plan_menu_ = file->addMenu("Export &plan");
  const std::pair<const char*, const char*> targets[] = {{"&Kubernetes (k8s)...", "k8s"},
                                                         {"K&arpenter...", "karpenter"},
                                                         {"&GKE...", "gke"},
                                                         {"&Terraform...", "terraform"}};
  for (const auto& [label, target] : targets) {
    const QString t = target;
    export_plan_menu_->addAction(label, this, [this, t] {
      const QString ext = t == "terraform" ? ".tf" : ".yaml";
      const QString name = cluster_->plan() ? q(cluster_->plan()->name) : QString("plan");
      const QString path = QFileDialog::getSaveFileName(this, "Export the plan (" + t + ")", name + "-" + t + ext);
      if (!path.isEmpty()) export_cluster_plan(t, path);
    });
  }
  export_plan_menu_->setEnabled(false);
  file->addSeparator();
  auto* quit = file->addAction("&Quit", this, &QWidget::close);
  quit->setShortcut(QKeySequence("Ctrl+Q"));
  auto* run = menuBar()->addMenu("&Run");
  auto* sim = run->addAction("Run &simulation", this, &MainWindow::run_simulation);
  sim->setShortcut(QKeySequence("Ctrl+R"));
  auto* cancel = run->addAction("&Cancel run", this, &MainWindow::cancel_simulation);
  cancel->setShortcut(QKeySequence("Esc"));
  auto* reset = run->addAction("&Reset what-if values", what_if_, &WhatIfPanel::reset);
  reset->setShortcut(QKeySequence("Ctrl+0"));
  auto* view = menuBar()->addMenu("&View");
  for (int i = 0; i < 6; ++i) {
    auto* a = view->addAction("", this, [this, i] { tabs_->setCurrentIndex(i); });
    a->setShortcut(QKeySequence(QString("Alt+%1").arg(i + 1)));
    connect(tabs_, &QTabWidget::currentChanged, a, [] {});
  }
  const QStringList names{"&Sizing", "&Cost", "Se&rving", "Si&mulation", "C&atalog", "Com&pare"};
  for (int i = 0; i < 6; ++i) view->actions()[i]->setText(names[i]);
}

void MainWindow::show_placeholder(QChartView* view, const QString& text) {
  auto* chart = new QChart;
  chart->setTitle(text);
  set_chart(view, chart);
}

void MainWindow::set_chart(QChartView* view, QChart* chart) {
  QChart* old = view->chart();
  view->setChart(chart);
  delete old;
}

bool MainWindow::open_file(const QString& path, bool run) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) {
    status_->setText("Cannot open " + path + ": " + f.errorString());
    return false;
  }
  const QString text = QString::fromUtf8(f.readAll());
  if (is_cluster_scenario(text)) {
    const bool ok = cluster_->load(path);
    set_cluster_mode(true);
    show_tab("cluster");
    add_recent(QFileInfo(path).absoluteFilePath());
    status_->setStyleSheet(ok ? "" : "color: #b00000;");
    status_->setText(ok ? "Cluster plan of " + path + ": " + cluster_->weekly_cost_text().remove(QRegularExpression("<[^>]*>"))
                        : "Cluster scenario with problems: " + path);
    export_plan_menu_->setEnabled(ok);
    return ok;
  }
  set_cluster_mode(false);
  file_ = QFileInfo(path).absoluteFilePath();
  full_run_.reset();
  full_run_stale_ = true;
  analysis_.reset();
  what_if_->blockSignals(true);
  editor_->set_text(text, file_);
  what_if_->blockSignals(false);
  if (editor_->scenario() && editor_->diagnostics().empty()) {
    what_if_->load(*editor_->scenario());
    recompute_now();
  }
  dirty_ = false;
  add_recent(file_);
  update_title();
  show_plan_status("Opened " + QFileInfo(file_).fileName() + ". ");
  if (run && editor_->scenario() && editor_->diagnostics().empty()) run_simulation();
  return editor_->diagnostics().empty();
}

bool MainWindow::save_file(const QString& path) {
  const QString target = path.isEmpty() ? file_ : path;
  if (target.isEmpty()) {
    const QString chosen = QFileDialog::getSaveFileName(this, "Save scenario", QString(), "Scenarios (*.yaml *.yml)");
    if (chosen.isEmpty()) return false;
    return save_file(chosen);
  }
  const Status st = write_file_atomically(target.toStdString(), editor_->text().toStdString());
  if (!st.empty()) {
    status_->setText("Not saved: " + q(format_diagnostics(st)));
    return false;
  }
  file_ = QFileInfo(target).absoluteFilePath();
  dirty_ = false;
  add_recent(file_);
  update_title();
  status_->setText("Saved " + file_);
  return true;
}

bool MainWindow::export_report(const QString& path) {
  if (!analysis_) {
    status_->setText("Nothing to export: the scenario does not load.");
    return false;
  }
  const bool use_full = full_run_ && !full_run_stale_;
  const scenarios::RunResult& run = use_full ? *full_run_ : analysis_->run;
  const Status st = render::write_report(run, *catalog_, path.toStdString());
  if (!st.empty()) {
    status_->setText("Not exported: " + q(format_diagnostics(st)));
    return false;
  }
  status_->setText("Exported " + path + (use_full ? "" : " (analytic results: run the scenario, Ctrl+R, for the simulations)"));
  return true;
}

void MainWindow::run_simulation() {
  if (!editor_->scenario()) {
    status_->setText("Nothing to run: the scenario does not load.");
    return;
  }
  if (runner_->running()) {
    runner_->cancel();
    pending_run_ = true;  // start again with the current values once the old run stops
    return;
  }
  if (!runner_->start(*editor_->scenario(), what_if_->what_if())) return;
  run_what_if_ = what_if_->what_if();
  run_text_ = editor_->text();
  progress_->setRange(0, 0);
  progress_->setVisible(true);
  cancel_button_->setVisible(true);
  status_->setText("Running the scenario...");
}

void MainWindow::cancel_simulation() {
  if (!runner_->running()) return;
  pending_run_ = false;
  runner_->cancel();
  status_->setText("Cancelling the run...");
}

bool MainWindow::show_tab(const QString& name) {
  for (int i = 0; i < tabs_->count(); ++i)
    if (tabs_->tabText(i).startsWith(name, Qt::CaseInsensitive)) {
      tabs_->setCurrentIndex(i);
      return true;
    }
  return false;
}

QString MainWindow::current_tab() const { return tabs_->tabText(tabs_->currentIndex()); }

void MainWindow::recompute_now() {
  if (!editor_->scenario()) return;
  auto a = recompute(*editor_->scenario(), what_if_->what_if(), *catalog_, &curve_cache_);
  if (!a) {
    what_if_->set_timing(0, false);
    // The values on screen have no plan: nothing may still say "passed".
    analysis_.reset();
    status_->setStyleSheet("color: #b00000;");
    status_->setText("Plan check: not computed - what-if " + q(a.errors().front().key_path + ": " + a.errors().front().message));
    return;
  }
  analysis_ = std::move(a).value();
  analysis_->run.started_at = QDateTime::currentDateTimeUtc().toString(Qt::ISODate).toStdString();
  full_run_stale_ = !(full_run_ && run_what_if_ == what_if_->what_if() && run_text_ == editor_->text());
  what_if_->set_timing(analysis_->seconds, true);
  show_analysis();
  show_plan_status();
}

void MainWindow::show_plan_status(const QString& prefix) {
  if (!analysis_) {
    status_->setStyleSheet("color: #b00000;");
    status_->setText(prefix + "Plan check: not computed (the scenario does not load)");
    return;
  }
  const bool failed = !analysis_->planned || !analysis_->run.passed();
  status_->setStyleSheet(failed ? "color: #b00000; font-weight: bold;" : "");
  status_->setText(prefix + q(plan_check_text(*analysis_)));
}

QString MainWindow::status_text() const { return status_->text(); }

void MainWindow::set_cluster_mode(bool cluster) {
  // A cluster has its own form in the Cluster view: the single-scenario form and what-ifs
  // would be empty controls that do nothing.
  editor_dock_->setVisible(!cluster);
  whatif_dock_->setVisible(!cluster);
  placing_tabs_ = true;
  if (cluster)
    for (int i = 0; i < 4; ++i) tabs_->setTabEnabled(i, false);
  placing_tabs_ = false;
  export_plan_menu_->setEnabled(cluster && cluster_->plan().has_value());
}

bool MainWindow::export_cluster_plan(const QString& target, const QString& path) {
  const Status st = cluster_->export_plan(target, path);
  if (!st.empty()) {
    status_->setStyleSheet("color: #b00000;");
    status_->setText("Plan not exported: " + q(format_diagnostics(st)));
    return false;
  }
  status_->setStyleSheet("");
  status_->setText("Exported the plan (" + target + ") to " + path);
  return true;
}

QChart* MainWindow::frontier_chart() const { return frontier_view_->chart(); }
QChart* MainWindow::memory_chart() const { return memory_view_->chart(); }
QChart* MainWindow::cost_chart() const { return cost_view_->chart(); }
QChart* MainWindow::serving_chart() const { return serving_view_->chart(); }
QChart* MainWindow::latency_chart() const { return latency_view_->chart(); }
QChart* MainWindow::throughput_chart() const { return throughput_view_->chart(); }
QChart* MainWindow::timeline_chart() const { return timeline_view_->chart(); }
QChart* MainWindow::simulation_chart() const { return simulation_view_->chart(); }

void MainWindow::show_analysis() {
  const Analysis& a = *analysis_;
  // The views that apply to this scenario, and the window on one of them: an inference
  // scenario has no training sizing to show, a service no serving simulation.
  const bool applies[] = {a.run.sizing.has_value(), a.run.cost.has_value(), a.run.scenario.inference.has_value(),
                          a.run.scenario.simulate.has_value() || a.run.scenario.inference.has_value()};
  // Disabling the shown tab makes Qt show the next enabled one, the Catalog when none of the
  // views apply: show the view the user chose when it applies, else the first that does,
  // else the chosen one (greyed) rather than another question's.
  placing_tabs_ = true;
  for (int i = 0; i < 4; ++i) tabs_->setTabEnabled(i, applies[i]);
  int shown = wanted_tab_;
  if (shown < 4 && !applies[shown])
    for (int i = 0; i < 4; ++i)
      if (applies[i]) {
        shown = i;
        break;
      }
  tabs_->setCurrentIndex(shown);
  placing_tabs_ = false;
  const auto rows = key_results(a);
  results_->setRowCount(static_cast<int>(rows.size()));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    auto* k = new QTableWidgetItem(q(rows[i].first));
    k->setToolTip(q(rows[i].first));
    auto* v = new QTableWidgetItem(q(rows[i].second));
    v->setToolTip(q(rows[i].second));
    if (key_result_violated(a, rows[i].first)) {  // a figure an expectation that fails is about
      for (auto* item : {k, v}) {
        item->setForeground(QColor(176, 0, 0));
        QFont f = item->font();
        f.setBold(true);
        item->setFont(f);
      }
    }
    results_->setItem(static_cast<int>(i), 0, k);
    results_->setItem(static_cast<int>(i), 1, v);
  }
  results_->horizontalHeader()->setVisible(false);
  results_->resizeColumnToContents(0);
  results_->horizontalHeader()->setStretchLastSection(true);
  results_->resizeRowsToContents();

  if (a.run.sizing) {
    set_chart(frontier_view_, render::frontier_chart(*a.run.sizing));
    hook_frontier_hover();
    QChart* memory = render::memory_chart(scenarios::memory_bars(a.run));
    // Node type labels are long ("aws-p5-48xlarge (4096 GPUs)"): a smaller font keeps them whole.
    for (auto* axis : memory->axes(Qt::Horizontal)) {
      QFont f = axis->labelsFont();
      f.setPointSizeF(f.pointSizeF() * 0.85);
      axis->setLabelsFont(f);
    }
    set_chart(memory_view_, memory);
    // Each bar's full label and its figures on hover, whatever room the axis had.
    QStringList labels;
    for (auto* axis : memory->axes(Qt::Horizontal))
      if (auto* cat = qobject_cast<QBarCategoryAxis*>(axis)) labels = cat->categories();
    for (auto* series : memory->series())
      if (auto* bars = qobject_cast<QStackedBarSeries*>(series))
        connect(bars, &QStackedBarSeries::hovered, this, [this, labels](bool on, int index, QBarSet* set) {
          if (!on || index < 0 || index >= labels.size()) return QToolTip::hideText();
          QToolTip::showText(QCursor::pos(), labels[index] + "\n" + set->label() + QString(": %1 GB").arg(set->at(index), 0, 'f', 1),
                             memory_view_);
        });
    fill_table(fastest_table_, {scenarios::fastest_table(*a.run.sizing)});
  } else {
    const QString why = a.run.scenario.inference ? "Inference scenario: see the Serving view."
                        : a.run.scenario.training.service ? "Service workload: see the Cost view."
                                                          : "No sizing: see the problems in the key results.";
    show_placeholder(frontier_view_, why);
    show_placeholder(memory_view_, why);
    fastest_table_->setRowCount(0);
  }
  if (a.run.cost) {
    set_chart(cost_view_, render::cost_chart(scenarios::cost_lines(a.run)));
    fill_table(cost_table_, {scenarios::cost_table(*a.run.cost), scenarios::break_even_table(*a.run.cost)});
  } else {
    show_placeholder(cost_view_, "The scenario has no cost: section.");
    cost_table_->setRowCount(0);
  }
  show_serving();
  compare_->set_left(a, QFileInfo(file_).fileName() + (what_if_->what_if().empty() ? "" : " (with what-if values)"));
  if (full_run_) show_full_run();
}

void MainWindow::show_serving() {
  const Analysis& a = *analysis_;
  if (!a.run.scenario.inference) return;
  if (a.serving && a.serving->graph) {
    auto* chart = render::utilization_chart(serving_utilization_bars(*a.serving));
    chart->setTitle(QString("Stage utilization at %1 req/s (analytic), constraint red").arg(a.serving->rate));
    set_chart(serving_view_, chart);
  } else if (QChart* load = llm_load_chart(a)) {
    set_chart(serving_view_, load);
  } else {
    show_placeholder(serving_view_, "No deployment to estimate: see the key results.");
  }
  // Latency of this plan (simulated by make_plan, so current with every what-if).
  if (QChart* llm = llm_latency_chart(a)) {
    set_chart(latency_view_, llm);
  } else if (const auto cdf = scenarios::latency_cdf(a.run); !cdf.points.empty()) {
    auto* chart = render::latency_cdf_chart(cdf);
    chart->setTitle("Latency (simulated) against the p99 bound");
    set_chart(latency_view_, chart);
  } else {
    show_placeholder(latency_view_, a.run.plan.not_measured.empty() ? "No simulated latency for this plan."
                                                                    : "Latency not measured: " + q(a.run.plan.not_measured_reason));
  }
  if (QChart* timeline = llm_timeline_chart(a)) set_chart(timeline_view_, timeline);
  else show_placeholder(timeline_view_, "No simulated LLM serving run for this plan.");
  if (QChart* curve = throughput_curve_chart(a)) set_chart(throughput_view_, curve);
  else show_placeholder(throughput_view_, "No throughput curve: see the problems in the key results.");
  QString text = "The plan (live):\n";
  for (const auto& [k, v] : key_results(a)) text += QString("%1  %2\n").arg(q(k), -26).arg(q(v));
  serving_text_->setPlainText(text);
}

void MainWindow::show_full_run() {
  if (!full_run_) return;
  const auto& run = *full_run_;
  // What was not recomputed with the current values is greyed and says so.
  const QString stale = full_run_stale_ ? "stale: Ctrl+R - " : "";
  run_summary_->setPlainText((full_run_stale_ ? "stale: Ctrl+R (this run used earlier values)\n\n" : "") +
                             q(scenarios::run_summary_text(run)));
  QPalette pal = run_summary_->palette();
  pal.setColor(QPalette::Text, full_run_stale_ ? QColor(140, 140, 140) : palette().color(QPalette::Text));
  run_summary_->setPalette(pal);
  const auto bars = scenarios::utilization_bars(run);
  if (!bars.empty()) {
    auto* chart = render::utilization_chart(bars);
    chart->setTitle(stale + chart->title());
    if (full_run_stale_) {
      chart->setOpacity(0.45);
      chart->setBackgroundBrush(QColor(225, 225, 225));
    }
    set_chart(simulation_view_, chart);
  } else if (full_run_stale_) {
    show_placeholder(simulation_view_, stale + "the simulation ran with earlier values");
  }
}

void MainWindow::hook_frontier_hover() {
  if (!analysis_ || !analysis_->run.sizing) return;
  QChart* chart = frontier_view_->chart();
  for (auto* series : chart->series()) {
    auto* xy = qobject_cast<QXYSeries*>(series);
    if (xy == nullptr || xy->name().startsWith("deadline")) continue;
    connect(xy, &QXYSeries::hovered, this, [this](const QPointF& point, bool state) {
      if (!state || !analysis_ || !analysis_->run.sizing) {
        QToolTip::hideText();
        return;
      }
      const auto& report = *analysis_->run.sizing;
      const auto& res = report.search;
      double max_cost = 0;
      for (const auto& c : res.fastest)
        if (c.cost) max_cost = std::max(max_cost, c.cost->value());
      const double scale = max_cost >= 1e6 ? 1e6 : (max_cost >= 1e4 ? 1e3 : 1.0);
      const models::Candidate* best = nullptr;
      double best_d = HUGE_VAL;
      auto consider = [&](const models::Candidate& c) {
        if (!c.cost) return;
        const double dx = std::log(c.total_time.value() / units::day) - std::log(std::max(point.x(), 1e-9));
        const double dy = (c.cost->value() / scale - point.y()) / std::max(max_cost / scale, 1e-9);
        const double d = dx * dx + dy * dy;
        if (d < best_d) {
          best_d = d;
          best = &c;
        }
      };
      for (const auto& c : res.frontier) consider(c);
      for (const auto& c : res.fastest) consider(c);
      if (res.recommended) consider(*res.recommended);
      if (best == nullptr) return;
      const QString tip = q(scenarios::describe_candidate(report, *best)) + "\ntime " + q(to_string(best->total_time)) +
                          ", cost " + q(to_string(*best->cost)) + QString(", MFU %1 %").arg(100 * best->mfu, 0, 'f', 1) +
                          "\nmemory per GPU " + q(to_string(best->memory_per_gpu));
      QToolTip::showText(QCursor::pos(), tip, frontier_view_);
    });
  }
}

void MainWindow::add_recent(const QString& path) {
  QSettings settings;
  QStringList recent = settings.value("recentFiles").toStringList();
  recent.removeAll(path);
  recent.prepend(path);
  while (recent.size() > 10) recent.removeLast();
  settings.setValue("recentFiles", recent);
  rebuild_recent_menu();
}

void MainWindow::rebuild_recent_menu() {
  recent_menu_->clear();
  const QStringList recent = QSettings().value("recentFiles").toStringList();
  for (const QString& path : recent) recent_menu_->addAction(path, this, [this, path] { open_file(path); });
  recent_menu_->setEnabled(!recent.isEmpty());
}

void MainWindow::update_title() {
  const QString name = file_.isEmpty() ? QString("untitled") : QFileInfo(file_).fileName();
  setWindowTitle(name + (dirty_ ? " *" : "") + " - capsim");
}

void MainWindow::closeEvent(QCloseEvent* event) {
  QSettings().setValue("window/state", saveState());
  runner_->cancel();
  event->accept();
}

}  // namespace capsim::gui
