// Kinds of validation rows whose predictor is not written yet: each row is reported as
// "not predicted" with this reason (never as a zero figure).
#include "predictors.hpp"

namespace capsim::scenarios::accuracy {
namespace {
Result<RowPrediction> not_modelled(const YAML::Node& row, const char* kind) {
  const YAML::Mark m = row.Mark();
  return Diagnostic{{{}, m.line + 1, m.column + 1}, "", std::string("no predictor for ") + kind + " rows yet", {}};
}
}  // namespace

Result<RowPrediction> predict_llm_serving_row(const YAML::Node& row, const hardware::Catalog&) {
  return not_modelled(row, "llm-serving");
}

}  // namespace capsim::scenarios::accuracy
