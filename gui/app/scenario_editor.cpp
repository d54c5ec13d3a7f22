#include "scenario_editor.hpp"

#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QSplitter>
#include <QTextBlock>
#include <QTreeWidget>
#include <QVBoxLayout>

#include "capsim/scenarios/schema.hpp"
#include "yaml_edit.hpp"

namespace capsim::gui {
namespace {

constexpr int kPathRole = Qt::UserRole;
constexpr int kEditableRole = Qt::UserRole + 1;
constexpr int kLeafRole = Qt::UserRole + 2;

QString q(const std::string& s) { return QString::fromStdString(s); }

QString kind_text(const scenarios::SchemaNode& n) {
  using scenarios::ValueKind;
  switch (n.kind) {
    case ValueKind::map: return "section";
    case ValueKind::list: return "list";
    case ValueKind::text: return "text";
    case ValueKind::choice: return "choice";
    case ValueKind::quantity: return q(describe_dimension(n.dim));
    case ValueKind::count: return "count (7B, 15T)";
    case ValueKind::integer: return "integer";
    case ValueKind::number: return "number";
    case ValueKind::boolean: return "true/false";
    case ValueKind::catalog_id: return "catalog id";
    case ValueKind::model: return "preset or shape";
    case ValueKind::length: return "tokens or distribution";
  }
  return {};
}

QString help_text(const scenarios::SchemaNode& n) {
  QString help = q(n.help);
  if (!n.choices.empty()) {
    QStringList choices;
    for (const auto& c : n.choices) choices << q(c);
    help += "\nOne of: " + choices.join(", ");
  }
  if (n.minimum != 0 || n.maximum != 0) help += QString("\nRange: %1 to %2").arg(n.minimum).arg(n.maximum);
  if (!n.default_text.empty()) help += "\nDefault: " + q(n.default_text);
  if (n.required) help += "\nRequired.";
  return help;
}

void add_children(QTreeWidgetItem* parent, const scenarios::SchemaNode& node, const QString& prefix) {
  for (const auto& child : node.children) {
    const QString path = prefix.isEmpty() ? q(child.name) : prefix + "." + q(child.name);
    auto* item = new QTreeWidgetItem(parent, QStringList{q(child.name), QString(), kind_text(child), q(child.default_text)});
    item->setData(0, kPathRole, path);
    const bool leaf = child.kind != scenarios::ValueKind::map && child.kind != scenarios::ValueKind::list;
    item->setData(0, kLeafRole, leaf);
    const QString help = help_text(child);
    for (int c = 0; c < 4; ++c) item->setToolTip(c, help);
    if (child.kind == scenarios::ValueKind::map) add_children(item, child, path);
  }
}

KeyPath split_path(const QString& dotted) {
  KeyPath path;
  for (const auto& part : dotted.split('.')) path.push_back(part.toStdString());
  return path;
}

// "graph[0].fan_out" -> "graph.0.fan_out": the form's paths and the diagnostics' agree.
QString normal_path(const std::string& key_path) {
  QString p = q(key_path);
  p.replace('[', '.').remove(']');
  return p;
}

}  // namespace

ScenarioEditor::ScenarioEditor(std::shared_ptr<const hardware::Catalog> catalog, QWidget* parent)
    : QWidget(parent), catalog_(std::move(catalog)) {
  form_ = new QTreeWidget;
  form_->setObjectName("scenarioForm");
  form_->setColumnCount(4);
  form_->setHeaderLabels({"key", "value", "type / unit", "default"});
  form_->header()->setSectionResizeMode(QHeaderView::Interactive);
  form_->setAlternatingRowColors(true);
  text_ = new QPlainTextEdit;
  text_->setObjectName("yamlEditor");
  text_->setLineWrapMode(QPlainTextEdit::NoWrap);
  QFont mono("Monospace");
  mono.setStyleHint(QFont::TypeWriter);
  text_->setFont(mono);
  problems_ = new QListWidget;
  problems_->setObjectName("problems");
  problems_->setWordWrap(true);
  status_ = new QLabel;
  status_->setWordWrap(true);

  auto* problems_box = new QWidget;
  auto* pl = new QVBoxLayout(problems_box);
  pl->setContentsMargins(0, 0, 0, 0);
  pl->addWidget(status_);
  pl->addWidget(problems_);

  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(form_);
  split->addWidget(text_);
  split->addWidget(problems_box);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 4);
  split->setStretchFactor(2, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(split);

  build_form();
  debounce_.setSingleShot(true);
  debounce_.setInterval(300);
  connect(&debounce_, &QTimer::timeout, this, &ScenarioEditor::validate_now);
  connect(text_, &QPlainTextEdit::textChanged, this, [this] {
    debounce_.start();
    emit modified();
  });
  connect(form_, &QTreeWidget::itemChanged, this, &ScenarioEditor::form_edited);
  connect(problems_, &QListWidget::currentRowChanged, this, &ScenarioEditor::go_to_problem);
}

void ScenarioEditor::build_form() {
  updating_form_ = true;
  add_children(form_->invisibleRootItem(), scenarios::scenario_schema(), QString());
  form_->expandToDepth(0);
  form_->resizeColumnToContents(0);
  form_->setColumnWidth(1, 160);
  updating_form_ = false;
}

void ScenarioEditor::set_text(const QString& text, const QString& file_name) {
  file_name_ = file_name;
  text_->setPlainText(text);
  debounce_.stop();
  validate_now();
}

QString ScenarioEditor::text() const { return text_->toPlainText(); }

void ScenarioEditor::validate_now() {
  debounce_.stop();
  const std::string name = file_name_.isEmpty() ? std::string("untitled.yaml") : file_name_.toStdString();
  auto loaded = scenarios::load_scenario(name, text_->toPlainText().toStdString(), *catalog_);
  diagnostics_ = loaded.errors();
  if (loaded) {
    scenario_ = std::move(loaded).value();
    scenario_->file = name;
  }
  refresh_form();
  show_diagnostics();
  emit validated(diagnostics_.empty());
  if (diagnostics_.empty()) emit scenario_changed();
}

void ScenarioEditor::refresh_form() {
  updating_form_ = true;
  const std::string yaml = text_->toPlainText().toStdString();
  std::vector<QTreeWidgetItem*> stack;
  for (int i = 0; i < form_->topLevelItemCount(); ++i) stack.push_back(form_->topLevelItem(i));
  while (!stack.empty()) {
    QTreeWidgetItem* item = stack.back();
    stack.pop_back();
    for (int i = 0; i < item->childCount(); ++i) stack.push_back(item->child(i));
    const KeyPath path = split_path(item->data(0, kPathRole).toString());
    const bool leaf = item->data(0, kLeafRole).toBool();
    QString value;
    bool editable = false;
    if (auto scalar = yaml_scalar(yaml, path)) {
      value = q(*scalar);
      editable = leaf;
    } else if (auto flow = yaml_flow(yaml, path)) {
      value = q(*flow);
    } else {
      editable = leaf;  // absent: typing a value adds the key
    }
    item->setText(1, value);
    // Only the keys this workload type reads: no tokens or lora_rank on a serving scenario.
    if (const auto type = yaml_scalar(yaml, split_path("workload.type")))
      item->setHidden(!scenarios::key_applies(item->data(0, kPathRole).toString().toStdString(), *type));
    QFont font = item->font(0);
    font.setBold(!value.isEmpty());
    item->setFont(0, font);
    item->setData(0, kEditableRole, editable);
    item->setFlags(editable ? (item->flags() | Qt::ItemIsEditable) : (item->flags() & ~Qt::ItemIsEditable));
    item->setBackground(1, QBrush());
    item->setBackground(0, QBrush());
  }
  // Mark the fields the diagnostics name, with the message as their tooltip.
  for (const auto& d : diagnostics_) {
    const QString path = normal_path(d.key_path);
    const auto found = form_->findItems("*", Qt::MatchWildcard | Qt::MatchRecursive, 0);
    QTreeWidgetItem* best = nullptr;
    int best_len = -1;
    for (auto* item : found) {
      const QString p = item->data(0, kPathRole).toString();
      if ((path == p || path.startsWith(p + ".")) && p.size() > best_len) {
        best = item;
        best_len = static_cast<int>(p.size());
      }
    }
    if (best != nullptr) {
      best->setBackground(0, QColor(255, 215, 215));
      best->setBackground(1, QColor(255, 215, 215));
      best->setToolTip(1, q(d.message + (d.hint.empty() ? "" : " (" + d.hint + ")")));
      for (auto* p = best->parent(); p != nullptr; p = p->parent()) p->setExpanded(true);
    }
  }
  updating_form_ = false;
}

void ScenarioEditor::show_diagnostics() {
  QList<QTextEdit::ExtraSelection> marks;
  problems_->blockSignals(true);
  problems_->clear();
  for (const auto& d : diagnostics_) {
    const int line = std::max(d.where.line, 1);
    QString label = QString("line %1").arg(d.where.line);
    if (d.where.column > 0) label += QString(":%1").arg(d.where.column);
    label += "  " + q(d.key_path.empty() ? d.message : d.key_path + ": " + d.message);
    if (!d.hint.empty()) label += " (" + q(d.hint) + ")";
    auto* item = new QListWidgetItem(label, problems_);
    item->setForeground(QColor(170, 0, 0));
    item->setData(Qt::UserRole, line);
    QTextEdit::ExtraSelection mark;
    const QTextBlock block = text_->document()->findBlockByNumber(line - 1);
    if (!block.isValid()) continue;
    mark.cursor = QTextCursor(block);
    mark.cursor.select(QTextCursor::LineUnderCursor);
    mark.format.setUnderlineStyle(QTextCharFormat::WaveUnderline);
    mark.format.setUnderlineColor(Qt::red);
    mark.format.setBackground(QColor(255, 235, 235));
    mark.format.setToolTip(q(d.message));
    marks.append(mark);
  }
  problems_->blockSignals(false);
  text_->setExtraSelections(marks);
  if (diagnostics_.empty()) {
    status_->setText("The scenario is valid.");
    status_->setStyleSheet("color: #1a7f37;");
  } else {
    status_->setText(QString("%1 problem(s): the results show the last valid version.").arg(diagnostics_.size()));
    status_->setStyleSheet("color: #b00000;");
  }
}

void ScenarioEditor::go_to_problem(int row) {
  if (row < 0 || row >= problems_->count()) return;
  const int line = problems_->item(row)->data(Qt::UserRole).toInt();
  const QTextBlock block = text_->document()->findBlockByNumber(line - 1);
  if (!block.isValid()) return;
  text_->setTextCursor(QTextCursor(block));
  text_->centerCursor();
}

bool ScenarioEditor::set_value(const QString& dotted_path, const QString& value) {
  auto edited = set_yaml_scalar(text_->toPlainText().toStdString(), split_path(dotted_path), value.toStdString());
  if (!edited) {
    diagnostics_ = edited.errors();
    show_diagnostics();
    return false;
  }
  // Replace through a cursor so the edit can be undone with Ctrl+Z.
  QTextCursor cursor(text_->document());
  cursor.select(QTextCursor::Document);
  cursor.insertText(q(*edited));
  validate_now();
  return true;
}

void ScenarioEditor::form_edited(QTreeWidgetItem* item, int column) {
  if (updating_form_ || column != 1) return;
  set_value(item->data(0, kPathRole).toString(), item->text(1));
}

}  // namespace capsim::gui
