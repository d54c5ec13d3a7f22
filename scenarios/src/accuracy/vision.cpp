// CNN training and vision inference rows, predicted from the networks' layers (cnn.hpp)
// and, for inference, the engine's efficiency profile (data/catalog/engines.yaml).
#include <string>

#include "capsim/models/cnn.hpp"
#include "capsim/models/serving.hpp"
#include "predictors.hpp"

namespace capsim::scenarios::accuracy {
namespace {

// "amp-fp16", "fp16" (TensorFlow's --use_fp16: mixed precision), "amp-bf16", "tf32", "int8", "fp32".
models::Precision requested_precision(const std::string& p) {
  if (p == "amp-bf16" || p == "bf16") return models::Precision::bf16;
  if (p == "amp-fp16" || p == "fp16") return models::Precision::fp16;
  if (p == "tf32") return models::Precision::tf32;
  if (p == "int8") return models::Precision::int8;
  return models::Precision::fp32;
}

struct Common {
  const models::CnnNetwork* network = nullptr;
  hardware::GpuSpec gpu;
  models::Precision precision = models::Precision::fp32;
};

Result<Common> common(const YAML::Node& row, const hardware::Catalog& catalog) {
  Common c;
  const std::string model = row["model"].as<std::string>();
  c.network = models::find_cnn(model);
  if (!c.network) return row_error(row["model"], "model", "no layer list for '" + model + "' yet");
  const std::string gpu = row["gpu"].as<std::string>();
  auto spec = catalog.gpu(gpu);
  if (!spec) return row_error(row["gpu"], "gpu", "'" + gpu + "' is not in the catalog");
  c.gpu = *spec;
  c.precision = requested_precision(row["precision"] ? row["precision"].as<std::string>() : "fp32");
  return c;
}

bool sixteen_bit(models::Precision p) { return p == models::Precision::fp16 || p == models::Precision::bf16; }

// The catalog engine a row ran on. `framework` rows name their framework (pytorch: eager
// PyTorch, the `framework` engine; tensorflow: the TensorFlow graph engine). Per the header
// of vision_inference.yaml, `onnxruntime` rows are ONNX Runtime with its TensorRT execution
// provider behind Triton: TensorRT's kernels, reached through a Triton request.
Result<hardware::EngineSpec> row_engine(const YAML::Node& row, const hardware::Catalog& catalog) {
  const std::string engine = row["engine"] ? row["engine"].as<std::string>() : "framework";
  std::string id = engine;
  if (engine == "framework") {
    const std::string fw = row["framework"] ? row["framework"].as<std::string>() : "pytorch";
    if (fw != "pytorch" && fw != "tensorflow")
      return row_error(row["framework"], "framework", "no engine profile for framework '" + fw + "'");
    id = fw == "tensorflow" ? "tensorflow" : "framework";
  } else if (engine == "onnxruntime") {
    id = "tensorrt";
  }
  auto spec = catalog.engine(id);
  if (!spec) return row_error(row["engine"] ? row["engine"] : row, "engine", spec.errors().front().message);
  return *spec;
}

}  // namespace

Result<RowPrediction> predict_cnn_training_row(const YAML::Node& row, const hardware::Catalog& catalog) {
  auto c = common(row, catalog);
  if (!c) return c.errors();
  if (!row["batch_per_gpu"]) return row_error(row, "batch_per_gpu", "the row gives no batch size");
  const int batch = row["batch_per_gpu"].as<int>();
  const int gpus = row["gpus"] ? row["gpus"].as<int>() : 1;
  bool channels_last = row["channels_last"] && row["channels_last"].as<bool>();
  std::string layout_note;
  // TensorFlow's layout optimizer runs 16-bit convolutions in NHWC on Volta and newer (the
  // `tensorflow` engine's layout): no per-convolution transposes.
  if (row["framework"] && row["framework"].as<std::string>() == "tensorflow" && !channels_last) {
    if (auto tf = catalog.engine("tensorflow"); tf && tf->channels_last(sixteen_bit(c->precision))) {
      channels_last = true;
      layout_note = "NHWC (TensorFlow layout optimizer)";
    }
  }
  auto step = models::cnn_training_step(*c->network, batch, c->gpu, c->precision, channels_last);
  if (!step) return step.errors();
  const YAML::Node m = row["measured"];
  RowPrediction r;
  r.metric = "images_per_s";
  r.published = m["images_per_s"].as<double>();
  const bool total = m["per"] && m["per"].as<std::string>() == "total";
  // Several GPUs: data parallel; the gradient all-reduce of a CNN (25-60 M parameters)
  // overlaps with backward on NVLink nodes, so per-GPU throughput is the one-GPU figure.
  r.predicted = step->images_per_second * (total ? gpus : 1);
  r.detail = std::string(models::precision_name(step->math)) + ", batch " + std::to_string(batch) +
             (step->host_time > step->gpu_time ? ", launch-bound" : "") + (step->note.empty() ? "" : "; " + step->note) +
             (layout_note.empty() ? "" : "; " + layout_note);
  r.tags.push_back(c->gpu.architecture);
  return r;
}

Result<RowPrediction> predict_vision_inference_row(const YAML::Node& row, const hardware::Catalog& catalog) {
  auto engine = row_engine(row, catalog);
  if (!engine) return engine.errors();
  auto c = common(row, catalog);
  if (!c) return c.errors();
  const int batch = row["batch"].as<int>();
  // A row that states its layout runs in it (the engine profile's default layout otherwise).
  hardware::EngineSpec run_on = *engine;
  if (row["channels_last"]) run_on.layout = row["channels_last"].as<bool>() ? "nhwc" : "nchw";
  auto step = models::cnn_inference(*c->network, batch, c->gpu, c->precision, run_on);
  if (!step) return step.errors();
  double seconds = step->time.value();
  std::string path = engine->id;
  const bool triton = row["engine"] && row["engine"].as<std::string>() == "onnxruntime";
  if (triton) {
    // The request's input tensor crosses the client-server connection before the engine
    // runs; perf_analyzer's latency includes it.
    const double input_bytes = 3.0 * c->network->input_size * c->network->input_size *
                               (c->precision == models::Precision::int8 ? 1 : sixteen_bit(c->precision) ? 2 : 4);
    seconds += models::kTritonRequestOverheadSeconds() + batch * input_bytes / models::kTritonPayloadBytesPerSecond();
    path = "Triton + onnxruntime/TensorRT";
  }
  // A benchmark that feeds the engine from a host input pipeline (decoding JPEGs on
  // `input_threads` CPU threads, prefetched ahead of the GPU) waits for it when it is slower.
  int input_threads = 0;  // 0: the engine is fed at once
  if (const YAML::Node threads = row["input_threads"]) {
    if (!YAML::convert<int>::decode(threads, input_threads) || input_threads < 1)
      return row_error(threads, "input_threads", "expected a whole number of threads, at least 1");
  }
  const double feed = input_threads > 0 ? batch * models::kTfInputSecondsPerImage() / input_threads : 0.0;
  const bool input_bound = feed > seconds;
  if (input_bound) seconds = feed;
  const YAML::Node m = row["measured"];
  RowPrediction r;
  if (m["latency_ms"]) {
    r.metric = "latency_ms";
    r.published = m["latency_ms"].as<double>();
    r.predicted = seconds * 1e3;
  } else {
    r.metric = "images_per_s";
    r.published = m["images_per_s"].as<double>();
    r.predicted = batch / seconds;
  }
  r.detail = path + ", " + std::string(models::precision_name(step->math)) + ", batch " + std::to_string(batch) + ", " +
             std::to_string(step->kernels) + " kernels" +
             (input_bound ? ", input-bound (input_threads " + std::to_string(input_threads) + ")"
                          : step->host_time > step->gpu_time ? ", host-bound" : "") +
             (step->note.empty() ? "" : "; " + step->note);
  r.tags.push_back(c->gpu.architecture);
  r.tags.push_back(engine->id == "tensorrt" ? (triton ? "onnxruntime" : "tensorrt") : engine->id);
  return r;
}

}  // namespace capsim::scenarios::accuracy
