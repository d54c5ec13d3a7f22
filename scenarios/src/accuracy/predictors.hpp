// Predictors for the rows of data/validation: one function per kind of measurement.
// Internal to capsim_scenarios (the accuracy runner, accuracy.cpp, is the only caller);
// yaml-cpp appears here and not in a public header.
//
// Each predictor reads one row (a YAML mapping as documented in data/validation/README.md),
// builds the workload and hardware from the catalog, asks the models for a prediction in
// the row's own metric, and returns the published and predicted figures. A row the models
// cannot predict (a GPU without the needed peak, a field missing) is an error naming the
// field; the runner reports it as "not predicted", never as zero.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "capsim/core/result.hpp"
#include "capsim/hardware/catalog.hpp"

namespace capsim::scenarios::accuracy {

// An error at a row's node: line and column of the node, the key path, the message (the
// runner adds the file).
Diagnostic row_error(const YAML::Node& n, std::string key, std::string message);

// The scenario's `name` (the row's id) and `description` (its source; where) into `out`, an
// open map.
void emit_row_header(YAML::Emitter& out, const YAML::Node& row);

struct RowPrediction {
  double published = 0;        // the measured figure, in `metric`
  double predicted = 0;        // capsim's figure, same metric and unit
  std::string metric;          // e.g. "tokens_per_s_per_gpu", "images_per_s", "latency_ms"
  std::vector<std::string> tags;  // extra groups the row belongs to (e.g. "ge-1000-gpus")
  std::string detail;          // one line: layout / bottleneck, for the table
  double step_time_s = 0;      // training: the plan's step time the figure was read from
};

// A row as the scenario a user would write for it, and the command that plans it as the
// runner does (`capsim accuracy --scenario ROW` prints it).
struct RowScenario {
  std::string text;     // scenario YAML
  std::string command;  // "simulate" (llm-serving), "run" (training)
};

// kind: llm-serving: the row's scenario (predict_llm_serving_row plans exactly this).
Result<RowScenario> llm_serving_row_scenario(const YAML::Node& row, const hardware::Catalog& catalog);

// kind: training: the row's scenario (predict_training_row plans exactly this).
Result<RowScenario> training_row_scenario(const YAML::Node& row, const hardware::Catalog& catalog);

// kind: training (data/validation/training_*.yaml, megatron_sc21_table1.yaml)
Result<RowPrediction> predict_training_row(const YAML::Node& row, const hardware::Catalog& catalog);
// kind: cnn-training (cnn_training.yaml)
Result<RowPrediction> predict_cnn_training_row(const YAML::Node& row, const hardware::Catalog& catalog);
// kind: vision-inference (vision_inference.yaml)
Result<RowPrediction> predict_vision_inference_row(const YAML::Node& row, const hardware::Catalog& catalog);
// kind: llm-serving (llm_serving.yaml)
Result<RowPrediction> predict_llm_serving_row(const YAML::Node& row, const hardware::Catalog& catalog);

}  // namespace capsim::scenarios::accuracy
