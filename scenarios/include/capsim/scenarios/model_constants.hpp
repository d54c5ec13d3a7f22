// docs/model-constants.md: the models' empirical constants (capsim/models/constants.hpp) with
// their value, unit and basis, and each one's sensitivity: how much the dev mean |error| of
// the validation corpus moves when that constant alone is moved -10 % and +10 %
// (`capsim accuracy --constants`). Not thread-safe: the sensitivity run scales the process's
// constants one at a time (ScopedConstantScale) while it predicts the corpus.
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "capsim/core/result.hpp"
#include "capsim/hardware/catalog.hpp"

namespace capsim::scenarios {

struct ConstantSensitivity {
  double minus10 = 0;  // dev mean |error| at 0.9 x the value minus the baseline, percentage points
  double plus10 = 0;   // the same at 1.1 x
};
struct ConstantSensitivities {
  int dev_rows = 0;              // the rows the mean is over (neither fit nor first-look)
  double baseline_dev_mean = 0;  // at the registry's values, %
  std::map<std::string, ConstantSensitivity> by_name;  // keyed by ModelConstant::name
};

// Predicts the corpus under `validation_dir` once at the registry's values and twice per
// constant (x 0.9, x 1.1), on `jobs` threads (0: one per core). `progress` (may be null) is
// told each constant's name as it starts.
Result<ConstantSensitivities> constant_sensitivities(const hardware::Catalog& catalog,
                                                     const std::filesystem::path& validation_dir,
                                                     void (*progress)(const std::string& name) = nullptr,
                                                     unsigned jobs = 0);

// The Markdown of docs/model-constants.md for these sensitivities (a constant missing from
// `s.by_name` shows "not computed").
std::string model_constants_markdown(const ConstantSensitivities& s);

}  // namespace capsim::scenarios
