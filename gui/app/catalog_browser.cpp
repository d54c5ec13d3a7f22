#include "catalog_browser.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSplitter>
#include <QTableView>
#include <QTableWidget>
#include <QVBoxLayout>

#include "capsim/hardware/schema.hpp"
#include "capsim/scenarios/catalog_views.hpp"

namespace capsim::gui {
namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }
QString q(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }

}  // namespace

void CatalogModel::set_entries(hardware::EntityKind kind, std::vector<const hardware::Entity*> entries) {
  beginResetModel();
  entries_ = std::move(entries);
  table_ = scenarios::entities_table(kind, entries_, false);
  endResetModel();
}

const hardware::Entity* CatalogModel::entry(int row) const {
  return row >= 0 && row < static_cast<int>(entries_.size()) ? entries_[static_cast<std::size_t>(row)] : nullptr;
}

int CatalogModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(table_.rows.size());
}

int CatalogModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(table_.columns.size());
}

QString CatalogModel::column_field(int column) const {
  return column >= 0 && column < static_cast<int>(table_.columns.size()) ? q(table_.columns[static_cast<std::size_t>(column)])
                                                                         : QString();
}

QVariant CatalogModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid()) return {};
  const auto row = static_cast<std::size_t>(index.row());
  const auto col = static_cast<std::size_t>(index.column());
  if (role == Qt::DisplayRole) return q(table_.rows[row][col].text);
  if (role == Qt::TextAlignmentRole)
    return (col < table_.right_align.size() && table_.right_align[col]) ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
                                                                       : QVariant(Qt::AlignLeft | Qt::AlignVCenter);
  if (role == Qt::ToolTipRole) {
    const hardware::FieldValue* v = entries_[row]->find(table_.columns[col]);
    if (v == nullptr || !v->provenance) return {};
    return q(table_.columns[col]) + " = " + q(table_.rows[row][col].text) + "\nsource: " + q(v->provenance->source) +
           "\nas of: " + q(v->provenance->as_of);
  }
  return {};
}

QVariant CatalogModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole) return {};
  if (orientation == Qt::Horizontal) return column_field(section);
  return section + 1;
}

CatalogBrowser::CatalogBrowser(std::shared_ptr<const hardware::Catalog> catalog, QString database, QWidget* parent)
    : QWidget(parent), catalog_(std::move(catalog)) {
  kind_ = new QComboBox;
  kind_->setObjectName("catalogKind");
  for (auto k : {hardware::EntityKind::gpu, hardware::EntityKind::server, hardware::EntityKind::instance,
                 hardware::EntityKind::cpu, hardware::EntityKind::interconnect, hardware::EntityKind::network,
                 hardware::EntityKind::facility})
    kind_->addItem(q(hardware::section_name(k)), static_cast<int>(k));
  filter_ = new QLineEdit;
  filter_->setObjectName("catalogFilter");
  filter_->setPlaceholderText("filter, e.g.  memory>=40 GB; vendor=nvidia   (Enter to apply)");
  filter_->setClearButtonEnabled(true);
  sort_ = new QComboBox;
  sort_->setObjectName("catalogSort");
  descending_ = new QCheckBox("descending");
  message_ = new QLabel;
  message_->setStyleSheet("color: #b00000;");
  message_->setWordWrap(true);
  model_ = new CatalogModel;
  model_->setParent(this);
  view_ = new QTableView;
  view_->setObjectName("catalogTable");
  view_->setModel(model_);
  view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  view_->setSelectionMode(QAbstractItemView::SingleSelection);
  view_->setAlternatingRowColors(true);
  view_->verticalHeader()->setVisible(false);
  view_->horizontalHeader()->setSectionsClickable(true);
  view_->horizontalHeader()->setToolTip("Click a column to sort by it; click again to reverse");
  detail_title_ = new QLabel;
  detail_title_->setWordWrap(true);
  detail_ = new QTableWidget;
  detail_->setObjectName("catalogDetail");
  detail_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  detail_->verticalHeader()->setVisible(false);
  detail_->setWordWrap(true);

  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel("Show"));
  bar->addWidget(kind_);
  bar->addWidget(new QLabel("where"));
  bar->addWidget(filter_, 1);
  bar->addWidget(new QLabel("sort by"));
  bar->addWidget(sort_);
  bar->addWidget(descending_);
  auto* top = new QWidget;
  auto* tl = new QVBoxLayout(top);
  tl->setContentsMargins(0, 0, 0, 0);
  tl->addLayout(bar);
  tl->addWidget(message_);
  tl->addWidget(view_, 1);
  auto* source_note = new QLabel("Database: " + database + ".  Hover a number for its source and date.");
  source_note->setStyleSheet("color: #555;");
  tl->addWidget(source_note);
  auto* bottom = new QWidget;
  auto* bl = new QVBoxLayout(bottom);
  bl->setContentsMargins(0, 0, 0, 0);
  bl->addWidget(detail_title_);
  bl->addWidget(detail_, 1);
  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(top);
  split->addWidget(bottom);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(split);

  connect(kind_, &QComboBox::currentIndexChanged, this, [this] {
    sort_->blockSignals(true);
    sort_->clear();
    sort_->addItem("(catalog order)", QString());
    for (const auto& f : hardware::fields_of(static_cast<hardware::EntityKind>(kind_->currentData().toInt())))
      sort_->addItem(q(f.name), q(f.name));
    sort_->blockSignals(false);
    refresh();
  });
  connect(filter_, &QLineEdit::returnPressed, this, &CatalogBrowser::refresh);
  connect(sort_, &QComboBox::currentIndexChanged, this, &CatalogBrowser::refresh);
  connect(descending_, &QCheckBox::toggled, this, &CatalogBrowser::refresh);
  connect(view_->horizontalHeader(), &QHeaderView::sectionClicked, this, [this](int section) {
    const QString field = model_->column_field(section);
    const int i = sort_->findData(field);
    if (i < 0) return;
    if (sort_->currentIndex() == i) descending_->setChecked(!descending_->isChecked());
    else sort_->setCurrentIndex(i);
  });
  connect(view_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) { show_detail(current.row()); });
  emit kind_->currentIndexChanged(0);
}

bool CatalogBrowser::show_kind(hardware::EntityKind kind, const QString& filter, const QString& sort, bool descending) {
  kind_->setCurrentIndex(kind_->findData(static_cast<int>(kind)));
  filter_->setText(filter);
  descending_->blockSignals(true);
  descending_->setChecked(descending);
  descending_->blockSignals(false);
  const int i = sort.isEmpty() ? 0 : sort_->findData(sort);
  sort_->blockSignals(true);
  sort_->setCurrentIndex(std::max(i, 0));
  sort_->blockSignals(false);
  refresh();
  return message_->text().isEmpty();
}

void CatalogBrowser::refresh() {
  const auto kind = static_cast<hardware::EntityKind>(kind_->currentData().toInt());
  hardware::Query query;
  QStringList problems;
  for (const QString& part : filter_->text().split(';', Qt::SkipEmptyParts)) {
    if (part.trimmed().isEmpty()) continue;
    auto f = hardware::parse_filter(kind, part.trimmed().toStdString());
    if (!f) {
      for (const auto& d : f.errors()) problems << q(d.message + (d.hint.empty() ? "" : " (" + d.hint + ")"));
      continue;
    }
    query.filters.push_back(*f);
  }
  query.sort_by = sort_->currentData().toString().toStdString();
  query.descending = descending_->isChecked();
  auto rows = hardware::run_query(*catalog_, kind, query);
  if (!rows) {
    for (const auto& d : rows.errors()) problems << q(d.message);
    model_->set_entries(kind, {});
  } else {
    model_->set_entries(kind, *rows);
  }
  message_->setText(problems.join("\n"));
  message_->setVisible(!problems.isEmpty());
  view_->resizeColumnsToContents();
  if (model_->rowCount() > 0) select_row(0);
  else show_detail(-1);
}

void CatalogBrowser::select_row(int row) {
  view_->selectRow(row);
  show_detail(row);
}

void CatalogBrowser::show_detail(int row) {
  const hardware::Entity* e = model_->entry(row);
  detail_->clear();
  if (e == nullptr) {
    detail_title_->setText("No entry selected.");
    detail_->setRowCount(0);
    return;
  }
  detail_title_->setText("<b>" + q(e->id) + "</b> (" + q(hardware::kind_name(e->kind)) + "), defined at " +
                         q(e->where.file) + QString(":%1").arg(e->where.line));
  const scenarios::Table t = scenarios::entity_table(*e);
  detail_->setColumnCount(static_cast<int>(t.columns.size()));
  detail_->setRowCount(static_cast<int>(t.rows.size()));
  QStringList headers;
  for (const auto& c : t.columns) headers << q(c);
  detail_->setHorizontalHeaderLabels(headers);
  for (std::size_t r = 0; r < t.rows.size(); ++r)
    for (std::size_t c = 0; c < t.rows[r].size(); ++c) {
      auto* item = new QTableWidgetItem(q(t.rows[r][c].text));
      item->setToolTip(q(t.rows[r][c].text));
      detail_->setItem(static_cast<int>(r), static_cast<int>(c), item);
    }
  // field and as_of fit their text; value gets a fair share; source takes the rest.
  detail_->resizeColumnsToContents();
  for (int c = 0; c < detail_->columnCount(); ++c) {
    const bool source = headers[c] == "source";
    detail_->horizontalHeader()->setSectionResizeMode(c, source ? QHeaderView::Stretch : QHeaderView::Interactive);
    if (!source) detail_->setColumnWidth(c, std::min(detail_->columnWidth(c), 200));
  }
  detail_->resizeRowsToContents();
}

}  // namespace capsim::gui
