// Serving an inference graph: latency curves, GPU sharing, deployments, and the two
// answers to "what does this deployment deliver": the analytic queueing estimate and the
// request-level simulation on the DES kernel, side by side.
//
// The pieces, in the order a caller uses them:
//   1. LatencyCurve: the time of one batch of b inputs of one model on one GPU (or a share
//      of one), from a roofline (roofline_latency_curve) or a measured table
//      (LatencyCurve::measured).
//   2. GpuShare / plan_gpu_sharing: how co-located models split a GPU (exclusive, MIG, MPS,
//      time-slicing); rejects deployments whose models do not fit in memory.
//   3. InferenceGraph + Deployment -> plan_deployment -> DeploymentPlan: one stage per
//      model with its servers, batching and service-time table.
//   4. estimate_serving (queueing formulas) and simulate_serving (DES), reported together
//      by evaluate_serving.
// LLM serving (prefill/decode, continuous batching, KV cache) is in serving_llm.hpp; the
// SLO sizing search in serving_sizing.hpp.
//
// Units: every time is Seconds, every size Bytes, rates are items per second (des::Rate).
// Ownership: all types are plain values (copies are deep). Thread-safety: all functions
// are pure; distinct calls may run in parallel threads.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "capsim/models/constants.hpp"
#include "capsim/core/des/metrics.hpp"
#include "capsim/core/des/pipeline.hpp"
#include "capsim/core/des/service_time.hpp"
#include "capsim/core/des/simulator.hpp"
#include "capsim/core/result.hpp"
#include "capsim/core/units.hpp"
#include "capsim/hardware/catalog.hpp"
#include "capsim/models/workload.hpp"

namespace capsim::models {

// --- Constants of the serving model ----------------------------------------------------

// Host-side cost of launching one CUDA kernel, which a batch pays once per kernel however
// small the batch is, in the bare roofline (a model served without an engine profile).
// NVIDIA's "Getting Started with CUDA Graphs" (A. Gray, NVIDIA Technical Blog, 2019,
// https://developer.nvidia.com/blog/cuda-graphs/) measures a few microseconds per short
// kernel launched from a stream; 5 us is the value assumed here. With an engine profile
// (data/catalog/engines.yaml) the engine's host time per kernel and per call and
// kKernelGpuFloorSeconds (cnn.hpp) replace it.
// kKernelLaunchSeconds: read from the registry, capsim/models/constants.hpp (value, unit, basis).
// A request to Triton Inference Server from a perf_analyzer client (HTTP/gRPC): a fixed
// cost per request (client, network stack, server scheduling, the backend's session call)
// and the input tensor's bytes over the client-server connection. Both chosen on the two
// vision-inference rows marked fit: true, rn50-a100-sxm-80gb-ort-trt-fp16-b1-triton (2.128 ms
// at batch 1) and -b128-triton (48.1 ms at batch 128: 128 fp16 images of 301 KB), NVIDIA
// DeepLearningExamples' Triton ResNet-50 tables (the engine's own time from cnn_inference);
// the other six Triton rows are held out.
// kTritonRequestOverheadSeconds: read from the registry, capsim/models/constants.hpp (value, unit, basis).
// kTritonPayloadBytesPerSecond: read from the registry, capsim/models/constants.hpp (value, unit, basis).
// CPU time one thread of TensorFlow's tf.data input pipeline spends on one ImageNet
// validation image: parse its TFRecord, decode the JPEG, resize and crop to 224 x 224.
// DeepLearningExamples' TensorFlow inference benchmark (inference_benchmark.sh) reads real
// TFRecords without DALI, on 10 preprocessing threads (runtime/runner.py), and prefetches
// ahead of the GPU: a batch takes at least batch x this / threads. Chosen on the
// vision-inference row marked fit: true, rn50-a100-sxm-40gb-tf-amp-fp16-b64-dle (18.14 ms
// per batch of 64 on a DGX A100, 3,570 images/s, where the engine call takes 13.0 ms). The
// CPU time is the DGX A100's (AMD EPYC 7742); other hosts' rows use it too, a stand-in
// for their own CPUs' figures, which are not published.
// kTfInputSecondsPerImage: read from the registry, capsim/models/constants.hpp (value, unit, basis).
// GPU memory a process's CUDA context and framework runtime take before any model weight
// is loaded (cuBLAS/cuDNN workspaces and kernels). Assumption: 0.5 GB, the order observed
// for a PyTorch/Triton backend process on A100/H100 (nvidia-smi after torch.cuda.init());
// it matters because MPS and time-slicing run one process per co-located model.
// kProcessContextBytes: read from the registry, capsim/models/constants.hpp (value, unit, basis).
// Time-slicing: the scheduler gives each context a slice of GPU time and switches between
// them. Assumptions (NVIDIA does not publish the figures): a slice of 2 ms and a switch
// cost of 25 us (saving and restoring a context's state), so k >= 2 busy time-sliced
// processes each get (1/k) x 2 / (2 + 0.025) of the GPU.
// kTimeSliceSeconds: read from the registry, capsim/models/constants.hpp (value, unit, basis).
// kContextSwitchSeconds: read from the registry, capsim/models/constants.hpp (value, unit, basis).
// Image backbones (ResNet, EfficientNet, MobileNet, DBNet/EAST's ResNet feature extractor)
// downsample by 32: their last stage works on (resolution / 32)^2 pixels per sample, the
// GEMM rows per sample of the smallest (least efficient) convolutions, lowered to implicit
// GEMM as cuDNN does.
inline constexpr int kBackboneStride = 32;

// --- Latency curves --------------------------------------------------------------------

struct ExecutionOptions {
  Precision precision = Precision::fp16;  // weights and activations; the GPU must have a peak for it
  // The runtime's efficiency profile (data/catalog/engines.yaml: framework, tensorflow,
  // onnxruntime, tensorrt). Empty: the bare roofline with kKernelLaunchSeconds per kernel.
  std::optional<hardware::EngineSpec> engine;
  // An override for a speed-up the user measured: every latency divided by it. Any
  // positive finite factor (a slower runtime is a factor below 1); empty: none.
  std::optional<double> engine_speedup;
};
// "tensorrt", or "roofline" without an engine profile.
std::string engine_name(const ExecutionOptions& exec);

// The part of a GPU a model instance runs on. A whole GPU is {1, 1, gpu.memory}.
struct GpuShare {
  double compute_fraction = 1.0;    // of the dense peak, (0, 1]
  double bandwidth_fraction = 1.0;  // of the memory bandwidth, (0, 1]
  Bytes memory{0.0};                // the memory the instance may use (its slice for MIG)
  std::string description;          // "whole GPU", "MIG 1g.10gb", "MPS 50 %", "time-sliced 1/3"
};

// Latency of one batch as a function of its size: a table of rows (batch -> time),
// batches 1..max_batch, interpolated linearly between rows as des::ServiceTime::empirical
// does. Invariants (checked by the constructors): latency non-decreasing in the batch and
// throughput b / latency(b) non-decreasing up to its maximum.
class LatencyCurve {
 public:
  // A measured table. Errors: empty table, batches not strictly increasing from >= 1,
  // non-positive or decreasing times.
  static Result<LatencyCurve> measured(std::vector<des::ServiceTime::Row> rows,
                                       std::string source = "measured");

  Seconds latency(double batch) const;  // batch >= 1; fractional batches interpolate
  double throughput(int batch) const { return batch / latency(batch).value(); }  // items/s
  int max_batch() const { return rows_.back().batch; }
  const std::vector<des::ServiceTime::Row>& rows() const { return rows_; }
  // "roofline: resnet-50 fp16 on t4 (whole GPU), 40 kernels x 5 us", or the measured source.
  const std::string& source() const { return source_; }
  // The curve with every latency multiplied by k > 0 (shares, instances, fan-out).
  LatencyCurve scaled(double k, std::string why) const;
  // Rows b -> latency(f x b) for b = 1..max_batch: the time of a batch of b requests that
  // each carry f items (fan-out). f > 0.
  LatencyCurve per_request(double items_per_request) const;
  des::ServiceTime service_time() const { return des::ServiceTime::empirical(rows_); }

 private:
  std::vector<des::ServiceTime::Row> rows_;
  std::string source_;
};

// A model as served: the published per-sample figures plus what the roofline needs.
struct ServedModel {
  SampleModel model;  // params, forward FLOPs, activation bytes (at 2 B/element, as the presets)
  // Layers per forward pass, each one kernel when fused (convolution + norm + activation);
  // an engine that does not fuse launches more per layer (see roofline_latency_curve).
  // 0: none counted.
  int kernels_per_forward = 0;
  // GEMM rows one sample contributes to the least efficient layers; 0 = derived:
  // (input_resolution / kBackboneStride)^2 for image models, else 1.
  double gemm_rows_per_sample = 0;
  // A layer list in cnn.hpp ("resnet50"): with an engine profile the curve comes from
  // cnn_inference layer by layer instead of the per-sample roofline.
  std::string network;
  // Measured curves by GPU id (Triton perf_analyzer, the user's benchmark); on a GPU that
  // has one it replaces the model entirely (precision and engine then only name what was
  // measured); on a GPU without one the deployment is refused.
  std::map<std::string, LatencyCurve, std::less<>> measured;
};

// Latency of batches 1..max_batch of `m` on `share` of `gpu`.
// With a layer list and an engine: cnn_inference per batch on the share (peaks and
// bandwidth scaled by its fractions). Otherwise the per-sample roofline:
//   g(b) = max(F b / (P f_c e(b)), (W + A b) / (B f_b kMemoryBandwidthEfficiency))
//          + E b + k x kKernelGpuFloorSeconds
//   t(b) = host_time_per_call + max(g(b), k x host_time_per_kernel)   (host overlaps GPU)
//        = host_time_per_call + g(b) + k x host_time_per_kernel        (otherwise)
// F = forward FLOPs per sample, P the GPU's dense peak at the precision (TF32 for fp32 on
// Ampere and newer when the engine runs tf32), e(b) = c x r b / (r b + h) (performance.hpp's
// GEMM efficiency with r GEMM rows per sample; c and h the engine's ceiling and
// half-saturation dimension, else kGemmMaxEfficiency and kGemmHalfSaturationDim), W =
// params x bytes per value, A = (input bytes + activation elements x bytes per value x 2)
// per sample, E = the batch-norm and activation passes the engine does not remove (2 each
// over the activations), k = kernels_per_forward x (1 + a batch norm unless folded + an
// activation unless fused + a cast under eager mixed precision). Without an engine:
// t(b) = max(...) + kernels_per_forward x kKernelLaunchSeconds. Every latency is divided
// by engine_speedup when given. Errors: no peak for the precision on the GPU, a precision
// the engine does not run, non-positive FLOPs, max_batch < 1, a speed-up that is not a
// positive finite number.
Result<LatencyCurve> roofline_latency_curve(const ServedModel& m, const hardware::GpuSpec& gpu,
                                            const ExecutionOptions& exec, int max_batch,
                                            const GpuShare& share = GpuShare{1.0, 1.0, Bytes(0.0), "whole GPU"});

// Memory one instance of `m` needs on the GPU: weights at the precision + max_batch x
// (input bytes + activation elements x bytes per value) (an upper bound: every activation
// of the batch resident at once) + kProcessContextBytes.
Bytes instance_memory(const ServedModel& m, Precision precision, int max_batch);

// --- GPU sharing -----------------------------------------------------------------------

enum class SharingMode { exclusive, mig, mps, time_slicing };
std::string_view sharing_mode_name(SharingMode m);  // "exclusive", "mig", "mps", "time-slicing"

// One model's presence on one GPU.
struct CoLocatedModel {
  std::string model;        // name, used in messages
  Bytes memory_per_instance{0.0};
  int instances = 1;        // processes / MIG instances of this model on the GPU
  std::string mig_profile;  // mig: the profile of each instance ("1g.10gb")
  double mps_share = 0.0;   // mps: fraction of the SMs per instance (0 = an equal split)
};

// One MIG instance placed on the GPU: compute slices [first_slice, first_slice + slices)
// and memory [memory_offset, memory_offset + memory). Instances never overlap in either.
struct MigInstance {
  std::string model;
  std::string profile;
  int first_slice = 0;
  int slices = 0;
  Bytes memory_offset{0.0};
  Bytes memory{0.0};
};

struct GpuLayout {
  SharingMode mode = SharingMode::exclusive;
  std::vector<GpuShare> shares;         // per CoLocatedModel, what each of its instances gets
  std::vector<MigInstance> mig;         // mig only
  Bytes memory_used{0.0};               // sum over instances (MIG: sum of slice sizes)
  std::vector<std::string> k8s_resources;  // per CoLocatedModel: "nvidia.com/gpu", "nvidia.com/mig-1g.10gb"
};

// Places the models on one GPU. Rules:
//   exclusive     one model, its instances share the GPU's compute (each gets 1/instances
//                 while all are busy) and memory;
//   mig           each instance gets a slice of its profile: compute_slices / (the GPU's
//                 largest profile's slices) of the compute, memory / GPU memory of the
//                 bandwidth (NVIDIA MIG user guide: memory slices carry proportional
//                 bandwidth), and exactly the profile's memory; the sum of slices must not
//                 exceed the GPU's, nor instances of a profile its maximum. Placement is
//                 first-fit by decreasing size on contiguous slices; NVIDIA's exact
//                 placement table is not modelled.
//   mps           processes share the compute: shares add up to at most 1; the memory of
//                 all instances together must fit (no isolation of capacity).
//   time_slicing  every instance may use the whole GPU, in turns: each of k instances gets
//                 (1/k) x kTimeSliceSeconds / (kTimeSliceSeconds + kContextSwitchSeconds)
//                 when all are busy; all memory together must fit.
// Errors name the model and the GPU, e.g.
//   "model 'crnn' does not fit on t4 with time-slicing: the co-located models need 17.3 GB
//    of its 16 GB"
//   "model 'east' does not fit in MIG profile 1g.10gb of a100-sxm-80gb: it needs 12.1 GB,
//    the slice has 10 GB".
Result<GpuLayout> plan_gpu_sharing(const hardware::GpuSpec& gpu, SharingMode mode,
                                   const std::vector<CoLocatedModel>& models);

// --- Inference graphs and deployments --------------------------------------------------

// A stage of the graph: one model, run `fan_out` times per request on average (the text
// recognizer runs once per detected crop: fan_out = crops per image). Stages form a chain
// in the order given: a request visits stage 0, then 1, ... (a single classifier is a
// one-stage graph). The fan-out is simulated by scaling: one item per request flows
// through every stage, and a batch of b requests at a stage with fan-out f takes
// latency(f x b) of that model (LatencyCurve::per_request); the request is done when its
// last crop is. Fork-join DAGs are not modelled.
struct GraphStage {
  std::string name;     // unique, non-empty ("text-detector")
  ServedModel model;
  double fan_out = 1.0;  // > 0, model invocations per request
};

struct InferenceGraph {
  std::string name;
  std::vector<GraphStage> stages;  // at least one
};

// Requests in a full batch of `max_batch` model inputs at a stage of fan-out `fan_out`:
// max(1, floor(max_batch / fan_out)). Below a fan-out of 1 a batch holds more requests than
// model inputs, and each is a row of the stage's per-request latency curve and an item the
// simulation carries: fan_out 0.000001 with max_batch 64 made 64 million rows and grew to
// 24 GB. plan_deployment refuses a stage past kMaxRequestsPerBatch (the largest batch the
// schema allows in model inputs, deployment.stages[].max_batch <= 65536), naming the limit.
inline constexpr double kMaxRequestsPerBatch = 65536;
double requests_per_batch(int max_batch, double fan_out);

struct BatchingPolicy {
  int max_batch = 1;                // >= 1, in model inputs (crops for a fan-out stage); 1 = off
  Seconds max_queue_delay{0.0};     // >= 0: how long the oldest request may wait for a batch
};

// How one stage is deployed.
struct StageDeployment {
  int replicas = 1;             // >= 1: GPUs (exclusive), MIG instances, or MPS/time-sliced processes
  int instances_per_replica = 1;  // >= 1: concurrent model instances in a replica (Triton instance_group)
  BatchingPolicy batching;
  ExecutionOptions exec;
  std::string mig_profile;      // mig: required
  double mps_share = 0.0;       // mps: SM fraction per replica; 0 = equal split
};

// Where the graph runs. Placement: exclusive -> each replica on its own GPU; mig -> the
// replicas' MIG instances packed onto as few GPUs as plan_gpu_sharing accepts (first-fit
// decreasing); mps and time_slicing -> GPU i hosts replica i of every stage that has more
// than i replicas (so the GPU count is the largest replica count).
struct Deployment {
  hardware::GpuSpec gpu;
  SharingMode sharing = SharingMode::exclusive;
  std::vector<StageDeployment> stages;  // one per graph stage, same order
};

// A stage ready to analyse or simulate.
struct PlannedStage {
  std::string name;
  double fan_out = 1.0;
  int servers = 1;                  // replicas x instances_per_replica
  int max_batch_requests = 1;       // max(1, floor(max_batch / fan_out)): batch in requests
  Seconds max_queue_delay{0.0};
  LatencyCurve model_curve;         // the model on one instance's share, per model input
  LatencyCurve request_curve;       // per request batch: model_curve at fan_out x b
  GpuShare share;
  Bytes memory_per_instance{0.0};
  std::string k8s_resource;         // "nvidia.com/gpu" or "nvidia.com/mig-1g.10gb"
  double k8s_resource_count = 1;    // per replica pod (MPS/time-sliced replicas share a GPU)
};

struct DeploymentPlan {
  std::string graph;
  std::string gpu;                  // GPU id
  SharingMode sharing = SharingMode::exclusive;
  std::vector<PlannedStage> stages;
  int gpus = 0;                     // physical GPUs used
  std::vector<GpuLayout> layouts;   // mig/mps/time_slicing: one per GPU used
};

// Builds the stage curves and placements; every problem at once, each naming the stage.
// Memory is checked per GPU with plan_gpu_sharing (errors name the model and the GPU).
// A stage whose batch holds more than kMaxRequestsPerBatch requests is refused
// ("stages[i].fan_out").
Result<DeploymentPlan> plan_deployment(const InferenceGraph& graph, const Deployment& deployment);

// --- Arrivals --------------------------------------------------------------------------

struct ArrivalSpec {
  enum class Kind { poisson, diurnal, trace };
  Kind kind = Kind::poisson;
  des::Rate rate{0.0};                  // poisson: rate; diurnal: the base rate (> 0)
  std::array<double, 24> hourly{};      // diurnal: multipliers per hour of the day
  std::vector<Seconds> trace;           // trace: arrival times, non-decreasing
  // The rate the analytic estimate uses: rate for poisson, base x max(hourly) for diurnal
  // (the peak hour), arrivals / span for a trace.
  des::Rate peak_rate() const;
};

// --- Analytic estimate -----------------------------------------------------------------

struct StageEstimate {
  std::string name;
  double capacity = 0;           // requests/s: servers x max_batch_requests / latency(max batch)
  double effective_batch = 1;    // requests per batch at this load (see estimate_serving)
  double utilization = 0;        // rate S(b) / (c b), b the batch actually formed
  Seconds service{0.0};          // S(b)
  Seconds mean_wait{0.0};        // waiting for a server (the batch in service, the window, full batches)
  Seconds mean_latency{0.0};     // mean_wait + service
  Seconds p99_latency{0.0};      // approximate, see estimate_serving
  bool stable = true;            // rate < capacity
};

struct ServingEstimate {
  double arrival_rate = 0;        // requests/s used
  double capacity = 0;            // requests/s: the smallest stage capacity
  std::string constraint;         // that stage
  std::vector<StageEstimate> stages;
  Seconds mean_latency{0.0};      // sum over stages
  // End to end: the stage means plus the root-sum-square of the stages' tails (p99 - mean),
  // as for independent stages; one stage: its own p99. An estimate, not a bound.
  Seconds p99_latency{0.0};
  bool stable = true;
};

// The queueing estimate at `rate` requests/s: a batch-service (M/G^[b]/c-type)
// approximation per stage with c servers, max batch B (requests), window D, batch service
// S(b) from the request curve:
//   - capacity = c B / S(B); rate >= capacity: unstable (infinite latency, stable = false);
//   - B = 1: a queue of requests, M/D/c (Pollaczek-Khinchine for c = 1, exact; otherwise
//     Allen-Cunneen: Wq = C(c, a) / (c mu - lambda) x (ca^2 + cs^2) / 2, ca^2 = 1, cs^2 = 0,
//     Erlang C from core/queueing.hpp);
//   - B > 1: the batch actually formed, k: when servers are always busy, the smallest b with
//     rate cycle(b) / c <= b, cycle(b) = S(b) or D when that is longer and b < B (a free
//     server takes what arrived during its previous cycle; the batcher waits for the oldest
//     request's window); at lighter load, 1 + rate w with w = min(D, (B - 1) / rate), the
//     window a request that finds a server free opens. Utilization rate S(k) / (c k).
//     A request finds all servers busy with probability P (Erlang C at that utilization, 1
//     in the busy regime) and waits for the first of c staggered cycles to end (cycle /
//     (c + 1) on average, cycle (1 - (0.01 / P)^(1/c)) at p99), else it waits in the window
//     (w / 2 on average, w at p99); near capacity full batches queue as batches of B Poisson
//     arrivals (Erlang gaps, ca^2 = 1 / B) on c servers of S(B); then S(k);
//   - p99 of a queueing wait: exponential beyond its atom at zero (exact for M/M/c):
//     Wq_99 = (Wq / C) ln(C / 0.01) when C > 0.01, else 0.
ServingEstimate estimate_serving(const DeploymentPlan& plan, double rate);

// --- Simulation ------------------------------------------------------------------------

// One station per stage ("<stage>", servers, request_curve as an empirical service time,
// max_batch_requests, max_queue_delay), a source "requests" and a sink "done", in a chain.
Result<des::Pipeline> build_serving_pipeline(const DeploymentPlan& plan, const ArrivalSpec& arrivals);

struct ServingReport {
  DeploymentPlan plan;
  ServingEstimate analytic;        // at arrivals.peak_rate()
  des::SimulationResult simulation;
  // From the simulation, for convenience (mean and 95 % interval in the fields above):
  double simulated_throughput = 0;       // requests/s
  des::Percentiles latency;              // end-to-end, seconds
  std::vector<double> stage_utilization; // per stage
  // Empty when the analytic p99 is within kAnalyticAgreement of the simulated one; else
  // how far apart they are and why ("the simulation follows the trace ...").
  std::string analytic_note;
};

// How close the analytic p99 should come to the simulated one (a fraction): beyond it the
// report says why.
inline constexpr double kAnalyticAgreement = 0.25;

// Builds, simulates and estimates. Errors: the plan's, the arrivals' (e.g. a zero rate),
// and the simulator's.
// `progress` (optional) sees the run's progress and may cancel it (an error then says so).
Result<ServingReport> simulate_serving(const DeploymentPlan& plan, const ArrivalSpec& arrivals,
                                       const des::RunOptions& run, ProgressObserver* progress = nullptr);

// --- Reference models ------------------------------------------------------------------

// The presets a serving graph may name (`capsim models` lists them), with published
// figures and their sources:
//   "horizontal-text-detection-0001" (text detector, Intel Open Model Zoo),
//   "text-recognition-0012" (text recognizer, OMZ), "resnet-50" and "resnet-101" (workload
//   presets with their layer lists), "resnet-152" and "vgg-16" (counted from their layer
//   lists), "efficientnet-b0" (Tan & Le 2019). Sources in ServedModel::model.source.
std::vector<ServedModel> reference_served_models();
const ServedModel* find_reference_served_model(std::string_view name);

}  // namespace capsim::models
