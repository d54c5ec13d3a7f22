#include "compare_view.hpp"

#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

#include "capsim/scenarios/scenario.hpp"

namespace capsim::gui {

CompareView::CompareView(std::shared_ptr<const hardware::Catalog> catalog, QWidget* parent)
    : QWidget(parent), catalog_(std::move(catalog)) {
  left_title_ = new QLabel("A: the scenario being edited");
  right_title_ = new QLabel("B: none yet");
  message_ = new QLabel;
  message_->setStyleSheet("color: #b00000;");
  message_->setWordWrap(true);
  auto* open = new QPushButton("Open scenario B...");
  open->setObjectName("compareOpen");
  auto* keep = new QPushButton("Keep this what-if as B");
  keep->setObjectName("compareKeep");
  keep->setAutoDefault(false);
  connect(keep, &QPushButton::clicked, this, &CompareView::keep_left_as_right);
  table_ = new QTableWidget;
  table_->setObjectName("compareTable");
  table_->setColumnCount(3);
  table_->setHorizontalHeaderLabels({"result", "A", "B"});
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->verticalHeader()->setVisible(false);
  table_->setWordWrap(true);
  table_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
  table_->horizontalHeader()->setSectionResizeMode(2, QHeaderView::Stretch);
  auto* bar = new QHBoxLayout;
  bar->addWidget(left_title_, 1);
  bar->addWidget(right_title_, 1);
  bar->addWidget(keep);
  bar->addWidget(open);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(bar);
  layout->addWidget(message_);
  layout->addWidget(table_, 1);
  connect(open, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, "Scenario to compare", QString(), "Scenarios (*.yaml *.yml)");
    if (!path.isEmpty()) load_right(path);
  });
}

void CompareView::set_left(const Analysis& a, const QString& title) {
  left_ = a;
  left_name_ = title;
  rebuild();
}

bool CompareView::load_right(const QString& path) {
  auto s = scenarios::load_scenario_file(path.toStdString(), *catalog_);
  if (!s) {
    message_->setText("B does not load:\n" + QString::fromStdString(format_diagnostics(s.errors())));
    return false;
  }
  auto a = recompute(*s, {}, *catalog_);
  if (!a) {
    message_->setText("B cannot be analysed:\n" + QString::fromStdString(format_diagnostics(a.errors())));
    return false;
  }
  message_->clear();
  right_ = std::move(a).value();
  right_name_ = QFileInfo(path).fileName();
  rebuild();
  return true;
}

bool CompareView::keep_left_as_right() {
  if (!left_) {
    message_->setText("Nothing to keep: open a scenario first.");
    return false;
  }
  message_->clear();
  right_ = left_;
  right_name_ = left_name_ + " (kept)";
  rebuild();
  return true;
}

void CompareView::rebuild() {
  left_title_->setText("<b>A</b>: " + (left_name_.isEmpty() ? QString("none") : left_name_));
  right_title_->setText("<b>B</b>: " + (right_name_.isEmpty() ? QString("none yet") : right_name_));
  std::vector<std::string> names;
  std::vector<std::pair<std::string, std::string>> a_rows, b_rows;
  if (left_) a_rows = key_results(*left_);
  if (right_) b_rows = key_results(*right_);
  auto add_names = [&](const auto& rows) {
    for (const auto& [k, v] : rows)
      if (std::find(names.begin(), names.end(), k) == names.end()) names.push_back(k);
  };
  add_names(a_rows);
  add_names(b_rows);
  auto value = [](const auto& rows, const std::string& k) {
    QStringList out;
    for (const auto& [name, v] : rows)
      if (name == k) out << QString::fromStdString(v);
    return out.join("\n");
  };
  table_->setRowCount(static_cast<int>(names.size()));
  for (std::size_t i = 0; i < names.size(); ++i) {
    const int r = static_cast<int>(i);
    table_->setItem(r, 0, new QTableWidgetItem(QString::fromStdString(names[i])));
    const QString a = value(a_rows, names[i]), b = value(b_rows, names[i]);
    auto* ai = new QTableWidgetItem(a);
    auto* bi = new QTableWidgetItem(b);
    if (!a.isEmpty() && !b.isEmpty() && a != b && names[i] != "scenario") {
      ai->setBackground(QColor(255, 248, 220));
      bi->setBackground(QColor(255, 248, 220));
    }
    table_->setItem(r, 1, ai);
    table_->setItem(r, 2, bi);
  }
  table_->resizeRowsToContents();
}

}  // namespace capsim::gui
