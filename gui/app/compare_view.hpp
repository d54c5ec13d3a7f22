// Two scenarios side by side: the key results of the current scenario (what-if values
// applied) and of another scenario file, or of an earlier what-if kept as B, row by row.
#pragma once

#include <QWidget>
#include <memory>
#include <optional>

#include "capsim/hardware/catalog.hpp"
#include "whatif.hpp"

class QLabel;
class QTableWidget;

namespace capsim::gui {

class CompareView : public QWidget {
  Q_OBJECT

 public:
  explicit CompareView(std::shared_ptr<const hardware::Catalog> catalog, QWidget* parent = nullptr);

  void set_left(const Analysis& a, const QString& title);
  // Loads and analyses the file for the right side; false (and the problem shown in the
  // view) when it does not load.
  bool load_right(const QString& path);
  // "Keep this what-if as B": the current A (the scenario with its what-if values) becomes B,
  // so the next what-if compares against it. False when there is no A yet.
  bool keep_left_as_right();
  QTableWidget* table() const { return table_; }

 private:
  void rebuild();

  std::shared_ptr<const hardware::Catalog> catalog_;
  QLabel* left_title_;
  QLabel* right_title_;
  QLabel* message_;
  QTableWidget* table_;
  std::optional<Analysis> left_, right_;
  QString left_name_, right_name_;
};

}  // namespace capsim::gui
