// Latency curves, GPU sharing and deployment planning for inference graphs.
#include "capsim/models/serving.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "capsim/core/text.hpp"
#include "capsim/models/cnn.hpp"
#include "capsim/models/performance.hpp"

namespace capsim::models {
namespace {

Diagnostic invalid(const std::string& key, const std::string& message) {
  return Diagnostic{{}, key, message, ""};
}


std::string gb(Bytes b) { return significant(b.value() / 1e9, 3) + " GB"; }

// Linear interpolation over the rows, as des::ServiceTime::empirical, for fractional batches.
// Past the largest batch the engine runs more passes of that batch: the time grows in
// proportion (items beyond it are never free, as a request fanning out to f items on a
// curve that stops at batch 1 would otherwise make them).
double interpolate(const std::vector<des::ServiceTime::Row>& t, double batch) {
  if (batch > t.back().batch) return t.back().time.value() * batch / t.back().batch;
  if (t.size() == 1 || batch <= t.front().batch) return t.front().time.value();
  std::size_t i = 1;
  while (i + 1 < t.size() && t[i].batch < batch) ++i;
  const double x0 = t[i - 1].batch, x1 = t[i].batch;
  const double y0 = t[i - 1].time.value(), y1 = t[i].time.value();
  return y0 + (y1 - y0) * (batch - x0) / (x1 - x0);
}

// The largest number of compute slices a profile of this GPU has: 7 on A100/H100.
int total_slices(const hardware::GpuSpec& gpu) {
  int s = 0;
  for (const auto& p : gpu.mig_profiles) s = std::max(s, p.compute_slices);
  return s;
}

const hardware::MigProfile* find_profile(const hardware::GpuSpec& gpu, std::string_view name) {
  for (const auto& p : gpu.mig_profiles)
    if (p.name == name) return &p;
  return nullptr;
}

std::string profile_list(const hardware::GpuSpec& gpu) {
  std::string s;
  for (const auto& p : gpu.mig_profiles) s += (s.empty() ? "" : ", ") + p.name;
  return s;
}

}  // namespace

std::string engine_name(const ExecutionOptions& exec) { return exec.engine ? exec.engine->id : "roofline"; }

std::string_view sharing_mode_name(SharingMode m) {
  switch (m) {
    case SharingMode::exclusive: return "exclusive";
    case SharingMode::mig: return "mig";
    case SharingMode::mps: return "mps";
    case SharingMode::time_slicing: return "time-slicing";
  }
  return "exclusive";
}

// --- LatencyCurve ------------------------------------------------------------------------

Result<LatencyCurve> LatencyCurve::measured(std::vector<des::ServiceTime::Row> rows, std::string source) {
  if (rows.empty()) return invalid("latency_table", "the measured latency table is empty");
  std::vector<Diagnostic> errors;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    const std::string key = "latency_table[" + std::to_string(i) + "]";
    if (r.batch < 1) errors.push_back(invalid(key, "batch must be at least 1 (got " + std::to_string(r.batch) + ")"));
    if (!(r.time.value() > 0) || !std::isfinite(r.time.value()))
      errors.push_back(invalid(key, "latency must be greater than zero"));
    if (i > 0 && r.batch <= rows[i - 1].batch)
      errors.push_back(invalid(key, "batch sizes must increase (" + std::to_string(rows[i - 1].batch) + " then " +
                                        std::to_string(r.batch) + ")"));
    if (i > 0 && r.time < rows[i - 1].time)
      errors.push_back(invalid(key, "latency must not decrease with the batch size (batch " +
                                        std::to_string(rows[i - 1].batch) + ": " + significant(rows[i - 1].time.value() * 1e3) +
                                        " ms, batch " + std::to_string(r.batch) + ": " + significant(r.time.value() * 1e3) +
                                        " ms)"));
  }
  if (!errors.empty()) return errors;
  LatencyCurve c;
  c.rows_ = std::move(rows);
  c.source_ = std::move(source);
  return c;
}

Seconds LatencyCurve::latency(double batch) const { return Seconds(interpolate(rows_, batch)); }

LatencyCurve LatencyCurve::scaled(double k, std::string why) const {
  LatencyCurve c = *this;
  for (auto& r : c.rows_) r.time = r.time * k;
  c.source_ += "; " + why;
  return c;
}

double requests_per_batch(int max_batch, double fan_out) {
  return std::max(1.0, std::floor(max_batch / fan_out + 1e-9));
}

LatencyCurve LatencyCurve::per_request(double items_per_request) const {
  LatencyCurve c;
  const int max_requests = std::max(1, static_cast<int>(std::floor(max_batch() / items_per_request + 1e-9)));
  c.rows_.reserve(static_cast<std::size_t>(max_requests));
  for (int b = 1; b <= max_requests; ++b) c.rows_.push_back({b, latency(items_per_request * b)});
  c.source_ = source_;
  if (items_per_request != 1.0) c.source_ += "; x" + significant(items_per_request) + " items per request";
  return c;
}

// --- Roofline ----------------------------------------------------------------------------

Bytes instance_memory(const ServedModel& m, Precision precision, int max_batch) {
  const double v = bytes_per_value(precision);
  // activation_bytes_per_sample holds elements x 2 B (workload.hpp's presets).
  const double activations = m.model.activation_bytes_per_sample / 2.0 * v + m.model.input_bytes_per_sample;
  return Bytes(m.model.params * v + max_batch * activations + kProcessContextBytes());
}

namespace {

bool sixteen_bit(Precision p) { return p == Precision::fp16 || p == Precision::bf16; }

// The GPU as a share of it sees it: peaks and bandwidth scaled by the share's fractions,
// and the L2 cache with the bandwidth (a MIG instance owns the L2 slices of its memory
// slices; MPS clients and time-sliced processes share the one cache).
hardware::GpuSpec shared_gpu(const hardware::GpuSpec& gpu, const GpuShare& share) {
  hardware::GpuSpec g = gpu;
  for (auto& [precision, peak] : g.peak_dense) peak = peak * share.compute_fraction;
  g.memory_bandwidth = g.memory_bandwidth * share.bandwidth_fraction;
  g.l2_cache = g.l2_cache * share.bandwidth_fraction;
  return g;
}

std::string share_text(const GpuShare& share) {
  return share.description.empty() ? std::string("whole GPU") : share.description;
}

}  // namespace

Result<LatencyCurve> roofline_latency_curve(const ServedModel& m, const hardware::GpuSpec& gpu,
                                            const ExecutionOptions& exec, int max_batch, const GpuShare& share) {
  std::vector<Diagnostic> errors;
  const std::string pname(precision_name(exec.precision));
  const auto& engine = exec.engine;
  const bool ampere_or_newer = gpu.architecture != "kepler" && gpu.architecture != "maxwell" &&
                               gpu.architecture != "pascal" && gpu.architecture != "volta" &&
                               gpu.architecture != "turing";
  // fp32 runs in TF32 on Ampere and newer when the engine does (framework and engine defaults).
  const bool tf32 = engine && exec.precision == Precision::fp32 && engine->runs("tf32") && ampere_or_newer &&
                    gpu.peak("tf32");
  const auto peak = gpu.peak(tf32 ? "tf32" : pname);
  if (!peak) errors.push_back(invalid("precision", "GPU '" + gpu.id + "' has no dense " + pname + " peak in the catalog"));
  if (engine && !engine->runs(pname) && !tf32)
    errors.push_back(invalid("precision", "engine '" + engine->id + "' does not run " + pname));
  if (!(m.model.forward_flops_per_sample > 0))
    errors.push_back(invalid("model", "model '" + m.model.name + "' has no forward FLOPs per sample"));
  if (max_batch < 1) errors.push_back(invalid("max_batch", "must be at least 1 (got " + std::to_string(max_batch) + ")"));
  if (!(share.compute_fraction > 0 && share.compute_fraction <= 1 && share.bandwidth_fraction > 0 &&
        share.bandwidth_fraction <= 1))
    errors.push_back(invalid("share", "compute and bandwidth fractions must be in (0, 1]"));
  if (exec.engine_speedup && !(*exec.engine_speedup > 0 && std::isfinite(*exec.engine_speedup)))
    errors.push_back(invalid("engine_speedup", "must be a positive finite factor, got " + significant(*exec.engine_speedup)));
  if (!errors.empty()) return errors;
  const double speedup = exec.engine_speedup.value_or(1.0);

  std::vector<des::ServiceTime::Row> table;
  table.reserve(static_cast<std::size_t>(max_batch));
  std::string src;
  if (const CnnNetwork* net = engine && !m.network.empty() ? find_cnn(m.network) : nullptr) {
    // Layer by layer on the engine.
    const hardware::GpuSpec g = shared_gpu(gpu, share);
    int kernels = 0;
    for (int b = 1; b <= max_batch; ++b) {
      auto step = cnn_inference(*net, b, g, exec.precision, *engine);
      if (!step) return step.errors();
      kernels = step->kernels;
      table.push_back({b, Seconds(step->time.value() / speedup)});
    }
    src = "layers: " + m.model.name + " " + pname + " on " + engine->id + ", " + gpu.id + " (" + share_text(share) + "), " +
          std::to_string(kernels) + " kernels";
  } else {
    const double v = bytes_per_value(exec.precision);
    const double flops_per_sample = m.model.forward_flops_per_sample;
    const double compute_rate = peak->value() * share.compute_fraction;
    const double bandwidth = gpu.memory_bandwidth.value() * share.bandwidth_fraction * kMemoryBandwidthEfficiency();
    const double weights = m.model.params * v;
    const double act_elements = m.model.activation_bytes_per_sample / 2.0;
    const double act = m.model.input_bytes_per_sample + act_elements * v * 2.0;
    const double rows = m.gemm_rows_per_sample > 0 ? m.gemm_rows_per_sample
                        : m.model.input_resolution > 0
                            ? std::pow(static_cast<double>(m.model.input_resolution) / kBackboneStride, 2)
                            : 1.0;
    double ceiling = kGemmMaxEfficiency(), half = kGemmHalfSaturationDim();
    double kernels = m.kernels_per_forward, passes = 0, host_per_kernel = 0, host_per_call = 0, floor = 0;
    bool overlap = false;
    if (engine) {
      ceiling = generation_gemm_ceiling(gpu);
      if (engine->gemm_ceiling > 0) ceiling = engine->gemm_ceiling;
      if (engine->gemm_half_saturation > 0) half = engine->gemm_half_saturation;
      const bool casts = engine->casts_per_layer && sixteen_bit(exec.precision);
      kernels = m.kernels_per_forward *
                (1.0 + (engine->folds_batch_norm ? 0 : 1) + (engine->fuses_epilogue ? 0 : 1) + (casts ? 1 : 0));
      passes = (engine->folds_batch_norm ? 0 : 2) + (engine->fuses_epilogue ? 0 : 2);
      host_per_kernel = engine->host_time_per_kernel.value();
      host_per_call = engine->host_time_per_call.value();
      overlap = engine->host_overlaps_gpu;
      floor = kKernelGpuFloorSeconds();
    }
    ceiling = capped_gemm_ceiling(gpu, precision_name(exec.precision), ceiling);
    for (int b = 1; b <= max_batch; ++b) {
      const double gemm_rows = rows * b;
      const double efficiency = ceiling * gemm_rows / (gemm_rows + half);
      const double compute = flops_per_sample * b / (compute_rate * efficiency);
      const double memory = (weights + act * b) / bandwidth;
      double t = std::max(compute, memory);
      if (engine) {
        const double gpu_time = t + act_elements * v * passes * b / bandwidth + kernels * floor;
        const double host = kernels * host_per_kernel;
        t = host_per_call + (overlap ? std::max(gpu_time, host) : gpu_time + host);
      } else {
        t += kernels * kKernelLaunchSeconds();
      }
      table.push_back({b, Seconds(t / speedup)});
    }
    src = "roofline: " + m.model.name + " " + (tf32 ? std::string("tf32") : pname) + " " + engine_name(exec) + " on " +
          gpu.id + " (" + share_text(share) + ")";
    if (kernels > 0)
      src += ", " + significant(kernels) + " kernels" + (engine ? "" : " x 5 us");
  }
  if (speedup != 1.0) src += " (engine_speedup x" + significant(speedup) + ")";
  return LatencyCurve::measured(std::move(table), std::move(src));
}

// --- GPU sharing -------------------------------------------------------------------------

Result<GpuLayout> plan_gpu_sharing(const hardware::GpuSpec& gpu, SharingMode mode,
                                   const std::vector<CoLocatedModel>& models) {
  if (models.empty()) return invalid("models", "no model to place on " + gpu.id);
  GpuLayout layout;
  layout.mode = mode;
  std::vector<Diagnostic> errors;
  for (const auto& m : models)
    if (m.instances < 1)
      errors.push_back(invalid("instances", "model '" + m.model + "' needs at least one instance on " + gpu.id));
  if (!errors.empty()) return errors;

  if (mode == SharingMode::mig) {
    const int slices = total_slices(gpu);
    if (slices == 0) return invalid("sharing", "GPU '" + gpu.id + "' offers no MIG profiles");
    struct Want {
      std::size_t model;
      const hardware::MigProfile* profile;
    };
    std::vector<Want> wants;
    for (std::size_t i = 0; i < models.size(); ++i) {
      const auto& m = models[i];
      const auto* p = find_profile(gpu, m.mig_profile);
      if (p == nullptr) {
        errors.push_back(Diagnostic{{}, "mig_profile",
                                    "model '" + m.model + "': GPU '" + gpu.id + "' has no MIG profile '" +
                                        m.mig_profile + "'",
                                    "profiles: " + profile_list(gpu)});
        continue;
      }
      const Bytes slice_memory(p->memory_gb * 1e9);
      if (m.memory_per_instance > slice_memory)
        errors.push_back(invalid("memory", "model '" + m.model + "' does not fit in MIG profile " + p->name + " of " +
                                               gpu.id + ": it needs " + gb(m.memory_per_instance) + ", the slice has " +
                                               gb(slice_memory)));
      for (int k = 0; k < m.instances; ++k) wants.push_back({i, p});
    }
    if (!errors.empty()) return errors;
    // Per-profile instance limits and the slice budget.
    int used_slices = 0;
    double used_memory = 0;
    for (const auto& p : gpu.mig_profiles) {
      const auto n = std::count_if(wants.begin(), wants.end(), [&](const Want& w) { return w.profile == &p; });
      if (n > p.max_instances)
        errors.push_back(invalid("mig_profile", std::to_string(n) + " instances of MIG profile " + p.name + " on " +
                                                    gpu.id + ", which allows at most " + std::to_string(p.max_instances)));
    }
    for (const auto& w : wants) {
      used_slices += w.profile->compute_slices;
      used_memory += w.profile->memory_gb * 1e9;
    }
    if (used_slices > slices)
      errors.push_back(invalid("mig_profile", "the MIG instances need " + std::to_string(used_slices) +
                                                  " compute slices, " + gpu.id + " has " + std::to_string(slices)));
    if (used_memory > gpu.memory.value() * (1 + 1e-9))
      errors.push_back(invalid("mig_profile", "the MIG instances need " + gb(Bytes(used_memory)) + ", " + gpu.id +
                                                  " has " + gb(gpu.memory)));
    if (!errors.empty()) return errors;
    // First fit by decreasing size on contiguous slices and memory.
    std::stable_sort(wants.begin(), wants.end(),
                     [](const Want& a, const Want& b) { return a.profile->compute_slices > b.profile->compute_slices; });
    int slice = 0;
    double offset = 0;
    for (const auto& w : wants) {
      const Bytes mem(w.profile->memory_gb * 1e9);
      layout.mig.push_back({models[w.model].model, w.profile->name, slice, w.profile->compute_slices, Bytes(offset), mem});
      slice += w.profile->compute_slices;
      offset += mem.value();
    }
    layout.memory_used = Bytes(offset);
    for (const auto& m : models) {
      const auto* p = find_profile(gpu, m.mig_profile);
      const double memory_fraction = p->memory_gb * 1e9 / gpu.memory.value();
      layout.shares.push_back({static_cast<double>(p->compute_slices) / slices, std::min(1.0, memory_fraction),
                               Bytes(p->memory_gb * 1e9), "MIG " + p->name});
      layout.k8s_resources.push_back("nvidia.com/mig-" + p->name);
    }
    return layout;
  }

  // Exclusive, MPS, time-slicing: all memory must fit together.
  if (mode == SharingMode::exclusive && models.size() > 1)
    return invalid("sharing", "exclusive mode places one model per GPU; " + std::to_string(models.size()) +
                                  " models were given for " + gpu.id);
  double total = 0;
  for (const auto& m : models) total += m.memory_per_instance.value() * m.instances;
  if (total > gpu.memory.value()) {
    for (const auto& m : models) {
      const std::string with = models.size() > 1 ? " with " + std::string(sharing_mode_name(mode)) + ": the co-located models need "
                                                  : ": it needs ";
      errors.push_back(invalid("memory", "model '" + m.model + "' does not fit on " + gpu.id + with + gb(Bytes(total)) +
                                             " of its " + gb(gpu.memory)));
    }
    return errors;
  }
  layout.memory_used = Bytes(total);
  int processes = 0;
  for (const auto& m : models) processes += m.instances;

  if (mode == SharingMode::mps) {
    double given = 0;
    int unspecified = 0;
    for (const auto& m : models) {
      if (m.mps_share < 0 || m.mps_share > 1)
        errors.push_back(invalid("mps_share", "model '" + m.model + "': must be in (0, 1], got " + significant(m.mps_share)));
      if (m.mps_share > 0) given += m.mps_share;
      else unspecified += 1;
    }
    if (given > 1 + 1e-9)
      errors.push_back(invalid("mps_share", "the MPS shares on " + gpu.id + " add up to " + significant(given) + " (at most 1)"));
    if (unspecified > 0 && given >= 1 - 1e-9)
      errors.push_back(invalid("mps_share", "no compute left on " + gpu.id + " for the models without an MPS share"));
    if (!errors.empty()) return errors;
    for (const auto& m : models) {
      const double share = m.mps_share > 0 ? m.mps_share : (1 - given) / unspecified;
      const double per_instance = share / m.instances;
      layout.shares.push_back({per_instance, per_instance, Bytes(gpu.memory.value() - total + m.memory_per_instance.value()),
                               "MPS " + significant(share * 100) + " %"});
      layout.k8s_resources.push_back("nvidia.com/gpu");
    }
    return layout;
  }

  const double switching =
      mode == SharingMode::time_slicing && processes > 1 ? kTimeSliceSeconds() / (kTimeSliceSeconds() + kContextSwitchSeconds()) : 1.0;
  const double each = switching / processes;
  for (const auto& m : models) {
    const std::string desc = mode == SharingMode::exclusive
                                 ? (m.instances > 1 ? "whole GPU, 1/" + std::to_string(m.instances) + " per instance" : "whole GPU")
                                 : "time-sliced 1/" + std::to_string(processes);
    layout.shares.push_back({each, each, Bytes(gpu.memory.value() - total + m.memory_per_instance.value()), desc});
    layout.k8s_resources.push_back("nvidia.com/gpu");
  }
  return layout;
}

// --- Deployment planning -----------------------------------------------------------------

namespace {

struct StageInput {
  const GraphStage* stage;
  const StageDeployment* dep;
  Bytes memory;
};

Status check_stage(const GraphStage& s, const StageDeployment& d, const std::string& key, SharingMode mode) {
  Status e;
  if (s.name.empty()) e.push_back(invalid(key + ".name", "a stage needs a name"));
  if (!(s.fan_out > 0)) e.push_back(invalid(key + ".fan_out", "must be greater than zero (got " + significant(s.fan_out) + ")"));
  else if (d.batching.max_batch >= 1 && requests_per_batch(d.batching.max_batch, s.fan_out) > kMaxRequestsPerBatch)
    e.push_back(invalid(key + ".fan_out", "stage '" + s.name + "': a batch of " + std::to_string(d.batching.max_batch) +
                                              " model inputs at fan-out " + significant(s.fan_out) + " holds " +
                                              significant(requests_per_batch(d.batching.max_batch, s.fan_out), 12) +
                                              " requests, more than the requests-per-batch limit of " +
                                              significant(kMaxRequestsPerBatch, 12)));
  if (d.replicas < 1) e.push_back(invalid(key + ".replicas", "must be at least 1"));
  if (d.instances_per_replica < 1) e.push_back(invalid(key + ".instances_per_replica", "must be at least 1"));
  if (d.batching.max_batch < 1) e.push_back(invalid(key + ".max_batch", "must be at least 1"));
  if (d.batching.max_queue_delay.value() < 0) e.push_back(invalid(key + ".max_queue_delay", "must not be negative"));
  if (mode == SharingMode::mig && d.mig_profile.empty())
    e.push_back(invalid(key + ".mig_profile", "MIG sharing needs a MIG profile for stage '" + s.name + "'"));
  return e;
}

}  // namespace

Result<DeploymentPlan> plan_deployment(const InferenceGraph& graph, const Deployment& dep) {
  std::vector<Diagnostic> errors;
  if (graph.stages.empty()) return invalid("graph.stages", "graph '" + graph.name + "' has no stages");
  if (dep.stages.size() != graph.stages.size())
    return invalid("deployment.stages", "graph '" + graph.name + "' has " + std::to_string(graph.stages.size()) +
                                            " stages but the deployment describes " + std::to_string(dep.stages.size()));
  for (std::size_t i = 0; i < graph.stages.size(); ++i) {
    auto e = check_stage(graph.stages[i], dep.stages[i], "stages[" + std::to_string(i) + "]", dep.sharing);
    errors.insert(errors.end(), e.begin(), e.end());
    for (std::size_t j = 0; j < i; ++j)
      if (graph.stages[j].name == graph.stages[i].name)
        errors.push_back(invalid("stages[" + std::to_string(i) + "].name", "duplicate stage name '" + graph.stages[i].name + "'"));
  }
  if (!errors.empty()) return errors;

  const std::size_t n = graph.stages.size();
  std::vector<CoLocatedModel> colocated(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& s = graph.stages[i];
    const auto& d = dep.stages[i];
    colocated[i] = {s.model.model.name.empty() ? s.name : s.model.model.name,
                    instance_memory(s.model, d.exec.precision, d.batching.max_batch), d.instances_per_replica,
                    d.mig_profile, d.mps_share};
  }

  DeploymentPlan plan;
  plan.graph = graph.name;
  plan.gpu = dep.gpu.id;
  plan.sharing = dep.sharing;
  std::vector<GpuShare> replica_share(n);
  std::vector<std::string> resource(n, "nvidia.com/gpu");

  switch (dep.sharing) {
    case SharingMode::exclusive: {
      for (std::size_t i = 0; i < n; ++i) {
        auto layout = plan_gpu_sharing(dep.gpu, SharingMode::exclusive, {colocated[i]});
        if (!layout) {
          errors.insert(errors.end(), layout.errors().begin(), layout.errors().end());
          continue;
        }
        replica_share[i] = layout->shares[0];
        plan.gpus += dep.stages[i].replicas;
      }
      break;
    }
    case SharingMode::mig: {
      // Every replica is one MIG instance (holding instances_per_replica model instances).
      struct Item {
        std::size_t stage;
        int slices;
      };
      std::vector<Item> items;
      for (std::size_t i = 0; i < n; ++i) {
        CoLocatedModel one = colocated[i];
        one.memory_per_instance = one.memory_per_instance * one.instances;
        one.instances = 1;
        auto layout = plan_gpu_sharing(dep.gpu, SharingMode::mig, {one});
        if (!layout) {
          errors.insert(errors.end(), layout.errors().begin(), layout.errors().end());
          continue;
        }
        replica_share[i] = layout->shares[0];
        resource[i] = layout->k8s_resources[0];
        for (int r = 0; r < dep.stages[i].replicas; ++r) items.push_back({i, layout->mig[0].slices});
      }
      if (!errors.empty()) break;
      std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.slices > b.slices; });
      std::vector<std::vector<CoLocatedModel>> gpus;
      for (const auto& it : items) {
        CoLocatedModel one = colocated[it.stage];
        one.memory_per_instance = one.memory_per_instance * one.instances;
        one.instances = 1;
        bool placed = false;
        for (auto& g : gpus) {
          auto trial = g;
          trial.push_back(one);
          if (plan_gpu_sharing(dep.gpu, SharingMode::mig, trial)) {
            g = std::move(trial);
            placed = true;
            break;
          }
        }
        if (!placed) gpus.push_back({one});
      }
      for (const auto& g : gpus) plan.layouts.push_back(std::move(plan_gpu_sharing(dep.gpu, SharingMode::mig, g)).value());
      plan.gpus = static_cast<int>(gpus.size());
      // The replica's instances split its slice.
      break;
    }
    case SharingMode::mps:
    case SharingMode::time_slicing: {
      // GPU 0 hosts a replica of every stage: the most crowded GPU sets every share.
      auto layout = plan_gpu_sharing(dep.gpu, dep.sharing, colocated);
      if (!layout) {
        errors.insert(errors.end(), layout.errors().begin(), layout.errors().end());
        break;
      }
      for (std::size_t i = 0; i < n; ++i) {
        replica_share[i] = layout->shares[i];
        replica_share[i].compute_fraction *= dep.stages[i].instances_per_replica;  // per replica
        replica_share[i].bandwidth_fraction *= dep.stages[i].instances_per_replica;
      }
      for (const auto& d : dep.stages) plan.gpus = std::max(plan.gpus, d.replicas);
      for (int g = 0; g < plan.gpus; ++g) plan.layouts.push_back(*layout);
      break;
    }
  }
  if (!errors.empty()) return errors;

  for (std::size_t i = 0; i < n; ++i) {
    const auto& s = graph.stages[i];
    const auto& d = dep.stages[i];
    // Instances in a replica split its share while all are busy; launch overheads overlap.
    GpuShare per_instance = replica_share[i];
    if (dep.sharing == SharingMode::mig || dep.sharing == SharingMode::mps || dep.sharing == SharingMode::time_slicing) {
      per_instance.compute_fraction /= d.instances_per_replica;
      per_instance.bandwidth_fraction /= d.instances_per_replica;
    }
    std::optional<LatencyCurve> curve;
    if (!s.model.measured.empty()) {
      const auto found = s.model.measured.find(dep.gpu.id);
      if (found == s.model.measured.end()) {
        std::string gpus;
        for (const auto& [id, c] : s.model.measured) gpus += (gpus.empty() ? "" : ", ") + id;
        errors.push_back(invalid("stages[" + std::to_string(i) + "].model",
                                 "stage '" + s.name + "': model '" + s.model.model.name +
                                     "' has a measured latency table for " + gpus + ", not for " + dep.gpu.id));
        continue;
      }
      const double slowdown = 1.0 / per_instance.compute_fraction;
      curve = slowdown == 1.0 ? found->second : found->second.scaled(slowdown, per_instance.description);
      if (curve->max_batch() < d.batching.max_batch)
        errors.push_back(invalid("stages[" + std::to_string(i) + "].max_batch",
                                 "stage '" + s.name + "': max_batch " + std::to_string(d.batching.max_batch) +
                                     " is beyond the measured table (up to " + std::to_string(curve->max_batch()) + ")"));
    } else {
      auto r = roofline_latency_curve(s.model, dep.gpu, d.exec, d.batching.max_batch, per_instance);
      if (!r) {
        for (auto e : r.errors()) {
          e.key_path = "stages[" + std::to_string(i) + "]." + e.key_path;
          errors.push_back(std::move(e));
        }
        continue;
      }
      curve = *r;
    }
    PlannedStage p{.name = s.name,
                   .fan_out = s.fan_out,
                   .servers = d.replicas * d.instances_per_replica,
                   .max_batch_requests = static_cast<int>(requests_per_batch(d.batching.max_batch, s.fan_out)),
                   .max_queue_delay = d.batching.max_queue_delay,
                   .model_curve = *curve,
                   .request_curve = curve->per_request(s.fan_out),
                   .share = per_instance,
                   .memory_per_instance = colocated[i].memory_per_instance,
                   .k8s_resource = resource[i],
                   .k8s_resource_count = 1};
    // A fan-out stage whose max batch is below the fan-out still runs a request's items at once.
    if (p.request_curve.max_batch() < p.max_batch_requests) p.max_batch_requests = p.request_curve.max_batch();
    plan.stages.push_back(std::move(p));
  }
  if (!errors.empty()) return errors;
  return plan;
}

// --- Reference models --------------------------------------------------------------------

std::vector<ServedModel> reference_served_models() {
  std::vector<ServedModel> v;
  // Intel Open Model Zoo horizontal-text-detection-0001: FCOS with a MobileNetV2-like
  // backbone, 704x704 BGR input, 7.78 GFLOPs, 2.26 M params (OMZ counts 2 FLOPs per MAC).
  v.push_back({.model = {.name = "horizontal-text-detection-0001",
                         .params = 2.26e6,
                         .forward_flops_per_sample = 7.78e9,
                         .activation_bytes_per_sample = 0,
                         .input_bytes_per_sample = 3.0 * 704 * 704 * 4,
                         .input_resolution = 704,
                         .source = "Intel Open Model Zoo, horizontal-text-detection-0001 model card "
                                   "(GFlops 7.78, MParams 2.26, input 1x3x704x704), "
                                   "https://docs.openvino.ai/2021.2/omz_models_intel_horizontal_text_detection_0001_"
                                   "description_horizontal_text_detection_0001.html",
                         .as_of = "2021-02"},
               // Counted from the architecture, one kernel per fused convolution (+ norm +
               // activation): MobileNetV2's 52 convolutions plus about 20 in the FPN and FCOS head.
               .kernels_per_forward = 72,
               .gemm_rows_per_sample = 0,
               .network = {},
               .measured = {}});
  // Intel Open Model Zoo text-recognition-0012: VGG16-like backbone + BiLSTM, CTC over 36
  // symbols, 1x32x120 grayscale crop, 1.485 GFLOPs, 5.568 M params.
  v.push_back({.model = {.name = "text-recognition-0012",
                         .params = 5.568e6,
                         .forward_flops_per_sample = 1.485e9,
                         .activation_bytes_per_sample = 0,
                         .input_bytes_per_sample = 32.0 * 120 * 4,
                         .input_resolution = 0,
                         .source = "Intel Open Model Zoo, text-recognition-0012 model card (GFlops 1.485, "
                                   "MParams 5.568, input 1x32x120x1), "
                                   "https://docs.openvino.ai/2022.3/omz_models_model_text_recognition_0012.html",
                         .as_of = "2022-12"},
               // 13 VGG16 convolutions, one cuDNN call per LSTM direction, the classifier and the
               // CTC decode: 17 kernels. 30 output time steps (output shape 30x1x37) are the
               // LSTM's GEMM rows.
               .kernels_per_forward = 17,
               .gemm_rows_per_sample = 30,
               .network = {},
               .measured = {}});
  // ResNet-50 and -101 from workload.hpp's presets, with their layer lists (cnn.hpp): with an
  // engine the curve is timed layer by layer. kernels_per_forward (the roofline's, without
  // a layer list): 53 convolutions + 1 fully connected layer, each a kernel once
  // convolution, batch norm, activation and residual add are fused.
  if (const auto* r = find_sample_model_preset("resnet-50"))
    v.push_back({.model = *r, .kernels_per_forward = 54, .gemm_rows_per_sample = 0, .network = "resnet50", .measured = {}});
  if (const auto* r = find_sample_model_preset("resnet-101"))
    v.push_back({.model = *r, .kernels_per_forward = 105, .gemm_rows_per_sample = 0, .network = "resnet101", .measured = {}});
  // ResNet-152 and VGG-16 from their layer lists alone: parameters, FLOPs and activations
  // counted from the layers (cnn.hpp), 224 x 224 fp32 input.
  for (const auto& [name, network] : {std::pair<const char*, const char*>{"resnet-152", "resnet152"}, {"vgg-16", "vgg16"}}) {
    const CnnNetwork* net = find_cnn(network);
    if (net == nullptr) continue;
    v.push_back({.model = {.name = name,
                           .params = cnn_parameter_count(*net),
                           .forward_flops_per_sample = cnn_forward_flops_per_sample(*net),
                           .activation_bytes_per_sample = 2.0 * cnn_activation_elements_per_sample(*net),
                           .input_bytes_per_sample = 3.0 * net->input_size * net->input_size * 4,
                           .input_resolution = net->input_size,
                           .source = net->source + " (counted from the layer list, models/cnn.cpp)",
                           .as_of = std::string(network) == "vgg16" ? "2014-09" : "2015-12"},
                 .kernels_per_forward = static_cast<int>(net->convs.size() + net->fully_connected.size()),
                 .gemm_rows_per_sample = 0,
                 .network = network,
                 .measured = {}});
  }
  // EfficientNet-B0 (Tan & Le 2019, Table 1/2): 5.3 M params, 0.39 B multiply-adds at 224 px.
  v.push_back({.model = {.name = "efficientnet-b0",
                         .params = 5.3e6,
                         .forward_flops_per_sample = 2.0 * 0.39e9,
                         .activation_bytes_per_sample = 0,
                         .input_bytes_per_sample = 3.0 * 224 * 224 * 4,
                         .input_resolution = 224,
                         .source = "Tan & Le 2019, EfficientNet, Table 2 (0.39B FLOPs as multiply-adds, 5.3M params), "
                                   "https://arxiv.org/abs/1905.11946",
                         .as_of = "2019-05"},
               // 16 MBConv blocks of expansion, depthwise, squeeze-excite (2) and projection
               // kernels (the first block has no expansion), plus stem, head and classifier: 82.
               .kernels_per_forward = 82,
               .gemm_rows_per_sample = 0,
               .network = {},
               .measured = {}});
  return v;
}

const ServedModel* find_reference_served_model(std::string_view name) {
  static const std::vector<ServedModel> models = reference_served_models();
  for (const auto& m : models)
    if (m.model.name == name) return &m;
  return nullptr;
}

}  // namespace capsim::models
