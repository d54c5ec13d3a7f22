// capsim accuracy: every published measurement in data/validation predicted by the models,
// with the signed error per row and mean / worst absolute error per group.
//
// Each validation file names its kind at the top (`kind: training | cnn-training |
// vision-inference | llm-serving`); Megatron-LM's Table 1 keeps its own published layout
// and is read as training rows. Rows marked `fit: true` are the ones the models' constants
// were chosen on; every other row is held out, and its error is reported separately.
// A row the models cannot predict is listed as "not predicted" with the reason and counts
// in no mean. Pure function of the files and the catalog; thread-safe.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "capsim/core/result.hpp"
#include "capsim/hardware/catalog.hpp"

namespace capsim::scenarios {

struct AccuracyRow {
  std::string file;                 // file name inside the validation directory
  std::string id;                   // the row's id
  std::string kind;                 // training, cnn-training, vision-inference, llm-serving
  std::vector<std::string> groups;  // kind, the row's own group, and derived tags
  bool fit = false;                 // the constants were chosen with this row in view
  std::string metric;               // what was measured, e.g. tokens_per_s_per_gpu
  double published = 0;
  double predicted = 0;
  double error_percent = 0;         // (predicted - published) / published x 100
  std::string detail;               // layout / bottleneck as the model saw it
  std::string source;               // citation of the measurement
  std::string where;                // table / figure / row in the source
  std::string not_predicted;        // non-empty: why the models gave no figure
  double step_time_s = 0;           // training: the plan's step time the prediction was read from
  // The first-look protocol (data/validation/README.md): a row marked `first_look:` had its
  // error recorded the day it was added, before any model change it could motivate
  // (first_looks.yaml beside the rows); that recorded error, which no later change moves,
  // is what a new configuration should expect. A row neither fit nor first-look is dev:
  // its error has been looked at while changing the models.
  bool first_look_row = false;               // marked first_look: in its file
  std::optional<double> first_look_error;    // the recorded error %, once recorded
  // Marked first_look: and not recorded yet: its prediction is computed (record_first_looks
  // records it) but no report shows it, nor counts it in a summary, before it is recorded.
  bool first_look_pending() const { return first_look_row && !fit && !first_look_error; }
};

struct AccuracySummary {
  std::string group;
  int rows = 0;           // predicted rows
  int not_predicted = 0;
  double mean_abs = 0;    // mean |error| %, all predicted rows
  double max_abs = 0;
  int held_out = 0;       // predicted rows with fit: false
  double held_out_mean_abs = 0;
  double held_out_max_abs = 0;
  int fit = 0;
  double fit_mean_abs = 0;
  int dev = 0;                 // neither fit nor with a recorded first look: current error
  double dev_mean_abs = 0;
  double dev_max_abs = 0;
  int first_look = 0;          // with a recorded first look: the recorded error
  double first_look_mean_abs = 0;
  double first_look_max_abs = 0;
  int first_look_pending = 0;  // marked first_look: but not recorded yet: in no figure above
};

struct AccuracyReport {
  std::vector<AccuracyRow> rows;           // in file order
  std::vector<AccuracySummary> groups;     // one per group name, sorted by name
  AccuracySummary overall;                 // every predicted row of the selection
};

// Predicts every row of every *.yaml file under `validation_dir` that carries `kind:` (and
// Megatron's table). `group`: when non-empty, only rows in that group. Errors: the
// directory cannot be read, a file is not YAML (with its location), a row without id,
// source or measured value, an unknown group name (with "did you mean").
Result<AccuracyReport> run_accuracy(const hardware::Catalog& catalog,
                                    const std::filesystem::path& validation_dir,
                                    const std::string& group = {});

// A validation row as the scenario the runner plans for it, and the command that plans it
// the same way (`capsim accuracy --scenario ROW`): piped to that command, the scenario gives
// the row's predicted figure. Errors: no row with that id (with "did you mean"), a row whose
// kind the runner still predicts outside the plan function (cnn-training, vision-inference:
// issue 46 moves them next), or a row no scenario can express (the reason run_accuracy gives).
struct AccuracyRowScenario {
  std::string id;
  std::string metric;   // the row's metric
  std::string command;  // "simulate" (llm-serving), "run" (training)
  std::string text;     // scenario YAML
};
Result<AccuracyRowScenario> accuracy_row_scenario(const hardware::Catalog& catalog,
                                                  const std::filesystem::path& validation_dir, const std::string& id);
// Every row that has one (llm-serving and training rows), in file order; a row whose scenario cannot be
// written is left out (run_accuracy reports it as not predicted).
Result<std::vector<AccuracyRowScenario>> accuracy_row_scenarios(const hardware::Catalog& catalog,
                                                                const std::filesystem::path& validation_dir);

// The file of recorded first looks in a validation directory.
inline constexpr const char* kFirstLooksFile = "first_looks.yaml";

// One recorded first look: what capsim predicted for a row the day it was added.
struct FirstLook {
  std::string id;
  std::string metric;
  double published = 0;
  double predicted = 0;
  double error_percent = 0;
  std::string commit;  // the capsim commit that predicted it
  std::string date;    // YYYY-MM-DD (UTC)
  std::string digest;  // first_look_digest(): a changed figure no longer matches it
};
// FNV-1a 64 of id, metric, published, predicted and commit (%.17g), as 16 hex digits.
std::string first_look_digest(const FirstLook& f);
// The recorded first looks of `file` (empty when it does not exist); errors name the line.
Result<std::vector<FirstLook>> read_first_looks(const std::filesystem::path& file);

// `capsim accuracy --record-first-look FILE`: predicts every row marked first_look: that
// FILE does not hold yet and appends its first look (written whole, atomically); entries
// already in FILE are never rewritten. Returns the ids recorded.
Result<std::vector<std::string>> record_first_looks(const hardware::Catalog& catalog,
                                                    const std::filesystem::path& validation_dir,
                                                    const std::filesystem::path& file, const std::string& commit,
                                                    const std::string& date);

// $CAPSIM_VALIDATION, else <data directory>/validation (see find_data_dir).
Result<std::filesystem::path> default_validation_dir(const std::filesystem::path& data_dir = {});

}  // namespace capsim::scenarios
