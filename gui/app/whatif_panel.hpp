// The what-if controls: model, GPU, GPU count, deadline and tokens (training), request rate,
// prompt and answer lengths and tensor parallelism (LLM serving), utilization, electricity
// price, horizon. Each control starts at "as in the file"; changing one emits changed() with the
// set of values that differ from the file, and the window recomputes.
#pragma once

#include <QWidget>

#include "capsim/hardware/catalog.hpp"
#include "capsim/scenarios/scenario.hpp"
#include "whatif.hpp"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QSlider;
class QSpinBox;

namespace capsim::gui {

class WhatIfPanel : public QWidget {
  Q_OBJECT

 public:
  explicit WhatIfPanel(const hardware::Catalog& catalog, QWidget* parent = nullptr);

  // Shows the scenario's own values and enables the controls that apply to it; clears the
  // overrides.
  void load(const scenarios::Scenario& s);
  WhatIf what_if() const { return what_if_; }
  void reset();
  void set_timing(double seconds, bool ok);

  // The controls, for tests and shortcuts.
  QComboBox* model_box() const { return model_; }
  QComboBox* gpu_box() const { return gpu_; }
  QSpinBox* gpus_box() const { return gpus_; }
  QDoubleSpinBox* rate_box() const { return rate_; }
  QSlider* utilization_slider() const { return utilization_; }
  QDoubleSpinBox* electricity_box() const { return electricity_; }
  QSpinBox* horizon_box() const { return horizon_; }
  QDoubleSpinBox* deadline_box() const { return deadline_; }
  QDoubleSpinBox* tokens_box() const { return tokens_; }
  QSpinBox* prompt_box() const { return prompt_; }
  QSpinBox* output_box() const { return output_; }
  QSpinBox* tensor_parallel_box() const { return tensor_parallel_; }
  QComboBox* engine_box() const { return engine_; }

 signals:
  void changed();

 private:
  void update_from_controls();

  QComboBox* model_;
  QComboBox* gpu_;
  QSpinBox* gpus_;
  QLabel* gpus_label_;
  QDoubleSpinBox* rate_;
  QSlider* utilization_;
  QLabel* utilization_value_;
  QDoubleSpinBox* electricity_;
  QSpinBox* horizon_;
  QDoubleSpinBox* deadline_;  // days
  QDoubleSpinBox* tokens_;    // billions of tokens
  QSpinBox* prompt_;
  QSpinBox* output_;
  QSpinBox* tensor_parallel_;
  QComboBox* engine_;
  QLabel* timing_;
  WhatIf what_if_;
  // The file's values: a control at that value sets no override.
  QString base_model_, base_gpu_;
  int base_gpus_ = 0, base_horizon_ = 0, base_utilization_ = 0;
  double base_rate_ = 0, base_electricity_ = 0, base_deadline_ = 0, base_tokens_ = 0;
  int base_prompt_ = 0, base_output_ = 0, base_tensor_parallel_ = 0;
  bool loading_ = false;
};

}  // namespace capsim::gui
