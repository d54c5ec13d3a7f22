#include <doctest/doctest.h>

#include <QApplication>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QSlider>
#include <QSpinBox>
#include <QTableView>
#include <QTableWidget>
#include <QTest>
#include <QTreeWidget>
#include <QtCharts/QAbstractBarSeries>
#include <QtCharts/QBarSet>
#include <QtCharts/QChart>
#include <QtCharts/QValueAxis>
#include <QtCharts/QXYSeries>

#include <fstream>

#include "capsim/scenarios/cluster.hpp"
#include "catalog_browser.hpp"
#include "cluster_view.hpp"
#include "compare_view.hpp"
#include "gui/gui_support.hpp"
#include "main_window.hpp"
#include "support/listener.hpp"
#include "scenario_editor.hpp"
#include "simulation_runner.hpp"
#include "whatif_panel.hpp"

using namespace capsim;

namespace {

// Deletes the tests' QApplication when the run ends, while Qt's statics still exist.
struct DeleteApplication : testing::QuietListener {
  using QuietListener::QuietListener;
  void test_run_end(const doctest::TestRunStats&) override {
    delete testing::test_application();
    testing::test_application() = nullptr;
  }
};

}  // namespace

DOCTEST_REGISTER_LISTENER("delete-application", 2, DeleteApplication);

namespace {

QString example(const char* name) { return QString::fromStdString(testing::example_scenario(name).string()); }

// Every point of every XY series of a chart, for "did the chart change" checks.
QList<QPointF> xy_points(QChart* chart) {
  QList<QPointF> all;
  for (auto* s : chart->series())
    if (auto* xy = qobject_cast<QXYSeries*>(s)) all += xy->points();
  return all;
}

QList<double> bar_values(QChart* chart) {
  QList<double> all;
  for (auto* s : chart->series())
    if (auto* bars = qobject_cast<QAbstractBarSeries*>(s))
      for (auto* set : bars->barSets())
        for (int i = 0; i < set->count(); ++i) all << set->at(i);
  return all;
}

QXYSeries* series_named(QChart* chart, const QString& name) {
  for (auto* s : chart->series())
    if (s->name() == name) return qobject_cast<QXYSeries*>(s);
  return nullptr;
}

std::unique_ptr<gui::MainWindow> window() {
  testing::gui_application();
  return std::make_unique<gui::MainWindow>(testing::test_workspace());
}

}  // namespace

TEST_CASE("the window opens the 70B scenario with its charts populated") {
  auto w = window();
  REQUIRE(w->open_file(example("llama-70b-pretrain"), false));
  REQUIRE(w->analysis());
  CHECK(w->analysis()->run.sizing->search.recommended.has_value());
  QXYSeries* frontier = series_named(w->frontier_chart(), "Pareto frontier");
  REQUIRE(frontier != nullptr);
  CHECK(frontier->count() >= 2);
  CHECK(!bar_values(w->memory_chart()).isEmpty());
  CHECK(w->editor()->diagnostics().empty());
  CHECK(w->windowTitle().startsWith("llama-70b-pretrain.yaml"));
}

TEST_CASE("an inference scenario opens on the serving view, its key results the plan's simulated p99") {
  auto w = window();
  REQUIRE(w->open_file(example("road-sign-ocr"), false));
  REQUIRE(w->analysis());
  CHECK(w->current_tab() == "Serving");
  CHECK_FALSE(w->analysis()->run.sizing.has_value());  // so the Sizing tab is disabled
  const auto& plan = w->analysis()->run.plan;
  REQUIRE(plan.p99);
  std::string p99_row, analytic_row;
  for (const auto& [k, v] : gui::key_results(*w->analysis())) {
    if (k == "p99 latency") p99_row = v;
    if (k == "p99 latency (analytic)") analytic_row = v;
  }
  CHECK(p99_row == to_string(*plan.p99) + " (simulated)");
  CHECK(analytic_row.empty());  // one p99, the one the expectation is checked against
  CHECK(w->analysis()->run.passed());
}

TEST_CASE("changing the GPU type control recomputes the sizing and redraws the charts") {
  auto w = window();
  REQUIRE(w->open_file(example("llama-70b-pretrain"), false));
  const auto before_points = xy_points(w->frontier_chart());
  const auto before_memory = xy_points(w->memory_chart());  // the capacity markers
  const std::string before = scenarios::describe_candidate(*w->analysis()->run.sizing, *w->analysis()->run.sizing->search.recommended);

  auto* gpu = w->what_if_panel()->gpu_box();
  const int i = gpu->findText("h200-sxm-141gb");
  REQUIRE(i > 0);
  gpu->setCurrentIndex(i);  // the window recomputes on the change signal

  REQUIRE(w->analysis());
  const auto& sizing = *w->analysis()->run.sizing;
  const std::string after = scenarios::describe_candidate(sizing, *sizing.search.recommended);
  CHECK(after != before);
  CHECK(after.find("h200-sxm-141gb") != std::string::npos);
  CHECK(xy_points(w->frontier_chart()) != before_points);
  // The memory chart's capacity marker moved from 80 GB to 141 GB.
  QXYSeries* capacity = series_named(w->memory_chart(), "GPU capacity");
  REQUIRE(capacity != nullptr);
  CHECK(capacity->at(0).y() == doctest::Approx(141.0));
  CHECK(xy_points(w->memory_chart()) != before_memory);

  // The GPU count control too: at most 512 GPUs the fastest run takes longer.
  // (Only h200 servers without a price remain: no frontier, but the fastest per node type.)
  REQUIRE(!sizing.search.fastest.empty());
  const double fastest_before = sizing.search.fastest.front().total_time.value();
  w->what_if_panel()->gpus_box()->setValue(512);
  CHECK(w->analysis()->run.scenario.hardware.max_gpus == 512);
  REQUIRE(!w->analysis()->run.sizing->search.fastest.empty());
  CHECK(w->analysis()->run.sizing->search.fastest.front().total_time.value() > fastest_before);
}

TEST_CASE("the cost view follows the horizon, utilization and electricity controls") {
  auto w = window();
  REQUIRE(w->open_file(example("ml-services-24x7"), false));
  auto* x_axis = qobject_cast<QValueAxis*>(w->cost_chart()->axes(Qt::Horizontal).first());
  REQUIRE(x_axis != nullptr);
  CHECK(x_axis->max() == doctest::Approx(24));
  const auto before = xy_points(w->cost_chart());
  const double total_before = w->analysis()->run.cost->comparison.totals[3].value();

  w->what_if_panel()->horizon_box()->setValue(36);
  x_axis = qobject_cast<QValueAxis*>(w->cost_chart()->axes(Qt::Horizontal).first());
  CHECK(x_axis->max() == doctest::Approx(36));
  CHECK(xy_points(w->cost_chart()).size() > before.size());

  w->what_if_panel()->electricity_box()->setValue(0.5);
  CHECK(w->analysis()->run.cost->comparison.totals[3].value() > total_before);
  w->what_if_panel()->utilization_slider()->setValue(40);
  CHECK(w->analysis()->run.cost->inputs.demand.profile.busy_fraction == doctest::Approx(0.4));
  w->what_if_panel()->reset();
  CHECK(w->what_if_panel()->what_if().empty());
}

TEST_CASE("the serving view: request rate control, then a background simulation draws the latency CDF") {
  auto w = window();
  REQUIRE(w->open_file(example("road-sign-ocr"), false));
  const auto before = bar_values(w->serving_chart());
  REQUIRE(!before.isEmpty());
  w->what_if_panel()->rate_box()->setValue(2000);
  const auto after = bar_values(w->serving_chart());
  CHECK(after != before);
  double max_before = 0, max_after = 0;
  for (double v : before) max_before = std::max(max_before, v);
  for (double v : after) max_after = std::max(max_after, v);
  CHECK(max_after < max_before);

  w->run_simulation();
  CHECK(w->runner()->running());
  REQUIRE(w->runner()->wait(120000));
  REQUIRE(w->full_run());
  CHECK(w->full_run()->serving_simulation.has_value());
  CHECK(w->full_run()->scenario.inference->arrivals.rate.value() == doctest::Approx(2000));
  QXYSeries* cdf = series_named(w->latency_chart(), "requests at or below");
  REQUIRE(cdf != nullptr);
  CHECK(cdf->count() > 5);
  CHECK(series_named(w->latency_chart(), "p99 bound 100 ms") != nullptr);
}

TEST_CASE("a run can be cancelled and a second run waits for the first") {
  auto w = window();
  REQUIRE(w->open_file(example("road-sign-ocr"), false));
  auto* runner = w->runner();
  bool cancelled = false, finished = false;
  QObject::connect(runner, &gui::SimulationRunner::cancelled, [&] { cancelled = true; });
  QObject::connect(runner, &gui::SimulationRunner::finished, [&] { finished = true; });
  REQUIRE(runner->start(*w->editor()->scenario(), {}));
  CHECK_FALSE(runner->start(*w->editor()->scenario(), {}));
  runner->cancel();
  REQUIRE(runner->wait(120000));
  CHECK(cancelled);
  CHECK_FALSE(finished);
}

TEST_CASE("save and reload round-trips the scenario text, edits from the form included") {
  auto w = window();
  REQUIRE(w->open_file(example("llama-70b-pretrain"), false));
  REQUIRE(w->editor()->set_value("hardware.max_gpus", "4096"));
  CHECK(w->editor()->text().contains("max_gpus: 4096\n"));
  CHECK(w->editor()->text().contains("# sequences of 8192 tokens"));  // comments kept
  CHECK(w->editor()->scenario()->hardware.max_gpus == 4096);
  const auto file = testing::scratch_dir("gui") / "round-trip.yaml";
  REQUIRE(w->save_file(QString::fromStdString(file.string())));
  CHECK(w->windowTitle().startsWith("round-trip.yaml -"));

  auto again = window();
  REQUIRE(again->open_file(QString::fromStdString(file.string()), false));
  CHECK(again->editor()->text() == w->editor()->text());
  CHECK(again->editor()->scenario()->hardware.max_gpus == 4096);
  CHECK(again->analysis()->run.scenario.name == "llama-70b-pretrain");
}

TEST_CASE("a typing mistake is marked at its line and field, without a dialog") {
  auto w = window();
  REQUIRE(w->open_file(example("llama-70b-pretrain"), false));
  auto* editor = w->editor();
  QString text = editor->text();
  text.replace("  max_gpus: 8192", "  max_gpu: 8192");
  editor->yaml_editor()->setPlainText(text);
  editor->validate_now();
  REQUIRE(editor->diagnostics().size() >= 1);
  const auto& d = editor->diagnostics().front();
  CHECK(d.key_path.find("max_gpu") != std::string::npos);
  CHECK(editor->problems()->count() == static_cast<int>(editor->diagnostics().size()));
  CHECK(editor->problems()->item(0)->text().contains("did you mean"));
  const auto marks = editor->yaml_editor()->extraSelections();
  REQUIRE(!marks.isEmpty());
  CHECK(marks.front().cursor.blockNumber() == d.where.line - 1);
  CHECK(marks.front().cursor.selectedText().contains("max_gpu: 8192"));
  // The form marks the section of the unknown key.
  const auto items = editor->form()->findItems("hardware", Qt::MatchExactly, 0);
  REQUIRE(items.size() == 1);
  CHECK(items.front()->background(0).color() != QColor());
  CHECK(QApplication::activeModalWidget() == nullptr);
  // The results still show the last valid version.
  CHECK(w->analysis().has_value());
  CHECK(editor->scenario()->hardware.max_gpus == 8192);
}

TEST_CASE("the scenario form is generated from the schema and shows the file's values") {
  auto w = window();
  REQUIRE(w->open_file(example("llama-70b-pretrain"), false));
  auto* form = w->editor()->form();
  auto found = form->findItems("max_gpus", Qt::MatchExactly | Qt::MatchRecursive, 0);
  REQUIRE(found.size() == 1);
  CHECK(found.front()->text(1) == "8192");
  CHECK(!found.front()->toolTip(0).isEmpty());  // the schema's help text
  found.front()->setText(1, "2048");            // as typing in the form does
  CHECK(w->editor()->text().contains("max_gpus: 2048"));
  CHECK(w->analysis()->run.scenario.hardware.max_gpus == 2048);
}

TEST_CASE("the scenario form shows only the keys the workload type reads") {
  auto w = window();
  REQUIRE(w->open_file(example("road-sign-ocr"), false));
  auto* form = w->editor()->form();
  auto visible = [&](const char* key) {
    auto found = form->findItems(key, Qt::MatchExactly | Qt::MatchRecursive, 0);
    for (auto* item : found)
      if (!item->isHidden()) return true;
    return false;
  };
  CHECK(visible("graph"));
  CHECK(visible("arrivals"));
  CHECK_FALSE(visible("tokens"));
  CHECK_FALSE(visible("epochs"));
  CHECK_FALSE(visible("lora_rank"));
  CHECK_FALSE(visible("deadline"));
  REQUIRE(w->open_file(example("llama-70b-pretrain"), false));
  CHECK(visible("tokens"));
  CHECK(visible("lora_rank"));
  CHECK_FALSE(visible("graph"));
  CHECK_FALSE(visible("arrivals"));
}

TEST_CASE("the catalog browser filters, sorts and shows each number's source") {
  auto w = window();
  auto* browser = w->catalog_browser();
  REQUIRE(browser->show_kind(hardware::EntityKind::gpu, "memory>=80 GB", "memory_bandwidth", true));
  auto* model = browser->model();
  REQUIRE(model->rowCount() >= 3);
  double last = HUGE_VAL;
  for (int r = 0; r < model->rowCount(); ++r) {
    const auto* e = model->entry(r);
    CHECK(e->quantity<Bytes>("memory")->value() >= 80e9);
    const double bw = e->quantity<BytesPerSecond>("memory_bandwidth")->value();
    CHECK(bw <= last);
    last = bw;
  }
  int memory_col = -1;
  for (int c = 0; c < model->columnCount(); ++c)
    if (model->column_field(c) == "memory") memory_col = c;
  REQUIRE(memory_col >= 0);
  const QString tip = model->data(model->index(0, memory_col), Qt::ToolTipRole).toString();
  CHECK(tip.contains("source: "));
  CHECK(tip.contains("as of: "));
  CHECK(browser->detail()->rowCount() > 3);  // the first row's fields, with source and as_of
  CHECK_FALSE(browser->show_kind(hardware::EntityKind::gpu, "memroy>=80 GB"));
  REQUIRE(browser->show_kind(hardware::EntityKind::instance, "gpu=h100-sxm-80gb", "price.on_demand"));
  CHECK(model->rowCount() >= 2);
}

TEST_CASE("two scenarios side by side, and the report exported from the window") {
  auto w = window();
  REQUIRE(w->open_file(example("llama2-70b-chat-h100"), false));
  REQUIRE(w->compare_view()->load_right(example("llama2-70b-chat-h200")));
  auto* table = w->compare_view()->table();
  REQUIRE(table->rowCount() > 3);
  int both = 0;
  for (int r = 0; r < table->rowCount(); ++r)
    if (!table->item(r, 1)->text().isEmpty() && !table->item(r, 2)->text().isEmpty()) ++both;
  CHECK(both > 3);
  CHECK_FALSE(w->compare_view()->load_right("/nonexistent.yaml"));

  const auto html = testing::scratch_dir("gui") / "report.html";
  REQUIRE(w->export_report(QString::fromStdString(html.string())));
  const std::string text = testing::read_file(html);
  CHECK(text.find("<html") != std::string::npos);
  CHECK(text.find("llama2-70b-chat-h100") != std::string::npos);
}

TEST_CASE("a cluster scenario opens on the cluster view: packing picture, timeline and the plan capsim plan prints") {
  auto w = window();
  const QString path = QString::fromStdString(testing::cluster_scenario("team-ml-estate").string());
  REQUIRE(w->open_file(path));
  CHECK(w->current_tab() == "Cluster");
  auto* view = w->cluster_view();
  REQUIRE(view->plan().has_value());
  // The same plan as the command line: the text is cluster_plan_text of an independent run.
  auto s = scenarios::load_cluster_file(path.toStdString(), testing::shipped_catalog());
  REQUIRE(s.ok());
  auto p = scenarios::plan_cluster(*s, testing::shipped_catalog());
  REQUIRE(p.ok());
  CHECK(view->plan_text().toStdString() == scenarios::cluster_plan_text(*p));
  // The timeline: one step series per node type used, two points per hour of the week.
  QChart* chart = view->timeline_chart();
  REQUIRE(chart != nullptr);
  CHECK(chart->series().size() == static_cast<int>(p->packing.pools.size()));
  for (auto* series : chart->series()) CHECK(qobject_cast<QXYSeries*>(series)->count() == 2 * 168);
  // The picture: every node's GPUs with what runs on them.
  int notebook_gpus = 0;
  for (int n = 0; n < static_cast<int>(p->packing.nodes.size()); ++n)
    if (view->picture()->gpu_label(n, 0).contains("notebooks#")) ++notebook_gpus;
  CHECK(notebook_gpus == 3);
  CHECK(view->picture()->gpu_label(0, 0).contains("nightly-scoring#0 1"));

  // A cluster that does not plan says why in the view and is not a crash.
  const auto bad = testing::scratch_dir("gui-cluster") / "bad.yaml";
  std::ofstream(bad) << "name: x\ncluster: {node_types: [aws-g5-xlarge], system_reserve: {cpu: 1, memory: 1 GiB}}\n"
                        "workloads:\n  - {name: a, hours: always, service: {gpu: l4, replicas: 1}}\n";
  CHECK_FALSE(w->open_file(QString::fromStdString(bad.string())));
  CHECK(view->message().contains("no node type carries its GPU l4"));
}

TEST_CASE("a what-if keeps the view the user chose, never jumps to the Catalog") {
  auto w = window();
  REQUIRE(w->open_file(example("llama-70b-pretrain"), false));
  REQUIRE(w->current_tab() == "Sizing");
  // Typing a GPU count that leaves no plan (one GPU cannot hold 70B), then Return.
  auto* gpus = w->what_if_panel()->gpus_box();
  gpus->setFocus();
  gpus->selectAll();
  QTest::keyClicks(gpus, "1");
  QTest::keyClick(gpus, Qt::Key_Return);
  CHECK(w->status_text().startsWith("Plan check: not computed"));
  CHECK(w->current_tab() == "Sizing");
  gpus->selectAll();
  QTest::keyClicks(gpus, "512");
  QTest::keyClick(gpus, Qt::Key_Return);
  REQUIRE(w->analysis());
  CHECK(w->current_tab() == "Sizing");
  // A GPU the sizing has no candidate on: a plan without a sizing and, in this scenario, no
  // other view. Qt's disabling of the shown tab moved the window to the next enabled one,
  // the Catalog; the window stays on the (greyed) sizing.
  auto* gpu = w->what_if_panel()->gpu_box();
  const QString first = gpu->currentText();
  gpu->setCurrentIndex(gpu->findText("tpu-v4"));
  REQUIRE(w->analysis());
  REQUIRE_FALSE(w->analysis()->run.sizing.has_value());
  CHECK(w->current_tab() == "Sizing");
  gpu->setCurrentIndex(gpu->findText(first));
  CHECK(w->current_tab() == "Sizing");
}

TEST_CASE("a view that does not apply to a what-if comes back when the what-if is undone") {
  auto w = window();
  REQUIRE(w->open_file(example("resnet-training-cost-per-run"), false));
  REQUIRE(w->current_tab() == "Sizing");
  auto* gpu = w->what_if_panel()->gpu_box();
  const QString first = gpu->currentText();
  gpu->setCurrentIndex(gpu->findText("tpu-v4"));
  REQUIRE_FALSE(w->analysis()->run.sizing.has_value());
  CHECK(w->current_tab() == "Cost");  // the view that applies
  gpu->setCurrentIndex(gpu->findText(first));
  REQUIRE(w->analysis()->run.sizing.has_value());
  CHECK(w->current_tab() == "Sizing");  // the user's choice, not the window's
}
