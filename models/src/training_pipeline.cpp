#include "capsim/models/training_pipeline.hpp"

#include <algorithm>
#include <cmath>

#include "capsim/models/memory.hpp"

namespace capsim::models {
namespace {

Diagnostic invalid(const std::string& key, const std::string& message) {
  return Diagnostic{{}, "simulate." + key, message, ""};
}

// Extra cores asked for beyond the bare need, so decoding is not itself at 100 %.
constexpr double kCoreHeadroom = 1.10;

struct Stage {
  Seconds gpu_step;         // one batch on one GPU, incl. exposed all-reduce and checkpoint
  Seconds allreduce;        // exposed per step
  Seconds checkpoint;       // amortized per step
  TrainingEstimate analytic;
};

Result<Stage> gpu_stage(const TrainingPipelineSpec& spec) {
  auto est = estimate_sample_model_step(spec.model, spec.batch_per_gpu, spec.gpus, spec.cluster, spec.options);
  if (!est) return est.errors();
  Stage s;
  s.analytic = *est;
  // The data loader is simulated here, so the model's own (prefetched) input term is left out.
  s.allreduce = spec.allreduce_time_override ? *spec.allreduce_time_override : est->breakdown.data_parallel_comm_exposed;
  const Seconds compute = est->step_time - est->breakdown.data_loading - est->breakdown.data_parallel_comm_exposed;
  if (spec.checkpoint_every_steps > 0) {
    // Model states (weights + optimizer) written every N steps, spread over those steps.
    const Bytes states = sample_model_training_memory(spec.model, 1, spec.options).weights +
                         sample_model_training_memory(spec.model, 1, spec.options).optimizer;
    s.checkpoint = states / spec.checkpoint_bandwidth / static_cast<double>(spec.checkpoint_every_steps);
  }
  s.gpu_step = compute + s.allreduce + s.checkpoint;
  return s;
}

}  // namespace

Result<des::Pipeline> build_training_pipeline(const TrainingPipelineSpec& spec) {
  std::vector<Diagnostic> errors;
  if (spec.batch_per_gpu < 1) errors.push_back(invalid("batch_per_gpu", "must be at least 1"));
  if (spec.gpus < 1 || spec.gpus > spec.cluster.gpus_per_node)
    errors.push_back(invalid("gpus", "must be between 1 and the node's " + std::to_string(spec.cluster.gpus_per_node) +
                                         " GPUs"));
  if (spec.host.cpu_cores < 1) errors.push_back(invalid("host.cpu_cores", "must be at least 1"));
  if (!(spec.host.decode_time.value() > 0)) errors.push_back(invalid("host.decode_time", "must be greater than zero"));
  if (!(spec.host.sample_size.value() > 0)) errors.push_back(invalid("host.sample_size", "must be greater than zero"));
  if (!(spec.host.storage_bandwidth.value() > 0))
    errors.push_back(invalid("host.storage_bandwidth", "must be greater than zero"));
  if (!(spec.cluster.pcie_bandwidth.value() > 0))
    errors.push_back(invalid("gpu", "the GPU '" + spec.cluster.gpu.id +
                                        "' has no PCIe generation in the catalog, so host-to-device bandwidth is unknown"));
  if (spec.prefetch_batches < 1) errors.push_back(invalid("prefetch_batches", "must be at least 1"));
  if (spec.checkpoint_every_steps > 0 && !(spec.checkpoint_bandwidth.value() > 0))
    errors.push_back(invalid("checkpoint.bandwidth", "must be greater than zero when checkpoints are written"));
  if (!(spec.model.input_bytes_per_sample > 0))
    errors.push_back(invalid("model", "'" + spec.model.name + "' has no decoded input size per sample"));
  if (!errors.empty()) return errors;
  auto stage = gpu_stage(spec);
  if (!stage) return stage.errors();

  des::Pipeline p;
  const int in_flight = spec.batch_per_gpu * spec.gpus * spec.prefetch_batches;
  const auto source = p.add_source(des::SourceSpec::closed("data loader", in_flight, Seconds(0.0), spec.host.sample_size));
  des::StationSpec cpu;
  cpu.name = "cpu decode";
  cpu.servers = spec.host.cpu_cores;
  cpu.service = des::ServiceTime::lognormal(spec.host.decode_time, spec.host.decode_cv);
  const auto decode = p.add_station(cpu);
  des::StationSpec gpu;
  gpu.name = "gpu step";
  gpu.servers = spec.gpus;
  gpu.max_batch = spec.batch_per_gpu;
  // A step starts only with a full batch: the batcher waits as long as it takes.
  gpu.max_queue_delay = Seconds(1e12);
  gpu.service = des::ServiceTime::deterministic(stage->gpu_step);
  const auto step = p.add_station(gpu);
  const auto done = p.add_sink({"trained"});
  p.connect(source, decode, des::ConveyorSpec{"storage read", spec.host.storage_bandwidth, spec.host.storage_latency, 0});
  // Items keep their stored size; the PCIe conveyor's bandwidth is scaled so a transfer
  // takes decoded size / PCIe bandwidth. The GPUs' links are parallel: gpus x bandwidth.
  const double decoded_ratio = spec.model.input_bytes_per_sample / spec.host.sample_size.value();
  p.connect(decode, step,
            des::ConveyorSpec{"pcie h2d", spec.cluster.pcie_bandwidth * (spec.gpus / decoded_ratio),
                              Seconds(kDefaultPcieLatencySeconds()), 0});
  p.connect(step, done);
  if (auto status = p.validate(); !status.empty()) return status;
  return p;
}

Result<TrainingPipelineReport> simulate_training_pipeline(const TrainingPipelineSpec& spec, const des::RunOptions& run,
                                                          ProgressObserver* progress) {
  auto pipeline = build_training_pipeline(spec);
  if (!pipeline) return pipeline.errors();
  auto stage = gpu_stage(spec);  // succeeded inside build_training_pipeline
  auto sim = des::simulate(*pipeline, run, progress);
  if (!sim) return sim.errors();

  TrainingPipelineReport r;
  r.simulation = std::move(sim).value();
  r.analytic_step = stage->analytic;
  r.allreduce_time_per_step = stage->allreduce;
  r.checkpoint_time_per_step = stage->checkpoint;
  const double batch = static_cast<double>(spec.batch_per_gpu) * spec.gpus;
  r.gpu_capacity = batch / stage->gpu_step.value();
  r.cpu_capacity = spec.host.cpu_cores / spec.host.decode_time.value();
  r.storage_capacity = spec.host.storage_bandwidth.value() / spec.host.sample_size.value();
  r.pcie_capacity = spec.cluster.pcie_bandwidth.value() * spec.gpus / spec.model.input_bytes_per_sample;
  const std::pair<double, const char*> stages[] = {{r.gpu_capacity, "gpu step"},
                                                    {r.cpu_capacity, "cpu decode"},
                                                    {r.storage_capacity, "storage read"},
                                                    {r.pcie_capacity, "pcie h2d"}};
  r.analytic_constraint = std::min_element(std::begin(stages), std::end(stages))->second;
  r.simulated_samples_per_second = r.simulation.throughput.mean;
  if (r.simulated_samples_per_second > 0) r.simulated_step_time = Seconds(batch / r.simulated_samples_per_second);
  for (const auto& s : r.simulation.stations)
    if (s.name == "gpu step") r.gpu_utilization = s.utilization.mean;
  r.cores_to_feed_gpus = static_cast<int>(std::ceil(r.gpu_capacity * spec.host.decode_time.value() * kCoreHeadroom));
  return r;
}

}  // namespace capsim::models
