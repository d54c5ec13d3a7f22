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
  deadline_ = new QDoubleSpinBox;
  deadline_->setObjectName("whatIfDeadline");
  deadline_->setRange(0.0, 3650);
  deadline_->setDecimals(1);
  deadline_->setSuffix(" days");
  deadline_->setSpecialValueText("(none)");
  tokens_ = new QDoubleSpinBox;
  tokens_->setObjectName("whatIfTokens");
  tokens_->setRange(0.001, 1e6);
  tokens_->setDecimals(3);
  tokens_->setSuffix(" B tokens");
  prompt_ = new QSpinBox;
  prompt_->setObjectName("whatIfPrompt");
  prompt_->setRange(1, 1 << 20);
  prompt_->setSuffix(" tokens");
  output_ = new QSpinBox;
  output_->setObjectName("whatIfOutput");
  output_->setRange(1, 1 << 20);
  output_->setSuffix(" tokens");
  engine_ = new QComboBox;
  engine_->setObjectName("whatIfEngine");
  engine_->addItem(kAsFile);
  for (const auto& e : catalog.all(hardware::EntityKind::engine))
    if (e.text("kind") == "llm-serving") engine_->addItem(QString::fromStdString(e.id));
  engine_->setToolTip("the LLM serving engine, with its scheduler settings from data/catalog/llm_engines.yaml "
                      "(the file's own keys still win)");
  tensor_parallel_ = new QSpinBox;
  tensor_parallel_->setObjectName("whatIfTensorParallel");
  tensor_parallel_->setRange(1, 64);
  // Return in a spin box commits the value here; it must not reach a default button elsewhere.
  for (auto* box : std::initializer_list<QAbstractSpinBox*>{gpus_, rate_, electricity_, horizon_, deadline_, tokens_, prompt_,
                                                            output_, tensor_parallel_})
    box->setKeyboardTracking(false);
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
  form->addRow("deadline", deadline_);
  form->addRow("tokens", tokens_);
  form->addRow("request rate", rate_);
  form->addRow("prompt length", prompt_);
  form->addRow("answer length", output_);
  form->addRow("engine", engine_);
  form->addRow("tensor parallel", tensor_parallel_);
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
  connect(deadline_, &QDoubleSpinBox::valueChanged, this, &WhatIfPanel::update_from_controls);
  connect(tokens_, &QDoubleSpinBox::valueChanged, this, &WhatIfPanel::update_from_controls);
  connect(prompt_, &QSpinBox::valueChanged, this, &WhatIfPanel::update_from_controls);
  connect(output_, &QSpinBox::valueChanged, this, &WhatIfPanel::update_from_controls);
  connect(tensor_parallel_, &QSpinBox::valueChanged, this, &WhatIfPanel::update_from_controls);
  connect(engine_, &QComboBox::currentIndexChanged, this, &WhatIfPanel::update_from_controls);
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
  deadline_->setEnabled(training);
  deadline_->setValue(training && s.deadline ? s.deadline->value() / units::day : 0.0);
  base_deadline_ = deadline_->value();
  tokens_->setEnabled(training && s.training.is_transformer());
  tokens_->setValue(training && s.training.is_transformer() ? s.training.tokens / 1e9 : 1.0);
  base_tokens_ = tokens_->value();
  const bool lengths = llm && s.inference->mix.requests.empty();
  prompt_->setEnabled(lengths);
  output_->setEnabled(lengths);
  prompt_->setValue(llm ? s.inference->mix.prompt_tokens : 1);
  output_->setValue(llm ? s.inference->mix.output_tokens : 1);
  base_prompt_ = prompt_->value();
  base_output_ = output_->value();
  tensor_parallel_->setEnabled(llm && !s.inference->node.empty());
  tensor_parallel_->setValue(llm ? s.inference->tensor_parallel : 1);
  base_tensor_parallel_ = tensor_parallel_->value();
  engine_->setEnabled(llm);
  engine_->setCurrentIndex(0);
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
  deadline_->setValue(base_deadline_);
  tokens_->setValue(base_tokens_);
  prompt_->setValue(base_prompt_);
  output_->setValue(base_output_);
  tensor_parallel_->setValue(base_tensor_parallel_);
  engine_->setCurrentIndex(0);
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
  if (deadline_->isEnabled() && deadline_->value() != base_deadline_ && deadline_->value() > 0)
    w.deadline_days = deadline_->value();
  if (tokens_->isEnabled() && tokens_->value() != base_tokens_) w.tokens = tokens_->value() * 1e9;
  if (prompt_->isEnabled() && prompt_->value() != base_prompt_) w.prompt_tokens = prompt_->value();
  if (output_->isEnabled() && output_->value() != base_output_) w.output_tokens = output_->value();
  if (tensor_parallel_->isEnabled() && tensor_parallel_->value() != base_tensor_parallel_)
    w.tensor_parallel = tensor_parallel_->value();
  if (engine_->isEnabled() && engine_->currentIndex() > 0) w.engine = engine_->currentText().toStdString();
  what_if_ = w;
  emit changed();
}

void WhatIfPanel::set_timing(double seconds, bool ok) {
  timing_->setText(ok ? QString("Recomputed in %1 ms").arg(seconds * 1e3, 0, 'f', 1) : QString("Not recomputed: see Problems"));
}

}  // namespace capsim::gui
