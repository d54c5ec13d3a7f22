// The catalog browser: GPUs, servers, cloud instances (and the other kinds) from the SQLite
// catalog, filtered with the same expressions as `capsim catalog list --where` and sorted by
// any column; every number carries its source and date (tooltip and the detail pane).
#pragma once

#include <QAbstractTableModel>
#include <QWidget>
#include <memory>

#include "capsim/hardware/catalog.hpp"
#include "capsim/hardware/query.hpp"
#include "capsim/scenarios/table.hpp"

class QComboBox;
class QCheckBox;
class QLabel;
class QLineEdit;
class QTableView;
class QTableWidget;

namespace capsim::gui {

class CatalogModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  void set_entries(hardware::EntityKind kind, std::vector<const hardware::Entity*> entries);
  const hardware::Entity* entry(int row) const;
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;
  QString column_field(int column) const;

 private:
  std::vector<const hardware::Entity*> entries_;
  scenarios::Table table_;
};

class CatalogBrowser : public QWidget {
  Q_OBJECT

 public:
  CatalogBrowser(std::shared_ptr<const hardware::Catalog> catalog, QString database, QWidget* parent = nullptr);

  // Shows `kind` with the filters ("memory>=40 GB; vendor=nvidia") and sort; problems with
  // the filter are shown under it. Returns false when the filter does not parse.
  bool show_kind(hardware::EntityKind kind, const QString& filter = {}, const QString& sort = {}, bool descending = false);
  CatalogModel* model() const { return model_; }
  QTableView* view() const { return view_; }
  QTableWidget* detail() const { return detail_; }
  QLineEdit* filter_edit() const { return filter_; }
  void select_row(int row);

 private:
  void refresh();
  void show_detail(int row);

  std::shared_ptr<const hardware::Catalog> catalog_;
  QComboBox* kind_;
  QLineEdit* filter_;
  QComboBox* sort_;
  QCheckBox* descending_;
  QLabel* message_;
  QTableView* view_;
  QTableWidget* detail_;
  QLabel* detail_title_;
  CatalogModel* model_;
};

}  // namespace capsim::gui
