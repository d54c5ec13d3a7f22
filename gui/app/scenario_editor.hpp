// The scenario editor: a form generated from the scenario schema (every key with its type,
// unit, default and help) above the YAML text, validated as the user types. Problems are
// shown where they belong: the line is underlined in the text, the field is marked in the
// form, and the message is listed beside them; no dialogs.
#pragma once

#include <QPlainTextEdit>
#include <QTimer>
#include <QWidget>
#include <memory>
#include <optional>

#include "capsim/hardware/catalog.hpp"
#include "capsim/scenarios/scenario.hpp"

class QListWidget;
class QTreeWidget;
class QTreeWidgetItem;
class QLabel;

namespace capsim::gui {

class ScenarioEditor : public QWidget {
  Q_OBJECT

 public:
  ScenarioEditor(std::shared_ptr<const hardware::Catalog> catalog, QWidget* parent = nullptr);

  // Replaces the text (a file just opened); validates at once.
  void set_text(const QString& text, const QString& file_name);
  QString text() const;
  // The last text that loaded without errors, as loaded.
  const std::optional<scenarios::Scenario>& scenario() const { return scenario_; }
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }
  // Sets one value through the form's path (dotted key path), as editing the form does.
  bool set_value(const QString& dotted_path, const QString& value);
  // Validates now instead of after the typing pause.
  void validate_now();

  QPlainTextEdit* yaml_editor() const { return text_; }
  QTreeWidget* form() const { return form_; }
  QListWidget* problems() const { return problems_; }

 signals:
  // A text that loads: the new scenario.
  void scenario_changed();
  // Diagnostics after each validation (empty: valid).
  void validated(bool ok);
  void modified();

 private:
  void build_form();
  void refresh_form();
  void show_diagnostics();
  void form_edited(QTreeWidgetItem* item, int column);
  void go_to_problem(int row);

  std::shared_ptr<const hardware::Catalog> catalog_;
  QTreeWidget* form_;
  QPlainTextEdit* text_;
  QListWidget* problems_;
  QLabel* status_;
  QTimer debounce_;
  QString file_name_;
  std::optional<scenarios::Scenario> scenario_;
  std::vector<Diagnostic> diagnostics_;
  bool updating_form_ = false;
};

}  // namespace capsim::gui
