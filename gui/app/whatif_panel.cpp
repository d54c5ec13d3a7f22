#include "whatif_panel.hpp"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>
#include <QVBoxLayout>
#include <cmath>

namespace capsim::gui {
namespace {

const QString kAsFile = "(as in the file)";

}  // namespace

WhatIfPanel::WhatIfPanel(const hardware::Catalog& catalog, QWidget* parent) : QWidget(parent) {
  model_ = new QComboBox;
  model_->setObjectName("whatIfModel");
  model_->addItem(kAsFile);
  for (const auto& name : model_presets()) model_->addItem(QString::fromStdString(name));
  gpu_ = new QComboBox;
  gpu_->setObjectName("whatIfGpu");
  gpu_->addItem(kAsFile);
  for (const auto& id : catalog.ids(hardware::EntityKind::gpu)) gpu_->addItem(QString::fromStdString(id));
  gpus_ = new QSpinBox;
  gpus_->setObjectName("whatIfGpus");
  gpus_->setRange(1, 1 << 20);
  gpus_label_ = new QLabel("max GPUs");
  rate_ = new QDoubleSpinBox;
  rate_->setObjectName("whatIfRate");
  rate_->setRange(0.001, 1e7);
  rate_->setDecimals(1);
  rate_->setSuffix(" req/s");
  utilization_ = new QSlider(Qt::Horizontal);
  utilization_->setObjectName("whatIfUtilization");
  utilization_->setRange(1, 100);
  utilization_value_ = new QLabel;
  electricity_ = new QDoubleSpinBox;
  electricity_->setObjectName("whatIfElectricity");
  electricity_->setRange(0.0, 5.0);
  electricity_->setDecimals(3);
  electricity_->setSingleStep(0.01);
  electricity_->setSuffix(" USD/kWh");
  electricity_->setSpecialValueText("(per facility)");
  horizon_ = new QSpinBox;
  horizon_->setObjectName("whatIfHorizon");
  horizon_->setRange(1, 240);
  horizon_->setSuffix(" months");
  timing_ = new QLabel;
  timing_->setObjectName("whatIfTiming");
  auto* reset_button = new QPushButton("Reset to the file's values");

  auto* util_row = new QWidget;
  auto* ul = new QHBoxLayout(util_row);
  ul->setContentsMargins(0, 0, 0, 0);
  ul->addWidget(utilization_, 1);
  ul->addWidget(utilization_value_);
  utilization_value_->setMinimumWidth(44);

  auto* form = new QFormLayout;
  form->addRow("model", model_);
  form->addRow("GPU type", gpu_);
  form->addRow(gpus_label_, gpus_);
  form->addRow("request rate", rate_);
  form->addRow("utilization", util_row);
  form->addRow("electricity", electricity_);
  form->addRow("horizon", horizon_);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addWidget(reset_button);
  layout->addWidget(timing_);
  layout->addStretch(1);

  connect(model_, &QComboBox::currentIndexChanged, this, &WhatIfPanel::update_from_controls);
  connect(gpu_, &QComboBox::currentIndexChanged, this, &WhatIfPanel::update_from_controls);
  connect(gpus_, &QSpinBox::valueChanged, this, &WhatIfPanel::update_from_controls);
  connect(rate_, &QDoubleSpinBox::valueChanged, this, &WhatIfPanel::update_from_controls);
  connect(utilization_, &QSlider::valueChanged, this, &WhatIfPanel::update_from_controls);
  connect(electricity_, &QDoubleSpinBox::valueChanged, this, &WhatIfPanel::update_from_controls);
  connect(horizon_, &QSpinBox::valueChanged, this, &WhatIfPanel::update_from_controls);
  connect(reset_button, &QPushButton::clicked, this, &WhatIfPanel::reset);
}

void WhatIfPanel::load(const scenarios::Scenario& s) {
  loading_ = true;
  const bool training = !s.inference && !s.training.service;
  const bool llm = s.inference && s.inference->llm;
  model_->setEnabled(training || llm);
  model_->setCurrentIndex(0);
  gpu_->setEnabled(!s.training.service);
  gpu_->setCurrentIndex(0);
  if (s.inference) {
    gpus_label_->setText("replicas");
    base_gpus_ = s.inference->llm ? s.inference->replicas
                                  : (s.inference->stages.empty() ? 1 : s.inference->stages.front().replicas);
    gpus_->setEnabled(!s.inference->node.empty());
  } else if (s.training.service) {
    gpus_label_->setText("GPUs");
    base_gpus_ = s.training.service_gpus;
    gpus_->setEnabled(true);
  } else {
    gpus_label_->setText("max GPUs");
    base_gpus_ = s.hardware.max_gpus;
    gpus_->setEnabled(true);
  }
  gpus_->setValue(base_gpus_);
  base_rate_ = s.inference ? s.inference->arrivals.rate.value() : 0;
  rate_->setEnabled(s.inference && s.inference->arrivals.kind != models::ArrivalSpec::Kind::trace);
  rate_->setValue(base_rate_);
  base_rate_ = rate_->value();  // as the box rounds it
  const bool cost = s.cost.has_value();
  base_utilization_ = 100;
  if (cost && s.cost->profile == "measured") base_utilization_ = static_cast<int>(std::lround(100 * s.cost->busy));
  if (cost && s.cost->profile == "business-hours")
    base_utilization_ = static_cast<int>(std::lround(100 * s.cost->hours_per_day * s.cost->days_per_week / 168));
  utilization_->setEnabled(cost);
  utilization_->setValue(base_utilization_);
  utilization_value_->setText(QString("%1 %").arg(base_utilization_));
  electricity_->setEnabled(cost);
  base_electricity_ = 0;
  electricity_->setValue(0);
  base_horizon_ = cost ? static_cast<int>(std::lround(s.cost->horizon.value() / units::month)) : 24;
  horizon_->setEnabled(cost);
  horizon_->setValue(base_horizon_);
  what_if_ = {};
  loading_ = false;
}

void WhatIfPanel::reset() {
  loading_ = true;
  model_->setCurrentIndex(0);
  gpu_->setCurrentIndex(0);
  gpus_->setValue(base_gpus_);
  rate_->setValue(base_rate_);
  utilization_->setValue(base_utilization_);
  electricity_->setValue(base_electricity_);
  horizon_->setValue(base_horizon_);
  loading_ = false;
  update_from_controls();
}

void WhatIfPanel::update_from_controls() {
  utilization_value_->setText(QString("%1 %").arg(utilization_->value()));
  if (loading_) return;
  WhatIf w;
  if (model_->isEnabled() && model_->currentIndex() > 0) w.model = model_->currentText().toStdString();
  if (gpu_->isEnabled() && gpu_->currentIndex() > 0) w.gpu = gpu_->currentText().toStdString();
  if (gpus_->isEnabled() && gpus_->value() != base_gpus_) w.gpus = gpus_->value();
  if (rate_->isEnabled() && rate_->value() != base_rate_) w.request_rate = rate_->value();
  if (utilization_->isEnabled() && utilization_->value() != base_utilization_) w.utilization = utilization_->value() / 100.0;
  if (electricity_->isEnabled() && electricity_->value() > 0) w.electricity_usd_per_kwh = electricity_->value();
  if (horizon_->isEnabled() && horizon_->value() != base_horizon_) w.horizon_months = horizon_->value();
  what_if_ = w;
  emit changed();
}

void WhatIfPanel::set_timing(double seconds, bool ok) {
  timing_->setText(ok ? QString("Recomputed in %1 ms").arg(seconds * 1e3, 0, 'f', 1) : QString("Not recomputed: see Problems"));
}

}  // namespace capsim::gui
