// A training job as a factory line for the discrete-event simulator: samples are read
// from storage, decoded and augmented on the host's CPU cores, copied to the GPU over PCIe,
// and consumed a batch at a time by the GPU step (forward, backward, the exposed gradient
// all-reduce and, amortized, the periodic checkpoint). The data loader keeps a fixed number
// of batches in flight, so the line is a closed loop: when the CPU cannot decode fast
// enough, the GPU starves and the simulator names the CPU station as the constraint.
//
// Stations and conveyors, in order: "storage read" (conveyor), "cpu decode" (station,
// one server per core), "pcie h2d" (conveyor), "gpu step" (station, batches of
// batch_per_gpu). All functions are pure and thread-safe.
#pragma once

#include <optional>
#include <string>

#include "capsim/core/des/metrics.hpp"
#include "capsim/core/des/pipeline.hpp"
#include "capsim/core/des/simulator.hpp"
#include "capsim/core/result.hpp"
#include "capsim/core/units.hpp"
#include "capsim/models/cluster.hpp"
#include "capsim/models/parallelism.hpp"
#include "capsim/models/performance.hpp"
#include "capsim/models/workload.hpp"

namespace capsim::models {

struct HostSpec {
  int cpu_cores = 1;               // cores (vCPUs) the data loader's workers use
  Seconds decode_time{0.0};        // CPU time per sample on one core: read, decode, augment
  double decode_cv = 0.3;          // variation of that time (lognormal), images differ in size
  Bytes sample_size{0.0};          // per sample on storage (e.g. a JPEG)
  BytesPerSecond storage_bandwidth{0.0};
  Seconds storage_latency{0.0};
};

struct TrainingPipelineSpec {
  SampleModel model;
  int batch_per_gpu = 32;
  ClusterSpec cluster;  // one node: the GPU, its PCIe link, the network for the all-reduce
  int gpus = 1;         // data-parallel GPUs in the node, each with its own loader
  TrainingOptions options;
  HostSpec host;  // per node; shared by its GPUs' loaders
  // PyTorch's DataLoader keeps prefetch_factor (2) batches per worker in flight; the
  // pipeline keeps this many batches of samples circulating.
  int prefetch_batches = 4;
  int checkpoint_every_steps = 0;  // 0: no checkpoints
  BytesPerSecond checkpoint_bandwidth{0.0};
  // Optional: the all-reduce time per step from another source (the SimGrid fabric);
  // otherwise the analytic model's exposed all-reduce is used.
  std::optional<Seconds> allreduce_time_override;
};

struct TrainingPipelineReport {
  des::SimulationResult simulation;
  // Analytic companion: the step the performance model predicts with data loading free,
  // and the throughput bound of each stage (samples/s), the smallest being the constraint.
  TrainingEstimate analytic_step;
  double gpu_capacity = 0;      // samples/s the GPUs can train
  double cpu_capacity = 0;      // samples/s the cores can decode
  double storage_capacity = 0;  // samples/s storage can read
  double pcie_capacity = 0;     // samples/s PCIe can carry
  std::string analytic_constraint;
  double simulated_samples_per_second = 0;
  Seconds simulated_step_time{0.0};  // batch_per_gpu x gpus / simulated throughput
  double gpu_utilization = 0;
  // Whether any sample completed in the measured window: without one, the simulated rate,
  // step time and utilization describe nothing (they are "not measured", never 0).
  bool measured() const { return simulated_samples_per_second > 0 && simulation.batches > 0; }
  // Cores that would let decoding keep up with the GPUs (with 10 % headroom).
  int cores_to_feed_gpus = 0;
  Seconds checkpoint_time_per_step{0.0};  // amortized
  Seconds allreduce_time_per_step{0.0};
};

// Builds the pipeline (validated) for a spec; errors name the bad input.
Result<des::Pipeline> build_training_pipeline(const TrainingPipelineSpec& spec);

// Simulates it and puts the analytic estimate next to the result.
// `progress` (optional) sees the run's progress and may cancel it.
Result<TrainingPipelineReport> simulate_training_pipeline(const TrainingPipelineSpec& spec,
                                                          const des::RunOptions& run,
                                                          ProgressObserver* progress = nullptr);

}  // namespace capsim::models
